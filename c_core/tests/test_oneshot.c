/*
 * test_oneshot.c — the one-call transforms (api/oneshot.c: warpfft_nufft1, _nufft2, _nufft3) on
 * the stand-in driver and cuFFT of standin.h, under ASan + UBSan (run_tests.sh builds it with the
 * whole C core). The stand-in runs no kernels, so values are the GPU's to check
 * (examples/c/one_call.c); here: the calls' plans come from the live-plan pool and go back to it
 * (a repeated call makes no plan, loads no module, allocates nothing), the points_hint of the
 * call's M, argument errors before the GPU is touched, an injected failure at every driver and
 * cuFFT call of a one-call transform returned with its message and nothing of the call left in
 * use, and a plan that ran out of device memory destroyed rather than kept idle; real data
 * (opts.real_data) through the same calls.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "standin.h"
#include "warpfft.h"

int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;
static standin_mem_limit_fn mem_limit;

enum { M = 64, N = 32, K = 40 };
static void *xs, *ys, *cs, *fks, *ss;

static standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

static warpfft_pool_info info(void) {
    warpfft_pool_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    CHECK(warpfft_pool_get_info(&i) == WARPFFT_SUCCESS);
    return i;
}

/* A one-call transform of type `type` (2D f32, two transforms) with options o (may be NULL). */
static warpfft_status call(int type, const warpfft_opts *o, int64_t m) {
    const int64_t n[3] = {N, N, 1};
    if (type == 1)
        return warpfft_nufft1(2, n, 1, 2, 1e-4, WARPFFT_F32, o, m, xs, ys, NULL, cs, fks);
    if (type == 2)
        return warpfft_nufft2(2, n, -1, 2, 1e-4, WARPFFT_F32, o, m, xs, ys, NULL, cs, fks);
    return warpfft_nufft3(2, 1, 2, 1e-4, WARPFFT_F32, o, m, xs, ys, NULL, cs, K, ss, ss, NULL, fks);
}

/* Nothing of the part left: the pool cleared, the resource cache emptied. */
static void expect_clean(const char *part, const standin_counts *s0) {
    CHECK(warpfft_pool_clear() == WARPFFT_SUCCESS, "%s: clear", part);
    warpfft_release_cached();
    warpfft_pool_info i = info();
    standin_counts s = counts();
    CHECK(i.idle == 0 && i.busy == 0 && s.live_allocs == s0->live_allocs && s.live_fft_plans == 0 &&
              s.live_events == s0->live_events && s.ctx_depth == 0 &&
              s.violations == s0->violations,
          "%s: %lld idle, %lld busy; %ld allocations, %ld cuFFT plans, %ld events left, depth "
          "%ld, %ld violations",
          part, (long long)i.idle, (long long)i.busy, s.live_allocs - s0->live_allocs,
          s.live_fft_plans, s.live_events - s0->live_events, s.ctx_depth,
          s.violations - s0->violations);
}

/* Each type: the first call makes a plan and gives it back idle; the second finds it, makes
 * nothing and allocates nothing; other options make another plan. */
static void test_reuse(void) {
    standin_counts s0 = counts();
    for (int type = 1; type <= 3; type++) {
        warpfft_pool_info i0 = info();
        CHECK(call(type, NULL, M) == WARPFFT_SUCCESS, "type %d: %s", type, warpfft_last_error());
        warpfft_pool_info i1 = info();
        CHECK(i1.created == i0.created + 1 && i1.idle == i0.idle + 1 && i1.busy == 0,
              "type %d: created %lld, idle %lld, busy %lld after the first call", type,
              (long long)(i1.created - i0.created), (long long)(i1.idle - i0.idle),
              (long long)i1.busy);
        standin_counts s1 = counts();
        CHECK(call(type, NULL, M) == WARPFFT_SUCCESS);
        warpfft_pool_info i2 = info();
        standin_counts s2 = counts();
        CHECK(i2.created == i1.created && i2.hits == i1.hits + 1 && i2.idle == i1.idle,
              "type %d: a repeated call made a plan (created %lld, hits %lld)", type,
              (long long)(i2.created - i1.created), (long long)(i2.hits - i1.hits));
        CHECK(s2.fft_creates == s1.fft_creates && s2.live_modules == s1.live_modules &&
                  (type == 3 || s2.live_allocs == s1.live_allocs),
              "type %d: a repeated call made %ld cuFFT plans, %ld modules, %ld allocations", type,
              s2.fft_creates - s1.fft_creates, s2.live_modules - s1.live_modules,
              s2.live_allocs - s1.live_allocs);
    }
    /* another option, another plan; a points_hint given is the plan's, M's rule otherwise: M
     * and 1.4 M round to one power of two (one plan), 3 M to another */
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.modeord = 1;
    warpfft_pool_info i0 = info();
    CHECK(call(1, &o, M) == WARPFFT_SUCCESS && info().created == i0.created + 1);
    i0 = info();
    CHECK(call(1, NULL, M + M * 2 / 5) == WARPFFT_SUCCESS && info().created == i0.created,
          "M = %d and %d: two plans", M, M + M * 2 / 5);
    CHECK(call(1, NULL, 3 * M) == WARPFFT_SUCCESS && info().created == i0.created + 1,
          "M = %d and %d: one plan", M, 3 * M);
    o.modeord = 0;
    o.points_hint = 3 * M; /* given: kept, not rounded */
    i0 = info();
    CHECK(call(1, &o, 3 * M) == WARPFFT_SUCCESS && info().created == i0.created + 1);
    expect_clean("reuse", &s0);
}

/* Argument errors come back with their messages, before the GPU is touched, and leave nothing
 * in use. */
static void test_arguments(void) {
    standin_counts s0 = counts();
    const int64_t n[3] = {N, N, 1}, bad_n[3] = {0, N, 1};
    warpfft_pool_info i0 = info();
    CHECK(warpfft_nufft1(4, n, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, fks) ==
          WARPFFT_ERR_BAD_DIM);
    CHECK(warpfft_nufft1(2, bad_n, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, fks) ==
          WARPFFT_ERR_BAD_SIZE);
    CHECK(warpfft_nufft2(2, n, 1, 0, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, fks) !=
          WARPFFT_SUCCESS);
    CHECK(warpfft_nufft3(2, 1, 1, 0.0 / 0.0, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, K, ss, ss,
                         NULL, fks) == WARPFFT_ERR_BAD_TOL);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 7.5;
    CHECK(warpfft_nufft1(2, n, 1, 1, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, cs, fks) ==
              WARPFFT_ERR_INVALID_ARG &&
          CHECK_MSG("upsampfac"));
    o.upsampfac = 0;
    o.struct_size = 3; /* no header's size */
    CHECK(warpfft_nufft2(2, n, 1, 1, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, cs, fks) ==
          WARPFFT_ERR_INVALID_ARG);
    CHECK(info().created == i0.created, "an argument error made a plan");
    /* past the plan: the setpts' and execute's checks, the plan given back */
    CHECK(warpfft_nufft1(2, n, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, NULL, NULL, cs, fks) ==
              WARPFFT_ERR_INVALID_ARG &&
          CHECK_MSG("y"));
    CHECK(warpfft_nufft2(2, n, 1, 1, 1e-4, WARPFFT_F32, NULL, -1, xs, ys, NULL, cs, fks) ==
          WARPFFT_ERR_BAD_NPOINTS);
    CHECK(warpfft_nufft1(2, n, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, NULL, fks) ==
          WARPFFT_ERR_INVALID_ARG);
    CHECK(warpfft_nufft3(2, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, K, NULL, ss, NULL,
                         fks) == WARPFFT_ERR_INVALID_ARG);
    CHECK(info().busy == 0, "a failed call left its plan in use");
    expect_clean("arguments", &s0);
}

/* Real data through opts.real_data: types 1 and 2 on arrays of exactly the real strengths and
 * the half modes (the stand-in checks every array a launch and the FFT touch), a plan of their
 * own in the pool (not the complex one of the same arguments), reused by the repeated call;
 * type 3 refuses it with nothing left in use. */
static void test_real(void) {
    standin_counts s0 = counts();
    const int64_t n[3] = {N, N, 1};
    void *c = NULL, *fk = NULL;
    size_t c_bytes = 2 * M * 4, fk_bytes = 2 * (size_t)(N / 2 + 1) * N * 8; /* f32, ntransf 2 */
    if (warpfft_malloc(0, c_bytes, &c) || warpfft_malloc(0, fk_bytes, &fk) ||
        warpfft_memset(0, c, 0, c_bytes) || warpfft_memset(0, fk, 0, fk_bytes)) {
        CHECK(0, "malloc: %s", warpfft_last_error());
        warpfft_free(0, c);
        warpfft_free(0, fk);
        return;
    }
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.real_data = 1;
    for (int type = 1; type <= 2; type++) {
        CHECK(call(type, NULL, M) == WARPFFT_SUCCESS, "type %d complex: %s", type,
              warpfft_last_error());
        warpfft_pool_info i0 = info();
        warpfft_status st =
            type == 1 ? warpfft_nufft1(2, n, 1, 2, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, c, fk)
                      : warpfft_nufft2(2, n, -1, 2, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, c, fk);
        warpfft_pool_info i1 = info();
        CHECK(st == WARPFFT_SUCCESS && i1.created == i0.created + 1 && i1.busy == 0,
              "type %d real: %s (plans made %lld)", type, warpfft_last_error(),
              (long long)(i1.created - i0.created));
        st = type == 1 ? warpfft_nufft1(2, n, 1, 2, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, c, fk)
                       : warpfft_nufft2(2, n, -1, 2, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, c, fk);
        warpfft_pool_info i2 = info();
        CHECK(st == WARPFFT_SUCCESS && i2.created == i1.created && i2.hits == i1.hits + 1,
              "type %d real again: %s (plans made %lld)", type, warpfft_last_error(),
              (long long)(i2.created - i1.created));
        /* the complex call again: its own plan, not the real one */
        CHECK(call(type, NULL, M) == WARPFFT_SUCCESS && info().created == i2.created,
              "type %d complex after real: %s", type, warpfft_last_error());
    }
    warpfft_pool_info i0 = info();
    CHECK(warpfft_nufft3(2, 1, 2, 1e-4, WARPFFT_F32, &o, M, xs, ys, NULL, cs, K, ss, ss, NULL,
                         fks) == WARPFFT_ERR_UNSUPPORTED &&
              CHECK_MSG("real_data") && info().created == i0.created && info().busy == 0,
          "type 3 with real_data: %s", warpfft_last_error());
    warpfft_free(0, c);
    warpfft_free(0, fk);
    expect_clean("real data", &s0);
}

/* Every driver and cuFFT call of a one-call transform failing in turn (plan made, points,
 * execute, release): a status with a message, nothing in use after it, nothing leaked. */
static void test_fault_walk(void) {
    standin_counts s0 = counts();
    long walked = 0;
    for (int type = 1; type <= 3; type++) {
        for (long k = 1;; k++) {
            warpfft_pool_clear();
            warpfft_release_cached();
            arm(k);
            warpfft_status st = call(type, NULL, M);
            standin_counts s = counts();
            long calls = s.calls; /* arm resets the count */
            arm(0);
            CHECK(st == WARPFFT_SUCCESS || warpfft_last_error()[0] != '\0',
                  "type %d, call %ld (%s) failed without a message", type, k, s.failed_fn);
            CHECK(st == WARPFFT_SUCCESS || s.failed_at != 0, "type %d: %s with no call failing",
                  type, warpfft_status_name(st));
            CHECK(info().busy == 0, "type %d, call %ld (%s): a plan left in use", type, k,
                  s.failed_fn);
            CHECK(warpfft_pool_clear() == WARPFFT_SUCCESS, "clear after call %ld (%s): %s", k,
                  s.failed_fn, warpfft_last_error());
            warpfft_release_cached();
            s = counts();
            CHECK(s.live_allocs == s0.live_allocs && s.live_fft_plans == 0 &&
                      s.live_events == s0.live_events && s.ctx_depth == 0 &&
                      s.violations == s0.violations,
                  "type %d, call %ld failing: %ld allocations, %ld cuFFT plans, %ld events, depth "
                  "%ld, %ld violations",
                  type, k, s.live_allocs - s0.live_allocs, s.live_fft_plans,
                  s.live_events - s0.live_events, s.ctx_depth, s.violations - s0.violations);
            walked++;
            if (calls < k)
                break;
        }
    }
    printf("  fault walk: %ld one-call transforms, each with one call failing\n", walked);
}

/* Out of device memory: the status, and the plan destroyed (not kept idle holding memory). */
static void test_out_of_memory(void) {
    standin_counts s0 = counts();
    const int64_t big[3] = {512, 512, 1};
    warpfft_pool_info i0 = info();
    mem_limit(counts().live_bytes + 64 * 1024);
    warpfft_status st =
        warpfft_nufft1(2, big, 1, 1, 1e-4, WARPFFT_F32, NULL, M, xs, ys, NULL, cs, fks);
    mem_limit(0);
    warpfft_pool_info i1 = info();
    CHECK(st == WARPFFT_ERR_OUT_OF_MEMORY, "%s", warpfft_status_name(st));
    CHECK(i1.idle == i0.idle && i1.busy == 0, "%lld idle, %lld busy after running out of memory",
          (long long)(i1.idle - i0.idle), (long long)i1.busy);
    expect_clean("out of memory", &s0);
}

int main(void) {
    if (!standin_lookup("standin_arm", (void **)&arm, "standin_get", (void **)&get,
                        "standin_mem_limit", (void **)&mem_limit, NULL))
        return 1;
    if (warpfft_init(0) != WARPFFT_SUCCESS) {
        printf("FATAL: init: %s\n", warpfft_last_error());
        return 1;
    }
    void **arrays[5] = {&xs, &ys, &cs, &fks, &ss};
    for (int i = 0; i < 5; i++)
        if (warpfft_malloc(0, 2 * 2 * 8 * (size_t)(3 * M > N * N ? 3 * M : N * N), arrays[i]) ||
            warpfft_memset(0, *arrays[i], 0, 2 * 2 * 8 * (size_t)(3 * M > N * N ? 3 * M : N * N)))
            return printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error()), 1;
    test_reuse();
    test_arguments();
    test_real();
    test_fault_walk();
    test_out_of_memory();
    for (int i = 0; i < 5; i++)
        warpfft_free(0, *arrays[i]);
    standin_counts s = counts();
    CHECK(s.live_allocs == 0 && s.ctx_depth == 0 && s.violations == 0,
          "at exit: %ld allocations, context depth %ld, %ld violations", s.live_allocs, s.ctx_depth,
          s.violations);
    return check_summary("one-call transforms on the stand-in driver: ");
}
