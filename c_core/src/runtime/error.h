/*
 * error.h — the per-thread error message every stage reports into (error.c), and the names of
 * the status codes. Internal: the public warpfft_last_error / warpfft_status_name /
 * warpfft_version wrap these.
 */
#ifndef WARPFFT_RUNTIME_ERROR_H
#define WARPFFT_RUNTIME_ERROR_H

#include "warpfft.h"

/* Records `status` and a printf-style message for this thread; returns `status`. */
warpfft_status wf_error(warpfft_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears this thread's message (call at the start of every public function). */
void wf_clear_error(void);
/* A public call's start for two pointer arguments that must not be NULL (a handle and an
 * output, say): clears the message, then WARPFFT_ERR_INVALID_ARG ("who: a_name is NULL") for
 * the first NULL one, else WARPFFT_SUCCESS. */
warpfft_status wf_need_two(const char *who, const void *a, const char *a_name, const void *b,
                           const char *b_name);
/* A multi-line tool log (JIT, NVRTC) made one line for a message: newlines and tabs become
 * spaces, trailing spaces go. In place. */
void wf_one_line(char *s);

/* This thread's message ("" when none): what warpfft_last_error returns. Read it before a call
 * that may clear or replace it. */
const char *wf_last_error(void);
/* "WARPFFT_SUCCESS", ..., or "WARPFFT_ERR_UNKNOWN" for a value that names no status. */
const char *wf_status_name(int status);
/* The library's version, "MAJOR.MINOR.PATCH" (warpfft.h's WARPFFT_VERSION_*). */
const char *wf_version(void);

#endif /* WARPFFT_RUNTIME_ERROR_H */
