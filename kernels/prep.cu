/*
 * prep.cu — modules bin_{d}d_p, deconvolve_{d}d_p and amplify_{d}d_p (-DWF_PREP_PART, -DWF_DIM,
 * -DWF_PREC): per-point binning for the sort, and the per-mode correction steps around the FFT
 * (kernels/ABI.md, "Modules bin_{d}d_p, deconvolve_{d}d_p, amplify_{d}d_p"), for complex data
 * (wf_deconvolve_p, wf_amplify_p) and for real data on the half spectrum (wf_deconvolve_half_p,
 * wf_amplify_half_p).
 */
#include "common.cuh"

#ifndef WF_PREC
#error "prep.cu needs -DWF_PREC=32|64"
#endif

/* Which kernels the module holds (build.rs): a plan loads, and in a jit build JIT-compiles, only
 * the modules it launches, and its first plan waits for the largest of them, so a kernel a plan
 * does not need would be first-plan time (issue 12). WF_PREP_BIN: the three binning kernels of
 * setpts (module bin_{d}d_p); WF_PREP_DECONVOLVE (type 1, deconvolve_{d}d_p); WF_PREP_AMPLIFY
 * (type 2, amplify_{d}d_p). */
#define WF_PREP_BIN        1
#define WF_PREP_DECONVOLVE 2
#define WF_PREP_AMPLIFY    3
#if !defined(WF_PREP_PART) ||                                                                      \
    (WF_PREP_PART != WF_PREP_BIN && WF_PREP_PART != WF_PREP_DECONVOLVE &&                          \
     WF_PREP_PART != WF_PREP_AMPLIFY)
#error "prep.cu needs -DWF_PREP_PART=WF_PREP_BIN|WF_PREP_DECONVOLVE|WF_PREP_AMPLIFY"
#endif
#if !(defined(WF_DIM) && WF_DIM >= 1 && WF_DIM <= 3)
#error "prep.cu needs -DWF_DIM=1|2|3"
#endif

/* The kernels keep their dim parameter (ABI.md); the module is built for one dimension and uses
 * its WF_DIM instead, so the code for the other dimensions is not compiled. */
#define WF_DIM_OF(arg) ((void)(arg), WF_DIM)

#if WF_PREP_PART == WF_PREP_BIN

/* Fine-grid bin of one coordinate: min(floor(u)/bs, nb - 1). */
__device__ __forceinline__ i64 wf_bin_of_coord(wf_real x, i64 nf, i32 bs, i64 nb) {
    const u64 c = (u64)floor(wf_fold((double)x, nf)); /* in [0, nf) */
    const i64 b = (i64)(c <= 0xffffffffull ? (u64)((unsigned)c / (unsigned)bs)
                                            : wf_udiv64(c, (u64)bs));
    return b < nb - 1 ? b : nb - 1;
}

/* Bin of one point (b1 + nb1*(b2 + nb2*b3)); a non-finite point goes to bin 0, which keeps
 * every index that follows in range (wf_bin_scatter_p flags it and replaces its coordinates). */
__device__ __forceinline__ int wf_point_bin(i32 dim, wf_real xv, wf_real yv, wf_real zv, i64 nf1,
                                            i64 nf2, i64 nf3, i32 bs1, i32 bs2, i32 bs3, i64 nb1,
                                            i64 nb2, i64 nb3) {
    if (!(isfinite(xv) && isfinite(yv) && isfinite(zv)))
        return 0;
    i64 b = wf_bin_of_coord(xv, nf1, bs1, nb1);
    if (dim >= 2) {
        const i64 b2 = wf_bin_of_coord(yv, nf2, bs2, nb2);
        const i64 b3 = dim >= 3 ? wf_bin_of_coord(zv, nf3, bs3, nb3) : 0;
        b += nb1 * (b2 + nb2 * b3);
    }
    return (int)b;
}

/* Per point: bin (bin_of) and rank inside the bin (pos_in_bin: u32, or u64 with pos_wide, for
 * M >= 2^32). The points of a warp that fall into the same bin take one atomicAdd together
 * (__match_any_sync): sorted or clustered inputs would otherwise serialise on a few counters.
 * The loop runs warp-uniformly (a warp's 32 lanes always iterate together), which needs
 * blockDim.x to be a multiple of 32 (ABI: 256). A non-finite point is counted in bin 0.
 * n_sets > 1 point sets of M / n_sets points each, one after the other (ABI.md, "Point sets"):
 * a point's bin is its set's bin, set * nbins + the bin of its coordinates, so one sort of all
 * the points leaves each set's points contiguous, in the order of the sets; a non-finite point
 * goes to bin 0 of its set. */
/* With few bins (<= WF_BIN_SMEM bins, 32-bit ranks), a block takes WF_BIN_PPT points per
 * thread at a time, ranks them with shared-memory atomics, reserves each bin's range with one
 * global atomicAdd per (block, bin) and adds the range's start: 1D plans have a few hundred to
 * a few thousand bins, so per-point global atomics serialised on them (ncu, H100, 1e7 uniform
 * points, ~2000 bins: 416 -> 141 us). Ranks inside a bin stay unique either way. The points'
 * bins and ranks wait in shared memory, not registers, so the loops need not be unrolled:
 * unrolled, the bin computation (fold, 64-bit divisions) appeared 8 times and made prep the
 * slowest module to JIT on a cold first plan. 48 KB of static shared memory in all. */
#define WF_BIN_SMEM  4096
#define WF_BIN_PPT   8
#define WF_BIN_BLOCK 256 /* the ABI's block size; the shared-memory path needs blockDim.x <= it */
__device__ __forceinline__ void wf_bin_count_smem(i64 M, i32 dim, const wf_real *__restrict__ x,
                                                  const wf_real *__restrict__ y,
                                                  const wf_real *__restrict__ z, i64 nf1, i64 nf2,
                                                  i64 nf3, i32 bs1, i32 bs2, i32 bs3, i64 nb1,
                                                  i64 nb2, i64 nb3, int nbins, i64 set_M,
                                                  i64 n_sets, i32 *__restrict__ bin_of,
                                                  unsigned *__restrict__ pos_in_bin,
                                                  u64 *__restrict__ bin_count) {
    __shared__ unsigned s_cnt[WF_BIN_SMEM];
    __shared__ unsigned s_base[WF_BIN_SMEM];
    __shared__ int s_bin[WF_BIN_PPT * WF_BIN_BLOCK];
    __shared__ unsigned s_rank[WF_BIN_PPT * WF_BIN_BLOCK];
    const i64 chunk = (i64)blockDim.x * WF_BIN_PPT;
    for (i64 c0 = (i64)blockIdx.x * chunk; c0 < M; c0 += (i64)gridDim.x * chunk) {
        for (int b = threadIdx.x; b < nbins; b += blockDim.x)
            s_cnt[b] = 0;
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < WF_BIN_PPT; k++) {
            const int t = k * blockDim.x + threadIdx.x;
            const i64 j = c0 + t;
            int bin = -1;
            if (j < M) {
                const wf_real xv = __ldg(x + j);
                const wf_real yv = dim >= 2 ? __ldg(y + j) : (wf_real)0;
                const wf_real zv = dim >= 3 ? __ldg(z + j) : (wf_real)0;
                bin = wf_point_bin(dim, xv, yv, zv, nf1, nf2, nf3, bs1, bs2, bs3, nb1, nb2, nb3) +
                      (int)(wf_set_of(j, set_M, n_sets) * (nb1 * nb2 * nb3));
                s_rank[t] = atomicAdd(s_cnt + bin, 1u);
            }
            s_bin[t] = bin;
        }
        __syncthreads();
        for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
            const unsigned n = s_cnt[b];
            if (n)
                s_base[b] = (unsigned)atomicAdd(bin_count + b, (u64)n);
        }
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < WF_BIN_PPT; k++) {
            const int t = k * blockDim.x + threadIdx.x;
            const int bin = s_bin[t];
            if (bin >= 0) {
                bin_of[c0 + t] = bin;
                pos_in_bin[c0 + t] = s_base[bin] + s_rank[t];
            }
        }
        __syncthreads(); /* the shared arrays are reused by the next chunk only after every read */
    }
}

extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(bin_count)(i64 M, i32 dim_arg, const wf_real *__restrict__ x,
                        const wf_real *__restrict__ y, const wf_real *__restrict__ z, i64 nf1,
                        i64 nf2, i64 nf3, i32 bs1, i32 bs2, i32 bs3, i64 nb1, i64 nb2, i64 nb3,
                        i32 *__restrict__ bin_of, void *__restrict__ pos_in_bin, i32 pos_wide,
                        u64 *__restrict__ bin_count, i64 n_sets) {
    const i32 dim = WF_DIM_OF(dim_arg);
    const i64 nbins = nb1 * nb2 * nb3; /* per point set */
    if (n_sets < 1)
        n_sets = 1;
    const i64 set_M = n_sets > 1 ? wf_div(M, n_sets) : M;
    const i64 total = nbins * n_sets;
    if (!pos_wide && total <= WF_BIN_SMEM && blockDim.x <= WF_BIN_BLOCK) { /* block-uniform */
        wf_bin_count_smem(M, dim, x, y, z, nf1, nf2, nf3, bs1, bs2, bs3, nb1, nb2, nb3, (int)total,
                          set_M, n_sets, bin_of, static_cast<unsigned *>(pos_in_bin), bin_count);
        return;
    }
    const unsigned full = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 wbase = (i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31); wbase < M;
         wbase += stride) {
        const i64 j = wbase + lane;
        int bin = -1; /* -1: no point (past M) */
        if (j < M) {
            const wf_real xv = __ldg(x + j);
            const wf_real yv = dim >= 2 ? __ldg(y + j) : (wf_real)0;
            const wf_real zv = dim >= 3 ? __ldg(z + j) : (wf_real)0;
            bin = wf_point_bin(dim, xv, yv, zv, nf1, nf2, nf3, bs1, bs2, bs3, nb1, nb2, nb3) +
                  (int)(wf_set_of(j, set_M, n_sets) * nbins);
        }
        const unsigned peers = __match_any_sync(full, bin);
        if (bin >= 0) {
            const int leader = __ffs(peers) - 1;
            const unsigned rank = __popc(peers & ((1u << lane) - 1u));
            u64 first = 0;
            if (lane == leader)
                first = atomicAdd(bin_count + bin, (u64)__popc(peers));
            first = __shfl_sync(peers, first, leader);
            bin_of[j] = bin;
            if (pos_wide)
                static_cast<u64 *>(pos_in_bin)[j] = first + rank;
            else
                static_cast<unsigned *>(pos_in_bin)[j] = (unsigned)(first + rank);
        }
    }
}

/* The sorted point set leaves the scatter as one record per point: the coordinates (dim
 * reals) then the input index (one u32 word, two with pos_wide), padded to rec_words = 2, 4 or
 * 8 words (the host's wf_rec_words). One record is one vector store and lies in one 32-byte
 * sector, so the random half of the sort costs one L2 transaction per point; before, the
 * scatter wrote an index (one random store) and a gather read each coordinate through it (one
 * random load per dim): on the H100 at M = 1e7 those random transactions were the whole cost
 * of setpts (3D uniform: 0.35 + 0.85 ms). */
#define WF_REC_MAX 8

/* Per input point j: bin_start[bin_of[j]] + pos_in_bin[j] = its sorted position dst; the
 * record (x[j], y[j], z[j], j) goes to rec[dst]. A non-finite point sets *bad_flag and gets
 * the coordinates 0 (bin 0, where wf_bin_count_p counted it), so nothing downstream can index
 * out of range with it; execute then writes NaN to every output. dst >= M (only if the counts
 * were inconsistent) is skipped. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(bin_scatter)(i64 M, i32 dim_arg, const wf_real *__restrict__ x,
                          const wf_real *__restrict__ y, const wf_real *__restrict__ z,
                          const i32 *__restrict__ bin_of, const void *__restrict__ pos_in_bin,
                          i32 pos_wide, const u64 *__restrict__ bin_start, i32 rec_words,
                          unsigned *__restrict__ rec, i32 *bad_flag) {
    const i32 dim = WF_DIM_OF(dim_arg);
    const u64 *pos64 = static_cast<const u64 *>(pos_in_bin);
    const unsigned *pos32 = static_cast<const unsigned *>(pos_in_bin);
    const int cw = (int)(sizeof(wf_real) / 4); /* words per coordinate */
    WF_GRID_STRIDE(j, M) {
        wf_real c[3];
        c[0] = __ldg(x + j);
        c[1] = dim >= 2 ? __ldg(y + j) : (wf_real)0;
        c[2] = dim >= 3 ? __ldg(z + j) : (wf_real)0;
        if (!(isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2]))) {
            *bad_flag = 1;
            c[0] = c[1] = c[2] = (wf_real)0;
        }
        const i32 b = __ldg(bin_of + j);
        const u64 pos = pos_wide ? __ldg(pos64 + j) : (u64)__ldg(pos32 + j);
        const u64 dst = __ldg(bin_start + b) + pos;
        if (dst >= (u64)M)
            continue;
        unsigned w[WF_REC_MAX] = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u};
        int n = 0;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (d < dim) {
                if (cw == 1) {
                    w[n++] = __float_as_uint((float)c[d]);
                } else {
                    const u64 bits = (u64)__double_as_longlong((double)c[d]);
                    w[n++] = (unsigned)bits;
                    w[n++] = (unsigned)(bits >> 32);
                }
            }
        }
        w[n++] = (unsigned)j;
        if (pos_wide)
            w[n] = (unsigned)((u64)j >> 32);
        unsigned *r = rec + dst * (u64)rec_words;
        if (rec_words == 2) {
            *reinterpret_cast<uint2 *>(r) = make_uint2(w[0], w[1]);
        } else {
            *reinterpret_cast<uint4 *>(r) = make_uint4(w[0], w[1], w[2], w[3]);
            if (rec_words == 8)
                *reinterpret_cast<uint4 *>(r + 4) = make_uint4(w[4], w[5], w[6], w[7]);
        }
    }
}

/* Largest b in [0, nbins) with nsub_start[b] <= s (nsub_start non-decreasing, nsub_start[0] =
 * 0): the bin of subproblem s (empty bins before it share its start and lose to it). */
__device__ __forceinline__ i32 wf_subprob_bin_of(i64 s, i64 nbins, const u64 *__restrict__ start) {
    i64 lo = 0, hi = nbins; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        const i64 mid = lo + (hi - lo) / 2;
        if ((i64)__ldg(start + mid) <= s)
            lo = mid;
        else
            hi = mid;
    }
    return (i32)lo;
}

/* Two jobs in one grid-stride pass over max(M, sub_cap) items, every access coalesced:
 * - the records of wf_bin_scatter_p split into the arrays spread/interp read: xs[i], ys[i],
 *   zs[i] (the used dims; unused ones may be NULL) and sort_idx[i] = the point's input index,
 *   its index within its set when the points are sets of set_M < M points (ABI.md, "Point
 *   sets"). An index >= M (a record the scatter skipped: never, for consistent counts) becomes
 *   point 0 at coordinate 0, so nothing downstream reads out of range.
 * - SM (subprob_bin not NULL): subprob_bin[s] = the bin of subproblem s, for
 *   s < min(*n_subprob, sub_cap), by binary search in nsub_start (wf_bin_scan). */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(sort_unpack)(i64 M, i32 dim_arg, const unsigned *__restrict__ rec, i32 rec_words,
                          i32 pos_wide, i64 *__restrict__ sort_idx, wf_real *__restrict__ xs,
                          wf_real *__restrict__ ys, wf_real *__restrict__ zs, i64 nbins,
                          const u64 *__restrict__ nsub_start, const u64 *__restrict__ n_subprob,
                          i64 sub_cap, i32 *__restrict__ subprob_bin, i64 set_M) {
    const i32 dim = WF_DIM_OF(dim_arg);
    i64 nsub = 0;
    if (subprob_bin) {
        const u64 n = __ldg(n_subprob);
        nsub = n < (u64)sub_cap ? (i64)n : sub_cap;
    }
    const int cw = (int)(sizeof(wf_real) / 4);
    const i64 n_items = M > nsub ? M : nsub;
    WF_GRID_STRIDE(i, n_items) {
        if (i < M) {
            unsigned w[WF_REC_MAX];
            const unsigned *r = rec + i * (i64)rec_words;
            if (rec_words == 2) {
                const uint2 a = __ldg(reinterpret_cast<const uint2 *>(r));
                w[0] = a.x, w[1] = a.y, w[2] = w[3] = w[4] = w[5] = w[6] = w[7] = 0u;
            } else {
                const uint4 a = __ldg(reinterpret_cast<const uint4 *>(r));
                w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = w[5] = w[6] = w[7] = 0u;
                if (rec_words == 8) {
                    const uint4 b = __ldg(reinterpret_cast<const uint4 *>(r + 4));
                    w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
                }
            }
            wf_real c[3] = {(wf_real)0, (wf_real)0, (wf_real)0};
            int n = 0;
#pragma unroll
            for (int d = 0; d < 3; ++d) {
                if (d < dim) {
                    if (cw == 1) {
                        c[d] = (wf_real)__uint_as_float(w[n++]);
                    } else {
                        const u64 lo = w[n++];
                        const u64 hi = w[n++];
                        c[d] = (wf_real)__longlong_as_double((long long)(lo | (hi << 32)));
                    }
                }
            }
            u64 j = w[n++];
            if (pos_wide)
                j |= (u64)w[n] << 32;
            if (j >= (u64)M) { /* never, for a consistent sort */
                j = 0;
                c[0] = c[1] = c[2] = (wf_real)0;
            }
            if (set_M > 0 && set_M < M) /* the index within the point's set */
                j -= (u64)(wf_div((i64)j, set_M) * set_M);
            sort_idx[i] = (i64)j;
            xs[i] = c[0];
            if (dim >= 2)
                ys[i] = c[1];
            if (dim >= 3)
                zs[i] = c[2];
        }
        if (i < nsub)
            subprob_bin[i] = wf_subprob_bin_of(i, nbins, nsub_start);
    }
}

#endif /* WF_PREP_BIN */

/* ---- deconvolve / amplify ---- */

#if WF_PREP_PART != WF_PREP_BIN

/* q = a / b, r = a % b for a >= 0, b > 0: 32-bit when both fit (a 64-bit division is a
 * ~70-instruction subroutine call) */
__device__ __forceinline__ void wf_divmod(i64 a, i64 b, i64 &q, i64 &r) {
    if (((u64)a | (u64)b) <= 0xffffffffull) {
        const unsigned qa = (unsigned)a / (unsigned)b;
        q = qa;
        r = (unsigned)a - qa * (unsigned)b;
    } else {
        q = a / b;
        r = a - q * b;
    }
}

/* The half kernels' modeord carries the exponent's sign in this bit (kernels/ABI.md): set, they
 * conjugate what they write (R2C is the -i transform and C2R the +i one; a real grid's
 * transform of the other sign is the conjugate). */
#define WF_HALF_CONJ 2

/* Mode k of index i along a dimension of N modes (ABI.md: kmin = -(N/2); modeord 0 is CMCL
 * order i = k - kmin, modeord 1 is FFT order i = k >= 0 ? k : N + k). */
__device__ __forceinline__ i64 wf_mode_of_index(i64 i, i64 N, i32 modeord) {
    if (modeord == 0)
        return i - N / 2;
    return i < (N + 1) / 2 ? i : i - N;
}
__device__ __forceinline__ i64 wf_index_of_mode(i64 k, i64 N, i32 modeord) {
    if (modeord == 0)
        return k + N / 2;
    return k >= 0 ? k : N + k;
}

/* Fine-grid index l in [0, nf) -> mode k, or false when l is not a mode (N modes). */
__device__ __forceinline__ bool wf_mode_of_fine(i64 l, i64 N, i64 nf, i64 &k) {
    if (l <= (N - 1) / 2) {
        k = l;
        return true;
    }
    if (l >= nf - N / 2) {
        k = l - nf;
        return true;
    }
    return false;
}

__device__ __forceinline__ wf_real wf_fac_at(const wf_real *__restrict__ f, i64 k) {
    return __ldg(f + (k < 0 ? -k : k));
}

/* A plan that may spread with several widths (kernels/ABI.md, "Widths from the points"): the
 * factors of the width *w_sel names, fac_tab[3 * *w_sel + d] for dim d; w_sel NULL: fac1..3. */
__device__ __forceinline__ void wf_select_factors(const i32 *w_sel, const u64 *fac_tab,
                                                  const wf_real *__restrict__ &fac1,
                                                  const wf_real *__restrict__ &fac2,
                                                  const wf_real *__restrict__ &fac3) {
    if (!w_sel)
        return;
    const i64 i = 3 * (i64)__ldg(w_sel);
    fac1 = reinterpret_cast<const wf_real *>(__ldg(fac_tab + i));
    fac2 = reinterpret_cast<const wf_real *>(__ldg(fac_tab + i + 1));
    fac3 = reinterpret_cast<const wf_real *>(__ldg(fac_tab + i + 2));
}

#if WF_PREP_PART == WF_PREP_DECONVOLVE
/* Dimensions 2 and 3 of one mode (i2, i3) for deconvolve and deconvolve_half: their factors
 * into f, their fine-grid row (rows of row_len: nf1, or nf1/2 + 1 for the half spectrum) into l. */
__device__ __forceinline__ void wf_deconv_rows(i32 dim, i64 i2, i64 i3, i64 N2, i64 N3,
                                               i64 row_len, i64 nf2, i64 nf3,
                                               const wf_real *__restrict__ fac2,
                                               const wf_real *__restrict__ fac3, i32 modeord,
                                               wf_real &f, i64 &l) {
    if (dim >= 2) {
        const i64 k2 = wf_mode_of_index(i2, N2, modeord);
        f *= wf_fac_at(fac2, k2);
        l += row_len * (k2 >= 0 ? k2 : nf2 + k2);
    }
    if (dim >= 3) {
        const i64 k3 = wf_mode_of_index(i3, N3, modeord);
        f *= wf_fac_at(fac3, k3);
        l += row_len * nf2 * (k3 >= 0 ? k3 : nf3 + k3);
    }
}

/* Type 1 after the FFT: fk[t][i(k)] = fw[t][l(k)] * fac1[|k1|]*fac2[|k2|]*fac3[|k3|], one
 * thread per mode (the mode array is small: per-element 32-bit index splitting measured faster
 * here than row chunks, which idle half a block when N1 < blockDim.x), the factor reused for
 * every transform. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(deconvolve)(i32 dim_arg, i64 N1, i64 N2, i64 N3, i64 nf1, i64 nf2, i64 nf3, i64 ntransf,
                         const wf_real *__restrict__ fac1, const wf_real *__restrict__ fac2,
                         const wf_real *__restrict__ fac3, i32 modeord,
                         const wf_cplx *__restrict__ fw, wf_cplx *__restrict__ fk,
                         const i32 *w_sel, const u64 *fac_tab) {
    const i32 dim = WF_DIM_OF(dim_arg);
    wf_select_factors(w_sel, fac_tab, fac1, fac2, fac3);
    const i64 Nprod = N1 * N2 * N3;
    const i64 nfprod = nf1 * nf2 * nf3;
    WF_GRID_STRIDE(idx, Nprod) {
        i64 row, i1, i2, i3;
        wf_divmod(idx, N1, row, i1);
        wf_divmod(row, N2, i3, i2);
        const i64 k1 = wf_mode_of_index(i1, N1, modeord);
        wf_real f = wf_fac_at(fac1, k1);
        i64 l = k1 >= 0 ? k1 : nf1 + k1;
        wf_deconv_rows(dim, i2, i3, N2, N3, nf1, nf2, nf3, fac2, fac3, modeord, f, l);
        for (i64 t = 0; t < ntransf; ++t) {
            const wf_cplx v = wf_ldg(fw + t * nfprod + l);
            wf_cplx r;
            r.x = v.x * f;
            r.y = v.y * f;
            fk[t * Nprod + idx] = r;
        }
    }
}

/* The same for real data (type 1 with real strengths, R2C FFT): the half spectrum fwh, rows of
 * nf1h = nf1/2 + 1 (per transform nf1h*nf2*nf3 elements), into the half modes fk, H1 = N1/2 + 1
 * along dimension 1 holding k1 = i1 = 0 .. N1/2 whatever modeord (dims 2 and 3 by modeord as
 * above): fk[t][i3][i2][k1] = fwh[t][l3][l2][k1] * fac1[k1]*fac2[|k2|]*fac3[|k3|]. fac1 has
 * N1/2 + 1 entries, as for complex data. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(deconvolve_half)(i32 dim_arg, i64 N1, i64 N2, i64 N3, i64 nf1, i64 nf2, i64 nf3,
                              i64 ntransf, const wf_real *__restrict__ fac1,
                              const wf_real *__restrict__ fac2, const wf_real *__restrict__ fac3,
                              i32 modeord, const wf_cplx *__restrict__ fw, wf_cplx *__restrict__ fk,
                              const i32 *w_sel, const u64 *fac_tab) {
    const i32 dim = WF_DIM_OF(dim_arg);
    wf_select_factors(w_sel, fac_tab, fac1, fac2, fac3);
    const bool conj = (modeord & WF_HALF_CONJ) != 0; /* the exponent's sign (ABI.md) */
    modeord &= 1;
    const i64 H1 = N1 / 2 + 1, nf1h = nf1 / 2 + 1;
    const i64 Nprod = H1 * N2 * N3;
    const i64 nfprod = nf1h * nf2 * nf3;
    WF_GRID_STRIDE(idx, Nprod) {
        i64 row, k1, i2, i3;
        wf_divmod(idx, H1, row, k1);
        wf_divmod(row, N2, i3, i2);
        wf_real f = __ldg(fac1 + k1);
        i64 l = k1;
        wf_deconv_rows(dim, i2, i3, N2, N3, nf1h, nf2, nf3, fac2, fac3, modeord, f, l);
        for (i64 t = 0; t < ntransf; ++t) {
            const wf_cplx v = wf_ldg(fw + t * nfprod + l);
            wf_cplx r;
            r.x = v.x * f;
            r.y = conj ? -(v.y * f) : v.y * f;
            fk[t * Nprod + idx] = r;
        }
    }
}

#endif /* WF_PREP_DECONVOLVE */

#if WF_PREP_PART == WF_PREP_AMPLIFY
/* Fine-grid row (l2, l3) for amplify and amplify_half: whether it holds modes, and if so its
 * dims-2/3 factor into frow and its mode-array row offset (rows of row_len: N1, or N1/2 + 1 for
 * the half modes) into irow. */
__device__ __forceinline__ bool wf_amplify_row(i32 dim, i64 l2, i64 l3, i64 row_len, i64 N2,
                                               i64 N3, i64 nf2, i64 nf3,
                                               const wf_real *__restrict__ fac2,
                                               const wf_real *__restrict__ fac3, i32 modeord,
                                               wf_real &frow, i64 &irow) {
    bool row_modes = true;
    if (dim >= 2) {
        i64 k2 = 0;
        row_modes = wf_mode_of_fine(l2, N2, nf2, k2);
        if (row_modes) {
            frow *= wf_fac_at(fac2, k2);
            irow += row_len * wf_index_of_mode(k2, N2, modeord);
        }
    }
    if (dim >= 3 && row_modes) {
        i64 k3 = 0;
        row_modes = wf_mode_of_fine(l3, N3, nf3, k3);
        if (row_modes) {
            frow *= wf_fac_at(fac3, k3);
            irow += row_len * N2 * wf_index_of_mode(k3, N3, modeord);
        }
    }
    return row_modes;
}

/* Type 2 before the FFT: every fine-grid element l gets fk[t][i(k)] * fac(k) when each l_d is a
 * mode (l_d <= (N_d-1)/2: k_d = l_d; l_d >= nf_d - N_d/2: k_d = l_d - nf_d), else 0. Writing the
 * zeros here saves the host a memset of the fine grid. The grid is walked as (row, chunk)
 * items — a row is one line along dimension 1, a chunk blockDim.x consecutive elements of it —
 * one item per block and grid-stride step, so index splitting and the row's mode logic are
 * block-uniform. Any grid size is correct. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(amplify)(i32 dim_arg, i64 N1, i64 N2, i64 N3, i64 nf1, i64 nf2, i64 nf3, i64 ntransf,
                      const wf_real *__restrict__ fac1, const wf_real *__restrict__ fac2,
                      const wf_real *__restrict__ fac3, i32 modeord, const wf_cplx *__restrict__ fk,
                      wf_cplx *__restrict__ fw, const i32 *w_sel, const u64 *fac_tab) {
    const i32 dim = WF_DIM_OF(dim_arg);
    wf_select_factors(w_sel, fac_tab, fac1, fac2, fac3);
    const i64 Nprod = N1 * N2 * N3;
    const i64 nfprod = nf1 * nf2 * nf3;
    const i64 nchunk = (nf1 + blockDim.x - 1) / blockDim.x;
    const i64 nitems = nchunk * nf2 * nf3;
    wf_cplx zero;
    zero.x = 0;
    zero.y = 0;
    for (i64 w = blockIdx.x; w < nitems; w += gridDim.x) {
        /* block-uniform: the fine-grid row (l2, l3), whether it holds modes, their factor and
         * mode-array row offset */
        i64 row, chunk, l2, l3;
        wf_divmod(w, nchunk, row, chunk);
        wf_divmod(row, nf2, l3, l2);
        const i64 l1 = chunk * blockDim.x + threadIdx.x;
        wf_real frow = (wf_real)1;
        i64 irow = 0;
        const bool row_modes =
            wf_amplify_row(dim, l2, l3, N1, N2, N3, nf2, nf3, fac2, fac3, modeord, frow, irow);
        if (l1 >= nf1)
            continue;
        const i64 l = row * nf1 + l1;
        i64 k1 = 0;
        if (row_modes && wf_mode_of_fine(l1, N1, nf1, k1)) {
            const wf_real f = frow * wf_fac_at(fac1, k1);
            const i64 i = irow + wf_index_of_mode(k1, N1, modeord);
            for (i64 t = 0; t < ntransf; ++t) {
                const wf_cplx v = wf_ldg(fk + t * Nprod + i);
                wf_cplx r;
                r.x = v.x * f;
                r.y = v.y * f;
                fw[t * nfprod + l] = r;
            }
        } else {
            for (i64 t = 0; t < ntransf; ++t)
                fw[t * nfprod + l] = zero;
        }
    }
}

/* The same for real data (type 2 with real output, C2R FFT): the half modes fk (H1 = N1/2 + 1
 * along dimension 1, k1 = l1 whatever modeord) into EVERY element of the half spectrum fwh (rows
 * of nf1h = nf1/2 + 1): fk * fac where l1 <= N1/2 and (l2, l3) are mode rows (as above), else 0.
 * Walked as wf_amplify_p walks the full grid, (row, chunk) items over rows of nf1h. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(amplify_half)(i32 dim_arg, i64 N1, i64 N2, i64 N3, i64 nf1, i64 nf2, i64 nf3,
                           i64 ntransf, const wf_real *__restrict__ fac1,
                           const wf_real *__restrict__ fac2, const wf_real *__restrict__ fac3,
                           i32 modeord, const wf_cplx *__restrict__ fk, wf_cplx *__restrict__ fw,
                           const i32 *w_sel, const u64 *fac_tab) {
    const i32 dim = WF_DIM_OF(dim_arg);
    wf_select_factors(w_sel, fac_tab, fac1, fac2, fac3);
    const bool conj = (modeord & WF_HALF_CONJ) != 0; /* the exponent's sign (ABI.md) */
    modeord &= 1;
    const i64 H1 = N1 / 2 + 1, nf1h = nf1 / 2 + 1;
    const i64 Nprod = H1 * N2 * N3;
    const i64 nfprod = nf1h * nf2 * nf3;
    const i64 nchunk = (nf1h + blockDim.x - 1) / blockDim.x;
    const i64 nitems = nchunk * nf2 * nf3;
    wf_cplx zero;
    zero.x = 0;
    zero.y = 0;
    for (i64 w = blockIdx.x; w < nitems; w += gridDim.x) {
        i64 row, chunk, l2, l3;
        wf_divmod(w, nchunk, row, chunk);
        wf_divmod(row, nf2, l3, l2);
        const i64 l1 = chunk * blockDim.x + threadIdx.x;
        wf_real frow = (wf_real)1;
        i64 irow = 0;
        const bool row_modes =
            wf_amplify_row(dim, l2, l3, H1, N2, N3, nf2, nf3, fac2, fac3, modeord, frow, irow);
        if (l1 >= nf1h)
            continue;
        const i64 l = row * nf1h + l1;
        if (row_modes && l1 < H1) {
            const wf_real f = frow * __ldg(fac1 + l1);
            for (i64 t = 0; t < ntransf; ++t) {
                const wf_cplx v = wf_ldg(fk + t * Nprod + irow + l1);
                wf_cplx r;
                r.x = v.x * f;
                r.y = conj ? -(v.y * f) : v.y * f;
                fw[t * nfprod + l] = r;
            }
        } else {
            for (i64 t = 0; t < ntransf; ++t)
                fw[t * nfprod + l] = zero;
        }
    }
}
#endif /* WF_PREP_AMPLIFY */
#endif /* !WF_PREP_BIN */
