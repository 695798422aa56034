/*
 * error.c — status codes, their names and the per-thread error message.
 *
 * Each thread has its own message buffer, so a failure on one thread never overwrites the message
 * another thread is about to read. Messages longer than the buffer are cut and end in "...".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/error.h"

/* Room for a search list of cuFFT locations or a JIT log excerpt, but bounded: it is per thread. */
#define WF_ERRMSG_MAX 4096

static _Thread_local char wf_errmsg[WF_ERRMSG_MAX];

warpfft_status wf_need_two(const char *who, const void *a, const char *a_name, const void *b,
                           const char *b_name) {
    wf_clear_error();
    if (!a || !b)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: %s is NULL", who, !a ? a_name : b_name);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_error(warpfft_status status, const char *fmt, ...) {
    /* Format into a scratch buffer first: callers may pass wf_last_error() as an argument
     * to prefix context to an earlier message, and vsnprintf must not read what it writes. */
    char tmp[WF_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        snprintf(tmp, sizeof tmp, "%s (the error message could not be formatted)",
                 wf_status_name(status));
    } else if ((size_t)n >= sizeof tmp) {
        memcpy(tmp + sizeof tmp - 4, "...", 4); /* mark the cut */
    }
    memcpy(wf_errmsg, tmp, strlen(tmp) + 1);
    return status;
}

void wf_clear_error(void) {
    wf_errmsg[0] = '\0';
}

void wf_one_line(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
            s[i] = ' ';
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

const char *wf_last_error(void) {
    return wf_errmsg;
}

const char *wf_status_name(int status) {
    static const char *const names[] = {
        "WARPFFT_SUCCESS",
        "WARPFFT_ERR_INVALID_ARG",
        "WARPFFT_ERR_BAD_TYPE",
        "WARPFFT_ERR_BAD_DIM",
        "WARPFFT_ERR_BAD_SIZE",
        "WARPFFT_ERR_BAD_TOL",
        "WARPFFT_ERR_BAD_NPOINTS",
        "WARPFFT_ERR_BAD_POINTS",
        "WARPFFT_ERR_PRECISION",
        "WARPFFT_ERR_NO_POINTS",
        "WARPFFT_ERR_NO_DRIVER",
        "WARPFFT_ERR_NO_DEVICE",
        "WARPFFT_ERR_DRIVER_TOO_OLD",
        "WARPFFT_ERR_NO_KERNEL",
        "WARPFFT_ERR_NO_CUFFT",
        "WARPFFT_ERR_CUFFT",
        "WARPFFT_ERR_OUT_OF_MEMORY",
        "WARPFFT_ERR_CUDA",
        "WARPFFT_ERR_UNSUPPORTED",
        "WARPFFT_ERR_INTERNAL",
        "WARPFFT_ERR_NO_NVRTC",
    };
    _Static_assert(sizeof names / sizeof names[0] == WARPFFT_ERR_NO_NVRTC + 1,
                   "a status code has no name");
    if (status < 0 || (size_t)status >= sizeof names / sizeof names[0])
        return "WARPFFT_ERR_UNKNOWN";
    return names[status];
}

#define WF_STR_(x) #x
#define WF_STR(x)  WF_STR_(x)

const char *wf_version(void) {
    return WF_STR(WARPFFT_VERSION_MAJOR) "." WF_STR(WARPFFT_VERSION_MINOR) "." WF_STR(
        WARPFFT_VERSION_PATCH);
}

/* ---- public ---- */

WARPFFT_API const char *warpfft_last_error(void) {
    return wf_last_error();
}

WARPFFT_API const char *warpfft_status_name(int status) {
    return wf_status_name(status);
}

WARPFFT_API const char *warpfft_version(void) {
    return wf_version();
}
