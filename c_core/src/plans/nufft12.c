/*
 * nufft12.c — creating and releasing type 1 and type 2 transforms (nufft12.h): parameters for
 * the device (params.c), the modules they launch (loaded on threads meanwhile when they must be
 * compiled), the cuFFT plan, fine grid and deconvolution factors (taken from the plan cache when
 * a plan of the shape was destroyed before, given back to it at release), and the spreader's
 * per-bin arrays. Every failure takes one cleanup path (wf_nufft12_release), so a half-built
 * transform leaks nothing.
 */
#include "plans/nufft12.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "params/kernel.h"
#include "params/params.h"
#include "runtime/error.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---------------------------------------------------------------- the cache (cache.c) */

/* The cuFFT transform type of n: C2C/Z2Z (types 1 and 2 share it: execute gives the direction),
 * or with real data R2C/D2Z (type 1) and C2R/Z2D (type 2). */
static int fft_type(const wf_nufft12 *n) {
    int f64 = n->p.precision == WARPFFT_F64;
    if (!n->p.real_data)
        return f64 ? WF_CUFFT_Z2Z : WF_CUFFT_C2C;
    if (n->p.type == 1)
        return f64 ? WF_CUFFT_D2Z : WF_CUFFT_R2C;
    return f64 ? WF_CUFFT_Z2D : WF_CUFFT_C2R;
}

static const char *fft_type_name(int type) {
    switch (type) {
    case WF_CUFFT_R2C:
        return "R2C";
    case WF_CUFFT_C2R:
        return "C2R";
    case WF_CUFFT_D2Z:
        return "D2Z";
    case WF_CUFFT_Z2D:
        return "Z2D";
    case WF_CUFFT_Z2Z:
        return "Z2Z";
    default:
        return "C2C";
    }
}

/* The cuFFT plan, work area and fine grid of this plan's shape. The transform type is part of
 * the key (with the precision), so a complex plan never takes a real one's cuFFT plan or grid,
 * nor type 1 of real data type 2's. */
static wf_cache_item fft_item(const wf_nufft12 *n) {
    const wf_params *p = &n->p;
    return wf_cache_fft_item(n->ex.dev, p->dim, p->n_fine, p->ntransf, p->precision, fft_type(n));
}

/* The spreader's widths (1: p.width alone), and width i's factor buffers and its kernel. */
static int n_widths(const wf_nufft12 *n) {
    return n->sp.pw.n_w > 1 ? n->sp.pw.n_w : 1;
}
static wf_dbuf *fac_of(wf_nufft12 *n, int i) {
    return i < n_widths(n) - 1 ? n->fac_w[i] : n->fac;
}
static void kernel_of(const wf_nufft12 *n, int i, int *width, double *beta) {
    *width = n_widths(n) > 1 ? n->sp.pw.width[i] : n->p.width;
    *beta = n_widths(n) > 1 ? n->sp.pw.beta[i] : n->p.beta;
}

/* The deconvolution factors of dimension d for the spreader's width i. */
static wf_cache_item factors_item(const wf_nufft12 *n, int i, int d) {
    const wf_params *p = &n->p;
    wf_cache_item it;
    memset(&it, 0, sizeof it);
    it.kind = WF_CACHE_FACTORS;
    it.dev = n->ex.dev;
    int width = 0;
    double beta = 0.0;
    kernel_of(n, i, &width, &beta);
    int64_t beta_bits = 0;
    memcpy(&beta_bits, &beta, sizeof beta_bits);
    int64_t key[6] = {p->precision, p->n_modes[d], p->n_fine[d], width, beta_bits, 0};
    memcpy(it.key, key, sizeof key);
    return it;
}

/* Moves a cached buffer into b / b's buffer out, keeping n->workspace current. */
static void adopt(wf_nufft12 *n, wf_dbuf *b, CUdeviceptr ptr, size_t bytes) {
    b->ptr = ptr;
    b->bytes = bytes;
    n->workspace += bytes;
}

static void disown(wf_nufft12 *n, wf_dbuf *b, CUdeviceptr *ptr, size_t *bytes) {
    *ptr = b->ptr;
    *bytes = b->bytes;
    n->workspace -= b->bytes;
    b->ptr = 0;
    b->bytes = 0;
}

/* A cached cuFFT plan of this shape, with its work area and a fine grid; 1 on a hit. */
static int take_fft(wf_nufft12 *n) {
    wf_cache_item it = fft_item(n);
    if (!wf_cache_take(&it))
        return 0;
    n->fft = it.fft;
    n->fft_created = 1;
    n->fft_made = 1;
    adopt(n, &n->fft_work, it.buf[0], it.bytes[0]);
    adopt(n, &n->fw, it.buf[1], it.bytes[1]);
    return 1;
}

/* At destroy: the cuFFT plan, its work area, the fine grid and the factors go to the cache,
 * which hands them to the next plan of this shape. cuMemFree waited for the work that used
 * them; so must this (the next owner may use another stream): it waits for the stream unless
 * the work is known finished (WF_WORK_DONE: the live-plan pool waited for the plan's fence, and
 * the stream may be gone). If the wait fails or cannot be made (WF_WORK_LOST), or the cache
 * would not keep them (off, or too big), free_all frees them as before. */
static void give_to_cache(wf_nufft12 *n, int work) {
    if (work == WF_WORK_LOST || !n->fft_made ||
        !wf_cache_accepts(n->fft_work.bytes + n->fw.bytes) ||
        (work != WF_WORK_DONE && n->ex.drv->cuStreamSynchronize(n->ex.stream) != WF_CUDA_SUCCESS))
        return;
    wf_cache_item it = fft_item(n);
    it.cufft = n->cufft;
    it.fft = n->fft;
    disown(n, &n->fft_work, &it.buf[0], &it.bytes[0]);
    disown(n, &n->fw, &it.buf[1], &it.bytes[1]);
    n->fft_created = n->fft_made = 0;
    wf_cache_put(&it);
    for (int i = 0; i < n_widths(n); i++)
        for (int d = 0; d < n->p.dim; d++) {
            wf_dbuf *f = &fac_of(n, i)[d];
            if (!f->ptr || !wf_cache_accepts(f->bytes))
                continue;
            it = factors_item(n, i, d);
            disown(n, f, &it.buf[0], &it.bytes[0]);
            wf_cache_put(&it);
        }
}

/* ---------------------------------------------------------------- buffers */

/* Converts fac (double) to the plan's precision and uploads it into b. */
static warpfft_status upload_fac(wf_nufft12 *n, wf_dbuf *b, const double *fac, int64_t count) {
    const wf_params *p = &n->p;
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
    warpfft_status st = wf_dbuf_alloc(b, bytes, "deconvolution factors", &n->workspace);
    if (st == WARPFFT_SUCCESS) {
        /* On the plan's stream, which execute's kernels read them on: a synchronous copy from
         * pageable memory may still be landing (on the legacy stream) when a non-blocking
         * stream starts. Pageable source: staged before the call returns, so freed below. */
        CUresult r = n->ex.drv->cuMemcpyHtoDAsync(b->ptr, src, bytes, n->ex.stream);
        if (r != WF_CUDA_SUCCESS)
            st = wf_cuda_error(r, "cuMemcpyHtoDAsync of the deconvolution factors");
    }
    free(f32);
    return st;
}

/* fac_d[k] = 1/phihat_d(k), k = 0..N_d/2, for each used dim and each of the spreader's widths:
 * from the cache, else computed (once per distinct (N_d, nf_d) and width: ~20 ms for N_d = 1e6)
 * and uploaded. A spreader of several widths gets their pointers in its width tables, which the
 * deconvolution/amplification reads by the width the points took. */
static warpfft_status make_factors(wf_nufft12 *n) {
    const wf_params *p = &n->p;
    int64_t kmax = 0;
    for (int d = 0; d < p->dim; d++)
        kmax = p->n_modes[d] / 2 > kmax ? p->n_modes[d] / 2 : kmax;
    double *fac = NULL;
    warpfft_status st = WARPFFT_SUCCESS;
    for (int i = 0; i < n_widths(n) && st == WARPFFT_SUCCESS; i++) {
        int have = -1, width = 0; /* the dimension whose factors fac holds */
        double beta = 0.0;
        kernel_of(n, i, &width, &beta);
        for (int d = 0; d < p->dim && st == WARPFFT_SUCCESS; d++) {
            wf_cache_item it = factors_item(n, i, d);
            if (wf_cache_take(&it)) {
                adopt(n, &fac_of(n, i)[d], it.buf[0], it.bytes[0]);
                continue;
            }
            if (!fac && !(fac = malloc((size_t)(kmax + 1) * sizeof *fac)))
                return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of %zu bytes",
                                (size_t)(kmax + 1) * sizeof *fac);
            if (have < 0 || p->n_modes[d] != p->n_modes[have] || p->n_fine[d] != p->n_fine[have])
                wf_deconv_factors(p->n_modes[d], p->n_fine[d], width, beta, fac);
            have = d;
            st = upload_fac(n, &fac_of(n, i)[d], fac, p->n_modes[d] / 2 + 1);
        }
    }
    free(fac);
    if (st != WARPFFT_SUCCESS || n_widths(n) == 1)
        return st;
    uint64_t tab[WF_MAX_WIDTHS * 3] = {0}; /* width i, dim d at 3 i + d (kernels/ABI.md) */
    for (int i = 0; i < n_widths(n); i++)
        for (int d = 0; d < p->dim; d++)
            tab[3 * i + d] = (uint64_t)fac_of(n, i)[d].ptr;
    /* pageable: staged before the call returns */
    CUresult r = n->ex.drv->cuMemcpyHtoDAsync(n->sp.pw.tables.ptr + n->sp.pw.plan_bytes, tab,
                                              sizeof tab, n->ex.stream);
    return r == WF_CUDA_SUCCESS ? WARPFFT_SUCCESS
                                : wf_cuda_error(r, "cuMemcpyHtoDAsync of the factor table");
}

/* ---------------------------------------------------------------- cuFFT */

/* The batched transform over the fine grid, basic layout: complex (in place) fine_prod apart, or
 * for real data the real grid (fine_prod reals apart) to or from the half spectrum
 * (wf_half_prod complex apart: dimension 1, the last of cuFFT's, halved). */
static warpfft_status fft_plan_many(wf_nufft12 *n, size_t *work) {
    const wf_params *p = &n->p;
    long long dims[3] = {1, 1, 1}; /* slowest dimension first */
    for (int d = 0; d < p->dim; d++)
        dims[d] = (long long)p->n_fine[p->dim - 1 - d];
    int type = fft_type(n);
    long long idist = (long long)p->fine_prod, odist = idist;
    if (type == WF_CUFFT_R2C || type == WF_CUFFT_D2Z)
        odist = (long long)wf_half_prod(p);
    else if (type == WF_CUFFT_C2R || type == WF_CUFFT_Z2D)
        idist = (long long)wf_half_prod(p);
    cufftResult r = n->cufft->cufftMakePlanMany64(n->fft, p->dim, dims, NULL, 1, idist, NULL, 1,
                                                  odist, type, (long long)p->ntransf, work);
    if (r != 0) {
        char what[192];
        snprintf(what, sizeof what, "cufftMakePlanMany64 (%s, n = {%lld, %lld, %lld}, batch %lld)",
                 fft_type_name(type), dims[0], dims[1], dims[2], (long long)p->ntransf);
        return wf_cufft_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

/* cufftCreate + cufftMakePlanMany64 (the cuFFT plan without its work area). */
static warpfft_status new_fft(wf_nufft12 *n, size_t *work) {
    const wf_cufft *cf = n->cufft;
    cufftResult r = cf->cufftCreate(&n->fft);
    if (r != 0)
        return wf_cufft_error(r, "cufftCreate");
    n->fft_created = 1;
    if ((r = cf->cufftSetAutoAllocation(n->fft, 0)) != 0)
        return wf_cufft_error(r, "cufftSetAutoAllocation");
    return fft_plan_many(n, work);
}

/* The batched FFT over the fine grid (fft_plan_many), with a work area the plan owns, on its
 * stream: taken from the cache (take_fft) or made here. cuFFT's own device memory counts too: when
 * cuFFT runs out of it, the cache is emptied and the plan made again. */
static warpfft_status make_fft(wf_nufft12 *n) {
    const wf_cufft *cf = n->cufft;
    cufftResult r = 0;
    if (!n->fft_made) {
        size_t work = 0;
        warpfft_status st = new_fft(n, &work);
        /* CUFFT_ALLOC_FAILED (cuFFT's own device memory): free the cache, make it again */
        if (st == WARPFFT_ERR_OUT_OF_MEMORY && n->fft_created && wf_memory_reclaim() > 0) {
            cf->cufftDestroy(n->fft); /* a failed plan: nothing depends on the result */
            n->fft_created = 0;
            st = new_fft(n, &work);
        }
        if (st == WARPFFT_SUCCESS)
            st = wf_dbuf_alloc(&n->fft_work, work, "the cuFFT work area", &n->workspace);
        if (st != WARPFFT_SUCCESS)
            return st;
        if ((r = cf->cufftSetWorkArea(n->fft, (void *)(uintptr_t)n->fft_work.ptr)) != 0)
            return wf_cufft_error(r, "cufftSetWorkArea");
        n->fft_made = 1;
    }
    if ((r = cf->cufftSetStream(n->fft, n->ex.stream)) != 0) /* a cached one: new stream */
        return wf_cufft_error(r, "cufftSetStream");
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- build and release */

/* The modules of the spreader and of the mode step: deconvolve (type 1) or amplify (type 2),
 * whose modules hold the half kernels of real data too. */
static void modules_of(const wf_nufft12 *n, wf_module_set *s) {
    const wf_params *p = &n->p;
    wf_spreader_modules(p, p->type == 1 ? WF_SI_SPREAD : WF_SI_INTERP, s);
    if (!p->spreadinterponly)
        wf_module_set_add(s, "%s_%dd_%s", p->type == 1 ? "deconvolve" : "amplify", p->dim,
                          wf_prec_name(p->precision));
}

/* The kernel handles, once the modules are loaded. */
static warpfft_status load_kernels(wf_nufft12 *n) {
    const wf_params *p = &n->p;
    warpfft_status st = wf_spreader_kernels(&n->sp);
    if (st != WARPFFT_SUCCESS || p->spreadinterponly)
        return st;
    const char *fix = p->type == 1 ? "deconvolve" : "amplify", *ps = wf_prec_name(p->precision);
    char module[32], name[64];
    snprintf(module, sizeof module, "%s_%dd_%s", fix, p->dim, ps);
    snprintf(name, sizeof name, "wf_%s%s_%s", fix, p->real_data ? "_half" : "", ps);
    return wf_kernel_load(&n->ex, module, name, &n->k_modes);
}

/* Everything on the GPU; the device's context is current. Times each stage into *t. */
static warpfft_status build(wf_nufft12 *n, wf_create_times *t) {
    const wf_params *p = &n->p;
    double t0 = now_ms();
    /* the modules a jit or nvrtc build must compile load on their own threads meanwhile */
    wf_module_set mods = {.n = 0}, wmods = {.n = 0};
    modules_of(n, &mods);
    wf_preload *loading = NULL, *loading_w = NULL;
    warpfft_status st0 = wf_modules_start(&n->ex, &mods, &loading);
    if (st0 != WARPFFT_SUCCESS) {
        t->modules_ms = now_ms() - t0;
        return st0;
    }
    /* the widths the points may take (host work, while those modules load), and their modules */
    warpfft_status st = wf_spreader_width_plan(&n->sp);
    wf_spreader_width_modules(&n->sp, &wmods);
    wf_spreader_gm_modules(&n->sp, &wmods);
    if (st == WARPFFT_SUCCESS && wmods.n > 0)
        st = wf_modules_start(&n->ex, &wmods, &loading_w);
    double t_pre = now_ms(); /* loads done here unless they run beside what follows */
    if (st == WARPFFT_SUCCESS && !p->spreadinterponly) {
        take_fft(n);
        st = make_fft(n);
    }
    double t1 = now_ms();
    t->cufft_ms = t1 - t_pre;
    /* spread/interp only: the grid is the caller's fk; a cached cuFFT plan brought one (real
     * data: the real grid and the half spectrum, one buffer) */
    size_t fw = wf_params_grid_bytes(p);
    if (st == WARPFFT_SUCCESS && !p->spreadinterponly && !n->fw.ptr)
        st = wf_dbuf_alloc(&n->fw, fw, "the fine grid", &n->workspace);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_alloc(&n->sp, 0);
    double t2 = now_ms();
    t->alloc_ms = t2 - t1;
    if (st == WARPFFT_SUCCESS && !p->spreadinterponly)
        st = make_factors(n);
    double t3 = now_ms();
    t->factors_ms = t3 - t2;
    /* always joined, also after a failure above; a module failure is reported first, as it was
     * when the modules loaded before everything else */
    warpfft_status st_mod = wf_modules_preload_finish(loading);
    warpfft_status st_mw = wf_modules_preload_finish(loading_w);
    if (st_mod == WARPFFT_SUCCESS)
        st_mod = st_mw;
    if (st_mod == WARPFFT_SUCCESS)
        st_mod = load_kernels(n);
    t->modules_ms = (t_pre - t0) + (now_ms() - t3);
    return st_mod != WARPFFT_SUCCESS ? st_mod : st;
}

/* Frees whatever exists (any stage of a partial build); the device's context is current.
 * Returns cufftDestroy's result (0 on success or when there was no cuFFT plan). */
static cufftResult free_all(wf_nufft12 *n) {
    cufftResult r = 0;
    if (n->fft_created)
        r = n->cufft->cufftDestroy(n->fft);
    n->fft_created = n->fft_made = 0;
    wf_dbuf *bufs[] = {&n->fw, &n->fac[0], &n->fac[1], &n->fac[2], &n->fft_work};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_dbuf_free(bufs[i], &n->workspace);
    for (int i = 0; i < WF_MAX_WIDTHS - 1; i++)
        for (int d = 0; d < 3; d++)
            wf_dbuf_free(&n->fac_w[i][d], &n->workspace);
    wf_spreader_release(&n->sp);
    n->has_points = 0;
    return r;
}

cufftResult wf_nufft12_release(wf_nufft12 *n, int work) {
    give_to_cache(n, work);
    return free_all(n);
}

size_t wf_nufft12_workspace(const wf_nufft12 *n) {
    return n->workspace + n->sp.workspace;
}

warpfft_status wf_nufft12_new(const wf_params *p, int iflag, const wf_exec *ex,
                              const wf_cufft *cufft, wf_create_times *t, wf_nufft12 **out) {
    *out = NULL;
    wf_nufft12 *n = calloc(1, sizeof *n);
    if (!n)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of the plan (%zu bytes)",
                        sizeof *n);
    n->p = *p;
    n->iflag = iflag;
    n->fft_dir = iflag >= 0 ? WF_CUFFT_INVERSE : WF_CUFFT_FORWARD;
    n->ex = *ex;
    n->cufft = cufft;
    wf_spreader_init(&n->sp, p, ex, p->type == 1 ? WF_SI_SPREAD : WF_SI_INTERP);
    warpfft_status st = build(n, t);
    if (st != WARPFFT_SUCCESS) {
        free_all(n);
        free(n);
        return st;
    }
    *out = n;
    return WARPFFT_SUCCESS;
}
