/*
 * test_fault.c — the fault-injection suite. Runs against the stand-in libcuda.so.1 (found on
 * LD_LIBRARY_PATH) and libcufft.so.12 (WARPFFT_CUFFT_LIB) of standin.h, through the library's
 * normal discovery; run_tests.sh builds all three and runs this under ASan + UBSan.
 *
 * For each configuration (type, dim, precision, method, batch) it walks the plan lifecycle
 * create -> setpts -> execute -> destroy once per call index k = 1, 2, ..., with the k-th driver
 * or cuFFT call failing, until a walk makes fewer than k calls. After every walk: no allocation,
 * cuFFT plan or link state left, contexts balanced, no out-of-bounds access; every injected
 * failure surfaced as a clear status naming the call; a plan whose setpts or execute failed still
 * works; a failed destroy leaves a handle that a second destroy frees. Each configuration is
 * walked three times: plan cache (cache.c) off, on but empty, and on holding the plan's shape
 * (create takes the cuFFT plan and factors from it); the cache is emptied after every walk.
 * Then the cache itself: reuse, bounds, the out-of-memory release, and two threads.
 *
 * One file (~750 lines) on purpose: every part runs in the one process the stand-in driver and
 * cuFFT are loaded into, sharing their arm/count controls and the walk's leak checks.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fatbin.h"
#include "params.h"
#include "runtime.h"
#include "standin.h"
#include "warpfft.h"

int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;
static standin_slow_load_fn slow_load;
static standin_mem_limit_fn mem_limit;
static long last_calls;           /* calls the last walk made */
static uint64_t oom_retries_seen; /* when the walk began */

typedef struct config {
    int type, dim, precision, method;
    int64_t ntransf;
    double upsampfac;
    uint64_t stream;  /* 0: legacy; else a stand-in stream (non-blocking) */
    int check_points; /* opts.check_points: 1 = setpts syncs and reads the totals back */
    int32_t bin_size; /* opts.bin_size in every dim (0: default); 1: more bins than
                         WF_SCAN_BIG_BINS in 3D, so setpts scans with module scan_big */
} config;

static const config configs[] = {
    {1, 1, WARPFFT_F32, WARPFFT_METHOD_GM, 1, 2.0, 0, 0, 0},
    {2, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 2, 2.0, 0, 1, 0},
    {1, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 1.25, 0, 1, 0},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_GM, 3, 2.0, 0x5150, 0, 0},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 2, 2.0, 0x5150, 0, 0},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_GM, 1, 1.25, 0, 1, 0},
    {2, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 2.0, 0, 0, 0},
    {1, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 4, 1.25, 0x5150, 1, 0},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 1, 1},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_GM, 1, 2.0, 0x5150, 1, 1},
};
enum { M = 300 };
static const int64_t n_modes[3] = {24, 10, 6};

/* The caller's arrays, allocated (outside any walk) through the stand-in. */
typedef struct arrays {
    void *x, *y, *z, *c, *fk;
} arrays;

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    if (warpfft_malloc(0, bytes, &p) != WARPFFT_SUCCESS) {
        printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error());
        exit(1);
    }
    return p;
}

static arrays arrays_make(const config *cf) {
    size_t real = cf->precision == WARPFFT_F64 ? 8 : 4;
    arrays a = {dmalloc(M * real), dmalloc(M * real), dmalloc(M * real),
                dmalloc((size_t)cf->ntransf * M * 2 * real),
                dmalloc((size_t)cf->ntransf * 24 * 10 * 6 * 2 * real)};
    return a;
}

static void arrays_free(arrays *a) {
    void *p[] = {a->x, a->y, a->z, a->c, a->fk};
    for (int i = 0; i < 5; i++)
        warpfft_free(0, p[i]);
}

/* An injected failure must surface as a clear status: not success (unless the failed call was
 * a release whose result nothing depends on), not INTERNAL, and a message naming what failed. */
static void check_status(const char *step, int st, long k) {
    standin_counts s;
    get(&s);
    if (!s.failed_at) {
        CHECK(st == WARPFFT_SUCCESS, "%s: no failure injected (k = %ld) but status %s: %s", step, k,
              warpfft_status_name(st), warpfft_last_error());
        return;
    }
    int release =
        strcmp(s.failed_fn, "cuMemFree") == 0 || strcmp(s.failed_fn, "cuLinkDestroy") == 0;
    /* destroy's wait before caching: on failure it frees instead, as it did before the cache */
    release |= strcmp(step, "destroy") == 0 && strcmp(s.failed_fn, "cuStreamSynchronize") == 0;
    /* an out-of-memory after which the cache was emptied and the allocation retried */
    wf_cache_stats cs;
    wf_cache_get_stats(&cs);
    release |= strcmp(s.failed_fn, "cuMemAlloc") == 0 && cs.oom_retries > oom_retries_seen;
    if (st == WARPFFT_SUCCESS) {
        CHECK(release, "%s: %s (call %ld) failed but the status is SUCCESS", step, s.failed_fn,
              s.failed_at);
        return;
    }
    const char *msg = warpfft_last_error();
    int named = strstr(msg, "injected by the stand-in") || strstr(msg, s.failed_fn);
    CHECK(st != WARPFFT_ERR_INTERNAL && named, "%s: %s (call %ld) failed: status %s, message '%s'",
          step, s.failed_fn, s.failed_at, warpfft_status_name(st), msg);
}

static void set_injected(int *flag) {
    standin_counts s;
    get(&s);
    *flag |= s.failed_at != 0;
}

static void config_opts(const config *cf, warpfft_opts *o) {
    warpfft_opts_default(o);
    o->method = cf->method;
    o->upsampfac = cf->upsampfac;
    o->stream = cf->stream;
    o->check_points = cf->check_points;
    for (int d = 0; d < 3; d++)
        o->bin_size[d] = cf->bin_size;
}

enum { CACHE_OFF, CACHE_COLD, CACHE_WARM };
static const char *const cache_mode_name[] = {"cache off", "cache empty", "cache warm"};

/* One lifecycle with call k failing; returns 1 when the failure was injected somewhere. */
static int walk(const config *cf, const arrays *a, long k, long base_allocs, int cache) {
    warpfft_opts o;
    config_opts(cf, &o);
    warpfft_plan plan = NULL;
    int injected = 0;
    wf_cache_set_limits(cache == CACHE_OFF ? 0 : WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    if (cache == CACHE_WARM) { /* a plan of this shape went to the cache */
        int st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4,
                                     (warpfft_precision)cf->precision, &o, &plan);
        CHECK(st == 0 && warpfft_plan_destroy(plan) == 0, "warming the cache: %s",
              warpfft_last_error());
        plan = NULL;
    }
    wf_cache_stats cs;
    wf_cache_get_stats(&cs);
    oom_retries_seen = cs.oom_retries;
    arm(k);
    int st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4,
                                 (warpfft_precision)cf->precision, &o, &plan);
    check_status("create", st, k);
    set_injected(&injected);
    standin_counts s;
    if (st == WARPFFT_SUCCESS) {
        get(&s);
        long after_create = s.live_allocs;
        st = warpfft_setpts(plan, (warpfft_precision)cf->precision, M, a->x, a->y, a->z);
        check_status("setpts", st, k);
        set_injected(&injected);
        if (st != WARPFFT_SUCCESS) {
            get(&s);
            /* nothing the failed call allocated is kept (this was the plan's first setpts) */
            CHECK(s.live_allocs == after_create, "k %ld: failed setpts (%s) left %ld allocations",
                  k, s.failed_fn, s.live_allocs - after_create);
            arm(0);
            st = warpfft_setpts(plan, (warpfft_precision)cf->precision, M, a->x, a->y, a->z);
            CHECK(st == WARPFFT_SUCCESS, "k %ld: setpts after a failed one: %s", k,
                  warpfft_last_error());
        }
        st = warpfft_execute(plan, (warpfft_precision)cf->precision, a->c, a->fk);
        check_status("execute", st, k);
        set_injected(&injected);
        if (st != WARPFFT_SUCCESS) {
            arm(0);
            st = warpfft_execute(plan, (warpfft_precision)cf->precision, a->c, a->fk);
            CHECK(st == WARPFFT_SUCCESS, "k %ld: execute after a failed one: %s", k,
                  warpfft_last_error());
        }
        /* unchecked: reads the flag and the totals back (copy + sync); checked: nothing */
        st = warpfft_setpts_check(plan);
        check_status("setpts_check", st, k);
        set_injected(&injected);
        if (st != WARPFFT_SUCCESS) {
            arm(0);
            st = warpfft_setpts_check(plan);
            CHECK(st == WARPFFT_SUCCESS, "k %ld: setpts_check after a failed one: %s", k,
                  warpfft_last_error());
        }
        st = warpfft_plan_destroy(plan);
        check_status("destroy", st, k);
        set_injected(&injected);
        if (st != WARPFFT_SUCCESS) { /* the handle stays valid: destroy again */
            arm(0);
            st = warpfft_plan_destroy(plan);
            CHECK(st == WARPFFT_SUCCESS, "k %ld: second destroy: %s", k, warpfft_last_error());
        }
    } else {
        CHECK(plan == NULL, "k %ld: failed create returned a plan", k);
    }
    get(&s);
    last_calls = s.calls;
    arm(0);
    wf_cache_release(); /* the next walk starts from the same cache */
    get(&s);
    size_t records = wf_module_records(NULL, 0);
    CHECK(s.live_allocs == base_allocs && s.live_fft_plans == 0 && s.live_links == 0 &&
              s.ctx_depth == 0 && s.violations == 0 && s.live_modules == (long)records,
          "type %d %dD %s method %d, call %ld (%s) failing: %ld allocations left, %ld cuFFT "
          "plans, %ld link states, context depth %ld, %ld violations, %ld modules / %zu cached",
          cf->type, cf->dim, cf->precision == WARPFFT_F64 ? "f64" : "f32", cf->method, k,
          s.failed_fn, s.live_allocs - base_allocs, s.live_fft_plans, s.live_links, s.ctx_depth,
          s.violations, s.live_modules, records);
    return injected;
}

static long walk_all(void) {
    long lifecycles = 0;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        arrays a = arrays_make(&configs[i]);
        standin_counts s;
        get(&s);
        long base = s.live_allocs;
        for (int cache = CACHE_OFF; cache <= CACHE_WARM; cache++) {
            long k = 1;
            while (walk(&configs[i], &a, k, base, cache) && k < 100000)
                k++, lifecycles++;
            lifecycles++; /* the last walk ran to the end without a failure */
            printf("  type %d %dD %s %s ntransf %lld upsampfac %g stream %#llx check_points %d, "
                   "bin_size %d, %s: %ld "
                   "lifecycles (a whole one: %ld calls)\n",
                   configs[i].type, configs[i].dim,
                   configs[i].precision == WARPFFT_F64 ? "f64" : "f32",
                   configs[i].method == WARPFFT_METHOD_SM ? "SM" : "GM",
                   (long long)configs[i].ntransf, configs[i].upsampfac,
                   (unsigned long long)configs[i].stream, configs[i].check_points,
                   (int)configs[i].bin_size, cache_mode_name[cache], k, last_calls);
        }
        arrays_free(&a);
    }
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    return lifecycles;
}

/* Issue 19 item 4: a setpts that fails before doing anything keeps the previous points. */
static void test_setpts_keeps_points(void) {
    const config *cf = &configs[2];
    arrays a = arrays_make(cf);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.method = cf->method;
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, 1, 1e-4,
                                 (warpfft_precision)cf->precision, &o, &plan);
    CHECK(st == 0, "create: %s", warpfft_last_error());
    if (st)
        return;
    st = warpfft_setpts(plan, (warpfft_precision)cf->precision, M, a.x, a.y, a.z);
    CHECK(st == 0, "setpts: %s", warpfft_last_error());
    arm(1); /* its first call: the context push */
    st = warpfft_setpts(plan, (warpfft_precision)cf->precision, M / 2, a.x, a.y, a.z);
    CHECK(st == WARPFFT_ERR_CUDA && strstr(warpfft_last_error(), "cuCtxPushCurrent"),
          "setpts with a failing context push: %s", warpfft_last_error());
    arm(0);
    warpfft_plan_info info;
    warpfft_plan_get_info(plan, &info);
    CHECK(info.n_points == M, "n_points after the failed setpts: %lld", (long long)info.n_points);
    st = warpfft_execute(plan, (warpfft_precision)cf->precision, a.c, a.fk);
    CHECK(st == 0, "execute with the previous points: %s", warpfft_last_error());
    /* Item 2: a destroy whose context push fails keeps the handle; the next destroy frees it. */
    arm(1);
    st = warpfft_plan_destroy(plan);
    CHECK(st == WARPFFT_ERR_CUDA, "destroy with a failing context push: %s", warpfft_last_error());
    arm(0);
    CHECK(warpfft_plan_get_info(plan, &info) == 0 && info.n_points == M,
          "the plan after a failed destroy: %s", warpfft_last_error());
    CHECK(warpfft_plan_destroy(plan) == 0, "second destroy: %s", warpfft_last_error());
    arrays_free(&a);
}

/* Issue 19 item 8: with a non-blocking plan stream, nothing but a wait orders a synchronous
 * upload (legacy stream) before the plan's kernels; the stand-in flags work on another stream
 * while such a copy may still be landing. Also warpfft_memset. */
static void test_stream_order(void) {
    const config *cf = &configs[0];
    arrays a = arrays_make(cf);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = 0x5150; /* any non-zero stream is non-blocking for the stand-in */
    standin_counts s0, s;
    get(&s0);
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(1, 1, n_modes, 1, 1, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == 0, "create on a custom stream: %s", warpfft_last_error());
    float x[M];
    for (int j = 0; j < M; j++)
        x[j] = (float)j / M;
    st = warpfft_memcpy_htod(0, a.x, x, sizeof x);
    if (st == 0 && plan)
        st = warpfft_setpts(plan, WARPFFT_F32, M, a.x, NULL, NULL);
    CHECK(st == 0, "upload + setpts: %s", warpfft_last_error());
    if (st == 0)
        st = warpfft_memset(0, a.c, 0x3c, M * 8);
    if (st == 0)
        st = warpfft_memcpy_htod(0, a.c, x, sizeof x);
    if (st == 0)
        st = warpfft_execute(plan, WARPFFT_F32, a.c, a.fk);
    CHECK(st == 0, "memset + upload + execute: %s", warpfft_last_error());
    get(&s);
    CHECK(s.violations == s0.violations, "%ld ordering or bounds violations",
          s.violations - s0.violations);
    unsigned char back[M * 8];
    CHECK(warpfft_memcpy_dtoh(0, back, a.c, sizeof back) == 0 && back[sizeof x] == 0x3c &&
              back[sizeof back - 1] == 0x3c && memcmp(back, x, sizeof x) == 0,
          "warpfft_memset then the copy: %s", warpfft_last_error());
    CHECK(warpfft_memset(0, NULL, 0, 8) == WARPFFT_ERR_INVALID_ARG &&
              warpfft_memset(0, NULL, 0, 0) == 0,
          "warpfft_memset NULL: %s", warpfft_last_error());
    warpfft_plan_destroy(plan);
    arrays_free(&a);
}

/* ---- the plan cache (cache.c) ---- */

static warpfft_plan make_plan(int type, int64_t n0, int64_t ntransf, int precision) {
    int64_t n[3] = {n0, 1, 1};
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(type, 1, n, 1, ntransf, 1e-4, (warpfft_precision)precision, NULL,
                                 &plan);
    CHECK(st == 0, "create (type %d, N %lld, ntransf %lld): %s", type, (long long)n0,
          (long long)ntransf, warpfft_last_error());
    return st == 0 ? plan : NULL;
}

static void destroy_plan(warpfft_plan plan) {
    CHECK(plan && warpfft_plan_destroy(plan) == 0, "destroy: %s", warpfft_last_error());
}

/* Live allocations and cuFFT plans, and cufftMakePlanMany64 calls so far. */
static standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

/* A second create of a shape makes no cuFFT plan and no fine grid; another shape does. */
static void test_cache_reuse(void) {
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    standin_counts s0 = counts();
    warpfft_plan a = make_plan(1, 64, 1, WARPFFT_F32);
    standin_counts s1 = counts();
    CHECK(s1.fft_makes == s0.fft_makes + 1, "first plan: %ld cuFFT plans made",
          s1.fft_makes - s0.fft_makes);
    size_t ws_first = 0, ws_second = 0;
    warpfft_plan_workspace_bytes(a, &ws_first);
    destroy_plan(a);
    standin_counts s2 = counts();
    CHECK(s2.live_fft_plans == 1 && s2.live_allocs > s0.live_allocs,
          "after destroy the cache holds the cuFFT plan (%ld live) and buffers (%ld)",
          s2.live_fft_plans, s2.live_allocs - s0.live_allocs);
    a = make_plan(1, 64, 1, WARPFFT_F32); /* same shape: all from the cache */
    standin_counts s3 = counts();
    CHECK(s3.fft_makes == s2.fft_makes && s3.fft_creates == s2.fft_creates,
          "second create of the same shape made %ld cuFFT plans", s3.fft_makes - s2.fft_makes);
    wf_cache_stats cs;
    wf_cache_get_stats(&cs);
    CHECK(cs.items == 0 && cs.bytes == 0, "the plan took every cached item: %zu left (%zu B)",
          cs.items, cs.bytes);
    warpfft_plan_workspace_bytes(a, &ws_second);
    CHECK(ws_first == ws_second, "workspace %zu then %zu bytes", ws_first, ws_second);
    /* the cached buffers are the plan's: setpts + execute stay inside them */
    arrays arr = arrays_make(&configs[0]);
    CHECK(a && warpfft_setpts(a, WARPFFT_F32, M, arr.x, NULL, NULL) == 0 &&
              warpfft_execute(a, WARPFFT_F32, arr.c, arr.fk) == 0,
          "a plan from the cache runs: %s", warpfft_last_error());
    /* type 2 of the same fine grid shares the cuFFT plan (direction is an exec argument) */
    warpfft_plan b = make_plan(2, 64, 1, WARPFFT_F32);
    destroy_plan(a);
    standin_counts s4 = counts();
    warpfft_plan c = make_plan(2, 64, 1, WARPFFT_F32);
    standin_counts s5 = counts();
    CHECK(s5.fft_makes == s4.fft_makes, "type 2 of a cached fine grid made a cuFFT plan");
    /* other shapes: another fine grid, batch or precision each make their own */
    warpfft_plan d = make_plan(1, 96, 1, WARPFFT_F32);
    warpfft_plan e = make_plan(1, 64, 2, WARPFFT_F32);
    warpfft_plan f = make_plan(1, 64, 1, WARPFFT_F64);
    standin_counts s6 = counts();
    CHECK(s6.fft_makes == s5.fft_makes + 3, "three new shapes made %ld cuFFT plans",
          s6.fft_makes - s5.fft_makes);
    warpfft_plan all[] = {b, c, d, e, f};
    for (int i = 0; i < 5; i++)
        destroy_plan(all[i]);
    warpfft_release_cached();
    standin_counts s7 = counts();
    CHECK(s7.live_fft_plans == 0 && s7.live_allocs == s0.live_allocs + 5 && s7.violations == 0,
          "after warpfft_release_cached: %ld cuFFT plans, %ld allocations (5 are the arrays), "
          "%ld violations",
          s7.live_fft_plans, s7.live_allocs - s0.live_allocs, s7.violations - s0.violations);
    arrays_free(&arr);
}

/* Idle items are bounded by count and by bytes; the oldest go first. */
static void test_cache_bounds(void) {
    warpfft_release_cached();
    standin_counts s0 = counts();
    wf_cache_set_limits(3, (size_t)1 << 30);
    warpfft_plan p[5];
    for (int i = 0; i < 5; i++)
        p[i] = make_plan(1, 32 + 8 * i, 1, WARPFFT_F32); /* 5 shapes: 5 cuFFT + 5 factor items */
    for (int i = 0; i < 5; i++)
        destroy_plan(p[i]);
    wf_cache_stats cs;
    wf_cache_get_stats(&cs);
    standin_counts s1 = counts();
    CHECK(cs.items == 3 && s1.live_fft_plans <= 2,
          "count bound 3: %zu items cached, %ld cuFFT plans live", cs.items, s1.live_fft_plans);
    /* the newest survive: the last plan's shape is a hit */
    warpfft_plan q = make_plan(1, 64, 1, WARPFFT_F32);
    CHECK(counts().fft_makes == s1.fft_makes, "the most recent shape was evicted");
    destroy_plan(q);
    /* a byte bound below one plan's buffers: nothing is kept */
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, 4096);
    q = make_plan(1, 4096, 1, WARPFFT_F32); /* fine grid 64 KiB */
    destroy_plan(q);
    wf_cache_get_stats(&cs);
    standin_counts s2 = counts();
    CHECK(cs.bytes <= 4096 && s2.live_fft_plans == 0,
          "byte bound 4096: %zu bytes cached, %ld cuFFT plans live", cs.bytes, s2.live_fft_plans);
    /* disabled: destroy frees everything */
    wf_cache_set_limits(0, (size_t)1 << 30);
    q = make_plan(1, 64, 1, WARPFFT_F32);
    destroy_plan(q);
    standin_counts s3 = counts();
    CHECK(s3.live_allocs == s0.live_allocs && s3.live_fft_plans == 0,
          "cache off: %ld allocations, %ld cuFFT plans left", s3.live_allocs - s0.live_allocs,
          s3.live_fft_plans);
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
}

/* When the device is full, the cache is emptied and the allocation (or cuFFT plan) retried:
 * the cache never causes an out-of-memory. */
static void test_cache_oom(void) {
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    /* b's needs, measured */
    standin_counts s0 = counts();
    warpfft_plan b = make_plan(1, 200, 1, WARPFFT_F32);
    size_t need = counts().live_bytes - s0.live_bytes;
    destroy_plan(b);
    warpfft_release_cached();
    /* a big shape in the cache, then no room for anything else */
    destroy_plan(make_plan(1, 1 << 14, 1, WARPFFT_F32));
    wf_cache_stats c0, c1;
    wf_cache_get_stats(&c0);
    CHECK(c0.bytes > need, "the cache holds %zu bytes, b needs %zu", c0.bytes, need);
    mem_limit(counts().live_bytes);
    b = make_plan(1, 200, 1, WARPFFT_F32);
    wf_cache_get_stats(&c1);
    CHECK(b && c1.oom_retries == c0.oom_retries + 1 && c1.items == 0,
          "full device: %s; %llu retries, %zu items cached", b ? "created" : "failed",
          (unsigned long long)(c1.oom_retries - c0.oom_retries), c1.items);
    mem_limit(0);
    destroy_plan(b);
    warpfft_release_cached();
    /* room for every allocation but cuFFT's own memory: cufftMakePlanMany64 is retried */
    destroy_plan(make_plan(1, 1 << 14, 1, WARPFFT_F32));
    wf_cache_get_stats(&c0);
    mem_limit(counts().live_bytes + need - 1);
    b = make_plan(1, 200, 1, WARPFFT_F32);
    wf_cache_get_stats(&c1);
    CHECK(b && c1.oom_retries == c0.oom_retries + 1, "cuFFT out of memory: %s (%s); %llu retries",
          b ? "created" : "failed", warpfft_last_error(),
          (unsigned long long)(c1.oom_retries - c0.oom_retries));
    /* nothing left to release: the out-of-memory surfaces */
    warpfft_plan full = NULL;
    int64_t n[3] = {1 << 15, 1, 1};
    mem_limit(counts().live_bytes);
    int st = warpfft_plan_create(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, NULL, &full);
    CHECK(st == WARPFFT_ERR_OUT_OF_MEMORY && !full, "no room, empty cache: %s (%s)",
          warpfft_status_name(st), warpfft_last_error());
    mem_limit(0);
    destroy_plan(b);
    warpfft_release_cached();
}

/* Two threads create and destroy plans of one shape and of their own, concurrently. */
static void *churn(void *arg) {
    int64_t own = *(const int64_t *)arg;
    int *fails = calloc(1, sizeof *fails);
    for (int i = 0; i < 200 && fails; i++) {
        int64_t n = i % 2 ? own : 64;
        warpfft_plan p = NULL;
        int64_t nm[3] = {n, 1, 1};
        if (warpfft_plan_create(1 + i % 2, 1, nm, 1, 1, 1e-4, WARPFFT_F32, NULL, &p) != 0 ||
            warpfft_plan_destroy(p) != 0)
            ++*fails;
        if (i % 50 == 49)
            warpfft_release_cached();
    }
    return fails;
}

static void test_cache_threads(void) {
    warpfft_release_cached();
    standin_counts s0 = counts();
    pthread_t t[2];
    int64_t own[2] = {40, 48};
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn, &own[i]);
    for (int i = 0; i < 2; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        CHECK(r && *(int *)r == 0, "thread %d: %d failed creates or destroys", i,
              r ? *(int *)r : -1);
        free(r);
    }
    warpfft_release_cached();
    standin_counts s1 = counts();
    CHECK(s1.live_allocs == s0.live_allocs && s1.live_fft_plans == 0 &&
              s1.violations == s0.violations,
          "two threads: %ld allocations, %ld cuFFT plans left, %ld violations",
          s1.live_allocs - s0.live_allocs, s1.live_fft_plans, s1.violations - s0.violations);
}

/* ---- module loads in parallel (module.c) ---- */

static double elapsed_ms(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return 1e3 * (double)(t1.tv_sec - t0->tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* The first plan (nothing loaded yet) loads its four modules at once: one slow JIT's time,
 * not four. Runs first: sort, bin_1d_f64, deconvolve_1d_f64 and si_1d_f64_w*_spread_* are
 * loaded by no one before. */
static void test_parallel_loads(void) {
    slow_load(300);
    standin_counts s0 = counts();
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    warpfft_plan p = make_plan(1, 64, 1, WARPFFT_F64);
    double ms = elapsed_ms(&t0);
    standin_counts s1 = counts();
    CHECK(s1.live_modules == s0.live_modules + 4 && wf_module_records(NULL, 0) == 4,
          "%ld modules loaded, %zu recorded (4 expected)", s1.live_modules - s0.live_modules,
          wf_module_records(NULL, 0));
    CHECK(ms < 750, "four 300 ms loads took %.0f ms: not in parallel", ms);
    destroy_plan(p);
    warpfft_release_cached();
    slow_load(0);
}

/* The si_* modules recorded so far (load order), up to 8. */
static size_t si_records(const char *names[8]) {
    wf_module_record r[64];
    size_t n = wf_module_records(r, 64), k = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        if (strncmp(r[i].name, "si_", 3) == 0 && k < 8)
            names[k++] = r[i].name;
    return k;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A type-1 plan loads the spreading module of its (dim, precision, width, method) and not the
 * interpolation one; a type-2 plan of the same shape the interpolation one. Runs right after
 * test_parallel_loads: its type-1 plan loaded the only si_* module so far. */
static void test_module_per_direction(void) {
    const char *si[8] = {NULL};
    size_t n = si_records(si);
    int method = n == 1 && (ends_with(si[0], "_gm") || ends_with(si[0], "_sm"));
    CHECK(n == 1 && method && strstr(si[0], "_spread_"), "after a type-1 plan: %zu si modules, %s",
          n, n ? si[0] : "none");
    warpfft_plan p = make_plan(2, 64, 1, WARPFFT_F64);
    size_t n2 = si_records(si);
    /* "_spread_" and "_interp_" have one length: the stems before them and the methods after
     * them are the same */
    size_t stem =
        n2 == 2 && strstr(si[0], "_spread_") ? (size_t)(strstr(si[0], "_spread_") - si[0]) : 0;
    int same = stem > 0 && strlen(si[0]) == strlen(si[1]) && strncmp(si[0], si[1], stem) == 0 &&
               strncmp(si[1] + stem, "_interp_", 8) == 0 &&
               strcmp(si[0] + stem + 8, si[1] + stem + 8) == 0;
    CHECK(same,
          "after a type-2 plan of that shape: %zu si modules (%s, %s): the same stem and "
          "method, _spread_ then _interp_ expected",
          n2, n2 > 0 ? si[0] : "-", n2 > 1 ? si[1] : "-");
    destroy_plan(p);
    warpfft_release_cached();
}

/* Whether module `name` has been loaded (recorded) so far. */
static int module_loaded(const char *name) {
    wf_module_record r[64];
    size_t n = wf_module_records(r, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (strcmp(r[i].name, name) == 0)
            return 1;
    return 0;
}

/* Module scan_big is loaded by the first plan with more than WF_SCAN_BIG_BINS bins and by no
 * plan before it; that plan's checked setpts gets its totals from the three scan_big kernels
 * (emulated by the stand-in), and its workspace counts the tile sums as
 * warpfft_plan_params predicts. Runs before the walks (the earlier tests' plans are small). */
static void test_scan_big_module(void) {
    CHECK(!module_loaded("scan_big"), "scan_big loaded before any plan with many bins");
    const config *cf = &configs[8];
    arrays a = arrays_make(cf);
    warpfft_opts o;
    config_opts(cf, &o);
    warpfft_plan_info want;
    int st = warpfft_plan_params(cf->type, cf->dim, n_modes, cf->ntransf, 1e-4,
                                 (warpfft_precision)cf->precision, &o, &want);
    int64_t nbins = 1;
    for (int d = 0; d < 3 && st == 0; d++)
        nbins *= (want.n_fine[d] + want.bin_size[d] - 1) / want.bin_size[d];
    CHECK(st == 0 && nbins > WF_SCAN_BIG_BINS, "the scan_big configuration has %lld bins: %s",
          (long long)nbins, st ? warpfft_last_error() : "not more than WF_SCAN_BIG_BINS");
    warpfft_plan plan = NULL;
    st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4,
                             (warpfft_precision)cf->precision, &o, &plan);
    CHECK(st == 0 && module_loaded("scan_big"), "create with %lld bins: %s, scan_big %sloaded",
          (long long)nbins, st ? warpfft_last_error() : "ok",
          module_loaded("scan_big") ? "" : "not ");
    if (st == 0) {
        /* at creation: what plan_params predicts (tile sums included) and cuFFT's work area */
        size_t ws = 0, tiles = (size_t)(nbins + 1023) / 1024;
        CHECK(warpfft_plan_workspace_bytes(plan, &ws) == 0 &&
                  ws == want.workspace_bytes + STANDIN_FFT_WORK_BYTES &&
                  want.workspace_bytes >= tiles * 16 + (size_t)nbins * 16,
              "workspace %zu at creation, plan_params %zu, %zu tiles", ws,
              (size_t)want.workspace_bytes, tiles);
        standin_counts s0 = counts();
        st = warpfft_setpts(plan, (warpfft_precision)cf->precision, M, a.x, a.y, a.z);
        standin_counts s1 = counts();
        /* count, reduce, tiles, down, scatter, unpack: 6 launches */
        CHECK(st == 0 && s1.launches - s0.launches == 6 && s1.violations == s0.violations,
              "checked setpts with %lld bins: %s, %ld launches (6 expected), %ld violations",
              (long long)nbins, st ? warpfft_last_error() : "ok", s1.launches - s0.launches,
              s1.violations - s0.violations);
        destroy_plan(plan);
    }
    warpfft_release_cached();
    arrays_free(&a);
}

/* Two threads that need the same unloaded module: one JIT, the other waits for it. */
static void *create_2d_thread(void *arg) {
    (void)arg;
    int64_t n[3] = {16, 16, 1};
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(1, 2, n, 1, 1, 1e-2, WARPFFT_F32, NULL, &plan);
    if (st == 0)
        st = warpfft_plan_destroy(plan);
    return st == 0 ? arg : NULL;
}

static void test_one_jit_per_module(void) {
    slow_load(300);
    standin_counts s0 = counts();
    size_t r0 = wf_module_records(NULL, 0);
    pthread_t t[2];
    int ok[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, create_2d_thread, &ok[i]);
    void *r[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &r[i]);
    standin_counts s1 = counts();
    size_t r1 = wf_module_records(NULL, 0);
    CHECK(r[0] && r[1], "two threads creating 2D f32 plans: %s", warpfft_last_error());
    CHECK(s1.live_modules - s0.live_modules == (long)(r1 - r0) && r1 - r0 >= 1,
          "%ld modules loaded for %zu new records: a module was JIT-compiled twice",
          s1.live_modules - s0.live_modules, r1 - r0);
    slow_load(0);
    warpfft_release_cached();
}

/* Issue 19 item 6: fork() while another thread holds the module lock (a slow JIT). The child's
 * first call must return a clear status, not hang, and the parent must be unaffected. */
static void *create_plan_thread(void *arg) {
    const config *cf = arg;
    warpfft_plan plan = NULL;
    int64_t n[3] = {20, 1, 1};
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.method = WARPFFT_METHOD_SM;
    /* tol 1e-2 (width 3): a module no earlier test loaded, so this thread JITs under the lock */
    if (warpfft_plan_create(cf->type, cf->dim, n, 1, 1, 1e-2, WARPFFT_F32, &o, &plan) == 0)
        warpfft_plan_destroy(plan);
    return NULL;
}

static void test_fork(void) {
    slow_load(1000);
    pthread_t t;
    static const config cf = {1, 1, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 0, 0};
    pthread_create(&t, NULL, create_plan_thread, (void *)&cf);
    usleep(100 * 1000); /* the thread is inside cuModuleLoadData, holding the module lock */
    fflush(stdout);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);                 /* a deadlock kills the child: the parent sees SIGALRM */
        warpfft_release_cached(); /* forgets the parent's items, touches no CUDA */
        warpfft_plan plan = NULL;
        int64_t n[3] = {20, 1, 1};
        int st = warpfft_plan_create(1, 1, n, 1, 1, 1e-2, WARPFFT_F32, NULL, &plan);
        int ok = st != WARPFFT_SUCCESS && strstr(warpfft_last_error(), "fork");
        if (!ok)
            printf("child: status %s, message '%s'\n", warpfft_status_name(st),
                   warpfft_last_error());
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK(ms < 500, "fork() took %.0f ms: it waited for the other thread's JIT", ms);
    int ws = 0;
    waitpid(pid, &ws, 0);
    CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the child's first call after fork: %s",
          WIFSIGNALED(ws) ? (WTERMSIG(ws) == SIGALRM ? "hung (deadlock)" : "crashed")
                          : "wrong status or message");
    pthread_join(t, NULL);
    slow_load(0);
}

/* A module with no image (an nvrtc-only build's, until the NVRTC loader compiles it): loading it
 * is a clear WARPFFT_ERR_NO_KERNEL, and the build info still reports. */
static void test_module_without_images(void) {
    const wf_device *dev = NULL;
    CUmodule mod = NULL;
    CHECK(wf_device_get(0, &dev) == WARPFFT_SUCCESS, "%s", warpfft_last_error());
    warpfft_status st = dev ? wf_module_get(dev, "noimage", &mod) : WARPFFT_ERR_INTERNAL;
    CHECK(st == WARPFFT_ERR_NO_KERNEL && mod == NULL &&
              strstr(warpfft_last_error(), "module 'noimage'") &&
              strstr(warpfft_last_error(), "only the kernel sources"),
          "status %d: %s", st, warpfft_last_error());
    const char *name = NULL;
    size_t n_blobs = 99;
    CHECK(warpfft_embedded_module(warpfft_embedded_module_count() - 1, &name, &n_blobs) ==
                  WARPFFT_SUCCESS &&
              name && strcmp(name, "noimage") == 0 && n_blobs == 0,
          "%s", warpfft_last_error());
    CHECK(warpfft_embedded_blob(warpfft_embedded_module_count() - 1, 0, NULL, NULL, NULL, NULL) ==
              WARPFFT_ERR_INVALID_ARG,
          "blob 0 of a module without blobs");
    char info[1 << 16];
    size_t needed = 0;
    CHECK(warpfft_runtime_info(0, info, sizeof info, &needed) == WARPFFT_SUCCESS &&
              needed < sizeof info && strstr(info, "\"embedded_modules\""),
          "runtime_info: %s", warpfft_last_error());
}

int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h || !(arm = (standin_arm_fn)dlsym(h, "standin_arm")) ||
        !(get = (standin_get_fn)dlsym(h, "standin_get")) ||
        !(slow_load = (standin_slow_load_fn)dlsym(h, "standin_slow_load")) ||
        !(mem_limit = (standin_mem_limit_fn)dlsym(h, "standin_mem_limit"))) {
        printf("FATAL: the stand-in libcuda.so.1 is not first on LD_LIBRARY_PATH (%s)\n",
               h ? "no standin_arm" : dlerror());
        return 1;
    }
    /* Driver and cuFFT loading happen once per process: before any failure is injected. */
    char path[512];
    int version = 0;
    if (warpfft_init(0) != 0 || warpfft_cufft_probe(path, sizeof path, &version) != 0 ||
        !strstr(path, "standin")) {
        printf("FATAL: init or cuFFT: %s (cuFFT %s)\n", warpfft_last_error(), path);
        return 1;
    }
    test_parallel_loads();
    test_module_per_direction();
    test_scan_big_module();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long lifecycles = walk_all();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    test_setpts_keeps_points();
    test_stream_order();
    test_cache_reuse();
    test_cache_bounds();
    test_cache_oom();
    test_cache_threads();
    test_one_jit_per_module();
    destroy_plan(make_plan(1, 64, 1, WARPFFT_F32)); /* the fork's child inherits a full cache */
    test_fork();
    test_module_without_images();
    warpfft_release_cached();
    standin_counts s;
    get(&s);
    CHECK(s.live_allocs == 0 && s.ctx_depth == 0 && s.violations == 0,
          "at exit: %ld allocations, context depth %ld, %ld violations", s.live_allocs, s.ctx_depth,
          s.violations);
    char label[128];
    snprintf(label, sizeof label,
             "fault injection: %ld lifecycles walked (%zu configurations, %.1f s), ", lifecycles,
             sizeof configs / sizeof configs[0],
             (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    dlclose(h);
    return check_summary(label);
}
