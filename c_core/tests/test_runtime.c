/*
 * test_runtime.c — tests of the runtime stages (error, loader, cufft, module, memory, info,
 * fatbin) in three environments, chosen by $WF_TEST_EXPECT (run_tests.sh sets it):
 *   nodriver  no libcuda.so.1 on the loader path (a CPU build machine)
 *   stub      the toolkit's stub libcuda.so.1 found first (cuInit fails with STUB_LIBRARY)
 *   gpu       a real driver and GPU: devices, memory, module loading (SASS, PTX JIT, cuLink,
 *             fallbacks), kernel lookup and launch, runtime info
 * The cuFFT search is tested in forked children, one per environment setup, because a success
 * is cached for the process. Prints "N passed, M failed" last; exits non-zero on a failure.
 * This file: the helpers of test_runtime.h and main; the groups of checks are test_rt_*.c.
 */
#include "test_runtime.h"

int n_pass, n_fail;

int check_status_(int got, int want, const char *expr, const char *file, int line) {
    if (got == want)
        return check_pass();
    return check_fail(file, line, expr, "gave %s, expected %s; last error: %s",
                      warpfft_status_name(got), warpfft_status_name(want), warpfft_last_error());
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

int main(void) {
    const char *mode = getenv("WF_TEST_EXPECT");
    mode = mode ? mode : "nodriver";
    printf("test_runtime: expecting '%s'\n", mode);
    if (strcmp(mode, "standin") == 0) { /* run_tests.sh: the stand-in driver and NVRTC */
        test_nvrtc_standin();
        return check_summary("");
    }
    test_errors();
    test_fatbin();
    /* Before this process touches the driver: CUDA does not survive fork. */
    test_cufft_search();
    test_driver(mode);
    return check_summary("");
}
