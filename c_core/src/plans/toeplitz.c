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
 */
#include "plans/toeplitz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plans/toeplitz_kernel.h"
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

/* The plans of the application (the file comment), their shared work area, on the stream.
 * One step: rank-dim transforms of the batch-interleaved grid, the slowest dimension's stride
 * B times the slab (inembed {L_dim, B L_{dim-1}[, L_1]}, dist = the slab). Two steps: the faster
 * dimensions over the first N_dim B slabs (contiguous), then the slowest one (stride B times
 * the slab, one transform per element of the B slabs). */
static warpfft_status make_ffts(wf_toeplitz *t) {
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
    if (st != WARPFFT_SUCCESS)
        return st;
    size_t bytes = work[0] > work[1] ? work[0] : work[1];
    st = wf_dbuf_alloc(&t->fft_work, bytes, "the cuFFT work area", &t->workspace);
    for (int i = 0; i < t->n_fft && st == WARPFFT_SUCCESS; i++) {
        cufftResult r = t->cufft->cufftSetWorkArea(t->fft[i], (void *)(uintptr_t)t->fft_work.ptr);
        if (r == 0)
            r = t->cufft->cufftSetStream(t->fft[i], t->ex.stream);
        if (r != 0)
            st = wf_cufft_error(r, "cufftSetWorkArea / cufftSetStream (Toeplitz)");
    }
    return st;
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

cufftResult wf_toeplitz_release(wf_toeplitz *t) {
    cufftResult first = 0;
    for (int i = 0; i < 2; i++) {
        if (!t->fft_created[i])
            continue;
        cufftResult r = t->cufft->cufftDestroy(t->fft[i]);
        if (r != 0 && first == 0)
            first = r;
        t->fft_created[i] = 0;
    }
    wf_dbuf_free(&t->grid, &t->workspace);
    wf_dbuf_free(&t->spectrum, &t->workspace);
    wf_dbuf_free(&t->fft_work, &t->workspace);
    return first;
}

/* Everything on the device; the context is current. Where the time went into *bt. */
static warpfft_status build(wf_toeplitz *t, CUdeviceptr x, CUdeviceptr y, CUdeviceptr z,
                            CUdeviceptr w, wf_toep_build_times *bt) {
    const wf_toep_params *q = &t->q;
    double t0 = now_ms();
    warpfft_status st = load_kernels(t);
    double t1 = now_ms();
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&t->grid, q->grid_bytes, "the Toeplitz grid", &t->workspace);
    double t2 = now_ms();
    if (st == WARPFFT_SUCCESS)
        st = make_ffts(t);
    double t3 = now_ms();
    bt->kernels_ms = t1 - t0;
    bt->buffers_ms = t2 - t1;
    bt->fft_plans_ms = t3 - t2;
    if (st != WARPFFT_SUCCESS || t->M == 0)
        return st;
    st = wf_dbuf_alloc(&t->spectrum, q->spectrum_bytes, "the Toeplitz spectrum", &t->workspace);
    bt->buffers_ms += now_ms() - t3;
    if (st == WARPFFT_SUCCESS) /* the kernel's type-1 output goes to the work grid */
        st = wf_toep_kernel(q, t->iflag, &t->ex, t->cufft, &t->k_weights, &t->k_spectrum, t->M, x,
                            y, z, w, t->grid.ptr, t->spectrum.ptr, "warpfft_toeplitz_create", bt);
    return st;
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
    if (st != WARPFFT_SUCCESS)
        wf_toeplitz_release(t); /* the build's failure is the one to report */
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
