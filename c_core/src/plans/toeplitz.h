/*
 * toeplitz.h — the Toeplitz normal operator T = A^H W A, internal (toeplitz_params.c: the choice;
 * toeplitz.c: create, apply, release; toeplitz_kernel.c: the kernel's spectrum). A is the type-2
 * transform of sign iflag over M points, A^H the type-1 transform of sign -iflag, W the weights. T
 * is the convolution of the modes with K(m) = sum_j w_j exp(-iflag i m.x_j), so the operator holds
 * the DFT of K on a grid of L_d = next_smooth_even(2 N_d - 1) points per dimension (its spectrum,
 * computed once with a type-1 transform of L modes and an FFT) and applies T with an FFT pair
 * and a pointwise product (kernels/toeplitz.cu; docs/toeplitz.md has the math).
 * The public calls (api/toeplitz.c) use these; nothing here calls the public ABI. create and
 * spectrum enter the device's context themselves; apply runs in the context its caller made
 * current.
 */
#ifndef WARPFFT_PLANS_TOEPLITZ_H
#define WARPFFT_PLANS_TOEPLITZ_H

#include <stddef.h>
#include <stdint.h>

#include "plans/launch.h"
#include "plans/toeplitz_params.h"
#include "runtime/cufft.h"
#include "runtime/memory.h"
#include "warpfft.h"

typedef struct wf_toeplitz {
    wf_toep_params q;
    int iflag; /* +1 or -1: the sign of A */
    wf_exec ex;
    const wf_cufft *cufft;
    /* kernels of module toeplitz_p */
    wf_kernel k_pad, k_crop, k_mulr, k_mulc, k_weights, k_spectrum;
    wf_dbuf block;      /* the one device allocation the three below are carved from */
    wf_dbuf grid;       /* the work grid, ntransf transforms, layout of kernels/ABI.md */
    wf_dbuf spectrum;   /* the kernel's spectrum (none for M = 0: the zero operator) */
    wf_dbuf fft_work;   /* cuFFT's work area, shared by the step plans */
    cufftHandle fft[2]; /* one step: [0] the batched FFT of the grid; two (dim >= 2): [0] the
                           faster dimensions over the first N_dim slabs, [1] the slowest one */
    int fft_created[2];
    int n_fft;
    int ready;      /* plans made and bound to the block: the plan cache may keep them */
    int from_cache; /* the plans and block came from the plan cache */
    int64_t M;
    double build_ms;
    size_t workspace; /* bytes of the block */
} wf_toeplitz;

/* The operator for the arguments of warpfft_toeplitz_create (checked by the caller with
 * wf_toep_choose's checks of the points): device, kernels, grid, FFT plans, and for M > 0 the
 * spectrum from the points and weights (w: T or cT per `weights`; NULL for none). Waits for
 * its work before returning. */
warpfft_status wf_toeplitz_create(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                  CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, wf_toeplitz **out);
/* T (or T^H with adjoint) on ntransf mode arrays in -> out (may be equal), on the stream, with
 * the spectrum at `spectrum` (real or complex per spectrum_real; 0 with the zero operator:
 * out is zeroed). The device's context is current. */
warpfft_status wf_toeplitz_apply(wf_toeplitz *t, CUdeviceptr spectrum, int spectrum_real,
                                 int adjoint, CUdeviceptr in, CUdeviceptr out);
/* Gives the step plans and the block to the plan cache (when it keeps them and `work`, a
 * WF_WORK_* value of nufft12.h, allows: PENDING waits for the operator's stream first, DONE
 * does not touch it, LOST frees them), else destroys and frees them; t itself stays (free()
 * it). Returns the first failing cufftDestroy's result (0: success or cached): the block is
 * freed or cached either way. The context is current. */
cufftResult wf_toeplitz_release(wf_toeplitz *t, int work);
/* warpfft_toeplitz_get_info of an operator. */
void wf_toeplitz_info(const wf_toeplitz *t, warpfft_toeplitz_info *info);

#endif /* WARPFFT_PLANS_TOEPLITZ_H */
