/*
 * test_pool.c — the live-plan pool (api/pool.c, api/plan_pool.c) on the stand-in driver and
 * cuFFT of standin.h, under ASan + UBSan (run_tests.sh builds it with the whole C core, and
 * test_pool_stress.c): main, the helpers both files share (test_pool.h), and the pool's contract
 * as one caller sees it: reuse by key and stream (and by what a request resolves to), points
 * kept or forgotten at release (warpfft_plan_points_id, 0 only for a plan the acquire just
 * made), misuse refused, limits (and their environment variables, read once), plans in use
 * surviving a clear. test_pool_stress.c holds the pool amid trouble: plans whose streams their
 * users destroyed, no caller waiting behind another's plan creation or GPU wait, threads racing
 * clears and limit changes, and a walk failing each driver/cuFFT call of a pooled lifecycle.
 * After each part: nothing leaked, no context left pushed, no violation (a stand-in check).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "standin.h"
#include "test_pool.h"
#include "warpfft.h"

int n_pass, n_fail;
standin_arm_fn arm;
static standin_get_fn get;
standin_slow_load_fn slow_load;
standin_stream_dead_fn stream_dead;
standin_slow_event_sync_fn slow_event_sync;

void *xs, *cs, *fks;

/* ---- helpers (test_pool.h) ---- */

standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

void *dmalloc(size_t bytes) {
    void *p = NULL;
    if (warpfft_malloc(0, bytes, &p) != WARPFFT_SUCCESS) {
        printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error());
        exit(1);
    }
    return p;
}

/* A 1D f32 plan of n0 <= NMAX modes from the pool (type 1 or 2), on `stream`, at tol. */
static int acquire_tol(int type, int64_t n0, uint64_t stream, double tol, warpfft_plan *plan) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    int64_t n[3] = {n0, 1, 1};
    return warpfft_pool_acquire(type, 1, n, 1, 1, tol, WARPFFT_F32, &o, plan);
}

int acquire(int type, int64_t n0, uint64_t stream, warpfft_plan *plan) {
    return acquire_tol(type, n0, stream, 1e-4, plan);
}

/* setpts + execute on arrays of M points and NMAX modes. */
static int run_on(warpfft_plan p, void *x, void *c, void *fk) {
    int st = warpfft_setpts(p, WARPFFT_F32, M, x, NULL, NULL);
    return st ? st : (int)warpfft_execute(p, WARPFFT_F32, c, fk);
}

int run(warpfft_plan p) {
    return run_on(p, xs, cs, fks);
}

warpfft_pool_info info(void) {
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
void expect_clean(const char *part, const standin_counts *s0) {
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
    setenv("WARPFFT_POOL_SIZE", "3", 1);
    setenv("WARPFFT_POOL_BYTES", "5000", 1);
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 3 && i.max_bytes == 5000, "limits %lld, %lld", (long long)i.max_plans,
          (long long)i.max_bytes);
    setenv("WARPFFT_POOL_SIZE", "7", 1); /* read once: no change now */
    CHECK(info().max_plans == 3);
}

/* The deprecated names (WARPFFT_PLAN_CACHE_*: the pool is no cache) still work where the new
 * ones are unset; the new ones win. */
static void env_old_names(void) {
    setenv("WARPFFT_PLAN_CACHE_SIZE", "5", 1);
    setenv("WARPFFT_PLAN_CACHE_BYTES", "6000", 1);
    setenv("WARPFFT_POOL_BYTES", "7000", 1);
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 5 && i.max_bytes == 7000, "limits %lld, %lld", (long long)i.max_plans,
          (long long)i.max_bytes);
}

static void env_junk(void) {
    setenv("WARPFFT_POOL_SIZE", "lots", 1);
    setenv("WARPFFT_POOL_BYTES", "-4", 1); /* not a count: the default, not 0 */
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 16 && i.max_bytes == (int64_t)1 << 30, "limits %lld, %lld",
          (long long)i.max_plans, (long long)i.max_bytes);
}

/* Digits only, as the kernel cache's size: strtoll read " 99999999999999999999" as no bound
 * (INT64_MAX) and "  -3" as 0, turning pooling off. Each of these is the default. */
static void env_not_digits(void) {
    static const char *const junk[] = {" 99999999999999999999",
                                       "99999999999999999999",
                                       "9223372036854775808",
                                       "  -3",
                                       "+5",
                                       "5 ",
                                       "0x10",
                                       "1e3"};
    for (size_t k = 0; k < sizeof junk / sizeof junk[0]; k++) {
        pid_t pid = fork();
        if (pid == 0) { /* a fresh process: the limits are read at its first pool call */
            setenv("WARPFFT_POOL_SIZE", junk[k], 1);
            setenv("WARPFFT_POOL_BYTES", junk[k], 1);
            warpfft_pool_info i = info();
            _exit(i.max_plans == 16 && i.max_bytes == (int64_t)1 << 30 ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "WARPFFT_POOL_SIZE and _BYTES = \"%s\": not the defaults", junk[k]);
    }
}

/* The largest value that fits is taken as it is; 0 turns pooling off. */
static void env_edges(void) {
    setenv("WARPFFT_POOL_SIZE", "0", 1);
    setenv("WARPFFT_POOL_BYTES", "9223372036854775807", 1);
    warpfft_pool_info i = info();
    CHECK(i.max_plans == 0 && i.max_bytes == INT64_MAX, "limits %lld, %lld", (long long)i.max_plans,
          (long long)i.max_bytes);
}

static void env_unset(void) {
    unsetenv("WARPFFT_POOL_SIZE");
    unsetenv("WARPFFT_POOL_BYTES");
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
    CHECK(warpfft_pool_release(a, 4) == WARPFFT_ERR_INVALID_ARG && CHECK_MSG("flags"));
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
    CHECK(acquire_tol(1, 32, 0, NAN, &p) == WARPFFT_ERR_BAD_TOL && !p);
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

/* WARPFFT_POOL_DISCARD: the release destroys the plan (an XLA call's batched plan that ran out
 * of memory, whose memory the fallback needs), whatever the limits; with the points flag too. */
static void test_discard(void) {
    standin_counts s0 = counts();
    warpfft_plan a = NULL, b = NULL;
    CHECK(acquire(1, 32, 0x5150, &a) == 0 && run(a) == 0);
    warpfft_pool_info i0 = info();
    size_t live = counts().live_bytes;
    CHECK(warpfft_pool_release(a, WARPFFT_POOL_DISCARD) == 0, "%s", warpfft_last_error());
    warpfft_pool_info i1 = info();
    CHECK(i1.idle == 0 && i1.busy == 0 && i1.destroyed == i0.destroyed + 1 &&
              counts().live_bytes < live,
          "discarded: %lld idle, %lld busy, %lld destroyed", (long long)i1.idle, (long long)i1.busy,
          (long long)(i1.destroyed - i0.destroyed));
    CHECK(acquire(1, 32, 0x5150, &b) == 0 && info().created == i1.created + 1, "not made again");
    CHECK(warpfft_pool_release(b, WARPFFT_POOL_DISCARD | WARPFFT_POOL_KEEP_POINTS) == 0 &&
          info().idle == 0 && info().destroyed == i1.destroyed + 1);
    expect_clean("discard", &s0);
}

/* A clear while a plan is in use: the plan keeps working, and goes at its release. */
/* Two requests that resolve to the same parameters share a plan (issue 41: the pool resolves a
 * request it has not seen as made, once, and compares what it resolves to): a tol below f32's
 * range runs at its end, upsampfac 0 at the sigma it chooses; a request that resolves to other
 * parameters gets a plan of its own. */
static void test_shared_by_resolution(void) {
    standin_counts s0 = counts();
    warpfft_pool_info i0 = info();
    warpfft_plan a = NULL, b = NULL, c = NULL, d = NULL;
    CHECK(acquire_tol(1, 32, 0x5150, 1e-7, &a) == 0 && warpfft_pool_release(a, 0) == 0);
    CHECK(acquire_tol(1, 32, 0x5150, 1e-6, &b) == 0 && b == a,
          "tol 1e-7 and 1e-6 (f32: both run at 1e-6): %p, %p", (void *)a, (void *)b);
    warpfft_plan_info pi;
    memset(&pi, 0, sizeof pi);
    CHECK(warpfft_plan_get_info(b, &pi) == 0 && pi.tol == 1e-6 && warpfft_pool_release(b, 0) == 0);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = 0x5150;
    o.upsampfac = pi.upsampfac; /* the sigma upsampfac 0 chose */
    int64_t n[3] = {32, 1, 1};
    CHECK(warpfft_pool_acquire(1, 1, n, 1, 1, 1e-6, WARPFFT_F32, &o, &c) == 0 && c == a,
          "upsampfac %g, the sigma upsampfac 0 chose: another plan", pi.upsampfac);
    CHECK(warpfft_pool_release(c, 0) == 0);
    CHECK(acquire_tol(1, 32, 0x5150, 1e-3, &d) == 0 && d != a && warpfft_pool_release(d, 0) == 0);
    /* the first request again: found as made (no resolve), the same plan */
    CHECK(acquire_tol(1, 32, 0x5150, 1e-7, &b) == 0 && b == a && warpfft_pool_release(b, 0) == 0);
    warpfft_pool_info i1 = info();
    CHECK(i1.created - i0.created == 2 && i1.hits - i0.hits == 3, "%lld created, %lld hits",
          (long long)(i1.created - i0.created), (long long)(i1.hits - i0.hits));
    expect_clean("shared by resolution", &s0);
}

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

int main(void) {
    /* Before any pool call in this process: each child reads the environment afresh. */
    run_isolated("env limits", env_limits);
    run_isolated("env old names", env_old_names);
    run_isolated("env junk", env_junk);
    run_isolated("env not digits", env_not_digits);
    run_isolated("env edges", env_edges);
    run_isolated("env unset", env_unset);
    void *h = standin_lookup("standin_arm", (void **)&arm, "standin_get", (void **)&get,
                             "standin_slow_load", (void **)&slow_load, "standin_stream_dead",
                             (void **)&stream_dead, "standin_slow_event_sync",
                             (void **)&slow_event_sync, NULL);
    if (!h)
        return 1;
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
    test_discard();
    test_busy_survives_clear();
    test_shared_by_resolution();
    test_dead_streams();
    test_dead_streams_type3();
    test_no_waiting_behind_others();
    test_threads();
    test_legacy_stream_threads();
    test_fault_walk();
    test_pool_toeplitz();
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
