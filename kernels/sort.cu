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

/* Items per thread per chunk; a chunk is WF_SCAN_K * blockDim.x consecutive bins. */
#define WF_SCAN_K 4

/* One chunk's exclusive prefix sums out through shared memory, coalesced: thread tid's
 * WF_SCAN_K consecutive items get run, run + mine[0], ...; out[base + i] for the chunk's bins
 * below nbins. The caller synchronises before s_items is reused. */
__device__ __forceinline__ void wf_scan_store(u64 run, const u64 *mine, u64 *s_items,
                                              u64 *__restrict__ out, i64 base, i64 nbins, int nt,
                                              int tid) {
#pragma unroll
    for (int k = 0; k < WF_SCAN_K; ++k) {
        s_items[tid * WF_SCAN_K + k] = run;
        run += mine[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < WF_SCAN_K; ++k) {
        const i64 i = base + (i64)k * nt + tid;
        if (i < nbins)
            out[i] = s_items[k * nt + tid];
    }
}

/* The bin scans of setpts, with one block of 512 threads (two scans and 64-bit divisions do not
 * fit 1024 threads' 64 registers), for any nbins >= 0:
 *   bin_start[b] = sum_{b' < b} bin_count[b'],
 *   and with maxsub > 0 (SM) nsub_start[b] = sum_{b' < b} ceil(bin_count[b'] / maxsub);
 *   result[0] = the total of bin_count (n_sorted), result[1] = the number of subproblems
 *   clamped to sub_cap, result[2] = (total > sub_cap) << 32 (wf_setpts_result: bad = 0,
 *   sub_overflow): this also clears the non-finite flag that wf_bin_scatter_p sets afterwards.
 * Chunks of WF_SCAN_K*blockDim.x bins in order, the running totals carried between chunks. A
 * chunk is loaded coalesced into shared memory (the next chunk's loads are issued before this
 * one is scanned, to hide their latency), each thread takes WF_SCAN_K consecutive bins, the
 * per-thread sums are block-scanned, and the results leave through shared memory coalesced. */
extern "C" __global__ void __launch_bounds__(512)
    wf_bin_scan(i64 nbins, const u64 *__restrict__ bin_count, u64 *__restrict__ bin_start,
                i64 maxsub, u64 *__restrict__ nsub_start, i64 sub_cap, u64 *result) {
    __shared__ u64 s_items[WF_SCAN_K * 512];
    __shared__ u64 s_total;
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockDim.x > 512)
        return;
    const int nt = blockDim.x;
    const int tid = threadIdx.x;
    const i64 chunk = (i64)WF_SCAN_K * nt;
    const u64 m = maxsub > 0 ? (u64)maxsub : 1ull;

    u64 next[WF_SCAN_K];
#pragma unroll
    for (int k = 0; k < WF_SCAN_K; ++k) {
        const i64 i = (i64)k * nt + tid;
        next[k] = i < nbins ? __ldg(bin_count + i) : 0ull;
    }
    u64 carry = 0, carry_sub = 0;
    for (i64 base = 0; base < nbins; base += chunk) {
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k)
            s_items[k * nt + tid] = next[k];
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            const i64 i = base + chunk + (i64)k * nt + tid;
            next[k] = i < nbins ? __ldg(bin_count + i) : 0ull;
        }
        __syncthreads();

        u64 mine[WF_SCAN_K], mine_sub[WF_SCAN_K];
        u64 sum = 0, sum_sub = 0;
#pragma unroll
        for (int k = 0; k < WF_SCAN_K; ++k) {
            mine[k] = s_items[tid * WF_SCAN_K + k];
            sum += mine[k];
            mine_sub[k] = maxsub > 0 ? wf_ceil_div(mine[k], m) : 0ull;
            sum_sub += mine_sub[k];
        }
        /* its barriers also order the reads above before the writes below */
        u64 run = carry + wf_block_exclusive_scan_u64(sum, &s_total);
        const u64 chunk_total = s_total;
        u64 run_sub = 0;
        if (maxsub > 0) /* block-uniform */
            run_sub = carry_sub + wf_block_exclusive_scan_u64(sum_sub, &s_total);
        const u64 chunk_sub = s_total;
        wf_scan_store(run, mine, s_items, bin_start, base, nbins, nt, tid);
        carry += chunk_total;
        if (maxsub > 0) {
            __syncthreads(); /* bin_start's reads of s_items are done */
            wf_scan_store(run_sub, mine_sub, s_items, nsub_start, base, nbins, nt, tid);
            carry_sub += chunk_sub;
        }
        __syncthreads(); /* s_items and s_total are rewritten by the next chunk */
    }
    if (tid == 0) {
        const u64 cap = sub_cap > 0 ? (u64)sub_cap : 0ull;
        result[0] = carry;
        result[1] = carry_sub < cap ? carry_sub : cap;
        result[2] = (u64)(maxsub > 0 && carry_sub > cap) << 32;
    }
}

/* When *flag is set (the point set held a NaN/inf coordinate): out[i] = 0x7fffffff for
 * i < n_words, a NaN in f32 and, as a pair of words, in f64. Otherwise every block returns at
 * once. Execute runs it over its outputs last. */
extern "C" __global__ void __launch_bounds__(256)
    wf_poison_u32(i64 n_words, const i32 *__restrict__ flag, unsigned *__restrict__ out) {
    if (__ldg(flag) == 0)
        return;
    WF_GRID_STRIDE(i, n_words) {
        out[i] = 0x7fffffffu;
    }
}
