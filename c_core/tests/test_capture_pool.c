/*
 * test_capture_pool.c — the live-plan pool and CUDA graphs (api/pool.c, api/capture.c), on the
 * stand-in driver (built with test_capture.c, whose main runs these parts). A plan acquired and
 * run during a capture of its stream is the graph's once released: counted busy, handed to no
 * other caller, destroyed by no clear, limit or discard until the graph is destroyed; then idle
 * again (the next acquire of its key gets it) or, when a clear or a discard asked for it,
 * destroyed by the next call that destroys plans. During the capture no plan can be made (the
 * warm-up must come before) and the release records no fence; a plan that ran work outside the
 * capture cannot be released during it (refused, nothing changed). Graphs let go on CUDA's own
 * thread, racing the pool's callers: no crash, no leak, every plan accounted for.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "standin.h"
#include "test_capture.h"
#include "warpfft.h"

#define STREAM(s) ((struct CUstream_st *)(uintptr_t)(s))

/* Warm-up outside the capture, the capture of an acquire, a run and a release (a PyTorch op
 * under torch.cuda.graph), then the graph's hold on the plan until it is destroyed. */
void test_pool_capture(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6200;
    warpfft_plan a = NULL, b = NULL, c = NULL;
    CHECK(make_plan(1, 1, S, 0, &a) == 0 && run_plan(a, M) == 0 &&
          warpfft_pool_release(a, WARPFFT_POOL_KEEP_POINTS) == 0);
    warpfft_pool_info i0 = info();
    void *g = capture_begin(STREAM(S), 0);
    standin_counts c0 = counts();
    CHECK(make_plan(1, 1, S, 0, &b) == 0 && b == a, "not the idle plan: %s", warpfft_last_error());
    CHECK(run_plan(b, M) == 0 && warpfft_pool_release(b, WARPFFT_POOL_KEEP_POINTS) == 0, "%s",
          warpfft_last_error());
    warpfft_pool_info i1 = info();
    CHECK(i1.idle == i0.idle - 1 && i1.busy == 1, "held by the graph: %lld idle, %lld busy",
          (long long)i1.idle, (long long)i1.busy);
    /* the key again in the same capture: not the graph's plan, and none can be made now */
    CHECK(make_plan(1, 1, S, 0, &c) == WARPFFT_ERR_UNSUPPORTED && c == NULL &&
          CHECK_MSG("before capturing"));
    standin_counts c1 = counts();
    CHECK(c1.captured > c0.captured && c1.live_allocs == c0.live_allocs &&
              c1.live_events == c0.live_events && c1.violations == s0.violations,
          "%ld captured, %ld allocations, %ld events, %ld violations", c1.captured - c0.captured,
          c1.live_allocs - c0.live_allocs, c1.live_events - c0.live_events,
          c1.violations - s0.violations);
    capture_end(STREAM(S));
    /* after the capture, while the graph lives: a new plan for the key; limits spare the graph's */
    CHECK(make_plan(1, 1, S, 0, &c) == 0 && c != a && run_plan(c, M) == 0 &&
          warpfft_pool_release(c, 0) == 0);
    CHECK(warpfft_pool_set_limits(0, -1) == 0 && info().idle == 0 && info().busy == 1);
    CHECK(warpfft_pool_set_limits(16, -1) == 0);
    warpfft_pool_info i2 = info();
    graph_destroy(g);
    warpfft_pool_info i3 = info();
    CHECK(i3.busy == 0 && i3.idle == 1 && i3.destroyed == i2.destroyed,
          "the graph let go: %lld busy, %lld idle, %lld destroyed", (long long)i3.busy,
          (long long)i3.idle, (long long)(i3.destroyed - i2.destroyed));
    CHECK(make_plan(1, 1, S, 0, &c) == 0 && c == a, "not the plan back from the graph");
    CHECK(warpfft_pool_release(c, 0) == 0);
    expect_clean("pool capture", &s0);
}

/* A clear, or a release with DISCARD, dooms a graph-held plan: destroyed by the first call that
 * destroys plans after the graph let go (not by an acquire or get_info). */
void test_pool_capture_clear_and_discard(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6201;
    for (int discard = 0; discard < 2; discard++) {
        warpfft_plan a = NULL, b = NULL;
        CHECK(make_plan(1, 2, S, 0, &a) == 0 && run_plan(a, M) == 0 &&
              warpfft_pool_release(a, 0) == 0);
        defer_destructors(1);
        void *g = capture_begin(STREAM(S), 0);
        CHECK(make_plan(1, 2, S, 0, &b) == 0 && b == a && run_plan(b, M) == 0);
        CHECK(warpfft_pool_release(b, discard ? WARPFFT_POOL_DISCARD : 0) == 0, "%s",
              warpfft_last_error());
        warpfft_pool_info i0 = info();
        if (!discard)
            CHECK(warpfft_pool_clear() == 0);
        CHECK(info().busy == 1 && info().destroyed == i0.destroyed, "destroyed under its graph");
        capture_end(STREAM(S));
        graph_destroy(g);
        CHECK(info().busy == 1, "before CUDA's destructor ran");
        CHECK(run_destructors() == 1);
        defer_destructors(0);
        CHECK(info().busy == 1 && info().destroyed == i0.destroyed, "get_info destroyed it");
        warpfft_plan other = NULL; /* an acquire does not destroy it; the release does */
        CHECK(make_plan(1, 1, S, 0, &other) == 0 && info().destroyed == i0.destroyed);
        CHECK(warpfft_pool_release(other, 0) == 0);
        warpfft_pool_info i1 = info();
        CHECK(i1.busy == 0 && i1.destroyed == i0.destroyed + 1, "%s: %lld busy, %lld destroyed",
              discard ? "discard" : "clear", (long long)i1.busy,
              (long long)(i1.destroyed - i0.destroyed));
    }
    expect_clean("pool capture: clear, discard", &s0);
}

/* During a capture the release cannot record a fence: a plan that ran work outside the capture
 * is refused (still the caller's); one that did not is released (its old fence stands). */
void test_pool_release_refused(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6202;
    warpfft_plan a = NULL, b = NULL, l = NULL;
    CHECK(make_plan(1, 1, S, 0, &a) == 0 && run_plan(a, M) == 0);
    CHECK(make_plan(1, 2, S, 0, &b) == 0 && run_plan(b, M) == 0 && warpfft_pool_release(b, 0) == 0);
    CHECK(make_plan(1, 1, 0, 0, &l) == 0 && run_plan(l, M) == 0);
    void *g = capture_begin(STREAM(S), 0);
    CHECK(warpfft_pool_release(a, 0) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("after the capture ends"));
    CHECK(info().busy == 2, "the refused plan is still its caller's");
    CHECK(make_plan(1, 2, S, 0, &b) == 0 && warpfft_pool_release(b, 0) == 0 && info().idle == 1,
          "acquired and released during the capture without work: %s", warpfft_last_error());
    capture_end(STREAM(S));
    graph_destroy(g);
    /* the legacy stream beside a blocking capture: refused too */
    g = capture_begin(STREAM(0x6203), STANDIN_CAPTURE_BLOCKING);
    CHECK(warpfft_pool_release(l, 0) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("legacy default stream"));
    capture_end(STREAM(0x6203));
    graph_destroy(g);
    CHECK(warpfft_pool_release(a, 0) == 0 && warpfft_pool_release(l, 0) == 0 && info().busy == 0,
          "%s", warpfft_last_error());
    /* a plan just made: its creation uploaded on the stream, work outside the capture (found by
     * fuzz_abi: released with DISCARD during a capture, it was destroyed waiting for the
     * capturing stream) */
    const uint64_t S2 = 0x6204;
    warpfft_plan fresh = NULL;
    CHECK(make_plan(1, 1, S2, 0, &fresh) == 0);
    g = capture_begin(STREAM(S2), 0);
    CHECK(warpfft_pool_release(fresh, WARPFFT_POOL_DISCARD) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("outside the CUDA graph capture"));
    capture_end(STREAM(S2));
    graph_destroy(g);
    CHECK(warpfft_pool_release(fresh, 0) == 0, "%s", warpfft_last_error());
    CHECK(counts().violations == s0.violations);
    expect_clean("pool release refused", &s0);
}

/* During a capture a release destroys nothing, even a plan it would destroy at once outside
 * one (DISCARD), nor evicts: the plan is left doomed for the next call that destroys. (A clear
 * or a limit change is the caller's own destroy: made during a capture in CUDA's global mode,
 * its frees break the capture, as any cuMemFree would: docs/cuda-graphs.md.) */
void test_pool_release_during_capture_destroys_nothing(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6205;
    warpfft_plan a = NULL, b = NULL, c = NULL;
    CHECK(make_plan(1, 1, S, 0, &a) == 0 && run_plan(a, M) == 0 && warpfft_pool_release(a, 0) == 0);
    CHECK(make_plan(1, 2, S, 0, &b) == 0 && run_plan(b, M) == 0 && warpfft_pool_release(b, 0) == 0);
    warpfft_pool_info i0 = info();
    standin_counts c0 = counts();
    void *g = capture_begin(STREAM(S), 0);
    CHECK(make_plan(1, 2, S, 0, &c) == 0 && c == b, "%s", warpfft_last_error());
    CHECK(warpfft_pool_release(c, WARPFFT_POOL_DISCARD) == 0, "%s", warpfft_last_error());
    CHECK(make_plan(1, 1, S, 0, &c) == 0 && c == a && warpfft_pool_release(c, 0) == 0, "%s",
          warpfft_last_error());
    warpfft_pool_info i1 = info();
    standin_counts c1 = counts();
    CHECK(i1.destroyed == i0.destroyed && c1.live_allocs == c0.live_allocs &&
              c1.event_syncs == c0.event_syncs && c1.violations == s0.violations,
          "during the capture: %lld destroyed, %ld allocations freed, %ld waits",
          (long long)(i1.destroyed - i0.destroyed), c0.live_allocs - c1.live_allocs,
          c1.event_syncs - c0.event_syncs);
    capture_end(STREAM(S));
    graph_destroy(g);
    CHECK(warpfft_pool_set_limits(16, -1) == 0); /* an eviction pass: the doomed plan first */
    CHECK(info().destroyed == i0.destroyed + 1 && info().idle == 1,
          "the doomed plan goes at the next call that destroys: %lld destroyed, %lld idle",
          (long long)(info().destroyed - i0.destroyed), (long long)info().idle);
    expect_clean("release during a capture destroys nothing", &s0);
}

/* ---- graphs let go on CUDA's thread while the pool's callers run ---- */

enum { N_GRAPHS = 6, N_WORKERS = 3, N_ITER = 120 };
static void *graphs[N_GRAPHS];

/* CUDA's thread: destroys the graphs one by one and runs their destructors. */
static void *let_go(void *arg) {
    (void)arg;
    for (int k = 0; k < N_GRAPHS; k++) {
        graph_destroy(graphs[k]);
        nanosleep(&(struct timespec){0, 2000000L}, NULL);
        run_destructors();
    }
    return NULL;
}

typedef struct worker {
    int index, fails;
    char first[256];
} worker;

/* Acquires plans of the graphs' keys (streams 0x6300 + k) and others, runs, releases, clears. */
static void *work(void *arg) {
    worker *w = arg;
    unsigned seed = 77u + (unsigned)w->index;
    for (int i = 0; i < N_ITER; i++) {
        int r = rand_r(&seed);
        warpfft_plan p = NULL;
        int st = make_plan(1, 1 + r % 2, 0x6300 + (uint64_t)(r / 2 % (N_GRAPHS + 2)), 0, &p);
        if (!st)
            st = run_plan(p, M);
        if (p) {
            int rst = warpfft_pool_release(p, r / 7 % 5 == 0 ? WARPFFT_POOL_DISCARD : 0);
            st = st ? st : rst;
        }
        if (r % 11 == 0)
            st = st ? st : (int)warpfft_pool_clear();
        if (st && !w->fails++)
            snprintf(w->first, sizeof w->first, "%s: %s", warpfft_status_name(st),
                     warpfft_last_error());
    }
    return NULL;
}

void test_pool_graphs_threads(void) {
    standin_counts s0 = counts();
    warpfft_pool_info i0 = info();
    /* N_GRAPHS graph-held plans (one thread: no allocation may run during a capture) */
    defer_destructors(1);
    for (int k = 0; k < N_GRAPHS; k++) {
        const uint64_t S = 0x6300 + (uint64_t)k;
        int type = 1 + k % 2;
        warpfft_plan p = NULL;
        CHECK(make_plan(1, type, S, 0, &p) == 0 && run_plan(p, M) == 0 &&
              warpfft_pool_release(p, 0) == 0);
        graphs[k] = capture_begin(STREAM(S), 0);
        CHECK(make_plan(1, type, S, 0, &p) == 0 && run_plan(p, M) == 0 &&
                  warpfft_pool_release(p, k % 3 == 0 ? WARPFFT_POOL_DISCARD : 0) == 0,
              "graph %d: %s", k, warpfft_last_error());
        capture_end(STREAM(S));
    }
    CHECK(info().busy == N_GRAPHS);
    pthread_t t, tw[N_WORKERS];
    worker w[N_WORKERS];
    pthread_create(&t, NULL, let_go, NULL);
    for (int k = 0; k < N_WORKERS; k++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].index = k;
        pthread_create(&tw[k], NULL, work, &w[k]);
    }
    for (int k = 0; k < N_WORKERS; k++) {
        pthread_join(tw[k], NULL);
        CHECK(w[k].fails == 0, "worker %d: %d failures, the first %s", k, w[k].fails, w[k].first);
    }
    pthread_join(t, NULL);
    defer_destructors(0);
    CHECK(warpfft_pool_clear() == 0);
    warpfft_pool_info i1 = info();
    CHECK(i1.busy == 0 && i1.idle == 0 && i1.created - i0.created == i1.destroyed - i0.destroyed,
          "%lld busy, %lld idle, %lld created, %lld destroyed", (long long)i1.busy,
          (long long)i1.idle, (long long)(i1.created - i0.created),
          (long long)(i1.destroyed - i0.destroyed));
    printf("  graphs let go beside %d threads: %lld plans created, %lld hits\n", N_WORKERS,
           (long long)(i1.created - i0.created), (long long)(i1.hits - i0.hits));
    expect_clean("pool graphs, threads", &s0);
}
