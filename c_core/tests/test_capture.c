/*
 * test_capture.c — plans whose work is captured into CUDA graphs (warpfft.h, "CUDA graphs";
 * api/capture.c), on the stand-in driver of standin.h under ASan + UBSan: main, the helpers of
 * test_capture.h, and plans the caller owns. During a capture of its stream a plan cannot be
 * created; setpts and execute are captured (the graph then holds the plan) when they neither
 * wait nor allocate; setpts_check, setpts3 and a destroy, which wait, refuse; a setpts that
 * would grow the per-point arrays refuses. After the capture, while the graph lives, the plan
 * cannot be destroyed nor its arrays grown nor type 3's points reset; once the graph is
 * destroyed (its user objects' destructors run, maybe later, on CUDA's thread) it can. The
 * legacy stream beside a blocking capture, and an invalidated capture, are refused with their
 * reasons. The stand-in counts any allocation, free or module load during a capture, any wait
 * for a capturing stream and any host copy on it as a violation. test_capture_pool.c: the pool.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "standin.h"
#include "test_capture.h"
#include "warpfft.h"

int n_pass, n_fail;
standin_get_fn get_counts;
standin_capture_begin_fn capture_begin;
standin_capture_end_fn capture_end;
standin_capture_invalidate_fn capture_invalidate;
standin_graph_destroy_fn graph_destroy;
standin_defer_destructors_fn defer_destructors;
standin_run_destructors_fn run_destructors;
void *xs, *ys, *cs, *fks;

#define STREAM(s) ((struct CUstream_st *)(uintptr_t)(s))

/* ---- helpers (test_capture.h) ---- */

standin_counts counts(void) {
    standin_counts s;
    get_counts(&s);
    return s;
}

warpfft_pool_info info(void) {
    warpfft_pool_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    CHECK(warpfft_pool_get_info(&i) == 0);
    return i;
}

int make_plan(int pool, int type, uint64_t stream, int check, warpfft_plan *plan) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    o.check_points = check;
    int64_t n[3] = {NMAX, 1, 1};
    *plan = NULL;
    return pool ? warpfft_pool_acquire(type, 1, n, 1, 1, 1e-4, WARPFFT_F32, &o, plan)
                : warpfft_plan_create(type, 1, n, 1, 1, 1e-4, WARPFFT_F32, &o, plan);
}

int run_plan(warpfft_plan plan, int64_t m) {
    int st = warpfft_setpts(plan, WARPFFT_F32, m, xs, NULL, NULL);
    return st ? st : (int)warpfft_execute(plan, WARPFFT_F32, cs, fks);
}

void expect_clean(const char *part, const standin_counts *s0) {
    CHECK(warpfft_pool_clear() == WARPFFT_SUCCESS, "%s: clear: %s", part, warpfft_last_error());
    warpfft_release_cached();
    warpfft_pool_info i = {.struct_size = sizeof i};
    warpfft_pool_get_info(&i);
    standin_counts s = counts();
    CHECK(i.idle == 0 && i.busy == 0 && s.live_allocs == s0->live_allocs && s.live_fft_plans == 0 &&
              s.live_events == s0->live_events && s.live_user_objects == s0->live_user_objects &&
              s.live_graphs == s0->live_graphs && s.ctx_depth == 0 &&
              s.violations == s0->violations,
          "%s: pool %lld idle %lld busy; %ld allocations, %ld cuFFT plans, %ld events, %ld user "
          "objects, %ld graphs left, context depth %ld, %ld violations",
          part, (long long)i.idle, (long long)i.busy, s.live_allocs - s0->live_allocs,
          s.live_fft_plans, s.live_events - s0->live_events,
          s.live_user_objects - s0->live_user_objects, s.live_graphs - s0->live_graphs, s.ctx_depth,
          s.violations - s0->violations);
}

/* n f32 values from lo to hi, shuffled, on the device (type 3 needs real spreads). */
static void *ramp(int64_t n, float lo, float hi) {
    float *h = malloc((size_t)n * sizeof *h);
    void *d = NULL;
    if (!h || warpfft_malloc(0, (size_t)n * sizeof *h, &d) != 0) {
        printf("FATAL: ramp: %s\n", warpfft_last_error());
        exit(1);
    }
    for (int64_t j = 0; j < n; j++)
        h[j] = lo + (hi - lo) * (float)((j * 37) % n) / (float)(n - 1);
    if (warpfft_memcpy_htod(0, d, h, (size_t)n * sizeof *h) != 0) {
        printf("FATAL: ramp: %s\n", warpfft_last_error());
        exit(1);
    }
    free(h);
    return d;
}

/* ---- plans the caller owns ---- */

/* Types 1 and 2: the calls during a capture, then the graph's hold until it is destroyed. */
static void test_own_plan(int type) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6100;
    warpfft_plan p = NULL, q = NULL;
    CHECK(make_plan(0, type, S, 0, &p) == 0 && run_plan(p, M) == 0, "%s", warpfft_last_error());
    CHECK(make_plan(0, type, S, 0, &q) == 0); /* made before the capture, not captured */
    void *g = capture_begin(STREAM(S), 0);
    standin_counts c0 = counts();
    warpfft_plan made = (warpfft_plan)&made;
    CHECK(make_plan(0, type, S, 0, &made) == WARPFFT_ERR_UNSUPPORTED && made == NULL &&
          CHECK_MSG("captured into a CUDA graph") && CHECK_MSG("before the capture"));
    CHECK(run_plan(p, M) == 0, "captured setpts + execute: %s", warpfft_last_error());
    CHECK(run_plan(p, M / 2) == 0, "fewer points: %s", warpfft_last_error());
    CHECK(warpfft_setpts(p, WARPFFT_F32, 2 * M, xs, NULL, NULL) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("larger per-point arrays") && CHECK_MSG("before the capture"));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == 0, "the points of M / 2 stay: %s",
          warpfft_last_error());
    CHECK(warpfft_setpts_check(p) == WARPFFT_ERR_UNSUPPORTED && CHECK_MSG("waits"));
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("CUDA graph"));
    CHECK(warpfft_plan_destroy(q) == WARPFFT_ERR_UNSUPPORTED && CHECK_MSG("after the capture"));
    standin_counts c1 = counts();
    CHECK(c1.captured > c0.captured && c1.live_allocs == c0.live_allocs &&
              c1.live_user_objects == s0.live_user_objects + 1 && c1.violations == s0.violations,
          "%ld captured, %ld allocations, %ld user objects, %ld violations",
          c1.captured - c0.captured, c1.live_allocs - c0.live_allocs,
          c1.live_user_objects - s0.live_user_objects, c1.violations - s0.violations);
    CHECK(capture_end(STREAM(S)) > 0);
    /* the graph lives: the plan runs, within its arrays, and stays */
    CHECK(run_plan(p, M) == 0, "%s", warpfft_last_error());
    CHECK(warpfft_setpts(p, WARPFFT_F32, 2 * M, xs, NULL, NULL) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("still exists"));
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_INVALID_ARG && run_plan(p, M) == 0);
    /* a second graph: a second hold */
    void *g2 = capture_begin(STREAM(S), 0);
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == 0);
    capture_end(STREAM(S));
    CHECK(counts().live_user_objects == s0.live_user_objects + 2);
    graph_destroy(g);
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_INVALID_ARG, "the second graph holds it");
    graph_destroy(g2);
    CHECK(counts().live_user_objects == s0.live_user_objects);
    CHECK(warpfft_setpts(p, WARPFFT_F32, 2 * M, xs, NULL, NULL) == 0, "grows now: %s",
          warpfft_last_error());
    CHECK(warpfft_plan_destroy(p) == 0 && warpfft_plan_destroy(q) == 0, "%s", warpfft_last_error());
    expect_clean(type == 1 ? "own plan, type 1" : "own plan, type 2", &s0);
}

/* A plan of the caller's (type 1 or 2, check_points `check`) on stream S, run once, then a
 * capture of S begun: returns the capture's graph (capture_begin). */
static void *run_then_capture(int type, uint64_t S, int check, warpfft_plan *p) {
    CHECK(make_plan(0, type, S, check, p) == 0 && run_plan(*p, M) == 0, "%s", warpfft_last_error());
    return capture_begin(STREAM(S), 0);
}

/* A checked plan's setpts waits for its stream: refused during a capture; its execute is not. */
static void test_checked_points(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6101;
    warpfft_plan p = NULL;
    void *g = run_then_capture(1, S, 1, &p);
    CHECK(warpfft_setpts(p, WARPFFT_F32, M, xs, NULL, NULL) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("check_points"));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == 0, "%s", warpfft_last_error());
    capture_end(STREAM(S));
    graph_destroy(g);
    CHECK(warpfft_plan_destroy(p) == 0);
    expect_clean("checked points", &s0);
}

/* CUDA runs a user object's destructor on a thread of its own, maybe after the graph's destroy
 * returned: the plan stays held until then. */
static void *destructors_thread(void *arg) {
    *(int *)arg = run_destructors();
    return NULL;
}

static void test_late_destructor(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6102;
    warpfft_plan p = NULL;
    defer_destructors(1); /* CUDA's destructors: of the graph's user objects, none before it */
    void *g = run_then_capture(2, S, 0, &p);
    CHECK(run_plan(p, M) == 0);
    capture_end(STREAM(S));
    graph_destroy(g);
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_INVALID_ARG, "before CUDA's destructor ran");
    pthread_t t;
    int ran = 0;
    pthread_create(&t, NULL, destructors_thread, &ran);
    pthread_join(t, NULL);
    defer_destructors(0);
    CHECK(ran == 1 && warpfft_plan_destroy(p) == 0, "%d destructors; %s", ran,
          warpfft_last_error());
    expect_clean("late destructor", &s0);
}

/* Type 3: setpts3 waits for its stream (the bounds): refused during a capture, and while a
 * graph holds the plan (its grids may be reallocated); its execute is captured. */
static void test_type3(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6103;
    void *x = ramp(M, -2.0f, 2.5f), *s = ramp(NMAX, -8.0f, 9.0f);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = S;
    warpfft_plan p = NULL;
    CHECK(warpfft_plan_create(3, 1, NULL, 1, 1, 1e-4, WARPFFT_F32, &o, &p) == 0);
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, NMAX, s, NULL, NULL) == 0 &&
              warpfft_execute(p, WARPFFT_F32, cs, fks) == 0,
          "%s", warpfft_last_error());
    void *g = capture_begin(STREAM(S), 0);
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, NMAX, s, NULL, NULL) ==
              WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("waits"));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == 0, "%s", warpfft_last_error());
    capture_end(STREAM(S));
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, NMAX, s, NULL, NULL) ==
              WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("reallocate"));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == 0, "the points stay: %s",
          warpfft_last_error());
    graph_destroy(g);
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, NMAX, s, NULL, NULL) == 0 &&
              warpfft_plan_destroy(p) == 0,
          "%s", warpfft_last_error());
    warpfft_free(0, x);
    warpfft_free(0, s);
    expect_clean("type 3", &s0);
}

/* The legacy stream cannot be used while a blocking stream captures (CUDA: an implicit
 * dependency on the capture): a plan on stream 0 refuses, saying why, and touches nothing. */
static void test_legacy_beside_blocking_capture(void) {
    standin_counts s0 = counts();
    warpfft_plan p = NULL, made = NULL;
    CHECK(make_plan(0, 1, 0, 0, &p) == 0 && run_plan(p, M) == 0);
    void *g = capture_begin(STREAM(0x6104), STANDIN_CAPTURE_BLOCKING);
    CHECK(warpfft_setpts(p, WARPFFT_F32, M, xs, NULL, NULL) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("legacy default stream"));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == WARPFFT_ERR_UNSUPPORTED &&
          CHECK_MSG("legacy default stream"));
    CHECK(make_plan(0, 2, 0, 0, &made) == WARPFFT_ERR_UNSUPPORTED && !made);
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_UNSUPPORTED);
    CHECK(counts().violations == s0.violations, "the legacy stream was used");
    capture_end(STREAM(0x6104));
    graph_destroy(g);
    CHECK(run_plan(p, M) == 0 && warpfft_plan_destroy(p) == 0, "%s", warpfft_last_error());
    expect_clean("legacy stream, blocking capture", &s0);
}

/* A capture an earlier error invalidated: the calls say so (cuStreamEndCapture first). */
static void test_invalidated_capture(void) {
    standin_counts s0 = counts();
    const uint64_t S = 0x6105;
    warpfft_plan p = NULL;
    void *g = run_then_capture(1, S, 0, &p);
    capture_invalidate(STREAM(S));
    CHECK(warpfft_execute(p, WARPFFT_F32, cs, fks) == WARPFFT_ERR_CUDA && CHECK_MSG("invalidated"));
    CHECK(warpfft_setpts(p, WARPFFT_F32, M, xs, NULL, NULL) == WARPFFT_ERR_CUDA &&
          CHECK_MSG("cuStreamEndCapture"));
    capture_end(STREAM(S));
    graph_destroy(g);
    CHECK(run_plan(p, M) == 0 && warpfft_plan_destroy(p) == 0);
    expect_clean("invalidated capture", &s0);
}

int main(void) {
    void *h = standin_lookup("standin_get", (void **)&get_counts, "standin_capture_begin",
                             (void **)&capture_begin, "standin_capture_end", (void **)&capture_end,
                             "standin_capture_invalidate", (void **)&capture_invalidate,
                             "standin_graph_destroy", (void **)&graph_destroy,
                             "standin_defer_destructors", (void **)&defer_destructors,
                             "standin_run_destructors", (void **)&run_destructors, NULL);
    if (!h)
        return 1;
    if (warpfft_init(0) != 0 || warpfft_malloc(0, 2 * M * 4, &xs) != 0 ||
        warpfft_malloc(0, 2 * M * 4, &ys) != 0 || warpfft_malloc(0, 2 * M * 8, &cs) != 0 ||
        warpfft_malloc(0, NMAX * 8, &fks) != 0) {
        printf("FATAL: %s\n", warpfft_last_error());
        return 1;
    }
    warpfft_memset(0, xs, 0, 2 * M * 4);
    warpfft_memset(0, ys, 0, 2 * M * 4);
    CHECK(warpfft_pool_set_limits(16, (int64_t)1 << 30) == 0);
    test_own_plan(1);
    test_own_plan(2);
    test_checked_points();
    test_late_destructor();
    test_type3();
    test_legacy_beside_blocking_capture();
    test_invalidated_capture();
    test_pool_capture();
    test_pool_capture_clear_and_discard();
    test_pool_release_refused();
    test_pool_release_during_capture_destroys_nothing();
    test_pool_graphs_threads();
    test_toeplitz_capture();
    warpfft_free(0, xs);
    warpfft_free(0, ys);
    warpfft_free(0, cs);
    warpfft_free(0, fks);
    standin_counts s = counts();
    CHECK(s.live_allocs == 0 && s.ctx_depth == 0 && s.violations == 0 && s.live_user_objects == 0 &&
              s.live_graphs == 0,
          "at exit: %ld allocations, context depth %ld, %ld violations, %ld user objects, %ld "
          "graphs",
          s.live_allocs, s.ctx_depth, s.violations, s.live_user_objects, s.live_graphs);
    dlclose(h);
    return check_summary("stream capture into CUDA graphs on the stand-in driver: ");
}
