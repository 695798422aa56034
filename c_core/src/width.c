/*
 * width.c — the kernel width rule: the predicted aliasing error of a plan, the search for the
 * smallest width that meets tol, and the plan stage that sets width and beta (refusing a tol
 * that needs a wider kernel than the precision embeds). No GPU; see params.h.
 *
 * Width: the smallest w whose predicted error, times WF_ALIAS_SAFETY, is <= tol. The
 * prediction is the plan's own aliasing error for random points and strengths: per dim,
 * a(k) = sum_{m != 0} phihat(k + m nf)^2 / phihat(k)^2 averaged over the plan's modes k, and
 * the error is sqrt(sum over dims of those means). A numpy emulation of the whole pipeline
 * against the direct sum (uniform and clustered points, N 6..2001, dims 1-3, widths 3..13)
 * measured within 5% of it; FINUFFT's rule (tol-only) missed small even N in 3D, where the
 * band-edge mode -N/2 carries 1/N of the weight, and lost a point of width everywhere else.
 */
#include "params.h"

#include <math.h>

#include "runtime.h"

#define WF_ALIAS_SAFETY 1.25
#define WF_ALIAS_MMAX   4  /* aliases m = +-1..+-4 by quadrature; beyond, the jump asymptote */
#define WF_ALIAS_SAMPLE 32 /* |k| samples per dim when N/2 is larger */

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
    int h = wf_phi_rule(width, beta, n_quad, t, g);
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

/* f32 at upsampfac 1.25: the deconvolution factors grow ~1000x towards the band edge and
 * amplify f32 rounding; measured on the H100 at tol 1e-5: 1.3e-5 (2D type 1) to 9.1e-5 (3D
 * type 2). Below this tol, f32 plans need upsampfac 2.0. */
#define WF_F32_MIN_TOL_UPSAMP_125 1e-4

warpfft_status wf_params_set_kernel(wf_params *p) {
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
