/*
 * test_fault_modules.c — module loading (module.c) on the stand-in driver: a plan's modules load
 * in parallel, one spreading or interpolation module per direction, scan_big only for plans with
 * many bins, one JIT per module when two threads need it, fork() while another thread holds the
 * module lock, and a module without images.
 */
#include "test_fault.h"

/* Milliseconds since *t0 (CLOCK_MONOTONIC). */
static double elapsed_ms(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return 1e3 * (double)(t1.tv_sec - t0->tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* The first plan (nothing loaded yet) loads its four modules at once: one slow JIT's time,
 * not four. Runs first: sort, bin_1d_f64, deconvolve_1d_f64 and si_1d_f64_w*_spread_* are
 * loaded by no one before. */
void test_parallel_loads(void) {
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
void test_module_per_direction(void) {
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
void test_scan_big_module(void) {
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

void test_one_jit_per_module(void) {
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

void test_fork(void) {
    slow_load(1000);
    pthread_t t;
    static const config cf = {1, 1, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 0, 0, 0, 0, 0};
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
void test_module_without_images(void) {
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
