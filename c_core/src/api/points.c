/*
 * points.c — the public calls that take points and run transforms: warpfft_setpts and
 * warpfft_setpts_sets (batched points: a point set per transform or group of transforms),
 * warpfft_setpts_check, warpfft_setpts3 and warpfft_setpts3_sets, and warpfft_execute. Each checks
 * its arguments against the plan (the messages name the public call), makes the device's context
 * current, and hands the work to plans/nufft12_exec.c (types 1 and 2) or plans/type3.c (type 3). A
 * call that fails before its work starts (arguments, the context) leaves the plan's points as they
 * were. Every setpts and setpts3 past its argument checks gives the plan a new points id (the
 * live-plan pool's callers compare it: warpfft_plan_points_id), failed ones included. Also
 * the tests' diagnostic of the width the points take, warpfft_plan_points_width
 * (api/diagnostics.h: exported, not part of warpfft.h's ABI).
 * While the plan's stream is being captured into a CUDA graph (capture.c): setpts and execute
 * join the graph, which then owns the plan; setpts runs only without a host wait (not checked
 * mode) and in the arrays the plan holds; setpts3 and setpts_check, which wait for the stream,
 * refuse. A plan held by a graph takes no setpts that would grow its arrays, and no setpts3
 * (which may reallocate its grids). Such a refusal changes nothing, points id included.
 */
#include <string.h>

#include "api/capture.h"
#include "api/diagnostics.h"
#include "api/handle.h"
#include "params/params.h"
#include "plans/launch.h"
#include "plans/spreader.h"
#include "runtime/error.h"

/* ---------------------------------------------------------------- argument checks */

/* The checks of warpfft_setpts (n_sets = 1) and warpfft_setpts_sets (`who`). */
static warpfft_status check_setpts(const struct warpfft_plan_s *plan, int precision, int64_t n_sets,
                                   int64_t M, const void *x, const void *y, const void *z,
                                   const char *who) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: plan is NULL", who);
    if (plan->type == 3)
        return wf_error(WARPFFT_ERR_BAD_TYPE,
                        "%s: the plan is type 3; use warpfft_setpts3%s (sources and targets)", who,
                        n_sets == 1 ? "" : "_sets");
    const wf_params *p = wf_handle_params(plan);
    if (precision != p->precision)
        return wf_error(WARPFFT_ERR_PRECISION, "%s: precision = %d but the plan is %s", who,
                        precision, wf_prec_name(p->precision));
    warpfft_status st = wf_spreader_sets_ok(p, n_sets, who);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (M < 0)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "%s: M = %lld; must be >= 0", who, (long long)M);
    if (M > ((int64_t)1 << 56) / n_sets)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "%s: M = %lld%s is too large", who, (long long)M,
                        n_sets > 1 ? " points per set times n_sets" : "");
    const char *missing = wf_missing_coord(p->dim, x, y, z);
    if (M > 0 && missing)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: %s is NULL but the plan is %dD and M = %lld",
                        who, missing, p->dim, (long long)M);
    return WARPFFT_SUCCESS;
}

/* The checks of warpfft_setpts3 (n_sets = 1) and warpfft_setpts3_sets (`who`). The sets' counts
 * need no check of their own: n_sets <= ntransf, so n_sets * M <= ntransf * M <= 2^56. */
static warpfft_status check_setpts3(const struct warpfft_plan_s *plan, int precision,
                                    int64_t n_sets, int64_t M, const void *x, const void *y,
                                    const void *z, int64_t K, const void *s, const void *t,
                                    const void *u, const char *who) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: plan is NULL", who);
    if (plan->type != 3)
        return wf_error(WARPFFT_ERR_BAD_TYPE, "%s: the plan is type %d; use warpfft_setpts%s", who,
                        plan->type, n_sets == 1 ? "" : "_sets");
    const wf_params *p = wf_handle_params(plan);
    if (precision != p->precision)
        return wf_error(WARPFFT_ERR_PRECISION, "%s: precision = %d but the plan is %s", who,
                        precision, wf_prec_name(p->precision));
    if (n_sets < 1 || p->ntransf % n_sets != 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: n_sets = %lld; must be >= 1 and divide ntransf = %lld (each set "
                        "feeds ntransf / n_sets transforms)",
                        who, (long long)n_sets, (long long)p->ntransf);
    if (n_sets > WF_MAX_SETS)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: n_sets = %lld point sets; at most %d per setpts (split the batch "
                        "into plans of at most that many sets)",
                        who, (long long)n_sets, WF_MAX_SETS);
    /* a deterministic type 3 spreads by OD (wf_spreader_sets_ok says so again for the spreading
     * grid made later; here it is an argument error, which keeps the previous points) */
    if (n_sets > 1 && (p->deterministic || p->method == WARPFFT_METHOD_OD))
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: n_sets = %lld point sets with spreading method OD (the deterministic "
                        "option's, for types 1 and 3): its kernels take one point set (set "
                        "n_sets = 1, or use a plan per set)",
                        who, (long long)n_sets);
    const int64_t lim = (int64_t)1 << 56;
    if (M < 0 || K < 0 || M > lim / p->ntransf || K > lim / p->ntransf)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS,
                        "%s: M = %lld, K = %lld; each must be >= 0 and, times ntransf = %lld, at "
                        "most 2^56",
                        who, (long long)M, (long long)K, (long long)p->ntransf);
    int dim = p->dim;
    const char *mx = wf_missing_coord(dim, x, y, z), *ms = wf_missing_coord(dim, s, t, u);
    if (M > 0 && mx)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: source array %s is NULL but the plan is %dD and M = %lld", who, mx,
                        dim, (long long)M);
    if (K > 0 && ms)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: target array %s is NULL but the plan is %dD and K = %lld", who,
                        ms[0] == 'x'   ? "s"
                        : ms[0] == 'y' ? "t"
                                       : "u",
                        dim, (long long)K);
    return WARPFFT_SUCCESS;
}

static warpfft_status check_execute(const struct warpfft_plan_s *plan, int precision, const void *c,
                                    const void *fk) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: plan is NULL");
    const wf_params *p = wf_handle_params(plan);
    const wf_nufft3 *n3 = plan->n3;
    int64_t M = n3 ? n3->M : plan->n12->sp.M, K = n3 ? n3->K : 0;
    if (n3 && !n3->has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS, "warpfft_execute: the type-3 plan has no points "
                                               "(call warpfft_setpts3 first; its last call "
                                               "failed or was never made)");
    if (!n3 && !plan->n12->has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS, "warpfft_execute: the plan has no points (call "
                                               "warpfft_setpts first; its last call failed or "
                                               "was never made)");
    if (precision != p->precision)
        return wf_error(WARPFFT_ERR_PRECISION, "warpfft_execute: precision = %d but the plan is %s",
                        precision, wf_prec_name(p->precision));
    if (n3) {
        if (!fk && K > 0)
            return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: fk is NULL and K = %lld",
                            (long long)K);
        if (!c && M > 0 && K > 0)
            return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: c is NULL and M = %lld",
                            (long long)M);
        return WARPFFT_SUCCESS;
    }
    if (!fk)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: fk is NULL");
    if (!c && M > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: c is NULL and M = %lld",
                        (long long)M);
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- stream capture */

/* What setpts (types 1, 2) may do with the plan's stream's capture state `cap`: during a capture
 * it joins the graph, if it neither waits (check_points) nor allocates; outside one, it grows no
 * array a graph holding the plan reads. */
static warpfft_status capture_setpts(struct warpfft_plan_s *plan, const wf_capture *cap,
                                     int64_t n_sets, int64_t M, const char *who) {
    const wf_nufft12 *n = plan->n12;
    int fits = wf_spreader_setpts_fits(&n->sp, n_sets, M);
    if (cap->active && n->p.check_points)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: the plan checks its points (opts.check_points = 1), which waits for "
                        "its stream, and the stream is being captured into a CUDA graph; make "
                        "the plan with check_points = 0 (a non-finite point then makes the "
                        "outputs NaN; warpfft_setpts_check after the graph ran tells)",
                        who);
    if (cap->active && !fits)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: %lld point set(s) of %lld points need larger per-point arrays than "
                        "the plan holds, and allocating them cannot be captured into a CUDA "
                        "graph; run the same setpts once before the capture (the arrays stay)",
                        who, (long long)n_sets, (long long)M);
    if (!cap->active && !fits && wf_plan_in_graphs(plan))
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: %lld point set(s) of %lld points need larger per-point arrays, and "
                        "a CUDA graph that still exists holds the plan's arrays (it captured "
                        "work of the plan); destroy the graph first, or use another plan",
                        who, (long long)n_sets, (long long)M);
    return cap->active ? wf_plan_join_graph(plan, cap, who) : WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- public */

/* What a setpts does once its arguments are checked (*st: their check): the device's context
 * made current, then the capture state of the plan's stream into *cap and its status into *st;
 * returns 1, and the context stays current (the caller leaves it). Returns 0 with *st the error
 * when the check failed (nothing done), or entering the context did (nothing changed, but the
 * points take a new id: the previous ones stay usable). */
static int enter_points(warpfft_plan plan, const char *who, wf_capture *cap, warpfft_status *st) {
    if (*st != WARPFFT_SUCCESS)
        return 0;
    *st = wf_ctx_enter(wf_handle_device(plan));
    if (*st != WARPFFT_SUCCESS) {
        plan->points_id = wf_handle_next_points_id();
        return 0;
    }
    *st = wf_plan_capture(plan, who, cap);
    return 1;
}

/* warpfft_setpts and warpfft_setpts_sets. */
static warpfft_status setpts(warpfft_plan plan, int precision, int64_t n_sets, int64_t M,
                             const void *x, const void *y, const void *z, const char *who) {
    wf_clear_error();
    warpfft_status st = check_setpts(plan, precision, n_sets, M, x, y, z, who);
    wf_capture cap;
    if (!enter_points(plan, who, &cap, &st))
        return st;
    if (st == WARPFFT_SUCCESS)
        st = capture_setpts(plan, &cap, n_sets, M, who);
    if (st == WARPFFT_SUCCESS) {
        plan->points_id = wf_handle_next_points_id();
        st = wf_nufft12_setpts(plan->n12, n_sets, M, wf_dptr(x), wf_dptr(y), wf_dptr(z), who);
        plan->live.eager_work |= !cap.active;
    }
    wf_ctx_leave(wf_handle_device(plan));
    return st;
}

WARPFFT_API warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                                          const void *x, const void *y, const void *z) {
    return setpts(plan, (int)precision, 1, M, x, y, z, "warpfft_setpts");
}

WARPFFT_API warpfft_status warpfft_setpts_sets(warpfft_plan plan, warpfft_precision precision,
                                               int64_t n_sets, int64_t M, const void *x,
                                               const void *y, const void *z) {
    return setpts(plan, (int)precision, n_sets, M, x, y, z, "warpfft_setpts_sets");
}

WARPFFT_API warpfft_status warpfft_setpts_check(warpfft_plan plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_setpts_check: plan is NULL");
    int has_points = plan->n3 ? plan->n3->has_points : plan->n12->has_points;
    if (!has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS,
                        "warpfft_setpts_check: the plan has no points (its last setpts failed "
                        "or was never made)");
    /* type 3 and checked mode have checked at setpts; M = 0 has nothing to check */
    if (plan->n3 || !wf_nufft12_unchecked(plan->n12))
        return WARPFFT_SUCCESS;
    const wf_device *dev = wf_handle_device(plan);
    warpfft_status st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_capture cap;
    st = wf_plan_capture(plan, "warpfft_setpts_check", &cap);
    if (st == WARPFFT_SUCCESS && cap.active)
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "warpfft_setpts_check waits for the plan's stream, which is being captured "
                      "into a CUDA graph; call it after the capture (and after a launch of the "
                      "graph, for the points it set)");
    if (st == WARPFFT_SUCCESS)
        st = wf_nufft12_check_points(plan->n12, "warpfft_setpts_check",
                                     " in the last warpfft_setpts; the plan's executes write NaN "
                                     "outputs");
    wf_ctx_leave(dev);
    return st;
}

WARPFFT_API warpfft_status warpfft_plan_points_width(warpfft_plan plan, int32_t widths[4],
                                                     int32_t *n_widths, int32_t *in_use,
                                                     uint64_t *stats, int64_t n_stats) {
    wf_clear_error();
    if (!plan || !widths || !n_widths || !in_use || (!stats && n_stats > 0) || n_stats < 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_points_width: %s",
                        !plan                             ? "plan is NULL"
                        : !widths || !n_widths || !in_use ? "widths, n_widths or in_use is NULL"
                        : n_stats < 0                     ? "n_stats < 0"
                                                          : "stats is NULL with n_stats > 0");
    if (stats)
        memset(stats, 0, (size_t)n_stats * sizeof *stats);
    if (plan->n3) { /* type 3 keeps one width, chosen at setpts3 */
        warpfft_plan_info info;
        wf_nufft3_info(plan->n3, &info);
        memset(widths, 0, 4 * sizeof *widths);
        widths[0] = info.width;
        *n_widths = 1;
        *in_use = plan->n3->has_points ? info.width : 0;
        return WARPFFT_SUCCESS;
    }
    const wf_device *dev = wf_handle_device(plan);
    warpfft_status st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = wf_nufft12_points_width(plan->n12, widths, n_widths, in_use, stats, n_stats);
    wf_ctx_leave(dev);
    return st;
}

/* warpfft_setpts3 and warpfft_setpts3_sets. */
static warpfft_status setpts3(warpfft_plan plan, int precision, int64_t n_sets, int64_t M,
                              const void *x, const void *y, const void *z, int64_t K, const void *s,
                              const void *t, const void *u, const char *who) {
    wf_clear_error();
    warpfft_status st = check_setpts3(plan, precision, n_sets, M, x, y, z, K, s, t, u, who);
    wf_capture cap;
    if (!enter_points(plan, who, &cap, &st))
        return st;
    const wf_device *dev = wf_handle_device(plan);
    if (st == WARPFFT_SUCCESS && cap.active)
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "%s waits for the plan's stream (the points' bounds choose the grids), "
                      "which is being captured into a CUDA graph; set type 3's points before "
                      "the capture and capture its executes",
                      who);
    else if (st == WARPFFT_SUCCESS && wf_plan_in_graphs(plan))
        st = wf_error(WARPFFT_ERR_UNSUPPORTED,
                      "%s: a CUDA graph that still exists holds the plan (it captured work of "
                      "the plan), and new type-3 points may reallocate the grids it reads; "
                      "destroy the graph first, or use another plan",
                      who);
    if (st != WARPFFT_SUCCESS) {
        wf_ctx_leave(dev);
        return st;
    }
    plan->points_id = wf_handle_next_points_id();
    int dim = wf_handle_params(plan)->dim;
    CUdeviceptr xyz[3] = {wf_dptr(x), dim >= 2 ? wf_dptr(y) : 0, dim >= 3 ? wf_dptr(z) : 0};
    CUdeviceptr stu[3] = {wf_dptr(s), dim >= 2 ? wf_dptr(t) : 0, dim >= 3 ? wf_dptr(u) : 0};
    st = wf_nufft3_setpts(plan->n3, n_sets, M, xyz, K, stu, who);
    plan->live.eager_work = 1;
    wf_ctx_leave(dev);
    return st;
}

WARPFFT_API warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision,
                                           int64_t M, const void *x, const void *y, const void *z,
                                           int64_t K, const void *s, const void *t, const void *u) {
    return setpts3(plan, (int)precision, 1, M, x, y, z, K, s, t, u, "warpfft_setpts3");
}

WARPFFT_API warpfft_status warpfft_setpts3_sets(warpfft_plan plan, warpfft_precision precision,
                                                int64_t n_sets, int64_t M, const void *x,
                                                const void *y, const void *z, int64_t K,
                                                const void *s, const void *t, const void *u) {
    return setpts3(plan, (int)precision, n_sets, M, x, y, z, K, s, t, u, "warpfft_setpts3_sets");
}

WARPFFT_API warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c,
                                           void *fk) {
    wf_clear_error();
    warpfft_status st = check_execute(plan, (int)precision, c, fk);
    if (st != WARPFFT_SUCCESS)
        return st;
    const wf_device *dev = wf_handle_device(plan);
    st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    /* during a capture the graph takes the plan: its nodes read the plan's buffers */
    wf_capture cap;
    st = wf_plan_capture(plan, "warpfft_execute", &cap);
    if (st == WARPFFT_SUCCESS && cap.active)
        st = wf_plan_join_graph(plan, &cap, "warpfft_execute");
    if (st == WARPFFT_SUCCESS) {
        if (plan->n3)
            st = wf_nufft3_execute(plan->n3, wf_dptr(c), wf_dptr(fk));
        else
            st = wf_nufft12_execute(plan->n12, wf_dptr(c), wf_dptr(fk));
        plan->live.eager_work |= !cap.active;
    }
    wf_ctx_leave(dev);
    return st;
}
