/*
 * runtime.h — the C core's internal seam between the runtime stages (error.c, loader.c,
 * cufft.c, module.c, memory.c, info.c) and the NUFFT stages (the plan parameters of params.h,
 * plan.c, setpts.c, execute.c, direct.c). Not installed; not part of the ABI.
 *
 * CUDA types are declared here (no cuda.h): the driver and cuFFT are reached only through
 * function pointers resolved with dlopen/dlsym at run time.
 */
#ifndef WARPFFT_RUNTIME_H
#define WARPFFT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

/* ---- errors (error.c) ---- */

/* Records `status` and a printf-style message for this thread; returns `status`. */
warpfft_status wf_error(warpfft_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears this thread's message (call at the start of every public function). */
void wf_clear_error(void);

/* ---- CUDA driver API (loader.c) ---- */

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef unsigned long long CUdeviceptr;

enum {
    WF_CUDA_SUCCESS = 0,
    WF_CUDA_ERROR_OUT_OF_MEMORY = 2,
    WF_CUDA_ERROR_NOT_INITIALIZED = 3,
    WF_CUDA_ERROR_STUB_LIBRARY = 34,
    WF_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    WF_CUDA_ERROR_NO_DEVICE = 100,
    WF_CUDA_ERROR_INVALID_DEVICE = 101,
    WF_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    WF_CUDA_ERROR_INVALID_PTX = 218,
    WF_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    WF_CUDA_ERROR_NOT_FOUND = 500
};

/* Driver entry points, resolved by exact symbol name (the _v2 ones where the API has them). */
typedef struct wf_driver {
    CUresult (*cuInit)(unsigned int);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t *, CUdevice); /* _v2 */
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice); /* _v2 */
    CUresult (*cuCtxPushCurrent)(CUcontext);         /* _v2 */
    CUresult (*cuCtxPopCurrent)(CUcontext *);        /* _v2 */
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned int, int *, void **);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuLinkCreate)(unsigned int, int *, void **, CUlinkState *); /* _v2 */
    CUresult (*cuLinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned int, int *,
                              void **); /* _v2 */
    CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
    CUresult (*cuLinkDestroy)(CUlinkState);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);                              /* _v2 */
    CUresult (*cuMemFree)(CUdeviceptr);                                         /* _v2 */
    CUresult (*cuMemGetInfo)(size_t *, size_t *);                               /* _v2 */
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);                /* _v2 */
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);                      /* _v2 */
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream); /* _v2 */
    CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);       /* _v2 */
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
} wf_driver;

/* Device attributes used by the core (values of CUdevice_attribute). */
enum {
    WF_ATTR_MAX_SHARED_PER_BLOCK = 8,
    WF_ATTR_MULTIPROCESSOR_COUNT = 16,
    WF_ATTR_CC_MAJOR = 75,
    WF_ATTR_CC_MINOR = 76,
    WF_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97
};
enum { WF_FUNC_ATTR_SHARED_SIZE_BYTES = 1, WF_FUNC_ATTR_MAX_DYNAMIC_SHARED = 8 };

/* Loads libcuda.so.1 and calls cuInit(0) once per process (thread-safe). On failure returns
 * WARPFFT_ERR_NO_DRIVER / NO_DEVICE / DRIVER_TOO_OLD / CUDA with a message; later calls
 * return the same status and message. *drv receives the table on success. */
warpfft_status wf_driver_get(const wf_driver **drv);

/* Per-device state, created once (thread-safe) and kept for the process's lifetime. */
typedef struct wf_device {
    int ordinal;
    CUdevice dev;
    CUcontext ctx;        /* retained primary context */
    int sm;               /* major*10 + minor, e.g. 90 */
    int n_sm;             /* multiprocessor count */
    int max_shared_optin; /* bytes a block may opt in to */
    char name[256];
    int driver_version; /* cuDriverGetVersion, e.g. 13000 */
} wf_device;

/* Initialises the driver and device `ordinal` (retains its primary context). */
warpfft_status wf_device_get(int ordinal, const wf_device **dev);

/* For loader.c's fork handler: re-initialise the file's lock in the child of a fork(). */
void wf_module_atfork_child(void);
void wf_cufft_atfork_child(void);
void wf_cache_atfork_child(void);

/* Makes dev's primary context current on this thread (push); wf_ctx_leave pops it. Every
 * public function that touches the GPU brackets its work with these. */
warpfft_status wf_ctx_enter(const wf_device *dev);
void wf_ctx_leave(const wf_device *dev);

/* Converts a failed driver call into a status + message naming `what` (e.g. "cuMemAlloc of
 * 1048576 bytes"); maps OUT_OF_MEMORY, NO_DEVICE, INSUFFICIENT_DRIVER, NO_BINARY_FOR_GPU,
 * UNSUPPORTED_PTX_VERSION, NOT_FOUND to their statuses, the rest to WARPFFT_ERR_CUDA. */
warpfft_status wf_cuda_error(CUresult r, const char *what);

/* Shorthand: on failure returns wf_cuda_error from the enclosing function. */
#define WF_CU(call, what)                                                                          \
    do {                                                                                           \
        CUresult wf_r_ = (call);                                                                   \
        if (wf_r_ != WF_CUDA_SUCCESS)                                                              \
            return wf_cuda_error(wf_r_, (what));                                                   \
    } while (0)

/* ---- device memory (memory.c) ---- */

/* cuMemAlloc with OUT_OF_MEMORY mapped and a message naming `what` and the size. bytes == 0
 * gives *p = 0 and success. The current context must be the device's. */
warpfft_status wf_alloc(CUdeviceptr *p, size_t bytes, const char *what);
void wf_free(CUdeviceptr *p); /* frees and zeroes; 0 is a no-op */

/* ---- kernels (module.c) ---- */

/* Loads module `name` of the embedded kernels on `dev` (once per process and device; cached,
 * thread-safe; records the image used and the load/JIT time for warpfft_runtime_info).
 * Fails with WARPFFT_ERR_NO_KERNEL when no such module is embedded or no image runs on the
 * GPU, WARPFFT_ERR_DRIVER_TOO_OLD when the driver cannot take the embedded PTX/cubins. */
warpfft_status wf_module_get(const wf_device *dev, const char *name, CUmodule *mod);
/* Loads the modules `names[0..n-1]` of dev that no thread has loaded or is loading, in
 * parallel: a thread per module beyond the first (only when two or more need loading). Returns
 * the first failure, as wf_module_get would. */
warpfft_status wf_modules_preload(const wf_device *dev, const char *const *names, size_t n);
/* Looks up kernel `kernel` in module `module` (loading it if needed). */
warpfft_status wf_kernel_get(const wf_device *dev, const char *module, const char *kernel,
                             CUfunction *fn);
/* Launches fn with a 1-D or 2-D grid; `args` as cuLaunchKernel's kernelParams. The message on
 * failure names `kname`. */
warpfft_status wf_launch(CUfunction fn, const char *kname, unsigned grid_x, unsigned grid_y,
                         unsigned block_x, unsigned shared_bytes, CUstream stream, void **args);

/* ---- cuFFT (cufft.c) ---- */

typedef int cufftHandle;
typedef int cufftResult; /* 0 = CUFFT_SUCCESS */
enum { WF_CUFFT_C2C = 0x29, WF_CUFFT_Z2Z = 0x69 };
enum { WF_CUFFT_FORWARD = -1, WF_CUFFT_INVERSE = 1 };

typedef struct wf_cufft {
    cufftResult (*cufftCreate)(cufftHandle *);
    cufftResult (*cufftDestroy)(cufftHandle);
    cufftResult (*cufftSetAutoAllocation)(cufftHandle, int);
    cufftResult (*cufftMakePlanMany64)(cufftHandle, int, long long *, long long *, long long,
                                       long long, long long *, long long, long long, int, long long,
                                       size_t *);
    cufftResult (*cufftSetWorkArea)(cufftHandle, void *);
    cufftResult (*cufftSetStream)(cufftHandle, CUstream);
    cufftResult (*cufftExecC2C)(cufftHandle, void *, void *, int);
    cufftResult (*cufftExecZ2Z)(cufftHandle, void *, void *, int);
    cufftResult (*cufftGetVersion)(int *);
    char path[4096]; /* the file that was loaded */
    int version;     /* cufftGetVersion, e.g. 12000 */
} wf_cufft;

/* Finds and loads cuFFT once per process, in the order warpfft.h documents (thread-safe).
 * Fails with WARPFFT_ERR_NO_CUFFT, the message listing every place tried. */
warpfft_status wf_cufft_get(const wf_cufft **cufft);
/* Converts a failed cuFFT call into WARPFFT_ERR_CUFFT (or OUT_OF_MEMORY for
 * CUFFT_ALLOC_FAILED) with a message naming `what` and the cufftResult name. */
warpfft_status wf_cufft_error(cufftResult r, const char *what);

/* ---- the cache of idle plan resources (cache.c) ---- */

#define WF_CACHE_MAX_ITEMS  32   /* idle items at most (cuFFT plans and factor arrays) */
#define WF_CACHE_DEFAULT_MB 1024 /* idle device bytes at most, unless WARPFFT_PLAN_CACHE_MB */

enum { WF_CACHE_FFT = 1, WF_CACHE_FACTORS = 2 };

/* One idle resource and what it was made for. FFT: a cuFFT plan (key: dim, n_fine[3],
 * ntransf, precision) with its work area (buf[0]) and a fine grid of its size (buf[1]).
 * FACTORS: the deconvolution factors of one dimension (key: precision, N_d, nf_d, width, the
 * bits of beta) in buf[0]. All made in dev's primary context. */
typedef struct wf_cache_item {
    int kind;
    const wf_device *dev;
    int64_t key[6];
    const wf_cufft *cufft; /* FFT */
    cufftHandle fft;       /* FFT */
    CUdeviceptr buf[2];
    size_t bytes[2];
} wf_cache_item;

/* Looks for an idle item with want's kind, dev and key; on a hit moves it into *want (the
 * caller owns it now) and returns 1; else 0. */
int wf_cache_take(wf_cache_item *want);
/* Gives an idle item to the cache (its device work must be finished: the caller synchronised
 * the stream that used it); beyond the bounds the oldest items are destroyed (this one, if it
 * alone exceeds them). *it is zeroed: the cache owns it now. */
void wf_cache_put(wf_cache_item *it);
/* 1 when the cache is on and an item of `bytes` fits its byte bound (else put destroys it). */
int wf_cache_accepts(size_t bytes);
/* Destroys an item the caller owns (cuFFT plan and buffers, in its device's context). */
void wf_cache_destroy(wf_cache_item *it);
/* Destroys every idle item; returns how many there were. */
size_t wf_cache_release(void);
/* Overrides the bounds (tests); max_items 0 disables the cache. */
void wf_cache_set_limits(size_t max_items, size_t max_bytes);

/* Where plan creation spent its time (plan.c measures, warpfft_runtime_info reports). */
typedef struct wf_create_times {
    double modules_ms; /* finding the kernels: module loads (JIT) on first use */
    double cufft_ms;   /* cufftCreate + cufftMakePlanMany (0 when the cache had the plan) */
    double alloc_ms;   /* device allocations (fine grid, work area, bins) */
    double factors_ms; /* deconvolution factors: computed and uploaded, or cached */
    double total_ms;   /* the whole warpfft_plan_create */
} wf_create_times;

typedef struct wf_cache_stats {
    size_t items, bytes, max_items, max_bytes; /* idle now, and the bounds */
    uint64_t fft_hits, fft_misses, other_hits, other_misses, evicted, released, oom_retries;
    uint64_t plans;        /* plan creations noted */
    wf_create_times total; /* summed over them */
    wf_create_times last;  /* the latest */
} wf_cache_stats;

void wf_cache_note_create(const wf_create_times *t);
void wf_cache_note_oom_retry(void);
void wf_cache_get_stats(wf_cache_stats *out);

#endif /* WARPFFT_RUNTIME_H */
