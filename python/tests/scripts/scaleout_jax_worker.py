"""One process of a multi-process warpfft.jax.distributed check, started by
python/tools/launch_local.py (torchrun's variables: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT). Every process makes the same global data from one seed and keeps its own shard
(from_local_shards: never gathered); results and gradients of the sharded functions are
checked against the unsharded op run on this process's own device on all the data (the
one-GPU run), shard by shard.

    --platform gpu: jax.distributed.initialize(..., local_device_ids=[LOCAL_RANK]), the real
        op, f32 results within eps = 1e-5 and f64 gradients within 1e-9 of the one-GPU run.
    --platform cpu: CPU processes (gloo collectives), the transform replaced by exact sums
        (_exact_jax), f64 within 1e-11.

Prints "PASS <check> (rank <r>)" per check, "FAIL <check> (rank <r>): <why>" and exit status 1
otherwise.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

ap = argparse.ArgumentParser()
ap.add_argument("--platform", choices=("cpu", "gpu"), required=True)
ap.add_argument("--M", type=int, default=400_000, help="points in all (GPU)")
ARGS = ap.parse_args()
CPU = ARGS.platform == "cpu"
if CPU:
    os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402

from _scaleout import N, RANK, close, draw, mine, run_checks  # noqa: E402
COORD = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
if CPU:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(COORD, num_processes=N, process_id=RANK)
else:
    jax.distributed.initialize(COORD, num_processes=N, process_id=RANK,
                               local_device_ids=[int(os.environ["LOCAL_RANK"])])
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402

import warpfft.jax as wj  # noqa: E402
from warpfft.jax import distributed as wd  # noqa: E402

if CPU:
    import _exact_jax  # noqa: E402
    _exact_jax.install()

MESH = Mesh(np.array(jax.devices()), ("p",))
DEV = jax.local_devices()[0]
assert jax.device_count() == N and len(jax.local_devices()) == 1, jax.devices()


def data(M, dim, real, lead=(), seed=0):
    """The global points (a list of dim) and strengths in `real` (every process makes the same
    from the seed)."""
    x, c = draw(M, dim, lead, seed)
    cplx = np.complex64 if real == np.float32 else np.complex128
    return [a.astype(real) for a in x], c.astype(cplx)


def glob(a):
    return wd.from_local_shards(mine(a), MESH, "p")


def local(a):
    """The whole array on this process's device (the one-device run's input)."""
    return jax.device_put(a, DEV)


def shard_of(g):
    (s,) = g.addressable_shards
    return np.asarray(s.data)


if CPU:
    M, MODES, REAL, TOL, GTOL, EPS = 64 * N, (5, 4, 3), np.float64, 1e-11, 1e-11, 1e-12
    GM, GMODES, GEPS = 32 * N, (4, 3, 5), 1e-12
else:
    M, MODES, REAL, TOL, GTOL, EPS = (ARGS.M - ARGS.M % N, (32, 32, 32), np.float32, 1e-5, 1e-9,
                                      1e-5)
    GM, GMODES, GEPS = 40_000 * N, (16, 12, 10), 1e-9


def check_type1():
    x, c = data(M, 3, REAL, (2,))
    f = wd.nufft1(MODES, glob(c), *map(glob, x), mesh=MESH, axis="p", eps=EPS)
    assert f.sharding.is_fully_replicated and f.shape == (2,) + MODES
    ref = wj.nufft1(MODES, local(c), *map(local, x), eps=EPS)
    close(shard_of(f), ref, TOL, "type 1")


def check_type2():
    x, _ = data(M, 3, REAL, seed=1)
    rng = np.random.default_rng(2)
    fm = (rng.standard_normal(MODES) + 1j * rng.standard_normal(MODES)).astype(
        np.complex64 if REAL == np.float32 else np.complex128)
    c = wd.nufft2(local(fm), *map(glob, x), mesh=MESH, axis="p", eps=EPS)
    assert c.shape == (M,)
    ref = wj.nufft2(local(fm), *map(local, x), eps=EPS)
    close(shard_of(c), mine(np.asarray(ref)), TOL, "type 2 (this shard)")


def check_type3():
    """f64: each shard's plan picks its grids from its own sources' and targets' extents, so
    shards and the one-device run differ by their approximation errors (each within eps), not
    by rounding alone: eps 1e-9, compared within 3 eps."""
    x, c = data(M // 8, 2, np.float64, seed=3)
    s = [a * 20 for a in data(N * 50, 2, np.float64, seed=4)[0]]
    ref = np.asarray(wj.nufft3(local(c), *map(local, x), *map(local, s), eps=GEPS))
    g = wd.nufft3(glob(c), *map(glob, x), *map(local, s), mesh=MESH, sources_axis="p",
                  eps=GEPS)
    close(shard_of(g), ref, 3 * GTOL, "type 3 by sources")
    g = wd.nufft3(local(c), *map(local, x), *map(glob, s), mesh=MESH, targets_axis="p",
                  eps=GEPS)
    close(shard_of(g), mine(ref), 3 * GTOL, "type 3 by targets (this shard)")


def _grads(fun, args):
    loss = lambda *a: jnp.sum(jnp.abs(fun(*a)) ** 2)  # noqa: E731
    return jax.grad(loss, argnums=tuple(range(len(args))))(*args)


def check_gradients():
    """The normal operator (type 1 with a psum, then type 2 at the same sharded points):
    gradients with respect to the strengths and the points, f64."""
    x, c = data(GM, 3, np.float64, seed=5)

    def normal(n1, n2, c, *x):
        return n2(n1(GMODES, c, *x, eps=GEPS) * 0.5, *x, eps=GEPS)

    d1 = lambda *a, eps: wd.nufft1(*a, mesh=MESH, axis="p", eps=eps)  # noqa: E731
    d2 = lambda *a, eps: wd.nufft2(*a, mesh=MESH, axis="p", eps=eps)  # noqa: E731
    got = _grads(lambda c, *x: normal(d1, d2, c, *x), [glob(c)] + [glob(a) for a in x])
    want = _grads(lambda c, *x: normal(wj.nufft1, wj.nufft2, c, *x),
                  [local(c)] + [local(a) for a in x])
    for i, (g, w) in enumerate(zip(got, want)):
        close(shard_of(g), mine(np.asarray(w)), GTOL, f"gradient {i} (this shard)")


def main():
    sys.exit(1 if run_checks(globals()) else 0)


if __name__ == "__main__":
    main()
