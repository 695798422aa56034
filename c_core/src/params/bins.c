/*
 * bins.c — spreading bins and the method: default bin edges per type, method, dim and precision,
 * shared-memory tile sizes and fitting, the AUTO rule, and the plan stage that chooses the method,
 * bins and subproblem size (refusing more bins than the kernels can index). No GPU; see params.h.
 */
#include "params/bins.h"

#include <string.h>

#include "runtime/error.h"

void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]) {
    static const int32_t gm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 16}};
    static const int32_t sm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 2}};
    /* 3D SM, measured on the H100 (kernels alone, M = 1e7, 128^3 modes; smaller tiles keep
     * more blocks resident, thicker ones waste less on the halo):
     *  - f64 type 1: 8x8x2 2.2x faster than 16x16x2 (w10: 35 vs 76 ms);
     *  - f64 type 2: 8x8x4 (w11 interp 17.1 ms; 8x8x2 19.4, 16x8x4 25.9, 16x16x2 27.2);
     *  - f32 type 1: 16x8x4 (w7 spread 7.7 ms; 16x4x8 7.7, 16x16x2 8.8, 8x8x8 8.7,
     *    8x8x4 8.9, 16x8x6 8.6, 24x8x4 9.5, 16x16x4 10.4, 32x8x4 10.4, 32x16x2 14.5);
     *  - f32 type 2: 16x16x4 (w7 interp 2.8 ms; 16x16x6 2.8, 16x8x4 3.4, 16x16x2 3.5,
     *    16x16x8 3.3, 32x16x4 3.8, 8x8x8 4.2). */
    static const int32_t sm_3d_f64_t1[3] = {8, 8, 2}, sm_3d_f64_t2[3] = {8, 8, 4};
    static const int32_t sm_3d_f32_t1[3] = {16, 8, 4}, sm_3d_f32_t2[3] = {16, 16, 4};
    const int32_t *src = method == WARPFFT_METHOD_SM ? sm[dim - 1] : gm[dim - 1];
    if (method == WARPFFT_METHOD_SM && dim == 3) {
        if (precision == WARPFFT_F64)
            src = type == 1 ? sm_3d_f64_t1 : sm_3d_f64_t2;
        else
            src = type == 1 ? sm_3d_f32_t1 : sm_3d_f32_t2;
    }
    for (int d = 0; d < 3; d++)
        bs[d] = src[d];
}

size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes) {
    size_t pad = (size_t)(width + 1) / 2, bytes = complex_bytes;
    for (int d = 0; d < dim; d++)
        if (__builtin_mul_overflow(bytes, (size_t)bs[d] + 2 * pad, &bytes))
            return SIZE_MAX;
    return bytes;
}

int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit) {
    while (wf_tile_bytes(dim, bs, width, complex_bytes) > limit) {
        int big = 0;
        for (int d = 1; d < dim; d++)
            if (bs[d] > bs[big])
                big = d;
        if (bs[big] <= 2)
            return 0;
        bs[big] = bs[big] / 2 < 2 ? 2 : bs[big] / 2;
    }
    return 1;
}

/* Measured on the H100 (suite B, benches/suite_b.rs with WARPFFT_BENCH_METHODS=all): SM was
 * faster than or equal to GM in every case, types 1 and 2, 1-3 D, f32 and f64 (e.g. 1D type 1
 * 0.69 vs 2.35 ms, 3D type 2 f32 4.46 vs 5.70 ms, 2D type 2 1.35 vs 1.40 ms). GM remains for
 * tiles that do not fit in shared memory. */
int wf_auto_method(int type, int dim, int precision, int width, int sm_fits) {
    (void)type;
    (void)dim;
    (void)precision;
    (void)width;
    return sm_fits ? WARPFFT_METHOD_SM : WARPFFT_METHOD_GM;
}

/* Defaults for `method`, then opts.bin_size overrides, clamped to [1, nf_d]; unused dims 1. */
static void initial_bins(const wf_params *p, int method, const warpfft_opts *o, int32_t bs[3]) {
    wf_default_bins(p->type, method, p->dim, p->precision, bs);
    for (int d = 0; d < 3; d++) {
        if (d >= p->dim) {
            bs[d] = 1;
            continue;
        }
        if (o->bin_size[d] > 0)
            bs[d] = o->bin_size[d];
        if ((int64_t)bs[d] > p->n_fine[d])
            bs[d] = (int32_t)p->n_fine[d];
    }
}

static warpfft_status set_bin_counts(wf_params *p) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++) {
        p->n_bins[d] = (p->n_fine[d] + p->bin_size[d] - 1) / p->bin_size[d];
        if (__builtin_mul_overflow(nbins, p->n_bins[d], &nbins) || nbins > INT32_MAX)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "more than 2^31 - 1 spreading bins (bin_size {%d, %d, %d} on a fine "
                            "grid of {%lld, %lld, %lld}); use larger opts.bin_size",
                            (int)p->bin_size[0], (int)p->bin_size[1], (int)p->bin_size[2],
                            (long long)p->n_fine[0], (long long)p->n_fine[1],
                            (long long)p->n_fine[2]);
    }
    p->nbins = nbins;
    return WARPFFT_SUCCESS;
}

size_t wf_sm_cell_bytes(const wf_params *p) {
    /* 1D and 2D f32 spreading add in fixed point: four int32 words per cell (kernels,
     * WF_SPREAD_SM_FIX) */
    if (p->type == 1 && p->dim <= 2 && p->precision == WARPFFT_F32)
        return 16;
    return p->complex_bytes;
}

static warpfft_status sm_unfit(const wf_params *p, const int32_t bs[3], size_t limit) {
    return wf_error(WARPFFT_ERR_UNSUPPORTED,
                    "opts.method = SM: the smallest shared-memory tile (bins {%d, %d, %d}, width "
                    "%d, %s) needs %zu bytes; the device allows %zu; use method GM or AUTO",
                    (int)bs[0], (int)bs[1], (int)bs[2], p->width, wf_prec_name(p->precision),
                    wf_tile_bytes(p->dim, bs, p->width, wf_sm_cell_bytes(p)), limit);
}

/* Whether bins of size bs on the fine grid number at most INT32_MAX (the kernels' bin index). */
static int bins_addressable(const wf_params *p, const int32_t bs[3]) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++)
        if (__builtin_mul_overflow(nbins, (p->n_fine[d] + bs[d] - 1) / bs[d], &nbins))
            return 0;
    return nbins <= INT32_MAX;
}

warpfft_status wf_params_set_method(wf_params *p, const warpfft_opts *o, size_t limit) {
    int32_t sm[3];
    initial_bins(p, WARPFFT_METHOD_SM, o, sm);
    int fits = wf_fit_sm_bins(p->dim, sm, p->width, wf_sm_cell_bytes(p), limit);
    /* AUTO: small SM bins on a huge grid can outnumber int32; GM's larger bins may not */
    if (o->method == WARPFFT_METHOD_AUTO && fits && !bins_addressable(p, sm))
        fits = 0;
    int m = o->method;
    if (m == WARPFFT_METHOD_AUTO)
        m = wf_auto_method(p->type, p->dim, p->precision, p->width, fits);
    if (m == WARPFFT_METHOD_SM && !fits)
        return sm_unfit(p, sm, limit);
    p->method = m;
    p->maxsub = o->max_subprob > 0 ? o->max_subprob : WF_DEFAULT_MAXSUB;
    if (m == WARPFFT_METHOD_SM) {
        memcpy(p->bin_size, sm, sizeof sm);
        p->tile_bytes = wf_tile_bytes(p->dim, sm, p->width, wf_sm_cell_bytes(p));
    } else {
        initial_bins(p, WARPFFT_METHOD_GM, o, p->bin_size);
        p->tile_bytes = 0;
    }
    return set_bin_counts(p);
}
