"""One process of a multi-process warpfft.torch.distributed check, started by torchrun (or
python/tools/launch_local.py: the same variables). Every process makes the same global data
from one seed and keeps its own shard; results and gradients of the sharded functions are
checked against the unsharded op run on this process's own device on all the data (the
one-GPU run), shard by shard.

    --device cuda: NCCL, the real ops on cuda:LOCAL_RANK; f32 results within eps = 1e-5 and
        f64 gradients within 1e-9 of the one-GPU run.
    --device cpu: gloo, warpfft.torch's finufft_type1/2/3 replaced by exact sums in torch
        (_exact_torch, differentiable by autograd), f64 within 1e-11: the collectives and
        their autograd rules without a GPU.

Prints "PASS <check> (rank <r>)" per check, "FAIL <check> (rank <r>): <why>" and exit status 1
otherwise.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import warpfft.torch as wt  # noqa: E402
from _scaleout import N, RANK, close, draw, mine, run_checks  # noqa: E402
from warpfft.torch import distributed as wd  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--device", choices=("cpu", "cuda"), required=True)
ap.add_argument("--M", type=int, default=400_000, help="points in all (GPU)")
ARGS = ap.parse_args()
CPU = ARGS.device == "cpu"
torch.set_num_threads(1)


if CPU:
    import _exact_torch
    dist.init_process_group("gloo")
    _exact_torch.install()
    DEV = torch.device("cpu")
    M, MODES, REAL, TOL, GTOL, EPS = 48 * N, (5, 4, 3), torch.float64, 1e-11, 1e-11, 1e-12
    GM, GMODES, GEPS = 32 * N, (4, 3, 5), 1e-12
else:
    DEV = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(DEV)
    dist.init_process_group("nccl", device_id=DEV)
    M, MODES, REAL, TOL, GTOL, EPS = (ARGS.M - ARGS.M % N, (32, 32, 32), torch.float32, 1e-5, 1e-9,
                                      1e-5)
    GM, GMODES, GEPS = 40_000 * N, (16, 12, 10), 1e-9


def data(M, dim, real, lead=(), seed=0):
    """Global points (dim, M) and strengths (*lead, M) on this device (same on every rank)."""
    x, c = draw(M, dim, lead, seed)
    cplx = torch.complex64 if real == torch.float32 else torch.complex128
    return (torch.tensor(x, dtype=real, device=DEV), torch.tensor(c, dtype=cplx, device=DEV))


def check_type1():
    x, c = data(M, 3, REAL, (2,))
    f = wd.nufft1_sharded(mine(x).contiguous(), mine(c).contiguous(), MODES, eps=EPS)
    close(f, wt.finufft_type1(x, c, MODES, eps=EPS), TOL, "type 1")


def check_type2():
    x, _ = data(M, 3, REAL, seed=1)
    _, fm = data(int(np.prod(MODES)), 1, REAL, seed=2)
    fm = fm.reshape(MODES)
    c = wd.nufft2_sharded(mine(x).contiguous(), fm, eps=EPS)
    close(c, mine(wt.finufft_type2(x, fm, eps=EPS)), TOL, "type 2 (this shard)")


def check_type3():
    """f64: each rank's plan picks its grids from its own sources' and targets' extents, so
    ranks and the one-device run differ by their approximation errors (each within eps), not
    by rounding alone: eps 1e-9, compared within 3 eps."""
    x, c = data(M // 8, 2, torch.float64, seed=3)
    s = data(N * 50, 2, torch.float64, seed=4)[0] * 20
    ref = wt.finufft_type3(x, c, s, eps=GEPS)
    g = wd.nufft3_sharded(mine(x).contiguous(), mine(c).contiguous(), s, by="sources",
                          eps=GEPS)
    close(g, ref, 3 * GTOL, "type 3 by sources")
    g = wd.nufft3_sharded(x, c, mine(s).contiguous(), by="targets", eps=GEPS)
    close(g, mine(ref), 3 * GTOL, "type 3 by targets (this shard)")
    # uneven target shards, gathered: rank r holds 10 + r targets
    cut = [sum(10 + r for r in range(q)) for q in range(N + 1)]
    mys = s[:, cut[RANK]:cut[RANK + 1]].contiguous()
    g = wd.nufft3_sharded(x, c, mys, by="targets", gather=True, eps=GEPS)
    close(g, ref[..., :cut[-1]], 3 * GTOL, "type 3 by targets, gathered")


def _grads(fun, args):
    args = [a.detach().clone().requires_grad_(True) for a in args]
    torch.sum(torch.abs(fun(*args)) ** 2).backward()
    return [a.grad for a in args]


def check_gradients():
    """The normal operator (type 1 summed over ranks, then type 2 at the same sharded points),
    gradients with respect to the strengths and the points; each rank backpropagates its own
    outputs' loss (the global objective is their sum), f64."""
    x, c = data(GM, 3, torch.float64, seed=5)

    def sharded(x, c):
        f = wd.nufft1_sharded(x, c, GMODES, eps=GEPS)
        return wd.nufft2_sharded(x, f * 0.5, eps=GEPS)

    def whole(x, c):
        return wt.finufft_type2(x, wt.finufft_type1(x, c, GMODES, eps=GEPS) * 0.5, eps=GEPS)

    got = _grads(sharded, [mine(x), mine(c)])
    want = _grads(whole, [x, c])
    for what, g, w in zip(("points", "strengths"), got, want):
        close(g, mine(w), GTOL, f"gradient for the {what} (this shard)")


def check_replicated_gradients():
    """Type 2 of replicated modes: their gradient is the sum over ranks (the same on every
    rank); type 1's replicated output: a loss computed alike on every rank, counted once; a
    gathered type 3 likewise."""
    x, _ = data(GM, 2, torch.float64, seed=6)
    _, fm = data(12 * 10, 1, torch.float64, seed=7)
    fm = fm.reshape(12, 10)
    (g,) = _grads(lambda f: wd.nufft2_sharded(mine(x).contiguous(), f, eps=GEPS), [fm])
    (w,) = _grads(lambda f: wt.finufft_type2(x, f, eps=GEPS), [fm])
    close(g, w, GTOL, "type 2: gradient of the replicated modes")
    xs, c = data(GM, 2, torch.float64, seed=8)
    (g,) = _grads(lambda c: wd.nufft1_sharded(mine(xs).contiguous(), c, (6, 7), eps=GEPS),
                  [mine(c)])
    (w,) = _grads(lambda c: wt.finufft_type1(xs, c, (6, 7), eps=GEPS), [c])
    close(g, mine(w), GTOL, "type 1: gradient through the replicated modes")
    s = data(N * 8, 2, torch.float64, seed=9)[0] * 5
    got = _grads(lambda c, s: wd.nufft3_sharded(xs, c, s, by="targets", gather=True, eps=GEPS),
                 [c, mine(s)])
    want = _grads(lambda c, s: wt.finufft_type3(xs, c, s, eps=GEPS), [c, s])
    close(got[0], want[0], GTOL, "type 3 by targets, gathered: replicated strengths' gradient")
    close(got[1], mine(want[1]), GTOL, "type 3 by targets, gathered: this shard's targets")


def main():
    failed = run_checks(globals())
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
