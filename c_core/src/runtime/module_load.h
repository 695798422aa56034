/*
 * module_load.h — what module.c (loading the embedded images), module_ptx.c (PTX through the
 * driver's JIT or linker, and the embedded PTX through the kernel cache) and module_nvrtc.c
 * (compiling a module with NVRTC through the kernel cache) share. Not installed.
 */
#ifndef WARPFFT_MODULE_LOAD_H
#define WARPFFT_MODULE_LOAD_H

#include <stddef.h>

#include "runtime/driver.h"
#include "runtime/kimage.h"
#include "warpfft_kernels.h"

/* One load attempt: what was tried, its result and the JIT log. */
typedef struct attempt {
    CUmodule mod;
    CUresult r;
    const char *image; /* "sass", "ptx-jit", "ptx-link", "nvrtc", "nvrtc-cache" */
    const char *step;  /* the driver call, for messages */
    CUresult fatbin_r; /* result of the fatbin load when PTX was the fallback, else 0 */
    /* The NVRTC path's own failure (then r is nonzero too): the status, message already set. */
    warpfft_status st;
    char log[2048];
} attempt;

/* CUresult value (cuda.h), used without including it. */
enum { WF_CUDA_ERROR_INVALID_IMAGE = 200 };

/* attempt.r when the NVRTC path failed before any driver call (attempt.st says why). */
enum { WF_NVRTC_FAILED = -1 };

/* One PTX file of a link (size without its NUL). */
typedef struct ptx_part {
    const unsigned char *data;
    size_t size;
    const char *label;
} ptx_part;

/* One NUL-terminated PTX text, JIT-compiled by the driver. */
void wf_mod_load_ptx(const wf_driver *d, const void *ptx, attempt *a);
/* Several PTX files with relocatable device code: the driver links them into one cubin and
 * loads it; a copy of the cubin goes to *keep (malloc'ed) when keep is not NULL. */
void wf_mod_link_ptx(const wf_driver *d, const ptx_part *parts, size_t n, attempt *a,
                     wf_kimage *keep);
/* The PTX blobs of embedded module m, linked by the driver for dev (image "ptx-link") or read
 * from the kernel cache (image "ptx-cache"); a->fatbin_r is kept. */
void wf_mod_load_ptx_cached(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                            attempt *a);

#ifdef FATBUILD_HAS_SOURCES
/* Module m compiled for dev with NVRTC, or read from the kernel cache, and loaded: image
 * "nvrtc" or "nvrtc-cache"; on failure a->st (and a->r) say why (module_nvrtc.c). */
void wf_mod_load_nvrtc(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                       attempt *a);
#endif

#endif /* WARPFFT_MODULE_LOAD_H */
