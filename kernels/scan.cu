/*
 * scan.cu — the warp-level scan primitive of module `sort` (see scan.cuh): Kogge-Stone over
 * the 32 lanes with shuffles (5 steps).
 */
#include "scan.cuh"

__device__ u64 wf_warp_inclusive_scan_u64(u64 v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const u64 y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o)
            v += y;
    }
    return v;
}
