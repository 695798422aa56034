/*
 * grid.h — fine-grid sizes and their limits, mode order and point folding (grid.c).
 */
#ifndef WARPFFT_PARAMS_GRID_H
#define WARPFFT_PARAMS_GRID_H

#include <stdint.h>

#include "params/base.h"
#include "warpfft.h"

int wf_is_smooth(int64_t n); /* only prime factors 2, 3, 5, 7 (n >= 1) */
/* Smallest even 2,3,5,7-smooth integer >= max(n, 2); n <= 2^60. */
int64_t wf_next_smooth_even(int64_t n);
/* nf = next_smooth_even(max(ceil(sigma * N), 2w)). */
int64_t wf_fine_size(int64_t n_modes, double sigma, int width);
/* The relative l2 error that rounding alone reaches, for points in [-pi, pi) (the error
 * promise is max(tol, floor)): sqrt(phase^2 + arith^2), phase = sqrt(sum_d N_d^2) 2^-52 (the
 * double u = frac(x / 2pi) nf carries ~1 ulp of nf; mode N/2 turns it into a phase error
 * ~pi N 2^-53), arith = eps_T (4 + 2 sqrt(log2(fine_prod))) (kernel values, spreading sums and
 * the FFT in the working precision, eps_T = 2^-24 or 2^-53). */
double wf_tol_floor(int precision, int dim, const int64_t n_modes[3], int64_t fine_prod);
/* The floor of a plan with fine sizes nf and kernel (width, beta): wf_tol_floor's arithmetic
 * term times the deconvolution's amplification of rounding relative to sigma 2 (where the
 * floor's constants were measured): prod_d max(1, A_d / A_d(sigma 2)), A_d the geometric mean
 * of the rms and the largest of phihat(0) / phihat(k) over the modes (grid.c). At sigma 1.25
 * that is ~25x in 2D and ~125x in 3D (f32 errors measured there at tol 1e-5: 1.3e-5, 9.1e-5). */
double wf_tol_floor_of(int precision, int dim, const int64_t n_modes[3], const int64_t nf[3],
                       int width, double beta);
/* Plan stage (after the width): p->n_fine, fine_prod, mode_prod and tol_floor (with the
 * amplification, wf_tol_floor_of, except for spreadinterponly: no deconvolution);
 * WARPFFT_ERR_BAD_SIZE when the fine grid times ntransf overflows, or a dimension exceeds
 * WF_MAX_FINE_DIM (reaches WF_MAX_FINE_DIM_ND for dim >= 2). */
warpfft_status wf_params_set_grid(wf_params *p);
/* Mode k of array index i (0 <= i < N): modeord 0: i - N/2; 1: i < ceil(N/2) ? i : i - N. */
int64_t wf_mode_of_index(int64_t i, int64_t n, int modeord);
/* Inverse of wf_mode_of_index, for -(N/2) <= k <= (N-1)/2. */
int64_t wf_index_of_mode(int64_t k, int64_t n, int modeord);
/* Point -> fine-grid coordinate in [0, nf), exactly as kernels/ABI.md (and common.cuh). */
double wf_fold(double x, int64_t nf);

#endif /* WARPFFT_PARAMS_GRID_H */
