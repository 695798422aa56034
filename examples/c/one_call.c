/* One-call transforms (warpfft_nufft1, _nufft2, _nufft3): no plan handle, as the reference's
 * cufinufft2d1many and its kin. 2D, f64, two transforms per call (the reference's "many"),
 * each checked against exact sums at a sample of outputs (warpfft_direct_sample on the GPU).
 * Then a repeated type-1 call timed against setpts + execute on a plan kept by the caller: the
 * repeated call takes the plan the first one gave back to the live-plan pool, so it costs about
 * as much. Build: cc one_call.c $(pkg-config --cflags --libs warpfft) -o one_call
 * Exit: 0 ok, 1 failure or inaccurate, 2 no GPU (driver or device missing). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

enum { M = 200000, K = 3000, N1 = 128, N2 = 96, NT = 2, NS = 16 };
static const double tol = 1e-8, pi = 3.14159265358979323846;

static double uniform(double lo, double hi) {
    return lo + (hi - lo) * rand() / RAND_MAX;
}

/* sqrt by Newton's method: the example needs no -lm. */
static double root(double v) {
    double r = v > 1 ? v : 1;
    for (int i = 0; i < 200 && v > 0; i++)
        r = 0.5 * (r + v / r);
    return v > 0 ? r : 0;
}

/* A device array of n doubles, uniform in [lo, hi). */
static warpfft_status random_array(int64_t n, double lo, double hi, void **d) {
    double *h = malloc(n * sizeof *h);
    if (!h)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++)
        h[i] = uniform(lo, hi);
    warpfft_status st = warpfft_malloc(0, n * sizeof *h, d);
    if (st == WARPFFT_SUCCESS)
        st = warpfft_memcpy_htod(0, *d, h, n * sizeof *h);
    free(h);
    return st;
}

/* Relative l2 error of transform t's outputs `out` (n_out complex) at NS sampled indices,
 * against the exact sums of its inputs `in` (type 1: c -> modes; 2: modes -> c; 3: c -> targets).
 */
static double sample_error(int type, int t, const void *x, const void *y, void *in, void *out,
                           int64_t n_out, const void *s, const void *tt) {
    const int64_t n_modes[3] = {N1, N2, 1}, n_in = type == 2 ? N1 * N2 : M;
    int64_t idx[NS];
    double exact[2 * NS], got[2 * NS], num = 0, den = 0;
    char *ti = (char *)in + 16 * t * n_in, *to = (char *)out + 16 * t * n_out;
    for (int i = 0; i < NS; i++)
        idx[i] = (int64_t)(uniform(0, 1) * (double)n_out) % n_out;
    warpfft_status st = type == 3 ? warpfft_direct_sample3(2, +1, WARPFFT_F64, 0, M, x, y, NULL, ti,
                                                           K, s, tt, NULL, NS, idx, exact)
                        : type == 1 ? warpfft_direct_sample(1, 2, n_modes, +1, 0, WARPFFT_F64, 0, M,
                                                            x, y, NULL, ti, NULL, NS, idx, exact)
                                    : warpfft_direct_sample(2, 2, n_modes, -1, 0, WARPFFT_F64, 0, M,
                                                            x, y, NULL, NULL, ti, NS, idx, exact);
    for (int i = 0; i < NS && st == WARPFFT_SUCCESS; i++)
        st = warpfft_memcpy_dtoh(0, got + 2 * i, to + 16 * idx[i], 16);
    if (st != WARPFFT_SUCCESS)
        return 1e300;
    for (int i = 0; i < 2 * NS; i++)
        num += (got[i] - exact[i]) * (got[i] - exact[i]), den += exact[i] * exact[i];
    return root(num / den);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(void) {
    void *x = NULL, *y = NULL, *c = NULL, *f = NULL, *s = NULL, *t = NULL, *g = NULL;
    warpfft_plan plan = NULL;
    int rc = 0;
    const int64_t n_modes[3] = {N1, N2, 1};
    CHECK(random_array(M, -pi, pi, &x));
    CHECK(random_array(M, -pi, pi, &y));
    CHECK(random_array(2 * NT * M, -1, 1, &c));       /* NT transforms of M strengths */
    CHECK(random_array(2 * NT * N1 * N2, -1, 1, &f)); /* NT arrays of N1 x N2 modes */
    CHECK(random_array(K, -60, 60, &s));              /* type-3 targets (s, t) */
    CHECK(random_array(K, -60, 60, &t));
    CHECK(warpfft_malloc(0, 16 * (size_t)NT * K, &g)); /* type-3 values */

    /* type 2 (modes f -> values c), type 1 (c -> f), type 3 (c -> values g at the targets) */
    CHECK(warpfft_nufft2(2, n_modes, -1, NT, tol, WARPFFT_F64, NULL, M, x, y, NULL, c, f));
    CHECK(warpfft_nufft1(2, n_modes, +1, NT, tol, WARPFFT_F64, NULL, M, x, y, NULL, c, f));
    CHECK(warpfft_nufft3(2, +1, NT, tol, WARPFFT_F64, NULL, M, x, y, NULL, c, K, s, t, NULL, g));
    CHECK(warpfft_stream_sync(0, 0)); /* the calls are asynchronous, as warpfft_execute */
    for (int tr = 0; tr < NT; tr++) {
        /* type 2 read f before type 1 overwrote it: check type 1 (c -> f) and type 3 (c -> g);
         * type 2 is checked below on the f that type 1 wrote */
        double e1 = sample_error(1, tr, x, y, c, f, N1 * N2, NULL, NULL);
        double e3 = sample_error(3, tr, x, y, c, g, K, s, t);
        printf("transform %d: type 1 error %.2e, type 3 error %.2e (tol %.0e)\n", tr, e1, e3, tol);
        if (!(e1 <= 10 * tol && e3 <= 10 * tol))
            rc = 1;
    }
    CHECK(warpfft_nufft2(2, n_modes, -1, NT, tol, WARPFFT_F64, NULL, M, x, y, NULL, c, f));
    CHECK(warpfft_stream_sync(0, 0));
    for (int tr = 0; tr < NT; tr++) {
        double e2 = sample_error(2, tr, x, y, f, c, M, NULL, NULL);
        printf("transform %d: type 2 error %.2e\n", tr, e2);
        if (!(e2 <= 10 * tol))
            rc = 1;
    }

    /* A repeated call against setpts + execute on a plan the caller keeps (each waited for). */
    enum { REPS = 20 };
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.points_hint = 262144; /* what the one-call functions pass for M = 2e5: the same plan */
    CHECK(warpfft_plan_create(1, 2, n_modes, +1, NT, tol, WARPFFT_F64, &o, &plan));
    double best_call = 1e30, best_plan = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ms();
        CHECK(warpfft_nufft1(2, n_modes, +1, NT, tol, WARPFFT_F64, NULL, M, x, y, NULL, c, f));
        CHECK(warpfft_stream_sync(0, 0));
        double t1 = now_ms();
        CHECK(warpfft_setpts(plan, WARPFFT_F64, M, x, y, NULL));
        CHECK(warpfft_execute(plan, WARPFFT_F64, c, f));
        CHECK(warpfft_stream_sync(0, 0));
        double t2 = now_ms();
        best_call = t1 - t0 < best_call ? t1 - t0 : best_call;
        best_plan = t2 - t1 < best_plan ? t2 - t1 : best_plan;
    }
    printf("repeated type 1 (best of %d): one call %.3f ms, setpts + execute %.3f ms (%.2fx)\n",
           REPS, best_call, best_plan, best_call / best_plan);
    if (best_call > 1.25 * best_plan + 0.05) {
        fprintf(stderr, "a repeated one-call transform costs more than setpts + execute\n");
        rc = 1;
    }
done:
    warpfft_plan_destroy(plan);
    warpfft_pool_clear(); /* the pool's idle plans: freed now, not at exit */
    warpfft_free(0, x), warpfft_free(0, y), warpfft_free(0, c), warpfft_free(0, f);
    warpfft_free(0, s), warpfft_free(0, t), warpfft_free(0, g);
    if (rc == 0)
        printf("one_call: ok\n");
    return rc;
}
