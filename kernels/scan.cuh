/*
 * scan.cuh — what the bin scans of modules `sort` and `scan_big` share: the warp-level prefix
 * sum (Kogge-Stone over the 32 lanes with shuffles, 5 steps) and the subproblem count of a bin,
 * ceil(count / maxsub).
 *
 * It used to live in its own scan.cu, called from sort.cu across the file boundary (-rdc and a
 * device link): in a `jit` build that made `sort` the one module the driver had to link with
 * cuLink on first use (issue 12: the first plan's cold JIT). Defined here, inline, module `sort`
 * is one translation unit, JIT-compiled by cuModuleLoadDataEx like every other module.
 */
#ifndef WF_SCAN_CUH
#define WF_SCAN_CUH

#include "common.cuh"

/* Inclusive prefix sum over the 32 lanes of the calling warp: lane l gets Σ_{l' <= l} v(l').
 * All 32 lanes must call it together. */
static __device__ __forceinline__ u64 wf_warp_inclusive_scan_u64(u64 v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u64 y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o)
            v += y;
    }
    return v;
}

/* ceil(c / m) for m >= 1: 32-bit when c fits (a 64-bit division is a ~70-instruction call,
 * wf_udiv64 in common.cuh). */
static __device__ __forceinline__ u64 wf_ceil_div(u64 c, u64 m) {
    if (c <= 0xffffffffull && m <= 0xffffffffull) {
        const unsigned c32 = (unsigned)c, m32 = (unsigned)m;
        return c32 == 0u ? 0ull : (u64)((c32 - 1u) / m32 + 1u);
    }
    return wf_udiv64(c + m - 1, m);
}

#endif /* WF_SCAN_CUH */
