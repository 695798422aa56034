/*
 * plan_pool.h — what the live-plan pool (api/pool.c) does to the handles it holds, plans and
 * Toeplitz operators, beyond the public ABI, done by api/plan_pool.c on the handles
 * (api/handle.h, their wf_live: api/live.h). Declares no handle internals: test_xla_ffi.c and
 * test_xla_toeplitz.c run the XLA handlers and the real pool over recording stand-ins of these
 * and of the public C ABI. Not installed.
 */
#ifndef WARPFFT_API_PLAN_POOL_H
#define WARPFFT_API_PLAN_POOL_H

#include "params/params.h" /* wf_resolved */
#include "warpfft.h"

/* A warpfft_plan_create request, resolved once (wf_plan_resolve): what a plan is made from.
 * Types 1 and 2: the resolved options and every parameter chosen without the device
 * (params.h's wf_resolved); type 3: the resolved options, and in r.p its type, dim, precision,
 * ntransf and the tol it runs at (its parameters come with its points). iflag: its sign, +1 or
 * -1 (all a plan reads of it). Built from zeroed memory: the pool compares requests byte by
 * byte, so two that resolve to the same parameters (two tols that run at one value, upsampfac
 * 0 and the sigma it chose) share a plan. */
typedef struct wf_plan_request {
    int32_t type, iflag;
    wf_resolved r;
} wf_plan_request;

/* The argument checks of warpfft_plan_create (the plan's messages), the options and the
 * parameters, without a GPU: into *req. */
warpfft_status wf_plan_resolve(int type, int dim, const int64_t n_modes[3], int iflag,
                               int64_t ntransf, double tol, int precision, const warpfft_opts *opts,
                               wf_plan_request *req);
/* warpfft_plan_create from a resolved request: nothing is chosen again (the device's stage,
 * wf_params_fit, is all that is left). */
warpfft_status wf_plan_create_request(const wf_plan_request *req, warpfft_plan *plan);
/* ---- plans ---- */

/* Marks a plan as the pool's (warpfft_plan_destroy refuses it) or not. */
void wf_plan_set_pooled(warpfft_plan plan, int pooled);
/* The plan forgets its points (execute: WARPFFT_ERR_NO_POINTS) and takes a new points id. */
void wf_plan_forget_points(warpfft_plan plan);
/* Records the plan's fence on its stream (wf_live_fence): after all the work enqueued so far,
 * on any stream, the legacy one (0) too, so that destroying the plan waits for its own work,
 * never for the stream. During a capture of the stream (*capturing = 1) nothing is recorded:
 * WARPFFT_SUCCESS when the last fence covers the plan's work, else WARPFFT_ERR_UNSUPPORTED (the
 * pool refuses the release, nothing changed). */
warpfft_status wf_plan_fence(warpfft_plan plan, int *capturing);
/* Whether CUDA graphs that captured the plan's work still exist (api/capture.c): the pool then
 * neither hands the plan out nor destroys it. Never blocks (an atomic load). */
int wf_plan_graph_held(warpfft_plan plan);
/* Waits for the plan's work (its fence; without one, its stream), then destroys the plan
 * without touching its stream again. Returns the wait's failure (an asynchronous error), after
 * destroying, or the destroy's; after a failed destroy the plan is valid and still pooled, and
 * a second call does not wait again. */
warpfft_status wf_plan_destroy_fenced(warpfft_plan plan);

/* ---- Toeplitz operators: the same, with no points ---- */

void wf_toeplitz_set_pooled(warpfft_toeplitz op, int pooled);
warpfft_status wf_toeplitz_fence(warpfft_toeplitz op, int *capturing);
int wf_toeplitz_graph_held(warpfft_toeplitz op);
warpfft_status wf_toeplitz_destroy_fenced(warpfft_toeplitz op);

#endif /* WARPFFT_API_PLAN_POOL_H */
