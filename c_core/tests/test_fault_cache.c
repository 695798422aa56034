/*
 * test_fault_cache.c — the plan cache (cache.c) on the stand-in driver and cuFFT: a second plan
 * of a shape takes its cuFFT plan and buffers from the cache, the count and byte bounds, the
 * out-of-memory that empties the cache and retries, and two threads creating and destroying
 * plans at once.
 */
#include "test_fault.h"

/* A second create of a shape makes no cuFFT plan and no fine grid; another shape does. */
void test_cache_reuse(void) {
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
void test_cache_bounds(void) {
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
void test_cache_oom(void) {
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

void test_cache_threads(void) {
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
