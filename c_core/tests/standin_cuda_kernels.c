/*
 * standin_cuda_kernels.c — the kernels the stand-in driver computes on the host (standin_cuda.h):
 * the binning kernels whose totals a checked setpts (and warpfft_setpts_check) reads back —
 * wf_bin_count_p (every point into bin 0 of its point set), the one-block wf_bin_scan, and module
 * scan_big's three passes — and type 3's bounds (wf_t3_minmax_p, which setpts3 reads back), with
 * their arguments as kernels/ABI.md lists them, every array bounds-checked.
 */
#include <string.h>

#include "standin_cuda.h"

/* Launch argument i, a device pointer to `bytes` bytes: the pointer, or NULL (and a violation)
 * when the range is not inside one live allocation. */
static void *arg_ptr(void **args, int i, size_t bytes, const char *what) {
    CUdeviceptr p = *(CUdeviceptr *)args[i];
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

void sc_emulate(const char *name, void **args) {
    if (strncmp(name, "wf_bin_count_", 13) == 0) {
        /* every point into bin 0 of its point set (n_sets sets of M / n_sets points: the bins
         * of set s start at s * nb1*nb2*nb3), ranked in input order */
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
        for (long long j = 0; j < M; j++) {
            long long set = j / set_M;
            bin_of[j] = (int32_t)(set * nbins);
            if (wide)
                ((uint64_t *)pos)[j] = (uint64_t)(j - set * set_M);
            else
                ((uint32_t *)pos)[j] = (uint32_t)(j - set * set_M);
            count[set * nbins] += 1;
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
