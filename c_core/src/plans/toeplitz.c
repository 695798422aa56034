/*
 * toeplitz.c — the Toeplitz normal operator (toeplitz.h): creation (device, kernels, work grid,
 * the FFT plans of the application, and the spectrum through toeplitz_kernel.c) for a choice of
 * toeplitz_params.c, the application, release and info.
 *
 * Application, all on the stream, no allocation: pad the ntransf mode arrays into the L grid
 * (every element written), FFT forward, multiply by the spectrum (conjugated for T^H), FFT
 * inverse, crop. The grid interleaves the batch just below the slowest dimension (ABI.md), so
 * that for dim >= 2 the FFT can be done in two cuFFT steps that skip what the padding left zero
 * and what the crop does not read: the forward FFT along the faster dimensions runs over the
 * first N_dim slabs of every transform only (one contiguous range: the slabs of l_dim < N_dim),
 * then along the slowest dimension over everything; the inverse in the reverse order. In 3D that
 * is 2/3 of a full FFT's passes over memory, in 2D 3/4: worth it where the FFT is bound by
 * memory bandwidth. Small grids (all transforms within WF_TOEP_FULL_FFT_BYTES, about what stays
 * in the L2 cache) take one plan of the whole grid instead (fewer launches; the same layout
 * through cuFFT's advanced layout); WARPFFT_TOEPLITZ_FFT=full|pruned overrides the choice.
 *
 * Memory: the work grid, the spectrum and the step plans' cuFFT work area live as long as the
 * operator, so they are one device allocation (the block), carved at 256-byte boundaries. At
 * release the step plans and the block go to the plan cache (runtime/cache.h,
 * WF_CACHE_TOEPLITZ; after the operator's stream is waited for, or the live-plan pool waited for
 * its fence), and the next operator of the same shape (device, precision, dim, L grid, ntransf,
 * FFT layout and the pruned steps' slab count, spectrum kind) takes them: its build makes no
 * cuFFT plan and allocates none of them. While building, the part of the block past the first
 * grid transform (the kernel's type-1 output) holds the kernel's strengths when they fit.
 */
#include "plans/toeplitz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plans/nufft12.h" /* WF_WORK_* */
#include "plans/toeplitz_kernel.h"
#include "runtime/cache.h"
#include "runtime/error.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---------------------------------------------------------------- cuFFT: the step plans */

/* Plan i: rank-1 or -2 in-place C2C/Z2Z transforms of n (slowest first) with the advanced
 * layout embed/stride/dist, `batch` of them, no work area of its own (*work: its size). Retried
 * once after emptying the plan cache when cuFFT runs out of device memory. */
static warpfft_status step_plan(wf_toeplitz *t, int i, int rank, long long *n, long long *embed,
                                long long stride, long long dist, long long batch, size_t *work) {
    const wf_cufft *cf = t->cufft;
    int type = t->q.precision == WARPFFT_F64 ? WF_CUFFT_Z2Z : WF_CUFFT_C2C;
    for (int attempt = 0;; attempt++) {
        cufftResult r = cf->cufftCreate(&t->fft[i]);
        if (r != 0)
            return wf_cufft_error(r, "cufftCreate");
        t->fft_created[i] = 1;
        if ((r = cf->cufftSetAutoAllocation(t->fft[i], 0)) != 0)
            return wf_cufft_error(r, "cufftSetAutoAllocation");
        r = cf->cufftMakePlanMany64(t->fft[i], rank, n, embed, stride, dist, embed, stride, dist,
                                    type, batch, work);
        if (r == 0)
            return WARPFFT_SUCCESS;
        char what[192];
        snprintf(what, sizeof what,
                 "cufftMakePlanMany64 (Toeplitz step %d: rank %d, n = {%lld, %lld, %lld}, "
                 "stride %lld, dist %lld, batch %lld)",
                 i, rank, n[0], rank > 1 ? n[1] : 1, rank > 2 ? n[2] : 1, stride, dist, batch);
        warpfft_status st = wf_cufft_error(r, what);
        if (st != WARPFFT_ERR_OUT_OF_MEMORY || attempt > 0 || wf_memory_reclaim() == 0)
            return st;
        cf->cufftDestroy(t->fft[i]); /* a failed plan: nothing depends on the result */
        t->fft_created[i] = 0;
    }
}

/* The plans of the application (the file comment); *work: the work area they share.
 * One step: rank-dim transforms of the batch-interleaved grid, the slowest dimension's stride
 * B times the slab (inembed {L_dim, B L_{dim-1}[, L_1]}, dist = the slab). Two steps: the faster
 * dimensions over the first N_dim B slabs (contiguous), then the slowest one (stride B times
 * the slab, one transform per element of the B slabs). */
static warpfft_status make_plans(wf_toeplitz *t, size_t *work_bytes) {
    const wf_toep_params *q = &t->q;
    long long L1 = q->n_grid[0], L2 = q->n_grid[1], L3 = q->n_grid[2], B = q->ntransf;
    size_t work[2] = {0, 0};
    warpfft_status st;
    t->n_fft = q->fft_steps;
    if (q->dim == 1) {
        long long n[1] = {L1};
        st = step_plan(t, 0, 1, n, n, 1, L1, B, &work[0]);
    } else if (q->fft_steps == 1 && q->dim == 2) {
        long long n[2] = {L2, L1}, embed[2] = {L2, B * L1};
        st = step_plan(t, 0, 2, n, embed, 1, L1, B, &work[0]);
    } else if (q->fft_steps == 1) {
        long long n[3] = {L3, L2, L1}, embed[3] = {L3, B * L2, L1};
        st = step_plan(t, 0, 3, n, embed, 1, L1 * L2, B, &work[0]);
    } else if (q->dim == 2) {
        long long n1[1] = {L1}, n2[1] = {L2};
        st = step_plan(t, 0, 1, n1, n1, 1, L1, (long long)q->n_modes[1] * B, &work[0]);
        if (st == WARPFFT_SUCCESS)
            st = step_plan(t, 1, 1, n2, n2, B * L1, 1, B * L1, &work[1]);
    } else {
        long long n12[2] = {L2, L1}, n3[1] = {L3};
        st = step_plan(t, 0, 2, n12, n12, 1, L1 * L2, (long long)q->n_modes[2] * B, &work[0]);
        if (st == WARPFFT_SUCCESS)
            st = step_plan(t, 1, 1, n3, n3, B * L1 * L2, 1, B * L1 * L2, &work[1]);
    }
    *work_bytes = work[0] > work[1] ? work[0] : work[1];
    return st;
}

/* ---------------------------------------------------------------- the block and the cache */

#define WF_TOEP_ALIGN ((size_t)256)

static size_t align_up(size_t bytes) {
    return (bytes + WF_TOEP_ALIGN - 1) & ~(WF_TOEP_ALIGN - 1);
}

/* The block's layout: the grid at 0, then the spectrum (M > 0), then the work area. */
static size_t spectrum_bytes(const wf_toeplitz *t) {
    return t->M > 0 ? t->q.spectrum_bytes : 0;
}
static size_t spectrum_offset(const wf_toeplitz *t) {
    return align_up(t->q.grid_bytes);
}
static size_t work_offset(const wf_toeplitz *t) {
    return align_up(spectrum_offset(t) + spectrum_bytes(t));
}

/* The views of the block (allocated, or from the cache) with a work area of work_bytes. */
static void carve(wf_toeplitz *t, size_t work_bytes) {
    CUdeviceptr b = t->block.ptr;
    t->grid = (wf_dbuf){b, t->q.grid_bytes};
    t->spectrum =
        spectrum_bytes(t) ? (wf_dbuf){b + spectrum_offset(t), spectrum_bytes(t)} : (wf_dbuf){0, 0};
    t->fft_work = work_bytes ? (wf_dbuf){b + work_offset(t), work_bytes} : (wf_dbuf){0, 0};
}

/* What makes the plans and block reusable: device, precision, dim, FFT layout, spectrum kind
 * (none, real, complex: its bytes), the L grid, ntransf, and the pruned first step's slab count
 * N_dim (operators with the same L grid may differ in it). */
static wf_cache_item cache_item(const wf_toeplitz *t) {
    const wf_toep_params *q = &t->q;
    wf_cache_item it;
    memset(&it, 0, sizeof it);
    it.kind = WF_CACHE_TOEPLITZ;
    it.dev = t->ex.dev;
    int64_t spec = t->M == 0 ? 0 : q->spectrum_real ? 1 : 2;
    int64_t key[6] = {(int64_t)q->dim | (int64_t)q->precision << 8 | (int64_t)q->fft_steps << 16 |
                          spec << 24,
                      q->n_grid[0],
                      q->n_grid[1],
                      q->n_grid[2],
                      q->ntransf,
                      q->fft_steps == 2 ? q->n_modes[q->dim - 1] : 0};
    memcpy(it.key, key, sizeof key);
    return it;
}

/* The plans and block of a destroyed operator of this shape; 1 on a hit. */
static int take_cached(wf_toeplitz *t) {
    wf_cache_item it = cache_item(t);
    if (!wf_cache_take(&it))
        return 0;
    t->n_fft = t->q.fft_steps;
    t->fft[0] = it.fft;
    t->fft_created[0] = 1;
    if (it.has_fft2) {
        t->fft[1] = it.fft2;
        t->fft_created[1] = 1;
    }
    t->block = (wf_dbuf){it.buf[0], it.bytes[0]};
    t->workspace += it.bytes[0];
    carve(t, it.bytes[0] - work_offset(t)); /* the same shape: the same layout */
    t->from_cache = 1;
    return 1;
}

/* The block for new plans whose work area takes work_bytes. */
static warpfft_status alloc_block(wf_toeplitz *t, size_t work_bytes) {
    warpfft_status st =
        wf_dbuf_alloc(&t->block, work_offset(t) + work_bytes,
                      "the Toeplitz operator (grid, spectrum, cuFFT work area)", &t->workspace);
    if (st == WARPFFT_SUCCESS)
        carve(t, work_bytes);
    return st;
}

/* The plans on the block's work area (new ones; a cached one's is there already) and on the
 * operator's stream. */
static warpfft_status bind_plans(wf_toeplitz *t) {
    for (int i = 0; i < t->n_fft; i++) {
        cufftResult r = 0;
        if (!t->from_cache)
            r = t->cufft->cufftSetWorkArea(t->fft[i], (void *)(uintptr_t)t->fft_work.ptr);
        if (r == 0)
            r = t->cufft->cufftSetStream(t->fft[i], t->ex.stream);
        if (r != 0)
            return wf_cufft_error(r, "cufftSetWorkArea / cufftSetStream (Toeplitz)");
    }
    t->ready = 1;
    return WARPFFT_SUCCESS;
}

/* At release: the plans and the block to the cache, unless the operator's work may still run
 * and its stream cannot be waited for (LOST, or the wait fails), or the cache would not keep
 * them (off, or too big); the release then frees them, as before the cache. */
static void give_to_cache(wf_toeplitz *t, int work) {
    if (!t->ready || work == WF_WORK_LOST || !wf_cache_accepts(t->block.bytes) ||
        (work != WF_WORK_DONE && t->ex.drv->cuStreamSynchronize(t->ex.stream) != WF_CUDA_SUCCESS))
        return;
    wf_cache_item it = cache_item(t);
    it.cufft = t->cufft;
    it.fft = t->fft[0];
    if (t->n_fft == 2) {
        it.fft2 = t->fft[1];
        it.has_fft2 = 1;
    }
    it.buf[0] = t->block.ptr;
    it.bytes[0] = t->block.bytes;
    t->workspace -= t->block.bytes;
    t->block = t->grid = t->spectrum = t->fft_work = (wf_dbuf){0, 0};
    t->fft_created[0] = t->fft_created[1] = 0;
    t->ready = 0;
    wf_cache_put(&it);
}

/* Plan i in place on the grid, in direction dir. */
static warpfft_status exec_step(wf_toeplitz *t, int i, int dir) {
    void *g = (void *)(uintptr_t)t->grid.ptr;
    cufftResult r;
    if (t->q.precision == WARPFFT_F64)
        r = t->cufft->cufftExecZ2Z(t->fft[i], g, g, dir);
    else
        r = t->cufft->cufftExecC2C(t->fft[i], g, g, dir);
    if (r != 0)
        return wf_cufft_error(r, t->q.precision == WARPFFT_F64 ? "cufftExecZ2Z (Toeplitz grid)"
                                                               : "cufftExecC2C (Toeplitz grid)");
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- create / release */

static warpfft_status load_kernels(wf_toeplitz *t) {
    const char *ps = wf_prec_name(t->q.precision);
    char module[32], name[64];
    snprintf(module, sizeof module, "toeplitz_%s", ps);
    struct {
        const char *op;
        wf_kernel *k;
    } ks[] = {{"pad", &t->k_pad}, {"crop", &t->k_crop}, {"mulr", &t->k_mulr}, {"mulc", &t->k_mulc}};
    warpfft_status st =
        wf_toep_kernel_functions(&t->ex, t->q.precision, &t->k_weights, &t->k_spectrum);
    for (size_t i = 0; i < sizeof ks / sizeof ks[0] && st == WARPFFT_SUCCESS; i++) {
        snprintf(name, sizeof name, "wf_toep_%s_%s", ks[i].op, ps);
        st = wf_kernel_load(&t->ex, module, name, ks[i].k);
    }
    return st;
}

cufftResult wf_toeplitz_release(wf_toeplitz *t, int work) {
    give_to_cache(t, work);
    cufftResult first = 0;
    for (int i = 0; i < 2; i++) {
        if (!t->fft_created[i])
            continue;
        cufftResult r = t->cufft->cufftDestroy(t->fft[i]);
        if (r != 0 && first == 0)
            first = r;
        t->fft_created[i] = 0;
    }
    wf_dbuf_free(&t->block, &t->workspace);
    t->grid = t->spectrum = t->fft_work = (wf_dbuf){0, 0};
    t->ready = 0;
    return first;
}

/* Everything on the device; the context is current. Where the time went into *bt. */
static warpfft_status build(wf_toeplitz *t, CUdeviceptr x, CUdeviceptr y, CUdeviceptr z,
                            CUdeviceptr w, wf_toep_build_times *bt) {
    const wf_toep_params *q = &t->q;
    double t0 = now_ms();
    warpfft_status st = load_kernels(t);
    double t1 = now_ms();
    size_t work = 0;
    if (st == WARPFFT_SUCCESS && !take_cached(t))
        st = make_plans(t, &work);
    double t2 = now_ms();
    if (st == WARPFFT_SUCCESS && !t->from_cache)
        st = alloc_block(t, work);
    if (st == WARPFFT_SUCCESS)
        st = bind_plans(t);
    bt->kernels_ms = t1 - t0;
    bt->fft_plans_ms = t2 - t1;
    bt->buffers_ms = now_ms() - t2;
    if (st != WARPFFT_SUCCESS || t->M == 0)
        return st;
    /* the kernel's type-1 output goes to the work grid's first transform; what follows it
     * (the other transforms, the spectrum, the work area) is free until the spectrum is
     * written from that output: room for the strengths */
    size_t spare = align_up((size_t)q->grid_prod * q->complex_bytes);
    return wf_toep_kernel(q, t->iflag, &t->ex, t->cufft, &t->k_weights, &t->k_spectrum, t->M, x, y,
                          z, w, t->grid.ptr, t->block.ptr + spare, t->block.bytes - spare,
                          t->spectrum.ptr, "warpfft_toeplitz_create", bt);
}

warpfft_status wf_toeplitz_create(const wf_toep_params *q, int iflag, int64_t M, CUdeviceptr x,
                                  CUdeviceptr y, CUdeviceptr z, CUdeviceptr w, wf_toeplitz **out) {
    *out = NULL;
    double t0 = now_ms();
    wf_toeplitz *t = calloc(1, sizeof *t);
    if (!t)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "host allocation of the operator (%zu bytes)",
                        sizeof *t);
    t->q = *q;
    t->iflag = iflag >= 0 ? 1 : -1;
    t->M = M;
    warpfft_status st = wf_exec_attach(&t->ex, &q->opts);
    if (st == WARPFFT_SUCCESS)
        st = wf_cufft_get(&t->cufft);
    if (st == WARPFFT_SUCCESS)
        st = wf_toep_for_device(&t->q, &t->ex);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(t->ex.dev);
    if (st != WARPFFT_SUCCESS) {
        free(t);
        return st;
    }
    wf_toep_build_times bt;
    memset(&bt, 0, sizeof bt);
    st = build(t, x, y, z, w, &bt);
    /* the build's failure is the one to report; what it made goes to the cache once its
     * stream is waited for (a failure that left work running frees it) */
    if (st != WARPFFT_SUCCESS)
        wf_toeplitz_release(t, WF_WORK_PENDING);
    wf_ctx_leave(t->ex.dev);
    if (st != WARPFFT_SUCCESS) {
        free(t);
        return st;
    }
    t->build_ms = now_ms() - t0;
    if (M > 0) { /* a zero operator builds nothing to report */
        bt.total_ms = t->build_ms;
        wf_cache_note_toeplitz_build(&bt);
    }
    *out = t;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- apply */

static warpfft_status launch_mul(wf_toeplitz *t, CUdeviceptr spectrum, int real, int adjoint) {
    const wf_toep_params *q = &t->q;
    long long L1 = q->n_grid[0], L2 = q->n_grid[1], L3 = q->n_grid[2], B = q->ntransf;
    long long P = q->dim == 1 ? L1 : q->dim == 2 ? L1 : L1 * L2;
    long long Lo = q->dim == 1 ? 1 : q->dim == 2 ? L2 : L3;
    int conj = adjoint != 0;
    CUdeviceptr g = t->grid.ptr;
    if (real) {
        void *args[] = {&P, &Lo, &B, &spectrum, &g};
        return wf_exec_launch(&t->ex, &t->k_mulr, q->grid_prod, args);
    }
    void *args[] = {&P, &Lo, &B, &conj, &spectrum, &g};
    return wf_exec_launch(&t->ex, &t->k_mulc, q->grid_prod, args);
}

/* pad (in -> grid) or crop (grid -> out): the same parameters. */
static warpfft_status launch_edge(wf_toeplitz *t, const wf_kernel *k, CUdeviceptr from,
                                  CUdeviceptr to, int64_t items) {
    const wf_toep_params *q = &t->q;
    int dim = q->dim, modeord = q->modeord;
    long long N1 = q->n_modes[0], N2 = q->n_modes[1], N3 = q->n_modes[2];
    long long L1 = q->n_grid[0], L2 = q->n_grid[1], L3 = q->n_grid[2], B = q->ntransf;
    void *args[] = {&dim, &N1, &N2, &N3, &L1, &L2, &L3, &B, &modeord, &from, &to};
    return wf_exec_launch(&t->ex, k, items, args);
}

warpfft_status wf_toeplitz_apply(wf_toeplitz *t, CUdeviceptr spectrum, int spectrum_real,
                                 int adjoint, CUdeviceptr in, CUdeviceptr out) {
    const wf_toep_params *q = &t->q;
    int64_t n_out = q->mode_prod * q->ntransf;
    if (!spectrum) /* the zero operator */
        return wf_exec_memset(&t->ex, out, (size_t)n_out * q->complex_bytes, "out (M = 0)");
    /* pad: one item per (row, chunk of WF_BLOCK) */
    int64_t rows = q->ntransf * q->n_grid[1] * q->n_grid[2];
    int64_t chunks = (q->n_grid[0] + WF_BLOCK - 1) / WF_BLOCK;
    warpfft_status st = launch_edge(t, &t->k_pad, in, t->grid.ptr, rows * chunks * WF_BLOCK);
    if (st == WARPFFT_SUCCESS)
        st = exec_step(t, 0, WF_CUFFT_FORWARD);
    if (st == WARPFFT_SUCCESS && t->n_fft == 2)
        st = exec_step(t, 1, WF_CUFFT_FORWARD);
    if (st == WARPFFT_SUCCESS)
        st = launch_mul(t, spectrum, spectrum_real, adjoint);
    if (st == WARPFFT_SUCCESS && t->n_fft == 2)
        st = exec_step(t, 1, WF_CUFFT_INVERSE);
    if (st == WARPFFT_SUCCESS)
        st = exec_step(t, 0, WF_CUFFT_INVERSE);
    if (st == WARPFFT_SUCCESS)
        st = launch_edge(t, &t->k_crop, t->grid.ptr, out, n_out);
    return st;
}

/* ---------------------------------------------------------------- info */

void wf_toeplitz_info(const wf_toeplitz *t, warpfft_toeplitz_info *info) {
    wf_toep_params_to_info(&t->q, info);
    info->iflag = t->iflag;
    info->n_points = t->M;
    info->build_ms = t->build_ms;
    info->spectrum_bytes = t->spectrum.bytes;
    info->workspace_bytes = t->workspace;
}
