/*
 * warpfft/core.h — the library itself: the export macro, version, status codes, precisions,
 * errors, the build's kernels, the runtime it found (driver, device, cuFFT), device memory
 * helpers. Part of warpfft's public C ABI: include <warpfft.h>, which includes every part (each
 * part includes the parts it needs and may be included alone; warpfft.h's opening comment states
 * the conventions all of them share).
 */
#ifndef WARPFFT_CORE_H
#define WARPFFT_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WARPFFT_BUILDING) && defined(__GNUC__)
#define WARPFFT_API __attribute__((visibility("default")))
#else
#define WARPFFT_API
#endif

#define WARPFFT_VERSION_MAJOR 0
#define WARPFFT_VERSION_MINOR 1
#define WARPFFT_VERSION_PATCH 0

/* Status codes. 0 is success; every other value names one kind of failure. */
typedef enum warpfft_status {
    WARPFFT_SUCCESS = 0,
    WARPFFT_ERR_INVALID_ARG = 1,     /* null pointer, bad enum or option value */
    WARPFFT_ERR_BAD_TYPE = 2,        /* transform type not 1, 2 or 3 */
    WARPFFT_ERR_BAD_DIM = 3,         /* dim not 1, 2 or 3 */
    WARPFFT_ERR_BAD_SIZE = 4,        /* a mode count < 1, ntransf < 1, or sizes too large
                                        (type 3: a grid the spreads of points need) */
    WARPFFT_ERR_BAD_TOL = 5,         /* tol NaN, or one the options cannot reach (an explicit
                                        upsampfac); others run at warpfft_tol_effective */
    WARPFFT_ERR_BAD_NPOINTS = 6,     /* M < 0 */
    WARPFFT_ERR_BAD_POINTS = 7,      /* a NaN or infinite coordinate */
    WARPFFT_ERR_PRECISION = 8,       /* arrays' precision differs from the plan's */
    WARPFFT_ERR_NO_POINTS = 9,       /* execute before setpts */
    WARPFFT_ERR_NO_DRIVER = 10,      /* libcuda.so.1 missing, or a symbol missing in it */
    WARPFFT_ERR_NO_DEVICE = 11,      /* no CUDA device, or the device ordinal is out of range */
    WARPFFT_ERR_DRIVER_TOO_OLD = 12, /* driver older than the embedded kernels need */
    WARPFFT_ERR_NO_KERNEL = 13,      /* no embedded image runs on this GPU, or a kernel missing */
    WARPFFT_ERR_NO_CUFFT = 14,       /* cuFFT library not found or a symbol missing */
    WARPFFT_ERR_CUFFT = 15,          /* a cuFFT call failed */
    WARPFFT_ERR_OUT_OF_MEMORY = 16,  /* device (or host) memory exhausted */
    WARPFFT_ERR_CUDA = 17,           /* any other CUDA driver error */
    WARPFFT_ERR_UNSUPPORTED = 18,    /* valid request this call does not do */
    WARPFFT_ERR_INTERNAL = 19,       /* a bug in warpfft: please report it */
    WARPFFT_ERR_NO_NVRTC = 20        /* NVRTC (run-time compiler) not found, in a build that
                                      * compiles its kernels at run time (feature nvrtc) */
} warpfft_status;

typedef enum warpfft_precision { WARPFFT_F32 = 1, WARPFFT_F64 = 2 } warpfft_precision;

/* ---- library, build and runtime information (no GPU needed unless stated) ---- */

/* "0.1.0". */
WARPFFT_API const char *warpfft_version(void);
/* Message for the last failure on this thread ("" if none). */
WARPFFT_API const char *warpfft_last_error(void);
/* Short fixed name of a status, e.g. "WARPFFT_ERR_NO_DEVICE". */
WARPFFT_API const char *warpfft_status_name(int status);
/* JSON describing the embedded kernels: mode ("jit", "aot" or "aot+jit"), real archs, PTX arch,
 * toolkit version, content hash, modules and their kernel names. Static; never fails. */
WARPFFT_API const char *warpfft_build_manifest(void);

/* Embedded kernel blobs, for inspection (e.g. to list a fatbin's images). Modules are numbered
 * 0..warpfft_embedded_module_count()-1, blobs within a module 0..n-1. kind: 1 = PTX text,
 * 2 = fatbin. Any output pointer may be NULL. */
WARPFFT_API size_t warpfft_embedded_module_count(void);
WARPFFT_API warpfft_status warpfft_embedded_module(size_t module, const char **name,
                                                   size_t *n_blobs);
WARPFFT_API warpfft_status warpfft_embedded_blob(size_t module, size_t blob, int *kind,
                                                 const char **label, const void **data,
                                                 size_t *size);

/* Finds and loads cuFFT (no GPU needed). Search order: $WARPFFT_CUFFT_LIB; NVIDIA pip wheels
 * beside libwarpfft (../nvidia/cufft/lib, ../nvidia/cu13/lib, ../nvidia/cu12/lib) and in
 * $VIRTUAL_ENV's site-packages; $CUDA_PATH/lib64 and $CUDA_HOME/lib64; /usr/local/cuda/lib64;
 * then the system loader by SONAME (libcufft.so.12, libcufft.so.11). Setting
 * WARPFFT_CUFFT_DEFAULT_PATHS=0 skips the last two (for hermetic deployments and tests).
 * In a setuid/setgid process these environment variables are ignored (secure_getenv).
 * On success writes the loaded file's path (NUL-terminated, truncated to path_len) and
 * cufftGetVersion's value. On failure WARPFFT_ERR_NO_CUFFT; the message lists every place tried. */
WARPFFT_API warpfft_status warpfft_cufft_probe(char *path, size_t path_len, int *version);

/* Initialises the driver and the device in opts-less form (device ordinal), retaining its
 * primary context. Called implicitly by plan creation; explicit calls are optional. */
WARPFFT_API warpfft_status warpfft_init(int device);

/* Runtime report as JSON into buf (NUL-terminated, truncated to len; *needed, if not NULL,
 * receives the full length + 1): build manifest summary, driver version, device name, sm,
 * per loaded module the image used ("sass", "ptx-jit", "ptx-link"; "nvrtc" when compiled by
 * NVRTC now, "nvrtc-cache" when read from the kernel cache) and JIT/load time in ms, cuFFT path
 * and version, "nvrtc" (path and version; null when not loaded, with "nvrtc_error" in builds
 * with embedded sources) and "kernel_cache" ("dir", null when off; "note": why it is off, or
 * the last problem met, e.g. an unwritable directory or a corrupt entry removed). Always fills
 * buf with what is known (with "gpu_error" and "cufft_error" fields for what failed); returns
 * the status of driver/device initialisation for `device`. */
WARPFFT_API warpfft_status warpfft_runtime_info(int device, char *buf, size_t len, size_t *needed);

/* ---- device memory helpers, for callers without CUDA bindings ---- */

/* All operate on `device` (its primary context). Copies and memset are synchronous: they
 * return once the data are in place, so work enqueued afterwards on any stream (a non-blocking
 * one included) sees them. Like cuMemcpy, they are ordered after earlier work on the legacy
 * default stream only: wait for other streams first (warpfft_stream_sync). */
WARPFFT_API warpfft_status warpfft_malloc(int device, size_t bytes, void **dptr);
WARPFFT_API warpfft_status warpfft_free(int device, void *dptr); /* NULL is a no-op */
WARPFFT_API warpfft_status warpfft_memcpy_htod(int device, void *dst, const void *src,
                                               size_t bytes);
WARPFFT_API warpfft_status warpfft_memcpy_dtoh(int device, void *dst, const void *src,
                                               size_t bytes);
/* Sets `bytes` bytes at dptr to (unsigned char)value. */
WARPFFT_API warpfft_status warpfft_memset(int device, void *dptr, int value, size_t bytes);
/* Waits for all work on a stream (0 = legacy default stream) of the device. */
WARPFFT_API warpfft_status warpfft_stream_sync(int device, uint64_t stream);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_CORE_H */
