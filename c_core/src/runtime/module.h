/*
 * module.h — the embedded kernel modules on a device (module.c): loaded once per process and
 * device, in parallel where several are missing, their kernels looked up and launched; and the
 * records of which modules were loaded and how (for warpfft_runtime_info).
 */
#ifndef WARPFFT_RUNTIME_MODULE_H
#define WARPFFT_RUNTIME_MODULE_H

#include <stddef.h>

#include "runtime/driver.h"

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
/* The same with a grid of grid_z layers (grid_z = 1: wf_launch). */
warpfft_status wf_launch3(CUfunction fn, const char *kname, unsigned grid_x, unsigned grid_y,
                          unsigned grid_z, unsigned block_x, unsigned shared_bytes, CUstream stream,
                          void **args);

/* ---- module load records, read by warpfft_runtime_info ---- */

typedef struct wf_module_record {
    int device;        /* ordinal */
    const char *name;  /* module name (static storage: the embedded table) */
    const char *image; /* "sass", "ptx-jit" or "ptx-link" (static string) */
    double load_ms;    /* wall time of the load, JIT included */
} wf_module_record;

/* Copies up to `max` records (in load order) to `out`; returns how many there are. */
size_t wf_module_records(wf_module_record *out, size_t max);

/* Index of the embedded module called `name`, or -1. */
long wf_embedded_find(const char *name);

#endif /* WARPFFT_RUNTIME_MODULE_H */
