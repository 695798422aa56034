/*
 * warpfft/toeplitz.h — the Toeplitz normal operator T = A^H W A. Part of warpfft's public C ABI:
 * include <warpfft.h>, which includes every part (each part includes the parts it needs and may
 * be included alone; warpfft.h's opening comment states the conventions all of them share).
 */
#ifndef WARPFFT_TOEPLITZ_H
#define WARPFFT_TOEPLITZ_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the Toeplitz normal operator (docs/toeplitz.md) ----
 *
 * T = A^H W A for M points x_j, where A is the type-2 transform of sign iflag,
 * (A f)_j = sum_k f[k] exp(iflag * i * k . x_j), A^H the type-1 transform of sign -iflag (its
 * adjoint), and W = diag(w_j) the weights: real (e.g. density compensation), complex, or none
 * (all ones). T is a convolution of the modes with one fixed kernel,
 *     (T f)[k] = sum_k' K(k - k') f[k'],   K(m) = sum_j w_j exp(-iflag * i * m . x_j),
 * so the operator holds the kernel's spectrum -- the DFT of K on a grid of
 * L_d = the smallest even 2,3,5,7-smooth integer >= 2 N_d - 1 points per dimension, computed at
 * creation with one type-1 transform of L_1 x L_2 x L_3 modes and one FFT -- and applies T as:
 * zero-pad the modes to the L grid, FFT, multiply by the spectrum, inverse FFT, crop. No
 * spreading, no sorting, no interpolation per application.
 *
 * The adjoint T^H = A^H conj(W) A is the same with the spectrum conjugated; with real weights
 * (or none) T is Hermitian and its spectrum real. Accuracy: the kernel's type-1 transform runs
 * at tol/2 (at least the precision's smallest tol), so that T f has a relative l2 error <= tol
 * against type 2 + weights + type 1 for generic modes f (docs/toeplitz.md: the argument and the
 * measurements).
 *
 * Mode arrays: ntransf arrays of N1*N2*N3 complex values each, as plans (dimension 1 fastest,
 * index <-> mode per opts.modeord). The spectrum (warpfft_toeplitz_spectrum): L1*L2*L3 values,
 * dimension 1 fastest, index l_d <-> frequency l_d of the FFT (an FFT of size L_d), scaled by
 * 1/(L1 L2 L3); reals (weights none or real) or complexes (weights complex).
 * Options: modeord (the mode arrays), device, stream; upsampfac, method, bin_size,
 * max_subprob and deterministic apply to the kernel's type-1 transform (the application is
 * FFTs and pointwise products: the same bits every run either way); spreadinterponly must be
 * 0; check_points is ignored (the points are always checked: BAD_POINTS).
 */

typedef enum warpfft_weights {
    WARPFFT_WEIGHTS_NONE = 0,   /* W = identity: w may be NULL */
    WARPFFT_WEIGHTS_REAL = 1,   /* w: M reals of the precision */
    WARPFFT_WEIGHTS_COMPLEX = 2 /* w: M complexes of the precision (interleaved) */
} warpfft_weights;

/* An operator handle: valid from a successful warpfft_toeplitz_create until a successful
 * warpfft_toeplitz_destroy. One thread at a time per operator, as plans. */
typedef struct warpfft_toeplitz_s *warpfft_toeplitz;

/* What an operator holds (warpfft_toeplitz_get_info) or would hold (warpfft_toeplitz_params). */
typedef struct warpfft_toeplitz_info {
    int32_t dim, precision, weights, modeord;
    int32_t iflag;          /* the sign of A (+1 or -1); 0 from warpfft_toeplitz_params */
    int32_t spectrum_real;  /* 1: the spectrum is real (weights none or real) */
    int32_t kernel_width;   /* the kernel's type-1 transform: its spreading kernel width */
    int32_t fft_steps;      /* the application's FFT: 1 cuFFT plan of the grid, or 2 steps that
                               skip the padding (larger grids; docs/toeplitz.md) */
    int64_t n_modes[3];     /* N_d (1 for unused dims) */
    int64_t n_grid[3];      /* L_d (1 for unused dims) */
    int64_t kernel_fine[3]; /* the fine grid of the kernel's type-1 transform */
    int64_t ntransf;
    int64_t n_points; /* M (0: the zero operator); -1 from warpfft_toeplitz_params */
    double tol;
    double kernel_tol;       /* the kernel's type-1 tolerance */
    double kernel_upsampfac; /* and its upsampling factor */
    double build_ms;         /* wall time of warpfft_toeplitz_create; 0 from _params */
    size_t spectrum_bytes;   /* the spectrum: L1 L2 L3 reals or complexes; 0 for M = 0 */
    size_t grid_bytes;       /* the work grid: ntransf L1 L2 L3 complexes */
    size_t workspace_bytes;  /* device bytes the operator holds: spectrum, grid and cuFFT's work
                                area (warpfft_toeplitz_params: spectrum and grid only) */
} warpfft_toeplitz_info;

/* Creates the operator for M points (x, y, z: device arrays of M reals of `precision`; y for
 * dim >= 2, z for dim 3) and weights of kind `weights` (w: device array, NULL for
 * WARPFFT_WEIGHTS_NONE), for ntransf mode arrays at a time, n_modes[0..dim-1] modes. iflag: the
 * sign of A (>= 0: +1). tol as plans (f32 1e-6..1e-1, f64 1e-13..1e-1). Computes the kernel's
 * spectrum now (a type-1 transform and an FFT on opts.stream, through the plan cache) and
 * waits for it: the points and weights may be freed once it returns. M = 0 makes the zero
 * operator, with no spectrum of its own (x, y, z, w ignored): what
 * warpfft_toeplitz_apply_spectrum needs. Holds the work grid (ntransf L1 L2 L3 complexes) and
 * the FFT plans of the application. BAD_POINTS for a NaN or infinite coordinate. */
WARPFFT_API warpfft_status warpfft_toeplitz_create(
    int dim, const int64_t n_modes[3], int iflag, int64_t ntransf, double tol,
    warpfft_precision precision, const warpfft_opts *opts, int64_t M, const void *x, const void *y,
    const void *z, int weights, const void *w, warpfft_toeplitz *op);

/* out = T in (adjoint != 0: T^H in) for the ntransf mode arrays in `in` (ntransf*N1*N2*N3
 * complexes); out may equal in. Asynchronous on opts.stream; no allocation. The zero operator
 * (M = 0) writes zeros. May be captured into a CUDA graph (cuStreamBeginCapture on opts.stream):
 * the graph then holds the operator, as it does a plan (warpfft.h, "CUDA graphs"), until it and
 * every executable graph made from it are destroyed; warpfft_toeplitz_destroy refuses it
 * meanwhile. */
WARPFFT_API warpfft_status warpfft_toeplitz_apply(warpfft_toeplitz op, warpfft_precision precision,
                                                  int adjoint, const void *in, void *out);

/* As warpfft_toeplitz_apply, with the caller's spectrum (device array of L1 L2 L3 reals when
 * spectrum_real != 0, else complexes, the layout of warpfft_toeplitz_spectrum) instead of the
 * operator's own: for frameworks that hold the spectrum as an array (any operator of the
 * shape, e.g. a zero operator, applies it). */
WARPFFT_API warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op,
                                                           warpfft_precision precision,
                                                           int spectrum_real, const void *spectrum,
                                                           int adjoint, const void *in, void *out);

/* Computes the kernel's spectrum for M >= 1 points and weights into the device array
 * `spectrum` (L1 L2 L3 reals for weights none or real, else complexes), without an operator:
 * the arguments as warpfft_toeplitz_create's (no ntransf). Runs on opts.stream and waits for
 * it. */
WARPFFT_API warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n_modes[3], int iflag,
                                                     double tol, warpfft_precision precision,
                                                     const warpfft_opts *opts, int64_t M,
                                                     const void *x, const void *y, const void *z,
                                                     int weights, const void *w, void *spectrum);

/* What an operator of these arguments would hold and choose (grid, spectrum and grid bytes,
 * the kernel's tolerance, width and fine grid), without a GPU; the checks of create. */
WARPFFT_API warpfft_status warpfft_toeplitz_params(int dim, const int64_t n_modes[3],
                                                   int64_t ntransf, double tol,
                                                   warpfft_precision precision,
                                                   const warpfft_opts *opts, int weights,
                                                   warpfft_toeplitz_info *info);

WARPFFT_API warpfft_status warpfft_toeplitz_get_info(warpfft_toeplitz op,
                                                     warpfft_toeplitz_info *info);

/* Device bytes the operator holds: spectrum, work grid and cuFFT's work area. */
WARPFFT_API warpfft_status warpfft_toeplitz_workspace_bytes(warpfft_toeplitz op, size_t *bytes);

/* Frees everything the operator holds. NULL is a no-op. As warpfft_plan_destroy: afterwards the
 * handle is dangling; on failure (the context cannot be made current, or cufftDestroy fails)
 * the operator stays valid and may be destroyed again. Refused (WARPFFT_ERR_INVALID_ARG, the
 * operator stays valid) for an operator of the live-plan pool (warpfft_pool_release_toeplitz
 * gives it back) and one a CUDA graph holds; WARPFFT_ERR_UNSUPPORTED during a capture of its
 * stream. */
WARPFFT_API warpfft_status warpfft_toeplitz_destroy(warpfft_toeplitz op);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_TOEPLITZ_H */
