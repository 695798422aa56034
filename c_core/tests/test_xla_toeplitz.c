/*
 * test_xla_toeplitz.c — the Toeplitz XLA FFI handlers (c_core/src/framework/xla_toeplitz.c) with
 * the live-plan pool they take operators from (api/pool.c), on the recording stand-in of the
 * public C ABI (test_xla_standin_toeplitz.c; no driver, no GPU); part of test_xla_ffi, built
 * and run by run_tests.sh.
 *
 * The spectrum call: points in the C order then the weights, the spectrum into the result, on
 * XLA's stream, with the attributes' options. The apply call: a zero operator (M = 0) of the
 * call's key from the pool, made once and reused, the caller's spectrum (real or complex by its
 * dtype) and the adjoint flag passed on, the operator given back (fenced) after the
 * application; T = 0 asking for nothing. Malformed frames (rank, dims, dtypes, argument counts,
 * attributes) are refused with XLA's error and no ABI call. With the k-th call (stream request
 * or ABI) failing, for k = 1, 2, ...: the handler returns an error naming the failed function
 * (or XLA's own), calls nothing after it but the release, and the operator stays usable. The
 * pool's limits and clears destroy idle operators without waiting for any stream (the cache
 * the handler had before waited for XLA's stream on the host at every eviction, from inside
 * another call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_xla_ffi.h"

static frame_store tf; /* the Toeplitz frames */
static int n_attrs;

static void iattr(const char *name, int64_t v) {
    tf.ivals[n_attrs] = v;
    set_attr(&tf, n_attrs, name, WF_XLA_S64, &tf.ivals[n_attrs]);
    n_attrs++;
}

/* A 2D frame: modes 12 x 7 (C order: n1 = 7, the last axis), grid 24 x 14; the options record
 * with modeord 1 and upsampfac 1.25 over what the caller set. */
static XLA_FFI_CallFrame *finish(int nargs) {
    iattr("dim", 2);
    iattr("n1", 7);
    iattr("n2", 12);
    iattr("n3", 1);
    tf.eps = 1e-5;
    set_attr(&tf, n_attrs++, "eps", WF_XLA_F64, &tf.eps);
    tf.opts.modeord = 1;
    tf.opts.upsampfac = 1.25;
    frame_finish(&tf, nargs, n_attrs);
    return &tf.f;
}

/* The spectrum call: x, y (C order) of M = 100 f32, weights of `kind`, result 14 x 24. */
static XLA_FFI_CallFrame *spectrum_frame(int kind) {
    memset(&tf, 0, sizeof tf);
    n_bufs = n_attrs = 0;
    const int64_t M[1] = {100}, grid[2] = {24, 14};
    set_buffer(&tf, n_bufs++, "x", WF_XLA_F32, 1, M);
    set_buffer(&tf, n_bufs++, "y", WF_XLA_F32, 1, M);
    if (kind)
        set_buffer(&tf, n_bufs++, "w", kind == 1 ? WF_XLA_F32 : WF_XLA_C64, 1, M);
    int nargs = n_bufs;
    set_buffer(&tf, n_bufs++, "spec", kind == 2 ? WF_XLA_C64 : WF_XLA_F32, 2, grid);
    iattr("iflag", -1);
    iattr("weights", kind);
    warpfft_opts_default(&tf.opts);
    tf.opts.method = 3;
    tf.opts.deterministic = 1;
    return finish(nargs);
}

/* The apply call: spectrum 24 x 14 (real or complex), modes (T, 12, 7) complex64. */
static XLA_FFI_CallFrame *apply_frame(int real, int64_t T, int adjoint) {
    memset(&tf, 0, sizeof tf);
    n_bufs = n_attrs = 0;
    const int64_t grid[2] = {24, 14}, modes[3] = {T, 12, 7};
    set_buffer(&tf, n_bufs++, "spec", real ? WF_XLA_F32 : WF_XLA_C64, 2, grid);
    set_buffer(&tf, n_bufs++, "in", WF_XLA_C64, 3, modes);
    set_buffer(&tf, n_bufs++, "out", WF_XLA_C64, 3, modes);
    iattr("adjoint", adjoint);
    warpfft_opts_default(&tf.opts);
    return finish(2);
}

/* A malformed frame f of the apply (or spectrum) handler: refused with XLA's error, a message
 * that has `want`, and no ABI call. */
static void refused(XLA_FFI_CallFrame *f, int apply, const char *want, const char *what) {
    arm(0, WARPFFT_ERR_CUDA);
    XLA_FFI_Error *e = apply ? warpfft_xla_toeplitz_apply(f) : warpfft_xla_toeplitz_spectrum(f);
    CHECK(e != NULL && trace[0] == '\0' && strstr(xla_msg, want), "%s: %s / %s", what, xla_msg,
          trace);
}

static int ok_call(XLA_FFI_Error *e, const char *want) {
    return CHECK(e == NULL, "handler failed: %s", xla_msg) &&
           CHECK(strcmp(trace, want) == 0, "trace\n%sexpected\n%s", trace, want);
}

void test_toeplitz_spectrum(void) {
    static const char *const want[3] = {
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w0 - -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n",
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w1 w+0 -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n",
        "stream\nspectrum 2d n 7 12 1 iflag -1 tol 1e-05 prec 1 M 100 x+0 y+0 - w2 w+0 -> spec+0 "
        "stream 0x5150 upsampfac 1.25 method 3 det 1\n"};
    for (int kind = 0; kind < 3; kind++) {
        arm(0, WARPFFT_ERR_CUDA);
        ok_call(warpfft_xla_toeplitz_spectrum(spectrum_frame(kind)), want[kind]);
    }
    /* malformed frames: refused, nothing called */
    XLA_FFI_CallFrame *f = spectrum_frame(1);
    tf.dims[3][0] = 23; /* the spectrum's shape */
    refused(f, 0, "not the spectrum", "wrong spectrum shape");
    f = spectrum_frame(1);
    tf.buf[2].dtype = WF_XLA_C64; /* real weights declared, complex given */
    refused(f, 0, "weights must be a vector", "wrong weights dtype");
    f = spectrum_frame(0);
    tf.dims[1][0] = 99; /* points of two lengths */
    refused(f, 0, "one length", "points of two lengths");
    f = spectrum_frame(2);
    f->args.size = 2; /* the weights missing */
    refused(f, 0, "takes 3 arrays", "a missing argument");
    f = spectrum_frame(0);
    tf.ivals[0] = (int64_t)1 << 40; /* iflag, attribute 0 */
    refused(f, 0, "fits a C int", "an attribute past 32 bits");
    /* each call failing in turn */
    for (long k = 1; k <= 2; k++) {
        arm(k, WARPFFT_ERR_CUDA);
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

void test_toeplitz_apply(void) {
    char want[1024];
    arm(0, WARPFFT_ERR_CUDA);
    warpfft_pool_clear();
    int before = op_ids;
    snprintf(want, sizeof want,
             "stream\ncreate 2d n 7 12 1 T 3 tol 1e-05 prec 1 modeord 1 stream 0x5150 M 0 w0\n"
             "apply O%d prec 1 real 1 spec+0 adjoint 0 in+0 -> out+0\nfence O%d\n",
             before + 1, before + 1);
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 3, 0)), want);
    CHECK(op_ids == before + 1 && pool_size() == 1, "one operator created and pooled");
    arm(0,
        WARPFFT_ERR_CUDA); /* the same key: reused; a complex spectrum and the adjoint passed on */
    snprintf(want, sizeof want,
             "stream\napply O%d prec 1 real 0 spec+0 adjoint 1 in+0 -> out+0\nfence O%d\n", op_ids,
             op_ids);
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(0, 3, 1)), want);
    arm(0, WARPFFT_ERR_CUDA); /* T = 0: nothing to compute, nothing asked */
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 0, 0)), "");
    /* malformed: a spectrum of the wrong shape or precision, modes of the wrong shape */
    XLA_FFI_CallFrame *f = apply_frame(1, 3, 0);
    tf.dims[0][1] = 13;
    refused(f, 1, "the spectrum must be", "wrong spectrum shape");
    f = apply_frame(1, 3, 0);
    tf.buf[0].dtype = WF_XLA_F64;
    refused(f, 1, "", "an f64 spectrum for c64");
    f = apply_frame(1, 3, 0);
    tf.dims[2][1] = 11;
    refused(f, 1, "shape (T, modes)", "result of another shape");
    /* each call failing in turn, with a new key (T = 5) each time */
    for (long k = 1; k <= 3; k++) {
        arm(k, WARPFFT_ERR_CUDA);
        XLA_FFI_Error *e = warpfft_xla_toeplitz_apply(apply_frame(1, 4 + k, 0));
        const char *fn = k == 2 ? "warpfft_toeplitz_create" : "warpfft_toeplitz_apply_spectrum";
        if (k == 1)
            CHECK(e == (XLA_FFI_Error *)&stream_error_token, "stream failure: XLA's error");
        else
            CHECK(e == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, fn), "k %ld: %s", k,
                  xla_msg);
        const char *after = strstr(trace, "FAILED\n");
        CHECK(after && (after[7] == '\0' || (strncmp(after + 7, "fence O", 7) == 0 &&
                                             strchr(after + 7, '\n')[1] == '\0')),
              "k %ld: a call after the failure but the release\n%s", k, trace);
    }
    /* the operator whose application failed is idle in the pool: the key runs again */
    arm(0, WARPFFT_ERR_CUDA);
    snprintf(want, sizeof want,
             "stream\napply O%d prec 1 real 1 spec+0 adjoint 0 in+0 -> out+0\nfence O%d\n", op_ids,
             op_ids);
    ok_call(warpfft_xla_toeplitz_apply(apply_frame(1, 7, 0)), want);
}

/* The operators in the pool: reused by key, limited and cleared by the pool, destroyed after
 * their fence and never after a wait for XLA's stream (the handler's old cache synchronised the
 * stream on the host at each eviction, inside another call's custom call: a device-0 call could
 * wait for a device-1 stream waiting on a collective device 0 had not enqueued). */
void test_toeplitz_pool(void) {
    warpfft_pool_clear();
    warpfft_pool_set_limits(3, -1);
    int live0 = ops_live, ids0 = op_ids;
    arm(0, WARPFFT_ERR_CUDA);
    for (int64_t T = 10; T < 20; T++) /* ten keys, three kept idle */
        CHECK(warpfft_xla_toeplitz_apply(apply_frame(1, T, 0)) == NULL, "T %lld: %s", (long long)T,
              xla_msg);
    CHECK(op_ids == ids0 + 10 && ops_live == live0 + 3, "%d made, %d alive (the pool keeps 3)",
          op_ids - ids0, ops_live - live0);
    CHECK(!strstr(trace, "sync") && strstr(trace, "fence O") && strstr(trace, "destroy O"),
          "eviction waited for a stream, or fenced or destroyed nothing:\n%s", trace);
    warpfft_pool_info info = {.struct_size = sizeof info};
    warpfft_pool_get_info(&info);
    CHECK(info.operators_idle == 3 && info.operators_busy == 0 && info.idle == 3 &&
              info.operators_created >= 10,
          "pool info: %lld idle operators, %lld busy, %lld created", (long long)info.operators_idle,
          (long long)info.operators_busy, (long long)info.operators_created);
    arm(0, WARPFFT_ERR_CUDA); /* the most recent key again: no creation */
    warpfft_xla_toeplitz_apply(apply_frame(1, 19, 0));
    CHECK(op_ids == ids0 + 10 && !strstr(trace, "create"), "a pooled key made an operator:\n%s",
          trace);
    arm(0, WARPFFT_ERR_CUDA);
    warpfft_pool_clear();
    CHECK(ops_live == live0 && !strstr(trace, "sync") && strstr(trace, "destroy O"),
          "clear: %d alive\n%s", ops_live - live0, trace);
    warpfft_pool_set_limits(16, -1);
}
