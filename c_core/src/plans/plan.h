/*
 * plan.h — the internal plan (struct warpfft_plan_s), shared by plan.c (create/destroy/info),
 * setpts.c (binning) and execute.c (spread/interp, FFT, deconvolve). Not installed.
 */
#ifndef WARPFFT_PLAN_H
#define WARPFFT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "runtime.h"

#define WF_BLOCK         256 /* threads per block for every grid-stride kernel (ABI.md) */
#define WF_SCAN_BLOCK    512 /* wf_bin_scan: exactly one block of this many threads */
#define WF_GRID_MAX      (65535u * 4u)
#define WF_BLOCKS_PER_SM 32 /* grid cap for grid-stride kernels: n_sm * this */

/* A device allocation the plan owns; `bytes` counts toward the plan's workspace. */
typedef struct wf_dbuf {
    CUdeviceptr ptr;
    size_t bytes;
} wf_dbuf;

/* A resolved kernel and its name (for error messages). */
typedef struct wf_kernel {
    CUfunction fn;
    char name[64];
} wf_kernel;

/* The device block setpts leaves its totals in (written by wf_bin_scan, the flag set by
 * wf_bin_scatter_p); read back only in checked mode and by warpfft_setpts_check. The SM
 * kernels take the address of n_subprob as their subproblem count. */
typedef struct wf_setpts_result {
    uint64_t n_sorted;    /* total of the bin counts (= M) */
    uint64_t n_subprob;   /* number of subproblems (SM), clamped to wf_params_subprob_cap */
    int32_t bad;          /* a NaN/inf coordinate */
    int32_t sub_overflow; /* the unclamped number exceeded the cap (a bug) */
} wf_setpts_result;

struct warpfft_plan_s {
    wf_params p;
    int iflag;
    int fft_dir; /* WF_CUFFT_INVERSE (iflag >= 0) or WF_CUFFT_FORWARD */
    const wf_driver *drv;
    const wf_device *dev;
    const wf_cufft *cufft;
    CUstream stream;

    /* kernels this plan uses (only these modules are loaded) */
    wf_kernel k_bin_count, k_scan; /* k_scan: wf_bin_scan, for plans without tile sums */
    /* wf_scan_big_reduce, _tiles, _down (module scan_big), for plans with tile sums */
    wf_kernel k_scan_big[3];
    wf_kernel k_scatter;      /* wf_bin_scatter_p: one record per point into sorted order */
    wf_kernel k_unpack;       /* wf_sort_unpack_p: records -> arrays (and the subproblem list) */
    wf_kernel k_poison;       /* wf_poison_u32: NaN outputs for a non-finite point set */
    wf_kernel k_modes;        /* wf_deconvolve_p (type 1) or wf_amplify_p (type 2) */
    wf_kernel k_spreadinterp; /* spread (type 1) or interp (type 2), GM or SM */

    /* allocated at creation */
    wf_dbuf fw;     /* ntransf * nfprod complex */
    wf_dbuf fac[3]; /* N_d/2 + 1 reals per used dim */
    wf_dbuf fft_work;
    wf_dbuf bin_count, bin_start; /* u64 per bin */
    wf_dbuf nsub_start;           /* u64 per bin (SM) */
    wf_dbuf result;               /* wf_setpts_result */
    wf_dbuf tile_sums;            /* u64 x 2 per tile (wf_params_scan_tiles; none: 0 tiles) */
    cufftHandle fft;
    int fft_created; /* fft exists (cufftCreate succeeded or it came from the cache) */
    int fft_made;    /* and is made, with its work area set (it may go to the cache) */

    /* per point set, grown by setpts */
    wf_dbuf sort_idx, bin_of, pos_in_bin; /* i64, i32, u32 (u64 for M >= 2^32) per point */
    wf_dbuf rec;         /* the scatter's records, rec_words(p, M) u32 words per point (setpts.c) */
    wf_dbuf xs[3];       /* the coordinates in sorted order, T per point per used dim */
    wf_dbuf subprob_bin; /* i32, nbins + ceil(M / maxsub) (SM) */
    int64_t point_cap;

    size_t workspace; /* sum of the bytes of every wf_dbuf above */

    /* the current point set */
    int has_points;
    int64_t M;
    CUdeviceptr x, y, z;          /* the user's coordinates (binning reads them) */
    wf_setpts_result result_host; /* target of the device-to-host copy of `result` */
    /* type 3's sub-plans: their points were checked finite by setpts3, so their executes need
     * no NaN pass (type3.c sets it) */
    int trusted_points;

    struct wf_type3 *t3; /* type 3 only (type3.c): sub-plans and buffers; NULL otherwise */
};

/* ---- hooks for type 3 (type3.c builds on plan.c and execute.c) ---- */
/* Device, driver and cuFFT for a plan, and its stream (no GPU work). */
warpfft_status wf_plan_attach(struct warpfft_plan_s *plan, const warpfft_opts *o);
/* A spread-only plan from plan->p (type 1 parameters): its kernels, SM limit, fine grid and
 * bins; no deconvolution factors, no cuFFT plan. Frees what it made on failure. The device's
 * context is current. Release with wf_plan_release_spreader, then free(). */
warpfft_status wf_plan_build_spreader(struct warpfft_plan_s *plan);
void wf_plan_release_spreader(struct warpfft_plan_s *plan);
/* The plan's modules (plan_kernels.c), in two steps around the rest of plan creation: _start
 * loads them, or for modules that must be compiled starts their loads on threads (*loading;
 * NULL when nothing was started); _finish waits for those (NULL is fine), takes the kernel
 * handles and sets the SM kernel's shared-memory limit. A _start that succeeded must be
 * followed by a _finish. */
warpfft_status wf_plan_start_modules(struct warpfft_plan_s *plan, wf_preload **loading);
warpfft_status wf_plan_finish_modules(struct warpfft_plan_s *plan, wf_preload *loading);
/* Zeroes the fine grid and spreads c (ntransf*M) onto it, on the plan's stream (execute.c). */
warpfft_status wf_plan_spread(struct warpfft_plan_s *plan, CUdeviceptr c);

/* Allocation through wf_alloc that keeps plan->workspace current. */
warpfft_status wf_plan_alloc(struct warpfft_plan_s *plan, wf_dbuf *b, size_t bytes,
                             const char *what);
void wf_plan_free(struct warpfft_plan_s *plan, wf_dbuf *b);

/* Launches a grid-stride kernel over n items on the plan's stream: block WF_BLOCK, grid
 * min(ceil(n / WF_BLOCK), n_sm * WF_BLOCKS_PER_SM); nothing for n <= 0. */
warpfft_status wf_plan_launch(const struct warpfft_plan_s *plan, const wf_kernel *k, int64_t n,
                              void **args);

/* cuMemsetD8Async of bytes on the plan's stream; nothing for bytes == 0. */
warpfft_status wf_plan_memset(const struct warpfft_plan_s *plan, CUdeviceptr p, size_t bytes,
                              const char *what);

/* Device pointer of a user array. */
static inline CUdeviceptr wf_dptr(const void *p) {
    return (CUdeviceptr)(uintptr_t)p;
}

#endif /* WARPFFT_PLAN_H */
