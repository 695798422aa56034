/*
 * cache.h — the cache of idle plan resources (cache.c): cuFFT plans with their work areas and
 * fine grids, deconvolution factors, handed from a destroyed plan to the next of its shape; a
 * destroyed Toeplitz operator's step plans and device block, handed to the next operator of its
 * shape; and the statistics of plan creation that warpfft_runtime_info reports.
 */
#ifndef WARPFFT_RUNTIME_CACHE_H
#define WARPFFT_RUNTIME_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/cufft.h"
#include "runtime/driver.h"

#define WF_CACHE_MAX_ITEMS  32   /* idle items at most (cuFFT plans and factor arrays) */
#define WF_CACHE_DEFAULT_MB 1024 /* idle device bytes at most, unless WARPFFT_PLAN_CACHE_MB */

enum { WF_CACHE_FFT = 1, WF_CACHE_FACTORS = 2, WF_CACHE_TOEPLITZ = 3 };

/* One idle resource and what it was made for. FFT: a cuFFT plan (key: dim, n_fine[3],
 * ntransf, precision) with its work area (buf[0]) and a fine grid of its size (buf[1]).
 * FACTORS: the deconvolution factors of one dimension (key: precision, N_d, nf_d, width, the
 * bits of beta) in buf[0]. TOEPLITZ: a Toeplitz operator's application plans, fft (step 0)
 * and fft2 (step 1, when has_fft2), bound to the work area inside the operator's one device
 * block in buf[0] (work grid, spectrum, cuFFT work area; plans/toeplitz.c owns the key and the
 * layout). All made in dev's primary context. */
typedef struct wf_cache_item {
    int kind;
    const wf_device *dev;
    int64_t key[6];
    const wf_cufft *cufft; /* FFT, TOEPLITZ */
    cufftHandle fft;       /* FFT, TOEPLITZ */
    cufftHandle fft2;      /* TOEPLITZ with has_fft2 */
    int has_fft2;
    CUdeviceptr buf[2];
    size_t bytes[2];
} wf_cache_item;

/* An FFT item's identity: a cuFFT plan of `type` (WF_CUFFT_*) over the grid n (dim used),
 * ntransf batched, precision, in dev's context. Every FFT item is keyed here, so that plans of
 * one shape are shared (types 1 and 2, the Toeplitz kernel's grid) and plans of another
 * transform type (real data's R2C/C2R) never are. */
wf_cache_item wf_cache_fft_item(const wf_device *dev, int dim, const int64_t n[3], int64_t ntransf,
                                int precision, int type);
/* Looks for an idle item with want's kind, dev and key; on a hit moves it into *want (the
 * caller owns it now) and returns 1; else 0. */
int wf_cache_take(wf_cache_item *want);
/* Gives an idle item to the cache (its device work must be finished: the caller synchronised
 * the stream that used it); beyond the bounds the oldest items are destroyed (this one, if it
 * alone exceeds them). *it is zeroed: the cache owns it now. */
void wf_cache_put(wf_cache_item *it);
/* 1 when the cache is on and an item of `bytes` fits its byte bound (else put destroys it). */
int wf_cache_accepts(size_t bytes);
/* Destroys an item the caller owns (cuFFT plan and buffers, in its device's context). */
void wf_cache_destroy(wf_cache_item *it);
/* Destroys every idle item; returns how many there were. */
size_t wf_cache_release(void);
/* Overrides the bounds (tests); max_items 0 disables the cache. */
void wf_cache_set_limits(size_t max_items, size_t max_bytes);

/* Where plan creation spent its time (plans/nufft12.c and type3.c measure, warpfft_runtime_info
 * reports). */
typedef struct wf_create_times {
    double modules_ms; /* finding the kernels: module loads (JIT) on first use */
    double cufft_ms;   /* cufftCreate + cufftMakePlanMany (0 when the cache had the plan) */
    double alloc_ms;   /* device allocations (fine grid, work area, bins) */
    double factors_ms; /* deconvolution factors: computed and uploaded, or cached */
    double total_ms;   /* the whole warpfft_plan_create */
} wf_create_times;

/* Where the last Toeplitz operator's build spent its time (plans/toeplitz.c and
 * toeplitz_kernel.c measure, warpfft_runtime_info reports it as "toeplitz_build"): host wall
 * times, with the device's work inside the steps that wait for it (run_ms). */
typedef struct wf_toep_build_times {
    double kernels_ms;     /* the operator's kernels found (module loads on first use) */
    double buffers_ms;     /* its one device block (work grid, spectrum, the plans' work area)
                            * allocated and bound to the plans (0 when the plan cache had it) */
    double fft_plans_ms;   /* the application's cuFFT plans made (cufftCreate + MakePlanMany),
                            * or taken from the plan cache with the block (then about 0) */
    double kernel_plan_ms; /* the kernel's type-1 transform made (parameters, the plan cache's
                            * cuFFT plan, grid and factors, or new ones) and the L grid's FFT */
    double run_ms;     /* strengths, setpts (checked: it waits), execute, the L grid's FFT and the
                        * spectrum, until the stream is synchronised */
    double release_ms; /* the type-1 transform and the FFT given back to the cache or freed */
    double total_ms;   /* the whole warpfft_toeplitz_create (its build_ms) */
} wf_toep_build_times;

typedef struct wf_cache_stats {
    size_t items, bytes, max_items, max_bytes; /* idle now, and the bounds */
    uint64_t fft_hits, fft_misses, other_hits, other_misses, evicted, released, oom_retries;
    uint64_t toeplitz_hits, toeplitz_misses; /* Toeplitz items (other_*: the factors) */
    uint64_t plans;                          /* plan creations noted */
    wf_create_times total;                   /* summed over them */
    wf_create_times last;                    /* the latest */
    uint64_t toeplitz_builds;                /* Toeplitz operators built (M > 0) */
    wf_toep_build_times toeplitz_last;       /* the latest build */
} wf_cache_stats;

void wf_cache_note_create(const wf_create_times *t);
void wf_cache_note_toeplitz_build(const wf_toep_build_times *t);
void wf_cache_note_oom_retry(void);
void wf_cache_get_stats(wf_cache_stats *out);

#endif /* WARPFFT_RUNTIME_CACHE_H */
