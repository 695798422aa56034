"""The NUFFT pipeline of the GPU harness (python3 kernels/test/gpu_test.py): cupy loads the
cubins kernels/check.sh built and runs bin sort, spread/interp, cuFFT (through cupy) and
deconvolve/amplify, with the host's parameter choices (width, beta, fine grid, bins). Methods:
"gm", "sm", and "od" (output-driven type-1 spreading, module si_..._spread_od: warp tiles of
the fine grid, no atomics, no memset of fw; with Points(stable=True), setpts ranks the points
inside their bins with module sort_stable and type 1 is the same bits run to run).

Host choices: FINUFFT's width for upsampling 2, w = ceil(-log10(tol/10)), and the kernel of
kernels/kernel_shape.h (kernel_shape.py reads it) with its beta at upsampling 2; fine grid
nf = 2N (at least 2w); deconvolution factors 1/phihat(k) by Gauss-Legendre quadrature. Module and
kernel names by kernels/module_names.h's rule.
Env: WF_BUILD (cubin folder, default kernels/build), WF_ARCH (default sm_90), WF_OLDABI=1
(kernels before the sorted-coordinate ABI: spread/interp read unsorted coordinates).
"""
import math
import os
import re

import numpy as np
import cupy as cp
from kernel_shape import beta as kernel_beta
from kernel_shape import phi

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("WF_BUILD", os.path.join(HERE, "..", "build"))
ARCH = os.environ.get("WF_ARCH", "sm_90")
OLDABI = os.environ.get("WF_OLDABI", "0") == "1"  # spread/interp take unsorted coordinates
# Folders searched before BUILD (set_variant): a variant's folder holds only the modules it
# changes (kernels/test/sweep_wave4.sh), the rest come from BUILD.
VARIANT_BUILDS = []
_mods = {}
_globals = {}  # (module, global) -> its int32 values or None: looked up once, not per launch


def set_variant(folders):
    """Load modules from `folders` first, then BUILD (a kernel variant's build folders)."""
    VARIANT_BUILDS[:] = list(folders)
    _mods.clear()
    _globals.clear()


def mod(name):
    if name not in _mods:
        for folder in VARIANT_BUILDS + [BUILD]:
            path = os.path.join(folder, f"{name}.{ARCH}.cubin")
            if os.path.exists(path) or folder == BUILD:
                _mods[name] = cp.RawModule(path=path)
                break
    return _mods[name]


def module_i32(module, name, n):
    """n int32 of the module's __device__ global `name`, or None when it has none (the variant
    marks of spreadinterp.cu: wf_smr_info, wf_sm_fix3)."""
    key = (module, name)
    if key not in _globals:
        try:
            ptr = mod(module).get_global(name)
            out = np.zeros(n, dtype=np.int32)
            ptr.copy_to_host(out.ctypes.data, out.nbytes)
        except Exception:  # noqa: BLE001 - cupy raises CUDADriverError (not found)
            out = None
        _globals[key] = out
    return _globals[key]


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
BETA_FACTOR = None  # override of beta / w (gpu_test.py bench betaf=..., sets it here)


def width_beta(tol, extra=0):
    w = max(2, int(math.ceil(-math.log10(tol / 10.0) - 1e-9))) + extra
    w = min(w, 16)
    if BETA_FACTOR is not None:
        return w, BETA_FACTOR * w
    return w, kernel_beta(w, 2.0)


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
# c_core/src/params/params.h, WF_SCAN_BIG_BINS: more bins take module scan_big
SCAN_BIG_BINS = 8192


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


ST_TILE = 2048  # kernels/sort_stable.cu: WF_ST_TILE items per tile


def stable_ranks(bin_of, M, nbins, bin_start, pos):
    """module sort_stable (ABI.md): pos[j] = the number of points j' < j in bin_of[j]'s bin, by
    an LSD radix sort of bin_of with 8-bit digits (hist, rowscan, scatter per pass)."""
    ntiles = -(-M // ST_TILE)
    passes = max(1, -(-max(int(nbins) - 1, 0).bit_length() // 8))
    hist = cp.empty(256 * max(ntiles, 1), dtype=cp.uint64)
    dtot = cp.empty(256, dtype=cp.uint64)
    keys = [bin_of, cp.empty(max(M, 1), dtype=cp.int32)]
    vals = [cp.empty(max(M, 1), dtype=cp.uint32), cp.empty(max(M, 1), dtype=cp.uint32)]
    g = (max(1, min(ntiles, 65535 * 4)),)
    cur = 0
    for p in range(passes):
        last = p == passes - 1
        fn("sort_stable", "wf_stable_hist")(g, (256,), (I64(M), keys[cur], I32(8 * p),
                                                        I64(ntiles), hist))
        fn("sort_stable", "wf_stable_rowscan")((256,), (256,), (I64(ntiles), hist, dtot))
        fn("sort_stable", "wf_stable_scatter")(
            g, (256,), (I64(M), keys[cur], NULL if p == 0 else vals[cur], I32(8 * p),
                        I64(ntiles), hist, dtot, NULL if last else keys[1 - cur],
                        NULL if last else vals[1 - cur], I32(0), bin_start if last else NULL,
                        pos if last else NULL))
        cur = 1 - cur
    return passes


class Points:
    """setpts: bins of shape bs over the fine grid nf; maxsub = 0 computes no subproblems (GM,
    OD); stable = True ranks points inside their bins in input order (module sort_stable)."""

    def __init__(self, dim, coords, prec, nf, bs, maxsub=1024, stable=False):
        self.dim, self.prec, self.nf, self.bs = dim, prec, list(nf), list(bs)
        self.coords = coords
        self.M = coords[0].size
        self.maxsub = maxsub
        self.stable = stable
        self.nb = [int(math.ceil(nf[d] / bs[d])) for d in range(3)]
        nbins = self.nb[0] * self.nb[1] * self.nb[2]
        M = self.M
        self.bin_of = cp.empty(max(M, 1), dtype=cp.int32)
        self.pos = cp.empty(max(M, 1), dtype=cp.uint32)
        self.bin_count = cp.zeros(nbins, dtype=cp.uint64)
        self.cap = nbins + -(-M // maxsub) if maxsub > 0 else 0
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
             self.bin_of, self.pos, I32(0), self.bin_count, I64(1)))  # one point set
        nbins = self.bin_count.size
        # the result block: n_sorted, n_subprob (the SM kernels' device count), bad | overflow;
        # as the C core: module scan_big above SCAN_BIG_BINS bins (c_core/src/params/params.h)
        scan = bin_scan_big if nbins > SCAN_BIG_BINS else bin_scan
        self.bin_start, self.nsub_start, self.result = scan(self.bin_count, self.maxsub, self.cap)
        if self.stable:  # deterministic ranks in place of bin_count's atomic ones
            stable_ranks(self.bin_of, M, nbins, self.bin_start, self.pos)
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
        sm = self.maxsub > 0  # subproblems (SM) or none (GM, OD)
        fn(self.bin_module(), f"wf_sort_unpack_{psuf(self.prec)}")(
            (grid_for(max(M, self.cap)),), (256,),
            (I64(M), I32(self.dim), rec, I32(rw), I32(0), self.sort_idx, self.sptr(0),
             self.sptr(1), self.sptr(2), I64(nbins), self.nsub_start if sm else NULL,
             n_subprob_ptr if sm else NULL, I64(self.cap), self.subprob_bin if sm else NULL,
             I64(M)))  # set_M = M: one point set
        if OLDABI:  # kernels before the sorted-coordinate ABI (A/B timing): unsorted coords
            self.scoords = list(self.coords)
        self.n_subprob = int(self.result.get()[1])

    def bad_ptr(self):  # i32 at byte 16 of the result block
        return self.result.view(cp.int32)[4:5]

    def bad(self):
        return int(self.result.view(cp.int32).get()[4])


# ---------------------------------------------------------------------------- spread / interp
with open(os.path.join(HERE, "..", "module_names.h")) as _f:
    _NAMES = dict(re.findall(r'#define (WF_SI_\w+_FMT)\s+"([^"]+)"', _f.read()))


def si_name(op, method, dim, prec, w):
    """(module, kernel): op "spread" or "interp", method "gm"/"sm"/"od" (one module each; "od"
    spreads only), named by kernels/module_names.h's printf formats."""
    return (_NAMES["WF_SI_MODULE_FMT"] % (dim, psuf(prec), w, op, method),
            _NAMES["WF_SI_ENTRY_FMT"] % (op, method, dim, psuf(prec), w))


NOSORT = False  # GM with sort_idx = NULL, points in input order (gpu_test.py bench nosort=1)


def sm_cell_bytes(op, dim, prec):
    """Bytes per SM tile cell (ABI.md; the C core's wf_sm_cell_bytes): 1D and 2D f32 spreading
    add in fixed point, four int32 words per cell; else one complex."""
    if op == "spread" and dim <= 2 and prec == 32:
        return 16
    return 8 if prec == 32 else 16


def od_stage_bytes(dim, prec, w):
    """ABI.md, WF_OD_STAGE_BYTES: a warp's staging area after its tile."""
    cs, ts = (8, 4) if prec == 32 else (16, 8)
    return 32 * (cs + 16 + dim * w * ts) + 672


def od_warp_bytes(dim, prec, w, tile, pitch):
    """Dynamic shared memory per warp of the OD kernel: its tile (pitch1 x tl2 x tl3 cells,
    rounded to 16 bytes) and its staging area."""
    t = list(tile) + [1] * (3 - len(tile))
    cells = pitch * (t[1] if dim >= 2 else 1) * (t[2] if dim >= 3 else 1)
    return -(-cells * (8 if prec == 32 else 16) // 16) * 16 + od_stage_bytes(dim, prec, w)


def od_pitch(dim, prec, w, tl1, pad="auto"):
    """Row pitch of an OD tile: lanes e of a warp add footprint cells q + W*r (q = e % W), so a
    pitch = W mod 16 (f32: 16 complex per 128-byte wavefront) or mod 8 (f64) puts 16 (8)
    consecutive lanes on distinct banks; pad="auto" pads tl1 up to that, an integer pads by it."""
    if dim == 1:
        return tl1
    if pad != "auto":
        return tl1 + int(pad)
    m = 16 if prec == 32 else 8
    return tl1 + (w - tl1) % m


SMEM_MAX = 227 * 1024  # sm_90 opt-in dynamic shared memory per block (and per SM: 228 KB)


def od_pick_nwarps(warp_bytes, regs=None):
    """Warps per block for the OD kernel: the most resident warps per SM (shared memory, and
    registers when known), ties to the larger block."""
    best, best_res = 1, -1
    for nw in (8, 4, 2, 1):
        if nw * warp_bytes > SMEM_MAX:
            continue
        blocks = SMEM_MAX // (nw * warp_bytes)
        if regs:
            blocks = min(blocks, 65536 // (max(regs, 1) * 32 * nw))
        res = min(blocks * nw, 64)
        if res > best_res:
            best, best_res = nw, res
    return best


def smr_info(dim, prec, w):
    """(NR, PX, NBW) of a spread SM module built with WF_SPREAD_SM_REG (the tile in registers,
    spreadinterp/smr_spread.cuh), else None."""
    v = module_i32(si_name("spread", "sm", dim, prec, w)[0], "wf_smr_info", 4)
    return None if v is None else (int(v[0]), int(v[1]), int(v[2]))


def smr_launch(dim, prec, w, bs, info):
    """(threads per block, dynamic shared memory bytes) of the register-tile SM spreading:
    smr_spread.cuh's warps and batch arrays for bins bs."""
    nr, px, nbw = info
    pad = (w + 1) // 2
    td1, td2 = bs[0] + 2 * pad, bs[1] + 2 * pad
    if dim == 2:
        warps = -(-td1 // 32)
    elif px > 0:
        warps = -(-td1 // px) * -(-td2 // (32 // px))
    else:
        warps = -(-(td1 * td2) // 32)
    st = 4 if prec == 32 else 8
    vec = 16 // st
    nrp = -(-nr // vec) * vec
    nb = 32 * nbw
    smem = nb * (nrp * st + 32 + 2 * 2 * st + w * 2 * st + 16 * dim + (w * st if dim == 3 else 0))
    return 32 * warps, smem


def smr_default_bins(dim, prec, w, nr):
    """Bins for the register tile: the C core's wf_smr_default_bins (c_core/src/params/bins.c):
    the last dimension's from NR (bs = NR - 2 PAD), the others 8 x 8 in 3D (the sweep's best:
    B7 w10 8x8x4 26.1 ms against 6x8x4 26.4, D2t1 w8 30.6 against 40.3) and 128 - 2 PAD in 2D (a
    tile row of four warps: B6 w10 118x2). 3D f32 (variant builds only) keeps the 16 x 8 of its
    shared tile."""
    pad = (w + 1) // 2
    last = nr - 2 * pad
    if dim == 2:
        return [128 - 2 * pad, last]
    if prec == 32:
        return [16, 8, last]
    return [8, 8, last]


def smr_fit_bins(dim, prec, w, bs, nr):
    """The C core's wf_fit_smr_bins: the last extent to at most NR - 2 PAD, then the largest
    other one halved until the block's warps fit the register file at the kernel's cap
    (kernels/smr_shape.h, WF_SMR_MAXREG_OF); flat rows."""
    pad = (w + 1) // 2
    bs = list(bs)
    bs[dim - 1] = min(bs[dim - 1], nr - 2 * pad)
    cap = ((80 if nr <= 12 else 96) if prec == 32 else (112 if nr <= 14 else 128))
    max_warps = min(65536 // (32 * cap), 32)
    while smr_launch(dim, prec, w, bs, (nr, 0, 1))[0] > 32 * max_warps:
        d = int(np.argmax(bs[:dim - 1]))
        if bs[d] <= 1:
            raise ValueError(f"no bins of the register tile fit {max_warps} warps")
        bs[d] //= 2
    return bs


def sm_fix3(dim, prec, w):
    """A 3D f32 spread SM module built as the fixed-point team (16-byte tile cells)."""
    return module_i32(si_name("spread", "sm", dim, prec, w)[0], "wf_sm_fix3", 1) is not None


def sm_block(op, dim, prec, w, bs=None):
    """Threads per block of SM spreading / interpolation: the C core's wf_sm_spread_block /
    wf_sm_interp_block (c_core/src/params/bins.c; for spreading also the modules'
    WF_OD_MIN_BLOCK, kernels/spreadinterp.cu). A spreading module with the tile in registers
    (its wf_smr_info; kernels/smr_shape.h lists them) takes 32 x the warps of its columns over
    bins bs (smr_launch)."""
    if op == "spread":
        info = smr_info(dim, prec, w) if dim >= 2 else None
        if info is not None and bs is not None:
            return smr_launch(dim, prec, w, bs, info)[0]
        return 192 if (dim, prec, w) == (3, 32, 7) else 256
    return 128 if dim == 2 and prec == 32 and w in (7, 8) else 256


# Overrides of sm_block (gpu_test.py bench smblock= / siblock=; None: the host's). Spreading
# needs at least the module's WF_OD_MIN_BLOCK in 3D and 2D f64 (other values: build the module
# with WF_EXTRA_DEFS=-DWF_OD_MIN_BLOCK=N); interpolation takes any multiple of 32 up to 256.
SM_SPREAD_BLOCK = None
SM_INTERP_BLOCK = None


def spread_or_interp(op, method, P, w, beta, cvec, fw, ntransf, gridy=1, od=None):
    dim, prec, nf = P.dim, P.prec, P.nf
    m, k = si_name(op, method, dim, prec, w)
    f = fn(m, k)
    nosort = NOSORT and method == "gm"
    xyz = (P.ptr(0), P.ptr(1), P.ptr(2)) if nosort else (P.sptr(0), P.sptr(1), P.sptr(2))
    base = (I64(P.M),) + xyz + (cvec, I64(nf[0]), I64(nf[1]), I64(nf[2]),
            I64(ntransf), NULL if nosort else P.sort_idx, rdt(prec)(beta))
    sets = (I64(P.M), I64(ntransf))  # set_M, tps: one point set (ABI.md, "Point sets")
    if method == "gm":
        f((grid_for(P.M),), (256,), base + (fw,) + sets)
    elif method == "od":
        tile, nw, pitch = od["tile"], od["nwarps"], od["pitch"]
        t = [tile[d] if d < dim else 1 for d in range(3)]
        shmem = nw * od_warp_bytes(dim, prec, w, t, pitch)
        ntiles = int(np.prod([-(-nf[d] // t[d]) for d in range(3)]))
        f.max_dynamic_shared_size_bytes = shmem
        f((max(1, min(-(-ntiles // nw), 65535 * 4)), max(1, min(ntransf, 65535))), (32 * nw,),
          base + (I32(P.bs[0]), I32(P.bs[1]), I32(P.bs[2]), I64(P.nb[0]), I64(P.nb[1]),
                  I64(P.nb[2]), P.bin_start, P.bin_count, I32(t[0]), I32(t[1]), I32(t[2]),
                  I32(pitch), fw), shared_mem=shmem)
    else:
        pad = (w + 1) // 2
        td = [P.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]
        cell = sm_cell_bytes(op, dim, prec)
        if op == "spread" and dim == 3 and prec == 32 and sm_fix3(dim, prec, w):
            cell = 16  # the fixed-point team's tile (int32 hi/lo words per component)
        shmem = td[0] * td[1] * td[2] * cell
        block = (SM_SPREAD_BLOCK if op == "spread" else SM_INTERP_BLOCK) or sm_block(op, dim,
                                                                                  prec, w, P.bs)
        info = smr_info(dim, prec, w) if op == "spread" else None
        if info is not None:  # the register tile: its warps, its batch arrays
            block, shmem = smr_launch(dim, prec, w, P.bs, info)
        f.max_dynamic_shared_size_bytes = shmem
        f((min(max(P.cap, 1), 65535 * 4), gridy), (block,),
          base + (I32(P.bs[0]), I32(P.bs[1]), I32(P.bs[2]), I64(P.nb[0]), I64(P.nb[1]),
                  I64(P.nb[2]), P.bin_start, P.bin_count, P.nsub_start, P.subprob_bin,
                  P.result[1:2], I64(P.maxsub), fw) + sets, shared_mem=shmem)


# OD defaults (first guesses; gpu_test.py bench tile=/obs=/nw=/pad= sweeps them): warp tiles
# per (dim, precision); bins of half the tile per dimension (the gather then reads ~1.5x the
# touching points per dimension instead of ~3x with bins = tiles)
OD_TILE = {(1, 32): [1024], (1, 64): [512], (2, 32): [64, 8], (2, 64): [32, 8],
           (3, 32): [16, 16, 4], (3, 64): [16, 8, 4]}


def smooth_size(n):
    """The least 7-smooth even integer >= n (cuFFT's fast sizes)."""
    m = max(2, int(n) + (int(n) & 1))
    while True:
        r = m
        for p in (2, 3, 5, 7):
            while r % p == 0:
                r //= p
        if r == 1:
            return m
        m += 2


class Plan:
    def __init__(self, typ, dim, N, tol, prec, method, ntransf=1, iflag=1, modeord=0, bs=None,
                 nf=None, maxsub=1024, w_extra=0, tile=None, nwarps=None, pad="auto",
                 stable=False, sigma=None):
        self.typ, self.dim, self.prec, self.method = typ, dim, prec, method
        self.N = list(N) + [1] * (3 - len(N))
        self.w, self.beta = width_beta(tol, w_extra)
        self.nf = [max(2 * n, 2 * self.w) if d < dim else 1 for d, n in enumerate(self.N)]
        if sigma is not None:  # another upsampling factor: the fine grid and beta follow
            self.nf = [max(smooth_size(math.ceil(sigma * n)), 2 * self.w) if d < dim else 1
                       for d, n in enumerate(self.N)]
            if BETA_FACTOR is None:
                self.beta = kernel_beta(self.w, self.nf[0] / self.N[0])
        if nf is not None:
            self.nf = list(nf) + [1] * (3 - len(nf))
        self.stable = stable
        self.poison_fw = False  # type 1: fill fw with NaN before spreading (unit tests, OD)
        self.od = None
        if method == "od":
            if typ != 1:
                raise ValueError("od is a type-1 (spreading) method")
            t = list(tile or OD_TILE[(dim, prec)])[:dim]
            t = t + [1] * (3 - len(t))
            pitch = od_pitch(dim, prec, self.w, t[0], pad)
            wb = od_warp_bytes(dim, prec, self.w, t, pitch)
            if wb > SMEM_MAX:
                raise ValueError(f"od tile {t[:dim]} needs {wb} bytes of shared memory per warp")
            if not nwarps:
                try:  # registers bound residency too (cupy's RawKernel.num_regs)
                    regs = fn(*si_name("spread", "od", dim, prec, self.w)).num_regs
                except Exception:  # noqa: BLE001 - any failure: shared memory alone
                    regs = None
                nwarps = od_pick_nwarps(wb, regs)
            self.od = dict(tile=t, pitch=pitch, nwarps=nwarps, warp_bytes=wb)
            if bs is None:
                bs = [max(1, t[d] // 2) if dim > 1 else max(1, t[0] // 4) for d in range(dim)]
            maxsub = 0  # no subproblems
        self.smr = None
        if method == "sm" and typ == 1 and dim >= 2:
            self.smr = smr_info(dim, prec, self.w)
        if bs is None and self.smr is not None:
            bs = smr_default_bins(dim, prec, self.w, self.smr[0])
        elif self.smr is not None and self.smr[1] == 0:  # the C core fits given bins
            bs = smr_fit_bins(dim, prec, self.w, bs, self.smr[0])
        if bs is None:
            # the host's defaults (c_core/src/params/bins.c, wf_sm_bins; 3D f64 type 2 8x8x8
            # up to w10)
            sm3 = {(1, 32): [16, 8, 4], (2, 32): [16, 16, 4], (1, 64): [8, 8, 4],
                   (2, 64): [8, 8, 8] if self.w <= 10 else [8, 8, 4]}[(typ, prec)]
            bs = {1: [1024, 1, 1], 2: [32, 32, 1], 3: sm3 if method == "sm" else [16, 16, 16]}[dim]
        self.bs = list(bs) + [1] * (3 - len(bs))
        if method == "sm" and self.smr is None:  # shrink bins until the tile fits in 200 KiB
            pad = (self.w + 1) // 2
            while np.prod([self.bs[d] + 2 * pad if d < dim else 1 for d in range(3)]) * \
                    sm_cell_bytes("spread" if typ == 1 else "interp", dim, prec) > 200 * 1024:
                d = int(np.argmax(self.bs[:dim]))
                self.bs[d] = max(1, self.bs[d] // 2)
        self.gridy = min(ntransf, 2)
        self.ntransf, self.iflag, self.modeord, self.maxsub = ntransf, iflag, modeord, maxsub
        self.fac = [fac_of(self.N[d], self.nf[d], self.w, self.beta, prec) if d < dim else NULL
                    for d in range(3)]
        shape = (ntransf,) + tuple(self.nf[d] for d in reversed(range(dim)))
        self.fw = cp.zeros(shape, dtype=cdt(prec))

    def setpts(self, coords):
        self.P = Points(self.dim, coords, self.prec, self.nf, self.bs, self.maxsub, self.stable)

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
            if self.poison_fw:
                self.fw.fill(np.nan)
            elif self.method != "od":  # OD writes every cell of fw: no memset
                self.fw.fill(0)
            spread_or_interp("spread", self.method, self.P, self.w, self.beta, cvec, self.fw,
                             self.ntransf, self.gridy, self.od)
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

