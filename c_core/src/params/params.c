/*
 * params.c — plan parameters from the request: the argument checks plans and direct sums share,
 * and the wf_params_* assembly that runs the stages in order: the options (options.c, their
 * table), kernel width and shape (width.c), fine grid (grid.c), bins and method (bins.c). No GPU.
 */
#include "params/params.h"

#include <stddef.h>
#include <string.h>

#include "params/bins.h"
#include "params/cost.h"
#include "params/grid.h"
#include "params/width.h"
#include "runtime/error.h"

_Static_assert(sizeof(size_t) == 8, "warpfft needs a 64-bit size_t");

/* ---------------------------------------------------------------- argument checks */

warpfft_status wf_check_type(int type) {
    if (type == 3)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "type 3 depends on the points: use warpfft_plan_params3 for its "
                        "parameters and warpfft_direct_sample3 for exact sums");
    if (type != 1 && type != 2)
        return wf_error(WARPFFT_ERR_BAD_TYPE, "type = %d; must be 1 or 2", type);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_dim(int dim) {
    if (dim < 1 || dim > 3)
        return wf_error(WARPFFT_ERR_BAD_DIM, "dim = %d; must be 1, 2 or 3", dim);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_precision(int precision) {
    if (precision != WARPFFT_F32 && precision != WARPFFT_F64)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "precision = %d; must be WARPFFT_F32 (1) or WARPFFT_F64 (2)", precision);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_modes(int dim, const int64_t n_modes[3]) {
    if (!n_modes)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "n_modes is NULL");
    for (int d = 0; d < dim; d++) {
        if (n_modes[d] < 1)
            return wf_error(WARPFFT_ERR_BAD_SIZE, "n_modes[%d] = %lld; must be >= 1", d,
                            (long long)n_modes[d]);
        if (n_modes[d] > WF_MAX_MODES_PER_DIM)
            return wf_error(WARPFFT_ERR_BAD_SIZE, "n_modes[%d] = %lld is too large (max %lld)", d,
                            (long long)n_modes[d], (long long)WF_MAX_MODES_PER_DIM);
    }
    return WARPFFT_SUCCESS;
}

const char *wf_missing_coord(int dim, const void *x, const void *y, const void *z) {
    if (!x)
        return "x";
    if (dim >= 2 && !y)
        return "y";
    if (dim >= 3 && !z)
        return "z";
    return NULL;
}

warpfft_status wf_check_problem(int type, int dim, int precision, const int64_t n_modes[3]) {
    warpfft_status st = wf_check_type(type);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_dim(dim);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_precision(precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_modes(dim, n_modes);
    return st;
}

warpfft_status wf_check_real_data(const warpfft_opts *o) {
    if (o->real_data && o->spreadinterponly)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "opts.real_data = 1 with opts.spreadinterponly = 1: spread/interp only "
                        "has no FFT and so no half spectrum; real data needs the NUFFT "
                        "(spreadinterponly 0)");
    return WARPFFT_SUCCESS;
}

/* The problem and ntransf checked; *tol made the tolerance the plan runs at (wf_check_tol). */
static warpfft_status check_plan_args(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                                      double *tol, int precision) {
    warpfft_status st = wf_check_problem(type, dim, precision, n_modes);
    if (st == WARPFFT_SUCCESS && ntransf < 1)
        st = wf_error(WARPFFT_ERR_BAD_SIZE, "ntransf = %lld; must be >= 1", (long long)ntransf);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_tol(tol, precision);
    return st;
}

/* ---------------------------------------------------------------- the whole choice */

static void set_basics(wf_params *p, int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                       double tol, int precision, const warpfft_opts *o) {
    memset(p, 0, sizeof *p);
    p->type = type;
    p->dim = dim;
    p->precision = precision;
    p->modeord = o->modeord;
    p->tol = tol;
    p->upsampfac = o->upsampfac;
    p->spreadinterponly = o->spreadinterponly;
    p->check_points = o->check_points;
    /* the width from the points: opts.points_width, never for spread/interp only (no
     * deconvolution); the inner transforms' callers set it 0 in their options */
    p->points_width = o->points_width && !o->spreadinterponly;
    p->points_hint = o->points_hint;
    p->real_data = o->real_data;
    p->ntransf = ntransf;
    for (int d = 0; d < 3; d++)
        p->n_modes[d] = d < dim ? n_modes[d] : 1;
    p->real_bytes = precision == WARPFFT_F64 ? 8 : 4;
    p->complex_bytes = 2 * p->real_bytes;
}

warpfft_status wf_params_resolve(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                                 double tol, int precision, const warpfft_opts *opts,
                                 wf_resolved *r) {
    memset(r, 0, sizeof *r); /* the pool compares resolved requests byte by byte */
    warpfft_status st = check_plan_args(type, dim, n_modes, ntransf, &tol, precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, &r->opts);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_real_data(&r->opts);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_params *p = &r->p;
    set_basics(p, type, dim, n_modes, ntransf, tol, precision, &r->opts);
    /* upsampfac 0: sigma and width by predicted time (cost.c); else the width rule for it */
    st = p->upsampfac == 0.0 && !p->spreadinterponly ? wf_params_choose_sigma(p)
                                                     : wf_params_set_kernel(p);
    if (st == WARPFFT_SUCCESS)
        st = wf_params_set_grid(p);
    if (st == WARPFFT_SUCCESS)
        p->predicted_ms = wf_cost_predict_ms(p->type, p->dim, p->precision, p->width_random,
                                             p->n_fine, p->ntransf, wf_params_points(p));
    return st;
}

warpfft_status wf_params_fit(const wf_resolved *r, size_t shared_limit, wf_params *p) {
    *p = r->p;
    warpfft_opts o = r->opts;
    /* any grid size N >= 2w: the GM kernels only need that, and OD (for deterministic or
     * explicitly OD spreading) nf >= w */
    if (o.spreadinterponly)
        o.method = p->type == 1 && (o.deterministic || o.method == WARPFFT_METHOD_OD)
                       ? WARPFFT_METHOD_OD
                       : WARPFFT_METHOD_GM;
    return wf_params_set_method(
        p, &o, shared_limit > WF_SM_STATIC_RESERVE ? shared_limit - WF_SM_STATIC_RESERVE : 0);
}

warpfft_status wf_params_make(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                              double tol, int precision, const warpfft_opts *opts,
                              size_t shared_limit, wf_params *p) {
    wf_resolved r;
    warpfft_status st = wf_params_resolve(type, dim, n_modes, ntransf, tol, precision, opts, &r);
    if (st == WARPFFT_SUCCESS)
        st = wf_params_fit(&r, shared_limit, p);
    return st;
}

void wf_params_to_info(const wf_params *p, warpfft_plan_info *info) {
    memset(info, 0, sizeof *info);
    info->type = p->type;
    info->dim = p->dim;
    info->precision = p->precision;
    info->method = p->method;
    info->width = p->width;
    info->beta = p->beta;
    info->upsampfac = p->upsampfac;
    for (int d = 0; d < 3; d++) {
        info->n_modes[d] = p->n_modes[d];
        info->n_fine[d] = p->n_fine[d];
        info->bin_size[d] = p->bin_size[d];
    }
    info->ntransf = p->ntransf;
    info->n_points = -1;
    info->n_sets = -1;
    info->workspace_bytes = 0;
    info->n_targets = -1;
    info->tol_floor = p->tol_floor;
    info->predicted_ms = p->predicted_ms;
    info->kernel = WARPFFT_KERNEL_SINH;
    info->deterministic = p->deterministic;
    info->tol = p->tol;
    info->real_data = p->real_data;
}

size_t wf_params_half_offset(const wf_params *p) {
    size_t real = (size_t)p->fine_prod * (size_t)p->ntransf * p->real_bytes;
    return (real + 255) / 256 * 256; /* cuFFT's input and output aligned alike */
}

size_t wf_params_grid_bytes(const wf_params *p) {
    if (p->real_data)
        return wf_params_half_offset(p) +
               (size_t)wf_half_prod(p) * (size_t)p->ntransf * p->complex_bytes;
    return (size_t)p->fine_prod * (size_t)p->ntransf * p->complex_bytes;
}

/* Must match what plans/nufft12.c (build) and plans/spreader.c (wf_spreader_alloc) allocate. */
size_t wf_params_fixed_bytes(const wf_params *p) {
    size_t b = 0;
    if (!p->spreadinterponly) { /* the fine grid and the deconvolution factors */
        b = wf_params_grid_bytes(p);
        for (int d = 0; d < p->dim; d++)
            b += (size_t)(p->n_modes[d] / 2 + 1) * p->real_bytes;
    }
    size_t per_bin = p->method == WARPFFT_METHOD_SM ? 3 : 2; /* u64 arrays per bin */
    b += (size_t)p->nbins * per_bin * sizeof(uint64_t);
    b += (size_t)wf_params_scan_tiles(p) * 2 * sizeof(uint64_t); /* the scan's tile sums */
    /* the setpts result block (u64 x2, i32 x4); a plan whose width follows the points adds its
     * tables, statistics and narrower widths' factors (plans/spreader_width.c: <= ~0.6 MB),
     * which are not known without building them */
    return b + 32;
}

int64_t wf_scan_tiles(int64_t bins) {
    if (bins <= WF_SCAN_BIG_BINS)
        return 0;
    return (bins + WF_SCAN_BIG_TILE - 1) / WF_SCAN_BIG_TILE;
}

int64_t wf_params_scan_tiles(const wf_params *p) {
    return wf_scan_tiles(p->nbins);
}

int64_t wf_subprob_cap(int64_t bins, int64_t M, int64_t maxsub) {
    return bins + (M + maxsub - 1) / maxsub;
}

int64_t wf_params_subprob_cap(const wf_params *p, int64_t M) {
    return wf_subprob_cap(p->nbins, M, p->maxsub);
}

WARPFFT_API warpfft_status warpfft_plan_params(int type, int dim, const int64_t n_modes[3],
                                               int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan_info *info) {
    wf_clear_error();
    if (!info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "info is NULL");
    wf_params p;
    warpfft_status st = wf_params_make(type, dim, n_modes, ntransf, tol, (int)precision, opts,
                                       WF_SHARED_OPTIN_SM90, &p);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_params_to_info(&p, info);
    info->workspace_bytes = wf_params_fixed_bytes(&p); /* cuFFT's work area not included */
    return WARPFFT_SUCCESS;
}
