/*
 * test_capture_toeplitz.c — Toeplitz operators and CUDA graphs (api/toeplitz.c, api/capture.c,
 * api/pool.c), on the stand-in driver (built with test_capture.c, whose main runs these parts).
 * An application captured into a graph makes the graph hold the operator, as it does a plan:
 * the public destroy refuses it until the graph is destroyed (and refuses during a capture of
 * its stream: freeing would break it); an operator of the live-plan pool applied during a
 * capture is the graph's once released: busy, spared by clears, idle again (or destroyed when a
 * clear asked) after the graph let go. docs/cuda-graphs.md said that a captured
 * warpfft_toeplitz_apply did not pin its operator: a destroy then freed the work grid the
 * graph's nodes write at every launch.
 */
#include <string.h>

#include "check.h"
#include "standin.h"
#include "test_capture.h"
#include "warpfft.h"

#define STREAM(s) ((struct CUstream_st *)(uintptr_t)(s))

enum { N1 = 7, N2 = 12, L1 = 14, L2 = 24 }; /* 2D modes 12 x 7: grid 24 x 14 */

static void *spec, *modes;

static int make_op(int pool, uint64_t stream, warpfft_toeplitz *op) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    int64_t n[3] = {N1, N2, 1};
    if (pool)
        return warpfft_pool_acquire_toeplitz(2, n, 1, 1e-4, WARPFFT_F32, &o, op);
    return warpfft_toeplitz_create(2, n, 1, 1, 1e-4, WARPFFT_F32, &o, 0, NULL, NULL, NULL,
                                   WARPFFT_WEIGHTS_NONE, NULL, op);
}

static int apply(warpfft_toeplitz op) {
    return warpfft_toeplitz_apply_spectrum(op, WARPFFT_F32, 1, spec, 0, modes, modes);
}

static void test_own_operator(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6300;
    warpfft_toeplitz op = NULL, other = NULL;
    CHECK(make_op(0, S, &op) == 0 && apply(op) == 0 && make_op(0, S, &other) == 0, "%s",
          warpfft_last_error());
    void *g = capture_begin(STREAM(S), 0);
    standin_counts c0 = counts();
    CHECK(apply(op) == 0, "a captured application: %s", warpfft_last_error());
    CHECK(counts().captured > c0.captured, "nothing captured");
    CHECK(warpfft_toeplitz_destroy(other) == WARPFFT_ERR_UNSUPPORTED &&
              CHECK_MSG("after the capture ends"),
          "a destroy during a capture of the operator's stream");
    CHECK(warpfft_toeplitz_destroy(op) == WARPFFT_ERR_INVALID_ARG &&
              CHECK_MSG("CUDA graph that still exists holds the operator"),
          "a destroy of the operator the capture holds");
    capture_end(STREAM(S));
    CHECK(counts().violations == s0.violations, "a violation during the capture");
    CHECK(warpfft_toeplitz_destroy(op) == WARPFFT_ERR_INVALID_ARG &&
              CHECK_MSG("CUDA graph that still exists holds the operator"),
          "a destroy while the graph holds the operator");
    CHECK(apply(op) == 0, "the operator still works: %s", warpfft_last_error());
    graph_destroy(g);
    CHECK(warpfft_toeplitz_destroy(op) == 0 && warpfft_toeplitz_destroy(other) == 0,
          "after the graph: %s", warpfft_last_error());
    expect_clean("captured operator", &s0);
}

static void test_pooled_operator(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6301;
    warpfft_toeplitz a = NULL, b = NULL, c = NULL;
    CHECK(make_op(1, S, &a) == 0 && apply(a) == 0 && warpfft_pool_release_toeplitz(a, 0) == 0);
    void *g = capture_begin(STREAM(S), 0);
    CHECK(make_op(1, S, &b) == 0 && b == a, "not the idle operator: %s", warpfft_last_error());
    CHECK(apply(b) == 0 && warpfft_pool_release_toeplitz(b, 0) == 0, "%s", warpfft_last_error());
    warpfft_pool_info i = info();
    CHECK(i.operators_busy == 1 && i.operators_idle == 0, "held by the graph: %lld busy",
          (long long)i.operators_busy);
    CHECK(make_op(1, S, &c) == WARPFFT_ERR_UNSUPPORTED && c == NULL,
          "an operator made during a capture");
    capture_end(STREAM(S));
    CHECK(warpfft_pool_clear() == 0 && info().operators_busy == 1, "a clear took the graph's");
    CHECK(counts().violations == s0.violations, "a violation during the capture");
    graph_destroy(g);
    i = info();
    CHECK(i.operators_busy == 1, "a doomed operator freed by get_info");
    CHECK(warpfft_pool_clear() == 0 && info().operators_busy == 0 && info().operators_idle == 0,
          "the doomed operator after the graph let go");
    expect_clean("pooled operator captured", &s0);
}

void test_toeplitz_capture(void) {
    CHECK(warpfft_malloc(0, (size_t)L1 * L2 * 4, &spec) == 0 &&
          warpfft_malloc(0, (size_t)N1 * N2 * 8, &modes) == 0);
    warpfft_memset(0, spec, 0, (size_t)L1 * L2 * 4);
    warpfft_memset(0, modes, 0, (size_t)N1 * N2 * 8);
    test_own_operator();
    test_pooled_operator();
    warpfft_free(0, spec);
    warpfft_free(0, modes);
}
