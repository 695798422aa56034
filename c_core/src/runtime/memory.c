/*
 * memory.c — device allocation for the core (with the out-of-memory hook the plan cache
 * registers, and the accounted buffers plans own), and the public memory helpers for callers
 * that have no CUDA bindings of their own (Python ctypes, Julia, plain C).
 *
 * Every helper works in the device's primary context, the one plans use, so pointers from
 * warpfft_malloc can be passed to any plan on that device.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"

static _Atomic(wf_reclaim_fn) wf_reclaim;

void wf_memory_set_reclaim(wf_reclaim_fn fn) {
    atomic_store(&wf_reclaim, fn);
}

size_t wf_memory_reclaim(void) {
    wf_reclaim_fn fn = atomic_load(&wf_reclaim);
    return fn ? fn() : 0;
}

warpfft_status wf_alloc(CUdeviceptr *p, size_t bytes, const char *what) {
    const wf_driver *d = NULL;
    if (!p)
        return wf_error(WARPFFT_ERR_INTERNAL, "wf_alloc: NULL result pointer");
    *p = 0;
    if (bytes == 0)
        return WARPFFT_SUCCESS;
    warpfft_status st = wf_driver_get(&d);
    if (st != WARPFFT_SUCCESS)
        return st;
    CUresult r = d->cuMemAlloc(p, bytes);
    /* Idle plan resources (the cache) must never cause an out-of-memory: free them, try again. */
    if (r == WF_CUDA_ERROR_OUT_OF_MEMORY && wf_memory_reclaim() > 0)
        r = d->cuMemAlloc(p, bytes);
    if (r == WF_CUDA_SUCCESS)
        return WARPFFT_SUCCESS;
    *p = 0;
    size_t free_b = 0, total_b = 0;
    char msg[384];
    /* For out-of-memory, say how much there was: the usual fix is a smaller batch or grid. */
    if (r == WF_CUDA_ERROR_OUT_OF_MEMORY && d->cuMemGetInfo(&free_b, &total_b) == 0)
        snprintf(msg, sizeof msg, "cuMemAlloc of %zu bytes for %s (%zu of %zu MiB free)", bytes,
                 what ? what : "warpfft", free_b >> 20, total_b >> 20);
    else
        snprintf(msg, sizeof msg, "cuMemAlloc of %zu bytes for %s", bytes, what ? what : "warpfft");
    return wf_cuda_error(r, msg);
}

void wf_free(CUdeviceptr *p) {
    const wf_driver *d = NULL;
    if (!p || *p == 0)
        return;
    if (wf_driver_get(&d) == WARPFFT_SUCCESS)
        d->cuMemFree(*p); /* a failure here (sticky context error) leaves nothing to undo */
    *p = 0;
}

warpfft_status wf_dbuf_alloc(wf_dbuf *b, size_t bytes, const char *what, size_t *workspace) {
    warpfft_status st = wf_alloc(&b->ptr, bytes, what);
    if (st != WARPFFT_SUCCESS)
        return st;
    b->bytes = bytes;
    *workspace += bytes;
    return WARPFFT_SUCCESS;
}

void wf_dbuf_free(wf_dbuf *b, size_t *workspace) {
    if (b->ptr)
        wf_free(&b->ptr);
    *workspace -= b->bytes;
    b->bytes = 0;
}

/* A public helper's device state and (when asked for) the driver table. */
typedef struct entered {
    const wf_device *dev;
    const wf_driver *d;
} entered;

/* The device state (and, with `driver`, the driver table) for a public helper, with the
 * device's primary context made current. */
static warpfft_status enter(int device, entered *e, int driver) {
    e->dev = NULL;
    e->d = NULL;
    warpfft_status st = wf_device_get(device, &e->dev);
    if (st == WARPFFT_SUCCESS && driver)
        st = wf_driver_get(&e->d);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(e->dev);
    return st;
}

/* Leaves the context enter made current; the driver's result r of `what` as a status. */
static warpfft_status leave(const entered *e, CUresult r, const char *what) {
    wf_ctx_leave(e->dev);
    return r == WF_CUDA_SUCCESS ? WARPFFT_SUCCESS : wf_cuda_error(r, what);
}

WARPFFT_API warpfft_status warpfft_malloc(int device, size_t bytes, void **dptr) {
    wf_clear_error();
    if (!dptr)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_malloc: dptr is NULL");
    *dptr = NULL;
    entered e;
    warpfft_status st = enter(device, &e, 0);
    if (st != WARPFFT_SUCCESS)
        return st;
    CUdeviceptr p = 0;
    st = wf_alloc(&p, bytes, "warpfft_malloc");
    wf_ctx_leave(e.dev);
    *dptr = (void *)(uintptr_t)p;
    return st;
}

WARPFFT_API warpfft_status warpfft_free(int device, void *dptr) {
    wf_clear_error();
    if (!dptr)
        return WARPFFT_SUCCESS;
    entered e;
    warpfft_status st = enter(device, &e, 1);
    if (st != WARPFFT_SUCCESS)
        return st;
    return leave(&e, e.d->cuMemFree((CUdeviceptr)(uintptr_t)dptr), "warpfft_free: cuMemFree");
}

/* Both synchronous copies; NULL pointers are fine only for an empty copy. */
static warpfft_status copy(const char *fn, int device, void *dst, const void *src, size_t bytes,
                           int to_device) {
    wf_clear_error();
    if (bytes > 0 && (!dst || !src))
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: %s is NULL for a copy of %zu bytes", fn,
                        !dst ? "dst" : "src", bytes);
    entered e;
    warpfft_status st = enter(device, &e, 1);
    if (st != WARPFFT_SUCCESS)
        return st;
    const wf_driver *d = e.d;
    CUresult r = WF_CUDA_SUCCESS;
    const char *step = "";
    if (bytes > 0 && to_device) {
        r = d->cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes);
        /* From pageable memory cuMemcpyHtoD returns once the data are staged, before the DMA
         * has landed: only the legacy stream is ordered after it. Wait, so that work on any
         * stream (a non-blocking plan stream included) sees the data. */
        if (r == WF_CUDA_SUCCESS) {
            step = " (waiting for it to land)";
            r = d->cuStreamSynchronize(NULL);
        }
    } else if (bytes > 0) {
        r = d->cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes);
    }
    char what[128];
    if (r != WF_CUDA_SUCCESS)
        snprintf(what, sizeof what, "%s of %zu bytes%s", fn, bytes, step);
    return leave(&e, r, what);
}

WARPFFT_API warpfft_status warpfft_memcpy_htod(int device, void *dst, const void *src,
                                               size_t bytes) {
    return copy("warpfft_memcpy_htod", device, dst, src, bytes, 1);
}

WARPFFT_API warpfft_status warpfft_memcpy_dtoh(int device, void *dst, const void *src,
                                               size_t bytes) {
    return copy("warpfft_memcpy_dtoh", device, dst, src, bytes, 0);
}

WARPFFT_API warpfft_status warpfft_memset(int device, void *dptr, int value, size_t bytes) {
    wf_clear_error();
    if (bytes > 0 && !dptr)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_memset: dptr is NULL for %zu bytes",
                        bytes);
    if (bytes == 0)
        return WARPFFT_SUCCESS;
    entered e;
    warpfft_status st = enter(device, &e, 1);
    if (st != WARPFFT_SUCCESS)
        return st;
    CUresult r =
        e.d->cuMemsetD8Async((CUdeviceptr)(uintptr_t)dptr, (unsigned char)value, bytes, NULL);
    if (r == WF_CUDA_SUCCESS)
        r = e.d->cuStreamSynchronize(NULL);
    char what[96];
    if (r != WF_CUDA_SUCCESS)
        snprintf(what, sizeof what, "warpfft_memset of %zu bytes", bytes);
    return leave(&e, r, what);
}

WARPFFT_API warpfft_status warpfft_stream_sync(int device, uint64_t stream) {
    wf_clear_error();
    entered e;
    warpfft_status st = enter(device, &e, 1);
    if (st != WARPFFT_SUCCESS)
        return st;
    return leave(&e, e.d->cuStreamSynchronize((CUstream)(uintptr_t)stream),
                 "warpfft_stream_sync: cuStreamSynchronize");
}
