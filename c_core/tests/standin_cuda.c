/*
 * standin_cuda.c — a stand-in libcuda.so.1 for the fault-injection suite (see standin.h): the
 * entry points warpfft's loader resolves, "device" memory on the host with bounds checks,
 * counters of what is live, and failure of the N-th call.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "standin.h"

#define API                      __attribute__((visibility("default")))
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_LAUNCH_FAILED 719
#define MAX_ALLOCS               4096
#define MAX_ALLOC_BYTES          ((size_t)1 << 30) /* the stand-in GPU's memory */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static standin_counts c;
static long fail_at;
static int slow_load_ms;
static size_t mem_limit; /* 0: none */
static __thread long depth;
/* A synchronous host-to-device copy returns once its data are staged: until the legacy stream
 * is waited for, work on another (the stand-in treats every non-zero stream as non-blocking)
 * may read device memory the copy has not reached yet. */
static int legacy_pending;
static struct {
    unsigned char *p;
    size_t bytes;
} allocs[MAX_ALLOCS];

struct CUctx_st {
    int dummy;
};
struct CUmod_st {
    int live;
};
struct CUfunc_st {
    char name[64];
    struct CUfunc_st *next;
};
struct CUlinkState_st {
    unsigned char cubin[16];
};
static struct CUctx_st the_ctx;
static struct CUfunc_st *funcs; /* every function handed out, freed never (like the driver's) */

static void violation(const char *fmt, const char *what, const void *p, size_t n) {
    fprintf(stderr, "standin: VIOLATION: ");
    fprintf(stderr, fmt, what, p, n);
    fprintf(stderr, "\n");
    c.violations++;
}

API int standin_tick(const char *fn) {
    pthread_mutex_lock(&lock);
    long n = ++c.calls;
    int fail = fail_at > 0 && n == fail_at;
    if (fail) {
        c.failed_at = n;
        snprintf(c.failed_fn, sizeof c.failed_fn, "%s", fn);
    }
    pthread_mutex_unlock(&lock);
    return fail;
}

API void standin_arm(long n) {
    pthread_mutex_lock(&lock);
    fail_at = n;
    c.calls = 0;
    c.failed_at = 0;
    c.failed_fn[0] = '\0';
    pthread_mutex_unlock(&lock);
}

API void standin_get(standin_counts *out) {
    pthread_mutex_lock(&lock);
    *out = c;
    out->ctx_depth = depth;
    pthread_mutex_unlock(&lock);
}

API void standin_slow_load(int ms) {
    slow_load_ms = ms;
}

API void standin_fft_plans(int delta) {
    pthread_mutex_lock(&lock);
    c.live_fft_plans += delta;
    c.fft_creates += delta > 0;
    pthread_mutex_unlock(&lock);
}

API void standin_fft_made(void) {
    pthread_mutex_lock(&lock);
    c.fft_makes++;
    pthread_mutex_unlock(&lock);
}

API void standin_mem_limit(size_t bytes) {
    pthread_mutex_lock(&lock);
    mem_limit = bytes;
    pthread_mutex_unlock(&lock);
}

API int standin_mem_room(size_t bytes) {
    pthread_mutex_lock(&lock);
    int room = mem_limit == 0 || c.live_bytes + bytes <= mem_limit;
    pthread_mutex_unlock(&lock);
    return room;
}

/* 1 when [p, p + bytes) lies in one live allocation; else a violation. */
API int standin_check_range(const void *p, size_t bytes, const char *what) {
    const unsigned char *q = p;
    int ok = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS && !ok; i++)
        ok = allocs[i].p && q >= allocs[i].p && bytes <= allocs[i].bytes &&
             (size_t)(q - allocs[i].p) <= allocs[i].bytes - bytes;
    if (!ok)
        violation("%s: %p + %zu bytes is outside every live allocation", what, p, bytes);
    if (depth <= 0)
        violation("%s at %p (%zu bytes): no current context", what, p, bytes);
    pthread_mutex_unlock(&lock);
    return ok;
}

static void *dptr(CUdeviceptr p) {
    return (void *)(uintptr_t)p;
}

#define TICK(name)                                                                                 \
    do {                                                                                           \
        if (standin_tick(name))                                                                    \
            return CUDA_ERROR_LAUNCH_FAILED;                                                       \
    } while (0)

static void check_order(CUstream s, const char *what) {
    pthread_mutex_lock(&lock);
    if (s && legacy_pending)
        violation("%s on stream %p (%zu): a synchronous host-to-device copy may still be landing "
                  "on the legacy stream",
                  what, (void *)s, 0);
    pthread_mutex_unlock(&lock);
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
    depth++;
    return 0;
}
API CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
    if (depth <= 0) {
        pthread_mutex_lock(&lock);
        violation("%s %p %zu", "cuCtxPopCurrent without a push", NULL, 0);
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    depth--;
    if (ctx)
        *ctx = &the_ctx;
    return 0;
}

/* ---- modules and kernels ---- */

static CUresult module_load(CUmodule *m, const void *image) {
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    if (slow_load_ms)
        usleep((useconds_t)slow_load_ms * 1000u);
    struct CUmod_st *mod = malloc(sizeof *mod);
    if (!mod)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    mod->live = 1;
    pthread_mutex_lock(&lock);
    c.live_modules++;
    pthread_mutex_unlock(&lock);
    *m = mod;
    return 0;
}
API CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    TICK("cuModuleLoadData");
    return module_load(m, image);
}
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, int *o, void **v) {
    (void)n, (void)o, (void)v;
    TICK("cuModuleLoadDataEx");
    return module_load(m, image);
}
API CUresult cuModuleUnload(CUmodule m) {
    int fail = standin_tick("cuModuleUnload");
    pthread_mutex_lock(&lock);
    c.live_modules--;
    pthread_mutex_unlock(&lock);
    free(m);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    TICK("cuModuleGetFunction");
    if (!m || !m->live || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct CUfunc_st *fn = funcs;
    while (fn && strcmp(fn->name, name) != 0)
        fn = fn->next;
    if (!fn && (fn = calloc(1, sizeof *fn))) {
        snprintf(fn->name, sizeof fn->name, "%s", name);
        fn->next = funcs;
        funcs = fn;
    }
    pthread_mutex_unlock(&lock);
    if (!fn)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    *f = fn;
    return 0;
}
API CUresult cuLinkCreate_v2(unsigned int n, int *o, void **v, CUlinkState *ls) {
    (void)n, (void)o, (void)v;
    TICK("cuLinkCreate");
    if (!(*ls = calloc(1, sizeof **ls)))
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    c.live_links++;
    pthread_mutex_unlock(&lock);
    return 0;
}
API CUresult cuLinkAddData_v2(CUlinkState ls, int type, void *data, size_t size, const char *name,
                              unsigned int n, int *o, void **v) {
    (void)ls, (void)type, (void)data, (void)size, (void)name, (void)n, (void)o, (void)v;
    TICK("cuLinkAddData");
    return 0;
}
API CUresult cuLinkComplete(CUlinkState ls, void **cubin, size_t *size) {
    TICK("cuLinkComplete");
    *cubin = ls->cubin;
    *size = sizeof ls->cubin;
    return 0;
}
API CUresult cuLinkDestroy(CUlinkState ls) {
    int fail = standin_tick("cuLinkDestroy");
    pthread_mutex_lock(&lock);
    c.live_links--;
    pthread_mutex_unlock(&lock);
    free(ls);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}
API CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
    (void)f, (void)attr, (void)v;
    TICK("cuFuncSetAttribute");
    return 0;
}
API CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
    (void)f, (void)attr;
    TICK("cuFuncGetAttribute");
    *v = 64;
    return 0;
}

/* The binning kernels setpts reads totals from (kernels/ABI.md argument lists). */
static void *arg_ptr(void **args, int i, size_t bytes, const char *what) {
    CUdeviceptr p = *(CUdeviceptr *)args[i];
    return standin_check_range(dptr(p), bytes, what) ? dptr(p) : NULL;
}
/* Module scan_big's three passes (tiles of 1024 bins: WF_SCAN_BIG_TILE): "reduce" writes the
 * tile sums, "tiles" scans them in place and writes the result block, "down" adds the tile
 * offsets to the scans within each tile. */
static uint64_t ceil_div(uint64_t c, long long maxsub) {
    return maxsub > 0 ? (c + (uint64_t)maxsub - 1) / (uint64_t)maxsub : 0;
}
static void emulate_scan_big(const char *pass, void **args) {
    const long long tile = 1024;
    long long n = *(long long *)args[0], nt = (n + tile - 1) / tile;
    if (strcmp(pass, "reduce") == 0) {
        long long maxsub = *(long long *)args[2];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_scan_big_reduce bin_count");
        uint64_t *sums = arg_ptr(args, 3, (size_t)nt * 16, "wf_scan_big_reduce tile_sums");
        if (!in || !sums)
            return;
        for (long long t = 0; t < nt; t++) {
            sums[t] = sums[nt + t] = 0;
            for (long long i = t * tile; i < n && i < (t + 1) * tile; i++) {
                sums[t] += in[i];
                sums[nt + t] += ceil_div(in[i], maxsub);
            }
        }
    } else if (strcmp(pass, "tiles") == 0) {
        long long maxsub = *(long long *)args[2], cap = *(long long *)args[3];
        uint64_t *sums = arg_ptr(args, 1, (size_t)nt * 16, "wf_scan_big_tiles tile_sums");
        uint64_t *result = arg_ptr(args, 4, 24, "wf_scan_big_tiles result");
        if (!sums || !result)
            return;
        uint64_t s = 0, ns = 0;
        for (long long t = 0; t < nt; t++) {
            uint64_t a = sums[t], b = sums[nt + t];
            sums[t] = s;
            sums[nt + t] = ns;
            s += a;
            ns += b;
        }
        result[0] = s;
        result[1] = ns < (uint64_t)cap ? ns : (uint64_t)cap;
        result[2] = (uint64_t)(maxsub > 0 && ns > (uint64_t)cap) << 32;
    } else if (strcmp(pass, "down") == 0) {
        long long maxsub = *(long long *)args[3];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_scan_big_down bin_count");
        uint64_t *out = arg_ptr(args, 2, (size_t)n * 8, "wf_scan_big_down bin_start");
        uint64_t *nsub =
            maxsub > 0 ? arg_ptr(args, 4, (size_t)n * 8, "wf_scan_big_down nsub") : NULL;
        uint64_t *sums = arg_ptr(args, 5, (size_t)nt * 16, "wf_scan_big_down tile_sums");
        if (!in || !out || !sums || (maxsub > 0 && !nsub))
            return;
        for (long long t = 0; t < nt; t++) {
            uint64_t s = sums[t], ns = sums[nt + t];
            for (long long i = t * tile; i < n && i < (t + 1) * tile; i++) {
                out[i] = s;
                s += in[i];
                if (nsub) {
                    nsub[i] = ns;
                    ns += ceil_div(in[i], maxsub);
                }
            }
        }
    }
}

static void emulate(const char *name, void **args) {
    if (strncmp(name, "wf_bin_count_", 13) == 0) {
        long long M = *(long long *)args[0];
        int wide = *(int32_t *)args[16];
        int32_t *bin_of = arg_ptr(args, 14, (size_t)M * 4, "wf_bin_count bin_of");
        void *pos = arg_ptr(args, 15, (size_t)M * (wide ? 8 : 4), "wf_bin_count pos");
        uint64_t *count = arg_ptr(args, 17, 8, "wf_bin_count count");
        if (!bin_of || !pos || !count)
            return;
        for (long long j = 0; j < M; j++) {
            bin_of[j] = 0;
            if (wide)
                ((uint64_t *)pos)[j] = (uint64_t)j;
            else
                ((uint32_t *)pos)[j] = (uint32_t)j;
        }
        count[0] += (uint64_t)M;
    } else if (strcmp(name, "wf_bin_scan") == 0) {
        long long n = *(long long *)args[0], maxsub = *(long long *)args[3];
        long long cap = *(long long *)args[5];
        uint64_t *in = arg_ptr(args, 1, (size_t)n * 8, "wf_bin_scan bin_count");
        uint64_t *out = arg_ptr(args, 2, (size_t)n * 8, "wf_bin_scan bin_start");
        uint64_t *nsub = maxsub > 0 ? arg_ptr(args, 4, (size_t)n * 8, "wf_bin_scan nsub") : NULL;
        uint64_t *result = arg_ptr(args, 6, 24, "wf_bin_scan result");
        if (!in || !out || !result || (maxsub > 0 && !nsub))
            return;
        uint64_t s = 0, ns = 0;
        for (long long i = 0; i < n; i++) {
            uint64_t v = in[i];
            out[i] = s;
            s += v;
            if (maxsub > 0) {
                nsub[i] = ns;
                ns += (v + (uint64_t)maxsub - 1) / (uint64_t)maxsub;
            }
        }
        result[0] = s;
        result[1] = ns < (uint64_t)cap ? ns : (uint64_t)cap;
        result[2] = (uint64_t)(maxsub > 0 && ns > (uint64_t)cap) << 32;
    } else if (strncmp(name, "wf_scan_big_", 12) == 0) {
        emulate_scan_big(name + 12, args);
    }
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s, void **args,
                            void **extra) {
    (void)extra, (void)shared;
    TICK("cuLaunchKernel");
    if (!f || !args || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (depth <= 0) {
        pthread_mutex_lock(&lock);
        violation("%s %p %zu: no current context", f->name, NULL, 0);
        pthread_mutex_unlock(&lock);
    }
    check_order(s, f->name);
    emulate(f->name, args);
    pthread_mutex_lock(&lock);
    c.launches++;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* ---- memory ---- */

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    if (standin_tick("cuMemAlloc") || bytes > MAX_ALLOC_BYTES || !standin_mem_room(bytes))
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    if (bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *m = malloc(bytes);
    if (!m)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    memset(m, 0xa5, bytes); /* the GPU does not zero allocations either */
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < MAX_ALLOCS && allocs[i].p)
        i++;
    if (i < MAX_ALLOCS) {
        allocs[i].p = m;
        allocs[i].bytes = bytes;
        c.live_allocs++;
        c.live_bytes += bytes;
    }
    if (depth <= 0)
        violation("%s %p %zu: no current context", "cuMemAlloc", m, bytes);
    pthread_mutex_unlock(&lock);
    if (i == MAX_ALLOCS) {
        free(m);
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
    int fail = standin_tick("cuMemFree"); /* released either way (a sticky error) */
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < MAX_ALLOCS && allocs[i].p != dptr(p))
        i++;
    if (i == MAX_ALLOCS) {
        violation("%s %p %zu: not a live allocation", "cuMemFree", dptr(p), 0);
    } else {
        c.live_allocs--;
        c.live_bytes -= allocs[i].bytes;
        allocs[i].p = NULL;
        free(dptr(p));
    }
    pthread_mutex_unlock(&lock);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}
API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total) {
    TICK("cuMemGetInfo");
    pthread_mutex_lock(&lock);
    *free_b = MAX_ALLOC_BYTES - c.live_bytes;
    pthread_mutex_unlock(&lock);
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
    pthread_mutex_lock(&lock);
    legacy_pending = v;
    pthread_mutex_unlock(&lock);
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    CUresult r = copy("cuMemcpyHtoD", dptr(d), s, n, 1);
    if (r == 0 && n)
        set_pending(1);
    return r;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    CUresult r = copy("cuMemcpyDtoH", d, dptr(s), n, 0);
    if (r == 0)
        set_pending(0); /* it waited for the legacy stream */
    return r;
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) {
    check_order(st, "cuMemcpyHtoDAsync");
    return copy("cuMemcpyHtoDAsync", dptr(d), s, n, 1);
}
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) {
    check_order(st, "cuMemcpyDtoHAsync");
    return copy("cuMemcpyDtoHAsync", d, dptr(s), n, 0);
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
    check_order(st, "cuMemsetD8Async");
    TICK("cuMemsetD8Async");
    if (n && !standin_check_range(dptr(d), n, "cuMemsetD8Async"))
        return CUDA_ERROR_INVALID_VALUE;
    memset(dptr(d), v, n);
    return 0;
}
API CUresult cuStreamSynchronize(CUstream s) {
    TICK("cuStreamSynchronize");
    if (!s)
        set_pending(0);
    return 0;
}
/* ---- events (warpfft_bench_fft resolves these itself; the loader's table has none) ---- */

struct CUevent_st {
    int recorded;
};
API CUresult cuEventCreate(CUevent *e, unsigned int flags) {
    (void)flags;
    TICK("cuEventCreate");
    *e = calloc(1, sizeof **e);
    if (!*e)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    c.live_events++;
    pthread_mutex_unlock(&lock);
    return 0;
}
API CUresult cuEventRecord(CUevent e, CUstream s) {
    (void)s;
    TICK("cuEventRecord");
    e->recorded = 1;
    return 0;
}
API CUresult cuEventSynchronize(CUevent e) {
    TICK("cuEventSynchronize");
    if (!e->recorded)
        violation("%s %p %zu: the event was never recorded", "cuEventSynchronize", e, 0);
    return 0;
}
API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    TICK("cuEventElapsedTime");
    if (!a->recorded || !b->recorded)
        violation("%s %p %zu: an event was never recorded", "cuEventElapsedTime", a, 0);
    *ms = 1.5f;
    return 0;
}
API CUresult cuEventDestroy_v2(CUevent e) {
    int fail = standin_tick("cuEventDestroy"); /* released either way */
    pthread_mutex_lock(&lock);
    c.live_events--;
    pthread_mutex_unlock(&lock);
    free(e);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
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
