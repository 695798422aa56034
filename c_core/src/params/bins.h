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

/* Default bin edges per transform type (1, 2), method (GM, SM or OD), dim and precision, for
 * SM those cost.c's fit was measured with; unused dims 1. A plan's SM bins depend on the width
 * too: wf_sm_bins. */
void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]);
/* The default SM bins of a plan: for spreading with the tile in registers (wf_smr_nr > 0)
 * wf_smr_default_bins; 3D f64 type 2 at widths up to 10 8x8x8; else wf_default_bins. */
void wf_sm_bins(int type, int dim, int precision, int width, int32_t bs[3]);
/* Threads per block of SM spreading over bins bs: for the tile in registers (wf_smr_nr > 0) 32
 * x its warps (wf_smr_warps); else 256, or the fewer that a 3D width measured faster with (192
 * for f32 w7), the kernels' WF_OD_MIN_BLOCK (kernels/spreadinterp.cu) being the same table. A
 * smaller block makes the kernels trap. */
int wf_sm_spread_block(int dim, int precision, int width, const int32_t bs[3]);
/* Threads per block of SM interpolation: 256, or 128 for 2D f32 at widths 7 and 8 (measured
 * faster; the interpolation kernels take any multiple of 32 up to 256). */
int wf_sm_interp_block(int dim, int precision, int width);
/* Shared memory of one SM tile: prod_{d<dim} (bs_d + 2*pad) * cell bytes, pad = (w+1)/2. */
size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes);
/* Shared-memory bytes per SM tile cell of a plan's kernel: the value's (wf_value_bytes:
 * complex_bytes, real_bytes for real data), or for 1D and 2D f32 spreading its fixed-point
 * words, 16 (8 real: kernels/spreadinterp.cu WF_SPREAD_SM_FIX); the tile in shared memory only
 * (not wf_params_smr_nr's). */
size_t wf_sm_cell_bytes(const wf_params *p);
/* Halves the largest bin edge (not below 2) until the tile fits in limit; 1 if it fits. */
int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit);
/* SM spreading with the tile in registers (kernels/spreadinterp/smr_spread.cuh; which modules
 * and their shape: kernels/smr_shape.h). The NR of the spreading SM module of (dim, precision,
 * width): complex registers per thread along the tile's last dimension, 0 when the module keeps
 * its tile in shared memory. */
int wf_smr_nr(int dim, int precision, int width);
/* wf_smr_nr of a plan's spreading (type 1; 0 for type 2). */
int wf_params_smr_nr(const wf_params *p);
/* Dynamic shared memory of one launch of p's spreading (spread 1) or interpolation kernel at
 * `width` on p's bins: p.tile_bytes at p.width; a narrower width the points chose
 * (plans/spreader_width.c) may take the other kind of SM tile (the register tile's point
 * batches, or the tile in shared memory), so its launch needs its own. GM: 0; OD: p.tile_bytes
 * (sized for p.width, which holds every narrower one). */
size_t wf_sm_launch_bytes(const wf_params *p, int spread, int width);
/* Default bins of the tile in registers: the last extent NR - 2 pad (pad = (w + 1) / 2), the
 * others 8 x 8 (3D) or 128 - 2 pad (2D: four warps of tile columns); unused dims 1. */
void wf_smr_default_bins(int dim, int precision, int width, int32_t bs[3]);
/* The warps of the tile in registers over bins bs, one lane per tile column: ceil(td1 / 32)
 * (2D), ceil(td1 td2 / 32) (3D), td_d = bs_d + 2 pad. */
int wf_smr_warps(int dim, const int32_t bs[3], int width);
/* The most warps a block of the register-tile kernel may have: 64K registers over 32 x its
 * register cap (WF_SMR_MAXREG_OF), at most the 11 measured to launch (bins.c). */
int wf_smr_max_warps(int precision, int nr);
/* Whether p's SM spreading (type 1) at `width` can run with p's bins: for a width whose tile is
 * in registers, the last extent within NR and the block within wf_smr_max_warps; 1 for every
 * other width, method and type. For the widths below p.width a plan may run (plans/
 * spreader_width.c): p's bins were fitted to p.width. */
int wf_sm_spread_runs(const wf_params *p, int width);
/* Dynamic shared memory of the tile in registers (its point batches; kernels/ABI.md):
 * NB (NRP sizeof(T) + 32 + 2 sizeof(V) + W sizeof(V) + 16 d + (d = 3 ? W sizeof(T) : 0)),
 * NB = 32 x WF_SMR_NBW_OF, NRP = NR rounded up to 16 bytes of T, V = cT, or T for real data
 * (real 1). Independent of the bins. */
size_t wf_smr_batch_bytes(int dim, int precision, int real, int width);
/* Fits bins to the tile in registers: the last extent to at most NR - 2 pad (the tile's last
 * extent then fits the NR registers), then the largest other extent halved (not below 1) until
 * the block's warps are at most max_warps; 1 if they are. */
int wf_fit_smr_bins(int dim, int32_t bs[3], int width, int nr, int max_warps);
/* The AUTO rule, from H100 measurements (bins.c): OD for deterministic type-1 spreading; GM for
 * 3D f64 type 2 below 0.2 points per fine-grid cell (density: opts.points_hint over the fine
 * grid, 0 when there is no hint); else SM where its tile fits, else GM. */
int wf_auto_method(int type, int dim, int precision, int width, int sm_fits, int deterministic,
                   double density);
/* Whether setpts of M points per set interpolates by GM on a plan with p.interp_gm_late (the
 * rule of wf_auto_method, with the density of the points given). */
int wf_late_gm(const wf_params *p, int64_t M);
/* The OD launch shape of a (dim, precision, width; real 1 for real data, whose row pitch
 * counts real values): warp tile, default bins, warps per block and row pitch, from the H100
 * measurements in bins.c (unused dims 1). */
void wf_od_shape(int dim, int precision, int real, int width, int32_t tile[3], int32_t bins[3],
                 int32_t *nwarps, int32_t *pitch);
/* Dynamic shared memory of one OD warp (kernels/ABI.md): its tile of pitch x tl2 x tl3 cells
 * (complex, or real with real 1), rounded up to 16 bytes, and its staging area
 * WF_OD_STAGE_BYTES. */
size_t wf_od_warp_bytes(int dim, int precision, int real, int width, const int32_t tile[3],
                        int32_t pitch);
/* Plan stage (after the grid): p->deterministic, method, bin_size, n_bins, nbins, maxsub,
 * tile_bytes and the OD shape from the options; limit: shared memory per block available to
 * the tile (SM spreading with the tile in registers: to its point batches).
 * WARPFFT_ERR_UNSUPPORTED when method SM was asked for and no tile fits, or method OD for a
 * type-2 plan; WARPFFT_ERR_INVALID_ARG for deterministic type-1 spreading with method GM or SM;
 * WARPFFT_ERR_BAD_SIZE for more than INT32_MAX bins. */
warpfft_status wf_params_set_method(wf_params *p, const warpfft_opts *o, size_t limit);

#endif /* WARPFFT_PARAMS_BINS_H */
