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
