/*
 * cost.c — the choice of upsampling factor sigma and kernel width w per problem (upsampfac 0,
 * "auto"): the predicted execute time of a plan from a cost model fitted to GPU measurements,
 * and the search for the (sigma, w) with the least predicted time whose worst-case error bound
 * (width.c) and rounding floor (grid.c) meet tol; with the width from the points (offsets.h,
 * opts.points_width), sigma for the width random points take. No GPU; see params.h.
 *
 * Why a choice at all: the error bound falls like exp(-pi w sqrt(1 - 1/sigma)), so a larger
 * sigma buys the same accuracy with a narrower kernel. Spreading and interpolation cost
 * ~M w^d, the FFT and the grid passes ~sigma^d N^d: which wins depends on dim, precision, tol
 * and the points per mode. With sigma fixed at 2 and w an integer the bound sat anywhere from
 * 1 to 10x below tol (the 12-20x spare accuracy of uniform points); with sigma free, each w gets
 * the smallest sigma whose bound meets tol, so the bound is tight and the time is the cost
 * model's choice among the widths.
 *
 * One choice per problem: the time minimised is that of one transform of each type (the mean
 * of the type-1 and type-2 models at ntransf 1), so type 1 and type 2 of a shape, tol and
 * points hint, and any ntransf, take the same (sigma, w). Chosen per type and ntransf they
 * differed in 41 of 96 plain cases and with ntransf in 47 of 270: the pair was adjoint only to
 * about tol (CG on A^H A saw a non-Hermitian operator), and a batch split to fit in memory
 * computed other bits than the whole batch. The cost: a row of one type may take the other
 * type's sigma (suite B: B1 +5.6% predicted, B3 +4.6%, B8 +4.3%; docs/accuracy.md).
 *
 * Sigma for random points: the plan keeps the width every point set needs (w_hi) and
 * set-points may take a narrower one where the points' offsets allow (plans/spreader_width.c).
 * At the sigma the every-point-set bound chooses no suite-B row has a narrower candidate (that
 * bound is tight there); at a larger sigma random points take one width less. So the search
 * runs again with the bound M = points_hint random points are expected to give (passes_random,
 * modelled on width.c's band edge on random offsets, then checked on offsets.c's own tables),
 * each width w its least sigma with w_hi there as the fallback (within WF_OFF_MAX_CAND, every
 * floor as above), and that choice b replaces the every-point-set choice a when random points
 * gain at least WF_RANDOM_GAIN of a's time and points on or near grid nodes, which take w_hi on
 * b's grid, lose at most WF_RANDOM_LOSS times that gain: random-like sets (uniform, normal,
 * radial, clustered, MRI trajectories) are the common case, node-like ones the exception, so b
 * wins on average unless more than a third of the point sets are node-like. Suite B: B2-B5,
 * B2m-B5m, D2, D3 take it (B4 7.43 -> 6.46 ms predicted, nodes 8.16; D3t1 361 -> 264, nodes
 * 377); B6, B7, B9, D1 gain too little or lose too much on nodes (B7: 6% against 25%).
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
 *
 * The choice runs once per plan (params.c, wf_params_resolve): 20-75 evaluations of the bound
 * (~0.1-0.2 ms each) and, where random points' sigma is a contender, one set of offsets tables
 * (2-7 ms); nothing is remembered between plans.
 */
#include "params/cost.h"

#include <math.h>
#include <stdlib.h>

#include "params/bins.h"
#include "params/grid.h"
#include "params/kernel.h"
#include "params/memo.h"
#include "params/offsets.h"
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

/* ---------------------------------------------------------------- the problem's cost */

int64_t wf_params_points(const wf_params *p) {
    if (p->points_hint > 0)
        return p->points_hint;
    int64_t m = 1;
    for (int d = 0; d < p->dim; d++)
        m = m > INT64_MAX / p->n_modes[d] ? INT64_MAX : m * p->n_modes[d];
    return m;
}

/* The fine grid of p's shape at (sigma, w). */
static void fine_of(const wf_params *p, double sigma, int w, int64_t nf[3]) {
    for (int d = 0; d < 3; d++)
        nf[d] = d < p->dim ? wf_fine_size(p->n_modes[d], sigma, w) : 1;
}

/* What the choice minimises: one transform of M points (whatever ntransf), the mean of the
 * type-1 and type-2 models, at width w on the grid nf. So type 1 and type 2 of one problem,
 * and any number of transforms, choose the same (sigma, w): the pair is adjoint to rounding,
 * and a batch that is split (memory) computes the bits the whole batch would. */
static double problem_ms(const wf_params *p, int w, const int64_t nf[3], int64_t M) {
    return 0.5 * (wf_cost_predict_ms(1, p->dim, p->precision, w, nf, 1, M) +
                  wf_cost_predict_ms(2, p->dim, p->precision, w, nf, 1, M));
}

/* ---------------------------------------------------------------- what a (sigma, w) meets */

/* A small sigma amplifies rounding (grid.c, wf_tol_floor_of): a candidate's floor may exceed
 * the floor sigma 2 has (no amplification) only up to this part of tol. */
#define WF_FLOOR_SHARE 0.25

static int floor_ok(const wf_params *p, double sigma, int w) {
    if (sigma >= 2.0)
        return 1; /* no amplification (wf_tol_floor_of) */
    int64_t nf[3];
    fine_of(p, sigma, w, nf);
    return wf_tol_floor_of(p->precision, p->dim, p->n_modes, nf, w, wf_kernel_beta(w, sigma)) <=
           WF_FLOOR_SHARE * p->tol;
}

/* A test of (sigma, w) for plan p: whether it passes, and *g, the binding bound over its limit
 * (about 1 at the limit, falling with sigma and w), which the root finding below follows; r:
 * the random points' calibration (below). The floor, when the bound passes but it does not,
 * makes *g just above 1 (it binds only below sigma 2, a few percent from the bound's limit). */
typedef int (*pass_fn)(const wf_params *p, double sigma, int w, double r, double *g);

static int with_floor(const wf_params *p, double sigma, int w, int pass, double *g) {
    if (pass && !floor_ok(p, sigma, w)) {
        *g = 1.0001;
        return 0;
    }
    return pass;
}

/* Every point set: the bound with the safety factor, and the rounding floor. */
static int passes(const wf_params *p, double sigma, int w, double r, double *g) {
    (void)r;
    int pass = wf_alias_check(p->dim, p->n_modes, p->tol, sigma, w, g);
    return with_floor(p, sigma, w, pass, g);
}

/* M random points, as the model sees them: r times the band edge on independent uniform offsets
 * (wf_alias_random), with the safety factor, and the rounding floor. r is what offsets.c's
 * bound for the statistics M random points are expected to give (wf_offsets_stats_expected)
 * adds to that ideal: the cells' and bins' resolution, 1.0-1.12 in 1D, 1.06-1.19 in 2D and
 * 1.11-1.31 in 3D (by sigma and w, measured over sigma 1.5-3 and w 5-10), and the pairs'
 * dependence chi2 ~ 63^2 / M, which adds (dim - 1) sqrt(chi2) to r^2 (measured: 2D 1.00, 3D
 * 2.01). random_calib takes the largest of those: the choice is then checked on the tables
 * (choose_random), and an r that is a little large costs a little sigma, one that is too
 * small the whole gain. */
static int passes_random(const wf_params *p, double sigma, int w, double r, double *g) {
    double b = r * wf_alias_safety(p->dim, p->tol) * wf_alias_random(p->dim, p->n_modes, sigma, w);
    *g = b / p->tol;
    return with_floor(p, sigma, w, b <= p->tol, g);
}

static double random_calib(int dim, int64_t M) {
    static const double r0[3] = {1.12, 1.19, 1.31};
    double e2 = r0[dim - 1] * r0[dim - 1]; /* the diagonal's share, with the cells' maxima */
    double r2 = e2 + (dim - 1) * (WF_OFF_BINS - 1) / sqrt((double)M);
    return sqrt(r2 < dim * e2 ? r2 : dim * e2); /* pairs at most as coherent as on nodes */
}

/* ---------------------------------------------------------------- the search */

static double sigma_of(double u) {
    return 1.0 / (1.0 - u * u);
}

/* The smallest sigma (to within 1%) in [WF_SIGMA_MIN, WF_SIGMA_MAX] with pass(p, ., w, r), 0
 * if WF_SIGMA_MAX fails. The bound is close to exp(-pi w u gamma), u = sqrt(1 - 1/sigma), so
 * log g is close to linear in u: false position in (u, log g) on the bracket, each point aimed
 * half a 1% step past the estimate to the side the bracket has not moved lately, so that two
 * points near the root close it; a bisection where that gains too little (the fine grid's
 * smooth sizes make g a staircase). 4-6 evaluations in all, where a bisection took 7-9. */
static double least_sigma(const wf_params *p, int w, pass_fn pass, double r) {
    double g;
    if (!pass(p, WF_SIGMA_MAX, w, r, &g))
        return 0.0;
    double uhi = sqrt(1.0 - 1.0 / WF_SIGMA_MAX), lhi = log(g);
    if (pass(p, WF_SIGMA_MIN, w, r, &g))
        return WF_SIGMA_MIN;
    double ulo = sqrt(1.0 - 1.0 / WF_SIGMA_MIN), llo = log(g), before = 2.0 * (uhi - ulo);
    int last_pass = 0, slow = 0;
    while (sigma_of(uhi) - sigma_of(ulo) > 0.01 * sigma_of(ulo)) {
        double span = uhi - ulo, ue = ulo + span * llo / (llo - lhi);
        double sg = sigma_of(ue), du = 0.005 * sg * (1.0 - ue * ue) * (1.0 - ue * ue) / (2.0 * ue);
        double u = ue + (last_pass ? -du : du); /* sigma'(u) = 2u / (1 - u^2)^2 */
        slow = span > 0.5 * before ? slow + 1 : 0;
        before = span;
        if (slow >= 2 || !(u > ulo + 0.01 * span && u < uhi - 0.01 * span))
            u = 0.5 * (ulo + uhi);
        last_pass = pass(p, sigma_of(u), w, r, &g);
        if (last_pass) {
            uhi = u;
            lhi = log(g);
        } else {
            ulo = u;
            llo = log(g);
        }
    }
    /* The grid is the next 2,3,5,7-smooth even size: step down to smaller such sizes (of the
     * first dimension) while they pass, which the search's 1% may have stepped over (e.g. 258
     * -> 256 at sigma 2). */
    double s = sigma_of(uhi), n0 = (double)p->n_modes[0];
    for (int i = 0; i < 3; i++) {
        /* the next 256 even sizes below (smooth sizes thin out as they grow: for large grids
         * the search's 1% is finer than their gaps, and the search stops) */
        int64_t nf = wf_fine_size(p->n_modes[0], s, w), prev = nf - 2, lo = nf - 512;
        while (prev >= lo && prev >= 2 * w && !wf_is_smooth(prev))
            prev -= 2;
        if (prev < lo)
            break;
        double sp = (double)prev / n0;
        if (prev < 2 * w || sp < WF_SIGMA_MIN || !pass(p, sp, w, r, &g))
            break;
        s = sp;
    }
    return s;
}

/* A choice: sigma, the width every point set meets there (w_hi), the width the time was
 * predicted for (w: w_hi, or for random points the narrower one they get), and the time
 * (problem_ms). w 0: none. */
typedef struct choice {
    double sigma, ms;
    int w, w_hi;
} choice;

/* The width every point set needs at sigma, from `start` (wmax + 1 if none; start <= 2: from
 * the width rule's estimate); its floor must pass too. */
static int width_at(const wf_params *p, double sigma, int start) {
    int wmax = wf_max_width(p->precision);
    int w = start <= 2 ? wf_kernel_width(p->dim, p->n_modes, p->tol, sigma, wmax)
                       : wf_kernel_width_from(p->dim, p->n_modes, p->tol, sigma, wmax, start);
    if (w <= wmax && !floor_ok(p, sigma, w)) /* cannot happen at sigma >= 2 */
        w = wf_kernel_width_from(p->dim, p->n_modes, p->tol, sigma, wmax, w + 1);
    return w <= wmax && floor_ok(p, sigma, w) ? w : wmax + 1;
}

/* The time of w on the grid of w_hi at sigma. */
static double time_at(const wf_params *p, double sigma, int w, int w_hi, int64_t M) {
    int64_t nf[3];
    fine_of(p, sigma, w_hi, nf);
    return problem_ms(p, w, nf, M);
}

/* Every point set: every width from the one sigma 3 needs (nothing narrower passes) upwards,
 * each with its least sigma, while a wider kernel can still be faster: at sigma 1.25 its FFT
 * is the smallest it can be, so once its spreading alone costs more than the best so far, it
 * and all wider ones lose. Then sigma 2 (the default before the choice, and the FFT's best
 * sizes) unless another is predicted faster by WF_COST_MARGIN: the model's error is 6-24%
 * rms. */
static choice search_every(const wf_params *p, int64_t M, int *w3, int *w2) {
    choice c = {0.0, INFINITY, 0, 0};
    int wmax = wf_max_width(p->precision);
    *w3 = width_at(p, WF_SIGMA_MAX, 2);
    for (int w = *w3; w <= wmax; w++) {
        if (time_at(p, WF_SIGMA_MIN, w, w, M) >= c.ms)
            break;
        double s = least_sigma(p, w, passes, 0.0);
        if (s == 0.0)
            continue; /* cannot happen: w >= w3 passes at sigma 3 */
        double t = time_at(p, s, w, w, M);
        if (t < c.ms)
            c = (choice){s, t, w, w};
        if (s == WF_SIGMA_MIN)
            break;
    }
    *w2 = width_at(p, 2.0, 2);
    if (*w2 <= wmax && c.w > 0 && c.sigma != 2.0) {
        double t2 = time_at(p, 2.0, *w2, *w2, M);
        if (c.ms > WF_COST_MARGIN * t2)
            c = (choice){2.0, t2, *w2, *w2};
    }
    return c;
}

/* Random points at sigma: w must pass for them (r) but not for every point set, whose width
 * w_hi there is the plan's fallback (within offsets.h's WF_OFF_MAX_CAND of w). */
static choice random_at(const wf_params *p, double sigma, int w, int64_t M) {
    choice c = {sigma, INFINITY, w, 0};
    double g;
    if (passes(p, sigma, w, 0.0, &g))
        return c; /* no gain over every point set: search_every's */
    int w_hi = width_at(p, sigma, w + 1);
    if (w_hi > wf_max_width(p->precision) || w_hi - w > WF_OFF_MAX_CAND)
        return c;
    c.w_hi = w_hi;
    c.ms = time_at(p, sigma, w, w_hi, M);
    return c;
}

/* search_every's search for random points (passes_random with r), each width's sigma with
 * the every-point-set width there as the fallback, among the choices faster than `below`
 * (search_every's time less the least gain random_wins takes: the rest cannot win); sigma 2
 * unless another is faster by the margin. w3, w2: the every-point-set widths at sigma 3 and
 * 2 (search_every's). */
static choice search_random(const wf_params *p, int64_t M, double r, double below, int w3, int w2) {
    choice c = {0.0, below, 0, 0};
    int wmax = wf_max_width(p->precision);
    /* narrower than w3 - WF_OFF_MAX_CAND has no every-point-set width within the candidates
     * anywhere: sigma 3 needs w3, smaller sigmas more */
    for (int w = w3 - WF_OFF_MAX_CAND < 2 ? 2 : w3 - WF_OFF_MAX_CAND; w <= wmax; w++) {
        if (time_at(p, WF_SIGMA_MIN, w, w, M) >= c.ms)
            break;
        double s = least_sigma(p, w, passes_random, r);
        if (s == 0.0)
            continue; /* random points need a wider kernel even at sigma 3 */
        choice t = random_at(p, s, w, M);
        if (t.ms < c.ms)
            c = t;
        if (s == WF_SIGMA_MIN)
            break;
    }
    double g;
    for (int w = w2 - WF_OFF_MAX_CAND < 2 ? 2 : w2 - WF_OFF_MAX_CAND;
         w < w2 && c.w > 0 && c.sigma != 2.0; w++)
        if (passes_random(p, 2.0, w, r, &g)) {
            choice t = random_at(p, 2.0, w, M);
            if (c.ms > WF_COST_MARGIN * t.ms)
                c = t;
            break;
        }
    return c;
}

/* ---------------------------------------------------------------- random points' sigma */

/* The width offsets.c's tables at b's (sigma, w_hi) choose for the statistics M random points
 * are expected to give (wf_offsets_stats_expected): what the device will choose for them.
 * b.w_hi when the tables cannot be made (host memory: the choice falls back). */
static int offsets_width(const wf_params *p, const choice *b, int64_t M) {
    int64_t nf[3];
    fine_of(p, b->sigma, b->w_hi, nf);
    wf_offset_plan *op = NULL;
    wf_offset_stats *ex = malloc(sizeof *ex);
    int w = b->w_hi;
    if (ex && wf_offsets_plan_get(p->dim, p->n_modes, nf, b->sigma, p->precision, p->tol, b->w_hi,
                                  &op) == WARPFFT_SUCCESS) {
        wf_offsets_stats_expected(p->dim, M, ex);
        w = wf_offsets_choose(op, ex);
    }
    wf_clear_error();
    free(op);
    free(ex);
    return w;
}

/* Whether random points' choice b replaces every point set's a. The plan's grid is b's, made
 * for b.w_hi: points that need that width (on or near grid nodes) pay time_at(b.sigma, b.w_hi)
 * where a would have cost a.ms. b is taken when random points gain at least WF_RANDOM_GAIN of
 * a's time (the model's margin) and such point sets lose at most WF_RANDOM_LOSS times what
 * random points gain: docs/accuracy.md has the numbers behind both. */
#define WF_RANDOM_GAIN 0.05
#define WF_RANDOM_LOSS 2.0
static int random_wins(const wf_params *p, const choice *a, const choice *b, int64_t M) {
    if (b->w == 0 || b->w >= b->w_hi)
        return 0;
    double gain = a->ms - b->ms, loss = time_at(p, b->sigma, b->w_hi, b->w_hi, M) - a->ms;
    return gain >= WF_RANDOM_GAIN * a->ms && loss <= WF_RANDOM_LOSS * gain;
}

/* Random points' choice: search_random with random_calib's r, kept when it wins over a
 * (random_wins) and offsets.c's tables at it choose its width (or a narrower one) for the
 * statistics M random points are expected to give (one table per candidate and distinct dim,
 * 2-7 ms, made only then); else none (w 0). */
static choice choose_random(const wf_params *p, const choice *a, int64_t M, int w3, int w2) {
    choice none = {0.0, INFINITY, 0, 0};
    choice b = search_random(p, M, random_calib(p->dim, M), (1.0 - WF_RANDOM_GAIN) * a->ms, w3, w2);
    if (!random_wins(p, a, &b, M))
        return none;
    int w = offsets_width(p, &b, M);
    if (w > b.w)
        return none;
    b.w = w;
    b.ms = time_at(p, b.sigma, b.w, b.w_hi, M);
    return b;
}

/* The choices made: the parameters as the basics leave them (wf_params_resolve zeroes p
 * first, so every byte is a function of the request) -> what the search wrote. The search
 * takes 5-30 ms of CPU (false position over sigma per width, the tables of choose_random), and a
 * second plan of a problem would pay it again: its plan creation, not its choice, is the memo's
 * (docs/performance.md, "Plan creation"). The 32 last used are kept (memo.h). */
typedef struct choice_made {
    double upsampfac, beta;
    int width, width_random;
} choice_made;
WF_MEMO(choice_memo, 32);

static warpfft_status choose_sigma(wf_params *p);

warpfft_status wf_params_choose_sigma(wf_params *p) {
    void *kept = NULL;
    if (wf_memo_get(&choice_memo, p, sizeof *p, &kept, NULL) > 0) {
        const choice_made *c = kept;
        p->upsampfac = c->upsampfac;
        p->beta = c->beta;
        p->width = c->width;
        p->width_random = c->width_random;
        free(kept);
        return WARPFFT_SUCCESS;
    }
    wf_params key = *p;
    warpfft_status st = choose_sigma(p);
    if (st == WARPFFT_SUCCESS) {
        choice_made c = {p->upsampfac, p->beta, p->width, p->width_random};
        wf_memo_put(&choice_memo, &key, sizeof key, &c, sizeof c);
    }
    return st;
}

static warpfft_status choose_sigma(wf_params *p) {
    int64_t M = wf_params_points(p);
    int w3 = 0, w2 = 0;
    choice c = search_every(p, M, &w3, &w2);
    if (c.w == 0)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g cannot be met by any upsampling factor in [%g, %g] with the "
                        "kernel widths embedded for %s (at most %d)",
                        p->tol, WF_SIGMA_MIN, WF_SIGMA_MAX, wf_prec_name(p->precision),
                        wf_max_width(p->precision));
    if (p->points_width) {
        choice b = choose_random(p, &c, M, w3, w2);
        if (b.w > 0)
            c = b;
    }
    p->upsampfac = c.sigma;
    p->width = c.w_hi;
    p->width_random = c.w;
    p->beta = wf_kernel_beta(c.w_hi, c.sigma);
    return WARPFFT_SUCCESS;
}
