/*
 * cost.c — the choice of upsampling factor sigma and kernel width w per plan (upsampfac 0,
 * "auto"): the predicted execute time of a plan from a cost model fitted to GPU measurements,
 * and the search for the (sigma, w) with the least predicted time whose worst-case error bound
 * (width.c) and rounding floor (grid.c) meet tol. No GPU; see params.h.
 *
 * Why a choice at all: the error bound falls like exp(-pi w sqrt(1 - 1/sigma)), so a larger
 * sigma buys the same accuracy with a narrower kernel. Spreading and interpolation cost
 * ~M w^d, the FFT and the grid passes ~sigma^d N^d: which wins depends on dim, precision, tol
 * and the points per mode. With sigma fixed at 2 and w an integer the bound sat anywhere from
 * 1 to 10x below tol (the 12-20x spare accuracy of uniform points); with sigma free, each w gets
 * the smallest sigma whose bound meets tol, so the bound is tight and the time is the cost
 * model's choice among the widths.
 *
 * The model (per dim, precision and type; execute, one transform, milliseconds):
 *   T = M (a w^d + b) + F (c log2 F + g) + t0,   F = nf_1 nf_2 nf_3,
 * a: spreading or interpolation per point and footprint cell, b: per point (fold, kernel setup),
 * c: the FFT per cell and log2, g: per cell passes over the fine grid (memset, deconvolve or
 * amplify), t0: launches. The coefficients are in WF_COST below with their source.
 */
#include "params.h"

#include <math.h>

#include "runtime.h"

/* Nanoseconds. Fitted to suite B and the costmodel sweep on an H100 (docs/accuracy.md,
 * "The cost model"); [dim - 1][precision f32, f64][type 1, 2]. */
typedef struct wf_cost_coef {
    double a, b, c, g, t0_ms;
} wf_cost_coef;

static const wf_cost_coef WF_COST[3][2][2] = {
    /* 1D */ {{{0.0067, 0.02, 0.0010, 0.006, 0.02}, {0.0040, 0.02, 0.0010, 0.006, 0.02}},
              {{0.0100, 0.03, 0.0020, 0.012, 0.02}, {0.0060, 0.03, 0.0020, 0.012, 0.02}}},
    /* 2D */
    {{{0.0033, 0.02, 0.0010, 0.006, 0.02}, {0.0015, 0.02, 0.0010, 0.006, 0.02}},
     {{0.0048, 0.03, 0.0020, 0.012, 0.02}, {0.0020, 0.03, 0.0020, 0.012, 0.02}}},
    /* 3D */
    {{{0.0025, 0.02, 0.0008, 0.006, 0.02}, {0.00085, 0.02, 0.0008, 0.006, 0.02}},
     {{0.0050, 0.03, 0.0016, 0.012, 0.02}, {0.0014, 0.03, 0.0016, 0.012, 0.02}}}};

double wf_cost_predict_ms(int type, int dim, int precision, int width, const int64_t n_fine[3],
                          int64_t ntransf, int64_t M) {
    const wf_cost_coef *k = &WF_COST[dim - 1][precision == WARPFFT_F64][type == 2];
    double F = 1.0, wd = 1.0;
    for (int d = 0; d < dim; d++) {
        F *= (double)n_fine[d];
        wd *= width;
    }
    double per = (double)M * (k->a * wd + k->b) + F * (k->c * log2(F > 2.0 ? F : 2.0) + k->g);
    return (double)ntransf * per * 1e-6 + k->t0_ms;
}

/* ---------------------------------------------------------------- the search */

/* A small sigma amplifies rounding (grid.c, wf_tol_floor_of): a candidate's floor may exceed
 * the floor sigma 2 has (no amplification) only up to this part of tol. */
#define WF_FLOOR_SHARE 0.25

/* 1 when (sigma, w) meets tol for plan p: the bound with the safety factor, and the rounding
 * floor. */
static int passes(const wf_params *p, double sigma, int w) {
    if (wf_alias_safety(p->dim, p->tol) * wf_alias_error(p->dim, p->n_modes, sigma, w) > p->tol)
        return 0;
    if (sigma >= 2.0)
        return 1; /* no amplification (wf_tol_floor_of) */
    int64_t nf[3] = {1, 1, 1};
    for (int d = 0; d < p->dim; d++)
        nf[d] = wf_fine_size(p->n_modes[d], sigma, w);
    return wf_tol_floor_of(p->precision, p->dim, p->n_modes, nf, w, wf_kernel_beta(w, sigma)) <=
           WF_FLOOR_SHARE * p->tol;
}

static double sigma_of(double u) {
    return 1.0 / (1.0 - u * u);
}

/* The smallest sigma (to within 1%) in [WF_SIGMA_MIN, WF_SIGMA_MAX] with passes(p, ., w),
 * given that WF_SIGMA_MAX passes. The bound is close to exp(-pi w u gamma), u = sqrt(1 -
 * 1/sigma), so the bisection runs in u (5-6 evaluations). */
static double least_sigma(const wf_params *p, int w) {
    if (passes(p, WF_SIGMA_MIN, w))
        return WF_SIGMA_MIN;
    double ulo = sqrt(1.0 - 1.0 / WF_SIGMA_MIN), uhi = sqrt(1.0 - 1.0 / WF_SIGMA_MAX);
    while (sigma_of(uhi) - sigma_of(ulo) > 0.01 * sigma_of(ulo)) {
        double um = 0.5 * (ulo + uhi);
        if (passes(p, sigma_of(um), w))
            uhi = um;
        else
            ulo = um;
    }
    /* The grid is the next 2,3,5,7-smooth even size: step down to smaller such sizes (of the
     * first dimension) while they pass, which the bisection's 1% may have stepped over
     * (e.g. 258 -> 256 at sigma 2). */
    double s = sigma_of(uhi), n0 = (double)p->n_modes[0];
    for (int i = 0; i < 3; i++) {
        int64_t nf = wf_fine_size(p->n_modes[0], s, w), prev = nf - 2;
        while (prev >= 2 * w && !wf_is_smooth(prev))
            prev -= 2;
        double sp = (double)prev / n0;
        if (prev < 2 * w || sp < WF_SIGMA_MIN || !passes(p, sp, w))
            break;
        s = sp;
    }
    return s;
}

/* Memo of the last choices per thread (the search evaluates the bound ~10-30 times; a plan
 * of a shape made before costs a lookup). Thread-local: no lock, nothing to reset after fork. */
#define WF_CHOICE_MEMO 16
typedef struct choice_memo {
    int type, dim, precision, width;
    int64_t n[3], ntransf, M;
    double tol, sigma;
} choice_memo;
static _Thread_local choice_memo memo[WF_CHOICE_MEMO];
static _Thread_local int n_memo, next_memo;

static const choice_memo *memo_lookup(const wf_params *p, int64_t M) {
    for (int i = 0; i < n_memo; i++) {
        const choice_memo *m = &memo[i];
        if (m->type == p->type && m->dim == p->dim && m->precision == p->precision &&
            m->tol == p->tol && m->ntransf == p->ntransf && m->M == M && m->n[0] == p->n_modes[0] &&
            m->n[1] == p->n_modes[1] && m->n[2] == p->n_modes[2])
            return m;
    }
    return NULL;
}

static const choice_memo *memo_store(const choice_memo *c) {
    choice_memo *m = &memo[next_memo];
    *m = *c;
    next_memo = (next_memo + 1) % WF_CHOICE_MEMO;
    if (n_memo < WF_CHOICE_MEMO)
        n_memo++;
    return m;
}

/* The search: every width from the one sigma 3 needs (nothing narrower passes) upwards, each
 * with its least sigma, while a wider kernel can still be faster: at sigma 1.25 its FFT is the
 * smallest it can be, so once its spreading alone costs more than the best so far, it and all
 * wider ones lose. Width 0: nothing passes. */
static choice_memo search(const wf_params *p, int64_t M) {
    choice_memo c = {
        p->type,    p->dim, p->precision, 0,  {p->n_modes[0], p->n_modes[1], p->n_modes[2]},
        p->ntransf, M,      p->tol,       0.0};
    int wmax = wf_max_width(p->precision);
    double best = INFINITY;
    int w0 = wf_kernel_width(p->dim, p->n_modes, p->tol, WF_SIGMA_MAX, wmax);
    if (w0 <= wmax && !passes(p, WF_SIGMA_MAX, w0))
        w0++; /* the bound passes but not the floor: cannot happen at sigma >= 2 */
    for (int w = w0; w <= wmax; w++) {
        int64_t nf[3] = {1, 1, 1};
        for (int d = 0; d < p->dim; d++)
            nf[d] = wf_fine_size(p->n_modes[d], WF_SIGMA_MIN, w);
        if (wf_cost_predict_ms(p->type, p->dim, p->precision, w, nf, p->ntransf, M) >= best)
            break;
        double s = least_sigma(p, w);
        for (int d = 0; d < p->dim; d++)
            nf[d] = wf_fine_size(p->n_modes[d], s, w);
        double t = wf_cost_predict_ms(p->type, p->dim, p->precision, w, nf, p->ntransf, M);
        if (t < best) {
            best = t;
            c.width = w;
            c.sigma = s;
        }
        if (s == WF_SIGMA_MIN)
            break;
    }
    return c;
}

int64_t wf_params_points(const wf_params *p) {
    if (p->points_hint > 0)
        return p->points_hint;
    int64_t m = 1;
    for (int d = 0; d < p->dim; d++)
        m = m > INT64_MAX / p->n_modes[d] ? INT64_MAX : m * p->n_modes[d];
    return m;
}

warpfft_status wf_params_choose_sigma(wf_params *p) {
    int64_t M = wf_params_points(p);
    const choice_memo *c = memo_lookup(p, M);
    choice_memo found;
    if (!c) {
        found = search(p, M);
        c = found.width > 0 ? memo_store(&found) : &found;
    }
    if (c->width == 0)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g cannot be met by any upsampling factor in [%g, %g] with the "
                        "kernel widths embedded for %s (at most %d)",
                        p->tol, WF_SIGMA_MIN, WF_SIGMA_MAX, wf_prec_name(p->precision),
                        wf_max_width(p->precision));
    p->upsampfac = c->sigma;
    p->width = c->width;
    p->beta = wf_kernel_beta(c->width, c->sigma);
    return WARPFFT_SUCCESS;
}
