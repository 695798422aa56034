/*
 * cost.h — the choice of upsampling factor and kernel width per plan by predicted execute time
 * (cost.c): the cost model fitted to H100 measurements, and the plan stage that runs instead of
 * the width rule alone (width.h) when opts.upsampfac is 0. It builds on kernel.h, width.h,
 * grid.h, bins.h and offsets.h; params.c runs it.
 */
#ifndef WARPFFT_PARAMS_COST_H
#define WARPFFT_PARAMS_COST_H

#include <stdint.h>

#include "params/base.h"
#include "warpfft.h"

/* Predicted execute time (ms) of a plan with these parameters and M points per transform, from
 * the cost model fitted to H100 measurements (cost.c). */
double wf_cost_predict_ms(int type, int dim, int precision, int width, const int64_t n_fine[3],
                          int64_t ntransf, int64_t M);
/* The M the cost model assumes for p: points_hint, or one point per mode when it is 0. */
int64_t wf_params_points(const wf_params *p);
/* Plan stage for upsampfac 0 (types 1 and 2, not spreadinterponly): p->upsampfac, width,
 * width_random and beta, the (sigma, w) of least predicted time for the problem (types 1 and 2
 * alike, any ntransf) whose error bound and rounding floor meet tol; with p->points_width,
 * sigma for the width points_hint random points take where that wins (cost.c says when);
 * WARPFFT_ERR_BAD_TOL if nothing meets tol. */
warpfft_status wf_params_choose_sigma(wf_params *p);

#endif /* WARPFFT_PARAMS_COST_H */
