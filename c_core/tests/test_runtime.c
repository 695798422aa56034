/*
 * test_runtime.c — tests of the runtime stages (error, loader, cufft, module, memory, info,
 * fatbin) in three environments, chosen by $WF_TEST_EXPECT (run_tests.sh sets it):
 *   nodriver  no libcuda.so.1 on the loader path (a CPU build machine)
 *   stub      the toolkit's stub libcuda.so.1 found first (cuInit fails with STUB_LIBRARY)
 *   gpu       a real driver and GPU: devices, memory, module loading (SASS, PTX JIT, cuLink,
 *             fallbacks), kernel lookup and launch, runtime info
 * The cuFFT search is tested in forked children, one per environment setup, because a success
 * is cached for the process. Prints "N passed, M failed" last; exits non-zero on a failure.
 * This file: the harness (test_runtime.h) and main; the groups of checks are test_rt_*.c.
 */
#include "test_runtime.h"

int n_pass, n_fail;

int check_(int ok, const char *expr, int line) {
    if (ok) {
        n_pass++;
    } else {
        n_fail++;
        printf("FAIL line %d: %s\n      last error: %s\n", line, expr, warpfft_last_error());
    }
    return ok;
}

int check_status_(int got, int want, const char *expr, int line) {
    if (got == want) {
        n_pass++;
        return 1;
    }
    n_fail++;
    printf("FAIL line %d: %s gave %s, expected %s\n      last error: %s\n", line, expr,
           warpfft_status_name(got), warpfft_status_name(want), warpfft_last_error());
    return 0;
}

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
int json_valid(const char *s) {
    const char *p = jv_value(s, 0);
    return p && *jv_ws(p) == '\0';
}

/* ---- running a group of checks in a child process ---- */

void run_isolated(const char *name, void (*fn)(void)) {
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

int main(void) {
    const char *mode = getenv("WF_TEST_EXPECT");
    mode = mode ? mode : "nodriver";
    printf("test_runtime: expecting '%s'\n", mode);
    if (strcmp(mode, "standin") == 0) { /* run_tests.sh: the stand-in driver and NVRTC */
        test_nvrtc_standin();
        printf("%d passed, %d failed\n", n_pass, n_fail);
        return n_fail ? 1 : 0;
    }
    test_errors();
    test_fatbin();
    /* Before this process touches the driver: CUDA does not survive fork. */
    test_cufft_search();
    test_driver(mode);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
