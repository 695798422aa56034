/*
 * plan.c — plan creation and destruction: validation (params.c), device and cuFFT, the kernels
 * the plan uses (plan_kernels.c), the fine grid, deconvolution factors, the cuFFT plan and the
 * per-bin arrays.
 * Every failure takes one cleanup path (plan_release), so a half-built plan leaks nothing.
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "type3.h"

_Static_assert(sizeof(wf_setpts_result) == 24, "params.c counts 24 bytes for the result block");

/* ---------------------------------------------------------------- shared helpers */

warpfft_status wf_plan_alloc(struct warpfft_plan_s *plan, wf_dbuf *b, size_t bytes,
                             const char *what) {
    warpfft_status st = wf_alloc(&b->ptr, bytes, what);
    if (st != WARPFFT_SUCCESS)
        return st;
    b->bytes = bytes;
    plan->workspace += bytes;
    return WARPFFT_SUCCESS;
}

void wf_plan_free(struct warpfft_plan_s *plan, wf_dbuf *b) {
    if (b->ptr)
        wf_free(&b->ptr);
    plan->workspace -= b->bytes;
    b->bytes = 0;
}

warpfft_status wf_plan_launch(const struct warpfft_plan_s *plan, const wf_kernel *k, int64_t n,
                              void **args) {
    if (n <= 0)
        return WARPFFT_SUCCESS;
    int64_t blocks = n / WF_BLOCK + (n % WF_BLOCK != 0);
    int64_t cap = (int64_t)(plan->dev->n_sm > 0 ? plan->dev->n_sm : 1) * WF_BLOCKS_PER_SM;
    if (cap > (int64_t)WF_GRID_MAX)
        cap = WF_GRID_MAX;
    if (blocks > cap)
        blocks = cap;
    return wf_launch(k->fn, k->name, (unsigned)blocks, 1, WF_BLOCK, 0, plan->stream, args);
}

warpfft_status wf_plan_memset(const struct warpfft_plan_s *plan, CUdeviceptr p, size_t bytes,
                              const char *what) {
    if (bytes == 0)
        return WARPFFT_SUCCESS;
    CUresult r = plan->drv->cuMemsetD8Async(p, 0, bytes, plan->stream);
    if (r != WF_CUDA_SUCCESS) {
        char msg[160];
        snprintf(msg, sizeof msg, "cuMemsetD8Async of %zu bytes (%s)", bytes, what);
        return wf_cuda_error(r, msg);
    }
    return WARPFFT_SUCCESS;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---------------------------------------------------------------- the cache (cache.c) */

/* The cuFFT plan, work area and fine grid of this plan's shape. */
static wf_cache_item fft_item(const struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    wf_cache_item it;
    memset(&it, 0, sizeof it);
    it.kind = WF_CACHE_FFT;
    it.dev = plan->dev;
    int64_t key[6] = {p->dim, p->n_fine[0], p->n_fine[1], p->n_fine[2], p->ntransf, p->precision};
    memcpy(it.key, key, sizeof key);
    return it;
}

/* The deconvolution factors of dimension d. */
static wf_cache_item factors_item(const struct warpfft_plan_s *plan, int d) {
    const wf_params *p = &plan->p;
    wf_cache_item it;
    memset(&it, 0, sizeof it);
    it.kind = WF_CACHE_FACTORS;
    it.dev = plan->dev;
    int64_t beta_bits = 0;
    memcpy(&beta_bits, &p->beta, sizeof beta_bits);
    int64_t key[6] = {p->precision, p->n_modes[d], p->n_fine[d], p->width, beta_bits, 0};
    memcpy(it.key, key, sizeof key);
    return it;
}

/* Moves a cached buffer into b / b's buffer out, keeping plan->workspace current. */
static void adopt(struct warpfft_plan_s *plan, wf_dbuf *b, CUdeviceptr ptr, size_t bytes) {
    b->ptr = ptr;
    b->bytes = bytes;
    plan->workspace += bytes;
}

static void disown(struct warpfft_plan_s *plan, wf_dbuf *b, CUdeviceptr *ptr, size_t *bytes) {
    *ptr = b->ptr;
    *bytes = b->bytes;
    plan->workspace -= b->bytes;
    b->ptr = 0;
    b->bytes = 0;
}

/* A cached cuFFT plan of this shape, with its work area and a fine grid; 1 on a hit. */
static int take_fft(struct warpfft_plan_s *plan) {
    wf_cache_item it = fft_item(plan);
    if (!wf_cache_take(&it))
        return 0;
    plan->fft = it.fft;
    plan->fft_created = 1;
    plan->fft_made = 1;
    adopt(plan, &plan->fft_work, it.buf[0], it.bytes[0]);
    adopt(plan, &plan->fw, it.buf[1], it.bytes[1]);
    return 1;
}

/* At destroy: the cuFFT plan, its work area, the fine grid and the factors go to the cache,
 * which hands them to the next plan of this shape. cuMemFree waited for the work that used
 * them; so must this (the next owner may use another stream). If the wait fails, or the cache
 * would not keep them (off, or too big), plan_release frees them as before. */
static void give_to_cache(struct warpfft_plan_s *plan) {
    if (!plan->fft_made || !wf_cache_accepts(plan->fft_work.bytes + plan->fw.bytes) ||
        plan->drv->cuStreamSynchronize(plan->stream) != WF_CUDA_SUCCESS)
        return;
    wf_cache_item it = fft_item(plan);
    it.cufft = plan->cufft;
    it.fft = plan->fft;
    disown(plan, &plan->fft_work, &it.buf[0], &it.bytes[0]);
    disown(plan, &plan->fw, &it.buf[1], &it.bytes[1]);
    plan->fft_created = plan->fft_made = 0;
    wf_cache_put(&it);
    for (int d = 0; d < plan->p.dim; d++) {
        if (!plan->fac[d].ptr || !wf_cache_accepts(plan->fac[d].bytes))
            continue;
        it = factors_item(plan, d);
        disown(plan, &plan->fac[d], &it.buf[0], &it.bytes[0]);
        wf_cache_put(&it);
    }
}

/* ---------------------------------------------------------------- buffers */

/* Converts fac (double) to the plan's precision and uploads it into b. */
static warpfft_status upload_fac(struct warpfft_plan_s *plan, wf_dbuf *b, const double *fac,
                                 int64_t count) {
    const wf_params *p = &plan->p;
    size_t bytes = (size_t)count * p->real_bytes;
    float *f32 = NULL;
    const void *src = fac;
    if (p->precision == WARPFFT_F32) {
        if (!(f32 = malloc(bytes)))
            return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of %zu bytes", bytes);
        for (int64_t k = 0; k < count; k++)
            f32[k] = (float)fac[k];
        src = f32;
    }
    warpfft_status st = wf_plan_alloc(plan, b, bytes, "deconvolution factors");
    if (st == WARPFFT_SUCCESS) {
        /* On the plan's stream, which execute's kernels read them on: a synchronous copy from
         * pageable memory may still be landing (on the legacy stream) when a non-blocking
         * stream starts. Pageable source: staged before the call returns, so freed below. */
        CUresult r = plan->drv->cuMemcpyHtoDAsync(b->ptr, src, bytes, plan->stream);
        if (r != WF_CUDA_SUCCESS)
            st = wf_cuda_error(r, "cuMemcpyHtoDAsync of the deconvolution factors");
    }
    free(f32);
    return st;
}

/* fac_d[k] = 1/phihat_d(k), k = 0..N_d/2, for each used dim: from the cache, else computed
 * (once per distinct (N_d, nf_d): ~20 ms for N_d = 1e6) and uploaded. */
static warpfft_status make_factors(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    int64_t kmax = 0;
    for (int d = 0; d < p->dim; d++)
        kmax = p->n_modes[d] / 2 > kmax ? p->n_modes[d] / 2 : kmax;
    double *fac = NULL;
    int have = -1; /* the dimension whose factors fac holds */
    warpfft_status st = WARPFFT_SUCCESS;
    for (int d = 0; d < p->dim && st == WARPFFT_SUCCESS; d++) {
        wf_cache_item it = factors_item(plan, d);
        if (wf_cache_take(&it)) {
            adopt(plan, &plan->fac[d], it.buf[0], it.bytes[0]);
            continue;
        }
        if (!fac && !(fac = malloc((size_t)(kmax + 1) * sizeof *fac)))
            return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of %zu bytes",
                            (size_t)(kmax + 1) * sizeof *fac);
        if (have < 0 || p->n_modes[d] != p->n_modes[have] || p->n_fine[d] != p->n_fine[have])
            wf_deconv_factors(p->n_modes[d], p->n_fine[d], p->width, p->beta, fac);
        have = d;
        st = upload_fac(plan, &plan->fac[d], fac, p->n_modes[d] / 2 + 1);
    }
    free(fac);
    return st;
}

/* The fine grid, the per-bin arrays and the setpts result block. */
static warpfft_status alloc_fixed(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    size_t per_bin = (size_t)p->nbins * sizeof(uint64_t);
    size_t fw = (size_t)p->fine_prod * (size_t)p->ntransf * p->complex_bytes;
    warpfft_status st = WARPFFT_SUCCESS;
    /* spread/interp only: the grid is the caller's fk; a cached cuFFT plan brought one */
    if (!p->spreadinterponly && !plan->fw.ptr)
        st = wf_plan_alloc(plan, &plan->fw, fw, "the fine grid");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(plan, &plan->bin_count, per_bin, "bin counts");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(plan, &plan->bin_start, per_bin, "bin starts");
    if (st == WARPFFT_SUCCESS && p->method == WARPFFT_METHOD_SM)
        st = wf_plan_alloc(plan, &plan->nsub_start, per_bin, "subproblem starts");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(plan, &plan->result, sizeof(wf_setpts_result), "setpts results");
    size_t tiles = (size_t)wf_params_scan_tiles(p);
    if (st == WARPFFT_SUCCESS && tiles > 0)
        st = wf_plan_alloc(plan, &plan->tile_sums, tiles * 2 * sizeof(uint64_t), "scan tile sums");
    return st;
}

/* ---------------------------------------------------------------- cuFFT */

static warpfft_status fft_plan_many(struct warpfft_plan_s *plan, size_t *work) {
    const wf_params *p = &plan->p;
    long long n[3] = {1, 1, 1}; /* slowest dimension first */
    for (int d = 0; d < p->dim; d++)
        n[d] = (long long)p->n_fine[p->dim - 1 - d];
    int type = p->precision == WARPFFT_F64 ? WF_CUFFT_Z2Z : WF_CUFFT_C2C;
    long long dist = (long long)p->fine_prod;
    cufftResult r = plan->cufft->cufftMakePlanMany64(plan->fft, p->dim, n, NULL, 1, dist, NULL, 1,
                                                     dist, type, (long long)p->ntransf, work);
    if (r != 0) {
        char what[192];
        snprintf(what, sizeof what, "cufftMakePlanMany64 (%s, n = {%lld, %lld, %lld}, batch %lld)",
                 type == WF_CUFFT_Z2Z ? "Z2Z" : "C2C", n[0], n[1], n[2], (long long)p->ntransf);
        return wf_cufft_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

/* cufftCreate + cufftMakePlanMany64 (the cuFFT plan without its work area). */
static warpfft_status new_fft(struct warpfft_plan_s *plan, size_t *work) {
    const wf_cufft *cf = plan->cufft;
    cufftResult r = cf->cufftCreate(&plan->fft);
    if (r != 0)
        return wf_cufft_error(r, "cufftCreate");
    plan->fft_created = 1;
    if ((r = cf->cufftSetAutoAllocation(plan->fft, 0)) != 0)
        return wf_cufft_error(r, "cufftSetAutoAllocation");
    return fft_plan_many(plan, work);
}

/* In-place batched C2C/Z2Z over the fine grid, with a work area the plan owns, on its stream:
 * taken from the cache (take_fft) or made here. cuFFT's own device memory counts too: when
 * cuFFT runs out of it, the cache is emptied and the plan made again. */
static warpfft_status make_fft(struct warpfft_plan_s *plan) {
    const wf_cufft *cf = plan->cufft;
    cufftResult r = 0;
    if (!plan->fft_made) {
        size_t work = 0;
        warpfft_status st = new_fft(plan, &work);
        /* CUFFT_ALLOC_FAILED (cuFFT's own device memory): free the cache, make it again */
        if (st == WARPFFT_ERR_OUT_OF_MEMORY && plan->fft_created && wf_cache_release() > 0) {
            cf->cufftDestroy(plan->fft); /* a failed plan: nothing depends on the result */
            plan->fft_created = 0;
            wf_cache_note_oom_retry();
            st = new_fft(plan, &work);
        }
        if (st == WARPFFT_SUCCESS)
            st = wf_plan_alloc(plan, &plan->fft_work, work, "the cuFFT work area");
        if (st != WARPFFT_SUCCESS)
            return st;
        if ((r = cf->cufftSetWorkArea(plan->fft, (void *)(uintptr_t)plan->fft_work.ptr)) != 0)
            return wf_cufft_error(r, "cufftSetWorkArea");
        plan->fft_made = 1;
    }
    if ((r = cf->cufftSetStream(plan->fft, plan->stream)) != 0) /* a cached one: new stream */
        return wf_cufft_error(r, "cufftSetStream");
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- build and release */

/* Everything on the GPU; the device's context is current. Times each stage into *t. */
static warpfft_status plan_build(struct warpfft_plan_s *plan, wf_create_times *t) {
    double t0 = now_ms();
    /* the modules a jit or nvrtc build must compile load on their own threads meanwhile */
    wf_preload *loading = NULL;
    warpfft_status st0 = wf_plan_start_modules(plan, &loading);
    if (st0 != WARPFFT_SUCCESS) {
        t->modules_ms = now_ms() - t0;
        return st0;
    }
    double t_pre = now_ms(); /* loads done here unless they run beside what follows */
    warpfft_status st = WARPFFT_SUCCESS;
    if (!plan->p.spreadinterponly) {
        take_fft(plan);
        st = make_fft(plan);
    }
    double t1 = now_ms();
    t->cufft_ms = t1 - t_pre;
    if (st == WARPFFT_SUCCESS)
        st = alloc_fixed(plan);
    double t2 = now_ms();
    t->alloc_ms = t2 - t1;
    if (st == WARPFFT_SUCCESS && !plan->p.spreadinterponly)
        st = make_factors(plan);
    double t3 = now_ms();
    t->factors_ms = t3 - t2;
    /* always joined, also after a failure above; a module failure is reported first, as it was
     * when the modules loaded before everything else */
    warpfft_status st_mod = wf_plan_finish_modules(plan, loading);
    t->modules_ms = (t_pre - t0) + (now_ms() - t3);
    return st_mod != WARPFFT_SUCCESS ? st_mod : st;
}

/* Frees whatever exists (any stage of a partial build); the device's context is current.
 * Returns cufftDestroy's result (0 on success or when there was no cuFFT plan). */
static cufftResult plan_release(struct warpfft_plan_s *plan) {
    cufftResult r = 0;
    if (plan->fft_created)
        r = plan->cufft->cufftDestroy(plan->fft);
    plan->fft_created = plan->fft_made = 0;
    wf_dbuf *bufs[] = {&plan->fw,          &plan->fac[0],    &plan->fac[1],    &plan->fac[2],
                       &plan->fft_work,    &plan->bin_count, &plan->bin_start, &plan->nsub_start,
                       &plan->result,      &plan->sort_idx,  &plan->bin_of,    &plan->pos_in_bin,
                       &plan->subprob_bin, &plan->xs[0],     &plan->xs[1],     &plan->xs[2],
                       &plan->rec,         &plan->tile_sums};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_plan_free(plan, bufs[i]);
    plan->point_cap = 0;
    plan->has_points = 0;
    return r;
}

/* Device, driver table and cuFFT for a plan (no GPU work yet). */
static warpfft_status plan_attach(struct warpfft_plan_s *plan, const warpfft_opts *o) {
    warpfft_status st = wf_device_get(o->device, &plan->dev);
    if (st == WARPFFT_SUCCESS)
        st = wf_driver_get(&plan->drv);
    if (st == WARPFFT_SUCCESS && !o->spreadinterponly) /* spread/interp only needs no cuFFT */
        st = wf_cufft_get(&plan->cufft);
    plan->stream = (CUstream)(uintptr_t)o->stream;
    return st;
}

/* Chooses parameters for this device and builds the plan; frees everything on failure. */
static warpfft_status plan_init(struct warpfft_plan_s *plan, int type, int dim,
                                const int64_t n_modes[3], int64_t ntransf, double tol,
                                int precision, const warpfft_opts *o, wf_create_times *t) {
    warpfft_status st = plan_attach(plan, o);
    if (st != WARPFFT_SUCCESS)
        return st;
    size_t limit = plan->dev->max_shared_optin > 0 ? (size_t)plan->dev->max_shared_optin : 0;
    st = wf_params_make(type, dim, n_modes, ntransf, tol, precision, o, limit, &plan->p);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = plan_build(plan, t);
    if (st != WARPFFT_SUCCESS)
        plan_release(plan);
    wf_ctx_leave(plan->dev);
    return st;
}

/* ---------------------------------------------------------------- public */

WARPFFT_API warpfft_status warpfft_plan_create(int type, int dim, const int64_t n_modes[3],
                                               int iflag, int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan *plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "plan (the output pointer) is NULL");
    *plan = NULL;
    if (type == 3) /* type3.c; n_modes ignored */
        return wf_t3_plan_create(dim, iflag, ntransf, tol, (int)precision, opts, plan);
    wf_params check; /* argument errors first, without touching the GPU */
    warpfft_opts o;
    warpfft_status st = wf_params_make(type, dim, n_modes, ntransf, tol, (int)precision, opts,
                                       WF_SHARED_OPTIN_SM90, &check);
    if (st == WARPFFT_SUCCESS)
        st = wf_opts_resolve(opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    double t0 = now_ms();
    struct warpfft_plan_s *pl = calloc(1, sizeof *pl);
    if (!pl)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of the plan (%zu bytes)",
                        sizeof *pl);
    pl->iflag = iflag;
    pl->fft_dir = iflag >= 0 ? WF_CUFFT_INVERSE : WF_CUFFT_FORWARD;
    pl->M = -1;
    wf_create_times t = {0, 0, 0, 0, 0};
    st = plan_init(pl, type, dim, n_modes, ntransf, tol, (int)precision, &o, &t);
    if (st != WARPFFT_SUCCESS) {
        free(pl);
        return st;
    }
    t.total_ms = now_ms() - t0;
    wf_cache_note_create(&t);
    *plan = pl;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_destroy(warpfft_plan plan) {
    wf_clear_error();
    if (!plan)
        return WARPFFT_SUCCESS;
    /* On failure the handle stays valid (holding whatever could not be released), so the
     * caller can destroy it again instead of losing the device buffers with it. */
    warpfft_status st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st,
                        "warpfft_plan_destroy: %s; nothing was freed and the plan is still "
                        "valid (call warpfft_plan_destroy again)",
                        warpfft_last_error());
    if (plan->t3)
        wf_t3_release(plan);
    give_to_cache(plan);
    cufftResult r = plan_release(plan);
    wf_ctx_leave(plan->dev);
    if (r != 0) {
        wf_cufft_error(r, "cufftDestroy");
        return wf_error(WARPFFT_ERR_CUFFT,
                        "warpfft_plan_destroy: %s; the device buffers were freed and the plan is "
                        "still valid (call warpfft_plan_destroy again)",
                        warpfft_last_error());
    }
    free(plan);
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_get_info(warpfft_plan plan, warpfft_plan_info *info) {
    wf_clear_error();
    if (!plan || !info)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_get_info: %s is NULL",
                        !plan ? "plan" : "info");
    wf_params_to_info(&plan->p, info);
    info->n_points = plan->has_points ? plan->M : -1;
    info->workspace_bytes = plan->workspace;
    if (plan->t3) {
        wf_t3_info(plan, info);
        info->workspace_bytes += wf_t3_sub_workspace(plan);
    }
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes) {
    wf_clear_error();
    if (!plan || !bytes)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_plan_workspace_bytes: %s is NULL",
                        !plan ? "plan" : "bytes");
    *bytes = plan->workspace + (plan->t3 ? wf_t3_sub_workspace(plan) : 0);
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- type 3 hooks (plan.h) */

warpfft_status wf_plan_attach(struct warpfft_plan_s *plan, const warpfft_opts *o) {
    return plan_attach(plan, o);
}

warpfft_status wf_plan_build_spreader(struct warpfft_plan_s *plan) {
    /* no cuFFT plan (nothing from the cache) */
    warpfft_status st = wf_plan_finish_modules(plan, NULL);
    if (st == WARPFFT_SUCCESS)
        st = alloc_fixed(plan);
    if (st != WARPFFT_SUCCESS)
        plan_release(plan);
    return st;
}

void wf_plan_release_spreader(struct warpfft_plan_s *plan) {
    (void)plan_release(plan); /* no cuFFT plan: nothing can fail */
}
