"""Batched points (issue 32): a batch whose transforms each have their own points, three ways,
on a GPU:

* ``batched``  -- one plan of B transforms, ``setpts`` with (B, M) coordinates (one sort of
  every set, one launch per stage per execute: warpfft_setpts_sets);
* ``separate`` -- one plan of 1 transform, B times ``setpts`` + ``execute`` (what a loop over
  frames does without batched points);
* ``shared``   -- one plan of B transforms sharing ONE point set (the batch warpfft had before:
  the lower bound batched points aim at; its result is a different transform).

Cases (the issue's targets): 2D radial 256 x 256, B = 16 frames of M = 205,824 points each (402
spokes x 512 samples, each frame rotated by its own angle), f32, tol 1e-5; 3D 128^3, M = 2e5
uniform points per set, B = 8, f32, tol 1e-5. Types 1 and 2 each. Times are medians of
``--reps`` runs of setpts + execute (the points change every frame) and of execute alone, in
ms, with the device synchronised around each (plans with check_points=False: no host wait
inside setpts); ``vs separate`` is separate's total over the row's.
The batched result is checked against separate's (relative l2 difference, printed).

    WARPFFT_LIBRARY=.gpu/aot/libwarpfft.so PYTHONPATH=python python3 python/bench/batched_points.py

Needs cupy (device arrays: no host copies in the timings).
"""

import argparse
import math

import numpy as np

from _bench import cupy_sync, timed


def radial(B, spokes=402, samples=512):
    """B frames of a radial trajectory in [-pi, pi)^2, frame b rotated by b / B of the angle
    between spokes (each frame its own points)."""
    r = np.linspace(-np.pi, np.pi, samples, endpoint=False)
    xs, ys = [], []
    for b in range(B):
        th = np.pi * np.arange(spokes) / spokes + (np.pi / spokes) * b / B
        xs.append((np.cos(th)[:, None] * r[None, :]).ravel())
        ys.append((np.sin(th)[:, None] * r[None, :]).ravel())
    return [np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)]


def uniform(B, M, dim, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-np.pi, np.pi, (B, M)).astype(np.float32) for _ in range(dim)]


def run_case(cp, warpfft, name, nufft_type, modes, pts, eps, reps):
    B, M = pts[0].shape
    sync = cupy_sync(cp)
    dpts = [cp.asarray(p) for p in pts]
    rng = np.random.default_rng(1)
    shape = (B, M) if nufft_type == 1 else (B,) + modes
    data = cp.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                      .astype(np.complex64))
    rows = []

    # batched: one plan, (B, M) points
    with warpfft.Plan(nufft_type, modes, B, eps, dtype="complex64", check_points=False) as plan:
        out_b = {}

        def batched_all():
            plan.setpts(*dpts)
            out_b["v"] = plan.execute(data)

        t_all = timed(batched_all, sync, reps)
        t_exec = timed(lambda: plan.execute(data), sync, reps)
        rows.append(("batched", t_all, t_exec))
        got = cp.asnumpy(out_b["v"])

    # separate: one plan of one transform, B setpts + execute
    with warpfft.Plan(nufft_type, modes, 1, eps, dtype="complex64", check_points=False) as plan:
        outs = [None] * B

        def separate_all():
            for b in range(B):
                plan.setpts(*[p[b] for p in dpts])
                outs[b] = plan.execute(data[b])

        def separate_exec():  # the last frame's points, B executes (the execute-only share)
            for b in range(B):
                plan.execute(data[b])

        t_all = timed(separate_all, sync, reps)
        t_exec = timed(separate_exec, sync, reps)
        rows.append(("separate", t_all, t_exec))
        ref = np.stack([cp.asnumpy(o) for o in outs])

    # shared: one plan of B transforms, frame 0's points for all
    with warpfft.Plan(nufft_type, modes, B, eps, dtype="complex64", check_points=False) as plan:
        def shared_all():
            plan.setpts(*[p[0] for p in dpts])
            plan.execute(data)

        t_all = timed(shared_all, sync, reps)
        t_exec = timed(lambda: plan.execute(data), sync, reps)
        rows.append(("shared (1 set)", t_all, t_exec))

    diff = float(np.linalg.norm((got - ref).ravel()) / np.linalg.norm(ref.ravel()))
    base = rows[1][1]
    print(f"\n{name}, type {nufft_type}, B = {B}, M = {M:,} per set, modes {modes}, f32 "
          f"tol {eps:g}  (batched vs separate: rel. l2 difference {diff:.1e})")
    print(f"  {'method':<16}{'setpts+exec ms':>16}{'exec ms':>10}{'vs separate':>13}")
    for label, t_all, t_exec in rows:
        print(f"  {label:<16}{t_all:>16.3f}{t_exec:>10.3f}{base / t_all:>12.2f}x")
    return diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--eps", type=float, default=1e-5)
    args = ap.parse_args()
    import cupy as cp

    import warpfft

    print(f"warpfft {warpfft.__version__}; device: "
          f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    worst = 0.0
    r2 = radial(16)
    assert r2[0].shape == (16, 205_824)
    u3 = uniform(8, 200_000, 3)
    for t in (1, 2):
        worst = max(worst, run_case(cp, warpfft, "2D radial 256^2", t, (256, 256), r2, args.eps,
                                    args.reps))
        worst = max(worst, run_case(cp, warpfft, "3D uniform 128^3", t, (128, 128, 128), u3,
                                    args.eps, args.reps))
    # the same plans, so the same algorithm: batched and separate agree to rounding (atomics'
    # order): far below the tolerance
    ok = worst < 10 * args.eps and math.isfinite(worst)
    print(f"\nworst batched-vs-separate difference {worst:.1e}: {'ok' if ok else 'TOO LARGE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
