/*
 * test_runtime.c — tests of the runtime stages (error, loader, cufft, module, memory, info,
 * fatbin) in three environments, chosen by $WF_TEST_EXPECT (run_tests.sh sets it):
 *   nodriver  no libcuda.so.1 on the loader path (a CPU build machine)
 *   stub      the toolkit's stub libcuda.so.1 found first (cuInit fails with STUB_LIBRARY)
 *   gpu       a real driver and GPU: devices, memory, module loading (SASS, PTX JIT, cuLink,
 *             fallbacks), kernel lookup and launch, runtime info
 * The cuFFT search is tested in forked children, one per environment setup, because a success
 * is cached for the process. Prints "N passed, M failed" last; exits non-zero on a failure.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_kernels.h"
#include "fatbin.h"
#include "runtime.h"

#define SYSTEM_CUFFT "/usr/local/cuda/lib64/libcufft.so.12"

static int n_pass, n_fail;

static int check_(int ok, const char *expr, int line) {
    if (ok) {
        n_pass++;
    } else {
        n_fail++;
        printf("FAIL line %d: %s\n      last error: %s\n", line, expr, warpfft_last_error());
    }
    return ok;
}
#define CHECK(c) check_((c) != 0, #c, __LINE__)

static int check_status_(int got, int want, const char *expr, int line) {
    if (got == want) {
        n_pass++;
        return 1;
    }
    n_fail++;
    printf("FAIL line %d: %s gave %s, expected %s\n      last error: %s\n", line, expr,
           warpfft_status_name(got), warpfft_status_name(want), warpfft_last_error());
    return 0;
}
#define CHECK_ST(call, want) check_status_((call), (want), #call, __LINE__)
#define CHECK_MSG(sub)                                                                             \
    check_(strstr(warpfft_last_error(), (sub)) != NULL, "message has " sub, __LINE__)

/* ---- a small JSON validator (RFC 8259 grammar, no semantics) ---- */

static const char *jv_value(const char *p, int depth);
static const char *jv_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}
static const char *jv_string(const char *p) {
    if (*p++ != '"')
        return NULL;
    for (; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return *p == '"' ? p + 1 : NULL;
}
static const char *jv_digits(const char *p) {
    if (*p < '0' || *p > '9')
        return NULL;
    while (*p >= '0' && *p <= '9')
        p++;
    return p;
}
static const char *jv_number(const char *p) {
    if (*p == '-')
        p++;
    if (!(p = jv_digits(p)))
        return NULL;
    if (*p == '.' && !(p = jv_digits(p + 1)))
        return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(p = jv_digits(p)))
            return NULL;
    }
    return p;
}
static const char *jv_members(const char *p, char close, int depth) {
    p = jv_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (!(p = jv_string(jv_ws(p))))
                return NULL;
            p = jv_ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if (!(p = jv_value(p, depth + 1)))
            return NULL;
        p = jv_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}
static const char *jv_value(const char *p, int depth) {
    p = jv_ws(p);
    if (depth > 64)
        return NULL;
    if (*p == '{' || *p == '[')
        return jv_members(p, *p == '{' ? '}' : ']', depth);
    if (*p == '"')
        return jv_string(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return jv_number(p);
}
static int json_valid(const char *s) {
    const char *p = jv_value(s, 0);
    return p && *jv_ws(p) == '\0';
}

/* ---- running a group of checks in a child process ---- */

static void run_isolated(const char *name, void (*fn)(void)) {
    int fd[2];
    if (pipe(fd) != 0) {
        n_fail++;
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        n_pass = n_fail = 0;
        fn();
        int r[2] = {n_pass, n_fail};
        fflush(stdout);
        _exit(write(fd[1], r, sizeof r) == sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int r[2] = {0, 0}, ws = 0;
    ssize_t k = read(fd[0], r, sizeof r);
    close(fd[0]);
    waitpid(pid, &ws, 0);
    if (pid < 0 || k != (ssize_t)sizeof r || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        n_fail++;
        printf("FAIL scenario %s: the child crashed or exited abnormally\n", name);
        return;
    }
    n_pass += r[0];
    n_fail += r[1];
    printf("  scenario %-14s %d passed, %d failed\n", name, r[0], r[1]);
}

/* ---- errors ---- */

static void test_status_names(void) {
    for (int s = WARPFFT_SUCCESS; s <= WARPFFT_ERR_INTERNAL; s++) {
        const char *n = warpfft_status_name(s);
        CHECK(n && strncmp(n, "WARPFFT_", 8) == 0);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(n, warpfft_status_name(t)) != 0);
    }
    CHECK(strcmp(warpfft_status_name(WARPFFT_SUCCESS), "WARPFFT_SUCCESS") == 0);
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_NO_DEVICE), "WARPFFT_ERR_NO_DEVICE") == 0);
    CHECK(strcmp(warpfft_status_name(WARPFFT_ERR_INTERNAL), "WARPFFT_ERR_INTERNAL") == 0);
    CHECK(strcmp(warpfft_status_name(-1), "WARPFFT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(warpfft_status_name(20), "WARPFFT_ERR_UNKNOWN") == 0);
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

static void test_error_maps(int names) {
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
    CHECK_MSG("module 10 requested but 10 embedded");
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
static unsigned char *blob_copy(int module, size_t *size) {
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

/* ---- cuFFT search (each scenario in its own process) ---- */

static void clear_cufft_env(void) {
    unsetenv("WARPFFT_CUFFT_LIB");
    unsetenv("WARPFFT_CUFFT_DEFAULT_PATHS");
    unsetenv("CUDA_PATH");
    unsetenv("CUDA_HOME");
    unsetenv("VIRTUAL_ENV");
}

static int same_file(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void expect_found(const char *how) {
    char path[PATH_MAX] = "";
    int version = -1;
    if (!CHECK_ST(warpfft_cufft_probe(path, sizeof path, &version), WARPFFT_SUCCESS))
        return;
    CHECK(same_file(path, SYSTEM_CUFFT) && version >= 11000);
    CHECK(path[0] == '/' && strcmp(path, SYSTEM_CUFFT) != 0); /* symlinks resolved */
    CHECK(warpfft_last_error()[0] == '\0');
    printf("  cuFFT %s: %s, version %d\n", how, path, version);
}

static void sc_cufft_missing(void) {
    clear_cufft_env();
    setenv("WARPFFT_CUFFT_LIB", "/nonexistent/libcufft.so.12", 1);
    setenv("WARPFFT_CUFFT_DEFAULT_PATHS", "0", 1);
    char path[64] = "unchanged";
    int version = -7;
    CHECK_ST(warpfft_cufft_probe(path, sizeof path, &version), WARPFFT_ERR_NO_CUFFT);
    CHECK(version == -7 && strcmp(path, "unchanged") == 0);
    CHECK(strncmp(warpfft_last_error(), "cuFFT not found; tried: ", 24) == 0);
    CHECK_MSG("/nonexistent/libcufft.so.12 ($WARPFFT_CUFFT_LIB): no such file");
    CHECK_MSG("pip wheels beside libwarpfft");
    CHECK_MSG("$VIRTUAL_ENV: not set");
    CHECK_MSG("$CUDA_PATH: not set; $CUDA_HOME: not set");
    CHECK_MSG("skipped (WARPFFT_CUFFT_DEFAULT_PATHS=0)");
    CHECK_MSG("`pip install nvidia-cufft` (CUDA 13) or set WARPFFT_CUFFT_LIB");
    printf("  cuFFT missing -> %s\n", warpfft_last_error());
    const wf_cufft *c = NULL;
    CHECK_ST(wf_cufft_get(&c), WARPFFT_ERR_NO_CUFFT); /* failure is not cached as success */
    CHECK(c == NULL);
    /* A file that is not a library, then a library without cuFFT's symbols. */
    char tmp[] = "/tmp/wf_notalib_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0 && write(fd, "not an ELF file\n", 16) == 16);
    close(fd);
    setenv("WARPFFT_CUFFT_LIB", tmp, 1);
    CHECK_ST(warpfft_cufft_probe(NULL, 0, NULL), WARPFFT_ERR_NO_CUFFT);
    CHECK(strstr(warpfft_last_error(), tmp) != NULL);
    unlink(tmp);
    const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
    if (access(libm, R_OK) == 0) {
        setenv("WARPFFT_CUFFT_LIB", libm, 1);
        CHECK_ST(warpfft_cufft_probe(NULL, 0, NULL), WARPFFT_ERR_NO_CUFFT);
        CHECK_MSG("libm.so.6: loaded, but it has no symbol cufftCreate");
    }
    /* Fixing the environment is enough: the next call searches again. */
    setenv("WARPFFT_CUFFT_LIB", SYSTEM_CUFFT, 1);
    expect_found("via $WARPFFT_CUFFT_LIB");
    clear_cufft_env();
    setenv("WARPFFT_CUFFT_DEFAULT_PATHS", "0", 1);
    expect_found("cached"); /* success is kept for the process */
    CHECK_ST(wf_cufft_get(&c), WARPFFT_SUCCESS);
    CHECK(c && c->cufftCreate && c->cufftExecZ2Z && c->cufftMakePlanMany64);
}

static void sc_cufft_default(void) {
    clear_cufft_env();
    expect_found("by default");
    char small[8];
    CHECK_ST(warpfft_cufft_probe(small, sizeof small, NULL), WARPFFT_SUCCESS);
    CHECK(strlen(small) == 7 && small[0] == '/');
    CHECK_ST(warpfft_cufft_probe(NULL, 0, NULL), WARPFFT_SUCCESS);
    CHECK_ST(warpfft_cufft_probe(NULL, 5, NULL), WARPFFT_ERR_INVALID_ARG);
}

static void sc_cufft_toolkit_env(void) {
    clear_cufft_env();
    setenv("WARPFFT_CUFFT_DEFAULT_PATHS", "0", 1);
    setenv("CUDA_PATH", "/nonexistent-toolkit", 1);
    setenv("CUDA_HOME", "/usr/local/cuda", 1);
    expect_found("via $CUDA_HOME");
}

static int mkdirs(char *path) /* mkdir -p */
{
    for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        int ok = mkdir(path, 0755) == 0 || access(path, F_OK) == 0;
        if (s)
            *s = '/';
        if (!ok)
            return -1;
        if (!s)
            return 0;
    }
}

/* Creates <root>/<sub>/libcufft.so.12 -> the toolkit's; removes it all again with rm -r. */
static int fake_wheel(const char *root, const char *sub, char *link, size_t len) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    snprintf(link, len, "%s/libcufft.so.12", dir);
    return mkdirs(dir) == 0 && symlink(SYSTEM_CUFFT, link) == 0;
}

static void rm_r(const char *path) {
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -r '%s'", path);
    if (system(cmd) != 0)
        printf("  (could not remove %s)\n", path);
}

static void sc_cufft_venv(void) {
    char venv[] = "/tmp/wf_venv_XXXXXX", link[PATH_MAX];
    clear_cufft_env();
    setenv("WARPFFT_CUFFT_DEFAULT_PATHS", "0", 1);
    if (!CHECK(mkdtemp(venv) != NULL))
        return;
    if (CHECK(
            fake_wheel(venv, "lib/python3.99/site-packages/nvidia/cu13/lib", link, sizeof link))) {
        setenv("VIRTUAL_ENV", venv, 1);
        expect_found("via $VIRTUAL_ENV");
    }
    rm_r(venv);
}

/* bin/test_runtime finds <build>/nvidia/cu13/lib: "../nvidia/cu13/lib" beside the binary. */
static void sc_cufft_wheel(void) {
    char exe[PATH_MAX], link[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!CHECK(k > 0))
        return;
    exe[k] = '\0';
    *strrchr(exe, '/') = '\0'; /* <build>/bin */
    *strrchr(exe, '/') = '\0'; /* <build> */
    char root[PATH_MAX + 8];
    snprintf(root, sizeof root, "%s/nvidia", exe);
    clear_cufft_env();
    setenv("WARPFFT_CUFFT_DEFAULT_PATHS", "0", 1);
    if (CHECK(fake_wheel(exe, "nvidia/cu13/lib", link, sizeof link)))
        expect_found("beside the binary");
    rm_r(root);
}

/* ---- no driver / stub driver ---- */

typedef struct init_arg {
    pthread_barrier_t *bar;
    int status;
    char msg[256];
} init_arg;

static void *init_thread(void *p) {
    init_arg *a = p;
    pthread_barrier_wait(a->bar);
    a->status = warpfft_init(0);
    snprintf(a->msg, sizeof a->msg, "%s", warpfft_last_error());
    return NULL;
}

/* The first driver use in the process, from several threads at once. */
static void test_concurrent_first_init(int want, const char *key) {
    enum { N = 6 };
    pthread_barrier_t bar;
    pthread_t t[N];
    init_arg a[N];
    pthread_barrier_init(&bar, NULL, N);
    for (int i = 0; i < N; i++) {
        a[i].bar = &bar;
        pthread_create(&t[i], NULL, init_thread, &a[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(a[i].status == want && strstr(a[i].msg, key) != NULL);
    }
    pthread_barrier_destroy(&bar);
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
    pthread_barrier_t *bar;
    CUmodule mod;
    int status;
} mod_arg;

static void *mod_thread(void *p) {
    mod_arg *a = p;
    pthread_barrier_wait(a->bar);
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
    pthread_barrier_t bar;
    pthread_t t[N];
    mod_arg a[N];
    pthread_barrier_init(&bar, NULL, N);
    for (int i = 0; i < N; i++) {
        a[i] = (mod_arg){.dev = dev, .bar = &bar};
        pthread_create(&t[i], NULL, mod_thread, &a[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(a[i].status == WARPFFT_SUCCESS && a[i].mod && a[i].mod == a[0].mod);
    }
    pthread_barrier_destroy(&bar);
    wf_module_record r[16];
    size_t n = wf_module_records(r, 16);
    CHECK(n == 1 && find_record(r, n, "fill_jit"));
}

/* Runs kernel `kernel` of `module` over n floats at dx; checks the result. */
static void gpu_run(const wf_device *dev, const char *module, const char *kernel, float arg,
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
    check_(wrong == 0, module, __LINE__);
    free(h);
}

static const char *expected_image(const wf_device *dev, int module) {
    size_t size = 0, n = 0;
    unsigned char *fb = blob_copy(module, &size);
    wf_fatbin_entry e[8];
    wf_fatbin_parse(fb, size, e, 8, &n);
    free(fb);
    const char *img = wf_fatbin_image_for(e, n, dev->sm);
    return img ? img : "ptx-jit"; /* FILL_FALLBACK then JITs its PTX blob */
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
    } want[] = {{FAKE_FILL_JIT, "fill_jit", "ptx-jit"},
                {FAKE_SCALE_LINK, "scale_link", "ptx-link"},
                {FAKE_FILL_AOT, "fill_aot", NULL},
                {FAKE_FILL_FALLBACK, "fill_fallback", NULL},
                {FAKE_FILL_PTXFAT, "fill_ptxfat", "ptx-jit"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const wf_module_record *rec = find_record(r, nr < 16 ? nr : 16, want[i].name);
        const char *img = want[i].image ? want[i].image : expected_image(dev, want[i].id);
        if (!check_(rec != NULL, want[i].name, __LINE__))
            continue;
        printf("  module %-13s image %-8s %.3f ms\n", rec->name, rec->image, rec->load_ms);
        check_(strcmp(rec->image, img) == 0 && rec->load_ms >= 0, want[i].name, __LINE__);
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
    CHECK_MSG("loading module 'bad_ptx' on device 0 with cuModuleLoadDataEx (PTX JIT); JIT log: ");
    CHECK_MSG("wf_bogus_instruction");
    CHECK(strchr(warpfft_last_error(), '\n') == NULL); /* one line, JIT log included */
    printf("  bad PTX -> %s\n", warpfft_last_error());
    CHECK_ST(wf_module_get(dev, "bad_fallback", &m), WARPFFT_ERR_CUDA);
    CHECK_MSG("(the PTX fallback, after the fatbin failed with CUDA error 209)");
    CHECK(wf_module_records(NULL, 0) == loaded); /* failures are not recorded */
    CHECK_ST(wf_module_get(dev, "nope", &m), WARPFFT_ERR_NO_KERNEL);
    CHECK_MSG("no kernel module 'nope' is embedded in this build (mode aot+jit, 10 modules)");
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
    CHECK(strstr(buf, dev->name) && strstr(buf, "\"image\":\"ptx-link\""));
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
}

int main(void) {
    const char *mode = getenv("WF_TEST_EXPECT");
    mode = mode ? mode : "nodriver";
    printf("test_runtime: expecting '%s'\n", mode);
    test_status_names();
    test_error_buffer();
    test_thread_local();
    test_embedded();
    test_fatbin_layout();
    test_fatbin_variants();
    test_fatbin_malformed();
    /* Before this process touches the driver: CUDA does not survive fork. */
    run_isolated("cufft-missing", sc_cufft_missing);
    run_isolated("cufft-default", sc_cufft_default);
    run_isolated("cufft-toolkit", sc_cufft_toolkit_env);
    run_isolated("cufft-venv", sc_cufft_venv);
    if (getenv("WF_TEST_WHEEL"))
        run_isolated("cufft-wheel", sc_cufft_wheel);
    if (strcmp(mode, "gpu") == 0) {
        test_gpu();
    } else {
        int stub = strcmp(mode, "stub") == 0;
        test_concurrent_first_init(WARPFFT_ERR_NO_DRIVER,
                                   stub ? "stub libcuda was loaded" : "libcuda.so.1");
        test_error_maps(0);
        test_nogpu(stub);
    }
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
