/*
 * params.h — what a plan chooses, computed on the host without a GPU, one file per stage:
 *   params.c  options, argument checks, and wf_params_make, which runs the stages below in order;
 *   kernel.c  the sinh kernel (beta, embedded widths), quadrature, phihat, deconvolution factors;
 *   width.c   the width rule: predicted aliasing error and the smallest width that meets tol;
 *   grid.c    fine-grid sizes (and their limits), mode order, point folding;
 *   bins.c    spreading bins, shared-memory tiles and the GM/SM method.
 * Pure functions of their arguments (unit-tested in c_core/tests/test_params.c). Size limits are
 * the WF_MAX_* constants below, enforced in wf_check_modes (params.c), wf_params_set_grid
 * (grid.c) and wf_params_set_method (bins.c).
 */
#ifndef WARPFFT_PARAMS_H
#define WARPFFT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

#define WF_MAX_WIDTH_F32 12 /* widths embedded for f32 kernels: 2..12 */
#define WF_MAX_WIDTH_F64 16 /* widths embedded for f64 kernels: 2..16 */
/* Longest fine-grid dimension: cuFFT 12.0 gave wrong 1D transforms above 2^32 points (H200:
 * errors 5e-3 to 0.8 at 4299816960 points, C2C and Z2Z; 2^32 itself exact to rounding). */
#define WF_MAX_FINE_DIM ((int64_t)1 << 32)
/* For dim >= 2 a fine-grid dimension must be below this: the kernels' per-dimension index math
 * is 32-bit (kernels/ABI.md; 2D {2160000000, 4} gave invalid global accesses on an H100). */
#define WF_MAX_FINE_DIM_ND   ((int64_t)1 << 31)
#define WF_SHARED_OPTIN_SM90 ((size_t)227 * 1024) /* opt-in shared memory per block, sm_90 */
#define WF_SHARED_STATIC_MAX ((size_t)48 * 1024)  /* dynamic shared memory without opt-in */
/* Static shared memory an SM kernel declares on top of its dynamic tile (kernels/ABI.md: at
 * most 8.3 KiB, in 3D spread SM f64 w16); tiles are fitted to the opt-in limit minus this. */
#define WF_SM_STATIC_RESERVE ((size_t)9 * 1024)
#define WF_DEFAULT_MAXSUB    1024               /* points per shared-memory subproblem */
#define WF_MAX_MODES_PER_DIM ((int64_t)1 << 52) /* keeps upsampfac * N exact in double */

/* Everything a plan chose. Unused dimensions have n_modes = n_fine = bin_size = n_bins = 1. */
typedef struct wf_params {
    int type, dim, precision; /* precision: WARPFFT_F32 / WARPFFT_F64 */
    int method;               /* WARPFFT_METHOD_GM or WARPFFT_METHOD_SM (never AUTO) */
    int modeord;
    int spreadinterponly;  /* 1: spread/interp only on fk itself (n_fine = n_modes; execute.c) */
    int64_t points_hint;   /* opts.points_hint: expected M for the cost model (0: unknown) */
    double predicted_ms;   /* the cost model's execute time at wf_params_points (cost.c) */
    int check_points;      /* 1: setpts waits and returns BAD_POINTS (setpts.c) */
    double tol, upsampfac; /* upsampfac: the sigma used (the choice, when opts said 0) */
    double tol_floor;      /* rounding floor of the error (grid.c, wf_tol_floor) */
    int width;             /* kernel width w in fine-grid points */
    double beta;           /* kernel shape parameter (sinh type, kernel.c) */
    int64_t n_modes[3], n_fine[3];
    int64_t mode_prod, fine_prod; /* N1*N2*N3, nf1*nf2*nf3 */
    int64_t ntransf;
    int32_t bin_size[3];
    int64_t n_bins[3], nbins; /* bins per dim, and their product (fits in int32) */
    int64_t maxsub;           /* points per subproblem (SM) */
    size_t tile_bytes;        /* SM: dynamic shared memory per block; GM: 0 */
    size_t real_bytes;        /* sizeof(T): 4 or 8 */
    size_t complex_bytes;     /* sizeof(cT): 8 or 16 */
} wf_params;

/* ==== params.c: options, argument checks, and the assembly of a plan's parameters ==== */

/* "f32" or "f64": the kernel-name suffix of a precision. */
const char *wf_prec_name(int precision);

/* ---- validation (each returns a status with a message naming the argument and its value) ---- */
warpfft_status wf_check_type(int type);
warpfft_status wf_check_dim(int dim);
warpfft_status wf_check_precision(int precision);
/* n_modes non-NULL, n_modes[d] in [1, WF_MAX_MODES_PER_DIM] for d < dim. */
warpfft_status wf_check_modes(int dim, const int64_t n_modes[3]);
warpfft_status wf_check_tol(double tol, int precision);
/* type, dim, precision and n_modes, in that order (what plans and direct sums share). */
warpfft_status wf_check_problem(int type, int dim, int precision, const int64_t n_modes[3]);
/* Name of the first coordinate array dim needs that is NULL ("x", "y", "z"), or NULL. */
const char *wf_missing_coord(int dim, const void *x, const void *y, const void *z);
/* opts NULL -> defaults into *out; else validated copy. */
warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out);

/* Validates all plan arguments and fills *p: the basics, then the stages below in order
 * (wf_params_set_kernel, wf_params_set_grid, wf_params_set_method). shared_limit: the device's
 * opt-in shared memory per block (bytes), deciding whether SM tiles fit (WF_SHARED_OPTIN_SM90
 * without a GPU). */
warpfft_status wf_params_make(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                              double tol, int precision, const warpfft_opts *opts,
                              size_t shared_limit, wf_params *p);
/* Fills the plan_info fields that *p determines (n_points = -1, workspace_bytes = 0). */
void wf_params_to_info(const wf_params *p, warpfft_plan_info *info);
/* Device bytes a plan with these params allocates at creation, without cuFFT's work area:
 * fine grid, deconvolution factors, per-bin arrays, the scan's tile sums and the setpts result
 * block. */
size_t wf_params_fixed_bytes(const wf_params *p);
/* Upper bound on the number of subproblems for M points: nbins + ceil(M / maxsub). */
int64_t wf_params_subprob_cap(const wf_params *p, int64_t M);

/* The bin scans of setpts: plans with at most WF_SCAN_BIG_BINS bins use the one-block
 * wf_bin_scan (module sort: one launch, latency dominates), plans with more the three
 * multi-block kernels of module scan_big (loaded only by those plans) over tiles of
 * WF_SCAN_BIG_TILE bins (kernels/scan_big.cu's WF_SCAN_BIG_TILE; blocks of WF_SCAN_BIG_BLOCK
 * threads). The threshold is a first guess, to be tuned on the H100. */
#define WF_SCAN_BIG_BINS  8192
#define WF_SCAN_BIG_TILE  1024
#define WF_SCAN_BIG_BLOCK 256
/* Tiles of the multi-block scan (each block of scan_big reduces or rescans one), 0 for a plan
 * that uses wf_bin_scan; the plan holds two u64 tile sums per tile. */
int64_t wf_params_scan_tiles(const wf_params *p);

/* ==== kernel.c: the sinh kernel, its quadrature, phihat and the deconvolution factors ==== */

#define WF_PI       3.14159265358979323846
#define WF_MAX_QUAD 512 /* Gauss-Legendre nodes over the full interval, at most */

double wf_kernel_beta(int width, double sigma);
int wf_max_width(int precision);
/* Gauss-Legendre nodes x[0..n-1] (ascending) and weights on [-1, 1], by Newton's method. */
void wf_gauss_legendre(int n, double *x, double *w);
/* Nodes over the full interval that wf_deconv_factors uses for width w (even). */
int wf_quad_nodes(int width);
/* The kernel's half rule from n_quad Gauss-Legendre nodes (at most WF_MAX_QUAD, rounded up to
 * even) after t = (w/2) sin(theta): nodes t[j] >= 0 and weights g[j] with
 * int_{-w/2}^{w/2} phi(t) f(t) dt ~ sum_j g[j] f(t[j]) for even f. t and g hold WF_MAX_QUAD / 2;
 * returns the count (n_quad / 2). Shared by phihat (kernel.c) and the width rule (width.c). */
int wf_phi_rule(int width, double beta, int n_quad, double *t, double *g);
/* phihat(k) = int_{-w/2}^{w/2} phi(t) cos(2 pi k t / nf) dt with n_quad Gauss-Legendre nodes
 * after t = (w/2) sin(theta) (which removes the square-root endpoint behaviour of phi). */
double wf_phihat(double k, int64_t nf, int width, double beta, int n_quad);
/* fac[k] = 1 / phihat(k) for k = 0..N/2 (N/2 + 1 entries). */
void wf_deconv_factors(int64_t n_modes, int64_t nf, int width, double beta, double *fac);

/* ==== width.c: the kernel width rule (predicted aliasing error; width.c explains it) ==== */

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
/* The bound from dim such statistics: max(worst offset over every point set, band edge). */
double wf_alias_combine(int dim, const wf_alias_dim s[3]);
/* Predicted relative l2 error bound of a plan for any point set (random strengths or mode
 * coefficients, spread over the modes or all in one): wf_alias_combine of each dim's
 * wf_alias_dim_stats on its own fine grid. */
double wf_alias_error(int dim, const int64_t n_modes[3], double sigma, int width);
/* Smallest width w in [start, max_width] with safety * wf_alias_error <= tol; max_width + 1
 * if none. wf_kernel_width finds the same from an estimate. */
int wf_kernel_width_from(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width,
                         int start);
int wf_kernel_width(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width);
/* Plan stage: p->width and p->beta from p's dim, n_modes, tol, upsampfac and precision;
 * WARPFFT_ERR_BAD_TOL when the precision's embedded widths cannot meet tol. */
warpfft_status wf_params_set_kernel(wf_params *p);

/* ==== cost.c: the choice of sigma and width (upsampfac 0) by predicted execute time ==== */

#define WF_SIGMA_MIN 1.25 /* the upsampling factors accepted: 0 (auto) or [MIN, MAX] */
#define WF_SIGMA_MAX 3.0

/* Predicted execute time (ms) of a plan with these parameters and M points per transform, from
 * the cost model fitted to H100 measurements (cost.c). */
double wf_cost_predict_ms(int type, int dim, int precision, int width, const int64_t n_fine[3],
                          int64_t ntransf, int64_t M);
/* The M the cost model assumes for p: points_hint, or one point per mode when it is 0. */
int64_t wf_params_points(const wf_params *p);
/* Plan stage for upsampfac 0: p->upsampfac, width and beta, the (sigma, w) of least predicted
 * time whose error bound and rounding floor meet tol; WARPFFT_ERR_BAD_TOL if none does. */
warpfft_status wf_params_choose_sigma(wf_params *p);

/* ==== grid.c: fine-grid sizes, mode order and point folding ==== */

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
/* Plan stage (after the width): p->n_fine, fine_prod, mode_prod and tol_floor;
 * WARPFFT_ERR_BAD_SIZE when the fine grid times ntransf overflows, or a dimension exceeds
 * WF_MAX_FINE_DIM (reaches WF_MAX_FINE_DIM_ND for dim >= 2). */
warpfft_status wf_params_set_grid(wf_params *p);
/* Mode k of array index i (0 <= i < N): modeord 0: i - N/2; 1: i < ceil(N/2) ? i : i - N. */
int64_t wf_mode_of_index(int64_t i, int64_t n, int modeord);
/* Inverse of wf_mode_of_index, for -(N/2) <= k <= (N-1)/2. */
int64_t wf_index_of_mode(int64_t k, int64_t n, int modeord);
/* Point -> fine-grid coordinate in [0, nf), exactly as kernels/ABI.md (and common.cuh). */
double wf_fold(double x, int64_t nf);

/* ==== bins.c: spreading bins, shared-memory tiles and the method ==== */

/* Default bin edges per transform type (1, 2), method (GM or SM), dim and precision; unused
 * dims 1. */
void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]);
/* Shared memory of one SM tile: prod_{d<dim} (bs_d + 2*pad) * complex_bytes, pad = (w+1)/2. */
size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes);
/* Shared-memory bytes per SM tile cell of a plan's kernel: complex_bytes, or 16 for 1D and 2D f32
 * spreading (fixed-point words, kernels/spreadinterp.cu WF_SPREAD_SM_FIX). */
size_t wf_sm_cell_bytes(const wf_params *p);
/* Halves the largest bin edge (not below 2) until the tile fits in limit; 1 if it fits. */
int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit);
/* The AUTO rule (to be replaced by measurements): GM or SM. */
int wf_auto_method(int type, int dim, int precision, int width, int sm_fits);
/* Plan stage (after the grid): p->method, bin_size, n_bins, nbins, maxsub and tile_bytes from
 * the options; limit: shared memory per block available to the tile. WARPFFT_ERR_UNSUPPORTED
 * when method SM was asked for and no tile fits; WARPFFT_ERR_BAD_SIZE for more than INT32_MAX
 * bins. */
warpfft_status wf_params_set_method(wf_params *p, const warpfft_opts *o, size_t limit);

#endif /* WARPFFT_PARAMS_H */
