/*
 * type3_params.c — what a type-3 plan chooses for a pair of point sets, on the host without a
 * GPU (type3_params.h explains the math): centres and half-widths, the spreading grid and gamma,
 * the spreading kernel's width, the inner type-2 step's tolerance, and the internal precision.
 *
 * Accuracy budget. Three errors add (in squares) to the relative l2 error over the targets:
 *  - the spreading step's aliasing: as a type-1 plan of nf/sigma modes on the grid nf
 *    (wf_alias_mean over the continuous band |xi| <= nf/(2 sigma), outer_error);
 *  - the inner type-2 step's error E2 (its own width rule, tol handed down), amplified by the
 *    division by phihat(xi): uniform in absolute terms over the targets, it is divided by
 *    phihat, small at the band edge. For random sources, the amplification is
 *    A^2 = prod_d mean_full(phihat^2) * mean_band(1/phihat^2) (wf_t3_amplification);
 *  - f32 internal pipelines only: rounding the rescaled coordinates to f32 moves each source by
 *    ~2^-24 pi, a phase error growing with xi (up to nf/(2 sigma)) and, for the inner targets,
 *    with the grid index (up to nf/2).
 * Each gets an equal share of tol (WF_T3_SHARE2 each of two in f64, WF_T3_SHARE3 each of three
 * in f32), with the width rule's safety factor on the first two and WF_T3_COORD_SAFETY on the
 * third. The shares are below 1/sqrt 2 and 1/sqrt 3: a numpy emulation of the whole pipeline
 * (1D, uniform data) measured the inner step's amplified error 7% above the prediction, and
 * equal shares of 1/sqrt 2 then gave 0.78 tol, too close for sampled errors. An f32 plan runs
 * the inner steps in f32 only when all three fit; else in f64 (f64 kernels at the width f32 needs:
 * correct to tol where the reference library returns 1e-1 at X*S ~ 1e6).
 */
#include "params/type3_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "params/grid.h"
#include "params/kernel.h"
#include "params/params.h"
#include "params/bins.h"
#include "params/width.h"
#include "runtime/error.h"

#define WF_T3_SAFETY       1.25 /* as width.c's WF_ALIAS_SAFETY */
#define WF_T3_COORD_SAFETY 4.0
#define WF_T3_AMP_NODES    64
#define WF_T3_SHARE2       0.6
#define WF_T3_SHARE3       0.5

warpfft_status wf_t3_check(int dim, int64_t ntransf, double *tol, int precision,
                           const warpfft_opts *opts, warpfft_opts *resolved) {
    warpfft_status st = wf_check_dim(dim);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_precision(precision);
    if (st == WARPFFT_SUCCESS && ntransf < 1)
        st = wf_error(WARPFFT_ERR_BAD_SIZE, "ntransf = %lld; must be >= 1", (long long)ntransf);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_tol(tol, precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, resolved);
    /* Spread/interp only is a mode of types 1 and 2 (the grid is fk); type 3 has no such mode,
     * and handed down to its inner type-2 step it would skip that step's FFT and deconvolution:
     * wrong numbers returned with success. */
    if (st == WARPFFT_SUCCESS && resolved->spreadinterponly)
        st = wf_error(WARPFFT_ERR_INVALID_ARG,
                      "opts.spreadinterponly = 1 is for types 1 and 2 only (spread or "
                      "interpolate only); a type-3 plan needs it 0");
    /* real strengths would make type 3's targets' values no half of anything: no symmetry */
    if (st == WARPFFT_SUCCESS && resolved->real_data)
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "opts.real_data = 1 is for types 1 and 2 only (real strengths, half "
                      "modes); a type-3 plan needs it 0");
    /* its spreading step spreads (type 1's rule), its inner step interpolates */
    if (st == WARPFFT_SUCCESS && resolved->deterministic &&
        (resolved->method == WARPFFT_METHOD_GM || resolved->method == WARPFFT_METHOD_SM))
        st = wf_error(WARPFFT_ERR_INVALID_ARG,
                      "opts.deterministic = 1 with opts.method = %d (%s): type 3's spreading "
                      "step would add with atomics, whose order changes from run to run; use "
                      "method 0 (AUTO) or 3 (OD)",
                      (int)resolved->method, resolved->method == WARPFFT_METHOD_GM ? "GM" : "SM");
    return st;
}

void wf_t3_centre(double lo, double hi, double *c, double *w) {
    double cc = 0.5 * lo + 0.5 * hi, ww = 0.5 * hi - 0.5 * lo; /* no overflow near DBL_MAX */
    if (fabs(cc) < WF_T3_CENTRE_FRAC * ww) {
        ww += fabs(cc);
        cc = 0.0;
    }
    *c = cc;
    *w = ww;
}

int64_t wf_t3_grid_size(double X, double S, double sigma, int width) {
    double v = 2.0 * sigma * S * X / WF_PI + (double)width + 1.0;
    if (!(v <= (double)((int64_t)1 << 60)))
        return -1;
    int64_t n = (int64_t)ceil(v);
    if (n < 2 * (int64_t)width)
        n = 2 * (int64_t)width;
    return wf_next_smooth_even(n);
}

/* X*S >= 1 (a grid of at least ~2 sigma/pi + w points), as FINUFFT: a point set of zero
 * spread gets the other's reciprocal. */
static void guard_spreads(double *X, double *S) {
    if (*X == 0.0) {
        if (*S == 0.0) {
            *X = 1.0;
            *S = 1.0;
        } else {
            *X = 1.0 / *S;
        }
    } else if (*S < 1.0 / *X) {
        *S = 1.0 / *X;
    }
}

/* mean over |xi| <= lim of phihat(xi)^pw (pw = 2 or -2) with the half rule (t, g), Gauss-Legendre
 * in xi */
static double phihat_mean(int nr, const double *t, const double *g, int64_t nf, double lim,
                          int pw) {
    double x[WF_T3_AMP_NODES], wt[WF_T3_AMP_NODES], sum = 0.0;
    wf_gauss_legendre(WF_T3_AMP_NODES, x, wt);
    for (int i = 0; i < WF_T3_AMP_NODES; i++) {
        double xi = 0.5 * lim * (x[i] + 1.0), ph = 0.0;
        for (int j = 0; j < nr; j++)
            ph += g[j] * cos(2.0 * WF_PI * xi * t[j] / (double)nf);
        sum += 0.5 * wt[i] * (pw > 0 ? ph * ph : 1.0 / (ph * ph));
    }
    return sum; /* weights sum to 2: 0.5 * sum = the mean over [0, lim] */
}

double wf_t3_amplification(int dim, const int64_t nf[3], double sigma, int width, double beta) {
    double t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2], a2 = 1.0, f = 1.0;
    int nr = wf_phi_rule(width, beta, wf_quad_nodes(width), t, g);
    for (int d = 0; d < dim; d++) {
        if (d == 0 || nf[d] != nf[d - 1])
            f = phihat_mean(nr, t, g, nf[d], 0.5 * (double)nf[d], 2) *
                phihat_mean(nr, t, g, nf[d], 0.5 * (double)nf[d] / sigma, -2);
        a2 *= f;
    }
    return sqrt(a2);
}

/* Spreading-step error of width w. The targets fill the continuous band |xi| <= nf/(2 sigma),
 * edges included (a type-1 plan's integer modes stop short of one edge), and the aliasing
 * ratio depends on xi/nf only: so the mean over the band is that of a large type-1 plan with
 * the same band ratio (2^20 modes on sigma 2^20 points; the band-edge term is then 2^-20 of
 * the sum), the same for every dim and grid size. */
static double outer_error(int dim, double sigma, int w, double beta) {
    const int64_t n = (int64_t)1 << 20;
    return sqrt((double)dim * wf_alias_mean(n, (int64_t)(sigma * (double)n), w, beta));
}

/* Coordinate rounding error of an f32 pipeline (file comment): per dim 2 (nf pi 2^-24/(6 sigma))^2
 */
static double coord_error(int dim, const int64_t nf[3], double sigma) {
    double sum = 0.0;
    for (int d = 0; d < dim; d++) {
        double e = (double)nf[d] * WF_PI * ldexp(1.0, -24) / (6.0 * sigma);
        sum += 2.0 * e * e;
    }
    return sqrt(sum);
}

static warpfft_status grid_too_large(const wf_t3_params *q, int d, int w) {
    return wf_error(WARPFFT_ERR_BAD_SIZE,
                    "type 3: sources spread X = %g and targets spread S = %g in dim %d "
                    "(X*S = %g) need a spreading grid of %.3g points in that dim (upsampfac %g, "
                    "width %d); the limit is 2^32 per dim",
                    q->X[d], q->S[d], d, q->X[d] * q->S[d],
                    2.0 * q->upsampfac * q->S[d] * q->X[d] / WF_PI + w + 1, q->upsampfac, w);
}

/* nf and its product for width w; BAD_SIZE when too large. */
static warpfft_status set_grid(wf_t3_params *q, int w) {
    int64_t prod = 1, bytes;
    for (int d = 0; d < 3; d++) {
        q->nf[d] = d < q->dim ? wf_t3_grid_size(q->X[d], q->S[d], q->upsampfac, w) : 1;
        if (q->nf[d] < 0 || q->nf[d] > WF_MAX_FINE_DIM)
            return grid_too_large(q, d, w);
        if (__builtin_mul_overflow(prod, q->nf[d], &prod))
            prod = -1;
        if (prod < 0)
            break;
    }
    if (prod < 0 || __builtin_mul_overflow(prod, q->ntransf, &bytes) ||
        __builtin_mul_overflow(bytes, (int64_t)16, &bytes))
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "type 3: the spreading grid {%lld, %lld, %lld} times ntransf = %lld is "
                        "too large to address (X*S = {%g, %g, %g})",
                        (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2],
                        (long long)q->ntransf, q->X[0] * q->S[0], q->X[1] * q->S[1],
                        q->X[2] * q->S[2]);
    q->nf_prod = prod;
    for (int d = 0; d < 3; d++) {
        q->gamma[d] = d < q->dim ? (double)q->nf[d] / (2.0 * q->upsampfac * q->S[d]) : 1.0;
        q->h[d] = d < q->dim ? 2.0 * WF_PI / (double)q->nf[d] : 1.0;
    }
    return WARPFFT_SUCCESS;
}

/* An inner step's failure st, its message prefixed with the grid. */
static warpfft_status inner_error(const wf_t3_params *q, warpfft_status st) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", wf_last_error());
    return wf_error(st, "type 3: the inner type-2 step on the grid {%lld, %lld, %lld}: %s",
                    (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2], msg);
}

/* The choice for internal precision ip, the inner step resolved once (q->inner): 0 = fits, -1 =
 * does not fit (try f64), else an error status (already recorded). */
static int choose(wf_t3_params *q, int ip, const warpfft_opts *o) {
    int maxw = wf_max_width(ip);
    double share = ip == WARPFFT_F64 ? WF_T3_SHARE2 : WF_T3_SHARE3, floor_tol, tol_hi;
    wf_tol_bounds(ip, &floor_tol, &tol_hi);
    q->inner_precision = ip;
    int w = 2;
    for (; w <= maxw; w++) {
        warpfft_status st = set_grid(q, w);
        if (st != WARPFFT_SUCCESS)
            return (int)st;
        q->beta = wf_kernel_beta(w, q->upsampfac);
        q->err_outer = outer_error(q->dim, q->upsampfac, w, q->beta);
        if (WF_T3_SAFETY * q->err_outer <= share * q->tol)
            break;
    }
    if (w > maxw)
        return -1;
    q->width = w;
    /* below 1 for random sources (phihat falls outside the band); kept >= 1 for clustered ones,
     * whose grid energy sits where the inner step's aliasing is larger than its mean */
    q->amp = wf_t3_amplification(q->dim, q->nf, q->upsampfac, w, q->beta);
    if (q->amp < 1.0)
        q->amp = 1.0;
    q->inner_tol = share * q->tol / q->amp;
    if (q->inner_tol > 0.1)
        q->inner_tol = 0.1;
    if (q->inner_tol < floor_tol) {
        if (ip == WARPFFT_F32)
            return -1;
        q->inner_tol = floor_tol; /* the f64 floor: as types 1 and 2 */
    }
    warpfft_opts io = wf_t3_inner_opts(o);
    warpfft_status st =
        wf_params_resolve(2, q->dim, q->nf, q->ntransf, q->inner_tol, ip, &io, &q->inner);
    if (st == WARPFFT_ERR_BAD_TOL) { /* no embedded width meets inner_tol (or its floor) */
        wf_clear_error();
        return -1;
    }
    if (st != WARPFFT_SUCCESS)
        return (int)inner_error(q, st);
    q->err_coord = ip == WARPFFT_F32 ? coord_error(q->dim, q->nf, q->upsampfac) : 0.0;
    if (WF_T3_COORD_SAFETY * q->err_coord > share * q->tol)
        return -1;
    return 0;
}

warpfft_status wf_t3_params_make(int dim, int64_t ntransf, double tol, int precision,
                                 const warpfft_opts *opts, const double xlo[3], const double xhi[3],
                                 const double slo[3], const double shi[3], wf_t3_params *q) {
    warpfft_opts o;
    warpfft_status st = wf_t3_check(dim, ntransf, &tol, precision, opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (!xlo || !xhi || !slo || !shi)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "type 3: a bounds array is NULL");
    for (int d = 0; d < dim; d++)
        if (!(isfinite(xlo[d]) && isfinite(xhi[d]) && isfinite(slo[d]) && isfinite(shi[d])) ||
            xlo[d] > xhi[d] || slo[d] > shi[d])
            return wf_error(WARPFFT_ERR_BAD_POINTS,
                            "type 3: bounds of dim %d: sources [%g, %g], targets [%g, %g]; must "
                            "be finite with lo <= hi",
                            d, xlo[d], xhi[d], slo[d], shi[d]);
    memset(q, 0, sizeof *q);
    q->dim = dim;
    q->precision = precision;
    q->tol = tol;
    q->upsampfac = wf_t3_sigma(&o);
    q->ntransf = ntransf;
    for (int d = 0; d < dim; d++) {
        wf_t3_centre(xlo[d], xhi[d], &q->C[d], &q->X[d]);
        wf_t3_centre(slo[d], shi[d], &q->D[d], &q->S[d]);
        guard_spreads(&q->X[d], &q->S[d]);
        q->pre_phase |= q->D[d] != 0.0;
        q->post_phase |= q->C[d] != 0.0;
    }
    int r = precision == WARPFFT_F32 ? choose(q, WARPFFT_F32, &o) : -1;
    if (r == -1)
        r = choose(q, WARPFFT_F64, &o);
    if (r == -1)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "type 3: tol = %g cannot be met with the embedded kernel widths (at most "
                        "%d) on a spreading grid of {%lld, %lld, %lld}",
                        tol, WF_MAX_WIDTH_F64, (long long)q->nf[0], (long long)q->nf[1],
                        (long long)q->nf[2]);
    if (r != 0)
        return (warpfft_status)r;
    /* the spreader's and the inner transform's parameters must exist too (sizes, bins) */
    wf_params p;
    st = wf_t3_spread_params(q, &o, WF_SHARED_OPTIN_SM90, &p);
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_inner_params(q, WF_SHARED_OPTIN_SM90, &p);
    return st;
}

double wf_t3_sigma(const warpfft_opts *o) {
    return o->upsampfac == 0.0 ? 2.0 : o->upsampfac;
}

warpfft_opts wf_t3_inner_opts(const warpfft_opts *o) {
    warpfft_opts r = *o;
    r.modeord = 1;
    r.upsampfac = wf_t3_sigma(o);
    r.spreadinterponly = 0; /* refused by wf_t3_check; never the inner step's */
    r.points_width = 0;     /* one width: the inner step's points are type 3's targets */
    /* OD spreads only (the spreading step's method): the inner step interpolates by AUTO's
     * choice, deterministic with any method */
    if (r.method == WARPFFT_METHOD_OD)
        r.method = WARPFFT_METHOD_AUTO;
    return r;
}

warpfft_status wf_t3_spread_params(const wf_t3_params *q, const warpfft_opts *o,
                                   size_t shared_limit, wf_params *p) {
    memset(p, 0, sizeof *p);
    p->type = 1;
    p->dim = q->dim;
    p->precision = q->inner_precision;
    p->modeord = 0;
    p->tol = q->tol;
    p->upsampfac = q->upsampfac;
    p->ntransf = q->ntransf;
    p->width = q->width;
    p->beta = q->beta;
    for (int d = 0; d < 3; d++)
        p->n_modes[d] = p->n_fine[d] = q->nf[d];
    p->mode_prod = p->fine_prod = q->nf_prod;
    p->real_bytes = q->inner_precision == WARPFFT_F64 ? 8 : 4;
    p->complex_bytes = 2 * p->real_bytes;
    warpfft_status st = wf_params_set_method(
        p, o, shared_limit > WF_SM_STATIC_RESERVE ? shared_limit - WF_SM_STATIC_RESERVE : 0);
    if (st != WARPFFT_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", wf_last_error());
        return wf_error(st,
                        "type 3: the spreading grid {%lld, %lld, %lld} that X*S = {%g, %g, %g} "
                        "needs: %s",
                        (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2],
                        q->X[0] * q->S[0], q->X[1] * q->S[1], q->X[2] * q->S[2], msg);
    }
    return WARPFFT_SUCCESS;
}

warpfft_status wf_t3_inner_params(const wf_t3_params *q, size_t shared_limit, wf_params *p) {
    warpfft_status st = wf_params_fit(&q->inner, shared_limit, p);
    return st == WARPFFT_SUCCESS ? st : inner_error(q, st);
}

void wf_t3_to_info(const wf_t3_params *q, const wf_params *spread, const wf_params *inner,
                   warpfft_plan_info *info) {
    info->kernel = WARPFFT_KERNEL_SINH; /* as wf_params_to_info: plan_params3 fills no more */
    info->width = q->width;
    info->beta = q->beta;
    info->method = spread->method;
    info->inner_precision = q->inner_precision;
    info->inner_width = inner->width;
    info->inner_beta = inner->beta;
    for (int d = 0; d < 3; d++) {
        info->n_modes[d] = info->n_fine[d] = q->nf[d];
        info->bin_size[d] = spread->bin_size[d];
        info->inner_fine[d] = inner->n_fine[d];
        info->x_center[d] = q->C[d];
        info->x_half[d] = q->X[d];
        info->s_center[d] = q->D[d];
        info->s_half[d] = q->S[d];
        info->gamma[d] = q->gamma[d];
    }
}

int wf_t3_geometry(const wf_t3_params *q, double *geom) {
    double t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2];
    memset(geom, 0, WF_T3_G_COUNT * sizeof *geom);
    int nr = wf_phi_rule(q->width, q->beta, wf_quad_nodes(q->width), t, g);
    if (nr > WF_T3_NQ)
        nr = WF_T3_NQ; /* not reached: 2w + 16 <= 48 nodes for w <= 16 */
    for (int d = 0; d < q->dim; d++) {
        geom[WF_T3_G_C + d] = q->C[d];
        geom[WF_T3_G_XS + d] = 1.0 / q->gamma[d];
        geom[WF_T3_G_D + d] = q->D[d];
        geom[WF_T3_G_SS + d] = q->h[d] * q->gamma[d];
        geom[WF_T3_G_GAM + d] = q->gamma[d];
        double *a = geom + WF_T3_G_QUAD + 2 * WF_T3_NQ * d, *w = a + WF_T3_NQ;
        for (int j = 0; j < nr; j++) {
            a[j] = 2.0 * t[j] / (double)q->nf[d]; /* cos(2 pi xi t/nf) = cospi(xi a) */
            w[j] = g[j];
        }
    }
    return nr;
}

/* ---------------------------------------------------------------- public, no GPU */

WARPFFT_API warpfft_status warpfft_plan_params3(int dim, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, const double x_lo[3],
                                                const double x_hi[3], const double s_lo[3],
                                                const double s_hi[3], warpfft_plan_info *info) {
    wf_clear_error();
    if (!info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "info is NULL");
    wf_t3_params q;
    warpfft_opts o;
    warpfft_status st =
        wf_t3_params_make(dim, ntransf, tol, (int)precision, opts, x_lo, x_hi, s_lo, s_hi, &q);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, &o);
    wf_params sp, ip;
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_spread_params(&q, &o, WF_SHARED_OPTIN_SM90, &sp);
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_inner_params(&q, WF_SHARED_OPTIN_SM90, &ip);
    if (st != WARPFFT_SUCCESS)
        return st;
    memset(info, 0, sizeof *info);
    info->type = 3;
    info->dim = dim;
    info->precision = (int32_t)precision;
    info->deterministic = o.deterministic;
    info->upsampfac = q.upsampfac;
    info->tol = q.tol;
    info->ntransf = ntransf;
    info->n_points = -1;
    info->n_targets = -1;
    info->n_sets = -1;
    wf_t3_to_info(&q, &sp, &ip, info);
    /* the spreading grid and the inner plan's fixed memory */
    info->workspace_bytes =
        (size_t)q.nf_prod * (size_t)ntransf * sp.complex_bytes + wf_params_fixed_bytes(&ip);
    return WARPFFT_SUCCESS;
}
