/*
 * nvrtc.c — finds NVRTC at run time (like cuFFT: pip wheel nvidia-cuda-nvrtc, $CUDA_PATH,
 * /usr/local/cuda, the system loader; CUDA 13 and 12 sonames) and compiles a kernel source for
 * the GPU present: a CUBIN for -arch=sm_XX when this NVRTC can write one for that arch, else PTX
 * for the newest -arch=compute_XX it supports at or below the GPU's, which the driver JITs.
 *
 * Caching: as for cuFFT, a successful load is kept for the process and a failed search is not
 * (a program can set WARPFFT_NVRTC_LIB and retry).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/libfind.h"
#include "runtime/nvrtc.h"

#define WF_N(a) (sizeof(a) / sizeof((a)[0]))

#define WF_NVRTC_SYM(field, required)                                                              \
    { #field, offsetof(wf_nvrtc, field), required }
static const struct {
    const char *name;
    size_t offset;
    int required; /* 0: newer entry points, NULL in the table when absent */
} wf_nvrtc_syms[] = {
    WF_NVRTC_SYM(nvrtcGetErrorString, 1),
    WF_NVRTC_SYM(nvrtcVersion, 1),
    WF_NVRTC_SYM(nvrtcCreateProgram, 1),
    WF_NVRTC_SYM(nvrtcDestroyProgram, 1),
    WF_NVRTC_SYM(nvrtcCompileProgram, 1),
    WF_NVRTC_SYM(nvrtcGetProgramLogSize, 1),
    WF_NVRTC_SYM(nvrtcGetProgramLog, 1),
    WF_NVRTC_SYM(nvrtcGetPTXSize, 1),
    WF_NVRTC_SYM(nvrtcGetPTX, 1),
    WF_NVRTC_SYM(nvrtcGetCUBINSize, 0),
    WF_NVRTC_SYM(nvrtcGetCUBIN, 0),
    WF_NVRTC_SYM(nvrtcGetNumSupportedArchs, 0),
    WF_NVRTC_SYM(nvrtcGetSupportedArchs, 0),
};
#undef WF_NVRTC_SYM

/* Sonames tried in each directory: CUDA 13's, then CUDA 12's. */
static const char *const wf_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
/* Wheel layouts: nvidia-cuda-nvrtc-cu12 (nvidia/cuda_nvrtc), CUDA 13 wheels (nvidia/cu13),
 * cu12 bundles. */
static const char *const wf_nvrtc_wheel_dirs[] = {"nvidia/cuda_nvrtc/lib", "nvidia/cu13/lib",
                                                  "nvidia/cu12/lib"};

static pthread_mutex_t wf_nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_nvrtc wf_nvrtc_tab; /* valid once wf_nvrtc_loaded; never unloaded */
static int wf_nvrtc_loaded;   /* guarded by wf_nvrtc_lock */

static void atfork_child(void) {
    pthread_mutex_init(&wf_nvrtc_lock, NULL);
}

/* Registered at load: a fork() while another thread holds the lock leaves it held in the child
 * (loader.c says what a child may still do). */
__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

/* wf_lib_spec.accept: resolves the symbols into the wf_nvrtc at ctx, asks the version and the
 * archs this NVRTC compiles for. */
static int nvrtc_accept(void *h, void *ctx, char *why, size_t why_len) {
    wf_nvrtc *t = ctx;
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < WF_N(wf_nvrtc_syms); i++) {
        void *p = dlsym(h, wf_nvrtc_syms[i].name);
        if (!p && wf_nvrtc_syms[i].required) {
            snprintf(why, why_len, "it has no symbol %s", wf_nvrtc_syms[i].name);
            return 0;
        }
        memcpy((char *)t + wf_nvrtc_syms[i].offset, &p, sizeof p);
    }
    nvrtcResult r = t->nvrtcVersion(&t->major, &t->minor);
    if (r != 0) {
        snprintf(why, why_len, "nvrtcVersion failed (nvrtcResult %d)", r);
        return 0;
    }
    int n = 0;
    if (t->nvrtcGetNumSupportedArchs && t->nvrtcGetSupportedArchs &&
        t->nvrtcGetNumSupportedArchs(&n) == 0 && n > 0) {
        int *all = calloc((size_t)n, sizeof *all);
        if (all && t->nvrtcGetSupportedArchs(all) == 0) {
            for (int i = 0; i < n && t->n_archs < (int)WF_N(t->archs); i++)
                t->archs[t->n_archs++] = all[i];
        }
        free(all);
    }
    return 1;
}

static warpfft_status nvrtc_search(wf_nvrtc *out) {
    const wf_lib_spec spec = {wf_nvrtc_names,
                              WF_N(wf_nvrtc_names),
                              "libnvrtc.so.{13,12}",
                              wf_nvrtc_wheel_dirs,
                              WF_N(wf_nvrtc_wheel_dirs),
                              "nvidia/{cuda_nvrtc,cu13,cu12}/lib",
                              "WARPFFT_NVRTC_LIB",
                              "WARPFFT_NVRTC_DEFAULT_PATHS",
                              nvrtc_accept,
                              out};
    static wf_lib_found found; /* large; only used under wf_nvrtc_lock */
    char tried[3072];
    if (wf_lib_search(&spec, &found, tried, sizeof tried)) {
        snprintf(out->path, sizeof out->path, "%s", found.path);
        return WARPFFT_SUCCESS;
    }
    return wf_error(WARPFFT_ERR_NO_NVRTC,
                    "NVRTC (the CUDA run-time compiler this build compiles its kernels with) not "
                    "found; tried: %s; install it with `pip install nvidia-cuda-nvrtc` (CUDA 13) "
                    "or set WARPFFT_NVRTC_LIB to the path of libnvrtc.so",
                    tried);
}

warpfft_status wf_nvrtc_get(const wf_nvrtc **nv) {
    warpfft_status st = WARPFFT_SUCCESS;
    pthread_mutex_lock(&wf_nvrtc_lock);
    if (!wf_nvrtc_loaded) {
        st = nvrtc_search(&wf_nvrtc_tab);
        wf_nvrtc_loaded = st == WARPFFT_SUCCESS;
    }
    pthread_mutex_unlock(&wf_nvrtc_lock);
    if (st == WARPFFT_SUCCESS && nv)
        *nv = &wf_nvrtc_tab;
    return st;
}

int wf_nvrtc_loaded_info(char *path, size_t path_len, int *major, int *minor) {
    pthread_mutex_lock(&wf_nvrtc_lock);
    int ok = wf_nvrtc_loaded;
    if (ok) {
        snprintf(path, path_len, "%s", wf_nvrtc_tab.path);
        *major = wf_nvrtc_tab.major;
        *minor = wf_nvrtc_tab.minor;
    }
    pthread_mutex_unlock(&wf_nvrtc_lock);
    return ok;
}

/* ---- the target ---- */

warpfft_status wf_nvrtc_target(const wf_nvrtc *nv, int sm, wf_nvrtc_target_t *t) {
    memset(t, 0, sizeof *t);
    int can_cubin = nv->nvrtcGetCUBIN && nv->nvrtcGetCUBINSize;
    if (nv->n_archs == 0) { /* an NVRTC that cannot list its archs: try the GPU's own */
        t->arch = sm;
        t->cubin = can_cubin;
    } else {
        int best = 0;
        for (int i = 0; i < nv->n_archs; i++)
            if (nv->archs[i] <= sm && nv->archs[i] > best)
                best = nv->archs[i];
        if (best == 0)
            return wf_error(WARPFFT_ERR_NO_KERNEL,
                            "NVRTC %d.%d (%s) compiles for sm_%d and newer only, not for this "
                            "GPU's sm_%d; use an NVRTC of an older CUDA release (e.g. `pip "
                            "install nvidia-cuda-nvrtc-cu12`) or a build with embedded kernels "
                            "(features aot/jit)",
                            nv->major, nv->minor, nv->path, nv->archs[0], sm);
        t->arch = best;
        /* A newer GPU than this NVRTC knows: PTX for the newest arch it has, JIT by the driver. */
        t->cubin = can_cubin && best == sm;
    }
    snprintf(t->option, sizeof t->option, "-arch=%s_%d", t->cubin ? "sm" : "compute", t->arch);
    return WARPFFT_SUCCESS;
}

/* ---- compiling ---- */

static warpfft_status nvrtc_fail(const wf_nvrtc *nv, const char *module, const char *src,
                                 const char *arch, const char *step, nvrtcResult r,
                                 nvrtcProgram prog) {
    char log[1024] = "";
    size_t n = 0;
    if (prog && nv->nvrtcGetProgramLogSize(prog, &n) == 0 && n > 1) {
        char *full = malloc(n);
        if (full && nv->nvrtcGetProgramLog(prog, full) == 0) {
            full[n - 1] = '\0';
            snprintf(log, sizeof log, "%s", full);
        }
        free(full);
        wf_one_line(log);
    }
    const char *name = nv->nvrtcGetErrorString(r);
    warpfft_status st =
        r == 1 /* NVRTC_ERROR_OUT_OF_MEMORY */ ? WARPFFT_ERR_OUT_OF_MEMORY : WARPFFT_ERR_NO_KERNEL;
    return wf_error(st, "module '%s': NVRTC %d.%d failed to compile %s (%s): %s: %s%s%.700s",
                    module, nv->major, nv->minor, src, arch, step, name ? name : "unknown error",
                    log[0] ? "; log: " : "", log);
}

warpfft_status wf_nvrtc_compile(const wf_nvrtc *nv, const wf_nvrtc_job *job, wf_kimage *out) {
    memset(out, 0, sizeof *out);
    const char *arch = job->target->option;
    size_t n_opts = job->n_options + 2;
    const char **opts = calloc(n_opts, sizeof *opts);
    if (!opts)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation for NVRTC options");
    size_t k = 0;
    for (size_t i = 0; i < job->n_options; i++)
        opts[k++] = job->options[i];
    opts[k++] = arch;
    if (job->rdc)
        opts[k++] = "-rdc=true";
    nvrtcProgram prog = NULL;
    warpfft_status st = WARPFFT_SUCCESS;
    nvrtcResult r =
        nv->nvrtcCreateProgram(&prog, job->source, job->source_name, (int)job->n_headers,
                               job->header_texts, job->header_names);
    if (r != 0) {
        st = nvrtc_fail(nv, job->module, job->source_name, arch, "nvrtcCreateProgram", r, NULL);
        prog = NULL;
    } else if ((r = nv->nvrtcCompileProgram(prog, (int)k, opts)) != 0) {
        st = nvrtc_fail(nv, job->module, job->source_name, arch, "nvrtcCompileProgram", r, prog);
    } else {
        int cubin = job->target->cubin && !job->rdc;
        size_t size = 0;
        r = cubin ? nv->nvrtcGetCUBINSize(prog, &size) : nv->nvrtcGetPTXSize(prog, &size);
        /* PTX sizes count the NUL; one byte more keeps every image NUL-terminated. */
        unsigned char *data = r == 0 && size > 0 ? malloc(size + 1) : NULL;
        if (r == 0 && size > 0 && !data) {
            st = wf_error(WARPFFT_ERR_OUT_OF_MEMORY,
                          "host allocation of %zu bytes for the "
                          "compiled module",
                          size + 1);
        } else if (r == 0 && size == 0) {
            st = wf_error(WARPFFT_ERR_NO_KERNEL, "module '%s': NVRTC produced an empty image",
                          job->module);
        } else if (r == 0) {
            r = cubin ? nv->nvrtcGetCUBIN(prog, (char *)data) : nv->nvrtcGetPTX(prog, (char *)data);
            data[size] = '\0';
        }
        if (st == WARPFFT_SUCCESS && r != 0)
            st = nvrtc_fail(nv, job->module, job->source_name, arch,
                            cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", r, prog);
        if (st == WARPFFT_SUCCESS) {
            out->kind = cubin ? WF_KIMAGE_CUBIN : WF_KIMAGE_PTX;
            out->data = data;
            out->size = cubin ? size : strlen((const char *)data);
        } else {
            free(data);
        }
    }
    if (prog)
        nv->nvrtcDestroyProgram(&prog);
    free(opts);
    return st;
}
