/*
 * module_ptx.c — PTX modules (a `jit` build's images, and NVRTC's PTX when the GPU is newer
 * than NVRTC): JIT-compiled by the driver, and for the embedded PTX, kept in warpfft's kernel
 * cache (kcache.c).
 *
 * The embedded PTX goes through the driver's linker (cuLinkCreate/AddData/Complete), not
 * cuModuleLoadDataEx: the driver JIT-compiles one cuModuleLoadDataEx at a time in a process, so
 * the modules a first plan loads from several threads (wf_modules_preload) waited for each other,
 * while cuLink compiles them side by side. Measured on the H100 (four modules of a 2D f32 plan,
 * loaded from four threads, driver cache off): 460-478 ms through cuModuleLoadDataEx (the sum of
 * their times), 173-300 ms through cuLink (the largest one's, plus contention). The driver's JIT
 * cache keeps only what cuModuleLoadDataEx compiled, so the linked cubin is kept in warpfft's
 * disk cache under a key that hashes the PTX, the GPU's arch and the driver version: image
 * "ptx-link" when compiled now, "ptx-cache" when read back (a later process starts in
 * milliseconds, as it did from the driver's cache).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/kcache.h"
#include "runtime/kimage.h"
#include "runtime/module_load.h"
#include "runtime/sha256.h"

/* CUjit_option and CUjitInputType values (cuda.h), used without including it. */
enum { WF_JIT_ERROR_LOG_BUFFER = 5, WF_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };
enum { WF_JIT_INPUT_PTX = 1 };

static void jit_log_options(attempt *a, int opts[2], void *vals[2]) {
    a->log[0] = '\0';
    opts[0] = WF_JIT_ERROR_LOG_BUFFER;
    vals[0] = a->log;
    opts[1] = WF_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    vals[1] = (void *)(uintptr_t)(sizeof a->log - 1);
}

void wf_mod_load_ptx(const wf_driver *d, const void *ptx, attempt *a) {
    int opts[2];
    void *vals[2];
    jit_log_options(a, opts, vals);
    a->image = "ptx-jit";
    a->step = "cuModuleLoadDataEx (PTX JIT)";
    a->r = d->cuModuleLoadDataEx(&a->mod, ptx, 2, opts, vals);
}

void wf_mod_link_ptx(const wf_driver *d, const ptx_part *parts, size_t n, attempt *a,
                     wf_kimage *keep) {
    int opts[2];
    void *vals[2];
    CUlinkState ls = NULL;
    jit_log_options(a, opts, vals);
    a->image = "ptx-link";
    a->step = "cuLinkCreate";
    a->r = d->cuLinkCreate(2, opts, vals, &ls);
    for (size_t i = 0; a->r == WF_CUDA_SUCCESS && i < n; i++) {
        a->step = "cuLinkAddData (PTX)";
        /* size + 1: the driver wants PTX with its terminating NUL, which the parts have. */
        a->r = d->cuLinkAddData(ls, WF_JIT_INPUT_PTX, (void *)parts[i].data, parts[i].size + 1,
                                parts[i].label, 0, NULL, NULL);
    }
    void *cubin = NULL;
    size_t cubin_size = 0;
    if (a->r == WF_CUDA_SUCCESS) {
        a->step = "cuLinkComplete";
        a->r = d->cuLinkComplete(ls, &cubin, &cubin_size);
    }
    if (a->r == WF_CUDA_SUCCESS) {
        a->step = "cuModuleLoadData (linked cubin)";
        a->r = d->cuModuleLoadData(&a->mod, cubin); /* before cuLinkDestroy frees the cubin */
    }
    if (a->r == WF_CUDA_SUCCESS && keep && cubin && cubin_size > 0 &&
        (keep->data = malloc(cubin_size + 1)) != NULL) {
        memcpy(keep->data, cubin, cubin_size);
        keep->data[cubin_size] = '\0';
        keep->size = cubin_size;
        keep->kind = WF_KIMAGE_CUBIN;
    }
    if (ls)
        d->cuLinkDestroy(ls);
}

/* Everything the linked cubin depends on: the PTX, the arch the driver compiles for and the
 * driver (its compiler). */
static void ptx_key(const wf_device *dev, const fatbuild_module *m, const ptx_part *parts, size_t n,
                    char key[65]) {
    wf_kkey k;
    wf_kkey_init(&k, "warpfft kernel cache key 2: embedded PTX, linked by the driver");
    wf_kkey_str(&k, wf_version());
    wf_kkey_str(&k, m->name);
    for (size_t i = 0; i < n; i++)
        wf_kkey_add(&k, parts[i].data, parts[i].size);
    wf_kkey_fmt(&k, "sm %d driver %d", dev->sm, dev->driver_version);
    wf_kkey_hex(&k, key);
}

void wf_mod_load_ptx_cached(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                            attempt *a) {
    ptx_part parts[16];
    size_t n = 0;
    for (size_t i = 0; i < m->n_blobs && n < sizeof parts / sizeof parts[0]; i++)
        if (m->blobs[i].kind == FATBUILD_BLOB_PTX)
            parts[n++] = (ptx_part){m->blobs[i].data, m->blobs[i].size, m->blobs[i].label};
    char key[65];
    ptx_key(dev, m, parts, n, key);
    wf_kimage img;
    if (wf_kcache_get(key, &img)) {
        CUresult fatbin_r = a->fatbin_r;
        a->image = "ptx-cache";
        a->step = "cuModuleLoadData (cached cubin)";
        a->log[0] = '\0';
        a->r = img.kind == WF_KIMAGE_CUBIN ? d->cuModuleLoadData(&a->mod, img.data)
                                           : WF_CUDA_ERROR_INVALID_IMAGE;
        wf_kimage_free(&img);
        if (a->r == WF_CUDA_SUCCESS)
            return;
        wf_kcache_drop(key); /* refused by this driver: compile it again */
        memset(a, 0, sizeof *a);
        a->fatbin_r = fatbin_r;
    }
    wf_kimage keep;
    memset(&keep, 0, sizeof keep);
    wf_mod_link_ptx(d, parts, n, a, &keep);
    if (a->r == WF_CUDA_SUCCESS)
        wf_kcache_put(key, &keep);
    wf_kimage_free(&keep);
}
