/*
 * driver.h — the CUDA driver, found at run time (loader.c): its types and entry points (no
 * cuda.h: the driver is reached only through function pointers resolved with dlopen/dlsym),
 * per-device state, the device's primary context, and driver errors as statuses.
 */
#ifndef WARPFFT_RUNTIME_DRIVER_H
#define WARPFFT_RUNTIME_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

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

#endif /* WARPFFT_RUNTIME_DRIVER_H */
