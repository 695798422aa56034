/*
 * pool.h — what the live-plan pool (pool.c) calls besides the public ABI, and what the XLA
 * handler (xla_ffi.c) calls of the pool beyond the public ABI. Not installed.
 *
 * The pool reaches plans only through warpfft.h and the plan hooks below (plan_pool.c), so
 * that test_xla_ffi.c can run the handler and the real pool over a recording stand-in of
 * exactly these functions (no driver, no GPU).
 */
#ifndef WARPFFT_POOL_H
#define WARPFFT_POOL_H

#include <stdint.h>

#include "runtime.h"
#include "warpfft.h"

/* opts NULL -> defaults into *out; else a validated copy with every field this build knows
 * (params.c). */
warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out);

/* ---- plan hooks (plan_pool.c) ---- */

/* Marks a plan as the pool's (warpfft_plan_destroy refuses it) or not. */
void wf_plan_set_pooled(warpfft_plan plan, int pooled);
/* The plan forgets its points (execute: WARPFFT_ERR_NO_POINTS) and takes a new points id. */
void wf_plan_forget_points(warpfft_plan plan);
/* Records the plan's fence on its stream, after all the work enqueued so far (the legacy
 * stream needs none: it cannot be destroyed). On failure the plan has no fence (its stream is
 * waited for instead, while it is known alive: the pool destroys the plan at once). */
warpfft_status wf_plan_fence(warpfft_plan plan);
/* Waits for the plan's work (its fence; without one, its stream), then destroys the plan
 * without touching its stream again. Returns the wait's failure (an asynchronous error), after
 * destroying, or the destroy's; after a failed destroy the plan is valid and still pooled, and
 * a second call does not wait again. */
warpfft_status wf_plan_destroy_fenced(warpfft_plan plan);

/* ---- for the XLA handler (pool.c) ---- */

/* warpfft_pool_acquire; *created (if not NULL) says whether the plan was made for this call. */
warpfft_status wf_pool_acquire(int type, int dim, const int64_t n_modes[3], int iflag,
                               int64_t ntransf, double tol, warpfft_precision precision,
                               const warpfft_opts *opts, warpfft_plan *plan, int *created);

#endif /* WARPFFT_POOL_H */
