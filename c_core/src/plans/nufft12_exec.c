/*
 * nufft12_exec.c — running type 1 and type 2 transforms (nufft12.h) on their stream,
 * asynchronously, without allocating (setpts grows the spreader's per-point arrays only):
 *   type 1: zero fw, spread c -> fw, FFT in place, deconvolve fw -> fk;
 *   type 2: amplify fk -> fw (every fine-grid element written), FFT in place, interp fw -> c.
 * Real data (p.real_data): the real grid fwr and the half spectrum fwh share fw's buffer:
 *   type 1: zero fwr (unless OD), spread c -> fwr, R2C fwr -> fwh, deconvolve_half fwh -> fk;
 *   type 2: amplify_half fk -> fwh (every element written), C2R fwh -> fwr, interp fwr -> c.
 * R2C is the -i transform and C2R the +i one: the half kernels conjugate for the other sign
 * (kernels/ABI.md, WF_HALF_CONJ in their modeord).
 * With p.spreadinterponly the grid is fk itself: type 1 zeroes fk and spreads c -> fk, type 2
 * interpolates fk -> c (no FFT, no deconvolution).
 * Unchecked point sets (p.check_points = 0) end with the spreader's NaN pass over the outputs:
 * NaN everywhere when setpts flagged a non-finite coordinate, nothing otherwise.
 */
#include <stddef.h>
#include <stdint.h>

#include "params/params.h"
#include "plans/nufft12.h"
#include "runtime/error.h"

warpfft_status wf_nufft12_setpts(wf_nufft12 *n, int64_t n_sets, int64_t M, CUdeviceptr x,
                                 CUdeviceptr y, CUdeviceptr z, const char *who) {
    n->has_points = 0; /* from here on the old point set is being replaced */
    warpfft_status st = wf_spreader_setpts(&n->sp, n_sets, M, x, y, z, who);
    n->has_points = st == WARPFFT_SUCCESS;
    return st;
}

void wf_nufft12_trust_points(wf_nufft12 *n) {
    n->p.check_points = n->sp.p.check_points = 0;
    n->sp.trusted = 1;
}

int wf_nufft12_unchecked(const wf_nufft12 *n) {
    return !n->p.check_points && n->sp.M > 0;
}

warpfft_status wf_nufft12_check_points(wf_nufft12 *n, const char *who, const char *after) {
    return wf_spreader_check(&n->sp, who, after);
}

void wf_nufft12_info(const wf_nufft12 *n, warpfft_plan_info *info) {
    wf_params_to_info(&n->p, info);
    info->n_points = n->has_points ? n->sp.M : -1;
    info->n_sets = n->has_points ? n->sp.n_sets : -1;
    info->workspace_bytes = wf_nufft12_workspace(n);
    if (n->has_points && n->sp.use_gm) /* the points' interpolation (p.interp_gm_late) */
        info->method = WARPFFT_METHOD_GM;
    /* the width the points took, once read back (a checked setpts or setpts_check); else the
     * plan's, the widest it runs with (spreader_width.c) */
    const wf_pwidth *pw = &n->sp.pw;
    for (int i = 0; n->has_points && i < pw->n_w && pw->in_use > 0; i++)
        if (pw->width[i] == pw->in_use) {
            info->width = pw->width[i];
            info->beta = pw->beta[i];
        }
}

warpfft_status wf_nufft12_points_width(wf_nufft12 *n, int32_t widths[4], int32_t *n_widths,
                                       int32_t *in_use, uint64_t *stats, int64_t n_stats) {
    wf_pwidth *pw = &n->sp.pw;
    int nw = pw->n_w > 1 ? pw->n_w : 1;
    for (int i = 0; i < 4; i++)
        widths[i] = i < nw ? (nw > 1 ? pw->width[i] : n->p.width) : 0;
    *n_widths = nw;
    *in_use = 0;
    if (!n->has_points || n->sp.M <= 0)
        return WARPFFT_SUCCESS;
    warpfft_status st = WARPFFT_SUCCESS;
    if (nw > 1 && pw->in_use == 0) /* one copy of the result block, one wait */
        st = wf_spreader_check(&n->sp, "warpfft_plan_points_width", "");
    if (st == WARPFFT_SUCCESS && stats && n_stats > 0 && nw > 1)
        st = wf_spreader_width_stats_read(&n->sp, stats, n_stats);
    *in_use = nw > 1 ? pw->in_use : n->p.width;
    return st;
}

/* The half kernels' modeord bit asking for the conjugate (kernels/prep.cu, WF_HALF_CONJ). */
#define WF_HALF_CONJ 2

/* wf_deconvolve_p (in = fw, out = fk) or wf_amplify_p (in = fk, out = fw) over n items; their
 * _half forms for real data, with the exponent's sign: type 1 conjugates R2C's -i transform
 * for iflag >= 0, type 2 the modes before C2R's +i one for iflag < 0. */
static warpfft_status launch_modes(wf_nufft12 *n, CUdeviceptr in, CUdeviceptr out, int64_t count) {
    const wf_params *p = &n->p;
    int dim = p->dim, modeord = p->modeord;
    if (p->real_data && (p->type == 1 ? n->iflag >= 0 : n->iflag < 0))
        modeord |= WF_HALF_CONJ;
    long long N1 = p->n_modes[0], N2 = p->n_modes[1], N3 = p->n_modes[2];
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    long long ntransf = p->ntransf;
    CUdeviceptr fac1 = n->fac[0].ptr, fac2 = n->fac[1].ptr, fac3 = n->fac[2].ptr;
    /* several widths: the factors of the one the points took (kernels/ABI.md) */
    const wf_pwidth *pw = &n->sp.pw;
    CUdeviceptr w_sel = pw->n_w > 1 ? n->sp.result.ptr + offsetof(wf_setpts_result, w_sel) : 0;
    CUdeviceptr fac_tab = pw->n_w > 1 ? pw->tables.ptr + pw->plan_bytes : 0;
    void *args[] = {&dim,  &N1,   &N2,   &N3,      &nf1, &nf2, &nf3,   &ntransf,
                    &fac1, &fac2, &fac3, &modeord, &in,  &out, &w_sel, &fac_tab};
    return wf_exec_launch(&n->ex, &n->k_modes, count, args);
}

/* Real data: R2C/D2Z of the real grid into the half spectrum (type 1), C2R/Z2D back (type 2). */
static warpfft_status exec_fft_real(wf_nufft12 *n) {
    const wf_params *p = &n->p;
    void *fwr = (void *)(uintptr_t)n->fw.ptr;
    void *fwh = (void *)(uintptr_t)(n->fw.ptr + wf_params_half_offset(p));
    int f64 = p->precision == WARPFFT_F64;
    const wf_cufft *cf = n->cufft;
    cufftResult r = p->type == 1 ? (f64 ? cf->cufftExecD2Z : cf->cufftExecR2C)(n->fft, fwr, fwh)
                                 : (f64 ? cf->cufftExecZ2D : cf->cufftExecC2R)(n->fft, fwh, fwr);
    if (r != 0)
        return wf_cufft_error(
            r, p->type == 1
                   ? (f64 ? "cufftExecD2Z on the fine grid" : "cufftExecR2C on the fine grid")
                   : (f64 ? "cufftExecZ2D on the fine grid" : "cufftExecC2R on the fine grid"));
    return WARPFFT_SUCCESS;
}

/* In-place FFT of the whole batch on the fine grid (the cuFFT plan is bound to the stream). */
static warpfft_status exec_fft(wf_nufft12 *n) {
    if (n->p.real_data)
        return exec_fft_real(n);
    void *fw = (void *)(uintptr_t)n->fw.ptr;
    cufftResult r;
    if (n->p.precision == WARPFFT_F64)
        r = n->cufft->cufftExecZ2Z(n->fft, fw, fw, n->fft_dir);
    else
        r = n->cufft->cufftExecC2C(n->fft, fw, fw, n->fft_dir);
    if (r != 0)
        return wf_cufft_error(r, n->p.precision == WARPFFT_F64 ? "cufftExecZ2Z on the fine grid"
                                                               : "cufftExecC2C on the fine grid");
    return WARPFFT_SUCCESS;
}

/* The half spectrum of real data (wf_params_half_offset into fw), else the grid itself. */
static CUdeviceptr spectrum(const wf_nufft12 *n) {
    return n->p.real_data ? n->fw.ptr + wf_params_half_offset(&n->p) : n->fw.ptr;
}

static warpfft_status exec_type1(wf_nufft12 *n, CUdeviceptr c, CUdeviceptr fk) {
    const wf_params *p = &n->p;
    int64_t n_out = wf_fk_prod(p) * p->ntransf;
    if (n->sp.M == 0) /* no points: every mode is an empty sum */
        return wf_exec_memset(&n->ex, fk, (size_t)n_out * p->complex_bytes, "fk (no points)");
    if (p->spreadinterponly) /* the grid is fk: zero it, spread into it */
        return wf_spreader_spread(&n->sp, c, fk, "fk");
    warpfft_status st = wf_spreader_spread(&n->sp, c, n->fw.ptr, "the fine grid");
    if (st == WARPFFT_SUCCESS)
        st = exec_fft(n);
    if (st == WARPFFT_SUCCESS)
        st = launch_modes(n, spectrum(n), fk, n_out);
    return st;
}

static warpfft_status exec_type2(wf_nufft12 *n, CUdeviceptr c, CUdeviceptr fk) {
    const wf_params *p = &n->p;
    if (n->sp.M == 0) /* no outputs */
        return WARPFFT_SUCCESS;
    if (p->spreadinterponly) /* the grid is fk: interpolate from it */
        return wf_spreader_interp(&n->sp, fk, c);
    int64_t n_grid = (p->real_data ? wf_half_prod(p) : p->fine_prod) * p->ntransf;
    warpfft_status st = launch_modes(n, fk, spectrum(n), n_grid);
    if (st == WARPFFT_SUCCESS)
        st = exec_fft(n);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_interp(&n->sp, n->fw.ptr, c);
    return st;
}

warpfft_status wf_nufft12_execute(wf_nufft12 *n, CUdeviceptr c, CUdeviceptr fk) {
    const wf_params *p = &n->p;
    warpfft_status st = p->type == 1 ? exec_type1(n, c, fk) : exec_type2(n, c, fk);
    if (st == WARPFFT_SUCCESS && n->sp.M > 0) /* M = 0: no points, nothing to flag */
        st = p->type == 1
                 ? wf_spreader_poison(&n->sp, fk, wf_fk_prod(p) * p->ntransf, p->complex_bytes)
                 : wf_spreader_poison(&n->sp, c, n->sp.M * p->ntransf, wf_value_bytes(p));
    return st;
}
