#!/usr/bin/env python3
"""GPU check of the kernels alone (no C core): cupy loads the cubins kernels/check.sh built,
runs the whole NUFFT pipeline (bin sort, spread/interp, cuFFT through cupy, deconvolve/amplify)
and compares against the direct-sum kernels, then times suite B.

    kernels/check.sh                       # here: builds kernels/build/*.sm_90.cubin
    python3 kernels/test/gpu_test.py unit   # on the GPU machine
    python3 kernels/test/gpu_test.py bench

Host choices: FINUFFT's width for upsampling 2, w = ceil(-log10(tol/10)), and the sinh-type
kernel of kernels/common.cuh with beta = 0.995 pi (3/4) w; fine grid nf = 2N (at least 2w);
deconvolution factors 1/phihat(k) by Gauss-Legendre quadrature. The unit tests use that width + 1
(w_extra=1), a margin over the kernel's aliasing error; the C core's width rule predicts that
error per plan instead (c_core/src/width.c). Edge points (x = -pi, pi, 3pi, -7.5pi, 20, ...) are
included. The bench uses the formula width, as suite B's reference did.
Env: WF_BUILD (cubin folder, default kernels/build), WF_ARCH (default sm_90).
"""
import math
import os
import sys
import time

import numpy as np
import cupy as cp

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("WF_BUILD", os.path.join(HERE, "..", "build"))
ARCH = os.environ.get("WF_ARCH", "sm_90")
OLDABI = os.environ.get("WF_OLDABI", "0") == "1"  # spread/interp take unsorted coordinates
_mods = {}


def mod(name):
    if name not in _mods:
        _mods[name] = cp.RawModule(path=os.path.join(BUILD, f"{name}.{ARCH}.cubin"))
    return _mods[name]


def fn(module, kernel):
    return mod(module).get_function(kernel)


I64, I32, U64 = np.int64, np.int32, np.uint64
NULL = np.uint64(0)


def grid_for(n, block=256):
    return max(1, min((int(n) + block - 1) // block, 65535 * 4))


def psuf(prec):
    return "f32" if prec == 32 else "f64"


def rdt(prec):
    return np.float32 if prec == 32 else np.float64


def cdt(prec):
    return np.complex64 if prec == 32 else np.complex128


# ---------------------------------------------------------------------------- parameters
BETA_FACTOR = None  # override of beta / w (bench betaf=...)
W_EXTRA = 0  # added to the width in bench (bench wext=...)


def width_beta(tol, extra=0):
    w = max(2, int(math.ceil(-math.log10(tol / 10.0) - 1e-9))) + extra
    w = min(w, 16)
    c = 0.995 * math.pi * 0.75
    if BETA_FACTOR is not None:
        c = BETA_FACTOR
    return w, c * w


def phi(z, w, beta):
    a = 2.0 * z / w
    s = 1.0 - a * a
    r = np.sqrt(np.maximum(s, 1e-300))
    return np.where(s > 0, (np.exp(beta * (r - 1.0)) - np.exp(-beta * (r + 1.0))) / r, 0.0)


def fac_of(N, nf, w, beta, prec):
    """1/phihat(k), k = 0..N/2: phihat(k) = int phi(z) cos(2 pi k z / nf) dz."""
    xq, wq = np.polynomial.legendre.leggauss(4 * w + 40)
    z = xq * (w / 2.0)
    wz = wq * (w / 2.0) * phi(z, w, beta)
    k = np.arange(N // 2 + 1)
    ph = (wz[None, :] * np.cos(2 * np.pi * np.outer(k, z) / nf)).sum(1)
    return cp.asarray((1.0 / ph).astype(rdt(prec)))


# ---------------------------------------------------------------------------- sort
def bin_scan(count, maxsub=0, cap=0):
    """wf_bin_scan: (bin_start, nsub_start or None, result block as 3 u64)"""
    n = count.size
    start = cp.empty(max(n, 1), dtype=cp.uint64)
    nsub = cp.empty(max(n, 1), dtype=cp.uint64) if maxsub > 0 else None
    result = cp.full(3, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)  # the kernel writes all of it
    fn("sort", "wf_bin_scan")((1,), (512,), (I64(n), count, start, I64(maxsub),
                                             NULL if nsub is None else nsub, I64(cap), result))
    return start[:n], (None if nsub is None else nsub[:n]), result


SCAN_BIG_TILE = 1024  # kernels/scan_big.cu: bins per block (256 threads x 4)
SCAN_BIG_BINS = 8192  # c_core/src/params.h, WF_SCAN_BIG_BINS: more bins take module scan_big


def bin_scan_big(count, maxsub=0, cap=0, grid=None):
    """module scan_big (reduce, tile scan, rescan): same outputs as bin_scan. grid: blocks of the
    two many-block passes (default one per tile; they loop over the tiles, so any grid works)"""
    n = count.size
    tiles = -(-n // SCAN_BIG_TILE)
    start = cp.empty(max(n, 1), dtype=cp.uint64)
    nsub = cp.empty(max(n, 1), dtype=cp.uint64) if maxsub > 0 else None
    sums = cp.full(max(2 * tiles, 1), 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
    result = cp.full(3, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
    g = (max(1, tiles if grid is None else grid),)
    fn("scan_big", "wf_scan_big_reduce")(g, (256,), (I64(n), count, I64(maxsub), sums))
    fn("scan_big", "wf_scan_big_tiles")((1,), (256,), (I64(n), sums, I64(maxsub), I64(cap), result))
    fn("scan_big", "wf_scan_big_down")(g, (256,), (I64(n), count, start, I64(maxsub),
                                                    NULL if nsub is None else nsub, sums))
    return start[:n], (None if nsub is None else nsub[:n]), result


class Points:
    def __init__(self, dim, coords, prec, nf, bs, maxsub=1024):
        self.dim, self.prec, self.nf, self.bs = dim, prec, list(nf), list(bs)
        self.coords = coords
        self.M = coords[0].size
        self.maxsub = maxsub
        self.nb = [int(math.ceil(nf[d] / bs[d])) for d in range(3)]
        nbins = self.nb[0] * self.nb[1] * self.nb[2]
        M = self.M
        self.bin_of = cp.empty(max(M, 1), dtype=cp.int32)
        self.pos = cp.empty(max(M, 1), dtype=cp.uint32)
        self.bin_count = cp.zeros(nbins, dtype=cp.uint64)
        self.cap = nbins + -(-M // maxsub)
        self.run_setpts()

    def ptr(self, d):
        return self.coords[d] if d < self.dim else NULL

    def bin_module(self):  # setpts' binning kernels, one module per dimension and precision
        return f"bin_{self.dim}d_{psuf(self.prec)}"

    def sptr(self, d):  # coordinates in sorted order (what spread/interp read)
        return self.scoords[d] if d < self.dim else NULL

    def run_setpts(self):
        M, nf, bs, nb = self.M, self.nf, self.bs, self.nb
        self.bin_count.fill(0)
        fn(self.bin_module(), f"wf_bin_count_{psuf(self.prec)}")(
            (grid_for(M),), (256,),
            (I64(M), I32(self.dim), self.ptr(0), self.ptr(1), self.ptr(2), I64(nf[0]), I64(nf[1]),
             I64(nf[2]), I32(bs[0]), I32(bs[1]), I32(bs[2]), I64(nb[0]), I64(nb[1]), I64(nb[2]),
             self.bin_of, self.pos, I32(0), self.bin_count))
        nbins = self.bin_count.size
        # the result block: n_sorted, n_subprob (the SM kernels' device count), bad | overflow;
        # as the C core: module scan_big above SCAN_BIG_BINS bins (c_core/src/params.h)
        scan = bin_scan_big if nbins > SCAN_BIG_BINS else bin_scan
        self.bin_start, self.nsub_start, self.result = scan(self.bin_count, self.maxsub, self.cap)
        self.sort_idx = cp.empty(max(M, 1), dtype=cp.int64)
        # records: dim coordinates and a u32 index, padded to 2, 4 or 8 u32 words
        nw = self.dim * (1 if self.prec == 32 else 2) + 1
        rw = 2 if nw <= 2 else 4 if nw <= 4 else 8
        rec = cp.empty(max(M, 1) * rw, dtype=cp.uint32)
        fn(self.bin_module(), f"wf_bin_scatter_{psuf(self.prec)}")(
            (grid_for(M),), (256,),
            (I64(M), I32(self.dim), self.ptr(0), self.ptr(1), self.ptr(2), self.bin_of,
             self.pos, I32(0), self.bin_start, I32(rw), rec, self.bad_ptr()))
        self.subprob_bin = cp.full(max(self.cap, 1), -1, dtype=cp.int32)
        self.scoords = [cp.empty(max(M, 1), dtype=rdt(self.prec)) for _ in range(self.dim)]
        n_subprob_ptr = self.result[1:2]
        fn(self.bin_module(), f"wf_sort_unpack_{psuf(self.prec)}")(
            (grid_for(max(M, self.cap)),), (256,),
            (I64(M), I32(self.dim), rec, I32(rw), I32(0), self.sort_idx, self.sptr(0),
             self.sptr(1), self.sptr(2), I64(nbins), self.nsub_start, n_subprob_ptr,
             I64(self.cap), self.subprob_bin))
        if OLDABI:  # kernels before the sorted-coordinate ABI (A/B timing): unsorted coords
            self.scoords = list(self.coords)
        self.n_subprob = int(self.result.get()[1])

    def bad_ptr(self):  # i32 at byte 16 of the result block
        return self.result.view(cp.int32)[4:5]

    def bad(self):
        return int(self.result.view(cp.int32).get()[4])


# ---------------------------------------------------------------------------- spread / interp
def si_name(op, method, dim, prec, w):
    """(module, kernel): op "spread" or "interp", method "gm"/"sm" (one module each)."""
    return (f"si_{dim}d_{psuf(prec)}_w{w}_{op}_{method}",
            f"wf_{op}_{method}_{dim}d_{psuf(prec)}_w{w}")


NOSORT = False  # GM with sort_idx = NULL (points in input order)


def spread_or_interp(op, method, P, w, beta, cvec, fw, ntransf, gridy=1):
    dim, prec, nf = P.dim, P.prec, P.nf
    m, k = si_name(op, method, dim, prec, w)
    f = fn(m, k)
    nosort = NOSORT and method == "gm"
    xyz = (P.ptr(0), P.ptr(1), P.ptr(2)) if nosort else (P.sptr(0), P.sptr(1), P.sptr(2))
    base = (I64(P.M),) + xyz + (cvec, I64(nf[0]), I64(nf[1]), I64(nf[2]),
            I64(ntransf), NULL if nosort else P.sort_idx, rdt(prec)(beta))
    if method == "gm":
        f((grid_for(P.M),), (256,), base + (fw,))
    else:
        pad = (w + 1) // 2
        td = [P.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]
        shmem = td[0] * td[1] * td[2] * (8 if prec == 32 else 16)
        f.max_dynamic_shared_size_bytes = shmem
        f((min(max(P.cap, 1), 65535 * 4), gridy), (256,),
          base + (I32(P.bs[0]), I32(P.bs[1]), I32(P.bs[2]), I64(P.nb[0]), I64(P.nb[1]),
                  I64(P.nb[2]), P.bin_start, P.bin_count, P.nsub_start, P.subprob_bin,
                  P.result[1:2], I64(P.maxsub), fw), shared_mem=shmem)


class Plan:
    def __init__(self, typ, dim, N, tol, prec, method, ntransf=1, iflag=1, modeord=0, bs=None,
                 nf=None, maxsub=1024, w_extra=0):
        self.typ, self.dim, self.prec, self.method = typ, dim, prec, method
        self.N = list(N) + [1] * (3 - len(N))
        self.w, self.beta = width_beta(tol, w_extra)
        self.nf = [max(2 * n, 2 * self.w) if d < dim else 1 for d, n in enumerate(self.N)]
        if nf is not None:
            self.nf = list(nf) + [1] * (3 - len(nf))
        if bs is None:
            # the host's defaults (c_core/src/bins.c, wf_default_bins)
            sm3 = {(1, 32): [16, 8, 4], (2, 32): [16, 16, 4], (1, 64): [8, 8, 2],
                   (2, 64): [8, 8, 4]}[(typ, prec)]
            bs = {1: [1024, 1, 1], 2: [32, 32, 1], 3: sm3 if method == "sm" else [16, 16, 16]}[dim]
        self.bs = list(bs) + [1] * (3 - len(bs))
        if method == "sm":  # shrink bins until the tile fits in 200 KiB of shared memory
            pad = (self.w + 1) // 2
            while np.prod([self.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]) * \
                    (8 if prec == 32 else 16) > 200 * 1024:
                d = int(np.argmax(self.bs[:dim]))
                self.bs[d] = max(1, self.bs[d] // 2)
        self.gridy = min(ntransf, 2)
        self.ntransf, self.iflag, self.modeord, self.maxsub = ntransf, iflag, modeord, maxsub
        self.fac = [fac_of(self.N[d], self.nf[d], self.w, self.beta, prec) if d < dim else NULL
                    for d in range(3)]
        shape = (ntransf,) + tuple(self.nf[d] for d in reversed(range(dim)))
        self.fw = cp.zeros(shape, dtype=cdt(prec))

    def setpts(self, coords):
        self.P = Points(self.dim, coords, self.prec, self.nf, self.bs, self.maxsub)

    def fft(self):
        axes = tuple(range(1, self.dim + 1))
        if self.iflag >= 0:  # sum fw e^{+i..}: unnormalised inverse FFT
            self.fw[...] = cp.fft.ifftn(self.fw, axes=axes, norm="forward")
        else:
            self.fw[...] = cp.fft.fftn(self.fw, axes=axes)

    def prep_args(self, src, dst):
        N, nf = self.N, self.nf
        return (I32(self.dim), I64(N[0]), I64(N[1]), I64(N[2]), I64(nf[0]), I64(nf[1]),
                I64(nf[2]), I64(self.ntransf), self.fac[0], self.fac[1], self.fac[2],
                I32(self.modeord), src, dst)

    def execute(self, cvec, fk, timings=None):
        p = psuf(self.prec)
        Nprod = self.N[0] * self.N[1] * self.N[2]
        nfprod = self.nf[0] * self.nf[1] * self.nf[2]
        ev = [cp.cuda.Event() for _ in range(4)]
        if self.typ == 1:
            ev[0].record()
            self.fw.fill(0)
            spread_or_interp("spread", self.method, self.P, self.w, self.beta, cvec, self.fw,
                             self.ntransf, self.gridy)
            ev[1].record()
            self.fft()
            ev[2].record()
            fn(f"deconvolve_{self.dim}d_{p}", f"wf_deconvolve_{p}")(
                (grid_for(Nprod),), (256,), self.prep_args(self.fw, fk))
            ev[3].record()
        else:
            ev[0].record()
            fn(f"amplify_{self.dim}d_{p}", f"wf_amplify_{p}")(
                (grid_for(nfprod),), (256,), self.prep_args(fk, self.fw))
            ev[1].record()
            self.fft()
            ev[2].record()
            spread_or_interp("interp", self.method, self.P, self.w, self.beta, cvec, self.fw,
                             self.ntransf, self.gridy)
            ev[3].record()
        ev[3].synchronize()
        if timings is not None:
            timings.append([cp.cuda.get_elapsed_time(ev[i], ev[i + 1]) for i in range(3)])


# ---------------------------------------------------------------------------- direct sums
def modes_of_index(i, N, modeord):
    if modeord == 0:
        return i - N // 2
    return np.where(i < (N + 1) // 2, i, i - N)


def direct_t1(plan, coords, cvec, idx_list):
    """exact f at the given linear mode indices (transform 0)"""
    N = plan.N
    i1 = idx_list % N[0]
    i2 = (idx_list // N[0]) % N[1]
    i3 = idx_list // (N[0] * N[1])
    ks = np.stack([modes_of_index(i1, N[0], plan.modeord),
                   modes_of_index(i2, N[1], plan.modeord) if plan.dim >= 2 else 0 * i1,
                   modes_of_index(i3, N[2], plan.modeord) if plan.dim >= 3 else 0 * i1], 1)
    k_list = cp.asarray(ks.astype(np.int64).ravel())
    out = cp.empty(len(idx_list), dtype=cp.complex128)
    p = psuf(plan.prec)
    M = coords[0].size
    fn(f"direct_{p}", f"wf_direct_t1_{p}")(
        (min(len(idx_list), 65535 * 4),), (256,),
        (I32(plan.dim), I64(M), coords[0], coords[1] if plan.dim >= 2 else NULL,
         coords[2] if plan.dim >= 3 else NULL, cvec, I64(len(idx_list)), k_list,
         I32(plan.iflag), out))
    return out


def direct_t2(plan, coords, fk, j_list):
    p = psuf(plan.prec)
    out = cp.empty(len(j_list), dtype=cp.complex128)
    N = plan.N
    fn(f"direct_{p}", f"wf_direct_t2_{p}")(
        (min(len(j_list), 65535 * 4),), (256,),
        (I32(plan.dim), I64(len(j_list)), cp.asarray(j_list.astype(np.int64)), coords[0],
         coords[1] if plan.dim >= 2 else NULL, coords[2] if plan.dim >= 3 else NULL, fk,
         I64(N[0]), I64(N[1]), I64(N[2]), I32(plan.modeord), I32(plan.iflag), out))
    return out


def rel_l2(a, b):
    a = cp.asarray(a, dtype=cp.complex128)
    b = cp.asarray(b, dtype=cp.complex128)
    return float(cp.linalg.norm(a - b) / cp.linalg.norm(b))


def rand_points(dim, M, prec, rng, edge=False):
    coords = []
    for _ in range(dim):
        x = rng.uniform(-np.pi, np.pi, M)
        if edge and M >= 16:
            x[:8] = [-np.pi, np.pi, 0.0, -1e-300, 3 * np.pi, -7.5 * np.pi, 20.0, np.nextafter(np.pi, 0)]
        coords.append(cp.asarray(x.astype(rdt(prec))))
    return coords


def rand_c(n, prec, rng):
    v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    return cp.asarray(v.astype(cdt(prec)))


def run_case(typ, dim, N, M, tol, prec, method, ntransf=1, iflag=1, modeord=0, nsamp=500,
             seed=0, bs=None, edge=True, maxsub=1024, nf=None, w_extra=1):
    rng = np.random.default_rng(seed)
    plan = Plan(typ, dim, N, tol, prec, method, ntransf, iflag, modeord, bs=bs, maxsub=maxsub,
                nf=nf, w_extra=w_extra)
    coords = rand_points(dim, M, prec, rng, edge=edge)
    plan.setpts(coords)
    assert plan.P.bad() == 0
    Nprod = plan.N[0] * plan.N[1] * plan.N[2]
    errs = []
    if typ == 1:
        c = rand_c(M * ntransf, prec, rng)
        fk = cp.zeros(Nprod * ntransf, dtype=cdt(prec))
        plan.execute(c, fk)
        for t in range(ntransf):
            idx = rng.choice(Nprod, size=min(nsamp, Nprod), replace=False)
            ref = direct_t1(plan, coords, c[t * M:(t + 1) * M], idx)
            errs.append(rel_l2(fk[t * Nprod:(t + 1) * Nprod][cp.asarray(idx)], ref))
    else:
        fk = rand_c(Nprod * ntransf, prec, rng)
        c = cp.zeros(M * ntransf, dtype=cdt(prec))
        plan.execute(c, fk)
        for t in range(ntransf):
            js = rng.choice(M, size=min(nsamp, M), replace=False)
            ref = direct_t2(plan, coords, fk[t * Nprod:(t + 1) * Nprod], js)
            errs.append(rel_l2(c[t * M:(t + 1) * M][cp.asarray(js)], ref))
    return max(errs), plan


# ---------------------------------------------------------------------------- unit tests
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
            ref = np.concatenate([[0], np.cumsum(a, dtype=np.uint64)[:-1]]).astype(np.uint64) \
                if n else a
            r = res.get()
            ok = np.array_equal(start.get(), ref) and int(r[0]) == int(a.sum(dtype=np.uint64))
            if maxsub:
                nref = np.concatenate([[0], np.cumsum(ns, dtype=np.uint64)[:-1]]) if n else ns
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
        u = [np.mod(cp.asnumpy(c).astype(np.float64) / (2 * np.pi), 1.0) * nf[d] for d, c in enumerate(coords)]
        u = [np.where(ud >= nf[d], ud - nf[d], ud) for d, ud in enumerate(u)]
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
    return bad


# ---------------------------------------------------------------------------- suite B
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


def bench(only=None, methods=("gm", "sm"), reps=10, bss=None, maxsub=1024):
    for name, typ, dim, N, M, tol, prec, ntransf in SUITE:
        if only and name not in only:
            continue
        rng = np.random.default_rng(3)
        coords = rand_points(dim, M, prec, rng, edge=False)
        Nprod = int(np.prod(N))
        for method in methods:
            for bs in (bss or [None]):
                if bs is not None and len(bs) != dim:
                    continue
                plan = Plan(typ, dim, N, tol, prec, method, ntransf, bs=bs, maxsub=maxsub,
                            w_extra=W_EXTRA)
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
                if typ == 1:
                    c = rand_c(M * ntransf, prec, rng)
                    fk = cp.zeros(Nprod * ntransf, dtype=cdt(prec))
                else:
                    fk = rand_c(Nprod * ntransf, prec, rng)
                    c = cp.zeros(M * ntransf, dtype=cdt(prec))
                tim = []
                plan.execute(c, fk)
                for _ in range(reps):
                    plan.execute(c, fk, tim)
                tim = np.median(np.array(tim), axis=0)
                # accuracy on a sample
                if typ == 1:
                    idx = rng.choice(Nprod, size=1000, replace=False)
                    err = rel_l2(fk[cp.asarray(idx)], direct_t1(plan, coords, c[:M], idx))
                else:
                    js = rng.choice(M, size=1000, replace=False)
                    err = rel_l2(c[cp.asarray(js)], direct_t2(plan, coords, fk[:Nprod], js))
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


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "unit"
    if what == "unit":
        sys.exit(1 if unit() else 0)
    elif what == "bench":
        # bench [B1,B2,..] [methods=sm,gm] [bs=16x16x4;8x8x8] [maxsub=N]
        kw = dict(a.split("=", 1) for a in sys.argv[3:])
        methods = tuple(kw.get("methods", "gm,sm").split(","))
        NOSORT = kw.get("nosort", "0") == "1"
        W_EXTRA = int(kw.get("wext", 0))
        BETA_FACTOR = float(kw["betaf"]) if "betaf" in kw else None
        extra = None
        if "bs" in kw:
            extra = [[int(v) for v in b.split("x")] for b in kw["bs"].split(";")]
        bench(only=sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] != "all" else None,
              methods=methods, bss=extra, maxsub=int(kw.get("maxsub", 1024)))
    elif what == "profile":
        # profile B3 sm [bs=..]: one setup and two executes of a suite case (for ncu)
        name, method = sys.argv[2], sys.argv[3]
        kw = dict(a.split("=", 1) for a in sys.argv[4:])
        bs = [int(v) for v in kw["bs"].split("x")] if "bs" in kw else None
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
    elif what == "all":
        bad = unit()
        bench()
        sys.exit(1 if bad else 0)
