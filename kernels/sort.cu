/*
 * sort.cu — module `sort`: the counting sort of points into bins and the subproblem lists
 * (kernels/ABI.md, "Module sort"). One translation unit: the warp-scan primitive is inline in
 * scan.cuh (no device link, so a jit build's driver JIT needs no cuLink).
 */
#include "scan.cuh"

/* Exclusive prefix sum of one value per thread over the block (threadIdx.x order); the block
 * total goes to *s_total. Two levels: each warp scans its values (scan.cuh), the warp totals go
 * through shared memory, and every warp scans those (<= 32) itself, which saves a barrier and
 * gives every thread the total. Ends with a barrier: shared memory read before it may be
 * reused. blockDim.x a multiple of 32, at most 1024. */
__device__ __forceinline__ u64 wf_block_exclusive_scan_u64(u64 v, u64 *s_total) {
    __shared__ u64 s_warp_total[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    const u64 incl = wf_warp_inclusive_scan_u64(v); /* scan.cuh, inlined */
    if (lane == 31)
        s_warp_total[warp] = incl;
    __syncthreads();
    const u64 wt = lane < nwarps ? s_warp_total[lane] : 0ull;
    const u64 wincl = wf_warp_inclusive_scan_u64(wt);
    const u64 warp_excl = __shfl_sync(0xffffffffu, wincl - wt, warp);
    const u64 total = __shfl_sync(0xffffffffu, wincl, 31);
    if (threadIdx.x == 0)
        *s_total = total;
    __syncthreads(); /* s_warp_total is rewritten by the next call; *s_total is visible */
    return warp_excl + (incl - v);
}

/* Items per thread per chunk; a chunk is WF_SCAN_K * blockDim.x consecutive items. */
#define WF_SCAN_K 4

/* Exclusive prefix sum with one block (1024 threads), for any n >= 0. Chunks of
 * WF_SCAN_K*blockDim.x items in order, the running total carried between chunks. A chunk is
 * loaded coalesced into shared memory (the next chunk's loads are issued before this one is
 * scanned, to hide their latency), each thread takes WF_SCAN_K consecutive items, the per-thread
 * sums are block-scanned, and the results leave through shared memory coalesced. */
extern "C" __global__ void __launch_bounds__(1024)
    wf_scan_u64(i64 n, const u64 *__restrict__ in, u64 *__restrict__ out, u64 *total) {
    __shared__ u64 s_items[WF_SCAN_K * 1024];
    __shared__ u64 s_total;
    if (blockIdx.x != 0 || blockIdx.y != 0)
        return;
    const int nt = blockDim.x;
    const int tid = threadIdx.x;
    const i64 chunk = (i64)WF_SCAN_K * nt;

    u64 next[WF_SCAN_K];
#pragma unroll
    for (int k = 0; k < WF_SCAN_K; ++k) {
        const i64 i = (i64)k * nt + tid;
        next[k] = i < n ? __ldg(in + i) : 0ull;
    }
    u64 carry = 0;
    for (i64 base = 0; base < n; base += chunk) {
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k)
            s_items[k * nt + tid] = next[k];
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            const i64 i = base + chunk + (i64)k * nt + tid;
            next[k] = i < n ? __ldg(in + i) : 0ull;
        }
        __syncthreads();

        u64 mine[WF_SCAN_K];
        u64 sum = 0;
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            mine[k] = s_items[tid * WF_SCAN_K + k];
            sum += mine[k];
        }
        /* its barriers also order the reads above before the writes below */
        u64 run = carry + wf_block_exclusive_scan_u64(sum, &s_total);
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            s_items[tid * WF_SCAN_K + k] = run;
            run += mine[k];
        }
        carry += s_total;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            const i64 i = base + (i64)k * nt + tid;
            if (i < n)
                out[i] = s_items[k * nt + tid];
        }
        __syncthreads(); /* s_items and s_total are rewritten by the next chunk */
    }
    if (tid == 0)
        *total = carry;
}

/* sort_idx[bin_start[bin_of[j]] + pos_in_bin[j]] = j */
extern "C" __global__ void __launch_bounds__(256)
    wf_bin_scatter(i64 M, const i32 *__restrict__ bin_of, const u64 *__restrict__ pos_in_bin,
                   const u64 *__restrict__ bin_start, i64 *__restrict__ sort_idx) {
    WF_GRID_STRIDE(j, M) {
        const i32 b = __ldg(bin_of + j);
        sort_idx[__ldg(bin_start + b) + __ldg(pos_in_bin + j)] = j;
    }
}

/* nsub[b] = ceil(bin_count[b] / maxsub) */
extern "C" __global__ void __launch_bounds__(256)
    wf_subprob_count(i64 nbins, const u64 *__restrict__ bin_count, i64 maxsub,
                     u64 *__restrict__ nsub) {
    const u64 m = (u64)maxsub;
    WF_GRID_STRIDE(b, nbins) {
        nsub[b] = (__ldg(bin_count + b) + m - 1) / m;
    }
}

/* subprob_bin[nsub_start[b] + k] = b for k < nsub[b] */
extern "C" __global__ void __launch_bounds__(256)
    wf_subprob_fill(i64 nbins, const u64 *__restrict__ nsub_start, const u64 *__restrict__ nsub,
                    i32 *__restrict__ subprob_bin) {
    WF_GRID_STRIDE(b, nbins) {
        const u64 start = __ldg(nsub_start + b);
        const u64 cnt = __ldg(nsub + b);
        for (u64 k = 0; k < cnt; ++k)
            subprob_bin[start + k] = (i32)b;
    }
}
