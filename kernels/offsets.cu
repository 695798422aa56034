/*
 * offsets.cu — module offsets_{d}d_p (-DWF_DIM, -DWF_PREC): the width the given points need,
 * on the device, between setpts' binning and the first execute, without a host sync
 * (kernels/ABI.md, "Module offsets_{d}d_p"; docs/accuracy.md, "The width the points need"):
 *   wf_offsets_gather_p   the statistics of the points' fine-grid offsets (offsets_bound.h's
 *                         wf_offset_stats), one per point set;
 *   wf_offsets_choose_p   per point set, the bound of each candidate width from them and the
 *                         plan's tables, narrowest first; the widest of the sets' choices goes
 *                         to the device word the spreading kernels and the deconvolution read.
 * Loaded only by plans whose every-point-set width has narrower candidates: a plan without
 * them loads and launches nothing of this.
 */
#include "common.cuh"
#include "offsets_bound.h"

#ifndef WF_PREC
#error "offsets.cu needs -DWF_PREC=32|64"
#endif
#if !(defined(WF_DIM) && WF_DIM >= 1 && WF_DIM <= 3)
#error "offsets.cu needs -DWF_DIM=1|2|3"
#endif

/* The kernels keep their dim parameter (ABI.md); the module is built for one dimension. */
#define WF_OFF_DIM_OF(arg) ((void)(arg), WF_DIM)

#define WF_OFF_BLOCK  256 /* both kernels: exactly this many threads (= WF_OFF_CELLS) */
#define WF_OFF_NPAIRS (WF_DIM == 3 ? 3 : WF_DIM - 1)
/* The gather's shared counters: the cells of each dim, then each pair's joint bins (u32). */
#define WF_OFF_NH (WF_DIM * WF_OFF_CELLS + WF_OFF_NPAIRS * WF_OFF_BINS * WF_OFF_BINS)
/* Grid-stride steps between two flushes of a block's counters: at most 2^20 points each, so
 * a u32 counter never wraps, whatever M and the grid. */
#ifndef WF_OFF_ROUND /* the emulator's test takes a small one, to flush in the loop too */
#define WF_OFF_ROUND 4096
#endif
/* Sums per dim and candidate in the choice: the table's WF_OFF_TOP + 1 rows of e2, and eta2. */
#define WF_OFF_NV (WF_OFF_TOP + 2)

static_assert(WF_OFF_BLOCK == WF_OFF_CELLS, "a thread per cell of a dim");

/* ---------------------------------------------------------------- the gather */

/* What the gather replaced (issue 39), selectable for re-measuring; the defaults are not yet
 * measured on a GPU (B4 set-points before/after). -DWF_OFF_MATCH=1 alone builds the gather as
 * it was before, every piece below following it unless given on its own:
 *   WF_OFF_MATCH     1: wf_off_add aggregates lanes with __match_any_sync (one per dim and per
 *                    pair of dims per warp-step: 6 in 3D, a slow instruction); 0: a shuffle and
 *                    a ballot per group of lanes of one key (WF_OFF_GROUPS at most; random
 *                    points: one), the other lanes plain shared atomics;
 *   WF_OFF_CELL_BITS 1: the cell is the low 8 bits of floor(u * 256) (one F2I); 0: as the host
 *                    writes it, wf_offsets_cell(u - floor(u)) (a second FRND, a DADD, a clamp);
 *   WF_OFF_PREFETCH  1: each step loads the next step's coordinates before its own work (with
 *                    ~2 blocks of 8 warps per SM little else hides the loads); 0: each step
 *                    loads its own and waits for them at once.
 * Every combination gives the same counts, bit for bit (the emulator's test runs the default
 * against the host's wf_offsets_gather). */
#ifndef WF_OFF_MATCH
#define WF_OFF_MATCH 0
#endif
#ifndef WF_OFF_CELL_BITS
#define WF_OFF_CELL_BITS (!WF_OFF_MATCH)
#endif
#ifndef WF_OFF_PREFETCH
#define WF_OFF_PREFETCH (!WF_OFF_MATCH)
#endif

/* The cell of one coordinate (wf_fold as binning and spreading compute it). u is in [0, nf),
 * so the conversion truncates to floor(u * 256); u * 256 is exact (a power of 2), and
 * floor(u * 256) = 256 floor(u) + floor(256 (u - floor(u))) with the last term in 0..255
 * (u - floor(u) is exact and < 1, so wf_offsets_cell's clamp never acts): its low 8 bits are
 * the host's cell, wf_offsets_cell(u - floor(u)). */
static __device__ __forceinline__ int wf_off_cell_of(wf_real v, i64 nf) {
    const double u = wf_fold((double)v, nf);
#if WF_OFF_CELL_BITS
    static_assert((WF_OFF_CELLS & (WF_OFF_CELLS - 1)) == 0, "cells: a power of 2");
    return (int)((i64)(u * (double)WF_OFF_CELLS) & (WF_OFF_CELLS - 1));
#else
    return wf_offsets_cell(u - floor(u));
#endif
}

/* Adds 1 to h[key] for each lane of the warp whose key is >= 0 (-1: no point). Every lane of
 * the warp calls it. Up to WF_OFF_GROUPS groups of lanes of one key add together, each with
 * one atomic by its first lane: the group of lane 0's key, then, while the last group had more
 * than one lane (keys repeat: points near grid nodes, whose cells are 0 and 255, so 2 keys per
 * dim and 4 per pair of dims; clusters), that of the first lane left. The other lanes add 1
 * each with the same atomic instruction (random points: one group of one lane, then plain
 * shared atomics), a key they share serialising them at most 32 ways. */
#ifndef WF_OFF_GROUPS
#define WF_OFF_GROUPS 4
#endif
static_assert(WF_OFF_GROUPS >= 1, "the group of lane 0 at least");
static __device__ __forceinline__ void wf_off_add(unsigned *h, int key) {
#if WF_OFF_MATCH
    /* lanes with the same key add together: one shared atomic per distinct key */
    const unsigned peers = __match_any_sync(0xffffffffu, key);
    if (key >= 0 && (int)(threadIdx.x & 31) == __ffs(peers) - 1)
        atomicAdd(h + key, (unsigned)__popc(peers));
#else
    const unsigned lane = threadIdx.x & 31;
    unsigned n = 1, left = 0xffffffffu; /* what this lane adds; the lanes in no group yet */
#pragma unroll
    for (int r = 0; r < WF_OFF_GROUPS; r++) {
        /* every lane of the key of left's first lane (none in an earlier group: other keys) */
        const int first = __ffs((int)left) - 1;
        const unsigned g = __ballot_sync(0xffffffffu, key == __shfl_sync(0xffffffffu, key, first));
        if ((g >> lane) & 1u)
            n = lane == (unsigned)first ? (unsigned)__popc(g) : 0u;
        left &= ~g;
        if (left == 0u || __popc(g) == 1) /* warp-uniform */
            break;
    }
    if (key >= 0 && n)
        atomicAdd(h + key, n);
#endif
}

/* Sum of one value per thread over the block, in a fixed order (the warps' trees, then the
 * warps in order): thread 0 gets it. Ends with a barrier. */
template <class V> static __device__ __forceinline__ V wf_off_block_sum(V v, V *s_part) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        s_part[threadIdx.x >> 5] = v;
    __syncthreads();
    V s = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < (int)(blockDim.x >> 5); w++)
            s += s_part[w];
    __syncthreads();
    return s;
}

/* The block's counters into the set's statistics (u64 atomics, the non-zero ones), and zeroed.
 * The count: every point has one cell of dim 0, and thread t holds cell t of it. */
static __device__ void wf_off_flush(unsigned *h, u64 *st) {
    __shared__ u64 s_part[WF_OFF_BLOCK / 32];
    __syncthreads();
    const u64 n = wf_off_block_sum<u64>(h[threadIdx.x], s_part);
    if (threadIdx.x == 0 && n)
        atomicAdd(st, n);
    for (int e = threadIdx.x; e < WF_OFF_NH; e += blockDim.x) {
        const unsigned v = h[e];
        if (v) {
            const int at = e < WF_DIM * WF_OFF_CELLS ? WF_OFF_CELL_AT + e
                                                     : WF_OFF_JOINT_AT + e - WF_DIM * WF_OFF_CELLS;
            atomicAdd(st + at, (u64)v);
            h[e] = 0u;
        }
    }
    __syncthreads();
}

/* The coordinates of point j of the set at base (j < set_M; else zeros; the dims past WF_DIM
 * zeros). */
static __device__ __forceinline__ void wf_off_load(wf_real v[3], const wf_real *__restrict__ x,
                                                   const wf_real *__restrict__ y,
                                                   const wf_real *__restrict__ z, i64 base, i64 j,
                                                   i64 set_M) {
    v[0] = v[1] = v[2] = (wf_real)0;
    if (j < set_M) {
        v[0] = __ldg(x + base + j);
        if (WF_DIM >= 2)
            v[1] = __ldg(y + base + j);
        if (WF_DIM >= 3)
            v[2] = __ldg(z + base + j);
    }
}

/* Block (bx, s) gathers point set s (points s*set_M .. + set_M - 1; set_M <= 0: all M) over
 * the grid's x blocks into stats + s*WF_OFF_STATS_WORDS (zeroed by the host): per point and
 * dim, the cell of its offset; per pair of dims, the joint bin. A non-finite point counts at
 * coordinate 0, where binning puts it. Block (0, 0) also clears *w_sel for the choice. */
extern "C" __global__ void __launch_bounds__(WF_OFF_BLOCK)
    WF_PNAME(offsets_gather)(i64 M, i32 dim_arg, const wf_real *__restrict__ x,
                             const wf_real *__restrict__ y, const wf_real *__restrict__ z, i64 nf1,
                             i64 nf2, i64 nf3, i64 set_M, u64 *__restrict__ stats, i32 *w_sel) {
    (void)WF_OFF_DIM_OF(dim_arg);
    WF_DYNAMIC_SMEM(wf_smem);
    unsigned *h = reinterpret_cast<unsigned *>(wf_smem);
    if (blockDim.x != WF_OFF_BLOCK || wf_dynamic_smem_size() < WF_OFF_NH * sizeof(unsigned))
        __trap();
    if (set_M <= 0)
        set_M = M;
    const i64 base = (i64)blockIdx.y * set_M;
    u64 *st = stats + (i64)blockIdx.y * WF_OFF_STATS_WORDS;
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && w_sel)
        *w_sel = 0;
    for (int e = threadIdx.x; e < WF_OFF_NH; e += blockDim.x)
        h[e] = 0u;
    __syncthreads();
    int steps = 0;
    const i64 b_first = (i64)blockIdx.x * blockDim.x, stride = (i64)gridDim.x * blockDim.x;
#if WF_OFF_PREFETCH
    wf_real v[3];
    wf_off_load(v, x, y, z, base, b_first + threadIdx.x, set_M);
#endif
    /* block-uniform: every lane of a warp reaches the collectives of wf_off_add together */
    for (i64 b0 = b_first; b0 < set_M; b0 += stride) {
        const i64 j = b0 + threadIdx.x;
#if WF_OFF_PREFETCH
        wf_real p[3] = {v[0], v[1], v[2]};
        wf_off_load(v, x, y, z, base, j + stride, set_M); /* the next step's, in flight now */
#else
        wf_real p[3];
        wf_off_load(p, x, y, z, base, j, set_M);
#endif
        int c[3] = {-1, -1, -1};
        if (j < set_M) {
            if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
                p[0] = p[1] = p[2] = (wf_real)0;
            c[0] = wf_off_cell_of(p[0], nf1);
            if (WF_DIM >= 2)
                c[1] = wf_off_cell_of(p[1], nf2);
            if (WF_DIM >= 3)
                c[2] = wf_off_cell_of(p[2], nf3);
        }
#pragma unroll
        for (int d = 0; d < WF_DIM; d++)
            wf_off_add(h + d * WF_OFF_CELLS, c[d]);
#pragma unroll
        for (int P = 0; P < WF_OFF_NPAIRS; P++) {
            const int a = c[wf_off_pair_first(P)], b = c[wf_off_pair_second(P)];
            const int key = a >= 0 ? (a / WF_OFF_CPB) * WF_OFF_BINS + b / WF_OFF_CPB : -1;
            wf_off_add(h + WF_DIM * WF_OFF_CELLS + P * WF_OFF_BINS * WF_OFF_BINS, key);
        }
        if (++steps == WF_OFF_ROUND) {
            wf_off_flush(h, st);
            steps = 0;
        }
    }
    wf_off_flush(h, st);
}

/* ---------------------------------------------------------------- the choice */

/* Block s (grid-stride over the sets) counts the spreading bins set s occupies (bin_count: the
 * binning's counts, nbins per set; NULL: not counted) and, if at least min_bins (the host's
 * share of WF_OFF_MIN_SAMPLES), evaluates its statistics against the plan's candidates in
 * order (offsets_bound.h's pieces; the sums over cells and joint bins are block reductions in
 * a fixed order, the rest thread 0's, in the host's order) and takes the first
 * whose bound is <= limit2, else index n_cand (w_hi; also for a set without points); the
 * widest index over the sets goes to *w_sel by atomicMax (cleared by the gather before). With
 * bounds (a test's: n_sets * WF_OFF_MAX_CAND doubles), every candidate's bound is written
 * there. n_sets <= 0 (statistics not gathered): block 0 writes n_cand. */
extern "C" __global__ void __launch_bounds__(WF_OFF_BLOCK)
    WF_PNAME(offsets_choose)(i64 n_sets, const u64 *__restrict__ stats, const void *plan,
                             i32 *w_sel, double *bounds, const u64 *__restrict__ bin_count,
                             i64 nbins, i64 min_bins) {
    __shared__ double s_hb[3][WF_OFF_BINS], s_chi2[WF_OFF_PAIRS], s_sum[WF_OFF_NV];
    __shared__ double s_part[WF_OFF_BLOCK / 32][WF_OFF_NV];
    __shared__ wf_offb_dim s_t[3];
    __shared__ int s_pass;
    __shared__ u64 s_occ[WF_OFF_BLOCK / 32];
    __shared__ u64 s_occupied;
    if (blockDim.x != WF_OFF_BLOCK)
        __trap();
    const wf_offset_plan *op = static_cast<const wf_offset_plan *>(plan);
    const int n_cand = op->n_cand, dim = op->dim, tid = threadIdx.x;
    if (n_sets <= 0) {
        if (blockIdx.x == 0 && tid == 0)
            *w_sel = n_cand;
        return;
    }
    for (i64 s = blockIdx.x; s < n_sets; s += gridDim.x) {
        const wf_offset_stats *st =
            reinterpret_cast<const wf_offset_stats *>(stats + s * WF_OFF_STATS_WORDS);
        const u64 count = st->count;
        int count_ok = 1;
        int idx = n_cand;
        if (bin_count && min_bins > 1) { /* the bins the set occupies */
            u64 occ = 0;
            for (i64 b = tid; b < nbins; b += blockDim.x)
                occ += bin_count[s * nbins + b] != 0;
            occ = wf_off_block_sum<u64>(occ, s_occ);
            if (tid == 0)
                s_occupied = occ;
            __syncthreads();
            occ = s_occupied;
            __syncthreads();
            if (occ < (u64)min_bins)
                count_ok = 0;
        }
        if (count > 0 && count_ok) { /* block-uniform */
            const double inv = 1.0 / (double)count;
            if (tid < dim * WF_OFF_BINS)
                s_hb[tid / WF_OFF_BINS][tid % WF_OFF_BINS] =
                    wf_offb_bin_fraction(st->cell[tid / WF_OFF_BINS], tid % WF_OFF_BINS, inv);
            __syncthreads();
            for (int P = 0; P < wf_off_n_pairs(dim); P++) {
                const int d = wf_off_pair_first(P), d2 = wf_off_pair_second(P);
                double acc = 0.0;
                for (int i = tid; i < WF_OFF_BINS * WF_OFF_BINS; i += blockDim.x)
                    acc += wf_offb_chi2_term(st->joint[P][i], inv, s_hb[d][i / WF_OFF_BINS],
                                             s_hb[d2][i % WF_OFF_BINS]);
                const double sum = wf_off_block_sum<double>(acc, &s_part[0][0]);
                if (tid == 0)
                    s_chi2[P] = wf_offb_chi2(sum);
            }
            for (int c = 0; c < n_cand; c++) {
                for (int d = 0; d < dim; d++) {
                    const wf_offset_dim_table *tb = wf_off_tab(op, op->tab[c][d]);
                    const double cnt = (double)st->cell[d][tid];
                    /* per sum: this cell's term, the warp's tree, the warp's part to shared */
                    for (int r = 0; r < WF_OFF_NV; r++) {
                        double v = cnt * (r <= WF_OFF_TOP ? tb->e2[r][tid] : tb->eta2[tid]);
#pragma unroll
                        for (int o = 16; o > 0; o >>= 1)
                            v += __shfl_down_sync(0xffffffffu, v, o);
                        if ((tid & 31) == 0)
                            s_part[tid >> 5][r] = v;
                    }
                    __syncthreads();
                    if (tid < WF_OFF_NV) {
                        double a = 0.0;
                        for (int w = 0; w < (int)(blockDim.x >> 5); w++)
                            a += s_part[w][tid];
                        s_sum[tid] = a;
                    }
                    __syncthreads();
                    if (tid == 0) {
                        double e2 = 0.0;
                        for (int r = 0; r <= WF_OFF_TOP; r++)
                            e2 = fmax(e2, s_sum[r] * inv);
                        s_t[d] = wf_offb_dim_terms(tb, s_hb[d], e2, s_sum[WF_OFF_NV - 1], inv);
                    }
                    __syncthreads();
                }
                if (tid == 0) {
                    double bound = 0.0;
                    for (int d = 0; d < dim; d++)
                        bound += s_t[d].e2;
                    for (int P = 0; P < wf_off_n_pairs(dim); P++)
                        bound += wf_offb_pair(s_t[wf_off_pair_first(P)], s_t[wf_off_pair_second(P)],
                                              s_chi2[P]);
                    if (bounds)
                        bounds[s * WF_OFF_MAX_CAND + c] = bound;
                    s_pass = bound <= op->limit2;
                }
                __syncthreads();
                const int pass = s_pass;
                __syncthreads(); /* s_pass is rewritten by the next candidate */
                if (pass && idx == n_cand) {
                    idx = c;
                    if (!bounds)
                        break;
                }
            }
        }
        if (tid == 0)
            atomicMax(w_sel, idx);
        __syncthreads(); /* the shared arrays are reused by the next set */
    }
}
