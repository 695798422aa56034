/*
 * test_xla_toeplitz.c — the Toeplitz XLA FFI handlers (c_core/src/framework/xla_toeplitz.c) on
 * their own, linked with a recording stand-in of the public C ABI they call (no driver, no
 * GPU); built and run by run_tests.sh.
 *
 * The spectrum call: points in the C order then the weights, the spectrum into the result, on
 * XLA's stream, with the attributes' options. The apply call: a zero operator (M = 0) of the
 * call's key created once and reused, the caller's spectrum (real or complex by its dtype) and
 * the adjoint flag passed on, T = 0 asking for nothing. Malformed frames (rank, dims, dtypes,
 * argument counts, attributes) are refused with XLA's error and no ABI call. With the k-th call
 * (stream request or ABI) failing, for k = 1, 2, ...: the handler returns an error naming the
 * failed function (or XLA's own), calls nothing after it, and the cached operator stays usable.
 * warpfft_xla_toeplitz_cache_clear destroys idle operators (after their stream's wait).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "framework/xla_toeplitz.h"

int n_pass, n_fail;

/* ---- the recording stand-in ---- */

static char trace[4096];
static long calls, fail_at;
static char last_error[96];
static int op_ids, ops_live;
static const char *buf_name[8];
static int n_bufs;

struct warpfft_toeplitz_s {
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

static void arm(long k) {
    trace[0] = '\0';
    calls = 0;
    fail_at = k;
}

static int tick(const char *fn) {
    if (++calls != fail_at)
        return 0;
    snprintf(last_error, sizeof last_error, "stand-in: %s failed", fn);
    record("  FAILED\n");
    return 1;
}

static uintptr_t buf_base(int i) {
    return (uintptr_t)(i + 1) << 20;
}

static const char *where(const void *p, char *s, size_t len) {
    uintptr_t a = (uintptr_t)p;
    snprintf(s, len, "%s", a ? "?" : "-");
    for (int i = 0; i < n_bufs; i++)
        if (a >= buf_base(i) && a < buf_base(i + 1))
            snprintf(s, len, "%s+%lu", buf_name[i], (unsigned long)(a - buf_base(i)));
    return s;
}

warpfft_status warpfft_opts_default(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->upsampfac = 2.0;
    return WARPFFT_SUCCESS;
}

/* The library's grid: the smallest even 2,3,5,7-smooth integer >= 2N - 1 (no GPU, no tick). */
static int64_t smooth_even(int64_t n) {
    for (n = n < 2 ? 2 : n;; n++) {
        int64_t m = n;
        for (int p = 2; p <= 7; p++)
            while (m % p == 0)
                m /= p;
        if (m == 1 && n % 2 == 0)
            return n;
    }
}

warpfft_status warpfft_toeplitz_params(int dim, const int64_t n[3], int64_t ntransf, double tol,
                                       warpfft_precision precision, const warpfft_opts *o,
                                       int weights, warpfft_toeplitz_info *info) {
    (void)ntransf, (void)o;
    if (tol < 1e-6 || weights < 0 || weights > 2 || dim < 1 || dim > 3) {
        snprintf(last_error, sizeof last_error, "stand-in params: bad tol or weights");
        return WARPFFT_ERR_BAD_TOL;
    }
    memset(info, 0, sizeof *info);
    info->dim = dim;
    info->precision = (int32_t)precision;
    for (int d = 0; d < 3; d++)
        info->n_grid[d] = d < dim ? smooth_even(2 * n[d] - 1) : 1;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n[3], int iflag, double tol,
                                         warpfft_precision precision, const warpfft_opts *o,
                                         int64_t M, const void *x, const void *y, const void *z,
                                         int weights, const void *w, void *spectrum) {
    char a[32], b[32], c[32], d[32], e[32];
    record("spectrum %dd n %lld %lld %lld iflag %d tol %g prec %d M %lld %s %s %s w%d %s -> %s "
           "stream %#llx upsampfac %g method %d det %d\n",
           dim, (long long)n[0], (long long)n[1], (long long)n[2], iflag, tol, (int)precision,
           (long long)M, where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c),
           weights, where(w, d, sizeof d), where(spectrum, e, sizeof e),
           (unsigned long long)o->stream, o->upsampfac, o->method, o->deterministic);
    return tick("warpfft_toeplitz_spectrum") ? WARPFFT_ERR_CUDA : WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_create(int dim, const int64_t n[3], int iflag, int64_t ntransf,
                                       double tol, warpfft_precision precision,
                                       const warpfft_opts *o, int64_t M, const void *x,
                                       const void *y, const void *z, int weights, const void *w,
                                       warpfft_toeplitz *op) {
    (void)iflag, (void)x, (void)y, (void)z, (void)w;
    record("create %dd n %lld %lld %lld T %lld tol %g prec %d modeord %d stream %#llx M %lld "
           "w%d\n",
           dim, (long long)n[0], (long long)n[1], (long long)n[2], (long long)ntransf, tol,
           (int)precision, o->modeord, (unsigned long long)o->stream, (long long)M, weights);
    if (tick("warpfft_toeplitz_create"))
        return WARPFFT_ERR_OUT_OF_MEMORY;
    struct warpfft_toeplitz_s *h = malloc(sizeof *h);
    if (!h)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    h->id = ++op_ids;
    ops_live++;
    *op = h;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op, warpfft_precision precision,
                                               int real, const void *spectrum, int adjoint,
                                               const void *in, void *out) {
    char a[32], b[32], c[32];
    record("apply O%d prec %d real %d %s adjoint %d %s -> %s\n", op->id, (int)precision, real,
           where(spectrum, a, sizeof a), adjoint, where(in, b, sizeof b), where(out, c, sizeof c));
    return tick("warpfft_toeplitz_apply_spectrum") ? WARPFFT_ERR_CUFFT : WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_destroy(warpfft_toeplitz op) {
    record("destroy O%d\n", op->id);
    free(op);
    ops_live--;
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

/* ---- XLA's side ---- */

static char xla_error_token, stream_error_token;
static char xla_msg[1600];

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a) {
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

enum { N_ATTRS = 12 };
static struct {
    XLA_FFI_CallFrame f;
    XLA_FFI_Api api;
    XLA_FFI_Buffer buf[6];
    int64_t dims[6][4];
    void *args[5], *rets[1];
    int arg_types[5], ret_types[1];
    XLA_FFI_ByteSpan names[N_ATTRS], *name_ptrs[N_ATTRS];
    XLA_FFI_Scalar scalars[N_ATTRS];
    void *attr_ptrs[N_ATTRS];
    int attr_types[N_ATTRS];
    int64_t ivals[N_ATTRS];
    double dvals[2];
    int n_attrs;
    warpfft_opts rec; /* the options record of attribute opts */
    XLA_FFI_ByteSpan rec_span;
    char rec_hex[2 * sizeof(warpfft_opts) + 1];
} fr;

static void set_buffer(int i, const char *name, int dtype, int rank, const int64_t *dims) {
    buf_name[i] = name;
    memcpy(fr.dims[i], dims, (size_t)rank * sizeof *dims);
    fr.buf[i] = (XLA_FFI_Buffer){sizeof(XLA_FFI_Buffer), NULL, dtype,
                                 (void *)buf_base(i),    rank, fr.dims[i]};
}

static void attr(const char *name, int dtype, void *value) {
    int i = fr.n_attrs++;
    fr.names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
    fr.name_ptrs[i] = &fr.names[i];
    fr.scalars[i] = (XLA_FFI_Scalar){dtype, value};
    fr.attr_ptrs[i] = &fr.scalars[i];
    fr.attr_types[i] = WF_XLA_ATTR_SCALAR;
}

static void iattr(const char *name, int64_t v) {
    fr.ivals[fr.n_attrs] = v;
    attr(name, WF_XLA_S64, &fr.ivals[fr.n_attrs]);
}

/* A 2D frame: modes 12 x 7 (C order: n1 = 7, the last axis), grid 24 x 14. */
static XLA_FFI_CallFrame *finish(int nargs) {
    for (int i = 0; i < nargs; i++) {
        fr.args[i] = &fr.buf[i];
        fr.arg_types[i] = WF_XLA_ARG_BUFFER;
    }
    fr.rets[0] = &fr.buf[nargs];
    fr.ret_types[0] = WF_XLA_RET_BUFFER;
    iattr("dim", 2);
    iattr("n1", 7);
    iattr("n2", 12);
    iattr("n3", 1);
    fr.dvals[0] = 1e-5;
    attr("eps", WF_XLA_F64, &fr.dvals[0]);
    fr.rec.modeord = 1;
    fr.rec.upsampfac = 1.25;
    const unsigned char *b = (const unsigned char *)&fr.rec;
    for (size_t i = 0; i < sizeof fr.rec; i++)
        snprintf(fr.rec_hex + 2 * i, 3, "%02x", b[i]);
    fr.rec_span = (XLA_FFI_ByteSpan){fr.rec_hex, 2 * sizeof fr.rec};
    int i = fr.n_attrs++;
    fr.names[i] = (XLA_FFI_ByteSpan){"opts", 4};
    fr.name_ptrs[i] = &fr.names[i];
    fr.attr_ptrs[i] = &fr.rec_span;
    fr.attr_types[i] = WF_XLA_ATTR_STRING;
    fr.api.struct_size = sizeof fr.api;
    fr.api.XLA_FFI_Error_Create = error_create;
    fr.api.XLA_FFI_Stream_Get = stream_get;
    fr.f.struct_size = sizeof fr.f;
    fr.f.api = &fr.api;
    fr.f.stage = WF_XLA_STAGE_EXECUTE;
    fr.f.args = (XLA_FFI_Args){sizeof(XLA_FFI_Args), NULL, nargs, fr.arg_types, fr.args};
    fr.f.rets = (XLA_FFI_Rets){sizeof(XLA_FFI_Rets), NULL, 1, fr.ret_types, fr.rets};
    fr.f.attrs = (XLA_FFI_Attrs){sizeof(XLA_FFI_Attrs), NULL,         fr.n_attrs,
                                 fr.attr_types,         fr.name_ptrs, fr.attr_ptrs};
    return &fr.f;
}

/* The spectrum call: x, y (C order) of M = 100 f32, weights of `kind`, result 14 x 24. */
static XLA_FFI_CallFrame *spectrum_frame(int kind) {
    memset(&fr, 0, sizeof fr);
    n_bufs = 0;
    const int64_t M[1] = {100}, grid[2] = {24, 14};
    set_buffer(n_bufs++, "x", WF_XLA_F32, 1, M);
    set_buffer(n_bufs++, "y", WF_XLA_F32, 1, M);
    if (kind)
        set_buffer(n_bufs++, "w", kind == 1 ? WF_XLA_F32 : WF_XLA_C64, 1, M);
    int nargs = n_bufs;
    set_buffer(n_bufs++, "spec", kind == 2 ? WF_XLA_C64 : WF_XLA_F32, 2, grid);
    iattr("iflag", -1);
    iattr("weights", kind);
    warpfft_opts_default(&fr.rec);
    fr.rec.method = 3;
    fr.rec.deterministic = 1;
    return finish(nargs);
}

/* The apply call: spectrum 24 x 14 (real or complex), modes (T, 12, 7) complex64. */
static XLA_FFI_CallFrame *apply_frame(int real, int64_t T, int adjoint) {
    memset(&fr, 0, sizeof fr);
    n_bufs = 0;
    const int64_t grid[2] = {24, 14}, modes[3] = {T, 12, 7};
    set_buffer(n_bufs++, "spec", real ? WF_XLA_F32 : WF_XLA_C64, 2, grid);
    set_buffer(n_bufs++, "in", WF_XLA_C64, 3, modes);
    set_buffer(n_bufs++, "out", WF_XLA_C64, 3, modes);
    iattr("adjoint", adjoint);
    warpfft_opts_default(&fr.rec);
    return finish(2);
}

static int ok_call(XLA_FFI_Error *e, const char *want) {
    return CHECK(e == NULL, "handler failed: %s", xla_msg) &&
           CHECK(strcmp(trace, want) == 0, "trace\n%sexpected\n%s", trace, want);
}

static void test_spectrum(void) {
    static const char *const want[3] = {
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w0 - -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n",
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w1 w+0 -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n",
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w2 w+0 -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n"};
    for (int kind = 0; kind < 3; kind++) {
        arm(0);
        ok_call(warpfft_xla_toeplitz_spectrum(spectrum_frame(kind)), want[kind]);
    }
    /* malformed frames: refused, nothing called */
    XLA_FFI_CallFrame *f = spectrum_frame(1);
    fr.dims[3][0] = 23; /* the spectrum's shape */
    arm(0);
    CHECK(warpfft_xla_toeplitz_spectrum(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "not the spectrum"),
          "wrong spectrum shape: %s / %s", xla_msg, trace);
    f = spectrum_frame(1);
    fr.buf[2].dtype = WF_XLA_C64; /* real weights declared, complex given */
    arm(0);
    CHECK(warpfft_xla_toeplitz_spectrum(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "weights must be a vector"),
          "wrong weights dtype: %s", xla_msg);
    f = spectrum_frame(0);
    fr.dims[1][0] = 99; /* points of two lengths */
    arm(0);
    CHECK(warpfft_xla_toeplitz_spectrum(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "one length"),
          "points of two lengths: %s", xla_msg);
    f = spectrum_frame(2);
    f->args.size = 2; /* the weights missing */
    arm(0);
    CHECK(warpfft_xla_toeplitz_spectrum(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "takes 3 arrays"),
          "a missing argument: %s", xla_msg);
    f = spectrum_frame(0);
    fr.ivals[0] = (int64_t)1 << 40; /* iflag, attribute 0 */
    arm(0);
    CHECK(warpfft_xla_toeplitz_spectrum(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "fits a C int"),
          "an attribute past 32 bits: %s", xla_msg);
    /* each call failing in turn */
    for (long k = 1; k <= 2; k++) {
        arm(k);
        XLA_FFI_Error *e = warpfft_xla_toeplitz_spectrum(spectrum_frame(1));
        if (k == 1)
            CHECK(e == (XLA_FFI_Error *)&stream_error_token, "stream failure: XLA's error");
        else
            CHECK(e == (XLA_FFI_Error *)&xla_error_token &&
                      strstr(xla_msg, "warpfft_toeplitz_spectrum failed") &&
                      strstr(xla_msg, "stand-in: warpfft_toeplitz_spectrum failed"),
                  "spectrum failure: %s", xla_msg);
    }
}

static void test_apply(void) {
    char want[1024];
    arm(0);
    int before = op_ids;
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 3, 0)),
            "stream\ncreate 2d n 7 12 1 T 3 tol 1e-05 prec 1 modeord 1 stream 0x5150 M 0 w0\n"
            "apply O1 prec 1 real 1 spec+0 adjoint 0 in+0 -> out+0\n");
    CHECK(op_ids == before + 1 && warpfft_xla_toeplitz_created() == 1, "one operator created");
    arm(0); /* the same key: reused; a complex spectrum and the adjoint passed on */
    snprintf(want, sizeof want, "stream\napply O%d prec 1 real 0 spec+0 adjoint 1 in+0 -> out+0\n",
             op_ids);
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(0, 3, 1)), want);
    arm(0); /* T = 0: nothing to compute, nothing asked */
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 0, 0)), "");
    /* malformed: a spectrum of the wrong shape or precision, modes of the wrong shape */
    XLA_FFI_CallFrame *f = apply_frame(1, 3, 0);
    fr.dims[0][1] = 13;
    arm(0);
    CHECK(warpfft_xla_toeplitz_apply(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "the spectrum must be"),
          "wrong spectrum shape: %s", xla_msg);
    f = apply_frame(1, 3, 0);
    fr.buf[0].dtype = WF_XLA_F64;
    arm(0);
    CHECK(warpfft_xla_toeplitz_apply(f) != NULL && trace[0] == '\0', "an f64 spectrum for c64");
    f = apply_frame(1, 3, 0);
    fr.dims[2][1] = 11;
    arm(0);
    CHECK(warpfft_xla_toeplitz_apply(f) != NULL && trace[0] == '\0' &&
              strstr(xla_msg, "shape (T, modes)"),
          "result of another shape: %s", xla_msg);
    /* each call failing in turn, with a new key (T = 5) each time */
    for (long k = 1; k <= 3; k++) {
        arm(k);
        XLA_FFI_Error *e = warpfft_xla_toeplitz_apply(apply_frame(1, 4 + k, 0));
        const char *fn = k == 2 ? "warpfft_toeplitz_create" : "warpfft_toeplitz_apply_spectrum";
        if (k == 1)
            CHECK(e == (XLA_FFI_Error *)&stream_error_token, "stream failure: XLA's error");
        else
            CHECK(e == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, fn), "k %ld: %s", k,
                  xla_msg);
        CHECK(strstr(trace, "FAILED\n") && strstr(trace, "FAILED\n")[7] == '\0',
              "k %ld: a call after the failure\n%s", k, trace);
    }
    /* the operator whose application failed is idle in the cache: the key runs again */
    arm(0);
    snprintf(want, sizeof want, "stream\napply O%d prec 1 real 1 spec+0 adjoint 0 in+0 -> out+0\n",
             op_ids);
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 7, 0)), want);
    /* more keys than the cache holds: the least recently used go, each after its wait */
    for (int64_t T = 10; T < 20; T++)
        warpfft_xla_toeplitz_apply(apply_frame(1, T, 0));
    CHECK(ops_live == 8, "%d operators alive, the cache holds 8", ops_live);
    arm(0);
    warpfft_xla_toeplitz_cache_clear();
    CHECK(ops_live == 0 && strstr(trace, "sync 0 0x5150\ndestroy"), "clear: %d alive\n%s", ops_live,
          trace);
}

int main(void) {
    test_spectrum();
    test_apply();
    return check_summary("Toeplitz XLA handlers on the recording stand-in: ");
}
