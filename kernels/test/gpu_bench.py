"""Suite B of the GPU harness (python3 kernels/test/gpu_test.py bench|profile): per-stage
timings of the kernels alone, with the formula width as suite B's reference used, and one
setup and two executes of a case for a profiler (ncu)."""
import time

import numpy as np
import cupy as cp

from gpu_pipeline import Plan
from gpu_reference import rand_c, rand_points, random_io, sample_error


SUITE = [
    ("B1", 1, 1, [1_000_000], 10_000_000, 1e-5, 32, 1),
    ("B2", 1, 2, [1024, 1024], 10_000_000, 1e-5, 32, 1),
    ("B3", 2, 2, [1024, 1024], 10_000_000, 1e-5, 32, 1),
    ("B4", 1, 3, [128, 128, 128], 10_000_000, 1e-5, 32, 1),
    ("B5", 2, 3, [128, 128, 128], 10_000_000, 1e-5, 32, 1),
    ("B6", 1, 2, [1024, 1024], 10_000_000, 1e-9, 64, 1),
    ("B7", 1, 3, [128, 128, 128], 10_000_000, 1e-9, 64, 1),
    ("B8", 2, 3, [128, 128, 128], 10_000_000, 1e-9, 64, 1),
    ("B9", 1, 2, [256, 256], 1_000_000, 1e-5, 32, 8),
]
REF = dict(B1=0.62, B2=2.07, B3=1.30, B4=5.61, B5=3.19, B6=12.6, B7=341, B8=20.5, B9=2.66)


def bench(only=None, methods=("gm", "sm"), reps=10, bss=None, maxsub=1024, w_extra=0):
    """Suite B (or the cases named in `only`) per method and bin size; w_extra is added to the
    formula width (bench wext=...)."""
    for name, typ, dim, N, M, tol, prec, ntransf in SUITE:
        if only and name not in only:
            continue
        rng = np.random.default_rng(3)
        coords = rand_points(dim, M, prec, rng, edge=False)
        for method in methods:
            for bs in (bss or [None]):
                if bs is not None and len(bs) != dim:
                    continue
                plan = Plan(typ, dim, N, tol, prec, method, ntransf, bs=bs, maxsub=maxsub,
                            w_extra=w_extra)
                if method == "sm":
                    pad = (plan.w + 1) // 2
                    td = [plan.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]
                    if td[0] * td[1] * td[2] * (8 if prec == 32 else 16) > 227 * 1024:
                        print(f"{name} {method} bs={plan.bs}: tile too big, skipped")
                        continue
                cp.cuda.runtime.deviceSynchronize()
                t0 = time.perf_counter()
                plan.setpts(coords)
                cp.cuda.runtime.deviceSynchronize()
                t_set = (time.perf_counter() - t0) * 1e3
                c, fk = random_io(plan, M, rng)
                tim = []
                plan.execute(c, fk)
                for _ in range(reps):
                    plan.execute(c, fk, tim)
                tim = np.median(np.array(tim), axis=0)
                err = sample_error(plan, coords, c, fk, 0, 1000, rng)  # accuracy on a sample
                # setpts timed again warm
                cp.cuda.runtime.deviceSynchronize()
                t0 = time.perf_counter()
                plan.P.run_setpts()
                cp.cuda.runtime.deviceSynchronize()
                t_set2 = (time.perf_counter() - t0) * 1e3
                tot = tim.sum()
                print(f"{name} t{typ} {dim}D f{prec} w={plan.w} b={plan.beta:.2f} {method} bs={plan.bs[:dim]} ms={maxsub} "
                      f"nsub={plan.P.n_subprob}: exec {tot:7.3f} ms (ref {REF[name]}) "
                      f"[{'spread' if typ == 1 else 'amplify'} {tim[0]:.3f} fft {tim[1]:.3f} "
                      f"{'deconv' if typ == 1 else 'interp'} {tim[2]:.3f}] setpts {t_set2:.2f} ms "
                      f"(cold {t_set:.0f}) err {err:.2e} tol {tol:g}", flush=True)
                del plan


def profile(name, method, bs=None):
    """One setup and two executes of suite case `name` (for ncu)."""
    _, typ, dim, N, M, tol, prec, ntransf = [r for r in SUITE if r[0] == name][0]
    rng = np.random.default_rng(3)
    coords = rand_points(dim, M, prec, rng, edge=False)
    plan = Plan(typ, dim, N, tol, prec, method, ntransf, bs=bs)
    plan.setpts(coords)
    Nprod = int(np.prod(N))
    c = rand_c(M * ntransf, prec, rng)
    fk = rand_c(Nprod * ntransf, prec, rng)
    for _ in range(2):
        plan.execute(c, fk)
