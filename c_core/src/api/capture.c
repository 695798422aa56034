/*
 * capture.c — a live handle (a plan, a Toeplitz operator: live.h) whose work is captured into a
 * CUDA graph (cuStreamBeginCapture on its stream, then warpfft_setpts / warpfft_execute /
 * warpfft_toeplitz_apply): the graph keeps the device pointers of the handle's buffers (fine
 * grid, sorted points, bins, work grid, cuFFT work area) in its nodes and runs them at every
 * launch, so the handle must keep those buffers, unchanged in place and size, for as long as the
 * graph exists. The handle joins each graph it is captured into with a user object
 * (cuUserObjectCreate, owned by the graph through cuGraphRetainUserObject): while any such
 * graph lives, graph_refs > 0, and
 *   - warpfft_plan_destroy / warpfft_toeplitz_destroy refuse it (plan.c, toeplitz.c),
 *   - the live-plan pool neither hands it out nor destroys it (pool.c, plan_pool.c),
 *   - no setpts may grow a plan's per-point arrays (points.c: a setpts that fits them is fine).
 * CUDA runs the destructor when the graph and every executable graph made from it are
 * destroyed, after their launches have finished, on a driver thread that may not call CUDA:
 * it only counts the handle down. The rest of the capture rules (what refuses to run during a
 * capture) are the callers' (points.c, plan.c, toeplitz.c, plans/launch.c via
 * wf_stream_not_capturing).
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/capture.h"
#include "runtime/error.h"

/* What a graph's user object points to: the handle it holds, and whether it counts (a user
 * object that never reached its graph must not count the handle down when released). */
typedef struct wf_graph_ref {
    wf_live *live;
    atomic_int armed;
} wf_graph_ref;

/* The user object's destructor (a driver thread, after the graph's launches): no CUDA calls. The
 * count down is its last access to the handle, which may be destroyed right after it. */
static void graph_released(void *p) {
    wf_graph_ref *ref = p;
    if (atomic_load(&ref->armed))
        atomic_fetch_sub(&ref->live->graph_refs, 1);
    free(ref);
}

warpfft_status wf_plan_capture(const struct warpfft_plan_s *plan, const char *who,
                               wf_capture *cap) {
    const wf_exec *ex = wf_handle_exec(plan);
    return wf_stream_capture(ex->drv, ex->stream, who, cap);
}

warpfft_status wf_live_join_graph(wf_live *l, const wf_exec *ex, const wf_capture *cap,
                                  const char *who) {
    if (l->captured && l->capture_id == cap->id)
        return WARPFFT_SUCCESS; /* this capture holds it already */
    wf_graph_ref *ref = malloc(sizeof *ref);
    if (!ref)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "%s: host allocation of %zu bytes", who,
                        sizeof *ref);
    ref->live = l;
    atomic_init(&ref->armed, 1);
    const wf_driver *drv = ex->drv;
    CUuserObject obj = NULL;
    char what[192];
    CUresult r =
        drv->cuUserObjectCreate(&obj, ref, graph_released, 1, WF_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    if (r != WF_CUDA_SUCCESS) {
        free(ref);
        snprintf(what, sizeof what, "%s: cuUserObjectCreate (the hold of a CUDA graph on it)", who);
        return wf_cuda_error(r, what);
    }
    atomic_fetch_add(&l->graph_refs, 1);
    r = drv->cuGraphRetainUserObject(cap->graph, obj, 1, WF_GRAPH_USER_OBJECT_MOVE);
    if (r != WF_CUDA_SUCCESS) {
        atomic_store(&ref->armed, 0); /* the graph never held it */
        atomic_fetch_sub(&l->graph_refs, 1);
        drv->cuUserObjectRelease(obj, 1); /* runs the destructor: frees ref */
        snprintf(what, sizeof what,
                 "%s: cuGraphRetainUserObject (the CUDA graph being captured taking it)", who);
        return wf_cuda_error(r, what);
    }
    l->capture_id = cap->id;
    l->captured = 1;
    return WARPFFT_SUCCESS;
}

int wf_live_in_graphs(const wf_live *l) {
    return atomic_load(&((wf_live *)l)->graph_refs) > 0;
}
