/*
 * test_pool_toeplitz.c — Toeplitz operators in the live-plan pool (warpfft_pool_acquire_toeplitz,
 * _release_toeplitz) with the whole C core on the stand-in driver and cuFFT (part of test_pool,
 * test_pool.h): reuse by key and stream, plans and operators under one set of limits, misuse
 * refused (the public destroy of a pooled operator, a second release), the fence (evicting an
 * operator waits for its release's event, never for a stream: not for one its user destroyed,
 * not for the legacy stream's other work), and threads applying operators while others clear
 * and change the limits (ASan sees any operator freed under a call).
 */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "test_pool.h"

enum { T_MAX = 4, N1 = 7, N2 = 12, L1 = 14, L2 = 24 }; /* 2D modes 12 x 7: grid 24 x 14 */

static void *spec, *modes_in, *modes_out; /* the spectrum (reals) and T_MAX mode arrays */

static int acquire_op(int64_t T, uint64_t stream, warpfft_toeplitz *op) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    int64_t n[3] = {N1, N2, 1};
    return warpfft_pool_acquire_toeplitz(2, n, T, 1e-4, WARPFFT_F32, &o, op);
}

static int apply(warpfft_toeplitz op, void *in, void *out) {
    return warpfft_toeplitz_apply_spectrum(op, WARPFFT_F32, 1, spec, 0, in, out);
}

static void test_reuse_and_misuse(void) {
    standin_counts s0 = counts();
    warpfft_toeplitz a = NULL, b = NULL, c = NULL;
    CHECK(acquire_op(2, 0x5150, &a) == 0 && apply(a, modes_in, modes_out) == 0,
          "acquire and apply: %s", warpfft_last_error());
    warpfft_pool_info i = info();
    CHECK(i.operators_busy == 1 && i.operators_created == 1 && i.busy == 1, "%lld busy operators",
          (long long)i.operators_busy);
    CHECK(warpfft_toeplitz_destroy(a) == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "warpfft_pool_release_toeplitz"),
          "the public destroy of a pooled operator: %s", warpfft_last_error());
    CHECK(acquire_op(2, 0x5150, &b) == 0 && b != a, "a busy operator handed out twice");
    CHECK(warpfft_pool_release_toeplitz(a, 0) == 0 && warpfft_pool_release_toeplitz(b, 0) == 0);
    CHECK(warpfft_pool_release_toeplitz(a, 0) == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "released already"),
          "a second release: %s", warpfft_last_error());
    CHECK(warpfft_pool_release_toeplitz(NULL, 0) == WARPFFT_ERR_INVALID_ARG);
    CHECK(warpfft_pool_release_toeplitz(a, 4) == WARPFFT_ERR_INVALID_ARG, "unknown flags");
    CHECK(acquire_op(2, 0x5150, &c) == 0 && (c == a || c == b), "an idle operator not reused");
    CHECK(warpfft_pool_release_toeplitz(c, 0) == 0);
    CHECK(acquire_op(2, 0x5151, &c) == 0 && c != a && c != b, "another stream, same operator");
    CHECK(warpfft_pool_release_toeplitz(c, WARPFFT_POOL_DISCARD) == 0);
    i = info();
    CHECK(i.operators_idle == 2 && i.operators_busy == 0 && i.idle == 2,
          "%lld idle operators (2), %lld idle", (long long)i.operators_idle, (long long)i.idle);
    /* plans and operators under one limit: a plan released into a pool of one evicts them */
    warpfft_plan p = NULL;
    CHECK(warpfft_pool_set_limits(1, -1) == 0 && info().operators_idle == 1);
    CHECK(acquire(1, 24, 0x5150, &p) == 0 && run(p) == 0 && warpfft_pool_release(p, 0) == 0);
    i = info();
    CHECK(i.idle == 1 && i.operators_idle == 0, "%lld idle, %lld operators", (long long)i.idle,
          (long long)i.operators_idle);
    CHECK(warpfft_pool_set_limits(16, -1) == 0);
    expect_clean("operators: reuse and misuse", &s0);
}

/* An operator's eviction waits for the event its release recorded: never for a stream its user
 * destroyed since (the stand-in counts any use of a dead stream as a violation), never for the
 * legacy stream (everyone's work there; the caches of the XLA handler and of warpfft.torch
 * synchronised a stream on the host at each eviction). */
static void test_fenced_eviction(void) {
    standin_counts s0 = counts();
    const uintptr_t streams[3] = {0x5180, 0x5181, 0};
    for (int k = 0; k < 3; k++) {
        warpfft_toeplitz op = NULL;
        CHECK(acquire_op(1 + k, streams[k], &op) == 0 && apply(op, modes_in, modes_out) == 0 &&
                  warpfft_pool_release_toeplitz(op, 0) == 0,
              "stream %#lx: %s", (unsigned long)streams[k], warpfft_last_error());
        if (streams[k])
            stream_dead((struct CUstream_st *)streams[k], 1);
    }
    standin_counts s1 = counts();
    CHECK(warpfft_pool_set_limits(1, -1) == 0 && info().operators_idle == 1);
    CHECK(warpfft_pool_clear() == 0 && info().operators_idle == 0);
    standin_counts s2 = counts();
    CHECK(s2.violations == s0.violations, "a destroyed stream was used at eviction");
    CHECK(s2.legacy_syncs == s1.legacy_syncs && s2.event_syncs == s1.event_syncs + 3,
          "eviction: %ld legacy stream syncs, %ld event syncs (0, 3)",
          s2.legacy_syncs - s1.legacy_syncs, s2.event_syncs - s1.event_syncs);
    for (int k = 0; k < 2; k++)
        stream_dead((struct CUstream_st *)streams[k], 0);
    expect_clean("operators: fenced eviction", &s0);
}

/* ---- threads ---- */

typedef struct op_worker {
    int id;
    void *in, *out;
    int failures;
} op_worker;

static volatile int op_workers_done;

static void *op_work(void *arg) {
    op_worker *w = arg;
    for (int r = 0; r < 40; r++) {
        warpfft_toeplitz op = NULL;
        int64_t T = 1 + (w->id + r) % T_MAX; /* a few keys, shared by the workers */
        if (acquire_op(T, 0, &op) != 0) {
            w->failures++;
            continue;
        }
        w->failures += apply(op, w->in, w->out) != 0;
        w->failures +=
            warpfft_pool_release_toeplitz(op, r % 7 == 0 ? WARPFFT_POOL_DISCARD : 0) != 0;
    }
    __atomic_add_fetch(&op_workers_done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void *op_chaos(void *arg) {
    int n_workers = *(int *)arg;
    for (int r = 0; __atomic_load_n(&op_workers_done, __ATOMIC_SEQ_CST) < n_workers; r++) {
        if (r % 2)
            warpfft_pool_clear();
        else
            warpfft_pool_set_limits(r % 3, -1);
    }
    return NULL;
}

static void test_threads_clear_evict(void) {
    standin_counts s0 = counts();
    enum { W = 4 };
    op_worker w[W];
    pthread_t t[W + 1];
    int n = W;
    op_workers_done = 0;
    size_t bytes = (size_t)T_MAX * N1 * N2 * 8;
    for (int k = 0; k < W; k++) {
        w[k] = (op_worker){k, dmalloc(bytes), dmalloc(bytes), 0};
        warpfft_memset(0, w[k].in, 0, bytes);
        pthread_create(&t[k], NULL, op_work, &w[k]);
    }
    pthread_create(&t[W], NULL, op_chaos, &n);
    for (int k = 0; k <= W; k++)
        pthread_join(t[k], NULL);
    for (int k = 0; k < W; k++) {
        CHECK(w[k].failures == 0, "worker %d: %d failed calls", k, w[k].failures);
        warpfft_free(0, w[k].in);
        warpfft_free(0, w[k].out);
    }
    warpfft_pool_info i = info();
    CHECK(i.operators_busy == 0, "%lld operators still busy", (long long)i.operators_busy);
    CHECK(warpfft_pool_set_limits(16, -1) == 0);
    expect_clean("operators: threads, clears, limits", &s0);
}

void test_pool_toeplitz(void) {
    spec = dmalloc((size_t)L1 * L2 * 4);
    modes_in = dmalloc((size_t)T_MAX * N1 * N2 * 8);
    modes_out = dmalloc((size_t)T_MAX * N1 * N2 * 8);
    warpfft_memset(0, spec, 0, (size_t)L1 * L2 * 4);
    warpfft_memset(0, modes_in, 0, (size_t)T_MAX * N1 * N2 * 8);
    test_reuse_and_misuse();
    test_fenced_eviction();
    test_threads_clear_evict();
    warpfft_free(0, spec);
    warpfft_free(0, modes_in);
    warpfft_free(0, modes_out);
}
