/*
 * spreadinterp/od_spread.cuh — output-driven (OD, gather) spreading: every cell of the fine grid
 * is written exactly once, with a plain store, by the warp that owns it. No global atomics, no
 * shared-memory atomics, no block barriers in the main loop: the sum at each cell is formed in a
 * fixed order (the staging order below), so with a stable sort (module sort_stable) type 1 is
 * bitwise reproducible. kernels/ABI.md, "Module si_..._spread_od", is the contract;
 * kernels/README.md says why it is built this way.
 *
 * Work unit: a *warp tile*, tl1 x tl2 x tl3 cells of the fine grid (runtime shape; tiles cover
 * the grid from the origin, the last one along a dimension clipped to nf_d). One warp owns one
 * warp tile at a time and keeps it in its own slice of dynamic shared memory (row pitch pitch1
 * cells); a block is nwarps = blockDim.x / 32 independent warps (no shared data between them).
 * For each warp tile (and transform, gridDim.y), the warp
 *  1. zeroes its tile;
 *  2. walks the bins of setpts' sort that can hold a point whose footprint touches the tile
 *     (wf_od_range: the cells [o - ceil(W/2), o + e - 1 + floor(W/2)] of each dimension, mod
 *     nf, deduplicated, so a small grid never gathers a bin twice), 32 bins at a time, and
 *     their points 32 at a time (lane = candidate, in bin order, then sorted order within a bin);
 *  3. keeps the candidates whose footprint touches the tile (exact test, periodic), compacted in
 *     order into a 32-slot staging area: strength, tile-relative footprint start per dimension
 *     and the W kernel values per dimension, computed once per (point, warp tile) by its lane;
 *  4. adds the staged points one after the other, all 32 lanes on one point: 3D lanes own
 *     footprint columns (q, r) (e = lane + 32 pass, q = e % W, r = e / W) and walk the planes
 *     p of the column inside the tile; 2D lanes own (q, rows) of the footprint rows inside the
 *     tile; 1D lane q owns footprint cell q. A cell is touched by one lane per point, and a
 *     __syncwarp orders the points: plain load / add / store, no atomics. Footprint cells
 *     outside the tile are skipped (another warp tile adds them);
 *  5. writes its tile to fw, every cell once, coalesced along dimension 1.
 * The order in which a cell receives its contributions is the staging order: bins in the fixed
 * order of step 2, points in sorted order inside a bin. Deterministic given the sort.
 *
 * Periodicity: the tile-relative footprint start d of a point (per dimension) is reduced into
 * [-(W-1), nf - W + 1), so cell q of the footprint sits at tile coordinate d + q, or d + q + nf
 * when d + q < 0; cells at tile coordinates outside [0, e) belong to other tiles. This is exact
 * for any nf >= W and any tile shape (tiny grids, tiles wider than the grid, odd nf).
 *
 * Part of the spreadinterp.cu translation unit: included there after its configuration macros
 * (T, C, V, W, WF_DIM, WF_PREC), point.cuh and the scan primitive (scan.cuh).
 */
#ifndef WF_SI_OD_SPREAD_CUH
#define WF_SI_OD_SPREAD_CUH

/* Block limits (ABI): blockDim.x a multiple of 32 and at most WF_OD_MAX_BLOCK. */
#define WF_OD_MAX_BLOCK 256
/* Passes of 32 lanes over a 3D footprint's W x W columns. */
#define WF_OD_NPASS ((W * W + 31) / 32)
/* Planes a 3D column adds per group (loads first, then stores: independent shared accesses). */
#define WF_OD_PGROUP 4

/* Per-warp staging area, after the warp's tile in dynamic shared memory (ABI.md:
 * WF_OD_STAGE_BYTES = 32*(sizeof(V) + 16 + d*W*sizeof(T)) + 672, V = cT, or T in the real
 * modules). */
#define WF_OD_STAGE_C     0                         /* V[32]: strengths */
#define WF_OD_STAGE_D     (32 * (int)sizeof(V))     /* int4[32]: d1, d2, d3 */
#define WF_OD_STAGE_K     (WF_OD_STAGE_D + 32 * 16) /* T[32][WF_DIM][W]: kernel values */
#define WF_OD_STAGE_PREF  (WF_OD_STAGE_K + 32 * WF_DIM * W * (int)sizeof(T)) /* u64[33] */
#define WF_OD_STAGE_BST   (WF_OD_STAGE_PREF + 33 * 8) /* u64[32]: bin starts */
#define WF_OD_STAGE_TILE  (WF_OD_STAGE_BST + 32 * 8)  /* wf_od_tile (144 bytes) */
#define WF_OD_STAGE_BYTES (((WF_OD_STAGE_TILE + 144) + 15) & ~15)

/* The bins one dimension of a warp tile gathers: the cells [o - PAD, o + e - 1 + W/2] (mod nf)
 * hold every point whose footprint can touch [o, o + e) (a point in cell c has its footprint in
 * [c - floor(W/2), c + ceil(W/2)]). As at most two disjoint ranges of bins: lo0 .. lo0 + len0 - 1
 * and lo1 .. lo1 + (n - len0) - 1; all nb bins when the cells cover the grid or the two ranges
 * would meet (so no bin is gathered twice). */
struct wf_od_range {
    i64 lo0, len0, lo1, n;
};

/* a / b for a, b >= 0: 32-bit when both fit (a 64-bit division is a long inline body that
 * JIT time pays for, common.cuh) */
__device__ __forceinline__ i64 wf_od_div(i64 a, i64 b) {
    return ((u64)a | (u64)b) <= 0xffffffffull ? (i64)((unsigned)a / (unsigned)b)
                                              : (i64)wf_udiv64((u64)a, (u64)b);
}

__device__ __forceinline__ i64 wf_od_bin_of_cell(i64 c, i32 bs) {
    return wf_od_div(c, bs);
}

__device__ __forceinline__ wf_od_range wf_od_range_of(i64 o, int e, i64 nf, i32 bs, i64 nb) {
    wf_od_range r;
    const i64 lo = o - PAD, hi = o + e - 1 + W / 2;
    r.lo1 = 0;
    if (hi - lo + 1 >= nf) { /* every cell: every bin */
        r.lo0 = 0;
        r.len0 = r.n = nb;
        return r;
    }
    if (lo >= 0 && hi < nf) { /* one piece */
        r.lo0 = wf_od_bin_of_cell(lo, bs);
        r.len0 = r.n = wf_od_bin_of_cell(hi, bs) - r.lo0 + 1;
        return r;
    }
    /* two pieces: [a, nf - 1] and [0, b] */
    const i64 a = lo < 0 ? lo + nf : lo, b = hi >= nf ? hi - nf : hi;
    const i64 ba = wf_od_bin_of_cell(a, bs), bb = wf_od_bin_of_cell(b, bs);
    if (bb >= ba) { /* they meet in a bin: all bins */
        r.lo0 = 0;
        r.len0 = r.n = nb;
        return r;
    }
    r.lo0 = ba;
    r.len0 = nb - ba;
    r.lo1 = 0;
    r.n = r.len0 + bb + 1;
    return r;
}

__device__ __forceinline__ i64 wf_od_range_bin(const wf_od_range &r, i64 i) {
    return i < r.len0 ? r.lo0 + i : r.lo1 + (i - r.len0);
}

/* One dimension of a candidate point: fold, footprint start a, and the tile-relative start d
 * reduced into [-(W-1), nf - W + 1); whether the footprint touches [0, e) of the tile. */
__device__ __forceinline__ bool wf_od_locate(T xv, i64 o, int e, i64 nf, double &u, i64 &a,
                                             int &d_out) {
    u = wf_fold((double)xv, nf);
    a = wf_first_index(u, W);
    i64 d = a - o;
    if (d < -(W - 1))
        d += nf;
    else if (d >= nf - W + 1)
        d -= nf;
    const bool touch = (d < e && d + W > 0) || (d < 0 && d + nf < e);
    d_out = touch ? (int)d : 0; /* touching: d in [-(W-1), e) */
    return touch;
}

/* The geometry of one warp tile (uniform over the warp; kept in the warp's staging area, not in
 * registers: it is read once per point or group of bins, and the candidate loop's doubles need
 * the registers). nfc_d = min(nf_d, 2^30): what a
 * negative tile coordinate wraps by (any value >= e_d + W would do: with nf_d that large no
 * wrapped cell lands in the tile, and 2^30 keeps the sums in int). */
struct wf_od_tile {
    i64 o1, o2, o3;
    int e1, e2, e3;
    int nfc1, nfc2, nfc3;
    wf_od_range r1, r2, r3;
};
static_assert(sizeof(wf_od_tile) == 144, "WF_OD_STAGE_BYTES counts 144 bytes for wf_od_tile");

/* Adds (wr, wi) * k3[p] to the cells col[plane * (z0 + p)], p in [p0, p1): groups of
 * WF_OD_PGROUP planes, their loads issued before their stores (the cells are distinct), the
 * cell pointer advanced by a plane at a time; the last partial group predicated. */
__device__ __forceinline__ void wf_od_add_planes(V *col, int plane, int z0, int p0, int p1,
                                                 const T *__restrict__ k3, const V &wv) {
    int n = p1 - p0;
    if (n <= 0)
        return;
    V *cell = col + plane * (z0 + p0);
    const T *kp = k3 + p0;
#pragma unroll 1
    for (; n >= WF_OD_PGROUP; n -= WF_OD_PGROUP) {
        V v[WF_OD_PGROUP];
        T k[WF_OD_PGROUP];
#pragma unroll
        for (int g = 0; g < WF_OD_PGROUP; ++g) {
            v[g] = cell[g * plane];
            k[g] = kp[g];
        }
#pragma unroll
        for (int g = 0; g < WF_OD_PGROUP; ++g) {
            wf_vfma(v[g], wv, k[g]);
            cell[g * plane] = v[g];
        }
        cell += WF_OD_PGROUP * plane;
        kp += WF_OD_PGROUP;
    }
    if (n > 0) {
        V v[WF_OD_PGROUP - 1];
        T k[WF_OD_PGROUP - 1];
#pragma unroll
        for (int g = 0; g < WF_OD_PGROUP - 1; ++g) {
            if (g < n) {
                v[g] = cell[g * plane];
                k[g] = kp[g];
            }
        }
#pragma unroll
        for (int g = 0; g < WF_OD_PGROUP - 1; ++g) {
            if (g < n) {
                wf_vfma(v[g], wv, k[g]);
                cell[g * plane] = v[g];
            }
        }
    }
}

/* Adds staged point k (all 32 lanes call; the caller orders points with __syncwarp). */
__device__ __forceinline__ void wf_od_add_point(V *tile, int pitch1, int plane, const wf_od_tile &g,
                                                const unsigned char *stage, int k, int lane) {
    const int4 dd = reinterpret_cast<const int4 *>(stage + WF_OD_STAGE_D)[k];
    const V cv = reinterpret_cast<const V *>(stage + WF_OD_STAGE_C)[k];
    const T *kk = reinterpret_cast<const T *>(stage + WF_OD_STAGE_K) + k * (WF_DIM * W);
#if WF_DIM == 1
    (void)pitch1;
    (void)plane;
    int tx = dd.x + lane;
    tx += tx < 0 ? g.nfc1 : 0;
    if (lane < W && (unsigned)tx < (unsigned)g.e1) {
        const T kq = kk[lane];
        V *cell = tile + tx;
        V v = *cell;
        wf_vfma(v, cv, kq);
        *cell = v;
    }
#elif WF_DIM == 2
    (void)plane;
    /* rows r of the footprint inside the tile: tile row dd.y + r (piece 0), and for dd.y < 0
     * the wrapped rows dd.y + nf2 + r, r < -dd.y (piece 1) */
#pragma unroll 1
    for (int piece = 0; piece < 2; ++piece) {
        const int r0 = piece == 0 ? max(0, -dd.y) : 0;
        const int r1 =
            piece == 0 ? min(W, g.e2 - dd.y) : (dd.y < 0 ? min(-dd.y, g.e2 - dd.y - g.nfc2) : 0);
        const int y0 = piece == 0 ? dd.y : dd.y + g.nfc2;
        const int n = W * (r1 - r0);
#pragma unroll 1
        for (int b = 0; b < n; b += 32) {
            const int e = b + lane;
            const int q = e % W, r = r0 + e / W;
            int tx = dd.x + q;
            tx += tx < 0 ? g.nfc1 : 0;
            if (e < n && (unsigned)tx < (unsigned)g.e1) {
                const T kv = kk[q] * kk[W + r];
                V *cell = tile + tx + pitch1 * (y0 + r);
                V v = *cell;
                wf_vfma(v, cv, kv);
                *cell = v;
            }
        }
    }
#else
    /* planes p of the footprint inside the tile: tile plane dd.z + p (piece 0), and for
     * dd.z < 0 the wrapped planes dd.z + nf3 + p, p < -dd.z (piece 1) */
    const int pa0 = max(0, -dd.z), pa1 = min(W, g.e3 - dd.z);
    const int pb1 = dd.z < 0 ? min(-dd.z, g.e3 - dd.z - g.nfc3) : 0;
    const T *k3 = kk + 2 * W;
    /* unrolled for W <= 8 (two passes): each pass's (q, r) is then the same for every point and
     * leaves the point loop; wider footprints keep one copy of the plane loops */
#if WF_OD_NPASS <= 2
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int pass = 0; pass < WF_OD_NPASS; ++pass) {
        const int e = lane + 32 * pass;
        const int q = e % W, r = e / W;
        int tx = dd.x + q, ty = dd.y + r;
        tx += tx < 0 ? g.nfc1 : 0;
        ty += ty < 0 ? g.nfc2 : 0;
        if (e < W * W && (unsigned)tx < (unsigned)g.e1 && (unsigned)ty < (unsigned)g.e2) {
            const T kxy = kk[q] * kk[W + r];
            const V wv = wf_vscale(cv, kxy);
            V *col = tile + tx + pitch1 * ty;
            wf_od_add_planes(col, plane, dd.z, pa0, pa1, k3, wv);
            if (pb1 > 0)
                wf_od_add_planes(col, plane, dd.z + g.nfc3, 0, pb1, k3, wv);
        }
    }
#endif
}

/* Stages this lane's candidate (if it touches the tile) into slot `slot`: strength, tile-
 * relative starts and the W kernel values of each dimension. */
__device__ __forceinline__ void wf_od_stage(unsigned char *stage, int slot, const wf_pts &P,
                                            const V *__restrict__ cv, i64 j, const int (&d)[3],
                                            const i64 (&a)[3], const double (&u)[3]) {
    reinterpret_cast<V *>(stage + WF_OD_STAGE_C)[slot] = wf_ldg(cv + j);
    reinterpret_cast<int4 *>(stage + WF_OD_STAGE_D)[slot] = make_int4(d[0], d[1], d[2], 0);
    T *kk = reinterpret_cast<T *>(stage + WF_OD_STAGE_K) + slot * (WF_DIM * W);
#pragma unroll
    for (int dim = 0; dim < WF_DIM; ++dim) {
#pragma unroll 1
        for (int q = 0; q < W; ++q)
            kk[dim * W + q] = wf_kernel_value(a[dim], q, u[dim], P);
    }
}

/* One warp tile, one transform: gather, stage, add (steps 2-4 of the file comment). */
__device__ __forceinline__ void wf_od_gather(V *tile, unsigned char *stage, int pitch1, int plane,
                                             const wf_od_tile &g, const wf_pts &P,
                                             const V *__restrict__ cv,
                                             const i64 *__restrict__ sort_idx, const wf_bins &B,
                                             i64 nb3, int lane) {
    u64 *s_pref = reinterpret_cast<u64 *>(stage + WF_OD_STAGE_PREF);
    u64 *s_bst = reinterpret_cast<u64 *>(stage + WF_OD_STAGE_BST);
    (void)nb3;
    const i64 n1 = g.r1.n, n12 = n1 * g.r2.n, G = n12 * g.r3.n;
    const unsigned lt = (1u << lane) - 1u;
#pragma unroll 1
    for (i64 g0 = 0; g0 < G; g0 += 32) {
        /* 32 bins, dimension 1 fastest; lane's bin count and start, then their prefix sums */
        const i64 gi = g0 + lane;
        u64 cnt = 0, bst = 0;
        if (gi < G) {
            i64 i2 = 0, i3 = 0, i1 = gi;
            if (WF_DIM >= 2) {
                i3 = wf_od_div(gi, n12);
                const i64 rest = gi - i3 * n12;
                i2 = wf_od_div(rest, n1);
                i1 = rest - i2 * n1;
            }
            const i64 bin = wf_od_range_bin(g.r1, i1) +
                            B.nb1 * (wf_od_range_bin(g.r2, i2) + B.nb2 * wf_od_range_bin(g.r3, i3));
            cnt = __ldg(B.bin_count + bin);
            bst = __ldg(B.bin_start + bin);
        }
        const u64 incl = wf_warp_inclusive_scan_u64(cnt);
        const u64 total = __shfl_sync(0xffffffffu, incl, 31);
        s_pref[lane + 1] = incl;
        s_bst[lane] = bst;
        if (lane == 0)
            s_pref[0] = 0;
        __syncwarp();
        const int ng = (int)min((i64)32, G - g0);
#pragma unroll 1
        for (u64 c0 = 0; c0 < total; c0 += 32) {
            const u64 ci = c0 + lane;
            bool touch = false;
            i64 pos = 0;
            int d[3] = {0, 0, 0};
            i64 a[3] = {0, 0, 0};
            double u[3] = {0.0, 0.0, 0.0};
            if (ci < total) {
                /* the bin of candidate ci: the last of the group with prefix <= ci */
                int lo = 0, hi = ng;
                while (hi - lo > 1) {
                    const int mid = (lo + hi) >> 1;
                    if (s_pref[mid] <= ci)
                        lo = mid;
                    else
                        hi = mid;
                }
                pos = (i64)(s_bst[lo] + (ci - s_pref[lo]));
                touch = wf_od_locate(__ldg(P.x + pos), g.o1, g.e1, P.nf1, u[0], a[0], d[0]);
#if WF_DIM >= 2
                touch &= wf_od_locate(__ldg(P.y + pos), g.o2, g.e2, P.nf2, u[1], a[1], d[1]);
#endif
#if WF_DIM == 3
                touch &= wf_od_locate(__ldg(P.z + pos), g.o3, g.e3, P.nf3, u[2], a[2], d[2]);
#endif
            }
            const unsigned hit = __ballot_sync(0xffffffffu, touch);
            if (touch)
                wf_od_stage(stage, __popc(hit & lt), P, cv, __ldg(sort_idx + pos), d, a, u);
            __syncwarp();
            const int n_st = __popc(hit);
#pragma unroll 1
            for (int k = 0; k < n_st; ++k) {
                wf_od_add_point(tile, pitch1, plane, g, stage, k, lane);
                __syncwarp(); /* the next point may add to the cells this one did */
            }
        }
        __syncwarp(); /* s_pref / s_bst are rewritten by the next group */
    }
}

/* The whole kernel body (the entry point in spreadinterp.cu passes its arguments). */
__device__ __forceinline__ void wf_spread_od(i64 M, const wf_pts &P, const V *__restrict__ c,
                                             i64 ntransf, const i64 *__restrict__ sort_idx,
                                             const wf_bins &B, i64 nb3, i32 tl1, i32 tl2, i32 tl3,
                                             i32 pitch1, V *__restrict__ fw) {
    WF_DYNAMIC_SMEM(wf_smem);
    if (WF_DIM < 2)
        tl2 = 1;
    if (WF_DIM < 3)
        tl3 = 1;
    const int nw = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const i64 tile_cells = (i64)pitch1 * tl2 * tl3;
    const i64 tile_bytes = (tile_cells * (i64)sizeof(V) + 15) & ~15ll;
    const i64 warp_bytes = tile_bytes + WF_OD_STAGE_BYTES;
    /* the contract (ABI.md); a wrong launch would write outside the shared memory it was
     * given, so it traps instead */
    const unsigned dyn_bytes = wf_dynamic_smem_size();
    if ((blockDim.x & 31) != 0 || blockDim.x > WF_OD_MAX_BLOCK || tl1 < 1 || tl2 < 1 || tl3 < 1 ||
        pitch1 < tl1 || (i64)dyn_bytes < warp_bytes * nw)
        __trap();
    V *tile = reinterpret_cast<V *>(wf_smem + warp * warp_bytes);
    unsigned char *stage = wf_smem + warp * warp_bytes + tile_bytes;
    wf_od_tile *s_tile = reinterpret_cast<wf_od_tile *>(stage + WF_OD_STAGE_TILE);
    const int plane = pitch1 * tl2;

    const i64 nt1 = wf_od_div(P.nf1 + tl1 - 1, tl1), nt2 = wf_od_div(P.nf2 + tl2 - 1, tl2),
              nt3 = wf_od_div(P.nf3 + tl3 - 1, tl3);
    const i64 ntiles = nt1 * nt2 * nt3;
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const V zero = wf_vzero();
#pragma unroll 1
    for (i64 wt = (i64)blockIdx.x * nw + warp; wt < ntiles; wt += (i64)gridDim.x * nw) {
        if (lane == 0) {
            wf_od_tile &h = *s_tile;
            const i64 t3 = wf_od_div(wt, nt1 * nt2), rest = wt - t3 * (nt1 * nt2);
            const i64 t2 = wf_od_div(rest, nt1), t1 = rest - t2 * nt1;
            h.o1 = t1 * tl1;
            h.o2 = t2 * tl2;
            h.o3 = t3 * tl3;
            h.e1 = (int)min((i64)tl1, P.nf1 - h.o1);
            h.e2 = (int)min((i64)tl2, P.nf2 - h.o2);
            h.e3 = (int)min((i64)tl3, P.nf3 - h.o3);
            h.nfc1 = (int)min(P.nf1, (i64)1 << 30);
            h.nfc2 = (int)min(P.nf2, (i64)1 << 30);
            h.nfc3 = (int)min(P.nf3, (i64)1 << 30);
            h.r1 = wf_od_range_of(h.o1, h.e1, P.nf1, B.bs1, B.nb1);
            h.r2.lo0 = h.r2.lo1 = h.r3.lo0 = h.r3.lo1 = 0;
            h.r2.len0 = h.r2.n = h.r3.len0 = h.r3.n = 1;
            if (WF_DIM >= 2)
                h.r2 = wf_od_range_of(h.o2, h.e2, P.nf2, B.bs2, B.nb2);
            if (WF_DIM >= 3)
                h.r3 = wf_od_range_of(h.o3, h.e3, P.nf3, B.bs3, nb3);
        }
        __syncwarp();
        const wf_od_tile &g = *s_tile;
#pragma unroll 1
        for (i64 t = blockIdx.y; t < ntransf; t += gridDim.y) {
            for (i64 e = lane; e < tile_cells; e += 32)
                tile[e] = zero;
            __syncwarp();
            wf_od_gather(tile, stage, pitch1, plane, g, P, c + t * M, sort_idx, B, nb3, lane);
            __syncwarp();
            /* the tile out, one row (dimension 1) at a time */
            V *f = fw + t * nfprod;
            const int rows = g.e2 * g.e3;
#pragma unroll 1
            for (int row = 0; row < rows; ++row) {
                const int ty = row % g.e2, tz = row / g.e2;
                const i64 gbase = g.o1 + P.nf1 * ((g.o2 + ty) + P.nf2 * (g.o3 + tz));
                const V *src = tile + pitch1 * (ty + tl2 * tz);
                for (int x = lane; x < g.e1; x += 32)
                    f[gbase + x] = src[x];
            }
            __syncwarp(); /* the tile is zeroed again for the next transform / tile */
        }
        /* (the last __syncwarp also orders every read of *s_tile before lane 0 rewrites it) */
    }
}

#endif /* WF_SI_OD_SPREAD_CUH */
