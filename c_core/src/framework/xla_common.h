/*
 * xla_common.h — what both XLA FFI handlers (xla_ffi.c, xla_toeplitz.c) need from XLA's call
 * frame alike: an error value with a message (or for a warpfft status), a scalar attribute by
 * name and type, the plan options (one attribute), an argument buffer, the call's stream, and
 * the device a buffer lives on. Internal to framework/.
 */
#ifndef WARPFFT_FRAMEWORK_XLA_COMMON_H
#define WARPFFT_FRAMEWORK_XLA_COMMON_H

#include <stdint.h>

#include "framework/xla_ffi.h"

/* An XLA_FFI_Error with code errc and the formatted message (at most 1535 bytes kept). */
XLA_FFI_Error *wf_xla_error(const XLA_FFI_CallFrame *f, int errc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error for a failed warpfft call `what` (status st, warpfft_last_error's message): XLA's
 * code by the status (RESOURCE_EXHAUSTED for out of memory, UNAVAILABLE for a missing driver,
 * device, library or kernel, UNIMPLEMENTED for UNSUPPORTED, INTERNAL for CUDA, cuFFT and
 * internal errors, else INVALID_ARGUMENT). */
XLA_FFI_Error *wf_xla_status_error(const XLA_FFI_CallFrame *f, warpfft_status st, const char *what);
/* The scalar attribute `name`, else NULL. */
const XLA_FFI_Scalar *wf_xla_find_attr(const XLA_FFI_Attrs *at, const char *name);
/* Scalar attribute `name` into *out: an integer of any width (s32, s64, u32, u64; int: one that
 * fits a C int), or a float (f64, f32). 0 when found and valid, -1 otherwise (out unchanged). */
int wf_xla_attr_i64(const XLA_FFI_Attrs *at, const char *name, int64_t *out);
int wf_xla_attr_int(const XLA_FFI_Attrs *at, const char *name, int *out);
int wf_xla_attr_f64(const XLA_FFI_Attrs *at, const char *name, double *out);
/* The call's plan options into *out: the string attribute "opts", a warpfft_opts record in hex
 * (lowercase or not; its struct_size bytes, as python/warpfft/_options.py writes it) read over
 * warpfft_opts_default's: an older (shorter) record leaves the fields it lacks at their
 * defaults, a newer (longer) one must be zero where this build knows no field. Absent: the
 * defaults. The values are checked where they are used (plan creation: the option table). */
XLA_FFI_Error *wf_xla_opts(const XLA_FFI_CallFrame *f, warpfft_opts *out);
/* Argument i when it is a buffer, else NULL. */
const XLA_FFI_Buffer *wf_xla_arg_buffer(const XLA_FFI_CallFrame *f, int64_t i);
/* The call's CUDA stream into *stream; an error when XLA's API has no Stream_Get or it fails. */
XLA_FFI_Error *wf_xla_stream_of(XLA_FFI_CallFrame *f, uint64_t *stream);
/* The ordinal of the device holding `ptr` (from the driver XLA loaded, loading nothing new);
 * else the current context's device; else 0. */
int wf_xla_device_of(void *ptr);

/* Registration's metadata request (an extension of the frame): answers it with the API
 * version and no traits (no handler is CUDA-graph capturable: they may create plans, and some
 * wait on the host); 1 when the frame was one, 0 for a call. */
int wf_xla_metadata(XLA_FFI_CallFrame *f);

#endif /* WARPFFT_FRAMEWORK_XLA_COMMON_H */
