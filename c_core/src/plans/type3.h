/*
 * type3.h — type-3 transforms (non-uniform to non-uniform), internal (type3.c;
 * params/type3_params.h has the math and the host-side choice). A type-3 transform owns, for
 * the grids its current point sets need (rebuilt at setpts3 when those change):
 *  - a spreader (plans/spreader.h) with its own grid nf, in the internal precision, over the
 *    rescaled sources x';
 *  - an inner type-2 transform (plans/nufft12.h) with n_modes = nf and modeord 1 (the spreading
 *    grid holds position l*h at index l mod nf: FFT order), over the rescaled targets s'.
 * The public plan functions (api/) use these; only create enters the device's context itself,
 * every other function runs in it, made current by the caller.
 */
#ifndef WARPFFT_PLANS_TYPE3_H
#define WARPFFT_PLANS_TYPE3_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "params/type3_params.h"
#include "plans/launch.h"
#include "plans/nufft12.h"
#include "plans/spreader.h"
#include "runtime/cufft.h"
#include "runtime/memory.h"

#define WF_T3_KEYS 12 /* u64 keys: x min[3], x max[3], s min[3], s max[3]; then the i32 flag */

typedef struct wf_nufft3 {
    wf_params p; /* type 3, dim, precision, tol, ntransf: what plan_get_info reports first */
    int iflag;
    wf_exec ex;
    const wf_cufft *cufft;
    warpfft_opts opts; /* the user's, resolved */
    wf_t3_params q;    /* the current choice (valid when has_grid) */
    int has_grid;      /* spread and inner exist for q's grids */
    wf_spreader spread;
    wf_nufft12 *inner;
    int64_t M, K;   /* sources and targets per point set */
    int64_t n_sets; /* point sets (warpfft_setpts3_sets), each of M sources and K targets */
    int has_points; /* the last setpts3 succeeded */
    /* kernels of module type3_p; [0]: inner f32, [1]: inner f64 */
    wf_kernel k_minmax, k_sources[2], k_targets[2], k_pre[2], k_post[2];
    wf_dbuf keys, geom;
    wf_dbuf xp[3], sp[3]; /* rescaled coordinates (internal precision) */
    wf_dbuf pre, post;    /* pre-phase per source, post-factor per target (complex) */
    wf_dbuf cbuf;         /* pre-phased strengths, ntransf*M */
    wf_dbuf obuf;         /* inner output when the precisions differ, ntransf*K */
    size_t workspace;     /* bytes of the buffers above (spread and inner count their own) */
    uint64_t keys_host[WF_T3_KEYS + 1];
    double geom_host[WF_T3_G_COUNT];
    int nq;
} wf_nufft3;

/* A type-3 transform for the arguments of warpfft_plan_create (n_modes unused): argument errors
 * first, then the device of opts, its kernels and small buffers, in its context (entered here).
 * The grids wait for the points (wf_nufft3_setpts). */
warpfft_status wf_nufft3_create(int dim, int iflag, int64_t ntransf, double tol, int precision,
                                const warpfft_opts *opts, wf_nufft3 **out);
/* Takes n_sets sets of M sources (x, y, z) and of K targets (s, t, u), device arrays of n_sets * M
 * and n_sets * K values, set after set (unused dims 0; n_sets >= 1 divides ntransf, at most
 * WF_MAX_SETS, checked by the caller): their bounds (one sync; BAD_POINTS for a NaN/inf), the
 * choice for the bounds of all sets, new grids when it changed, the rescaled points and both
 * binnings (every set at once); returns when the caller's arrays are no longer read. Messages
 * name `who`. n->has_points says whether it succeeded. */
warpfft_status wf_nufft3_setpts(wf_nufft3 *n, int64_t n_sets, int64_t M, const CUdeviceptr xyz[3],
                                int64_t K, const CUdeviceptr stu[3], const char *who);
/* c (ntransf * M strengths) -> fk (ntransf * K values at the targets), on the stream. Needs
 * points (has_points). */
warpfft_status wf_nufft3_execute(wf_nufft3 *n, CUdeviceptr c, CUdeviceptr fk);
/* Frees every device buffer, the inner transform's going to the plan cache where it keeps them
 * (and `work`, a WF_WORK_* value of nufft12.h, allows); n itself stays (free() it). Returns the
 * inner cufftDestroy's result (0: success, or none). */
cufftResult wf_nufft3_release(wf_nufft3 *n, int work);
/* plan_get_info of a type-3 plan. */
void wf_nufft3_info(const wf_nufft3 *n, warpfft_plan_info *info);
/* Device bytes n holds, its spreader's and inner transform's included. */
size_t wf_nufft3_workspace(const wf_nufft3 *n);

#endif /* WARPFFT_PLANS_TYPE3_H */
