/*
 * params.h — what a plan chooses, computed on the host without a GPU (params.c): argument
 * checks, and wf_params_make, which runs the stages in order —
 *   options.h the option table: defaults, bounds and checks of warpfft_opts, the tol range;
 *   kernel.h  the sinh kernel (beta, embedded widths), quadrature, phihat, deconvolution factors;
 *   width.h   the width rule: predicted aliasing error and the smallest width that meets tol;
 *   grid.h    fine-grid sizes (and their limits), mode order, point folding;
 *   bins.h    spreading bins, shared-memory tiles and the GM/SM method;
 *   cost.h    for upsampfac 0, sigma and width by predicted time (instead of width.h alone).
 * Pure functions of their arguments (unit-tested in c_core/tests/test_params.c). Size limits are
 * the WF_MAX_* constants of base.h, enforced in wf_check_modes (params.c), wf_params_set_grid
 * (grid.c) and wf_params_set_method (bins.c).
 */
#ifndef WARPFFT_PARAMS_PARAMS_H
#define WARPFFT_PARAMS_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "params/options.h" /* wf_opts_resolve, wf_check_tol: the option table */
#include "warpfft.h"

/* ---- validation (each returns a status with a message naming the argument and its value) ---- */
warpfft_status wf_check_type(int type);
warpfft_status wf_check_dim(int dim);
warpfft_status wf_check_precision(int precision);
/* n_modes non-NULL, n_modes[d] in [1, WF_MAX_MODES_PER_DIM] for d < dim. */
warpfft_status wf_check_modes(int dim, const int64_t n_modes[3]);
/* type, dim, precision and n_modes, in that order (what plans and direct sums share). */
warpfft_status wf_check_problem(int type, int dim, int precision, const int64_t n_modes[3]);
/* opts.real_data against the rest of a type 1 or 2 request: spread/interp only refuses it
 * (WARPFFT_ERR_UNSUPPORTED: no FFT, so no half spectrum). */
warpfft_status wf_check_real_data(const warpfft_opts *o);
/* Name of the first coordinate array dim needs that is NULL ("x", "y", "z"), or NULL. */
const char *wf_missing_coord(int dim, const void *x, const void *y, const void *z);

/* A plan's request, resolved (wf_params_resolve): the options checked against their table with
 * the defaults filled in, and every parameter that does not depend on the device: sigma and
 * the kernel width (cost.c's choice for upsampfac 0, else the width rule), the fine grid, the
 * rounding floor, the predicted time. What depends on the device (method, bins, tiles: its
 * shared memory) is wf_params_fit's. Plan creation, warpfft_plan_params, the pool's key and
 * the Toeplitz build each resolve a request once and hand the result on: nothing is chosen
 * twice in one creation. Across creations, cost.c remembers its choice per request (32 of
 * them) and offsets.c its tables per shape (16), so a second plan of a problem skips both. */
typedef struct wf_resolved {
    warpfft_opts opts; /* every field this build knows, checked (wf_opts_resolve) */
    wf_params p;       /* all but wf_params_set_method's fields (method, bins, tiles: 0) */
} wf_resolved;

/* Validates the plan arguments (type 1 or 2), resolves opts and runs the device-independent
 * stages in order: the basics, the kernel (wf_params_choose_sigma for upsampfac 0, else
 * wf_params_set_kernel), the grid (wf_params_set_grid) and the predicted time. */
warpfft_status wf_params_resolve(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                                 double tol, int precision, const warpfft_opts *opts,
                                 wf_resolved *r);
/* *p: r's parameters finished for a device with shared_limit bytes of opt-in shared memory
 * per block (WF_SHARED_OPTIN_SM90 without a GPU): wf_params_set_method, which decides whether
 * SM tiles fit. */
warpfft_status wf_params_fit(const wf_resolved *r, size_t shared_limit, wf_params *p);
/* wf_params_resolve, then wf_params_fit: the whole choice in one call. */
warpfft_status wf_params_make(int type, int dim, const int64_t n_modes[3], int64_t ntransf,
                              double tol, int precision, const warpfft_opts *opts,
                              size_t shared_limit, wf_params *p);
/* Fills the plan_info fields that *p determines (n_points = -1, workspace_bytes = 0). */
void wf_params_to_info(const wf_params *p, warpfft_plan_info *info);
/* Device bytes of a type 1/2 plan's fine grid: ntransf * fine_prod complex; with real_data the
 * real grid (ntransf * fine_prod reals, its end rounded up to 256 bytes: wf_params_half_offset)
 * followed by the half spectrum (ntransf * wf_half_prod complex), one buffer. */
size_t wf_params_grid_bytes(const wf_params *p);
/* real_data: the byte offset of the half spectrum in that buffer. */
size_t wf_params_half_offset(const wf_params *p);
/* Device bytes a plan with these params allocates at creation, without cuFFT's work area:
 * fine grid, deconvolution factors, per-bin arrays, the scan's tile sums and the setpts result
 * block. */
size_t wf_params_fixed_bytes(const wf_params *p);
/* Upper bound on the number of subproblems for M points: nbins + ceil(M / maxsub). */
int64_t wf_params_subprob_cap(const wf_params *p, int64_t M);
/* The same for M points in `bins` bins (point sets: every set's bins). */
int64_t wf_subprob_cap(int64_t bins, int64_t M, int64_t maxsub);

/* The bin scans of setpts: plans with at most WF_SCAN_BIG_BINS bins use the one-block
 * wf_bin_scan (module sort: one launch, latency dominates), plans with more the three
 * multi-block kernels of module scan_big (loaded only by those plans) over tiles of
 * WF_SCAN_BIG_TILE bins (kernels/scan_big.cu's WF_SCAN_BIG_TILE; blocks of WF_SCAN_BIG_BLOCK
 * threads). The threshold is a first guess, to be tuned on the H100. */
#define WF_SCAN_BIG_BINS  8192
#define WF_SCAN_BIG_TILE  1024
#define WF_SCAN_BIG_BLOCK 256
/* Tiles of the multi-block scan (each block of scan_big reduces or rescans one), 0 for a plan
 * that uses wf_bin_scan; the plan holds two u64 tile sums per tile. */
int64_t wf_params_scan_tiles(const wf_params *p);
/* The same for a scan over `bins` bins (point sets: every set's bins). */
int64_t wf_scan_tiles(int64_t bins);

#endif /* WARPFFT_PARAMS_PARAMS_H */
