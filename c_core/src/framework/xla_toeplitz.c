/*
 * xla_toeplitz.c — the XLA FFI custom-call handlers of warpfft.jax's Toeplitz operator
 * (warpfft_xla.h; python/warpfft/jax/_toeplitz.py registers them), clients of the public C ABI
 * only:
 *   warpfft_xla_toeplitz_spectrum: points (and weights) -> the kernel's spectrum, through
 *     warpfft_toeplitz_spectrum on XLA's stream (it waits for its work: a spectrum is computed
 *     once per set of points, outside the iterations);
 *   warpfft_xla_toeplitz_apply: (spectrum, modes) -> T modes (or T^H), through
 *     warpfft_toeplitz_apply_spectrum with a zero operator (M = 0: grid and FFT plans only) of
 *     the call's shape from the live-plan pool (warpfft_pool_acquire_toeplitz), so a jitted
 *     loop creates it once; given back after the application is enqueued (the pool fences it:
 *     evicting it later never waits for XLA's stream).
 * Errors come back as XLA_FFI_Error values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/xla_common.h"
#include "framework/xla_ffi.h"

/* ---- what both calls share: the operator's arguments ---- */

typedef struct toep_args {
    int dim, precision, iflag, weights, adjoint;
    int64_t n[3]; /* C order */
    double eps;
    warpfft_opts opts; /* the attribute opts (wf_xla_opts): the kernel's type 1, the mode order */
} toep_args;

static XLA_FFI_Error *decode_attrs(XLA_FFI_CallFrame *f, toep_args *a) {
    const XLA_FFI_Attrs *at = &f->attrs;
    memset(a, 0, sizeof *a);
    XLA_FFI_Error *e = wf_xla_opts(f, &a->opts);
    if (e)
        return e;
    if (wf_xla_attr_int(at, "dim", &a->dim) || wf_xla_attr_i64(at, "n1", &a->n[0]) ||
        wf_xla_attr_i64(at, "n2", &a->n[1]) || wf_xla_attr_i64(at, "n3", &a->n[2]) ||
        wf_xla_attr_f64(at, "eps", &a->eps))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the Toeplitz custom call needs integer attributes dim, n1, "
                            "n2, n3 and a float eps");
    static const char *const names[] = {"iflag", "weights", "adjoint"};
    int *const vals[] = {&a->iflag, &a->weights, &a->adjoint};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (wf_xla_find_attr(at, names[i]) && wf_xla_attr_int(at, names[i], vals[i]))
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: attribute %s must be an integer that fits a C int",
                                names[i]);
    if (a->dim < 1 || a->dim > 3)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: dim = %d", a->dim);
    for (int d = a->dim; d < 3; d++)
        a->n[d] = 1;
    return NULL;
}

/* The call's options on `device` and `stream`. */
static warpfft_opts make_opts(const toep_args *a, int device, uint64_t stream) {
    warpfft_opts o = a->opts;
    o.device = device;
    o.stream = stream;
    return o;
}

/* The grid of the operator (warpfft_toeplitz_params: the checks of create, without a GPU). */
static XLA_FFI_Error *grid_of(XLA_FFI_CallFrame *f, const toep_args *a, int64_t ntransf,
                              warpfft_toeplitz_info *info) {
    warpfft_opts o = make_opts(a, 0, 0);
    warpfft_status st =
        warpfft_toeplitz_params(a->dim, a->n, ntransf > 0 ? ntransf : 1, a->eps,
                                (warpfft_precision)a->precision, &o, a->weights, info);
    return st == WARPFFT_SUCCESS ? NULL : wf_xla_status_error(f, st, "warpfft_toeplitz_params");
}

/* b is (L_dim, .., L_1) (Python order) of the spectrum's dtype. */
static int is_spectrum(const XLA_FFI_Buffer *b, const warpfft_toeplitz_info *info, int real) {
    int want = info->precision == WARPFFT_F32 ? (real ? WF_XLA_F32 : WF_XLA_C64)
                                              : (real ? WF_XLA_F64 : WF_XLA_C128);
    if (!b || b->dtype != want || b->rank != info->dim)
        return 0;
    for (int d = 0; d < info->dim; d++)
        if (b->dims[info->dim - 1 - d] != info->n_grid[d])
            return 0;
    return 1;
}

/* ---- the spectrum ---- */

/* Arguments: dim point arrays (M,) in the C order, then the weights (M,) unless none; result:
 * the spectrum. */
static XLA_FFI_Error *run_spectrum(XLA_FFI_CallFrame *f) {
    toep_args a;
    XLA_FFI_Error *e = decode_attrs(f, &a);
    if (e)
        return e;
    int nargs = a.dim + (a.weights != WARPFFT_WEIGHTS_NONE);
    if (f->args.size != nargs || f->rets.size != 1 || f->rets.types[0] != WF_XLA_RET_BUFFER)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the spectrum call takes %d arrays (dim points%s) and returns "
                            "one (got %lld, %lld)",
                            nargs, a.weights ? " and the weights" : "", (long long)f->args.size,
                            (long long)f->rets.size);
    const XLA_FFI_Buffer *pts[3] = {NULL, NULL, NULL}, *w = NULL;
    for (int d = 0; d < a.dim; d++)
        if (!(pts[d] = wf_xla_arg_buffer(f, d)))
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: arguments must be buffers");
    if (a.weights && !(w = wf_xla_arg_buffer(f, a.dim)))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: arguments must be buffers");
    const XLA_FFI_Buffer *out = (const XLA_FFI_Buffer *)f->rets.rets[0];
    if (pts[0]->dtype != WF_XLA_F32 && pts[0]->dtype != WF_XLA_F64)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: points must be f32 or f64");
    a.precision = pts[0]->dtype == WF_XLA_F32 ? WARPFFT_F32 : WARPFFT_F64;
    int64_t M = pts[0]->rank == 1 ? pts[0]->dims[0] : -1;
    for (int d = 0; d < a.dim; d++)
        if (pts[d]->dtype != pts[0]->dtype || pts[d]->rank != 1 || pts[d]->dims[0] != M)
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: point arrays must be vectors of one length and dtype");
    if (w) {
        int real = pts[0]->dtype, cplx = a.precision == WARPFFT_F32 ? WF_XLA_C64 : WF_XLA_C128;
        int want = a.weights == WARPFFT_WEIGHTS_REAL ? real : cplx;
        if (w->dtype != want || w->rank != 1 || w->dims[0] != M)
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: the weights must be a vector of M = %lld %s values",
                                (long long)M,
                                a.weights == WARPFFT_WEIGHTS_REAL ? "real" : "complex");
    }
    warpfft_toeplitz_info info;
    if ((e = grid_of(f, &a, 1, &info)))
        return e;
    if (!is_spectrum(out, &info, a.weights != WARPFFT_WEIGHTS_COMPLEX))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the result is not the spectrum (grid %lld x %lld x %lld, C "
                            "order)",
                            (long long)info.n_grid[0], (long long)info.n_grid[1],
                            (long long)info.n_grid[2]);
    uint64_t stream = 0;
    if ((e = wf_xla_stream_of(f, &stream)))
        return e;
    warpfft_opts o = make_opts(&a, wf_xla_device_of(out->data), stream);
    warpfft_status st = warpfft_toeplitz_spectrum(
        a.dim, a.n, a.iflag, a.eps, (warpfft_precision)a.precision, &o, M, pts[0]->data,
        pts[1] ? pts[1]->data : NULL, pts[2] ? pts[2]->data : NULL, a.weights, w ? w->data : NULL,
        out->data);
    return st == WARPFFT_SUCCESS ? NULL : wf_xla_status_error(f, st, "warpfft_toeplitz_spectrum");
}

/* ---- the application: a zero operator of the live-plan pool ---- */

/* Arguments: the spectrum, the modes (T, N_dim?, .., N_1) complex; result: like the modes. */
static XLA_FFI_Error *run_apply(XLA_FFI_CallFrame *f) {
    toep_args a;
    XLA_FFI_Error *e = decode_attrs(f, &a);
    if (e)
        return e;
    const XLA_FFI_Buffer *spec = wf_xla_arg_buffer(f, 0), *in = wf_xla_arg_buffer(f, 1);
    if (f->args.size != 2 || !spec || !in || f->rets.size != 1 ||
        f->rets.types[0] != WF_XLA_RET_BUFFER)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the Toeplitz apply call takes (spectrum, modes) and returns "
                            "one array");
    const XLA_FFI_Buffer *out = (const XLA_FFI_Buffer *)f->rets.rets[0];
    if ((in->dtype != WF_XLA_C64 && in->dtype != WF_XLA_C128) || out->dtype != in->dtype)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: modes and result must both be complex64 or complex128");
    a.precision = in->dtype == WF_XLA_C64 ? WARPFFT_F32 : WARPFFT_F64;
    int ok = in->rank == 1 + a.dim && out->rank == in->rank;
    for (int i = 0; ok && i < in->rank; i++)
        ok = in->dims[i] == out->dims[i];
    for (int d = 0; ok && d < a.dim; d++)
        ok = in->dims[a.dim - d] == a.n[d];
    if (!ok)
        return wf_xla_error(
            f, WF_XLA_ERR_INVALID_ARGUMENT,
            "warpfft: modes and result must have shape (T, modes) with modes %lld x "
            "%lld x %lld (C order)",
            (long long)a.n[0], (long long)a.n[1], (long long)a.n[2]);
    int64_t T = in->dims[0];
    int real = spec->dtype == WF_XLA_F32 || spec->dtype == WF_XLA_F64;
    a.weights = real ? WARPFFT_WEIGHTS_REAL : WARPFFT_WEIGHTS_COMPLEX;
    warpfft_toeplitz_info info;
    if ((e = grid_of(f, &a, T, &info)))
        return e;
    if (!is_spectrum(spec, &info, real))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the spectrum must be (grid, Python order) of the modes' real "
                            "or complex type, grid %lld x %lld x %lld (C order)",
                            (long long)info.n_grid[0], (long long)info.n_grid[1],
                            (long long)info.n_grid[2]);
    if (T == 0)
        return NULL;
    uint64_t stream = 0;
    if ((e = wf_xla_stream_of(f, &stream)))
        return e;
    warpfft_opts o = make_opts(&a, wf_xla_device_of(in->data), stream);
    warpfft_toeplitz op = NULL;
    warpfft_status st = warpfft_pool_acquire_toeplitz(a.dim, a.n, T, a.eps,
                                                      (warpfft_precision)a.precision, &o, &op);
    if (st != WARPFFT_SUCCESS)
        return wf_xla_status_error(f, st, "warpfft_pool_acquire_toeplitz");
    st = warpfft_toeplitz_apply_spectrum(op, (warpfft_precision)a.precision, real, spec->data,
                                         a.adjoint, in->data, out->data);
    if (st != WARPFFT_SUCCESS) { /* the application's error is the one to report */
        XLA_FFI_Error *err = wf_xla_status_error(f, st, "warpfft_toeplitz_apply_spectrum");
        warpfft_pool_release_toeplitz(op, 0);
        return err;
    }
    st = warpfft_pool_release_toeplitz(op, 0);
    return st == WARPFFT_SUCCESS ? NULL
                                 : wf_xla_status_error(f, st, "warpfft_pool_release_toeplitz");
}

/* ---- the exported handlers ---- */

/* Operators may be created and the spectrum waits: neither is CUDA-graph capturable. */
WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_spectrum(XLA_FFI_CallFrame *frame) {
    if (!frame || wf_xla_metadata(frame) || frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run_spectrum(frame);
}

WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_apply(XLA_FFI_CallFrame *frame) {
    if (!frame || wf_xla_metadata(frame) || frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run_apply(frame);
}
