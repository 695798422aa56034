/*
 * test_fault_walk.c — plan lifecycles under injected failures: walk_all fails each driver and
 * cuFFT call of create -> setpts -> execute -> setpts_check -> destroy in turn, for every
 * configuration and plan-cache state, and checks the status, that the plan still works, and
 * that nothing leaks; then a failed setpts that keeps the previous points, a failed destroy
 * that keeps the handle, and the ordering of synchronous copies before work on a plan stream.
 */
#include "test_fault.h"

static long last_calls;           /* calls the last walk made */
static uint64_t oom_retries_seen; /* when the walk began */

void note_oom_baseline(void) {
    wf_cache_stats cs;
    wf_cache_get_stats(&cs);
    oom_retries_seen = cs.oom_retries;
}

/* An injected failure must surface as a clear status: not success (unless the failed call was
 * a release whose result nothing depends on), not INTERNAL, and a message naming what failed. */
void check_status(const char *step, int st, long k) {
    standin_counts s;
    get(&s);
    if (!s.failed_at) {
        CHECK(st == WARPFFT_SUCCESS, "%s: no failure injected (k = %ld) but status %s: %s", step, k,
              warpfft_status_name(st), warpfft_last_error());
        return;
    }
    int release =
        strcmp(s.failed_fn, "cuMemFree") == 0 || strcmp(s.failed_fn, "cuLinkDestroy") == 0;
    /* destroy's wait before caching: on failure it frees instead, as it did before the cache
     * (also a type-3 setpts3 that changes grids: it destroys its inner type-2 transform) */
    release |= (strcmp(step, "destroy") == 0 || strcmp(step, "setpts3 (new grids)") == 0) &&
               strcmp(s.failed_fn, "cuStreamSynchronize") == 0;
    /* the Toeplitz kernel's type-1 transform goes to the cache after the kernel's own wait:
     * its wait before caching is such a release */
    release |=
        strncmp(step, "toeplitz ", 9) == 0 && strcmp(s.failed_fn, "cuStreamSynchronize") == 0;
    /* type 3's memory check asks the device's size; unknown, the allocations say */
    release |= strncmp(step, "setpts3", 7) == 0 && strcmp(s.failed_fn, "cuDeviceTotalMem") == 0;
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

int count_lines(const char *log, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        n += strncmp(l, prefix, len) == 0;
    return n;
}

void set_injected(int *flag) {
    standin_counts s;
    get(&s);
    *flag |= s.failed_at != 0;
}

void walk_arm(long k) {
    note_oom_baseline();
    arm(k);
}

void check_step(const char *step, int st, long k, int *injected) {
    check_status(step, st, k);
    set_injected(injected);
}

const char *const cache_mode_name[] = {"cache off", "cache empty", "cache warm"};

/* One lifecycle with call k failing; returns 1 when the failure was injected somewhere. */
static int walk(const void *cfp, const void *ap, long k, long base_allocs, int cache) {
    const config *cf = cfp;
    const arrays *a = ap;
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
    walk_arm(k);
    int st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4,
                                 (warpfft_precision)cf->precision, &o, &plan);
    check_step("create", st, k, &injected);
    standin_counts s;
    if (st == WARPFFT_SUCCESS) {
        get(&s);
        long after_create = s.live_allocs;
        st = config_setpts(cf, plan, a);
        check_step("setpts", st, k, &injected);
        if (st != WARPFFT_SUCCESS) {
            get(&s);
            /* nothing the failed call allocated is kept (this was the plan's first setpts) */
            CHECK(s.live_allocs == after_create, "k %ld: failed setpts (%s) left %ld allocations",
                  k, s.failed_fn, s.live_allocs - after_create);
            arm(0);
            st = config_setpts(cf, plan, a);
            CHECK(st == WARPFFT_SUCCESS, "k %ld: setpts after a failed one: %s", k,
                  warpfft_last_error());
        }
        WALK_STEP("plan", "execute",
                  warpfft_execute(plan, (warpfft_precision)cf->precision, a->c, a->fk), k,
                  injected);
        /* unchecked: reads the flag and the totals back (copy + sync); checked: nothing */
        WALK_STEP("plan", "setpts_check", warpfft_setpts_check(plan), k, injected);
        WALK_STEP("plan", "destroy", warpfft_plan_destroy(plan), k, injected);
    } else {
        CHECK(plan == NULL, "k %ld: failed create returned a plan", k);
    }
    get(&s);
    last_calls = s.calls;
    check_walk_left_nothing(base_allocs, k, "type %d %dD %s method %d", cf->type, cf->dim,
                            cf->precision == WARPFFT_F64 ? "f64" : "f32", cf->method);
    return injected;
}

void check_walk_left_nothing(long base_allocs, long k, const char *label_fmt, ...) {
    arm(0);
    char label[96];
    va_list ap;
    va_start(ap, label_fmt);
    vsnprintf(label, sizeof label, label_fmt, ap);
    va_end(ap);
    wf_cache_release(); /* the next walk starts from the same cache */
    standin_counts s;
    get(&s);
    size_t records = wf_module_records(NULL, 0);
    CHECK(s.live_allocs == base_allocs && s.live_fft_plans == 0 && s.live_links == 0 &&
              s.ctx_depth == 0 && s.violations == 0 && s.live_modules == (long)records,
          "%s, call %ld (%s) failing: %ld allocations left, %ld cuFFT plans, %ld link states, "
          "context depth %ld, %ld violations, %ld modules / %zu cached",
          label, k, s.failed_fn, s.live_allocs - base_allocs, s.live_fft_plans, s.live_links,
          s.ctx_depth, s.violations, s.live_modules, records);
}

long walk_cache_modes(walk_fn walk, void (*report)(const void *cf, int cache, long k),
                      const void *cf, const void *a) {
    standin_counts s;
    get(&s);
    long base = s.live_allocs, lifecycles = 0;
    for (int cache = CACHE_OFF; cache <= CACHE_WARM; cache++) {
        long k = 1;
        while (walk(cf, a, k, base, cache) && k < 100000)
            k++, lifecycles++;
        lifecycles++; /* the last walk ran to the end without a failure */
        report(cf, cache, k);
    }
    return lifecycles;
}

static void report(const void *cfp, int cache, long k) {
    const config *cf = cfp;
    printf("  type %d %dD %s%s %s ntransf %lld upsampfac %g stream %#llx check_points %d, "
           "bin_size %d, point sets %lld, deterministic %d, %s: %ld "
           "lifecycles (a whole one: %ld calls)\n",
           cf->type, cf->dim, cf->precision == WARPFFT_F64 ? "f64" : "f32", cf->real ? " real" : "",
           method_name(cf->method), (long long)cf->ntransf, cf->upsampfac,
           (unsigned long long)cf->stream, cf->check_points, (int)cf->bin_size,
           (long long)(cf->n_sets > 1 ? cf->n_sets : 1), cf->deterministic, cache_mode_name[cache],
           k, last_calls);
}

long walk_all(void) {
    long lifecycles = 0;
    for (size_t i = 0; i < n_configs; i++) {
        arrays a = arrays_make(&configs[i]);
        lifecycles += walk_cache_modes(walk, report, &configs[i], &a);
        arrays_free(&a);
    }
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    return lifecycles;
}

/* Issue 19 item 4: a setpts that fails before doing anything keeps the previous points. */
void test_setpts_keeps_points(void) {
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
void test_stream_order(void) {
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
