/*
 * test_rt_cufft.c — the cuFFT search ($WARPFFT_CUFFT_LIB, pip wheels beside the library,
 * $VIRTUAL_ENV, the toolkit, the system loader), one forked scenario per environment setup
 * because a success is cached for the process.
 */
#include "test_runtime.h"

#define SYSTEM_CUFFT "/usr/local/cuda/lib64/libcufft.so.12"

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

void test_cufft_search(void) {
    run_isolated("cufft-missing", sc_cufft_missing);
    run_isolated("cufft-default", sc_cufft_default);
    run_isolated("cufft-toolkit", sc_cufft_toolkit_env);
    run_isolated("cufft-venv", sc_cufft_venv);
    if (getenv("WF_TEST_WHEEL"))
        run_isolated("cufft-wheel", sc_cufft_wheel);
}
