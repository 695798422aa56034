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
 * Then the driver calls of repeated setpts/execute (no allocation, copy back or wait where none
 * is due); the cache itself: reuse, bounds, the out-of-memory release, and two threads; and module
 * loading: in parallel, per direction, scan_big, one JIT per module, fork().
 *
 * Every part runs in the one process the stand-in driver and cuFFT are loaded into, sharing
 * their arm/count controls (test_fault.h). This file: main (the order of the parts matters:
 * see test_fault_modules.c), the controls, the configurations and the helpers of test_fault.h;
 * the parts are test_fault_walk.c, test_fault_calls.c, test_fault_cache.c and
 * test_fault_modules.c.
 */

#include "test_fault.h"

int n_pass, n_fail;
standin_arm_fn arm;
standin_get_fn get;
standin_slow_load_fn slow_load;
standin_mem_limit_fn mem_limit;

const config configs[] = {
    {1, 1, WARPFFT_F32, WARPFFT_METHOD_GM, 1, 2.0, 0, 0, 0, 0, 0, 0},
    {2, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 2, 2.0, 0, 1, 0, 0, 0, 0},
    {1, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 1.25, 0, 1, 0, 0, 0, 0},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_GM, 3, 2.0, 0x5150, 0, 0, 0, 0, 0},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 2, 2.0, 0x5150, 0, 0, 0, 0, 0},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_GM, 1, 1.25, 0, 1, 0, 0, 0, 0},
    {2, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 2.0, 0, 0, 0, 0, 0, 0},
    {1, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 4, 1.25, 0x5150, 1, 0, 0, 0, 0},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 1, 1, 0, 0, 0},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_GM, 1, 2.0, 0x5150, 1, 1, 0, 0, 0},
    /* batched points (warpfft_setpts_sets): one set per transform, checked (the totals of every
     * set read back), and sets of two transforms each on a stream; GM in 1D; 40 sets of 240
     * bins (bin_size 2), whose 9600 bins take module scan_big that one set does not need */
    {1, 2, WARPFFT_F32, WARPFFT_METHOD_SM, 4, 2.0, 0, 1, 0, 4, 0, 0},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_SM, 6, 2.0, 0x5150, 0, 0, 3, 0, 0},
    {1, 1, WARPFFT_F64, WARPFFT_METHOD_GM, 2, 1.25, 0, 1, 0, 2, 0, 0},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_SM, 40, 2.0, 0, 1, 2, 40, 0, 0},
    /* deterministic: OD spreading after the stable sort's passes (two with module scan_big's
     * many bins), type 2 unchanged, and OD asked for without the option (no stable passes) */
    {1, 2, WARPFFT_F32, WARPFFT_METHOD_OD, 2, 2.0, 0x5150, 0, 0, 0, 1, 0},
    {1, 3, WARPFFT_F64, WARPFFT_METHOD_AUTO, 1, 1.25, 0, 1, 1, 0, 1, 0},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 0, 0, 0, 1, 0},
    {1, 1, WARPFFT_F32, WARPFFT_METHOD_OD, 3, 2.0, 0, 0, 0, 0, 0, 0},
    /* batched points on a deterministic type 2 (interpolation: GM/SM, the sets' kernels) */
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_SM, 4, 2.0, 0, 0, 0, 2, 1, 0},
    /* real data: R2C / C2R plans, the real modules and the half kernels, every dim and method,
     * batches, checked points, point sets, deterministic OD */
    {1, 1, WARPFFT_F32, WARPFFT_METHOD_GM, 2, 2.0, 0, 0, 0, 0, 0, 1},
    {2, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 1.25, 0, 1, 0, 0, 0, 1},
    {1, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 3, 2.0, 0x5150, 0, 0, 0, 0, 1},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_GM, 1, 2.0, 0, 0, 0, 0, 0, 1},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 1.25, 0, 1, 0, 0, 0, 1},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_SM, 4, 2.0, 0x5150, 0, 0, 2, 0, 1},
    {1, 2, WARPFFT_F32, WARPFFT_METHOD_AUTO, 2, 2.0, 0, 0, 0, 0, 1, 1},
    {1, 3, WARPFFT_F64, WARPFFT_METHOD_OD, 1, 2.0, 0, 0, 0, 0, 0, 1},
};
const size_t n_configs = sizeof configs / sizeof configs[0];
const int64_t n_modes[3] = {24, 10, 6};

/* Device memory through the stand-in, outside any walk: a failure ends the program. */
static void *dmalloc(size_t bytes) {
    void *p = NULL;
    if (warpfft_malloc(0, bytes, &p) != WARPFFT_SUCCESS) {
        printf("FATAL: warpfft_malloc: %s\n", warpfft_last_error());
        exit(1);
    }
    return p;
}

arrays arrays_make(const config *cf) {
    size_t real = cf->precision == WARPFFT_F64 ? 8 : 4;
    size_t pts = (size_t)M * (size_t)(cf->n_sets > 1 ? cf->n_sets : 1) * real;
    /* complex: room for every dim's modes (some parts use the arrays with other plans); real
     * data: exactly the half modes of cf's plan, N1/2 + 1 along dimension 1 */
    size_t dims[3] = {(size_t)n_modes[0], (size_t)n_modes[1], (size_t)n_modes[2]};
    for (int d = cf->dim; cf->real && d < 3; d++)
        dims[d] = 1;
    if (cf->real)
        dims[0] = dims[0] / 2 + 1;
    arrays a = {dmalloc(pts), dmalloc(pts), dmalloc(pts),
                dmalloc((size_t)cf->ntransf * M * (cf->real ? 1 : 2) * real),
                dmalloc((size_t)cf->ntransf * dims[0] * dims[1] * dims[2] * 2 * real)};
    return a;
}

void arrays_free(arrays *a) {
    void *p[] = {a->x, a->y, a->z, a->c, a->fk};
    for (int i = 0; i < 5; i++)
        warpfft_free(0, p[i]);
}

void config_opts(const config *cf, warpfft_opts *o) {
    warpfft_opts_default(o);
    o->method = cf->method;
    o->upsampfac = cf->upsampfac;
    o->stream = cf->stream;
    o->check_points = cf->check_points;
    o->deterministic = cf->deterministic;
    o->real_data = cf->real;
    for (int d = 0; d < 3; d++)
        o->bin_size[d] = cf->bin_size;
}

int config_setpts(const config *cf, warpfft_plan plan, const arrays *a) {
    if (cf->n_sets > 1)
        return warpfft_setpts_sets(plan, (warpfft_precision)cf->precision, cf->n_sets, M, a->x,
                                   a->y, a->z);
    return warpfft_setpts(plan, (warpfft_precision)cf->precision, M, a->x, a->y, a->z);
}

const char *method_name(int method) {
    static const char *const names[] = {"AUTO", "GM", "SM", "OD"};
    return method >= 0 && method <= 3 ? names[method] : "?";
}

warpfft_plan make_plan(int type, int64_t n0, int64_t ntransf, int precision) {
    int64_t n[3] = {n0, 1, 1};
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(type, 1, n, 1, ntransf, 1e-4, (warpfft_precision)precision, NULL,
                                 &plan);
    CHECK(st == 0, "create (type %d, N %lld, ntransf %lld): %s", type, (long long)n0,
          (long long)ntransf, warpfft_last_error());
    return st == 0 ? plan : NULL;
}

void destroy_plan(warpfft_plan plan) {
    CHECK(plan && warpfft_plan_destroy(plan) == 0, "destroy: %s", warpfft_last_error());
}

standin_counts counts(void) {
    standin_counts s;
    get(&s);
    return s;
}

int main(void) {
    void *h = standin_lookup("standin_arm", (void **)&arm, "standin_get", (void **)&get,
                             "standin_slow_load", (void **)&slow_load, "standin_mem_limit",
                             (void **)&mem_limit, "standin_log", (void **)&call_log, NULL);
    if (!h)
        return 1;
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
    long lifecycles3 = walk_type3();
    long lifecycles_toep = walk_toeplitz();
    test_toeplitz_steady_calls();
    test_toeplitz_arguments();
    test_setpts_keeps_points();
    test_stream_order();
    test_steady_calls();
    test_sets_switching();
    test_sets_arguments();
    test_points_width();
    test_late_gm();
    test_real_data();
    test_stable_passes();
    test_type3_steady_calls();
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
    char label[192];
    snprintf(label, sizeof label,
             "fault injection: %ld lifecycles walked (%zu configurations, %.1f s), %ld of type 3, "
             "%ld of the Toeplitz operator, ",
             lifecycles, n_configs,
             (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
             lifecycles3, lifecycles_toep);
    dlclose(h);
    return check_summary(label);
}
