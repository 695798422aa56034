/*
 * stub_error.h — a minimal, thread-unsafe stand-in for runtime/error.h's functions (wf_error,
 * wf_clear_error, wf_last_error) and warpfft_last_error, for a test binary linked without
 * runtime/error.c. Include it in one file of the binary; that file may write stub_error_msg (the
 * message) itself too.
 */
#ifndef WARPFFT_TEST_STUB_ERROR_H
#define WARPFFT_TEST_STUB_ERROR_H

#include <stdarg.h>
#include <stdio.h>

#include "runtime/error.h"

static char stub_error_msg[1024];

warpfft_status wf_error(warpfft_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(stub_error_msg, sizeof stub_error_msg, fmt, ap);
    va_end(ap);
    return status;
}

void wf_clear_error(void) {
    stub_error_msg[0] = '\0';
}

const char *wf_last_error(void) {
    return stub_error_msg;
}

const char *warpfft_last_error(void) {
    return stub_error_msg;
}

#endif /* WARPFFT_TEST_STUB_ERROR_H */
