/* 2D type-1 NUFFT (f64) of random points; a few modes checked against a direct sum on the CPU.
 * Build: cc type1_2d.c $(pkg-config --cflags --libs warpfft) -o type1_2d
 * Exit: 0 ok, 1 failure or inaccurate, 2 no GPU (driver or device missing). */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <warpfft.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        warpfft_status s_ = (call);                                                                \
        if (s_ != WARPFFT_SUCCESS) {                                                               \
            fprintf(stderr, "%s: %s\n", warpfft_status_name(s_), warpfft_last_error());            \
            rc = (s_ == WARPFFT_ERR_NO_DRIVER || s_ == WARPFFT_ERR_NO_DEVICE) ? 2 : 1;             \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* e^{ikx} for |x| <= pi, by a Taylor series and powers: the example needs no -lm. */
static double complex cis_k(double x, int k) {
    double complex z = 1, term = 1, w = 1;
    for (int n = 1; n < 30; n++)
        z += (term *= I * x / n);
    for (int m = 0; m < abs(k); m++)
        w *= k < 0 ? conj(z) : z;
    return w;
}

int main(void) {
    enum { M = 100000, N1 = 128, N2 = 64 };
    const double pi = 3.14159265358979323846;
    double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y);
    double complex *c = malloc(M * sizeof *c), *f = malloc(N1 * N2 * sizeof *f);
    void *dx = NULL, *dy = NULL, *dc = NULL, *df = NULL;
    warpfft_plan plan = NULL;
    int rc = 0;
    double norm2 = 0; /* |c|_2^2: the typical |f_k|^2 for random c */
    for (int j = 0; j < M; j++) {
        x[j] = pi * (2.0 * rand() / RAND_MAX - 1), y[j] = pi * (2.0 * rand() / RAND_MAX - 1);
        c[j] = (2.0 * rand() / RAND_MAX - 1) + I * (2.0 * rand() / RAND_MAX - 1);
        norm2 += creal(c[j] * conj(c[j]));
    }
    int64_t n_modes[3] = {N1, N2, 1};
    CHECK(warpfft_plan_create(1, 2, n_modes, +1, 1, 1e-9, WARPFFT_F64, NULL, &plan));
    CHECK(warpfft_malloc(0, M * sizeof *x, &dx));
    CHECK(warpfft_malloc(0, M * sizeof *y, &dy));
    CHECK(warpfft_malloc(0, M * sizeof *c, &dc));
    CHECK(warpfft_malloc(0, N1 * N2 * sizeof *f, &df));
    CHECK(warpfft_memcpy_htod(0, dx, x, M * sizeof *x));
    CHECK(warpfft_memcpy_htod(0, dy, y, M * sizeof *y));
    CHECK(warpfft_memcpy_htod(0, dc, c, M * sizeof *c));
    CHECK(warpfft_setpts(plan, WARPFFT_F64, M, dx, dy, NULL));
    CHECK(warpfft_execute(plan, WARPFFT_F64, dc, df));
    CHECK(warpfft_stream_sync(0, 0));
    CHECK(warpfft_memcpy_dtoh(0, f, df, N1 * N2 * sizeof *f));
    /* Mode (k1, k2) sits at f[(k2 + N2/2) * N1 + (k1 + N1/2)] (dimension 1 fastest). */
    const int modes[4][2] = {{0, 0}, {5, -3}, {-N1 / 2, N2 / 2 - 1}, {N1 / 2 - 1, -N2 / 2}};
    for (int s = 0; s < 4; s++) {
        int k1 = modes[s][0], k2 = modes[s][1];
        double complex exact = 0, got = f[(k2 + N2 / 2) * N1 + (k1 + N1 / 2)];
        for (int j = 0; j < M; j++)
            exact += c[j] * cis_k(x[j], k1) * cis_k(y[j], k2);
        double complex d = got - exact;
        printf("f(%4d,%4d) = %12.6f %+12.6fi  direct %12.6f %+12.6fi\n", k1, k2, creal(got),
               cimag(got), creal(exact), cimag(exact));
        if (!(creal(d * conj(d)) < 1e-14 * norm2))
            rc = 1; /* |error| < 1e-7 |c|_2 */
    }
    printf("%s\n", rc ? "FAILED: error above 1e-7" : "ok");
done:
    warpfft_plan_destroy(plan);
    warpfft_free(0, dx), warpfft_free(0, dy), warpfft_free(0, dc), warpfft_free(0, df);
    free(x), free(y), free(c), free(f);
    return rc;
}
