"""Unit tests of the GPU harness (python3 kernels/test/gpu_test.py unit): the bin scans, the
bin sort, and the whole NUFFT pipeline against the direct sums over dimensions, precisions,
tolerances, methods, batches and edge points; then the output-driven spreader and the stable
ranks (gpu_unit_od.py). The tests use the formula width + 1 (w_extra=1),
a margin over the kernel's aliasing error; the C core's width rule predicts that error per plan
instead (c_core/src/params/width.c)."""
import time

import numpy as np
import cupy as cp

from gpu_pipeline import Points, bin_scan, bin_scan_big
from gpu_reference import rand_points, run_case
from gpu_unit_od import od_unit


def exclusive_cumsum(a):
    """Exclusive prefix sums of a u64 array, exactly. (np.concatenate([[0], u64 array]) mixes
    int64 and uint64, which numpy promotes to float64: sums past 2^53 lost their low bits, and
    the reference, not the kernels, failed for n >= 24593 bins of up to 2^40 points.)"""
    out = np.zeros(a.size, dtype=np.uint64)
    if a.size > 1:
        out[1:] = np.cumsum(a[:-1], dtype=np.uint64)
    return out


def host_fold(x, nf):
    """The kernels' point -> fine-grid coordinate u in [0, nf) (kernels/common.cuh wf_fold:
    periods removed against a two-part 2 pi with FMAs, products rounded on their own), exactly
    in double: points beyond [-pi, pi] (n != 0) through exact rational arithmetic (numpy has no
    fma), the rest as the kernel computes them. A plain mod(x / 2 pi, 1) * nf rounds differently
    at points such as 3 pi, which then land in the next bin on the host only."""
    from fractions import Fraction
    inv = 0.15915494309189533576888376337251436  # WF_INV_2PI, WF_2PI_HI, WF_2PI_LO
    hi, lo = 6.283185307179586232, 2.4492935982947064e-16
    x = np.asarray(x, dtype=np.float64)
    n = np.rint(x * inv)
    r = x.copy()
    for i in np.nonzero(n)[0]:
        ri = float(Fraction(x[i]) - Fraction(n[i]) * Fraction(hi))
        r[i] = float(Fraction(ri) - Fraction(n[i]) * Fraction(lo))
    u = r * inv
    u = u - np.floor(u)
    u = u * float(nf)
    return np.where(u >= nf, u - nf, u)


def test_scan():
    """wf_bin_scan (module sort) and module scan_big's three passes: both exclusive scans, the
    totals, the clamp to the cap and its flag, against numpy's cumsum"""
    rng = np.random.default_rng(1)
    bad = 0
    big_sizes = [1, 1023, 1024, 1025, 8193, 8192 * 3 + 17, 132_651, 1_000_003,
                 1024 * 1024 + 5]  # tiles of 1024: partial last tiles, > 1024 tiles
    cases = [("bin_scan", bin_scan, n) for n in
             [0, 1, 2, 31, 511, 512, 513, 2047, 2048, 2049, 8192 * 3 + 17, 1_000_003]]
    cases += [("scan_big", bin_scan_big, n) for n in big_sizes]
    cases += [("scan_big grid 3", lambda c, m, k: bin_scan_big(c, m, k, grid=3), n)
              for n in (5000, 100_000)]
    for name, scan, n in cases:
        for maxsub, capped in [(0, False), (7, False), (1024, False), (3, True)]:
            a = rng.integers(0, 1 << 40 if maxsub == 0 else 5000, size=n, dtype=np.uint64)
            a[rng.random(n) < 0.3] = 0  # empty bins
            if maxsub == 7 and n > 10:
                a[n // 2] = np.uint64(5 << 32)  # a bin past 2^32 points: the 64-bit division
            ns = (a + np.uint64(maxsub - 1)) // np.uint64(maxsub) if maxsub else \
                np.zeros(n, dtype=np.uint64)
            total_sub = int(ns.sum(dtype=np.uint64))
            cap = max(total_sub - 1, 0) if capped else total_sub + 5
            start, nsub, res = scan(cp.asarray(a), maxsub, cap if maxsub else 0)
            ref = exclusive_cumsum(a)
            r = res.get()
            ok = np.array_equal(start.get(), ref) and int(r[0]) == int(a.sum(dtype=np.uint64))
            if maxsub:
                nref = exclusive_cumsum(ns)
                over = total_sub > cap
                ok = ok and np.array_equal(nsub.get(), nref) and int(r[1]) == min(total_sub, cap)
                ok = ok and int(r[2]) == (int(over) << 32)
            else:
                ok = ok and int(r[1]) == 0 and int(r[2]) == 0
            if not ok:
                bad += 1
                print(f"{name} n={n} maxsub={maxsub} capped={capped}: FAIL")
    for n in (8192, 32768, 65536, 132_651):
        d = cp.asarray(rng.integers(0, 10, size=n, dtype=np.uint64))
        times = []
        for scan in (bin_scan, bin_scan_big):
            scan(d, 1024, 1 << 40)
            cp.cuda.runtime.deviceSynchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                scan(d, 1024, 1 << 40)
            cp.cuda.runtime.deviceSynchronize()
            times.append((time.perf_counter() - t0) / 20 * 1e3)
        print(f"  {n} bins, SM: wf_bin_scan {times[0]:.3f} ms, scan_big {times[1]:.3f} ms "
              f"(host loop incl. launches and allocations)")
    print(f"bin_scan, scan_big: {'ok' if not bad else 'FAIL'}")
    return bad


def test_sort():
    """bin sort is a permutation and respects bins; non-finite points flagged"""
    rng = np.random.default_rng(2)
    bad = 0
    for dim, prec in [(1, 32), (2, 64), (3, 32)]:
        M = 100_000
        nf = [64, 48, 40][:dim] + [1] * (3 - dim)
        bs = [16, 8, 5][:dim] + [1] * (3 - dim)
        coords = rand_points(dim, M, prec, rng, edge=True)
        P = Points(dim, coords, prec, nf, bs)
        si = P.sort_idx.get()
        if not np.array_equal(np.sort(si), np.arange(M)):
            bad += 1
            print("sort: not a permutation", dim, prec)
        # bins of sorted points are non-decreasing and match a host computation
        u = [host_fold(cp.asnumpy(c).astype(np.float64), nf[d]) for d, c in enumerate(coords)]
        b = np.zeros(M, dtype=np.int64)
        mul = 1
        for d in range(dim):
            bd = np.minimum(np.floor(u[d]).astype(np.int64) // bs[d], P.nb[d] - 1)
            b += mul * bd
            mul *= P.nb[d]
        if not np.array_equal(P.bin_of.get(), b):
            bad += 1
            print("sort: bin_of differs from host", dim, prec, np.sum(P.bin_of.get() != b))
        if np.any(np.diff(b[si]) < 0):
            bad += 1
            print("sort: not sorted by bin", dim, prec)
        if P.bad() != 0:
            bad += 1
            print("sort: bad flag set for finite points")
        if not np.array_equal(P.scoords[0].get(), coords[0].get()[si]):
            bad += 1
            print("sort: sorted x differs from x[sort_idx]", dim, prec)
        nsub = -(-np.bincount(b, minlength=P.bin_count.size) // P.maxsub)
        if P.n_subprob != nsub.sum():
            bad += 1
            print("sort: n_subprob", P.n_subprob, nsub.sum())
        sb = np.repeat(np.arange(nsub.size), nsub)
        if not np.array_equal(P.subprob_bin.get()[:P.n_subprob], sb) or \
                np.any(P.subprob_bin.get()[P.n_subprob:] != -1):
            bad += 1
            print("sort: subprob_bin differs from the host's", dim, prec)
    coords = rand_points(2, 1000, 32, rng)
    x = coords[0].get()
    x[17] = np.nan
    coords[0] = cp.asarray(x)
    P = Points(2, coords, 32, [64, 64, 1], [16, 16, 1])
    si = P.sort_idx.get()
    i17 = int(np.nonzero(si == 17)[0][0])
    if P.bad() != 1 or P.bin_of.get()[17] != 0 or P.scoords[0].get()[i17] != 0 or \
            not np.array_equal(np.sort(si), np.arange(1000)):
        bad += 1
        print("sort: NaN not flagged, or not binned in bin 0 at coordinate 0")
    print(f"sort: {'ok' if not bad else 'FAIL'}")
    return bad


def unit():
    bad = test_scan() + test_sort()
    cases = []
    for prec in (32, 64):
        tols = [1e-2, 1e-4, 1e-5, 1e-6] if prec == 32 else [1e-3, 1e-6, 1e-9, 1e-12, 1e-13]
        for dim in (1, 2, 3):
            N = {1: [300], 2: [40, 34], 3: [18, 14, 12]}[dim]
            for tol in tols:
                for method in ("gm", "sm"):
                    for typ in (1, 2):
                        cases.append(dict(typ=typ, dim=dim, N=N, M=3000, tol=tol, prec=prec,
                                          method=method))
    # batches, iflag, modeord, gridDim.y, small bins / odd sizes / wrapping
    cases += [
        dict(typ=1, dim=2, N=[33, 17], M=5000, tol=1e-5, prec=32, method="sm", ntransf=3, iflag=-1, modeord=1),
        dict(typ=2, dim=2, N=[33, 17], M=5000, tol=1e-5, prec=32, method="sm", ntransf=3, iflag=-1, modeord=1),
        dict(typ=1, dim=3, N=[9, 10, 11], M=5000, tol=1e-9, prec=64, method="gm", ntransf=2, iflag=-1, modeord=1),
        dict(typ=2, dim=3, N=[9, 10, 11], M=5000, tol=1e-9, prec=64, method="sm", ntransf=2, iflag=-1, modeord=1),
        dict(typ=1, dim=1, N=[7], M=2000, tol=1e-6, prec=32, method="sm", bs=[64]),  # tile > grid
        dict(typ=2, dim=1, N=[7], M=2000, tol=1e-6, prec=32, method="sm", bs=[64]),
        dict(typ=1, dim=2, N=[10, 12], M=4000, tol=1e-12, prec=64, method="sm", bs=[7, 5], maxsub=37),
        dict(typ=2, dim=2, N=[10, 12], M=4000, tol=1e-12, prec=64, method="sm", bs=[7, 5], maxsub=37),
        dict(typ=1, dim=3, N=[16, 16, 16], M=20000, tol=1e-13, prec=64, method="sm", bs=[4, 4, 4]),
        dict(typ=2, dim=3, N=[16, 16, 16], M=20000, tol=1e-13, prec=64, method="gm"),
        dict(typ=1, dim=3, N=[20, 20, 20], M=20000, tol=1e-6, prec=32, method="sm", bs=[8, 8, 4]),
        dict(typ=1, dim=2, N=[64, 64], M=100000, tol=1e-5, prec=32, method="sm", bs=[16, 16]),
        # more than SCAN_BIG_BINS bins, so setpts runs scan_big: 96^2 bins of 1, 24*26*28 of 2^3
        dict(typ=1, dim=2, N=[48, 48], M=100000, tol=1e-5, prec=32, method="sm", bs=[1, 1]),
        dict(typ=2, dim=2, N=[48, 48], M=100000, tol=1e-5, prec=32, method="gm", bs=[1, 1]),
        dict(typ=1, dim=3, N=[24, 26, 28], M=100000, tol=1e-9, prec=64, method="gm", bs=[2, 2, 2]),
        dict(typ=2, dim=3, N=[24, 26, 28], M=100000, tol=1e-9, prec=64, method="sm", bs=[2, 2, 2]),
    ]
    worst = 0
    for cs in cases:
        err, plan = run_case(**cs)
        ok = err <= cs["tol"]
        ratio = err / cs["tol"]
        worst = max(worst, ratio)
        if not ok:
            bad += 1
        short = {k: v for k, v in cs.items() if k not in ("M",)}
        print(f"{'ok  ' if ok else 'FAIL'} err {err:.2e} (w={plan.w}) {short}")
    print(f"unit: {bad} failures, worst err/tol {worst:.2f}")
    bad += od_unit()
    print(f"unit (with od, sort_stable): {bad} failures")
    return bad
