/*
 * standin_cuda_memory.c — the stand-in driver's memory (standin_cuda.h): "device" allocations on
 * the host under an optional limit, the bounds check every copy, memset, cuFFT transform and
 * emulated kernel goes through, copies and memsets, the ordering of a synchronous upload before
 * work on a non-blocking stream, stream synchronisation, streams the test declared destroyed, and
 * events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin_cuda.h"

#define MAX_ALLOCS 4096

static size_t mem_limit; /* 0: none */
/* A synchronous host-to-device copy returns once its data are staged: until the legacy stream
 * is waited for, work on another (the stand-in treats every non-zero stream as non-blocking)
 * may read device memory the copy has not reached yet. */
static int legacy_pending;
static struct {
    unsigned char *p;
    size_t bytes;
} allocs[MAX_ALLOCS];

API void standin_mem_limit(size_t bytes) {
    pthread_mutex_lock(&sc_lock);
    mem_limit = bytes;
    pthread_mutex_unlock(&sc_lock);
}

API int standin_mem_room(size_t bytes) {
    pthread_mutex_lock(&sc_lock);
    int room = mem_limit == 0 || sc_counts.live_bytes + bytes <= mem_limit;
    pthread_mutex_unlock(&sc_lock);
    return room;
}

/* 1 when [p, p + bytes) lies in one live allocation; else a violation. */
API int standin_check_range(const void *p, size_t bytes, const char *what) {
    const unsigned char *q = p;
    int ok = 0;
    pthread_mutex_lock(&sc_lock);
    for (int i = 0; i < MAX_ALLOCS && !ok; i++)
        ok = allocs[i].p && q >= allocs[i].p && bytes <= allocs[i].bytes &&
             (size_t)(q - allocs[i].p) <= allocs[i].bytes - bytes;
    if (!ok)
        sc_violation("%s: %p + %zu bytes is outside every live allocation", what, p, bytes);
    if (sc_depth <= 0)
        sc_violation("%s at %p (%zu bytes): no current context", what, p, bytes);
    pthread_mutex_unlock(&sc_lock);
    return ok;
}

/* Streams the test said its user destroyed (standin_stream_dead): any use is a violation. */
#define MAX_DEAD_STREAMS 16
static CUstream dead_streams[MAX_DEAD_STREAMS];

API void standin_stream_dead(CUstream s, int dead) {
    pthread_mutex_lock(&sc_lock);
    for (int i = 0; i < MAX_DEAD_STREAMS; i++)
        if (dead ? !dead_streams[i] : dead_streams[i] == s) {
            dead_streams[i] = dead ? s : NULL;
            break;
        }
    pthread_mutex_unlock(&sc_lock);
}

static void check_alive_locked(CUstream s, const char *what) {
    for (int i = 0; s && i < MAX_DEAD_STREAMS; i++)
        if (dead_streams[i] == s)
            sc_violation("%s on stream %p (%zu): its user destroyed that stream", what, (void *)s,
                         0);
}

API void standin_check_stream(CUstream s, const char *what) {
    pthread_mutex_lock(&sc_lock);
    check_alive_locked(s, what);
    pthread_mutex_unlock(&sc_lock);
}

void sc_check_order(CUstream s, const char *what) {
    pthread_mutex_lock(&sc_lock);
    check_alive_locked(s, what);
    sc_capture_work_locked(s, what);
    if (s && legacy_pending)
        sc_violation(
            "%s on stream %p (%zu): a synchronous host-to-device copy may still be landing "
            "on the legacy stream",
            what, (void *)s, 0);
    pthread_mutex_unlock(&sc_lock);
}

/* ---- memory ---- */

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    sc_capture_none("cuMemAlloc");
    if (standin_tick("cuMemAlloc") || bytes > MAX_ALLOC_BYTES || !standin_mem_room(bytes))
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *m = malloc(bytes);
    if (!m)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    memset(m, 0xa5, bytes); /* the GPU does not zero allocations either */
    pthread_mutex_lock(&sc_lock);
    int i = 0;
    while (i < MAX_ALLOCS && allocs[i].p)
        i++;
    if (i < MAX_ALLOCS) {
        allocs[i].p = m;
        allocs[i].bytes = bytes;
        sc_counts.live_allocs++;
        sc_counts.live_bytes += bytes;
    }
    if (sc_depth <= 0)
        sc_violation("%s %p %zu: no current context", "cuMemAlloc", m, bytes);
    pthread_mutex_unlock(&sc_lock);
    if (i == MAX_ALLOCS) {
        free(m);
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
    int fail = standin_tick("cuMemFree"); /* released either way (a sticky error) */
    sc_capture_none("cuMemFree");
    pthread_mutex_lock(&sc_lock);
    int i = 0;
    while (i < MAX_ALLOCS && allocs[i].p != dptr(p))
        i++;
    if (i == MAX_ALLOCS) {
        sc_violation("%s %p %zu: not a live allocation", "cuMemFree", dptr(p), 0);
    } else {
        sc_counts.live_allocs--;
        sc_counts.live_bytes -= allocs[i].bytes;
        allocs[i].p = NULL;
        free(dptr(p));
    }
    pthread_mutex_unlock(&sc_lock);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}
API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total) {
    TICK("cuMemGetInfo");
    pthread_mutex_lock(&sc_lock);
    *free_b = MAX_ALLOC_BYTES - sc_counts.live_bytes;
    pthread_mutex_unlock(&sc_lock);
    *total = MAX_ALLOC_BYTES;
    return 0;
}
static CUresult copy(const char *fn, void *dst, const void *src, size_t n, int dst_dev) {
    TICK(fn);
    if (n && !standin_check_range(dst_dev ? dst : src, n, fn))
        return CUDA_ERROR_INVALID_VALUE;
    if (n)
        memcpy(dst, src, n);
    return 0;
}
static void set_pending(int v) {
    pthread_mutex_lock(&sc_lock);
    legacy_pending = v;
    pthread_mutex_unlock(&sc_lock);
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    pthread_mutex_lock(&sc_lock);
    sc_capture_forbid_locked(NULL, "cuMemcpyHtoD");
    pthread_mutex_unlock(&sc_lock);
    CUresult r = copy("cuMemcpyHtoD", dptr(d), s, n, 1);
    if (r == 0 && n)
        set_pending(1);
    return r;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    pthread_mutex_lock(&sc_lock);
    sc_capture_forbid_locked(NULL, "cuMemcpyDtoH");
    pthread_mutex_unlock(&sc_lock);
    CUresult r = copy("cuMemcpyDtoH", d, dptr(s), n, 0);
    if (r == 0)
        set_pending(0); /* it waited for the legacy stream */
    return r;
}
/* A host copy on a capturing stream: the graph would read (or write) that host memory at each
 * launch, long after the call returned. */
static void host_copy(CUstream st, const char *what) {
    pthread_mutex_lock(&sc_lock);
    sc_capture_forbid_locked(st, what);
    pthread_mutex_unlock(&sc_lock);
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) {
    host_copy(st, "cuMemcpyHtoDAsync");
    sc_check_order(st, "cuMemcpyHtoDAsync");
    return copy("cuMemcpyHtoDAsync", dptr(d), s, n, 1);
}
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) {
    host_copy(st, "cuMemcpyDtoHAsync");
    sc_check_order(st, "cuMemcpyDtoHAsync");
    return copy("cuMemcpyDtoHAsync", d, dptr(s), n, 0);
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
    sc_check_order(st, "cuMemsetD8Async");
    TICK("cuMemsetD8Async");
    if (n && !standin_check_range(dptr(d), n, "cuMemsetD8Async"))
        return CUDA_ERROR_INVALID_VALUE;
    memset(dptr(d), v, n);
    return 0;
}
API CUresult cuStreamSynchronize(CUstream s) {
    TICK("cuStreamSynchronize");
    standin_check_stream(s, "cuStreamSynchronize");
    pthread_mutex_lock(&sc_lock);
    sc_capture_forbid_locked(s, "cuStreamSynchronize");
    pthread_mutex_unlock(&sc_lock);
    if (!s) {
        set_pending(0);
        sc_count(&sc_counts.legacy_syncs);
    }
    return 0;
}
/* ---- events (warpfft_bench_fft resolves these itself; the loader's table has none) ---- */

struct CUevent_st {
    int recorded;
    int captured; /* its last record was on a capturing stream: a node of that graph */
};
API CUresult cuEventCreate(CUevent *e, unsigned int flags) {
    (void)flags;
    TICK("cuEventCreate");
    *e = calloc(1, sizeof **e);
    if (!*e)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    sc_count(&sc_counts.live_events);
    return 0;
}
API CUresult cuEventRecord(CUevent e, CUstream s) {
    TICK("cuEventRecord");
    standin_check_stream(s, "cuEventRecord");
    pthread_mutex_lock(&sc_lock);
    e->captured = sc_capture_state_locked(s) != 0;
    sc_capture_work_locked(s, "cuEventRecord");
    pthread_mutex_unlock(&sc_lock);
    e->recorded = 1;
    return 0;
}
static int slow_event_ms; /* standin_slow_event_sync */

API void standin_slow_event_sync(int ms) {
    slow_event_ms = ms;
}

API CUresult cuEventSynchronize(CUevent e) {
    TICK("cuEventSynchronize");
    if (slow_event_ms > 0)
        nanosleep(&(struct timespec){slow_event_ms / 1000, (long)(slow_event_ms % 1000) * 1000000L},
                  NULL);
    if (!e->recorded)
        sc_violation("%s %p %zu: the event was never recorded", "cuEventSynchronize", e, 0);
    if (e->captured)
        sc_violation("%s %p %zu: the event was recorded during a capture (a node of a CUDA "
                     "graph, not the work before it)",
                     "cuEventSynchronize", e, 0);
    sc_count(&sc_counts.event_syncs);
    return 0;
}
API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    TICK("cuEventElapsedTime");
    if (!a->recorded || !b->recorded)
        sc_violation("%s %p %zu: an event was never recorded", "cuEventElapsedTime", a, 0);
    *ms = 1.5f;
    return 0;
}
API CUresult cuEventDestroy_v2(CUevent e) {
    return sc_release("cuEventDestroy", &sc_counts.live_events, e); /* released either way */
}
