/*
 * test_params_kernel.c — the kernel and its Fourier transform (kernel.c): Gauss-Legendre
 * quadrature, phihat and the deconvolution factors, against reference implementations that the
 * other test_params_*.c files share (test_params.h): the kernel by its defining formula and as
 * the device evaluates it, and phihat by an independent quadrature.
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

/* The kernel by its defining formula, at a = t / (w/2) in (-1, 1): 2 e^-beta (sinh(beta s) / s
 * - beta). */
double phi_sinh(double a, double beta) {
    double s = sqrt(1 - a * a);
    return 2.0 * exp(-beta) * (sinh(beta * s) / s - beta);
}

/* The kernel exactly as the device evaluates it (kernels/common.cuh, double) on the footprint
 * nodes: 0 at |z| = w/2. */
double phi_dev(double z, int w, double beta) {
    double a = 2.0 * z / w, s2 = 1.0 - a * a;
    if (!(s2 > 0.0))
        return 0.0;
    double s = sqrt(s2), e = exp(beta * (s - 1.0)), eb = exp(-beta);
    return (e * e - eb * eb) / (e * s) - 2.0 * beta * eb;
}

/* Reference phihat: the same theta substitution as kernel.c, but all 400 nodes of the full
 * interval (no symmetry, no recurrence), rule computed once. */
double phihat_ref(double k, int64_t nf, int width, double beta) {
    static double x[400], wt[400];
    static int ready;
    gl_once(400, x, wt, &ready);
    double hw = 0.5 * width, s = 0.0;
    for (int j = 0; j < 400; j++) {
        double th = 0.5 * PI * x[j];
        double sh = sin(0.5 * th);
        double ch = cos(0.5 * th);
        s += 0.5 * PI * wt[j] * hw *
             (exp(-2 * beta * sh * sh) - exp(-2 * beta * ch * ch) -
              2 * beta * exp(-beta) * cos(th)) *
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
        s += wt[j] * hw * phi_sinh(a, beta) * cos(2 * PI * k * t / (double)nf);
    }
    return s;
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
