/*
 * launch.h — where a plan's work runs (launch.c): the device, driver and stream of a plan, the
 * modules it loads (started on threads while plan creation goes on), the kernels it resolves,
 * and grid-stride launches and memsets on its stream. Shared by the spreader, the type 1/2
 * transforms and type 3.
 */
#ifndef WARPFFT_PLANS_LAUNCH_H
#define WARPFFT_PLANS_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/driver.h"
#include "runtime/module.h"
#include "warpfft.h"

#define WF_BLOCK         256 /* threads per block for every grid-stride kernel (ABI.md) */
#define WF_GRID_MAX      (65535u * 4u)
#define WF_BLOCKS_PER_SM 32 /* grid cap for grid-stride kernels: n_sm * this */

/* The device, driver table and stream a plan runs on. */
typedef struct wf_exec {
    const wf_driver *drv;
    const wf_device *dev;
    CUstream stream;
} wf_exec;

/* Device o->device (initialised on first use), the driver, and o->stream (no GPU work). */
warpfft_status wf_exec_attach(wf_exec *ex, const warpfft_opts *o);

/* The device's opt-in shared memory per block (bytes), which decides whether SM tiles fit. */
size_t wf_exec_shared_limit(const wf_exec *ex);

/* A resolved kernel and its name (for error messages). */
typedef struct wf_kernel {
    CUfunction fn;
    char name[64];
} wf_kernel;

/* Kernel `name` of module `module` (loaded on first use). */
warpfft_status wf_kernel_load(const wf_exec *ex, const char *module, const char *name,
                              wf_kernel *k);

/* Launches a grid-stride kernel over n items on ex's stream: block WF_BLOCK, grid
 * min(ceil(n / WF_BLOCK), n_sm * WF_BLOCKS_PER_SM); nothing for n <= 0. */
warpfft_status wf_exec_launch(const wf_exec *ex, const wf_kernel *k, int64_t n, void **args);

/* cuMemsetD8Async of bytes to zero on ex's stream; nothing for bytes == 0. */
warpfft_status wf_exec_memset(const wf_exec *ex, CUdeviceptr p, size_t bytes, const char *what);

/* The modules a plan launches from, by name (each part of a plan adds its own). */
#define WF_MAX_PLAN_MODULES 8
typedef struct wf_module_set {
    const char *names[WF_MAX_PLAN_MODULES];
    char buf[WF_MAX_PLAN_MODULES][48];
    size_t n;
} wf_module_set;
/* Adds a module name (printf-style); more than WF_MAX_PLAN_MODULES is a bug (ignored). */
void wf_module_set_add(wf_module_set *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Loads the modules of s in parallel, or, for those that must be compiled (a jit or nvrtc build's
 * first use), starts their loads on threads and returns at once (*loading; NULL when nothing was
 * started), so that plan creation makes its cuFFT plan meanwhile. A call that succeeded must be
 * followed by wf_modules_preload_finish(*loading) before the kernels are looked up. */
warpfft_status wf_modules_start(const wf_exec *ex, const wf_module_set *s, wf_preload **loading);

/* Device pointer of a user array. */
static inline CUdeviceptr wf_dptr(const void *p) {
    return (CUdeviceptr)(uintptr_t)p;
}

#endif /* WARPFFT_PLANS_LAUNCH_H */
