/*
 * toeplitz_params.c — what a Toeplitz normal operator chooses on the host, without a GPU
 * (toeplitz.h explains the operator): the argument checks, the grid of L_d =
 * next_smooth_even(2 N_d - 1) points per dimension, the application's FFT layout (one plan, or
 * two pruned steps; WARPFFT_TOEPLITZ_FFT overrides), and the parameters of the kernel's type-1
 * transform; and the public info of a choice. Split from toeplitz.c so that the spectrum
 * (toeplitz_kernel.c) and the operator (toeplitz.c) both build on it.
 */
#include "plans/toeplitz_params.h"

#include <stdio.h>
#include <string.h>

#include "params/grid.h"
#include "params/params.h"
#include "runtime/error.h"
#include "runtime/libfind.h"

/* Grids of at most this many bytes (all transforms) are transformed by one cuFFT plan. */
#define WF_TOEP_FULL_FFT_BYTES ((size_t)16 << 20)

/* ---------------------------------------------------------------- the choice */

/* The kernel's type-1 tolerance: tol/2, but at least the precision's smallest (docs/toeplitz.md:
 * the error of T f is about the kernel's relative error, which the type-1 transform keeps
 * below its tol, often well below). */
static double kernel_tol(double tol, int precision) {
    double lo, hi;
    wf_tol_bounds(precision, &lo, &hi);
    return tol / 2 > lo ? tol / 2 : lo;
}

/* One plan or two pruned steps (the file comment); WARPFFT_TOEPLITZ_FFT overrides. */
static warpfft_status choose_fft(wf_toep_params *q, const char *who) {
    q->fft_steps = q->dim >= 2 && q->grid_bytes > WF_TOEP_FULL_FFT_BYTES ? 2 : 1;
    const char *env = wf_getenv("WARPFFT_TOEPLITZ_FFT");
    if (!env || !env[0])
        return WARPFFT_SUCCESS;
    if (strcmp(env, "full") == 0)
        q->fft_steps = 1;
    else if (strcmp(env, "pruned") == 0)
        q->fft_steps = q->dim >= 2 ? 2 : 1;
    else
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: WARPFFT_TOEPLITZ_FFT = \"%s\"; must be \"full\" or \"pruned\" (or "
                        "unset: chosen by size)",
                        who, env);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_toep_choose(int dim, const int64_t n_modes[3], int64_t ntransf, double tol,
                              int precision, const warpfft_opts *opts, int weights,
                              size_t shared_limit, const char *who, wf_toep_params *q) {
    memset(q, 0, sizeof *q);
    warpfft_status st = wf_check_dim(dim);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_precision(precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_modes(dim, n_modes);
    if (st == WARPFFT_SUCCESS && ntransf < 1)
        st = wf_error(WARPFFT_ERR_BAD_SIZE, "ntransf = %lld; must be >= 1", (long long)ntransf);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_tol(&tol, precision);
    if (st == WARPFFT_SUCCESS && weights != WARPFFT_WEIGHTS_NONE &&
        weights != WARPFFT_WEIGHTS_REAL && weights != WARPFFT_WEIGHTS_COMPLEX)
        st = wf_error(WARPFFT_ERR_INVALID_ARG,
                      "weights = %d; must be WARPFFT_WEIGHTS_NONE (0), _REAL (1) or _COMPLEX (2)",
                      weights);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, &q->opts);
    if (st == WARPFFT_SUCCESS && q->opts.spreadinterponly)
        st = wf_error(WARPFFT_ERR_INVALID_ARG,
                      "opts.spreadinterponly = 1: the Toeplitz operator needs the NUFFT (0)");
    if (st == WARPFFT_SUCCESS && q->opts.real_data)
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "opts.real_data = 1: the Toeplitz operator's vectors are complex (its "
                      "weights say whether the spectrum is real); it needs real_data 0");
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "%s: %s", who, wf_last_error());
    q->dim = dim;
    q->precision = precision;
    q->modeord = q->opts.modeord;
    q->weights = weights;
    q->spectrum_real = weights != WARPFFT_WEIGHTS_COMPLEX;
    q->ntransf = ntransf;
    q->tol = tol;
    q->kernel_tol = kernel_tol(tol, precision);
    q->real_bytes = precision == WARPFFT_F64 ? 8 : 4;
    q->complex_bytes = 2 * q->real_bytes;
    for (int d = 0; d < 3; d++) {
        q->n_modes[d] = d < dim ? n_modes[d] : 1;
        q->n_grid[d] = d < dim ? wf_next_smooth_even(2 * n_modes[d] - 1) : 1;
    }
    /* The kernel's type-1 transform: L modes in FFT order (its output is the circulant's first
     * column; the half of it for real weights or none), checked points, one width (the spectrum is
     * computed once, from points that may sit anywhere); its parameters check the grid's sizes and
     * overflow too. Resolved once: wf_toep_for_device only fits them to the device. */
    warpfft_opts ko = q->opts;
    ko.modeord = 1;
    ko.check_points = 1;
    ko.points_width = 0;
    /* real weights or none: a real-data type 1 (toeplitz_kernel.c: K is Hermitian) */
    ko.real_data = q->spectrum_real;
    st = wf_params_resolve(1, dim, q->n_grid, 1, q->kernel_tol, precision, &ko, &q->kernel_req);
    if (st == WARPFFT_SUCCESS)
        st = wf_params_fit(&q->kernel_req, shared_limit, &q->kernel);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st,
                        "%s: n_modes {%lld, %lld, %lld} need a grid of {%lld, %lld, %lld} and a "
                        "type-1 transform of that many modes for the kernel: %s",
                        who, (long long)q->n_modes[0], (long long)q->n_modes[1],
                        (long long)q->n_modes[2], (long long)q->n_grid[0], (long long)q->n_grid[1],
                        (long long)q->n_grid[2], wf_last_error());
    /* the kernel's parameters bounded the grid (N_d < L_d): these products fit */
    q->grid_prod = q->kernel.mode_prod;
    q->mode_prod = q->n_modes[0] * q->n_modes[1] * q->n_modes[2];
    /* ntransf grids, in bytes: refused where they overflow (the kernel's params checked one) */
    double grid_bytes = (double)q->grid_prod * (double)ntransf * (double)q->complex_bytes;
    if (grid_bytes > (double)((size_t)1 << 62))
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "%s: ntransf = %lld grids of %lld points (%.3g bytes) is too large", who,
                        (long long)ntransf, (long long)q->grid_prod, grid_bytes);
    q->grid_bytes = (size_t)q->grid_prod * (size_t)ntransf * q->complex_bytes;
    q->spectrum_bytes =
        (size_t)q->grid_prod * (q->spectrum_real ? q->real_bytes : q->complex_bytes);
    return choose_fft(q, who);
}

warpfft_status wf_toep_for_device(wf_toep_params *q, const wf_exec *ex) {
    return wf_params_fit(&q->kernel_req, wf_exec_shared_limit(ex), &q->kernel);
}

void wf_toep_params_to_info(const wf_toep_params *q, warpfft_toeplitz_info *info) {
    memset(info, 0, sizeof *info);
    info->dim = q->dim;
    info->precision = q->precision;
    info->weights = q->weights;
    info->modeord = q->modeord;
    info->spectrum_real = q->spectrum_real;
    info->kernel_width = q->kernel.width;
    info->fft_steps = q->fft_steps;
    for (int d = 0; d < 3; d++) {
        info->n_modes[d] = q->n_modes[d];
        info->n_grid[d] = q->n_grid[d];
        info->kernel_fine[d] = q->kernel.n_fine[d];
    }
    info->ntransf = q->ntransf;
    info->n_points = -1;
    info->tol = q->tol;
    info->kernel_tol = q->kernel_tol;
    info->kernel_upsampfac = q->kernel.upsampfac;
    info->spectrum_bytes = q->spectrum_bytes;
    info->grid_bytes = q->grid_bytes;
    info->workspace_bytes = q->spectrum_bytes + q->grid_bytes;
}
