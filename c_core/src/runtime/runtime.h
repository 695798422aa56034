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
/* A multi-line tool log (JIT, NVRTC) made one line for a message: newlines and tabs become
 * spaces, trailing spaces go. In place. */
void wf_one_line(char *s);

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
 * parallel, a thread each. Returns the first failure, as wf_module_get would. */
warpfft_status wf_modules_preload(const wf_device *dev, const char *const *names, size_t n);
/* The same in two halves, so the caller can work while the modules load (plan creation makes
 * its cuFFT plan meanwhile): _start starts the threads and returns at once (*out = NULL when
 * there is nothing to load; without memory for the job list the modules are left to
 * wf_kernel_get); _finish waits for them, frees *pl, and returns the first failure. Every
 * _start must be followed by a _finish (NULL is fine). */
typedef struct wf_preload wf_preload;
void wf_modules_preload_start(const wf_device *dev, const char *const *names, size_t n,
                              wf_preload **out);
warpfft_status wf_modules_preload_finish(wf_preload *pl);
/* 1 when one of the modules names[0..n-1] of dev is not loaded yet and has no SASS for it
 * (it will be JIT-compiled or compiled with NVRTC: tens to hundreds of ms), else 0. */
int wf_modules_need_compile(const wf_device *dev, const char *const *names, size_t n);
/* Looks up kernel `kernel` in module `module` (loading it if needed). */
warpfft_status wf_kernel_get(const wf_device *dev, const char *module, const char *kernel,
                             CUfunction *fn);
/* Launches fn with a 1-D or 2-D grid; `args` as cuLaunchKernel's kernelParams. The message on
 * failure names `kname`. */
warpfft_status wf_launch(CUfunction fn, const char *kname, unsigned grid_x, unsigned grid_y,
                         unsigned block_x, unsigned shared_bytes, CUstream stream, void **args);

/* ---- finding a CUDA library (libfind.c) ---- */

/* getenv, or secure_getenv where glibc has it: the environment chooses files to dlopen, and is
 * ignored in setuid/setgid processes. Every lookup of the runtime goes through it. */
const char *wf_getenv(const char *name);

/* What to look for. The order is warpfft.h's (warpfft_cufft_probe): $lib_env, pip wheels beside
 * libwarpfft ({..,.}/<wheel dir>), $VIRTUAL_ENV/lib/python3.<x>/site-packages/<wheel dir>,
 * $CUDA_PATH/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64, the system loader (those two
 * skipped when $defaults_env is "0"); in each directory every soname of `names`, in order. */
typedef struct wf_lib_spec {
    const char *const *names; /* sonames, preferred first */
    size_t n_names;
    const char *names_desc; /* for messages, e.g. "libcufft.so.{12,11}" */
    const char *const *wheel_dirs;
    size_t n_wheel_dirs;
    const char *wheel_desc;   /* e.g. "nvidia/{cufft,cu13,cu12}/lib" */
    const char *lib_env;      /* e.g. "WARPFFT_CUFFT_LIB" */
    const char *defaults_env; /* e.g. "WARPFFT_CUFFT_DEFAULT_PATHS" */
    /* Takes a library just opened (resolves its symbols): 1 to keep it, or 0 with `why`
     * ("it has no symbol X") and the library is closed. */
    int (*accept)(void *handle, void *ctx, char *why, size_t why_len);
    void *ctx;
} wf_lib_spec;

typedef struct wf_lib_found {
    void *handle;    /* dlopen handle, never closed */
    char path[4096]; /* the file, symlinks resolved */
} wf_lib_found;

/* 1 when a library was found and accepted (*out filled); 0 with `tried` listing every place
 * tried ("; "-separated, cut with "..." when it does not fit). */
int wf_lib_search(const wf_lib_spec *spec, wf_lib_found *out, char *tried, size_t tried_len);

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

/* ---- NVRTC (nvrtc.c) ---- */

typedef int nvrtcResult; /* 0 = NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

typedef struct wf_nvrtc {
    const char *(*nvrtcGetErrorString)(nvrtcResult);
    nvrtcResult (*nvrtcVersion)(int *, int *);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                      const char *const *, const char *const *);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
    /* NULL when this NVRTC lacks them (CUBIN output: CUDA 11.1+; arch list: 11.2+) */
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetNumSupportedArchs)(int *);
    nvrtcResult (*nvrtcGetSupportedArchs)(int *);
    char path[4096];  /* the file that was loaded */
    int major, minor; /* nvrtcVersion */
    int archs[64];    /* nvrtcGetSupportedArchs, ascending; n_archs 0 when unknown */
    int n_archs;
} wf_nvrtc;

/* Finds and loads NVRTC once per process (thread-safe; same places as cuFFT, with
 * $WARPFFT_NVRTC_LIB and $WARPFFT_NVRTC_DEFAULT_PATHS). Fails with WARPFFT_ERR_NO_NVRTC, the
 * message listing every place tried; a failure is not kept (the next call searches again). */
warpfft_status wf_nvrtc_get(const wf_nvrtc **nv);
/* Without loading anything: 1 and NVRTC's path and version when it is loaded, else 0. */
int wf_nvrtc_loaded_info(char *path, size_t path_len, int *major, int *minor);
void wf_nvrtc_atfork_child(void);

/* What to compile for on a GPU of compute capability `sm` (major*10 + minor). */
typedef struct wf_nvrtc_target_t {
    int arch;        /* e.g. 90 */
    int cubin;       /* 1: -arch=sm_XX and a CUBIN; 0: -arch=compute_XX and PTX */
    char option[32]; /* "-arch=sm_90" or "-arch=compute_90" */
} wf_nvrtc_target_t;
/* The GPU's own arch as a CUBIN when this NVRTC lists it and can write CUBINs, else PTX for
 * the newest listed arch below it; WARPFFT_ERR_NO_KERNEL when every listed arch is newer. */
warpfft_status wf_nvrtc_target(const wf_nvrtc *nv, int sm, wf_nvrtc_target_t *t);

/* A compiled image, malloc'ed; always followed by a NUL byte (not counted in size). */
enum { WF_KIMAGE_CUBIN = 1, WF_KIMAGE_PTX = 2 };
typedef struct wf_kimage {
    int kind; /* WF_KIMAGE_* */
    unsigned char *data;
    size_t size;
} wf_kimage;
void wf_kimage_free(wf_kimage *img); /* frees and zeroes; a zeroed image is a no-op */

/* One translation unit to compile. */
typedef struct wf_nvrtc_job {
    const char *module;      /* for messages */
    const char *source_name; /* e.g. "spreadinterp.cu" */
    const char *source;      /* its text, NUL-terminated */
    size_t n_headers;        /* every file it may include, by include name */
    const char *const *header_names;
    const char *const *header_texts;
    const char *const *options; /* besides the arch, e.g. "-DWF_W=7" */
    size_t n_options;
    const wf_nvrtc_target_t *target;
    int rdc; /* 1: -rdc=true and PTX output (for cuLink), whatever target->cubin says */
} wf_nvrtc_job;

/* Compiles one source; *out gets a CUBIN (target->cubin and not rdc) or PTX. On failure
 * WARPFFT_ERR_NO_KERNEL (OUT_OF_MEMORY for allocations) with NVRTC's error and the start of
 * its log on one line, and *out zeroed. */
warpfft_status wf_nvrtc_compile(const wf_nvrtc *nv, const wf_nvrtc_job *job, wf_kimage *out);

/* ---- the compiled-kernel disk cache (kcache.c) ---- */

/* SHA-256. */
typedef struct wf_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t fill;
} wf_sha256;
void wf_sha256_init(wf_sha256 *c);
void wf_sha256_update(wf_sha256 *c, const void *data, size_t len);
void wf_sha256_final(wf_sha256 *c, unsigned char out[32]);
/* Lowercase hex of a digest: 64 characters and a NUL. */
void wf_sha256_hex(const unsigned char digest[32], char hex[65]);

/* A cache key: the SHA-256 of its parts, each hashed after its length (no two part lists hash
 * alike by moving a boundary), as 64 hex digits. Used by every loader that caches
 * (module_ptx.c, module_nvrtc.c), so their keys are formed one way. */
typedef struct wf_kkey {
    wf_sha256 c;
} wf_kkey;
void wf_kkey_init(wf_kkey *k, const char *kind); /* kind: the first part, names the loader */
void wf_kkey_add(wf_kkey *k, const void *p, size_t n);
void wf_kkey_str(wf_kkey *k, const char *s); /* NULL counts as "" */
void wf_kkey_fmt(wf_kkey *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wf_kkey_hex(wf_kkey *k, char key[65]);

/* The cache directory: $WARPFFT_CACHE_DIR (set and empty: cache off), else
 * $XDG_CACHE_HOME/warpfft, else $HOME/.cache/warpfft (read at each call), created with mode
 * 0700 when missing; not used when owned by another user or group/world-writable.
 * Entries are named <key>.wfk. Unusable directories and failed writes are not errors: the
 * caller compiles and goes on, and warpfft_runtime_info says why (wf_kcache_state). */

/* Looks `key` (64 hex digits) up: 1 and *img (malloc'ed) on a valid entry, whose mtime is then
 * touched (least-recently-used eviction); 0 on a miss. An entry that fails verification (magic,
 * format, kind, size, payload hash) is deleted and counts as a miss. */
int wf_kcache_get(const char *key, wf_kimage *img);
/* Stores img under `key`: a unique temp file in the directory, then rename() over the entry
 * (atomic; concurrent writers of one key both leave a valid entry). Then evicts the
 * least-recently-used entries until the entries total at most $WARPFFT_CACHE_MAX_SIZE bytes
 * (default 256 MiB). Failures are recorded, not returned. */
void wf_kcache_put(const char *key, const wf_kimage *img);
/* Removes `key`'s entry (one that the driver refused to load). */
void wf_kcache_drop(const char *key);
/* For warpfft_runtime_info: the directory the environment names now ("" when the cache is
 * off) and a note: why it is off, else the last problem met ("" when none); cut to fit. */
void wf_kcache_state(char *dir, size_t dir_len, char *note, size_t note_len);
void wf_kcache_atfork_child(void);

#endif /* WARPFFT_RUNTIME_H */
