/*
 * xla_toeplitz.h — the XLA FFI handlers of warpfft.jax's Toeplitz operator (xla_toeplitz.c),
 * registered for platform CUDA with api_version 1 by python/warpfft/jax/_toeplitz.py. Not
 * installed. Shapes in the Python order (the last axis is the C ABI's dimension 1); the mode
 * counts n1, n2, n3 in the C order. Attributes (integers s32/s64, floats f64): dim, n1, n2, n3,
 * eps, iflag, weights (warpfft_weights), adjoint; and the options as one string, opts: the
 * warpfft_opts record in hex (xla_ffi.h's, wf_xla_opts; absent: the defaults), whose modeord is
 * the mode arrays' and whose other fields drive the kernel's type-1 transform.
 */
#ifndef WARPFFT_XLA_TOEPLITZ_H
#define WARPFFT_XLA_TOEPLITZ_H

#include "framework/xla_ffi.h"

/* Arguments: dim point arrays (M,) of f32/f64 in the C order (dimension 1 first), then the
 * weights (M,) (real or complex of that precision) unless weights = 0; result: the kernel's
 * spectrum (L_dim, .., L_1), real unless the weights are complex. warpfft_toeplitz_spectrum on
 * XLA's stream (it waits for its work). */
WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_spectrum(XLA_FFI_CallFrame *frame);

/* Arguments: the spectrum (L_dim, .., L_1) real or complex, the modes (T, N_dim, .., N_1)
 * complex64/complex128; result: T (adjoint != 0: T^H) applied to the T mode arrays, with a zero
 * operator of the shape from a cache of 8 keyed by (dim, modes, T, eps, precision, modeord,
 * device, stream). */
WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_apply(XLA_FFI_CallFrame *frame);

/* Zero operators the apply handler has created in this process (a jitted loop adds none). */
WARPFFT_API int64_t warpfft_xla_toeplitz_created(void);
/* Destroys the cached operators no call is using (after waiting for their streams). */
WARPFFT_API void warpfft_xla_toeplitz_cache_clear(void);

#endif /* WARPFFT_XLA_TOEPLITZ_H */
