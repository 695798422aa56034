/*
 * scan_big.cu — module `scan_big`: the bin scans of setpts for plans with many bins
 * (kernels/ABI.md, "Module scan_big"), as reduce-then-scan over tiles of WF_SCAN_BIG_TILE bins:
 *
 *   wf_scan_big_reduce  many blocks: per tile, the sum of bin_count and of ceil(count / maxsub);
 *   wf_scan_big_tiles   one block: both tile sums scanned exclusively in place, the totals into
 *                       the result block (exactly as sort.cu's wf_bin_scan writes it);
 *   wf_scan_big_down    many blocks: per tile, the local exclusive scans plus the tile offsets
 *                       into bin_start and nsub_start.
 *
 * Why: the one-block wf_bin_scan keeps one SM busy with the 64-bit scans and a division per bin
 * (54 µs at 32768 bins, 214 µs at ~132k bins on the H100); spread over the GPU the same work is
 * three short launches. Plans with few bins keep wf_bin_scan (one launch: latency dominates
 * there), and only plans with more than WF_SCAN_BIG_BINS bins (c_core/src/params/params.h) load
 * this module, so a small plan's first-use JIT never compiles it. Precision-independent, one
 * translation unit (the warp scan and wf_ceil_div of scan.cuh are inline).
 */
#include "scan.cuh"

/* Bins per tile: WF_SCAN_BIG_ITEMS consecutive bins for each of WF_SCAN_BIG_BLOCK threads.
 * The host's WF_SCAN_BIG_TILE and WF_SCAN_BIG_BLOCK (c_core/src/params/params.h) must match. */
#define WF_SCAN_BIG_BLOCK 256
#define WF_SCAN_BIG_ITEMS 4
#define WF_SCAN_BIG_TILE  (WF_SCAN_BIG_BLOCK * WF_SCAN_BIG_ITEMS)
#define WF_SCAN_BIG_WARPS (WF_SCAN_BIG_BLOCK / 32)

/* Number of tiles of nbins bins. */
static __device__ __forceinline__ i64 wf_sb_ntiles(i64 nbins) {
    return nbins > 0 ? (nbins + WF_SCAN_BIG_TILE - 1) / WF_SCAN_BIG_TILE : 0;
}

/* A thread's WF_SCAN_BIG_ITEMS consecutive counts src[first ..] (0 past nbins): two 16-byte
 * loads when all four are in range (every tile but the last), else one by one. The buffers
 * come from cuMemAlloc (256-byte aligned) and first (tile start + 4 tid) is a multiple of 4. */
static __device__ __forceinline__ void wf_sb_load(const u64 *__restrict__ src, i64 first,
                                                  i64 nbins, u64 v[WF_SCAN_BIG_ITEMS]) {
    if (first + WF_SCAN_BIG_ITEMS <= nbins) {
        const ulonglong2 a = __ldg(reinterpret_cast<const ulonglong2 *>(src + first));
        const ulonglong2 b = __ldg(reinterpret_cast<const ulonglong2 *>(src + first) + 1);
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
        return;
    }
#pragma unroll
    for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k)
        v[k] = first + k < nbins ? __ldg(src + first + k) : 0ull;
}

/* The store matching wf_sb_load. */
static __device__ __forceinline__ void wf_sb_store(u64 *__restrict__ dst, i64 first, i64 nbins,
                                                   const u64 v[WF_SCAN_BIG_ITEMS]) {
    if (first + WF_SCAN_BIG_ITEMS <= nbins) {
        reinterpret_cast<ulonglong2 *>(dst + first)[0] = make_ulonglong2(v[0], v[1]);
        reinterpret_cast<ulonglong2 *>(dst + first)[1] = make_ulonglong2(v[2], v[3]);
        return;
    }
#pragma unroll
    for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k)
        if (first + k < nbins)
            dst[first + k] = v[k];
}

/* A thread's items replaced by their exclusive prefix sums, starting at `start`. */
static __device__ __forceinline__ void wf_sb_exclusive(u64 v[WF_SCAN_BIG_ITEMS], u64 start) {
#pragma unroll
    for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k) {
        const u64 c = v[k];
        v[k] = start;
        start += c;
    }
}

/* Exclusive prefix sums of two values per thread over the block (threadIdx.x order), both at
 * once so the two scans share their barriers; the block totals go to ta, tb (every thread).
 * Each warp scans its values (scan.cuh), the warp totals go through s_wa, s_wb (shared,
 * WF_SCAN_BIG_WARPS each) and every warp rescans those. Ends with a barrier: the shared arrays
 * may be reused by the next call. blockDim.x == WF_SCAN_BIG_BLOCK. */
static __device__ __forceinline__ void wf_sb_block_scan2(u64 &a, u64 &b, u64 &ta, u64 &tb,
                                                         u64 *s_wa, u64 *s_wb) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 ia = wf_warp_inclusive_scan_u64(a), ib = wf_warp_inclusive_scan_u64(b);
    if (lane == 31) {
        s_wa[warp] = ia;
        s_wb[warp] = ib;
    }
    __syncthreads();
    const u64 wa = lane < WF_SCAN_BIG_WARPS ? s_wa[lane] : 0ull;
    const u64 wb = lane < WF_SCAN_BIG_WARPS ? s_wb[lane] : 0ull;
    const u64 wia = wf_warp_inclusive_scan_u64(wa), wib = wf_warp_inclusive_scan_u64(wb);
    const u64 ea = __shfl_sync(0xffffffffu, wia - wa, warp);
    const u64 eb = __shfl_sync(0xffffffffu, wib - wb, warp);
    ta = __shfl_sync(0xffffffffu, wia, 31);
    tb = __shfl_sync(0xffffffffu, wib, 31);
    a = ea + (ia - a);
    b = eb + (ib - b);
    __syncthreads(); /* s_wa, s_wb are rewritten by the next call */
}

/* Pass 1: for each tile t (grid-stride over the tiles, any grid), tile_sums[t] = Σ bin_count
 * over its bins and tile_sums[ntiles + t] = Σ ceil(bin_count / maxsub) (0 when maxsub <= 0). */
extern "C" __global__ void __launch_bounds__(WF_SCAN_BIG_BLOCK)
    wf_scan_big_reduce(i64 nbins, const u64 *__restrict__ bin_count, i64 maxsub,
                       u64 *__restrict__ tile_sums) {
    __shared__ u64 s_a[WF_SCAN_BIG_WARPS], s_b[WF_SCAN_BIG_WARPS];
    if (blockDim.x != WF_SCAN_BIG_BLOCK)
        return;
    const i64 ntiles = wf_sb_ntiles(nbins);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const u64 m = maxsub > 0 ? (u64)maxsub : 1ull;
    for (i64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        u64 v[WF_SCAN_BIG_ITEMS];
        wf_sb_load(bin_count, t * WF_SCAN_BIG_TILE + (i64)tid * WF_SCAN_BIG_ITEMS, nbins, v);
        u64 a = 0, b = 0;
#pragma unroll
        for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k) {
            a += v[k];
            b += maxsub > 0 ? wf_ceil_div(v[k], m) : 0ull;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_xor_sync(0xffffffffu, a, o);
            b += __shfl_xor_sync(0xffffffffu, b, o);
        }
        if (lane == 0) {
            s_a[warp] = a;
            s_b[warp] = b;
        }
        __syncthreads();
        if (tid == 0) {
            u64 sa = 0, sb = 0;
#pragma unroll
            for (int w = 0; w < WF_SCAN_BIG_WARPS; ++w) {
                sa += s_a[w];
                sb += s_b[w];
            }
            tile_sums[t] = sa;
            tile_sums[ntiles + t] = sb;
        }
        __syncthreads(); /* s_a, s_b are rewritten for the next tile */
    }
}

/* Pass 2 (exactly one block; other blocks return): both halves of tile_sums scanned
 * exclusively in place, in chunks of WF_SCAN_BIG_TILE tiles with running carries; then
 * result[0] = Σ bin_count, result[1] = min(Σ nsub, sub_cap), result[2] = (maxsub > 0 &&
 * Σ nsub > sub_cap) << 32, exactly what wf_bin_scan writes (this clears the non-finite flag
 * that wf_bin_scatter_p sets afterwards). */
extern "C" __global__ void __launch_bounds__(WF_SCAN_BIG_BLOCK)
    wf_scan_big_tiles(i64 nbins, u64 *__restrict__ tile_sums, i64 maxsub, i64 sub_cap,
                      u64 *__restrict__ result) {
    __shared__ u64 s_wa[WF_SCAN_BIG_WARPS], s_wb[WF_SCAN_BIG_WARPS];
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockDim.x != WF_SCAN_BIG_BLOCK)
        return;
    const i64 ntiles = wf_sb_ntiles(nbins);
    const int tid = threadIdx.x;
    u64 *const sums = tile_sums, *const subs = tile_sums + ntiles;
    u64 carry = 0, carry_sub = 0;
    for (i64 base = 0; base < ntiles; base += WF_SCAN_BIG_TILE) {
        const i64 first = base + (i64)tid * WF_SCAN_BIG_ITEMS;
        u64 a[WF_SCAN_BIG_ITEMS], b[WF_SCAN_BIG_ITEMS];
        u64 sa = 0, sb = 0;
#pragma unroll
        for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k) {
            const int in = first + k < ntiles;
            a[k] = in ? sums[first + k] : 0ull;
            b[k] = in ? subs[first + k] : 0ull;
            sa += a[k];
            sb += b[k];
        }
        u64 ta, tb;
        wf_sb_block_scan2(sa, sb, ta, tb, s_wa, s_wb); /* its barriers: reads before writes */
        u64 ra = carry + sa, rb = carry_sub + sb;
#pragma unroll
        for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k) {
            if (first + k < ntiles) {
                sums[first + k] = ra;
                subs[first + k] = rb;
            }
            ra += a[k];
            rb += b[k];
        }
        carry += ta;
        carry_sub += tb;
    }
    if (tid == 0) {
        const u64 cap = sub_cap > 0 ? (u64)sub_cap : 0ull;
        result[0] = carry;
        result[1] = carry_sub < cap ? carry_sub : cap;
        result[2] = (u64)(maxsub > 0 && carry_sub > cap) << 32;
    }
}

/* Pass 3: for each tile t (grid-stride, any grid), bin_start[b] = tile_sums[t] + the exclusive
 * scan of bin_count within the tile, and with maxsub > 0 (SM; else nsub_start may be NULL)
 * nsub_start[b] = tile_sums[ntiles + t] + the same of ceil(bin_count / maxsub). Each thread
 * scans its WF_SCAN_BIG_ITEMS consecutive bins after the block scan of the per-thread sums. */
extern "C" __global__ void __launch_bounds__(WF_SCAN_BIG_BLOCK)
    wf_scan_big_down(i64 nbins, const u64 *__restrict__ bin_count, u64 *__restrict__ bin_start,
                     i64 maxsub, u64 *__restrict__ nsub_start,
                     const u64 *__restrict__ tile_sums) {
    __shared__ u64 s_wa[WF_SCAN_BIG_WARPS], s_wb[WF_SCAN_BIG_WARPS];
    if (blockDim.x != WF_SCAN_BIG_BLOCK)
        return;
    const i64 ntiles = wf_sb_ntiles(nbins);
    const int tid = threadIdx.x;
    const u64 m = maxsub > 0 ? (u64)maxsub : 1ull;
    for (i64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const i64 first = t * WF_SCAN_BIG_TILE + (i64)tid * WF_SCAN_BIG_ITEMS;
        u64 v[WF_SCAN_BIG_ITEMS], s[WF_SCAN_BIG_ITEMS];
        wf_sb_load(bin_count, first, nbins, v);
        u64 a = 0, b = 0;
#pragma unroll
        for (int k = 0; k < WF_SCAN_BIG_ITEMS; ++k) {
            s[k] = maxsub > 0 ? wf_ceil_div(v[k], m) : 0ull;
            a += v[k];
            b += s[k];
        }
        u64 ta, tb;
        wf_sb_block_scan2(a, b, ta, tb, s_wa, s_wb);
        wf_sb_exclusive(v, __ldg(tile_sums + t) + a);
        wf_sb_store(bin_start, first, nbins, v);
        if (maxsub > 0) { /* block-uniform */
            wf_sb_exclusive(s, __ldg(tile_sums + ntiles + t) + b);
            wf_sb_store(nsub_start, first, nbins, s);
        }
    }
}
