/*
 * test_rt_driver.c — the runtime against the driver: without one (or with the toolkit's stub),
 * every entry point fails cleanly, from several threads at once; with a GPU, devices, memory,
 * module loading (SASS, PTX JIT, cuLink, fallbacks), kernel lookup and launch, runtime info.
 */
#include "test_runtime.h"

/* The barrier run_together's threads start from. */
static pthread_barrier_t together;

/* Runs fn on n threads at once, thread i on the i-th of the n arguments of `size` bytes at
 * args; fn waits on `together` first. Returns when all have finished. */
static void run_together(int n, void *(*fn)(void *), void *args, size_t size) {
    pthread_t t[8];
    pthread_barrier_init(&together, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, fn, (char *)args + (size_t)i * size);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&together);
}

/* ---- no driver / stub driver ---- */

typedef struct init_arg {
    int status;
    char msg[256];
} init_arg;

static void *init_thread(void *p) {
    init_arg *a = p;
    pthread_barrier_wait(&together);
    a->status = warpfft_init(0);
    snprintf(a->msg, sizeof a->msg, "%s", warpfft_last_error());
    return NULL;
}

/* The first driver use in the process, from several threads at once. */
static void test_concurrent_first_init(int want, const char *key) {
    enum { N = 6 };
    init_arg a[N];
    run_together(N, init_thread, a, sizeof a[0]);
    for (int i = 0; i < N; i++)
        CHECK(a[i].status == want && strstr(a[i].msg, key) != NULL);
}

static void test_runtime_info_nogpu(const char *key) {
    size_t need = 0, need2 = 0;
    CHECK_ST(warpfft_runtime_info(0, NULL, 0, &need), WARPFFT_ERR_NO_DRIVER);
    CHECK(need > 100);
    char *buf = malloc(need);
    CHECK_ST(warpfft_runtime_info(0, buf, need, &need2), WARPFFT_ERR_NO_DRIVER);
    CHECK(strstr(warpfft_last_error(), key) != NULL); /* the device message, not cuFFT's */
    CHECK(need2 == need && strlen(buf) == need - 1);
    CHECK(json_valid(buf));
    CHECK(strstr(buf, "\"gpu_error\":\"") && strstr(buf, key));
    CHECK(strstr(buf, "\"driver_version\":null") && strstr(buf, "\"device\":null"));
    CHECK(strstr(buf, "\"modules\":[]") && strstr(buf, "\"version\":\"0.1.0\""));
    CHECK(strstr(buf, "\"manifest\":" FAKE_MANIFEST));
    CHECK(strstr(buf, "\"cufft\":{\"path\":\"/") || strstr(buf, "\"cufft_error\":\""));
    printf("  runtime_info: %s\n", buf);
    char small[16];
    CHECK_ST(warpfft_runtime_info(0, small, sizeof small, &need2), WARPFFT_ERR_NO_DRIVER);
    CHECK(need2 == need && strlen(small) == 15 && memcmp(small, buf, 15) == 0);
    CHECK_ST(warpfft_runtime_info(0, NULL, 5, NULL), WARPFFT_ERR_INVALID_ARG);
    char *big = malloc(need + 64);
    CHECK_ST(warpfft_runtime_info(-3, big, need + 64, NULL), WARPFFT_ERR_NO_DRIVER);
    CHECK(json_valid(big) && strstr(big, "\"device_requested\":-3"));
    free(big);
    free(buf);
}

static void test_nogpu(int stub) {
    const char *key = stub ? "stub libcuda was loaded" : "libcuda.so.1";
    char first[4096];
    const wf_driver *drv = NULL;
    CHECK_ST(warpfft_init(0), WARPFFT_ERR_NO_DRIVER);
    CHECK(strstr(warpfft_last_error(), key) != NULL);
    printf("  init -> %s\n", warpfft_last_error());
    snprintf(first, sizeof first, "%s", warpfft_last_error());
    CHECK_ST(warpfft_init(0), WARPFFT_ERR_NO_DRIVER);
    CHECK(strcmp(first, warpfft_last_error()) == 0);
    CHECK_ST(warpfft_init(5), WARPFFT_ERR_NO_DRIVER);
    CHECK_ST(wf_driver_get(&drv), WARPFFT_ERR_NO_DRIVER);
    CHECK(drv == NULL);
    void *p = (void *)0x1;
    char host[8] = {0};
    CHECK_ST(warpfft_malloc(0, 16, &p), WARPFFT_ERR_NO_DRIVER);
    CHECK(p == NULL);
    CHECK_ST(warpfft_malloc(0, 16, NULL), WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("dptr");
    CHECK_ST(warpfft_malloc(0, 0, &p), WARPFFT_ERR_NO_DRIVER);
    CHECK_ST(warpfft_free(0, NULL), WARPFFT_SUCCESS);
    CHECK(warpfft_last_error()[0] == '\0');
    CHECK_ST(warpfft_free(0, (void *)0x1000), WARPFFT_ERR_NO_DRIVER);
    CHECK_ST(warpfft_memcpy_htod(0, NULL, host, 8), WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("dst is NULL for a copy of 8 bytes");
    CHECK_ST(warpfft_memcpy_dtoh(0, host, NULL, 8), WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("src is NULL");
    CHECK_ST(warpfft_memcpy_htod(0, (void *)0x1000, host, 8), WARPFFT_ERR_NO_DRIVER);
    CHECK_ST(warpfft_memcpy_dtoh(0, NULL, NULL, 0), WARPFFT_ERR_NO_DRIVER);
    CHECK_ST(warpfft_stream_sync(0, 0), WARPFFT_ERR_NO_DRIVER);
    CHECK(strstr(warpfft_last_error(), key) != NULL);
    test_runtime_info_nogpu(key);
    test_runtime_info_nogpu(key); /* twice: nothing cached wrongly */
}

/* ---- GPU ---- */

static void gpu_devices(const wf_device **dev_out) {
    const wf_device *dev = NULL, *again = NULL;
    const wf_driver *d = NULL;
    int count = 0;
    CHECK_ST(warpfft_init(0), WARPFFT_SUCCESS);
    CHECK(warpfft_last_error()[0] == '\0');
    CHECK_ST(wf_device_get(0, &dev), WARPFFT_SUCCESS);
    CHECK_ST(wf_device_get(0, &again), WARPFFT_SUCCESS);
    CHECK(dev && dev == again);
    *dev_out = dev;
    if (!dev)
        return;
    printf("  device 0: %s, sm_%d, %d SMs, %d B shared opt-in, driver %d\n", dev->name, dev->sm,
           dev->n_sm, dev->max_shared_optin, dev->driver_version);
    CHECK(dev->sm >= 50 && dev->n_sm > 0 && dev->name[0] && dev->ctx);
    CHECK(dev->driver_version >= 12000 && dev->max_shared_optin >= 48 * 1024);
    CHECK_ST(wf_driver_get(&d), WARPFFT_SUCCESS);
    CHECK(d->cuDeviceGetCount(&count) == 0 && count >= 1);
    CHECK_ST(warpfft_init(count), WARPFFT_ERR_NO_DEVICE);
    char want[64];
    snprintf(want, sizeof want, "device %d requested but %d device(s) present", count, count);
    CHECK(strstr(warpfft_last_error(), want) != NULL);
    CHECK_ST(warpfft_init(-1), WARPFFT_ERR_NO_DEVICE);
    CHECK_ST(warpfft_init(1000), WARPFFT_ERR_NO_DEVICE);
    test_error_maps(1);
}

static void gpu_memory(const wf_device *dev) {
    enum { N = 1 << 20 };
    float *h = malloc(N * sizeof *h), *back = calloc(N, sizeof *back);
    void *dp = NULL, *zero = (void *)0x1, *big = (void *)0x1;
    for (int i = 0; i < N; i++)
        h[i] = (float)i * 0.5f;
    CHECK_ST(warpfft_malloc(0, N * sizeof *h, &dp), WARPFFT_SUCCESS);
    CHECK(dp != NULL);
    CHECK_ST(warpfft_memcpy_htod(0, dp, h, N * sizeof *h), WARPFFT_SUCCESS);
    CHECK_ST(warpfft_memcpy_dtoh(0, back, dp, N * sizeof *h), WARPFFT_SUCCESS);
    CHECK(memcmp(h, back, N * sizeof *h) == 0);
    CHECK_ST(warpfft_free(0, dp), WARPFFT_SUCCESS);
    CHECK_ST(warpfft_malloc(0, 0, &zero), WARPFFT_SUCCESS);
    CHECK(zero == NULL);
    CHECK_ST(warpfft_memcpy_htod(0, NULL, NULL, 0), WARPFFT_SUCCESS);
    CHECK_ST(warpfft_malloc(0, (size_t)1 << 50, &big), WARPFFT_ERR_OUT_OF_MEMORY);
    CHECK(big == NULL);
    CHECK_MSG("MiB free");
    printf("  1 PiB malloc -> %s\n", warpfft_last_error());
    CHECK_ST(warpfft_malloc(7, 16, &big), WARPFFT_ERR_NO_DEVICE);
    CHECK_ST(warpfft_stream_sync(0, 0), WARPFFT_SUCCESS);
    CUdeviceptr p = 7;
    CHECK_ST(wf_ctx_enter(dev), WARPFFT_SUCCESS);
    CHECK_ST(wf_alloc(&p, 0, "nothing"), WARPFFT_SUCCESS);
    CHECK(p == 0);
    CHECK_ST(wf_alloc(&p, 4096, "test"), WARPFFT_SUCCESS);
    CHECK(p != 0);
    wf_free(&p);
    CHECK(p == 0);
    wf_free(&p);
    wf_ctx_leave(dev);
    free(h);
    free(back);
}

typedef struct mod_arg {
    const wf_device *dev;
    CUmodule mod;
    int status;
} mod_arg;

static void *mod_thread(void *p) {
    mod_arg *a = p;
    pthread_barrier_wait(&together);
    a->status = wf_module_get(a->dev, "fill_jit", &a->mod);
    return NULL;
}

static const wf_module_record *find_record(wf_module_record *r, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (r[i].device == 0 && strcmp(r[i].name, name) == 0)
            return &r[i];
    return NULL;
}

static void gpu_module_concurrent(const wf_device *dev) {
    enum { N = 4 };
    mod_arg a[N];
    for (int i = 0; i < N; i++)
        a[i] = (mod_arg){.dev = dev};
    run_together(N, mod_thread, a, sizeof a[0]);
    for (int i = 0; i < N; i++)
        CHECK(a[i].status == WARPFFT_SUCCESS && a[i].mod && a[i].mod == a[0].mod);
    wf_module_record r[16];
    size_t n = wf_module_records(r, 16);
    CHECK(n == 1 && find_record(r, n, "fill_jit"));
}

/* Runs kernel `kernel` of `module` over n floats at dx; checks the result. */
void gpu_run(const wf_device *dev, const char *module, const char *kernel, float arg,
             CUdeviceptr dx, long long n, float want) {
    CUfunction fn = NULL;
    if (!CHECK_ST(wf_kernel_get(dev, module, kernel, &fn), WARPFFT_SUCCESS))
        return;
    void *args[] = {&n, &dx, &arg};
    CHECK_ST(wf_ctx_enter(dev), WARPFFT_SUCCESS);
    CHECK_ST(wf_launch(fn, kernel, 40, 1, 256, 0, NULL, args), WARPFFT_SUCCESS);
    wf_ctx_leave(dev);
    CHECK_ST(warpfft_stream_sync(0, 0), WARPFFT_SUCCESS);
    float *h = malloc((size_t)n * sizeof *h);
    CHECK_ST(warpfft_memcpy_dtoh(0, h, (void *)(uintptr_t)dx, (size_t)n * sizeof *h),
             WARPFFT_SUCCESS);
    long long wrong = 0;
    for (long long i = 0; i < n; i++)
        wrong += h[i] != want;
    CHECK(wrong == 0, "module %s: %lld of %lld values wrong", module, wrong, n);
    free(h);
}

/* An embedded PTX module is linked by the driver ("ptx-link") into a cold kernel cache and read
 * back ("ptx-cache") from a warm one: run_tests.sh runs the GPU binary cold, then warm
 * ($WF_TEST_NVRTC), on an emptied $WARPFFT_CACHE_DIR; either when the phase is not given. */
static int ptx_image_ok(const char *img) {
    const char *phase = getenv("WF_TEST_NVRTC");
    int link = strcmp(img, "ptx-link") == 0, cached = strcmp(img, "ptx-cache") == 0;
    if (phase && strcmp(phase, "cold") == 0)
        return link;
    if (phase && strcmp(phase, "warm") == 0)
        return cached;
    return link || cached;
}

static const char *expected_image(const wf_device *dev, int module) {
    size_t size = 0, n = 0;
    unsigned char *fb = blob_copy(module, &size);
    wf_fatbin_entry e[8];
    wf_fatbin_parse(fb, size, e, 8, &n);
    free(fb);
    const char *img = wf_fatbin_image_for(e, n, dev->sm);
    return img ? img : "ptx"; /* FILL_FALLBACK then links its PTX blob */
}

static void gpu_modules(const wf_device *dev) {
    const long long n = 100000;
    void *buf = NULL;
    if (!CHECK_ST(warpfft_malloc(0, (size_t)n * sizeof(float), &buf), WARPFFT_SUCCESS))
        return;
    CUdeviceptr dx = (CUdeviceptr)(uintptr_t)buf;
    gpu_run(dev, "fill_jit", "wf_test_fill", 1.5f, dx, n, 1.5f);
    gpu_run(dev, "fill_aot", "wf_test_fill", 2.5f, dx, n, 2.5f);
    gpu_run(dev, "fill_fallback", "wf_test_fill", 3.5f, dx, n, 3.5f);
    gpu_run(dev, "fill_ptxfat", "wf_test_fill", 4.5f, dx, n, 4.5f);
    gpu_run(dev, "fill_jit", "wf_test_fill", 2.0f, dx, n, 2.0f);
    gpu_run(dev, "scale_link", "wf_test_scale", 3.0f, dx, n, 9.0f); /* (2 + 1) * 3 */
    wf_module_record r[16];
    size_t nr = wf_module_records(r, 16);
    CHECK(nr == 5);
    static const struct {
        int id;
        const char *name, *image;
    } want[] = {{FAKE_FILL_JIT, "fill_jit", "ptx"},
                {FAKE_SCALE_LINK, "scale_link", "ptx"},
                {FAKE_FILL_AOT, "fill_aot", NULL},
                {FAKE_FILL_FALLBACK, "fill_fallback", NULL},
                {FAKE_FILL_PTXFAT, "fill_ptxfat", "ptx-jit"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const wf_module_record *rec = find_record(r, nr < 16 ? nr : 16, want[i].name);
        const char *img = want[i].image ? want[i].image : expected_image(dev, want[i].id);
        if (!CHECK(rec != NULL, "module %s: no load record; last error: %s", want[i].name,
                   warpfft_last_error()))
            continue;
        printf("  module %-13s image %-8s %.3f ms\n", rec->name, rec->image, rec->load_ms);
        int ok = strcmp(img, "ptx") == 0 ? ptx_image_ok(rec->image) : strcmp(rec->image, img) == 0;
        CHECK(ok && rec->load_ms >= 0, "module %s: image %s (want %s), %.3f ms", want[i].name,
              rec->image, strcmp(img, "ptx") == 0 ? "ptx-link cold, ptx-cache warm" : img,
              rec->load_ms);
    }
    CUmodule m1 = NULL, m2 = NULL;
    CHECK_ST(wf_module_get(dev, "fill_aot", &m1), WARPFFT_SUCCESS);
    CHECK_ST(wf_module_get(dev, "fill_aot", &m2), WARPFFT_SUCCESS);
    CHECK(m1 && m1 == m2 && wf_module_records(NULL, 0) == nr);
    CHECK_ST(warpfft_free(0, buf), WARPFFT_SUCCESS);
}

static void gpu_module_errors(const wf_device *dev) {
    CUmodule m = NULL;
    CUfunction fn = NULL;
    if (dev->sm / 10 != 8) {
        CHECK_ST(wf_module_get(dev, "fill_noimage", &m), WARPFFT_ERR_NO_KERNEL);
        CHECK_MSG("module 'fill_noimage': no embedded image runs on device 0");
        CHECK_MSG("the build holds: sm_80 (SASS)");
        printf("  no image -> %s\n", warpfft_last_error());
    }
    size_t loaded = wf_module_records(NULL, 0);
    CHECK_ST(wf_module_get(dev, "too_new", &m), WARPFFT_ERR_DRIVER_TOO_OLD);
    CHECK_MSG("module 'too_new': the NVIDIA driver (CUDA 13.0) is older than the kernels need");
    CHECK_MSG("built with CUDA 13.0 (driver R580 or newer)");
    printf("  too new -> %s\n", warpfft_last_error());
    CHECK_ST(wf_module_get(dev, "bad_ptx", &m), WARPFFT_ERR_CUDA);
    CHECK_MSG("loading module 'bad_ptx' on device 0 with cuLink");
    CHECK_MSG("JIT log: ");
    CHECK_MSG("wf_bogus_instruction");
    CHECK(strchr(warpfft_last_error(), '\n') == NULL); /* one line, JIT log included */
    printf("  bad PTX -> %s\n", warpfft_last_error());
    CHECK_ST(wf_module_get(dev, "bad_fallback", &m), WARPFFT_ERR_CUDA);
    CHECK_MSG("(the PTX fallback, after the fatbin failed with CUDA error 209)");
    CHECK(wf_module_records(NULL, 0) == loaded); /* failures are not recorded */
    CHECK_ST(wf_module_get(dev, "nope", &m), WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("no kernel module 'nope' is embedded in this build (mode aot+jit, 14 modules)");
    CHECK_ST(wf_kernel_get(dev, "fill_jit", "wf_nope", &fn), WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("kernel 'wf_nope' not found in module 'fill_jit'");
    CHECK_ST(wf_kernel_get(dev, "fill_jit", "wf_test_fill", &fn), WARPFFT_SUCCESS);
    long long n = 1;
    CUdeviceptr x = 0;
    float v = 0;
    void *args[] = {&n, &x, &v};
    CHECK_ST(wf_ctx_enter(dev), WARPFFT_SUCCESS);
    CHECK_ST(wf_launch(fn, "wf_test_fill", 0, 1, 256, 0, NULL, args), WARPFFT_SUCCESS);
    CHECK(wf_launch(fn, "wf_test_fill", 1, 1, 4096, 0, NULL, args) != WARPFFT_SUCCESS);
    CHECK_MSG("launching wf_test_fill (grid 1 x 1, block 4096, 0 bytes of dynamic shared");
    printf("  bad launch -> %s\n", warpfft_last_error());
    wf_ctx_leave(dev);
    CHECK_ST(warpfft_stream_sync(0, 0), WARPFFT_SUCCESS); /* the context is still healthy */
}

static void gpu_runtime_info(const wf_device *dev) {
    size_t need = 0;
    CHECK_ST(warpfft_runtime_info(0, NULL, 0, &need), WARPFFT_SUCCESS);
    char *buf = malloc(need);
    CHECK_ST(warpfft_runtime_info(0, buf, need, NULL), WARPFFT_SUCCESS);
    CHECK(warpfft_last_error()[0] == '\0' && json_valid(buf));
    CHECK(strstr(buf, dev->name) &&
          (strstr(buf, "\"image\":\"ptx-link\"") || strstr(buf, "\"image\":\"ptx-cache\"")));
    CHECK(strstr(buf, "\"cufft\":{\"path\":\"/") && !strstr(buf, "gpu_error"));
    printf("  runtime_info: %s\n", buf);
    free(buf);
}

static void test_gpu(void) {
    const wf_device *dev = NULL;
    gpu_devices(&dev);
    if (!dev)
        return;
    gpu_memory(dev);
    gpu_module_concurrent(dev);
    gpu_modules(dev);
    gpu_module_errors(dev);
    gpu_runtime_info(dev);
    gpu_nvrtc(dev);
}

void test_driver(const char *mode) {
    if (strcmp(mode, "gpu") == 0) {
        test_gpu();
    } else {
        int stub = strcmp(mode, "stub") == 0;
        test_concurrent_first_init(WARPFFT_ERR_NO_DRIVER,
                                   stub ? "stub libcuda was loaded" : "libcuda.so.1");
        test_error_maps(0);
        test_nogpu(stub);
    }
}
