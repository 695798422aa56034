/*
 * spreadinterp/smr_spread.cuh — SM spreading with the subproblem's tile in REGISTERS
 * (WF_SPREAD_SM_REG): the default of the modules kernels/smr_shape.h lists (3D f64 w7-14, 2D
 * f64 w10-16, at the shape it gives; the host launches them by the same table), a variant of
 * the other 2D and 3D modules (kernels/test/sweep_wave4.sh). 2D and 3D, f32 and f64.
 *
 * Why: the shared-tile SM kernels (wf_spread_sm_od / _od2) read and write a shared cell per
 * footprint cell and point (16-22 shared-memory wavefronts per 32 cells with the kernel values,
 * plus bank conflicts of the W-cell rows) and wait at a barrier per step of disjoint points:
 * 3D f32 w7 runs at ~0.5 SM-cycles per cell update, 3D f64 w10 at ~0.8, where the FMAs need
 * 1/64 (f32) and 1/32 (f64) of a cycle. Shared-memory float atomics are no way out on sm_90
 * (ATOMS.CAST.SPIN loops). Here each thread OWNS a column of the tile — one position in the
 * dimensions but the last, all NR cells along the last one — and keeps it in NR complex
 * registers, so a point's contribution to the column is NR FMAs into registers: no shared
 * cell traffic, no atomics, and no barrier between points (every cell has one owner). The
 * price is work on zeros: a thread whose column meets a footprint updates all NR cells of
 * it, W of them non-zero, and the warps whose columns miss the footprint skip the point
 * after one ballot per batch.
 *
 * Layout. The tile is the SM tile (bin + PAD each side, td_d = bs_d + 2 PAD), its last
 * dimension (z in 3D, y in 2D) held in registers: td_last <= WF_SMR_NR (compile time; the
 * kernel traps otherwise). Columns (x, y) in 3D, x in 2D, map to lanes:
 *  - WF_SMR_PX = 0 (flat): column c = 32 * warp + lane, row-major (x fastest);
 *  - WF_SMR_PX = 8 or 16 (3D only): warps own PX x (32/PX) patches of columns, patches
 *    row-major; a footprint meets fewer warps than with flat rows when td1 is wide.
 * The block needs ceil(columns / 32) warps (flat) or ceil(td1/PX) * ceil(td2/(32/PX)) (patches);
 * fewer traps, more idle (the host launches exactly the flat count, c_core/src/params/bins.c
 * wf_sm_spread_block). Lanes past the tile hold zeros and flush nothing.
 *
 * Per subproblem and transform, the points go in batches of NB = 32 * WF_SMR_NBW:
 *  A (folds): thread (d, b) folds coordinate d of point b once (u, first index, tile-relative
 *    start l_d), thread (0, b) also loads the strength; double-buffered, so batch k+1's folds
 *    run beside batch k's accumulation.
 *  B (values): one task per kernel value, spread densely over the block (in f64 an evaluation
 *    is ~50 DP instructions: a task per lane keeps every lane evaluating): W values k1 * c, W
 *    values k2 (3D), and the NR values of the last dimension aligned to the tile (zero outside
 *    the footprint), so the accumulation reads them as 16-byte broadcasts.
 *  C (accumulate): each warp ballots the batch's points whose footprint meets its columns, and
 *    for each, the lanes inside the footprint add v = k1 c k2 times the NR last-dimension values
 *    to their registers.
 * Two barriers per batch. After the last batch each thread adds its non-zero cells to fw with
 * global atomics (the SM flush; zero cells skipped), then zeroes its registers.
 *
 * Dynamic shared memory (bytes; the kernel traps when it was given less, %dynamic_smem_size):
 *   NB * (NRP*sizeof(T) + 32 + 2*sizeof(V) + W*sizeof(V) + 16*DIM + (DIM == 3 ? W*sizeof(T) : 0))
 * with NRP = NR rounded up to 16 bytes of T, V the value (complex C, or T in the real modules) (the
 * host's wf_smr_batch_bytes and kernels/test/gpu_pipeline.py's smr_launch compute the same). The
 * module exports wf_smr_info = {NR, PX, NBW, DIM} so that a harness can size the launch.
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_*), which it relies on.
 */
#ifndef WF_SI_SMR_SPREAD_CUH
#define WF_SI_SMR_SPREAD_CUH

#define WF_SMR_NB  (32 * WF_SMR_NBW)
#define WF_SMR_VEC (16 / (int)sizeof(T)) /* T per 16-byte vector: 4 (f32), 2 (f64) */
#define WF_SMR_NRP ((WF_SMR_NR + WF_SMR_VEC - 1) / WF_SMR_VEC * WF_SMR_VEC)
#define WF_SMR_TP  ((WF_DIM - 1) * W + WF_SMR_NRP) /* value tasks per point */
#define WF_SMR_PY  (WF_SMR_PX > 0 ? 32 / WF_SMR_PX : 1)
#if WF_SMR_PX != 0 && (WF_DIM != 3 || 32 % WF_SMR_PX != 0)
#error "WF_SMR_PX (patches of columns) is 0 (flat) or a divisor of 32, in 3D only"
#endif
#if WF_SMR_NR < W
#error "WF_SMR_NR must be at least the width"
#endif

extern "C" __device__ const int wf_smr_info[4] = {WF_SMR_NR, WF_SMR_PX, WF_SMR_NBW, WF_DIM};

#if WF_PREC == 32
typedef float4 wf_smr_vec;
#else
typedef double2 wf_smr_vec;
#endif
/* component e of a 16-byte vector of T (e a compile-time constant after unrolling) */
__device__ __forceinline__ T wf_smr_comp(const wf_smr_vec &v, int e) {
#if WF_PREC == 32
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
#else
    return e == 0 ? v.x : v.y;
#endif
}

/* The batch arrays in dynamic shared memory (see the top of the file for the byte count). */
struct wf_smr_smem {
    T *kl;     /* [NB][NRP]: last-dimension values aligned to the tile, 0 outside the footprint */
    int4 *l;   /* [2][NB]: tile-relative footprint starts (l1, l2, l3) */
    V *cv;     /* [2][NB]: strengths */
    V *c1;     /* [NB][W]: k1(t) * strength */
    double *u; /* [2][NB][DIM]: folded coordinates */
    T *k2;     /* [NB][W]: k2(t), 3D */
};
__device__ __forceinline__ unsigned wf_smr_smem_bytes() {
    return (unsigned)(WF_SMR_NB * (WF_SMR_NRP * sizeof(T) + 32 + 2 * sizeof(V) + W * sizeof(V) +
                                   16 * WF_DIM + (WF_DIM == 3 ? W * sizeof(T) : 0)));
}
__device__ __forceinline__ wf_smr_smem wf_smr_carve(unsigned char *p) {
    wf_smr_smem s;
    s.kl = reinterpret_cast<T *>(p);
    p += WF_SMR_NB * WF_SMR_NRP * sizeof(T);
    s.l = reinterpret_cast<int4 *>(p);
    p += 2 * WF_SMR_NB * sizeof(int4);
    s.cv = reinterpret_cast<V *>(p);
    p += 2 * WF_SMR_NB * sizeof(V);
    s.c1 = reinterpret_cast<V *>(p);
    p += WF_SMR_NB * W * sizeof(V);
    s.u = reinterpret_cast<double *>(p);
    p += 2 * WF_SMR_NB * WF_DIM * sizeof(double);
    s.k2 = reinterpret_cast<T *>(p);
    return s;
}

/* This thread's column (tile coordinates; y = 0 in 2D) and its warp's bounding box of columns
 * (recomputed where needed: registers are what this kernel runs short of). */
struct wf_smr_col {
    int x, y;
};
struct wf_smr_box {
    int bx0, bx1, by0, by1;
};
__device__ __forceinline__ int wf_smr_warps_needed(const wf_tile &tl) {
#if WF_DIM == 2
    return (tl.td1 + 31) / 32;
#elif WF_SMR_PX > 0
    return ((tl.td1 + WF_SMR_PX - 1) / WF_SMR_PX) * ((tl.td2 + WF_SMR_PY - 1) / WF_SMR_PY);
#else
    return (tl.td1 * tl.td2 + 31) / 32;
#endif
}
__device__ __forceinline__ wf_smr_box wf_smr_box_of(const wf_tile &tl, int warp) {
    wf_smr_box c;
#if WF_DIM == 2
    (void)tl;
    c.bx0 = 32 * warp;
    c.bx1 = 32 * warp + 31;
    c.by0 = c.by1 = 0;
#elif WF_SMR_PX > 0
    const int npx = (tl.td1 + WF_SMR_PX - 1) / WF_SMR_PX;
    c.bx0 = (warp % npx) * WF_SMR_PX;
    c.bx1 = c.bx0 + WF_SMR_PX - 1;
    c.by0 = (warp / npx) * WF_SMR_PY;
    c.by1 = c.by0 + WF_SMR_PY - 1;
#else
    const int c0 = 32 * warp, cl = c0 + 31;
    c.by0 = c0 / tl.td1;
    c.by1 = cl / tl.td1;
    c.bx0 = c.by0 == c.by1 ? c0 % tl.td1 : 0;
    c.bx1 = c.by0 == c.by1 ? cl % tl.td1 : tl.td1 - 1;
#endif
    return c;
}
__device__ __forceinline__ wf_smr_col wf_smr_column(const wf_tile &tl) {
    wf_smr_col c;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#if WF_DIM == 2
    (void)tl;
    c.x = 32 * warp + lane;
    c.y = 0;
#elif WF_SMR_PX > 0
    const wf_smr_box bx = wf_smr_box_of(tl, warp);
    c.x = bx.bx0 + lane % WF_SMR_PX;
    c.y = bx.by0 + lane / WF_SMR_PX;
#else
    const int col = 32 * warp + lane;
    c.x = col % tl.td1;
    c.y = col / tl.td1;
#endif
    return c;
}

/* A: the folds of batch points b0 .. b0 + nb - 1 into buffer buf (tasks (d, b), d < DIM). */
__device__ __forceinline__ void wf_smr_fold(const wf_smr_smem &S, int buf, int b0, int nb,
                                            const wf_subprob &sp, const wf_pts &P,
                                            const V *__restrict__ cv,
                                            const i64 *__restrict__ sort_idx) {
    for (int idx = threadIdx.x; idx < WF_DIM * WF_SMR_NB; idx += blockDim.x) {
        const int d = idx / WF_SMR_NB, b = idx % WF_SMR_NB;
        if (b >= nb)
            continue;
        const i64 i = sp.first + b0 + b;
        const T *xd = d == 0 ? P.x : d == 1 ? P.y : P.z;
        const i64 nf = d == 0 ? P.nf1 : d == 1 ? P.nf2 : P.nf3;
        const i64 o = d == 0 ? sp.o1 : d == 1 ? sp.o2 : sp.o3;
        double u;
        i64 a;
        wf_locate(xd, i, nf, u, a);
        S.u[(buf * WF_SMR_NB + b) * WF_DIM + d] = u;
        int *l = reinterpret_cast<int *>(S.l + buf * WF_SMR_NB + b);
        l[d] = (int)(a - o);
        if (d == 0)
            S.cv[buf * WF_SMR_NB + b] = wf_ldg(cv + __ldg(sort_idx + i));
    }
}

/* B: the kernel values of the batch in buffer buf, one task per value. */
__device__ __forceinline__ void wf_smr_values(const wf_smr_smem &S, int buf, int nb,
                                              const wf_subprob &sp, const wf_pts &P) {
    for (int idx = threadIdx.x; idx < nb * WF_SMR_TP; idx += blockDim.x) {
        const int b = idx / WF_SMR_TP, k = idx - b * WF_SMR_TP;
        const int4 l = S.l[buf * WF_SMR_NB + b];
        const double *u = S.u + (buf * WF_SMR_NB + b) * WF_DIM;
        if (k < W) {
            const T v = wf_kernel_value(sp.o1 + l.x, k, u[0], P);
            const V c = S.cv[buf * WF_SMR_NB + b];
            S.c1[b * W + k] = wf_vscale(v, c);
        }
#if WF_DIM == 3
        else if (k < 2 * W) {
            S.k2[b * W + (k - W)] = wf_kernel_value(sp.o2 + l.y, k - W, u[1], P);
        }
#endif
        else {
            const int z = k - (WF_DIM - 1) * W;
#if WF_DIM == 3
            const int ll = l.z;
            const i64 o = sp.o3;
#else
            const int ll = l.y;
            const i64 o = sp.o2;
#endif
            const int t = z - ll;
            S.kl[b * WF_SMR_NRP + z] =
                (unsigned)t < (unsigned)W ? wf_kernel_value(o + ll, t, u[WF_DIM - 1], P) : (T)0;
        }
    }
}

/* C: this thread's column gets the batch's points (buffer buf) that meet it. */
__device__ __forceinline__ void wf_smr_accumulate(const wf_smr_smem &S, int buf, int nb,
                                                  const wf_tile &tl, const wf_smr_col &col,
                                                  V (&acc)[WF_SMR_NR]) {
    const int warp = threadIdx.x >> 5;
    if (warp >= wf_smr_warps_needed(tl))
        return;
    const wf_smr_box box = wf_smr_box_of(tl, warp);
#pragma unroll 1
    for (int w0 = 0; w0 < nb; w0 += 32) {
        const int lane = threadIdx.x & 31;
        bool hit = false;
        if (w0 + lane < nb) {
            const int4 l = S.l[buf * WF_SMR_NB + w0 + lane];
            hit = l.x <= box.bx1 && l.x + W - 1 >= box.bx0;
#if WF_DIM == 3
            hit = hit && l.y <= box.by1 && l.y + W - 1 >= box.by0;
#endif
        }
        unsigned m = __ballot_sync(0xffffffffu, hit);
#pragma unroll 1
        while (m) {
            const int b = w0 + __ffs((int)m) - 1;
            m &= m - 1;
            const int4 l = S.l[buf * WF_SMR_NB + b];
            const int t1 = col.x - l.x;
#if WF_DIM == 3
            const int t2 = col.y - l.y;
            if ((unsigned)t1 >= (unsigned)W || (unsigned)t2 >= (unsigned)W)
                continue;
            const V c1 = S.c1[b * W + t1];
            const T k2 = S.k2[b * W + t2];
            const V vc = wf_vscale(c1, k2);
#else
            if ((unsigned)t1 >= (unsigned)W)
                continue;
            const V vc = S.c1[b * W + t1];
#endif
            const wf_smr_vec *kl = reinterpret_cast<const wf_smr_vec *>(S.kl + b * WF_SMR_NRP);
#pragma unroll
            for (int q = 0; q < WF_SMR_NRP / WF_SMR_VEC; ++q) {
                const wf_smr_vec kv = kl[q];
#pragma unroll
                for (int e = 0; e < WF_SMR_VEC; ++e) {
                    const int z = q * WF_SMR_VEC + e;
                    if (z < WF_SMR_NR) {
                        const T k = wf_smr_comp(kv, e);
                        wf_vfma(acc[z], vc, k);
                    }
                }
            }
        }
    }
}

/* The column's non-zero cells into fw (one transform) with global atomics; zeroes acc. */
__device__ __forceinline__ void wf_smr_flush(V (&acc)[WF_SMR_NR], V *f, const wf_tile &tl,
                                             const wf_subprob &sp, const wf_pts &P,
                                             const wf_smr_col &col) {
    const bool mine = (int)(threadIdx.x >> 5) < wf_smr_warps_needed(tl) && col.x < tl.td1 &&
                      (WF_DIM == 2 || col.y < tl.td2);
    if (mine) {
        /* the tile may be wider than the grid (tiny grids): wrap by loops */
        int gx = (int)sp.g1 + col.x;
        while (gx >= (int)P.nf1)
            gx -= (int)P.nf1;
#if WF_DIM == 3
        int gy = (int)sp.g2 + col.y;
        while (gy >= (int)P.nf2)
            gy -= (int)P.nf2;
        V *base = f + gx + P.nf1 * (i64)gy;
        const i64 plane = P.nf1 * P.nf2;
        const int gl0 = (int)sp.g3, nl = (int)P.nf3, tdl = tl.td3;
#else
        V *base = f + gx;
        const i64 plane = P.nf1;
        const int gl0 = (int)sp.g2, nl = (int)P.nf2, tdl = tl.td2;
#endif
#pragma unroll
        for (int z = 0; z < WF_SMR_NR; ++z) {
            if (z < tdl && wf_vnonzero(acc[z])) {
                int g = gl0 + z;
                while (g >= nl)
                    g -= nl;
                wf_vatomic_add(base + plane * g, acc[z]);
            }
        }
    }
#pragma unroll
    for (int z = 0; z < WF_SMR_NR; ++z)
        acc[z] = wf_vzero();
}

#endif /* WF_SI_SMR_SPREAD_CUH */
