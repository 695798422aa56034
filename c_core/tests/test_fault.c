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
 * works; a failed destroy leaves a handle that a second destroy frees.
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

#include "fatbin.h"
#include "runtime.h"
#include "standin.h"
#include "warpfft.h"

static int n_pass, n_fail;
static standin_arm_fn arm;
static standin_get_fn get;
static standin_slow_load_fn slow_load;
static long last_calls; /* calls the last walk made */

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (c) {                                                                                   \
            n_pass++;                                                                              \
        } else {                                                                                   \
            n_fail++;                                                                              \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                                    \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

typedef struct config {
    int type, dim, precision, method;
    int64_t ntransf;
    double upsampfac;
    uint64_t stream;  /* 0: legacy; else a stand-in stream (non-blocking) */
    int check_points; /* opts.check_points: 1 = setpts syncs and reads the totals back */
} config;

static const config configs[] = {
    {1, 1, WARPFFT_F32, WARPFFT_METHOD_GM, 1, 2.0, 0, 0},
    {2, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 2, 2.0, 0, 1},
    {1, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 1.25, 0, 1},
    {2, 2, WARPFFT_F32, WARPFFT_METHOD_GM, 3, 2.0, 0x5150, 0},
    {1, 3, WARPFFT_F32, WARPFFT_METHOD_SM, 2, 2.0, 0x5150, 0},
    {2, 3, WARPFFT_F64, WARPFFT_METHOD_GM, 1, 1.25, 0, 1},
    {2, 2, WARPFFT_F64, WARPFFT_METHOD_SM, 1, 2.0, 0, 0},
    {1, 1, WARPFFT_F64, WARPFFT_METHOD_SM, 4, 1.25, 0x5150, 1},
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

/* One lifecycle with call k failing; returns 1 when the failure was injected somewhere. */
static int walk(const config *cf, const arrays *a, long k, long base_allocs) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.method = cf->method;
    o.upsampfac = cf->upsampfac;
    o.stream = cf->stream;
    o.check_points = cf->check_points;
    warpfft_plan plan = NULL;
    int injected = 0;
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
        long k = 1;
        while (walk(&configs[i], &a, k, base) && k < 100000)
            k++, lifecycles++;
        lifecycles++; /* the last walk ran to the end without a failure */
        printf("  type %d %dD %s %s ntransf %lld upsampfac %g stream %#llx check_points %d: %ld "
               "lifecycles (a whole one: %ld calls)\n",
               configs[i].type, configs[i].dim, configs[i].precision == WARPFFT_F64 ? "f64" : "f32",
               configs[i].method == WARPFFT_METHOD_SM ? "SM" : "GM", (long long)configs[i].ntransf,
               configs[i].upsampfac, (unsigned long long)configs[i].stream, configs[i].check_points,
               k, last_calls);
        arrays_free(&a);
    }
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
    static const config cf = {1, 1, WARPFFT_F32, WARPFFT_METHOD_SM, 1, 2.0, 0, 0};
    pthread_create(&t, NULL, create_plan_thread, (void *)&cf);
    usleep(100 * 1000); /* the thread is inside cuModuleLoadData, holding the module lock */
    fflush(stdout);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5); /* a deadlock kills the child: the parent sees SIGALRM */
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

int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h || !(arm = (standin_arm_fn)dlsym(h, "standin_arm")) ||
        !(get = (standin_get_fn)dlsym(h, "standin_get")) ||
        !(slow_load = (standin_slow_load_fn)dlsym(h, "standin_slow_load"))) {
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
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long lifecycles = walk_all();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    test_setpts_keeps_points();
    test_stream_order();
    test_fork();
    standin_counts s;
    get(&s);
    CHECK(s.live_allocs == 0 && s.ctx_depth == 0 && s.violations == 0,
          "at exit: %ld allocations, context depth %ld, %ld violations", s.live_allocs, s.ctx_depth,
          s.violations);
    printf("fault injection: %ld lifecycles walked (%zu configurations, %.1f s), %d passed, "
           "%d failed\n",
           lifecycles, sizeof configs / sizeof configs[0],
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), n_pass,
           n_fail);
    dlclose(h);
    return n_fail ? 1 : 0;
}
