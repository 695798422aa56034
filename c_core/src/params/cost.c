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
 * The model (per dim, precision and type, for the SM method AUTO uses; milliseconds):
 *   T = ntransf [M (a w^d + b) + F tile (h + h2 big) + F g] + c F log2 F + f0,
 * F: fine-grid cells; tile = prod_d (1 + 2 ceil(w/2) / bin_d), the cells of an SM tile with its
 * halo per cell of its bin (the tile is read or flushed once per bin: it made 3D type 1 at sigma
 * 3 1.4x slower than at 2 with the same width); big = 1 when the grid does not fit in L2 (F x
 * complex bytes > 40 MB); c, f0: cuFFT alone. Fitted by scripts/fit_costmodel.py (non-negative
 * least squares on relative errors) to benches/costmodel-h100.jsonl, 623 executes on an H100
 * over sigma 1.25..3, widths 3..16, 1D/2D/3D, f32/f64, types 1/2 at 1e6 and 1e7 points; rms
 * relative error 6-24% per group (docs/accuracy.md, "The cost model"). Where the model is
 * unsure the choice keeps sigma 2: another sigma must be predicted faster by WF_COST_MARGIN.
 */
#include "params/cost.h"

#include <math.h>

#include "params/bins.h"
#include "params/grid.h"
#include "params/kernel.h"
#include "params/width.h"
#include "runtime/error.h"

#define WF_COST_L2_BYTES 40e6
#define WF_COST_MARGIN   0.95

/* [dim - 1][f32, f64][type 1, 2]: a, b, h, h2, g (ns per point, per cell). */
static const double WF_COST[3][2][2][5] = {
    {{{0.00530446, 0.0330132, 0, 0, 0.00506124}, {0.00126533, 0.0420378, 0, 0, 0.0109102}},
     {{0.0130756, 0.0159782, 0, 0, 0.0356206}, {0.00365267, 0.0411206, 0.0165566, 0.0289634, 0}}},
    {{{0.00340219, 0.0605529, 0, 0.0201313, 0}, {0.000578717, 0.0431202, 0, 0.00738243, 0.0216398}},
     {{0.00371422, 0.178589, 0, 0, 0}, {0.00127876, 0.0654838, 0.00423263, 0, 0.0148319}}},
    {{{0.00110343, 0.289444, 0.000834066, 0.00222258, 0},
      {0.000703828, 0.0547562, 0.00200686, 0, 0.0181627}},
     {{0.00395084, 0, 0.00392241, 0.0020013, 0},
      {0.000995945, 0.108497, 0.0119565, 0.000587233, 0}}}};
/* cuFFT [dim - 1][f32, f64]: c (ns per cell and log2), f0 (ms). */
static const double WF_COST_FFT[3][2][2] = {{{0.000739637, 0.0109873}, {0.00164743, 0.00990027}},
                                            {{0.000611692, 0.00739766}, {0.00144671, 0.00710495}},
                                            {{0.000696088, 0.00755166}, {0.00137101, 0.00610739}}};

double wf_cost_predict_ms(int type, int dim, int precision, int width, const int64_t n_fine[3],
                          int64_t ntransf, int64_t M) {
    int f64 = precision == WARPFFT_F64;
    const double *k = WF_COST[dim - 1][f64][type == 2];
    const double *fc = WF_COST_FFT[dim - 1][f64];
    int32_t bs[3];
    wf_default_bins(type, WARPFFT_METHOD_SM, dim, precision, bs);
    double F = 1.0, wd = 1.0, tile = 1.0, pad = (double)((width + 1) / 2);
    for (int d = 0; d < dim; d++) {
        F *= (double)n_fine[d];
        wd *= width;
        tile *= 1.0 + 2.0 * pad / bs[d];
    }
    double big = F * (f64 ? 16.0 : 8.0) > WF_COST_L2_BYTES ? 1.0 : 0.0;
    double per = (double)M * (k[0] * wd + k[1]) + F * tile * (k[2] + k[3] * big) + F * k[4];
    double fft = fc[0] * F * log2(F > 2.0 ? F : 2.0);
    return ((double)ntransf * (per + fft)) * 1e-6 + fc[1];
}

/* ---------------------------------------------------------------- the search */

/* A small sigma amplifies rounding (grid.c, wf_tol_floor_of): a candidate's floor may exceed
 * the floor sigma 2 has (no amplification) only up to this part of tol. */
#define WF_FLOOR_SHARE 0.25

/* 1 when (sigma, w) meets tol for plan p: the bound with the safety factor, and the rounding
 * floor. */
static int passes(const wf_params *p, double sigma, int w) {
    if (!wf_alias_passes(p->dim, p->n_modes, p->tol, sigma, w))
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
        /* the next 256 even sizes below (smooth sizes thin out as they grow: for large grids
         * the bisection's 1% is finer than their gaps, and the search stops) */
        int64_t nf = wf_fine_size(p->n_modes[0], s, w), prev = nf - 2, lo = nf - 512;
        while (prev >= lo && prev >= 2 * w && !wf_is_smooth(prev))
            prev -= 2;
        if (prev < lo)
            break;
        double sp = (double)prev / n0;
        if (prev < 2 * w || sp < WF_SIGMA_MIN || !passes(p, sp, w))
            break;
        s = sp;
    }
    return s;
}

typedef struct choice {
    int width;
    double sigma;
} choice;

/* The search: every width from the one sigma 3 needs (nothing narrower passes) upwards, each
 * with its least sigma, while a wider kernel can still be faster: at sigma 1.25 its FFT is the
 * smallest it can be, so once its spreading alone costs more than the best so far, it and all
 * wider ones lose. Width 0: nothing passes. */
static choice search(const wf_params *p, int64_t M) {
    choice c = {0, 0.0};
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
    /* sigma 2 (the default before the choice, and the FFT's best sizes) unless another is
     * predicted faster by the margin: the model's error is 6-24% rms */
    int w2 = wf_kernel_width(p->dim, p->n_modes, p->tol, 2.0, wmax);
    if (w2 <= wmax && c.width > 0 && c.sigma != 2.0) {
        int64_t nf[3] = {1, 1, 1};
        for (int d = 0; d < p->dim; d++)
            nf[d] = wf_fine_size(p->n_modes[d], 2.0, w2);
        double t2 = wf_cost_predict_ms(p->type, p->dim, p->precision, w2, nf, p->ntransf, M);
        if (best > WF_COST_MARGIN * t2) {
            c.width = w2;
            c.sigma = 2.0;
        }
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
    choice c = search(p, wf_params_points(p));
    if (c.width == 0)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g cannot be met by any upsampling factor in [%g, %g] with the "
                        "kernel widths embedded for %s (at most %d)",
                        p->tol, WF_SIGMA_MIN, WF_SIGMA_MAX, wf_prec_name(p->precision),
                        wf_max_width(p->precision));
    p->upsampfac = c.sigma;
    p->width = p->width_random = c.width;
    p->beta = wf_kernel_beta(c.width, c.sigma);
    return WARPFFT_SUCCESS;
}
