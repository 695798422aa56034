/*
 * plan.c — the public plan lifecycle: warpfft_plan_create, warpfft_plan_destroy,
 * warpfft_plan_get_info and warpfft_plan_workspace_bytes. A thin layer: it resolves the request
 * once (wf_plan_resolve: the checks, the options and the parameters, without a GPU; the pool
 * resolves for its key and creates from the same request), builds type 1 and 2 from it with
 * plans/nufft12.c (wf_nufft12_new) and type 3 with plans/type3.c, and turns a
 * failed release into the destroy contract of warpfft.h (the handle stays valid). A plan of the
 * live-plan pool is refused here: the pool destroys it (plan_pool.c, wf_handle_destroy); so
 * is one a CUDA graph holds (capture.c), or one whose stream is being captured (destroying
 * waits for the stream).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/capture.h"
#include "api/handle.h"
#include "api/plan_pool.h"
#include "params/type3_params.h"
#include "runtime/cufft.h"
#include "runtime/error.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

warpfft_status wf_plan_resolve(int type, int dim, const int64_t n_modes[3], int iflag,
                               int64_t ntransf, double tol, int precision, const warpfft_opts *opts,
                               wf_plan_request *req) {
    memset(req, 0, sizeof *req);
    req->type = type;
    req->iflag = iflag >= 0 ? 1 : -1;
    if (type == 3) { /* n_modes ignored; the parameters come with the points (setpts3) */
        warpfft_status st = wf_t3_check(dim, ntransf, &tol, precision, opts, &req->r.opts);
        wf_params *p = &req->r.p;
        p->type = 3;
        p->dim = dim;
        p->precision = precision;
        p->ntransf = ntransf;
        p->tol = tol;
        return st;
    }
    warpfft_status st =
        wf_params_resolve(type, dim, n_modes, ntransf, tol, precision, opts, &req->r);
    if (st != WARPFFT_SUCCESS)
        return st;
    /* the sigma the plan uses (creation reads it from r.p): upsampfac 0 and the sigma it chose
     * are one request */
    req->r.opts.upsampfac = req->r.p.upsampfac;
    /* the device's stage too, at the default limit: its refusals (a method whose tile cannot
     * fit, deterministic spreading with GM) come before the GPU is touched, as every argument
     * error */
    wf_params fitted;
    return wf_params_fit(&req->r, WF_SHARED_OPTIN_SM90, &fitted);
}

/* A type 1 or 2 transform from the request: its device (and cuFFT unless spread/interp only),
 * the parameters fitted to that device, and the build in its context (entered here). Records
 * the creation times (cache.h). */
static warpfft_status create12(const wf_plan_request *req, wf_nufft12 **out) {
    double t0 = now_ms();
    const warpfft_opts *o = &req->r.opts;
    wf_exec ex;
    const wf_cufft *cufft = NULL;
    wf_params p;
    warpfft_status st = wf_exec_attach(&ex, o);
    if (st == WARPFFT_SUCCESS && !o->spreadinterponly) /* spread/interp only needs no cuFFT */
        st = wf_cufft_get(&cufft);
    if (st == WARPFFT_SUCCESS)
        st = wf_params_fit(&req->r, wf_exec_shared_limit(&ex), &p);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(ex.dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_create_times t = {0, 0, 0, 0, 0};
    st = wf_nufft12_new(&p, req->iflag, &ex, cufft, &t, out);
    wf_ctx_leave(ex.dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    t.total_ms = now_ms() - t0;
    wf_cache_note_create(&t);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_plan_create_request(const wf_plan_request *req, warpfft_plan *plan) {
    *plan = NULL;
    struct warpfft_plan_s *pl = calloc(1, sizeof *pl);
    if (!pl)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of the plan (%zu bytes)",
                        sizeof *pl);
    pl->type = req->type;
    const wf_params *p = &req->r.p;
    warpfft_status st = req->type == 3 ? wf_nufft3_create(p->dim, req->iflag, p->ntransf, p->tol,
                                                          p->precision, &req->r.opts, &pl->n3)
                                       : create12(req, &pl->n12);
    if (st != WARPFFT_SUCCESS) {
        free(pl);
        return st;
    }
    pl->live.eager_work = 1; /* creation's uploads on the stream: no fence follows them yet */
    *plan = pl;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_create(int type, int dim, const int64_t n_modes[3],
                                               int iflag, int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan *plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "plan (the output pointer) is NULL");
    *plan = NULL;
    wf_plan_request req;
    warpfft_status st =
        wf_plan_resolve(type, dim, n_modes, iflag, ntransf, tol, (int)precision, opts, &req);
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_create_request(&req, plan);
    return st;
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

/* wf_live_destroy's release of a plan's device side. */
static cufftResult release_plan(void *h, int work) {
    struct warpfft_plan_s *plan = h;
    return plan->n3 ? wf_nufft3_release(plan->n3, work) : wf_nufft12_release(plan->n12, work);
}

warpfft_status wf_handle_destroy(struct warpfft_plan_s *plan, int work) {
    warpfft_status st = wf_live_destroy(&plan->live, wf_handle_exec(plan), release_plan, plan, work,
                                        "warpfft_plan_destroy", "plan");
    if (st != WARPFFT_SUCCESS)
        return st;
    free(plan->n3);
    free(plan->n12);
    free(plan);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_get_info(warpfft_plan plan, warpfft_plan_info *info) {
    warpfft_status st = wf_need_two("warpfft_plan_get_info", plan, "plan", info, "info");
    if (st != WARPFFT_SUCCESS)
        return st;
    if (plan->n3)
        wf_nufft3_info(plan->n3, info);
    else
        wf_nufft12_info(plan->n12, info);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes) {
    warpfft_status st = wf_need_two("warpfft_plan_workspace_bytes", plan, "plan", bytes, "bytes");
    if (st == WARPFFT_SUCCESS)
        *bytes = plan->n3 ? wf_nufft3_workspace(plan->n3) : wf_nufft12_workspace(plan->n12);
    return st;
}
