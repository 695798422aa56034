/*
 * test_toeplitz_cache.c — the plan cache's Toeplitz items (runtime/cache.h, WF_CACHE_TOEPLITZ;
 * plans/toeplitz.c) on the stand-in driver and cuFFT of standin.h, with the whole C core under
 * ASan + UBSan (run_tests.sh): a destroyed operator's step cuFFT plans and its one device block
 * (work grid, spectrum, cuFFT work area) go to the cache, and the next operator of its shape
 * takes them, making no cuFFT plan and fewer allocations (the counts, before and after, are
 * printed); another shape (batch, the pruned steps' slab count, a spectrum or none, precision)
 * does not take them; the cache's bounds, warpfft_release_cached, an out-of-memory that empties
 * the cache and retries; operators of the live-plan pool (whose eviction waits for their fence,
 * never for their stream: the stream may be gone) give theirs back too, and the next operator on
 * another stream takes them without touching the old one. The fault walks of test_fault_toeplitz.c
 * cover every failing call of a build from the cache ("cache warm").
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime/cache.h"
#include "standin.h"
#include "warpfft.h"

int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;
static standin_mem_limit_fn mem_limit;
static standin_log_fn call_log;
static standin_stream_dead_fn stream_dead;

enum { MT = 100 }; /* points of every operator */

static void *xs[3], *ws, *ins, *outs; /* big enough for every shape below */

static standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

static wf_cache_stats cache_stats(void) {
    wf_cache_stats s;
    wf_cache_get_stats(&s);
    return s;
}

static int count_lines(const char *log, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        n += strncmp(l, prefix, len) == 0;
    return n;
}

typedef struct shape {
    int dim, precision, weights;
    int64_t n[3], ntransf, M;
    uint64_t stream;
    int pruned; /* WARPFFT_TOEPLITZ_FFT=pruned: two steps (these small grids take one) */
} shape;

static int create(const shape *s, warpfft_toeplitz *op) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = s->stream;
    if (s->pruned)
        setenv("WARPFFT_TOEPLITZ_FFT", "pruned", 1);
    else
        unsetenv("WARPFFT_TOEPLITZ_FFT");
    int st =
        warpfft_toeplitz_create(s->dim, s->n, -1, s->ntransf, 1e-5, (warpfft_precision)s->precision,
                                &o, s->M, xs[0], xs[1], xs[2], s->weights, ws, op);
    unsetenv("WARPFFT_TOEPLITZ_FFT");
    return st;
}

/* What one create asked of the stand-in. */
typedef struct build_cost {
    long allocs, fft_creates, fft_makes;
} build_cost;

static build_cost measured_create(const shape *s, warpfft_toeplitz *op) {
    static char log[1 << 18];
    standin_counts c0 = counts();
    arm(0); /* restarts the call log */
    int st = create(s, op);
    call_log(log, sizeof log);
    standin_counts c1 = counts();
    CHECK(st == 0 && c1.calls < STANDIN_LOG_MAX, "create %dD: %s (%ld calls)", s->dim,
          warpfft_last_error(), c1.calls);
    build_cost b = {count_lines(log, "cuMemAlloc"), c1.fft_creates - c0.fft_creates,
                    c1.fft_makes - c0.fft_makes};
    return b;
}

static int apply(const shape *s, warpfft_toeplitz op) {
    return warpfft_toeplitz_apply(op, (warpfft_precision)s->precision, 0, ins, outs);
}

static void expect_clean(const char *part, const standin_counts *s0) {
    warpfft_release_cached();
    standin_counts s = counts();
    CHECK(s.live_allocs == s0->live_allocs && s.live_fft_plans == 0 && s.ctx_depth == 0 &&
              s.violations == s0->violations && cache_stats().items == 0,
          "%s: %ld allocations, %ld cuFFT plans left, depth %ld, %ld violations", part,
          s.live_allocs - s0->live_allocs, s.live_fft_plans, s.ctx_depth,
          s.violations - s0->violations);
}

static const shape shapes[] = {
    {1, WARPFFT_F32, WARPFFT_WEIGHTS_NONE, {12, 1, 1}, 1, MT, 0, 0},
    {2, WARPFFT_F64, WARPFFT_WEIGHTS_REAL, {12, 7, 1}, 3, MT, 0x5150, 1},
    {2, WARPFFT_F32, WARPFFT_WEIGHTS_COMPLEX, {12, 7, 1}, 1, MT, 0, 0},
    {3, WARPFFT_F64, WARPFFT_WEIGHTS_COMPLEX, {12, 7, 5}, 2, MT, 0, 1},
    {3, WARPFFT_F32, WARPFFT_WEIGHTS_REAL, {12, 7, 5}, 2, MT, 0x5150, 0},
};

/* The kernel's route (toeplitz_kernel.c): with real weights or none a real-data type 1 (R2C /
 * D2Z) and a C2R / Z2D of the L grid, no complex FFT; with complex weights complex ones only.
 * And its L-grid plan is the plan cache's item of that grid and kind: after the first build, a
 * second operator of the shape (the first destroyed into the cache) makes none. */
static void test_kernel_route(void) {
    static char log[1 << 18];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        int f64 = s->precision == WARPFFT_F64, real = s->weights != WARPFFT_WEIGHTS_COMPLEX;
        warpfft_release_cached();
        warpfft_toeplitz op = NULL;
        arm(0);
        int st = create(s, &op);
        call_log(log, sizeof log);
        int r2c = count_lines(log, f64 ? "cufftExecD2Z" : "cufftExecR2C");
        int c2r = count_lines(log, f64 ? "cufftExecZ2D" : "cufftExecC2R");
        int c2c = count_lines(log, f64 ? "cufftExecZ2Z" : "cufftExecC2C");
        CHECK(st == 0 && (real ? r2c == 1 && c2r == 1 && c2c == 0 : r2c + c2r == 0 && c2c == 2),
              "%dD %s weights %d: status %d, R2C %d, C2R %d, C2C %d", s->dim, f64 ? "f64" : "f32",
              s->weights, st, r2c, c2r, c2c);
        warpfft_toeplitz_destroy(op);
        warpfft_toeplitz op2 = NULL;
        CHECK(measured_create(s, &op2).fft_makes == 0, "%dD weights %d: a second build made plans",
              s->dim, s->weights);
        warpfft_toeplitz_destroy(op2);
    }
    warpfft_release_cached();
}

/* A second operator of a shape makes no cuFFT plan and allocates none of the block; it runs
 * inside the buffers it took; its workspace is the first one's. Measured against an operator
 * built while the first is alive (the plan cache warm with its kernel's type-1 items, but no
 * operator item). */
static void test_second_build(void) {
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        warpfft_release_cached();
        wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
        standin_counts s0 = counts();
        warpfft_toeplitz a = NULL, a2 = NULL, b = NULL;
        build_cost first = measured_create(s, &a);
        build_cost warm = measured_create(s, &a2);
        warpfft_toeplitz_info ia, ib;
        CHECK(a && a2 && warpfft_toeplitz_get_info(a, &ia) == 0 && apply(s, a) == 0);
        if (!a || !a2)
            continue;
        CHECK(warm.fft_makes == ia.fft_steps && warm.allocs < first.allocs,
              "no operator item: %ld cuFFT plans, %ld allocations (first %ld)", warm.fft_makes,
              warm.allocs, first.allocs);
        wf_cache_stats c0 = cache_stats();
        CHECK(warpfft_toeplitz_destroy(a2) == 0, "destroy: %s", warpfft_last_error());
        wf_cache_stats c1 = cache_stats();
        CHECK(c1.items == c0.items + 1 && c1.bytes == c0.bytes + ia.workspace_bytes,
              "the destroyed operator's plans and block cached: %zu items, %zu bytes (%zu)",
              c1.items - c0.items, c1.bytes - c0.bytes, ia.workspace_bytes);
        CHECK(warpfft_toeplitz_destroy(a) == 0, "destroy: %s", warpfft_last_error());
        c1 = cache_stats();
        build_cost second = measured_create(s, &b);
        wf_cache_stats c2 = cache_stats();
        printf("  Toeplitz %dD %s weights %d ntransf %lld, %d FFT step(s): cold build %ld "
               "allocations, %ld cuFFT plans; no operator item %ld, %ld; from the cache %ld, "
               "%ld\n",
               s->dim, s->precision == WARPFFT_F64 ? "f64" : "f32", s->weights,
               (long long)s->ntransf, ia.fft_steps, first.allocs, first.fft_makes, warm.allocs,
               warm.fft_makes, second.allocs, second.fft_makes);
        CHECK(second.fft_makes == 0 && second.fft_creates == 0,
              "second build of a shape: %ld cuFFT plans made, %ld created", second.fft_makes,
              second.fft_creates);
        CHECK(second.allocs == warm.allocs - 1, "from the cache: %ld allocations (%ld without)",
              second.allocs, warm.allocs);
        CHECK(c2.toeplitz_hits == c1.toeplitz_hits + 1 && c2.items == c1.items - 1,
              "Toeplitz hits %llu, %zu items left",
              (unsigned long long)(c2.toeplitz_hits - c1.toeplitz_hits), c2.items);
        CHECK(b && warpfft_toeplitz_get_info(b, &ib) == 0 &&
                  ib.workspace_bytes == ia.workspace_bytes && ib.fft_steps == ia.fft_steps,
              "workspace %zu then %zu", ia.workspace_bytes, ib.workspace_bytes);
        /* the stand-in cuFFT checks every transform stays inside the grid it took */
        CHECK(b && apply(s, b) == 0 &&
                  warpfft_toeplitz_apply(b, (warpfft_precision)s->precision, 1, outs, outs) == 0,
              "an operator from the cache applies: %s", warpfft_last_error());
        CHECK(warpfft_toeplitz_destroy(b) == 0);
        expect_clean("second build", &s0);
    }
}

/* Another shape does not take an item: the batch, the pruned first step's slab count (the same
 * grid), a spectrum or none (a zero operator), precision, the FFT layout. */
static void test_other_shapes(void) {
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    standin_counts s0 = counts();
    shape base = {2, WARPFFT_F32, WARPFFT_WEIGHTS_REAL, {12, 12, 1}, 2, MT, 0, 1};
    shape others[6];
    for (int i = 0; i < 6; i++)
        others[i] = base;
    others[0].ntransf = 3;
    others[1].n[1] = 11; /* L = 24 x 24 as base, but 11 slabs in the first pruned step */
    others[2].M = 0;
    others[3].precision = WARPFFT_F64;
    others[4].pruned = 0;
    others[5].weights = WARPFFT_WEIGHTS_COMPLEX; /* a complex spectrum: more bytes */
    const char *what[6] = {"ntransf",   "slab count", "zero operator",
                           "precision", "FFT layout", "spectrum"};
    for (int i = 0; i < 6; i++) {
        warpfft_toeplitz a = NULL, b = NULL;
        CHECK(create(&base, &a) == 0 && warpfft_toeplitz_destroy(a) == 0, "%s",
              warpfft_last_error());
        build_cost c = measured_create(&others[i], &b);
        warpfft_toeplitz_info ib;
        CHECK(b && warpfft_toeplitz_get_info(b, &ib) == 0 && c.fft_makes >= ib.fft_steps,
              "%s differs: %ld cuFFT plans made", what[i], c.fft_makes);
        CHECK(b && apply(&others[i], b) == 0, "%s: %s", what[i], warpfft_last_error());
        CHECK(warpfft_toeplitz_destroy(b) == 0);
        /* both shapes' items are cached now; each takes its own */
        CHECK(create(&base, &a) == 0 && measured_create(&others[i], &b).fft_makes == 0,
              "%s: the second of each shape", what[i]);
        CHECK(warpfft_toeplitz_destroy(a) == 0 && warpfft_toeplitz_destroy(b) == 0);
        warpfft_release_cached();
    }
    /* a zero operator's item serves the next zero operator */
    shape zero = base;
    zero.M = 0;
    warpfft_toeplitz z = NULL;
    CHECK(create(&zero, &z) == 0 && warpfft_toeplitz_destroy(z) == 0);
    CHECK(measured_create(&zero, &z).fft_makes == 0, "zero operators share");
    CHECK(warpfft_toeplitz_destroy(z) == 0);
    expect_clean("other shapes", &s0);
}

/* The count and byte bounds; the cache off; warpfft_release_cached. */
static void test_bounds(void) {
    warpfft_release_cached();
    standin_counts s0 = counts();
    const shape *s = &shapes[1];
    warpfft_toeplitz a = NULL;
    wf_cache_set_limits(0, (size_t)1 << 30); /* off: destroy frees everything */
    CHECK(create(s, &a) == 0 && warpfft_toeplitz_destroy(a) == 0);
    standin_counts s1 = counts();
    CHECK(s1.live_allocs == s0.live_allocs && s1.live_fft_plans == 0 && cache_stats().items == 0,
          "cache off: %ld allocations, %ld cuFFT plans left", s1.live_allocs - s0.live_allocs,
          s1.live_fft_plans);
    CHECK(measured_create(s, &a).fft_makes > 0, "cache off: no cuFFT plan made");
    CHECK(warpfft_toeplitz_destroy(a) == 0);
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, 4096); /* below the operator's buffers */
    CHECK(create(s, &a) == 0 && warpfft_toeplitz_destroy(a) == 0);
    CHECK(cache_stats().bytes <= 4096 && measured_create(s, &a).fft_makes > 0,
          "byte bound 4096: the operator's block was kept");
    CHECK(warpfft_toeplitz_destroy(a) == 0);
    wf_cache_set_limits(2, (size_t)1 << 30); /* the operator's item is the oldest: evicted */
    CHECK(create(s, &a) == 0 && warpfft_toeplitz_destroy(a) == 0);
    warpfft_plan p = NULL;
    int64_t n[3] = {64, 1, 1};
    CHECK(warpfft_plan_create(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, NULL, &p) == 0 &&
          warpfft_plan_destroy(p) == 0);
    CHECK(measured_create(s, &a).fft_makes > 0, "an evicted item was taken");
    CHECK(warpfft_toeplitz_destroy(a) == 0);
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    CHECK(create(s, &a) == 0 && warpfft_toeplitz_destroy(a) == 0 && cache_stats().items > 0);
    warpfft_release_cached();
    CHECK(cache_stats().items == 0 && counts().live_fft_plans == 0 &&
              counts().live_allocs == s0.live_allocs,
          "warpfft_release_cached left %ld cuFFT plans", counts().live_fft_plans);
    expect_clean("bounds", &s0);
}

/* A full device: the cached operator's plans and block are freed and what ran out retried, be
 * it a step plan's cuFFT memory or the block. */
static void test_out_of_memory(void) {
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    standin_counts s0 = counts();
    shape big = {2, WARPFFT_F32, WARPFFT_WEIGHTS_REAL, {64, 64, 1}, 4, MT, 0, 0};
    shape small = {2, WARPFFT_F32, WARPFFT_WEIGHTS_REAL, {12, 7, 1}, 1, MT, 0, 0};
    warpfft_toeplitz a = NULL, b = NULL;
    CHECK(create(&small, &b) == 0);
    size_t need = counts().live_bytes - s0.live_bytes;
    CHECK(warpfft_toeplitz_destroy(b) == 0);
    /* room: none (the step plan's cuFFT memory runs out first), or one cuFFT plan's (the
     * block runs out) */
    const size_t room[2] = {0, STANDIN_FFT_WORK_BYTES};
    for (int r = 0; r < 2; r++) {
        warpfft_release_cached();
        CHECK(create(&big, &a) == 0 && warpfft_toeplitz_destroy(a) == 0);
        wf_cache_stats c0 = cache_stats();
        CHECK(c0.bytes > need, "the cache holds %zu bytes; the small operator needs %zu", c0.bytes,
              need);
        mem_limit(counts().live_bytes + room[r]); /* no room but the cache's */
        b = NULL;
        int st = create(&small, &b);
        mem_limit(0);
        wf_cache_stats c1 = cache_stats();
        /* the cache holds only what the build gave back: its kernel's type-1 items */
        CHECK(st == 0 && c1.oom_retries == c0.oom_retries + 1 && c1.bytes < need,
              "full device (room %zu): %s; %llu retries, %zu bytes cached", room[r],
              st ? warpfft_last_error() : "created",
              (unsigned long long)(c1.oom_retries - c0.oom_retries), c1.bytes);
        CHECK(st == 0 && apply(&small, b) == 0 && warpfft_toeplitz_destroy(b) == 0);
    }
    /* nothing to free: the out-of-memory surfaces, nothing leaks */
    warpfft_release_cached();
    mem_limit(counts().live_bytes);
    b = NULL;
    int st = create(&small, &b);
    mem_limit(0);
    CHECK(st == WARPFFT_ERR_OUT_OF_MEMORY && b == NULL, "no room at all: %s",
          warpfft_status_name(st));
    expect_clean("out of memory", &s0);
}

/* The pool's operators (zero operators): an eviction gives the plans and buffers to the cache
 * without waiting for the stream (its user destroyed it here), and the next acquire, on another
 * stream, takes them. */
static void test_pool(void) {
    warpfft_release_cached();
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    standin_counts s0 = counts();
    int64_t n[3] = {12, 7, 1};
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = 0x5160;
    warpfft_toeplitz op = NULL;
    CHECK(warpfft_pool_acquire_toeplitz(2, n, 2, 1e-4, WARPFFT_F32, &o, &op) == 0 &&
              warpfft_toeplitz_apply_spectrum(op, WARPFFT_F32, 1, ins, 0, ins, outs) == 0 &&
              warpfft_pool_release_toeplitz(op, 0) == 0,
          "%s", warpfft_last_error());
    stream_dead((struct CUstream_st *)(uintptr_t)0x5160, 1);
    standin_counts s1 = counts();
    CHECK(warpfft_pool_clear() == 0);
    standin_counts s2 = counts();
    CHECK(s2.violations == s1.violations && s2.legacy_syncs == s1.legacy_syncs &&
              cache_stats().items > 0 && s2.live_fft_plans > 0,
          "pool eviction: %ld violations, %ld legacy syncs, %zu items cached",
          s2.violations - s1.violations, s2.legacy_syncs - s1.legacy_syncs, cache_stats().items);
    o.stream = 0x5161;
    CHECK(warpfft_pool_acquire_toeplitz(2, n, 2, 1e-4, WARPFFT_F32, &o, &op) == 0 &&
              warpfft_toeplitz_apply_spectrum(op, WARPFFT_F32, 1, ins, 0, ins, outs) == 0 &&
              warpfft_pool_release_toeplitz(op, WARPFFT_POOL_DISCARD) == 0,
          "%s", warpfft_last_error());
    standin_counts s3 = counts();
    CHECK(s3.fft_makes == s2.fft_makes && s3.violations == s2.violations,
          "the next pool operator: %ld cuFFT plans made, %ld violations",
          s3.fft_makes - s2.fft_makes, s3.violations - s2.violations);
    stream_dead((struct CUstream_st *)(uintptr_t)0x5160, 0);
    expect_clean("pool", &s0);
}

int main(void) {
    if (!standin_lookup("standin_arm", (void **)&arm, "standin_get", (void **)&get,
                        "standin_mem_limit", (void **)&mem_limit, "standin_log", (void **)&call_log,
                        "standin_stream_dead", (void **)&stream_dead, NULL))
        return 1;
    if (warpfft_init(0) != WARPFFT_SUCCESS) {
        printf("FATAL: init: %s\n", warpfft_last_error());
        return 1;
    }
    size_t bytes = (size_t)64 * 64 * 4 * 16; /* the largest mode arrays, f64 complex */
    void **arrays[6] = {&xs[0], &xs[1], &xs[2], &ws, &ins, &outs};
    for (int i = 0; i < 6; i++)
        if (warpfft_malloc(0, bytes, arrays[i]) || warpfft_memset(0, *arrays[i], 0, bytes))
            return printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error()), 1;
    test_second_build();
    test_kernel_route();
    test_other_shapes();
    test_bounds();
    test_out_of_memory();
    test_pool();
    for (int i = 0; i < 6; i++)
        warpfft_free(0, *arrays[i]);
    warpfft_release_cached();
    standin_counts s = counts();
    CHECK(s.live_allocs == 0 && s.live_fft_plans == 0 && s.ctx_depth == 0 && s.violations == 0,
          "at exit: %ld allocations, %ld cuFFT plans, context depth %ld, %ld violations",
          s.live_allocs, s.live_fft_plans, s.ctx_depth, s.violations);
    return check_summary("Toeplitz operators through the plan cache on the stand-in driver: ");
}
