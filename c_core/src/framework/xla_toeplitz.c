/*
 * xla_toeplitz.c — the XLA FFI custom-call handlers of warpfft.jax's Toeplitz operator
 * (python/warpfft/jax/_toeplitz.py registers them), clients of the public C ABI only:
 *   warpfft_xla_toeplitz_spectrum: points (and weights) -> the kernel's spectrum, through
 *     warpfft_toeplitz_spectrum on XLA's stream (it waits for its work: a spectrum is computed
 *     once per set of points, outside the iterations);
 *   warpfft_xla_toeplitz_apply: (spectrum, modes) -> T modes (or T^H), through
 *     warpfft_toeplitz_apply_spectrum with a zero operator (M = 0: grid and FFT plans only) of
 *     the call's shape from a small cache, keyed by (dim, modes, batch, eps, precision, modeord,
 *     device, stream), so a jitted loop creates it once.
 * Contracts in xla_ffi.h's style: shapes in the Python order (the last axis is the C ABI's
 * dimension 1), mode counts n1..n3 in the C order. Errors come back as XLA_FFI_Error values.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/xla_toeplitz.h"

#include "framework/xla_common.h"

/* ---- errors and attributes (the call-frame helpers: xla_common.c) ---- */

static XLA_FFI_Error *status_error(const XLA_FFI_CallFrame *f, warpfft_status st,
                                   const char *what) {
    int errc = WF_XLA_ERR_INVALID_ARGUMENT;
    if (st == WARPFFT_ERR_OUT_OF_MEMORY)
        errc = WF_XLA_ERR_RESOURCE_EXHAUSTED;
    else if (st == WARPFFT_ERR_NO_DRIVER || st == WARPFFT_ERR_NO_DEVICE ||
             st == WARPFFT_ERR_NO_CUFFT || st == WARPFFT_ERR_NO_NVRTC ||
             st == WARPFFT_ERR_DRIVER_TOO_OLD || st == WARPFFT_ERR_NO_KERNEL)
        errc = WF_XLA_ERR_UNAVAILABLE;
    else if (st == WARPFFT_ERR_INTERNAL || st == WARPFFT_ERR_CUDA || st == WARPFFT_ERR_CUFFT)
        errc = WF_XLA_ERR_INTERNAL;
    return wf_xla_error(f, errc, "warpfft: %s failed (%s): %s", what, warpfft_status_name(st),
                        warpfft_last_error());
}

/* An integer attribute that fits a C int (or int64 when wide); 0 when found and valid. */
static int attr_i64(const XLA_FFI_Attrs *at, const char *name, int64_t *out) {
    const XLA_FFI_Scalar *s = wf_xla_find_attr(at, name);
    if (!s)
        return -1;
    if (s->dtype == WF_XLA_S32)
        *out = *(const int32_t *)s->value;
    else if (s->dtype == WF_XLA_S64)
        *out = *(const int64_t *)s->value;
    else
        return -1;
    return 0;
}

static int attr_int(const XLA_FFI_Attrs *at, const char *name, int *out) {
    int64_t v;
    if (attr_i64(at, name, &v) || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int attr_f64(const XLA_FFI_Attrs *at, const char *name, double *out) {
    const XLA_FFI_Scalar *s = wf_xla_find_attr(at, name);
    if (!s || s->dtype != WF_XLA_F64)
        return -1;
    *out = *(const double *)s->value;
    return 0;
}

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
    if (attr_int(at, "dim", &a->dim) || attr_i64(at, "n1", &a->n[0]) ||
        attr_i64(at, "n2", &a->n[1]) || attr_i64(at, "n3", &a->n[2]) ||
        attr_f64(at, "eps", &a->eps))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: the Toeplitz custom call needs integer attributes dim, n1, "
                            "n2, n3 and a float eps");
    static const char *const names[] = {"iflag", "weights", "adjoint"};
    int *const vals[] = {&a->iflag, &a->weights, &a->adjoint};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (wf_xla_find_attr(at, names[i]) && attr_int(at, names[i], vals[i]))
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
    return st == WARPFFT_SUCCESS ? NULL : status_error(f, st, "warpfft_toeplitz_params");
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
    return st == WARPFFT_SUCCESS ? NULL : status_error(f, st, "warpfft_toeplitz_spectrum");
}

/* ---- the application: zero operators, cached ---- */

#define TOEP_CACHE_MAX 8

typedef struct toep_key {
    int dim, precision, modeord, device;
    int64_t n[3], ntransf;
    double eps;
    uint64_t stream;
} toep_key;

typedef struct toep_entry {
    toep_key key;
    warpfft_toeplitz op;
    int busy;   /* a call is using it */
    int cached; /* in toep_cache (else destroyed at release) */
    uint64_t last_use;
} toep_entry;

/* Entries live on the heap: a clear or an eviction removes idle ones from the table only, so a
 * running call's entry never moves under it. */
static pthread_mutex_t toep_lock = PTHREAD_MUTEX_INITIALIZER;
static toep_entry *toep_cache[TOEP_CACHE_MAX];
static int toep_count;
static uint64_t toep_clock;
static atomic_llong toep_created;

static int key_eq(const toep_key *a, const toep_key *b) {
    return a->dim == b->dim && a->precision == b->precision && a->modeord == b->modeord &&
           a->device == b->device && a->n[0] == b->n[0] && a->n[1] == b->n[1] &&
           a->n[2] == b->n[2] && a->ntransf == b->ntransf && a->eps == b->eps &&
           a->stream == b->stream;
}

/* Destroys and frees an entry no call uses and the table no longer holds. */
static void destroy_entry(toep_entry *e) {
    warpfft_stream_sync(e->key.device, e->key.stream); /* its grid may still be in use */
    warpfft_toeplitz_destroy(e->op);
    free(e);
}

/* A zero operator for key, cached or new (created outside the lock: it takes milliseconds). */
static warpfft_status acquire(const toep_key *key, toep_entry **out) {
    pthread_mutex_lock(&toep_lock);
    for (int i = 0; i < toep_count; i++) {
        toep_entry *e = toep_cache[i];
        if (!e->busy && key_eq(&e->key, key)) {
            e->busy = 1;
            e->last_use = ++toep_clock;
            *out = e;
            pthread_mutex_unlock(&toep_lock);
            return WARPFFT_SUCCESS;
        }
    }
    pthread_mutex_unlock(&toep_lock);
    toep_entry *e = calloc(1, sizeof *e);
    if (!e)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.modeord = key->modeord;
    o.device = key->device;
    o.stream = key->stream;
    warpfft_status st = warpfft_toeplitz_create(key->dim, key->n, 1, key->ntransf, key->eps,
                                                (warpfft_precision)key->precision, &o, 0, NULL,
                                                NULL, NULL, WARPFFT_WEIGHTS_NONE, NULL, &e->op);
    if (st != WARPFFT_SUCCESS) {
        free(e);
        return st;
    }
    atomic_fetch_add(&toep_created, 1);
    e->key = *key;
    e->busy = 1;
    toep_entry *evicted = NULL;
    pthread_mutex_lock(&toep_lock);
    e->last_use = ++toep_clock;
    int slot = toep_count < TOEP_CACHE_MAX ? toep_count : -1;
    for (int i = 0; slot < 0 && i < toep_count; i++)
        if (!toep_cache[i]->busy &&
            (slot < 0 || toep_cache[i]->last_use < toep_cache[slot]->last_use))
            slot = i;
    if (slot >= 0) { /* else every entry is busy: this one is not cached */
        if (slot < toep_count)
            evicted = toep_cache[slot];
        else
            toep_count++;
        toep_cache[slot] = e;
        e->cached = 1;
    }
    pthread_mutex_unlock(&toep_lock);
    if (evicted)
        destroy_entry(evicted);
    *out = e;
    return WARPFFT_SUCCESS;
}

static void release(toep_entry *e) {
    pthread_mutex_lock(&toep_lock);
    e->busy = 0;
    int cached = e->cached;
    pthread_mutex_unlock(&toep_lock);
    if (!cached)
        destroy_entry(e);
}

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
    toep_key key;
    memset(&key, 0, sizeof key);
    key.dim = a.dim;
    key.precision = a.precision;
    key.modeord = a.opts.modeord;
    key.ntransf = T;
    key.eps = a.eps;
    for (int d = 0; d < 3; d++)
        key.n[d] = a.n[d];
    if ((e = wf_xla_stream_of(f, &key.stream)))
        return e;
    key.device = wf_xla_device_of(in->data);
    toep_entry *ent;
    warpfft_status st = acquire(&key, &ent);
    if (st != WARPFFT_SUCCESS)
        return status_error(f, st, "warpfft_toeplitz_create");
    st = warpfft_toeplitz_apply_spectrum(ent->op, (warpfft_precision)a.precision, real, spec->data,
                                         a.adjoint, in->data, out->data);
    release(ent);
    return st == WARPFFT_SUCCESS ? NULL : status_error(f, st, "warpfft_toeplitz_apply_spectrum");
}

/* ---- the exported handlers ---- */

/* Registration's metadata request; 1 when it was one (answered). */
static int metadata(XLA_FFI_CallFrame *frame) {
    for (XLA_FFI_Extension_Base *x = frame->extension_start; x; x = x->next) {
        if (x->type == WF_XLA_EXTENSION_METADATA) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)x)->metadata;
            if (m) {
                m->api_version.struct_size = sizeof m->api_version;
                m->api_version.extension_start = NULL;
                m->api_version.major_version = WF_XLA_API_MAJOR;
                m->api_version.minor_version = WF_XLA_API_MINOR;
                m->traits = 0; /* operators may be created, the spectrum waits: no graphs */
            }
            return 1;
        }
    }
    return 0;
}

WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_spectrum(XLA_FFI_CallFrame *frame) {
    if (!frame || metadata(frame) || frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run_spectrum(frame);
}

WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_apply(XLA_FFI_CallFrame *frame) {
    if (!frame || metadata(frame) || frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run_apply(frame);
}

WARPFFT_API int64_t warpfft_xla_toeplitz_created(void) {
    return (int64_t)atomic_load(&toep_created);
}

WARPFFT_API void warpfft_xla_toeplitz_cache_clear(void) {
    toep_entry *gone[TOEP_CACHE_MAX];
    int n_gone = 0, kept = 0;
    pthread_mutex_lock(&toep_lock);
    for (int i = 0; i < toep_count; i++) {
        toep_entry *e = toep_cache[i];
        if (e->busy) { /* its call goes on; it stays cached */
            toep_cache[kept++] = e;
        } else {
            e->cached = 0;
            gone[n_gone++] = e;
        }
    }
    toep_count = kept;
    pthread_mutex_unlock(&toep_lock);
    for (int i = 0; i < n_gone; i++)
        destroy_entry(gone[i]);
}
