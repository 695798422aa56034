/*
 * test_rt_errors.c — runtime tests without a driver: status names and messages, the thread-local
 * error buffer, the status maps of driver and cuFFT errors, the embedded (fake) blobs and the
 * fatbin parser on valid, variant and malformed images.
 */
#include "test_runtime.h"

/* ---- errors ---- */

static void test_status_names(void) {
    for (int s = WARPFFT_SUCCESS; s <= WARPFFT_ERR_NO_NVRTC; s++) {
        const char *n = warpfft_status_name(s);
        CHECK(n && strncmp(n, "WARPFFT_", 8) == 0);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(n, warpfft_status_name(t)) != 0);
    }
    CHECK(strcmp(warpfft_status_name(WARPFFT_SUCCESS), "WARPFFT_SUCCESS") == 0);
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_NO_DEVICE), "WARPFFT_ERR_NO_DEVICE") == 0);
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_INTERNAL), "WARPFFT_ERR_INTERNAL") == 0);
    CHECK(strcmp(warpfft_status_name(-1), "WARPFFT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_NO_NVRTC), "WARPFFT_ERR_NO_NVRTC") == 0);
    CHECK(strcmp(warpfft_status_name(21), "WARPFFT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(warpfft_version(), "0.1.0") == 0);
}

static void test_error_buffer(void) {
    CHECK(wf_error(WARPFFT_ERR_BAD_DIM, "dim %d", 7) == WARPFFT_ERR_BAD_DIM);
    CHECK(strcmp(warpfft_last_error(), "dim 7") == 0);
    /* Prefixing the previous message must work: the argument aliases the buffer. */
    wf_error(WARPFFT_ERR_CUDA, "outer: %s", warpfft_last_error());
    CHECK(strcmp(warpfft_last_error(), "outer: dim 7") == 0);
    char *big = malloc(10000);
    memset(big, 'x', 9999);
    big[9999] = '\0';
    wf_error(WARPFFT_ERR_INTERNAL, "%s", big);
    size_t n = strlen(warpfft_last_error());
    CHECK(n > 1000 && n < 9999);
    CHECK(strcmp(warpfft_last_error() + n - 3, "...") == 0);
    free(big);
    wf_clear_error();
    CHECK(warpfft_last_error()[0] == '\0');
}

typedef struct tl_arg {
    pthread_barrier_t *bar;
    int id;
    char seen_before[64], seen_after[64];
} tl_arg;

static void *tl_thread(void *p) {
    tl_arg *a = p;
    snprintf(a->seen_before, sizeof a->seen_before, "%s", warpfft_last_error());
    wf_error(WARPFFT_ERR_INVALID_ARG, "thread %d", a->id);
    pthread_barrier_wait(a->bar); /* every thread has written before any reads back */
    snprintf(a->seen_after, sizeof a->seen_after, "%s", warpfft_last_error());
    return NULL;
}

static void test_thread_local(void) {
    enum { N = 4 };
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, N + 1);
    pthread_t t[N];
    tl_arg a[N];
    wf_error(WARPFFT_ERR_BAD_TOL, "main thread");
    for (int i = 0; i < N; i++) {
        a[i] = (tl_arg){.bar = &bar, .id = i};
        pthread_create(&t[i], NULL, tl_thread, &a[i]);
    }
    pthread_barrier_wait(&bar);
    for (int i = 0; i < N; i++) {
        char want[32];
        pthread_join(t[i], NULL);
        snprintf(want, sizeof want, "thread %d", i);
        CHECK(a[i].seen_before[0] == '\0');
        CHECK(strcmp(a[i].seen_after, want) == 0);
    }
    CHECK(strcmp(warpfft_last_error(), "main thread") == 0);
    pthread_barrier_destroy(&bar);
}

void test_error_maps(int names) {
    static const struct {
        int r;
        warpfft_status st;
    } cu[] = {{2, WARPFFT_ERR_OUT_OF_MEMORY},
              {100, WARPFFT_ERR_NO_DEVICE},
              {101, WARPFFT_ERR_NO_DEVICE},
              {34, WARPFFT_ERR_NO_DRIVER},
              {35, WARPFFT_ERR_DRIVER_TOO_OLD},
              {222, WARPFFT_ERR_DRIVER_TOO_OLD},
              {209, WARPFFT_ERR_NO_KERNEL},
              {500, WARPFFT_ERR_NO_KERNEL},
              {1, WARPFFT_ERR_CUDA},
              {999, WARPFFT_ERR_CUDA}};
    for (size_t i = 0; i < sizeof cu / sizeof cu[0]; i++) {
        CHECK_ST(wf_cuda_error(cu[i].r, "cuThing of 8 bytes"), cu[i].st);
        CHECK(strncmp(warpfft_last_error(), "cuThing of 8 bytes: ", 20) == 0);
    }
    wf_cuda_error(2, "alloc");
    if (names)
        CHECK_MSG("alloc: CUDA_ERROR_OUT_OF_MEMORY (");
    else
        CHECK(strcmp(warpfft_last_error(), "alloc: CUDA error 2") == 0);
    CHECK_ST(wf_cufft_error(2, "plan"), WARPFFT_ERR_OUT_OF_MEMORY);
    CHECK(strcmp(warpfft_last_error(), "plan: CUFFT_ALLOC_FAILED") == 0);
    CHECK_ST(wf_cufft_error(8, "plan"), WARPFFT_ERR_CUFFT);
    CHECK(strcmp(warpfft_last_error(), "plan: CUFFT_INVALID_SIZE") == 0);
    CHECK_ST(wf_cufft_error(0x14, "x"), WARPFFT_ERR_CUFFT);
    CHECK_MSG("CUFFT_NVSHMEM_FAILURE");
    CHECK_ST(wf_cufft_error(77, "x"), WARPFFT_ERR_CUFFT);
    CHECK_MSG("cufftResult 77");
}

/* ---- embedded blobs and the fatbin parser ---- */

static void test_embedded(void) {
    const char *name = NULL;
    size_t nb = 0, size = 0;
    int kind = 0;
    const char *label = NULL;
    const void *data = NULL;
    CHECK(strcmp(warpfft_build_manifest(), FAKE_MANIFEST) == 0);
    CHECK(warpfft_embedded_module_count() == FAKE_N_MODULES);
    CHECK_ST(warpfft_embedded_module(FAKE_SCALE_LINK, &name, &nb), WARPFFT_SUCCESS);
    CHECK(strcmp(name, "scale_link") == 0 && nb == 2);
    CHECK_ST(warpfft_embedded_module(0, NULL, NULL), WARPFFT_SUCCESS);
    CHECK_ST(warpfft_embedded_module(FAKE_N_MODULES, &name, &nb), WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("module 14 requested but 14 embedded");
    CHECK_ST(warpfft_embedded_module((size_t)-1, NULL, NULL), WARPFFT_ERR_INVALID_ARG);
    CHECK_ST(warpfft_embedded_blob(FAKE_SCALE_LINK, 1, &kind, &label, &data, &size),
             WARPFFT_SUCCESS);
    CHECK(kind == 1 && strcmp(label, "helper.ptx") == 0 && size > 0);
    CHECK(((const char *)data)[size] == '\0' && strstr(data, "wf_test_helper"));
    CHECK_ST(warpfft_embedded_blob(FAKE_FILL_AOT, 0, &kind, NULL, NULL, NULL), WARPFFT_SUCCESS);
    CHECK(kind == 2);
    CHECK_ST(warpfft_embedded_blob(FAKE_SCALE_LINK, 2, &kind, NULL, NULL, NULL),
             WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("blob 2 of module 1 ('scale_link') requested but it has 2");
    CHECK_ST(warpfft_embedded_blob(FAKE_N_MODULES, 0, NULL, NULL, NULL, NULL),
             WARPFFT_ERR_INVALID_ARG);
    CHECK(wf_embedded_find("fill_aot") == FAKE_FILL_AOT && wf_embedded_find("nope") == -1);
    CHECK(wf_embedded_find(NULL) == -1);
}

/* The blob of a fake module's first blob, copied to an exact-size heap block so that ASan and
 * valgrind see any read past its end. */
unsigned char *blob_copy(int module, size_t *size) {
    const void *data = NULL;
    warpfft_embedded_blob((size_t)module, 0, NULL, NULL, &data, size);
    unsigned char *p = malloc(*size);
    memcpy(p, data, *size);
    return p;
}

static void test_fatbin_layout(void) {
    size_t size = 0, n = 0;
    unsigned char *fb = blob_copy(FAKE_FILL_AOT, &size);
    wf_fatbin_entry e[8];
    CHECK_ST(wf_fatbin_parse(fb, size, e, 8, &n), WARPFFT_SUCCESS);
    CHECK(n == 5);
    static const int arch[] = {80, 90, 100, 120, 75};
    for (size_t i = 0; i < 5 && n == 5; i++) {
        CHECK(e[i].kind == (i < 4 ? WF_FATBIN_ELF : WF_FATBIN_PTX) && e[i].arch == arch[i]);
        CHECK(e[i].payload_offset + e[i].payload_size <= size);
        if (i < 4) /* SASS is stored uncompressed by default */
            CHECK(!e[i].compressed && memcmp(fb + e[i].payload_offset,
                                             "\x7f"
                                             "ELF",
                                             4) == 0);
        CHECK(!e[i].arch_specific && !e[i].family_specific);
    }
    if (n == 5)
        CHECK(e[4].compressed && e[4].ptx_version >= 80); /* PTX is compressed by default */
    CHECK(strcmp(wf_fatbin_image_for(e, n, 90), "sass") == 0);
    CHECK(strcmp(wf_fatbin_image_for(e, n, 86), "sass") == 0);
    CHECK(strcmp(wf_fatbin_image_for(e, n, 103), "sass") == 0);
    CHECK(strcmp(wf_fatbin_image_for(e, n, 75), "ptx-jit") == 0);
    CHECK(strcmp(wf_fatbin_image_for(e, n, 110), "ptx-jit") == 0);
    CHECK(wf_fatbin_image_for(e, n, 70) == NULL);
    char d[128];
    wf_fatbin_describe(e, n, d, sizeof d);
    CHECK(strcmp(d, "sm_80, sm_90, sm_100, sm_120 (SASS); compute_75 (PTX)") == 0);
    wf_fatbin_describe(e, n, d, 12); /* truncates, stays terminated */
    CHECK(strlen(d) <= 11);
    /* Fewer slots than entries: the count is still the total. */
    wf_fatbin_entry one[2];
    one[1].arch = -42;
    CHECK_ST(wf_fatbin_parse(fb, size, one, 1, &n), WARPFFT_SUCCESS);
    CHECK(n == 5 && one[0].arch == 80 && one[1].arch == -42);
    CHECK_ST(wf_fatbin_parse(fb, size, NULL, 0, &n), WARPFFT_SUCCESS);
    free(fb);
}

static void test_fatbin_variants(void) {
    size_t size = 0, n = 0;
    wf_fatbin_entry e[8];
    char d[128];
    unsigned char *fb = blob_copy(FAKE_FILL_NOIMAGE, &size);
    CHECK_ST(wf_fatbin_parse(fb, size, e, 8, &n), WARPFFT_SUCCESS);
    CHECK(n == 1 && wf_fatbin_image_for(e, n, 90) == NULL);
    wf_fatbin_describe(e, n, d, sizeof d);
    CHECK(strcmp(d, "sm_80 (SASS)") == 0);
    free(fb);
    fb = blob_copy(FAKE_FILL_PTXFAT, &size);
    CHECK_ST(wf_fatbin_parse(fb, size, e, 8, &n), WARPFFT_SUCCESS);
    CHECK(n == 1 && strcmp(wf_fatbin_image_for(e, n, 90), "ptx-jit") == 0);
    wf_fatbin_describe(e, n, d, sizeof d);
    CHECK(strcmp(d, "compute_75 (PTX)") == 0);
    free(fb);
    fb = blob_copy(FAKE_VARIANTS, &size);
    CHECK_ST(wf_fatbin_parse(fb, size, e, 8, &n), WARPFFT_SUCCESS);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(e[0].arch == 90 && e[0].arch_specific && !e[0].family_specific);
        CHECK(e[1].arch == 100 && e[1].family_specific && !e[1].arch_specific);
        CHECK(e[2].kind == WF_FATBIN_PTX && e[2].arch == 90 && e[2].arch_specific);
    }
    CHECK(strcmp(wf_fatbin_image_for(e, n, 90), "sass") == 0);
    CHECK(strcmp(wf_fatbin_image_for(e, n, 103), "sass") == 0);
    CHECK(wf_fatbin_image_for(e, n, 89) == NULL && wf_fatbin_image_for(e, n, 120) == NULL);
    wf_fatbin_describe(e, n, d, sizeof d);
    CHECK(strcmp(d, "sm_90a, sm_100f (SASS); compute_90a (PTX)") == 0);
    free(fb);
}

static void test_fatbin_malformed(void) {
    size_t size = 0, n = 0, ok = 0, bad = 0;
    unsigned char *fb = blob_copy(FAKE_FILL_AOT, &size);
    wf_fatbin_entry e[8];
    CHECK_ST(wf_fatbin_parse("hello, world, not a fatbin", 26, e, 8, &n), WARPFFT_ERR_INVALID_ARG);
    CHECK_MSG("magic");
    CHECK_ST(wf_fatbin_parse(fb, size, e, 8, NULL), WARPFFT_ERR_INVALID_ARG);
    for (size_t len = 0; len < size; len++) { /* every truncation is refused */
        unsigned char *t = malloc(len ? len : 1);
        memcpy(t, fb, len);
        bad += wf_fatbin_parse(t, len, e, 8, &n) == WARPFFT_ERR_INVALID_ARG;
        free(t);
    }
    CHECK(bad == size);
    for (size_t i = 0; i < size && i < 512; i++) { /* corrupted headers: no crash, no overrun */
        unsigned char saved = fb[i];
        fb[i] ^= 0xff;
        ok += wf_fatbin_parse(fb, size, e, 8, &n) == WARPFFT_SUCCESS;
        fb[i] = saved;
    }
    printf("  fatbin: %zu of %zu header corruptions still parse (payload bytes)\n", ok,
           size < 512 ? size : (size_t)512);
    /* Two fatbins back to back, 8 zero bytes between and after, as in linked executables. */
    unsigned char *two = calloc(2 * size + 16, 1);
    memcpy(two, fb, size);
    memcpy(two + size + 8, fb, size);
    CHECK_ST(wf_fatbin_parse(two, 2 * size + 16, e, 8, &n), WARPFFT_SUCCESS);
    CHECK(n == 10 && e[5].arch == 80 && e[5].payload_offset > size);
    two[size + 4] = 1; /* junk between them */
    CHECK_ST(wf_fatbin_parse(two, 2 * size + 16, e, 8, &n), WARPFFT_ERR_INVALID_ARG);
    free(two);
    free(fb);
}

void test_errors(void) {
    test_status_names();
    test_error_buffer();
    test_thread_local();
}

void test_fatbin(void) {
    test_embedded();
    test_fatbin_layout();
    test_fatbin_variants();
    test_fatbin_malformed();
}
