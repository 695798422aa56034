/*
 * plan_pool.c — what the live-plan pool (api/pool.c) does to a plan handle (api/handle.h)
 * beyond the public ABI (plan_pool.h): its mark as pooled, its fence (an event recorded on its
 * stream when it goes back to the pool), its destruction after waiting for that fence rather
 * than for the stream (which its user may have destroyed since: the release below is told the
 * work is finished, or unknowable, so it never waits for the stream itself), forgetting its
 * points, whether CUDA graphs hold it (capture.c); and the points ids by which a caller
 * recognises a point set it made (warpfft_plan_points_id).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "api/capture.h"
#include "api/handle.h"
#include "api/plan_pool.h"
#include "runtime/error.h"

#define WF_EVENT_DISABLE_TIMING 0x2 /* CU_EVENT_DISABLE_TIMING: the cheapest kind to record */

static atomic_uint_fast64_t wf_points_ids;

uint64_t wf_handle_next_points_id(void) {
    return (uint64_t)atomic_fetch_add(&wf_points_ids, 1) + 1;
}

void wf_plan_set_pooled(warpfft_plan plan, int pooled) {
    plan->pooled = pooled;
}

void wf_plan_forget_points(warpfft_plan plan) {
    if (plan->n3)
        plan->n3->has_points = 0;
    else
        plan->n12->has_points = 0;
    plan->points_id = wf_handle_next_points_id();
}

/* During a capture of the plan's stream, or when the capture makes it unusable (`query`
 * failed): the fence stays as it was (wf_plan_fence). */
static warpfft_status fence_captured(warpfft_plan plan, warpfft_status query) {
    if (query != WARPFFT_SUCCESS)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "warpfft_pool_release: %s; release the plan after the capture ends "
                        "(the plan is still yours)",
                        wf_last_error());
    if (plan->eager_work)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "warpfft_pool_release: the plan ran work outside the CUDA graph capture "
                        "now on its stream, and the fence that tells when that work is done "
                        "cannot be recorded during the capture; release the plan after the "
                        "capture ends (the plan is still yours), or acquire it during the "
                        "capture");
    return WARPFFT_SUCCESS;
}

warpfft_status wf_plan_fence(warpfft_plan plan, int *capturing) {
    const wf_exec *ex = wf_handle_exec(plan);
    *capturing = 0;
    /* The legacy stream (0) too: it is never destroyed, but waiting for it would wait for all
     * the work anyone enqueued there since (torch's default stream, the one-call functions'),
     * where the fence waits for this plan's work only. */
    warpfft_status st = wf_ctx_enter(ex->dev);
    if (st != WARPFFT_SUCCESS) {
        plan->fence_state = WF_FENCE_NONE;
        return st;
    }
    wf_capture cap;
    st = wf_stream_capture(ex->drv, ex->stream, "the plan's stream", &cap);
    if (cap.blocked || (st == WARPFFT_SUCCESS && cap.active)) {
        wf_ctx_leave(ex->dev);
        *capturing = 1;
        return fence_captured(plan, st);
    }
    plan->fence_state = WF_FENCE_NONE;
    if (st != WARPFFT_SUCCESS) { /* the query failed: no fence, as for a failed record */
        wf_ctx_leave(ex->dev);
        return st;
    }
    const wf_driver *drv = ex->drv;
    CUresult r = WF_CUDA_SUCCESS;
    if (!plan->fence && (r = drv->cuEventCreate(&plan->fence, WF_EVENT_DISABLE_TIMING)) != 0) {
        plan->fence = NULL;
        st = wf_cuda_error(r, "cuEventCreate (the plan's fence)");
    } else if ((r = drv->cuEventRecord(plan->fence, ex->stream)) != WF_CUDA_SUCCESS) {
        st = wf_cuda_error(r, "cuEventRecord (the plan's fence, on its stream)");
    } else {
        plan->fence_state = WF_FENCE_SET;
        plan->eager_work = 0;
    }
    wf_ctx_leave(ex->dev);
    return st;
}

int wf_plan_graph_held(warpfft_plan plan) {
    return wf_plan_in_graphs(plan);
}

/* Waits for the plan's work as its fence state says; what the release may assume of it
 * (WF_WORK_DONE or WF_WORK_LOST; WF_WORK_PENDING when the context could not be entered: the
 * destroy cannot run either, *st says why). */
static int wait_work(warpfft_plan plan, warpfft_status *st) {
    if (plan->fence_state == WF_FENCE_WAITED)
        return WF_WORK_DONE;
    if (plan->fence_state == WF_FENCE_LOST)
        return WF_WORK_LOST;
    const wf_exec *ex = wf_handle_exec(plan);
    *st = wf_ctx_enter(ex->dev);
    if (*st != WARPFFT_SUCCESS)
        return WF_WORK_PENDING;
    int fenced = plan->fence_state == WF_FENCE_SET;
    CUresult r = fenced ? ex->drv->cuEventSynchronize(plan->fence)
                        : ex->drv->cuStreamSynchronize(ex->stream);
    wf_ctx_leave(ex->dev);
    if (r != WF_CUDA_SUCCESS) {
        *st = wf_cuda_error(r, fenced ? "cuEventSynchronize (the plan's last work in the pool)"
                                      : "cuStreamSynchronize (the plan's last work in the pool)");
        plan->fence_state = WF_FENCE_LOST;
        return WF_WORK_LOST;
    }
    plan->fence_state = WF_FENCE_WAITED;
    return WF_WORK_DONE;
}

warpfft_status wf_plan_destroy_fenced(warpfft_plan plan) {
    if (wf_plan_in_graphs(plan)) /* the pool never asks: kept for another try if it does */
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "the pool destroying a plan a CUDA graph still holds (not destroyed)");
    warpfft_status wait = WARPFFT_SUCCESS;
    int work = wait_work(plan, &wait);
    if (work == WF_WORK_PENDING)
        return wait;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", wf_last_error()); /* the destroy clears it */
    wf_clear_error();
    warpfft_status st = wf_handle_destroy(plan, work);
    if (st != WARPFFT_SUCCESS)
        return st; /* still valid, still pooled */
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
