/*
 * warpfft/diagnostics.h — checking and tuning aids: exact sums at samples of the outputs, the FFT
 * step timed alone. Part of warpfft's public C ABI: include <warpfft.h>, which includes every
 * part (each part includes the parts it needs and may be included alone; warpfft.h's opening
 * comment states the conventions all of them share).
 */
#ifndef WARPFFT_DIAGNOSTICS_H
#define WARPFFT_DIAGNOSTICS_H

#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reference ---- */

/* Exact non-uniform DFT in double precision on the GPU, at a sample of outputs, for checking
 * accuracy. Arguments as the plan's (x, y, z, c, fk device arrays of `precision`, transform 0 of
 * a batch). type 1: out[s] = f[k(sample[s])] for mode-array indices sample[s] (0 <= sample <
 * N1*N2*N3, index ordering per modeord); type 2: out[s] = c[sample[s]] for point indices.
 * sample: host array of n_sample indices; out: host array of 2*n_sample doubles (re, im).
 * Synchronous. */
WARPFFT_API warpfft_status warpfft_direct_sample(int type, int dim, const int64_t n_modes[3],
                                                 int iflag, int modeord,
                                                 warpfft_precision precision, int device, int64_t M,
                                                 const void *x, const void *y, const void *z,
                                                 const void *c, const void *fk, int64_t n_sample,
                                                 const int64_t *sample, double *out);

/* Type 3: out[i] = f[sample[i]] = sum_j c[j] exp(iflag * i * s_k . x_j), k = sample[i] (a
 * target index, 0 <= k < K), exactly in double on the GPU, for M sources (x, y, z), K targets
 * (s, t, u) and strengths c (device arrays of `precision`; transform 0). out: host array of
 * 2*n_sample doubles. Synchronous. */
WARPFFT_API warpfft_status warpfft_direct_sample3(int dim, int iflag, warpfft_precision precision,
                                                  int device, int64_t M, const void *x,
                                                  const void *y, const void *z, const void *c,
                                                  int64_t K, const void *s, const void *t,
                                                  const void *u, int64_t n_sample,
                                                  const int64_t *sample, double *out);

/* ---- tuning aids ---- */

/* Times the FFT step of execute alone: a cuFFT plan made as a NUFFT plan's (in-place batched
 * C2C for WARPFFT_F32, Z2Z for WARPFFT_F64, forward, over `batch` grids of n_fine[0..dim-1]
 * points, dimension 1 fastest; e.g. warpfft_plan_info's n_fine and the plan's ntransf), on the
 * legacy default stream of `device`, through the cuFFT warpfft loads (warpfft_cufft_probe).
 * Runs one warm-up transform, then `reps` (1..100000) between two CUDA events; *ms receives
 * their elapsed time divided by reps (0 on failure). Allocates the grid (zeroed) and cuFFT's
 * work area itself and frees everything, cuFFT plan and events included, before it returns.
 * Statuses: BAD_DIM, BAD_SIZE (an n_fine[d] < 1, batch < 1, or a grid too large for memory),
 * INVALID_ARG (NULL pointer, bad precision or reps), OUT_OF_MEMORY, NO_DRIVER (also when the
 * driver lacks the event functions), NO_DEVICE, NO_CUFFT, CUFFT, CUDA. Synchronous. */
WARPFFT_API warpfft_status warpfft_bench_fft(int dim, const int64_t n_fine[3],
                                             warpfft_precision precision, int64_t batch, int device,
                                             int reps, double *ms);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_DIAGNOSTICS_H */
