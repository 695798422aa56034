/*
 * test_kcache_nvrtc.c — host tests (no GPU) of the NVRTC loader and compile step (nvrtc.c):
 * the search when no NVRTC is found and its message, against the stand-in libnvrtc of
 * standin_nvrtc.c (targets, options, headers, relocatable code, compile errors), and against the
 * toolkit's real libnvrtc when one is installed (compiling needs no GPU). Kept apart from
 * test_kcache.c (the disk cache NVRTC's output goes to), whose main runs these scenarios, each
 * in its own process: NVRTC stays loaded once found.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "runtime/error.h"
#include "runtime/libfind.h"
#include "runtime/nvrtc.h"
#include "test_kcache.h"

/* ---- NVRTC ---- */

static void clear_nvrtc_env(void) {
    unsetenv("WARPFFT_NVRTC_LIB");
    unsetenv("WARPFFT_NVRTC_DEFAULT_PATHS");
    unsetenv("CUDA_PATH");
    unsetenv("CUDA_HOME");
    unsetenv("VIRTUAL_ENV");
}

void sc_nvrtc_missing(void) {
    clear_nvrtc_env();
    setenv("WARPFFT_NVRTC_LIB", "/nonexistent/libnvrtc.so.13", 1);
    setenv("WARPFFT_NVRTC_DEFAULT_PATHS", "0", 1);
    setenv("CUDA_HOME", "/nonexistent-toolkit", 1);
    const wf_nvrtc *nv = NULL;
    CHECK(wf_nvrtc_get(&nv) == WARPFFT_ERR_NO_NVRTC && nv == NULL);
    CHECK(strncmp(warpfft_last_error(), "NVRTC (the CUDA run-time compiler", 33) == 0);
    CHECK_MSG("/nonexistent/libnvrtc.so.13 ($WARPFFT_NVRTC_LIB): no such file");
    CHECK_MSG("pip wheels beside libwarpfft");
    CHECK_MSG("nvidia/{cuda_nvrtc,cu13,cu12}/lib");
    CHECK_MSG("$VIRTUAL_ENV: not set; $CUDA_PATH: not set");
    CHECK_MSG("/nonexistent-toolkit/lib64/libnvrtc.so.{13,12} ($CUDA_HOME): not found");
    CHECK_MSG("skipped (WARPFFT_NVRTC_DEFAULT_PATHS=0)");
    CHECK_MSG("`pip install nvidia-cuda-nvrtc` (CUDA 13) or set WARPFFT_NVRTC_LIB");
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_NO_NVRTC), "WARPFFT_ERR_NO_NVRTC") == 0);
    printf("  NVRTC missing -> %s\n", warpfft_last_error());
    char path[64];
    int major = -1, minor = -1;
    CHECK(wf_nvrtc_loaded_info(path, sizeof path, &major, &minor) == 0 && major == -1);
    const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
    if (access(libm, R_OK) == 0) {
        setenv("WARPFFT_NVRTC_LIB", libm, 1);
        CHECK(wf_nvrtc_get(&nv) == WARPFFT_ERR_NO_NVRTC);
        CHECK_MSG("libm.so.6: loaded, but it has no symbol nvrtcGetErrorString");
    }
    /* Not kept: fixing the environment is enough. */
    setenv("WARPFFT_NVRTC_LIB", standin_lib, 1);
    CHECK(wf_nvrtc_get(&nv) == WARPFFT_SUCCESS && nv && nv->major == 12 && nv->minor == 4);
    CHECK(wf_nvrtc_loaded_info(path, sizeof path, &major, &minor) == 1 && major == 12);
}

static const char *const hdr_names[] = {"inc/k.cuh"};
static const char *const hdr_texts[] = {"#define K_SCALE 2.0f\n"};

static wf_nvrtc_job job(const char *src_name, const char *src, const char *const *opts,
                        size_t n_opts, const wf_nvrtc_target_t *t, int rdc) {
    return (wf_nvrtc_job){"test_mod", src_name, src, 1, hdr_names, hdr_texts, opts, n_opts, t, rdc};
}

void sc_nvrtc_standin(void) {
    clear_nvrtc_env();
    setenv("WARPFFT_NVRTC_LIB", standin_lib, 1);
    const wf_nvrtc *nv = NULL;
    if (wf_nvrtc_get(&nv) != WARPFFT_SUCCESS) {
        CHECK(!"stand-in NVRTC loads");
        return;
    }
    CHECK(nv->n_archs == 5 && nv->archs[4] == 90 && nv->nvrtcGetCUBIN);
    wf_nvrtc_target_t t;
    CHECK(wf_nvrtc_target(nv, 90, &t) == WARPFFT_SUCCESS && t.cubin && t.arch == 90);
    CHECK(strcmp(t.option, "-arch=sm_90") == 0);
    CHECK(wf_nvrtc_target(nv, 86, &t) == WARPFFT_SUCCESS && strcmp(t.option, "-arch=sm_86") == 0);
    /* A GPU newer than this NVRTC: PTX for its newest arch, for the driver to JIT. */
    CHECK(wf_nvrtc_target(nv, 120, &t) == WARPFFT_SUCCESS && !t.cubin && t.arch == 90);
    CHECK(strcmp(t.option, "-arch=compute_90") == 0);
    /* Older than every arch it has: a clear error. */
    CHECK(wf_nvrtc_target(nv, 70, &t) == WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("NVRTC 12.4 (");
    CHECK_MSG("compiles for sm_75 and newer only, not for this GPU's sm_70");

    int (*compiles)(void) = NULL;
    const char *(*last)(void) = NULL;
    void *h = dlopen(standin_lib, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        *(void **)&compiles = dlsym(h, "standin_nvrtc_compiles");
        *(void **)&last = dlsym(h, "standin_nvrtc_last");
    }
    CHECK(compiles && last);
    if (!compiles || !last)
        return;
    static const char *const opts[] = {"-DWF_W=7", "--std=c++17"};
    wf_nvrtc_target_t sm90;
    wf_nvrtc_target(nv, 90, &sm90);
    wf_kimage img;
    wf_nvrtc_job j = job("a.cu", "#include \"inc/k.cuh\"\n", opts, 2, &sm90, 0);
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_SUCCESS && img.kind == WF_KIMAGE_CUBIN);
    CHECK(img.data && img.data[img.size] == '\0' && img.size == strlen((char *)img.data));
    CHECK(strcmp(last(), "a.cu|-DWF_W=7|--std=c++17|-arch=sm_90|headers:inc/k.cuh") == 0);
    wf_kimage_free(&img);
    /* Relocatable device code: PTX, -rdc=true after the arch. */
    j.rdc = 1;
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_SUCCESS && img.kind == WF_KIMAGE_PTX);
    CHECK(strstr((char *)img.data, "|-arch=sm_90|-rdc=true|") != NULL);
    CHECK(img.size == strlen((char *)img.data));
    wf_kimage_free(&img);
    /* A compile error: NO_KERNEL, NVRTC's error name and its log, on one line. */
    int before = compiles();
    j = job("broken.cu", "void f() { wf_no_such_thing(); }\n", NULL, 0, &sm90, 0);
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_ERR_NO_KERNEL && img.data == NULL);
    CHECK(compiles() == before + 1);
    CHECK_MSG("module 'test_mod': NVRTC 12.4 failed to compile broken.cu (-arch=sm_90): "
              "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION; log: broken.cu(1): error: "
              "identifier \"wf_no_such_thing\" is undefined");
    CHECK(strchr(warpfft_last_error(), '\n') == NULL);
    printf("  compile error -> %s\n", warpfft_last_error());
    /* A header that was not handed over. */
    j = job("b.cu", "#include \"inc/missing.cuh\"\n", NULL, 0, &sm90, 0);
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("cannot open source file \"inc/missing.cuh\"");
}

/* The toolkit's NVRTC, when this machine has one: real compiles need no GPU. */
void sc_nvrtc_real(void) {
    clear_nvrtc_env();
    const char *lib = "/usr/local/cuda/lib64/libnvrtc.so";
    const char *cp = getenv("WF_TEST_CUDA_PATH");
    char buf[PATH_MAX];
    if (cp) {
        snprintf(buf, sizeof buf, "%s/lib64/libnvrtc.so", cp);
        lib = buf;
    }
    if (access(lib, R_OK) != 0) {
        printf("  SKIP real NVRTC: no %s on this machine\n", lib);
        return;
    }
    setenv("WARPFFT_NVRTC_LIB", lib, 1);
    const wf_nvrtc *nv = NULL;
    if (wf_nvrtc_get(&nv) != WARPFFT_SUCCESS) {
        CHECK(!"the toolkit's NVRTC loads");
        return;
    }
    printf("  real NVRTC %d.%d: %s (%d archs, sm_%d..sm_%d)\n", nv->major, nv->minor, nv->path,
           nv->n_archs, nv->n_archs ? nv->archs[0] : 0,
           nv->n_archs ? nv->archs[nv->n_archs - 1] : 0);
    CHECK(nv->major >= 12 && nv->n_archs > 0 && nv->nvrtcGetCUBIN);
    wf_nvrtc_target_t t;
    CHECK(wf_nvrtc_target(nv, 90, &t) == WARPFFT_SUCCESS && t.cubin);
    static const char *const opts[] = {"-DWF_OFFSET=1.0f", "--std=c++17"};
    const char *src = "#include \"inc/k.cuh\"\n"
                      "extern \"C\" __global__ void wf_k(float *x) { x[threadIdx.x] = K_SCALE + "
                      "WF_OFFSET; }\n";
    wf_kimage img;
    wf_nvrtc_job j = job("k.cu", src, opts, 2, &t, 0);
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_SUCCESS && img.kind == WF_KIMAGE_CUBIN);
    CHECK(img.size > 4 && memcmp(img.data, "\177ELF", 4) == 0);
    wf_kimage_free(&img);
    j.rdc = 1;
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_SUCCESS && img.kind == WF_KIMAGE_PTX);
    CHECK(img.data && strstr((char *)img.data, ".entry wf_k") &&
          strstr((char *)img.data, ".target sm_90"));
    wf_kimage_free(&img);
    /* Without the option the source needs: NVRTC's own log, one line. */
    j = job("k.cu", src, NULL, 0, &t, 0);
    CHECK(wf_nvrtc_compile(nv, &j, &img) == WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("NVRTC_ERROR_COMPILATION; log: ");
    CHECK_MSG("WF_OFFSET");
    CHECK(strchr(warpfft_last_error(), '\n') == NULL);
    printf("  real compile error -> %.200s\n", warpfft_last_error());
}
