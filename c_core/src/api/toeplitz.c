/*
 * toeplitz.c — the public calls of the Toeplitz normal operator (warpfft.h, "the Toeplitz normal
 * operator"): warpfft_toeplitz_create, _apply, _apply_spectrum, _spectrum, _params, _get_info,
 * _workspace_bytes, _destroy. A thin layer, as plan.c: argument checks (messages name the
 * public call), the device's context, and the work in plans/toeplitz.c; a failed destroy
 * leaves the handle valid. An operator is a live handle as a plan is (live.h): an application
 * captured into a CUDA graph makes the graph hold it (capture.c), and one of the live-plan pool
 * (pool.c: warpfft_pool_acquire_toeplitz) is the pool's to destroy (plan_pool.c); the public
 * destroy refuses both, and refuses during a capture of its stream (freeing breaks a capture).
 */
#include <stdlib.h>

#include "api/handle.h"
#include "params/params.h"
#include "plans/launch.h"
#include "plans/nufft12.h" /* WF_WORK_* */
#include "plans/toeplitz.h"
#include "plans/toeplitz_kernel.h"
#include "runtime/cufft.h"
#include "runtime/error.h"

/* The points and weights: M in [0, 2^56]; for M > 0 the coordinates dim needs, and w unless
 * the weights are none. */
static warpfft_status check_points(const char *who, int dim, int64_t M, const void *x,
                                   const void *y, const void *z, int weights, const void *w) {
    if (M < 0 || M > ((int64_t)1 << 56))
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "%s: M = %lld; must be in [0, 2^56]", who,
                        (long long)M);
    if (M == 0)
        return WARPFFT_SUCCESS;
    const char *missing = wf_missing_coord(dim, x, y, z);
    if (missing)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: %s is NULL but dim = %d and M = %lld", who,
                        missing, dim, (long long)M);
    if (weights != WARPFFT_WEIGHTS_NONE && !w)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: w is NULL but weights = %d (%s); pass WARPFFT_WEIGHTS_NONE for none",
                        who, weights, weights == WARPFFT_WEIGHTS_REAL ? "real" : "complex");
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_toeplitz_create(
    int dim, const int64_t n_modes[3], int iflag, int64_t ntransf, double tol,
    warpfft_precision precision, const warpfft_opts *opts, int64_t M, const void *x, const void *y,
    const void *z, int weights, const void *w, warpfft_toeplitz *op) {
    const char *who = "warpfft_toeplitz_create";
    wf_clear_error();
    if (!op)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: op (the output pointer) is NULL", who);
    *op = NULL;
    wf_toep_params q;
    warpfft_status st = wf_toep_choose(dim, n_modes, ntransf, tol, (int)precision, opts, weights,
                                       WF_SHARED_OPTIN_SM90, who, &q);
    if (st == WARPFFT_SUCCESS)
        st = check_points(who, dim, M, x, y, z, weights, w);
    if (st != WARPFFT_SUCCESS)
        return st;
    struct warpfft_toeplitz_s *h = calloc(1, sizeof *h);
    if (!h)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "%s: host allocation of the handle", who);
    st = wf_toeplitz_create(&q, iflag, M, wf_dptr(x), wf_dptr(y), wf_dptr(z), wf_dptr(w), &h->t);
    if (st != WARPFFT_SUCCESS) {
        free(h);
        return st;
    }
    h->live.eager_work = 1; /* the build's work on the stream: no fence follows it yet */
    *op = h;
    return WARPFFT_SUCCESS;
}

static warpfft_status check_apply(const char *who, const struct warpfft_toeplitz_s *op,
                                  int precision, const void *in, const void *out) {
    if (!op)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: op is NULL", who);
    if (precision != op->t->q.precision)
        return wf_error(WARPFFT_ERR_PRECISION, "%s: precision = %d but the operator is %s", who,
                        precision, wf_prec_name(op->t->q.precision));
    if (!in || !out)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: %s is NULL", who, !in ? "in" : "out");
    return WARPFFT_SUCCESS;
}

/* The application in the operator's context; during a capture of its stream the graph takes
 * the operator (its nodes read and write the work grid). */
static warpfft_status run_apply(struct warpfft_toeplitz_s *op, CUdeviceptr spectrum, int real,
                                int adjoint, const void *in, void *out, const char *who) {
    const wf_exec *ex = &op->t->ex;
    warpfft_status st = wf_ctx_enter(ex->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_capture cap;
    st = wf_stream_capture(ex->drv, ex->stream, who, &cap);
    if (st == WARPFFT_SUCCESS && cap.active)
        st = wf_live_join_graph(&op->live, ex, &cap, who);
    if (st == WARPFFT_SUCCESS) {
        st = wf_toeplitz_apply(op->t, spectrum, real, adjoint, wf_dptr(in), wf_dptr(out));
        op->live.eager_work |= !cap.active;
    }
    wf_ctx_leave(ex->dev);
    return st;
}

WARPFFT_API warpfft_status warpfft_toeplitz_apply(warpfft_toeplitz op, warpfft_precision precision,
                                                  int adjoint, const void *in, void *out) {
    wf_clear_error();
    warpfft_status st = check_apply("warpfft_toeplitz_apply", op, (int)precision, in, out);
    if (st != WARPFFT_SUCCESS)
        return st;
    return run_apply(op, op->t->spectrum.ptr, op->t->q.spectrum_real, adjoint, in, out,
                     "warpfft_toeplitz_apply");
}

WARPFFT_API warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op,
                                                           warpfft_precision precision,
                                                           int spectrum_real, const void *spectrum,
                                                           int adjoint, const void *in, void *out) {
    const char *who = "warpfft_toeplitz_apply_spectrum";
    wf_clear_error();
    warpfft_status st = check_apply(who, op, (int)precision, in, out);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (!spectrum)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: spectrum is NULL", who);
    return run_apply(op, wf_dptr(spectrum), spectrum_real != 0, adjoint, in, out, who);
}

WARPFFT_API warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n_modes[3], int iflag,
                                                     double tol, warpfft_precision precision,
                                                     const warpfft_opts *opts, int64_t M,
                                                     const void *x, const void *y, const void *z,
                                                     int weights, const void *w, void *spectrum) {
    const char *who = "warpfft_toeplitz_spectrum";
    wf_clear_error();
    wf_toep_params q;
    warpfft_status st = wf_toep_choose(dim, n_modes, 1, tol, (int)precision, opts, weights,
                                       WF_SHARED_OPTIN_SM90, who, &q);
    if (st == WARPFFT_SUCCESS)
        st = check_points(who, dim, M, x, y, z, weights, w);
    if (st == WARPFFT_SUCCESS && !spectrum)
        st = wf_error(WARPFFT_ERR_INVALID_ARG, "%s: spectrum is NULL", who);
    if (st != WARPFFT_SUCCESS)
        return st;
    return wf_toep_spectrum(&q, iflag, M, wf_dptr(x), wf_dptr(y), wf_dptr(z), wf_dptr(w),
                            wf_dptr(spectrum));
}

WARPFFT_API warpfft_status warpfft_toeplitz_params(int dim, const int64_t n_modes[3],
                                                   int64_t ntransf, double tol,
                                                   warpfft_precision precision,
                                                   const warpfft_opts *opts, int weights,
                                                   warpfft_toeplitz_info *info) {
    wf_clear_error();
    if (!info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_toeplitz_params: info is NULL");
    wf_toep_params q;
    warpfft_status st = wf_toep_choose(dim, n_modes, ntransf, tol, (int)precision, opts, weights,
                                       WF_SHARED_OPTIN_SM90, "warpfft_toeplitz_params", &q);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_toep_params_to_info(&q, info);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_toeplitz_get_info(warpfft_toeplitz op,
                                                     warpfft_toeplitz_info *info) {
    warpfft_status st = wf_need_two("warpfft_toeplitz_get_info", op, "op", info, "info");
    if (st == WARPFFT_SUCCESS)
        wf_toeplitz_info(op->t, info);
    return st;
}

WARPFFT_API warpfft_status warpfft_toeplitz_workspace_bytes(warpfft_toeplitz op, size_t *bytes) {
    warpfft_status st = wf_need_two("warpfft_toeplitz_workspace_bytes", op, "op", bytes, "bytes");
    if (st == WARPFFT_SUCCESS)
        *bytes = op->t->workspace;
    return st;
}

WARPFFT_API warpfft_status warpfft_toeplitz_destroy(warpfft_toeplitz op) {
    const char *who = "warpfft_toeplitz_destroy";
    wf_clear_error();
    if (!op)
        return WARPFFT_SUCCESS;
    if (op->live.pooled)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: the operator belongs to the live-plan pool; give it back with "
                        "warpfft_pool_release_toeplitz",
                        who);
    if (wf_live_in_graphs(&op->live))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: a CUDA graph that still exists holds the operator (it captured an "
                        "application, whose nodes use its work grid); destroy the graph and the "
                        "executable graphs made from it first; the operator is still valid",
                        who);
    /* freeing the buffers would break a capture of its stream */
    warpfft_status st = wf_stream_not_capturing(op->t->ex.dev, op->t->ex.stream, who,
                                                "destroy the operator after the capture ends "
                                                "(it is still valid)");
    if (st != WARPFFT_SUCCESS)
        return st;
    return wf_toeplitz_handle_destroy(op);
}

/* wf_live_destroy's release of an operator's device side: its step plans and block go to the
 * plan cache as `work` allows (plans/toeplitz.h). */
static cufftResult release_operator(void *h, int work) {
    return wf_toeplitz_release(((struct warpfft_toeplitz_s *)h)->t, work);
}

warpfft_status wf_toeplitz_handle_destroy(struct warpfft_toeplitz_s *op) {
    /* What is known of its work: the live-plan pool waited for its fence before this (WAITED:
     * done, or LOST: unknowable; its stream is not touched, its user may have destroyed it);
     * an operator of the public destroy was never fenced: its stream is waited for before the
     * plan cache takes its buffers, as cuMemFree waited for the device before. */
    int work = op->live.fence_state == WF_FENCE_WAITED ? WF_WORK_DONE
               : op->live.fence_state == WF_FENCE_LOST ? WF_WORK_LOST
                                                       : WF_WORK_PENDING;
    warpfft_status st = wf_live_destroy(&op->live, &op->t->ex, release_operator, op, work,
                                        "warpfft_toeplitz_destroy", "operator");
    if (st != WARPFFT_SUCCESS)
        return st;
    free(op->t);
    free(op);
    return WARPFFT_SUCCESS;
}
