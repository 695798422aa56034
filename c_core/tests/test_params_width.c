/*
 * test_params_width.c — the kernel width (width.c): the aliasing model against
 * an independent one, the width rule (smallest width whose bound meets tol, monotone, the fast
 * start equal to the full search), suite B's widths, the sampling of wf_alias_dim_stats against
 * dense sampling, and the rounding floor of the accuracy (tol_floor).
 */
#include "test_params.h"

/* A 1D case of the aliasing model: N modes, kernel width w, upsampling factor sigma. */
typedef struct alias_case {
    int64_t N;
    int w;
    double sigma;
} alias_case;

/* Independent aliasing model: plain Gauss-Legendre in t (no substitution, 3000 nodes), the
 * kernel by its defining formula, aliases |m| <= 40 summed explicitly (no jump asymptote). */
static double alias_mean_ref(int64_t N, int64_t nf, int w, double beta) {
    static double x[3000], wt[3000];
    static int ready;
    gl_once(3000, x, wt, &ready);
    static double ph[3000];
    double hw = 0.5 * w, sum = 0.0;
    for (int j = 0; j < 3000; j++)
        ph[j] = wt[j] * hw * wf_kernel_def(x[j], beta);
    for (int64_t k = -(N / 2); k <= (N - 1) / 2; k++) {
        double main = 0.0, al = 0.0;
        for (int m = -40; m <= 40; m++) {
            double xi = (double)k / (double)nf + m, f = 0.0;
            for (int j = 0; j < 3000; j++)
                f += ph[j] * cos(2 * PI * xi * hw * x[j]);
            if (m == 0)
                main = f;
            else
                al += f * f;
        }
        sum += al / (main * main);
    }
    return sum / (double)N;
}

void test_width_beta(void) {
    /* beta is kernel_shape.h's (test_kernel_shape; the plans report it: test_params_cost.c,
     * test_params_bins.c's reference cases). The model against the independent one (small N:
     * every mode, N > 128: Gauss-Legendre in |k|; the plan's model adds a jump asymptote for
     * |m| > 4, which runs 2-15% high: on the safe side) */
    static const alias_case m[] = {{8, 6, 2.0},  {25, 6, 2.0},  {7, 3, 2.0},     {6, 10, 2.0},
                                   {9, 13, 2.0}, {10, 8, 1.25}, {300, 10, 1.25}, {301, 6, 2.0}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        int64_t nf = wf_fine_size(m[i].N, m[i].sigma, m[i].w);
        double beta = wf_kernel_beta(m[i].w, m[i].sigma);
        double a = wf_alias_mean(m[i].N, nf, m[i].w, beta);
        double b = alias_mean_ref(m[i].N, nf, m[i].w, beta);
        CHECK(a >= b * 0.99 && a <= b * 1.20, "N %lld w %d sigma %g: alias mean %.4g vs %.4g",
              (long long)m[i].N, m[i].w, m[i].sigma, a, b);
    }
    /* the width rule: the fast start gives the full search's answer; monotone in tol */
    static const int64_t Ns[] = {1, 8, 25, 1024, 1000000};
    static const double sig[2] = {2.0, 1.25};
    for (int si = 0; si < 2; si++)
        for (int dim = 1; dim <= 3; dim++)
            for (size_t i = 0; i < sizeof Ns / sizeof Ns[0]; i++) {
                int64_t n[3] = {Ns[i], Ns[i] + (dim > 1), Ns[i]};
                int prev = 100;
                for (double lt = -1.0; lt >= -14.0; lt -= 0.5) {
                    double tol = pow(10.0, lt);
                    int w = wf_kernel_width(dim, n, tol, sig[si], 16);
                    int wb = wf_kernel_width_from(dim, n, tol, sig[si], 16, 2);
                    CHECK(w == wb, "dim %d N %lld tol %g sigma %g: width %d, full search %d", dim,
                          (long long)Ns[i], tol, sig[si], w, wb);
                    CHECK(w >= 2 && w <= 17, "width %d", w);
                    CHECK(w >= (prev == 100 ? 2 : prev), "monotone: tol %g width %d < %d", tol, w,
                          prev);
                    prev = w;
                    if (w <= 16)
                        CHECK(wf_alias_passes(dim, n, tol, sig[si], w) &&
                                  (w == 2 || !wf_alias_passes(dim, n, tol, sig[si], w - 1)),
                              "smallest width");
                }
            }
    /* widths of suite B at sigma 2 (issue 14's rule: 6 -> 7 at 1e-5, 2D 10 -> 11 at 1e-9; the
     * band edge on grid nodes, sum_d worst_d, adds one more in f64 at 1e-9; in 3D f32 at 1e-5 it
     * did too until the kernel lost its edge value, which points on nodes saw as a jump) and the
     * small-N case that FINUFFT's rule gets wrong */
    static const struct {
        int dim;
        int64_t N;
        double tol;
        int w;
    } b[] = {{1, 1000000, 1e-5, 7}, {2, 1024, 1e-5, 7}, {3, 128, 1e-5, 7}, {3, 8, 1e-5, 7},
             {2, 1024, 1e-9, 12},   {3, 128, 1e-9, 12}, {2, 256, 1e-5, 7}};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        int64_t n[3] = {b[i].N, b[i].N, b[i].N};
        int w = wf_kernel_width(b[i].dim, n, b[i].tol, 2.0, 16);
        CHECK(w == b[i].w, "%dD N %lld tol %g: width %d, expected %d", b[i].dim, (long long)b[i].N,
              b[i].tol, w, b[i].w);
        printf("%dD N=%lld tol=%g: width %d, predicted error %.3g\n", b[i].dim, (long long)b[i].N,
               b[i].tol, w, wf_alias_error(b[i].dim, n, 2.0, w));
    }
    CHECK(wf_max_width(WARPFFT_F32) == 12 && wf_max_width(WARPFFT_F64) == 16, "max widths");
    /* The band edge on grid nodes the H200 measured above the model (gpu_accuracy band_edge,
     * type 2, every point on a node, all energy in the band-edge modes): the rule's worst-sum
     * bound covers each measured error, the model alone did not, and the widths the rule takes
     * now at those sigmas are wider than the ones measured. */
    static const struct {
        int dim;
        int64_t n[3];
        double sigma, tol, measured;
        int w;
    } g[] = {{3, {24, 26, 28}, 3.0, 1e-5, 1.28e-5, 6},
             {1, {2000, 1, 1}, 3.0, 1e-12, 1.34e-12 - 4.4e-13, 12}, /* less its floor */
             {3, {24, 26, 28}, 1.6160826594546942, 1e-4, 2.40e-4, 6}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        double model = wf_alias_error(g[i].dim, g[i].n, g[i].sigma, g[i].w);
        double worst = wf_alias_worst(g[i].dim, g[i].n, g[i].sigma, g[i].w);
        int wnow = wf_kernel_width(g[i].dim, g[i].n, g[i].tol, g[i].sigma, 16);
        CHECK(model < g[i].measured && worst >= 0.95 * g[i].measured && wnow > g[i].w,
              "%dD sigma %g w %d: measured %.3g, model %.3g, worst-sum %.3g, width now %d",
              g[i].dim, g[i].sigma, g[i].w, g[i].measured, model, worst, wnow);
    }
}

/* wf_alias_dim_stats' sampling (34 offsets; every mode up to 64, else 32 Gauss-Legendre modes
 * plus the band edges) against every mode and 1024 offsets with the test's own kernel and
 * phihat. */
void test_alias_sampling(void) {
    static const alias_case c[] = {{8, 6, 2.0},    {25, 7, 2.0},   {64, 10, 2.0},
                                   {65, 6, 2.0},   {301, 11, 2.0}, {1000, 7, 1.25},
                                   {4097, 6, 2.0}, {200, 13, 1.25}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int64_t N = c[i].N, nf = wf_fine_size(N, c[i].sigma, c[i].w);
        int w = c[i].w;
        double beta = wf_kernel_beta(w, c[i].sigma);
        wf_alias_dim st;
        wf_alias_dim_stats(N, nf, w, beta, &st);
        int nk = (int)N, nd = 1024;
        double *ph = malloc((size_t)nk * sizeof *ph), *edge = calloc((size_t)nk, sizeof *edge);
        for (int i2 = 0; i2 < nk; i2++)
            ph[i2] = phihat_ref((double)(i2 - N / 2), nf, w, beta);
        double off = 0.0, coh = 0.0, edge2 = 0.0, mean = 0.0;
        for (int id = 0; id < nd; id++) {
            double delta = (double)id / nd, i0 = ceil(delta - 0.5 * w), q = 0, er = 0, ei = 0;
            for (int i2 = 0; i2 < nk; i2++) {
                double xi = 2 * PI * (double)(i2 - N / 2) / (double)nf, pr = 0, pi = 0;
                for (int t = 0; t < w; t++) {
                    double z = i0 + t - delta, v = phi_dev(z, w, beta);
                    pr += v * cos(xi * z);
                    pi -= v * sin(xi * z);
                }
                double re = pr / ph[i2] - 1.0, im = pi / ph[i2], a2 = re * re + im * im;
                q += a2 / N;
                er += re / N;
                ei += im / N;
                edge[i2] += a2 / nd;
            }
            off = fmax(off, q);
            coh = fmax(coh, hypot(er, ei));
            mean += q / nd;
        }
        for (int i2 = 0; i2 < nk; i2++)
            edge2 = fmax(edge2, edge[i2]);
        free(ph);
        free(edge);
        /* offset2: the continuous kernel's worst offset lies between the sampled ones (4.3% low
         * in |E|^2 at N 301 w 11, 2% in the error; the safety factor covers it) */
        CHECK(fabs(st.offset2 / off - 1) < 0.05 && fabs(st.edge2 / edge2 - 1) < 0.05 &&
                  fabs(st.mean2 / mean - 1) < 0.05 && st.coherent <= 1.05 * coh &&
                  st.coherent >= 0.9 * coh,
              "N %lld w %d sigma %g: offset2 %.4g/%.4g edge2 %.4g/%.4g mean2 %.4g/%.4g coh "
              "%.4g/%.4g",
              (long long)N, w, c[i].sigma, st.offset2, off, st.edge2, edge2, st.mean2, mean,
              st.coherent, coh);
        /* the mean over offsets is the old model (wf_alias_mean, with its asymptote 2-15% high) */
        double old = wf_alias_mean(N, nf, w, beta);
        CHECK(old >= 0.9 * st.mean2 && old <= 1.3 * st.mean2, "N %lld w %d: mean %.4g vs %.4g",
              (long long)N, w, old, st.mean2);
    }
}

void test_tol_floor(void) {
    warpfft_plan_info in;
    const int64_t n1[3] = {100000, 1, 1}, n2[3] = {1024, 1024, 1}, big[3] = {1000000000, 1, 1};
    CHECK(warpfft_plan_params(1, 1, n1, 1, 1e-9, WARPFFT_F64, NULL, &in) == 0 &&
              in.tol_floor > 1e-11 && in.tol_floor < 5e-11,
          "1D f64 N 1e5: floor %.3g (N 2^-52 = 2.2e-11)", in.tol_floor);
    CHECK(warpfft_plan_params(1, 1, big, 1, 1e-9, WARPFFT_F64, NULL, &in) == 0 &&
              in.tol_floor > 1e-7 && in.tol_floor < 1e-6,
          "1D f64 N 1e9: floor %.3g above tol 1e-9", in.tol_floor);
    CHECK(warpfft_plan_params(2, 2, n2, 1, 1e-13, WARPFFT_F64, NULL, &in) == 0 &&
              in.tol_floor > 1e-13 && in.tol_floor < 1e-12,
          "2D f64 1024^2: floor %.3g above tol 1e-13", in.tol_floor);
    warpfft_opts s2 = defaults();
    s2.upsampfac = 2.0;
    CHECK(warpfft_plan_params(1, 2, n2, 1, 1e-5, WARPFFT_F32, &s2, &in) == 0 &&
              in.tol_floor > 3e-7 && in.tol_floor <= 1e-6,
          "2D f32: floor %.3g (eps32 terms)", in.tol_floor);
    wf_params p;
    CHECK(wf_params_make(1, 3, n2, 1, 1e-6, WARPFFT_F32, &s2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tol_floor == wf_tol_floor(WARPFFT_F32, 3, p.n_modes, p.fine_prod),
          "params carry the floor (sigma 2: no amplification)");
    /* a chosen sigma below 2 may amplify rounding, but only to a quarter of tol */
    CHECK(warpfft_plan_params(1, 2, n2, 1, 1e-5, WARPFFT_F32, NULL, &in) == 0 &&
              in.tol_floor <= 0.25e-5 + 1e-6,
          "2D f32 auto sigma %.3f: floor %.3g", in.upsampfac, in.tol_floor);
    CHECK(wf_tol_floor(WARPFFT_F64, 1, n1, 200000) < wf_tol_floor(WARPFFT_F64, 1, big, 2000000000),
          "floor grows with N");
}
