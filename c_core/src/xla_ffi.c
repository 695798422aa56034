/*
 * xla_ffi.c — the XLA FFI custom-call handler behind warpfft.jax (see xla_ffi.h for the
 * contract). It decodes XLA's call frame, takes a plan from a small cache, and runs setpts +
 * execute through the public C ABI on the stream XLA hands it. No GPU work happens outside
 * the execute stage; errors come back to XLA as XLA_FFI_Error values (JAX raises them).
 */
#include "xla_ffi.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WF_XLA_CACHE_MAX 16

typedef struct wf_xla_key {
    int type, dim, precision, iflag, modeord, method, device, max_subprob;
    int bin[3];
    int64_t n[3];
    int64_t ntransf;
    double eps, upsampfac;
    uint64_t stream;
} wf_xla_key;

typedef struct wf_xla_entry {
    wf_xla_key key;
    warpfft_plan plan;
    int busy;
    uint64_t last_use;
} wf_xla_entry;

static pthread_mutex_t wf_xla_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_xla_entry wf_xla_cache[WF_XLA_CACHE_MAX];
static int wf_xla_count;
static uint64_t wf_xla_clock;
static atomic_llong wf_xla_created;

static XLA_FFI_Error *xla_error(const XLA_FFI_CallFrame *f, int errc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static XLA_FFI_Error *xla_error(const XLA_FFI_CallFrame *f, int errc, const char *fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    XLA_FFI_Error_Create_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.message = msg;
    a.errc = errc;
    return f->api->XLA_FFI_Error_Create(&a);
}

static int status_errc(warpfft_status st) {
    switch (st) {
    case WARPFFT_ERR_OUT_OF_MEMORY:
        return WF_XLA_ERR_RESOURCE_EXHAUSTED;
    case WARPFFT_ERR_NO_DRIVER:
    case WARPFFT_ERR_NO_DEVICE:
    case WARPFFT_ERR_NO_CUFFT:
    case WARPFFT_ERR_NO_NVRTC:
    case WARPFFT_ERR_DRIVER_TOO_OLD:
    case WARPFFT_ERR_NO_KERNEL:
        return WF_XLA_ERR_UNAVAILABLE;
    case WARPFFT_ERR_UNSUPPORTED:
        return WF_XLA_ERR_UNIMPLEMENTED;
    case WARPFFT_ERR_INTERNAL:
    case WARPFFT_ERR_CUDA:
    case WARPFFT_ERR_CUFFT:
        return WF_XLA_ERR_INTERNAL;
    default:
        return WF_XLA_ERR_INVALID_ARGUMENT;
    }
}

static XLA_FFI_Error *status_error(const XLA_FFI_CallFrame *f, warpfft_status st,
                                   const char *what) {
    return xla_error(f, status_errc(st), "warpfft: %s failed (%s): %s", what,
                     warpfft_status_name(st), warpfft_last_error());
}

/* ---- attributes ---- */

static const XLA_FFI_Scalar *find_attr(const XLA_FFI_Attrs *at, const char *name) {
    size_t len = strlen(name);
    for (int64_t i = 0; i < at->size; i++) {
        const XLA_FFI_ByteSpan *s = at->names[i];
        if (at->types[i] == WF_XLA_ATTR_SCALAR && s->len == len && memcmp(s->ptr, name, len) == 0)
            return (const XLA_FFI_Scalar *)at->attrs[i];
    }
    return NULL;
}

/* Integer attribute of any integer width; 0 when found and valid, -1 otherwise. */
static int attr_int(const XLA_FFI_Attrs *at, const char *name, int64_t *out) {
    const XLA_FFI_Scalar *s = find_attr(at, name);
    if (!s)
        return -1;
    switch (s->dtype) {
    case WF_XLA_S32:
        *out = *(const int32_t *)s->value;
        return 0;
    case WF_XLA_S64:
        *out = *(const int64_t *)s->value;
        return 0;
    case WF_XLA_U32:
        *out = *(const uint32_t *)s->value;
        return 0;
    case WF_XLA_U64:
        *out = (int64_t) * (const uint64_t *)s->value;
        return 0;
    default:
        return -1;
    }
}

static int attr_f64(const XLA_FFI_Attrs *at, const char *name, double *out) {
    const XLA_FFI_Scalar *s = find_attr(at, name);
    if (!s)
        return -1;
    if (s->dtype == WF_XLA_F64)
        *out = *(const double *)s->value;
    else if (s->dtype == WF_XLA_F32)
        *out = *(const float *)s->value;
    else
        return -1;
    return 0;
}

/* ---- device of the buffers ---- */

typedef int (*wf_ptr_attr_fn)(void *, int, uint64_t);
typedef int (*wf_ctx_dev_fn)(int *);
static pthread_once_t wf_xla_cu_once = PTHREAD_ONCE_INIT;
static wf_ptr_attr_fn wf_xla_ptr_attr;
static wf_ctx_dev_fn wf_xla_ctx_dev;

static void cu_lookup(void) {
    /* XLA has loaded the driver already; take its copy without loading anything new. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;
    *(void **)&wf_xla_ptr_attr = dlsym(h, "cuPointerGetAttribute");
    *(void **)&wf_xla_ctx_dev = dlsym(h, "cuCtxGetDevice");
}

/* The ordinal of the device holding `ptr` (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9); else the
 * current context's device; else 0. */
static int device_of(void *ptr) {
    pthread_once(&wf_xla_cu_once, cu_lookup);
    int ordinal = -1;
    if (ptr && wf_xla_ptr_attr && wf_xla_ptr_attr(&ordinal, 9, (uint64_t)(uintptr_t)ptr) == 0 &&
        ordinal >= 0)
        return ordinal;
    int dev = 0;
    if (wf_xla_ctx_dev && wf_xla_ctx_dev(&dev) == 0)
        return dev;
    return 0;
}

/* ---- plan cache ---- */

static int key_eq(const wf_xla_key *a, const wf_xla_key *b) {
    return a->type == b->type && a->dim == b->dim && a->precision == b->precision &&
           a->iflag == b->iflag && a->modeord == b->modeord && a->method == b->method &&
           a->device == b->device && a->max_subprob == b->max_subprob && a->bin[0] == b->bin[0] &&
           a->bin[1] == b->bin[1] && a->bin[2] == b->bin[2] && a->n[0] == b->n[0] &&
           a->n[1] == b->n[1] && a->n[2] == b->n[2] && a->ntransf == b->ntransf &&
           a->eps == b->eps && a->upsampfac == b->upsampfac && a->stream == b->stream;
}

static void destroy_entry(wf_xla_entry *e) {
    warpfft_stream_sync(e->key.device, e->key.stream); /* its workspace may still be in use */
    warpfft_plan_destroy(e->plan);
    e->plan = NULL;
}

/* Takes a free cached plan for `key`, or creates one (evicting the least recently used idle
 * entry when full). The entry is marked busy until release_plan. */
static warpfft_status acquire_plan(const wf_xla_key *key, wf_xla_entry **out) {
    pthread_mutex_lock(&wf_xla_lock);
    for (int i = 0; i < wf_xla_count; i++) {
        wf_xla_entry *e = &wf_xla_cache[i];
        if (!e->busy && key_eq(&e->key, key)) {
            e->busy = 1;
            e->last_use = ++wf_xla_clock;
            *out = e;
            pthread_mutex_unlock(&wf_xla_lock);
            return WARPFFT_SUCCESS;
        }
    }
    int slot = -1;
    if (wf_xla_count < WF_XLA_CACHE_MAX) {
        slot = wf_xla_count;
    } else {
        for (int i = 0; i < wf_xla_count; i++)
            if (!wf_xla_cache[i].busy &&
                (slot < 0 || wf_xla_cache[i].last_use < wf_xla_cache[slot].last_use))
                slot = i;
        if (slot >= 0)
            destroy_entry(&wf_xla_cache[slot]);
    }
    /* Points are set on every call: unchecked set-points (no host wait in setpts; non-finite
     * points give all-NaN outputs, README "Bad points"). */
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.check_points = 0;
    o.modeord = key->modeord;
    o.method = key->method;
    o.device = key->device;
    o.upsampfac = key->upsampfac;
    o.stream = key->stream;
    o.max_subprob = key->max_subprob;
    for (int d = 0; d < 3; d++)
        o.bin_size[d] = key->bin[d];
    warpfft_plan plan = NULL;
    warpfft_status st = warpfft_plan_create(key->type, key->dim, key->n, key->iflag, key->ntransf,
                                            key->eps, (warpfft_precision)key->precision, &o, &plan);
    if (st != WARPFFT_SUCCESS) {
        if (slot >= 0 && slot < wf_xla_count) { /* an evicted slot: drop it */
            wf_xla_cache[slot] = wf_xla_cache[wf_xla_count - 1];
            wf_xla_count--;
        }
        pthread_mutex_unlock(&wf_xla_lock);
        return st;
    }
    atomic_fetch_add(&wf_xla_created, 1);
    if (slot < 0) { /* every entry busy (many concurrent calls): an uncached plan */
        wf_xla_entry *e = calloc(1, sizeof *e);
        if (!e) {
            warpfft_plan_destroy(plan);
            pthread_mutex_unlock(&wf_xla_lock);
            return WARPFFT_ERR_OUT_OF_MEMORY;
        }
        e->key = *key;
        e->plan = plan;
        e->busy = 2; /* freed by release_plan */
        *out = e;
        pthread_mutex_unlock(&wf_xla_lock);
        return WARPFFT_SUCCESS;
    }
    if (slot == wf_xla_count)
        wf_xla_count++;
    wf_xla_entry *e = &wf_xla_cache[slot];
    e->key = *key;
    e->plan = plan;
    e->busy = 1;
    e->last_use = ++wf_xla_clock;
    *out = e;
    pthread_mutex_unlock(&wf_xla_lock);
    return WARPFFT_SUCCESS;
}

static void release_plan(wf_xla_entry *e) {
    if (e->busy == 2) {
        destroy_entry(e);
        free(e);
        return;
    }
    pthread_mutex_lock(&wf_xla_lock);
    e->busy = 0;
    pthread_mutex_unlock(&wf_xla_lock);
}

WARPFFT_API int64_t warpfft_xla_plans_created(void) {
    return (int64_t)atomic_load(&wf_xla_created);
}

WARPFFT_API int64_t warpfft_xla_cache_size(void) {
    pthread_mutex_lock(&wf_xla_lock);
    int64_t n = wf_xla_count;
    pthread_mutex_unlock(&wf_xla_lock);
    return n;
}

WARPFFT_API void warpfft_xla_cache_clear(void) {
    pthread_mutex_lock(&wf_xla_lock);
    int kept = 0;
    for (int i = 0; i < wf_xla_count; i++) {
        if (wf_xla_cache[i].busy)
            wf_xla_cache[kept++] = wf_xla_cache[i];
        else
            destroy_entry(&wf_xla_cache[i]);
    }
    wf_xla_count = kept;
    pthread_mutex_unlock(&wf_xla_lock);
}

/* ---- the handler ---- */

static const XLA_FFI_Buffer *arg_buffer(const XLA_FFI_CallFrame *f, int64_t i) {
    if (i >= f->args.size || f->args.types[i] != WF_XLA_ARG_BUFFER)
        return NULL;
    return (const XLA_FFI_Buffer *)f->args.args[i];
}

static XLA_FFI_Error *stream_of(XLA_FFI_CallFrame *f, uint64_t *stream) {
    if (f->api->struct_size < offsetof(XLA_FFI_Api, XLA_FFI_Stream_Get) + sizeof(void *))
        return xla_error(f, WF_XLA_ERR_UNIMPLEMENTED, "warpfft: XLA's FFI API has no Stream_Get");
    XLA_FFI_Stream_Get_Args sa;
    memset(&sa, 0, sizeof sa);
    sa.struct_size = sizeof sa;
    sa.ctx = f->ctx;
    XLA_FFI_Error *e = f->api->XLA_FFI_Stream_Get(&sa);
    if (e)
        return e;
    *stream = (uint64_t)(uintptr_t)sa.stream;
    return NULL;
}

/* Type 3: source (G, T, M) complex, dim source coordinate arrays (G or 1, M) then dim target
 * coordinate arrays (G or 1, K), result (G, T, K). One cached plan per (dim, T, eps, sign,
 * precision, options, device, stream); M and K are set by setpts3 on every call (per group
 * when the coordinates are per group). */
static XLA_FFI_Error *run3(XLA_FFI_CallFrame *f, int64_t iflag, double eps, int64_t method,
                           double upsampfac, int64_t max_subprob, const int64_t bin[3]) {
    int64_t nargs = f->args.size;
    if (nargs < 3 || nargs > 7 || (nargs - 1) % 2 != 0 || f->rets.size != 1 ||
        f->rets.types[0] != WF_XLA_RET_BUFFER)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: a type-3 custom call takes source + 1..3 source coordinate "
                         "arrays + as many target coordinate arrays and returns one array (got "
                         "%lld arguments, %lld results)",
                         (long long)nargs, (long long)f->rets.size);
    int dim = (int)((nargs - 1) / 2);
    const XLA_FFI_Buffer *src = arg_buffer(f, 0);
    const XLA_FFI_Buffer *out = (const XLA_FFI_Buffer *)f->rets.rets[0];
    const XLA_FFI_Buffer *pts[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    for (int d = 0; d < 2 * dim; d++) {
        pts[d] = arg_buffer(f, 1 + d);
        if (!pts[d])
            return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: arguments must be buffers");
    }
    if (!src)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: arguments must be buffers");
    int precision;
    size_t real_bytes;
    if (src->dtype == WF_XLA_C64 && out->dtype == WF_XLA_C64) {
        precision = WARPFFT_F32;
        real_bytes = 4;
    } else if (src->dtype == WF_XLA_C128 && out->dtype == WF_XLA_C128) {
        precision = WARPFFT_F64;
        real_bytes = 8;
    } else {
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: source and result must both be complex64 or complex128");
    }
    int want_pt = precision == WARPFFT_F32 ? WF_XLA_F32 : WF_XLA_F64;
    if (src->rank != 3 || out->rank != 3 || pts[0]->rank != 2 || pts[dim]->rank != 2)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: type 3 needs source and result of rank 3 and coordinates of "
                         "rank 2");
    int64_t G = src->dims[0], T = src->dims[1], M = src->dims[2];
    int64_t Gp = pts[0]->dims[0], K = pts[dim]->dims[1];
    for (int d = 0; d < 2 * dim; d++) {
        int64_t len = d < dim ? M : K;
        if (pts[d]->dtype != want_pt || pts[d]->rank != 2 || pts[d]->dims[0] != Gp ||
            pts[d]->dims[1] != len)
            return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                             "warpfft: %s coordinate array %d must be %s of shape (%lld, %lld)",
                             d < dim ? "source" : "target", d % dim,
                             precision == WARPFFT_F32 ? "float32" : "float64", (long long)Gp,
                             (long long)len);
    }
    if (Gp != G && Gp != 1)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: %lld point sets for %lld source groups", (long long)Gp,
                         (long long)G);
    if (out->dims[0] != G || out->dims[1] != T || out->dims[2] != K)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: result has shape (%lld, %lld, %lld), expected (%lld, %lld, "
                         "%lld)",
                         (long long)out->dims[0], (long long)out->dims[1], (long long)out->dims[2],
                         (long long)G, (long long)T, (long long)K);
    if (G == 0 || T == 0 || K == 0)
        return NULL;

    uint64_t stream;
    XLA_FFI_Error *e = stream_of(f, &stream);
    if (e)
        return e;
    wf_xla_key key;
    memset(&key, 0, sizeof key);
    key.type = 3;
    key.dim = dim;
    key.precision = precision;
    key.iflag = iflag >= 0 ? 1 : -1;
    key.method = (int)method;
    key.max_subprob = (int)max_subprob;
    for (int d = 0; d < 3; d++) {
        key.bin[d] = (int)bin[d];
        key.n[d] = 1; /* unused by type 3: the grids are chosen at setpts3 */
    }
    key.ntransf = T;
    key.eps = eps;
    key.upsampfac = upsampfac;
    key.stream = stream;
    key.device = device_of(src->data ? src->data : out->data);

    wf_xla_entry *ent;
    warpfft_status st = acquire_plan(&key, &ent);
    if (st != WARPFFT_SUCCESS)
        return status_error(f, st, "warpfft_plan_create");
    size_t cplx = 2 * real_bytes;
    size_t src_group = (size_t)(T * M) * cplx, out_group = (size_t)(T * K) * cplx;
    for (int64_t g = 0; g < G && st == WARPFFT_SUCCESS; g++) {
        if (g == 0 || Gp > 1) {
            const char *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
            for (int d = 0; d < 2 * dim; d++) {
                size_t group = (size_t)(d < dim ? M : K) * real_bytes;
                int slot = d < dim ? d : 3 + d - dim;
                p[slot] = (const char *)pts[d]->data + (Gp > 1 ? (size_t)g * group : 0);
            }
            st = warpfft_setpts3(ent->plan, (warpfft_precision)precision, M, p[0], p[1], p[2], K,
                                 p[3], p[4], p[5]);
            if (st != WARPFFT_SUCCESS) {
                release_plan(ent);
                return status_error(f, st, "warpfft_setpts3");
            }
        }
        char *c = (char *)src->data + (size_t)g * src_group;
        char *fk = (char *)out->data + (size_t)g * out_group;
        st = warpfft_execute(ent->plan, (warpfft_precision)precision, c, fk);
    }
    release_plan(ent);
    if (st != WARPFFT_SUCCESS)
        return status_error(f, st, "warpfft_execute");
    return NULL;
}

static XLA_FFI_Error *run(XLA_FFI_CallFrame *f) {
    const XLA_FFI_Attrs *at = &f->attrs;
    int64_t type, iflag, modeord = 0, method = 0, max_subprob = 0, n[3], bin[3] = {0, 0, 0};
    double eps, upsampfac = 2.0;
    if (attr_int(at, "nufft_type", &type) || attr_int(at, "iflag", &iflag) ||
        attr_f64(at, "eps", &eps) || attr_int(at, "n1", &n[0]) || attr_int(at, "n2", &n[1]) ||
        attr_int(at, "n3", &n[2]))
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: custom call needs integer attributes nufft_type, iflag, n1, "
                         "n2, n3 and a float eps");
    attr_int(at, "modeord", &modeord);
    attr_int(at, "method", &method);
    attr_int(at, "max_subprob", &max_subprob);
    attr_int(at, "bin1", &bin[0]);
    attr_int(at, "bin2", &bin[1]);
    attr_int(at, "bin3", &bin[2]);
    attr_f64(at, "upsampfac", &upsampfac);
    if (type == 3)
        return run3(f, iflag, eps, method, upsampfac, max_subprob, bin);
    if (type != 1 && type != 2)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: nufft_type %lld is not 1, 2 or 3", (long long)type);

    int dim = (int)f->args.size - 1;
    if (dim < 1 || dim > 3 || f->rets.size != 1 || f->rets.types[0] != WF_XLA_RET_BUFFER)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: custom call takes source + 1..3 point arrays and returns one "
                         "array (got %lld arguments, %lld results)",
                         (long long)f->args.size, (long long)f->rets.size);
    const XLA_FFI_Buffer *src = arg_buffer(f, 0);
    const XLA_FFI_Buffer *out = (const XLA_FFI_Buffer *)f->rets.rets[0];
    const XLA_FFI_Buffer *pts[3] = {NULL, NULL, NULL};
    for (int d = 0; d < dim; d++)
        pts[d] = arg_buffer(f, 1 + d);
    if (!src || !pts[dim - 1])
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: arguments must be buffers");

    int precision;
    size_t real_bytes;
    if (src->dtype == WF_XLA_C64 && out->dtype == WF_XLA_C64) {
        precision = WARPFFT_F32;
        real_bytes = 4;
    } else if (src->dtype == WF_XLA_C128 && out->dtype == WF_XLA_C128) {
        precision = WARPFFT_F64;
        real_bytes = 8;
    } else {
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: source and result must both be complex64 or complex128");
    }
    int want_pt = precision == WARPFFT_F32 ? WF_XLA_F32 : WF_XLA_F64;
    int64_t src_rank_want = type == 1 ? 3 : 2 + dim;
    if (src->rank != src_rank_want)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: source has rank %lld, not %lld",
                         (long long)src->rank, (long long)src_rank_want);
    int64_t G = src->dims[0], T = src->dims[1];
    int64_t M = pts[0]->rank == 2 ? pts[0]->dims[1] : -1;
    int64_t Gp = pts[0]->rank == 2 ? pts[0]->dims[0] : -1;
    for (int d = 0; d < dim; d++) {
        if (pts[d]->dtype != want_pt || pts[d]->rank != 2 || pts[d]->dims[0] != Gp ||
            pts[d]->dims[1] != M)
            return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                             "warpfft: point array %d must be %s of shape (%lld, %lld) like the "
                             "first",
                             d, precision == WARPFFT_F32 ? "float32" : "float64", (long long)Gp,
                             (long long)M);
    }
    if (Gp != G && Gp != 1)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: %lld point sets for %lld source groups", (long long)Gp,
                         (long long)G);
    /* modes in the C plan's order: n[0] fastest = the last axis of the mode array */
    int64_t nprod = 1;
    for (int d = 0; d < 3; d++) {
        if (d >= dim)
            n[d] = 1;
        if (n[d] < 1)
            return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: mode count n%d = %lld",
                             d + 1, (long long)n[d]);
        nprod *= n[d];
    }
    const XLA_FFI_Buffer *modes = type == 1 ? out : src;
    const XLA_FFI_Buffer *strengths = type == 1 ? src : out;
    int ok = modes->rank == 2 + dim && modes->dims[0] == G && modes->dims[1] == T &&
             strengths->rank == 3 && strengths->dims[0] == G && strengths->dims[1] == T &&
             strengths->dims[2] == M;
    for (int d = 0; ok && d < dim; d++)
        ok = modes->dims[1 + dim - d] == n[d];
    if (!ok)
        return xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                         "warpfft: shapes do not match (G=%lld, T=%lld, M=%lld, modes %lld x "
                         "%lld x %lld)",
                         (long long)G, (long long)T, (long long)M, (long long)n[2], (long long)n[1],
                         (long long)n[0]);
    if (G == 0 || T == 0)
        return NULL;

    uint64_t stream;
    XLA_FFI_Error *e = stream_of(f, &stream);
    if (e)
        return e;

    wf_xla_key key;
    memset(&key, 0, sizeof key);
    key.type = (int)type;
    key.dim = dim;
    key.precision = precision;
    key.iflag = iflag >= 0 ? 1 : -1;
    key.modeord = (int)modeord;
    key.method = (int)method;
    key.max_subprob = (int)max_subprob;
    for (int d = 0; d < 3; d++) {
        key.bin[d] = (int)bin[d];
        key.n[d] = n[d];
    }
    key.ntransf = T;
    key.eps = eps;
    key.upsampfac = upsampfac;
    key.stream = stream;
    key.device = device_of(src->data ? src->data : out->data);

    wf_xla_entry *ent;
    warpfft_status st = acquire_plan(&key, &ent);
    if (st != WARPFFT_SUCCESS)
        return status_error(f, st, "warpfft_plan_create");
    size_t cplx = 2 * real_bytes;
    size_t str_group = (size_t)(T * M) * cplx, mode_group = (size_t)(T * nprod) * cplx;
    size_t pt_group = (size_t)M * real_bytes;
    for (int64_t g = 0; g < G && st == WARPFFT_SUCCESS; g++) {
        if (g == 0 || Gp > 1) {
            const char *p[3] = {NULL, NULL, NULL};
            for (int d = 0; d < dim; d++)
                p[d] = (const char *)pts[d]->data + (Gp > 1 ? (size_t)g * pt_group : 0);
            st = warpfft_setpts(ent->plan, (warpfft_precision)precision, M, p[0], p[1], p[2]);
            if (st != WARPFFT_SUCCESS) {
                release_plan(ent);
                return status_error(f, st, "warpfft_setpts");
            }
        }
        char *c = (char *)strengths->data + (size_t)g * str_group;
        char *fk = (char *)modes->data + (size_t)g * mode_group;
        st = warpfft_execute(ent->plan, (warpfft_precision)precision, c, fk);
    }
    release_plan(ent);
    if (st != WARPFFT_SUCCESS)
        return status_error(f, st, "warpfft_execute");
    return NULL;
}

WARPFFT_API XLA_FFI_Error *warpfft_xla_nufft(XLA_FFI_CallFrame *frame) {
    if (!frame)
        return NULL;
    /* Registration asks for the handler's API version and traits through an extension. */
    for (XLA_FFI_Extension_Base *x = frame->extension_start; x; x = x->next) {
        if (x->type == WF_XLA_EXTENSION_METADATA) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)x)->metadata;
            if (m) {
                m->api_version.struct_size = sizeof m->api_version;
                m->api_version.extension_start = NULL;
                m->api_version.major_version = WF_XLA_API_MAJOR;
                m->api_version.minor_version = WF_XLA_API_MINOR;
                m->traits = 0; /* plans may be created, type 3 waits on the host: not CUDA-graph
                                  capturable */
            }
            return NULL;
        }
    }
    if (frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run(frame);
}
