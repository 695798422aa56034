/*
 * standin_cuda_kernels.c — the kernels the stand-in driver computes on the host (standin_cuda.h):
 * the binning kernels whose totals a checked setpts (and warpfft_setpts_check) reads back —
 * wf_bin_count_p (every point into its bin of its point set), the one-block wf_bin_scan, and module
 * scan_big's three passes — and type 3's bounds (wf_t3_minmax_p, which setpts3 reads back), with
 * their arguments as kernels/ABI.md lists them, every array bounds-checked. Nothing reads the
 * stable sort's ranks back, but its passes work in scratch the host carves out of other arrays:
 * they are computed here too (module sort_stable), every array bounds-checked; and the OD
 * spreader's launch is checked against the conditions its kernel traps on and the arrays it
 * reads and writes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "standin_cuda.h"

/* Launch argument i, a device pointer to `bytes` bytes: the pointer, or NULL (and a violation)
 * when the range is not inside one live allocation. */
static void *arg_ptr(void **args, int i, size_t bytes, const char *what) {
    CUdeviceptr p = *(CUdeviceptr *)args[i];
    return standin_check_range(dptr(p), bytes, what) ? dptr(p) : NULL;
}
/* Device address p, `bytes` long: the pointer, or NULL (and a violation) as arg_ptr. */
static void *at_ptr(CUdeviceptr p, size_t bytes, const char *what) {
    return standin_check_range(dptr(p), bytes, what) ? dptr(p) : NULL;
}
/* The subproblems of a bin of c points: ceil(c / maxsub); 0 without a maxsub. */
static uint64_t ceil_div(uint64_t c, long long maxsub) {
    return maxsub > 0 ? (c + (uint64_t)maxsub - 1) / (uint64_t)maxsub : 0;
}
/* The exclusive scans of bins [lo, hi): their starts into out from *s and, when nsub is given,
 * their first subproblems (ceil(count / maxsub) each) into nsub from *ns; *s and *ns end past
 * the range. */
static void scan_bins(const uint64_t *in, uint64_t *out, uint64_t *nsub, long long maxsub,
                      long long lo, long long hi, uint64_t *s, uint64_t *ns) {
    for (long long i = lo; i < hi; i++) {
        out[i] = *s;
        *s += in[i];
        if (nsub) {
            nsub[i] = *ns;
            *ns += ceil_div(in[i], maxsub);
        }
    }
}
/* The scans' result block: points, subproblems (at most cap) and the overflow flag. */
static void scan_result(uint64_t *result, uint64_t s, uint64_t ns, long long maxsub,
                        long long cap) {
    result[0] = s;
    result[1] = ns < (uint64_t)cap ? ns : (uint64_t)cap;
    result[2] = (uint64_t)(maxsub > 0 && ns > (uint64_t)cap) << 32;
}
/* Module scan_big's three passes (tiles of 1024 bins: WF_SCAN_BIG_TILE): "reduce" writes the
 * tile sums, "tiles" scans them in place and writes the result block, "down" adds the tile
 * offsets to the scans within each tile. */
static void emulate_scan_big(const char *pass, void **args) {
    const long long tile = 1024;
    long long n = *(long long *)args[0], nt = (n + tile - 1) / tile;
    if (strcmp(pass, "reduce") == 0) {
        long long maxsub = *(long long *)args[2];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_scan_big_reduce bin_count");
        uint64_t *sums = arg_ptr(args, 3, (size_t)nt * 16, "wf_scan_big_reduce tile_sums");
        if (!in || !sums)
            return;
        for (long long t = 0; t < nt; t++) {
            sums[t] = sums[nt + t] = 0;
            for (long long i = t * tile; i < n && i < (t + 1) * tile; i++) {
                sums[t] += in[i];
                sums[nt + t] += ceil_div(in[i], maxsub);
            }
        }
    } else if (strcmp(pass, "tiles") == 0) {
        long long maxsub = *(long long *)args[2], cap = *(long long *)args[3];
        uint64_t *sums = arg_ptr(args, 1, (size_t)nt * 16, "wf_scan_big_tiles tile_sums");
        uint64_t *result = arg_ptr(args, 4, 24, "wf_scan_big_tiles result");
        if (!sums || !result)
            return;
        uint64_t s = 0, ns = 0;
        for (long long t = 0; t < nt; t++) {
            uint64_t a = sums[t], b = sums[nt + t];
            sums[t] = s;
            sums[nt + t] = ns;
            s += a;
            ns += b;
        }
        scan_result(result, s, ns, maxsub, cap);
    } else if (strcmp(pass, "down") == 0) {
        long long maxsub = *(long long *)args[3];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_scan_big_down bin_count");
        uint64_t *out = arg_ptr(args, 2, (size_t)n * 8, "wf_scan_big_down bin_start");
        uint64_t *nsub =
            maxsub > 0 ? arg_ptr(args, 4, (size_t)n * 8, "wf_scan_big_down nsub") : NULL;
        uint64_t *sums = arg_ptr(args, 5, (size_t)nt * 16, "wf_scan_big_down tile_sums");
        if (!in || !out || !sums || (maxsub > 0 && !nsub))
            return;
        for (long long t = 0; t < nt; t++) {
            uint64_t s = sums[t], ns = sums[nt + t];
            scan_bins(in, out, nsub, maxsub, t * tile, n < (t + 1) * tile ? n : (t + 1) * tile, &s,
                      &ns);
        }
    }
}

/* Type 3's wf_t3_minmax_<p> (kernels/type3.cu): combines the order-preserving keys of the
 * finite coordinates' minima and maxima into keys[d], keys[3 + d]; a NaN/inf sets *bad. */
static uint64_t t3_key(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}
static void emulate_t3_minmax(int f64, void **args) {
    long long n = *(long long *)args[0];
    int dim = *(int32_t *)args[1];
    size_t real = f64 ? 8 : 4;
    uint64_t *keys = arg_ptr(args, 5, 6 * 8, "wf_t3_minmax keys");
    int32_t *bad = arg_ptr(args, 6, 4, "wf_t3_minmax bad_flag");
    const void *c[3] = {NULL, NULL, NULL};
    for (int d = 0; d < dim && d < 3 && n > 0; d++)
        if (!(c[d] = arg_ptr(args, 2 + d, (size_t)n * real, "wf_t3_minmax coordinates")))
            return;
    if (!keys || !bad)
        return;
    for (long long j = 0; j < n; j++)
        for (int d = 0; d < dim && d < 3; d++) {
            double v = f64 ? ((const double *)c[d])[j] : ((const float *)c[d])[j];
            if (v - v != 0) { /* NaN or infinite */
                *bad = 1;
                continue;
            }
            uint64_t k = t3_key(v);
            keys[d] = k < keys[d] ? k : keys[d];
            keys[3 + d] = k > keys[3 + d] ? k : keys[3 + d];
        }
}

/* ---- module sort_stable (kernels/sort_stable.cu): tiles of 2048 items, 8-bit digits ---- */
#define ST_TILE 2048

static void check_block(const char *name, const sc_geom *g, unsigned want) {
    if (g->bx != want)
        sc_named_violation("traps: blocks of other than 256 threads", name);
}

static unsigned st_digit(int32_t key, int shift) {
    return ((uint32_t)key >> shift) & 255u;
}

/* wf_stable_hist(M, keys, shift, ntiles, hist). */
static void emulate_stable_hist(void **args) {
    long long M = *(long long *)args[0], nt = *(long long *)args[3];
    int shift = *(int32_t *)args[2];
    const int32_t *keys = arg_ptr(args, 1, (size_t)M * 4, "wf_stable_hist keys");
    uint64_t *hist = arg_ptr(args, 4, (size_t)256 * (size_t)nt * 8, "wf_stable_hist hist");
    if (!keys || !hist)
        return;
    memset(hist, 0, (size_t)256 * (size_t)nt * 8);
    for (long long i = 0; i < M; i++)
        hist[(long long)st_digit(keys[i], shift) * nt + i / ST_TILE]++;
}

/* wf_stable_rowscan(ntiles, hist, digit_total). */
static void emulate_stable_rowscan(void **args) {
    long long nt = *(long long *)args[0];
    uint64_t *hist = arg_ptr(args, 1, (size_t)256 * (size_t)nt * 8, "wf_stable_rowscan hist");
    uint64_t *total = arg_ptr(args, 2, 256 * 8, "wf_stable_rowscan digit_total");
    if (!hist || !total)
        return;
    for (int d = 0; d < 256; d++) {
        uint64_t s = 0;
        for (long long t = 0; t < nt; t++) {
            uint64_t v = hist[d * nt + t];
            hist[d * nt + t] = s;
            s += v;
        }
        total[d] = s;
    }
}

/* wf_stable_scatter(M, keys_in, vals_in, shift, ntiles, hist, digit_total, keys_out, vals_out,
 * pos_wide, bin_start, pos_in_bin). */
static void emulate_stable_scatter(void **args) {
    long long M = *(long long *)args[0], nt = *(long long *)args[4];
    int shift = *(int32_t *)args[3], wide = *(int32_t *)args[9];
    size_t vb = wide ? 8 : 4, m = (size_t)M;
    int last = *(CUdeviceptr *)args[10] != 0, first = *(CUdeviceptr *)args[2] == 0;
    const int32_t *keys = arg_ptr(args, 1, m * 4, "wf_stable_scatter keys_in");
    const void *vals = first ? NULL : arg_ptr(args, 2, m * vb, "wf_stable_scatter vals_in");
    uint64_t *hist = arg_ptr(args, 5, (size_t)256 * (size_t)nt * 8, "wf_stable_scatter hist");
    const uint64_t *total = arg_ptr(args, 6, 256 * 8, "wf_stable_scatter digit_total");
    int32_t *kout = last ? NULL : arg_ptr(args, 7, m * 4, "wf_stable_scatter keys_out");
    void *vout = last ? NULL : arg_ptr(args, 8, m * vb, "wf_stable_scatter vals_out");
    void *pos = last ? arg_ptr(args, 11, m * vb, "wf_stable_scatter pos_in_bin") : NULL;
    if (!keys || (!first && !vals) || !hist || !total || (last ? !pos : !kout || !vout))
        return;
    if ((kout && ((void *)kout == (void *)keys || (void *)kout == vals)) ||
        (vout && (vout == (void *)keys || vout == vals)))
        sc_named_violation("an output aliases an input", "wf_stable_scatter");
    uint64_t start[256], run[256], sum = 0;
    for (int d = 0; d < 256; d++) {
        start[d] = sum;
        sum += total[d];
    }
    for (long long t = 0; t < nt; t++) {
        for (int d = 0; d < 256; d++)
            run[d] = start[d] + hist[d * nt + t];
        for (long long i = t * ST_TILE; i < M && i < (t + 1) * ST_TILE; i++) {
            unsigned d = st_digit(keys[i], shift);
            uint64_t dst = run[d]++;
            uint64_t v = first  ? (uint64_t)i
                         : wide ? ((const uint64_t *)vals)[i]
                                : ((const uint32_t *)vals)[i];
            if (dst >= (uint64_t)M) {
                sc_named_violation("a destination past M", "wf_stable_scatter");
                return;
            }
            if (last) {
                CUdeviceptr bs = *(CUdeviceptr *)args[10] + (CUdeviceptr)keys[i] * 8;
                const uint64_t *b = at_ptr(bs, 8, "wf_stable_scatter bin_start");
                if (!b || v >= (uint64_t)M)
                    return;
                if (wide)
                    ((uint64_t *)pos)[v] = dst - *b;
                else
                    ((uint32_t *)pos)[v] = (uint32_t)(dst - *b);
            } else {
                kout[dst] = keys[i];
                if (wide)
                    ((uint64_t *)vout)[dst] = v;
                else
                    ((uint32_t *)vout)[dst] = (uint32_t)v;
            }
        }
    }
}

/* ---- the OD spreader (kernels/ABI.md, "Modules si_..._spread_od") ---- */

/* wf_spread_od_{d}d_{p}_w{w}: the arrays it reads and writes, and what its kernel traps on
 * (block size, tile and pitch, too little dynamic shared memory for its warps). The real
 * modules' (p = f32r, f64r) strengths and grid are reals, and so is their shared tile. */
static void check_od(const char *name, void **args, const sc_geom *g) {
    int dim = 0, prec = 0, w = 0;
    char sep = 0;
    if (sscanf(name, "wf_spread_od_%dd_f%d%c", &dim, &prec, &sep) != 3 ||
        sscanf(name + strcspn(name + 13, "w") + 13, "w%d", &w) != 1) {
        sc_named_violation("an OD spreader's name out of the rule", name);
        return;
    }
    size_t rb = prec == 64 ? 8 : 4, cb = sep == 'r' ? rb : 2 * rb;
    long long M = *(long long *)args[0], nt = *(long long *)args[8];
    long long nf[3] = {*(long long *)args[5], *(long long *)args[6], *(long long *)args[7]};
    long long nb[3] = {*(long long *)args[14], *(long long *)args[15], *(long long *)args[16]};
    int tl[3] = {*(int32_t *)args[19], *(int32_t *)args[20], *(int32_t *)args[21]};
    int pitch = *(int32_t *)args[22];
    for (int d = dim; d < 3; d++)
        tl[d] = 1;
    unsigned nw = g->bx / 32;
    size_t cells = (size_t)pitch * (size_t)tl[1] * (size_t)tl[2];
    size_t warp = (cells * cb + 15) / 16 * 16 + 32 * (cb + 16 + (size_t)dim * (size_t)w * rb) + 672;
    if (g->bx % 32 != 0 || g->bx > 256 || tl[0] < 1 || tl[1] < 1 || tl[2] < 1 || pitch < tl[0] ||
        g->shared < nw * warp)
        sc_named_violation("traps: block, tile, pitch or shared memory out of its contract", name);
    for (int d = 0; d < dim; d++)
        if (M > 0)
            arg_ptr(args, 1 + d, (size_t)M * rb, "wf_spread_od coordinates");
    arg_ptr(args, 4, (size_t)(M * nt) * cb, "wf_spread_od strengths");
    arg_ptr(args, 9, (size_t)M * 8, "wf_spread_od sort_idx");
    size_t nbins = (size_t)(nb[0] * nb[1] * nb[2]);
    arg_ptr(args, 17, nbins * 8, "wf_spread_od bin_start");
    arg_ptr(args, 18, nbins * 8, "wf_spread_od bin_count");
    arg_ptr(args, 23, (size_t)(nf[0] * nf[1] * nf[2] * nt) * cb, "wf_spread_od fw");
}

/* ---- the mode steps and the NaN pass (kernels/ABI.md): the arrays they read and write ---- */

/* wf_deconvolve_p / wf_amplify_p and, for real data, their _half forms: the fine grid (or the
 * half spectrum, rows of nf1/2 + 1) and the modes (or the half modes, N1/2 + 1 along dimension
 * 1), complex, ntransf of each; the factors' N_d/2 + 1 reals. */
static void check_modes(const char *name, void **args) {
    int half = strstr(name, "_half_") != NULL, amplify = strncmp(name, "wf_amplify", 10) == 0;
    size_t rb = strstr(name, "f64") ? 8 : 4, cb = 2 * rb;
    int dim = *(int32_t *)args[0];
    long long N[3] = {*(long long *)args[1], *(long long *)args[2], *(long long *)args[3]};
    long long nf[3] = {*(long long *)args[4], *(long long *)args[5], *(long long *)args[6]};
    long long nt = *(long long *)args[7];
    int modeord = *(int32_t *)args[11];
    if (dim < 1 || dim > 3 || (modeord & ~(half ? 3 : 1)) != 0) {
        sc_named_violation("a mode step's dim or modeord out of its contract", name);
        return;
    }
    for (int d = 0; d < dim; d++)
        arg_ptr(args, 8 + d, (size_t)(N[d] / 2 + 1) * rb, "deconvolution factors");
    long long grid = (half ? nf[0] / 2 + 1 : nf[0]) * nf[1] * nf[2];
    long long modes = (half ? N[0] / 2 + 1 : N[0]) * N[1] * N[2];
    arg_ptr(args, amplify ? 12 : 13, (size_t)(modes * nt) * cb, "the modes (fk)");
    arg_ptr(args, amplify ? 13 : 12, (size_t)(grid * nt) * cb,
            half ? "the half spectrum" : "the fine grid");
}

/* wf_poison_u32: `words` u32 words at out, the flag. */
static void check_poison(void **args) {
    long long words = *(long long *)args[0];
    arg_ptr(args, 1, 4, "wf_poison_u32 flag");
    if (words > 0)
        arg_ptr(args, 2, (size_t)words * 4, "wf_poison_u32 outputs");
}

void sc_emulate(const char *name, void **args, const sc_geom *g) {
    if (sc_emulate_width(name, args, g))
        return;
    if (strncmp(name, "wf_deconvolve_", 14) == 0 || strncmp(name, "wf_amplify_", 11) == 0) {
        check_modes(name, args);
        return;
    }
    if (strcmp(name, "wf_poison_u32") == 0) {
        check_poison(args);
        return;
    }
    if (strcmp(name, "wf_stable_hist") == 0) {
        check_block(name, g, 256);
        emulate_stable_hist(args);
        return;
    }
    if (strcmp(name, "wf_stable_rowscan") == 0) {
        check_block(name, g, 256);
        emulate_stable_rowscan(args);
        return;
    }
    if (strcmp(name, "wf_stable_scatter") == 0) {
        check_block(name, g, 256);
        emulate_stable_scatter(args);
        return;
    }
    if (strncmp(name, "wf_spread_od_", 13) == 0) {
        check_od(name, args, g);
        return;
    }
    if (strncmp(name, "wf_bin_count_", 13) == 0) {
        /* every point into its bin of its point set (n_sets sets of M / n_sets points: the bins
         * of set s start at s * nb1*nb2*nb3; a non-finite point into bin 0), ranked in input
         * order: the occupancy wf_offsets_choose_p counts is the device's */
        long long M = *(long long *)args[0], n_sets = *(long long *)args[18];
        long long nbins = *(long long *)args[11] * *(long long *)args[12] * *(long long *)args[13];
        int wide = *(int32_t *)args[16];
        if (n_sets < 1 || M % n_sets != 0) {
            pthread_mutex_lock(&sc_lock);
            sc_violation("%s (%p): %zu points", "wf_bin_count: n_sets does not divide the points",
                         NULL, (size_t)M);
            pthread_mutex_unlock(&sc_lock);
            return;
        }
        long long set_M = M / n_sets;
        int32_t *bin_of = arg_ptr(args, 14, (size_t)M * 4, "wf_bin_count bin_of");
        void *pos = arg_ptr(args, 15, (size_t)M * (wide ? 8 : 4), "wf_bin_count pos");
        uint64_t *count =
            arg_ptr(args, 17, (size_t)(n_sets * nbins) * 8, "wf_bin_count count (every set)");
        if (!bin_of || !pos || !count)
            return;
        int dim = *(int32_t *)args[1], f64 = strstr(name, "f64") != NULL;
        const void *xs[3] = {NULL, NULL, NULL};
        for (int d = 0; d < dim && d < 3; d++)
            xs[d] = arg_ptr(args, 2 + d, (size_t)M * (f64 ? 8 : 4), "wf_bin_count coordinates");
        for (int d = 0; d < dim && d < 3; d++)
            if (!xs[d])
                return;
        for (long long j = 0; j < M; j++) {
            long long set = j / set_M, bin = 0, stride = 1;
            int finite = 1;
            for (int d = 0; d < dim && d < 3; d++) {
                double x = f64 ? ((const double *)xs[d])[j] : ((const float *)xs[d])[j];
                long long nf = *(long long *)args[5 + d], nb = *(long long *)args[11 + d];
                int bs = *(int32_t *)args[8 + d];
                finite = finite && isfinite(x);
                double u = sc_fold(finite ? x : 0.0, nf);
                long long b = bs > 0 ? (long long)(u / bs) : 0;
                b = b < 0 ? 0 : b >= nb ? nb - 1 : b;
                bin += b * stride;
                stride *= nb;
            }
            bin = finite ? bin : 0;
            uint64_t rank = count[set * nbins + bin]++;
            bin_of[j] = (int32_t)(set * nbins + bin);
            if (wide)
                ((uint64_t *)pos)[j] = rank;
            else
                ((uint32_t *)pos)[j] = (uint32_t)rank;
        }
    } else if (strcmp(name, "wf_bin_scan") == 0) {
        long long n = *(long long *)args[0], maxsub = *(long long *)args[3];
        long long cap = *(long long *)args[5];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_bin_scan bin_count");
        uint64_t *out = arg_ptr(args, 2, (size_t)n * 8, "wf_bin_scan bin_start");
        uint64_t *nsub = maxsub > 0 ? arg_ptr(args, 4, (size_t)n * 8, "wf_bin_scan nsub") : NULL;
        uint64_t *result = arg_ptr(args, 6, 24, "wf_bin_scan result");
        if (!in || !out || !result || (maxsub > 0 && !nsub))
            return;
        uint64_t s = 0, ns = 0;
        scan_bins(in, out, nsub, maxsub, 0, n, &s, &ns);
        scan_result(result, s, ns, maxsub, cap);
    } else if (strncmp(name, "wf_scan_big_", 12) == 0) {
        emulate_scan_big(name + 12, args);
    } else if (strncmp(name, "wf_t3_minmax_f", 14) == 0) {
        emulate_t3_minmax(strcmp(name + 14, "64") == 0, args);
    }
}
