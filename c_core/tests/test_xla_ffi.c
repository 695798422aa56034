/*
 * test_xla_ffi.c — the XLA FFI handler (c_core/src/framework/xla_ffi.c) on its own, linked with a
 * recording stand-in of the public C ABI it calls (no driver, no GPU); built and run by
 * run_tests.sh. python/tests/test_jax_handler_abi.py covers the argument errors.
 *
 * What one call does, for types 1, 2 and 3, one and several groups, shared and per-group points:
 * it asks XLA for the stream, takes a plan from the cache (made with the call's key and
 * check_points 0: unchecked set-points), sets the points once per point group (once when one set
 * serves every group) and executes once per batch group on that group's slices, in that order; a
 * second call reuses the plan. With the k-th call (stream request or ABI) failing, for
 * k = 1, 2, ...: the handler returns XLA's own error or one naming the failed function with its
 * status's error code, calls nothing after it, and leaves the plan idle in the cache. A call with
 * nothing to compute asks for nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "framework/xla_ffi.h"

int n_pass, n_fail;

/* ---- the recording stand-in: every call appends a line to `trace` ---- */

static char trace[8192];
static long calls, fail_at;        /* numbered calls since arm(); the one that fails (0: none) */
static char failed_fn[48];         /* its name */
static warpfft_status fail_status; /* what a failing ABI call returns */
static char last_error[96];
static int plan_ids, plans_live;
static const char *buf_name[8];
static int n_bufs;

struct warpfft_plan_s {
    int id;
};

static void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void record(const char *fmt, ...) {
    size_t len = strlen(trace);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(trace + len, sizeof trace - len, fmt, ap);
    va_end(ap);
}

static void arm(long k, warpfft_status st) {
    trace[0] = '\0';
    calls = 0;
    fail_at = k;
    fail_status = st;
    failed_fn[0] = '\0';
}

/* Numbers a call; 1 when it is the one to fail (then recorded as failing). */
static int tick(const char *fn) {
    if (++calls != fail_at)
        return 0;
    snprintf(failed_fn, sizeof failed_fn, "%s", fn);
    snprintf(last_error, sizeof last_error, "stand-in: %s failed", fn);
    record("  FAILED\n");
    return 1;
}

/* Buffer i of the frame lives at fake device address (i + 1) MiB: "name+offset". */
static uintptr_t buf_base(int i) {
    return (uintptr_t)(i + 1) << 20;
}

static const char *where(const void *p, char *s, size_t len) {
    uintptr_t a = (uintptr_t)p;
    snprintf(s, len, "%s", a ? "?" : "-"); /* NULL, or not in any buffer */
    for (int i = 0; i < n_bufs; i++)
        if (a >= buf_base(i) && a < buf_base(i + 1))
            snprintf(s, len, "%s+%lu", buf_name[i], (unsigned long)(a - buf_base(i)));
    return s;
}

warpfft_status warpfft_opts_default(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->upsampfac = 2.0;
    o->check_points = 1; /* not the library's default: shows that the handler asks for 0 */
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_plan_create(int type, int dim, const int64_t n[3], int iflag,
                                   int64_t ntransf, double eps, warpfft_precision precision,
                                   const warpfft_opts *o, warpfft_plan *plan) {
    record("create %d %dd n %lld %lld %lld iflag %d T %lld eps %g prec %d modeord %d method %d "
           "device %d upsampfac %g stream %#llx max_subprob %d bins %d %d %d check %d\n",
           type, dim, (long long)n[0], (long long)n[1], (long long)n[2], iflag, (long long)ntransf,
           eps, (int)precision, o->modeord, o->method, o->device, o->upsampfac,
           (unsigned long long)o->stream, o->max_subprob, o->bin_size[0], o->bin_size[1],
           o->bin_size[2], o->check_points);
    if (tick("warpfft_plan_create"))
        return fail_status;
    struct warpfft_plan_s *p = malloc(sizeof *p);
    if (!p)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    p->id = ++plan_ids;
    plans_live++;
    *plan = p;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                              const void *x, const void *y, const void *z) {
    char a[32], b[32], c[32];
    record("setpts P%d prec %d M %lld %s %s %s\n", plan->id, (int)precision, (long long)M,
           where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c));
    return tick("warpfft_setpts") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision, int64_t M,
                               const void *x, const void *y, const void *z, int64_t K,
                               const void *s, const void *t, const void *u) {
    char a[32], b[32], c[32], d[32], e[32], f[32];
    record("setpts3 P%d prec %d M %lld %s %s %s K %lld %s %s %s\n", plan->id, (int)precision,
           (long long)M, where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c),
           (long long)K, where(s, d, sizeof d), where(t, e, sizeof e), where(u, f, sizeof f));
    return tick("warpfft_setpts3") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c, void *fk) {
    char a[32], b[32];
    record("execute P%d prec %d %s %s\n", plan->id, (int)precision, where(c, a, sizeof a),
           where(fk, b, sizeof b));
    return tick("warpfft_execute") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_plan_destroy(warpfft_plan plan) {
    record("destroy P%d\n", plan->id);
    free(plan);
    plans_live--;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_stream_sync(int device, uint64_t stream) {
    record("sync %d %#llx\n", device, (unsigned long long)stream);
    return WARPFFT_SUCCESS;
}

const char *warpfft_status_name(int status) {
    static char name[32];
    snprintf(name, sizeof name, "STATUS_%d", status);
    return name;
}

const char *warpfft_last_error(void) {
    return last_error;
}

/* ---- XLA's side: the API table and a call frame ---- */

static char xla_error_token, stream_error_token; /* XLA_FFI_Error* values (opaque to the handler) */
static int xla_errc;
static char xla_msg[1600];

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a) {
    xla_errc = a->errc;
    snprintf(xla_msg, sizeof xla_msg, "%s", a->message);
    return (XLA_FFI_Error *)&xla_error_token;
}

static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *a) {
    record("stream\n");
    if (tick("XLA_FFI_Stream_Get"))
        return (XLA_FFI_Error *)&stream_error_token;
    a->stream = (void *)(uintptr_t)0x5150;
    return NULL;
}

typedef struct config {
    int type, dim;
    warpfft_precision precision;
    int64_t G, Gp, T, M, K; /* K: type 3's targets */
    int64_t n[3];           /* types 1, 2: modes, C order (n[0] is the last axis) */
} config;

enum { N_ATTRS = 14 };

static struct {
    XLA_FFI_CallFrame f;
    XLA_FFI_Api api;
    XLA_FFI_Buffer buf[8]; /* the arguments, then the result */
    int64_t dims[8][5];
    void *args[7], *rets[1];
    int arg_types[7], ret_types[1];
    XLA_FFI_ByteSpan names[N_ATTRS], *name_ptrs[N_ATTRS];
    XLA_FFI_Scalar scalars[N_ATTRS];
    void *attr_ptrs[N_ATTRS];
    int attr_types[N_ATTRS];
    int64_t ivals[N_ATTRS];
    float upsampfac;
    double eps;
} fr;

static void set_buffer(int i, const char *name, int dtype, int rank, const int64_t *dims) {
    buf_name[i] = name;
    memcpy(fr.dims[i], dims, (size_t)rank * sizeof *dims);
    fr.buf[i] = (XLA_FFI_Buffer){sizeof(XLA_FFI_Buffer), NULL, dtype,
                                 (void *)buf_base(i),    rank, fr.dims[i]};
}

static void set_attr(int i, const char *name, int dtype, void *value) {
    fr.names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
    fr.name_ptrs[i] = &fr.names[i];
    fr.scalars[i] = (XLA_FFI_Scalar){dtype, value};
    fr.attr_ptrs[i] = &fr.scalars[i];
    fr.attr_types[i] = WF_XLA_ATTR_SCALAR;
}

/* The frame of `cf` (in the static `fr`): attributes with values the key must carry through. */
static XLA_FFI_CallFrame *frame(const config *cf) {
    memset(&fr, 0, sizeof fr);
    int f64 = cf->precision == WARPFFT_F64, cplx = f64 ? WF_XLA_C128 : WF_XLA_C64;
    int real = f64 ? WF_XLA_F64 : WF_XLA_F32, dim = cf->dim;
    int64_t src[5] = {cf->G, cf->T, cf->M}, out[5] = {cf->G, cf->T};
    int64_t pts[2] = {cf->Gp, cf->M}, tgt[2] = {cf->Gp, cf->K};
    if (cf->type == 3) {
        out[2] = cf->K;
    } else {
        int64_t *modes = cf->type == 1 ? out : src;
        for (int d = 0; d < dim; d++)
            modes[1 + dim - d] = cf->n[d];
        if (cf->type == 2)
            out[2] = cf->M;
    }
    static const char *const coord[6] = {"x", "y", "z", "s", "t", "u"};
    n_bufs = 0;
    set_buffer(n_bufs++, "src", cplx, cf->type == 2 ? 2 + dim : 3, src);
    for (int d = 0; d < dim; d++)
        set_buffer(n_bufs++, coord[d], real, 2, pts);
    for (int d = 0; cf->type == 3 && d < dim; d++)
        set_buffer(n_bufs++, coord[3 + d], real, 2, tgt);
    int nargs = n_bufs;
    set_buffer(n_bufs++, "out", cplx, cf->type == 1 ? 2 + dim : 3, out);
    for (int i = 0; i < nargs; i++) {
        fr.args[i] = &fr.buf[i];
        fr.arg_types[i] = WF_XLA_ARG_BUFFER;
    }
    fr.rets[0] = &fr.buf[nargs];
    fr.ret_types[0] = WF_XLA_RET_BUFFER;

    static const char *const ints[11] = {"nufft_type", "iflag",   "n1",         "n2",
                                         "n3",         "modeord", "method",     "bin1",
                                         "bin2",       "bin3",    "max_subprob"};
    const int64_t vals[11] = {cf->type, -1, cf->n[0], cf->n[1], cf->n[2], 1, 2, 4, 5, 6, 7};
    for (int i = 0; i < 11; i++) {
        fr.ivals[i] = vals[i];
        set_attr(i, ints[i], WF_XLA_S64, &fr.ivals[i]);
    }
    fr.eps = 1e-5;
    fr.upsampfac = 1.25f;
    set_attr(11, "eps", WF_XLA_F64, &fr.eps);
    set_attr(12, "upsampfac", WF_XLA_F32, &fr.upsampfac);

    fr.api.struct_size = sizeof fr.api;
    fr.api.XLA_FFI_Error_Create = error_create;
    fr.api.XLA_FFI_Stream_Get = stream_get;
    fr.f.struct_size = sizeof fr.f;
    fr.f.api = &fr.api;
    fr.f.stage = WF_XLA_STAGE_EXECUTE;
    fr.f.args = (XLA_FFI_Args){sizeof(XLA_FFI_Args), NULL, nargs, fr.arg_types, fr.args};
    fr.f.rets = (XLA_FFI_Rets){sizeof(XLA_FFI_Rets), NULL, 1, fr.ret_types, fr.rets};
    fr.f.attrs =
        (XLA_FFI_Attrs){sizeof(XLA_FFI_Attrs), NULL, 13, fr.attr_types, fr.name_ptrs, fr.attr_ptrs};
    return &fr.f;
}

/* ---- what the handler must do, written out independently ---- */

/* The trace of a whole call of `cf` that succeeds: with a new plan (id `plan`) or a cached one. */
static void expected(const config *cf, int plan, int create, char *s, size_t len) {
    int dim = cf->dim, f64 = cf->precision == WARPFFT_F64;
    size_t real = f64 ? 8 : 4, cplx = 2 * real;
    int64_t nprod = 1, n[3] = {1, 1, 1};
    for (int d = 0; cf->type != 3 && d < dim; d++)
        nprod *= n[d] = cf->n[d];
    size_t out = 0;
    out += (size_t)snprintf(s + out, len - out, "stream\n");
    if (create)
        out += (size_t)snprintf(s + out, len - out,
                                "create %d %dd n %lld %lld %lld iflag -1 T %lld eps 1e-05 prec %d "
                                "modeord %d method 2 device 0 upsampfac 1.25 stream 0x5150 "
                                "max_subprob 7 bins 4 5 6 check 0\n",
                                cf->type, dim, (long long)n[0], (long long)n[1], (long long)n[2],
                                (long long)cf->T, (int)cf->precision, cf->type == 3 ? 0 : 1);
    for (int64_t g = 0; g < cf->G; g++) {
        size_t pg = cf->Gp > 1 ? (size_t)g : 0;
        char p[6][32];
        static const char *const coord[6] = {"x", "y", "z", "s", "t", "u"};
        for (int d = 0; d < 6; d++) {
            int64_t len_d = d < 3 ? cf->M : cf->K;
            if (d % 3 < dim && (d < 3 || cf->type == 3))
                snprintf(p[d], sizeof p[d], "%s+%zu", coord[d], pg * (size_t)len_d * real);
            else
                snprintf(p[d], sizeof p[d], "-");
        }
        if (g == 0 || cf->Gp > 1) {
            if (cf->type == 3)
                out += (size_t)snprintf(s + out, len - out,
                                        "setpts3 P%d prec %d M %lld %s %s %s K %lld %s %s %s\n",
                                        plan, (int)cf->precision, (long long)cf->M, p[0], p[1],
                                        p[2], (long long)cf->K, p[3], p[4], p[5]);
            else
                out +=
                    (size_t)snprintf(s + out, len - out, "setpts P%d prec %d M %lld %s %s %s\n",
                                     plan, (int)cf->precision, (long long)cf->M, p[0], p[1], p[2]);
        }
        size_t per_c = (size_t)(cf->T * cf->M) * cplx;
        size_t per_fk = (size_t)(cf->T * (cf->type == 3 ? cf->K : nprod)) * cplx;
        out +=
            (size_t)snprintf(s + out, len - out, "execute P%d prec %d %s+%zu %s+%zu\n", plan,
                             (int)cf->precision, cf->type == 2 ? "out" : "src", (size_t)g * per_c,
                             cf->type == 2 ? "src" : "out", (size_t)g * per_fk);
    }
}

static int errc_of(warpfft_status st) {
    switch (st) {
    case WARPFFT_ERR_OUT_OF_MEMORY:
        return WF_XLA_ERR_RESOURCE_EXHAUSTED;
    case WARPFFT_ERR_NO_DRIVER:
        return WF_XLA_ERR_UNAVAILABLE;
    case WARPFFT_ERR_UNSUPPORTED:
        return WF_XLA_ERR_UNIMPLEMENTED;
    case WARPFFT_ERR_CUDA:
        return WF_XLA_ERR_INTERNAL;
    default:
        return WF_XLA_ERR_INVALID_ARGUMENT;
    }
}

static const config configs[] = {
    /* type, dim, precision, G, Gp, T, M, K, n */
    {1, 2, WARPFFT_F32, 3, 3, 2, 5, 0, {8, 6, 1}},
    {1, 1, WARPFFT_F64, 1, 1, 1, 7, 0, {10, 1, 1}},
    {2, 3, WARPFFT_F64, 2, 1, 3, 4, 0, {4, 3, 2}},
    {2, 2, WARPFFT_F32, 2, 2, 1, 0, 0, {5, 3, 1}}, /* M = 0 still runs */
    {3, 2, WARPFFT_F32, 3, 3, 2, 5, 4, {1, 1, 1}},
    {3, 3, WARPFFT_F64, 2, 1, 1, 3, 6, {1, 1, 1}},
    {3, 1, WARPFFT_F32, 2, 2, 2, 0, 3, {1, 1, 1}}, /* no sources: still runs */
};
enum { N_CONFIGS = sizeof configs / sizeof configs[0] };

static const char *describe(const config *cf, char *s, size_t len) {
    snprintf(s, len, "type %d %dD %s G %lld Gp %lld T %lld M %lld K %lld", cf->type, cf->dim,
             cf->precision == WARPFFT_F64 ? "f64" : "f32", (long long)cf->G, (long long)cf->Gp,
             (long long)cf->T, (long long)cf->M, (long long)cf->K);
    return s;
}

static void test_calls(void) {
    static char want[8192];
    for (int i = 0; i < N_CONFIGS; i++) {
        const config *cf = &configs[i];
        char name[128];
        describe(cf, name, sizeof name);
        warpfft_xla_cache_clear();
        int64_t created = warpfft_xla_plans_created();
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(cf));
        expected(cf, plan_ids, 1, want, sizeof want);
        CHECK(err == NULL && strcmp(trace, want) == 0, "%s: %s\n-- made --\n%s-- expected --\n%s",
              name, err ? xla_msg : "no error", trace, want);
        CHECK(warpfft_xla_plans_created() == created + 1 && warpfft_xla_cache_size() == 1,
              "%s: %lld plans created, %lld cached", name,
              (long long)(warpfft_xla_plans_created() - created),
              (long long)warpfft_xla_cache_size());
        /* again: the cached plan, no new one */
        arm(0, WARPFFT_SUCCESS);
        err = warpfft_xla_nufft(frame(cf));
        expected(cf, plan_ids, 0, want, sizeof want);
        CHECK(err == NULL && strcmp(trace, want) == 0,
              "%s, second call: %s\n-- made --\n%s-- expected --\n%s", name,
              err ? xla_msg : "no error", trace, want);
        CHECK(warpfft_xla_plans_created() == created + 1, "%s: a second call made a plan", name);
    }
}

/* Nothing to compute (G, T or type 3's K is 0): no stream request, no plan. */
static void test_empty(void) {
    static const config empty[] = {
        {1, 2, WARPFFT_F32, 0, 1, 2, 5, 0, {8, 6, 1}},
        {2, 1, WARPFFT_F64, 2, 2, 0, 5, 0, {8, 1, 1}},
        {3, 2, WARPFFT_F32, 2, 2, 2, 5, 0, {1, 1, 1}},
        {3, 1, WARPFFT_F64, 0, 1, 2, 5, 4, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        char name[128];
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&empty[i]));
        CHECK(err == NULL && trace[0] == '\0', "%s: %s, calls:\n%s",
              describe(&empty[i], name, sizeof name), err ? xla_msg : "no error", trace);
    }
}

/* Decoding edges the fuzzer (c_core/fuzz/fuzz_xla.c) found: an integer option that does not fit
 * a C int is refused (it was cut to 32 bits: 2^32 + 2 reached the plan as method 2); a call
 * with no groups whose mode counts multiply past 2^63 (a valid empty shape) asks for nothing
 * (the product overflowed, undefined behaviour, before the emptiness was seen). */
static void test_decoding_edges(void) {
    const config cf = {1, 2, WARPFFT_F32, 2, 2, 1, 3, 0, {4, 4, 1}};
    static const char *const opt[] = {"method", "max_subprob", "bin1", "modeord"};
    static const int slot[] = {6, 10, 7, 5}; /* their attribute indices in frame() */
    static const int64_t bad[] = {((int64_t)1 << 32) + 2, -((int64_t)1 << 31) - 1};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 2; b++) {
            XLA_FFI_CallFrame *f = frame(&cf);
            fr.ivals[slot[i]] = bad[b];
            arm(0, WARPFFT_SUCCESS);
            char want[128];
            snprintf(want, sizeof want, "warpfft: attribute %s = %lld does not fit a 32-bit int",
                     opt[i], (long long)bad[b]);
            XLA_FFI_Error *err = warpfft_xla_nufft(f);
            CHECK(err == (XLA_FFI_Error *)&xla_error_token && strcmp(xla_msg, want) == 0 &&
                      xla_errc == WF_XLA_ERR_INVALID_ARGUMENT && trace[0] == '\0',
                  "%s = %lld: %s, calls:\n%s", opt[i], (long long)bad[b],
                  err ? xla_msg : "no error", trace);
        }
    const config empty = {
        2, 2, WARPFFT_F64, 0, 1, 1, 5, 0, {(int64_t)1 << 40, (int64_t)1 << 40, 1}};
    arm(0, WARPFFT_SUCCESS);
    XLA_FFI_Error *err = warpfft_xla_nufft(frame(&empty));
    CHECK(err == NULL && trace[0] == '\0', "G = 0, modes 2^40 x 2^40: %s, calls:\n%s",
          err ? xla_msg : "no error", trace);
}

/* The k-th call fails, for every k that a whole call reaches. */
static void test_failures(void) {
    static const warpfft_status statuses[] = {WARPFFT_ERR_OUT_OF_MEMORY, WARPFFT_ERR_NO_DRIVER,
                                              WARPFFT_ERR_UNSUPPORTED, WARPFFT_ERR_CUDA,
                                              WARPFFT_ERR_BAD_POINTS};
    for (int i = 0; i < N_CONFIGS; i++) {
        const config *cf = &configs[i];
        char name[128];
        describe(cf, name, sizeof name);
        long k = 1;
        for (;; k++) {
            warpfft_status st = statuses[k % 5];
            warpfft_xla_cache_clear();
            arm(k, st);
            XLA_FFI_Error *err = warpfft_xla_nufft(frame(cf));
            if (calls < k) {
                CHECK(err == NULL, "%s: no failure injected, but: %s", name, xla_msg);
                break;
            }
            size_t len = strlen(trace), tail = strlen("  FAILED\n");
            CHECK(len >= tail && strcmp(trace + len - tail, "  FAILED\n") == 0,
                  "%s: calls after the failed %s (k = %ld):\n%s", name, failed_fn, k, trace);
            int create_failed = strcmp(failed_fn, "warpfft_plan_create") == 0;
            if (strcmp(failed_fn, "XLA_FFI_Stream_Get") == 0) {
                CHECK(err == (XLA_FFI_Error *)&stream_error_token,
                      "%s: the stream request's error was not passed on", name);
            } else {
                char want[256];
                snprintf(want, sizeof want, "warpfft: %s failed (STATUS_%d): stand-in: %s failed",
                         failed_fn, (int)st, failed_fn);
                CHECK(err == (XLA_FFI_Error *)&xla_error_token && strcmp(xla_msg, want) == 0 &&
                          xla_errc == errc_of(st),
                      "%s, %s failed with %d: error %d '%s', expected %d '%s'", name, failed_fn,
                      (int)st, xla_errc, xla_msg, errc_of(st), want);
            }
            int had_plan = strstr(trace, "create") && !create_failed;
            CHECK(warpfft_xla_cache_size() == had_plan, "%s, %s failed: %lld plans cached", name,
                  failed_fn, (long long)warpfft_xla_cache_size());
            /* the plan is idle again: the next call takes it */
            arm(0, WARPFFT_SUCCESS);
            err = warpfft_xla_nufft(frame(cf));
            CHECK(err == NULL && (strstr(trace, "create") == NULL) == had_plan,
                  "%s, after %s failed: %s, calls:\n%s", name, failed_fn,
                  err ? xla_msg : "no error", trace);
        }
        /* stream, create, the set-points, the executes */
        long whole = 2 + (cf->Gp > 1 ? cf->G : 1) + cf->G;
        CHECK(k - 1 == whole, "%s: a whole call made %ld calls, not %ld", name, k - 1, whole);
        printf("  %s: %ld failure points walked\n", name, k - 1);
    }
}

int main(void) {
    test_calls();
    test_empty();
    test_decoding_edges();
    test_failures();
    warpfft_xla_cache_clear();
    CHECK(plans_live == 0 && warpfft_xla_cache_size() == 0, "%d plans left", plans_live);
    return check_summary("XLA FFI handler on the recording stand-in: ");
}
