/*
 * fuzz_abi.c — libFuzzer target: the argument checking of the public C ABI (warpfft.h), the
 * whole C core running on the stand-in driver and cuFFT of the fault-injection suite
 * (c_core/tests/standin*.c: "device" memory on the host, every access bounds-checked). The input
 * is a sequence of calls with chosen arguments: warpfft_plan_params, warpfft_plan_params3,
 * warpfft_plan_create (types 1-3, any sizes, tolerances, precisions), warpfft_setpts and
 * warpfft_setpts3 (any M and K; coordinates NULL or device arrays of exactly what the plan's
 * precision needs), warpfft_execute (NULL or exactly sized arrays), warpfft_plan_get_info,
 * warpfft_plan_workspace_bytes, warpfft_setpts_check, warpfft_direct_sample(3) argument checks,
 * warpfft_plan_destroy; options NULL, defaults with fields changed, or an opts struct of any
 * struct_size (allocated with exactly that many bytes, at most 8 KiB, so reading past it is an
 * ASan error) and any bytes. A call must return a status of warpfft.h with a message exactly
 * when it fails, leave *plan NULL when creation fails, never touch device memory outside the
 * arrays it was given (the stand-in counts violations) and never accept opts.spreadinterponly
 * for type 3; after each input every plan is destroyed, the plan cache emptied, and no device
 * allocation, cuFFT plan or context push may be left. Any other outcome aborts, as do the
 * sanitizers. c_core/fuzz/run.sh builds it with the C core and runs it on the stand-ins;
 * corpus/fuzz_abi holds the seeds (make_seeds.py); WF_FUZZ_TRACE=1 prints every call and its
 * status (fuzz_abi SEED runs one input).
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

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    if (warpfft_init(0) != WARPFFT_SUCCESS) {
        fprintf(stderr, "fuzz_abi: init on the stand-in driver: %s\n", warpfft_last_error());
        exit(1);
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    standin_mem_limit_fn limit = h ? (standin_mem_limit_fn)dlsym(h, "standin_mem_limit") : NULL;
    get_counts = h ? (standin_get_fn)dlsym(h, "standin_get") : NULL;
    if (!limit || !get_counts) {
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
 * defaults with fields changed, or any bytes. *sio: 1 when it certainly asks for
 * spreadinterponly (a full-size struct with the field 1), else 0. Free with free(). */
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
    *sio = size == sizeof o && o.spreadinterponly == 1 && mode < 6;
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

enum { MAX_ARRAYS = 64, MAX_PLANS = 3, MAX_M = 4096 };
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

static warpfft_plan plans[MAX_PLANS];

static warpfft_plan pick_plan(reader *r) {
    uint8_t b = (uint8_t)take(r, 1);
    return b % 8 == 7 ? NULL : plans[b % MAX_PLANS];
}

/* The plan's precision, type, dim, ntransf, modes product, M and K (0 if unknown). */
typedef struct shape_t {
    int ok, type, precision;
    int64_t ntransf, modes, M, K;
} shape_t;

static shape_t shape_of(warpfft_plan plan) {
    shape_t s = {0, 0, WARPFFT_F32, 0, 0, 0, 0};
    warpfft_plan_info info;
    if (!plan || checked("plan_get_info", warpfft_plan_get_info(plan, &info)) != WARPFFT_SUCCESS)
        return s;
    uint64_t modes =
        mul(mul((uint64_t)info.n_modes[0], (uint64_t)info.n_modes[1]), (uint64_t)info.n_modes[2]);
    s = (shape_t){1,
                  info.type,
                  info.precision,
                  info.ntransf,
                  modes > INT64_MAX ? INT64_MAX : (int64_t)modes,
                  info.n_points > 0 ? info.n_points : 0,
                  info.n_targets > 0 ? info.n_targets : 0};
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
            bug("plan_params3 accepted opts.spreadinterponly = 1");
    } else {
        int type = pick_small(r, 1, 3);
        uint8_t nulls = (uint8_t)take(r, 1);
        checked("plan_params",
                warpfft_plan_params(type, dim, nulls & 1 ? NULL : n, ntransf, tol,
                                    (warpfft_precision)prec, o, nulls & 2 ? NULL : &info));
    }
    free(o);
}

static void call_create(reader *r) {
    int slot = (int)(take(r, 1) % MAX_PLANS), sio;
    int type = pick_small(r, 1, 3), dim = pick_small(r, 1, 3), prec = pick_small(r, 1, 2);
    int64_t n[3];
    for (int d = 0; d < 3; d++)
        n[d] = pick_int(r);
    int64_t ntransf = pick_int(r);
    int iflag = (int)pick_int(r);
    double tol = pick_double(r);
    warpfft_opts *o = pick_opts(r, &sio);
    uint8_t nulls = (uint8_t)take(r, 1);
    if (plans[slot]) {
        checked("plan_destroy", warpfft_plan_destroy(plans[slot]));
        plans[slot] = NULL;
    }
    warpfft_plan plan = (warpfft_plan)&plans; /* must be overwritten */
    warpfft_status st = checked(
        "plan_create", warpfft_plan_create(type, dim, nulls & 1 ? NULL : n, iflag, ntransf, tol,
                                           (warpfft_precision)prec, o, nulls & 2 ? NULL : &plan));
    free(o);
    if (nulls & 2)
        return;
    if (st != WARPFFT_SUCCESS && plan != NULL)
        bug("plan_create failed but left *plan = %p", (void *)plan);
    if (st == WARPFFT_SUCCESS && type == 3 && sio)
        bug("plan_create(3) accepted opts.spreadinterponly = 1");
    plans[slot] = st == WARPFFT_SUCCESS ? plan : NULL;
}

static void call_setpts(reader *r, int three) {
    warpfft_plan plan = pick_plan(r);
    shape_t s = shape_of(plan);
    int prec = take(r, 1) % 8 ? s.precision : pick_small(r, 1, 2);
    size_t real = s.precision == WARPFFT_F64 ? 8 : 4; /* what the plan reads */
    int64_t M = pick_int(r), K = three ? pick_int(r) : 0;
    const void *x[3], *t[3];
    coords(r, M, real, x);
    if (three) {
        coords(r, K, real, t);
        checked("setpts3", warpfft_setpts3(plan, (warpfft_precision)prec, M, x[0], x[1], x[2], K,
                                           t[0], t[1], t[2]));
    } else {
        checked("setpts", warpfft_setpts(plan, (warpfft_precision)prec, M, x[0], x[1], x[2]));
    }
}

static void call_execute(reader *r) {
    warpfft_plan plan = pick_plan(r);
    shape_t s = shape_of(plan);
    int prec = take(r, 1) % 8 ? s.precision : pick_small(r, 1, 2);
    uint64_t cb = s.precision == WARPFFT_F64 ? 16 : 8;
    uint64_t nk = s.type == 3 ? (uint64_t)s.K : (uint64_t)s.modes;
    uint8_t nulls = (uint8_t)take(r, 1);
    void *c = nulls & 1 ? NULL : dalloc(mul(mul((uint64_t)s.ntransf, (uint64_t)s.M), cb));
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    violations_before = counts().violations;
    for (int calls = 0; r.n > 0 && calls < 24; calls++) {
        switch (take(&r, 1) % 12) {
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
        case 5:
            call_setpts(&r, 0);
            break;
        case 6:
            call_setpts(&r, 1);
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
        default: {
            int slot = (int)(take(&r, 1) % MAX_PLANS);
            checked("plan_destroy", warpfft_plan_destroy(plans[slot]));
            plans[slot] = NULL;
        }
        }
    }
    for (int i = 0; i < MAX_PLANS; i++) {
        if (plans[i])
            checked("plan_destroy", warpfft_plan_destroy(plans[i]));
        plans[i] = NULL;
    }
    for (int i = 0; i < n_arrays; i++)
        checked("free", warpfft_free(0, arrays[i]));
    n_arrays = 0;
    warpfft_release_cached();
    standin_counts c = counts();
    if (c.live_allocs != 0 || c.live_fft_plans != 0 || c.ctx_depth != 0 || c.live_links != 0 ||
        c.live_events != 0)
        bug("left after every plan was destroyed: %ld device allocations, %ld cuFFT plans, "
            "context depth %ld, %ld link states, %ld events",
            c.live_allocs, c.live_fft_plans, c.ctx_depth, c.live_links, c.live_events);
    return 0;
}
