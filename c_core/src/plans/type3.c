/*
 * type3.c — type-3 plans (type3.h explains the math): warpfft_setpts3, and the create /
 * execute / destroy / info hooks plan.c and execute.c call for type 3.
 *
 * A type-3 plan owns two sub-plans, (re)built at setpts3 when the grids change:
 *  - `spread`: a spread-only type-1 plan (plan.c, wf_plan_build_spreader) on the grid nf,
 *    in the internal precision, over the rescaled sources x';
 *  - `inner`: an ordinary type-2 plan with n_modes = nf and modeord 1 (the spread grid holds
 *    position l*h at index l mod nf: FFT order), over the rescaled targets s'.
 * Everything runs on the user's stream. setpts3: bounds (one sync), the choice
 * (type3_params.c), rescaling kernels that also write the pre-phase and the post-factors, and
 * the two sub-plans' binnings (asynchronous: the bounds proved every coordinate finite), then
 * one sync at the end so that the caller may free the arrays when setpts3 returns. execute:
 * pre-phase (when some D_d != 0 or the internal precision differs), spread, inner type 2 (into fk
 * directly when the precisions agree), post-factor (in place).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "type3.h"

#define WF_T3_KEYS 12 /* u64 keys: x min[3], x max[3], s min[3], s max[3]; then the i32 flag */

struct wf_type3 {
    warpfft_opts opts; /* the user's, resolved */
    wf_t3_params q;    /* the current choice (valid when has_grid) */
    int has_grid;
    struct warpfft_plan_s *spread;
    warpfft_plan inner;
    int64_t K;
    /* kernels of module type3_p; [0]: inner f32, [1]: inner f64 */
    wf_kernel k_minmax, k_sources[2], k_targets[2], k_pre[2], k_post[2];
    wf_dbuf keys, geom;
    wf_dbuf xp[3], sp[3]; /* rescaled coordinates (internal precision) */
    wf_dbuf pre, post;    /* pre-phase per source, post-factor per target (complex) */
    wf_dbuf cbuf;         /* pre-phased strengths, ntransf*M */
    wf_dbuf obuf;         /* inner output when the precisions differ, ntransf*K */
    uint64_t keys_host[WF_T3_KEYS + 1];
    double geom_host[WF_T3_G_COUNT];
    int nq;
};

static int iq(int precision) {
    return precision == WARPFFT_F64 ? 1 : 0;
}

/* Re-records st with a message saved before a call that cleared it. */
static warpfft_status restore(warpfft_status st, const char *msg) {
    return st == WARPFFT_SUCCESS ? st : wf_error(st, "%s", msg);
}

/* ---------------------------------------------------------------- sub-plans */

static void destroy_subplans(struct warpfft_plan_s *plan) {
    struct wf_type3 *t3 = plan->t3;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", warpfft_last_error());
    if (t3->spread) {
        wf_plan_release_spreader(t3->spread);
        free(t3->spread);
        t3->spread = NULL;
    }
    if (t3->inner) {
        warpfft_plan_destroy(t3->inner); /* clears this thread's message */
        t3->inner = NULL;
    }
    t3->has_grid = 0;
    if (msg[0])
        wf_error(WARPFFT_ERR_INTERNAL, "%s", msg); /* status is the caller's; message kept */
}

static warpfft_status build_spread(struct warpfft_plan_s *plan, const wf_t3_params *q) {
    struct wf_type3 *t3 = plan->t3;
    struct warpfft_plan_s *sp = calloc(1, sizeof *sp);
    if (!sp)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of a plan (%zu bytes)",
                        sizeof *sp);
    sp->iflag = plan->iflag;
    sp->fft_dir = plan->fft_dir;
    sp->M = -1;
    warpfft_status st = wf_plan_attach(sp, &t3->opts);
    size_t limit = plan->dev->max_shared_optin > 0 ? (size_t)plan->dev->max_shared_optin : 0;
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_spread_params(q, &t3->opts, limit, &sp->p);
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_build_spreader(sp);
    if (st != WARPFFT_SUCCESS) {
        free(sp);
        return st;
    }
    t3->spread = sp;
    return WARPFFT_SUCCESS;
}

static warpfft_status build_inner(struct warpfft_plan_s *plan, const wf_t3_params *q) {
    struct wf_type3 *t3 = plan->t3;
    warpfft_opts io = wf_t3_inner_opts(&t3->opts);
    warpfft_status st = warpfft_plan_create(2, q->dim, q->nf, plan->iflag, q->ntransf, q->inner_tol,
                                            (warpfft_precision)q->inner_precision, &io, &t3->inner);
    if (st != WARPFFT_SUCCESS) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", warpfft_last_error());
        t3->inner = NULL;
        return wf_error(st, "type 3: the inner type-2 plan on the grid {%lld, %lld, %lld}: %s",
                        (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2], msg);
    }
    return WARPFFT_SUCCESS;
}

/* Whether the sub-plans built for a can serve b. */
static int same_grids(const wf_t3_params *a, const wf_t3_params *b) {
    for (int d = 0; d < 3; d++)
        if (a->nf[d] != b->nf[d])
            return 0;
    return a->inner_precision == b->inner_precision && a->width == b->width &&
           a->inner_tol == b->inner_tol;
}

/* Refuses grids larger than the device's memory (never tries terabyte allocations). */
static warpfft_status check_memory(const struct warpfft_plan_s *plan, const wf_t3_params *q) {
    wf_params ip;
    warpfft_status st = wf_t3_inner_params(q, &plan->t3->opts, WF_SHARED_OPTIN_SM90, &ip);
    if (st != WARPFFT_SUCCESS)
        return st;
    size_t total = 0;
    if (plan->drv->cuDeviceTotalMem(&total, plan->dev->dev) != WF_CUDA_SUCCESS)
        return WARPFFT_SUCCESS; /* unknown: the allocations will say */
    double cb = q->inner_precision == WARPFFT_F64 ? 16.0 : 8.0;
    double need = ((double)q->nf_prod + (double)ip.fine_prod) * (double)q->ntransf * cb;
    if (need > (double)total)
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "type 3: the spreads of the points need a spreading grid of {%lld, %lld, "
                        "%lld} and an inner fine grid of {%lld, %lld, %lld} points (%.3g bytes "
                        "with ntransf = %lld); the device has %zu bytes",
                        (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2],
                        (long long)ip.n_fine[0], (long long)ip.n_fine[1], (long long)ip.n_fine[2],
                        need, (long long)q->ntransf, total);
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- buffers */

/* b holds at least bytes (reallocated, contents lost, when smaller). */
static warpfft_status ensure(struct warpfft_plan_s *plan, wf_dbuf *b, size_t bytes,
                             const char *what) {
    if (b->bytes >= bytes && (b->ptr || bytes == 0))
        return WARPFFT_SUCCESS;
    wf_plan_free(plan, b);
    return wf_plan_alloc(plan, b, bytes, what);
}

static warpfft_status ensure_buffers(struct warpfft_plan_s *plan, int64_t M, int64_t K) {
    struct wf_type3 *t3 = plan->t3;
    const wf_t3_params *q = &t3->q;
    size_t rb = q->inner_precision == WARPFFT_F64 ? 8 : 4, cb = 2 * rb;
    size_t m = (size_t)M, k = (size_t)K, nt = (size_t)q->ntransf;
    static const char *const xw[3] = {"rescaled x", "rescaled y", "rescaled z"};
    static const char *const sw[3] = {"rescaled s", "rescaled t", "rescaled u"};
    warpfft_status st = WARPFFT_SUCCESS;
    for (int d = 0; d < q->dim && st == WARPFFT_SUCCESS; d++) {
        st = ensure(plan, &t3->xp[d], m * rb, xw[d]);
        if (st == WARPFFT_SUCCESS)
            st = ensure(plan, &t3->sp[d], k * rb, sw[d]);
    }
    if (st == WARPFFT_SUCCESS && q->pre_phase)
        st = ensure(plan, &t3->pre, m * cb, "type 3 pre-phase");
    if (st == WARPFFT_SUCCESS)
        st = ensure(plan, &t3->post, k * cb, "type 3 post-factors");
    if (st == WARPFFT_SUCCESS && (q->pre_phase || q->inner_precision != plan->p.precision))
        st = ensure(plan, &t3->cbuf, m * nt * cb, "type 3 pre-phased strengths");
    if (st == WARPFFT_SUCCESS && q->inner_precision != plan->p.precision)
        st = ensure(plan, &t3->obuf, k * nt * cb, "type 3 inner outputs");
    return st;
}

/* ---------------------------------------------------------------- create / release */

static warpfft_status load_t3_kernel(struct warpfft_plan_s *plan, const char *name, wf_kernel *k) {
    char mod[32];
    snprintf(mod, sizeof mod, "type3_%s", wf_prec_name(plan->p.precision));
    snprintf(k->name, sizeof k->name, "%s", name);
    return wf_kernel_get(plan->dev, mod, k->name, &k->fn);
}

static warpfft_status load_t3_kernels(struct warpfft_plan_s *plan) {
    struct wf_type3 *t3 = plan->t3;
    const char *ps = wf_prec_name(plan->p.precision);
    char name[64];
    snprintf(name, sizeof name, "wf_t3_minmax_%s", ps);
    warpfft_status st = load_t3_kernel(plan, name, &t3->k_minmax);
    for (int i = plan->p.precision == WARPFFT_F64 ? 1 : 0; i < 2 && st == WARPFFT_SUCCESS; i++) {
        const char *qs = i ? "f64" : "f32";
        snprintf(name, sizeof name, "wf_t3_sources_%s_%s", ps, qs);
        st = load_t3_kernel(plan, name, &t3->k_sources[i]);
        snprintf(name, sizeof name, "wf_t3_targets_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(plan, name, &t3->k_targets[i]);
        snprintf(name, sizeof name, "wf_t3_prephase_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(plan, name, &t3->k_pre[i]);
        snprintf(name, sizeof name, "wf_t3_post_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(plan, name, &t3->k_post[i]);
    }
    return st;
}

void wf_t3_release(struct warpfft_plan_s *plan) {
    struct wf_type3 *t3 = plan->t3;
    if (!t3)
        return;
    destroy_subplans(plan);
    wf_dbuf *bufs[] = {&t3->keys,  &t3->geom,  &t3->xp[0], &t3->xp[1], &t3->xp[2], &t3->sp[0],
                       &t3->sp[1], &t3->sp[2], &t3->pre,   &t3->post,  &t3->cbuf,  &t3->obuf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_plan_free(plan, bufs[i]);
    free(t3);
    plan->t3 = NULL;
}

/* The plan's own parameters: what plan_get_info reports before setpts3. */
static void set_basics(struct warpfft_plan_s *plan, int dim, int64_t ntransf, double tol,
                       int precision) {
    wf_params *p = &plan->p;
    memset(p, 0, sizeof *p);
    p->type = 3;
    p->dim = dim;
    p->precision = precision;
    p->modeord = plan->t3->opts.modeord;
    p->tol = tol;
    p->upsampfac = wf_t3_sigma(&plan->t3->opts);
    p->ntransf = ntransf;
    for (int d = 0; d < 3; d++)
        p->n_modes[d] = p->n_fine[d] = 1;
    p->mode_prod = p->fine_prod = 1;
    p->real_bytes = precision == WARPFFT_F64 ? 8 : 4;
    p->complex_bytes = 2 * p->real_bytes;
}

static warpfft_status t3_init(struct warpfft_plan_s *pl) {
    warpfft_status st = wf_plan_attach(pl, &pl->t3->opts);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(pl->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = load_t3_kernels(pl);
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(pl, &pl->t3->keys, (WF_T3_KEYS + 1) * sizeof(uint64_t), "type 3 bounds");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(pl, &pl->t3->geom, WF_T3_G_COUNT * sizeof(double), "type 3 geometry");
    if (st != WARPFFT_SUCCESS)
        wf_t3_release(pl);
    wf_ctx_leave(pl->dev);
    return st;
}

warpfft_status wf_t3_plan_create(int dim, int iflag, int64_t ntransf, double tol, int precision,
                                 const warpfft_opts *opts, struct warpfft_plan_s **out) {
    warpfft_opts o;
    warpfft_status st = wf_t3_check(dim, ntransf, tol, precision, opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    struct warpfft_plan_s *pl = calloc(1, sizeof *pl);
    struct wf_type3 *t3 = calloc(1, sizeof *t3);
    if (!pl || !t3) {
        free(pl);
        free(t3);
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of a type-3 plan");
    }
    pl->t3 = t3;
    t3->opts = o;
    t3->K = -1;
    pl->iflag = iflag;
    pl->fft_dir = iflag >= 0 ? WF_CUFFT_INVERSE : WF_CUFFT_FORWARD;
    pl->M = -1;
    set_basics(pl, dim, ntransf, tol, precision);
    st = t3_init(pl);
    if (st != WARPFFT_SUCCESS) {
        free(pl->t3); /* NULL after a release */
        free(pl);
        return st;
    }
    *out = pl;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- setpts3 */

static double key_to_double(uint64_t k) {
    uint64_t b = (k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static warpfft_status launch_minmax(struct warpfft_plan_s *plan, int64_t n, CUdeviceptr x,
                                    CUdeviceptr y, CUdeviceptr z, CUdeviceptr keys) {
    struct wf_type3 *t3 = plan->t3;
    long long nn = n;
    int dim = plan->p.dim;
    CUdeviceptr bad = t3->keys.ptr + WF_T3_KEYS * sizeof(uint64_t);
    void *args[] = {&nn, &dim, &x, &y, &z, &keys, &bad};
    return wf_plan_launch(plan, &t3->k_minmax, n, args);
}

/* Bounds of sources and targets (one sync); BAD_POINTS for a NaN/inf coordinate. */
static warpfft_status bounds(struct warpfft_plan_s *plan, int64_t M, const CUdeviceptr xyz[3],
                             int64_t K, const CUdeviceptr stu[3], double lo[2][3],
                             double hi[2][3]) {
    struct wf_type3 *t3 = plan->t3;
    const wf_driver *drv = plan->drv;
    size_t half = 3 * sizeof(uint64_t);
    CUdeviceptr k = t3->keys.ptr;
    /* min keys to all ones, max keys and the flag to zero */
    WF_CU(drv->cuMemsetD8Async(k, 0, t3->keys.bytes, plan->stream), "cuMemsetD8Async (bounds)");
    WF_CU(drv->cuMemsetD8Async(k, 0xff, half, plan->stream), "cuMemsetD8Async (bounds)");
    WF_CU(drv->cuMemsetD8Async(k + 2 * half, 0xff, half, plan->stream), "cuMemsetD8Async (bounds)");
    warpfft_status st = launch_minmax(plan, M, xyz[0], xyz[1], xyz[2], k);
    if (st == WARPFFT_SUCCESS)
        st = launch_minmax(plan, K, stu[0], stu[1], stu[2], k + 2 * half);
    if (st != WARPFFT_SUCCESS)
        return st;
    WF_CU(drv->cuMemcpyDtoHAsync(t3->keys_host, k, t3->keys.bytes, plan->stream),
          "cuMemcpyDtoHAsync of the type 3 bounds");
    WF_CU(drv->cuStreamSynchronize(plan->stream), "cuStreamSynchronize after the type 3 bounds");
    int32_t bad;
    memcpy(&bad, &t3->keys_host[WF_T3_KEYS], sizeof bad);
    if (bad)
        return wf_error(WARPFFT_ERR_BAD_POINTS,
                        "warpfft_setpts3: a source (x, y, z) or target (s, t, u) coordinate is "
                        "NaN or infinite (M = %lld, K = %lld)",
                        (long long)M, (long long)K);
    for (int set = 0; set < 2; set++)
        for (int d = 0; d < plan->p.dim; d++) {
            lo[set][d] = key_to_double(t3->keys_host[6 * set + d]);
            hi[set][d] = key_to_double(t3->keys_host[6 * set + 3 + d]);
        }
    return WARPFFT_SUCCESS;
}

static warpfft_status launch_rescale(struct warpfft_plan_s *plan, int64_t M,
                                     const CUdeviceptr xyz[3], int64_t K,
                                     const CUdeviceptr stu[3]) {
    struct wf_type3 *t3 = plan->t3;
    const wf_t3_params *q = &t3->q;
    int i = iq(q->inner_precision), dim = q->dim, iflag = plan->iflag, nq = t3->nq;
    int pre = q->pre_phase, post = q->post_phase;
    long long m = M, k = K;
    CUdeviceptr x = xyz[0], y = xyz[1], z = xyz[2], s = stu[0], t = stu[1], u = stu[2];
    CUdeviceptr geom = t3->geom.ptr, prep = t3->pre.ptr, postp = t3->post.ptr;
    CUdeviceptr xp = t3->xp[0].ptr, yp = t3->xp[1].ptr, zp = t3->xp[2].ptr;
    CUdeviceptr sp = t3->sp[0].ptr, tp = t3->sp[1].ptr, up = t3->sp[2].ptr;
    WF_CU(plan->drv->cuMemcpyHtoDAsync(geom, t3->geom_host, sizeof t3->geom_host, plan->stream),
          "cuMemcpyHtoDAsync of the type 3 geometry");
    void *sa[] = {&m, &dim, &x, &y, &z, &geom, &iflag, &pre, &xp, &yp, &zp, &prep};
    warpfft_status st = wf_plan_launch(plan, &t3->k_sources[i], M, sa);
    void *ta[] = {&k, &dim, &s, &t, &u, &geom, &nq, &iflag, &post, &sp, &tp, &up, &postp};
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_launch(plan, &t3->k_targets[i], K, ta);
    return st;
}

/* Both sub-plans' setpts, unchecked and trusted: bounds() has seen every coordinate finite, so
 * neither needs a sync nor its executes a NaN pass. Then one wait for the stream: the
 * rescaling kernels read the caller's arrays, which warpfft.h lets the caller free once
 * setpts3 returns. */
static warpfft_status sub_setpts(struct warpfft_plan_s *plan, int64_t M, int64_t K) {
    struct wf_type3 *t3 = plan->t3;
    t3->spread->p.check_points = 0;
    t3->spread->trusted_points = 1;
    t3->inner->p.check_points = 0;
    t3->inner->trusted_points = 1;
    warpfft_precision ip = (warpfft_precision)t3->q.inner_precision;
    void *p[3], *s[3];
    for (int d = 0; d < 3; d++) {
        p[d] = (void *)(uintptr_t)t3->xp[d].ptr;
        s[d] = (void *)(uintptr_t)t3->sp[d].ptr;
    }
    warpfft_status st = warpfft_setpts(t3->spread, ip, M, p[0], p[1], p[2]);
    if (st == WARPFFT_SUCCESS)
        st = warpfft_setpts(t3->inner, ip, K, s[0], s[1], s[2]);
    if (st != WARPFFT_SUCCESS) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", warpfft_last_error());
        return wf_error(st, "warpfft_setpts3 (binning of the rescaled points): %s", msg);
    }
    WF_CU(plan->drv->cuStreamSynchronize(plan->stream), "cuStreamSynchronize after setpts3");
    return WARPFFT_SUCCESS;
}

static warpfft_status setpts3_run(struct warpfft_plan_s *plan, int64_t M, const CUdeviceptr xyz[3],
                                  int64_t K, const CUdeviceptr stu[3]) {
    struct wf_type3 *t3 = plan->t3;
    plan->M = M;
    t3->K = K;
    if (M == 0 || K == 0)
        return WARPFFT_SUCCESS; /* execute writes zeros (M = 0) or nothing (K = 0) */
    double lo[2][3] = {{0}}, hi[2][3] = {{0}};
    warpfft_status st = bounds(plan, M, xyz, K, stu, lo, hi);
    wf_t3_params q;
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_params_make(plan->p.dim, plan->p.ntransf, plan->p.tol, plan->p.precision,
                               &t3->opts, lo[0], hi[0], lo[1], hi[1], &q);
    if (st == WARPFFT_SUCCESS)
        st = check_memory(plan, &q);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (!t3->has_grid || !same_grids(&t3->q, &q)) {
        destroy_subplans(plan);
        wf_clear_error();
        st = build_spread(plan, &q);
        if (st == WARPFFT_SUCCESS)
            st = build_inner(plan, &q);
        if (st != WARPFFT_SUCCESS) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", warpfft_last_error());
            destroy_subplans(plan);
            return restore(st, msg);
        }
        t3->has_grid = 1;
    }
    t3->q = q;
    t3->nq = wf_t3_geometry(&q, t3->geom_host);
    st = ensure_buffers(plan, M, K);
    if (st == WARPFFT_SUCCESS)
        st = launch_rescale(plan, M, xyz, K, stu);
    if (st == WARPFFT_SUCCESS)
        st = sub_setpts(plan, M, K);
    return st;
}

static warpfft_status check_setpts3(const struct warpfft_plan_s *plan, int precision, int64_t M,
                                    const void *x, const void *y, const void *z, int64_t K,
                                    const void *s, const void *t, const void *u) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_setpts3: plan is NULL");
    if (plan->p.type != 3)
        return wf_error(WARPFFT_ERR_BAD_TYPE,
                        "warpfft_setpts3: the plan is type %d; use warpfft_setpts", plan->p.type);
    if (precision != plan->p.precision)
        return wf_error(WARPFFT_ERR_PRECISION, "warpfft_setpts3: precision = %d but the plan is %s",
                        precision, wf_prec_name(plan->p.precision));
    const int64_t lim = (int64_t)1 << 56;
    if (M < 0 || K < 0 || M > lim / plan->p.ntransf || K > lim / plan->p.ntransf)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS,
                        "warpfft_setpts3: M = %lld, K = %lld; each must be >= 0 and, times "
                        "ntransf = %lld, at most 2^56",
                        (long long)M, (long long)K, (long long)plan->p.ntransf);
    int dim = plan->p.dim;
    const char *mx = wf_missing_coord(dim, x, y, z), *ms = wf_missing_coord(dim, s, t, u);
    if (M > 0 && mx)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_setpts3: source array %s is NULL but the plan is %dD and M = %lld",
                        mx, dim, (long long)M);
    if (K > 0 && ms)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_setpts3: target array %s is NULL but the plan is %dD and K = %lld",
                        ms[0] == 'x'   ? "s"
                        : ms[0] == 'y' ? "t"
                                       : "u",
                        dim, (long long)K);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision,
                                           int64_t M, const void *x, const void *y, const void *z,
                                           int64_t K, const void *s, const void *t, const void *u) {
    wf_clear_error();
    warpfft_status st = check_setpts3(plan, (int)precision, M, x, y, z, K, s, t, u);
    if (st != WARPFFT_SUCCESS)
        return st;
    plan->has_points = 0;
    st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    int dim = plan->p.dim;
    CUdeviceptr xyz[3] = {wf_dptr(x), dim >= 2 ? wf_dptr(y) : 0, dim >= 3 ? wf_dptr(z) : 0};
    CUdeviceptr stu[3] = {wf_dptr(s), dim >= 2 ? wf_dptr(t) : 0, dim >= 3 ? wf_dptr(u) : 0};
    st = setpts3_run(plan, M, xyz, K, stu);
    wf_ctx_leave(plan->dev);
    plan->has_points = st == WARPFFT_SUCCESS;
    return st;
}

/* ---------------------------------------------------------------- execute */

static warpfft_status check_execute(const struct warpfft_plan_s *plan, int precision, const void *c,
                                    const void *fk) {
    if (!plan->has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS, "warpfft_execute: the type-3 plan has no points "
                                               "(call warpfft_setpts3 first; its last call "
                                               "failed or was never made)");
    if (precision != plan->p.precision)
        return wf_error(WARPFFT_ERR_PRECISION, "warpfft_execute: precision = %d but the plan is %s",
                        precision, wf_prec_name(plan->p.precision));
    if (!fk && plan->t3->K > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: fk is NULL and K = %lld",
                        (long long)plan->t3->K);
    if (!c && plan->M > 0 && plan->t3->K > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: c is NULL and M = %lld",
                        (long long)plan->M);
    return WARPFFT_SUCCESS;
}

static warpfft_status exec3(struct warpfft_plan_s *plan, CUdeviceptr c, CUdeviceptr fk) {
    struct wf_type3 *t3 = plan->t3;
    const wf_t3_params *q = &t3->q;
    int64_t M = plan->M, K = t3->K;
    long long nt = plan->p.ntransf, m = M, k = K;
    if (K == 0)
        return WARPFFT_SUCCESS;
    if (M == 0)
        return wf_plan_memset(plan, fk, (size_t)K * (size_t)nt * plan->p.complex_bytes,
                              "fk (no sources)");
    int i = iq(q->inner_precision), same = q->inner_precision == plan->p.precision;
    warpfft_status st = WARPFFT_SUCCESS;
    CUdeviceptr cin = c;
    if (q->pre_phase || !same) {
        CUdeviceptr pre = q->pre_phase ? t3->pre.ptr : 0, out = t3->cbuf.ptr;
        void *args[] = {&m, &nt, &c, &pre, &out};
        st = wf_plan_launch(plan, &t3->k_pre[i], M, args);
        cin = out;
    }
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_spread(t3->spread, cin);
    CUdeviceptr out = same ? fk : t3->obuf.ptr, fac = t3->post.ptr;
    if (st == WARPFFT_SUCCESS) {
        st = warpfft_execute(t3->inner, (warpfft_precision)q->inner_precision,
                             (void *)(uintptr_t)out, (void *)(uintptr_t)t3->spread->fw.ptr);
        if (st != WARPFFT_SUCCESS) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", warpfft_last_error());
            st = wf_error(st, "warpfft_execute (type 3, inner type-2 step): %s", msg);
        }
    }
    void *args[] = {&k, &nt, &out, &fac, &fk};
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_launch(plan, &t3->k_post[i], K, args);
    return st;
}

warpfft_status wf_t3_execute(struct warpfft_plan_s *plan, int precision, void *c, void *fk) {
    warpfft_status st = check_execute(plan, precision, c, fk);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = exec3(plan, wf_dptr(c), wf_dptr(fk));
    wf_ctx_leave(plan->dev);
    return st;
}

/* ---------------------------------------------------------------- info */

void wf_t3_info(const struct warpfft_plan_s *plan, warpfft_plan_info *info) {
    const struct wf_type3 *t3 = plan->t3;
    info->n_targets = plan->has_points ? t3->K : -1;
    if (t3->has_grid && t3->spread && t3->inner)
        wf_t3_to_info(&t3->q, &t3->spread->p, &t3->inner->p, info);
}

size_t wf_t3_sub_workspace(const struct warpfft_plan_s *plan) {
    const struct wf_type3 *t3 = plan->t3;
    return (t3->spread ? t3->spread->workspace : 0) + (t3->inner ? t3->inner->workspace : 0);
}
