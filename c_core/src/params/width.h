/*
 * width.h — the kernel width rule (width.c explains it): the predicted aliasing error of a plan
 * and the smallest width that meets tol.
 */
#ifndef WARPFFT_PARAMS_WIDTH_H
#define WARPFFT_PARAMS_WIDTH_H

#include <stdint.h>

#include "params/base.h"
#include "warpfft.h"

#define WF_ALIAS_SAFETY 1.1 /* width rule: safety * predicted bound <= tol */
/* The safety factor the width rule uses for (dim, tol): WF_ALIAS_SAFETY, larger below tol 1e-9
 * in 2D/3D (width.c says why). */
double wf_alias_safety(int dim, double tol);

/* Mean over the modes -(N/2)..(N-1)/2 of sum_{m != 0} phihat(k + m nf)^2 / phihat(k)^2. */
double wf_alias_mean(int64_t n_modes, int64_t nf, int width, double beta);
/* One dimension's aliasing, from the footprint sums the spreader forms (width.c): with
 * E_k(delta) the error factor of mode k for a point at fine-grid offset delta in [0, 1),
 * offset2 = max_delta mean_k |E|^2 (worst offset, energy spread over the modes), coherent =
 * max_delta |mean_k E| (how much grid-aligned points add up across dims), edge2 = max_k
 * mean_delta |E|^2 (one mode, random points), worst = max_{k, delta} |E|, mean2 = mean_{k,
 * delta} |E|^2 (random points: wf_alias_mean's quantity without its asymptote). */
typedef struct wf_alias_dim {
    double offset2, coherent, edge2, worst, mean2;
} wf_alias_dim;
void wf_alias_dim_stats(int64_t n_modes, int64_t nf, int width, double beta, wf_alias_dim *st);
/* E_k(s / ns) for the modes kk[0..nk-1] (ph[i] = phihat(kk[i]) on the fine grid nf) at the
 * offsets s / ns, s = 0..ns-1, into re[i * stride + s] + i im[i * stride + s]: the footprint
 * sums of wf_alias_dim_stats, for the bounds from the points given (offsets.h). */
void wf_alias_factors(int64_t nf, int width, double beta, int ns, int nk, const double *kk,
                      const double *ph, int stride, double *re, double *im);
/* The bound from dim such statistics: max(worst offset over every point set, band edge). */
double wf_alias_combine(int dim, const wf_alias_dim s[3]);
/* Predicted relative l2 error bound of a plan for any point set (random strengths or mode
 * coefficients, spread over the modes or all in one): wf_alias_combine of each dim's
 * wf_alias_dim_stats on its own fine grid. */
double wf_alias_error(int dim, const int64_t n_modes[3], double sigma, int width);
/* sum_d worst_d: the band edge on grid nodes, every point set's largest error (width.c). */
double wf_alias_worst(int dim, const int64_t n_modes[3], double sigma, int width);
/* sqrt(sum_d edge2_d): the band edge on independent uniform offsets, what random points see
 * (with all energy in one mode; never below spread data), each dim on its own fine grid. */
double wf_alias_random(int dim, const int64_t n_modes[3], double sigma, int width);
/* Whether width w meets tol at sigma: safety * wf_alias_error <= tol and wf_alias_worst <= tol. */
int wf_alias_passes(int dim, const int64_t n_modes[3], double tol, double sigma, int w);
/* The same, and by how much: *excess = max(safety * wf_alias_error, wf_alias_worst) / tol (about
 * 1 at the limit, falling with sigma and w), for a search's root finding (cost.c). */
int wf_alias_check(int dim, const int64_t n_modes[3], double tol, double sigma, int w,
                   double *excess);
/* Smallest width w in [start, max_width] that wf_alias_passes; max_width + 1
 * if none. wf_kernel_width finds the same from an estimate. */
int wf_kernel_width_from(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width,
                         int start);
int wf_kernel_width(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width);
/* Plan stage: p->width and p->beta from p's dim, n_modes, tol, upsampfac and precision;
 * WARPFFT_ERR_BAD_TOL when the precision's embedded widths cannot meet tol. */
warpfft_status wf_params_set_kernel(wf_params *p);

#endif /* WARPFFT_PARAMS_WIDTH_H */
