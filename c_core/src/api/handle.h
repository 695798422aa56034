/*
 * handle.h — the public plan handle (warpfft.h's opaque warpfft_plan), shared by the public plan
 * functions: plan.c (create, destroy, info), points.c (setpts, setpts3, setpts_check, execute),
 * plan_pool.c (what the live-plan pool, pool.c, does to a plan: its mark, its fence, its
 * points id) and capture.c (what a plan does while its stream is captured into a CUDA graph). A
 * handle holds one transform: types 1 and 2 (plans/nufft12.h) or type 3 (plans/type3.h). Not
 * installed.
 */
#ifndef WARPFFT_API_HANDLE_H
#define WARPFFT_API_HANDLE_H

#include <stdatomic.h>

#include "params/base.h"
#include "plans/nufft12.h"
#include "plans/type3.h"
#include "runtime/driver.h"
#include "warpfft.h"

struct warpfft_plan_s {
    int type;        /* 1, 2 or 3 */
    wf_nufft12 *n12; /* types 1 and 2 */
    wf_nufft3 *n3;   /* type 3 */

    /* the live-plan pool (pool.c, through plan_pool.c) */
    uint64_t points_id; /* warpfft_plan_points_id: the current point set's; 0 before any */
    int pooled;         /* the pool's: warpfft_plan_destroy refuses it */
    CUevent fence;      /* recorded on the stream at each release to the pool (made at the first) */
    int fence_state;    /* WF_FENCE_*: what is known of the work enqueued so far */
    int eager_work;     /* work enqueued outside a stream capture since the last fence (the
                         * creation's uploads included): a release during a capture, which
                         * cannot record a fence, refuses it (plan_pool.c) */

    /* CUDA graphs (capture.c): the graphs that hold work of this plan captured from its stream
     * own it until they are destroyed (their user objects' destructors count them down, on a
     * driver thread); the last capture sequence it joined */
    atomic_int graph_refs;
    uint64_t capture_id;
    int captured; /* capture_id is set */
};

/* plan->fence_state. SET: `fence` follows all the plan's work (recorded at its last release);
 * NONE: no fence follows it (the record failed: the stream itself is waited for, at release,
 * while it is known alive); WAITED / LOST: the pool waited for it before a
 * destroy that failed, successfully / not (a retry does not wait again). */
enum { WF_FENCE_NONE = 0, WF_FENCE_SET = 1, WF_FENCE_WAITED = 2, WF_FENCE_LOST = 3 };

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

/* plan_pool.c: a new points id (process-wide counter, never 0): setpts and setpts3 take one when
 * they start to replace the points. */
uint64_t wf_handle_next_points_id(void);

#endif /* WARPFFT_API_HANDLE_H */
