/*
 * toeplitz_params.h — the host-side choice of a Toeplitz normal operator (toeplitz_params.c; the
 * operator is toeplitz.h): sizes, FFT layout and the kernel's type-1 parameters. No GPU.
 */
#ifndef WARPFFT_PLANS_TOEPLITZ_PARAMS_H
#define WARPFFT_PLANS_TOEPLITZ_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "params/params.h"
#include "plans/launch.h"
#include "warpfft.h"

/* What an operator chooses, on the host (wf_toep_choose): its sizes and the kernel's type-1
 * transform. */
typedef struct wf_toep_params {
    int dim, precision, modeord, weights;
    int spectrum_real;  /* weights none or real: the spectrum is real */
    int64_t n_modes[3]; /* N_d (1 unused) */
    int64_t n_grid[3];  /* L_d (1 unused) */
    int64_t mode_prod, grid_prod, ntransf;
    double tol, kernel_tol; /* the operator's, and its kernel's type-1 transform's */
    size_t real_bytes, complex_bytes;
    size_t spectrum_bytes;  /* grid_prod reals (spectrum_real) or complexes */
    size_t grid_bytes;      /* the work grid: ntransf * grid_prod complexes */
    int fft_steps;          /* the application's FFT: 1 plan of the whole grid, or 2 pruned steps */
    warpfft_opts opts;      /* resolved (device, stream, modeord) */
    wf_resolved kernel_req; /* the kernel's type-1 transform, resolved once (params.h) ... */
    wf_params kernel;       /* ... and fitted to a device: L modes, modeord 1, checked points,
                             * one width (the width rule's: points_width 0) */
} wf_toep_params;

/* The choice for the arguments of warpfft_toeplitz_create / _params: checks them (no GPU), the
 * grid sizes and the kernel's type-1 parameters (shared_limit: the device's opt-in shared
 * memory, WF_SHARED_OPTIN_SM90 without a GPU). `who` names the public call in messages. */
warpfft_status wf_toep_choose(int dim, const int64_t n_modes[3], int64_t ntransf, double tol,
                              int precision, const warpfft_opts *opts, int weights,
                              size_t shared_limit, const char *who, wf_toep_params *q);
/* The kernel's type-1 parameters fitted to ex's device (its shared memory decides the method;
 * wf_params_fit: nothing is chosen again), after wf_toep_choose's checks passed with the
 * default limit. */
warpfft_status wf_toep_for_device(wf_toep_params *q, const wf_exec *ex);
/* Fills the public info from a choice (n_points -1, build_ms 0, workspace without cuFFT's). */
void wf_toep_params_to_info(const wf_toep_params *q, warpfft_toeplitz_info *info);

#endif /* WARPFFT_PLANS_TOEPLITZ_PARAMS_H */
