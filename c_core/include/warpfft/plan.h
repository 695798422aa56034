/*
 * warpfft/plan.h — NUFFT plans: types 1, 2 and 3, their points (one set or batched), execute,
 * destroy, what a plan chose, and the cache of destroyed plans' resources. Part of warpfft's
 * public C ABI: include <warpfft.h>, which includes every part (each part includes the parts it
 * needs and may be included alone; warpfft.h's opening comment states the conventions all of them
 * share).
 */
#ifndef WARPFFT_PLAN_H
#define WARPFFT_PLAN_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A plan handle: valid from a successful warpfft_plan_create until a successful
 * warpfft_plan_destroy (see there), like a pointer from malloc until free. */
typedef struct warpfft_plan_s *warpfft_plan;

/* What a plan chose; filled by warpfft_plan_get_info. */
typedef struct warpfft_plan_info {
    int32_t type, dim, precision, method; /* method: the one actually used (never AUTO) */
    int32_t width;                        /* kernel width in fine-grid points */
    double beta;                          /* kernel shape parameter (sinh type, docs/accuracy.md) */
    double upsampfac;
    int64_t n_modes[3]; /* N1, N2, N3 (1 for unused dims) */
    int64_t n_fine[3];  /* fine-grid size per dim (1 for unused dims) */
    int32_t bin_size[3];
    int64_t ntransf;
    int64_t n_points;       /* M of the last setpts, -1 before */
    size_t workspace_bytes; /* device memory the plan holds now */
    /* type 3 (after a setpts3 with M, K > 0; before, and for types 1 and 2: n_targets -1 and
     * the rest 0). Sources x_d = C_d + X_d*[-1, 1], targets s_d = D_d + S_d*[-1, 1];
     * spreading grid n_fine (== n_modes: the modes of the inner type-2 step) with kernel
     * width/beta; rescaled x' = (x - C)/gamma on it, inner targets s' = (2 pi/n_fine) gamma
     * (s - D); the inner type-2 step's own kernel and fine grid below. */
    int64_t n_targets;       /* K of the last setpts3, -1 before */
    int32_t inner_precision; /* precision the inner steps run in (an f32 plan may use f64) */
    int32_t inner_width;     /* kernel width of the inner type-2 step */
    double inner_beta;
    int64_t inner_fine[3];         /* fine grid of the inner type-2 step */
    double x_center[3], x_half[3]; /* C_d, X_d */
    double s_center[3], s_half[3]; /* D_d, S_d */
    double gamma[3];
    /* Rounding floor of the relative l2 error for points in [-pi, pi): the plan promises
     * max(tol, tol_floor) (docs/accuracy.md). Appended: the struct only grows at its end. */
    double tol_floor;
    /* The cost model's predicted execute time in ms (one call, on an H100) at the options'
     * points_hint points (or one per mode), and the spreading kernel (warpfft_kernel).
     * Appended. */
    double predicted_ms;
    int32_t kernel;
    /* opts.deterministic of the plan (1: bitwise-reproducible executes; method then says OD
     * for types 1 and 3). Appended. */
    int32_t deterministic;
    /* The point sets of the last setpts: 1 for warpfft_setpts / warpfft_setpts3 (every
     * transform takes the same points), n_sets for warpfft_setpts_sets / warpfft_setpts3_sets
     * (n_points, n_targets: per set); -1 before a setpts (and from warpfft_plan_params).
     * Appended. */
    int64_t n_sets;
    /* The tolerance the plan was made for: tol as given, or the nearer end of the precision's
     * range when it was outside (warpfft_tol_effective). Appended. */
    double tol;
    /* opts.real_data of the plan (1: real strengths, half modes; docs/c.md). Appended. */
    int32_t real_data;
} warpfft_plan_info;

/* ---- plans ---- */

/* Creates a plan. type 1, 2 or 3 (type 3: n_modes is ignored and may be NULL; the grids are
 * chosen at warpfft_setpts3, when the points' spreads are known); dim 1..3; n_modes[0..dim-1] >= 1
 * (entries past dim ignored); iflag: sign of the exponent (>= 0 means +1, < 0 means -1); ntransf >=
 * 1 transforms share one point set; tol: requested relative l2 accuracy, f32 1e-6..1e-1, f64
 * 1e-13..1e-1 (docs/accuracy.md: floors; one outside runs at the nearer end,
 * warpfft_tol_effective); opts may be NULL for defaults. Loads the kernels the
 * plan needs (JIT builds compile them now, each module once per process, several at a time),
 * creates the cuFFT plan and allocates the fine grid, or takes those from the plan cache when a
 * plan of the same shape was destroyed before (see warpfft_release_cached). */
WARPFFT_API warpfft_status warpfft_plan_create(int type, int dim, const int64_t n_modes[3],
                                               int iflag, int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan *plan);

/* Sets the M non-uniform points (device arrays of M reals of the plan's precision; y needed
 * for dim >= 2, z for dim 3; unused ones may be NULL). Sorts points into bins. The plan keeps
 * the pointers: the arrays must stay valid and unchanged until the next setpts or destroy.
 * Host sync: none with opts.check_points = 0 (the default): the binning is enqueued on the
 * stream and sized on the device; a NaN or infinite coordinate is reported through the plan's
 * outputs (NaN) and warpfft_setpts_check. With opts.check_points = 1 it waits once for its own
 * work on the stream and returns WARPFFT_ERR_BAD_POINTS for a non-finite coordinate.
 * On failure: argument errors and a failure to make the device's context current change
 * nothing (the previous points stay in use); any later failure leaves the plan without points
 * (execute returns WARPFFT_ERR_NO_POINTS until a setpts succeeds) and frees the per-point
 * arrays the failed call allocated. */
WARPFFT_API warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                                          const void *x, const void *y, const void *z);

/* Batched points: each transform (or each group of transforms) of the plan takes its own point
 * set. Sets n_sets sets of M points each: x, y, z are device arrays of n_sets * M reals of the
 * plan's precision, set after set (point j of set s at index s * M + j; y for dim >= 2, z for
 * dim 3). n_sets divides ntransf: set s feeds the tps = ntransf / n_sets transforms
 * s * tps .. s * tps + tps - 1 (n_sets = ntransf: one set per transform; n_sets = 1 is
 * warpfft_setpts). Execute's arrays keep their layout: c holds ntransf * M values,
 * transform t's at t * M (its points those of set t / tps), fk ntransf mode arrays. All the
 * sets are sorted in one pass and every later execute runs them in one launch per stage (types
 * 1 and 2: 1-3D, f32 and f64, methods GM and SM, spread/interp-only plans too; not method OD,
 * so not a deterministic type 1 or 3, which take one set). M is the same
 * for every set: pad a shorter set with points of strength 0 (type 1) or ignore the values
 * execute writes at the padding (type 2) -- docs/batched-points.md. Everything else as
 * warpfft_setpts (pointers kept, asynchronous, check_points, warpfft_setpts_check: a NaN or
 * infinite coordinate in any set makes every output of the plan NaN or fails a checked setpts).
 * WARPFFT_ERR_INVALID_ARG when n_sets < 1 or does not divide ntransf; WARPFFT_ERR_UNSUPPORTED
 * for more than 65535 sets or (n_sets > 1) a plan spreading by method OD; WARPFFT_ERR_BAD_SIZE when
 * n_sets times the plan's spreading bins reaches 2^31; WARPFFT_ERR_BAD_NPOINTS when n_sets * M
 * exceeds 2^56. Type 3: warpfft_setpts3_sets. warpfft_plan_info.n_sets reports the sets. (A warpfft
 * extension: the reference library has no such call.) */
WARPFFT_API warpfft_status warpfft_setpts_sets(warpfft_plan plan, warpfft_precision precision,
                                               int64_t n_sets, int64_t M, const void *x,
                                               const void *y, const void *z);

/* Waits for the plan's stream (so for its last setpts, and whatever was enqueued after it) and
 * returns WARPFFT_ERR_BAD_POINTS if the last setpts' points held a NaN or infinite coordinate
 * (the plan keeps them: its executes write NaN), WARPFFT_SUCCESS if they were all finite (or
 * M = 0, or opts.check_points = 1, where setpts has checked already), WARPFFT_ERR_NO_POINTS
 * without a successful setpts. Type 3: setpts3 checks itself; this returns its result too. */
WARPFFT_API warpfft_status warpfft_setpts_check(warpfft_plan plan);

/* Runs ntransf transforms. type 1: reads c (ntransf*M complex), writes fk (ntransf*N1*N2*N3
 * complex); type 2: reads fk, writes c; type 3: reads c (ntransf*M), writes fk (ntransf*K
 * complex, in the order of the targets). Asynchronous on the plan's stream; no allocation. */
WARPFFT_API warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c,
                                           void *fk);

/* Frees everything the plan holds, except what goes to the plan cache (warpfft_release_cached:
 * the cuFFT plan, its work area, the fine grid and the deconvolution factors, cached after
 * waiting for the plan's stream, as freeing them would). NULL is a no-op. Like free(): after a
 * successful destroy the handle is dangling, and passing it to any warpfft function
 * again (a second destroy included) is undefined behaviour that warpfft does not detect; set it
 * to NULL.
 * On failure (the device's context cannot be made current, or cufftDestroy fails) the plan is
 * not freed: it stays valid, holding only what could not be released, and
 * warpfft_plan_destroy may be called on it again. */
WARPFFT_API warpfft_status warpfft_plan_destroy(warpfft_plan plan);

/* The plan cache. Making a cuFFT plan takes milliseconds and the deconvolution factors ~20 ms
 * at N = 1e6, so warpfft_plan_destroy keeps a plan's cuFFT plan with its work area and fine
 * grid (keyed by device, fine grid, ntransf, precision) and its factors (keyed by precision,
 * N_d, fine size, width, beta) in a process-wide cache, and warpfft_plan_create takes them for
 * the next plan of that shape: re-creating a plan costs well under a millisecond. Idle items
 * are bounded: at most 32, and at most WARPFFT_PLAN_CACHE_MB MiB of device memory (default
 * 1024; 0 turns the cache off; read once), the least recently cached going first. A warpfft
 * device allocation or cuFFT plan that runs out of memory empties the cache and tries again,
 * so the cache never makes warpfft itself run out; other allocators do not see it, so call
 * this function to hand the memory back (e.g. before a large allocation elsewhere). It
 * destroys every idle item now; plans in use are untouched. The cache is emptied at exit and
 * forgotten in the child of a fork(). warpfft_runtime_info reports it ("plan_cache") and where
 * plan creation spent its time ("plan_create"). Thread-safe; always WARPFFT_SUCCESS. */
WARPFFT_API warpfft_status warpfft_release_cached(void);

/* plan_info.width and beta: the kernel the plan runs with. A type 1 or 2 plan may run a
 * narrower kernel than the width every point set meets tol with when the points allow it
 * (docs/accuracy.md, "The width the points need"); its setpts chooses on the device, without a
 * host sync. info then reports the width the current points took once a wait has read it back
 * (a setpts with opts.check_points, warpfft_setpts_check), and the plan's every-point-set width
 * (the widest it runs) otherwise, and before any setpts. */
WARPFFT_API warpfft_status warpfft_plan_get_info(warpfft_plan plan, warpfft_plan_info *info);

/* Device bytes the plan holds now (fine grid, cuFFT work area, sort and bin arrays). */
WARPFFT_API warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes);

/* Computes what warpfft_plan_create would choose (width, beta, fine grid, bins, method where
 * it does not depend on the GPU) without a GPU. Same argument checks as plan_create. */
WARPFFT_API warpfft_status warpfft_plan_params(int type, int dim, const int64_t n_modes[3],
                                               int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan_info *info);

/* ---- type 3 (non-uniform to non-uniform) ----
 *
 * f[k] = sum_j c[j] exp(iflag * i * (s_k . x_j)), k < K, j < M, as FINUFFT. The algorithm:
 * centre and rescale sources and targets (in double), pre-phase the strengths, spread them
 * onto a fine grid sized from the spreads X_d*S_d, evaluate that grid's Fourier series at the
 * rescaled targets with an inner type-2 step (FFT + interpolation), and divide by the
 * spreading kernel's Fourier transform at each target, times a phase. Width, grids and the
 * inner tolerance are chosen from tol with the same error prediction as types 1 and 2; f32
 * plans whose rescaled coordinates would lose too many bits in f32 run the inner steps in f64
 * (plan_info.inner_precision says which). */

/* Sets the M sources (x, y, z: device arrays of the plan's precision; y for dim >= 2, z for
 * dim 3) and the K targets (s, t, u likewise) of a type-3 plan, and chooses the grids (which
 * are reallocated when they change). M = 0: execute writes zeros; K = 0: execute does nothing
 * (as FINUFFT). The plan does not keep the pointers: the arrays may be freed or changed once
 * the call returns. Host syncs: one to read the bounds (a NaN or infinite coordinate gives
 * WARPFFT_ERR_BAD_POINTS, whatever opts.check_points says), and one at the end (the binnings
 * of sources and targets are enqueued without waiting; the wait is what lets the caller free
 * the arrays). WARPFFT_ERR_BAD_SIZE
 * names the grid a too large X_d*S_d would need. Type 1/2 plans refuse it (and type-3 plans
 * refuse warpfft_setpts). */
WARPFFT_API warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision,
                                           int64_t M, const void *x, const void *y, const void *z,
                                           int64_t K, const void *s, const void *t, const void *u);

/* Batched points for type 3: n_sets sets of M sources (x, y, z: n_sets * M reals each, set after
 * set) and of K targets (s, t, u: n_sets * K reals each); n_sets divides ntransf and transform
 * t uses set t / (ntransf / n_sets), its sources and its targets (as warpfft_setpts_sets). c
 * holds ntransf * M strengths, fk ntransf * K values. One choice of grids serves every set: that
 * of the bounds of all the sources and all the targets (plan_info reports it), so sets of very
 * different extents cost the grid of the widest. Checks, syncs and errors as warpfft_setpts3,
 * plus those of warpfft_setpts_sets for n_sets. */
WARPFFT_API warpfft_status warpfft_setpts3_sets(warpfft_plan plan, warpfft_precision precision,
                                                int64_t n_sets, int64_t M, const void *x,
                                                const void *y, const void *z, int64_t K,
                                                const void *s, const void *t, const void *u);

/* What warpfft_setpts3 would choose for sources in [x_lo[d], x_hi[d]] and targets in
 * [s_lo[d], s_hi[d]] (d < dim; finite, lo <= hi), without a GPU: the same checks as
 * plan_create(3, ...). Fills the type-3 fields of info; n_points and n_targets are -1;
 * workspace_bytes counts the grids only (no cuFFT work area, no per-point arrays). */
WARPFFT_API warpfft_status warpfft_plan_params3(int dim, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, const double x_lo[3],
                                                const double x_hi[3], const double s_lo[3],
                                                const double s_hi[3], warpfft_plan_info *info);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_PLAN_H */
