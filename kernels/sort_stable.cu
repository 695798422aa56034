/*
 * sort_stable.cu — module `sort_stable`: deterministic ranks of the points inside their bins,
 * for setpts' deterministic mode (kernels/ABI.md, "Module sort_stable").
 *
 * wf_bin_count_p ranks a point inside its bin with an atomicAdd, so the order of a bin's
 * points in the sorted copy changes from run to run; spreading sums in that order, so its
 * floating-point rounding does too. Here the rank of point j in bin b is the number of points
 * j' < j in b (the input order), found by a least-significant-digit radix sort of the keys
 * bin_of[j] with 8-bit digits, each pass stable:
 *
 *   wf_stable_hist    per tile of WF_ST_TILE consecutive items: how many of each digit;
 *   wf_stable_rowscan per digit: exclusive prefix over the tiles (in place) and the total;
 *   wf_stable_scatter per tile: each item's rank among the items of its digit, in item order
 *                     (warp by warp, step by step, lane by lane: __match_any_sync inside a
 *                     step of 32, per-warp running counts in shared memory, then a prefix over
 *                     the warps), so its destination is digit start + earlier tiles + rank.
 *                     Earlier passes move (key, index) pairs; the last writes each point's
 *                     rank in its bin, pos_in_bin[j] = destination - bin_start[bin_of[j]].
 *
 * Counts and ranks are integers formed in a fixed order: the output is the same every run (the
 * shared-memory atomics of wf_stable_hist only count). passes = ceil(bits(nbins - 1) / 8), at
 * least 1. Precision-independent, one translation unit, loaded only by deterministic plans.
 */
#include "scan.cuh"

#define WF_ST_BLOCK 256 /* threads per block (every kernel here) */
#define WF_ST_WARPS (WF_ST_BLOCK / 32)
#define WF_ST_IPT   8                         /* items per thread */
#define WF_ST_TILE  (WF_ST_BLOCK * WF_ST_IPT) /* 2048 consecutive items per tile */
#define WF_ST_RADIX 256                       /* 8-bit digits */

static __device__ __forceinline__ unsigned wf_st_digit(i32 key, int shift) {
    return ((unsigned)key >> shift) & (WF_ST_RADIX - 1u);
}

/* Exclusive prefix sum of one value per thread over the block (threadIdx.x order); the total
 * to every thread through *total. Ends with a barrier. blockDim.x == WF_ST_BLOCK. */
static __device__ __forceinline__ u64 wf_st_block_scan(u64 v, u64 *total) {
    __shared__ u64 s_w[WF_ST_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 incl = wf_warp_inclusive_scan_u64(v);
    if (lane == 31)
        s_w[warp] = incl;
    __syncthreads();
    const u64 wt = lane < WF_ST_WARPS ? s_w[lane] : 0ull;
    const u64 wincl = wf_warp_inclusive_scan_u64(wt);
    const u64 before = __shfl_sync(0xffffffffu, wincl - wt, warp);
    *total = __shfl_sync(0xffffffffu, wincl, WF_ST_WARPS - 1);
    __syncthreads(); /* s_w is rewritten by the next call */
    return before + incl - v;
}

/* hist[d * ntiles + t] = the number of items i of tile t (i in [t*TILE, min(M, (t+1)*TILE)))
 * with digit d of keys[i]. Blocks loop over the tiles (any grid). */
extern "C" __global__ void __launch_bounds__(WF_ST_BLOCK)
    wf_stable_hist(i64 M, const i32 *__restrict__ keys, i32 shift, i64 ntiles,
                   u64 *__restrict__ hist) {
    __shared__ unsigned s_cnt[WF_ST_RADIX];
    if (blockDim.x != WF_ST_BLOCK)
        __trap();
    for (i64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        s_cnt[threadIdx.x] = 0u;
        __syncthreads();
        const i64 base = t * WF_ST_TILE;
#pragma unroll
        for (int k = 0; k < WF_ST_IPT; ++k) {
            const i64 i = base + k * WF_ST_BLOCK + threadIdx.x;
            if (i < M)
                atomicAdd(s_cnt + wf_st_digit(__ldg(keys + i), shift), 1u);
        }
        __syncthreads();
        hist[(i64)threadIdx.x * ntiles + t] = s_cnt[threadIdx.x];
        __syncthreads(); /* s_cnt is zeroed again for the next tile */
    }
}

/* Per digit d (blocks loop over the 256 digits): hist[d * ntiles + t] replaced by the sum over
 * the tiles before t, and digit_total[d] = the sum over all tiles. Chunks of 4 * 256 tiles in
 * order with a running carry. */
extern "C" __global__ void __launch_bounds__(WF_ST_BLOCK)
    wf_stable_rowscan(i64 ntiles, u64 *__restrict__ hist, u64 *__restrict__ digit_total) {
    if (blockDim.x != WF_ST_BLOCK)
        __trap();
    for (int d = blockIdx.x; d < WF_ST_RADIX; d += gridDim.x) {
        u64 *row = hist + (i64)d * ntiles;
        u64 carry = 0;
        for (i64 c0 = 0; c0 < ntiles; c0 += 4 * WF_ST_BLOCK) {
            const i64 first = c0 + 4 * (i64)threadIdx.x;
            u64 v[4], sum = 0;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                v[k] = first + k < ntiles ? row[first + k] : 0ull;
                sum += v[k];
            }
            u64 chunk_total;
            u64 run = carry + wf_st_block_scan(sum, &chunk_total);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                if (first + k < ntiles)
                    row[first + k] = run;
                run += v[k];
            }
            carry += chunk_total;
        }
        if (threadIdx.x == 0)
            digit_total[d] = carry;
        __syncthreads(); /* (the scan's shared words are reused by the next digit) */
    }
}

/* One pass's stable scatter (see the file comment). Item i of this pass: key keys_in[i] and
 * value vals_in[i] (the point's input index; vals_in NULL: i itself, the first pass); u32
 * values, u64 with pos_wide. With bin_start NULL the pair goes to keys_out[dst], vals_out[dst];
 * otherwise (the last pass) pos_in_bin[value] = dst - bin_start[key] (u32, u64 with pos_wide)
 * and keys_out / vals_out are not used. hist and digit_total as wf_stable_rowscan left them.
 * Blocks loop over the tiles (any grid). */
extern "C" __global__ void __launch_bounds__(WF_ST_BLOCK)
    wf_stable_scatter(i64 M, const i32 *__restrict__ keys_in, const void *__restrict__ vals_in,
                      i32 shift, i64 ntiles, const u64 *__restrict__ hist,
                      const u64 *__restrict__ digit_total, i32 *__restrict__ keys_out,
                      void *__restrict__ vals_out, i32 pos_wide, const u64 *__restrict__ bin_start,
                      void *__restrict__ pos_in_bin) {
    __shared__ unsigned s_wcnt[WF_ST_WARPS][WF_ST_RADIX]; /* per warp, then its offsets */
    __shared__ u64 s_dstart[WF_ST_RADIX];                 /* digit starts */
    __shared__ u64 s_base[WF_ST_RADIX];                   /* this tile's start per digit */
    if (blockDim.x != WF_ST_BLOCK)
        __trap();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned lt = (1u << lane) - 1u;
    {
        u64 total;
        s_dstart[threadIdx.x] = wf_st_block_scan(__ldg(digit_total + threadIdx.x), &total);
    }
    const u64 *v64 = static_cast<const u64 *>(vals_in);
    const unsigned *v32 = static_cast<const unsigned *>(vals_in);
    for (i64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
#pragma unroll
        for (int w = 0; w < WF_ST_WARPS; ++w)
            s_wcnt[w][threadIdx.x] = 0u;
        __syncthreads();
        /* warp w takes the tile's items [w*256, (w+1)*256) in WF_ST_IPT steps of 32 */
        const i64 wbase = t * WF_ST_TILE + (i64)warp * (32 * WF_ST_IPT);
        unsigned dig[WF_ST_IPT], rank[WF_ST_IPT];
#pragma unroll
        for (int k = 0; k < WF_ST_IPT; ++k) {
            const i64 i = wbase + k * 32 + lane;
            const bool valid = i < M;
            const unsigned dg = valid ? wf_st_digit(__ldg(keys_in + i), shift) : WF_ST_RADIX;
            const unsigned peers = __match_any_sync(0xffffffffu, dg);
            const unsigned run = valid ? s_wcnt[warp][dg] : 0u;
            __syncwarp();
            if (valid && lane == 31 - __clz(peers)) /* the last of its peers updates the count */
                s_wcnt[warp][dg] = run + __popc(peers);
            __syncwarp();
            dig[k] = dg;
            rank[k] = run + __popc(peers & lt);
        }
        __syncthreads();
        { /* per digit: the warps' counts -> their offsets inside the tile */
            const int d = threadIdx.x;
            unsigned acc = 0;
#pragma unroll
            for (int w = 0; w < WF_ST_WARPS; ++w) {
                const unsigned c = s_wcnt[w][d];
                s_wcnt[w][d] = acc;
                acc += c;
            }
            s_base[d] = s_dstart[d] + __ldg(hist + (i64)d * ntiles + t);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < WF_ST_IPT; ++k) {
            const i64 i = wbase + k * 32 + lane;
            if (i >= M)
                continue;
            const unsigned dg = dig[k];
            const u64 dst = s_base[dg] + s_wcnt[warp][dg] + rank[k];
            const u64 val = vals_in ? (pos_wide ? __ldg(v64 + i) : (u64)__ldg(v32 + i)) : (u64)i;
            if (bin_start) {
                const i32 key = __ldg(keys_in + i);
                const u64 r = dst - __ldg(bin_start + key);
                if (pos_wide)
                    static_cast<u64 *>(pos_in_bin)[val] = r;
                else
                    static_cast<unsigned *>(pos_in_bin)[val] = (unsigned)r;
            } else {
                keys_out[dst] = __ldg(keys_in + i);
                if (pos_wide)
                    static_cast<u64 *>(vals_out)[dst] = val;
                else
                    static_cast<unsigned *>(vals_out)[dst] = (unsigned)val;
            }
        }
        __syncthreads(); /* s_wcnt and s_base are rewritten for the next tile */
    }
}
