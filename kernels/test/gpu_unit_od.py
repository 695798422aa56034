"""Unit tests of the output-driven spreader (module si_..._spread_od) and of setpts' stable
ranks (module sort_stable), run by python3 kernels/test/gpu_test.py unit (gpu_unit.py calls
od_unit()): OD type 1 against the direct sums over dimensions, precisions and widths, with
batches, odd nf, nf not a multiple of the tile, tiny grids (nf = 2w), clustered points, points
on tile boundaries, other block sizes / pitches / bins; the stable ranks against numpy's stable
sort; OD with the stable sort the same bits across two setpts and executes; the cost of the
stable ranks in setpts. fw is filled with NaN before OD spreads (run_case), so a cell the kernel
does not write poisons every mode."""
import time

import numpy as np
import cupy as cp

from gpu_pipeline import Plan, Points, stable_ranks
from gpu_reference import rand_c, rand_points, run_case

SCALE = 1.0  # point counts are scaled by this (kernels/test/emu/dryrun.py runs them on a CPU)


def _m(M):
    return max(min(M, 100), int(M * SCALE))


def test_stable_ranks():
    """module sort_stable: pos[j] = #{j' < j : bin(j') = bin(j)}; 1, 2 and 3 radix passes"""
    rng = np.random.default_rng(11)
    bad = 0
    for nbins, M, clustered in [(1, 5000, False), (200, 2047, False), (256, 2048, False),
                                (257, 2049, False), (300, 100_003, True), (70_000, 300_000, False),
                                (131_072, 1_000_000, False), (5, 0, False), (3, 1, False)]:
        M = M if M <= 2049 else _m(M)
        keys = rng.integers(0, nbins, M).astype(np.int32)
        if clustered:
            keys[: M // 2] = nbins // 2
        count = np.bincount(keys, minlength=nbins).astype(np.uint64)
        start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.uint64)
        order = np.argsort(keys, kind="stable")
        want = np.empty(M, dtype=np.int64)
        want[order] = np.arange(M) - start[keys[order]].astype(np.int64)
        pos = cp.full(max(M, 1), 0xFFFFFFFF, dtype=cp.uint32)
        passes = stable_ranks(cp.asarray(keys) if M else cp.zeros(1, dtype=cp.int32), M, nbins,
                              cp.asarray(start), pos)
        got = pos.get()[:M].astype(np.int64)
        if not np.array_equal(got, want):
            bad += 1
            print(f"stable ranks nbins={nbins} M={M}: {np.sum(got != want)} wrong (passes {passes})")
    # Points(stable=True): inside every bin, sort_idx increases (input order)
    coords = rand_points(3, _m(200_000), 32, rng)
    P = Points(3, coords, 32, [64, 48, 40], [4, 4, 2], maxsub=0, stable=True)
    si, b = P.sort_idx.get(), P.bin_of.get()
    bs = b[si]
    if np.any(np.diff(bs) < 0) or np.any((np.diff(bs) == 0) & (np.diff(si) <= 0)):
        bad += 1
        print("stable setpts: sorted order is not (bin, input index)")
    print(f"sort_stable: {'ok' if not bad else 'FAIL'}")
    return bad


def setpts_cost():
    """setpts with and without the stable ranks, M = 1e7 (B4- and B2-like bins)"""
    rng = np.random.default_rng(3)
    for dim, nf, bs in [(3, [256, 256, 256], [8, 8, 2]), (2, [2048, 2048], [32, 4]),
                        (1, [2_000_000], [256])]:
        coords = rand_points(dim, 10_000_000, 32, rng)
        nf3 = nf + [1] * (3 - dim)
        bs3 = bs + [1] * (3 - dim)
        times = []
        for stable in (False, True):
            P = Points(dim, coords, 32, nf3, bs3, maxsub=0, stable=stable)
            cp.cuda.runtime.deviceSynchronize()
            t0 = time.perf_counter()
            for _ in range(3):
                P.run_setpts()
            cp.cuda.runtime.deviceSynchronize()
            times.append((time.perf_counter() - t0) / 3 * 1e3)
        nbins = int(np.prod([-(-nf3[d] // bs3[d]) for d in range(3)]))
        print(f"  setpts {dim}D f32 M=1e7 {nbins} bins: {times[0]:.2f} ms, stable {times[1]:.2f} ms "
              f"(+{times[1] - times[0]:.2f})")
        del coords


def test_od_deterministic():
    """OD after a stable setpts: the same bits across two plans (setpts each) and executes"""
    bad = 0
    for dim, N, prec, tol, M in [(1, [1000], 32, 1e-6, 300_000), (2, [64, 48], 32, 1e-5, 300_000),
                                 (3, [24, 20, 16], 64, 1e-9, 200_000), (3, [32, 32, 32], 32, 1e-5,
                                                                        500_000)]:
        rng = np.random.default_rng(5)
        M = _m(M)
        coords = rand_points(dim, M, prec, rng)
        c = rand_c(M * 2, prec, rng)
        outs = {}
        for stable in (True, False):
            res = []
            for _ in range(2):
                plan = Plan(1, dim, N, tol, prec, "od", ntransf=2, w_extra=1, stable=stable)
                plan.setpts(coords)
                fk = cp.zeros(int(np.prod(N)) * 2, dtype=plan.fw.dtype)
                plan.execute(c, fk)
                a = fk.get()
                plan.execute(c, fk)
                res += [a, fk.get()]
            outs[stable] = all(np.array_equal(res[0].view(np.uint8), r.view(np.uint8))
                               for r in res[1:])
        if not outs[True]:
            bad += 1
        print(f"{'ok  ' if outs[True] else 'FAIL'} od {dim}D f{prec}: stable setpts "
              f"{'same bits' if outs[True] else 'DIFFERENT bits'} over 2 setpts x 2 executes "
              f"(atomic ranks: {'same' if outs[False] else 'different'} bits)")
    return bad


def od_cases():
    cases = []
    for prec in (32, 64):
        tols = [1e-2, 1e-5] if prec == 32 else [1e-3, 1e-9, 1e-13]
        for dim in (1, 2, 3):
            N = {1: [300], 2: [40, 34], 3: [18, 14, 12]}[dim]
            for tol in tols:
                cases.append(dict(typ=1, dim=dim, N=N, M=3000, tol=tol, prec=prec, method="od"))
    o = dict(typ=1, method="od")
    cases += [
        # batches, iflag, modeord
        dict(o, dim=2, N=[33, 17], M=5000, tol=1e-5, prec=32, ntransf=3, iflag=-1, modeord=1),
        dict(o, dim=3, N=[9, 10, 11], M=5000, tol=1e-9, prec=64, ntransf=2, iflag=-1, modeord=1),
        dict(o, dim=1, N=[100], M=5000, tol=1e-6, prec=64, ntransf=4),
        # widest widths (w_extra raises w past the tolerance's)
        dict(o, dim=3, N=[20, 20, 20], M=4000, tol=1e-5, prec=32, w_extra=6),       # w 12
        dict(o, dim=2, N=[30, 24], M=4000, tol=1e-13, prec=64, w_extra=2),          # w 16
        dict(o, dim=1, N=[64], M=2000, tol=1e-5, prec=32, w_extra=6),               # w 12
        # tiny grids, nf = 2w (tiles wider than the grid)
        dict(o, dim=1, N=[7], M=2000, tol=1e-6, prec=32, tile=[64]),
        dict(o, dim=2, N=[5, 6], M=2000, tol=1e-9, prec=64),
        dict(o, dim=3, N=[4, 4, 4], M=2000, tol=1e-5, prec=32),
        # odd nf, nf not a multiple of the tile
        dict(o, dim=2, N=[20, 16], M=4000, tol=1e-5, prec=32, nf=[45, 37], tile=[16, 8]),
        dict(o, dim=3, N=[10, 9, 8], M=4000, tol=1e-9, prec=64, nf=[23, 21, 19]),
        dict(o, dim=1, N=[150], M=4000, tol=1e-5, prec=32, nf=[333], tile=[64]),
        # clustered: every point in one bin
        dict(o, dim=1, N=[200], M=20000, tol=1e-5, prec=32, dist="cluster"),
        dict(o, dim=2, N=[64, 64], M=20000, tol=1e-5, prec=32, dist="cluster"),
        dict(o, dim=3, N=[24, 20, 16], M=20000, tol=1e-9, prec=64, dist="cluster"),
        # on tile boundaries (and +-1/2, +-1, +-w/2 cells)
        dict(o, dim=1, N=[500], M=5000, tol=1e-5, prec=32, dist="boundary", tile=[64]),
        dict(o, dim=2, N=[64, 48], M=8000, tol=1e-9, prec=64, dist="boundary"),
        dict(o, dim=3, N=[24, 20, 16], M=8000, tol=1e-5, prec=32, dist="boundary"),
        # other blocks, pitches and bins: 1 and 3 warps, pitch = tile, bins = tiles, bins of 1
        dict(o, dim=3, N=[20, 20, 20], M=8000, tol=1e-5, prec=32, nwarps=1, pad=0),
        dict(o, dim=2, N=[40, 40], M=8000, tol=1e-5, prec=32, nwarps=3, tile=[32, 16],
             bs=[32, 16]),
        dict(o, dim=3, N=[16, 12, 12], M=8000, tol=1e-9, prec=64, tile=[8, 8, 8], bs=[1, 1, 1]),
        dict(o, dim=2, N=[48, 48], M=100_000, tol=1e-5, prec=32, bs=[1, 1]),  # > 8192 bins
        # stable ranks
        dict(o, dim=3, N=[24, 26, 28], M=100_000, tol=1e-5, prec=32, stable=True),
        dict(o, dim=2, N=[48, 48], M=100_000, tol=1e-9, prec=64, stable=True, ntransf=2),
    ]
    return cases


def od_unit():
    """The OD and sort_stable unit tests; returns the number of failures."""
    bad = test_stable_ranks()
    worst = 0.0
    for cs in od_cases():
        cs["M"] = _m(cs["M"])
        err, plan = run_case(**cs)
        ok = err <= cs["tol"]
        worst = max(worst, err / cs["tol"])
        bad += not ok
        short = {k: v for k, v in cs.items() if k not in ("M", "typ", "method")}
        print(f"{'ok  ' if ok else 'FAIL'} od err {err:.2e} (w={plan.w} tile={plan.od['tile']} "
              f"nw={plan.od['nwarps']} pitch={plan.od['pitch']} bs={plan.bs}) {short}")
    print(f"od: worst err/tol {worst:.2f}")
    bad += test_od_deterministic()
    if SCALE == 1.0:
        setpts_cost()
    return bad
