/*
 * standin_cuda.c — a stand-in libcuda.so.1 for the fault-injection suite (see standin.h): the
 * entry points warpfft's loader resolves, "device" memory on the host with bounds checks,
 * counters of what is live, and failure of the N-th call. Built from the standin_cuda*.c files
 * over standin_cuda.h (their shared internals). This file: the state and the control API of
 * standin.h, initialisation, devices, contexts and error strings.
 */
#include <stdio.h>
#include <string.h>

#include "standin_cuda.h"

pthread_mutex_t sc_lock = PTHREAD_MUTEX_INITIALIZER;
standin_counts sc_counts;
int sc_slow_load_ms;
__thread long sc_depth;
static long fail_at;
/* The call log (standin_log): the name of call n (since the last arm) in sc_log[n - 1]. */
static char sc_log[STANDIN_LOG_MAX][64];

struct CUctx_st {
    int dummy;
};
static struct CUctx_st the_ctx;

void sc_violation(const char *fmt, const char *what, const void *p, size_t n) {
    fprintf(stderr, "standin: VIOLATION: ");
    fprintf(stderr, fmt, what, p, n);
    fprintf(stderr, "\n");
    sc_counts.violations++;
}

void sc_named_violation(const char *what, const char *name) {
    char msg[192];
    snprintf(msg, sizeof msg, "%s %s", name, what);
    pthread_mutex_lock(&sc_lock);
    sc_violation("%s %p %zu", msg, NULL, 0);
    pthread_mutex_unlock(&sc_lock);
}

void sc_count(long *counter) {
    pthread_mutex_lock(&sc_lock);
    ++*counter;
    pthread_mutex_unlock(&sc_lock);
}

CUresult sc_release(const char *fn, long *live, void *p) {
    int fail = standin_tick(fn);
    pthread_mutex_lock(&sc_lock);
    --*live;
    pthread_mutex_unlock(&sc_lock);
    free(p);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}

API int standin_tick(const char *fn) {
    pthread_mutex_lock(&sc_lock);
    long n = ++sc_counts.calls;
    if (n <= STANDIN_LOG_MAX)
        snprintf(sc_log[n - 1], sizeof sc_log[0], "%s", fn);
    int fail = fail_at > 0 && n == fail_at;
    if (fail) {
        sc_counts.failed_at = n;
        snprintf(sc_counts.failed_fn, sizeof sc_counts.failed_fn, "%s", fn);
    }
    pthread_mutex_unlock(&sc_lock);
    return fail;
}

API void standin_arm(long n) {
    pthread_mutex_lock(&sc_lock);
    fail_at = n;
    sc_counts.calls = 0;
    sc_counts.failed_at = 0;
    sc_counts.failed_fn[0] = '\0';
    pthread_mutex_unlock(&sc_lock);
}

API void standin_log_launch(const char *name) {
    pthread_mutex_lock(&sc_lock);
    long n = sc_counts.calls;
    if (n >= 1 && n <= STANDIN_LOG_MAX)
        snprintf(sc_log[n - 1], sizeof sc_log[0], "launch %s", name);
    pthread_mutex_unlock(&sc_lock);
}

API long standin_log(char *buf, size_t cap) {
    pthread_mutex_lock(&sc_lock);
    long n = sc_counts.calls;
    size_t used = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (long i = 0; i < n && i < STANDIN_LOG_MAX; i++) {
        size_t len = strlen(sc_log[i]);
        if (used + len + 2 > cap)
            break;
        memcpy(buf + used, sc_log[i], len);
        buf[used + len] = '\n';
        used += len + 1;
        buf[used] = '\0';
    }
    pthread_mutex_unlock(&sc_lock);
    return n;
}

API void standin_get(standin_counts *out) {
    pthread_mutex_lock(&sc_lock);
    *out = sc_counts;
    out->ctx_depth = sc_depth;
    pthread_mutex_unlock(&sc_lock);
}

API void standin_slow_load(int ms) {
    sc_slow_load_ms = ms;
}

API void standin_fft_plans(int delta) {
    pthread_mutex_lock(&sc_lock);
    sc_counts.live_fft_plans += delta;
    sc_counts.fft_creates += delta > 0;
    pthread_mutex_unlock(&sc_lock);
}

API void standin_fft_made(void) {
    sc_count(&sc_counts.fft_makes);
}

/* ---- initialisation and devices ---- */

API CUresult cuInit(unsigned int flags) {
    (void)flags;
    TICK("cuInit");
    return 0;
}
API CUresult cuDriverGetVersion(int *v) {
    TICK("cuDriverGetVersion");
    *v = 13000;
    return 0;
}
API CUresult cuDeviceGetCount(int *n) {
    TICK("cuDeviceGetCount");
    *n = 1;
    return 0;
}
API CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    TICK("cuDeviceGet");
    if (ordinal != 0)
        return WF_CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return 0;
}
API CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void)d;
    TICK("cuDeviceGetName");
    snprintf(name, (size_t)len, "warpfft stand-in GPU");
    return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    (void)d;
    TICK("cuDeviceGetAttribute");
    switch (attr) {
    case WF_ATTR_CC_MAJOR:
        *v = 9;
        break;
    case WF_ATTR_CC_MINOR:
        *v = 0;
        break;
    case WF_ATTR_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case WF_ATTR_MAX_SHARED_PER_BLOCK_OPTIN:
        *v = 227 * 1024;
        break;
    default:
        *v = 48 * 1024;
    }
    return 0;
}
API CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
    (void)d;
    TICK("cuDeviceTotalMem");
    *b = MAX_ALLOC_BYTES;
    return 0;
}
API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
    (void)d;
    TICK("cuDevicePrimaryCtxRetain");
    *ctx = &the_ctx;
    return 0;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    (void)d;
    return 0;
}
API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    TICK("cuCtxPushCurrent");
    if (ctx != &the_ctx)
        return CUDA_ERROR_INVALID_VALUE;
    sc_depth++;
    return 0;
}
API CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
    if (sc_depth <= 0) {
        pthread_mutex_lock(&sc_lock);
        sc_violation("%s %p %zu", "cuCtxPopCurrent without a push", NULL, 0);
        pthread_mutex_unlock(&sc_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    sc_depth--;
    if (ctx)
        *ctx = &the_ctx;
    return 0;
}

API CUresult cuGetErrorName(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_LAUNCH_FAILED      ? "CUDA_ERROR_LAUNCH_FAILED"
         : r == WF_CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
                                            : "CUDA_ERROR_STANDIN";
    return 0;
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
    (void)r;
    *s = "injected by the stand-in driver";
    return 0;
}
