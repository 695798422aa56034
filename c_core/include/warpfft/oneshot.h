/*
 * warpfft/oneshot.h — one-call transforms: a plan made, used and given back in one call, over
 * the live-plan pool, for callers that want no plan handle (Julia, Fortran, MATLAB and C code
 * that calls the C ABI as it would call a library function). Part of warpfft's public C ABI:
 * include <warpfft.h>, which includes every part (each part includes the parts it needs and may
 * be included alone; warpfft.h's opening comment states the conventions all of them share).
 */
#ifndef WARPFFT_ONESHOT_H
#define WARPFFT_ONESHOT_H

#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- one-call transforms ----
 *
 * warpfft_nufft1, warpfft_nufft2 and warpfft_nufft3 each do what warpfft_plan_create, a setpts,
 * warpfft_execute and warpfft_plan_destroy do in turn (the reference's simple interface,
 * cufinufft1d1 ... cufinufft3d3many, as one function per type: dim, precision and the number
 * of transforms are arguments). The plan comes from the live-plan pool (warpfft/pool.h):
 * a repeated call with the same arguments (n_modes, tol, precision, ntransf, every option, the
 * stream and the device) takes the idle plan the previous call gave back, so it costs a
 * setpts and an execute, not a plan creation (cuFFT planning, kernel loading, deconvolution
 * factors). The pool's limits ($WARPFFT_POOL_SIZE, $WARPFFT_POOL_BYTES,
 * warpfft_pool_set_limits) bound what stays idle; warpfft_pool_clear frees it.
 *
 * Arguments: those of warpfft_plan_create (type fixed by the function; opts may be NULL), then
 * those of the setpts and of warpfft_execute: device arrays of the precision given, x, y, z
 * the M points (y for dim >= 2, z for dim 3), c the ntransf * M strengths (complex), fk the
 * ntransf * N1 * N2 * N3 modes (types 1 and 2; mode order opts.modeord) or, type 3, the
 * ntransf * K values at the K targets s, t, u. Types 1 and 2 with opts.points_hint 0 (the
 * default) choose upsampfac and width for M points (M rounded to the nearest power of two, as
 * the Python package and the JAX and PyTorch ops do, so that calls with nearby M share a
 * plan); a points_hint given is kept.
 *
 * Streams: asynchronous on opts.stream (0: the legacy stream) as warpfft_execute is. The call
 * returns once the work is enqueued; wait with warpfft_stream_sync (or a synchronous copy)
 * before reading the output or freeing or changing the inputs. Type 3 waits as warpfft_setpts3
 * does (for the points' bounds, and after binning), so its points may be freed at return, its
 * strengths and values only after a wait. With opts.check_points = 1, types 1 and 2 wait once
 * at the setpts and return WARPFFT_ERR_BAD_POINTS for a NaN or infinite coordinate; with 0
 * (the default) such a point set makes every output NaN, as warpfft_setpts says.
 *
 * Errors: every check and status of the four calls it makes (argument errors before the GPU is
 * touched), with their messages; after a failure nothing of the call stays in use (the plan
 * goes back to the pool, or, after running out of device memory, is destroyed so that its
 * memory is free for a retry). Thread-safe: concurrent calls take different plans. */

/* Type 1: fk = sum_j c_j exp(iflag i k.x_j) for the N1 x N2 x N3 modes k (per transform). */
WARPFFT_API warpfft_status warpfft_nufft1(int dim, const int64_t n_modes[3], int iflag,
                                          int64_t ntransf, double tol, warpfft_precision precision,
                                          const warpfft_opts *opts, int64_t M, const void *x,
                                          const void *y, const void *z, const void *c, void *fk);
/* Type 2: c_j = sum_k fk_k exp(iflag i k.x_j) at the M points (per transform). */
WARPFFT_API warpfft_status warpfft_nufft2(int dim, const int64_t n_modes[3], int iflag,
                                          int64_t ntransf, double tol, warpfft_precision precision,
                                          const warpfft_opts *opts, int64_t M, const void *x,
                                          const void *y, const void *z, void *c, const void *fk);
/* Type 3: fk_k = sum_j c_j exp(iflag i s_k.x_j) at the K targets (s, t, u) from the M sources
 * (x, y, z) (per transform). M = 0 writes zeros, K = 0 does nothing, as warpfft_setpts3. */
WARPFFT_API warpfft_status warpfft_nufft3(int dim, int iflag, int64_t ntransf, double tol,
                                          warpfft_precision precision, const warpfft_opts *opts,
                                          int64_t M, const void *x, const void *y, const void *z,
                                          const void *c, int64_t K, const void *s, const void *t,
                                          const void *u, void *fk);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_ONESHOT_H */
