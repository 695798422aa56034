/*
 * fuzz_abi.c — libFuzzer target: the argument checking of the public C ABI (warpfft.h), the
 * whole C core running on the stand-in driver and cuFFT of the fault-injection suite
 * (c_core/tests/standin*.c: "device" memory on the host, every access bounds-checked). The input
 * is a sequence of calls with chosen arguments: warpfft_plan_params, warpfft_plan_params3,
 * warpfft_plan_create (types 1-3, any sizes, tolerances, precisions), warpfft_setpts and
 * warpfft_setpts3 (any M and K; coordinates NULL or device arrays of exactly what the plan's
 * precision needs), warpfft_execute (NULL or exactly sized arrays), warpfft_plan_get_info,
 * warpfft_plan_workspace_bytes, warpfft_setpts_check, warpfft_direct_sample(3) argument checks,
 * warpfft_plan_destroy; batched points (warpfft_setpts_sets, warpfft_setpts3_sets); the
 * live-plan pool (warpfft_pool_acquire into pooled slots, whose plans the other calls use too,
 * _release with any flags, _clear, _set_limits, _get_info with any struct_size,
 * warpfft_plan_points_id); the one-call transforms over it (warpfft_nufft1, _nufft2, _nufft3); the
 * Toeplitz operator (warpfft_toeplitz_create, _apply, _apply_spectrum, _spectrum, _params,
 * _get_info, _workspace_bytes, _destroy; zero operators from the pool:
 * warpfft_pool_acquire_toeplitz / _release_toeplitz); and stream capture into CUDA graphs (the
 * stand-in's stream 0x5150 captured in relaxed mode, graphs destroyed at any point, their user
 * objects' destructors run late or at once). Options NULL, defaults with fields changed, or an opts
 * struct of any struct_size (allocated with exactly that many bytes, at most 8 KiB, so reading past
 * it is an ASan error) and any bytes. A call must return a status of warpfft.h with a message
 * exactly when it fails, leave *plan (*op) NULL when creation fails, never touch device memory
 * outside the arrays it was given nor wait for a capturing stream or copy host memory on it (the
 * stand-in counts violations), never destroy a plan a CUDA graph holds or a pooled one (plan or
 * operator), and never accept opts.spreadinterponly for type 3 nor opts.real_data for type 3,
 * spread/interp only or the Toeplitz operator; after each input the capture ends,
 * the graphs are destroyed, every plan and operator is released or destroyed, the pool and the plan
 * cache emptied, and no device allocation, cuFFT plan, event, user object or context push may be
 * left. Any other outcome aborts, as do the sanitizers. At exit the calls per entry point (and how
 * many succeeded) go to stderr (run.sh prints them). c_core/fuzz/run.sh builds it with the C core
 * and runs it on the stand-ins; corpus/fuzz_abi holds the seeds (make_seeds.py); WF_FUZZ_TRACE=1
 * prints every call and its status (fuzz_abi SEED runs one input).
 * One file past the usual size on purpose: one input interleaves every call family (plans,
 * pooled plans, operators, one-call transforms, graphs) over the same static slots and device
 * arrays, and those interleavings are what it tests; a split would move the slots into a shared
 * header without making any family readable alone.
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"
#include "standin.h"
#include "warpfft.h"

static standin_get_fn get_counts;
static standin_capture_begin_fn capture_begin;
static standin_capture_end_fn capture_end;
static standin_graph_destroy_fn graph_destroy;
static standin_defer_destructors_fn defer_destructors;
static standin_run_destructors_fn run_destructors;

static void bug(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bug(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_abi: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (last error: %s)\n", warpfft_last_error());
    va_end(ap);
    abort();
}

static standin_counts counts(void) {
    standin_counts c;
    get_counts(&c);
    return c;
}

/* ---- calls per entry point (printed at exit) ---- */

enum { MAX_NAMES = 64 };
static struct {
    const char *name;
    long calls, ok;
} hits[MAX_NAMES];
static int cleaning; /* clean_up's calls are not the input's: not counted */

static void count_call(const char *what, warpfft_status st) {
    if (cleaning)
        return;
    int i = 0;
    while (i < MAX_NAMES && hits[i].name && strcmp(hits[i].name, what) != 0)
        i++;
    if (i == MAX_NAMES)
        return;
    hits[i].name = what;
    hits[i].calls++;
    hits[i].ok += st == WARPFFT_SUCCESS;
}

static void print_hits(void) {
    char line[160];
    size_t used = 0;
    line[0] = '\0';
    for (int i = 0; i < MAX_NAMES && hits[i].name; i++) {
        char item[80];
        int n = snprintf(item, sizeof item, " %s %ld (%ld ok)", hits[i].name, hits[i].calls,
                         hits[i].ok);
        if (used > 0 && used + (size_t)n > 100) {
            fprintf(stderr, "fuzz_abi calls:%s\n", line);
            used = 0;
            line[0] = '\0';
        }
        snprintf(line + used, sizeof line - used, "%s", item);
        used += (size_t)n;
    }
    if (used > 0)
        fprintf(stderr, "fuzz_abi calls:%s\n", line);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    atexit(print_hits);
    if (warpfft_init(0) != WARPFFT_SUCCESS) {
        fprintf(stderr, "fuzz_abi: init on the stand-in driver: %s\n", warpfft_last_error());
        exit(1);
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    standin_mem_limit_fn limit = h ? (standin_mem_limit_fn)dlsym(h, "standin_mem_limit") : NULL;
    get_counts = h ? (standin_get_fn)dlsym(h, "standin_get") : NULL;
    capture_begin = h ? (standin_capture_begin_fn)dlsym(h, "standin_capture_begin") : NULL;
    capture_end = h ? (standin_capture_end_fn)dlsym(h, "standin_capture_end") : NULL;
    graph_destroy = h ? (standin_graph_destroy_fn)dlsym(h, "standin_graph_destroy") : NULL;
    defer_destructors =
        h ? (standin_defer_destructors_fn)dlsym(h, "standin_defer_destructors") : NULL;
    run_destructors = h ? (standin_run_destructors_fn)dlsym(h, "standin_run_destructors") : NULL;
    if (!limit || !get_counts || !capture_begin || !capture_end || !graph_destroy ||
        !defer_destructors || !run_destructors) {
        fprintf(stderr, "fuzz_abi: the stand-in libcuda.so.1 is not the one loaded\n");
        exit(1);
    }
    limit((size_t)32 << 20); /* the stand-in GPU's memory: host memory and memsets stay small */
    return 0;
}

/* ---- the input, read as a stream of choices (fuzz_reader.h) ---- */

/* A count: mostly small, else one of the edges, else any 64 bits. */
static int64_t pick_int(reader *r) {
    static const int64_t edge[] = {-1,
                                   -2,
                                   1000,
                                   4096,
                                   INT32_MAX,
                                   (int64_t)INT32_MAX + 1,
                                   INT32_MIN,
                                   UINT32_MAX,
                                   (int64_t)1 << 31,
                                   (int64_t)1 << 40,
                                   ((int64_t)1 << 56) + 1,
                                   INT64_MAX,
                                   INT64_MIN};
    return take_int(r, 192, 40, edge, sizeof edge / sizeof edge[0]);
}

static double pick_double(reader *r) {
    static const double v[] = {1e-1,  1e-2, 1e-3, 1e-5, 1e-6, 1e-7, 1e-9,     1e-12,    1e-13,
                               1e-14, 0.0,  -1.0, 2.0,  1.25, NAN,  INFINITY, -INFINITY};
    return take_double(r, v, sizeof v / sizeof v[0]);
}

static int pick_small(reader *r, int lo, int hi) { /* mostly lo..hi, sometimes anything */
    uint8_t b = (uint8_t)take(r, 1);
    return b < 224 ? lo + b % (hi - lo + 1) : (int)pick_int(r);
}

/* a * b, or UINT64_MAX when it does not fit (then too large for any array made here). */
static uint64_t mul(uint64_t a, uint64_t b) {
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* ---- options ---- */

/* opts for a call: NULL, or a heap copy of exactly its struct_size bytes (min 4, max 8 KiB):
 * defaults with fields changed, or any bytes. *sio: bits of what it certainly asks for (a
 * full-size struct with the field 1): SIO spreadinterponly, REAL real_data; else 0. Free with
 * free(). */
enum { SIO = 1, REAL = 2 };
static warpfft_opts *pick_opts(reader *r, int *sio) {
    *sio = 0;
    uint8_t mode = (uint8_t)take(r, 1) % 8;
    if (mode == 0)
        return NULL;
    unsigned char raw[8192];
    memset(raw, 0, sizeof raw);
    warpfft_opts o;
    warpfft_opts_default(&o);
    uint32_t size = (uint32_t)sizeof o;
    if (mode < 6) { /* defaults, some fields changed */
        for (uint8_t fields = (uint8_t)take(r, 1), f = 0; f < 8; f++) {
            if (!(fields >> f & 1))
                continue;
            switch (f) {
            case 0:
                o.modeord = pick_small(r, 0, 2);
                break;
            case 1:
                o.method = pick_small(r, 0, 4);
                break;
            case 2:
                o.device = pick_small(r, 0, 1);
                break;
            case 3:
                o.upsampfac = pick_double(r);
                break;
            case 4:
                o.stream = take(r, 1) % 2 ? 0x5150 : 0; /* a stream the caller owns */
                break;
            case 5:
                for (int d = 0; d < 3; d++)
                    o.bin_size[d] = pick_small(r, 0, 40);
                o.max_subprob = pick_small(r, 0, 2000);
                break;
            case 6:
                o.spreadinterponly = pick_small(r, 0, 2);
                o.deterministic = pick_small(r, 0, 2);
                o.real_data = pick_small(r, 0, 2);
                break;
            default:
                o.check_points = pick_small(r, 0, 2);
            }
        }
        memcpy(raw, &o, sizeof o);
        if (mode == 5) { /* another size: an older header's, a newer one's, or anything */
            uint8_t s = (uint8_t)take(r, 1);
            size = s < 64    ? (uint32_t)offsetof(warpfft_opts, spreadinterponly)
                   : s < 192 ? (uint32_t)sizeof o + s % 32
                             : (uint32_t)take(r, 4);
            if (s >= 128 && s < 192) /* a newer header's option set: not zero */
                raw[sizeof o + s % 32 / 2] = (unsigned char)take(r, 1);
        }
    } else { /* any bytes */
        size = (uint32_t)take(r, 4);
        for (size_t i = 4; i < sizeof o + 16; i++)
            raw[i] = (unsigned char)take(r, 1);
    }
    memcpy(raw, &size, sizeof size);
    size_t bytes = size < 4 ? 4 : size > sizeof raw ? sizeof raw : size;
    warpfft_opts *p = malloc(bytes);
    if (!p)
        bug("out of host memory");
    memcpy(p, raw, bytes);
    int full = size == sizeof o && mode < 6;
    *sio = (full && o.spreadinterponly == 1 ? SIO : 0) | (full && o.real_data == 1 ? REAL : 0);
    return p;
}

/* ---- checks every call gets ---- */

static long violations_before;

static warpfft_status checked(const char *what, warpfft_status st) {
    const char *msg = warpfft_last_error();
    static int trace = -1; /* WF_FUZZ_TRACE set: every call to stderr (what a seed does) */
    if (trace < 0)
        trace = getenv("WF_FUZZ_TRACE") != NULL;
    if (trace)
        fprintf(stderr, "%s: %s %s\n", what, warpfft_status_name(st), msg);
    count_call(what, st);
    if ((int)st < 0 || (int)st > WARPFFT_ERR_NO_NVRTC)
        bug("%s returned %d, not a warpfft_status", what, (int)st);
    if (st == WARPFFT_ERR_INTERNAL)
        bug("%s: WARPFFT_ERR_INTERNAL", what);
    if ((st != WARPFFT_SUCCESS) != (msg[0] != '\0'))
        bug("%s returned %s with the message '%s'", what, warpfft_status_name(st), msg);
    long v = counts().violations;
    if (v != violations_before)
        bug("%s touched device memory outside the arrays it was given (stand-in: see above)", what);
    return st;
}

/* ---- device arrays (through the ABI, on the stand-in) ---- */

enum { MAX_ARRAYS = 96, MAX_PLANS = 3, MAX_M = 4096 };
static void *arrays[MAX_ARRAYS];
static int n_arrays;

/* A device array of `bytes`, zeros (NULL when 0, too large or out of slots). */
static void *dalloc(uint64_t bytes) {
    void *p = NULL;
    if (bytes == 0 || bytes > ((uint64_t)16 << 20) || n_arrays == MAX_ARRAYS ||
        warpfft_malloc(0, (size_t)bytes, &p) != WARPFFT_SUCCESS)
        return NULL;
    warpfft_memset(0, p, 0, (size_t)bytes);
    arrays[n_arrays++] = p;
    return p;
}

/* Coordinates for `n` points of a plan of `real` bytes per coordinate: each NULL or exactly
 * n reals (n <= MAX_M), x_j = scale * (j - n / 2) + shift (the stand-in computes type 3's
 * bounds from them; NaN, infinite or huge scales included). */
static void coords(reader *r, int64_t n, size_t real, const void *c[3]) {
    uint8_t nulls = (uint8_t)take(r, 1);
    for (int d = 0; d < 3; d++) {
        c[d] = nulls >> d & 1 || n < 1 || n > MAX_M ? NULL : dalloc((uint64_t)n * real);
        if (!c[d] || !(nulls & 0x80))
            continue; /* zeros */
        double scale = pick_double(r), shift = (double)(int8_t)take(r, 1);
        static double v[MAX_M];
        static float f[MAX_M];
        for (int64_t j = 0; j < n; j++) {
            v[j] = scale * (double)(j - n / 2) + shift;
            f[j] = fabs(v[j]) <= FLT_MAX || v[j] != v[j] ? (float)v[j]
                   : v[j] > 0                            ? HUGE_VALF
                                                         : -HUGE_VALF;
        }
        warpfft_memcpy_htod(0, (void *)c[d], real == 8 ? (void *)v : (void *)f, (size_t)n * real);
    }
}

/* ---- the calls ---- */

static warpfft_plan plans[MAX_PLANS];  /* warpfft_plan_create's */
static warpfft_plan pooled[MAX_PLANS]; /* warpfft_pool_acquire's, until released */

/* A plan of either kind (or NULL) for the calls that take one. */
static warpfft_plan pick_plan(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    return b % 8 == 7 ? NULL : (b & 8 ? pooled : plans)[b % MAX_PLANS];
}

/* Destroys the plan of slot (a NULL slot: nothing), which must not be a pooled plan; clears the
 * slot when it went. A CUDA graph holding it, or its stream being captured, keeps it (refused). */
static int destroy_slot(int slot) {
    warpfft_status st = checked("plan_destroy", warpfft_plan_destroy(plans[slot]));
    if (st == WARPFFT_SUCCESS)
        plans[slot] = NULL;
    else if (st != WARPFFT_ERR_INVALID_ARG && st != WARPFFT_ERR_UNSUPPORTED)
        bug("plan_destroy failed with %s", warpfft_status_name(st));
    return st == WARPFFT_SUCCESS;
}

/* The plan's precision, type, dim, ntransf, modes product, M and K (0 if unknown). */
typedef struct shape_t {
    int ok, type, precision;
    int64_t ntransf, modes, M, K;
    int real; /* real_data: real strengths, modes the half N1/2 + 1 along dimension 1 */
} shape_t;

static shape_t shape_of(warpfft_plan plan) {
    shape_t s = {0, 0, WARPFFT_F32, 0, 0, 0, 0, 0};
    warpfft_plan_info info;
    if (!plan || checked("plan_get_info", warpfft_plan_get_info(plan, &info)) != WARPFFT_SUCCESS)
        return s;
    uint64_t n1 = (uint64_t)(info.real_data ? info.n_modes[0] / 2 + 1 : info.n_modes[0]);
    uint64_t modes = mul(mul(n1, (uint64_t)info.n_modes[1]), (uint64_t)info.n_modes[2]);
    s = (shape_t){1,
                  info.type,
                  info.precision,
                  info.ntransf,
                  modes > INT64_MAX ? INT64_MAX : (int64_t)modes,
                  info.n_points > 0 ? info.n_points : 0,
                  info.n_targets > 0 ? info.n_targets : 0,
                  info.real_data};
    return s;
}

static void call_params(reader *r, int three) {
    int sio, dim = pick_small(r, 1, 3), prec = pick_small(r, 1, 2);
    int64_t n[3];
    for (int d = 0; d < 3; d++) /* one at a time: an initializer list has no order */
        n[d] = pick_int(r);
    int64_t ntransf = pick_int(r);
    double tol = pick_double(r);
    warpfft_opts *o = pick_opts(r, &sio);
    warpfft_plan_info info;
    warpfft_status st;
    if (three) {
        double b[4][3];
        for (int i = 0; i < 4; i++)
            for (int d = 0; d < 3; d++)
                b[i][d] = take(r, 1) % 4 ? (double)(int8_t)take(r, 1) : pick_double(r);
        uint8_t nulls = (uint8_t)take(r, 1);
        st = checked("plan_params3",
                     warpfft_plan_params3(dim, ntransf, tol, (warpfft_precision)prec, o,
                                          nulls & 1 ? NULL : b[0], nulls & 2 ? NULL : b[1],
                                          nulls & 4 ? NULL : b[2], nulls & 8 ? NULL : b[3],
                                          nulls & 16 ? NULL : &info));
        if (sio && st == WARPFFT_SUCCESS)
            bug("plan_params3 accepted opts.spreadinterponly = 1 or opts.real_data = 1");
    } else {
        int type = pick_small(r, 1, 3);
        uint8_t nulls = (uint8_t)take(r, 1);
        st = checked("plan_params",
                     warpfft_plan_params(type, dim, nulls & 1 ? NULL : n, ntransf, tol,
                                         (warpfft_precision)prec, o, nulls & 2 ? NULL : &info));
        if (st == WARPFFT_SUCCESS && sio == (SIO | REAL))
            bug("plan_params accepted opts.real_data = 1 with opts.spreadinterponly = 1");
    }
    free(o);
}

/* plan_create's arguments as the input gives them (pool_acquire takes the same). */
typedef struct create_args {
    int type, dim, prec, iflag, sio;
    int64_t n[3], ntransf;
    double tol;
    warpfft_opts *o; /* freed by make_plan, or by the caller when it makes none */
    uint8_t nulls;   /* 1: n is NULL; 2: the result pointer is */
} create_args;

static create_args pick_create(reader *r) {
    create_args a;
    a.type = pick_small(r, 1, 3);
    a.dim = pick_small(r, 1, 3);
    a.prec = pick_small(r, 1, 2);
    for (int d = 0; d < 3; d++)
        a.n[d] = pick_int(r);
    a.ntransf = pick_int(r);
    a.iflag = (int)pick_int(r);
    a.tol = pick_double(r);
    a.o = pick_opts(r, &a.sio);
    a.nulls = (uint8_t)take(r, 1);
    return a;
}

typedef warpfft_status (*make_fn)(int type, int dim, const int64_t n_modes[3], int iflag,
                                  int64_t ntransf, double tol, warpfft_precision precision,
                                  const warpfft_opts *opts, warpfft_plan *plan);

/* make (plan_create or pool_acquire, named `name`) on a, whose options it frees; a failure must
 * leave *plan NULL. Returns the plan, or NULL (a failure, or no result pointer). */
static warpfft_plan make_plan(const char *name, make_fn make, create_args *a) {
    warpfft_plan plan = (warpfft_plan)&plans; /* must be overwritten */
    warpfft_status st =
        checked(name, make(a->type, a->dim, a->nulls & 1 ? NULL : a->n, a->iflag, a->ntransf,
                           a->tol, (warpfft_precision)a->prec, a->o, a->nulls & 2 ? NULL : &plan));
    free(a->o);
    if (a->nulls & 2)
        return NULL;
    if (st != WARPFFT_SUCCESS && plan != NULL)
        bug("%s failed but left *plan = %p", name, (void *)plan);
    return st == WARPFFT_SUCCESS ? plan : NULL;
}

static void call_create(reader *r) {
    int slot = (int)(take(r, 1) % MAX_PLANS);
    create_args a = pick_create(r);
    if (plans[slot] && !destroy_slot(slot)) { /* a graph holds it: no room */
        free(a.o);
        return;
    }
    plans[slot] = make_plan("plan_create", warpfft_plan_create, &a); /* the slot is empty */
    if (plans[slot] && a.type == 3 && a.sio)
        bug("plan_create(3) accepted opts.spreadinterponly = 1 or opts.real_data = 1");
    if (plans[slot] && a.sio == (SIO | REAL))
        bug("plan_create accepted opts.real_data = 1 with opts.spreadinterponly = 1");
}

/* setpts / setpts3, or (sets) their batched-points forms: n_sets sets of M (and K) points,
 * the coordinate arrays n_sets * M (n_sets * K) long when that fits MAX_M. */
static void call_setpts(reader *r, int three, int sets) {
    warpfft_plan plan = pick_plan(r);
    shape_t s = shape_of(plan);
    int prec = take(r, 1) % 8 ? s.precision : pick_small(r, 1, 2);
    size_t real = s.precision == WARPFFT_F64 ? 8 : 4; /* what the plan reads */
    int64_t n_sets = sets ? pick_small(r, 1, 4) : 1;
    int64_t M = pick_int(r), K = three ? pick_int(r) : 0;
    int64_t span_m = n_sets > 0 && M >= 0 && M <= MAX_M / n_sets ? n_sets * M : -1;
    int64_t span_k = n_sets > 0 && K >= 0 && K <= MAX_M / n_sets ? n_sets * K : -1;
    const void *x[3], *t[3];
    coords(r, span_m, real, x);
    if (three)
        coords(r, span_k, real, t);
    warpfft_precision p = (warpfft_precision)prec;
    if (three && sets)
        checked("setpts3_sets",
                warpfft_setpts3_sets(plan, p, n_sets, M, x[0], x[1], x[2], K, t[0], t[1], t[2]));
    else if (three)
        checked("setpts3", warpfft_setpts3(plan, p, M, x[0], x[1], x[2], K, t[0], t[1], t[2]));
    else if (sets)
        checked("setpts_sets", warpfft_setpts_sets(plan, p, n_sets, M, x[0], x[1], x[2]));
    else
        checked("setpts", warpfft_setpts(plan, p, M, x[0], x[1], x[2]));
}

static void call_execute(reader *r) {
    warpfft_plan plan = pick_plan(r);
    shape_t s = shape_of(plan);
    int prec = take(r, 1) % 8 ? s.precision : pick_small(r, 1, 2);
    uint64_t cb = s.precision == WARPFFT_F64 ? 16 : 8;
    uint64_t nk = s.type == 3 ? (uint64_t)s.K : (uint64_t)s.modes;
    uint8_t nulls = (uint8_t)take(r, 1);
    uint64_t vb = s.real ? cb / 2 : cb; /* real data: real strengths */
    void *c = nulls & 1 ? NULL : dalloc(mul(mul((uint64_t)s.ntransf, (uint64_t)s.M), vb));
    void *fk = nulls & 2 ? NULL : dalloc(mul(mul((uint64_t)s.ntransf, nk), cb));
    warpfft_status st = checked("execute", warpfft_execute(plan, (warpfft_precision)prec, c, fk));
    (void)st;
}

static void call_info(reader *r) {
    warpfft_plan plan = pick_plan(r);
    warpfft_plan_info info;
    size_t bytes;
    uint8_t b = (uint8_t)take(r, 1);
    switch (b % 4) {
    case 0:
        checked("plan_get_info", warpfft_plan_get_info(plan, b & 4 ? NULL : &info));
        break;
    case 1:
        checked("plan_workspace_bytes", warpfft_plan_workspace_bytes(plan, b & 4 ? NULL : &bytes));
        break;
    case 2:
        checked("setpts_check", warpfft_setpts_check(plan));
        break;
    default:
        checked("opts_default", warpfft_opts_default(b & 4 ? NULL : &(warpfft_opts){0}));
    }
}

/* The exact sums' argument checks: coordinates and strengths as the call's sizes need (or
 * NULL), a host sample list of any indices. */
static void call_direct(reader *r, int three) {
    int dim = pick_small(r, 1, 3), prec = pick_small(r, 1, 2), type = pick_small(r, 1, 2);
    size_t real = prec == WARPFFT_F64 ? 8 : 4;
    int64_t M = pick_int(r), K = three ? pick_int(r) : 0;
    int64_t n[3], n_sample, sample[8];
    for (int d = 0; d < 3; d++)
        n[d] = pick_small(r, 1, 8);
    n_sample = pick_small(r, 0, 8);
    for (int i = 0; i < 8; i++)
        sample[i] = pick_int(r);
    const void *x[3], *t[3];
    coords(r, M, real, x);
    coords(r, K, real, t);
    uint64_t modes = mul(mul((uint64_t)n[0], dim > 1 ? (uint64_t)n[1] : 1),
                         dim > 2 ? (uint64_t)n[2] : 1); /* n >= 1 unless pick_small went wide */
    uint8_t nulls = (uint8_t)take(r, 1);
    const void *c = nulls & 1 || M < 1 || M > MAX_M ? NULL : dalloc((uint64_t)M * 2 * real);
    const void *fk = nulls & 2 ? NULL : dalloc(mul(modes, 2 * real));
    double out[16];
    const int64_t *sp = nulls & 4 || n_sample < 0 || n_sample > 8 ? NULL : sample;
    double *op = nulls & 8 ? NULL : out;
    if (n_sample > 8 && sp) /* the host arrays hold 8 */
        n_sample = 8;
    if (three)
        checked("direct_sample3",
                warpfft_direct_sample3(dim, 1, (warpfft_precision)prec, 0, M, x[0], x[1], x[2], c,
                                       K, t[0], t[1], t[2], n_sample, sp, op));
    else
        checked("direct_sample",
                warpfft_direct_sample(type, dim, n, 1, 0, (warpfft_precision)prec, 0, M, x[0], x[1],
                                      x[2], c, fk, n_sample, sp, op));
}

/* ---- one-call transforms ---- */

/* warpfft_nufft1/2/3 (api/oneshot.c): plan_create's arguments, the points, and data arrays of
 * exactly what the transform reads and writes (or NULL); the call acquires a pooled plan and
 * gives it back, so it must leave no plan in use beyond the input's own slots. */
static void call_oneshot(reader *r) {
    create_args a = pick_create(r);
    size_t real = a.prec == WARPFFT_F64 ? 8 : 4;
    uint64_t cb = 2 * real;
    int64_t M = pick_int(r), K = a.type == 3 ? pick_int(r) : 0;
    const void *x[3], *t[3];
    coords(r, M, real, x);
    coords(r, K, real, t);
    /* real data (types 1 and 2): real strengths and the half modes, N1/2 + 1 along dimension 1 */
    int real_data = (a.sio & REAL) && a.type != 3;
    uint64_t n1 = (uint64_t)a.n[0];
    if (real_data && a.n[0] > 0)
        n1 = n1 / 2 + 1;
    uint64_t modes =
        mul(mul(n1, a.dim > 1 ? (uint64_t)a.n[1] : 1), a.dim > 2 ? (uint64_t)a.n[2] : 1);
    uint64_t nt = a.ntransf > 0 ? (uint64_t)a.ntransf : 1;
    void *c =
        a.nulls & 4 || M < 1 ? NULL : dalloc(mul(mul(nt, (uint64_t)M), real_data ? real : cb));
    void *fk = a.nulls & 8
                   ? NULL
                   : dalloc(mul(mul(nt, a.type == 3 ? (uint64_t)(K > 0 ? K : 0) : modes), cb));
    const int64_t *n = a.nulls & 1 ? NULL : a.n;
    warpfft_precision p = (warpfft_precision)a.prec;
    warpfft_pool_info before = {.struct_size = sizeof before}, after = before;
    checked("pool_get_info", warpfft_pool_get_info(&before));
    if (a.type == 3)
        checked("nufft3", warpfft_nufft3(a.dim, a.iflag, a.ntransf, a.tol, p, a.o, M, x[0], x[1],
                                         x[2], c, K, t[0], t[1], t[2], fk));
    else if (a.type == 2)
        checked("nufft2", warpfft_nufft2(a.dim, n, a.iflag, a.ntransf, a.tol, p, a.o, M, x[0], x[1],
                                         x[2], c, fk));
    else
        checked("nufft1", warpfft_nufft1(a.dim, n, a.iflag, a.ntransf, a.tol, p, a.o, M, x[0], x[1],
                                         x[2], c, fk));
    free(a.o);
    checked("pool_get_info", warpfft_pool_get_info(&after));
    if (after.busy > before.busy)
        bug("a one-call transform left a plan in use (%lld busy, %lld before)",
            (long long)after.busy, (long long)before.busy);
}

/* ---- the live-plan pool ---- */

/* Releases pooled slot `slot` with flags; the slot is emptied unless the release was refused
 * (bad flags, or during a capture), which must change nothing. */
static void release_slot(int slot, uint32_t flags) {
    warpfft_status st = checked("pool_release", warpfft_pool_release(pooled[slot], flags));
    if (st == WARPFFT_ERR_INVALID_ARG && !(flags & ~3u))
        bug("pool_release refused a plan the pool handed out (flags %#x)", (unsigned)flags);
    if (st != WARPFFT_ERR_INVALID_ARG && st != WARPFFT_ERR_UNSUPPORTED)
        pooled[slot] = NULL; /* the caller's no more, whatever the release returned */
}

static void call_pool(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    int slot = b / 8 % MAX_PLANS;
    switch (b % 8) {
    case 0:
    case 1: { /* acquire, as plan_create's arguments */
        create_args a = pick_create(r);
        if (pooled[slot])
            release_slot(slot, 0);
        if (pooled[slot]) { /* refused: still ours */
            free(a.o);
            return;
        }
        pooled[slot] = make_plan("pool_acquire", warpfft_pool_acquire, &a); /* was empty */
        break;
    }
    case 2: {
        uint32_t flags = (uint32_t)(take(r, 1) % 8); /* 4..7: unknown flags */
        if (pooled[slot])
            release_slot(slot, flags);
        break;
    }
    case 3:
        checked("pool_clear", warpfft_pool_clear());
        break;
    case 4: {
        int64_t plans_max = pick_small(r, -1, 4), bytes = take(r, 1) % 2 ? pick_int(r) : -1;
        checked("pool_set_limits", warpfft_pool_set_limits(plans_max, bytes));
        break;
    }
    case 5: { /* any struct_size: what fits is written (a guard after it) */
        struct {
            warpfft_pool_info info;
            unsigned char guard[64];
        } in;
        memset(&in, 0x5a, sizeof in);
        uint8_t sz = (uint8_t)take(r, 1);
        in.info.struct_size = sz % 4 == 0   ? (uint32_t)sizeof in.info
                              : sz % 4 == 1 ? (uint32_t)(sz / 4)
                                            : (uint32_t)(sizeof in.info + sz % 64);
        checked("pool_get_info", warpfft_pool_get_info(sz & 128 ? NULL : &in.info));
        for (size_t i = 0; i < sizeof in.guard; i++)
            if (in.guard[i] != 0x5a && in.info.struct_size <= sizeof in.info)
                bug("pool_get_info wrote past struct_size %u", (unsigned)in.info.struct_size);
        break;
    }
    default: {
        uint64_t id = 0;
        warpfft_plan plan = pick_plan(r);
        checked("plan_points_id", warpfft_plan_points_id(plan, take(r, 1) % 4 ? &id : NULL));
    }
    }
}

/* ---- the Toeplitz operator ---- */

enum { MAX_TOEP = 2 };
static warpfft_toeplitz toeps[MAX_TOEP];
static int toep_pooled[MAX_TOEP]; /* the slot's operator is the pool's (acquire_toeplitz) */

/* Empties a slot: its operator destroyed, or given back to the pool (with `flags`); 0 when that
 * was refused (the operator stays in the slot). A pooled operator's public destroy must refuse. */
static int drop_toep(int slot, uint32_t flags) {
    if (!toeps[slot])
        return 1;
    if (toep_pooled[slot]) {
        if (checked("toeplitz_destroy", warpfft_toeplitz_destroy(toeps[slot])) == 0)
            bug("toeplitz_destroy of an operator of the pool succeeded");
        warpfft_status st =
            checked("pool_release_toeplitz", warpfft_pool_release_toeplitz(toeps[slot], flags));
        if (st == WARPFFT_ERR_UNSUPPORTED || st == WARPFFT_ERR_INVALID_ARG)
            return 0; /* refused (during a capture; bad flags): still ours */
    } else if (checked("toeplitz_destroy", warpfft_toeplitz_destroy(toeps[slot])) != 0) {
        return 0;
    }
    toeps[slot] = NULL;
    toep_pooled[slot] = 0;
    return 1;
}

static warpfft_toeplitz pick_toep(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    return b % 4 == 3 ? NULL : toeps[b % MAX_TOEP];
}

/* What an operator holds: its info (ok = 0 for NULL or a failure). */
static warpfft_toeplitz_info toep_info(warpfft_toeplitz op, int *ok) {
    warpfft_toeplitz_info info;
    memset(&info, 0, sizeof info);
    *ok = op && checked("toeplitz_get_info", warpfft_toeplitz_get_info(op, &info)) == 0;
    return info;
}

/* The arguments create and spectrum share: dim, modes, sign, tol, precision, options, points
 * and weights (device arrays of exactly M reals, or M reals / complexes of the precision). */
typedef struct toep_args {
    int dim, iflag, prec, weights, sio;
    int64_t n[3], M;
    double tol;
    warpfft_opts *o;
    const void *x[3], *w;
} toep_args;

static void toep_args_pick(reader *r, toep_args *a) {
    a->dim = pick_small(r, 1, 3);
    for (int d = 0; d < 3; d++)
        a->n[d] = take(r, 1) % 4 ? pick_small(r, 1, 24) : pick_int(r);
    a->iflag = (int)pick_int(r);
    a->tol = pick_double(r);
    a->prec = pick_small(r, 1, 2);
    a->o = pick_opts(r, &a->sio);
    a->M = pick_int(r);
    size_t real = a->prec == WARPFFT_F64 ? 8 : 4;
    coords(r, a->M, real, a->x);
    a->weights = pick_small(r, 0, 2);
    uint64_t wb = a->weights == 2 ? 2 * real : real;
    a->w = take(r, 1) % 8 == 0 || a->M < 1 || a->M > MAX_M ? NULL : dalloc((uint64_t)a->M * wb);
}

/* A device array of exactly `count` items of `bytes` each (NULL when it cannot be). */
static void *dalloc_n(int64_t count, uint64_t bytes) {
    return count < 1 ? NULL : dalloc(mul((uint64_t)count, bytes));
}

static void call_toeplitz(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    int slot = b / 8 % MAX_TOEP, ok = 0;
    switch (b % 8) {
    case 0:
    case 1: {
        toep_args a;
        toep_args_pick(r, &a);
        int64_t ntransf = take(r, 1) % 4 ? pick_small(r, 1, 3) : pick_int(r);
        uint8_t nulls = (uint8_t)take(r, 1);
        if (!drop_toep(slot, 0)) {
            free(a.o);
            return;
        }
        warpfft_toeplitz op = (warpfft_toeplitz)&toeps;
        int pool = b % 8 == 1; /* a zero operator of the live-plan pool */
        warpfft_status st =
            pool ? checked("pool_acquire_toeplitz",
                           warpfft_pool_acquire_toeplitz(a.dim, nulls & 1 ? NULL : a.n, ntransf,
                                                         a.tol, (warpfft_precision)a.prec, a.o,
                                                         nulls & 2 ? NULL : &op))
                 : checked("toeplitz_create",
                           warpfft_toeplitz_create(a.dim, nulls & 1 ? NULL : a.n, a.iflag, ntransf,
                                                   a.tol, (warpfft_precision)a.prec, a.o, a.M,
                                                   a.x[0], a.x[1], a.x[2], a.weights, a.w,
                                                   nulls & 2 ? NULL : &op));
        free(a.o);
        if (nulls & 2)
            break;
        if (st != WARPFFT_SUCCESS && op != NULL)
            bug("toeplitz_create failed but left *op = %p", (void *)op);
        if (st == WARPFFT_SUCCESS && a.sio)
            bug("toeplitz_create accepted opts.spreadinterponly = 1 or opts.real_data = 1");
        toeps[slot] = st == WARPFFT_SUCCESS ? op : NULL;
        toep_pooled[slot] = pool && st == WARPFFT_SUCCESS;
        break;
    }
    case 2:
    case 3: { /* apply, or apply_spectrum with a spectrum of the shape (real or complex) */
        warpfft_toeplitz op = pick_toep(r);
        warpfft_toeplitz_info in = toep_info(op, &ok);
        int prec = take(r, 1) % 8 ? (ok ? in.precision : 1) : pick_small(r, 1, 2);
        uint64_t cb = (ok && in.precision == WARPFFT_F64) ? 16 : 8;
        int64_t modes = ok ? in.n_modes[0] * in.n_modes[1] * in.n_modes[2] * in.ntransf : 0;
        int64_t grid = ok ? in.n_grid[0] * in.n_grid[1] * in.n_grid[2] : 0;
        uint8_t nulls = (uint8_t)take(r, 1);
        int adjoint = (int)(take(r, 1) % 3);
        void *fin = nulls & 1 ? NULL : dalloc_n(modes, cb);
        void *fout = nulls & 4 ? fin : nulls & 2 ? NULL : dalloc_n(modes, cb); /* in place */
        if (b % 8 == 2) {
            checked("toeplitz_apply",
                    warpfft_toeplitz_apply(op, (warpfft_precision)prec, adjoint, fin, fout));
        } else {
            int real = (int)(take(r, 1) % 3); /* 2: any nonzero is real */
            void *spec = nulls & 8 ? NULL : dalloc_n(grid, real ? cb / 2 : cb);
            checked("toeplitz_apply_spectrum",
                    warpfft_toeplitz_apply_spectrum(op, (warpfft_precision)prec, real, spec,
                                                    adjoint, fin, fout));
        }
        break;
    }
    case 4: { /* the spectrum alone, into an array of the size params says */
        toep_args a;
        toep_args_pick(r, &a);
        warpfft_toeplitz_info in;
        memset(&in, 0, sizeof in);
        int sized = checked("toeplitz_params",
                            warpfft_toeplitz_params(a.dim, a.n, 1, a.tol, (warpfft_precision)a.prec,
                                                    a.o, a.weights, &in)) == 0;
        uint8_t nulls = (uint8_t)take(r, 1);
        void *spec = nulls & 1 || !sized ? NULL : dalloc(in.spectrum_bytes);
        warpfft_status st =
            checked("toeplitz_spectrum",
                    warpfft_toeplitz_spectrum(a.dim, nulls & 2 ? NULL : a.n, a.iflag, a.tol,
                                              (warpfft_precision)a.prec, a.o, a.M, a.x[0], a.x[1],
                                              a.x[2], a.weights, a.w, spec));
        if (st == WARPFFT_SUCCESS && a.sio)
            bug("toeplitz_spectrum accepted opts.spreadinterponly = 1 or opts.real_data = 1");
        free(a.o);
        break;
    }
    case 5: {
        int sio, dim = pick_small(r, 1, 3), prec = pick_small(r, 1, 2);
        int64_t n[3];
        for (int d = 0; d < 3; d++)
            n[d] = pick_int(r);
        int64_t ntransf = pick_int(r);
        double tol = pick_double(r);
        warpfft_opts *o = pick_opts(r, &sio);
        int weights = pick_small(r, 0, 2);
        uint8_t nulls = (uint8_t)take(r, 1);
        warpfft_toeplitz_info in;
        checked("toeplitz_params", warpfft_toeplitz_params(dim, nulls & 1 ? NULL : n, ntransf, tol,
                                                           (warpfft_precision)prec, o, weights,
                                                           nulls & 2 ? NULL : &in));
        free(o);
        break;
    }
    case 6: {
        warpfft_toeplitz op = pick_toep(r);
        size_t bytes;
        if (take(r, 1) % 2)
            toep_info(op, &ok);
        else
            checked("toeplitz_workspace_bytes",
                    warpfft_toeplitz_workspace_bytes(op, take(r, 1) % 4 ? &bytes : NULL));
        break;
    }
    default:
        /* a pooled one's release flags (4: an unknown flag, refused) */
        drop_toep(slot, toep_pooled[slot] ? (uint32_t)(take(r, 1) % 5) : 0);
    }
}

/* ---- stream capture into CUDA graphs (the stand-in's stream 0x5150, relaxed mode) ---- */

enum { MAX_GRAPHS = 8 };
static void *graphs[MAX_GRAPHS];
static int n_graphs, capturing; /* capturing: graphs[n_graphs - 1] is being captured */
static const uintptr_t capture_stream = 0x5150; /* pick_opts' user stream */

static void drop_graph(int k) {
    if (capturing && k == n_graphs - 1) { /* destroyed during its capture: the capture ends */
        capture_end((struct CUstream_st *)capture_stream);
        capturing = 0;
    }
    graph_destroy(graphs[k]);
    graphs[k] = graphs[--n_graphs];
}

static void call_capture(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    switch (b % 4) {
    case 0:
        if (!capturing && n_graphs < MAX_GRAPHS) {
            graphs[n_graphs] =
                capture_begin((struct CUstream_st *)capture_stream, STANDIN_CAPTURE_RELAXED);
            if (graphs[n_graphs]) {
                n_graphs++;
                capturing = 1;
            }
        }
        break;
    case 1:
        if (capturing) {
            capture_end((struct CUstream_st *)capture_stream);
            capturing = 0;
        }
        break;
    case 2:
        if (n_graphs > 0)
            drop_graph(b / 4 % n_graphs);
        break;
    default: /* CUDA's destructors late (on its own thread, some time after) or at once */
        defer_destructors(b / 4 % 2);
        run_destructors();
    }
}

/* After an input: the capture ended, the graphs gone (their destructors run), every plan and
 * operator released or destroyed, the pool cleared and its limits back. */
static void clean_up(void) {
    cleaning = 1;
    while (n_graphs > 0)
        drop_graph(n_graphs - 1);
    defer_destructors(0);
    run_destructors();
    for (int i = 0; i < MAX_PLANS; i++) {
        if (pooled[i])
            release_slot(i, 0);
        if (pooled[i])
            bug("pool_release refused after the capture ended: %s", warpfft_last_error());
    }
    checked("pool_clear", warpfft_pool_clear());
    checked("pool_set_limits", warpfft_pool_set_limits(16, (int64_t)1 << 30));
    for (int i = 0; i < MAX_PLANS; i++) {
        if (plans[i] && !destroy_slot(i))
            bug("plan_destroy refused a plan no graph holds: %s", warpfft_last_error());
    }
    for (int i = 0; i < MAX_TOEP; i++) {
        if (!drop_toep(i, 0) && !drop_toep(i, 0))
            bug("an operator no graph holds neither destroyed nor released: %s",
                warpfft_last_error());
        toeps[i] = NULL;
        toep_pooled[i] = 0;
    }
    warpfft_pool_info info = {.struct_size = sizeof info};
    warpfft_pool_get_info(&info);
    if (info.idle != 0 || info.busy != 0)
        bug("the pool kept %lld idle and %lld busy plans after a clear", (long long)info.idle,
            (long long)info.busy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    cleaning = 0;
    violations_before = counts().violations;
    for (int calls = 0; r.n > 0 && calls < 24; calls++) {
        uint8_t op = (uint8_t)take(&r, 1);
        if (op >= 192) { /* the calls added since the first corpus (its choices were < 192) */
            switch (op % 8) {
            case 0: /* setpts or setpts3, batched points */
            case 1:
                call_setpts(&r, op % 8, 1);
                break;
            case 2:
            case 3:
                call_pool(&r);
                break;
            case 4:
            case 5:
                call_toeplitz(&r);
                break;
            case 6:
                call_capture(&r);
                break;
            default:
                call_oneshot(&r);
            }
            continue;
        }
        switch (op % 12) {
        case 0:
        case 1:
            call_params(&r, 0);
            break;
        case 2:
            call_params(&r, 1);
            break;
        case 3:
        case 4:
            call_create(&r);
            break;
        case 5: /* setpts or setpts3 */
        case 6:
            call_setpts(&r, op % 12 - 5, 0);
            break;
        case 7:
        case 8:
            call_execute(&r);
            break;
        case 9:
            call_info(&r);
            break;
        case 10:
            call_direct(&r, take(&r, 1) % 2);
            break;
        default: { /* a pooled plan too: refused */
            uint8_t b = (uint8_t)take(&r, 1);
            int slot = b % MAX_PLANS;
            if (b & 8 && pooled[slot]) {
                if (checked("plan_destroy", warpfft_plan_destroy(pooled[slot])) !=
                    WARPFFT_ERR_INVALID_ARG)
                    bug("plan_destroy did not refuse a pooled plan");
            } else {
                destroy_slot(slot);
            }
        }
        }
    }
    clean_up();
    for (int i = 0; i < n_arrays; i++)
        checked("free", warpfft_free(0, arrays[i]));
    n_arrays = 0;
    warpfft_release_cached();
    standin_counts c = counts();
    if (c.live_allocs != 0 || c.live_fft_plans != 0 || c.ctx_depth != 0 || c.live_links != 0 ||
        c.live_events != 0 || c.live_user_objects != 0 || c.live_graphs != 0)
        bug("left after every plan was destroyed: %ld device allocations, %ld cuFFT plans, "
            "context depth %ld, %ld link states, %ld events, %ld user objects, %ld graphs",
            c.live_allocs, c.live_fft_plans, c.ctx_depth, c.live_links, c.live_events,
            c.live_user_objects, c.live_graphs);
    return 0;
}
