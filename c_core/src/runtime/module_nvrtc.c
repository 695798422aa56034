/*
 * module_nvrtc.c — a module compiled for the GPU present with NVRTC (builds with embedded kernel
 * sources, feature nvrtc; module.c calls it when no embedded image fits, or there are none):
 * the result is kept in the disk cache (kcache.c) under a key that hashes everything it depends
 * on, and loaded: image "nvrtc" when compiled now, "nvrtc-cache" when read from the cache.
 * Split from module.c, which loads the embedded images and keeps the per-device module table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/kcache.h"
#include "runtime/kimage.h"
#include "runtime/module_load.h"
#include "runtime/nvrtc.h"
#include "runtime/sha256.h"

#ifdef FATBUILD_HAS_SOURCES
static const fatbuild_file *source_file(const char *name) {
    for (size_t i = 0; name && i < warpfft_kernels_n_files; i++)
        if (strcmp(warpfft_kernels_files[i].name, name) == 0)
            return &warpfft_kernels_files[i];
    return NULL;
}

/* The cache key: everything the image depends on. A linked image (several sources) comes from
 * the driver's linker, so the driver version is part of it then. */
static void nvrtc_key(const wf_device *dev, const fatbuild_module *m, const wf_nvrtc *nv,
                      const wf_nvrtc_target_t *t, char key[65]) {
    wf_kkey k;
    wf_kkey_init(&k, "warpfft kernel cache key 2: kernel sources, compiled by NVRTC");
    wf_kkey_str(&k, wf_version());
    wf_kkey_str(&k, warpfft_kernels_sources_digest);
    wf_kkey_str(&k, m->name);
    wf_kkey_fmt(&k, "%zu sources", m->n_sources);
    for (size_t i = 0; i < m->n_sources; i++)
        wf_kkey_str(&k, m->sources[i]);
    wf_kkey_fmt(&k, "%zu options", m->n_options);
    for (size_t i = 0; i < m->n_options; i++)
        wf_kkey_str(&k, m->options[i]);
    wf_kkey_str(&k, t->option);
    wf_kkey_fmt(&k, "nvrtc %d.%d", nv->major, nv->minor);
    wf_kkey_fmt(&k, "linked by driver %d", m->n_sources > 1 ? dev->driver_version : 0);
    wf_kkey_hex(&k, key);
}

/* Loads a compiled image: a CUBIN directly, PTX through the driver's JIT. */
static void load_kimage(const wf_driver *d, const wf_kimage *img, attempt *a) {
    if (img->kind == WF_KIMAGE_PTX) {
        wf_mod_load_ptx(d, img->data, a);
        return;
    }
    a->step = "cuModuleLoadData (NVRTC CUBIN)";
    a->log[0] = '\0';
    a->r = d->cuModuleLoadData(&a->mod, img->data);
}

/* A compiled image the driver refused: NVRTC newer than the driver is the usual cause. */
static void nvrtc_load_failed(const wf_device *dev, const fatbuild_module *m, const wf_nvrtc *nv,
                              attempt *a) {
    wf_one_line(a->log);
    char what[1024];
    snprintf(what, sizeof what,
             "loading module '%s' (compiled by NVRTC %d.%d) on device %d with "
             "%s%s%.600s",
             m->name, nv->major, nv->minor, dev->ordinal, a->step, a->log[0] ? "; JIT log: " : "",
             a->log);
    a->st = wf_cuda_error(a->r, what);
    int drv = dev->driver_version, need = nv->major * 1000 + nv->minor * 10;
    if (drv < need && a->r != WF_CUDA_ERROR_OUT_OF_MEMORY)
        a->st =
            wf_error(WARPFFT_ERR_DRIVER_TOO_OLD,
                     "the NVIDIA driver (CUDA %d.%d) is older than NVRTC %d.%d (%s), whose "
                     "output it cannot load: update the driver, or use an NVRTC of the "
                     "driver's CUDA release or older (WARPFFT_NVRTC_LIB) [%s]",
                     drv / 1000, drv % 1000 / 10, nv->major, nv->minor, nv->path, wf_last_error());
}

/* Compiles every source of m; one source gives a CUBIN or PTX, several give relocatable PTX
 * each, linked by the driver (the linked CUBIN is what gets cached). Loads the result. */
static void nvrtc_build(const wf_driver *d, const fatbuild_module *m, const wf_nvrtc *nv,
                        const wf_nvrtc_target_t *t, attempt *a, wf_kimage *keep) {
    size_t nf = warpfft_kernels_n_files;
    const char **names = calloc(nf ? nf : 1, sizeof *names);
    const char **texts = calloc(nf ? nf : 1, sizeof *texts);
    wf_kimage parts[16];
    memset(parts, 0, sizeof parts);
    size_t n = m->n_sources;
    a->r = WF_NVRTC_FAILED;
    if (!names || !texts)
        a->st = wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation for the NVRTC headers");
    else if (n > sizeof parts / sizeof parts[0])
        a->st = wf_error(WARPFFT_ERR_INTERNAL, "module '%s' has %zu sources (at most %zu)", m->name,
                         n, sizeof parts / sizeof parts[0]);
    for (size_t i = 0; names && texts && i < nf; i++) {
        names[i] = warpfft_kernels_files[i].name;
        texts[i] = warpfft_kernels_files[i].text;
    }
    for (size_t i = 0; a->st == WARPFFT_SUCCESS && i < n; i++) {
        const fatbuild_file *src = source_file(m->sources[i]);
        if (!src) {
            a->st = wf_error(WARPFFT_ERR_INTERNAL,
                             "module '%s': source %s is not in the embedded files table", m->name,
                             m->sources[i] ? m->sources[i] : "(null)");
            break;
        }
        wf_nvrtc_job job = {m->name, src->name,  src->text,    nf, names,
                            texts,   m->options, m->n_options, t,  n > 1};
        a->st = wf_nvrtc_compile(nv, &job, &parts[i]);
    }
    if (a->st == WARPFFT_SUCCESS && n == 1) {
        load_kimage(d, &parts[0], a);
        if (a->r == WF_CUDA_SUCCESS) {
            *keep = parts[0];
            memset(&parts[0], 0, sizeof parts[0]);
        }
    } else if (a->st == WARPFFT_SUCCESS) {
        ptx_part ptx[16];
        for (size_t i = 0; i < n; i++)
            ptx[i] = (ptx_part){parts[i].data, parts[i].size, m->sources[i]};
        wf_mod_link_ptx(d, ptx, n, a, keep);
    }
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        wf_kimage_free(&parts[i]);
    free(names);
    free(texts);
}

void wf_mod_load_nvrtc(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                       attempt *a) {
    const wf_nvrtc *nv = NULL;
    wf_nvrtc_target_t t;
    a->step = "NVRTC";
    a->r = WF_NVRTC_FAILED;
    if ((a->st = wf_nvrtc_get(&nv)) != WARPFFT_SUCCESS ||
        (a->st = wf_nvrtc_target(nv, dev->sm, &t)) != WARPFFT_SUCCESS) {
        if (a->st != WARPFFT_SUCCESS)
            a->st = wf_error(a->st,
                             "module '%s' has no embedded image for this GPU (sm_%d) and "
                             "must be compiled: %s",
                             m->name, dev->sm, wf_last_error());
        return;
    }
    char key[65];
    nvrtc_key(dev, m, nv, &t, key);
    wf_kimage img;
    if (wf_kcache_get(key, &img)) {
        load_kimage(d, &img, a);
        wf_kimage_free(&img);
        if (a->r == WF_CUDA_SUCCESS) {
            a->image = "nvrtc-cache";
            return;
        }
        wf_kcache_drop(key); /* refused by this driver: compile it again */
        memset(a, 0, sizeof *a);
    }
    wf_kimage keep;
    memset(&keep, 0, sizeof keep);
    nvrtc_build(d, m, nv, &t, a, &keep);
    if (a->st == WARPFFT_SUCCESS && a->r != WF_CUDA_SUCCESS)
        nvrtc_load_failed(dev, m, nv, a);
    if (a->r == WF_CUDA_SUCCESS) {
        a->image = "nvrtc";
        wf_kcache_put(key, &keep);
    }
    wf_kimage_free(&keep);
}
#else
typedef int wf_module_nvrtc_unused; /* this build has no kernel sources */
#endif
