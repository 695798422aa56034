/*
 * cufft.c — finds and loads cuFFT at run time, in the order warpfft.h documents for
 * warpfft_cufft_probe.
 *
 * cuFFT is opened with dlopen, never linked, because it ships in several places (NVIDIA pip
 * wheels, a toolkit, the system) and users should not need LD_LIBRARY_PATH.
 *
 * Caching: a successful load is kept for the process (cuFFT plans hold pointers into it). A
 * failed search is not cached: the next call searches again, so a program (or test) can fix the
 * environment, e.g. set WARPFFT_CUFFT_LIB, and retry without restarting.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cufft.h"
#include "runtime/error.h"
#include "runtime/libfind.h"

#define WF_CUFFT_SYM(field)                                                                        \
    { #field, offsetof(wf_cufft, field) }
static const struct {
    const char *name;
    size_t offset;
} wf_cufft_syms[] = {
    WF_CUFFT_SYM(cufftCreate),
    WF_CUFFT_SYM(cufftDestroy),
    WF_CUFFT_SYM(cufftSetAutoAllocation),
    WF_CUFFT_SYM(cufftMakePlanMany64),
    WF_CUFFT_SYM(cufftSetWorkArea),
    WF_CUFFT_SYM(cufftSetStream),
    WF_CUFFT_SYM(cufftExecC2C),
    WF_CUFFT_SYM(cufftExecZ2Z),
    WF_CUFFT_SYM(cufftExecR2C),
    WF_CUFFT_SYM(cufftExecC2R),
    WF_CUFFT_SYM(cufftExecD2Z),
    WF_CUFFT_SYM(cufftExecZ2D),
    WF_CUFFT_SYM(cufftGetVersion),
};
#undef WF_CUFFT_SYM

/* Sonames tried in each directory: CUDA 13's cuFFT 12, then CUDA 12's cuFFT 11. */
static const char *const wf_cufft_names[] = {"libcufft.so.12", "libcufft.so.11"};
/* Wheel layouts: nvidia-cufft-cu12 (nvidia/cufft), CUDA 13 wheels (nvidia/cu13), cu12 bundles. */
static const char *const wf_wheel_dirs[] = {"nvidia/cufft/lib", "nvidia/cu13/lib",
                                            "nvidia/cu12/lib"};
#define WF_N(a) (sizeof(a) / sizeof((a)[0]))

static pthread_mutex_t wf_cufft_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_cufft wf_cufft_tab; /* valid once wf_cufft_loaded; never unloaded */
static int wf_cufft_loaded;   /* guarded by wf_cufft_lock */

static void atfork_child(void) {
    pthread_mutex_init(&wf_cufft_lock, NULL);
}

/* Registered at load: a fork() while another thread holds the lock leaves it held in the child
 * (loader.c says what a child may still do). */
__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

/* wf_lib_spec.accept: resolves every symbol into the wf_cufft at ctx and asks the version. */
static int cufft_accept(void *h, void *ctx, char *why, size_t why_len) {
    wf_cufft t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < WF_N(wf_cufft_syms); i++) {
        void *p = dlsym(h, wf_cufft_syms[i].name);
        if (!p) {
            snprintf(why, why_len, "it has no symbol %s", wf_cufft_syms[i].name);
            return 0;
        }
        memcpy((char *)&t + wf_cufft_syms[i].offset, &p, sizeof p);
    }
    cufftResult r = t.cufftGetVersion(&t.version);
    if (r != 0) {
        snprintf(why, why_len, "cufftGetVersion failed (cufftResult %d)", r);
        return 0;
    }
    *(wf_cufft *)ctx = t;
    return 1;
}

static warpfft_status cufft_search(wf_cufft *out) {
    wf_cufft t;
    memset(&t, 0, sizeof t);
    const wf_lib_spec spec = {wf_cufft_names,        WF_N(wf_cufft_names),
                              "libcufft.so.{12,11}", wf_wheel_dirs,
                              WF_N(wf_wheel_dirs),   "nvidia/{cufft,cu13,cu12}/lib",
                              "WARPFFT_CUFFT_LIB",   "WARPFFT_CUFFT_DEFAULT_PATHS",
                              cufft_accept,          &t};
    static wf_lib_found found; /* large; only used under wf_cufft_lock */
    char tried[3072];
    if (wf_lib_search(&spec, &found, tried, sizeof tried)) {
        snprintf(t.path, sizeof t.path, "%s", found.path);
        *out = t;
        return WARPFFT_SUCCESS;
    }
    return wf_error(WARPFFT_ERR_NO_CUFFT,
                    "cuFFT not found; tried: %s; install it with `pip install nvidia-cufft` "
                    "(CUDA 13) or set WARPFFT_CUFFT_LIB to the path of libcufft.so",
                    tried);
}

warpfft_status wf_cufft_get(const wf_cufft **cufft) {
    warpfft_status st = WARPFFT_SUCCESS;
    pthread_mutex_lock(&wf_cufft_lock);
    if (!wf_cufft_loaded) {
        st = cufft_search(&wf_cufft_tab);
        wf_cufft_loaded = st == WARPFFT_SUCCESS;
    }
    pthread_mutex_unlock(&wf_cufft_lock);
    if (st == WARPFFT_SUCCESS && cufft)
        *cufft = &wf_cufft_tab;
    return st;
}

WARPFFT_API warpfft_status warpfft_cufft_probe(char *path, size_t path_len, int *version) {
    wf_clear_error();
    if (!path && path_len > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_cufft_probe: path is NULL but "
                        "path_len is %zu",
                        path_len);
    const wf_cufft *c = NULL;
    warpfft_status st = wf_cufft_get(&c);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (path && path_len > 0)
        snprintf(path, path_len, "%s", c->path);
    if (version)
        *version = c->version;
    return WARPFFT_SUCCESS;
}

warpfft_status wf_cufft_error(cufftResult r, const char *what) {
    static const char *const names[] = {
        "CUFFT_SUCCESS",
        "CUFFT_INVALID_PLAN",
        "CUFFT_ALLOC_FAILED",
        "CUFFT_INVALID_TYPE",
        "CUFFT_INVALID_VALUE",
        "CUFFT_INTERNAL_ERROR",
        "CUFFT_EXEC_FAILED",
        "CUFFT_SETUP_FAILED",
        "CUFFT_INVALID_SIZE",
        "CUFFT_UNALIGNED_DATA",
        "CUFFT_INCOMPLETE_PARAMETER_LIST",
        "CUFFT_INVALID_DEVICE",
        "CUFFT_PARSE_ERROR",
        "CUFFT_NO_WORKSPACE",
        "CUFFT_NOT_IMPLEMENTED",
        "CUFFT_LICENSE_ERROR",
        "CUFFT_NOT_SUPPORTED",
        "CUFFT_MISSING_DEPENDENCY",
        "CUFFT_NVRTC_FAILURE",
        "CUFFT_NVJITLINK_FAILURE",
        "CUFFT_NVSHMEM_FAILURE",
    };
    enum { CUFFT_ALLOC_FAILED = 2 };
    warpfft_status st = r == CUFFT_ALLOC_FAILED ? WARPFFT_ERR_OUT_OF_MEMORY : WARPFFT_ERR_CUFFT;
    if (!what)
        what = "cuFFT call";
    if (r >= 0 && (size_t)r < WF_N(names))
        return wf_error(st, "%s: %s", what, names[r]);
    return wf_error(st, "%s: cufftResult %d", what, r);
}
