/*
 * live.c — a live handle's fence (live.h): recorded on its stream when the handle goes back to
 * the live-plan pool, waited for before the pool destroys it, so that the destroy waits for that
 * handle's own work only: never for the stream, which its user may have destroyed since, nor for
 * the work others enqueued there (the legacy stream 0 of PyTorch and the one-call functions, or
 * another device's stream that waits on a collective). The same for plans and Toeplitz
 * operators (plan_pool.c).
 */
#include "api/live.h"
#include "plans/nufft12.h" /* WF_WORK_* */
#include "runtime/cufft.h"
#include "runtime/error.h"

#define WF_EVENT_DISABLE_TIMING 0x2 /* CU_EVENT_DISABLE_TIMING: the cheapest kind to record */

/* During a capture of the handle's stream, or when the capture makes it unusable (`query`
 * failed): the fence stays as it was. */
static warpfft_status fence_captured(const wf_live *l, warpfft_status query, const char *who) {
    if (query != WARPFFT_SUCCESS)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: %s; release it after the capture ends (it is still yours)", who,
                        wf_last_error());
    if (l->eager_work)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: work ran outside the CUDA graph capture now on its stream, and the "
                        "fence that tells when that work is done cannot be recorded during the "
                        "capture; release it after the capture ends (it is still yours), or "
                        "acquire it during the capture",
                        who);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_live_fence(wf_live *l, const wf_exec *ex, const char *who, int *capturing) {
    *capturing = 0;
    warpfft_status st = wf_ctx_enter(ex->dev);
    if (st != WARPFFT_SUCCESS) {
        l->fence_state = WF_FENCE_NONE;
        return st;
    }
    wf_capture cap;
    st = wf_stream_capture(ex->drv, ex->stream, "the stream", &cap);
    if (cap.blocked || (st == WARPFFT_SUCCESS && cap.active)) {
        wf_ctx_leave(ex->dev);
        *capturing = 1;
        return fence_captured(l, st, who);
    }
    l->fence_state = WF_FENCE_NONE;
    if (st != WARPFFT_SUCCESS) { /* the query failed: no fence, as for a failed record */
        wf_ctx_leave(ex->dev);
        return st;
    }
    const wf_driver *drv = ex->drv;
    CUresult r = WF_CUDA_SUCCESS;
    if (!l->fence && (r = drv->cuEventCreate(&l->fence, WF_EVENT_DISABLE_TIMING)) != 0) {
        l->fence = NULL;
        st = wf_cuda_error(r, "cuEventCreate (the fence of a pooled handle)");
    } else if ((r = drv->cuEventRecord(l->fence, ex->stream)) != WF_CUDA_SUCCESS) {
        st = wf_cuda_error(r, "cuEventRecord (the fence of a pooled handle, on its stream)");
    } else {
        l->fence_state = WF_FENCE_SET;
        l->eager_work = 0;
    }
    wf_ctx_leave(ex->dev);
    return st;
}

int wf_live_wait(wf_live *l, const wf_exec *ex, warpfft_status *st) {
    if (l->fence_state == WF_FENCE_WAITED)
        return WF_WORK_DONE;
    if (l->fence_state == WF_FENCE_LOST)
        return WF_WORK_LOST;
    *st = wf_ctx_enter(ex->dev);
    if (*st != WARPFFT_SUCCESS)
        return WF_WORK_PENDING;
    int fenced = l->fence_state == WF_FENCE_SET;
    CUresult r =
        fenced ? ex->drv->cuEventSynchronize(l->fence) : ex->drv->cuStreamSynchronize(ex->stream);
    wf_ctx_leave(ex->dev);
    if (r != WF_CUDA_SUCCESS) {
        *st = wf_cuda_error(r, fenced ? "cuEventSynchronize (the last work of a pooled handle)"
                                      : "cuStreamSynchronize (the last work of a pooled handle)");
        l->fence_state = WF_FENCE_LOST;
        return WF_WORK_LOST;
    }
    l->fence_state = WF_FENCE_WAITED;
    return WF_WORK_DONE;
}

void wf_live_drop_fence(wf_live *l, const wf_exec *ex) {
    if (l->fence)
        ex->drv->cuEventDestroy(l->fence);
    l->fence = NULL;
}

warpfft_status wf_live_destroy(wf_live *l, const wf_exec *ex, int (*release)(void *h, int work),
                               void *h, int work, const char *who, const char *what) {
    warpfft_status st = wf_ctx_enter(ex->dev);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "%s: %s; nothing was freed and the %s is still valid (call %s again)",
                        who, wf_last_error(), what, who);
    cufftResult r = release(h, work);
    wf_live_drop_fence(l, ex); /* the pool waited for it already, or never fenced */
    wf_ctx_leave(ex->dev);
    if (r != 0) {
        wf_cufft_error(r, "cufftDestroy");
        return wf_error(WARPFFT_ERR_CUFFT,
                        "%s: %s; the device buffers were freed and the %s is still valid (call "
                        "%s again)",
                        who, wf_last_error(), what, who);
    }
    return WARPFFT_SUCCESS;
}
