/*
 * type3.c — type-3 transforms (type3.h; params/type3_params.h explains the math): create,
 * setpts, execute, release and info.
 *
 * Everything runs on the user's stream. setpts: bounds (one sync), the choice
 * (type3_params.c), new grids when it changed (a spreader with its own grid, an inner type-2
 * transform), rescaling kernels that also write the pre-phase and the post-factors, and the two
 * binnings (asynchronous: the bounds proved every coordinate finite), then one sync at the end
 * so that the caller may free the arrays when setpts returns. execute: pre-phase (when some
 * D_d != 0 or the internal precision differs), spread, inner type 2 (into fk directly when the
 * precisions agree), post-factor (in place).
 */
#include "plans/type3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "params/params.h"
#include "runtime/cache.h"
#include "runtime/error.h"

static int iq(int precision) {
    return precision == WARPFFT_F64 ? 1 : 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---------------------------------------------------------------- grids */

/* The spreader and the inner transform, freed (the inner one's cuFFT plan, work area, grid and
 * factors to the plan cache, as `work` allows: wf_nufft12_release). Returns the inner
 * cufftDestroy's result. */
static cufftResult release_grids(wf_nufft3 *n, int work) {
    cufftResult r = 0;
    wf_spreader_release(&n->spread);
    if (n->inner) {
        r = wf_nufft12_release(n->inner, work);
        free(n->inner);
        n->inner = NULL;
    }
    n->has_grid = 0;
    return r;
}

/* The spreader on q's grid, in the internal precision, with its own grid; its points are the
 * rescaled sources, which setpts has seen finite. */
static warpfft_status build_spread(wf_nufft3 *n, const wf_t3_params *q) {
    wf_params sp;
    warpfft_status st = wf_t3_spread_params(q, &n->opts, wf_exec_shared_limit(&n->ex), &sp);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_spreader_init(&n->spread, &sp, &n->ex, WF_SI_SPREAD);
    n->spread.trusted = 1;
    wf_module_set mods = {.n = 0};
    wf_spreader_modules(&sp, WF_SI_SPREAD, &mods);
    st = wf_modules_preload(n->ex.dev, mods.names, mods.n);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_kernels(&n->spread);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_alloc(&n->spread, 1);
    return st;
}

/* The inner type-2 transform on q's grid (n_modes = nf, modeord 1), over targets setpts has
 * seen finite. Its creation counts as a plan creation (cache.h's statistics). */
static warpfft_status build_inner(wf_nufft3 *n, const wf_t3_params *q) {
    wf_params ip;
    warpfft_status st = wf_t3_inner_params(q, wf_exec_shared_limit(&n->ex), &ip);
    if (st != WARPFFT_SUCCESS)
        return st;
    double t0 = now_ms();
    wf_create_times t = {0, 0, 0, 0, 0};
    st = wf_nufft12_new(&ip, n->iflag, &n->ex, n->cufft, &t, &n->inner);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "type 3: the inner type-2 plan on the grid {%lld, %lld, %lld}: %s",
                        (long long)q->nf[0], (long long)q->nf[1], (long long)q->nf[2],
                        wf_last_error());
    t.total_ms = now_ms() - t0;
    wf_cache_note_create(&t);
    wf_nufft12_trust_points(n->inner);
    return WARPFFT_SUCCESS;
}

/* Whether the grids built for a can serve b. */
static int same_grids(const wf_t3_params *a, const wf_t3_params *b) {
    for (int d = 0; d < 3; d++)
        if (a->nf[d] != b->nf[d])
            return 0;
    return a->inner_precision == b->inner_precision && a->width == b->width &&
           a->inner_tol == b->inner_tol;
}

/* The grids for q: kept when the current ones serve it, else made anew. */
static warpfft_status ensure_grids(wf_nufft3 *n, const wf_t3_params *q) {
    if (n->has_grid && same_grids(&n->q, q))
        return WARPFFT_SUCCESS;
    cufftResult r = release_grids(n, WF_WORK_PENDING);
    if (r != 0)
        return wf_cufft_error(r, "cufftDestroy (the previous inner type-2 transform)");
    warpfft_status st = build_spread(n, q);
    if (st == WARPFFT_SUCCESS)
        st = build_inner(n, q);
    if (st != WARPFFT_SUCCESS) {
        release_grids(n, WF_WORK_PENDING); /* the build's failure is the one to report */
        return st;
    }
    n->has_grid = 1;
    return WARPFFT_SUCCESS;
}

/* Refuses grids larger than the device's memory (never tries terabyte allocations). */
static warpfft_status check_memory(const wf_nufft3 *n, const wf_t3_params *q) {
    wf_params ip;
    warpfft_status st = wf_t3_inner_params(q, WF_SHARED_OPTIN_SM90, &ip);
    if (st != WARPFFT_SUCCESS)
        return st;
    size_t total = 0;
    if (n->ex.drv->cuDeviceTotalMem(&total, n->ex.dev->dev) != WF_CUDA_SUCCESS)
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
static warpfft_status ensure(wf_nufft3 *n, wf_dbuf *b, size_t bytes, const char *what) {
    if (b->bytes >= bytes && (b->ptr || bytes == 0))
        return WARPFFT_SUCCESS;
    wf_dbuf_free(b, &n->workspace);
    return wf_dbuf_alloc(b, bytes, what, &n->workspace);
}

/* For n_sets sets of M sources and K targets: per source and target of every set, the rescaled
 * points and the phases; per strength and output value (ntransf * M, ntransf * K), the
 * pre-phased strengths and the inner outputs. */
static warpfft_status ensure_buffers(wf_nufft3 *n, int64_t n_sets, int64_t M, int64_t K) {
    const wf_t3_params *q = &n->q;
    size_t rb = q->inner_precision == WARPFFT_F64 ? 8 : 4, cb = 2 * rb;
    size_t m = (size_t)(n_sets * M), k = (size_t)(n_sets * K), nt = (size_t)q->ntransf;
    size_t mt = (size_t)M * nt, kt = (size_t)K * nt;
    static const char *const xw[3] = {"rescaled x", "rescaled y", "rescaled z"};
    static const char *const sw[3] = {"rescaled s", "rescaled t", "rescaled u"};
    warpfft_status st = WARPFFT_SUCCESS;
    for (int d = 0; d < q->dim && st == WARPFFT_SUCCESS; d++) {
        st = ensure(n, &n->xp[d], m * rb, xw[d]);
        if (st == WARPFFT_SUCCESS)
            st = ensure(n, &n->sp[d], k * rb, sw[d]);
    }
    if (st == WARPFFT_SUCCESS && q->pre_phase)
        st = ensure(n, &n->pre, m * cb, "type 3 pre-phase");
    if (st == WARPFFT_SUCCESS)
        st = ensure(n, &n->post, k * cb, "type 3 post-factors");
    if (st == WARPFFT_SUCCESS && (q->pre_phase || q->inner_precision != n->p.precision))
        st = ensure(n, &n->cbuf, mt * cb, "type 3 pre-phased strengths");
    if (st == WARPFFT_SUCCESS && q->inner_precision != n->p.precision)
        st = ensure(n, &n->obuf, kt * cb, "type 3 inner outputs");
    return st;
}

/* ---------------------------------------------------------------- create / release */

static warpfft_status load_t3_kernel(wf_nufft3 *n, const char *name, wf_kernel *k) {
    char mod[32];
    snprintf(mod, sizeof mod, "type3_%s", wf_prec_name(n->p.precision));
    return wf_kernel_load(&n->ex, mod, name, k);
}

static warpfft_status load_t3_kernels(wf_nufft3 *n) {
    const char *ps = wf_prec_name(n->p.precision);
    char name[64];
    snprintf(name, sizeof name, "wf_t3_minmax_%s", ps);
    warpfft_status st = load_t3_kernel(n, name, &n->k_minmax);
    for (int i = n->p.precision == WARPFFT_F64 ? 1 : 0; i < 2 && st == WARPFFT_SUCCESS; i++) {
        const char *qs = i ? "f64" : "f32";
        snprintf(name, sizeof name, "wf_t3_sources_%s_%s", ps, qs);
        st = load_t3_kernel(n, name, &n->k_sources[i]);
        snprintf(name, sizeof name, "wf_t3_targets_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(n, name, &n->k_targets[i]);
        snprintf(name, sizeof name, "wf_t3_prephase_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(n, name, &n->k_pre[i]);
        snprintf(name, sizeof name, "wf_t3_post_%s_%s", ps, qs);
        if (st == WARPFFT_SUCCESS)
            st = load_t3_kernel(n, name, &n->k_post[i]);
    }
    return st;
}

cufftResult wf_nufft3_release(wf_nufft3 *n, int work) {
    cufftResult r = release_grids(n, work);
    wf_dbuf *bufs[] = {&n->keys,  &n->geom,  &n->xp[0], &n->xp[1], &n->xp[2], &n->sp[0],
                       &n->sp[1], &n->sp[2], &n->pre,   &n->post,  &n->cbuf,  &n->obuf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_dbuf_free(bufs[i], &n->workspace);
    n->has_points = 0;
    return r;
}

/* The transform's own parameters: what plan_get_info reports before setpts. */
static void set_basics(wf_nufft3 *n, int dim, int64_t ntransf, double tol, int precision) {
    wf_params *p = &n->p;
    memset(p, 0, sizeof *p);
    p->type = 3;
    p->dim = dim;
    p->precision = precision;
    p->modeord = n->opts.modeord;
    p->deterministic = n->opts.deterministic;
    p->tol = tol;
    p->upsampfac = wf_t3_sigma(&n->opts);
    p->ntransf = ntransf;
    for (int d = 0; d < 3; d++)
        p->n_modes[d] = p->n_fine[d] = 1;
    p->mode_prod = p->fine_prod = 1;
    p->real_bytes = precision == WARPFFT_F64 ? 8 : 4;
    p->complex_bytes = 2 * p->real_bytes;
}

/* Device, driver and cuFFT; in the device's context, the kernels and the small buffers. */
static warpfft_status init_on_device(wf_nufft3 *n) {
    warpfft_status st = wf_exec_attach(&n->ex, &n->opts);
    if (st == WARPFFT_SUCCESS && !n->opts.spreadinterponly)
        st = wf_cufft_get(&n->cufft);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(n->ex.dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = load_t3_kernels(n);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&n->keys, (WF_T3_KEYS + 1) * sizeof(uint64_t), "type 3 bounds",
                           &n->workspace);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&n->geom, WF_T3_G_COUNT * sizeof(double), "type 3 geometry",
                           &n->workspace);
    if (st != WARPFFT_SUCCESS)
        wf_nufft3_release(n, WF_WORK_PENDING);
    wf_ctx_leave(n->ex.dev);
    return st;
}

warpfft_status wf_nufft3_create(int dim, int iflag, int64_t ntransf, double tol, int precision,
                                const warpfft_opts *opts, wf_nufft3 **out) {
    *out = NULL;
    warpfft_opts o;
    warpfft_status st = wf_t3_check(dim, ntransf, &tol, precision, opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    wf_nufft3 *n = calloc(1, sizeof *n);
    if (!n)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of a type-3 plan");
    n->opts = o;
    n->iflag = iflag;
    n->M = n->K = -1;
    n->n_sets = 1;
    set_basics(n, dim, ntransf, tol, precision);
    st = init_on_device(n);
    if (st != WARPFFT_SUCCESS) {
        free(n);
        return st;
    }
    *out = n;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- setpts */

static double key_to_double(uint64_t k) {
    uint64_t b = (k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static warpfft_status launch_minmax(wf_nufft3 *n, int64_t count, const CUdeviceptr xyz[3],
                                    CUdeviceptr keys) {
    long long nn = count;
    int dim = n->p.dim;
    CUdeviceptr x = xyz[0], y = xyz[1], z = xyz[2];
    CUdeviceptr bad = n->keys.ptr + WF_T3_KEYS * sizeof(uint64_t);
    void *args[] = {&nn, &dim, &x, &y, &z, &keys, &bad};
    return wf_exec_launch(&n->ex, &n->k_minmax, count, args);
}

/* Bounds of the M sources and K targets (every set's: the counts are all of them), one sync;
 * BAD_POINTS for a NaN/inf coordinate, naming `who`. */
static warpfft_status bounds(wf_nufft3 *n, int64_t M, const CUdeviceptr xyz[3], int64_t K,
                             const CUdeviceptr stu[3], double lo[2][3], double hi[2][3],
                             const char *who) {
    const wf_driver *drv = n->ex.drv;
    CUstream stream = n->ex.stream;
    size_t half = 3 * sizeof(uint64_t);
    CUdeviceptr k = n->keys.ptr;
    /* min keys to all ones, max keys and the flag to zero */
    WF_CU(drv->cuMemsetD8Async(k, 0, n->keys.bytes, stream), "cuMemsetD8Async (bounds)");
    WF_CU(drv->cuMemsetD8Async(k, 0xff, half, stream), "cuMemsetD8Async (bounds)");
    WF_CU(drv->cuMemsetD8Async(k + 2 * half, 0xff, half, stream), "cuMemsetD8Async (bounds)");
    warpfft_status st = launch_minmax(n, M, xyz, k);
    if (st == WARPFFT_SUCCESS)
        st = launch_minmax(n, K, stu, k + 2 * half);
    if (st != WARPFFT_SUCCESS)
        return st;
    WF_CU(drv->cuMemcpyDtoHAsync(n->keys_host, k, n->keys.bytes, stream),
          "cuMemcpyDtoHAsync of the type 3 bounds");
    WF_CU(drv->cuStreamSynchronize(stream), "cuStreamSynchronize after the type 3 bounds");
    int32_t bad;
    memcpy(&bad, &n->keys_host[WF_T3_KEYS], sizeof bad);
    if (bad)
        return wf_error(WARPFFT_ERR_BAD_POINTS,
                        "%s: a source (x, y, z) or target (s, t, u) coordinate is NaN or infinite "
                        "(%lld sources, %lld targets)",
                        who, (long long)M, (long long)K);
    for (int set = 0; set < 2; set++)
        for (int d = 0; d < n->p.dim; d++) {
            lo[set][d] = key_to_double(n->keys_host[6 * set + d]);
            hi[set][d] = key_to_double(n->keys_host[6 * set + 3 + d]);
        }
    return WARPFFT_SUCCESS;
}

static warpfft_status launch_rescale(wf_nufft3 *n, int64_t M, const CUdeviceptr xyz[3], int64_t K,
                                     const CUdeviceptr stu[3]) {
    const wf_t3_params *q = &n->q;
    int i = iq(q->inner_precision), dim = q->dim, iflag = n->iflag, nq = n->nq;
    int pre = q->pre_phase, post = q->post_phase;
    long long m = M, k = K;
    CUdeviceptr x = xyz[0], y = xyz[1], z = xyz[2], s = stu[0], t = stu[1], u = stu[2];
    CUdeviceptr geom = n->geom.ptr, prep = n->pre.ptr, postp = n->post.ptr;
    CUdeviceptr xp = n->xp[0].ptr, yp = n->xp[1].ptr, zp = n->xp[2].ptr;
    CUdeviceptr sp = n->sp[0].ptr, tp = n->sp[1].ptr, up = n->sp[2].ptr;
    WF_CU(n->ex.drv->cuMemcpyHtoDAsync(geom, n->geom_host, sizeof n->geom_host, n->ex.stream),
          "cuMemcpyHtoDAsync of the type 3 geometry");
    void *sa[] = {&m, &dim, &x, &y, &z, &geom, &iflag, &pre, &xp, &yp, &zp, &prep};
    warpfft_status st = wf_exec_launch(&n->ex, &n->k_sources[i], M, sa);
    void *ta[] = {&k, &dim, &s, &t, &u, &geom, &nq, &iflag, &post, &sp, &tp, &up, &postp};
    if (st == WARPFFT_SUCCESS)
        st = wf_exec_launch(&n->ex, &n->k_targets[i], K, ta);
    return st;
}

/* Both binnings (every set's), unchecked and trusted: bounds() has seen every coordinate
 * finite, so neither needs a sync nor its executes a NaN pass. Then one wait for the stream:
 * the rescaling kernels read the caller's arrays, which warpfft.h lets the caller free once
 * setpts3 returns. */
static warpfft_status sub_setpts(wf_nufft3 *n, int64_t n_sets, int64_t M, int64_t K,
                                 const char *who) {
    warpfft_status st =
        wf_spreader_setpts(&n->spread, n_sets, M, n->xp[0].ptr, n->xp[1].ptr, n->xp[2].ptr, who);
    if (st == WARPFFT_SUCCESS)
        st = wf_nufft12_setpts(n->inner, n_sets, K, n->sp[0].ptr, n->sp[1].ptr, n->sp[2].ptr, who);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "%s (binning of the rescaled points): %s", who, wf_last_error());
    WF_CU(n->ex.drv->cuStreamSynchronize(n->ex.stream), "cuStreamSynchronize after setpts3");
    return WARPFFT_SUCCESS;
}

static warpfft_status setpts_run(wf_nufft3 *n, int64_t n_sets, int64_t M, const CUdeviceptr xyz[3],
                                 int64_t K, const CUdeviceptr stu[3], const char *who) {
    n->M = M;
    n->K = K;
    n->n_sets = n_sets;
    if (M == 0 || K == 0)
        return WARPFFT_SUCCESS; /* execute writes zeros (M = 0) or nothing (K = 0) */
    double lo[2][3] = {{0}}, hi[2][3] = {{0}};
    warpfft_status st = bounds(n, n_sets * M, xyz, n_sets * K, stu, lo, hi, who);
    wf_t3_params q;
    if (st == WARPFFT_SUCCESS)
        st = wf_t3_params_make(n->p.dim, n->p.ntransf, n->p.tol, n->p.precision, &n->opts, lo[0],
                               hi[0], lo[1], hi[1], &q);
    if (st == WARPFFT_SUCCESS)
        st = check_memory(n, &q);
    if (st == WARPFFT_SUCCESS)
        st = ensure_grids(n, &q);
    if (st != WARPFFT_SUCCESS)
        return st;
    n->q = q;
    n->nq = wf_t3_geometry(&q, n->geom_host);
    /* the grids' bins times the sets must stay addressable (known only now) */
    st = wf_spreader_sets_ok(&n->spread.p, n_sets, who);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_sets_ok(&n->inner->sp.p, n_sets, who);
    if (st == WARPFFT_SUCCESS)
        st = ensure_buffers(n, n_sets, M, K);
    if (st == WARPFFT_SUCCESS)
        st = launch_rescale(n, n_sets * M, xyz, n_sets * K, stu);
    if (st == WARPFFT_SUCCESS)
        st = sub_setpts(n, n_sets, M, K, who);
    return st;
}

warpfft_status wf_nufft3_setpts(wf_nufft3 *n, int64_t n_sets, int64_t M, const CUdeviceptr xyz[3],
                                int64_t K, const CUdeviceptr stu[3], const char *who) {
    n->has_points = 0; /* from here on the old point sets are being replaced */
    warpfft_status st = setpts_run(n, n_sets, M, xyz, K, stu, who);
    n->has_points = st == WARPFFT_SUCCESS;
    return st;
}

/* ---------------------------------------------------------------- execute */

warpfft_status wf_nufft3_execute(wf_nufft3 *n, CUdeviceptr c, CUdeviceptr fk) {
    const wf_t3_params *q = &n->q;
    int64_t M = n->M, K = n->K;
    long long nt = n->p.ntransf, m = M, k = K, n_sets = n->n_sets;
    if (K == 0)
        return WARPFFT_SUCCESS;
    if (M == 0)
        return wf_exec_memset(&n->ex, fk, (size_t)K * (size_t)nt * n->p.complex_bytes,
                              "fk (no sources)");
    int i = iq(q->inner_precision), same = q->inner_precision == n->p.precision;
    warpfft_status st = WARPFFT_SUCCESS;
    CUdeviceptr cin = c;
    if (q->pre_phase || !same) {
        CUdeviceptr pre = q->pre_phase ? n->pre.ptr : 0, out = n->cbuf.ptr;
        void *args[] = {&m, &nt, &c, &pre, &out, &n_sets};
        st = wf_exec_launch(&n->ex, &n->k_pre[i], n_sets * M, args);
        cin = out;
    }
    CUdeviceptr grid = n->spread.grid.ptr;
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_spread(&n->spread, cin, grid, "the spreading grid");
    CUdeviceptr out = same ? fk : n->obuf.ptr, fac = n->post.ptr;
    if (st == WARPFFT_SUCCESS) {
        st = wf_nufft12_execute(n->inner, out, grid);
        if (st != WARPFFT_SUCCESS)
            st = wf_error(st, "warpfft_execute (type 3, inner type-2 step): %s", wf_last_error());
    }
    void *args[] = {&k, &nt, &out, &fac, &fk, &n_sets};
    if (st == WARPFFT_SUCCESS)
        st = wf_exec_launch(&n->ex, &n->k_post[i], n_sets * K, args);
    return st;
}

/* ---------------------------------------------------------------- info */

size_t wf_nufft3_workspace(const wf_nufft3 *n) {
    return n->workspace + n->spread.workspace + (n->inner ? wf_nufft12_workspace(n->inner) : 0);
}

void wf_nufft3_info(const wf_nufft3 *n, warpfft_plan_info *info) {
    wf_params_to_info(&n->p, info);
    info->n_points = n->has_points ? n->M : -1;
    info->n_targets = n->has_points ? n->K : -1;
    info->n_sets = n->has_points ? n->n_sets : -1;
    info->workspace_bytes = wf_nufft3_workspace(n);
    if (n->has_grid && n->inner)
        wf_t3_to_info(&n->q, &n->spread.p, &n->inner->p, info);
}
