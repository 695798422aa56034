/*
 * toeplitz_kernel.h — the spectrum of a Toeplitz normal operator's kernel (toeplitz_kernel.c):
 * the type-1 transform of the points and weights on the L grid, an FFT, the scaled result.
 * Used by the operator (toeplitz.c) and by warpfft_toeplitz_spectrum.
 */
#ifndef WARPFFT_PLANS_TOEPLITZ_KERNEL_H
#define WARPFFT_PLANS_TOEPLITZ_KERNEL_H

#include <stdint.h>

#include "plans/launch.h"
#include "plans/toeplitz_params.h"
#include "runtime/cache.h" /* wf_toep_build_times */
#include "runtime/cufft.h"
#include "warpfft.h"

/* The kernel's spectrum (grid_prod values, real or complex per q->spectrum_real, dimension 1
 * fastest) into dst, from M > 0 points and weights: the type-1 transform of L modes (sign
 * -iflag, FFT order) into `scratch` (at least grid_prod complexes; 0: a buffer of its own),
 * an FFT, and the scaled real part or copy. `spare` (spare_bytes; 0: none): device memory free
 * until dst is written, where the strengths of real or no weights go when they fit (else they
 * get a buffer of their own). Runs on ex's stream and waits for it; the context
 * is current; BAD_POINTS for a non-finite coordinate (messages name `who`). k_weights and
 * k_spectrum: the kernels of module toeplitz_p. times (may be NULL): its kernel_plan_ms, run_ms
 * and release_ms are set. */
warpfft_status wf_toep_kernel(const wf_toep_params *q, int iflag, const wf_exec *ex,
                              const wf_cufft *cufft, const wf_kernel *k_weights,
                              const wf_kernel *k_spectrum, int64_t M, CUdeviceptr x, CUdeviceptr y,
                              CUdeviceptr z, CUdeviceptr w, CUdeviceptr scratch, CUdeviceptr spare,
                              size_t spare_bytes, CUdeviceptr dst, const char *who,
                              wf_toep_build_times *times);
/* The kernels of module toeplitz_<precision> that the spectrum needs (weights, spectrum), its
 * module loaded on ex's device. */
warpfft_status wf_toep_kernel_functions(const wf_exec *ex, int precision, wf_kernel *k_weights,
                                        wf_kernel *k_spectrum);
/* warpfft_toeplitz_spectrum: device, the kernels, the spectrum into dst, in the device's
 * context (entered here). */
warpfft_status wf_toep_spectrum(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, CUdeviceptr dst);

#endif /* WARPFFT_PLANS_TOEPLITZ_KERNEL_H */
