/*
 * bins.h — spreading bins, shared-memory tiles and the method: GM, SM, or OD (output-driven,
 * for deterministic plans) with its warp tiles (bins.c).
 */
#ifndef WARPFFT_PARAMS_BINS_H
#define WARPFFT_PARAMS_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "warpfft.h"

/* Default bin edges per transform type (1, 2), method (GM, SM or OD), dim and precision; unused
 * dims 1. */
void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]);
/* Threads per block of SM spreading: 256, or the fewer that a 3D width measured faster with
 * (192 for f32 w7); the kernels' WF_OD_MIN_BLOCK (kernels/spreadinterp.cu) is the same table,
 * and a smaller block makes them trap. */
int wf_sm_spread_block(int dim, int precision, int width);
/* Threads per block of SM interpolation: 256, or 128 for 2D f32 at widths 7 and 8 (measured
 * faster; the interpolation kernels take any multiple of 32 up to 256). */
int wf_sm_interp_block(int dim, int precision, int width);
/* Shared memory of one SM tile: prod_{d<dim} (bs_d + 2*pad) * complex_bytes, pad = (w+1)/2. */
size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes);
/* Shared-memory bytes per SM tile cell of a plan's kernel: complex_bytes, or 16 for 1D and 2D f32
 * spreading (fixed-point words, kernels/spreadinterp.cu WF_SPREAD_SM_FIX). */
size_t wf_sm_cell_bytes(const wf_params *p);
/* Halves the largest bin edge (not below 2) until the tile fits in limit; 1 if it fits. */
int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit);
/* The AUTO rule, from H100 measurements (bins.c): OD for deterministic type-1 spreading; GM for
 * 3D f64 type 2 below 0.2 points per fine-grid cell (density: opts.points_hint over the fine
 * grid, 0 when there is no hint); else SM where its tile fits, else GM. */
int wf_auto_method(int type, int dim, int precision, int width, int sm_fits, int deterministic,
                   double density);
/* The OD launch shape of a (dim, precision, width): warp tile, default bins, warps per block
 * and row pitch, from the H100 measurements in bins.c (unused dims 1). */
void wf_od_shape(int dim, int precision, int width, int32_t tile[3], int32_t bins[3],
                 int32_t *nwarps, int32_t *pitch);
/* Dynamic shared memory of one OD warp (kernels/ABI.md): its tile of pitch x tl2 x tl3 cells,
 * rounded up to 16 bytes, and its staging area WF_OD_STAGE_BYTES. */
size_t wf_od_warp_bytes(int dim, int precision, int width, const int32_t tile[3], int32_t pitch);
/* Plan stage (after the grid): p->deterministic, method, bin_size, n_bins, nbins, maxsub,
 * tile_bytes and the OD shape from the options; limit: shared memory per block available to
 * the tile. WARPFFT_ERR_UNSUPPORTED when method SM was asked for and no tile fits, or method OD
 * for a type-2 plan; WARPFFT_ERR_INVALID_ARG for deterministic type-1 spreading with method GM
 * or SM; WARPFFT_ERR_BAD_SIZE for more than INT32_MAX bins. */
warpfft_status wf_params_set_method(wf_params *p, const warpfft_opts *o, size_t limit);

#endif /* WARPFFT_PARAMS_BINS_H */
