/*
 * spreadinterp/tile.cuh — the SM shared-memory tile: adding a point's contribution with shared
 * atomics (wf_tile_add, wf_tile_add_rows), the fixed-point tile of 2D f32 SM spreading
 * (wf_fix_add, wf_tile_add_rows_fix, and wf_strength_sum, which sets its scale), and flushing a
 * finished tile into fw with global atomics (wf_tile_flush, wf_tile_flush_fix).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_TILE_CUH
#define WF_SI_TILE_CUH

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
/* flushing the tile into fw                                                                   */

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

#endif /* WF_SI_TILE_CUH */
