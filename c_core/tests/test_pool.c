/*
 * test_pool.c — the live-plan pool (api/pool.c, api/plan_pool.c) on the stand-in driver and
 * cuFFT of standin.h, under ASan + UBSan (run_tests.sh builds it with the whole C core): reuse by
 * key and stream, points kept or forgotten at release (warpfft_plan_points_id, 0 only for a plan
 * the acquire just made), misuse refused, limits (and their environment variables, read once),
 * plans whose streams their users destroyed (types 1, 2 and 3) evicted without touching those
 * streams, plans in use surviving a clear, no caller waiting behind another's plan creation or
 * GPU wait, threads racing acquires and releases against clears and limit changes, and a walk
 * failing each driver/cuFFT call of a pooled lifecycle. After each part: nothing leaked, no
 * context left pushed, no violation (a stand-in check).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "runtime/driver.h"
#include "standin.h"
#include "warpfft.h"

int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;
static standin_slow_load_fn slow_load;
static standin_stream_dead_fn stream_dead;
static standin_slow_event_sync_fn slow_event_sync;

enum { M = 200, NMAX = 64 };
static void *xs, *cs, *fks; /* device arrays of the single-threaded parts */

static standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    if (warpfft_malloc(0, bytes, &p) != WARPFFT_SUCCESS) {
        printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error());
        exit(1);
    }
    return p;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

/* A 1D f32 plan of n0 <= NMAX modes from the pool (type 1 or 2), on `stream`, at tol. */
static int acquire_tol(int type, int64_t n0, uint64_t stream, double tol, warpfft_plan *plan) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    int64_t n[3] = {n0, 1, 1};
    return warpfft_pool_acquire(type, 1, n, 1, 1, tol, WARPFFT_F32, &o, plan);
}

static int acquire(int type, int64_t n0, uint64_t stream, warpfft_plan *plan) {
    return acquire_tol(type, n0, stream, 1e-4, plan);
}

/* setpts + execute on arrays of M points and NMAX modes. */
static int run_on(warpfft_plan p, void *x, void *c, void *fk) {
    int st = warpfft_setpts(p, WARPFFT_F32, M, x, NULL, NULL);
    return st ? st : (int)warpfft_execute(p, WARPFFT_F32, c, fk);
}

static int run(warpfft_plan p) {
    return run_on(p, xs, cs, fks);
}

static warpfft_pool_info info(void) {
    warpfft_pool_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    CHECK(warpfft_pool_get_info(&i) == WARPFFT_SUCCESS);
    return i;
}

static uint64_t points_id(warpfft_plan p) {
    uint64_t id = 0;
    CHECK(warpfft_plan_points_id(p, &id) == WARPFFT_SUCCESS);
    return id;
}

/* After a part: the pool cleared and the resource cache emptied, nothing of the part left. */
static void expect_clean(const char *part, const standin_counts *s0) {
    CHECK(warpfft_pool_clear() == WARPFFT_SUCCESS, "%s: clear: %s", part, warpfft_last_error());
    warpfft_release_cached();
    warpfft_pool_info i = info();
    standin_counts s = counts();
    CHECK(
        i.idle == 0 && i.busy == 0 && i.idle_bytes == 0 && s.live_allocs == s0->live_allocs &&
            s.live_fft_plans == 0 && s.live_events == s0->live_events && s.ctx_depth == 0 &&
            s.violations == s0->violations,
        "%s: %lld idle, %lld busy, %lld bytes; %ld allocations, %ld cuFFT plans, %ld events left, "
        "context depth %ld, %ld violations",
        part, (long long)i.idle, (long long)i.busy, (long long)i.idle_bytes,
        s.live_allocs - s0->live_allocs, s.live_fft_plans, s.live_events - s0->live_events,
        s.ctx_depth, s.violations - s0->violations);
}

/* ---- the environment, read at the first pool call (each scenario in a fresh child) ---- */

static void env_limits(void) {
    setenv("WARPFFT_PLAN_CACHE_SIZE", "3", 1);
    setenv("WARPFFT_PLAN_CACHE_BYTES", "5000", 1);
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 3 && i.max_bytes == 5000, "limits %lld, %lld", (long long)i.max_plans,
          (long long)i.max_bytes);
    setenv("WARPFFT_PLAN_CACHE_SIZE", "7", 1); /* read once: no change now */
    CHECK(info().max_plans == 3);
}

static void env_junk(void) {
    setenv("WARPFFT_PLAN_CACHE_SIZE", "lots", 1);
    setenv("WARPFFT_PLAN_CACHE_BYTES", "-4", 1);
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 16 && i.max_bytes == 0, "limits %lld, %lld", (long long)i.max_plans,
          (long long)i.max_bytes);
}

static void env_unset(void) {
    unsetenv("WARPFFT_PLAN_CACHE_SIZE");
    unsetenv("WARPFFT_PLAN_CACHE_BYTES");
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 16 && i.max_bytes == (int64_t)1 << 30, "limits %lld, %lld",
          (long long)i.max_plans, (long long)i.max_bytes);
}

/* ---- single-threaded semantics ---- */

static void test_reuse(void) {
    standin_counts s0 = counts();
    warpfft_pool_info i0 = info();
    warpfft_plan a = NULL, b = NULL, c = NULL, d = NULL;
    CHECK(acquire(1, 32, 0x5150, &a) == 0 && run(a) == 0);
    uint64_t id_a = points_id(a);
    CHECK(warpfft_pool_release(a, 0) == 0);
    /* the same key: the same plan, without its points */
    CHECK(acquire(1, 32, 0x5150, &b) == 0 && b == a, "a second acquire: %p, not %p", (void *)b,
          (void *)a);
    CHECK(points_id(b) != id_a && points_id(b) != 0, "a release forgets the points' id");
    CHECK(warpfft_execute(b, WARPFFT_F32, cs, fks) == WARPFFT_ERR_NO_POINTS,
          "a plan released without its points executes");
    /* kept points come back with the same id */
    CHECK(run(b) == 0);
    uint64_t id_b = points_id(b);
    CHECK(warpfft_pool_release(b, WARPFFT_POOL_KEEP_POINTS) == 0);
    CHECK(acquire(1, 32, 0x5150, &c) == 0 && c == a && points_id(c) == id_b);
    CHECK(warpfft_execute(c, WARPFFT_F32, cs, fks) == 0, "kept points: %s", warpfft_last_error());
    /* while c is in use: the same key gets another plan; another stream or option another */
    CHECK(acquire(1, 32, 0x5150, &d) == 0 && d && d != c);
    warpfft_plan e = NULL, f = NULL, g = NULL;
    CHECK(acquire(1, 32, 0x5151, &e) == 0 && e != c && e != d);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = 0x5150;
    o.check_points = 1;
    int64_t n[3] = {32, 1, 1};
    CHECK(warpfft_pool_acquire(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, &o, &f) == 0 && f != c && f != d);
    CHECK(acquire(1, 32, 0x5150, &g) == 0 && g != c && g != d && g != f);
    warpfft_pool_info i1 = info();
    CHECK(i1.busy == 5 && i1.idle == 0 && i1.created - i0.created == 5 && i1.hits - i0.hits == 2,
          "%lld busy, %lld idle, %lld created, %lld hits", (long long)i1.busy, (long long)i1.idle,
          (long long)(i1.created - i0.created), (long long)(i1.hits - i0.hits));
    warpfft_plan all[] = {c, d, e, f, g};
    for (int k = 0; k < 5; k++)
        CHECK(warpfft_pool_release(all[k], 0) == 0);
    warpfft_pool_info i2 = info();
    CHECK(i2.idle == 5 && i2.busy == 0 && i2.idle_bytes > 0);
    /* the most recently released of a key comes first */
    warpfft_plan h = NULL;
    CHECK(acquire(1, 32, 0x5150, &h) == 0 && h == g, "not the most recent of its key");
    CHECK(warpfft_pool_release(h, 0) == 0);
    CHECK(warpfft_pool_clear() == 0 && info().idle == 0 && info().destroyed - i2.destroyed == 5);
    expect_clean("reuse", &s0);
}

/* Points id 0 means a plan the acquire just made (the XLA handler counts its plans so): a plan
 * given back without ever having points takes an id all the same, kept points or not. */
static void test_points_id_zero(void) {
    standin_counts s0 = counts();
    warpfft_plan a = NULL, b = NULL;
    for (uint32_t flags = 0; flags <= WARPFFT_POOL_KEEP_POINTS; flags++) {
        CHECK(acquire(2, 40, 0x5150, &a) == 0 && points_id(a) == 0, "a new plan: id %llu",
              (unsigned long long)points_id(a));
        CHECK(warpfft_pool_release(a, flags) == 0);
        CHECK(acquire(2, 40, 0x5150, &b) == 0 && b == a);
        uint64_t id = points_id(b);
        CHECK(id != 0, "released (flags %u) without points: id 0, as a new plan's", flags);
        CHECK(warpfft_execute(b, WARPFFT_F32, cs, fks) == WARPFFT_ERR_NO_POINTS);
        CHECK(warpfft_pool_release(b, WARPFFT_POOL_KEEP_POINTS) == 0);
        CHECK(acquire(2, 40, 0x5150, &b) == 0 && b == a && points_id(b) == id,
              "a nonzero id kept: %llu, then %llu", (unsigned long long)id,
              (unsigned long long)points_id(b));
        CHECK(warpfft_pool_release(b, 0) == 0 && warpfft_pool_clear() == 0);
    }
    expect_clean("points id 0", &s0);
}

static void test_misuse(void) {
    standin_counts s0 = counts();
    warpfft_plan a = NULL, own = NULL;
    CHECK(acquire(1, 32, 0, &a) == 0);
    CHECK(warpfft_plan_destroy(a) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("warpfft_pool_release"));
    CHECK(run(a) == 0, "a refused destroy left the plan working");
    CHECK(warpfft_pool_release(a, 2) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("flags"));
    CHECK(warpfft_pool_release(a, 0) == 0);
    CHECK(warpfft_pool_release(a, 0) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("released already"));
    CHECK(warpfft_pool_release(NULL, 0) == WARPFFT_ERR_INVALID_ARG);
    int64_t n[3] = {32, 1, 1};
    CHECK(warpfft_plan_create(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, NULL, &own) == 0);
    CHECK(warpfft_pool_release(own, 0) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("not one the pool"));
    CHECK(warpfft_plan_destroy(own) == 0);
    /* acquire's argument errors are plan_create's, and make nothing */
    warpfft_pool_info i0 = info();
    warpfft_plan p = (warpfft_plan)&p;
    CHECK(warpfft_pool_acquire(1, 4, n, 1, 1, 1e-4, WARPFFT_F32, NULL, &p) == WARPFFT_ERR_BAD_DIM &&
          p == NULL);
    CHECK(warpfft_pool_acquire(1, 1, NULL, 1, 1, 1e-4, WARPFFT_F32, NULL, &p) != 0 && !p);
    CHECK(acquire_tol(1, 32, 0, 1e-30, &p) == WARPFFT_ERR_BAD_TOL && !p);
    CHECK(warpfft_pool_acquire(5, 1, n, 1, 1, 1e-4, WARPFFT_F32, NULL, &p) == WARPFFT_ERR_BAD_TYPE);
    CHECK(warpfft_pool_acquire(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, NULL, NULL) ==
          WARPFFT_ERR_INVALID_ARG);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.struct_size = 3;
    CHECK(warpfft_pool_acquire(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, &o, &p) ==
              WARPFFT_ERR_INVALID_ARG &&
          CHECK_MSG("struct_size"));
    warpfft_pool_info i1 = info();
    CHECK(i1.created == i0.created && i1.busy == 0);
    warpfft_pool_info small;
    small.struct_size = 8;
    CHECK(warpfft_pool_get_info(&small) == WARPFFT_ERR_INVALID_ARG &&
          warpfft_pool_get_info(NULL) == WARPFFT_ERR_INVALID_ARG);
    /* an older caller's smaller struct: only what fits is written */
    struct {
        warpfft_pool_info head;
        int64_t guard;
    } part;
    memset(&part, 0x7f, sizeof part);
    part.head.struct_size = (uint32_t)offsetof(warpfft_pool_info, busy);
    CHECK(warpfft_pool_get_info(&part.head) == 0 && part.head.idle == info().idle &&
          part.head.busy == 0x7f7f7f7f7f7f7f7f);
    uint64_t id = 0;
    CHECK(warpfft_plan_points_id(NULL, &id) == WARPFFT_ERR_INVALID_ARG);
    expect_clean("misuse", &s0);
}

static void test_limits(void) {
    standin_counts s0 = counts();
    CHECK(warpfft_pool_set_limits(2, -1) == 0 && info().max_plans == 2 &&
          info().max_bytes == (int64_t)1 << 30);
    warpfft_pool_info i0 = info();
    warpfft_plan p[3];
    for (int k = 0; k < 3; k++) /* three keys, one after the other */
        CHECK(acquire(1, 16 + 8 * k, 0x5150, &p[k]) == 0 && run(p[k]) == 0 &&
              warpfft_pool_release(p[k], 0) == 0);
    warpfft_pool_info i1 = info();
    CHECK(i1.idle == 2 && i1.destroyed - i0.destroyed == 1, "%lld idle, %lld destroyed",
          (long long)i1.idle, (long long)(i1.destroyed - i0.destroyed));
    warpfft_plan q = NULL; /* the least recently released went */
    CHECK(acquire(1, 16, 0x5150, &q) == 0 && info().created == i1.created + 1);
    CHECK(warpfft_pool_release(q, 0) == 0 && info().idle == 2);
    /* a byte bound below one plan's workspace: releases destroy */
    CHECK(warpfft_pool_set_limits(-1, 100) == 0 && info().idle == 0 && info().max_plans == 2);
    CHECK(acquire(1, 16, 0x5150, &q) == 0 && warpfft_pool_release(q, 0) == 0 && info().idle == 0);
    /* off: every release destroys */
    CHECK(warpfft_pool_set_limits(0, (int64_t)1 << 30) == 0);
    CHECK(acquire(1, 16, 0x5150, &q) == 0 && run(q) == 0 && warpfft_pool_release(q, 0) == 0 &&
          info().idle == 0);
    CHECK(warpfft_pool_set_limits(16, (int64_t)1 << 30) == 0);
    expect_clean("limits", &s0);
}

/* A clear while a plan is in use: the plan keeps working, and goes at its release. */
static void test_busy_survives_clear(void) {
    standin_counts s0 = counts();
    warpfft_plan a = NULL, b = NULL;
    CHECK(acquire(1, 32, 0x5150, &a) == 0 && acquire(2, 32, 0x5150, &b) == 0);
    CHECK(warpfft_pool_release(b, 0) == 0);
    warpfft_pool_info i0 = info();
    CHECK(warpfft_pool_clear() == 0);
    warpfft_pool_info i1 = info();
    CHECK(i1.busy == 1 && i1.idle == 0 && i1.destroyed == i0.destroyed + 1);
    CHECK(run(a) == 0, "after the clear: %s", warpfft_last_error());
    CHECK(warpfft_pool_release(a, WARPFFT_POOL_KEEP_POINTS) == 0);
    CHECK(info().busy == 0 && info().idle == 0 && info().destroyed == i0.destroyed + 2);
    expect_clean("busy survives a clear", &s0);
}

/* Users destroy their streams once they have released their plans: evicting those plans must
 * not touch the streams (the stand-in counts any use of a dead stream as a violation). */
static void test_dead_streams(void) {
    standin_counts s0 = counts();
    warpfft_plan p[4];
    const uintptr_t streams[4] = {0x5160, 0x5161, 0x5162, 0x5163};
    for (int k = 0; k < 4; k++) {
        CHECK(acquire(1 + k % 2, 24 + 4 * k, streams[k], &p[k]) == 0 && run(p[k]) == 0);
        CHECK(warpfft_pool_release(p[k], 0) == 0);
        stream_dead((CUstream)streams[k], 1);
    }
    /* eviction by a limit, by a release into a full pool, by a clear */
    CHECK(warpfft_pool_set_limits(3, -1) == 0 && info().idle == 3);
    warpfft_plan q = NULL;
    CHECK(acquire(1, 48, 0x5170, &q) == 0 && run(q) == 0 && warpfft_pool_release(q, 0) == 0 &&
          info().idle == 3);
    CHECK(warpfft_pool_clear() == 0 && info().idle == 0);
    CHECK(counts().violations == s0.violations, "a destroyed stream was used");
    /* a new stream with a dead one's handle: a new plan works on it */
    stream_dead((CUstream)streams[0], 0);
    CHECK(acquire(1, 24, streams[0], &q) == 0 && run(q) == 0 && warpfft_pool_release(q, 0) == 0);
    /* the legacy stream (no fence: waited for as a stream) */
    CHECK(acquire(1, 24, 0, &q) == 0 && run(q) == 0 && warpfft_pool_release(q, 0) == 0);
    for (int k = 1; k < 4; k++)
        stream_dead((CUstream)streams[k], 0);
    CHECK(warpfft_pool_set_limits(16, -1) == 0);
    expect_clean("dead streams", &s0);
}

/* A ramp of n f32 values in [lo, hi], on the device. */
static void *ramp(int64_t n, float lo, float hi) {
    float *h = malloc((size_t)n * sizeof *h);
    void *d = dmalloc((size_t)n * sizeof *h);
    for (int64_t j = 0; h && j < n; j++)
        h[j] = lo + (hi - lo) * (float)((j * 37) % n) / (float)(n - 1);
    if (!h || warpfft_memcpy_htod(0, d, h, (size_t)n * sizeof *h) != 0) {
        printf("FATAL: ramp: %s\n", warpfft_last_error());
        exit(1);
    }
    free(h);
    return d;
}

/* The same for type 3, whose inner type-2 transform gives its grid and cuFFT plan to the plan
 * cache at destroy: that must not wait for the dead stream either. */
static void test_dead_streams_type3(void) {
    standin_counts s0 = counts();
    void *x = ramp(M, 0.5f, 2.5f), *s = ramp(NMAX, -3.0f, 7.0f);
    const uintptr_t stream = 0x5164;
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    for (int evict = 0; evict < 2; evict++) { /* by a clear; by a limit */
        warpfft_plan p = NULL;
        CHECK(warpfft_pool_acquire(3, 1, NULL, 1, 1, 1e-4, WARPFFT_F32, &o, &p) == 0);
        CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, NMAX, s, NULL, NULL) == 0 &&
                  warpfft_execute(p, WARPFFT_F32, cs, fks) == 0,
              "type 3: %s", warpfft_last_error());
        CHECK(warpfft_pool_release(p, 0) == 0 && info().idle == 1);
        stream_dead((CUstream)stream, 1);
        CHECK((evict ? warpfft_pool_set_limits(0, -1) : warpfft_pool_clear()) == 0 &&
                  info().idle == 0,
              "type 3 eviction %d: %s", evict, warpfft_last_error());
        CHECK(counts().violations == s0.violations,
              "type 3 (eviction %d): a destroyed stream was used", evict);
        stream_dead((CUstream)stream, 0);
    }
    CHECK(warpfft_pool_set_limits(16, -1) == 0);
    warpfft_free(0, x);
    warpfft_free(0, s);
    expect_clean("dead streams, type 3", &s0);
}

/* ---- no caller waits behind another's plan creation or GPU wait ---- */

typedef struct slow_job {
    int what; /* 0: acquire a plan whose modules are not loaded yet; 1: clear */
    volatile int started;
    double ms;
    int st;
} slow_job;

static void *slow_thread(void *arg) {
    slow_job *j = arg;
    j->started = 1;
    double t0 = now_ms();
    if (j->what == 0) {
        warpfft_plan p = NULL;
        /* f64 at 1e-12: a kernel width no part has loaded, so its modules load (slowly) now */
        warpfft_opts o;
        warpfft_opts_default(&o);
        int64_t n[3] = {40, 1, 1};
        j->st = warpfft_pool_acquire(2, 1, n, 1, 1, 1e-12, WARPFFT_F64, &o, &p);
        if (j->st == 0)
            j->st = warpfft_pool_release(p, 0);
    } else {
        j->st = warpfft_pool_clear();
    }
    j->ms = now_ms() - t0;
    return NULL;
}

/* While another thread is slow inside the pool, this one acquires, runs and releases (and, when
 * `fresh`, creates) a plan: it must not wait for the other. */
static void expect_not_blocked(const char *what, slow_job *job, int64_t n0) {
    pthread_t t;
    pthread_create(&t, NULL, slow_thread, job);
    while (!job->started)
        sleep_ms(1);
    sleep_ms(60); /* the other thread is inside its slow part now */
    double t0 = now_ms();
    warpfft_plan p = NULL;
    int st = acquire(1, n0, 0x5150, &p);
    if (st == 0)
        st = run(p);
    if (p)
        st = st ? st : (int)warpfft_pool_release(p, WARPFFT_POOL_KEEP_POINTS);
    double ms = now_ms() - t0;
    pthread_join(t, NULL);
    CHECK(st == 0 && job->st == 0, "%s: %s", what, warpfft_last_error());
    CHECK(ms < 300 && job->ms >= 500, "%s: this thread took %.0f ms, the slow one %.0f ms", what,
          ms, job->ms);
}

static void test_no_waiting_behind_others(void) {
    standin_counts s0 = counts();
    warpfft_plan p = NULL;
    CHECK(acquire(1, 32, 0x5150, &p) == 0 && run(p) == 0 && warpfft_pool_release(p, 0) == 0);
    slow_load(600);
    slow_job create = {0, 0, 0, -1};
    expect_not_blocked("behind a plan creation", &create, 32); /* an idle plan */
    slow_load(0);
    CHECK(acquire(1, 36, 0x5151, &p) == 0 && run(p) == 0 && warpfft_pool_release(p, 0) == 0);
    slow_event_sync(600); /* the clear waits for that idle plan's work */
    slow_job clear = {1, 0, 0, -1};
    expect_not_blocked("behind a clear's wait", &clear, 44); /* a new plan, made meanwhile */
    slow_event_sync(0);
    expect_clean("no waiting behind others", &s0);
}

/* ---- threads ---- */

enum { N_WORKERS = 4, N_ITER = 150 };

typedef struct worker {
    int index;
    void *x, *c, *fk;
    int fails;
    char first[256];
    long runs, reused;
} worker;

static volatile int workers_done;

static void fail(worker *w, const char *what, int st) {
    if (!w->fails++)
        snprintf(w->first, sizeof w->first, "%s: %s (%s)", what, warpfft_status_name(st),
                 warpfft_last_error());
}

/* Acquires among a few keys (types, sizes, streams), sets its own points unless the plan still
 * holds them (its points id says so), executes, releases keeping the points half the time. */
static void *work(void *arg) {
    worker *w = arg;
    warpfft_plan mine = NULL; /* the plan whose points this thread set last, and their id */
    uint64_t mine_id = 0;
    unsigned seed = (unsigned)w->index * 7919u + 1u;
    static const uintptr_t streams[3] = {0, 0x5180, 0x5181};
    for (int i = 0; i < N_ITER; i++) {
        int r = rand_r(&seed);
        warpfft_plan p = NULL;
        int st = acquire(1 + r % 2, 16 + 8 * (r / 2 % 3), streams[r / 6 % 3], &p);
        if (st) {
            fail(w, "acquire", st);
            continue;
        }
        uint64_t id = 0;
        warpfft_plan_points_id(p, &id);
        if (p == mine && id == mine_id) {
            w->reused++;
        } else if ((st = warpfft_setpts(p, WARPFFT_F32, M, w->x, NULL, NULL)) != 0) {
            fail(w, "setpts", st);
        }
        if (!st && (st = warpfft_execute(p, WARPFFT_F32, w->c, w->fk)) != 0)
            fail(w, "execute", st);
        w->runs += st == 0;
        int keep = r / 18 % 2;
        mine = keep ? p : NULL;
        warpfft_plan_points_id(p, &mine_id);
        if ((st = warpfft_pool_release(p, keep ? WARPFFT_POOL_KEEP_POINTS : 0)) != 0)
            fail(w, "release", st);
    }
    return NULL;
}

/* Clears and changes the limits until the workers are done. */
static void *chaos(void *arg) {
    long *rounds = arg;
    unsigned seed = 12345;
    while (!workers_done) {
        int r = rand_r(&seed);
        if (r % 3 == 0)
            warpfft_pool_clear();
        else
            warpfft_pool_set_limits(r % 4, r % 2 ? (int64_t)1 << 30 : 20000);
        ++*rounds;
        sleep_ms(r % 3);
    }
    return NULL;
}

static void test_threads(void) {
    standin_counts s0 = counts();
    warpfft_pool_info i0 = info();
    worker w[N_WORKERS];
    pthread_t t[N_WORKERS], tc;
    long rounds = 0;
    workers_done = 0;
    for (int k = 0; k < N_WORKERS; k++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].index = k;
        w[k].x = dmalloc(M * 4);
        w[k].c = dmalloc(M * 8);
        w[k].fk = dmalloc(NMAX * 8);
        warpfft_memset(0, w[k].x, 0, M * 4);
        pthread_create(&t[k], NULL, work, &w[k]);
    }
    pthread_create(&tc, NULL, chaos, &rounds);
    long runs = 0, reused = 0;
    for (int k = 0; k < N_WORKERS; k++) {
        pthread_join(t[k], NULL);
        CHECK(w[k].fails == 0, "worker %d: %d failures, the first %s", k, w[k].fails, w[k].first);
        runs += w[k].runs;
        reused += w[k].reused;
    }
    workers_done = 1;
    pthread_join(tc, NULL);
    CHECK(warpfft_pool_set_limits(16, (int64_t)1 << 30) == 0);
    warpfft_pool_info i1 = info();
    CHECK(i1.busy == 0 && runs == N_WORKERS * N_ITER, "%lld busy, %ld runs", (long long)i1.busy,
          runs);
    CHECK(warpfft_pool_clear() == 0);
    warpfft_pool_info i2 = info();
    CHECK(i2.created - i0.created == i2.destroyed - i0.destroyed, "%lld created, %lld destroyed",
          (long long)(i2.created - i0.created), (long long)(i2.destroyed - i0.destroyed));
    printf("  threads: %ld runs (%ld with kept points), %lld plans created, %lld hits, %ld rounds "
           "of clears and limits\n",
           runs, reused, (long long)(i2.created - i0.created), (long long)(i2.hits - i0.hits),
           rounds);
    for (int k = 0; k < N_WORKERS; k++) {
        warpfft_free(0, w[k].x);
        warpfft_free(0, w[k].c);
        warpfft_free(0, w[k].fk);
    }
    expect_clean("threads", &s0);
}

/* ---- a pooled lifecycle with each driver/cuFFT call failing in turn ---- */

static void test_fault_walk(void) {
    standin_counts s0 = counts();
    static const uintptr_t streams[2] = {0, 0x5190};
    long walked = 0;
    for (int cfg = 0; cfg < 4; cfg++) {
        int type = 1 + cfg % 2;
        uintptr_t stream = streams[cfg / 2];
        for (long k = 1;; k++) {
            warpfft_pool_clear();
            warpfft_release_cached();
            arm(k);
            warpfft_plan p = NULL;
            int st = acquire(type, 28, stream, &p);
            int ok = st == 0 || warpfft_last_error()[0] != '\0';
            if (st == 0) {
                st = run(p); /* may fail: the plan is released all the same */
                ok = ok && (st == 0 || warpfft_last_error()[0] != '\0');
                st = warpfft_pool_release(p, 0);
                ok = ok && (st == 0 || warpfft_last_error()[0] != '\0');
            }
            long calls = counts().calls;
            standin_counts s = counts();
            arm(0);
            CHECK(ok, "type %d stream %#lx, call %ld (%s) failed without a message", type,
                  (unsigned long)stream, k, s.failed_fn);
            /* a destroy that failed left its plan in the pool: the clear takes it now */
            CHECK(warpfft_pool_clear() == 0, "clear after call %ld (%s): %s", k, s.failed_fn,
                  warpfft_last_error());
            warpfft_release_cached();
            warpfft_pool_info i = info();
            s = counts();
            CHECK(i.idle == 0 && i.busy == 0 && s.live_allocs == s0.live_allocs &&
                      s.live_fft_plans == 0 && s.live_events == s0.live_events &&
                      s.ctx_depth == 0 && s.violations == s0.violations,
                  "type %d stream %#lx, call %ld failing: %lld idle, %lld busy, %ld allocations, "
                  "%ld cuFFT plans, %ld events, depth %ld, %ld violations",
                  type, (unsigned long)stream, k, (long long)i.idle, (long long)i.busy,
                  s.live_allocs - s0.live_allocs, s.live_fft_plans, s.live_events - s0.live_events,
                  s.ctx_depth, s.violations - s0.violations);
            walked++;
            if (calls < k)
                break;
        }
    }
    printf("  fault walk: %ld pooled lifecycles, each with one call failing\n", walked);
}

int main(void) {
    /* Before any pool call in this process: each child reads the environment afresh. */
    run_isolated("env limits", env_limits);
    run_isolated("env junk", env_junk);
    run_isolated("env unset", env_unset);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h || !(arm = (standin_arm_fn)dlsym(h, "standin_arm")) ||
        !(get = (standin_get_fn)dlsym(h, "standin_get")) ||
        !(slow_load = (standin_slow_load_fn)dlsym(h, "standin_slow_load")) ||
        !(stream_dead = (standin_stream_dead_fn)dlsym(h, "standin_stream_dead")) ||
        !(slow_event_sync = (standin_slow_event_sync_fn)dlsym(h, "standin_slow_event_sync"))) {
        printf("FATAL: the stand-in libcuda.so.1 is not first on LD_LIBRARY_PATH (%s)\n",
               h ? "no standin_arm" : dlerror());
        return 1;
    }
    if (warpfft_init(0) != 0) {
        printf("FATAL: init: %s\n", warpfft_last_error());
        return 1;
    }
    xs = dmalloc(M * 4);
    cs = dmalloc(M * 8);
    fks = dmalloc(NMAX * 8);
    warpfft_memset(0, xs, 0, M * 4);
    CHECK(warpfft_pool_set_limits(16, (int64_t)1 << 30) == 0);
    test_reuse();
    test_points_id_zero();
    test_misuse();
    test_limits();
    test_busy_survives_clear();
    test_dead_streams();
    test_dead_streams_type3();
    test_no_waiting_behind_others();
    test_threads();
    test_fault_walk();
    warpfft_free(0, xs);
    warpfft_free(0, cs);
    warpfft_free(0, fks);
    standin_counts s = counts();
    CHECK(s.live_allocs == 0 && s.ctx_depth == 0 && s.violations == 0,
          "at exit: %ld allocations, context depth %ld, %ld violations", s.live_allocs, s.ctx_depth,
          s.violations);
    dlclose(h);
    return check_summary("live-plan pool on the stand-in driver: ");
}
