/*
 * test_fault_toeplitz.c — the Toeplitz normal operator (api/toeplitz.c, plans/toeplitz*.c) on the
 * stand-in driver and cuFFT:
 *  - walk_toeplitz: lifecycles under injected failures, as test_fault_walk.c does for plans:
 *    create (the kernel: a type-1 transform, its FFT, the spectrum) -> apply -> apply (adjoint)
 *    -> apply_spectrum -> warpfft_toeplitz_spectrum -> a zero operator's create, apply,
 *    apply_spectrum and destroy -> destroy, failing each driver and cuFFT call in turn, in the
 * three plan-cache states. Every failure must be a clear status (check_status), the operator must
 * work after it (the step is repeated without a failure), and nothing may leak;
 *  - test_toeplitz_steady_calls: what an application asks of the driver (the call log): one
 *    context push, pad, the FFT steps, the product, the inverse steps, crop; nothing allocated,
 *    copied or waited for;
 *  - test_toeplitz_arguments: every argument error (a status and a message naming it, no GPU
 *    work), warpfft_toeplitz_params' sizes, destroy(NULL).
 * Kernels compute nothing here (standin.h) except the binning a checked setpts reads back; the
 * stand-in cuFFT checks that every transform stays inside the grid (advanced layouts included).
 */
#include <math.h>

#include "test_fault.h"

enum { MT = 120 }; /* points of every operator */

typedef struct toep_config {
    int dim, precision, weights, modeord;
    int64_t ntransf;
    uint64_t stream;
    double upsampfac;
    int pruned; /* WARPFFT_TOEPLITZ_FFT=pruned: the two-step FFT (these small grids take one) */
} toep_config;

static const toep_config toep_configs[] = {
    {1, WARPFFT_F32, WARPFFT_WEIGHTS_NONE, 0, 1, 0, 2.0, 0},
    {2, WARPFFT_F64, WARPFFT_WEIGHTS_REAL, 1, 3, 0x5150, 2.0, 1},
    {3, WARPFFT_F64, WARPFFT_WEIGHTS_COMPLEX, 0, 2, 0, 1.25, 1},
    {2, WARPFFT_F32, WARPFFT_WEIGHTS_COMPLEX, 1, 1, 0x5150, 2.0, 0},
    {3, WARPFFT_F32, WARPFFT_WEIGHTS_REAL, 1, 2, 0, 2.0, 0},
};

/* The FFT the configuration asks for, through the environment create reads. */
static void fft_env(const toep_config *cf) {
    if (cf->pruned)
        setenv("WARPFFT_TOEPLITZ_FFT", "pruned", 1);
    else
        unsetenv("WARPFFT_TOEPLITZ_FFT");
}
static const int64_t toep_modes[3] = {12, 7, 5}; /* grids 24 x 14 x 10 */

typedef struct toep_arrays {
    void *x[3], *w, *in, *out, *spec;
} toep_arrays;

static void *dalloc(size_t bytes) {
    void *p = NULL;
    if (warpfft_malloc(0, bytes, &p) != WARPFFT_SUCCESS ||
        warpfft_memset(0, p, 0, bytes) != WARPFFT_SUCCESS) {
        printf("FATAL: Toeplitz arrays: %s\n", warpfft_last_error());
        exit(1);
    }
    return p;
}

static toep_arrays toep_arrays_make(const toep_config *cf) {
    toep_arrays a;
    memset(&a, 0, sizeof a);
    size_t rb = cf->precision == WARPFFT_F64 ? 8 : 4, cb = 2 * rb;
    for (int d = 0; d < cf->dim; d++)
        a.x[d] = dalloc(MT * rb);
    a.w = dalloc(MT * cb);
    a.in = dalloc((size_t)cf->ntransf * 12 * 7 * 5 * cb);
    a.out = dalloc((size_t)cf->ntransf * 12 * 7 * 5 * cb);
    a.spec = dalloc((size_t)24 * 14 * 10 * cb);
    return a;
}

static void toep_arrays_free(toep_arrays *a) {
    void *p[] = {a->x[0], a->x[1], a->x[2], a->w, a->in, a->out, a->spec};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        warpfft_free(0, p[i]);
}

static void toep_opts(const toep_config *cf, warpfft_opts *o) {
    warpfft_opts_default(o);
    o->modeord = cf->modeord;
    o->stream = cf->stream;
    o->upsampfac = cf->upsampfac;
}

static int create(const toep_config *cf, const toep_arrays *a, int64_t M, warpfft_toeplitz *op) {
    warpfft_opts o;
    toep_opts(cf, &o);
    return warpfft_toeplitz_create(cf->dim, toep_modes, -1, cf->ntransf, 1e-5,
                                   (warpfft_precision)cf->precision, &o, M, a->x[0], a->x[1],
                                   a->x[2], cf->weights, a->w, op);
}

static int spectrum(const toep_config *cf, const toep_arrays *a) {
    warpfft_opts o;
    toep_opts(cf, &o);
    return warpfft_toeplitz_spectrum(cf->dim, toep_modes, -1, 1e-5,
                                     (warpfft_precision)cf->precision, &o, MT, a->x[0], a->x[1],
                                     a->x[2], cf->weights, a->w, a->spec);
}

#define STEP(name, call) WALK_STEP(walk_name, name, call, k, injected)

/* One lifecycle with call k failing; returns 1 when the failure was injected somewhere. */
static int walk_one(const void *cfp, const void *ap, long k, long base_allocs, int cache) {
    const toep_config *cf = cfp;
    const toep_arrays *a = ap;
    char walk_name[32];
    snprintf(walk_name, sizeof walk_name, "Toeplitz %dD", cf->dim);
    int injected = 0;
    warpfft_precision prec = (warpfft_precision)cf->precision;
    int real = cf->weights != WARPFFT_WEIGHTS_COMPLEX;
    wf_cache_set_limits(cache == CACHE_OFF ? 0 : WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    warpfft_toeplitz op = NULL;
    if (cache == CACHE_WARM) { /* the kernel's type-1 plan and grid FFT went to the cache */
        int st = create(cf, a, MT, &op);
        if (st == 0)
            st = warpfft_toeplitz_destroy(op);
        CHECK(st == 0, "warming the cache (Toeplitz): %s", warpfft_last_error());
        op = NULL;
    }
    walk_arm(k);
    int st = create(cf, a, MT, &op);
    check_step("toeplitz create", st, k, &injected);
    if (st == WARPFFT_SUCCESS && injected) /* a failure it absorbed (check_status says which) */
        arm(0);
    if (st == WARPFFT_SUCCESS) {
        STEP("apply", warpfft_toeplitz_apply(op, prec, 0, a->in, a->out));
        STEP("apply (adjoint, in place)", warpfft_toeplitz_apply(op, prec, 1, a->out, a->out));
        STEP("apply_spectrum",
             warpfft_toeplitz_apply_spectrum(op, prec, real, a->spec, 0, a->in, a->out));
        STEP("toeplitz spectrum", spectrum(cf, a));
        /* a zero operator (M = 0), as the framework ops make them */
        warpfft_toeplitz zero = NULL;
        STEP("zero create", create(cf, a, 0, &zero));
        STEP("zero apply", warpfft_toeplitz_apply(zero, prec, 0, a->in, a->out));
        STEP("zero apply_spectrum",
             warpfft_toeplitz_apply_spectrum(zero, prec, real, a->spec, 1, a->in, a->out));
        STEP("destroy", warpfft_toeplitz_destroy(zero)); /* a failed one leaves it valid */
        STEP("destroy", warpfft_toeplitz_destroy(op));
    } else {
        CHECK(op == NULL, "Toeplitz, k %ld: failed create returned an operator", k);
    }
    check_walk_left_nothing(base_allocs, k, "Toeplitz %dD %s", cf->dim,
                            wf_prec_name(cf->precision));
    return injected;
}

static void report(const void *cfp, int cache, long k) {
    const toep_config *cf = cfp;
    printf("  Toeplitz %dD %s weights %d ntransf %lld stream %#llx %s FFT, %s: %ld lifecycles\n",
           cf->dim, wf_prec_name(cf->precision), cf->weights, (long long)cf->ntransf,
           (unsigned long long)cf->stream, cf->pruned ? "pruned" : "one-plan",
           cache_mode_name[cache], k);
}

long walk_toeplitz(void) {
    long lifecycles = 0;
    for (size_t i = 0; i < sizeof toep_configs / sizeof toep_configs[0]; i++) {
        const toep_config *cf = &toep_configs[i];
        fft_env(cf);
        toep_arrays a = toep_arrays_make(cf);
        lifecycles += walk_cache_modes(walk_one, report, cf, &a);
        toep_arrays_free(&a);
    }
    wf_cache_set_limits(WF_CACHE_MAX_ITEMS, (size_t)1 << 30);
    unsetenv("WARPFFT_TOEPLITZ_FFT");
    return lifecycles;
}

/* ---------------------------------------------------------------- the application's calls */

/* warpfft_runtime_info's "toeplitz_build": the last build's parts (runtime/cache.h), each >= 0,
 * summing to at most its total, which is the operator's build_ms (both printed with %.3f). */
static void check_build_times(const warpfft_toeplitz_info *oi) {
    static char json[1 << 16];
    size_t needed = 0;
    double part[6], total = -1;
    unsigned long long builds = 0;
    const char *b = NULL;
    if (warpfft_runtime_info(0, json, sizeof json, &needed) == WARPFFT_SUCCESS)
        b = strstr(json, "\"toeplitz_build\":");
    int got =
        b ? sscanf(b,
                   "\"toeplitz_build\":{\"builds\":%llu,\"last\":{\"kernels_ms\":%lf,"
                   "\"buffers_ms\":%lf,\"fft_plans_ms\":%lf,\"kernel_plan_ms\":%lf,"
                   "\"run_ms\":%lf,\"release_ms\":%lf,\"total_ms\":%lf",
                   &builds, &part[0], &part[1], &part[2], &part[3], &part[4], &part[5], &total)
          : 0;
    double sum = 0;
    int nonneg = 1;
    for (int i = 0; i < 6 && got == 8; i++)
        sum += part[i], nonneg &= part[i] >= 0;
    CHECK(got == 8 && builds > 0 && nonneg && sum <= total + 0.01 &&
              total - oi->build_ms < 0.0015 && oi->build_ms - total < 0.0015,
          "runtime_info's toeplitz_build (%d fields): builds %llu, parts summing to %.3f, total "
          "%.3f; build_ms %.3f",
          got, builds, sum, total, oi->build_ms);
}

void test_toeplitz_steady_calls(void) {
    static char log[8192], want[1024];
    for (size_t i = 0; i < sizeof toep_configs / sizeof toep_configs[0]; i++) {
        const toep_config *cf = &toep_configs[i];
        fft_env(cf);
        toep_arrays a = toep_arrays_make(cf);
        warpfft_toeplitz op = NULL;
        int st = create(cf, &a, MT, &op);
        CHECK(st == 0, "Toeplitz %dD: create: %s", cf->dim, warpfft_last_error());
        if (st != 0) {
            toep_arrays_free(&a);
            continue;
        }
        const char *p = wf_prec_name(cf->precision);
        const char *exec = cf->precision == WARPFFT_F64 ? "cufftExecZ2Z" : "cufftExecC2C";
        warpfft_toeplitz_info oi;
        CHECK(warpfft_toeplitz_get_info(op, &oi) == 0 && oi.fft_steps == (cf->pruned ? 2 : 1),
              "Toeplitz %dD: %d FFT steps", cf->dim, oi.fft_steps);
        int steps = oi.fft_steps;
        check_build_times(&oi); /* this operator's build is the last */
        for (int adjoint = 0; adjoint < 2; adjoint++) {
            arm(0);
            st = warpfft_toeplitz_apply(op, (warpfft_precision)cf->precision, adjoint, a.in, a.out);
            call_log(log, sizeof log);
            snprintf(want, sizeof want,
                     "cuCtxPushCurrent\ncuStreamGetCaptureInfo\nlaunch wf_toep_pad_%s\n", p);
            for (int s = 0; s < steps; s++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n", exec);
            snprintf(want + strlen(want), sizeof want - strlen(want), "launch wf_toep_mul%c_%s\n",
                     cf->weights == WARPFFT_WEIGHTS_COMPLEX ? 'c' : 'r', p);
            for (int s = 0; s < steps; s++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n", exec);
            snprintf(want + strlen(want), sizeof want - strlen(want), "launch wf_toep_crop_%s\n",
                     p);
            CHECK(st == 0 && strcmp(log, want) == 0 && count_lines(log, "cuMemAlloc") == 0,
                  "Toeplitz %dD apply (adjoint %d, status %d) called\n%sexpected\n%s", cf->dim,
                  adjoint, st, log, want);
        }
        /* the zero operator only zeroes its output */
        warpfft_toeplitz z = NULL;
        st = create(cf, &a, 0, &z);
        CHECK(st == 0, "zero operator: %s", warpfft_last_error());
        size_t bytes = 0, spec_bytes = 1;
        warpfft_toeplitz_info info;
        if (st == 0) {
            arm(0);
            st = warpfft_toeplitz_apply(z, (warpfft_precision)cf->precision, 0, a.in, a.out);
            call_log(log, sizeof log);
            CHECK(st == 0 &&
                      strcmp(log, "cuCtxPushCurrent\ncuStreamGetCaptureInfo\ncuMemsetD8Async\n") ==
                          0,
                  "zero operator apply called\n%s", log);
            CHECK(warpfft_toeplitz_workspace_bytes(z, &bytes) == 0 &&
                      warpfft_toeplitz_get_info(z, &info) == 0,
                  "zero operator info: %s", warpfft_last_error());
            spec_bytes = info.spectrum_bytes;
            CHECK(spec_bytes == 0 && info.n_points == 0 && bytes >= info.grid_bytes,
                  "zero operator: spectrum %zu bytes, M %lld, workspace %zu", spec_bytes,
                  (long long)info.n_points, bytes);
            CHECK(warpfft_toeplitz_destroy(z) == 0, "destroy: %s", warpfft_last_error());
        }
        CHECK(warpfft_toeplitz_get_info(op, &info) == 0 && info.n_points == MT &&
                  info.iflag == -1 && info.spectrum_bytes > 0 && info.build_ms >= 0.0,
              "operator info");
        CHECK(warpfft_toeplitz_destroy(op) == 0, "destroy: %s", warpfft_last_error());
        warpfft_release_cached();
        toep_arrays_free(&a);
    }
    unsetenv("WARPFFT_TOEPLITZ_FFT");
}

/* ---------------------------------------------------------------- arguments */

/* status st and a message containing sub. */
#define EXPECT(call, status, sub)                                                                  \
    do {                                                                                           \
        int st_ = (call);                                                                          \
        CHECK(st_ == (status) && strstr(warpfft_last_error(), (sub)) != NULL,                      \
              "%s: status %s, message \"%s\"; expected %s and \"%s\"", #call,                      \
              warpfft_status_name(st_), warpfft_last_error(), warpfft_status_name(status), sub);   \
    } while (0)

void test_toeplitz_arguments(void) {
    toep_config cf = toep_configs[1]; /* 2D f64 real weights */
    toep_arrays a = toep_arrays_make(&cf);
    warpfft_toeplitz op = NULL;
    warpfft_opts o;
    warpfft_opts_default(&o);
    const int64_t n[3] = {12, 7, 5}, bad_n[3] = {12, 0, 5};
    arm(0);
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, NULL),
           WARPFFT_ERR_INVALID_ARG, "op (the output pointer)");
    EXPECT(warpfft_toeplitz_create(4, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_BAD_DIM, "warpfft_toeplitz_create: dim = 4");
    EXPECT(warpfft_toeplitz_create(2, bad_n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL,
                                   1, a.w, &op),
           WARPFFT_ERR_BAD_SIZE, "n_modes[1] = 0");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 0, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_BAD_SIZE, "ntransf = 0");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, NAN, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_BAD_TOL, "tol = nan");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, (warpfft_precision)3, &o, MT, a.x[0], a.x[1],
                                   NULL, 1, a.w, &op),
           WARPFFT_ERR_INVALID_ARG, "precision = 3");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 7,
                                   a.w, &op),
           WARPFFT_ERR_INVALID_ARG, "weights = 7");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, -1, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_BAD_NPOINTS, "M = -1");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], NULL, NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_INVALID_ARG, "y is NULL");
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   NULL, &op),
           WARPFFT_ERR_INVALID_ARG, "w is NULL but weights = 1");
    o.spreadinterponly = 1;
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_INVALID_ARG, "spreadinterponly");
    o.spreadinterponly = 0;
    o.modeord = 2;
    EXPECT(warpfft_toeplitz_create(2, n, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                   a.w, &op),
           WARPFFT_ERR_INVALID_ARG, "opts.modeord = 2");
    o.modeord = 0;
    CHECK(op == NULL, "a failed create returned an operator");
    standin_counts s;
    get(&s);
    CHECK(s.calls == 0, "argument errors made %ld driver calls", s.calls);
    /* a huge grid: the kernel's parameters refuse it, naming the grid */
    const int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 5};
    EXPECT(warpfft_toeplitz_create(2, huge, 1, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL,
                                   1, a.w, &op),
           WARPFFT_ERR_BAD_SIZE, "need a grid of");
    /* the spectrum call's own checks */
    EXPECT(warpfft_toeplitz_spectrum(2, n, 1, 1e-6, WARPFFT_F64, &o, MT, a.x[0], a.x[1], NULL, 1,
                                     a.w, NULL),
           WARPFFT_ERR_INVALID_ARG, "spectrum is NULL");
    EXPECT(warpfft_toeplitz_spectrum(2, n, 1, 1e-6, WARPFFT_F64, &o, MT, NULL, a.x[1], NULL, 1, a.w,
                                     a.spec),
           WARPFFT_ERR_INVALID_ARG, "warpfft_toeplitz_spectrum: x is NULL");
    /* params: sizes without a GPU; L_d = smallest even 2,3,5,7-smooth >= 2 N_d - 1 */
    warpfft_toeplitz_info info;
    const int64_t odd[3] = {12, 7, 1};
    CHECK(warpfft_toeplitz_params(3, odd, 4, 1e-5, WARPFFT_F32, NULL, WARPFFT_WEIGHTS_REAL,
                                  &info) == 0 &&
              info.n_grid[0] == 24 && info.n_grid[1] == 14 && info.n_grid[2] == 2 &&
              info.spectrum_real == 1 && info.spectrum_bytes == 24 * 14 * 2 * 4 &&
              info.grid_bytes == 4 * 24 * 14 * 2 * 8 && info.n_points == -1 &&
              info.kernel_tol == 5e-6 && info.kernel_fine[0] >= 48,
          "params: grid {%lld, %lld, %lld}, spectrum %zu, grid %zu bytes, kernel tol %g, fine %lld",
          (long long)info.n_grid[0], (long long)info.n_grid[1], (long long)info.n_grid[2],
          info.spectrum_bytes, info.grid_bytes, info.kernel_tol, (long long)info.kernel_fine[0]);
    setenv("WARPFFT_TOEPLITZ_FFT", "sideways", 1);
    EXPECT(warpfft_toeplitz_params(3, odd, 4, 1e-5, WARPFFT_F32, NULL, 0, &info),
           WARPFFT_ERR_INVALID_ARG, "WARPFFT_TOEPLITZ_FFT = \"sideways\"");
    setenv("WARPFFT_TOEPLITZ_FFT", "pruned", 1);
    CHECK(warpfft_toeplitz_params(3, odd, 4, 1e-5, WARPFFT_F32, NULL, 0, &info) == 0 &&
              info.fft_steps == 2,
          "pruned: %d steps", info.fft_steps);
    unsetenv("WARPFFT_TOEPLITZ_FFT");
    const int64_t big[3] = {1024, 1024, 1}; /* 4 x 2048^2 x 8 bytes > 16 MiB: two steps */
    CHECK(warpfft_toeplitz_params(2, big, 4, 1e-5, WARPFFT_F32, NULL, 0, &info) == 0 &&
              info.fft_steps == 2 &&
              warpfft_toeplitz_params(2, big, 1, 1e-5, WARPFFT_F32, NULL, 0, &info) == 0 &&
              info.fft_steps == 2 &&
              warpfft_toeplitz_params(2, odd, 4, 1e-5, WARPFFT_F32, NULL, 0, &info) == 0 &&
              info.fft_steps == 1,
          "the FFT by size");
    const int64_t n97[3] = {97, 1, 1}; /* 193 -> 196 = 2^2 7^2 */
    CHECK(warpfft_toeplitz_params(1, n97, 1, 1e-6, WARPFFT_F32, NULL, WARPFFT_WEIGHTS_COMPLEX,
                                  &info) == 0 &&
              info.n_grid[0] == 196 && info.spectrum_real == 0 && info.kernel_tol == 1e-6 &&
              info.spectrum_bytes == 196 * 8,
          "params 1D N 97: L %lld, kernel tol %g", (long long)info.n_grid[0], info.kernel_tol);
    EXPECT(warpfft_toeplitz_params(1, n97, 1, 1e-6, WARPFFT_F32, NULL, 0, NULL),
           WARPFFT_ERR_INVALID_ARG, "info is NULL");
    /* an operator: calls on it */
    int st = create(&cf, &a, MT, &op);
    CHECK(st == 0, "create: %s", warpfft_last_error());
    if (st == 0) {
        EXPECT(warpfft_toeplitz_apply(op, WARPFFT_F32, 0, a.in, a.out), WARPFFT_ERR_PRECISION,
               "the operator is f64");
        EXPECT(warpfft_toeplitz_apply(op, WARPFFT_F64, 0, NULL, a.out), WARPFFT_ERR_INVALID_ARG,
               "in is NULL");
        EXPECT(warpfft_toeplitz_apply(op, WARPFFT_F64, 0, a.in, NULL), WARPFFT_ERR_INVALID_ARG,
               "out is NULL");
        EXPECT(warpfft_toeplitz_apply_spectrum(op, WARPFFT_F64, 1, NULL, 0, a.in, a.out),
               WARPFFT_ERR_INVALID_ARG, "spectrum is NULL");
        size_t bytes = 0;
        EXPECT(warpfft_toeplitz_workspace_bytes(op, NULL), WARPFFT_ERR_INVALID_ARG, "bytes");
        EXPECT(warpfft_toeplitz_get_info(NULL, &info), WARPFFT_ERR_INVALID_ARG, "op is NULL");
        CHECK(warpfft_toeplitz_workspace_bytes(op, &bytes) == 0 &&
                  warpfft_toeplitz_get_info(op, &info) == 0 && bytes == info.workspace_bytes &&
                  bytes >= info.spectrum_bytes + info.grid_bytes,
              "workspace %zu, info %zu", bytes, info.workspace_bytes);
        CHECK(warpfft_toeplitz_destroy(op) == 0, "destroy: %s", warpfft_last_error());
    }
    EXPECT(warpfft_toeplitz_apply(NULL, WARPFFT_F64, 0, a.in, a.out), WARPFFT_ERR_INVALID_ARG,
           "op is NULL");
    CHECK(warpfft_toeplitz_destroy(NULL) == 0, "destroy(NULL)");
    warpfft_release_cached();
    toep_arrays_free(&a);
}
