/*
 * nufft12.h — the type 1 and type 2 transforms, internal: a spreader (spreader.h) on the fine
 * grid, cuFFT, and the deconvolution (type 1) or amplification (type 2) of the modes.
 *   nufft12.c       create and release: parameters for the device, the modules, the cuFFT plan,
 *                   fine grid and factors (through the plan cache), the spreader's arrays;
 *   nufft12_exec.c  setpts, execute and the check of a point set.
 * With p.spreadinterponly there is no FFT: the spreader works on the caller's fk.
 * The public plan functions (api/) and type 3's inner step (type3.c) use these; nothing here
 * calls the public ABI. Only create enters the device's context itself; every other function
 * runs in it, made current by the caller.
 */
#ifndef WARPFFT_PLANS_NUFFT12_H
#define WARPFFT_PLANS_NUFFT12_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "plans/launch.h"
#include "plans/spreader.h"
#include "runtime/cache.h"
#include "runtime/cufft.h"
#include "runtime/memory.h"

typedef struct wf_nufft12 {
    wf_params p;
    int iflag;
    int fft_dir; /* WF_CUFFT_INVERSE (iflag >= 0) or WF_CUFFT_FORWARD */
    wf_exec ex;
    const wf_cufft *cufft; /* NULL for spread/interp only */
    wf_kernel k_modes;     /* wf_deconvolve_p (type 1) or wf_amplify_p (type 2); real data:
                            * wf_deconvolve_half_p, wf_amplify_half_p */
    wf_dbuf fw;     /* ntransf * nfprod complex (none for spread/interp only); real data: ntransf *
                     * nfprod reals, then at wf_params_half_offset the half spectrum (the FFT's
                     * output for type 1, its input for type 2; wf_params_grid_bytes in all) */
    wf_dbuf fac[3]; /* N_d/2 + 1 reals per used dim, of width p.width */
    wf_dbuf fac_w[WF_MAX_WIDTHS - 1][3]; /* the same for the spreader's narrower widths (their
                                            pointers in its width tables: spreader_width.c) */
    wf_dbuf fft_work;
    cufftHandle fft;
    int fft_created;  /* fft exists (cufftCreate succeeded or it came from the cache) */
    int fft_made;     /* and is made, with its work area set (it may go to the cache) */
    size_t workspace; /* bytes of fw, fac and fft_work (the spreader counts its own) */
    wf_spreader sp;   /* spreads onto fw (type 1) or interpolates from it (type 2) */
    int has_points;   /* the last setpts succeeded */
} wf_nufft12;

/* ---- nufft12.c ---- */

/* A transform for parameters p chosen for ex's device (cufft: NULL for spread/interp only);
 * the device's context is current. Times each stage into *t. */
warpfft_status wf_nufft12_new(const wf_params *p, int iflag, const wf_exec *ex,
                              const wf_cufft *cufft, wf_create_times *t, wf_nufft12 **out);
/* What is known, at release, of the work a transform enqueued on its stream (wf_nufft12_release,
 * wf_nufft3_release): whether its buffers may go to the plan cache, and after what wait. */
enum {
    WF_WORK_PENDING = 0, /* it may still run: the stream (alive) is waited for first */
    WF_WORK_DONE = 1,    /* finished (the live-plan pool waited for the plan's fence): no wait;
                          * the stream may have been destroyed by its user since */
    WF_WORK_LOST = 2     /* unknowable (that wait failed): nothing goes to the cache, and the
                          * stream is not touched */
};

/* Gives the cuFFT plan, work area, fine grid and factors to the plan cache (when it keeps
 * them, and `work`, a WF_WORK_* value, allows), frees the rest; n itself stays (free() it).
 * Returns cufftDestroy's result (0 on success or without a cuFFT plan): every device buffer is
 * freed either way. */
cufftResult wf_nufft12_release(wf_nufft12 *n, int work);
/* Device bytes n holds, its spreader's included. */
size_t wf_nufft12_workspace(const wf_nufft12 *n);
/* The caller vouches for every point set being finite (type 3 checked them at setpts3): no
 * check at setpts, no NaN pass after execute. */
void wf_nufft12_trust_points(wf_nufft12 *n);

/* ---- nufft12_exec.c ---- */

/* Takes n_sets sets of M points each (device arrays of n_sets * M values, set after set; unused
 * dims ignored; n_sets checked by wf_spreader_sets_ok), replacing the previous points: set s
 * feeds transforms s * ntransf/n_sets ... Bins them asynchronously (checked mode: checks them,
 * naming `who`). n->has_points says whether it succeeded. */
warpfft_status wf_nufft12_setpts(wf_nufft12 *n, int64_t n_sets, int64_t M, CUdeviceptr x,
                                 CUdeviceptr y, CUdeviceptr z, const char *who);
/* Runs the transforms on the stream: type 1 c -> fk, type 2 fk -> c; then the NaN pass of an
 * unchecked point set. Needs points (has_points). */
warpfft_status wf_nufft12_execute(wf_nufft12 *n, CUdeviceptr c, CUdeviceptr fk);
/* Whether the point set still needs its check (not checked at setpts, M > 0). */
int wf_nufft12_unchecked(const wf_nufft12 *n);
/* The check of the point set (wf_spreader_check: one copy back, one wait), messages naming
 * `who`, then `after`. */
warpfft_status wf_nufft12_check_points(wf_nufft12 *n, const char *who, const char *after);
/* plan_get_info of a type 1 or 2 plan: width and beta are those the current points took once
 * known on the host (checked setpts, setpts_check, wf_nufft12_points_width), else p's. */
void wf_nufft12_info(const wf_nufft12 *n, warpfft_plan_info *info);
/* warpfft_plan_points_width of a type 1 or 2 plan: the widths it may run with, the current
 * points' (reading the choice back: one copy, one wait, when not known yet; 0 without points)
 * and their offsets' statistics (stats may be NULL). */
warpfft_status wf_nufft12_points_width(wf_nufft12 *n, int32_t widths[4], int32_t *n_widths,
                                       int32_t *in_use, uint64_t *stats, int64_t n_stats);

#endif /* WARPFFT_PLANS_NUFFT12_H */
