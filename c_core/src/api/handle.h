/*
 * handle.h — the public handles (warpfft.h's opaque warpfft_plan and warpfft_toeplitz), shared by
 * the public functions: plan.c (create, destroy, info), points.c (setpts, setpts3, setpts_check,
 * execute), toeplitz.c (the Toeplitz operator's calls), plan_pool.c (what the live-plan pool,
 * pool.c, does to a handle: its mark, its fence, its points id) and capture.c (what a handle
 * does while its stream is captured into a CUDA graph). A plan holds one transform: types 1 and
 * 2 (plans/nufft12.h) or type 3 (plans/type3.h); an operator one wf_toeplitz
 * (plans/toeplitz.h). Both keep what the pool and the graphs need in a wf_live (live.h). Not
 * installed.
 */
#ifndef WARPFFT_API_HANDLE_H
#define WARPFFT_API_HANDLE_H

#include <stdatomic.h>

#include "api/live.h"
#include "params/base.h"
#include "plans/nufft12.h"
#include "plans/toeplitz.h"
#include "plans/type3.h"
#include "runtime/driver.h"
#include "warpfft.h"

struct warpfft_plan_s {
    int type;        /* 1, 2 or 3 */
    wf_nufft12 *n12; /* types 1 and 2 */
    wf_nufft3 *n3;   /* type 3 */

    uint64_t points_id; /* warpfft_plan_points_id: the current point set's; 0 before any */
    wf_live live;       /* the live-plan pool's mark and fence, the CUDA graphs holding it */
};

struct warpfft_toeplitz_s {
    wf_toeplitz *t;
    wf_live live;
};

/* The parameters the plan was created with (type 3: before its points). */
static inline const wf_params *wf_handle_params(const struct warpfft_plan_s *plan) {
    return plan->n3 ? &plan->n3->p : &plan->n12->p;
}

/* Where the plan's work runs: its device, driver and stream. */
static inline const wf_exec *wf_handle_exec(const struct warpfft_plan_s *plan) {
    return plan->n3 ? &plan->n3->ex : &plan->n12->ex;
}

/* The device whose context the plan's work runs in. */
static inline const wf_device *wf_handle_device(const struct warpfft_plan_s *plan) {
    return wf_handle_exec(plan)->dev;
}

/* plan.c: warpfft_plan_destroy's work once the handle is known not pooled: releases the
 * transform (`work`: what is known of its enqueued work, WF_WORK_* of plans/nufft12.h) and the
 * fence, then frees the handle; on failure the handle stays valid, as warpfft.h says. */
warpfft_status wf_handle_destroy(struct warpfft_plan_s *plan, int work);
/* toeplitz.c: warpfft_toeplitz_destroy's work once the operator is known not pooled, its work
 * finished or waited for by the caller (the pool waited for its fence: the stream is not
 * touched): frees it; on failure it stays valid. */
warpfft_status wf_toeplitz_handle_destroy(struct warpfft_toeplitz_s *op);

/* plan_pool.c: a new points id (process-wide counter, never 0): setpts and setpts3 take one when
 * they start to replace the points. */
uint64_t wf_handle_next_points_id(void);

#endif /* WARPFFT_API_HANDLE_H */
