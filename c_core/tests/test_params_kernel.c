/*
 * test_params_kernel.c — the kernel (kernels/kernel_shape.h) and its Fourier transform
 * (kernel.c): the descriptor's parts against each other (the evaluated and quadrature forms, the
 * edge value and the kink against the defining formula), Gauss-Legendre quadrature, phihat and
 * the deconvolution factors, against reference implementations that the other test_params_*.c
 * files share (test_params.h): the kernel as the device evaluates it, and phihat by an
 * independent quadrature.
 */
#include "test_params.h"

/* ------------------------------------------------------------------ reference kernel */

/* A Gauss-Legendre rule computed on first use. */
void gl_once(int n, double *x, double *wt, int *ready) {
    if (!*ready) {
        wf_gauss_legendre(n, x, wt);
        *ready = 1;
    }
}

/* The kernel exactly as the device evaluates it in double (kernels/kernel_shape.h, the
 * footprint's constants made as the kernels make them) on the footprint nodes: 0 at |z| = w/2. */
double phi_dev(double z, int w, double beta) {
    return wf_kshape_phi_f64(z, wf_kshape_make_f64(w, beta));
}

/* Reference phihat: the same theta substitution as kernel.c (the descriptor's quadrature form),
 * but all 400 nodes of the full interval (no symmetry, no recurrence), rule computed once. */
double phihat_ref(double k, int64_t nf, int width, double beta) {
    static double x[400], wt[400];
    static int ready;
    gl_once(400, x, wt, &ready);
    wf_kshape_f64 ks = wf_kshape_make_f64(width, beta);
    double hw = 0.5 * width, s = 0.0;
    for (int j = 0; j < 400; j++) {
        double th = 0.5 * PI * x[j];
        s += 0.5 * PI * wt[j] * hw * wf_kshape_theta(th, ks) *
             cos(2 * PI * k * hw * sin(th) / (double)nf);
    }
    return s;
}

/* phihat by plain Gauss-Legendre in t with 2000 nodes (no substitution): independent check of
 * the substitution itself. */
static double phihat_t_domain(double k, int64_t nf, int width, double beta) {
    static double x[2000], wt[2000];
    static int ready;
    gl_once(2000, x, wt, &ready);
    double hw = 0.5 * width, s = 0.0;
    for (int j = 0; j < 2000; j++) {
        double t = hw * x[j], a = x[j];
        s += wt[j] * hw * wf_kernel_def(a, beta) * cos(2 * PI * k * t / (double)nf);
    }
    return s;
}

/* ------------------------------------------------------------------ the descriptor */

/* kernels/kernel_shape.h's parts against its defining formula (wf_kernel_def), for every embedded
 * width and upsampling factors across the range: the double form the kernels evaluate, the
 * quadrature form, the edge value in both forms, continuity at the edge (0 there and beyond),
 * the kink slope the width rule's tail uses, and beta's growth in w and sigma. A kernel shape
 * whose parts disagree fails here. */
void test_kernel_shape(void) {
    static const double sig[] = {1.25, 1.5, 2.0, 3.0};
    double worst = 0.0, worst_th = 0.0, worst_kink = 0.0;
    for (size_t si = 0; si < sizeof sig / sizeof sig[0]; si++)
        for (int w = 2; w <= 16; w++) {
            double beta = wf_kernel_beta(w, sig[si]), hw = 0.5 * w;
            wf_kshape_f64 k = wf_kshape_make_f64(w, beta);
            double peak = wf_kernel_def(0.0, beta), err = 0.0, err_th = 0.0;
            CHECK(beta > 0 && beta > wf_kernel_beta(w - 1, sig[si]) &&
                      (si == 0 || beta > wf_kernel_beta(w, sig[si - 1])),
                  "w %d sigma %g: beta %g grows with w and sigma", w, sig[si], beta);
            for (int i = -999; i <= 999; i++) { /* a = z / (w/2) in (-1, 1) */
                double a = i / 1000.0, th = asin(a);
                err = fmax(err, fabs(wf_kshape_phi_f64(a * hw, k) - wf_kernel_def(a, beta)));
                err_th = fmax(
                    err_th, fabs(wf_kshape_theta(th, k) - wf_kernel_def(sin(th), beta) * cos(th)));
            }
            CHECK(err <= 1e-13 * peak && err_th <= 1e-13 * peak,
                  "w %d sigma %g: evaluated form %.3g, quadrature form %.3g off the definition "
                  "(peak %.3g)",
                  w, sig[si], err, err_th, peak);
            worst = fmax(worst, err / peak);
            worst_th = fmax(worst_th, err_th / peak);
            CHECK(wf_kshape_edge_f64(k) == wf_kernel_edge(beta), "w %d sigma %g: edge value", w,
                  sig[si]);
            CHECK(fabs(wf_kernel_def(1.0 - 1e-12, beta)) <= 1e-9 * peak &&
                      wf_kshape_phi_f64(hw, k) == 0.0 && wf_kshape_phi_f64(-hw, k) == 0.0 &&
                      wf_kshape_phi_f64(0.75 * w, k) == 0.0,
                  "w %d sigma %g: continuous, 0 at and beyond the edge (%.3g just inside)", w,
                  sig[si], wf_kernel_def(1.0 - 1e-12, beta));
            /* phi(-w/2 + d) ~ kink * d */
            double d = 1e-7 * hw, slope = wf_kernel_def(-1.0 + d / hw, beta) / d;
            double kink = wf_kernel_kink(w, beta);
            CHECK(fabs(slope - kink) <= 1e-3 * kink,
                  "w %d sigma %g: slope %.6g at the edge, kink %.6g", w, sig[si], slope, kink);
            worst_kink = fmax(worst_kink, fabs(slope - kink) / kink);
        }
    printf("kernel_shape.h: evaluated form within %.2g, quadrature form %.2g of the peak; kink "
           "slope within %.2g\n",
           worst, worst_th, worst_kink);
}

/* ------------------------------------------------------------------ quadrature */

void test_gauss_legendre(void) {
    static double x[400], w[400];
    static const int ns[] = {1, 2, 3, 5, 8, 17, 32, 64, 100, 255, 400};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int n = ns[i];
        wf_gauss_legendre(n, x, w);
        int sorted = 1;
        for (int j = 1; j < n; j++)
            sorted &= x[j] > x[j - 1];
        CHECK(sorted && x[0] > -1 && x[n - 1] < 1, "n %d: nodes ascending in (-1, 1)", n);
        int kmax = 2 * n - 1 < 40 ? 2 * n - 1 : 40; /* x^k, k <= 2n-1, exact */
        for (int k = 0; k <= kmax; k++) {
            double s = 0.0;
            for (int j = 0; j < n; j++)
                s += w[j] * pow(x[j], k);
            double exact = k % 2 ? 0.0 : 2.0 / (k + 1);
            CHECK(fabs(s - exact) < 1e-14, "n %d: int x^%d = %.17g, exact %.17g", n, k, s, exact);
        }
    }
}

static void check_factors(int64_t N, int64_t nf, int w, double beta, double sigma) {
    int64_t K = N / 2 + 1;
    double *fac = malloc((size_t)K * sizeof *fac);
    wf_deconv_factors(N, nf, w, beta, fac);
    double ref0 = phihat_ref(0, nf, w, beta), max_rel = 0.0, max_abs = 0.0;
    int positive = ref0 > 0;
    for (int64_t k = 0; k < K; k++) {
        double ref = phihat_ref((double)k, nf, w, beta), ph = 1.0 / fac[k];
        positive &= fac[k] > 0 && isfinite(fac[k]);
        max_rel = fmax(max_rel, fabs(ph - ref) / fabs(ref));
        max_abs = fmax(max_abs, fabs(ph - ref) / ref0);
    }
    CHECK(positive, "N %lld w %d sigma %g: phihat(0) > 0 and fac > 0", (long long)N, w, sigma);
    CHECK(max_abs < 1e-14, "N %lld w %d sigma %g: |err| / phihat(0) = %.3g", (long long)N, w, sigma,
          max_abs);
    /* sigma = 2 keeps phihat(N/2) >= 0.1 phihat(0): relative accuracy throughout */
    if (sigma == 2.0)
        CHECK(max_rel < 1e-14, "N %lld w %d: relative error %.3g", (long long)N, w, max_rel);
    free(fac);
}

void test_phihat(void) {
    static const double sig[2] = {2.0, 1.25};
    for (int s = 0; s < 2; s++)
        for (int w = 2; w <= 16; w++) {
            double beta = wf_kernel_beta(w, sig[s]);
            static const int64_t Ns[] = {1, 2, 7, 64, 1000, 4097};
            for (size_t i = 0; i < sizeof Ns / sizeof Ns[0]; i++)
                check_factors(Ns[i], wf_fine_size(Ns[i], sig[s], w), w, beta, sig[s]);
            /* substitution vs plain t-domain quadrature: the sqrt endpoint term (~e^-beta)
             * limits the latter, so compare only where it is negligible */
            if (w >= 8) {
                int64_t nf = wf_fine_size(200, sig[s], w);
                for (int k = 0; k <= 100; k += 5) {
                    double a = wf_phihat(k, nf, w, beta, wf_quad_nodes(w));
                    double b = phihat_t_domain(k, nf, w, beta);
                    CHECK(fabs(a - b) <= 1e-12 * fabs(b), "w %d sigma %g k %d: %.17g vs %.17g", w,
                          sig[s], k, a, b);
                }
            }
        }
    /* the factors are 1/phihat: phihat(0) of w = 2 by the t-domain rule, loosely */
    double a = wf_phihat(0, 12, 2, 4.4, 400), b = phihat_t_domain(0, 12, 2, 4.4);
    CHECK(fabs(a - b) < 1e-8 * b, "w 2 phihat(0): %.17g vs %.17g", a, b);
}
