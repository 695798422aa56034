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
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUuserObj_st *CUuserObject;
typedef void (*CUhostFn)(void *);
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
    WF_CUDA_ERROR_NOT_FOUND = 500,
    WF_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
};

/* CUstreamCaptureStatus, and the flags of user objects (CUDA graphs). */
enum { WF_CAPTURE_NONE = 0, WF_CAPTURE_ACTIVE = 1, WF_CAPTURE_INVALIDATED = 2 };
enum { WF_USER_OBJECT_NO_DESTRUCTOR_SYNC = 1, WF_GRAPH_USER_OBJECT_MOVE = 1 };

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
    /* a pooled plan's fence (api/plan_pool.c): recorded at release to the pool, waited for
     * before the pool destroys the plan, so that it never waits for a stream its user may have
     * destroyed */
    CUresult (*cuEventCreate)(CUevent *, unsigned int);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventDestroy)(CUevent); /* _v2 */
    /* stream capture into CUDA graphs (api/capture.c): whether the plan's stream is being
     * captured, into which graph, and the user object by which that graph owns the plan until
     * the graph is destroyed */
    CUresult (*cuStreamIsCapturing)(CUstream, int *);
    CUresult (*cuStreamGetCaptureInfo)(CUstream, int *, uint64_t *, CUgraph *, const CUgraphNode **,
                                       size_t *); /* _v2 */
    CUresult (*cuUserObjectCreate)(CUuserObject *, void *, CUhostFn, unsigned, unsigned);
    CUresult (*cuUserObjectRelease)(CUuserObject, unsigned);
    CUresult (*cuGraphRetainUserObject)(CUgraph, CUuserObject, unsigned, unsigned);
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
enum {
    WF_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0,
    WF_FUNC_ATTR_SHARED_SIZE_BYTES = 1,
    WF_FUNC_ATTR_MAX_DYNAMIC_SHARED = 8
};

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

/* A stream's capture into a CUDA graph (cuStreamBeginCapture): active or not, the capture
 * sequence's id (unique in the process) and the graph being captured (when active); blocked:
 * the stream cannot be used now (wf_stream_capture failed for that reason, not the query). */
typedef struct wf_capture {
    int active, blocked;
    uint64_t id;
    CUgraph graph;
} wf_capture;

/* The capture state of stream s (dev's context current; the legacy stream is the context's).
 * Fails, naming `who`, with WARPFFT_ERR_UNSUPPORTED when s is the legacy stream while a blocking
 * stream of the context captures (the legacy stream cannot be used then), WARPFFT_ERR_CUDA when
 * s's capture was invalidated by an earlier error (both: out->blocked), or the query's own
 * failure. */
warpfft_status wf_stream_capture(const wf_driver *drv, CUstream s, const char *who,
                                 wf_capture *out);
/* WARPFFT_SUCCESS when stream s of dev is not being captured (makes dev's context current for
 * the query); else WARPFFT_ERR_UNSUPPORTED saying that `what` cannot run during a capture
 * (`fix`: what to do instead), or wf_stream_capture's failure. */
warpfft_status wf_stream_not_capturing(const wf_device *dev, CUstream s, const char *what,
                                       const char *fix);

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
