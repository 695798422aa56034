/*
 * spreadinterp.cu — module si_{d}d_{p}_w{w}: spreading (type 1) and interpolation (type 2) with
 * the sinh-type kernel of width w, one module per (dimension, precision, width) so that w is a
 * compile-time constant (-DWF_DIM=1|2|3 -DWF_PREC=32|64 -DWF_W=2..16). kernels/ABI.md,
 * "Module si_{d}d_p_w{w}", is the contract; README.md explains the choices.
 *
 * Three ways to map work onto lanes, chosen per kernel by the WF_* macros below (defaults
 * measured on an H100 with suite B; the others stay selectable for re-measuring):
 *  - thread per point: a lane computes its point's W kernel values per dimension once (in
 *    registers) and walks the whole footprint. Used for interpolation (all dims) and 1D SM
 *    spreading, where the per-point setup (fold, exp) must be amortised over many cells. Point
 *    data are fetched one iteration ahead to overlap the random gathers.
 *  - team per point: W consecutive lanes share a point, lane q owning footprint column q
 *    (dim 1) and computing the dim-2/3 kernel values of index q, which team mates fetch with
 *    a shuffle. Every memory instruction of a team touches W consecutive cells: 1-2 cache
 *    lines (global atomics) and distinct banks with no two lanes on one cell (shared tile).
 *    Used for GM spreading and 2D f32 SM spreading.
 *  - output-driven (cell per thread): the block takes points one step at a time, each thread
 *    owning fixed cells of the footprint, and adds with plain loads/stores; no atomics at all.
 *    Used for 3D SM spreading (W^3 cells keep a 256-thread block busy): 3D f32 w6 went from
 *    22 ms (thread per point) and 15 ms (team) to 4.8 ms, 3D f64 w10 from 320 ms to 34 ms;
 *    and for 2D f64 SM spreading, several points per step (wf_spread_sm_od2): w11 9.0 -> 5.7 ms.
 * Shared-memory float atomicAdd is a compare-and-swap loop on sm_90 (ATOMS.CAST.SPIN), which
 * is why avoiding shared atomics pays off so much.
 *
 * Unrolling: only the innermost loop over one footprint dimension is unrolled; outer loops are
 * `#pragma unroll 1` (unrolling all three of a 3D w=16 kernel took nvcc > 10 minutes). Kernel
 * values an outer loop needs are computed in it (one per iteration: the same count as
 * precomputing), except dim 2 of 3D thread-per-point, which every plane revisits: those stay
 * in registers and are selected with W predicated moves (wf_pick), since a run-time index into
 * a register array would move it to local memory.
 */
#include "common.cuh"

#if !defined(WF_DIM) || !defined(WF_PREC) || !defined(WF_W)
#error "spreadinterp.cu needs -DWF_DIM=1|2|3 -DWF_PREC=32|64 -DWF_W=<width>"
#endif
#if WF_DIM < 1 || WF_DIM > 3
#error "WF_DIM must be 1, 2 or 3"
#endif
#if WF_W < 2 || WF_W > 16
#error "WF_W must be in 2..16"
#endif

/* wf_<op>_<d>d_<p>_w<w>, e.g. wf_spread_sm_2d_f32_w6 */
#define WF_SINAME(op) WF_PASTE8(wf_, op, _, WF_DIM, d_, WF_PSUF, _w, WF_W)

typedef wf_real T;
typedef wf_cplx C;

#define W WF_W
/* tile padding each side (ABI.md) */
#define PAD ((WF_W + 1) / 2)
/* point teams per warp (team variant) */
#define WF_TEAMS (32 / WF_W)

/* Variant per kernel: 1 = team per point, 0 = thread per point (see the top of the file). */
#ifndef WF_SPREAD_GM_TEAM
#define WF_SPREAD_GM_TEAM 1
#endif
#ifndef WF_INTERP_GM_TEAM
#define WF_INTERP_GM_TEAM 0
#endif
#ifndef WF_SPREAD_SM_TEAM
#define WF_SPREAD_SM_TEAM (WF_DIM >= 2)
#endif
/* SM spread output-driven (cell per thread, no atomics; overrides WF_SPREAD_SM_TEAM) */
#ifndef WF_SPREAD_SM_OD
#define WF_SPREAD_SM_OD (WF_DIM == 3)
#endif
/* 3D f64 SM interp: team per point measured faster (H100, B8 w11, 8x8x4 bins: 17.1 vs 20.7 ms;
 * 8x8x2: 19.4 vs 22.1); 3D f32 w7 slower (3.0 vs 2.8 ms at 16x16x4), 2D f32 w7 much slower.
 * Narrow f64 widths (unmeasured) keep thread per point: a team of W < 8 wastes lanes. */
#ifndef WF_INTERP_SM_TEAM
#define WF_INTERP_SM_TEAM (WF_DIM == 3 && WF_PREC == 64 && WF_W >= 8)
#endif
/* 2D SM spread output-driven with several points per step (see wf_spread_sm_od2). Measured on
 * the H100 (kernels alone, suite B, 32x32 bins): f64 w11 (B6) 8.98 -> 5.68 ms against the
 * team; f32 w7 2.53 -> 2.60 ms (B2, slower) and 2.30 -> 2.26 (B9), so f32 keeps the team.
 * Other f64 widths are unmeasured (the team's 64-bit CAS loops are what it removes). */
#ifndef WF_SPREAD_SM_OD2
#define WF_SPREAD_SM_OD2 (WF_DIM == 2 && WF_PREC == 64)
#endif
/* 2D f32 SM spread (team) in fixed point: shared-memory integer atomicAdd is one native
 * instruction, the float one a compare-and-swap loop (see wf_tile_add). Each component is
 * split into a high and a low int32 word (wf_fix_add), so no precision is lost. Measured on the
 * H100 (suite B, w6, 32x32 bins): B2 2.05 -> 1.43 ms, B9 1.56 -> 1.04 ms, errors unchanged
 * (5.85e-6). Variants measured and left: one int32 word scaled by the subproblem's sum of
 * strengths, 1.14 ms but 1.4e-6 more error (the scale must cover every point landing on one
 * cell); the same scaled 16x tighter with overflow detection and a redo, 1.17 ms, a
 * data-dependent slow path; int64 words, 2.63 ms (64-bit shared atomics are CAS loops too);
 * the owner-cell path (WF_SPREAD_SM_OD2), 2.45 ms. */
#ifndef WF_SPREAD_SM_FIX
#define WF_SPREAD_SM_FIX (WF_DIM == 2 && WF_PREC == 32 && !WF_SPREAD_SM_OD2)
#endif
#if WF_SPREAD_SM_FIX && !(WF_DIM == 2 && WF_PREC == 32)
#error "WF_SPREAD_SM_FIX is for 2D f32"
#endif
#if WF_SPREAD_SM_OD2 && WF_DIM != 2
#error "WF_SPREAD_SM_OD2 is for WF_DIM == 2"
#endif
/* Register cap for SM spreading (__maxnreg__, so that 256-thread blocks fit 64K / (256 * cap)
 * per SM): only SM spreading measured faster with more resident blocks (H100, suite B: 3D f32
 * w6 6.2 -> 4.7 ms at 40 registers = 6 blocks). A register cap rather than
 * __launch_bounds__(256, minBlocks): the PTX's .minnctapersm is out of range on sm_75 (1024
 * threads per SM) and the two cannot be combined. The values keep sm_90 free of spills
 * (kernels/check.sh); 0 = no cap (then __launch_bounds__(256)). */
#ifndef WF_SPREAD_SM_MAXREG
#if WF_SPREAD_SM_OD && WF_DIM == 3 && WF_PREC == 32
/* w7 spills 8 bytes at 48 since the sinh kernel (one more register: e2b) */
#define WF_SPREAD_SM_MAXREG                                                                        \
    (WF_W <= 6 ? 40 : WF_W == 7 ? 56 : WF_W <= 8 ? 48 : WF_W <= 10 ? 64 : 80)
#elif WF_SPREAD_SM_OD && WF_DIM == 3
#define WF_SPREAD_SM_MAXREG (WF_W <= 8 ? 64 : 128)
#elif WF_SPREAD_SM_OD2
#define WF_SPREAD_SM_MAXREG (WF_PREC == 32 ? 48 : 64)
#elif WF_SPREAD_SM_TEAM && !WF_SPREAD_SM_OD && WF_DIM == 2
/* 2D f32 (fixed point) w8 spills 4 bytes at 48 */
#define WF_SPREAD_SM_MAXREG (WF_PREC == 32 ? (WF_W == 8 ? 56 : 48) : WF_W <= 12 ? 64 : 80)
#else
#define WF_SPREAD_SM_MAXREG 0
#endif
#endif
#if WF_SPREAD_SM_MAXREG > 0
#define WF_SPREAD_SM_BOUNDS __maxnreg__(WF_SPREAD_SM_MAXREG)
#else
#define WF_SPREAD_SM_BOUNDS __launch_bounds__(256)
#endif
#ifndef WF_INTERP_SM_MINB
#define WF_INTERP_SM_MINB 1
#endif
/* Register cap for SM interpolation (0 = none: __launch_bounds__(256, WF_INTERP_SM_MINB)).
 * 3D f32 thread per point at 64 registers (4 blocks of 256 per SM instead of 3): H100, B5 w7
 * 16x16x4 bins, interp 2.81 -> 2.75 ms. */
#ifndef WF_INTERP_SM_MAXREG
#define WF_INTERP_SM_MAXREG                                                                        \
    (WF_DIM == 3 && WF_PREC == 32 && WF_W <= 8 && !WF_INTERP_SM_TEAM ? 64 : 0)
#endif
#if WF_INTERP_SM_MAXREG > 0
#define WF_INTERP_SM_BOUNDS __maxnreg__(WF_INTERP_SM_MAXREG)
#else
#define WF_INTERP_SM_BOUNDS __launch_bounds__(256, WF_INTERP_SM_MINB)
#endif
#ifndef WF_GM_MINB
#define WF_GM_MINB 1
#endif

/* ------------------------------------------------------------------------------------------ */
/* per point                                                                                   */

/* The point set and kernel shape, as the kernels receive them. */
struct wf_pts {
    const T *__restrict__ x;
    const T *__restrict__ y;
    const T *__restrict__ z;
    i64 nf1, nf2, nf3;
    T beta, inv_hw, e2b; /* inv_hw = 2/W, e2b = exp(-2 beta) */
};

/* One coordinate of point j: u in [0, nf) and the footprint's first index a = ceil(u - W/2). */
__device__ __forceinline__ void wf_locate(const T *__restrict__ x, i64 j, i64 nf, double &u,
                                          i64 &a) {
    u = wf_fold((double)__ldg(x + j), nf);
    a = wf_first_index(u, W);
}

/* phi((a + t) - u) for t = 0..W-1; (double)a + t is exact, so this is ABI.md's
 * (T)((double)(i0 + t) - u). */
__device__ __forceinline__ void wf_kernel_values(T (&k)[W], i64 a, double u, const wf_pts &P) {
    const double da = (double)a;
#pragma unroll
    for (int t = 0; t < W; ++t)
        k[t] = wf_phi((T)((da + (double)t) - u), P.inv_hw, P.beta, P.e2b);
}

/* one value, for a run-time t */
__device__ __forceinline__ T wf_kernel_value(i64 a, int t, double u, const wf_pts &P) {
    return wf_phi((T)(((double)a + (double)t) - u), P.inv_hw, P.beta, P.e2b);
}

/* A point's raw data, loaded one loop iteration ahead (software pipelining) so that the
 * latency of these random gathers overlaps the current point's work: on H100 the thread-per-
 * point interpolation waited on them most of its time. */
struct wf_raw {
    i64 j;
    T x, y, z;
    C v; /* strength (spreading) */
};
/* i = sorted position (the coordinates are stored in sorted order, ABI.md), j = the point's
 * input index (strengths). */
__device__ __forceinline__ wf_raw wf_fetch(const wf_pts &P, i64 i, i64 j,
                                           const C *__restrict__ cv) {
    wf_raw r;
    r.j = j;
    r.x = __ldg(P.x + i);
    r.y = WF_DIM >= 2 ? __ldg(P.y + i) : (T)0;
    r.z = WF_DIM >= 3 ? __ldg(P.z + i) : (T)0;
    r.v.x = 0;
    r.v.y = 0;
    if (cv)
        r.v = wf_ldg(cv + j);
    return r;
}
__device__ __forceinline__ wf_raw wf_raw_none() {
    wf_raw r;
    r.j = 0;
    r.x = r.y = r.z = (T)0;
    r.v.x = 0;
    r.v.y = 0;
    return r;
}
/* wf_locate for an already loaded coordinate */
__device__ __forceinline__ void wf_locate_v(T xv, i64 nf, double &u, i64 &a) {
    u = wf_fold((double)xv, nf);
    a = wf_first_index(u, W);
}

/* ------------------------------------------------------------------------------------------ */
/* shared-tile adds                                                                            */

/* Shared-memory float/double atomicAdd compiles to a compare-and-swap loop on sm_90
 * (ATOMS.CAST.SPIN). Measured alternatives — one 64-bit CAS per complex f32 cell, and batched
 * CASes over W cells with a retry pass — were slower for the team and thread variants. */
__device__ __forceinline__ void wf_tile_add(C *p, T re, T im) {
    atomicAdd(&p->x, re);
    atomicAdd(&p->y, im);
}

/* tile[i0 + s*r] += wt[r] * (vr, vi) for r < W */
__device__ __forceinline__ void wf_tile_add_rows(C *tile, int i0, int s, const T (&wt)[W], T vr,
                                                 T vi) {
#pragma unroll
    for (int r = 0; r < W; ++r)
        wf_tile_add(tile + i0 + s * r, wt[r] * vr, wt[r] * vi);
}

#if WF_SPREAD_SM_FIX
/* Fixed-point tile: per cell four int32 words (hi re, hi im, lo re, lo im), 16 bytes (the host's
 * wf_sm_cell_bytes). A point's contribution x (already times the subproblem's scale) adds
 * hi = rint(x) and lo = rint((x - hi) * lo_scale); x - hi is exact in float. The scale maps the
 * subproblem's sum of |re| + |im| to 2^30 and |phi| <= 1, so every hi sum stays below 2^30
 * (2x headroom under 2^31, more than the float sum's rounding); each point adds to a cell once
 * and |lo| <= lo_scale / 2 per add, so lo_scale = 2^30 / 2^ceil(log2(maxsub)) keeps the lo sums
 * below 2^29. The value is (hi + lo / lo_scale) / scale: the integers are exact, so the only
 * rounding is float's in forming x, and one at the flush. */
#define WF_FIX_ONE 1073741824.0f /* 2^30 */
__device__ __forceinline__ void wf_fix_add(int *p, float x, float lo_scale) {
    const int hi = __float2int_rn(x);
    atomicAdd(p, hi);
    atomicAdd(p + 2, __float2int_rn((x - (float)hi) * lo_scale));
}
/* tile[i0 + s*r] += wt[r] * (vr, vi) for r < W */
__device__ __forceinline__ void wf_tile_add_rows_fix(int *tile, int i0, int s, const T (&wt)[W],
                                                     T vr, T vi, float lo_scale) {
#pragma unroll
    for (int r = 0; r < W; ++r) {
        wf_fix_add(tile + 4 * (i0 + s * r), wt[r] * vr, lo_scale);
        wf_fix_add(tile + 4 * (i0 + s * r) + 1, wt[r] * vi, lo_scale);
    }
}
#define WF_TILE_WORDS 2 /* tile entries of C per cell */
#else
#define WF_TILE_WORDS 1
#endif

/* ------------------------------------------------------------------------------------------ */
/* SM subproblems                                                                              */

/* Geometry of one subproblem (uniform over the block). */
struct wf_subprob {
    i64 first;      /* position of its first point in sort_idx */
    int npts;       /* number of points */
    i64 o1, o2, o3; /* tile origin on the (unwrapped) fine grid: b_d*bs_d - PAD; 0 unused */
    i64 g1, g2, g3; /* the same origin wrapped into [0, nf_d) */
};

struct wf_bins {
    i32 bs1, bs2, bs3;
    i64 nb1, nb2;
    const u64 *__restrict__ bin_start;
    const u64 *__restrict__ bin_count;
    const u64 *__restrict__ nsub_start;
    const i32 *__restrict__ subprob_bin;
    i64 maxsub;
};

__device__ __forceinline__ wf_subprob wf_subprob_get(i64 s, const wf_bins &B, const wf_pts &P) {
    wf_subprob sp;
    const i64 b = __ldg(B.subprob_bin + s);
    const i64 k = s - (i64)__ldg(B.nsub_start + b);
    sp.first = (i64)__ldg(B.bin_start + b) + k * B.maxsub;
    const i64 left = (i64)__ldg(B.bin_count + b) - k * B.maxsub;
    sp.npts = (int)(left < B.maxsub ? left : B.maxsub);
    /* 32-bit divisions: bin indices are < 2^31 (subprob_bin is i32); a 64-bit division is a
     * subroutine call whose register saves spill under tight launch bounds */
    const unsigned ub = (unsigned)b, n1 = (unsigned)B.nb1, n2 = (unsigned)B.nb2;
    const unsigned b1 = ub % n1, rest = ub / n1;
    sp.o1 = (i64)b1 * B.bs1 - PAD;
    sp.o2 = WF_DIM >= 2 ? (i64)(rest % n2) * B.bs2 - PAD : 0;
    sp.o3 = WF_DIM >= 3 ? (i64)(rest / n2) * B.bs3 - PAD : 0;
    /* -PAD <= o_d < nf_d (bins cover [0, nf_d) with nb_d = ceil(nf_d / bs_d)) */
    sp.g1 = sp.o1 < 0 ? sp.o1 + P.nf1 : sp.o1;
    sp.g2 = sp.o2 < 0 ? sp.o2 + P.nf2 : sp.o2;
    sp.g3 = sp.o3 < 0 ? sp.o3 + P.nf3 : sp.o3;
    return sp;
}

/* Tile extents: td_d = bs_d + 2*PAD for used dims, 1 otherwise. */
struct wf_tile {
    int td1, td2, td3, n;
};
__device__ __forceinline__ wf_tile wf_tile_of(const wf_bins &B) {
    wf_tile t;
    t.td1 = B.bs1 + 2 * PAD;
    t.td2 = WF_DIM >= 2 ? B.bs2 + 2 * PAD : 1;
    t.td3 = WF_DIM >= 3 ? B.bs3 + 2 * PAD : 1;
    t.n = t.td1 * t.td2 * t.td3;
    return t;
}

/* Fine-grid offset (within one transform) of tile cell e. The tile may be wider than the grid
 * (tiny grids, big bins), hence wf_wrap_up rather than one subtraction. */
__device__ __forceinline__ i64 wf_tile_cell_to_grid(int e, const wf_tile &tl, const wf_subprob &sp,
                                                    const wf_pts &P) {
#if WF_DIM == 1
    (void)tl;
    return wf_wrap_up(sp.g1 + e, P.nf1);
#elif WF_DIM == 2
    /* 32-bit per-dimension indices: nf_d < 2^31 for dim >= 2 */
    const int r = (int)((unsigned)e / (unsigned)tl.td1);
    int g1 = (int)sp.g1 + (e - r * tl.td1), g2 = (int)sp.g2 + r;
    const int n1 = (int)P.nf1, n2 = (int)P.nf2;
    while (g1 >= n1)
        g1 -= n1;
    while (g2 >= n2)
        g2 -= n2;
    return g1 + P.nf1 * g2;
#else
    const int r = (int)((unsigned)e / (unsigned)tl.td1);
    const int e3 = (int)((unsigned)r / (unsigned)tl.td2);
    int g1 = (int)sp.g1 + (e - r * tl.td1), g2 = (int)sp.g2 + (r - e3 * tl.td2);
    int g3 = (int)sp.g3 + e3;
    const int n1 = (int)P.nf1, n2 = (int)P.nf2, n3 = (int)P.nf3;
    while (g1 >= n1)
        g1 -= n1;
    while (g2 >= n2)
        g2 -= n2;
    while (g3 >= n3)
        g3 -= n3;
    return g1 + P.nf1 * (g2 + P.nf2 * (i64)g3);
#endif
}

/* A point's tile coordinates: first footprint cell's index in the tile. The point's bin is
 * the subproblem's bin (the same wf_fold as binning), so 0 <= a_d - o_d <= td_d - W. */

/* ------------------------------------------------------------------------------------------ */
/* teams                                                                                       */

struct wf_lane {
    int q;     /* column in the team, 0..W-1 */
    int g;     /* team in the warp */
    int src0;  /* lane of the team's column 0 */
    bool used; /* g < WF_TEAMS (the last 32 % W lanes of a warp have no team) */
};

__device__ __forceinline__ wf_lane wf_lane_self() {
    wf_lane l;
    const int lane = threadIdx.x & 31;
    l.g = lane / W;
    l.q = lane - l.g * W;
    l.used = l.g < WF_TEAMS;
    l.src0 = l.used ? l.g * W : 0;
    return l;
}

/* team mate r's value of v (all 32 lanes must call) */
__device__ __forceinline__ T wf_team_get(T v, const wf_lane &l, int r) {
    return __shfl_sync(0xffffffffu, v, l.src0 + r);
}

/* sum over the team, valid in its column-0 lane (all 32 lanes must call) */
__device__ __forceinline__ T wf_team_sum(T s, const wf_lane &l) {
#pragma unroll
    for (int o = 1; o < W; o <<= 1) {
        const T y = __shfl_down_sync(0xffffffffu, s, o);
        if ((l.q & (2 * o - 1)) == 0 && l.q + o < W)
            s += y;
    }
    return s;
}

/* A team's point: coordinates and this lane's kernel values (k1 at column q; k2, k3 at index
 * q, which team mates fetch). Inactive lanes get harmless values (a = o, u = 0). */
struct wf_team_pt {
    i64 j;
    i64 a1, a2, a3;
    T k1, k2, k3;
};
__device__ __forceinline__ wf_team_pt wf_team_point(bool active, i64 i, i64 j, i64 o1, i64 o2,
                                                    i64 o3, const wf_lane &l, const wf_pts &P) {
    wf_team_pt t;
    double u1 = 0.0;
    t.j = j;
    t.a1 = o1;
    t.a2 = o2;
    t.a3 = o3;
    if (active)
        wf_locate(P.x, i, P.nf1, u1, t.a1);
    t.k1 = wf_kernel_value(t.a1, l.q, u1, P);
    t.k2 = t.k3 = (T)0;
#if WF_DIM >= 2
    double u2 = 0.0;
    if (active)
        wf_locate(P.y, i, P.nf2, u2, t.a2);
    t.k2 = wf_kernel_value(t.a2, l.q, u2, P);
#endif
#if WF_DIM == 3
    double u3 = 0.0;
    if (active)
        wf_locate(P.z, i, P.nf3, u3, t.a3);
    t.k3 = wf_kernel_value(t.a3, l.q, u3, P);
#endif
    return t;
}

/* the team's W values of v (team mate r's in row[r]; all 32 lanes must call) */
__device__ __forceinline__ void wf_team_row(T (&row)[W], T v, const wf_lane &l) {
#pragma unroll
    for (int r = 0; r < W; ++r)
        row[r] = wf_team_get(v, l, r);
}

/* grid-stride loop over batches of WF_TEAMS points per warp (warp-uniform: shuffles need every
 * lane) */
#define WF_GM_TEAM_LOOP(base, M)                                                                   \
    for (i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * WF_TEAMS; base < (M);    \
         base += (((i64)gridDim.x * blockDim.x) >> 5) * WF_TEAMS)

/* GM teams: the point of this lane's team in the warp's batch starting at sorted position
 * base, its grid column for lane q, and the team's dim-2 kernel values */
struct wf_gm_team {
    bool active;
    i64 j, col;
    wf_team_pt pt;
    T k2[W];
};
__device__ __forceinline__ wf_gm_team wf_gm_team_at(i64 base, i64 M,
                                                    const i64 *__restrict__ sort_idx,
                                                    const wf_lane &l, const wf_pts &P) {
    wf_gm_team g;
    const i64 i = base + l.g;
    g.active = l.used && i < M;
    g.j = g.active ? (sort_idx ? __ldg(sort_idx + i) : i) : 0;
    g.pt = wf_team_point(g.active, i, g.j, 0, 0, 0, l, P);
    g.col = wf_wrap1(g.pt.a1 + l.q, P.nf1);
#if WF_DIM >= 2
    wf_team_row(g.k2, g.pt.k2, l);
#endif
    return g;
}

/* ------------------------------------------------------------------------------------------ */
/* GM spread                                                                                   */

/* thread per point: global atomics over the footprint */
__device__ __forceinline__ void wf_spread_gm_thread(i64 M, const wf_pts &P, const C *__restrict__ c,
                                                    i64 ntransf, const i64 *__restrict__ sort_idx,
                                                    C *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    WF_GRID_STRIDE(i, M) {
        const i64 j = sort_idx ? __ldg(sort_idx + i) : i;
        double u1;
        i64 a1;
        wf_locate(P.x, i, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
#if WF_DIM == 1
        for (i64 t = 0; t < ntransf; ++t) {
            const C v = wf_ldg(c + t * M + j);
            C *f = fw + t * nfprod;
#pragma unroll
            for (int q = 0; q < W; ++q)
                wf_atomic_add(f + wf_wrap1(a1 + q, P.nf1), k1[q] * v.x, k1[q] * v.y);
        }
#else
        int col[W]; /* wrapped dim-1 indices (nf1 < 2^31 for dim >= 2) */
#pragma unroll
        for (int q = 0; q < W; ++q)
            col[q] = (int)wf_wrap1(a1 + q, P.nf1);
        double u2;
        i64 a2;
        wf_locate(P.y, i, P.nf2, u2, a2);
#if WF_DIM == 3
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate(P.z, i, P.nf3, u3, a3);
#endif
        for (i64 t = 0; t < ntransf; ++t) {
            const C v = wf_ldg(c + t * M + j);
            C *f = fw + t * nfprod;
#if WF_DIM == 2
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_kernel_value(a2, r, u2, P);
                C *row = f + P.nf1 * wf_wrap1(a2 + r, P.nf2);
#pragma unroll
                for (int q = 0; q < W; ++q)
                    wf_atomic_add(row + col[q], k1[q] * kr * v.x, k1[q] * kr * v.y);
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_kernel_value(a3, p, u3, P);
                C *plane = f + P.nf1 * P.nf2 * wf_wrap1(a3 + p, P.nf3);
#pragma unroll 1
                for (int r = 0; r < W; ++r) {
                    const T kr = kp * wf_pick(k2, r);
                    C *row = plane + P.nf1 * wf_wrap1(a2 + r, P.nf2);
#pragma unroll
                    for (int q = 0; q < W; ++q)
                        wf_atomic_add(row + col[q], k1[q] * kr * v.x, k1[q] * kr * v.y);
                }
            }
#endif
        }
#endif
    }
}

/* team per point: each team row is W consecutive cells (1-2 cache lines per atomic) */
__device__ __forceinline__ void wf_spread_gm_team(i64 M, const wf_pts &P, const C *__restrict__ c,
                                                  i64 ntransf, const i64 *__restrict__ sort_idx,
                                                  C *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const wf_lane l = wf_lane_self();
    WF_GM_TEAM_LOOP(base, M) {
        const wf_gm_team g = wf_gm_team_at(base, M, sort_idx, l, P);
        for (i64 t = 0; t < ntransf; ++t) {
            C v;
            v.x = 0;
            v.y = 0;
            if (g.active)
                v = wf_ldg(c + t * M + g.j);
            const T vr = g.pt.k1 * v.x, vi = g.pt.k1 * v.y;
            C *f = fw + t * nfprod + g.col;
#if WF_DIM == 1
            if (g.active)
                wf_atomic_add(f, vr, vi);
#elif WF_DIM == 2
            if (g.active) {
#pragma unroll
                for (int r = 0; r < W; ++r)
                    wf_atomic_add(f + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2), g.k2[r] * vr,
                                  g.k2[r] * vi);
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_team_get(g.pt.k3, l, p);
                if (g.active) {
                    C *plane = f + P.nf1 * P.nf2 * wf_wrap1(g.pt.a3 + p, P.nf3);
                    const T pr = kp * vr, pim = kp * vi;
#pragma unroll
                    for (int r = 0; r < W; ++r)
                        wf_atomic_add(plane + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2), g.k2[r] * pr,
                                      g.k2[r] * pim);
                }
            }
#endif
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* GM interp                                                                                   */

/* thread per point: register sums, one write per point and transform */
__device__ __forceinline__ void wf_interp_gm_thread(i64 M, const wf_pts &P, C *__restrict__ c,
                                                    i64 ntransf, const i64 *__restrict__ sort_idx,
                                                    const C *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    wf_raw nxt =
        i < M ? wf_fetch(P, i, sort_idx ? __ldg(sort_idx + i) : i, nullptr) : wf_raw_none();
    for (; i < M; i += stride) {
        const wf_raw pt = nxt;
        if (i + stride < M)
            nxt = wf_fetch(P, i + stride, sort_idx ? __ldg(sort_idx + i + stride) : i + stride,
                           nullptr);
        const i64 j = pt.j;
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
#if WF_DIM == 1
        for (i64 t = 0; t < ntransf; ++t) {
            const C *f = fw + t * nfprod;
            C acc;
            acc.x = 0;
            acc.y = 0;
#pragma unroll
            for (int q = 0; q < W; ++q) {
                const C v = wf_ldg(f + wf_wrap1(a1 + q, P.nf1));
                acc.x += k1[q] * v.x;
                acc.y += k1[q] * v.y;
            }
            c[t * M + j] = acc;
        }
#else
        int col[W];
#pragma unroll
        for (int q = 0; q < W; ++q)
            col[q] = (int)wf_wrap1(a1 + q, P.nf1);
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
#if WF_DIM == 3
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate_v(pt.z, P.nf3, u3, a3);
#endif
        for (i64 t = 0; t < ntransf; ++t) {
            const C *f = fw + t * nfprod;
            C acc;
            acc.x = 0;
            acc.y = 0;
#if WF_DIM == 2
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_kernel_value(a2, r, u2, P);
                const C *row = f + P.nf1 * wf_wrap1(a2 + r, P.nf2);
                C s;
                s.x = 0;
                s.y = 0;
#pragma unroll
                for (int q = 0; q < W; ++q) {
                    const C v = wf_ldg(row + col[q]);
                    s.x += k1[q] * v.x;
                    s.y += k1[q] * v.y;
                }
                acc.x += kr * s.x;
                acc.y += kr * s.y;
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_kernel_value(a3, p, u3, P);
                const C *plane = f + P.nf1 * P.nf2 * wf_wrap1(a3 + p, P.nf3);
                C pacc;
                pacc.x = 0;
                pacc.y = 0;
#pragma unroll 1
                for (int r = 0; r < W; ++r) {
                    const T kr = wf_pick(k2, r);
                    const C *row = plane + P.nf1 * wf_wrap1(a2 + r, P.nf2);
                    C s;
                    s.x = 0;
                    s.y = 0;
#pragma unroll
                    for (int q = 0; q < W; ++q) {
                        const C v = wf_ldg(row + col[q]);
                        s.x += k1[q] * v.x;
                        s.y += k1[q] * v.y;
                    }
                    pacc.x += kr * s.x;
                    pacc.y += kr * s.y;
                }
                acc.x += kp * pacc.x;
                acc.y += kp * pacc.y;
            }
#endif
            c[t * M + j] = acc;
        }
#endif
    }
}

/* team per point: lane q sums its column, the team adds the columns up */
__device__ __forceinline__ void wf_interp_gm_team(i64 M, const wf_pts &P, C *__restrict__ c,
                                                  i64 ntransf, const i64 *__restrict__ sort_idx,
                                                  const C *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const wf_lane l = wf_lane_self();
    WF_GM_TEAM_LOOP(base, M) {
        const wf_gm_team g = wf_gm_team_at(base, M, sort_idx, l, P);
        for (i64 t = 0; t < ntransf; ++t) {
            const C *f = fw + t * nfprod + g.col;
            C acc;
            acc.x = 0;
            acc.y = 0;
#if WF_DIM == 1
            if (g.active)
                acc = wf_ldg(f);
#elif WF_DIM == 2
            if (g.active) {
#pragma unroll
                for (int r = 0; r < W; ++r) {
                    const C v = wf_ldg(f + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2));
                    acc.x += g.k2[r] * v.x;
                    acc.y += g.k2[r] * v.y;
                }
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_team_get(g.pt.k3, l, p);
                if (g.active) {
                    const C *plane = f + P.nf1 * P.nf2 * wf_wrap1(g.pt.a3 + p, P.nf3);
                    C pacc;
                    pacc.x = 0;
                    pacc.y = 0;
#pragma unroll
                    for (int r = 0; r < W; ++r) {
                        const C v = wf_ldg(plane + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2));
                        pacc.x += g.k2[r] * v.x;
                        pacc.y += g.k2[r] * v.y;
                    }
                    acc.x += kp * pacc.x;
                    acc.y += kp * pacc.y;
                }
            }
#endif
            acc.x = wf_team_sum(g.pt.k1 * acc.x, l);
            acc.y = wf_team_sum(g.pt.k1 * acc.y, l);
            if (g.active && l.q == 0)
                c[t * M + g.j] = acc;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* SM spread: the points of one subproblem into the zeroed tile                                */

__device__ __forceinline__ void wf_spread_sm_thread(C *tile, const wf_tile &tl,
                                                    const wf_subprob &sp, const wf_pts &P,
                                                    const C *__restrict__ cv,
                                                    const i64 *__restrict__ sort_idx) {
    const int npts = sp.npts, bd = blockDim.x;
    const i64 first = sp.first;
    int q = threadIdx.x;
    wf_raw nxt = q < npts ? wf_fetch(P, first + q, __ldg(sort_idx + first + q), cv) : wf_raw_none();
    for (; q < npts; q += bd) {
        const wf_raw pt = nxt;
        if (q + bd < npts)
            nxt = wf_fetch(P, first + q + bd, __ldg(sort_idx + first + q + bd), cv);
        const C v = pt.v;
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
        const int l1 = (int)(a1 - sp.o1);
#if WF_DIM == 1
        wf_tile_add_rows(tile, l1, 1, k1, v.x, v.y);
#else
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
        const int l2 = (int)(a2 - sp.o2);
#if WF_DIM == 2
        const int base = l1 + tl.td1 * l2;
#pragma unroll 1
        for (int r = 0; r < W; ++r) {
            const T kr = wf_kernel_value(a2, r, u2, P);
            wf_tile_add_rows(tile, base + tl.td1 * r, 1, k1, kr * v.x, kr * v.y);
        }
#else
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate_v(pt.z, P.nf3, u3, a3);
        const int l3 = (int)(a3 - sp.o3);
        const int plane_sz = tl.td1 * tl.td2;
        const int base = l1 + tl.td1 * l2 + plane_sz * l3;
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_kernel_value(a3, p, u3, P);
            const T vr = kp * v.x, vi = kp * v.y;
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_pick(k2, r);
                wf_tile_add_rows(tile, base + plane_sz * p + tl.td1 * r, 1, k1, kr * vr, kr * vi);
            }
        }
#endif
#endif
    }
}

/* FIX: add in fixed point (wf_tile_add_rows_fix), strengths times scale. */
template <bool FIX = false>
__device__ __forceinline__ void wf_spread_sm_team(C *tile, const wf_tile &tl, const wf_subprob &sp,
                                                  const wf_pts &P, const C *__restrict__ cv,
                                                  const i64 *__restrict__ sort_idx, T scale = (T)1,
                                                  float lo_scale = 0.0f) {
    const wf_lane l = wf_lane_self();
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    /* warp-uniform loop: every lane runs every iteration (shuffles need the whole warp) */
    for (int base = warp * WF_TEAMS; base < sp.npts; base += nwarps * WF_TEAMS) {
        const int pi = base + l.g;
        const bool active = l.used && pi < sp.npts;
        const i64 j = active ? __ldg(sort_idx + sp.first + pi) : 0;
        C v;
        v.x = 0;
        v.y = 0;
        if (active)
            v = wf_ldg(cv + j);
        const wf_team_pt pt = wf_team_point(active, sp.first + pi, j, sp.o1, sp.o2, sp.o3, l, P);
        const T vr = pt.k1 * (FIX ? v.x * scale : v.x), vi = pt.k1 * (FIX ? v.y * scale : v.y);
        const int i0 = (int)(pt.a1 - sp.o1) + l.q;
#if WF_DIM == 1
        if (active)
            wf_tile_add(tile + i0, vr, vi);
#else
        T k2[W];
        wf_team_row(k2, pt.k2, l);
        const int i2 = i0 + tl.td1 * (int)(pt.a2 - sp.o2);
#if WF_DIM == 2
        if (active) {
#if WF_SPREAD_SM_FIX
            if (FIX)
                wf_tile_add_rows_fix(reinterpret_cast<int *>(tile), i2, tl.td1, k2, vr, vi,
                                     lo_scale);
            else
#endif
                wf_tile_add_rows(tile, i2, tl.td1, k2, vr, vi);
        }
#else
        const int plane_sz = tl.td1 * tl.td2;
        const int i3 = i2 + plane_sz * (int)(pt.a3 - sp.o3);
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_team_get(pt.k3, l, p);
            if (active)
                wf_tile_add_rows(tile, i3 + plane_sz * p, tl.td1, k2, kp * vr, kp * vi);
        }
#endif
#endif
    }
}

/* Output-driven (cell per thread): the block takes one point at a time, each thread one or a
 * few cells of its W^d footprint, and adds with a plain load/store — no atomics. Barriers keep
 * two points from meeting on a cell: consecutive points of a quad whose footprints are
 * disjoint share a step, and a barrier closes each step (~2 points per barrier for uniform
 * points in 16x16x2 bins). Per batch of WF_OD_NB points the kernel values (dim 1
 * premultiplied by the strength), tile offsets and steps go to static shared memory first. Thread
 * tid owns footprint cells e = tid + k*blockDim.x, k < WF_OD_PASSES; their (q, r, p) and tile
 * offsets are computed once. Needs blockDim.x >= WF_OD_MIN_BLOCK (ABI: 256); a smaller block would
 * leave cells out, so the kernel then traps instead. */
#define WF_CELLS        (WF_DIM == 1 ? W : WF_DIM == 2 ? W * W : W * W * W)
#define WF_OD_MIN_BLOCK 256
#define WF_OD_PASSES    ((WF_CELLS + WF_OD_MIN_BLOCK - 1) / WF_OD_MIN_BLOCK)
#ifndef WF_OD_NB
#define WF_OD_NB (WF_PREC == 32 ? 32 : 16) /* <= 32 (one warp prepares a batch), multiple of 4 */
#endif

__device__ __forceinline__ void wf_spread_sm_od(C *tile, const wf_tile &tl, const wf_subprob &sp,
                                                const wf_pts &P, const C *__restrict__ cv,
                                                const i64 *__restrict__ sort_idx) {
    __shared__ C s_k1c[WF_OD_NB][W]; /* phi_1(q) * c */
#if WF_DIM >= 2
    __shared__ T s_k2[WF_OD_NB][W];
#endif
#if WF_DIM == 3
    __shared__ T s_k3[WF_OD_NB][W];
#endif
    __shared__ int s_base[WF_OD_NB];            /* tile index of the footprint's first cell */
    __shared__ unsigned s_qstart[WF_OD_NB / 4]; /* per quad: bit m = member m opens a step */
    const int plane_sz = tl.td1 * tl.td2;

    /* this thread's cells */
    int off[WF_OD_PASSES], qq[WF_OD_PASSES], rr[WF_OD_PASSES], pp[WF_OD_PASSES];
#pragma unroll
    for (int k = 0; k < WF_OD_PASSES; ++k) {
        const int e = threadIdx.x + k * blockDim.x;
        qq[k] = e % W;
        rr[k] = (e / W) % W;
        pp[k] = e / (W * W);
        off[k] = qq[k] + tl.td1 * (WF_DIM >= 2 ? rr[k] : 0) + plane_sz * (WF_DIM == 3 ? pp[k] : 0);
    }
    (void)rr;
    (void)pp;

    for (int b0 = 0; b0 < sp.npts; b0 += WF_OD_NB) {
        const int nb = min(WF_OD_NB, sp.npts - b0);
        if (threadIdx.x < 32) {
            /* warp 0, lane b = point b0 + b: values straight to shared memory (few registers) */
            const int b = threadIdx.x;
            int l1 = 0, l2 = 0, l3 = 0;
            if (b < nb) {
                const i64 i = sp.first + b0 + b;
                const i64 j = __ldg(sort_idx + i);
                const C v = wf_ldg(cv + j);
                double u;
                i64 a;
                wf_locate(P.x, i, P.nf1, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q) {
                    const T k = wf_kernel_value(a, q, u, P);
                    C kc;
                    kc.x = k * v.x;
                    kc.y = k * v.y;
                    s_k1c[b][q] = kc;
                }
                l1 = (int)(a - sp.o1);
#if WF_DIM >= 2
                wf_locate(P.y, i, P.nf2, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q)
                    s_k2[b][q] = wf_kernel_value(a, q, u, P);
                l2 = (int)(a - sp.o2);
#endif
#if WF_DIM == 3
                wf_locate(P.z, i, P.nf3, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q)
                    s_k3[b][q] = wf_kernel_value(a, q, u, P);
                l3 = (int)(a - sp.o3);
#endif
                s_base[b] = l1 + tl.td1 * l2 + plane_sz * l3;
            }
            /* Steps: the points of a quad (4 consecutive points) whose footprints are disjoint
             * share one barrier. Every lane of a quad gets the quad's coordinates by shuffles
             * and runs the same greedy split. */
            const int q0 = b & ~3;
            int x4[4], y4[4], z4[4];
#pragma unroll
            for (int m = 0; m < 4; ++m) {
                x4[m] = __shfl_sync(0xffffffffu, l1, q0 + m);
                y4[m] = __shfl_sync(0xffffffffu, l2, q0 + m);
                z4[m] = __shfl_sync(0xffffffffu, l3, q0 + m);
            }
            unsigned starts = 1u;
            int open = 0; /* first member of the current step */
#pragma unroll
            for (int m = 1; m < 4; ++m) {
                bool clash = false;
#pragma unroll
                for (int o = 0; o < m; ++o)
                    clash |= o >= open && abs(x4[o] - x4[m]) < W && abs(y4[o] - y4[m]) < W &&
                             abs(z4[o] - z4[m]) < W;
                if (clash) {
                    starts |= 1u << m;
                    open = m;
                }
            }
            if ((b & 3) == 0 && b < nb)
                s_qstart[b >> 2] = starts;
        }
        __syncthreads();
        for (int b = 0; b < nb; ++b) {
            if ((b & 3) != 0 && ((s_qstart[b >> 2] >> (b & 3)) & 1u))
                __syncthreads(); /* b overlaps an earlier point of its step */
            const int base = s_base[b];
#pragma unroll
            for (int k = 0; k < WF_OD_PASSES; ++k) {
                if (threadIdx.x + k * blockDim.x < WF_CELLS) {
                    const C kc = s_k1c[b][qq[k]];
                    T kk = (T)1;
#if WF_DIM >= 2
                    kk = s_k2[b][rr[k]];
#endif
#if WF_DIM == 3
                    kk *= s_k3[b][pp[k]];
#endif
                    C *cell = tile + base + off[k];
                    C old = *cell;
                    old.x += kc.x * kk;
                    old.y += kc.y * kk;
                    *cell = old;
                }
            }
            if ((b & 3) == 3 || b == nb - 1)
                __syncthreads(); /* end of the quad */
        }
    }
}

/* 2D output-driven, several points per step: W^2 cells per point leave most of a 256-thread
 * block idle, so the block is cut into WF_OD2_G slots of W^2 threads (thread tid: slot
 * tid / W^2, footprint cell tid % W^2, 5 slots at w7) and a step adds up to WF_OD2_G points
 * whose footprints are pairwise disjoint, one per slot, with plain loads/stores. Per batch of
 * WF_OD2_NB points the block first computes the kernel values in teams of W lanes (lane q: the
 * dim-1 value of column q times the strength, the dim-2 value of row q) into static shared
 * memory; then one lane per group of WF_OD2_G consecutive points splits the group greedily
 * into steps (a point opens a new step when its footprint meets one of the open step's). A
 * barrier closes each step. Needs blockDim.x >= WF_OD_MIN_BLOCK, like the 3D path. */
#define WF_OD2_G_RAW (WF_OD_MIN_BLOCK / (W * W))
#define WF_OD2_G     (WF_OD2_G_RAW > 8 ? 8 : WF_OD2_G_RAW)
#define WF_OD2_NBT   ((WF_OD_MIN_BLOCK / W) < 32 ? (WF_OD_MIN_BLOCK / W) : 32)
#define WF_OD2_NB    (WF_OD2_G * (WF_OD2_NBT / WF_OD2_G))
#define WF_OD2_NG    (WF_OD2_NB / WF_OD2_G)

__device__ __forceinline__ void wf_spread_sm_od2(C *tile, const wf_tile &tl, const wf_subprob &sp,
                                                 const wf_pts &P, const C *__restrict__ cv,
                                                 const i64 *__restrict__ sort_idx) {
    __shared__ C s_k1c[WF_OD2_NB][W]; /* phi_1(q) * c */
    __shared__ T s_k2[WF_OD2_NB][W];
    __shared__ int s_l1[WF_OD2_NB], s_l2[WF_OD2_NB]; /* footprint origin in the tile */
    __shared__ unsigned s_gstart[WF_OD2_NG];         /* per group: bit m = member m opens a step */
    const int tid = threadIdx.x;
    const int slot = tid / (W * W);
    const int e = tid - slot * (W * W);
    const int qq = e % W;
    const int off = qq + tl.td1 * (e / W);
    const bool has_cell = slot < WF_OD2_G;
    const int pb = tid / W, pq = tid - pb * W; /* team of the preparation */

    for (int b0 = 0; b0 < sp.npts; b0 += WF_OD2_NB) {
        const int nb = min(WF_OD2_NB, sp.npts - b0);
        if (pb < nb) {
            const i64 i = sp.first + b0 + pb;
            const i64 j = __ldg(sort_idx + i);
            const C v = wf_ldg(cv + j);
            double u;
            i64 a;
            wf_locate(P.x, i, P.nf1, u, a);
            const T k = wf_kernel_value(a, pq, u, P);
            C kc;
            kc.x = k * v.x;
            kc.y = k * v.y;
            s_k1c[pb][pq] = kc;
            const int l1 = (int)(a - sp.o1);
            wf_locate(P.y, i, P.nf2, u, a);
            s_k2[pb][pq] = wf_kernel_value(a, pq, u, P);
            if (pq == 0) {
                s_l1[pb] = l1;
                s_l2[pb] = (int)(a - sp.o2);
            }
        }
        __syncthreads();
        if (tid < WF_OD2_NG) {
            const int g0 = tid * WF_OD2_G;
            const int gn = min(WF_OD2_G, nb - g0);
            int gx[WF_OD2_G], gy[WF_OD2_G];
#pragma unroll
            for (int m = 0; m < WF_OD2_G; ++m) {
                gx[m] = m < gn ? s_l1[g0 + m] : 0;
                gy[m] = m < gn ? s_l2[g0 + m] : 0;
            }
            unsigned starts = 1u;
            int open = 0;
#pragma unroll
            for (int m = 1; m < WF_OD2_G; ++m) {
                bool clash = false;
#pragma unroll
                for (int o = 0; o < m; ++o)
                    clash |= o >= open && abs(gx[o] - gx[m]) < W && abs(gy[o] - gy[m]) < W;
                if (clash && m < gn) {
                    starts |= 1u << m;
                    open = m;
                }
            }
            s_gstart[tid] = starts;
        }
        __syncthreads();
        const int ng = (nb + WF_OD2_G - 1) / WF_OD2_G;
        for (int gi = 0; gi < ng; ++gi) {
            const unsigned starts = s_gstart[gi];
            const int gbase = gi * WF_OD2_G;
            const int gn = min(WF_OD2_G, nb - gbase);
            int st = 0;
            while (st < gn) {
                const unsigned hi = starts & ~((2u << st) - 1u);
                const int en = hi ? __ffs(hi) - 1 : gn;
                const int m = st + slot;
                if (has_cell && m < en) {
                    const int pi = gbase + m;
                    const C kc = s_k1c[pi][qq];
                    const T kk = s_k2[pi][e / W];
                    C *cell = tile + s_l1[pi] + tl.td1 * s_l2[pi] + off;
                    C old = *cell;
                    old.x += kc.x * kk;
                    old.y += kc.y * kk;
                    *cell = old;
                }
                __syncthreads();
                st = en;
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* SM interp: the points of one subproblem from the loaded tile                                */

__device__ __forceinline__ void wf_interp_sm_thread(const C *tile, const wf_tile &tl,
                                                    const wf_subprob &sp, const wf_pts &P,
                                                    C *__restrict__ cv,
                                                    const i64 *__restrict__ sort_idx) {
    const int npts = sp.npts, bd = blockDim.x;
    const i64 first = sp.first;
    int q = threadIdx.x;
    wf_raw nxt =
        q < npts ? wf_fetch(P, first + q, __ldg(sort_idx + first + q), nullptr) : wf_raw_none();
    for (; q < npts; q += bd) {
        const wf_raw pt = nxt;
        if (q + bd < npts)
            nxt = wf_fetch(P, first + q + bd, __ldg(sort_idx + first + q + bd), nullptr);
        const i64 j = pt.j;
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
        const int l1 = (int)(a1 - sp.o1);
        C acc;
        acc.x = 0;
        acc.y = 0;
#if WF_DIM == 1
#pragma unroll
        for (int t = 0; t < W; ++t) {
            const C v = tile[l1 + t];
            acc.x += k1[t] * v.x;
            acc.y += k1[t] * v.y;
        }
#else
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
        const int l2 = (int)(a2 - sp.o2);
#if WF_DIM == 2
        const int base = l1 + tl.td1 * l2;
#pragma unroll 1
        for (int r = 0; r < W; ++r) {
            const T kr = wf_kernel_value(a2, r, u2, P);
            const C *row = tile + base + tl.td1 * r;
            C s;
            s.x = 0;
            s.y = 0;
#pragma unroll
            for (int t = 0; t < W; ++t) {
                const C v = row[t];
                s.x += k1[t] * v.x;
                s.y += k1[t] * v.y;
            }
            acc.x += kr * s.x;
            acc.y += kr * s.y;
        }
#else
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate_v(pt.z, P.nf3, u3, a3);
        const int l3 = (int)(a3 - sp.o3);
        const int plane_sz = tl.td1 * tl.td2;
        const int base = l1 + tl.td1 * l2 + plane_sz * l3;
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_kernel_value(a3, p, u3, P);
            C pacc;
            pacc.x = 0;
            pacc.y = 0;
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_pick(k2, r);
                const C *row = tile + base + plane_sz * p + tl.td1 * r;
                C s;
                s.x = 0;
                s.y = 0;
#pragma unroll
                for (int t = 0; t < W; ++t) {
                    const C v = row[t];
                    s.x += k1[t] * v.x;
                    s.y += k1[t] * v.y;
                }
                pacc.x += kr * s.x;
                pacc.y += kr * s.y;
            }
            acc.x += kp * pacc.x;
            acc.y += kp * pacc.y;
        }
#endif
#endif
        cv[j] = acc;
    }
}

__device__ __forceinline__ void wf_interp_sm_team(const C *tile, const wf_tile &tl,
                                                  const wf_subprob &sp, const wf_pts &P,
                                                  C *__restrict__ cv,
                                                  const i64 *__restrict__ sort_idx) {
    const wf_lane l = wf_lane_self();
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int base = warp * WF_TEAMS; base < sp.npts; base += nwarps * WF_TEAMS) {
        const int pi = base + l.g;
        const bool active = l.used && pi < sp.npts;
        const i64 j = active ? __ldg(sort_idx + sp.first + pi) : 0;
        const wf_team_pt pt = wf_team_point(active, sp.first + pi, j, sp.o1, sp.o2, sp.o3, l, P);
        const int i0 = (int)(pt.a1 - sp.o1) + l.q;
        C acc;
        acc.x = 0;
        acc.y = 0;
#if WF_DIM == 1
        if (active)
            acc = tile[i0];
#else
        T k2[W];
        wf_team_row(k2, pt.k2, l);
        const int i2 = i0 + tl.td1 * (int)(pt.a2 - sp.o2);
#if WF_DIM == 2
        if (active) {
#pragma unroll
            for (int r = 0; r < W; ++r) {
                const C v = tile[i2 + tl.td1 * r];
                acc.x += k2[r] * v.x;
                acc.y += k2[r] * v.y;
            }
        }
#else
        const int plane_sz = tl.td1 * tl.td2;
        const int i3 = i2 + plane_sz * (int)(pt.a3 - sp.o3);
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_team_get(pt.k3, l, p);
            if (active) {
                C pacc;
                pacc.x = 0;
                pacc.y = 0;
#pragma unroll
                for (int r = 0; r < W; ++r) {
                    const C v = tile[i3 + plane_sz * p + tl.td1 * r];
                    pacc.x += k2[r] * v.x;
                    pacc.y += k2[r] * v.y;
                }
                acc.x += kp * pacc.x;
                acc.y += kp * pacc.y;
            }
        }
#endif
#endif
        acc.x = wf_team_sum(pt.k1 * acc.x, l);
        acc.y = wf_team_sum(pt.k1 * acc.y, l);
        if (active && l.q == 0)
            cv[j] = acc;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* entry points                                                                                */

#define WF_PTS_INIT                                                                                \
    wf_pts P;                                                                                      \
    P.x = x;                                                                                       \
    P.y = y;                                                                                       \
    P.z = z;                                                                                       \
    P.nf1 = nf1;                                                                                   \
    P.nf2 = nf2;                                                                                   \
    P.nf3 = nf3;                                                                                   \
    P.beta = beta;                                                                                 \
    P.e2b = (T)exp(-2.0 * (double)beta);                                                           \
    P.inv_hw = (T)(2.0 / W)

#define WF_BINS_INIT                                                                               \
    wf_bins B;                                                                                     \
    B.bs1 = bs1;                                                                                   \
    B.bs2 = bs2;                                                                                   \
    B.bs3 = bs3;                                                                                   \
    B.nb1 = nb1;                                                                                   \
    B.nb2 = nb2;                                                                                   \
    B.bin_start = bin_start;                                                                       \
    B.bin_count = bin_count;                                                                       \
    B.nsub_start = nsub_start;                                                                     \
    B.subprob_bin = subprob_bin;                                                                   \
    B.maxsub = maxsub;                                                                             \
    (void)nb3

extern "C" __global__ void __launch_bounds__(256, WF_GM_MINB)
    WF_SINAME(spread_gm)(i64 M, const T *__restrict__ x, const T *__restrict__ y,
                         const T *__restrict__ z, const C *__restrict__ c, i64 nf1, i64 nf2,
                         i64 nf3, i64 ntransf, const i64 *__restrict__ sort_idx, T beta,
                         C *__restrict__ fw) {
    WF_PTS_INIT;
#if WF_SPREAD_GM_TEAM
    wf_spread_gm_team(M, P, c, ntransf, sort_idx, fw);
#else
    wf_spread_gm_thread(M, P, c, ntransf, sort_idx, fw);
#endif
}

extern "C" __global__ void __launch_bounds__(256, WF_GM_MINB)
    WF_SINAME(interp_gm)(i64 M, const T *__restrict__ x, const T *__restrict__ y,
                         const T *__restrict__ z, C *__restrict__ c, i64 nf1, i64 nf2, i64 nf3,
                         i64 ntransf, const i64 *__restrict__ sort_idx, T beta,
                         const C *__restrict__ fw) {
    WF_PTS_INIT;
#if WF_INTERP_GM_TEAM
    wf_interp_gm_team(M, P, c, ntransf, sort_idx, fw);
#else
    wf_interp_gm_thread(M, P, c, ntransf, sort_idx, fw);
#endif
}

/* The tile into fw (one transform) with global atomics; zeros skipped: adding 0 changes
 * nothing. */
__device__ __forceinline__ void wf_tile_flush(const C *tile, C *f, const wf_tile &tl,
                                              const wf_subprob &sp, const wf_pts &P) {
    for (int e = threadIdx.x; e < tl.n; e += blockDim.x) {
        const C v = tile[e];
        if (v.x != (T)0 || v.y != (T)0)
            wf_atomic_add(f + wf_tile_cell_to_grid(e, tl, sp, P), v.x, v.y);
    }
}

#if WF_SPREAD_SM_FIX
/* The same for the fixed-point tile: value = (hi + lo / lo_scale) * inv_scale (wf_fix_add). */
__device__ __forceinline__ void wf_tile_flush_fix(const C *tile, C *f, const wf_tile &tl,
                                                  const wf_subprob &sp, const wf_pts &P,
                                                  float inv_scale, float lo_scale) {
    const int4 *ft = reinterpret_cast<const int4 *>(tile);
    const float il = inv_scale / lo_scale;
    for (int e = threadIdx.x; e < tl.n; e += blockDim.x) {
        const int4 q = ft[e];
        if (q.x != 0 || q.y != 0 || q.z != 0 || q.w != 0)
            wf_atomic_add(f + wf_tile_cell_to_grid(e, tl, sp, P),
                          (float)q.x * inv_scale + (float)q.z * il,
                          (float)q.y * inv_scale + (float)q.w * il);
    }
}

/* Sum over the subproblem's points of |re| + |im| of their strengths cv, for every thread of
 * the block; *acc is block shared and zeroed before the barrier that precedes this call. */
__device__ __forceinline__ float wf_strength_sum(const wf_subprob &sp, const C *__restrict__ cv,
                                                 const i64 *__restrict__ sort_idx, float *acc) {
    float part = 0.0f;
    for (int pi = threadIdx.x; pi < sp.npts; pi += blockDim.x) {
        const C v = wf_ldg(cv + __ldg(sort_idx + sp.first + pi));
        part += fabsf(v.x) + fabsf(v.y);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        part += __shfl_xor_sync(0xffffffffu, part, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(acc, part);
    __syncthreads();
    return *acc;
}
#endif

/* SM spread: per subproblem and transform, zero the tile, add the points, flush the tile into
 * fw (wf_tile_flush). */
extern "C" __global__ void WF_SPREAD_SM_BOUNDS WF_SINAME(spread_sm)(
    i64 M, const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ z,
    const C *__restrict__ c, i64 nf1, i64 nf2, i64 nf3, i64 ntransf,
    const i64 *__restrict__ sort_idx, T beta, i32 bs1, i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3,
    const u64 *__restrict__ bin_start, const u64 *__restrict__ bin_count,
    const u64 *__restrict__ nsub_start, const i32 *__restrict__ subprob_bin, i64 n_subprob,
    i64 maxsub, C *__restrict__ fw) {
    extern __shared__ __align__(16) unsigned char wf_smem[];
    C *tile = reinterpret_cast<C *>(wf_smem);
    WF_PTS_INIT;
    WF_BINS_INIT;
    const wf_tile tl = wf_tile_of(B);
    const i64 nfprod = nf1 * nf2 * nf3;
    /* the subproblem's geometry lives in shared memory: block-uniform, and read only where
     * needed instead of occupying a dozen registers for the kernel's lifetime */
    __shared__ wf_subprob s_sp;
    const wf_subprob &sp = s_sp;
#if WF_SPREAD_SM_FIX
    __shared__ float s_fix_sum;
    bool fix = false;
    float inv_scale = 1.0f;
    /* 2^30 / 2^ceil(log2(maxsub)) (wf_fix_add) */
    const int lg = maxsub > 1 ? 64 - __clzll((unsigned long long)(maxsub - 1)) : 0;
    const float lo_scale = ldexpf(1.0f, lg < 30 ? 30 - lg : 0);
#endif
    for (i64 s = blockIdx.x; s < n_subprob; s += gridDim.x) {
        for (i64 t = blockIdx.y; t < ntransf; t += gridDim.y) {
            if (threadIdx.x == 0) {
                s_sp = wf_subprob_get(s, B, P);
#if WF_SPREAD_SM_FIX
                s_fix_sum = 0.0f;
#endif
            }
            for (int e = threadIdx.x; e < tl.n * WF_TILE_WORDS; e += blockDim.x) {
                tile[e].x = 0;
                tile[e].y = 0;
            }
            __syncthreads();
#if WF_SPREAD_SM_OD2
            if (blockDim.x < WF_OD_MIN_BLOCK)
                __trap();
            wf_spread_sm_od2(tile, tl, sp, P, c + t * M, sort_idx);
#elif WF_SPREAD_SM_OD
            if (blockDim.x < WF_OD_MIN_BLOCK)
                __trap();
            wf_spread_sm_od(tile, tl, sp, P, c + t * M, sort_idx);
#elif WF_SPREAD_SM_FIX
            {
                /* scale: the subproblem's sum of |re| + |im| maps to 2^30 (wf_fix_add); zero,
                 * inf or NaN strengths take the float path (which propagates them) */
                const float S = wf_strength_sum(sp, c + t * M, sort_idx, &s_fix_sum);
                fix = S > 0.0f && S <= 3.0e38f;
                inv_scale = S / WF_FIX_ONE;
                if (fix)
                    wf_spread_sm_team<true>(tile, tl, sp, P, c + t * M, sort_idx, WF_FIX_ONE / S,
                                            lo_scale);
                else
                    wf_spread_sm_team<false>(tile, tl, sp, P, c + t * M, sort_idx);
            }
#elif WF_SPREAD_SM_TEAM
            wf_spread_sm_team(tile, tl, sp, P, c + t * M, sort_idx);
#else
            wf_spread_sm_thread(tile, tl, sp, P, c + t * M, sort_idx);
#endif
            __syncthreads();
            C *f = fw + t * nfprod;
#if WF_SPREAD_SM_FIX
            if (fix)
                wf_tile_flush_fix(tile, f, tl, sp, P, inv_scale, lo_scale);
            else
#endif
                wf_tile_flush(tile, f, tl, sp, P);
            __syncthreads(); /* the tile is zeroed again for the next transform / subproblem */
        }
    }
}

/* SM interp: per subproblem and transform, load the tile from fw (wrapped), then interpolate
 * the points from shared memory. */
extern "C" __global__ void WF_INTERP_SM_BOUNDS WF_SINAME(interp_sm)(
    i64 M, const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ z,
    C *__restrict__ c, i64 nf1, i64 nf2, i64 nf3, i64 ntransf, const i64 *__restrict__ sort_idx,
    T beta, i32 bs1, i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3, const u64 *__restrict__ bin_start,
    const u64 *__restrict__ bin_count, const u64 *__restrict__ nsub_start,
    const i32 *__restrict__ subprob_bin, i64 n_subprob, i64 maxsub, const C *__restrict__ fw) {
    extern __shared__ __align__(16) unsigned char wf_smem[];
    C *tile = reinterpret_cast<C *>(wf_smem);
    WF_PTS_INIT;
    WF_BINS_INIT;
    const wf_tile tl = wf_tile_of(B);
    const i64 nfprod = nf1 * nf2 * nf3;
    __shared__ wf_subprob s_sp;
    const wf_subprob &sp = s_sp;
    for (i64 s = blockIdx.x; s < n_subprob; s += gridDim.x) {
        for (i64 t = blockIdx.y; t < ntransf; t += gridDim.y) {
            if (threadIdx.x == 0)
                s_sp = wf_subprob_get(s, B, P);
            __syncthreads();
            const C *f = fw + t * nfprod;
            for (int e = threadIdx.x; e < tl.n; e += blockDim.x)
                tile[e] = wf_ldg(f + wf_tile_cell_to_grid(e, tl, sp, P));
            __syncthreads();
#if WF_INTERP_SM_TEAM
            wf_interp_sm_team(tile, tl, sp, P, c + t * M, sort_idx);
#else
            wf_interp_sm_thread(tile, tl, sp, P, c + t * M, sort_idx);
#endif
            __syncthreads(); /* the tile is reloaded for the next transform / subproblem */
        }
    }
}
