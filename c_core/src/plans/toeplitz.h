/*
 * toeplitz.h — the Toeplitz normal operator T = A^H W A, internal (toeplitz.c: choice, create,
 * apply, release; toeplitz_kernel.c: the kernel's spectrum). A is the type-2 transform of sign
 * iflag over M points, A^H the type-1 transform of sign -iflag, W the weights. T is the
 * convolution of the modes with K(m) = sum_j w_j exp(-iflag i m.x_j), so the operator holds the
 * DFT of K on a grid of L_d = next_smooth_even(2 N_d - 1) points per dimension (its spectrum,
 * computed once with a type-1 transform of L modes and an FFT) and applies T with an FFT pair
 * and a pointwise product (kernels/toeplitz.cu; docs/toeplitz.md has the math).
 * The public calls (api/toeplitz.c) use these; nothing here calls the public ABI. create and
 * spectrum enter the device's context themselves; apply runs in the context its caller made
 * current.
 */
#ifndef WARPFFT_PLANS_TOEPLITZ_H
#define WARPFFT_PLANS_TOEPLITZ_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "plans/launch.h"
#include "runtime/cufft.h"
#include "runtime/memory.h"
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
    size_t spectrum_bytes; /* grid_prod reals (spectrum_real) or complexes */
    size_t grid_bytes;     /* the work grid: ntransf * grid_prod complexes */
    int fft_steps;         /* the application's FFT: 1 plan of the whole grid, or 2 pruned steps */
    warpfft_opts opts;     /* resolved (device, stream, modeord) */
    wf_params kernel;      /* the kernel's type-1 transform: L modes, modeord 1, checked points */
} wf_toep_params;

typedef struct wf_toeplitz {
    wf_toep_params q;
    int iflag; /* +1 or -1: the sign of A */
    wf_exec ex;
    const wf_cufft *cufft;
    /* kernels of module toeplitz_p */
    wf_kernel k_pad, k_crop, k_mulr, k_mulc, k_weights, k_spectrum;
    wf_dbuf grid;       /* the work grid, ntransf transforms, layout of kernels/ABI.md */
    wf_dbuf spectrum;   /* the kernel's spectrum (none for M = 0: the zero operator) */
    wf_dbuf fft_work;   /* cuFFT's work area, shared by the step plans */
    cufftHandle fft[2]; /* one step: [0] the batched FFT of the grid; two (dim >= 2): [0] the
                           faster dimensions over the first N_dim slabs, [1] the slowest one */
    int fft_created[2];
    int n_fft;
    int64_t M;
    double build_ms;
    size_t workspace; /* bytes of grid, spectrum and fft_work */
} wf_toeplitz;

/* The choice for the arguments of warpfft_toeplitz_create / _params: checks them (no GPU), the
 * grid sizes and the kernel's type-1 parameters (shared_limit: the device's opt-in shared
 * memory, WF_SHARED_OPTIN_SM90 without a GPU). `who` names the public call in messages. */
warpfft_status wf_toep_choose(int dim, const int64_t n_modes[3], int64_t ntransf, double tol,
                              int precision, const warpfft_opts *opts, int weights,
                              size_t shared_limit, const char *who, wf_toep_params *q);
/* The kernel's type-1 parameters again for ex's device (its shared memory decides the method),
 * after wf_toep_choose's checks passed with the default limit. */
warpfft_status wf_toep_for_device(wf_toep_params *q, const wf_exec *ex);
/* Fills the public info from a choice (n_points -1, build_ms 0, workspace without cuFFT's). */
void wf_toep_params_to_info(const wf_toep_params *q, warpfft_toeplitz_info *info);

/* The operator for the arguments of warpfft_toeplitz_create (checked by the caller with
 * wf_toep_choose's checks of the points): device, kernels, grid, FFT plans, and for M > 0 the
 * spectrum from the points and weights (w: T or cT per `weights`; NULL for none). Waits for
 * its work before returning. */
warpfft_status wf_toeplitz_create(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                  CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, wf_toeplitz **out);
/* T (or T^H with adjoint) on ntransf mode arrays in -> out (may be equal), on the stream, with
 * the spectrum at `spectrum` (real or complex per spectrum_real; 0 with the zero operator:
 * out is zeroed). The device's context is current. */
warpfft_status wf_toeplitz_apply(wf_toeplitz *t, CUdeviceptr spectrum, int spectrum_real,
                                 int adjoint, CUdeviceptr in, CUdeviceptr out);
/* Frees everything; t itself stays (free() it). Returns the first failing cufftDestroy's
 * result (0: success): every buffer is freed either way. The context is current. */
cufftResult wf_toeplitz_release(wf_toeplitz *t);
/* warpfft_toeplitz_get_info of an operator. */
void wf_toeplitz_info(const wf_toeplitz *t, warpfft_toeplitz_info *info);

/* ---- toeplitz_kernel.c ---- */

/* The kernel's spectrum (grid_prod values, real or complex per q->spectrum_real, dimension 1
 * fastest) into dst, from M > 0 points and weights: the type-1 transform of L modes (sign
 * -iflag, FFT order) into `scratch` (at least grid_prod complexes; 0: a buffer of its own),
 * an FFT, and the scaled real part or copy. Runs on ex's stream and waits for it; the context
 * is current; BAD_POINTS for a non-finite coordinate (messages name `who`). k_weights and
 * k_spectrum: the kernels of module toeplitz_p. */
warpfft_status wf_toep_kernel(const wf_toep_params *q, int iflag, const wf_exec *ex,
                              const wf_cufft *cufft, const wf_kernel *k_weights,
                              const wf_kernel *k_spectrum, int64_t M, CUdeviceptr x, CUdeviceptr y,
                              CUdeviceptr z, CUdeviceptr w, CUdeviceptr scratch, CUdeviceptr dst,
                              const char *who);
/* The kernels of module toeplitz_<precision> that the spectrum needs (weights, spectrum), its
 * module loaded on ex's device. */
warpfft_status wf_toep_kernel_functions(const wf_exec *ex, int precision, wf_kernel *k_weights,
                                        wf_kernel *k_spectrum);
/* warpfft_toeplitz_spectrum: device, the kernels, the spectrum into dst, in the device's
 * context (entered here). */
warpfft_status wf_toep_spectrum(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, CUdeviceptr dst);

#endif /* WARPFFT_PLANS_TOEPLITZ_H */
