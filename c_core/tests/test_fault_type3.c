/*
 * test_fault_type3.c — type-3 plans on the stand-in driver:
 *  - walk_type3: lifecycles under injected failures, as test_fault_walk.c does for types 1 and 2:
 *    create -> setpts3 -> execute -> setpts3 on points that need other grids -> execute ->
 *    destroy, failing each driver and cuFFT call in turn, in the three plan-cache states. Every
 *    failure must be a clear status (check_status), the plan must work after it (the step is
 *    repeated without a failure), and nothing may leak;
 *  - test_type3_steady_calls: the driver calls of a repeated setpts3 and execute (the call log):
 *    one context push each (the inner steps do not go through the public calls again), nothing
 *    allocated, loaded or freed, and the waits setpts3 documents.
 * Configurations with point sets (warpfft_setpts3_sets) walk the same way. The stand-in computes
 * the bounds setpts3 reads back (wf_t3_minmax_p); the other kernels compute nothing, which the
 * binning's host-side sizes do not depend on.
 */
#include "test_fault.h"

enum { M3 = 200, K3 = 150 }; /* sources and targets of every point set */

typedef struct t3_config {
    int dim, precision, method;
    double tol;
    int64_t ntransf;
    uint64_t stream;
    int64_t n_sets;    /* > 1: warpfft_setpts3_sets with that many sets of sources and targets */
    int deterministic; /* OD spreading after the stable sort's passes */
} t3_config;

static const t3_config t3_configs[] = {
    {1, WARPFFT_F32, WARPFFT_METHOD_GM, 1e-4, 1, 0, 0, 0},
    {2, WARPFFT_F64, WARPFFT_METHOD_SM, 1e-8, 2, 0x5150, 0, 0},
    {3, WARPFFT_F32, WARPFFT_METHOD_SM, 1e-5, 1, 0, 0, 0},
    /* batched points: a set per transform; sets of two transforms each */
    {2, WARPFFT_F32, WARPFFT_METHOD_SM, 1e-5, 4, 0, 4, 0},
    {1, WARPFFT_F64, WARPFFT_METHOD_GM, 1e-9, 6, 0x5150, 3, 0},
    {3, WARPFFT_F32, WARPFFT_METHOD_AUTO, 1e-5, 2, 0x5150, 0, 1},
    {1, WARPFFT_F64, WARPFFT_METHOD_OD, 1e-9, 1, 0, 0, 0},
};

static int64_t sets_of(const t3_config *cf) {
    return cf->n_sets > 1 ? cf->n_sets : 1;
}

/* OD spreads: asked for, or AUTO's choice for deterministic plans. */
static int spreads_od(const t3_config *cf) {
    return cf->method == WARPFFT_METHOD_OD ||
           (cf->method == WARPFFT_METHOD_AUTO && cf->deterministic);
}

/* The caller's arrays: sources in [0.5, 2.5] (off centre: a post-phase), targets of set A in
 * [-3, 7] (a pre-phase), of set B in [-30, 30] (wider: other grids). */
typedef struct t3_arrays {
    void *x[3], *s[3], *u[3], *c, *f;
} t3_arrays;

static void *upload(const t3_config *cf, int64_t n, double lo, double hi) {
    size_t real = cf->precision == WARPFFT_F64 ? 8 : 4;
    void *d = NULL;
    double *h64 = malloc((size_t)n * 8);
    float *h32 = malloc((size_t)n * 4);
    for (int64_t j = 0; h64 && h32 && j < n; j++) {
        /* a shuffled ramp, hitting both ends */
        h64[j] = lo + (hi - lo) * (double)((j * 37) % n) / (double)(n - 1);
        h32[j] = (float)h64[j];
    }
    if (!h64 || !h32 || warpfft_malloc(0, (size_t)n * real, &d) != 0 ||
        warpfft_memcpy_htod(0, d, real == 8 ? (void *)h64 : (void *)h32, (size_t)n * real) != 0) {
        printf("FATAL: type-3 arrays: %s\n", warpfft_last_error());
        exit(1);
    }
    free(h64);
    free(h32);
    return d;
}

static t3_arrays t3_arrays_make(const t3_config *cf) {
    t3_arrays a;
    memset(&a, 0, sizeof a);
    size_t cb = cf->precision == WARPFFT_F64 ? 16 : 8;
    int64_t n = sets_of(cf);
    for (int d = 0; d < cf->dim; d++) {
        a.x[d] = upload(cf, n * M3, 0.5, 2.5);
        a.s[d] = upload(cf, n * K3, -3.0, 7.0);
        a.u[d] = upload(cf, n * K3, -30.0, 30.0);
    }
    if (warpfft_malloc(0, (size_t)cf->ntransf * M3 * cb, &a.c) != 0 ||
        warpfft_malloc(0, (size_t)cf->ntransf * K3 * cb, &a.f) != 0 ||
        warpfft_memset(0, a.c, 0, (size_t)cf->ntransf * M3 * cb) != 0) {
        printf("FATAL: type-3 arrays: %s\n", warpfft_last_error());
        exit(1);
    }
    return a;
}

static void t3_arrays_free(t3_arrays *a) {
    for (int d = 0; d < 3; d++) {
        warpfft_free(0, a->x[d]);
        warpfft_free(0, a->s[d]);
        warpfft_free(0, a->u[d]);
    }
    warpfft_free(0, a->c);
    warpfft_free(0, a->f);
}

static int setpts3(warpfft_plan plan, const t3_config *cf, const t3_arrays *a, void *const t[3]) {
    if (cf->n_sets > 1)
        return warpfft_setpts3_sets(plan, (warpfft_precision)cf->precision, cf->n_sets, M3, a->x[0],
                                    a->x[1], a->x[2], K3, t[0], t[1], t[2]);
    return warpfft_setpts3(plan, (warpfft_precision)cf->precision, M3, a->x[0], a->x[1], a->x[2],
                           K3, t[0], t[1], t[2]);
}

static int execute(warpfft_plan plan, const t3_config *cf, const t3_arrays *a) {
    return warpfft_execute(plan, (warpfft_precision)cf->precision, a->c, a->f);
}

/* Step `name` of a lifecycle: checked; after a failure the same call again without one must
 * succeed. A failure the step rightly absorbed (a release, check_status) is forgotten, so the
 * next steps are not judged by it. */
#define STEP(name, call) WALK_STEP(walk_name, name, call, k, injected)

/* The options of a configuration. */
static warpfft_opts t3_opts(const t3_config *cf) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.method = cf->method;
    o.stream = cf->stream;
    o.deterministic = cf->deterministic;
    return o;
}

/* One lifecycle with call k failing; returns 1 when the failure was injected somewhere. */
static int walk3(const void *cfp, const void *ap, long k, long base_allocs, int cache) {
    const t3_config *cf = cfp;
    const t3_arrays *a = ap;
    char walk_name[32];
    snprintf(walk_name, sizeof walk_name, "type 3 %dD", cf->dim);
    warpfft_opts o = t3_opts(cf);
    warpfft_plan plan = NULL;
    int injected = 0;
    wf_cache_set_limits(cache == CACHE_OFF ? 0 : WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    if (cache == CACHE_WARM) { /* the inner transforms of both point sets went to the cache */
        int st = warpfft_plan_create(3, cf->dim, NULL, 1, cf->ntransf, cf->tol,
                                     (warpfft_precision)cf->precision, &o, &plan);
        if (st == 0)
            st = setpts3(plan, cf, a, a->s);
        if (st == 0)
            st = setpts3(plan, cf, a, a->u);
        if (st == 0)
            st = warpfft_plan_destroy(plan);
        CHECK(st == 0, "warming the cache (type 3): %s", warpfft_last_error());
        plan = NULL;
    }
    walk_arm(k);
    int st = warpfft_plan_create(3, cf->dim, NULL, 1, cf->ntransf, cf->tol,
                                 (warpfft_precision)cf->precision, &o, &plan);
    check_step("create", st, k, &injected);
    if (st == WARPFFT_SUCCESS) {
        STEP("setpts3", setpts3(plan, cf, a, a->s));
        STEP("execute", execute(plan, cf, a));
        STEP("setpts3 (new grids)", setpts3(plan, cf, a, a->u));
        STEP("execute", execute(plan, cf, a));
        STEP("destroy", warpfft_plan_destroy(plan)); /* a failed one leaves it valid */
    } else {
        CHECK(plan == NULL, "type 3, k %ld: failed create returned a plan", k);
    }
    check_walk_left_nothing(base_allocs, k, "type 3 %dD %s", cf->dim,
                            cf->precision == WARPFFT_F64 ? "f64" : "f32");
    return injected;
}

static void report3(const void *cfp, int cache, long k) {
    const t3_config *cf = cfp;
    printf("  type 3 %dD %s %s tol %g ntransf %lld stream %#llx point sets %lld "
           "deterministic %d, %s: %ld lifecycles\n",
           cf->dim, cf->precision == WARPFFT_F64 ? "f64" : "f32", method_name(cf->method), cf->tol,
           (long long)cf->ntransf, (unsigned long long)cf->stream, (long long)sets_of(cf),
           cf->deterministic, cache_mode_name[cache], k);
}

long walk_type3(void) {
    long lifecycles = 0;
    for (size_t i = 0; i < sizeof t3_configs / sizeof t3_configs[0]; i++) {
        const t3_config *cf = &t3_configs[i];
        t3_arrays a = t3_arrays_make(cf);
        lifecycles += walk_cache_modes(walk3, report3, cf, &a);
        t3_arrays_free(&a);
    }
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    return lifecycles;
}

/* The lines of log that start with one of prefixes[0..n-1], in order, one per line. */
static int in_order(const char *log, const char *const *prefixes, size_t n) {
    const char *at = log;
    for (size_t i = 0; i < n; i++) {
        const char *hit = at;
        while (*hit && strncmp(hit, prefixes[i], strlen(prefixes[i])) != 0)
            hit = strchr(hit, '\n') ? strchr(hit, '\n') + 1 : hit + strlen(hit);
        if (!*hit)
            return 0;
        at = hit + 1;
    }
    return 1;
}

void test_type3_steady_calls(void) {
    static char log[16384];
    for (size_t i = 0; i < sizeof t3_configs / sizeof t3_configs[0]; i++) {
        const t3_config *cf = &t3_configs[i];
        t3_arrays a = t3_arrays_make(cf);
        warpfft_opts o = t3_opts(cf);
        warpfft_plan plan = NULL;
        int st = warpfft_plan_create(3, cf->dim, NULL, 1, cf->ntransf, cf->tol,
                                     (warpfft_precision)cf->precision, &o, &plan);
        if (st == 0)
            st = setpts3(plan, cf, &a, a.s);
        if (st == 0)
            st = execute(plan, cf, &a);
        CHECK(st == 0, "type 3 %dD: first setpts3/execute: %s", cf->dim, warpfft_last_error());
        /* the same points again: the grids stay, the arrays are large enough */
        arm(0);
        st = setpts3(plan, cf, &a, a.s);
        call_log(log, sizeof log);
        CHECK(st == 0 && count_lines(log, "cuCtxPushCurrent") == 1 &&
                  count_lines(log, "cuMemAlloc") == 0 && count_lines(log, "cuMemFree") == 0 &&
                  count_lines(log, "cufft") == 0 && count_lines(log, "cuModule") == 0 &&
                  count_lines(log, "cuStreamSynchronize") == 2 &&
                  count_lines(log, "launch wf_stable_scatter") == (cf->deterministic ? 1 : 0),
              "type 3 %dD: a second setpts3 of the same points (status %d) called\n%s", cf->dim, st,
              log);
        arm(0);
        st = execute(plan, cf, &a);
        call_log(log, sizeof log);
        static const char *const order[] = {
            "cuCtxPushCurrent", "cuMemsetD8Async",   "launch wf_spread_", "launch wf_amplify_",
            "cufftExec",        "launch wf_interp_", "launch wf_t3_post_"};
        /* OD writes every cell of the spreading grid: no memset, its own kernel */
        static const char *const order_od[] = {"cuCtxPushCurrent",   "launch wf_spread_od_",
                                               "launch wf_amplify_", "cufftExec",
                                               "launch wf_interp_",  "launch wf_t3_post_"};
        int od = spreads_od(cf);
        CHECK(st == 0 && count_lines(log, "cuCtxPushCurrent") == 1 &&
                  count_lines(log, "launch wf_poison") == 0 &&
                  count_lines(log, "Synchronize") == 0 && count_lines(log, "cuMemcpy") == 0 &&
                  count_lines(log, "cuMemAlloc") == 0 &&
                  (od ? count_lines(log, "cuMemset") == 0 && in_order(log, order_od, 6)
                      : in_order(log, order, sizeof order / sizeof order[0])),
              "type 3 %dD: execute (status %d) called\n%s", cf->dim, st, log);
        destroy_plan(plan);
        warpfft_release_cached();
        t3_arrays_free(&a);
    }
}
