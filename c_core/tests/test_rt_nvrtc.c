/*
 * test_rt_nvrtc.c — the NVRTC path of module.c end to end: modules embedded as sources only
 * (fake_kernels.c: fill_nvrtc, scale_nvrtc with two sources linked, nvrtc_fallback with a
 * fatbin for sm_80 only, nvrtc_broken) compiled on first use and kept in the disk cache.
 *
 * mode "standin" (run_tests.sh, no GPU): the stand-in libcuda.so.1 on LD_LIBRARY_PATH and the
 * stand-in libnvrtc ($WARPFFT_NVRTC_LIB); scenarios in their own processes share one cache
 * directory ($WF_TEST_KCACHE): cold ("nvrtc", compiled), warm ("nvrtc-cache", no compile),
 * corrupt entries (compiled again), cache off, NVRTC missing.
 * mode "gpu": the real driver and NVRTC; $WF_TEST_NVRTC says whether the cache directory
 * ($WF_TEST_KCACHE) is "cold" or "warm" (run_tests.sh runs the GPU binary twice).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>

#include "test_runtime.h"

static int (*standin_compiles)(void);
static const char *(*standin_last)(void);

static const wf_module_record *record_of(const char *name) {
    static wf_module_record r[64];
    size_t n = wf_module_records(r, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (r[i].device == 0 && strcmp(r[i].name, name) == 0)
            return &r[i];
    return NULL;
}

/* Loads `module` and checks the image recorded for it. */
static void expect_image(const wf_device *dev, const char *module, const char *image) {
    CUmodule m = NULL;
    if (!CHECK_ST(wf_module_get(dev, module, &m), WARPFFT_SUCCESS))
        return;
    const wf_module_record *rec = record_of(module);
    int ok = rec && strcmp(rec->image, image) == 0;
    CHECK(ok, "module %s: last error: %s", module, warpfft_last_error());
    if (rec)
        printf("  module %-15s image %-12s %.3f ms%s\n", module, rec->image, rec->load_ms,
               ok ? "" : " (unexpected)");
}

/* Entries in the cache directory. */
static int n_entries(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        n += k > 4 && strcmp(e->d_name + k - 4, ".wfk") == 0;
    }
    if (d)
        closedir(d);
    return n;
}

/* Flips one payload byte of every entry. */
static int corrupt_all(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX + 300];
    while (d && (e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        if (k <= 4 || strcmp(e->d_name + k - 4, ".wfk") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDWR);
        unsigned char b = 0;
        if (fd >= 0 && pread(fd, &b, 1, 70) == 1) {
            b ^= 1;
            n += pwrite(fd, &b, 1, 70) == 1;
        }
        if (fd >= 0)
            close(fd);
    }
    if (d)
        closedir(d);
    return n;
}

static char *info(void) {
    size_t need = 0;
    warpfft_runtime_info(0, NULL, 0, &need);
    char *buf = malloc(need);
    CHECK_ST(warpfft_runtime_info(0, buf, need, NULL), WARPFFT_SUCCESS);
    CHECK(json_valid(buf));
    return buf;
}

/* Whether warpfft_runtime_info's JSON (info()) contains each string of the NULL-terminated
 * list; prints the JSON when one is missing. INFO_HAS adds the NULL. */
static int info_has_(const char *first, ...) {
    char *buf = info();
    int ok = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        ok = ok && strstr(buf, s) != NULL;
    va_end(ap);
    if (!ok)
        printf("  runtime_info: %s\n", buf);
    free(buf);
    return ok;
}
#define INFO_HAS(...) info_has_(__VA_ARGS__, (const char *)NULL)

/* ---- stand-in scenarios ---- */

static const wf_device *standin_setup(const char *cache) {
    const wf_device *dev = NULL;
    if (cache)
        setenv("WARPFFT_CACHE_DIR", cache, 1);
    void *h = dlopen(getenv("WARPFFT_NVRTC_LIB"), RTLD_NOW | RTLD_LOCAL);
    if (h) {
        *(void **)&standin_compiles = dlsym(h, "standin_nvrtc_compiles");
        *(void **)&standin_last = dlsym(h, "standin_nvrtc_last");
    }
    CHECK(standin_compiles && standin_last);
    if (!CHECK_ST(wf_device_get(0, &dev), WARPFFT_SUCCESS) || !standin_compiles)
        return NULL;
    return dev;
}

static void sc_cold(void) {
    const char *cache = getenv("WF_TEST_KCACHE");
    const wf_device *dev = standin_setup(cache);
    if (!dev)
        return;
    expect_image(dev, "fill_nvrtc", "nvrtc");
    CHECK(standin_compiles() == 1);
    CHECK(strcmp(standin_last(), "fill.cu|-DWF_TEST_SCALE=1|--std=c++17|-arch=sm_90|headers:"
                                 "broken.cu,fill.cu,helper.cu,scale.cu,test/wf_test.cuh") == 0);
    expect_image(dev, "scale_nvrtc", "nvrtc"); /* two sources, -rdc=true each, then cuLink */
    CHECK(standin_compiles() == 3);
    CHECK(strncmp(standin_last(), "helper.cu|-arch=sm_90|-rdc=true|", 32) == 0);
    CHECK(n_entries(cache) == 2);
    CUmodule m = NULL;
    CHECK_ST(wf_module_get(dev, "nvrtc_broken", &m), WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("module 'nvrtc_broken': NVRTC 12.4 failed to compile broken.cu (-arch=sm_90): "
              "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION; log: broken.cu(1): error: ");
    CHECK(n_entries(cache) == 2 && record_of("nvrtc_broken") == NULL);
    char *buf = info();
    CHECK(strstr(buf, "\"name\":\"fill_nvrtc\",\"image\":\"nvrtc\"") != NULL);
    CHECK(strstr(buf, "\"nvrtc\":{\"path\":\"/") && strstr(buf, "\"version\":\"12.4\""));
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "\"kernel_cache\":{\"dir\":\"%s\",\"note\":\"\"}", cache);
    CHECK(strstr(buf, want) != NULL);
    printf("  runtime_info: %s\n", buf);
    free(buf);
}

static void sc_warm(void) {
    const char *cache = getenv("WF_TEST_KCACHE");
    const wf_device *dev = standin_setup(cache);
    if (!dev)
        return;
    expect_image(dev, "fill_nvrtc", "nvrtc-cache");
    expect_image(dev, "scale_nvrtc", "nvrtc-cache");
    CHECK(standin_compiles() == 0);
    CUfunction fn = NULL; /* the stand-in driver knows the kernels by name */
    CHECK_ST(wf_kernel_get(dev, "fill_nvrtc", "wf_test_fill", &fn), WARPFFT_SUCCESS);
    CHECK(INFO_HAS("\"name\":\"scale_nvrtc\",\"image\":\"nvrtc-cache\""));
}

static void sc_corrupt(void) {
    const char *cache = getenv("WF_TEST_KCACHE");
    CHECK(corrupt_all(cache) == 2);
    const wf_device *dev = standin_setup(cache);
    if (!dev)
        return;
    expect_image(dev, "fill_nvrtc", "nvrtc"); /* never loaded: compiled again */
    expect_image(dev, "scale_nvrtc", "nvrtc");
    CHECK(standin_compiles() == 3 && n_entries(cache) == 2);
    CHECK(INFO_HAS("removed the invalid cache entry", "payload checksum mismatch"));
}

static void sc_cache_off(void) {
    const wf_device *dev = standin_setup("");
    if (!dev)
        return;
    expect_image(dev, "fill_nvrtc", "nvrtc");
    CHECK(INFO_HAS("\"kernel_cache\":{\"dir\":null,\"note\":\"disabled (WARPFFT_CACHE_DIR is "
                   "set and empty)\"}"));
}

/* A cache directory that cannot be created: compiled every time, and runtime_info says why. */
static void sc_cache_unusable(void) {
    const wf_device *dev = standin_setup("/proc/version/warpfft");
    if (!dev)
        return;
    expect_image(dev, "fill_nvrtc", "nvrtc");
    CHECK(INFO_HAS("cache directory unusable: cannot create /proc/version"));
}

static void sc_missing(void) {
    setenv("WARPFFT_CACHE_DIR", "", 1); /* the embedded PTX below: linked, not cached */
    setenv("WARPFFT_NVRTC_LIB", "/nonexistent/libnvrtc.so.13", 1);
    setenv("WARPFFT_NVRTC_DEFAULT_PATHS", "0", 1);
    unsetenv("CUDA_PATH");
    unsetenv("CUDA_HOME");
    unsetenv("VIRTUAL_ENV");
    const wf_device *dev = NULL;
    if (!CHECK_ST(wf_device_get(0, &dev), WARPFFT_SUCCESS))
        return;
    CUmodule m = NULL;
    CHECK_ST(wf_module_get(dev, "fill_nvrtc", &m), WARPFFT_ERR_NO_NVRTC);
    CHECK_MSG("module 'fill_nvrtc' has no embedded image for this GPU (sm_90) and must be "
              "compiled: NVRTC (the CUDA run-time compiler");
    CHECK_MSG("/nonexistent/libnvrtc.so.13 ($WARPFFT_NVRTC_LIB): no such file");
    CHECK_MSG("skipped (WARPFFT_NVRTC_DEFAULT_PATHS=0)");
    printf("  NVRTC missing -> %s\n", warpfft_last_error());
    expect_image(dev, "fill_jit", "ptx-link"); /* embedded images need no NVRTC */
    CHECK(INFO_HAS("\"nvrtc\":null"));
}

void test_nvrtc_standin(void) {
    run_isolated("nvrtc-cold", sc_cold);
    run_isolated("nvrtc-warm", sc_warm);
    run_isolated("nvrtc-corrupt", sc_corrupt);
    run_isolated("nvrtc-warm-again", sc_warm);
    run_isolated("nvrtc-cache-off", sc_cache_off);
    run_isolated("nvrtc-cache-bad", sc_cache_unusable);
    run_isolated("nvrtc-missing", sc_missing);
}

/* ---- on a GPU ---- */

void gpu_nvrtc(const wf_device *dev) {
    const char *cache = getenv("WF_TEST_KCACHE"), *phase = getenv("WF_TEST_NVRTC");
    const wf_nvrtc *nv = NULL;
    if (!cache || !phase) {
        printf("  SKIP NVRTC modules: WF_TEST_KCACHE and WF_TEST_NVRTC not set\n");
        return;
    }
    if (wf_nvrtc_get(&nv) != WARPFFT_SUCCESS) {
        printf("  SKIP NVRTC modules: %s\n", warpfft_last_error());
        return;
    }
    setenv("WARPFFT_CACHE_DIR", cache, 1);
    const char *img = strcmp(phase, "warm") == 0 ? "nvrtc-cache" : "nvrtc";
    printf("  NVRTC %d.%d (%s), cache %s (%s)\n", nv->major, nv->minor, nv->path, cache, phase);
    const long long n = 100000;
    void *buf = NULL;
    if (!CHECK_ST(warpfft_malloc(0, (size_t)n * sizeof(float), &buf), WARPFFT_SUCCESS))
        return;
    CUdeviceptr dx = (CUdeviceptr)(uintptr_t)buf;
    expect_image(dev, "fill_nvrtc", img);
    gpu_run(dev, "fill_nvrtc", "wf_test_fill", 1.5f, dx, n, 1.5f); /* WF_TEST_SCALE = 1 */
    expect_image(dev, "scale_nvrtc", img);
    gpu_run(dev, "scale_nvrtc", "wf_test_scale", 2.0f, dx, n, 5.0f); /* (1.5 + 1) * 2 */
    if (dev->sm / 10 != 8) { /* no sm_8x image: the embedded fatbin does not fit */
        expect_image(dev, "nvrtc_fallback", img);
        gpu_run(dev, "nvrtc_fallback", "wf_test_fill", 4.0f, dx, n, 4.0f);
    }
    CUmodule m = NULL;
    CHECK_ST(wf_module_get(dev, "nvrtc_broken", &m), WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("failed to compile broken.cu");
    CHECK_MSG("wf_no_such_thing");
    CHECK(strchr(warpfft_last_error(), '\n') == NULL);
    CHECK(n_entries(cache) == (dev->sm / 10 != 8 ? 3 : 2));
    CHECK_ST(warpfft_free(0, buf), WARPFFT_SUCCESS);
}
