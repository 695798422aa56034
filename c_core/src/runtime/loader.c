/*
 * loader.c — finds the CUDA driver at run time, initialises it once, and keeps per-device state
 * (retained primary context, attributes) for the life of the process.
 *
 * libcuda.so.1 is opened with dlopen, never linked: a machine without a GPU must still load
 * warpfft (to compute plan parameters, read the manifest, probe cuFFT) and get a status code
 * with a message instead of a loader error at start-up.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "runtime/driver.h"
#include "runtime/error.h"

/* Ordinals above this are refused; no host has that many GPUs in one process's view. */
#define WF_MAX_DEVICES 64

/* ---- the driver table ---- */

/* Exact exported names. The _v2 entry points exist in every driver since CUDA 11 (and in 12.x
 * and 13.x); the unsuffixed names are the legacy 32-bit-size ABI and must not be used. */
#define WF_SYM(field, name)                                                                        \
    { name, offsetof(wf_driver, field) }
static const struct {
    const char *name;
    size_t offset;
} wf_driver_syms[] = {
    WF_SYM(cuInit, "cuInit"),
    WF_SYM(cuDriverGetVersion, "cuDriverGetVersion"),
    WF_SYM(cuDeviceGetCount, "cuDeviceGetCount"),
    WF_SYM(cuDeviceGet, "cuDeviceGet"),
    WF_SYM(cuDeviceGetName, "cuDeviceGetName"),
    WF_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    WF_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
    WF_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    WF_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    WF_SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
    WF_SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
    WF_SYM(cuModuleLoadData, "cuModuleLoadData"),
    WF_SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
    WF_SYM(cuModuleUnload, "cuModuleUnload"),
    WF_SYM(cuModuleGetFunction, "cuModuleGetFunction"),
    WF_SYM(cuLinkCreate, "cuLinkCreate_v2"),
    WF_SYM(cuLinkAddData, "cuLinkAddData_v2"),
    WF_SYM(cuLinkComplete, "cuLinkComplete"),
    WF_SYM(cuLinkDestroy, "cuLinkDestroy"),
    WF_SYM(cuFuncSetAttribute, "cuFuncSetAttribute"),
    WF_SYM(cuFuncGetAttribute, "cuFuncGetAttribute"),
    WF_SYM(cuLaunchKernel, "cuLaunchKernel"),
    WF_SYM(cuMemAlloc, "cuMemAlloc_v2"),
    WF_SYM(cuMemFree, "cuMemFree_v2"),
    WF_SYM(cuMemGetInfo, "cuMemGetInfo_v2"),
    WF_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
    WF_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
    WF_SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    WF_SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    WF_SYM(cuMemsetD8Async, "cuMemsetD8Async"),
    WF_SYM(cuStreamSynchronize, "cuStreamSynchronize"),
    WF_SYM(cuEventCreate, "cuEventCreate"),
    WF_SYM(cuEventRecord, "cuEventRecord"),
    WF_SYM(cuEventSynchronize, "cuEventSynchronize"),
    WF_SYM(cuEventDestroy, "cuEventDestroy_v2"),
    WF_SYM(cuStreamIsCapturing, "cuStreamIsCapturing"),
    WF_SYM(cuStreamGetCaptureInfo, "cuStreamGetCaptureInfo_v2"), /* CUDA 11.3 on */
    WF_SYM(cuUserObjectCreate, "cuUserObjectCreate"),
    WF_SYM(cuUserObjectRelease, "cuUserObjectRelease"),
    WF_SYM(cuGraphRetainUserObject, "cuGraphRetainUserObject"),
    WF_SYM(cuGetErrorName, "cuGetErrorName"),
    WF_SYM(cuGetErrorString, "cuGetErrorString"),
};
#undef WF_SYM

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym results are stored as pointers");
_Static_assert(sizeof wf_driver_syms / sizeof wf_driver_syms[0] ==
                   sizeof(wf_driver) / sizeof(void (*)(void)),
               "every wf_driver field must be resolved");

/* Not pthread_once: the fork handler below must be able to reset it in a child. */
static pthread_mutex_t wf_drv_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int wf_drv_started;    /* drv_load has begun (set under wf_drv_lock) */
static atomic_int wf_drv_done;       /* drv_load has run (set under wf_drv_lock) */
static atomic_int wf_forked;         /* this is the child of a fork() after the driver was up */
static wf_driver wf_drv;             /* filled once by drv_load, read-only afterwards */
static warpfft_status wf_drv_status; /* outcome of drv_load, replayed to every caller */
static char wf_drv_msg[1024];        /* its message */
static atomic_int wf_drv_names_ok;   /* cuGetErrorName/String usable by wf_cuda_error */

static warpfft_status drv_open(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return wf_error(WARPFFT_ERR_NO_DRIVER,
                        "cannot load the CUDA driver library libcuda.so.1 (%s): the NVIDIA "
                        "driver is not installed or this machine has no NVIDIA GPU; warpfft "
                        "needs both at run time (check with nvidia-smi)",
                        why ? why : "unknown reason");
    }
    for (size_t i = 0; i < sizeof wf_driver_syms / sizeof wf_driver_syms[0]; i++) {
        void *p = dlsym(h, wf_driver_syms[i].name);
        if (!p) {
            dlclose(h);
            return wf_error(WARPFFT_ERR_NO_DRIVER,
                            "the CUDA driver library libcuda.so.1 has no symbol %s: the driver "
                            "is too old or damaged (warpfft needs a CUDA 12 or newer driver)",
                            wf_driver_syms[i].name);
        }
        memcpy((char *)&wf_drv + wf_driver_syms[i].offset, &p, sizeof p);
    }
    atomic_store_explicit(&wf_drv_names_ok, 1, memory_order_release);
    return WARPFFT_SUCCESS;
}

static warpfft_status drv_init(void) {
    CUresult r = wf_drv.cuInit(0);
    switch (r) {
    case WF_CUDA_SUCCESS:
        return WARPFFT_SUCCESS;
    case WF_CUDA_ERROR_NO_DEVICE:
        return wf_error(WARPFFT_ERR_NO_DEVICE,
                        "cuInit: CUDA_ERROR_NO_DEVICE: the NVIDIA driver is installed but sees no "
                        "GPU (check nvidia-smi, CUDA_VISIBLE_DEVICES and the container's GPU "
                        "access)");
    case WF_CUDA_ERROR_STUB_LIBRARY:
        return wf_error(WARPFFT_ERR_NO_DRIVER,
                        "cuInit: CUDA_ERROR_STUB_LIBRARY: the CUDA stub libcuda was loaded, not a "
                        "real driver (a toolkit's lib64/stubs directory is on LD_LIBRARY_PATH or "
                        "in the loader cache; remove it, or install the NVIDIA driver)");
    case WF_CUDA_ERROR_INSUFFICIENT_DRIVER:
        return wf_error(WARPFFT_ERR_DRIVER_TOO_OLD,
                        "cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER: the NVIDIA kernel driver is older "
                        "than its libcuda.so.1 (a driver update without a reboot, or a CUDA "
                        "forward-compatibility package this GPU does not support)");
    default:
        return wf_cuda_error(r, "cuInit");
    }
}

/* Runs once per process. Its message is kept so that every later caller, on any thread, gets
 * the same status and message as the first. */
static void drv_load(void) {
    wf_drv_status = drv_open();
    if (wf_drv_status == WARPFFT_SUCCESS)
        wf_drv_status = drv_init();
    if (wf_drv_status != WARPFFT_SUCCESS)
        snprintf(wf_drv_msg, sizeof wf_drv_msg, "%s", wf_last_error());
}

static warpfft_status forked_error(void) {
    return wf_error(WARPFFT_ERR_CUDA,
                    "this process is the child of a fork() made after the CUDA driver was "
                    "initialised in the parent; CUDA (and so warpfft) cannot be used in such a "
                    "child: start worker processes with exec (e.g. Python's 'spawn' or "
                    "'forkserver'), or fork before the first warpfft call");
}

warpfft_status wf_driver_get(const wf_driver **drv) {
    if (atomic_load_explicit(&wf_forked, memory_order_relaxed))
        return forked_error();
    if (!atomic_load_explicit(&wf_drv_done, memory_order_acquire)) {
        pthread_mutex_lock(&wf_drv_lock);
        if (!atomic_load_explicit(&wf_drv_done, memory_order_relaxed)) {
            atomic_store_explicit(&wf_drv_started, 1, memory_order_relaxed);
            drv_load();
            atomic_store_explicit(&wf_drv_done, 1, memory_order_release);
        }
        pthread_mutex_unlock(&wf_drv_lock);
    }
    if (wf_drv_status != WARPFFT_SUCCESS)
        return wf_error(wf_drv_status, "%s", wf_drv_msg);
    if (drv)
        *drv = &wf_drv;
    return WARPFFT_SUCCESS;
}

/* ---- errors ---- */

static warpfft_status cuda_status(CUresult r) {
    switch (r) {
    case WF_CUDA_ERROR_OUT_OF_MEMORY:
        return WARPFFT_ERR_OUT_OF_MEMORY;
    case WF_CUDA_ERROR_NO_DEVICE:
    case WF_CUDA_ERROR_INVALID_DEVICE:
        return WARPFFT_ERR_NO_DEVICE;
    case WF_CUDA_ERROR_STUB_LIBRARY:
        return WARPFFT_ERR_NO_DRIVER;
    case WF_CUDA_ERROR_INSUFFICIENT_DRIVER:
    case WF_CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return WARPFFT_ERR_DRIVER_TOO_OLD;
    case WF_CUDA_ERROR_NO_BINARY_FOR_GPU:
    case WF_CUDA_ERROR_NOT_FOUND:
        return WARPFFT_ERR_NO_KERNEL;
    default:
        return WARPFFT_ERR_CUDA;
    }
}

warpfft_status wf_cuda_error(CUresult r, const char *what) {
    const char *name = NULL, *text = NULL;
    /* The driver's own names when it is loaded; the stub and old drivers may refuse. */
    if (atomic_load_explicit(&wf_drv_names_ok, memory_order_acquire)) {
        if (wf_drv.cuGetErrorName(r, &name) != WF_CUDA_SUCCESS)
            name = NULL;
        if (wf_drv.cuGetErrorString(r, &text) != WF_CUDA_SUCCESS)
            text = NULL;
    }
    if (!what)
        what = "CUDA driver call";
    if (!name)
        return wf_error(cuda_status(r), "%s: CUDA error %d", what, r);
    if (!text)
        return wf_error(cuda_status(r), "%s: %s", what, name);
    return wf_error(cuda_status(r), "%s: %s (%s)", what, name, text);
}

/* ---- stream capture ---- */

warpfft_status wf_stream_capture(const wf_driver *drv, CUstream s, const char *who,
                                 wf_capture *out) {
    memset(out, 0, sizeof *out);
    int status = WF_CAPTURE_NONE;
    CUresult r = drv->cuStreamGetCaptureInfo(s, &status, &out->id, &out->graph, NULL, NULL);
    out->blocked = r == WF_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (r == WF_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: the legacy default stream (0) cannot be used while a blocking stream "
                        "of its context is being captured into a CUDA graph (run on the capturing "
                        "stream, or on a stream created non-blocking)",
                        who);
    if (r != WF_CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: cuStreamGetCaptureInfo", who);
        return wf_cuda_error(r, what);
    }
    out->blocked = status == WF_CAPTURE_INVALIDATED;
    if (out->blocked)
        return wf_error(WARPFFT_ERR_CUDA,
                        "%s: stream %#llx was being captured into a CUDA graph and an earlier "
                        "error invalidated the capture; end it (cuStreamEndCapture) first",
                        who, (unsigned long long)(uintptr_t)s);
    out->active = status == WF_CAPTURE_ACTIVE;
    if (!out->active)
        out->graph = NULL;
    return WARPFFT_SUCCESS;
}

warpfft_status wf_stream_not_capturing(const wf_device *dev, CUstream s, const char *what,
                                       const char *fix) {
    warpfft_status st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_capture cap;
    st = wf_stream_capture(&wf_drv, s, what, &cap);
    wf_ctx_leave(dev);
    if (st == WARPFFT_SUCCESS && cap.active)
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "%s cannot run while stream %#llx is being captured into a CUDA graph: %s",
                      what, (unsigned long long)(uintptr_t)s, fix);
    return st;
}

/* ---- devices ---- */

static pthread_mutex_t wf_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_device wf_dev_tab[WF_MAX_DEVICES]; /* stable addresses: handed out to callers */
static int wf_dev_ready[WF_MAX_DEVICES];     /* guarded by wf_dev_lock */

static warpfft_status dev_attr(const wf_driver *d, int *v, int attr, const wf_device *dev) {
    char what[64];
    snprintf(what, sizeof what, "cuDeviceGetAttribute(%d) on device %d", attr, dev->ordinal);
    WF_CU(d->cuDeviceGetAttribute(v, attr, dev->dev), what);
    return WARPFFT_SUCCESS;
}

/* Fills *out for `ordinal`; on failure *out is untouched, so a later call can retry. */
static warpfft_status dev_open(const wf_driver *d, int ordinal, wf_device *out) {
    wf_device v;
    memset(&v, 0, sizeof v);
    v.ordinal = ordinal;
    WF_CU(d->cuDeviceGet(&v.dev, ordinal), "cuDeviceGet");
    int major = 0, minor = 0;
    warpfft_status st = dev_attr(d, &major, WF_ATTR_CC_MAJOR, &v);
    if (st == WARPFFT_SUCCESS)
        st = dev_attr(d, &minor, WF_ATTR_CC_MINOR, &v);
    if (st == WARPFFT_SUCCESS)
        st = dev_attr(d, &v.n_sm, WF_ATTR_MULTIPROCESSOR_COUNT, &v);
    if (st == WARPFFT_SUCCESS)
        st = dev_attr(d, &v.max_shared_optin, WF_ATTR_MAX_SHARED_PER_BLOCK_OPTIN, &v);
    if (st != WARPFFT_SUCCESS)
        return st;
    v.sm = major * 10 + minor;
    WF_CU(d->cuDeviceGetName(v.name, (int)sizeof v.name - 1, v.dev), "cuDeviceGetName");
    WF_CU(d->cuDriverGetVersion(&v.driver_version), "cuDriverGetVersion");
    char what[320];
    snprintf(what, sizeof what, "cuDevicePrimaryCtxRetain on device %d (%s)", ordinal, v.name);
    /* Retained for the process's lifetime: plans and user pointers live in this context. */
    WF_CU(d->cuDevicePrimaryCtxRetain(&v.ctx, v.dev), what);
    *out = v;
    return WARPFFT_SUCCESS;
}

static warpfft_status dev_get_locked(const wf_driver *d, int ordinal) {
    if (wf_dev_ready[ordinal])
        return WARPFFT_SUCCESS;
    int count = 0;
    WF_CU(d->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count)
        return wf_error(WARPFFT_ERR_NO_DEVICE,
                        "device %d requested but %d device(s) present (ordinals start at 0; "
                        "CUDA_VISIBLE_DEVICES limits which ones this process sees)",
                        ordinal, count);
    warpfft_status st = dev_open(d, ordinal, &wf_dev_tab[ordinal]);
    if (st == WARPFFT_SUCCESS)
        wf_dev_ready[ordinal] = 1;
    return st;
}

warpfft_status wf_device_get(int ordinal, const wf_device **dev) {
    const wf_driver *d = NULL;
    warpfft_status st = wf_driver_get(&d);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (ordinal < 0)
        return wf_error(WARPFFT_ERR_NO_DEVICE, "device %d requested: ordinals start at 0", ordinal);
    if (ordinal >= WF_MAX_DEVICES)
        return wf_error(WARPFFT_ERR_NO_DEVICE,
                        "device %d requested: warpfft handles ordinals "
                        "0..%d",
                        ordinal, WF_MAX_DEVICES - 1);
    pthread_mutex_lock(&wf_dev_lock);
    st = dev_get_locked(d, ordinal);
    pthread_mutex_unlock(&wf_dev_lock);
    if (st == WARPFFT_SUCCESS && dev)
        *dev = &wf_dev_tab[ordinal];
    return st;
}

warpfft_status wf_ctx_enter(const wf_device *dev) {
    if (!dev)
        return wf_error(WARPFFT_ERR_INTERNAL, "wf_ctx_enter: no device");
    if (atomic_load_explicit(&wf_forked, memory_order_relaxed))
        return forked_error(); /* a plan or pointer inherited from the parent */
    CUresult r = wf_drv.cuCtxPushCurrent(dev->ctx);
    if (r != WF_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuCtxPushCurrent (device %d's primary context)", dev->ordinal);
        return wf_cuda_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

void wf_ctx_leave(const wf_device *dev) {
    CUcontext popped = NULL;
    if (dev)
        wf_drv.cuCtxPopCurrent(&popped); /* cannot fail after a successful push */
}

/* ---- fork ----
 * A fork() while another thread holds one of the library's locks (during a JIT, the cuFFT
 * search or the driver loading) would leave it locked forever in the child. Each file that keeps
 * a lock registers its own child handler (pthread_atfork, at load), which re-initialises it (the
 * thread that held it does not exist there); this one does the driver's, and in the child of
 * a process whose driver was up (or coming up) marks the process, so that every call that would
 * use CUDA returns a clear status (forked_error) instead of hanging or undefined driver
 * behaviour. Nothing runs in the parent: fork() never waits for a JIT in another thread (nor
 * risks a lock-order inversion with the driver's own fork handlers). */
static void atfork_child(void) {
    int started = atomic_load_explicit(&wf_drv_started, memory_order_relaxed);
    int done = atomic_load_explicit(&wf_drv_done, memory_order_relaxed);
    if (started && !(done && wf_drv_status != WARPFFT_SUCCESS))
        atomic_store_explicit(&wf_forked, 1, memory_order_relaxed);
    pthread_mutex_init(&wf_drv_lock, NULL);
    pthread_mutex_init(&wf_dev_lock, NULL);
}

__attribute__((constructor)) static void wf_register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

WARPFFT_API warpfft_status warpfft_init(int device) {
    wf_clear_error();
    return wf_device_get(device, NULL);
}
