/*
 * graph_capture.c — GPU test: warpfft's calls captured into a CUDA graph by a C caller
 * (warpfft.h, "CUDA graphs"; docs/cuda-graphs.md). On a stream of its own (non-blocking), with
 * the driver API found at run time (dlopen libcuda.so.1, as warpfft does):
 *   1. plans the caller owns (types 1 and 2, f32 and f64, a deterministic type 1): setpts +
 *      execute captured once, the graph replayed with new points and strengths copied into
 *      the same device arrays, each replay against an eager run of the same data on another
 *      plan (deterministic: bit for bit); the calls that cannot be captured refuse with
 *      WARPFFT_ERR_UNSUPPORTED without breaking the capture; the plan cannot be destroyed while
 *      the graph exists, and can once it is destroyed;
 *   2. a plan from the live-plan pool, warmed up before the capture, acquired, run and
 *      released during it: the graph's (busy, spared by a clear) until the graph is destroyed,
 *      replays equal to eager meanwhile, then destroyed (the clear asked for it);
 *   3. type 3: points set before the capture, its execute captured, replays with new strengths;
 *   4. the Toeplitz operator: one of the caller's (its apply captured) and a zero operator of the
 *      pool applied with a spectrum (acquired and released during the capture), replays with
 *      new modes against eager applications, each held by the graph until it is freed.
 * Prints one line per part and "graph capture: N passed, M failed"; exit 0 all passed, 1 a
 * failure, 2 no GPU (skipped, said so). Built by scripts/gpu_bundle.sh into .gpu/c, run by
 * scripts/gpu_run.sh's `graphs` stage (also under compute-sanitizer memcheck).
 *     cc -O2 -Ic_core/include tests/c/graph_capture.c -Ltarget/release -lwarpfft -ldl -lm
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <warpfft.h>

/* ---- the driver calls the test makes itself ---- */

typedef int CUresult;
typedef void *CUstream, *CUgraph, *CUgraphExec, *CUcontext;
static struct {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(int *, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuStreamCreate)(CUstream *, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamBeginCapture)(CUstream, int);
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
    CUresult (*cuGraphExecDestroy)(CUgraphExec);
    CUresult (*cuGraphDestroy)(CUgraph);
} cu;

/* A driver symbol and the field of `cu` it goes to: the field's name, and a version suffix where
 * the driver has one. */
#define SYM(field, version)                                                                        \
    { #field version, (void **)&cu.field }
static int load_driver(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    struct {
        const char *name;
        void **fn;
    } syms[] = {
        SYM(cuInit, ""),
        SYM(cuDeviceGet, ""),
        SYM(cuDevicePrimaryCtxRetain, ""),
        SYM(cuCtxSetCurrent, ""),
        SYM(cuStreamCreate, ""),
        SYM(cuStreamDestroy, "_v2"),
        SYM(cuStreamSynchronize, ""),
        SYM(cuStreamBeginCapture, "_v2"),
        SYM(cuStreamEndCapture, ""),
        SYM(cuGraphInstantiateWithFlags, ""),
        SYM(cuGraphLaunch, ""),
        SYM(cuGraphExecDestroy, ""),
        SYM(cuGraphDestroy, ""),
    };
#undef SYM
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(h, syms[i].name)))
            return 0;
    return 1;
}

/* ---- checks ---- */

static int n_pass, n_fail;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            n_pass++;                                                                              \
        } else {                                                                                   \
            n_fail++;                                                                              \
            printf("FAIL line %d: %s: ", __LINE__, #cond);                                         \
            printf(__VA_ARGS__);                                                                   \
            printf(" (last error: %s)\n", warpfft_last_error());                                   \
        }                                                                                          \
    } while (0)
#define CU(call) CHECK((call) == 0, "%s", #call)

enum { M = 20000, N1 = 48, N2 = 40, T = 2, ROUNDS = 5, K3 = 300 };
static const double PI = 3.14159265358979323846;
static CUstream S; /* the captured stream */

static double urand(unsigned *seed) {
    return (double)rand_r(seed) / RAND_MAX;
}

/* n reals of `prec` (uniform in [lo, hi)) into the device array d; 0 on success. */
static int upload_reals(void *d, int64_t n, warpfft_precision prec, double lo, double hi,
                        unsigned *seed) {
    size_t b = prec == WARPFFT_F64 ? 8 : 4;
    char *h = malloc((size_t)n * b);
    for (int64_t j = 0; j < n; j++) {
        double v = lo + (hi - lo) * urand(seed);
        if (b == 8)
            ((double *)h)[j] = v;
        else
            ((float *)h)[j] = (float)v;
    }
    int st = warpfft_memcpy_htod(0, d, h, (size_t)n * b);
    free(h);
    return st;
}

/* Relative l2 difference of two arrays of n complex values of `prec` on the host. */
static double rel_diff(const void *a, const void *b, int64_t n, warpfft_precision prec) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < 2 * n; j++) {
        double x = prec == WARPFFT_F64 ? ((const double *)a)[j] : ((const float *)a)[j];
        double y = prec == WARPFFT_F64 ? ((const double *)b)[j] : ((const float *)b)[j];
        num += (x - y) * (x - y);
        den += y * y;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static warpfft_opts opts_on(uint64_t stream, int deterministic) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.stream = stream;
    o.deterministic = deterministic;
    return o;
}

/* Device arrays of one configuration: coordinates, strengths, modes, and host copies. */
typedef struct arrays {
    warpfft_precision prec;
    void *x, *y, *c, *fk;
    size_t c_bytes, fk_bytes;
    void *host_a, *host_b;
} arrays;

static void arrays_make(arrays *a, warpfft_precision prec) {
    size_t r = prec == WARPFFT_F64 ? 8 : 4;
    a->prec = prec;
    a->c_bytes = (size_t)T * M * 2 * r;
    a->fk_bytes = (size_t)T * N1 * N2 * 2 * r;
    warpfft_malloc(0, M * r, &a->x);
    warpfft_malloc(0, M * r, &a->y);
    warpfft_malloc(0, a->c_bytes, &a->c);
    warpfft_malloc(0, a->fk_bytes, &a->fk);
    size_t big = a->c_bytes > a->fk_bytes ? a->c_bytes : a->fk_bytes;
    a->host_a = malloc(big);
    a->host_b = malloc(big);
}

static void arrays_free(arrays *a) {
    warpfft_free(0, a->x);
    warpfft_free(0, a->y);
    warpfft_free(0, a->c);
    warpfft_free(0, a->fk);
    free(a->host_a);
    free(a->host_b);
}

/* Round k's data: points and the transform's input (type 1: strengths; type 2: modes). */
static void round_data(arrays *a, int type, int k) {
    unsigned seed = 1234u + 77u * (unsigned)k + (unsigned)type;
    upload_reals(a->x, M, a->prec, -PI, PI, &seed);
    upload_reals(a->y, M, a->prec, -PI, PI, &seed);
    if (type == 1)
        upload_reals(a->c, 2 * T * M, a->prec, -1, 1, &seed);
    else
        upload_reals(a->fk, 2 * T * N1 * N2, a->prec, -1, 1, &seed);
}

/* The output of one run (type 1: fk; type 2: c) into host buffer dst. */
static void fetch_out(const arrays *a, int type, void *dst) {
    warpfft_memcpy_dtoh(0, dst, type == 1 ? a->fk : a->c, type == 1 ? a->fk_bytes : a->c_bytes);
}

static int run(warpfft_plan p, arrays *a) {
    int st = warpfft_setpts(p, a->prec, M, a->x, a->y, NULL);
    return st ? st : (int)warpfft_execute(p, a->prec, a->c, a->fk);
}

/* Destroys a graph and its executable graph; CUDA lets go of the plans it held once their
 * launches are done, on a thread of its own: the caller polls. */
static void graph_free(CUgraphExec exec, CUgraph graph) {
    cu.cuStreamSynchronize(S);
    CU(cu.cuGraphExecDestroy(exec));
    CU(cu.cuGraphDestroy(graph));
}

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){0, (long)ms * 1000000L}, NULL);
}

/* Ends the capture of S into *graph and instantiates it: the executable graph (NULL on failure,
 * checked). */
static CUgraphExec capture_end(CUgraph *graph) {
    CUgraphExec exec = NULL;
    *graph = NULL;
    CU(cu.cuStreamEndCapture(S, graph));
    CU(cu.cuGraphInstantiateWithFlags(&exec, *graph, 0));
    return exec;
}

/* One replay of the graph on S, waited for. */
static void replay(CUgraphExec exec) {
    CU(cu.cuGraphLaunch(exec, S));
    CU(cu.cuStreamSynchronize(S));
}

/* Whether done(arg) came true, asked every 10 ms for up to 2 s: what a graph held is let go of
 * once it is destroyed, on a thread of CUDA's own. */
static int poll(int (*done)(void *), void *arg) {
    int ok = 0;
    for (int t = 0; t < 200 && !ok; t++, sleep_ms(10))
        ok = done(arg);
    return ok;
}

static int plan_destroyed(void *plan) {
    return warpfft_plan_destroy(plan) == 0;
}

/* ---- 1. plans the caller owns ---- */

static void own_plan(int type, warpfft_precision prec, int deterministic) {
    int fails0 = n_fail;
    arrays a;
    arrays_make(&a, prec);
    int64_t n[3] = {N1, N2, 1};
    double tol = prec == WARPFFT_F64 ? 1e-9 : 1e-5;
    warpfft_opts o = opts_on((uint64_t)(uintptr_t)S, deterministic);
    warpfft_opts o_ref = opts_on(0, deterministic);
    warpfft_plan p = NULL, ref = NULL, made = NULL;
    CHECK(warpfft_plan_create(type, 2, n, 1, T, tol, prec, &o, &p) == 0, "create");
    CHECK(warpfft_plan_create(type, 2, n, 1, T, tol, prec, &o_ref, &ref) == 0, "create ref");
    if (!p || !ref)
        return;
    round_data(&a, type, 0);
    CHECK(run(p, &a) == 0, "eager run before the capture (the per-point arrays)");
    CU(cu.cuStreamSynchronize(S));
    /* the capture: setpts + execute; what cannot be captured refuses, the capture goes on */
    CU(cu.cuStreamBeginCapture(S, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */));
    CHECK(run(p, &a) == 0, "captured setpts + execute");
    CHECK(warpfft_plan_create(type, 2, n, 1, T, tol, prec, &o, &made) == WARPFFT_ERR_UNSUPPORTED,
          "create during the capture");
    CHECK(warpfft_setpts_check(p) == WARPFFT_ERR_UNSUPPORTED, "setpts_check during the capture");
    CHECK(warpfft_setpts(p, prec, 2 * M, a.x, a.y, NULL) == WARPFFT_ERR_UNSUPPORTED,
          "a setpts that would grow the arrays");
    CUgraph graph;
    CUgraphExec exec = capture_end(&graph);
    if (!exec)
        return;
    CHECK(warpfft_plan_destroy(p) == WARPFFT_ERR_INVALID_ARG, "destroy while the graph lives");
    double worst = 0;
    for (int k = 1; k <= ROUNDS; k++) {
        round_data(&a, type, k); /* new points and inputs in the same arrays */
        replay(exec);
        fetch_out(&a, type, a.host_a);
        CHECK(run(ref, &a) == 0, "eager reference");
        warpfft_stream_sync(0, 0);
        fetch_out(&a, type, a.host_b);
        int64_t cnt = type == 1 ? (int64_t)T * N1 * N2 : (int64_t)T * M;
        double d = rel_diff(a.host_a, a.host_b, cnt, prec);
        worst = d > worst ? d : worst;
        if (deterministic && type == 1)
            CHECK(memcmp(a.host_a, a.host_b, a.fk_bytes) == 0, "replay %d: not bit for bit", k);
        else
            CHECK(d < (prec == WARPFFT_F64 ? 1e-12 : 2e-6), "replay %d: relative difference %.3g",
                  k, d);
    }
    graph_free(exec, graph);
    CHECK(poll(plan_destroyed, p), "destroy after the graph is gone");
    CHECK(warpfft_plan_destroy(ref) == 0, "destroy ref");
    arrays_free(&a);
    printf("  own plan, type %d %s%s: %d replays against eager, worst relative difference %.3g%s\n",
           type, prec == WARPFFT_F64 ? "f64" : "f32", deterministic ? " deterministic" : "", ROUNDS,
           worst, n_fail == fails0 ? "" : "  FAILED");
}

/* ---- 2. a pooled plan ---- */

static warpfft_pool_info pool_info(void) {
    warpfft_pool_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    warpfft_pool_get_info(&i);
    return i;
}

/* Whether the pool destroyed the graph's plan (at a clear) since i0 (its info before). */
static int pooled_plan_destroyed(void *i0) {
    const warpfft_pool_info *before = i0;
    warpfft_pool_clear();
    warpfft_pool_info i = pool_info();
    return i.busy == before->busy && i.destroyed == before->destroyed + 1;
}

static void pooled_plan(void) {
    int fails0 = n_fail;
    arrays a;
    arrays_make(&a, WARPFFT_F32);
    int64_t n[3] = {N1, N2, 1};
    warpfft_opts o = opts_on((uint64_t)(uintptr_t)S, 0), o_ref = opts_on(0, 0);
    warpfft_plan p = NULL, q = NULL, ref = NULL;
    CHECK(warpfft_plan_create(1, 2, n, 1, T, 1e-5, WARPFFT_F32, &o_ref, &ref) == 0, "ref");
    round_data(&a, 1, 0);
    /* the warm-up before the capture: the pool's plan for the stream */
    CHECK(warpfft_pool_acquire(1, 2, n, 1, T, 1e-5, WARPFFT_F32, &o, &p) == 0 && run(p, &a) == 0 &&
              warpfft_pool_release(p, 0) == 0,
          "warm-up");
    CU(cu.cuStreamSynchronize(S));
    warpfft_pool_info i0 = pool_info();
    CU(cu.cuStreamBeginCapture(S, 0));
    CHECK(warpfft_pool_acquire(1, 2, n, 1, T, 1e-5, WARPFFT_F32, &o, &q) == 0 && q == p,
          "the idle plan during the capture");
    CHECK(run(q, &a) == 0 && warpfft_pool_release(q, 0) == 0, "captured run and release");
    CUgraph graph;
    CUgraphExec exec = capture_end(&graph);
    if (!exec)
        return;
    CHECK(pool_info().busy == i0.busy + 1, "the graph's plan counted busy");
    CHECK(warpfft_pool_clear() == 0 && pool_info().busy == i0.busy + 1 &&
              pool_info().destroyed == i0.destroyed,
          "a clear spares the graph's plan");
    for (int k = 1; k <= ROUNDS; k++) {
        round_data(&a, 1, k);
        replay(exec);
        fetch_out(&a, 1, a.host_a);
        CHECK(run(ref, &a) == 0, "ref");
        warpfft_stream_sync(0, 0);
        fetch_out(&a, 1, a.host_b);
        double d = rel_diff(a.host_a, a.host_b, (int64_t)T * N1 * N2, WARPFFT_F32);
        CHECK(d < 2e-6, "pooled replay %d: relative difference %.3g", k, d);
    }
    graph_free(exec, graph);
    /* the clear doomed it: destroyed once the graph let go, at a pool call */
    CHECK(poll(pooled_plan_destroyed, &i0), "the graph's plan destroyed after the graph");
    CHECK(warpfft_plan_destroy(ref) == 0, "destroy ref");
    arrays_free(&a);
    printf("  pooled plan: %d replays against eager, the plan the graph's until it was freed%s\n",
           ROUNDS, n_fail == fails0 ? "" : "  FAILED");
}

/* ---- 3. type 3 ---- */

static void type3(void) {
    int fails0 = n_fail;
    unsigned seed = 99;
    void *x = NULL, *s = NULL, *c = NULL, *f = NULL;
    warpfft_malloc(0, M * 4, &x);
    warpfft_malloc(0, K3 * 4, &s);
    warpfft_malloc(0, (size_t)M * 8, &c);
    warpfft_malloc(0, (size_t)K3 * 8, &f);
    float *h1 = malloc(K3 * 8), *h2 = malloc(K3 * 8);
    upload_reals(x, M, WARPFFT_F32, -3, 3, &seed);
    upload_reals(s, K3, WARPFFT_F32, -20, 20, &seed);
    warpfft_opts o = opts_on((uint64_t)(uintptr_t)S, 0), o_ref = opts_on(0, 0);
    warpfft_plan p = NULL, ref = NULL;
    CHECK(warpfft_plan_create(3, 1, NULL, 1, 1, 1e-5, WARPFFT_F32, &o, &p) == 0, "create 3");
    CHECK(warpfft_plan_create(3, 1, NULL, 1, 1, 1e-5, WARPFFT_F32, &o_ref, &ref) == 0, "ref 3");
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, K3, s, NULL, NULL) == 0 &&
              warpfft_setpts3(ref, WARPFFT_F32, M, x, NULL, NULL, K3, s, NULL, NULL) == 0,
          "setpts3 before the capture");
    CU(cu.cuStreamBeginCapture(S, 0));
    CHECK(warpfft_setpts3(p, WARPFFT_F32, M, x, NULL, NULL, K3, s, NULL, NULL) ==
              WARPFFT_ERR_UNSUPPORTED,
          "setpts3 during the capture");
    CHECK(warpfft_execute(p, WARPFFT_F32, c, f) == 0, "captured type-3 execute");
    CUgraph graph;
    CUgraphExec exec = capture_end(&graph);
    if (!exec)
        return;
    double worst = 0;
    for (int k = 1; k <= ROUNDS; k++) {
        upload_reals(c, 2 * M, WARPFFT_F32, -1, 1, &seed);
        replay(exec);
        warpfft_memcpy_dtoh(0, h1, f, K3 * 8);
        CHECK(warpfft_execute(ref, WARPFFT_F32, c, f) == 0, "ref 3");
        warpfft_stream_sync(0, 0);
        warpfft_memcpy_dtoh(0, h2, f, K3 * 8);
        double d = rel_diff(h1, h2, K3, WARPFFT_F32);
        worst = d > worst ? d : worst;
        CHECK(d < 2e-6, "type 3 replay %d: relative difference %.3g", k, d);
    }
    graph_free(exec, graph);
    CHECK(poll(plan_destroyed, p) && warpfft_plan_destroy(ref) == 0, "destroy type 3 plans");
    warpfft_free(0, x);
    warpfft_free(0, s);
    warpfft_free(0, c);
    warpfft_free(0, f);
    free(h1);
    free(h2);
    printf("  type 3: %d replays of a captured execute, worst relative difference %.3g%s\n", ROUNDS,
           worst, n_fail == fails0 ? "" : "  FAILED");
}

/* ---- 4. the Toeplitz operator ---- */

/* An operator of the caller's (its apply captured) and a zero operator of the pool (acquired,
 * applied with a spectrum and released during the capture): replays with new modes against
 * eager applications; each held by the graph until it is freed. */
static int operator_destroyed(void *op) {
    return warpfft_toeplitz_destroy(op) == 0;
}

/* Whether the pool's busy operators are as many as in i0 (its info before). */
static int pool_operator_back(void *i0) {
    return pool_info().operators_busy == ((const warpfft_pool_info *)i0)->operators_busy;
}

static void toeplitz(void) {
    int fails0 = n_fail;
    arrays a;
    arrays_make(&a, WARPFFT_F32);
    round_data(&a, 2, 0); /* points, and modes in a.fk */
    int64_t n[3] = {N1, N2, 1}, modes = (int64_t)T * N1 * N2;
    warpfft_opts o = opts_on((uint64_t)(uintptr_t)S, 0), o_ref = opts_on(0, 0);
    warpfft_toeplitz op = NULL, z = NULL, z2 = NULL;
    CHECK(warpfft_toeplitz_create(2, n, -1, T, 1e-5, WARPFFT_F32, &o, M, a.x, a.y, NULL,
                                  WARPFFT_WEIGHTS_NONE, NULL, &op) == 0,
          "operator: %s", warpfft_last_error());
    warpfft_toeplitz_info info;
    CHECK(warpfft_toeplitz_get_info(op, &info) == 0, "info");
    void *spec = NULL, *out = NULL, *out2 = NULL;
    warpfft_malloc(0, info.spectrum_bytes, &spec);
    warpfft_malloc(0, a.fk_bytes, &out);
    warpfft_malloc(0, a.fk_bytes, &out2);
    CHECK(warpfft_toeplitz_spectrum(2, n, -1, 1e-5, WARPFFT_F32, &o_ref, M, a.x, a.y, NULL,
                                    WARPFFT_WEIGHTS_NONE, NULL, spec) == 0,
          "spectrum: %s", warpfft_last_error());
    /* warm-up: the pool's zero operator for the stream */
    CHECK(warpfft_pool_acquire_toeplitz(2, n, T, 1e-5, WARPFFT_F32, &o, &z) == 0 &&
              warpfft_toeplitz_apply_spectrum(z, WARPFFT_F32, 1, spec, 0, a.fk, out2) == 0 &&
              warpfft_pool_release_toeplitz(z, 0) == 0,
          "warm-up: %s", warpfft_last_error());
    CHECK(warpfft_toeplitz_apply(op, WARPFFT_F32, 0, a.fk, out) == 0, "eager apply");
    CU(cu.cuStreamSynchronize(S));
    warpfft_pool_info i0 = pool_info();
    CU(cu.cuStreamBeginCapture(S, 0));
    CHECK(warpfft_toeplitz_apply(op, WARPFFT_F32, 0, a.fk, out) == 0, "captured apply");
    CHECK(warpfft_pool_acquire_toeplitz(2, n, T, 1e-5, WARPFFT_F32, &o, &z2) == 0 && z2 == z &&
              warpfft_toeplitz_apply_spectrum(z2, WARPFFT_F32, 1, spec, 0, a.fk, out2) == 0 &&
              warpfft_pool_release_toeplitz(z2, 0) == 0,
          "captured pooled apply: %s", warpfft_last_error());
    CHECK(warpfft_toeplitz_destroy(op) != 0, "destroy refused during the capture");
    CUgraph graph;
    CUgraphExec exec = capture_end(&graph);
    if (!exec)
        return;
    CHECK(warpfft_toeplitz_destroy(op) == WARPFFT_ERR_INVALID_ARG, "destroy refused (graph)");
    CHECK(pool_info().operators_busy == i0.operators_busy + 1, "the graph's operator busy");
    double worst = 0;
    for (int k = 1; k <= ROUNDS; k++) {
        unsigned seed = 555u + (unsigned)k;
        upload_reals(a.fk, 2 * modes, WARPFFT_F32, -1, 1, &seed);
        replay(exec);
        for (int which = 0; which < 2; which++) {
            warpfft_memcpy_dtoh(0, a.host_a, which ? out2 : out, a.fk_bytes);
            CHECK(warpfft_toeplitz_apply(op, WARPFFT_F32, 0, a.fk, out) == 0, "eager");
            CU(cu.cuStreamSynchronize(S));
            warpfft_memcpy_dtoh(0, a.host_b, out, a.fk_bytes);
            double d = rel_diff(a.host_a, a.host_b, modes, WARPFFT_F32);
            worst = d > worst ? d : worst;
            CHECK(d < 2e-5, "Toeplitz replay %d (%s): relative difference %.3g", k,
                  which ? "pooled, spectrum" : "own", d);
        }
    }
    graph_free(exec, graph);
    CHECK(poll(operator_destroyed, op), "the operator destroyed after the graph");
    CHECK(poll(pool_operator_back, &i0), "the pool's operator back after the graph");
    warpfft_free(0, spec);
    warpfft_free(0, out);
    warpfft_free(0, out2);
    arrays_free(&a);
    printf("  Toeplitz: %d replays (own operator, pooled zero operator) against eager, worst "
           "relative difference %.3g%s\n",
           ROUNDS, worst, n_fail == fails0 ? "" : "  FAILED");
}

int main(void) {
    if (!load_driver()) {
        printf("graph capture: SKIPPED, no GPU (no CUDA driver libcuda.so.1 with the graph API)\n");
        return 2;
    }
    if (warpfft_init(0) != WARPFFT_SUCCESS) {
        printf("graph capture: SKIPPED, no GPU (%s)\n", warpfft_last_error());
        return 2;
    }
    int dev = 0;
    CUcontext ctx = NULL;
    if (cu.cuInit(0) || cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cu.cuCtxSetCurrent(ctx) || cu.cuStreamCreate(&S, 1 /* CU_STREAM_NON_BLOCKING */)) {
        printf("graph capture: FAILED to set up a stream\n");
        return 1;
    }
    own_plan(1, WARPFFT_F32, 0);
    own_plan(2, WARPFFT_F32, 0);
    own_plan(1, WARPFFT_F64, 0);
    own_plan(2, WARPFFT_F64, 0);
    own_plan(1, WARPFFT_F32, 1);
    pooled_plan();
    type3();
    toeplitz();
    warpfft_pool_clear();
    cu.cuStreamDestroy(S);
    printf("graph capture: %d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
