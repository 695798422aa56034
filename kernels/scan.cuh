/*
 * scan.cuh — warp-level prefix-sum primitive of module `sort`: Kogge-Stone over the 32 lanes
 * with shuffles (5 steps).
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

#endif /* WF_SCAN_CUH */
