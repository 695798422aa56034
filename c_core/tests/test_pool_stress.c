/*
 * test_pool_stress.c — the live-plan pool (api/pool.c, api/plan_pool.c) amid trouble, on the
 * stand-in driver and cuFFT of standin.h (built with test_pool.c, whose main runs these parts
 * after the single-caller ones): plans whose streams their users destroyed (types 1, 2 and 3)
 * evicted without touching those streams, no caller waiting behind another's plan creation or
 * GPU wait, threads racing acquires and releases against clears and limit changes (on user
 * streams; on the legacy stream, whose plans are fenced too: no eviction waits for it), and a walk
 * failing each driver/cuFFT call of a pooled lifecycle. Kept apart from test_pool.c so that the
 * pool's contract as one caller sees it reads on its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "runtime/driver.h"
#include "standin.h"
#include "test_pool.h"
#include "warpfft.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

/* ---- plans whose streams their users destroyed ---- */

/* Users destroy their streams once they have released their plans: evicting those plans must
 * not touch the streams (the stand-in counts any use of a dead stream as a violation). */
void test_dead_streams(void) {
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
    /* the legacy stream: fenced as any other */
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
void test_dead_streams_type3(void) {
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

void test_no_waiting_behind_others(void) {
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

/* The workers' arrays, the points zeroed (warpfft_memset waits for stream 0: before the
 * threads start). */
static void workers_make(worker w[N_WORKERS]) {
    for (int k = 0; k < N_WORKERS; k++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].index = k;
        w[k].x = dmalloc(M * 4);
        w[k].c = dmalloc(M * 8);
        w[k].fk = dmalloc(NMAX * 8);
        warpfft_memset(0, w[k].x, 0, M * 4);
    }
}

/* Runs `fn` on every worker's thread and chaos() beside them until the workers are done; checks
 * that no worker failed. Returns the runs (and the rounds of chaos, the runs with kept points). */
static long workers_run(worker w[N_WORKERS], void *(*fn)(void *), long *rounds, long *reused) {
    pthread_t t[N_WORKERS], tc;
    workers_done = 0;
    for (int k = 0; k < N_WORKERS; k++)
        pthread_create(&t[k], NULL, fn, &w[k]);
    pthread_create(&tc, NULL, chaos, rounds);
    long runs = 0;
    for (int k = 0; k < N_WORKERS; k++) {
        pthread_join(t[k], NULL);
        CHECK(w[k].fails == 0, "worker %d: %d failures, the first %s", k, w[k].fails, w[k].first);
        runs += w[k].runs;
        *reused += w[k].reused;
    }
    workers_done = 1;
    pthread_join(tc, NULL);
    return runs;
}

static void workers_free(worker w[N_WORKERS]) {
    for (int k = 0; k < N_WORKERS; k++) {
        warpfft_free(0, w[k].x);
        warpfft_free(0, w[k].c);
        warpfft_free(0, w[k].fk);
    }
}

void test_threads(void) {
    standin_counts s0 = counts();
    warpfft_pool_info i0 = info();
    worker w[N_WORKERS];
    long rounds = 0, reused = 0;
    workers_make(w);
    long runs = workers_run(w, work, &rounds, &reused);
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
    workers_free(w);
    expect_clean("threads", &s0);
}

/* ---- the legacy stream (0): torch's default and the one-call functions' ---- */

/* Acquires plans of two keys on the legacy stream, runs and releases them (as work() does). */
static void *work_legacy(void *arg) {
    worker *w = arg;
    unsigned seed = (unsigned)w->index * 104729u + 7u;
    for (int i = 0; i < N_ITER; i++) {
        int r = rand_r(&seed);
        warpfft_plan p = NULL;
        int st = acquire(1 + r % 2, 16 + 8 * (r / 2 % 2), 0, &p);
        if (st) {
            fail(w, "acquire", st);
            continue;
        }
        if ((st = warpfft_setpts(p, WARPFFT_F32, M, w->x, NULL, NULL)) != 0 ||
            (st = warpfft_execute(p, WARPFFT_F32, w->c, w->fk)) != 0)
            fail(w, "setpts + execute", st);
        w->runs += st == 0;
        if ((st = warpfft_pool_release(p, 0)) != 0)
            fail(w, "release", st);
    }
    return NULL;
}

/* Pooled plans on the legacy stream get a fence like any other: evicting them (a full pool, a
 * limit, a clear, from any thread) waits for that plan's last work (cuEventSynchronize), never
 * for the whole legacy stream (cuStreamSynchronize(0): everything anyone queued there), which
 * warpfft.h promises the pool never does. Threads race acquires and releases on stream 0
 * against clears and limit changes; the stand-in counts the waits. */
void test_legacy_stream_threads(void) {
    standin_counts s0 = counts();
    worker w[N_WORKERS];
    long rounds = 0, reused = 0;
    workers_make(w);
    /* one eviction on one thread first: a release into a full pool, then a clear */
    CHECK(warpfft_pool_set_limits(1, -1) == 0);
    warpfft_plan a = NULL, b = NULL;
    standin_counts s1 = counts();
    CHECK(acquire(1, 16, 0, &a) == 0 && run(a) == 0 && acquire(2, 16, 0, &b) == 0 && run(b) == 0);
    CHECK(warpfft_pool_release(a, 0) == 0 && warpfft_pool_release(b, 0) == 0 && info().idle == 1);
    CHECK(warpfft_pool_clear() == 0 && info().idle == 0);
    standin_counts s2 = counts();
    CHECK(s2.legacy_syncs == s1.legacy_syncs && s2.event_syncs - s1.event_syncs == 2,
          "two evictions on stream 0: %ld waits for the legacy stream, %ld for fences",
          s2.legacy_syncs - s1.legacy_syncs, s2.event_syncs - s1.event_syncs);
    /* then threads against clears and limits */
    long runs = workers_run(w, work_legacy, &rounds, &reused);
    CHECK(warpfft_pool_clear() == 0);
    standin_counts s3 = counts();
    CHECK(runs == N_WORKERS * N_ITER && s3.legacy_syncs == s2.legacy_syncs &&
              s3.event_syncs > s2.event_syncs,
          "%ld runs; evictions waited %ld times for the legacy stream, %ld times for fences", runs,
          s3.legacy_syncs - s2.legacy_syncs, s3.event_syncs - s2.event_syncs);
    printf("  legacy stream: %ld runs, %ld rounds of clears and limits; evictions waited for %ld "
           "fences and %ld times for the legacy stream\n",
           runs, rounds, s3.event_syncs - s2.event_syncs, s3.legacy_syncs - s2.legacy_syncs);
    CHECK(warpfft_pool_set_limits(16, (int64_t)1 << 30) == 0);
    workers_free(w);
    expect_clean("legacy stream threads", &s0);
}

/* ---- a pooled lifecycle with each driver/cuFFT call failing in turn ---- */

void test_fault_walk(void) {
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
