/*
 * plan_pool.c — what the live-plan pool (api/pool.c) does to the handles it holds (plan_pool.h),
 * plans and Toeplitz operators alike: their mark as pooled, their fence (live.c: an event
 * recorded on the stream when the handle goes back to the pool), their destruction after waiting
 * for that fence rather than for the stream (which its user may have destroyed since, or which
 * carries other callers' work: the release below is told the work is finished, or unknowable,
 * so it never waits for the stream itself), whether CUDA graphs hold them (capture.c); for
 * plans also forgetting their points, and the points ids by which a caller recognises a point
 * set it made (warpfft_plan_points_id).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "api/capture.h"
#include "api/handle.h"
#include "api/plan_pool.h"
#include "runtime/error.h"

static atomic_uint_fast64_t wf_points_ids;

uint64_t wf_handle_next_points_id(void) {
    return (uint64_t)atomic_fetch_add(&wf_points_ids, 1) + 1;
}

/* Waits for a handle's work as its fence says, then `destroy(h, work)`; the wait's failure is
 * returned after a destroy that succeeded (the error of the handle's last work). */
static warpfft_status destroy_after_fence(wf_live *l, const wf_exec *ex, void *h,
                                          warpfft_status (*destroy)(void *h, int work)) {
    if (wf_live_in_graphs(l)) /* the pool never asks: kept for another try if it does */
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "the pool destroying a handle a CUDA graph still holds (not destroyed)");
    warpfft_status wait = WARPFFT_SUCCESS;
    int work = wf_live_wait(l, ex, &wait);
    if (work == WF_WORK_PENDING)
        return wait;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", wf_last_error()); /* the destroy clears it */
    wf_clear_error();
    warpfft_status st = destroy(h, work);
    if (st != WARPFFT_SUCCESS)
        return st; /* still valid, still pooled */
    if (wait != WARPFFT_SUCCESS)
        return wf_error(wait, "%s (it was destroyed)", msg);
    return WARPFFT_SUCCESS;
}

/* ---- plans ---- */

void wf_plan_set_pooled(warpfft_plan plan, int pooled) {
    plan->live.pooled = pooled;
}

void wf_plan_forget_points(warpfft_plan plan) {
    if (plan->n3)
        plan->n3->has_points = 0;
    else
        plan->n12->has_points = 0;
    plan->points_id = wf_handle_next_points_id();
}

warpfft_status wf_plan_fence(warpfft_plan plan, int *capturing) {
    return wf_live_fence(&plan->live, wf_handle_exec(plan), "warpfft_pool_release", capturing);
}

int wf_plan_graph_held(warpfft_plan plan) {
    return wf_plan_in_graphs(plan);
}

static warpfft_status destroy_plan(void *h, int work) {
    return wf_handle_destroy(h, work);
}

warpfft_status wf_plan_destroy_fenced(warpfft_plan plan) {
    return destroy_after_fence(&plan->live, wf_handle_exec(plan), plan, destroy_plan);
}

WARPFFT_API warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id) {
    warpfft_status st = wf_need_two("warpfft_plan_points_id", plan, "plan", id, "id");
    if (st == WARPFFT_SUCCESS)
        *id = plan->points_id;
    return st;
}

/* ---- Toeplitz operators ---- */

void wf_toeplitz_set_pooled(warpfft_toeplitz op, int pooled) {
    op->live.pooled = pooled;
}

warpfft_status wf_toeplitz_fence(warpfft_toeplitz op, int *capturing) {
    return wf_live_fence(&op->live, &op->t->ex, "warpfft_pool_release_toeplitz", capturing);
}

int wf_toeplitz_graph_held(warpfft_toeplitz op) {
    return wf_live_in_graphs(&op->live);
}

/* The operator's buffers are freed (cuMemFree) once its work is done: WF_WORK_DONE or LOST
 * alike, as its own release never waits for the stream. */
static warpfft_status destroy_toeplitz(void *h, int work) {
    (void)work;
    return wf_toeplitz_handle_destroy(h);
}

warpfft_status wf_toeplitz_destroy_fenced(warpfft_toeplitz op) {
    return destroy_after_fence(&op->live, &op->t->ex, op, destroy_toeplitz);
}
