/*
 * warpfft_xla.h — the XLA FFI custom-call handlers that libwarpfft.so exports for JAX
 * (warpfft.jax registers them with jax.ffi.register_ffi_target(name,
 * jax.ffi.pycapsule(symbol), platform="CUDA", api_version=1)), a public header of its own
 * beside warpfft.h: a framework or a C++ XLA program that registers them itself needs only
 * this. The handlers are written against XLA's typed FFI C ABI (xla/ffi/api/c_api.h, API
 * major version 0), whose two types they take are declared incomplete here: include XLA's
 * header before or after this one for their definitions. They call only the public C ABI of
 * warpfft.h, and take their plans and operators from its live-plan pool (warpfft/pool.h).
 *
 * Conventions of every handler: shapes in the Python order (the last axis is the C ABI's
 * dimension 1), mode counts n1, n2, n3 in the C order; integer attributes of any width, float
 * attributes f64; the options as one string attribute, opts: the warpfft_opts record the caller
 * resolved through the option table (warpfft/options.h), its struct_size bytes in hex
 * (lowercase or not; an older, shorter record leaves the fields it lacks at their defaults, a
 * newer one must be zero where this build knows no field; absent: the defaults). The work runs
 * on XLA's stream, on the device of the buffers. Errors come back as XLA_FFI_Error values with
 * a message (JAX raises them). No handler declares itself CUDA-graph capturable.
 */
#ifndef WARPFFT_XLA_H
#define WARPFFT_XLA_H

#include <stdint.h>

#include "warpfft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct XLA_FFI_Error XLA_FFI_Error;         /* XLA's: an error it owns */
typedef struct XLA_FFI_CallFrame XLA_FFI_CallFrame; /* XLA's: one call's arguments */

/*
 * The NUFFT handler (type 1, 2 or 3).
 * Arguments: source, then `dim` point arrays in the C plan's dimension order (dimension 1
 * first). Shapes: points (G or 1, M) of f32/f64; type 1 source (G, T, M) complex, result
 * (G, T, N3?, N2?, N1); type 2 source (G, T, N...) complex, result (G, T, M). With
 * opts.real_data (types 1 and 2): type 1's source and type 2's result are f32/f64 (real), and
 * the modes' N1 axis holds the half, N1/2 + 1 (docs/real.md).
 * Attributes (integers of any width, floats f64): nufft_type, iflag, eps, n1, n2, n3 (the C
 * plan's mode counts); and the plan options as one string, opts: the warpfft_opts record the
 * Python side resolved through the option table , its struct_size bytes in hex
 * (wf_xla_opts; absent: the defaults). The handler sets the record's device, stream, points_hint
 * and check_points (0) per call. For each of the G groups it sets the group's points (once
 * when the points are shared) and runs T transforms on XLA's stream, with a plan from the
 * live-plan pool  keyed by (type, dim, modes, T, eps, iflag, precision, options,
 * device, stream); types 1 and 2 set opts.points_hint to M rounded to the nearest power of two
 * (a tie up). G > 1 groups with their own points run as one plan of G * T transforms with
 * batched points (warpfft_setpts_sets / setpts3_sets, one execute), unless the plan spreads by
 * OD (deterministic types 1 and 3, method 3) or G exceeds 65535, or the batched plan runs out of
 * memory (OUT_OF_MEMORY: its G * T grids) or cannot take the sets' bins (BAD_SIZE): then group
 * after group as above.
 * Type 3 (nufft_type = 3; n1..n3 and modeord unused): source (G, T, M), then `dim` source
 * coordinate arrays (G or 1, M) and `dim` target coordinate arrays (G or 1, K), each set in the
 * C plan's dimension order; result (G, T, K). setpts3 runs on every call (once per group when
 * the coordinates are per group); the pooled plan's key has no M or K.
 */
WARPFFT_API XLA_FFI_Error *warpfft_xla_nufft(XLA_FFI_CallFrame *frame);

/* Plans warpfft_xla_nufft has created since the process started (for tests: jit must not
 * replan). The pool's own counts and clear: warpfft_pool_get_info, warpfft_pool_clear. */
WARPFFT_API int64_t warpfft_xla_plans_created(void);

/*
 * The Toeplitz normal operator's two handlers (warpfft/toeplitz.h; warpfft.jax.Toeplitz).
 * Attributes: dim, n1, n2, n3, eps, iflag, weights (a warpfft_weights), adjoint; and opts,
 * whose modeord is the mode arrays' and whose other fields drive the kernel's type-1 transform.
 */

/* Arguments: dim point arrays (M,) of f32/f64 in the C order (dimension 1 first), then the
 * weights (M,) (real or complex of that precision) unless weights = 0; result: the kernel's
 * spectrum (L_dim, .., L_1), real unless the weights are complex. warpfft_toeplitz_spectrum on
 * XLA's stream (it waits for its work). */
WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_spectrum(XLA_FFI_CallFrame *frame);

/* Arguments: the spectrum (L_dim, .., L_1) real or complex, the modes (T, N_dim, .., N_1)
 * complex64/complex128; result: T (adjoint != 0: T^H) applied to the T mode arrays, with a zero
 * operator of the live-plan pool (warpfft_pool_acquire_toeplitz) keyed by (dim, modes, T, eps,
 * precision, options, device, stream), released after the application is enqueued. */
WARPFFT_API XLA_FFI_Error *warpfft_xla_toeplitz_apply(XLA_FFI_CallFrame *frame);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_XLA_H */
