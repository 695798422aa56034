/*
 * xla_common.c — the call-frame helpers both XLA FFI handlers share (xla_common.h).
 */
#include "framework/xla_common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

XLA_FFI_Error *wf_xla_error(const XLA_FFI_CallFrame *f, int errc, const char *fmt, ...) {
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

const XLA_FFI_Scalar *wf_xla_find_attr(const XLA_FFI_Attrs *at, const char *name) {
    size_t len = strlen(name);
    for (int64_t i = 0; i < at->size; i++) {
        const XLA_FFI_ByteSpan *s = at->names[i];
        if (at->types[i] == WF_XLA_ATTR_SCALAR && s->len == len && memcmp(s->ptr, name, len) == 0)
            return (const XLA_FFI_Scalar *)at->attrs[i];
    }
    return NULL;
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

XLA_FFI_Error *wf_xla_status_error(const XLA_FFI_CallFrame *f, warpfft_status st,
                                   const char *what) {
    return wf_xla_error(f, status_errc(st), "warpfft: %s failed (%s): %s", what,
                        warpfft_status_name(st), warpfft_last_error());
}

int wf_xla_attr_i64(const XLA_FFI_Attrs *at, const char *name, int64_t *out) {
    const XLA_FFI_Scalar *s = wf_xla_find_attr(at, name);
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

int wf_xla_attr_f64(const XLA_FFI_Attrs *at, const char *name, double *out) {
    const XLA_FFI_Scalar *s = wf_xla_find_attr(at, name);
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

int wf_xla_attr_int(const XLA_FFI_Attrs *at, const char *name, int *out) {
    int64_t v;
    if (wf_xla_attr_i64(at, name, &v) || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* The value of hex digit c, or -1. */
static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#define WF_XLA_OPTS_MAX 4096 /* bytes: the largest warpfft_opts the C library takes */

XLA_FFI_Error *wf_xla_opts(const XLA_FFI_CallFrame *f, warpfft_opts *out) {
    warpfft_opts_default(out);
    const XLA_FFI_ByteSpan *s = NULL;
    const XLA_FFI_Attrs *at = &f->attrs;
    for (int64_t i = 0; i < at->size; i++) {
        const XLA_FFI_ByteSpan *nm = at->names[i];
        if (nm->len == 4 && memcmp(nm->ptr, "opts", 4) == 0) {
            if (at->types[i] != WF_XLA_ATTR_STRING)
                return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                    "warpfft: attribute opts must be a string (the warpfft_opts "
                                    "record in hex)");
            s = (const XLA_FFI_ByteSpan *)at->attrs[i];
            break; /* the first of that name, as wf_xla_find_attr */
        }
    }
    if (!s)
        return NULL;
    size_t n = s->len / 2;
    if (s->len % 2 || n < sizeof(uint32_t) || n > WF_XLA_OPTS_MAX)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: attribute opts has %zu hex digits; a warpfft_opts record is "
                            "4..%d bytes, two digits each",
                            s->len, WF_XLA_OPTS_MAX);
    unsigned char rec[WF_XLA_OPTS_MAX];
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s->ptr[2 * i]), lo = hex_digit(s->ptr[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: attribute opts: \"%.2s\" at byte %zu is not hex",
                                s->ptr + 2 * i, i);
        rec[i] = (unsigned char)(hi << 4 | lo);
    }
    uint32_t size;
    memcpy(&size, rec, sizeof size);
    if (size != n)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: attribute opts holds %zu bytes but its struct_size says %u",
                            n, (unsigned)size);
    for (size_t i = sizeof *out; i < n; i++)
        if (rec[i])
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: attribute opts sets byte %zu, past the %zu-byte "
                                "warpfft_opts of this warpfft (a newer one made it): update "
                                "warpfft",
                                i, sizeof *out);
    memcpy((unsigned char *)out + sizeof size, rec + sizeof size,
           (n < sizeof *out ? n : sizeof *out) - sizeof size);
    return NULL;
}

const XLA_FFI_Buffer *wf_xla_arg_buffer(const XLA_FFI_CallFrame *f, int64_t i) {
    if (i >= f->args.size || f->args.types[i] != WF_XLA_ARG_BUFFER)
        return NULL;
    return (const XLA_FFI_Buffer *)f->args.args[i];
}

XLA_FFI_Error *wf_xla_stream_of(XLA_FFI_CallFrame *f, uint64_t *stream) {
    if (f->api->struct_size < offsetof(XLA_FFI_Api, XLA_FFI_Stream_Get) + sizeof(void *))
        return wf_xla_error(f, WF_XLA_ERR_UNIMPLEMENTED,
                            "warpfft: XLA's FFI API has no Stream_Get");
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

/* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 */
int wf_xla_device_of(void *ptr) {
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

int wf_xla_metadata(XLA_FFI_CallFrame *f) {
    for (XLA_FFI_Extension_Base *x = f->extension_start; x; x = x->next) {
        if (x->type == WF_XLA_EXTENSION_METADATA) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)x)->metadata;
            if (m) {
                m->api_version.struct_size = sizeof m->api_version;
                m->api_version.extension_start = NULL;
                m->api_version.major_version = WF_XLA_API_MAJOR;
                m->api_version.minor_version = WF_XLA_API_MINOR;
                m->traits = 0;
            }
            return 1;
        }
    }
    return 0;
}
