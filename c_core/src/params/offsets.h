/*
 * offsets.h — the kernel width the given points need (offsets.c): statistics of the points'
 * fine-grid offsets, the tables that map them to an error bound per candidate width, and the
 * choice of the narrowest candidate whose bound meets tol (today's width, w_hi, when none does).
 *
 * Set-points gathers a wf_offset_stats (wf_offsets_gather is the reference the GPU pass is
 * tested against); the plan builds a wf_offset_plan once (wf_offsets_plan_make) and uploads it
 * as is; the choice (wf_offsets_choose: dot products, maxima and one pass over the joint
 * histograms) is what one device block evaluates after the gather, without a host sync. Both
 * structs are plain data of fixed layout (int32, uint64 and double fields, 8-byte aligned).
 * Everything depends on the problem's shape, sigma, precision and tol only: the same for type 1
 * and type 2 and for any ntransf.
 */
#ifndef WARPFFT_PARAMS_OFFSETS_H
#define WARPFFT_PARAMS_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* the statistics, the tables and the bound: kernels/offsets_bound.h, for both sides */
#include "offsets_bound.h"
#include "params/base.h"
#include "warpfft.h"

/* The plan's tables for a problem of dim and n_modes on the fine grid nf (the plan's, made
 * with w_hi: the grid does not change with the width chosen), sigma (beta = wf_kernel_beta(w,
 * sigma)), precision and tol, whose every-point-set width is w_hi (wf_params_set_kernel or
 * wf_params_choose_sigma), into *out (free() it). The candidates are the widths from w_lo, the
 * narrowest that ideally uniform offsets pass, to w_hi - 1 whose rounding floor stays within
 * max(tol / 4, w_hi's floor); none when w_lo = w_hi. ~2-3 ms of CPU per distinct dim and
 * candidate.
 * WARPFFT_ERR_OUT_OF_MEMORY when the host memory (~2 MB of scratch) cannot be had. */
warpfft_status wf_offsets_plan_make(int dim, const int64_t n_modes[3], const int64_t nf[3],
                                    double sigma, int precision, double tol, int w_hi,
                                    wf_offset_plan **out);
/* wf_offsets_plan_make through a process-wide memo of 16 shapes (a copy into *out: free() it):
 * plan creation asks for the same tables twice, a second plan of a shape again. */
warpfft_status wf_offsets_plan_get(int dim, const int64_t n_modes[3], const int64_t nf[3],
                                   double sigma, int precision, double tol, int w_hi,
                                   wf_offset_plan **out);
/* Bytes of *op, header and tables: what the plan uploads. */
size_t wf_offsets_plan_bytes(const wf_offset_plan *op);

/* Zeroes *st. */
void wf_offsets_stats_init(wf_offset_stats *st);
/* Adds M points (coordinates x[d][j], radians, any range, as setpts takes them) to *st; a
 * non-finite coordinate counts as 0, where setpts bins and spreads such a point. */
void wf_offsets_gather(int dim, const int64_t nf[3], int64_t M, const double *const x[3],
                       wf_offset_stats *st);
/* The statistics ideally uniform, independent offsets of count points give (count a multiple
 * of WF_OFF_CELLS * WF_OFF_BINS: every cell and joint bin alike): w_lo's test. */
void wf_offsets_stats_uniform(int dim, uint64_t count, wf_offset_stats *st);

/* The statistics M independent uniform points are expected to give: uniform cells and joint
 * bins but for a dependence chi2 = (WF_OFF_BINS - 1)^2 / M (a checkerboard in the joint bins),
 * what a choice of sigma for random points can assume of M = points_hint. */
void wf_offsets_stats_expected(int dim, int64_t M, wf_offset_stats *st);

/* Candidate c's (0 <= c < n_cand) bound on the relative l2 error squared (no safety factor)
 * for the points behind st, with random strengths (type 1) or mode coefficients of any
 * spectrum with random phases (type 2); offsets.c says what it covers. count 0 gives 0. */
double wf_offsets_bound(const wf_offset_plan *op, int c, const wf_offset_stats *st);
/* The width for the points behind st: the narrowest candidate with wf_offsets_bound <=
 * limit2, else w_hi (also for count 0). */
int wf_offsets_choose(const wf_offset_plan *op, const wf_offset_stats *st);

#endif /* WARPFFT_PARAMS_OFFSETS_H */
