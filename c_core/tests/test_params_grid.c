/*
 * test_params_grid.c — the fine grid and the points on it (grid.c): smooth sizes, fine-grid
 * sizes, the mode ordering of both modeord conventions, and the folding of points into
 * [0, nf) (its host and device copies one text; exact to ~1 ulp of nf however far the points).
 */
#include "test_params.h"

/* ------------------------------------------------------------------ fine grid */

static int brute_next(int64_t n) {
    for (int64_t m = n < 2 ? 2 : n;; m++)
        if (m % 2 == 0 && wf_is_smooth(m))
            return (int)m;
}

void test_fine_grid(void) {
    CHECK(wf_is_smooth(1) && wf_is_smooth(2 * 3 * 5 * 7 * 8) && !wf_is_smooth(22) &&
              !wf_is_smooth(0) && !wf_is_smooth(13 * 4),
          "smoothness predicate");
    for (int64_t n = -3; n < 5000; n++) {
        int64_t m = wf_next_smooth_even(n);
        CHECK(m == brute_next(n), "next_smooth_even(%lld) = %lld, brute %d", (long long)n,
              (long long)m, brute_next(n));
    }
    int64_t big = ((int64_t)1 << 52) + 12345;
    int64_t m = wf_next_smooth_even(big);
    CHECK(m >= big && m % 2 == 0 && wf_is_smooth(m) && m <= 2 * big, "large: %lld", (long long)m);
    static const double sig[2] = {2.0, 1.25};
    for (int s = 0; s < 2; s++)
        for (int w = 2; w <= 16; w++)
            for (int64_t N = 1; N < 700; N += 7) {
                int64_t nf = wf_fine_size(N, sig[s], w);
                int64_t lo = (int64_t)ceil(sig[s] * N);
                lo = lo < 2 * w ? 2 * w : lo;
                CHECK(nf >= lo && nf % 2 == 0 && wf_is_smooth(nf) && nf == brute_next(lo),
                      "N %lld w %d sigma %g: nf %lld", (long long)N, w, sig[s], (long long)nf);
            }
    CHECK(wf_fine_size(1024, 2.0, 6) == 2048 && wf_fine_size(128, 2.0, 6) == 256 &&
              wf_fine_size(1000, 1.25, 9) == 1250 && wf_fine_size(1, 2.0, 7) == 14,
          "fine sizes of reference cases");
}

/* ------------------------------------------------------------------ modes and folding */

void test_modes(void) {
    static const int64_t Ns[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 1000, 1001};
    for (size_t t = 0; t < sizeof Ns / sizeof Ns[0]; t++)
        for (int ord = 0; ord < 2; ord++) {
            int64_t N = Ns[t], kmin = -(N / 2), kmax = (N - 1) / 2;
            char *seen = calloc((size_t)N, 1);
            int ok = 1;
            for (int64_t i = 0; i < N; i++) {
                int64_t k = wf_mode_of_index(i, N, ord);
                ok &= k >= kmin && k <= kmax && wf_index_of_mode(k, N, ord) == i;
                if (k >= kmin && k <= kmax)
                    seen[k - kmin]++;
            }
            for (int64_t k = kmin; k <= kmax; k++)
                ok &= seen[k - kmin] == 1 &&
                      wf_mode_of_index(wf_index_of_mode(k, N, ord), N, ord) == k;
            free(seen);
            CHECK(ok, "N %lld modeord %d: round trip", (long long)N, ord);
            CHECK(wf_mode_of_index(0, N, ord) == (ord ? 0 : kmin), "N %lld modeord %d: i = 0",
                  (long long)N, ord);
        }
    CHECK(wf_mode_of_index(3, 7, 1) == 3 && wf_mode_of_index(4, 7, 1) == -3 &&
              wf_mode_of_index(4, 8, 1) == -4 && wf_mode_of_index(0, 8, 0) == -4,
          "FFT order examples");
}

void test_fold(void) {
    int64_t nf = 2000;
    CHECK(wf_fold(-PI, nf) == 1000.0, "-pi -> nf/2: %.17g", wf_fold(-PI, nf));
    CHECK(wf_fold(0.0, nf) == 0.0, "0 -> 0");
    CHECK(fabs(wf_fold(PI / 2, nf) - 500.0) < 1e-9, "pi/2 -> nf/4");
    CHECK(fabs(wf_fold(-PI / 2, nf) - 1500.0) < 1e-9, "-pi/2 -> 3nf/4");
    CHECK(fabs(wf_fold(PI / 2 + 4 * PI, nf) - 500.0) < 1e-9, "folds 2 pi periods");
    static const double xs[] = {-1e-300,
                                -1e-17,
                                -5e-324,
                                1e-17,
                                3 * PI,
                                -3 * PI,
                                1e15,
                                -1e15,
                                2 * PI,
                                -2 * PI,
                                6.283185307179585,
                                -6.283185307179585};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        double u = wf_fold(xs[i], nf);
        CHECK(u >= 0.0 && u < (double)nf, "x %.17g -> u %.17g outside [0, nf)", xs[i], u);
    }
}

/* 2 pi in quadruple precision (hi + lo + lo2, each a double: 2 pi to ~1e-48) */
static __float128 two_pi_q(void) {
    return (__float128)6.283185307179586232 + (__float128)2.4492935982947064e-16 +
           (__float128)-5.989539619436679e-33;
}

/* Distance of u from the exact frac(x / 2pi) * nf, computed in quadruple precision, on the circle
 * of length nf. */
static double fold_err(double x, int64_t nf, double u) {
    __float128 tp = two_pi_q(), q = (__float128)x / tp;
    long double fl = floorl((long double)q); /* |q| < 2^63: exact integer part */
    __float128 r = (q - (__float128)fl) * (__float128)nf;
    double d = fabs((double)((__float128)u - r));
    return fmin(d, (double)nf - d);
}

/* The fold of issue 14's report: one double 2pi. */
static double fold_single(double x, int64_t nf) {
    double u = x * 0.15915494309189533576888376337251436;
    u = u - floor(u);
    u = u * (double)nf;
    return u >= (double)nf ? u - (double)nf : u;
}

/* The body of `double wf_fold(...)` in a source file (from its first '{' to the matching '}'),
 * whitespace removed; "" when the file or function is not found. */
static void fold_body(const char *path, char *out, size_t cap) {
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *p = strstr(text, "double wf_fold(double x, ");
    p = p ? strchr(p, '{') : NULL;
    size_t o = 0;
    for (int depth = 0; p && *p && o + 1 < cap; p++) {
        depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
        if (*p != ' ' && *p != '\n' && *p != '\t')
            out[o++] = *p;
        if (depth == 0)
            break;
    }
    out[o] = '\0';
}

void test_fold_far(void) {
    /* the two copies are one text (the device's products are __dmul_rn through WF_MUL_RN) */
    static char host[4096], dev[4096];
    fold_body(WF_SOURCE_ROOT "/c_core/src/params/grid.c", host, sizeof host);
    fold_body(WF_SOURCE_ROOT "/kernels/common.cuh", dev, sizeof dev);
    CHECK(host[0] != '\0' && strcmp(host, dev) == 0 && strstr(host, "fma(-n,WF_2PI_LO,r)"),
          "wf_fold: grid.c and common.cuh differ:\n%s\n%s", host, dev);
    /* [-pi, pi]: the same u as the single-2pi fold, bit for bit (n = 0) */
    uint64_t seed = 99;
    int same = 1;
    for (int i = 0; i < 100000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double x = -PI + 2 * PI * (double)(seed >> 11) * 0x1p-53;
        same &= wf_fold(x, 2000) == fold_single(x, 2000) && wf_fold(x, 7) == fold_single(x, 7);
    }
    CHECK(same, "|x| <= pi folds as before");
    CHECK(wf_fold(PI, 2000) == fold_single(PI, 2000) && wf_fold(nextafter(PI, 4), 2000) < 1000.5 &&
              wf_fold(nextafter(PI, 4), 2000) >= 1000.0,
          "pi and the double after it: %.17g %.17g", wf_fold(PI, 2000),
          wf_fold(nextafter(PI, 4), 2000));
    /* far points: the fold adds ~1 ulp of nf at most, whatever |x| (test: 2 ulp); the single
     * 2pi lost |x| / 2pi * 2.4e-16 of a period */
    static const int64_t nfs[] = {200002, 2000000, 1 << 20, 14};
    double worst_new = 0.0, worst_old = 0.0;
    for (size_t a = 0; a < sizeof nfs / sizeof nfs[0]; a++) {
        int64_t nf = nfs[a];
        double ulp = (double)nf * 0x1p-52;
        for (int i = 0; i < 20000; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            double mag = pow(10.0, 5.0 * (double)(seed >> 11) * 0x1p-53); /* 1 .. 1e5 */
            double x = (seed & 1 ? mag : -mag) * (1.0 + (double)(seed >> 40) * 0x1p-30);
            if (i < 8) /* whole periods and their neighbours */
                x = (double)(i + 1) * 1000.0 * 2 * PI * (i % 2 ? 1 : -1);
            double u = wf_fold(x, nf);
            CHECK(u >= 0.0 && u < (double)nf, "x %.17g: u %.17g outside [0, nf)", x, u);
            worst_new = fmax(worst_new, fold_err(x, nf, u) / ulp);
            if (fabs(x) > 3e3)
                worst_old = fmax(worst_old, fold_err(x, nf, fold_single(x, nf)) / ulp);
        }
    }
    CHECK(worst_new <= 2.0, "far points: fold error %.3g ulp of nf", worst_new);
    CHECK(worst_old > 50.0, "the single-2pi fold's error (%.3g ulp) is what this test catches",
          worst_old);
    printf("fold error, |x| up to 1e5: %.2f ulp of nf (a single double 2pi: %.0f ulp)\n", worst_new,
           worst_old);
}
