/*
 * params.c — plan parameters on the host: validation, kernel width/shape, fine grid,
 * deconvolution factors, bins and method, mode ordering. No GPU; see params.h.
 */
#include "params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

_Static_assert(sizeof(size_t) == 8, "warpfft needs a 64-bit size_t");

#define WF_PI      3.14159265358979323846
#define WF_INV_2PI 0.15915494309189533576888376337251436 /* same literal as kernels/common.cuh */

const char *wf_prec_name(int precision) {
    return precision == WARPFFT_F64 ? "f64" : "f32";
}

/* ---------------------------------------------------------------- options */

static void opts_defaults(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = (uint32_t)sizeof *o;
    o->modeord = 0;
    o->method = WARPFFT_METHOD_AUTO;
    o->device = 0;
    o->upsampfac = 2.0;
    o->stream = 0;
    o->max_subprob = 0;
}

WARPFFT_API warpfft_status warpfft_opts_default(warpfft_opts *opts) {
    wf_clear_error();
    if (!opts)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts is NULL");
    opts_defaults(opts);
    return WARPFFT_SUCCESS;
}

static warpfft_status check_opts_enums(const warpfft_opts *o) {
    if (o->modeord != 0 && o->modeord != 1)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.modeord = %d; must be 0 (CMCL) or 1 (FFT)",
                        (int)o->modeord);
    if (o->method < WARPFFT_METHOD_AUTO || o->method > WARPFFT_METHOD_SM)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "opts.method = %d; must be 0 (AUTO), 1 (GM) or 2 (SM)", (int)o->method);
    if (o->upsampfac != 2.0 && o->upsampfac != 1.25)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.upsampfac = %g; must be 2.0 or 1.25",
                        o->upsampfac);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out) {
    if (!opts) {
        opts_defaults(out);
        return WARPFFT_SUCCESS;
    }
    if (opts->struct_size != sizeof(warpfft_opts))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "opts.struct_size = %u; expected %zu (initialise opts with "
                        "warpfft_opts_default)",
                        (unsigned)opts->struct_size, sizeof(warpfft_opts));
    warpfft_status st = check_opts_enums(opts);
    if (st != WARPFFT_SUCCESS)
        return st;
    for (int d = 0; d < 3; d++)
        if (opts->bin_size[d] < 0)
            return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.bin_size[%d] = %d; must be >= 0", d,
                            (int)opts->bin_size[d]);
    if (opts->max_subprob < 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.max_subprob = %d; must be >= 0",
                        (int)opts->max_subprob);
    *out = *opts;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- argument checks */

warpfft_status wf_check_type(int type) {
    if (type == 3)
        return wf_error(WARPFFT_ERR_UNSUPPORTED, "type 3 is not implemented yet");
    if (type != 1 && type != 2)
        return wf_error(WARPFFT_ERR_BAD_TYPE, "type = %d; must be 1 or 2", type);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_dim(int dim) {
    if (dim < 1 || dim > 3)
        return wf_error(WARPFFT_ERR_BAD_DIM, "dim = %d; must be 1, 2 or 3", dim);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_precision(int precision) {
    if (precision != WARPFFT_F32 && precision != WARPFFT_F64)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "precision = %d; must be WARPFFT_F32 (1) or WARPFFT_F64 (2)", precision);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_modes(int dim, const int64_t n_modes[3]) {
    if (!n_modes)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "n_modes is NULL");
    for (int d = 0; d < dim; d++) {
        if (n_modes[d] < 1)
            return wf_error(WARPFFT_ERR_BAD_SIZE, "n_modes[%d] = %lld; must be >= 1", d,
                            (long long)n_modes[d]);
        if (n_modes[d] > WF_MAX_MODES_PER_DIM)
            return wf_error(WARPFFT_ERR_BAD_SIZE, "n_modes[%d] = %lld is too large (max %lld)", d,
                            (long long)n_modes[d], (long long)WF_MAX_MODES_PER_DIM);
    }
    return WARPFFT_SUCCESS;
}

warpfft_status wf_check_tol(double tol, int precision) {
    double lo = precision == WARPFFT_F64 ? 1e-13 : 1e-6, hi = 1e-1;
    if (!(tol >= lo && tol <= hi)) /* also rejects NaN; inf is above hi */
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol = %g is outside the supported range [%g, %g] "
                        "for %s",
                        tol, lo, hi, wf_prec_name(precision));
    return WARPFFT_SUCCESS;
}

const char *wf_missing_coord(int dim, const void *x, const void *y, const void *z) {
    if (!x)
        return "x";
    if (dim >= 2 && !y)
        return "y";
    if (dim >= 3 && !z)
        return "z";
    return NULL;
}

warpfft_status wf_check_problem(int type, int dim, int precision, const int64_t n_modes[3]) {
    warpfft_status st = wf_check_type(type);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_dim(dim);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_precision(precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_modes(dim, n_modes);
    return st;
}

static warpfft_status check_plan_args(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                                      double tol, int precision) {
    warpfft_status st = wf_check_problem(type, dim, precision, n_modes);
    if (st == WARPFFT_SUCCESS && ntransf < 1)
        st = wf_error(WARPFFT_ERR_BAD_SIZE, "ntransf = %lld; must be >= 1", (long long)ntransf);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_tol(tol, precision);
    return st;
}

/* ---------------------------------------------------------------- kernel width and shape */

/* The kernel is the sinh type (kernels/common.cuh): phi(t) = 2 e^-beta sinh(beta s) / s,
 * s = sqrt(1 - (2t/w)^2), beta = WF_BETA_SCALE pi (1 - 1/(2 sigma)) w (Potts & Tasche's choice;
 * a least-squares fit of beta/w per width, sigma 2: 2.341-2.353 vs 2.356, so the 0.995).
 *
 * Width: the smallest w whose predicted error, times WF_ALIAS_SAFETY, is <= tol. The
 * prediction is the plan's own aliasing error for random points and strengths: per dim,
 * a(k) = sum_{m != 0} phihat(k + m nf)^2 / phihat(k)^2 averaged over the plan's modes k, and
 * the error is sqrt(sum over dims of those means). A numpy emulation of the whole pipeline
 * against the direct sum (uniform and clustered points, N 6..2001, dims 1-3, widths 3..13)
 * measured within 5% of it; FINUFFT's rule (tol-only) missed small even N in 3D, where the
 * band-edge mode -N/2 carries 1/N of the weight, and lost a point of width everywhere else. */
#define WF_MAX_QUAD     512 /* Gauss-Legendre nodes over the full interval, at most */
#define WF_BETA_SCALE   0.995
#define WF_ALIAS_SAFETY 1.25
#define WF_ALIAS_MMAX   4  /* aliases m = +-1..+-4 by quadrature; beyond, the jump asymptote */
#define WF_ALIAS_SAMPLE 32 /* |k| samples per dim when N/2 is larger */

double wf_kernel_beta(int width, double sigma) {
    return WF_BETA_SCALE * WF_PI * (1.0 - 1.0 / (2.0 * sigma)) * (double)width;
}

/* Gauss-Legendre in theta after t = (w/2) sin(theta): nodes t[j] >= 0 (half rule) and weights
 * g[j] = (both halves) * dtheta scale * Jacobian * phi. With the Jacobian hw cos(theta) the
 * 1/s of phi cancels: g = pi wt hw (E - C/E), E = e^-2beta sin^2(th/2), C/E = e^-2beta cos^2(th/2)
 * (no cancellation in cos(th) -+ 1, which beta (up to 38) would amplify). Returns the count. */
static int phi_rule(int width, double beta, int n_quad, double *t, double *g) {
    double x[WF_MAX_QUAD], wt[WF_MAX_QUAD];
    if (n_quad > WF_MAX_QUAD)
        n_quad = WF_MAX_QUAD;
    n_quad += n_quad & 1;
    wf_gauss_legendre(n_quad, x, wt);
    int h = n_quad / 2;
    double hw = 0.5 * width;
    for (int j = 0; j < h; j++) {
        double th = 0.5 * WF_PI * x[h + j], sh = sin(0.5 * th), ch = cos(0.5 * th);
        t[j] = hw * sin(th);
        g[j] = WF_PI * wt[h + j] * hw * (exp(-2.0 * beta * sh * sh) - exp(-2.0 * beta * ch * ch));
    }
    return h;
}

/* sum_{m != 0} phihat(xi + m)^2 / phihat(xi)^2 for |xi| <= 1/2, from a half rule (t, g) and
 * (cb, sb) = (cos, sin)(2 pi t): the phases of xi + m are rotations of xi's by m steps. */
static double alias_ratio(int h, const double *t, const double *g, const double *cb,
                          const double *sb, double xi, double edge2, int width) {
    double main = 0.0, p[WF_ALIAS_MMAX] = {0}, q[WF_ALIAS_MMAX] = {0};
    for (int j = 0; j < h; j++) {
        double s0, c0;
        sincos(2.0 * WF_PI * xi * t[j], &s0, &c0);
        double cp = c0, sp = s0, cq = c0, sq = s0;
        main += g[j] * c0;
        for (int m = 0; m < WF_ALIAS_MMAX; m++) {
            double cn = cp * cb[j] - sp * sb[j]; /* phase + 2 pi t */
            sp = sp * cb[j] + cp * sb[j];
            cp = cn;
            cn = cq * cb[j] + sq * sb[j]; /* phase - 2 pi t */
            sq = sq * cb[j] - cq * sb[j];
            cq = cn;
            p[m] += g[j] * cp;
            q[m] += g[j] * cq;
        }
    }
    double al = 0.0;
    for (int m = 0; m < WF_ALIAS_MMAX; m++)
        al += p[m] * p[m] + q[m] * q[m];
    /* |m| > MMAX: the jumps of phi at +-w/2 (edge value phi_e) give phihat(xi) ~ phi_e
     * sin(pi w xi) / (pi xi); sum 1/(m + xi)^2 over m >= MMAX+1 ~ 1/(MMAX + 1/2 + xi) */
    double sn = sin(WF_PI * width * xi), mm = WF_ALIAS_MMAX + 0.5;
    al += edge2 * sn * sn / (WF_PI * WF_PI) * (1.0 / (mm + xi) + 1.0 / (mm - xi));
    return al / (main * main);
}

double wf_alias_mean(int64_t n_modes, int64_t nf, int width, double beta) {
    double t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2];
    /* the aliases reach |xi| ~ MMAX + 1/2: phase 2 pi xi t up to pi w (MMAX + 1/2) */
    int n_quad = (int)ceil(WF_PI * width * (WF_ALIAS_MMAX + 0.5)) + 40;
    double cb[WF_MAX_QUAD / 2], sb[WF_MAX_QUAD / 2];
    int h = phi_rule(width, beta, n_quad, t, g);
    for (int j = 0; j < h; j++) {
        cb[j] = cos(2.0 * WF_PI * t[j]);
        sb[j] = sin(2.0 * WF_PI * t[j]);
    }
    double edge = 2.0 * beta * exp(-beta), edge2 = edge * edge, sum = 0.0;
    /* modes -(N/2) .. (N-1)/2; a(k) = a(-k) */
    if (n_modes <= WF_ALIAS_SAMPLE) {
        for (int64_t k = -(n_modes / 2); k <= (n_modes - 1) / 2; k++)
            sum += alias_ratio(h, t, g, cb, sb, (double)k / (double)nf, edge2, width);
        return sum / (double)n_modes;
    }
    /* sum_k a(k) = a(0) + 2 sum_{k=1..K} a(k) (+ a(N/2), N even), K = (N-1)/2, and the sum
     * over k = -K..K ~ 2 int_0^{K+1/2} a: Gauss-Legendre in |k| (a(k) rises steeply towards
     * the band edge, ~1e4x at upsampfac 1.25, where a midpoint rule read 12% low) */
    double x[WF_ALIAS_SAMPLE], wt[WF_ALIAS_SAMPLE], kk = (double)((n_modes - 1) / 2) + 0.5;
    wf_gauss_legendre(WF_ALIAS_SAMPLE, x, wt);
    for (int i = 0; i < WF_ALIAS_SAMPLE; i++) {
        double k = 0.5 * kk * (x[i] + 1.0);
        sum += wt[i] * 0.5 * kk * alias_ratio(h, t, g, cb, sb, k / (double)nf, edge2, width);
    }
    sum *= 2.0;
    if (n_modes % 2 == 0)
        sum += alias_ratio(h, t, g, cb, sb, 0.5 * (double)n_modes / (double)nf, edge2, width);
    return sum / (double)n_modes;
}

double wf_alias_error(int dim, const int64_t n_modes[3], double sigma, int width) {
    double beta = wf_kernel_beta(width, sigma), sum = 0.0, mean = 0.0;
    for (int d = 0; d < dim; d++) {
        if (d == 0 || n_modes[d] != n_modes[d - 1]) /* cubes: one evaluation */
            mean = wf_alias_mean(n_modes[d], wf_fine_size(n_modes[d], sigma, width), width, beta);
        sum += mean;
    }
    return sqrt(sum);
}

/* Whether width w meets tol: its predicted error, with the safety factor. */
static int width_passes(int dim, const int64_t n_modes[3], double tol, double sigma, int w) {
    return WF_ALIAS_SAFETY * wf_alias_error(dim, n_modes, sigma, w) <= tol;
}

int wf_kernel_width_from(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width,
                         int start) {
    for (int w = start < 2 ? 2 : start; w <= max_width; w++)
        if (width_passes(dim, n_modes, tol, sigma, w))
            return w;
    return max_width + 1;
}

/* The predicted error falls strictly with the width: walk from FINUFFT's estimate
 * ceil(-ln(tol) / (pi sqrt(1 - 1/sigma))), usually right or one off, to the smallest width that
 * passes (2-3 evaluations; test_params compares with the search from 2). */
int wf_kernel_width(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width) {
    double x = ceil(-log(tol) / (WF_PI * sqrt(1.0 - 1.0 / sigma)));
    int w = x < 2.0 ? 2 : x > (double)max_width ? max_width : (int)x;
    if (!width_passes(dim, n_modes, tol, sigma, w))
        return wf_kernel_width_from(dim, n_modes, tol, sigma, max_width, w + 1);
    while (w > 2 && width_passes(dim, n_modes, tol, sigma, w - 1))
        w--;
    return w;
}

int wf_max_width(int precision) {
    return precision == WARPFFT_F64 ? WF_MAX_WIDTH_F64 : WF_MAX_WIDTH_F32;
}

/* f32 at upsampfac 1.25: the deconvolution factors grow ~1000x towards the band edge and
 * amplify f32 rounding; measured on the H100 at tol 1e-5: 1.3e-5 (2D type 1) to 9.1e-5 (3D
 * type 2). Below this tol, f32 plans need upsampfac 2.0. */
#define WF_F32_MIN_TOL_UPSAMP_125 1e-4

static warpfft_status set_kernel(wf_params *p) {
    if (p->precision == WARPFFT_F32 && p->upsampfac != 2.0 && p->tol < WF_F32_MIN_TOL_UPSAMP_125)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g is below what f32 reaches at upsampfac %g (%g: rounding errors "
                        "are amplified by the deconvolution); use upsampfac 2.0 or f64",
                        p->tol, p->upsampfac, WF_F32_MIN_TOL_UPSAMP_125);
    int wmax = wf_max_width(p->precision);
    int w = wf_kernel_width(p->dim, p->n_modes, p->tol, p->upsampfac, wmax);
    if (w > wmax) {
        if (p->upsampfac != 2.0)
            return wf_error(WARPFFT_ERR_BAD_TOL,
                            "tol %g needs a kernel wider than %d points at upsampfac %g (the "
                            "maximum for %s); use upsampfac 2.0",
                            p->tol, wmax, p->upsampfac, wf_prec_name(p->precision));
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g needs a kernel wider than %d points, the maximum for %s", p->tol,
                        wmax, wf_prec_name(p->precision));
    }
    p->width = w;
    p->beta = wf_kernel_beta(w, p->upsampfac);
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- fine grid */

int wf_is_smooth(int64_t n) {
    if (n < 1)
        return 0;
    static const int primes[4] = {2, 3, 5, 7};
    for (int i = 0; i < 4; i++)
        while (n % primes[i] == 0)
            n /= primes[i];
    return n == 1;
}

int64_t wf_next_smooth_even(int64_t n) {
    if (n < 2)
        n = 2;
    int64_t best = 2;
    while (best < n)
        best *= 2; /* a power of two: smooth, even, < 2n */
    /* every candidate is 2^a * 3^b * 5^c * 7^d with a >= 1: odd part p, doubled until >= n */
    for (int64_t p7 = 1; p7 < best; p7 *= 7)
        for (int64_t p5 = p7; p5 < best; p5 *= 5)
            for (int64_t p3 = p5; p3 < best; p3 *= 3) {
                int64_t m = 2 * p3;
                while (m < n)
                    m *= 2;
                if (m < best)
                    best = m;
            }
    return best;
}

int64_t wf_fine_size(int64_t n_modes, double sigma, int width) {
    int64_t n = (int64_t)ceil(sigma * (double)n_modes);
    if (n < 2 * (int64_t)width)
        n = 2 * (int64_t)width;
    return wf_next_smooth_even(n);
}

static warpfft_status set_grid(wf_params *p) {
    int64_t fine = 1, modes = 1, bytes;
    for (int d = 0; d < 3 && fine > 0; d++) {
        p->n_fine[d] = d < p->dim ? wf_fine_size(p->n_modes[d], p->upsampfac, p->width) : 1;
        if (__builtin_mul_overflow(fine, p->n_fine[d], &fine))
            fine = -1;
        else
            modes *= p->n_modes[d]; /* N_d <= nf_d, so modes <= fine */
    }
    if (fine < 0 || __builtin_mul_overflow(fine, p->ntransf, &bytes) ||
        __builtin_mul_overflow(bytes, (int64_t)p->complex_bytes, &bytes))
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "the fine grid of n_modes = {%lld, %lld, %lld} (upsampfac %g) times "
                        "ntransf = %lld is too large to address",
                        (long long)p->n_modes[0], (long long)p->n_modes[1],
                        (long long)p->n_modes[2], p->upsampfac, (long long)p->ntransf);
    for (int d = 0; d < p->dim; d++)
        if (p->n_fine[d] > WF_MAX_FINE_DIM)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "n_modes[%d] = %lld needs a fine grid of %lld points (upsampfac %g); "
                            "cuFFT transforms longer than 2^32 points were measured wrong (H200, "
                            "cuFFT 12.0, f32 and f64 alike: errors up to 0.8 at 4299816960 "
                            "points), so warpfft stops at 2^32 per dimension (N up to ~2^31)",
                            d, (long long)p->n_modes[d], (long long)p->n_fine[d], p->upsampfac);
    p->fine_prod = fine;
    p->mode_prod = modes;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- deconvolution factors */

void wf_gauss_legendre(int n, double *x, double *w) {
    for (int i = 0; i < (n + 1) / 2; i++) {
        double z = cos(WF_PI * (i + 0.75) / (n + 0.5)), dp = 1.0, dz = 1.0;
        for (int it = 0; it < 100 && fabs(dz) > 1e-16; it++) {
            double p0 = 1.0, p1 = z; /* P_0, P_1; after the loop P_{n-1}, P_n */
            for (int k = 2; k <= n; k++) {
                double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            dp = n * (z * p1 - p0) / (z * z - 1.0);
            dz = p1 / dp;
            z -= dz;
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = w[n - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

int wf_quad_nodes(int width) {
    return 4 * width + 32; /* converged to rounding with <= 62 for all widths (test_params) */
}

/* The deconvolution's half rule: phase steps a[j] = 2 pi t_j / nf and weights g[j]. */
static int half_rule(int64_t nf, int width, double beta, int n_quad, double *a, double *g) {
    int h = phi_rule(width, beta, n_quad, a, g);
    for (int j = 0; j < h; j++)
        a[j] = 2.0 * WF_PI * a[j] / (double)nf;
    return h;
}

double wf_phihat(double k, int64_t nf, int width, double beta, int n_quad) {
    double a[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2], s = 0.0;
    int h = half_rule(nf, width, beta, n_quad, a, g);
    for (int j = 0; j < h; j++)
        s += g[j] * cos(k * a[j]);
    return s;
}

#define WF_RESEED 32 /* exact cos/sin every WF_RESEED modes bounds the recurrence's drift */

/* Sums g[j] cos(k a[j]) for k = k0..k1 (k1 - k0 < WF_RESEED) by rotating (cos, sin) from an
 * exact start; four accumulators (h is a multiple of 4) keep the adds independent. */
static void phihat_run(int h, const double *a, const double *g, const double *ca, const double *sa,
                       int64_t k0, int64_t k1, double *fac) {
    double c[WF_MAX_QUAD / 2], s[WF_MAX_QUAD / 2];
    for (int j = 0; j < h; j++) {
        c[j] = cos((double)k0 * a[j]);
        s[j] = sin((double)k0 * a[j]);
    }
    for (int64_t k = k0; k <= k1; k++) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int j = 0; j < h; j += 4) {
            s0 += g[j] * c[j];
            s1 += g[j + 1] * c[j + 1];
            s2 += g[j + 2] * c[j + 2];
            s3 += g[j + 3] * c[j + 3];
        }
        for (int j = 0; j < h; j++) {
            double cn = c[j] * ca[j] - s[j] * sa[j];
            s[j] = s[j] * ca[j] + c[j] * sa[j];
            c[j] = cn;
        }
        fac[k] = 1.0 / ((s0 + s1) + (s2 + s3));
    }
}

void wf_deconv_factors(int64_t n_modes, int64_t nf, int width, double beta, double *fac) {
    double a[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2], ca[WF_MAX_QUAD / 2], sa[WF_MAX_QUAD / 2];
    int h = half_rule(nf, width, beta, wf_quad_nodes(width), a, g);
    for (; h % 4 != 0; h++)
        a[h] = g[h] = 0.0; /* padding nodes contribute nothing */
    for (int j = 0; j < h; j++) {
        ca[j] = cos(a[j]);
        sa[j] = sin(a[j]);
    }
    int64_t kmax = n_modes / 2;
    for (int64_t k0 = 0; k0 <= kmax; k0 += WF_RESEED) {
        int64_t k1 = k0 + WF_RESEED - 1 < kmax ? k0 + WF_RESEED - 1 : kmax;
        phihat_run(h, a, g, ca, sa, k0, k1, fac);
    }
}

/* ---------------------------------------------------------------- bins and method */

void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]) {
    static const int32_t gm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 16}};
    static const int32_t sm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 2}};
    /* 3D SM, measured on the H100 (kernels alone, M = 1e7, 128^3 modes; smaller tiles keep
     * more blocks resident, thicker ones waste less on the halo):
     *  - f64 type 1: 8x8x2 2.2x faster than 16x16x2 (w10: 35 vs 76 ms);
     *  - f64 type 2: 8x8x4 (w11 interp 17.1 ms; 8x8x2 19.4, 16x8x4 25.9, 16x16x2 27.2);
     *  - f32 type 1: 16x8x4 (w7 spread 7.7 ms; 16x4x8 7.7, 16x16x2 8.8, 8x8x8 8.7,
     *    8x8x4 8.9, 16x8x6 8.6, 24x8x4 9.5, 16x16x4 10.4, 32x8x4 10.4, 32x16x2 14.5);
     *  - f32 type 2: 16x16x4 (w7 interp 2.8 ms; 16x16x6 2.8, 16x8x4 3.4, 16x16x2 3.5,
     *    16x16x8 3.3, 32x16x4 3.8, 8x8x8 4.2). */
    static const int32_t sm_3d_f64_t1[3] = {8, 8, 2}, sm_3d_f64_t2[3] = {8, 8, 4};
    static const int32_t sm_3d_f32_t1[3] = {16, 8, 4}, sm_3d_f32_t2[3] = {16, 16, 4};
    const int32_t *src = method == WARPFFT_METHOD_SM ? sm[dim - 1] : gm[dim - 1];
    if (method == WARPFFT_METHOD_SM && dim == 3) {
        if (precision == WARPFFT_F64)
            src = type == 1 ? sm_3d_f64_t1 : sm_3d_f64_t2;
        else
            src = type == 1 ? sm_3d_f32_t1 : sm_3d_f32_t2;
    }
    for (int d = 0; d < 3; d++)
        bs[d] = src[d];
}

size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes) {
    size_t pad = (size_t)(width + 1) / 2, bytes = complex_bytes;
    for (int d = 0; d < dim; d++)
        if (__builtin_mul_overflow(bytes, (size_t)bs[d] + 2 * pad, &bytes))
            return SIZE_MAX;
    return bytes;
}

int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit) {
    while (wf_tile_bytes(dim, bs, width, complex_bytes) > limit) {
        int big = 0;
        for (int d = 1; d < dim; d++)
            if (bs[d] > bs[big])
                big = d;
        if (bs[big] <= 2)
            return 0;
        bs[big] = bs[big] / 2 < 2 ? 2 : bs[big] / 2;
    }
    return 1;
}

/* Measured on the H100 (suite B, benches/suite_b.rs with WARPFFT_BENCH_METHODS=all): SM was
 * faster than or equal to GM in every case, types 1 and 2, 1-3 D, f32 and f64 (e.g. 1D type 1
 * 0.69 vs 2.35 ms, 3D type 2 f32 4.46 vs 5.70 ms, 2D type 2 1.35 vs 1.40 ms). GM remains for
 * tiles that do not fit in shared memory. */
int wf_auto_method(int type, int dim, int precision, int width, int sm_fits) {
    (void)type;
    (void)dim;
    (void)precision;
    (void)width;
    return sm_fits ? WARPFFT_METHOD_SM : WARPFFT_METHOD_GM;
}

/* Defaults for `method`, then opts.bin_size overrides, clamped to [1, nf_d]; unused dims 1. */
static void initial_bins(const wf_params *p, int method, const warpfft_opts *o, int32_t bs[3]) {
    wf_default_bins(p->type, method, p->dim, p->precision, bs);
    for (int d = 0; d < 3; d++) {
        if (d >= p->dim) {
            bs[d] = 1;
            continue;
        }
        if (o->bin_size[d] > 0)
            bs[d] = o->bin_size[d];
        if ((int64_t)bs[d] > p->n_fine[d])
            bs[d] = (int32_t)p->n_fine[d];
    }
}

static warpfft_status set_bin_counts(wf_params *p) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++) {
        p->n_bins[d] = (p->n_fine[d] + p->bin_size[d] - 1) / p->bin_size[d];
        if (__builtin_mul_overflow(nbins, p->n_bins[d], &nbins) || nbins > INT32_MAX)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "more than 2^31 - 1 spreading bins (bin_size {%d, %d, %d} on a fine "
                            "grid of {%lld, %lld, %lld}); use larger opts.bin_size",
                            (int)p->bin_size[0], (int)p->bin_size[1], (int)p->bin_size[2],
                            (long long)p->n_fine[0], (long long)p->n_fine[1],
                            (long long)p->n_fine[2]);
    }
    p->nbins = nbins;
    return WARPFFT_SUCCESS;
}

size_t wf_sm_cell_bytes(const wf_params *p) {
    /* 2D f32 spreading adds in fixed point: four int32 words per cell (kernels, WF_SPREAD_SM_FIX)
     */
    if (p->type == 1 && p->dim == 2 && p->precision == WARPFFT_F32)
        return 16;
    return p->complex_bytes;
}

static warpfft_status sm_unfit(const wf_params *p, const int32_t bs[3], size_t limit) {
    return wf_error(WARPFFT_ERR_UNSUPPORTED,
                    "opts.method = SM: the smallest shared-memory tile (bins {%d, %d, %d}, width "
                    "%d, %s) needs %zu bytes; the device allows %zu; use method GM or AUTO",
                    (int)bs[0], (int)bs[1], (int)bs[2], p->width, wf_prec_name(p->precision),
                    wf_tile_bytes(p->dim, bs, p->width, wf_sm_cell_bytes(p)), limit);
}

/* Whether bins of size bs on the fine grid number at most INT32_MAX (the kernels' bin index). */
static int bins_addressable(const wf_params *p, const int32_t bs[3]) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++)
        if (__builtin_mul_overflow(nbins, (p->n_fine[d] + bs[d] - 1) / bs[d], &nbins))
            return 0;
    return nbins <= INT32_MAX;
}

static warpfft_status set_method(wf_params *p, const warpfft_opts *o, size_t limit) {
    int32_t sm[3];
    initial_bins(p, WARPFFT_METHOD_SM, o, sm);
    int fits = wf_fit_sm_bins(p->dim, sm, p->width, wf_sm_cell_bytes(p), limit);
    /* AUTO: small SM bins on a huge grid can outnumber int32; GM's larger bins may not */
    if (o->method == WARPFFT_METHOD_AUTO && fits && !bins_addressable(p, sm))
        fits = 0;
    int m = o->method;
    if (m == WARPFFT_METHOD_AUTO)
        m = wf_auto_method(p->type, p->dim, p->precision, p->width, fits);
    if (m == WARPFFT_METHOD_SM && !fits)
        return sm_unfit(p, sm, limit);
    p->method = m;
    p->maxsub = o->max_subprob > 0 ? o->max_subprob : WF_DEFAULT_MAXSUB;
    if (m == WARPFFT_METHOD_SM) {
        memcpy(p->bin_size, sm, sizeof sm);
        p->tile_bytes = wf_tile_bytes(p->dim, sm, p->width, wf_sm_cell_bytes(p));
    } else {
        initial_bins(p, WARPFFT_METHOD_GM, o, p->bin_size);
        p->tile_bytes = 0;
    }
    return set_bin_counts(p);
}

/* ---------------------------------------------------------------- the whole choice */

static void set_basics(wf_params *p, int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                       double tol, int precision, const warpfft_opts *o) {
    memset(p, 0, sizeof *p);
    p->type = type;
    p->dim = dim;
    p->precision = precision;
    p->modeord = o->modeord;
    p->tol = tol;
    p->upsampfac = o->upsampfac;
    p->ntransf = ntransf;
    for (int d = 0; d < 3; d++)
        p->n_modes[d] = d < dim ? n_modes[d] : 1;
    p->real_bytes = precision == WARPFFT_F64 ? 8 : 4;
    p->complex_bytes = 2 * p->real_bytes;
}

warpfft_status wf_params_make(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                              double tol, int precision, const warpfft_opts *opts,
                              size_t shared_limit, wf_params *p) {
    warpfft_opts o;
    warpfft_status st = check_plan_args(type, dim, n_modes, ntransf, tol, precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    set_basics(p, type, dim, n_modes, ntransf, tol, precision, &o);
    st = set_kernel(p);
    if (st == WARPFFT_SUCCESS)
        st = set_grid(p);
    if (st == WARPFFT_SUCCESS)
        st = set_method(
            p, &o, shared_limit > WF_SM_STATIC_RESERVE ? shared_limit - WF_SM_STATIC_RESERVE : 0);
    return st;
}

void wf_params_to_info(const wf_params *p, warpfft_plan_info *info) {
    memset(info, 0, sizeof *info);
    info->type = p->type;
    info->dim = p->dim;
    info->precision = p->precision;
    info->method = p->method;
    info->width = p->width;
    info->beta = p->beta;
    info->upsampfac = p->upsampfac;
    for (int d = 0; d < 3; d++) {
        info->n_modes[d] = p->n_modes[d];
        info->n_fine[d] = p->n_fine[d];
        info->bin_size[d] = p->bin_size[d];
    }
    info->ntransf = p->ntransf;
    info->n_points = -1;
    info->workspace_bytes = 0;
}

/* Layout must match plan.c's allocations (plan_alloc_fixed). */
size_t wf_params_fixed_bytes(const wf_params *p) {
    size_t b = (size_t)p->fine_prod * (size_t)p->ntransf * p->complex_bytes;
    for (int d = 0; d < p->dim; d++)
        b += (size_t)(p->n_modes[d] / 2 + 1) * p->real_bytes;
    size_t per_bin = p->method == WARPFFT_METHOD_SM ? 4 : 2; /* u64 arrays per bin */
    b += (size_t)p->nbins * per_bin * sizeof(uint64_t);
    return b + 24; /* setpts result block: u64 x2 + i32 bad flag + padding */
}

int64_t wf_params_subprob_cap(const wf_params *p, int64_t M) {
    return p->nbins + (M + p->maxsub - 1) / p->maxsub;
}

WARPFFT_API warpfft_status warpfft_plan_params(int type, int dim, const int64_t n_modes[3],
                                               int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan_info *info) {
    wf_clear_error();
    if (!info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "info is NULL");
    wf_params p;
    warpfft_status st = wf_params_make(type, dim, n_modes, ntransf, tol, (int)precision, opts,
                                       WF_SHARED_OPTIN_SM90, &p);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_params_to_info(&p, info);
    info->workspace_bytes = wf_params_fixed_bytes(&p); /* cuFFT's work area not included */
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- mode order and folding */

int64_t wf_mode_of_index(int64_t i, int64_t n, int modeord) {
    if (modeord == 0)
        return i - n / 2;
    return i < (n + 1) / 2 ? i : i - n;
}

int64_t wf_index_of_mode(int64_t k, int64_t n, int modeord) {
    if (modeord == 0)
        return k + n / 2;
    return k >= 0 ? k : n + k;
}

double wf_fold(double x, int64_t nf) {
    double u = x * WF_INV_2PI;
    u = u - floor(u);
    u = u * (double)nf;
    if (u >= (double)nf)
        u -= (double)nf;
    return u;
}
