/*
 * toeplitz_kernel.c — the spectrum of the Toeplitz operator's kernel (toeplitz.h):
 *   K(m) = sum_j w_j exp(-iflag i m.x_j) for the L_1 x L_2 x L_3 frequencies m of the grid (FFT
 *   order: position l_d holds m_d = l_d or l_d - L_d), by a type-1 transform of L modes
 *   (plans/nufft12.h, its cuFFT plan and grid through the plan cache), then the DFT of K on the
 *   grid by a cuFFT plan of that grid (also through the plan cache: the same item a type 1/2
 *   plan with that fine grid uses), scaled by 1 / (L_1 L_2 L_3), which is what the inverse FFT
 *   of the application leaves out.
 * Complex weights: a complex type 1, a C2C/Z2Z DFT, then the scaled copy (toep_spectrum).
 * Real weights or none: K is Hermitian (K(-m) = conj K(m)), so its DFT is real, and a real-data
 *   type 1 (docs/real.md; real strengths w_j / (L_1 L_2 L_3), the scale folded in) gives the
 *   half K(m) for m_1 = 0 .. L_1/2, which is the input of a C2R/Z2D DFT of the L grid as it
 *   stands (m_2, m_3 in FFT order): the real spectrum, written into dst directly. That takes
 *   the real spreading (half the tile bytes), an R2C and a C2R (half the work of C2C). Where the
 *   computed half is not exactly Hermitian (rounding), the C2R keeps its Hermitian part, as the
 *   real part of the complex route did; its m_1 = L_1/2 plane stands for lags +-L_1/2 >= N_1,
 *   which no output of the operator reaches.
 * Every resource taken here is given back (plan cache) or freed before returning, on every path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "params/params.h"
#include "plans/nufft12.h"
#include "plans/toeplitz_kernel.h"
#include "runtime/cache.h"
#include "runtime/error.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

warpfft_status wf_toep_kernel_functions(const wf_exec *ex, int precision, wf_kernel *k_weights,
                                        wf_kernel *k_spectrum) {
    const char *ps = wf_prec_name(precision);
    char module[32], name[64];
    snprintf(module, sizeof module, "toeplitz_%s", ps);
    snprintf(name, sizeof name, "wf_toep_weights_%s", ps);
    warpfft_status st = wf_kernel_load(ex, module, name, k_weights);
    snprintf(name, sizeof name, "wf_toep_spectrum_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_load(ex, module, name, k_spectrum);
    return st;
}

/* ---------------------------------------------------------------- the grid's FFT */

/* What the spectrum borrows: a cuFFT plan of the L grid (batch 1) with its work area, and
 * (without a scratch grid from the caller) a grid, as a plan-cache item. */
typedef struct kernel_fft {
    wf_cache_item it;
    int have;       /* it holds a made plan (from the cache or made here) */
    int created;    /* it.fft exists (maybe not made) */
    size_t counted; /* workspace counter of the buffers allocated here */
} kernel_fft;

static int fft_type(const wf_toep_params *q) {
    if (q->spectrum_real) /* the half of a real-data type 1 in, the real spectrum out */
        return q->precision == WARPFFT_F64 ? WF_CUFFT_Z2D : WF_CUFFT_C2R;
    return q->precision == WARPFFT_F64 ? WF_CUFFT_Z2Z : WF_CUFFT_C2C;
}

/* the key of plans/nufft12.c's fine-grid FFT (wf_cache_fft_item): the same plan, shared with
 * complex type 1/2 plans of this grid */
static wf_cache_item fft_key(const wf_toep_params *q, const wf_exec *ex) {
    return wf_cache_fft_item(ex->dev, q->dim, q->n_grid, 1, q->precision, fft_type(q));
}

/* cufftCreate + MakePlanMany64 of the grid (batch 1, slowest dimension first; C2C in place, C2R
 * from the half to dst) + a work area, as plans/nufft12.c makes its fine-grid plan. */
static warpfft_status fft_new(kernel_fft *f, const wf_toep_params *q, const wf_cufft *cf) {
    long long dims[3] = {1, 1, 1};
    for (int d = 0; d < q->dim; d++)
        dims[d] = (long long)q->n_grid[q->dim - 1 - d];
    int type = fft_type(q);
    size_t work = 0;
    cufftResult r = cf->cufftCreate(&f->it.fft);
    if (r != 0)
        return wf_cufft_error(r, "cufftCreate (the Toeplitz kernel's FFT)");
    f->created = 1;
    if ((r = cf->cufftSetAutoAllocation(f->it.fft, 0)) != 0)
        return wf_cufft_error(r, "cufftSetAutoAllocation");
    r = cf->cufftMakePlanMany64(f->it.fft, q->dim, dims, NULL, 1, (long long)q->grid_prod, NULL, 1,
                                (long long)q->grid_prod, type, 1, &work);
    if (r != 0)
        return wf_cufft_error(r, "cufftMakePlanMany64 (the Toeplitz kernel's FFT)");
    wf_dbuf b = {0, 0};
    warpfft_status st = wf_dbuf_alloc(&b, work, "the cuFFT work area", &f->counted);
    if (st != WARPFFT_SUCCESS)
        return st;
    f->it.buf[0] = b.ptr;
    f->it.bytes[0] = b.bytes;
    if ((r = cf->cufftSetWorkArea(f->it.fft, (void *)(uintptr_t)b.ptr)) != 0)
        return wf_cufft_error(r, "cufftSetWorkArea (the Toeplitz kernel's FFT)");
    f->have = 1;
    return WARPFFT_SUCCESS;
}

/* The plan (cached or new), bound to the stream; with need_grid, a grid of the L grid's size in
 * it.buf[1] (the cached item's, or allocated). */
static warpfft_status fft_get(kernel_fft *f, const wf_toep_params *q, const wf_exec *ex,
                              const wf_cufft *cf, int need_grid) {
    f->it = fft_key(q, ex);
    if (wf_cache_take(&f->it)) {
        f->have = f->created = 1;
    } else {
        f->it.cufft = cf;
        warpfft_status st = fft_new(f, q, cf);
        if (st != WARPFFT_SUCCESS)
            return st;
    }
    f->it.cufft = cf;
    cufftResult r = cf->cufftSetStream(f->it.fft, ex->stream);
    if (r != 0)
        return wf_cufft_error(r, "cufftSetStream (the Toeplitz kernel's FFT)");
    if (need_grid && !f->it.buf[1]) {
        wf_dbuf b = {0, 0};
        warpfft_status st = wf_dbuf_alloc(&b, (size_t)q->grid_prod * q->complex_bytes,
                                          "the kernel's grid", &f->counted);
        if (st != WARPFFT_SUCCESS)
            return st;
        f->it.buf[1] = b.ptr;
        f->it.bytes[1] = b.bytes;
    }
    return WARPFFT_SUCCESS;
}

/* Gives the plan (and its buffers) to the cache when `synced` (its work is done) and the cache
 * takes it; else destroys it and frees them. Returns cufftDestroy's result (0: success, or
 * cached): the buffers are freed either way. */
static cufftResult fft_put(kernel_fft *f, int synced) {
    cufftResult r = 0;
    if (f->have && synced && wf_cache_accepts(f->it.bytes[0] + f->it.bytes[1])) {
        wf_cache_put(&f->it);
    } else {
        if (f->created && f->it.cufft)
            r = f->it.cufft->cufftDestroy(f->it.fft);
        wf_free(&f->it.buf[0]);
        wf_free(&f->it.buf[1]);
    }
    memset(f, 0, sizeof *f);
    return r;
}

/* ---------------------------------------------------------------- the spectrum */

static warpfft_status launch_weights(const wf_exec *ex, const wf_kernel *k, int64_t M,
                                     CUdeviceptr w, CUdeviceptr c) {
    long long m = M;
    void *args[] = {&m, &w, &c};
    return wf_exec_launch(ex, k, M, args);
}

static warpfft_status launch_spectrum(const wf_toep_params *q, const wf_exec *ex,
                                      const wf_kernel *k, CUdeviceptr in, CUdeviceptr out) {
    long long n = q->grid_prod;
    int real = q->spectrum_real;
    float s32 = (float)(1.0 / (double)q->grid_prod);
    double s64 = 1.0 / (double)q->grid_prod;
    void *scale = q->precision == WARPFFT_F64 ? (void *)&s64 : (void *)&s32;
    void *args[] = {&n, scale, &real, &in, &out};
    return wf_exec_launch(ex, k, q->grid_prod, args);
}

static size_t align256(size_t n) {
    return (n + 255) / 256 * 256;
}

/* The strengths of real weights or none into `spare` (spare_bytes) when they fit, else into a
 * buffer of their own (cbuf): complex (w_j, 0) or (1, 0); for a real spectrum (the real-data
 * type 1) real w_j / (L_1 L_2 L_3) or 1 / (L_1 L_2 L_3), made from those complex values by the
 * spectrum kernel's scaled real part. Sets *c. */
static warpfft_status strengths(const wf_toep_params *q, const wf_exec *ex,
                                const wf_kernel *k_weights, const wf_kernel *k_spectrum, int64_t M,
                                CUdeviceptr w, wf_dbuf *cbuf, size_t *counted, CUdeviceptr spare,
                                size_t spare_bytes, CUdeviceptr *c) {
    size_t cplx = align256((size_t)M * q->complex_bytes);
    size_t bytes = cplx + (q->spectrum_real ? (size_t)M * q->real_bytes : 0);
    CUdeviceptr base = spare; /* read by execute's spreading, before dst is written */
    warpfft_status st = WARPFFT_SUCCESS;
    if (!spare || bytes > spare_bytes) {
        st = wf_dbuf_alloc(cbuf, bytes, "the kernel's strengths", counted);
        base = cbuf->ptr;
    }
    if (st == WARPFFT_SUCCESS)
        st = launch_weights(ex, k_weights, M, q->weights == WARPFFT_WEIGHTS_REAL ? w : 0, base);
    if (st != WARPFFT_SUCCESS || !q->spectrum_real) {
        *c = base;
        return st;
    }
    /* the scaled real parts: toep_spectrum over the M strengths (its n = M) */
    *c = base + cplx;
    float s32 = (float)(1.0 / (double)q->grid_prod);
    double s64 = 1.0 / (double)q->grid_prod;
    long long n = M;
    int real = 1;
    void *scale = q->precision == WARPFFT_F64 ? (void *)&s64 : (void *)&s32;
    void *args[] = {&n, scale, &real, &base, c};
    return wf_exec_launch(ex, k_spectrum, M, args);
}

/* The DFT of the kernel on the L grid: in place (complex), or C2R from the half in `grid` to
 * the real spectrum in dst. */
static warpfft_status kernel_dft(const wf_toep_params *q, kernel_fft *f, CUdeviceptr grid,
                                 CUdeviceptr dst) {
    const wf_cufft *cf = f->it.cufft;
    void *g = (void *)(uintptr_t)grid, *d = (void *)(uintptr_t)dst;
    int f64 = q->precision == WARPFFT_F64;
    cufftResult r;
    const char *what;
    if (q->spectrum_real) {
        r = f64 ? cf->cufftExecZ2D(f->it.fft, g, d) : cf->cufftExecC2R(f->it.fft, g, d);
        what = f64 ? "cufftExecZ2D (the Toeplitz kernel's FFT)"
                   : "cufftExecC2R (the Toeplitz kernel's FFT)";
    } else {
        r = f64 ? cf->cufftExecZ2Z(f->it.fft, g, g, WF_CUFFT_FORWARD)
                : cf->cufftExecC2C(f->it.fft, g, g, WF_CUFFT_FORWARD);
        what = f64 ? "cufftExecZ2Z (the Toeplitz kernel's FFT)"
                   : "cufftExecC2C (the Toeplitz kernel's FFT)";
    }
    return r != 0 ? wf_cufft_error(r, what) : WARPFFT_SUCCESS;
}

/* The type-1 transform's steps: strengths, points, execute into the grid, FFT, spectrum. */
static warpfft_status run(const wf_toep_params *q, wf_nufft12 *n1, const wf_exec *ex,
                          const wf_kernel *k_weights, const wf_kernel *k_spectrum, int64_t M,
                          CUdeviceptr x, CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, wf_dbuf *cbuf,
                          size_t *counted, CUdeviceptr spare, size_t spare_bytes, CUdeviceptr grid,
                          kernel_fft *f, CUdeviceptr dst, const char *who) {
    CUdeviceptr c = w;
    warpfft_status st = WARPFFT_SUCCESS;
    if (q->weights != WARPFFT_WEIGHTS_COMPLEX)
        st = strengths(q, ex, k_weights, k_spectrum, M, w, cbuf, counted, spare, spare_bytes, &c);
    if (st == WARPFFT_SUCCESS)
        st = wf_nufft12_setpts(n1, 1, M, x, y, z, who); /* checked: BAD_POINTS for NaN/inf */
    if (st == WARPFFT_SUCCESS)
        st = wf_nufft12_execute(n1, c, grid);
    if (st == WARPFFT_SUCCESS)
        st = kernel_dft(q, f, grid, dst);
    if (st == WARPFFT_SUCCESS && !q->spectrum_real) /* real: the C2R wrote it, scaled */
        st = launch_spectrum(q, ex, k_spectrum, grid, dst);
    return st;
}

warpfft_status wf_toep_kernel(const wf_toep_params *q, int iflag, const wf_exec *ex,
                              const wf_cufft *cufft, const wf_kernel *k_weights,
                              const wf_kernel *k_spectrum, int64_t M, CUdeviceptr x, CUdeviceptr y,
                              CUdeviceptr z, CUdeviceptr w, CUdeviceptr scratch, CUdeviceptr spare,
                              size_t spare_bytes, CUdeviceptr dst, const char *who,
                              wf_toep_build_times *times_out) {
    wf_toep_build_times unused;
    wf_toep_build_times *bt = times_out ? times_out : &unused;
    /* the kernel's type-1 transform: sign -iflag, L modes in FFT order */
    double t0 = now_ms();
    wf_create_times times = {0, 0, 0, 0, 0};
    wf_nufft12 *n1 = NULL;
    warpfft_status st = wf_nufft12_new(&q->kernel, iflag >= 0 ? -1 : 1, ex, cufft, &times, &n1);
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "%s: the kernel's type-1 transform (%lld x %lld x %lld modes): %s", who,
                        (long long)q->n_grid[0], (long long)q->n_grid[1], (long long)q->n_grid[2],
                        wf_last_error());
    times.total_ms = now_ms() - t0;
    wf_cache_note_create(&times);
    kernel_fft f;
    memset(&f, 0, sizeof f);
    wf_dbuf cbuf = {0, 0};
    size_t counted = 0;
    st = fft_get(&f, q, ex, cufft, scratch == 0);
    double t1 = now_ms();
    bt->kernel_plan_ms = t1 - t0;
    if (st == WARPFFT_SUCCESS)
        st = run(q, n1, ex, k_weights, k_spectrum, M, x, y, z, w, &cbuf, &counted, spare,
                 spare_bytes, scratch ? scratch : f.it.buf[1], &f, dst, who);
    /* every buffer's work is done before anything goes back or is freed: the cache's contract,
     * and the caller's points and weights may be freed when this returns */
    CUresult r = ex->drv->cuStreamSynchronize(ex->stream);
    double t2 = now_ms();
    bt->run_ms = t2 - t1;
    if (st == WARPFFT_SUCCESS && r != WF_CUDA_SUCCESS)
        st = wf_cuda_error(r, "cuStreamSynchronize after the Toeplitz kernel");
    cufftResult rf = fft_put(&f, r == WF_CUDA_SUCCESS);
    wf_dbuf_free(&cbuf, &counted);
    cufftResult rr = wf_nufft12_release(n1, r == WF_CUDA_SUCCESS ? WF_WORK_DONE : WF_WORK_LOST);
    free(n1);
    bt->release_ms = now_ms() - t2;
    if (st == WARPFFT_SUCCESS && rf != 0)
        st = wf_cufft_error(rf, "cufftDestroy (the Toeplitz kernel's FFT)");
    if (st == WARPFFT_SUCCESS && rr != 0)
        st = wf_cufft_error(rr, "cufftDestroy (the kernel's type-1 transform)");
    return st;
}

warpfft_status wf_toep_spectrum(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, CUdeviceptr dst) {
    wf_exec ex;
    const wf_cufft *cufft = NULL;
    warpfft_status st = wf_exec_attach(&ex, &q->opts);
    wf_toep_params qd = *q;
    if (st == WARPFFT_SUCCESS)
        st = wf_cufft_get(&cufft);
    if (st == WARPFFT_SUCCESS)
        st = wf_toep_for_device(&qd, &ex);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(ex.dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (M == 0) { /* no points: K = 0 */
        st = wf_exec_memset(&ex, dst, qd.spectrum_bytes, "the spectrum (M = 0)");
        CUresult r = ex.drv->cuStreamSynchronize(ex.stream);
        if (st == WARPFFT_SUCCESS && r != WF_CUDA_SUCCESS)
            st = wf_cuda_error(r, "cuStreamSynchronize after the spectrum");
        wf_ctx_leave(ex.dev);
        return st;
    }
    wf_kernel kw, ks;
    st = wf_toep_kernel_functions(&ex, qd.precision, &kw, &ks);
    if (st == WARPFFT_SUCCESS)
        st = wf_toep_kernel(&qd, iflag, &ex, cufft, &kw, &ks, M, x, y, z, w, 0, 0, 0, dst,
                            "warpfft_toeplitz_spectrum", NULL);
    wf_ctx_leave(ex.dev);
    return st;
}
