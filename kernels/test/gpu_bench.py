"""Suite B of the GPU harness (python3 kernels/test/gpu_test.py bench|profile): per-stage
timings of the kernels alone, with the formula width as suite B's reference used (wexts= adds
to it: today's C-core widths are the formula's + 1, 7 for f32 1e-5 and 11 for f64 1e-9), per
method and variant (SM bins; OD tiles, bins, warps per block, row pitch), and one setup and two
executes of a case for a profiler (ncu). A table of every row comes at the end."""
import itertools
import time

import numpy as np
import cupy as cp

from gpu_pipeline import Plan, sm_cell_bytes
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
    # suite B's D rows' kind (3D f64 type 1 at 1e-6) on B7's grid: width 7-8 f64
    ("B7d", 1, 3, [128, 128, 128], 10_000_000, 1e-6, 64, 1),
]
REF = dict(B1=0.62, B2=2.07, B3=1.30, B4=5.61, B5=3.19, B6=12.6, B7=341, B8=20.5, B9=2.66)


def _variants(method, dim, bss, od):
    """(label, Plan keyword arguments) per variant of a method for a case of dimension dim."""
    if method == "od":
        # shapes of other dimensions are skipped; none of this one's: the default
        tiles = [t for t in od.get("tiles") or [] if len(t) == dim] or [None]
        obss = [b for b in od.get("obss") or [] if len(b) == dim] or [None]
        out = []
        for t, b, nw, pad in itertools.product(tiles, obss, od.get("nws") or [None],
                                               od.get("pads") or ["auto"]):
            out.append(dict(tile=t, bs=b, nwarps=nw, pad=pad))
        return out
    return [dict(bs=b) for b in (bss or [None]) if b is None or len(b) == dim]


def _label(plan):
    d = plan.dim
    s = f"bs={'x'.join(map(str, plan.bs[:d]))}"
    if plan.od:
        s += (f" tile={'x'.join(map(str, plan.od['tile'][:d]))} nw={plan.od['nwarps']} "
              f"pitch={plan.od['pitch']}")
    return s


def bench(only=None, methods=("gm", "sm"), reps=10, bss=None, maxsub=1024, wexts=(0,), od=None,
          stable=False, nsamp=1000):
    """Suite B (or the cases named in `only`) per method, width (formula + each of wexts) and
    variant: SM bins `bss`; OD `od` = dict(tiles, obss (bin shapes; default half a tile),
    nws (warps per block; default: most resident), pads ("auto" or cells)). stable: setpts
    with the stable ranks. Prints a line per run and the table at the end."""
    od = od or {}
    rows = []
    for name, typ, dim, N, M, tol, prec, ntransf in SUITE:
        if only and name not in only:
            continue
        rng = np.random.default_rng(3)
        coords = rand_points(dim, M, prec, rng, edge=False)
        for wext, method in itertools.product(wexts, methods):
            if method == "od" and typ != 1:
                continue
            for kw in _variants(method, dim, bss, od):
                try:
                    plan = Plan(typ, dim, N, tol, prec, method, ntransf, maxsub=maxsub,
                                w_extra=wext, stable=stable, **kw)
                except ValueError as e:
                    print(f"{name} {method} {kw}: skipped ({e})")
                    continue
                if method == "sm" and plan.smr is None:  # (the register tile has no shared tile)
                    pad = (plan.w + 1) // 2
                    td = [plan.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]
                    cell = sm_cell_bytes("spread" if typ == 1 else "interp", dim, prec)
                    if td[0] * td[1] * td[2] * cell > 227 * 1024:
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
                err = sample_error(plan, coords, c, fk, 0, nsamp, rng)  # accuracy on a sample
                # setpts timed again warm
                cp.cuda.runtime.deviceSynchronize()
                t0 = time.perf_counter()
                plan.P.run_setpts()
                cp.cuda.runtime.deviceSynchronize()
                t_set2 = (time.perf_counter() - t0) * 1e3
                tot = tim.sum()
                label = _label(plan)
                rows.append((name, method, plan.w, label, tot, tim[0], tim[1], tim[2], t_set2,
                             err, tol))
                print(f"{name} t{typ} {dim}D f{prec} w={plan.w} b={plan.beta:.2f} {method} {label} "
                      f"ms={plan.maxsub} nsub={plan.P.n_subprob}: exec {tot:7.3f} ms "
                      f"(ref {REF.get(name)}) [{'spread' if typ == 1 else 'amplify'} {tim[0]:.3f} "
                      f"fft {tim[1]:.3f} {'deconv' if typ == 1 else 'interp'} {tim[2]:.3f}] "
                      f"setpts {t_set2:.2f} ms{' stable' if stable else ''} (cold {t_set:.0f}) "
                      f"err {err:.2e} tol {tol:g}", flush=True)
                del plan
    print_table(rows)
    return rows


def print_table(rows):
    """The runs as one table, each case's rows fastest first."""
    if not rows:
        return
    print("\ncase method  w  exec_ms  spread/amp  fft    deconv/interp  setpts  err       variant")
    for name in dict.fromkeys(r[0] for r in rows):
        for r in sorted((r for r in rows if r[0] == name), key=lambda r: r[4]):
            flag = "" if r[9] <= r[10] else " (err > tol)"
            print(f"{r[0]:4} {r[1]:6} {r[2]:2} {r[4]:8.3f} {r[5]:9.3f} {r[6]:7.3f} {r[7]:9.3f} "
                  f"{r[8]:10.2f}  {r[9]:.1e}  {r[3]}{flag}")


def profile(name, method, bs=None, tile=None, nwarps=None, wext=0):
    """One setup and two executes of suite case `name` (for ncu)."""
    _, typ, dim, N, M, tol, prec, ntransf = [r for r in SUITE if r[0] == name][0]
    rng = np.random.default_rng(3)
    coords = rand_points(dim, M, prec, rng, edge=False)
    plan = Plan(typ, dim, N, tol, prec, method, ntransf, bs=bs, tile=tile, nwarps=nwarps,
                w_extra=wext)
    plan.setpts(coords)
    Nprod = int(np.prod(N))
    c = rand_c(M * ntransf, prec, rng)
    fk = rand_c(Nprod * ntransf, prec, rng)
    for _ in range(2):
        plan.execute(c, fk)
