/*
 * type3_params.h — what a type-3 plan chooses for a pair of point sets, on the host without a
 * GPU (type3_params.c; unit-tested in c_core/tests/test_type3.c): centres and half-widths, the
 * spreading grid and gamma, the kernel width, the inner type-2 step's tolerance and the
 * internal precision. The plan itself is plans/type3.c: a spreader on the grid nf and an inner
 * type-2 transform (modeord 1).
 *
 * Math (per dim; sgn = iflag's sign). x = C + x~, s = D + s~ with |x~| <= X, |s~| <= S:
 *   s.x = s.C + D.x~ + s~.x~, so f(s) = exp(i sgn s.C) sum_j [c_j exp(i sgn D.x~_j)] e^{i sgn
 * s~.x~_j}. With x' = x~/gamma on a grid of nf points, spacing h = 2 pi/nf, and xi = gamma s~:
 *   sum_l b_l exp(i sgn xi l h) = phihat(xi) sum_j c'_j exp(i sgn xi x'_j) + aliasing,
 * b = the pre-phased strengths c' spread with the kernel phi, phihat(xi) = int phi(t)
 * cos(2 pi xi t/nf) dt (kernel.c's wf_phihat). The left side is a type-2 sum over modes l
 * (the grid in FFT order: spreading puts position l h at index l mod nf) at the points
 * s' = h xi, so f(s) = exp(i sgn s.C) type2(b; s') / prod_d phihat_d(xi_d).
 * Sizes: gamma = nf/(2 sigma S) puts the targets at |xi| <= nf/(2 sigma) (the band of a type 1/2
 * plan of nf/sigma modes); nf >= 2 sigma S X/pi + w + 1 keeps every footprint off the grid's
 * wrap (|x'/h| + w/2 <= nf/2 - 1/2).
 */
#ifndef WARPFFT_PARAMS_TYPE3_PARAMS_H
#define WARPFFT_PARAMS_TYPE3_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "params/params.h" /* wf_resolved */
#include "warpfft.h"

/* Geometry block the type3 kernels read (doubles; kernels/type3.cu mirrors the offsets). */
#define WF_T3_G_C     0
#define WF_T3_G_XS    3
#define WF_T3_G_D     6
#define WF_T3_G_SS    9
#define WF_T3_G_GAM   12
#define WF_T3_G_QUAD  16
#define WF_T3_NQ      64
#define WF_T3_G_COUNT (WF_T3_G_QUAD + 3 * 2 * WF_T3_NQ)

/* A centre is moved to 0 (and the half-width grown by it) when |centre| < this * half-width:
 * a nearly centred set then needs no phase step (FINUFFT does the same, with 0.1). */
#define WF_T3_CENTRE_FRAC 0.1

/* The host-side choice for one pair of point sets. */
typedef struct wf_t3_params {
    int dim, precision, inner_precision;
    double tol, upsampfac;
    int64_t ntransf;
    double C[3], X[3], D[3], S[3]; /* unused dims: 0 */
    double gamma[3], h[3];         /* unused dims: 1 */
    int width;                     /* spreading kernel */
    double beta;
    int64_t nf[3], nf_prod;    /* spreading grid; unused dims 1 */
    double inner_tol;          /* tol handed to the inner type-2 plan */
    double amp;                /* predicted amplification of the inner step's error */
    double err_outer;          /* predicted error of the spreading step */
    double err_coord;          /* predicted error from rounding rescaled coordinates to f32 */
    int pre_phase, post_phase; /* some D_d != 0, some C_d != 0 */
    wf_resolved inner;         /* the inner type-2 step, resolved once (n_modes = nf, modeord 1,
                                * one width: wf_t3_inner_opts) */
} wf_t3_params;

/* Argument checks of a type-3 plan (dim, precision, ntransf, tol, opts; opts.spreadinterponly
 * must be 0), shared by warpfft_plan_create(3, ...) and warpfft_plan_params3; *tol becomes the
 * tolerance the plan runs at (wf_check_tol). */
warpfft_status wf_t3_check(int dim, int64_t ntransf, double *tol, int precision,
                           const warpfft_opts *opts, warpfft_opts *resolved);

/* Centre c and half-width w of [lo, hi] (finite, lo <= hi), with WF_T3_CENTRE_FRAC. */
void wf_t3_centre(double lo, double hi, double *c, double *w);

/* Spreading grid size of one dim for half-widths X, S (after the X*S >= 1 guard), upsampling
 * sigma and width w: next_smooth_even(max(2 sigma S X/pi + w + 1, 2w)); -1 if not finite or
 * above 2^60. */
int64_t wf_t3_grid_size(double X, double S, double sigma, int width);

/* Amplification of the inner step's error by the division by phihat at the targets:
 * sqrt(prod_d mean_{|xi| <= nf/2} phihat^2 * mean_{|xi| <= nf/(2 sigma)} 1/phihat^2). */
double wf_t3_amplification(int dim, const int64_t nf[3], double sigma, int width, double beta);

/* The whole choice from the bounds (checked: finite, lo <= hi). BAD_SIZE (naming the grid)
 * when a grid dimension exceeds WF_MAX_FINE_DIM or the grid times ntransf overflows; BAD_TOL
 * when no embedded width meets tol. */
warpfft_status wf_t3_params_make(int dim, int64_t ntransf, double tol, int precision,
                                 const warpfft_opts *o, const double xlo[3], const double xhi[3],
                                 const double slo[3], const double shi[3], wf_t3_params *q);

/* The spread-only (type 1) parameters on q's grid, and the inner type-2 parameters (q->inner
 * fitted: nothing chosen again), for a device with `shared_limit` bytes of opt-in shared
 * memory. */
warpfft_status wf_t3_spread_params(const wf_t3_params *q, const warpfft_opts *o,
                                   size_t shared_limit, wf_params *p);
warpfft_status wf_t3_inner_params(const wf_t3_params *q, size_t shared_limit, wf_params *p);
/* Type 3's upsampling factor: opts.upsampfac, or 2 for 0 (type 3 does not choose it yet:
 * its grid comes from the point sets' extents, not from a cost over modes). */
double wf_t3_sigma(const warpfft_opts *o);
/* The options of the inner type-2 plan: the user's, with modeord 1, one width (points_width 0)
 * and AUTO for method OD (which only spreads). */
warpfft_opts wf_t3_inner_opts(const warpfft_opts *o);

/* Fills info's type-3 fields (and type, dim, precision, width, beta, n_fine, n_modes) from q
 * and the spreader's and the inner transform's parameters. */
void wf_t3_to_info(const wf_t3_params *q, const wf_params *spread, const wf_params *inner,
                   warpfft_plan_info *info);

/* Geometry block for the kernels (WF_T3_G_COUNT doubles); returns the quadrature count nq. */
int wf_t3_geometry(const wf_t3_params *q, double *geom);

#endif /* WARPFFT_PARAMS_TYPE3_PARAMS_H */
