/*
 * execute.c — runs a plan's transforms on its stream, asynchronously, without allocating:
 *   type 1: zero fw, spread c -> fw, FFT in place, deconvolve fw -> fk;
 *   type 2: amplify fk -> fw (every fine-grid element written), FFT in place, interp fw -> c.
 * With opts.spreadinterponly the grid is fk itself: type 1 zeroes fk and spreads c -> fk,
 * type 2 interpolates fk -> c (no FFT, no deconvolution).
 * Unchecked point sets (opts.check_points = 0) end with wf_poison_u32 over the outputs: NaN
 * everywhere when setpts flagged a non-finite coordinate, nothing otherwise.
 */
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "type3.h"

static warpfft_status check_args(const struct warpfft_plan_s *plan, int precision, const void *c,
                                 const void *fk) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: plan is NULL");
    if (!plan->has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS, "warpfft_execute: the plan has no points (call "
                                               "warpfft_setpts first; its last call failed or "
                                               "was never made)");
    if (precision != plan->p.precision)
        return wf_error(WARPFFT_ERR_PRECISION, "warpfft_execute: precision = %d but the plan is %s",
                        precision, wf_prec_name(plan->p.precision));
    if (!fk)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: fk is NULL");
    if (!c && plan->M > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_execute: c is NULL and M = %lld",
                        (long long)plan->M);
    return WARPFFT_SUCCESS;
}

/* wf_deconvolve_p (in = fw, out = fk) or wf_amplify_p (in = fk, out = fw) over n items. */
static warpfft_status launch_modes(struct warpfft_plan_s *plan, CUdeviceptr in, CUdeviceptr out,
                                   int64_t n) {
    const wf_params *p = &plan->p;
    int dim = p->dim, modeord = p->modeord;
    long long N1 = p->n_modes[0], N2 = p->n_modes[1], N3 = p->n_modes[2];
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    long long ntransf = p->ntransf;
    CUdeviceptr fac1 = plan->fac[0].ptr, fac2 = plan->fac[1].ptr, fac3 = plan->fac[2].ptr;
    void *args[] = {&dim,     &N1,   &N2,   &N3,   &nf1,     &nf2, &nf3,
                    &ntransf, &fac1, &fac2, &fac3, &modeord, &in,  &out};
    return wf_plan_launch(plan, &plan->k_modes, n, args);
}

/* In-place FFT of the whole batch on the fine grid (the cuFFT plan is bound to the stream). */
static warpfft_status exec_fft(struct warpfft_plan_s *plan) {
    void *fw = (void *)(uintptr_t)plan->fw.ptr;
    cufftResult r;
    if (plan->p.precision == WARPFFT_F64)
        r = plan->cufft->cufftExecZ2Z(plan->fft, fw, fw, plan->fft_dir);
    else
        r = plan->cufft->cufftExecC2C(plan->fft, fw, fw, plan->fft_dir);
    if (r != 0)
        return wf_cufft_error(r, plan->p.precision == WARPFFT_F64
                                     ? "cufftExecZ2Z on the fine grid"
                                     : "cufftExecC2C on the fine grid");
    return WARPFFT_SUCCESS;
}

/* SM spread/interp: one block per subproblem (grid-stride), grid.y over transforms. */
static warpfft_status launch_sm(struct warpfft_plan_s *plan, CUdeviceptr c, CUdeviceptr fw,
                                void *beta) {
    const wf_params *p = &plan->p;
    long long M = plan->M, ntransf = p->ntransf;
    /* the coordinates in sorted order (setpts), indexed like sort_idx */
    CUdeviceptr x = plan->xs[0].ptr, y = plan->xs[1].ptr, z = plan->xs[2].ptr;
    CUdeviceptr sort_idx = plan->sort_idx.ptr;
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    int bs1 = p->bin_size[0], bs2 = p->bin_size[1], bs3 = p->bin_size[2];
    long long nb1 = p->n_bins[0], nb2 = p->n_bins[1], nb3 = p->n_bins[2];
    CUdeviceptr bin_start = plan->bin_start.ptr, bin_count = plan->bin_count.ptr;
    CUdeviceptr nsub_start = plan->nsub_start.ptr, subprob_bin = plan->subprob_bin.ptr;
    /* the count setpts left on the device; the grid covers its upper bound (blocks past the
     * count return at once), so no host read is needed */
    CUdeviceptr n_subprob = plan->result.ptr + offsetof(wf_setpts_result, n_subprob);
    long long maxsub = p->maxsub;
    int64_t cap = wf_params_subprob_cap(p, plan->M);
    void *args[] = {&M,         &x,          &y,           &z,         &c,      &nf1,
                    &nf2,       &nf3,        &ntransf,     &sort_idx,  beta,    &bs1,
                    &bs2,       &bs3,        &nb1,         &nb2,       &nb3,    &bin_start,
                    &bin_count, &nsub_start, &subprob_bin, &n_subprob, &maxsub, &fw};
    unsigned gx = cap < (int64_t)WF_GRID_MAX ? (unsigned)cap : WF_GRID_MAX;
    unsigned gy = ntransf < 65535 ? (unsigned)ntransf : 65535u;
    return wf_launch(plan->k_spreadinterp.fn, plan->k_spreadinterp.name, gx, gy, WF_BLOCK,
                     (unsigned)p->tile_bytes, plan->stream, args);
}

/* Spread c -> grid (type 1) or interp grid -> c (type 2); the two share one parameter list.
 * grid: the fine grid, or fk for spread/interp only. */
static warpfft_status launch_spreadinterp(struct warpfft_plan_s *plan, CUdeviceptr c,
                                          CUdeviceptr fw) {
    const wf_params *p = &plan->p;
    float beta_f = (float)p->beta; /* the kernel's T beta: pass exactly sizeof(T) */
    double beta_d = p->beta;
    void *beta = p->precision == WARPFFT_F64 ? (void *)&beta_d : (void *)&beta_f;
    if (p->method == WARPFFT_METHOD_SM)
        return launch_sm(plan, c, fw, beta);
    long long M = plan->M, ntransf = p->ntransf;
    CUdeviceptr x = plan->xs[0].ptr, y = plan->xs[1].ptr, z = plan->xs[2].ptr;
    CUdeviceptr sort_idx = plan->sort_idx.ptr;
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    void *args[] = {&M, &x, &y, &z, &c, &nf1, &nf2, &nf3, &ntransf, &sort_idx, beta, &fw};
    return wf_plan_launch(plan, &plan->k_spreadinterp, M, args);
}

warpfft_status wf_plan_spread(struct warpfft_plan_s *plan, CUdeviceptr c) {
    warpfft_status st = wf_plan_memset(plan, plan->fw.ptr, plan->fw.bytes, "the fine grid");
    if (st == WARPFFT_SUCCESS)
        st = launch_spreadinterp(plan, c, plan->fw.ptr);
    return st;
}

static warpfft_status exec_type1(struct warpfft_plan_s *plan, CUdeviceptr c, CUdeviceptr fk) {
    const wf_params *p = &plan->p;
    int64_t n_out = p->mode_prod * p->ntransf;
    if (plan->M == 0) /* no points: every mode is an empty sum */
        return wf_plan_memset(plan, fk, (size_t)n_out * p->complex_bytes, "fk (no points)");
    if (p->spreadinterponly) { /* the grid is fk: zero it, spread into it */
        warpfft_status st = wf_plan_memset(plan, fk, (size_t)n_out * p->complex_bytes, "fk");
        return st == WARPFFT_SUCCESS ? launch_spreadinterp(plan, c, fk) : st;
    }
    warpfft_status st = wf_plan_memset(plan, plan->fw.ptr, plan->fw.bytes, "the fine grid");
    if (st == WARPFFT_SUCCESS)
        st = launch_spreadinterp(plan, c, plan->fw.ptr);
    if (st == WARPFFT_SUCCESS)
        st = exec_fft(plan);
    if (st == WARPFFT_SUCCESS)
        st = launch_modes(plan, plan->fw.ptr, fk, n_out);
    return st;
}

static warpfft_status exec_type2(struct warpfft_plan_s *plan, CUdeviceptr c, CUdeviceptr fk) {
    const wf_params *p = &plan->p;
    if (plan->M == 0) /* no outputs */
        return WARPFFT_SUCCESS;
    if (p->spreadinterponly) /* the grid is fk: interpolate from it */
        return launch_spreadinterp(plan, c, fk);
    warpfft_status st = launch_modes(plan, fk, plan->fw.ptr, p->fine_prod * p->ntransf);
    if (st == WARPFFT_SUCCESS)
        st = exec_fft(plan);
    if (st == WARPFFT_SUCCESS)
        st = launch_spreadinterp(plan, c, plan->fw.ptr);
    return st;
}

/* When the point set may hold a non-finite coordinate (not checked at setpts), the outputs
 * become NaN on the device if it did: n complex values at out. One small launch; its blocks
 * return at once when the flag is clear. Its grid is one block per SM at most: the error path
 * need not be fast, the common one should cost nothing. */
static warpfft_status launch_poison(struct warpfft_plan_s *plan, CUdeviceptr out, int64_t n) {
    if (plan->p.check_points || plan->trusted_points || n <= 0)
        return WARPFFT_SUCCESS;
    long long words = (long long)(n * (int64_t)(plan->p.complex_bytes / 4));
    CUdeviceptr flag = plan->result.ptr + offsetof(wf_setpts_result, bad);
    void *args[] = {&words, &flag, &out};
    int64_t blocks = words / WF_BLOCK + (words % WF_BLOCK != 0);
    int64_t cap = plan->dev->n_sm > 0 ? plan->dev->n_sm : 1;
    unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    return wf_launch(plan->k_poison.fn, plan->k_poison.name, grid, 1, WF_BLOCK, 0, plan->stream,
                     args);
}

WARPFFT_API warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c,
                                           void *fk) {
    wf_clear_error();
    if (plan && plan->p.type == 3)
        return wf_t3_execute(plan, (int)precision, c, fk);
    warpfft_status st = check_args(plan, (int)precision, c, fk);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (plan->p.type == 1)
        st = exec_type1(plan, wf_dptr(c), wf_dptr(fk));
    else
        st = exec_type2(plan, wf_dptr(c), wf_dptr(fk));
    if (st == WARPFFT_SUCCESS && plan->M > 0) /* M = 0: no points, nothing to flag */
        st = plan->p.type == 1
                 ? launch_poison(plan, wf_dptr(fk), plan->p.mode_prod * plan->p.ntransf)
                 : launch_poison(plan, wf_dptr(c), plan->M * plan->p.ntransf);
    wf_ctx_leave(plan->dev);
    return st;
}
