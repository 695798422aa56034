/*
 * plan_pool.c — what the live-plan pool (api/pool.c) needs of a plan beyond the public ABI
 * (plan_pool.h):
 * its mark as pooled, its fence (an event recorded on its stream when it goes back to the pool),
 * its destruction after waiting for that fence rather than for the stream (which its user may
 * have destroyed since), forgetting its points; and the points ids by which a caller recognises
 * a point set it made (warpfft_plan_points_id).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "plan.h"
#include "plan_pool.h"

#define WF_EVENT_DISABLE_TIMING 0x2 /* CU_EVENT_DISABLE_TIMING: the cheapest kind to record */

_Thread_local int wf_plan_stream_state;
static atomic_uint_fast64_t wf_points_ids;

uint64_t wf_plan_next_points_id(void) {
    return (uint64_t)atomic_fetch_add(&wf_points_ids, 1) + 1;
}

void wf_plan_set_pooled(warpfft_plan plan, int pooled) {
    plan->pooled = pooled;
}

void wf_plan_forget_points(warpfft_plan plan) {
    plan->has_points = 0;
    plan->points_id = wf_plan_next_points_id();
}

warpfft_status wf_plan_fence(warpfft_plan plan) {
    plan->fence_state = WF_FENCE_NONE;
    if (!plan->stream) /* the legacy stream: never destroyed, so it can be waited for later */
        return WARPFFT_SUCCESS;
    warpfft_status st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    const wf_driver *drv = plan->drv;
    CUresult r = WF_CUDA_SUCCESS;
    if (!plan->fence && (r = drv->cuEventCreate(&plan->fence, WF_EVENT_DISABLE_TIMING)) != 0) {
        plan->fence = NULL;
        st = wf_cuda_error(r, "cuEventCreate (the plan's fence)");
    } else if ((r = drv->cuEventRecord(plan->fence, plan->stream)) != WF_CUDA_SUCCESS) {
        st = wf_cuda_error(r, "cuEventRecord (the plan's fence, on its stream)");
    } else {
        plan->fence_state = WF_FENCE_SET;
    }
    wf_ctx_leave(plan->dev);
    return st;
}

/* Waits for the plan's work as its fence state says; the state it leaves for the destroy. */
static int wait_work(warpfft_plan plan, warpfft_status *st) {
    if (plan->fence_state == WF_FENCE_WAITED)
        return WF_STREAM_WAITED;
    if (plan->fence_state == WF_FENCE_LOST)
        return WF_STREAM_LOST;
    *st = wf_ctx_enter(plan->dev);
    if (*st != WARPFFT_SUCCESS)
        return WF_STREAM_UNKNOWN; /* the destroy cannot run either */
    int fenced = plan->fence_state == WF_FENCE_SET;
    CUresult r = fenced ? plan->drv->cuEventSynchronize(plan->fence)
                        : plan->drv->cuStreamSynchronize(plan->stream);
    wf_ctx_leave(plan->dev);
    if (r != WF_CUDA_SUCCESS) {
        *st = wf_cuda_error(r, fenced ? "cuEventSynchronize (the plan's last work in the pool)"
                                      : "cuStreamSynchronize (the plan's last work in the pool)");
        plan->fence_state = WF_FENCE_LOST;
        return WF_STREAM_LOST;
    }
    plan->fence_state = WF_FENCE_WAITED;
    return WF_STREAM_WAITED;
}

warpfft_status wf_plan_destroy_fenced(warpfft_plan plan) {
    warpfft_status wait = WARPFFT_SUCCESS;
    int state = wait_work(plan, &wait);
    if (state == WF_STREAM_UNKNOWN)
        return wait;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", warpfft_last_error()); /* the destroy clears it */
    plan->pooled = 0;
    wf_plan_stream_state = state;
    warpfft_status st = warpfft_plan_destroy(plan);
    wf_plan_stream_state = WF_STREAM_UNKNOWN;
    if (st != WARPFFT_SUCCESS) {
        plan->pooled = 1;
        return st;
    }
    if (wait != WARPFFT_SUCCESS)
        return wf_error(wait, "%s (the plan was destroyed)", msg);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id) {
    wf_clear_error();
    if (!plan || !id)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_points_id: %s is NULL",
                        !plan ? "plan" : "id");
    *id = plan->points_id;
    return WARPFFT_SUCCESS;
}
