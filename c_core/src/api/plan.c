/*
 * plan.c — the public plan lifecycle: warpfft_plan_create, warpfft_plan_destroy,
 * warpfft_plan_get_info and warpfft_plan_workspace_bytes. A thin layer: it checks what the
 * handle needs, hands type 1 and 2 to plans/nufft12.c and type 3 to plans/type3.c, and turns a
 * failed release into the destroy contract of warpfft.h (the handle stays valid). A plan of the
 * live-plan pool is refused here: the pool destroys it (plan_pool.c, wf_handle_destroy); so
 * is one a CUDA graph holds (capture.c), or one whose stream is being captured (destroying
 * waits for the stream).
 */
#include <stdlib.h>

#include "api/capture.h"
#include "api/handle.h"
#include "runtime/cufft.h"
#include "runtime/error.h"

WARPFFT_API warpfft_status warpfft_plan_create(int type, int dim, const int64_t n_modes[3],
                                               int iflag, int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan *plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "plan (the output pointer) is NULL");
    *plan = NULL;
    struct warpfft_plan_s *pl = calloc(1, sizeof *pl);
    if (!pl)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of the plan (%zu bytes)",
                        sizeof *pl);
    pl->type = type;
    warpfft_status st;
    if (type == 3) /* n_modes ignored */
        st = wf_nufft3_create(dim, iflag, ntransf, tol, (int)precision, opts, &pl->n3);
    else
        st = wf_nufft12_create(type, dim, n_modes, iflag, ntransf, tol, (int)precision, opts,
                               &pl->n12);
    if (st != WARPFFT_SUCCESS) {
        free(pl);
        return st;
    }
    pl->live.eager_work = 1; /* creation's uploads on the stream: no fence follows them yet */
    *plan = pl;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_destroy(warpfft_plan plan) {
    wf_clear_error();
    if (!plan)
        return WARPFFT_SUCCESS;
    if (plan->live.pooled)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_plan_destroy: the plan belongs to the plan pool; give it back "
                        "with warpfft_pool_release");
    if (wf_plan_in_graphs(plan))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_plan_destroy: a CUDA graph that still exists holds the plan (it "
                        "captured work of the plan, whose buffers its nodes use); destroy the "
                        "graph and the executable graphs made from it first (CUDA lets go of "
                        "the plan once their launches have finished); the plan is still valid");
    /* destroying waits for the stream, which a capture forbids */
    warpfft_status st = wf_stream_not_capturing(
        wf_handle_device(plan), wf_handle_exec(plan)->stream, "warpfft_plan_destroy",
        "destroy the plan after the capture ends (the plan is still valid)");
    if (st != WARPFFT_SUCCESS)
        return st;
    return wf_handle_destroy(plan, WF_WORK_PENDING);
}

warpfft_status wf_handle_destroy(struct warpfft_plan_s *plan, int work) {
    /* On failure the handle stays valid (holding whatever could not be released), so the
     * caller can destroy it again instead of losing the device buffers with it. */
    const wf_exec *ex = wf_handle_exec(plan);
    const wf_device *dev = ex->dev;
    warpfft_status st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st,
                        "warpfft_plan_destroy: %s; nothing was freed and the plan is still "
                        "valid (call warpfft_plan_destroy again)",
                        wf_last_error());
    cufftResult r =
        plan->n3 ? wf_nufft3_release(plan->n3, work) : wf_nufft12_release(plan->n12, work);
    wf_live_drop_fence(&plan->live, ex); /* the pool waited for it already, or never fenced */
    wf_ctx_leave(dev);
    if (r != 0) {
        wf_cufft_error(r, "cufftDestroy");
        return wf_error(WARPFFT_ERR_CUFFT,
                        "warpfft_plan_destroy: %s; the device buffers were freed and the plan is "
                        "still valid (call warpfft_plan_destroy again)",
                        wf_last_error());
    }
    free(plan->n3);
    free(plan->n12);
    free(plan);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_get_info(warpfft_plan plan, warpfft_plan_info *info) {
    wf_clear_error();
    if (!plan || !info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_get_info: %s is NULL",
                        !plan ? "plan" : "info");
    if (plan->n3) {
        wf_nufft3_info(plan->n3, info);
        return WARPFFT_SUCCESS;
    }
    wf_nufft12_info(plan->n12, info);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes) {
    wf_clear_error();
    if (!plan || !bytes)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_workspace_bytes: %s is NULL",
                        !plan ? "plan" : "bytes");
    *bytes = plan->n3 ? wf_nufft3_workspace(plan->n3) : wf_nufft12_workspace(plan->n12);
    return WARPFFT_SUCCESS;
}
