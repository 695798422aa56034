/*
 * spreadinterp/tile.cuh — the SM shared-memory tile: adding a point's contribution with shared
 * atomics (wf_tile_add, wf_tile_add_rows), the fixed-point tile of 2D f32 SM spreading
 * (wf_fix_add, wf_tile_add_rows_fix, and wf_strength_sum, which sets its scale), and flushing a
 * finished tile into fw with global atomics (wf_tile_flush, wf_tile_flush_fix).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_TILE_CUH
#define WF_SI_TILE_CUH

/* The shared-memory add is wf_vtile_add (value.cuh: float atomics, compare-and-swap loops on
 * sm_90). tile[i0 + s*r] += wt[r] * v for r < W */
__device__ __forceinline__ void wf_tile_add_rows(V *tile, int i0, int s, const T (&wt)[W],
                                                 const V &v) {
#pragma unroll
    for (int r = 0; r < W; ++r)
        wf_vtile_add(tile + i0 + s * r, wf_vscale(wt[r], v));
}

#if WF_SPREAD_SM_FIX
/* Fixed-point tile: per cell four int32 words (hi re, hi im, lo re, lo im), 16 bytes (the host's
 * wf_sm_cell_bytes); in the real-valued modules two (hi, lo), 8 bytes: 2 * WF_NV words, the
 * hi word of component i at i, its lo word at WF_NV + i. A point's contribution x (already times
 * the subproblem's scale) adds hi = rint(x) and lo = rint((x - hi) * lo_scale); x - hi is exact in
 * float. The scale maps the subproblem's sum of |re| + |im| to 2^30 and |phi| <= 1, so every hi sum
 * stays below 2^30 (2x headroom under 2^31, more than the float sum's rounding); each point adds to
 * a cell once and |lo| <= lo_scale / 2 per add, so lo_scale = 2^30 / 2^ceil(log2(maxsub)) keeps the
 * lo sums below 2^29. The value is (hi + lo / lo_scale) / scale: the integers are exact, so the
 * only rounding is float's in forming x, and one at the flush. */
#define WF_FIX_ONE 1073741824.0f /* 2^30 */
__device__ __forceinline__ void wf_fix_add(int *p, float x, float lo_scale) {
    const int hi = __float2int_rn(x);
    atomicAdd(p, hi);
    atomicAdd(p + WF_NV, __float2int_rn((x - (float)hi) * lo_scale));
}
/* tile[i0 + s*r] += wt[r] * v for r < W */
__device__ __forceinline__ void wf_tile_add_rows_fix(int *tile, int i0, int s, const T (&wt)[W],
                                                     const V &v, float lo_scale) {
#pragma unroll
    for (int r = 0; r < W; ++r) {
        const V x = wf_vscale(wt[r], v);
#pragma unroll
        for (int i = 0; i < WF_NV; ++i)
            wf_fix_add(tile + 2 * WF_NV * (i0 + s * r) + i, wf_vcomp(x, i), lo_scale);
    }
}
#define WF_TILE_WORDS 2 /* tile entries of V per cell */
#else
#define WF_TILE_WORDS 1
#endif

/* ------------------------------------------------------------------------------------------ */
/* flushing the tile into fw                                                                   */

/* The tile into fw (one transform) with global atomics; zeros skipped: adding 0 changes
 * nothing. */
__device__ __forceinline__ void wf_tile_flush(const V *tile, V *f, const wf_tile &tl,
                                              const wf_subprob &sp, const wf_pts &P) {
    for (int e = threadIdx.x; e < tl.n; e += blockDim.x) {
        const V v = tile[e];
        if (wf_vnonzero(v))
            wf_vatomic_add(f + wf_tile_cell_to_grid(e, tl, sp, P), v);
    }
}

#if WF_SPREAD_SM_FIX
/* The same for the fixed-point tile: value = (hi + lo / lo_scale) * inv_scale (wf_fix_add). */
__device__ __forceinline__ void wf_tile_flush_fix(const V *tile, V *f, const wf_tile &tl,
                                                  const wf_subprob &sp, const wf_pts &P,
                                                  float inv_scale, float lo_scale) {
    const float il = inv_scale / lo_scale;
#if WF_REAL
    const int2 *ft = reinterpret_cast<const int2 *>(tile);
    for (int e = threadIdx.x; e < tl.n; e += blockDim.x) {
        const int2 q = ft[e];
        if (q.x != 0 || q.y != 0)
            wf_vatomic_add(f + wf_tile_cell_to_grid(e, tl, sp, P),
                           (float)q.x * inv_scale + (float)q.y * il);
    }
#else
    const int4 *ft = reinterpret_cast<const int4 *>(tile);
    for (int e = threadIdx.x; e < tl.n; e += blockDim.x) {
        const int4 q = ft[e];
        if (q.x != 0 || q.y != 0 || q.z != 0 || q.w != 0)
            wf_atomic_add(f + wf_tile_cell_to_grid(e, tl, sp, P),
                          (float)q.x * inv_scale + (float)q.z * il,
                          (float)q.y * inv_scale + (float)q.w * il);
    }
#endif
}

/* Sum over the subproblem's points of |re| + |im| (real: |v|) of their strengths cv, for every
 * thread of the block; *acc is block shared and zeroed before the barrier that precedes this call.
 */
__device__ __forceinline__ float wf_strength_sum(const wf_subprob &sp, const V *__restrict__ cv,
                                                 const i64 *__restrict__ sort_idx, float *acc) {
    float part = 0.0f;
    for (int pi = threadIdx.x; pi < sp.npts; pi += blockDim.x) {
        const V v = wf_ldg(cv + __ldg(sort_idx + sp.first + pi));
        part += wf_vabs_sum(v);
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

#endif /* WF_SI_TILE_CUH */
