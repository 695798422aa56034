/*
 * test_bench.c — warpfft_bench_fft (c_core/src/runtime/bench.c) against the stand-in libcuda.so.1
 * and libcufft.so.12 of standin.h, built and run by run_tests.sh beside test_fault.c.
 *
 * Argument errors come before any driver call. Then, per configuration, the k-th driver or
 * cuFFT call fails for k = 1, 2, ... until a call runs to the end: every injected failure
 * surfaces as a status naming the call (or SUCCESS when only a release failed), *ms is 0 on
 * failure, and nothing is left behind (allocations, cuFFT plans, events, context pushes); the
 * transforms stay inside the grid (the stand-in cuFFT checks the ranges). A whole call times
 * `reps` transforms between two events (the stand-in reports 1.5 ms between any two).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "standin.h"
#include "warpfft.h"

int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;

static void test_arguments(void) {
    const int64_t n[3] = {16, 8, 4};
    double ms = -1.0;
    arm(0);
    CHECK(warpfft_bench_fft(2, n, WARPFFT_F32, 1, 0, 5, NULL) == WARPFFT_ERR_INVALID_ARG,
          "NULL ms: %s", warpfft_last_error());
    CHECK(warpfft_bench_fft(0, n, WARPFFT_F32, 1, 0, 5, &ms) == WARPFFT_ERR_BAD_DIM && ms == 0.0,
          "dim 0: %s (ms %g)", warpfft_last_error(), ms);
    CHECK(warpfft_bench_fft(2, NULL, WARPFFT_F32, 1, 0, 5, &ms) == WARPFFT_ERR_INVALID_ARG,
          "NULL n_fine: %s", warpfft_last_error());
    CHECK(warpfft_bench_fft(2, n, (warpfft_precision)3, 1, 0, 5, &ms) == WARPFFT_ERR_INVALID_ARG,
          "precision 3: %s", warpfft_last_error());
    CHECK(warpfft_bench_fft(2, n, WARPFFT_F32, 0, 0, 5, &ms) == WARPFFT_ERR_BAD_SIZE, "batch 0: %s",
          warpfft_last_error());
    CHECK(warpfft_bench_fft(2, n, WARPFFT_F32, 1, 0, 0, &ms) == WARPFFT_ERR_INVALID_ARG,
          "reps 0: %s", warpfft_last_error());
    const int64_t zero[3] = {16, 0, 4};
    CHECK(warpfft_bench_fft(2, zero, WARPFFT_F32, 1, 0, 5, &ms) == WARPFFT_ERR_BAD_SIZE &&
              strstr(warpfft_last_error(), "n_fine[1]"),
          "n_fine[1] = 0: %s", warpfft_last_error());
    const int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 2};
    CHECK(warpfft_bench_fft(3, huge, WARPFFT_F64, 1, 0, 5, &ms) == WARPFFT_ERR_BAD_SIZE,
          "2^81 points: %s", warpfft_last_error());
    standin_counts s;
    get(&s);
    CHECK(s.calls == 0, "argument errors made %ld driver/cuFFT calls", s.calls);
    CHECK(warpfft_bench_fft(1, n, WARPFFT_F32, 1, 7, 5, &ms) == WARPFFT_ERR_NO_DEVICE,
          "device 7 of the stand-in's 1: %s", warpfft_last_error());
}

typedef struct config {
    int dim;
    warpfft_precision precision;
    int64_t batch;
    int reps;
} config;

/* One call with call k failing; returns 1 when the failure was injected. */
static int walk(const config *cf, long k, long base_allocs) {
    const int64_t n[3] = {12, 10, 6};
    double ms = -1.0;
    arm(k);
    int st = warpfft_bench_fft(cf->dim, n, cf->precision, cf->batch, 0, cf->reps, &ms);
    standin_counts s;
    get(&s);
    CHECK(s.live_allocs == base_allocs && s.live_fft_plans == 0 && s.live_events == 0 &&
              s.ctx_depth == 0 && s.violations == 0,
          "k = %ld (%s failed): left %ld allocations, %ld cuFFT plans, %ld events, context depth "
          "%ld, %ld violations",
          k, s.failed_fn, s.live_allocs - base_allocs, s.live_fft_plans, s.live_events, s.ctx_depth,
          s.violations);
    if (!s.failed_at) {
        CHECK(st == WARPFFT_SUCCESS && ms == 1.5 / cf->reps, "whole call: %s, ms %g",
              warpfft_status_name(st), ms);
        return 0;
    }
    int release =
        strcmp(s.failed_fn, "cuMemFree") == 0 || strcmp(s.failed_fn, "cuEventDestroy") == 0;
    if (st == WARPFFT_SUCCESS) {
        CHECK(release, "%s (call %ld) failed but the status is SUCCESS", s.failed_fn, s.failed_at);
        return 1;
    }
    const char *msg = warpfft_last_error();
    int named = strstr(msg, "injected by the stand-in") || strstr(msg, s.failed_fn);
    CHECK(st != WARPFFT_ERR_INTERNAL && named && ms == 0.0,
          "%s (call %ld) failed: status %s, message '%s', ms %g", s.failed_fn, s.failed_at,
          warpfft_status_name(st), msg, ms);
    return 1;
}

int main(void) {
    void *h = standin_lookup("standin_arm", (void **)&arm, "standin_get", (void **)&get, NULL);
    if (!h)
        return 1;
    char path[512];
    if (warpfft_init(0) != 0 || warpfft_cufft_probe(path, sizeof path, NULL) != 0 ||
        !strstr(path, "standin")) {
        printf("FATAL: init or cuFFT: %s (cuFFT %s)\n", warpfft_last_error(), path);
        return 1;
    }
    test_arguments();
    static const config configs[] = {
        {1, WARPFFT_F32, 1, 1}, {2, WARPFFT_F64, 2, 3}, {3, WARPFFT_F32, 3, 10}};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        standin_counts s;
        get(&s);
        long k = 1;
        while (walk(&configs[i], k, s.live_allocs) && k < 1000)
            k++;
        printf("  %dD %s batch %lld reps %d: %ld calls walked\n", configs[i].dim,
               configs[i].precision == WARPFFT_F64 ? "f64" : "f32", (long long)configs[i].batch,
               configs[i].reps, k);
        CHECK(k > 10 && k < 1000, "a whole call made %ld driver/cuFFT calls", k - 1);
    }
    dlclose(h);
    return check_summary("warpfft_bench_fft under fault injection: ");
}
