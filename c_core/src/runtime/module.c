/*
 * module.c — loads the embedded kernel modules onto a device, finds kernels, launches them.
 *
 * A module is loaded the first time a plan needs it (a cold JIT costs 50-200 ms per module, so
 * nothing is loaded eagerly) and kept for the process's lifetime, once per device. Loads run
 * without the cache's lock: different modules load in parallel (a plan loads the ones it needs on a
 * thread each, wf_modules_preload), and a thread that needs a module another is loading waits for
 * it. Which image the driver used and how long the load took are recorded for warpfft_runtime_info:
 * that is the first thing to look at when a first call is slow.
 *
 * Image order: the fatbin (SASS for the built archs, maybe PTX inside) when there is one; if
 * the driver finds nothing in it for this GPU, the separate PTX blobs, JIT-compiled through the
 * driver's linker and kept in warpfft's kernel cache (module_ptx.c).
 * In a build with embedded kernel sources (feature nvrtc), when no image fits (or there are
 * none), the module is compiled for this GPU with NVRTC (module_nvrtc.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/fatbin.h"
#include "runtime/module.h"
#include "runtime/module_load.h"
#include "warpfft_kernels.h"

/* A module of one device: being loaded by one thread (others wait on wf_mod_cond), or loaded.
 * Different modules load in parallel; the same module is never JIT-compiled twice. */
enum { WF_MOD_LOADING = 1, WF_MOD_READY = 2 };
typedef struct wf_loaded {
    wf_module_record rec;
    CUmodule mod;
    int state;
} wf_loaded;

static pthread_mutex_t wf_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wf_mod_cond = PTHREAD_COND_INITIALIZER; /* a load finished */
static wf_loaded *wf_mods; /* guarded by wf_mod_lock, as are the two counts */
static size_t wf_n_mods, wf_cap_mods;

static void atfork_child(void) {
    pthread_mutex_init(&wf_mod_lock, NULL);
    pthread_cond_init(&wf_mod_cond, NULL);
    /* The threads that were loading do not exist here: drop their entries, keep the order. */
    size_t n = 0;
    for (size_t i = 0; i < wf_n_mods; i++)
        if (wf_mods[i].state == WF_MOD_READY)
            wf_mods[n++] = wf_mods[i];
    wf_n_mods = n;
}

/* Registered at load: a fork() while another thread holds the lock leaves it held in the child
 * (loader.c says what a child may still do). */
__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

long wf_embedded_find(const char *name) {
    for (size_t i = 0; name && i < warpfft_kernels_n_modules; i++)
        if (warpfft_kernels_modules[i].name && strcmp(warpfft_kernels_modules[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* ---- the three ways to load ---- */

/* The image the driver will take from the fatbin, by reading its entry headers. Our own blob
 * always parses; if it did not, the load itself still decides and we only lose the label (and
 * the parser's message, which is no failure of the caller's call). */
static const char *fatbin_image(const fatbuild_blob *fat, int sm) {
    wf_fatbin_entry e[64];
    size_t n = 0;
    const char *img = NULL;
    if (wf_fatbin_parse(fat->data, fat->size, e, 64, &n) == WARPFFT_SUCCESS)
        img = wf_fatbin_image_for(e, n < 64 ? n : 64, sm);
    else
        wf_clear_error();
    return img ? img : "fatbin";
}

/* Errors after which the separate PTX blobs may still work. */
static int ptx_may_help(CUresult r) {
    return r == WF_CUDA_ERROR_NO_BINARY_FOR_GPU || r == WF_CUDA_ERROR_INVALID_PTX ||
           r == WF_CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == WF_CUDA_ERROR_INVALID_IMAGE;
}

/* The embedded images: the fatbin, then the PTX blobs when the fatbin has nothing for this GPU
 * (a->r tells; ptx_may_help(a->r) when no image fits). */
static void load_embedded(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                          attempt *a) {
    const fatbuild_blob *fat = NULL;
    size_t n_ptx = 0;
    for (size_t i = 0; i < m->n_blobs; i++) {
        if (m->blobs[i].kind == FATBUILD_BLOB_FATBIN && !fat)
            fat = &m->blobs[i];
        if (m->blobs[i].kind == FATBUILD_BLOB_PTX)
            n_ptx++;
    }
    if (fat) {
        a->image = fatbin_image(fat, dev->sm);
        a->step = "cuModuleLoadData (fatbin)";
        a->log[0] = '\0';
        a->r = d->cuModuleLoadData(&a->mod, fat->data);
        if (a->r == WF_CUDA_SUCCESS || n_ptx == 0 || !ptx_may_help(a->r))
            return;
        a->fatbin_r = a->r;
    }
    if (n_ptx > 0)
        wf_mod_load_ptx_cached(d, dev, m, a);
    else {
        a->step = "module without images";
        a->r = WF_CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
}

static void load_images(const wf_driver *d, const wf_device *dev, const fatbuild_module *m,
                        attempt *a) {
#ifdef FATBUILD_HAS_SOURCES
    if (m->n_blobs > 0)
        load_embedded(d, dev, m, a);
    if (m->n_sources > 0 && (m->n_blobs == 0 || (a->r != WF_CUDA_SUCCESS && ptx_may_help(a->r)))) {
        memset(a, 0, sizeof *a); /* the embedded images' failure is superseded */
        wf_mod_load_nvrtc(d, dev, m, a);
        return;
    }
    if (m->n_blobs > 0)
        return;
#else
    if (m->n_blobs > 0) {
        load_embedded(d, dev, m, a);
        return;
    }
#endif
    a->step = "module without images or sources";
    a->r = WF_CUDA_ERROR_NO_BINARY_FOR_GPU;
}

/* ---- errors ---- */

/* "R580" for CUDA 13.0: the driver branch a toolkit release needs (Linux). */
static const char *driver_branch(int cuda_version) {
    static const struct {
        int cuda;
        const char *branch;
    } t[] = {{12000, "R525"}, {12010, "R530"}, {12020, "R535"}, {12030, "R545"}, {12040, "R550"},
             {12050, "R555"}, {12060, "R560"}, {12080, "R570"}, {12090, "R575"}, {13000, "R580"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].cuda == cuda_version)
            return t[i].branch;
    return NULL;
}

static warpfft_status too_old(const wf_device *dev, const char *module) {
    int need = warpfft_kernels_cuda_version, have = dev->driver_version;
    const char *branch = driver_branch(need);
    /* wf_last_error() holds the driver's error: keep it at the end. */
    return wf_error(WARPFFT_ERR_DRIVER_TOO_OLD,
                    "module '%s': the NVIDIA driver (CUDA %d.%d) is older than the kernels need: "
                    "they were built with CUDA %d.%d (driver %s%s); update the NVIDIA driver or "
                    "build warpfft with an older toolkit [%s]",
                    module, have / 1000, have % 1000 / 10, need / 1000, need % 1000 / 10,
                    branch ? branch : "of that release", branch ? " or newer" : "",
                    wf_last_error());
}

static warpfft_status no_image(const wf_device *dev, const fatbuild_module *m) {
    if (m->n_blobs == 0) /* an nvrtc-only build: sources, no image */
        return wf_error(WARPFFT_ERR_NO_KERNEL,
                        "module '%s': this build (mode %s) embeds no compiled image of it, only "
                        "the kernel sources, and this library cannot compile them at run time; "
                        "rebuild warpfft with the `jit` or `aot` feature",
                        m->name, warpfft_kernels_mode);
    char have[512] = "no fatbin";
    for (size_t i = 0; i < m->n_blobs; i++) {
        if (m->blobs[i].kind != FATBUILD_BLOB_FATBIN)
            continue;
        wf_fatbin_entry e[64];
        size_t n = 0;
        if (wf_fatbin_parse(m->blobs[i].data, m->blobs[i].size, e, 64, &n) == WARPFFT_SUCCESS)
            wf_fatbin_describe(e, n < 64 ? n : 64, have, sizeof have);
        break;
    }
    int need = warpfft_kernels_cuda_version, drv = dev->driver_version;
    char note[160] = "";
    if (drv < need)
        snprintf(note, sizeof note,
                 "; note also the driver (CUDA %d.%d) is older than the "
                 "toolkit that built the kernels (CUDA %d.%d)",
                 drv / 1000, drv % 1000 / 10, need / 1000, need % 1000 / 10);
    return wf_error(WARPFFT_ERR_NO_KERNEL,
                    "module '%s': no embedded image runs on device %d (%s, sm_%d); the build "
                    "holds: %s; rebuild with this arch in WARPFFT_CUDA_ARCHS (or `native`), or "
                    "with the `jit` feature%s [%s]",
                    m->name, dev->ordinal, dev->name, dev->sm, have, note, wf_last_error());
}

static warpfft_status load_error(const wf_device *dev, const fatbuild_module *m, attempt *a) {
    if (a->st != WARPFFT_SUCCESS) /* the NVRTC path has said what failed */
        return a->st;
    wf_one_line(a->log);
    char what[1024]; /* the JIT log's start says what failed; the rest is cut */
    snprintf(what, sizeof what, "loading module '%s' on device %d with %s%s%.700s", m->name,
             dev->ordinal, a->step, a->log[0] ? "; JIT log: " : "", a->log);
    warpfft_status st = wf_cuda_error(a->r, what);
    int older = dev->driver_version < warpfft_kernels_cuda_version;
    if (a->r == WF_CUDA_ERROR_UNSUPPORTED_PTX_VERSION || a->r == WF_CUDA_ERROR_INSUFFICIENT_DRIVER)
        return too_old(dev, m->name);
    if (a->r == WF_CUDA_ERROR_NO_BINARY_FOR_GPU)
        return no_image(dev, m);
    if (older && ptx_may_help(a->r)) /* invalid PTX/image from a newer toolkit */
        return too_old(dev, m->name);
    if (a->fatbin_r != WF_CUDA_SUCCESS)
        return wf_error(st, "%s (the PTX fallback, after the fatbin failed with CUDA error %d)",
                        wf_last_error(), a->fatbin_r);
    return st;
}

/* ---- the cache ---- */

/* The entry of (dev, name), or wf_n_mods. */
static size_t find_locked(const wf_device *dev, const char *name) {
    size_t i = 0;
    while (i < wf_n_mods &&
           (wf_mods[i].rec.device != dev->ordinal || strcmp(wf_mods[i].rec.name, name) != 0))
        i++;
    return i;
}

/* The load itself, without the lock (a JIT takes ~0.1-0.3 s: other modules load meanwhile). */
static warpfft_status load_unlocked(const wf_device *dev, const fatbuild_module *m, CUmodule *mod,
                                    const char **image, double *ms) {
    const wf_driver *d = NULL;
    warpfft_status st = wf_driver_get(&d);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    attempt a;
    memset(&a, 0, sizeof a);
    double t0 = now_ms();
    load_images(d, dev, m, &a);
    *ms = now_ms() - t0;
    wf_ctx_leave(dev);
    if (a.r != WF_CUDA_SUCCESS)
        return load_error(dev, m, &a);
    *mod = a.mod;
    *image = a.image;
    return WARPFFT_SUCCESS;
}

/* Marks (dev, m) loading (the lock is held and it has no entry); the caller loads it. */
static warpfft_status claim_locked(const wf_device *dev, const fatbuild_module *m) {
    if (wf_n_mods == wf_cap_mods) {
        size_t cap = wf_cap_mods ? 2 * wf_cap_mods : 32;
        wf_loaded *grown = realloc(wf_mods, cap * sizeof *grown);
        if (!grown)
            return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation for the module cache");
        wf_mods = grown;
        wf_cap_mods = cap;
    }
    wf_loaded *l = &wf_mods[wf_n_mods++];
    memset(l, 0, sizeof *l);
    l->rec = (wf_module_record){dev->ordinal, m->name, "loading", 0.0};
    l->state = WF_MOD_LOADING;
    return WARPFFT_SUCCESS;
}

/* Records the end of this thread's load (the lock is held): the module, or on failure no
 * entry (the next call tries again), and wakes the threads waiting for it. */
static void finish_locked(const wf_device *dev, const char *name, warpfft_status st, CUmodule mod,
                          const char *image, double ms) {
    size_t i = find_locked(dev, name);
    if (i < wf_n_mods && st == WARPFFT_SUCCESS) {
        wf_mods[i].rec.image = image;
        wf_mods[i].rec.load_ms = ms;
        wf_mods[i].mod = mod;
        wf_mods[i].state = WF_MOD_READY;
    } else if (i < wf_n_mods) {
        memmove(&wf_mods[i], &wf_mods[i + 1], (wf_n_mods - i - 1) * sizeof *wf_mods);
        wf_n_mods--;
    }
    pthread_cond_broadcast(&wf_mod_cond);
}

warpfft_status wf_module_get(const wf_device *dev, const char *name, CUmodule *mod) {
    if (!dev || !name || !mod)
        return wf_error(WARPFFT_ERR_INTERNAL, "wf_module_get: NULL argument");
    long idx = wf_embedded_find(name);
    if (idx < 0)
        return wf_error(WARPFFT_ERR_NO_KERNEL,
                        "no kernel module '%s' is embedded in this build (mode %s, %zu modules)",
                        name, warpfft_kernels_mode, warpfft_kernels_n_modules);
    const fatbuild_module *m = &warpfft_kernels_modules[idx];
    pthread_mutex_lock(&wf_mod_lock);
    size_t i;
    /* another thread is loading it: wait (two threads never JIT the same module twice) */
    while ((i = find_locked(dev, name)) < wf_n_mods && wf_mods[i].state == WF_MOD_LOADING)
        pthread_cond_wait(&wf_mod_cond, &wf_mod_lock);
    if (i < wf_n_mods) {
        *mod = wf_mods[i].mod;
        pthread_mutex_unlock(&wf_mod_lock);
        return WARPFFT_SUCCESS;
    }
    warpfft_status st = claim_locked(dev, m);
    pthread_mutex_unlock(&wf_mod_lock);
    if (st != WARPFFT_SUCCESS)
        return st;
    const char *image = NULL;
    double ms = 0.0;
    CUmodule loaded = NULL;
    st = load_unlocked(dev, m, &loaded, &image, &ms);
    pthread_mutex_lock(&wf_mod_lock);
    finish_locked(dev, name, st, loaded, image, ms);
    pthread_mutex_unlock(&wf_mod_lock);
    if (st == WARPFFT_SUCCESS)
        *mod = loaded;
    return st;
}

/* ---- loading several modules at once ---- */

typedef struct preload_job {
    const wf_device *dev;
    char name[64];
    warpfft_status st;
    int started;    /* its thread exists (else wf_modules_preload_finish loads it) */
    char msg[1024]; /* the worker's error message (errors are per thread) */
} preload_job;

enum { WF_PRELOAD_MAX = 8 };
struct wf_preload {
    preload_job jobs[WF_PRELOAD_MAX];
    pthread_t threads[WF_PRELOAD_MAX];
    size_t n_jobs;
};

static void *preload_worker(void *arg) {
    preload_job *j = arg;
    CUmodule mod = NULL;
    j->st = wf_module_get(j->dev, j->name, &mod);
    snprintf(j->msg, sizeof j->msg, "%s", j->st == WARPFFT_SUCCESS ? "" : wf_last_error());
    return NULL;
}

void wf_modules_preload_start(const wf_device *dev, const char *const *names, size_t n,
                              wf_preload **out) {
    *out = NULL;
    wf_preload *pl = calloc(1, sizeof *pl);
    if (!pl) /* the caller's wf_kernel_get loads them, one after another */
        return;
    pthread_mutex_lock(&wf_mod_lock);
    for (size_t k = 0; k < n && pl->n_jobs < WF_PRELOAD_MAX; k++) {
        if (find_locked(dev, names[k]) != wf_n_mods || wf_embedded_find(names[k]) < 0)
            continue;
        int dup = 0;
        for (size_t q = 0; q < pl->n_jobs; q++)
            dup |= strcmp(pl->jobs[q].name, names[k]) == 0;
        if (dup || strlen(names[k]) >= sizeof pl->jobs[0].name)
            continue;
        preload_job *j = &pl->jobs[pl->n_jobs++];
        j->dev = dev;
        snprintf(j->name, sizeof j->name, "%s", names[k]);
    }
    pthread_mutex_unlock(&wf_mod_lock);
    if (pl->n_jobs == 0) {
        free(pl);
        return;
    }
    for (size_t k = 0; k < pl->n_jobs; k++)
        pl->jobs[k].started =
            pthread_create(&pl->threads[k], NULL, preload_worker, &pl->jobs[k]) == 0;
    *out = pl;
}

warpfft_status wf_modules_preload_finish(wf_preload *pl) {
    if (!pl)
        return WARPFFT_SUCCESS;
    for (size_t k = 0; k < pl->n_jobs; k++) {
        if (pl->jobs[k].started)
            pthread_join(pl->threads[k], NULL);
        else
            preload_worker(&pl->jobs[k]); /* no thread to be had: load it here */
    }
    warpfft_status st = WARPFFT_SUCCESS;
    for (size_t k = 0; k < pl->n_jobs && st == WARPFFT_SUCCESS; k++)
        if (pl->jobs[k].st != WARPFFT_SUCCESS)
            st = wf_error(pl->jobs[k].st, "%s", pl->jobs[k].msg);
    free(pl);
    return st;
}

/* 1 when module m has SASS for dev in its fatbin (a load of ~1 ms), 0 when it must be compiled
 * (PTX through the driver, or NVRTC). */
static int has_sass(const wf_device *dev, const fatbuild_module *m) {
    for (size_t i = 0; i < m->n_blobs; i++)
        if (m->blobs[i].kind == FATBUILD_BLOB_FATBIN)
            return strcmp(fatbin_image(&m->blobs[i], dev->sm), "sass") == 0;
    return 0;
}

int wf_modules_need_compile(const wf_device *dev, const char *const *names, size_t n) {
    int need = 0;
    pthread_mutex_lock(&wf_mod_lock);
    for (size_t k = 0; k < n && !need; k++) {
        long i = wf_embedded_find(names[k]);
        need = i >= 0 && find_locked(dev, names[k]) == wf_n_mods &&
               !has_sass(dev, &warpfft_kernels_modules[i]);
    }
    pthread_mutex_unlock(&wf_mod_lock);
    return need;
}

warpfft_status wf_modules_preload(const wf_device *dev, const char *const *names, size_t n) {
    wf_preload *pl = NULL;
    wf_modules_preload_start(dev, names, n, &pl);
    return wf_modules_preload_finish(pl);
}

size_t wf_module_records(wf_module_record *out, size_t max) {
    pthread_mutex_lock(&wf_mod_lock);
    size_t n = 0;
    for (size_t i = 0; i < wf_n_mods; i++) {
        if (wf_mods[i].state != WF_MOD_READY)
            continue; /* still loading */
        if (out && n < max)
            out[n] = wf_mods[i].rec;
        n++;
    }
    pthread_mutex_unlock(&wf_mod_lock);
    return n;
}

/* ---- kernels ---- */

warpfft_status wf_kernel_get(const wf_device *dev, const char *module, const char *kernel,
                             CUfunction *fn) {
    CUmodule mod = NULL;
    const wf_driver *d = NULL;
    warpfft_status st = wf_module_get(dev, module, &mod);
    if (st == WARPFFT_SUCCESS)
        st = wf_driver_get(&d);
    if (st == WARPFFT_SUCCESS && !kernel)
        st = wf_error(WARPFFT_ERR_INTERNAL, "wf_kernel_get: no kernel name");
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    CUresult r = d->cuModuleGetFunction(fn, mod, kernel);
    wf_ctx_leave(dev);
    if (r == WF_CUDA_ERROR_NOT_FOUND)
        return wf_error(WARPFFT_ERR_NO_KERNEL,
                        "kernel '%s' not found in module '%s' (the C core and the embedded "
                        "kernels disagree; see kernels/ABI.md)",
                        kernel, module);
    if (r != WF_CUDA_SUCCESS) {
        char what[256];
        snprintf(what, sizeof what, "cuModuleGetFunction('%s') in module '%s'", kernel, module);
        return wf_cuda_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

warpfft_status wf_launch3(CUfunction fn, const char *kname, unsigned grid_x, unsigned grid_y,
                          unsigned grid_z, unsigned block_x, unsigned shared_bytes, CUstream stream,
                          void **args) {
    /* Empty work (e.g. M = 0) is legal for callers; CUDA rejects empty grids. */
    if (grid_x == 0 || grid_y == 0 || grid_z == 0)
        return WARPFFT_SUCCESS;
    const wf_driver *d = NULL;
    warpfft_status st = wf_driver_get(&d);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (!fn)
        return wf_error(WARPFFT_ERR_INTERNAL, "launching %s: no function", kname ? kname : "?");
    CUresult r = d->cuLaunchKernel(fn, grid_x, grid_y, grid_z, block_x, 1, 1, shared_bytes, stream,
                                   args, NULL);
    if (r != WF_CUDA_SUCCESS) {
        char what[256], z[24] = "";
        if (grid_z > 1)
            snprintf(z, sizeof z, " x %u", grid_z);
        snprintf(what, sizeof what,
                 "launching %s (grid %u x %u%s, block %u, %u bytes of dynamic shared memory)",
                 kname ? kname : "?", grid_x, grid_y, z, block_x, shared_bytes);
        return wf_cuda_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

warpfft_status wf_launch(CUfunction fn, const char *kname, unsigned grid_x, unsigned grid_y,
                         unsigned block_x, unsigned shared_bytes, CUstream stream, void **args) {
    return wf_launch3(fn, kname, grid_x, grid_y, 1, block_x, shared_bytes, stream, args);
}

/* ---- public: what is embedded ---- */

WARPFFT_API const char *warpfft_build_manifest(void) {
    return warpfft_kernels_manifest;
}

WARPFFT_API size_t warpfft_embedded_module_count(void) {
    return warpfft_kernels_n_modules;
}

/* Embedded module `module`, or NULL with the message warpfft_embedded_module gives. */
static const fatbuild_module *embedded_module(size_t module) {
    if (module < warpfft_kernels_n_modules)
        return &warpfft_kernels_modules[module];
    wf_error(WARPFFT_ERR_INVALID_ARG,
             "warpfft_embedded_module: module %zu requested but %zu embedded", module,
             warpfft_kernels_n_modules);
    return NULL;
}

WARPFFT_API warpfft_status warpfft_embedded_module(size_t module, const char **name,
                                                   size_t *n_blobs) {
    wf_clear_error();
    const fatbuild_module *m = embedded_module(module);
    if (!m)
        return WARPFFT_ERR_INVALID_ARG;
    if (name)
        *name = m->name;
    if (n_blobs)
        *n_blobs = m->n_blobs;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_embedded_blob(size_t module, size_t blob, int *kind,
                                                 const char **label, const void **data,
                                                 size_t *size) {
    wf_clear_error();
    const fatbuild_module *m = embedded_module(module);
    if (!m)
        return WARPFFT_ERR_INVALID_ARG;
    size_t n = m->n_blobs;
    if (blob >= n)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_embedded_blob: blob %zu of module %zu ('%s') requested but it "
                        "has %zu",
                        blob, module, warpfft_kernels_modules[module].name, n);
    const fatbuild_blob *b = &warpfft_kernels_modules[module].blobs[blob];
    if (kind)
        *kind = b->kind;
    if (label)
        *label = b->label;
    if (data)
        *data = b->data;
    if (size)
        *size = b->size;
    return WARPFFT_SUCCESS;
}
