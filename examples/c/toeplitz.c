/* The Toeplitz normal operator T = A^H W A (f64, 1D, real weights): T f on the GPU against the
 * direct sums of type 2, weights and type 1 on the CPU.
 * Build: cc toeplitz.c $(pkg-config --cflags --libs warpfft) -o toeplitz
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

/* sqrt by Newton's iteration: the example needs no -lm. */
static double root(double v) {
    double r = v > 1 ? v : 1;
    for (int n = 0; n < 200 && v > 0; n++)
        r = 0.5 * (r + v / r);
    return v > 0 ? r : 0;
}

/* e^{ix} for |x| <= pi by its Taylor series. */
static double complex cis(double x) {
    double complex z = 1, term = 1;
    for (int n = 1; n < 30; n++)
        z += (term *= I * x / n);
    return z;
}

int main(void) {
    enum { M = 500, N = 64 };
    const double pi = 3.14159265358979323846;
    double x[M], w[M];
    double complex f[N], out[N], u[M], want[N];
    void *dx = NULL, *dw = NULL, *df = NULL;
    warpfft_toeplitz op = NULL;
    int rc = 0;
    for (int j = 0; j < M; j++) {
        x[j] = pi * (2.0 * rand() / RAND_MAX - 1);
        w[j] = 0.5 + 1.0 * rand() / RAND_MAX; /* e.g. density compensation */
    }
    for (int k = 0; k < N; k++)
        f[k] = (2.0 * rand() / RAND_MAX - 1) + I * (2.0 * rand() / RAND_MAX - 1);
    /* A = type 2 with sign -1 (index i holds mode i - N/2), A^H = type 1 with sign +1 */
    int64_t n_modes[3] = {N, 1, 1};
    CHECK(warpfft_malloc(0, sizeof x, &dx));
    CHECK(warpfft_malloc(0, sizeof w, &dw));
    CHECK(warpfft_malloc(0, sizeof f, &df));
    CHECK(warpfft_memcpy_htod(0, dx, x, sizeof x));
    CHECK(warpfft_memcpy_htod(0, dw, w, sizeof w));
    CHECK(warpfft_memcpy_htod(0, df, f, sizeof f));
    CHECK(warpfft_toeplitz_create(1, n_modes, -1, 1, 1e-10, WARPFFT_F64, NULL, M, dx, NULL, NULL,
                                  WARPFFT_WEIGHTS_REAL, dw, &op));
    /* the points and weights may go now: create has computed the kernel's spectrum */
    CHECK(warpfft_toeplitz_apply(op, WARPFFT_F64, 0, df, df)); /* in place */
    CHECK(warpfft_stream_sync(0, 0));
    CHECK(warpfft_memcpy_dtoh(0, out, df, sizeof out));
    warpfft_toeplitz_info info;
    CHECK(warpfft_toeplitz_get_info(op, &info));
    double err2 = 0, norm2 = 0;
    for (int j = 0; j < M; j++) { /* u = W A f */
        double complex e = cis(-x[j]), ek = 1, s = 0;
        for (int m = 0; m < N / 2; m++) /* e^{-i k x} at k = -N/2 */
            ek *= conj(e);
        for (int i = 0; i < N; i++, ek *= e)
            s += f[i] * ek;
        u[j] = w[j] * s;
    }
    for (int i = 0; i < N; i++)
        want[i] = 0;
    for (int j = 0; j < M; j++) { /* A^H u */
        double complex e = cis(x[j]), ek = 1;
        for (int m = 0; m < N / 2; m++)
            ek *= conj(e);
        for (int i = 0; i < N; i++, ek *= e)
            want[i] += u[j] * ek;
    }
    for (int i = 0; i < N; i++) {
        double complex d = out[i] - want[i];
        err2 += creal(d * conj(d));
        norm2 += creal(want[i] * conj(want[i]));
    }
    printf("Toeplitz operator: grid %lld, spectrum %zu bytes, built in %.2f ms; T f vs the "
           "direct sums: relative l2 error %.1e\n",
           (long long)info.n_grid[0], info.spectrum_bytes, info.build_ms,
           norm2 > 0 ? root(err2 / norm2) : 1.0);
    if (!(err2 <= 1e-18 * norm2))
        rc = 1;
done:
    warpfft_toeplitz_destroy(op);
    warpfft_free(0, dx);
    warpfft_free(0, dw);
    warpfft_free(0, df);
    return rc;
}
