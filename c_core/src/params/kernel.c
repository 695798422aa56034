/*
 * kernel.c — the spreading kernel's Fourier transform and the widths embedded per precision:
 * Gauss-Legendre quadrature, the kernel's half rule, phihat and the deconvolution factors
 * 1/phihat. No GPU; see params.h. The kernel and its beta are kernels/kernel_shape.h.
 */
#include "params/kernel.h"

#include "params/base.h"

#include <math.h>
#include <string.h>

int wf_max_width(int precision) {
    return precision == WARPFFT_F64 ? WF_MAX_WIDTH_F64 : WF_MAX_WIDTH_F32;
}

/* Newton's method for the nodes: O(n^2) per rule, a quarter of a width-bound evaluation
 * before the cache below. */
static void gauss_legendre(int n, double *x, double *w) {
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

/* The last rules made, per thread (the width rule asks for the same few sizes many times). */
#define WF_GL_CACHE 6
typedef struct gl_rule {
    int n;
    double x[WF_MAX_QUAD], w[WF_MAX_QUAD];
} gl_rule;

void wf_gauss_legendre(int n, double *x, double *w) {
    static _Thread_local gl_rule cache[WF_GL_CACHE];
    static _Thread_local int next;
    if (n < 1 || n > WF_MAX_QUAD) {
        gauss_legendre(n, x, w);
        return;
    }
    gl_rule *r = NULL;
    for (int i = 0; i < WF_GL_CACHE && !r; i++)
        if (cache[i].n == n)
            r = &cache[i];
    if (!r) {
        r = &cache[next];
        next = (next + 1) % WF_GL_CACHE;
        gauss_legendre(n, r->x, r->w);
        r->n = n;
    }
    memcpy(x, r->x, (size_t)n * sizeof *x);
    memcpy(w, r->w, (size_t)n * sizeof *w);
}

int wf_quad_nodes(int width) {
    return 4 * width + 32; /* converged to rounding with <= 62 for all widths (test_params) */
}

/* Gauss-Legendre in theta after t = (w/2) sin(theta): nodes t[j] >= 0 (half rule) and weights
 * g[j] = (both halves) * dtheta scale * (w/2) * phi(t) cos(theta), the last factor the kernel's
 * quadrature form (wf_kshape_theta: analytic in theta, the kink at the edge included). Returns
 * the count. */
int wf_phi_rule(int width, double beta, int n_quad, double *t, double *g) {
    double x[WF_MAX_QUAD], wt[WF_MAX_QUAD];
    if (n_quad > WF_MAX_QUAD)
        n_quad = WF_MAX_QUAD;
    n_quad += n_quad & 1;
    wf_gauss_legendre(n_quad, x, wt);
    int h = n_quad / 2;
    double hw = 0.5 * width;
    wf_kshape_f64 k = wf_kshape_make_f64(width, beta);
    for (int j = 0; j < h; j++) {
        double th = 0.5 * WF_PI * x[h + j];
        t[j] = hw * sin(th);
        g[j] = WF_PI * wt[h + j] * hw * wf_kshape_theta(th, k);
    }
    return h;
}

/* The deconvolution's half rule: phase steps a[j] = 2 pi t_j / nf and weights g[j]. */
static int half_rule(int64_t nf, int width, double beta, int n_quad, double *a, double *g) {
    int h = wf_phi_rule(width, beta, n_quad, a, g);
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
