/*
 * warpfft/pool.h — the live-plan pool: plans and zero Toeplitz operators handed out by key to one
 * caller at a time. Part of warpfft's public C ABI: include <warpfft.h>, which includes every
 * part (each part includes the parts it needs and may be included alone; warpfft.h's opening
 * comment states the conventions all of them share).
 */
#ifndef WARPFFT_POOL_H
#define WARPFFT_POOL_H

#include "plan.h"
#include "toeplitz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the live-plan pool ----
 *
 * Every live GPU handle made for one call and reused by later ones: plans ready to run, and
 * zero Toeplitz operators (warpfft_pool_acquire_toeplitz; below), shared by everything in the
 * process that runs transforms one call at a time: the Python package's one-call functions,
 * its JAX handlers, PyTorch ops and Toeplitz operators, and any C caller. warpfft_pool_acquire
 * hands out an idle plan made with exactly the same arguments (every argument of
 * warpfft_plan_create, every field of opts, the stream and the device included), or creates
 * one; the plan is the caller's alone until warpfft_pool_release gives it back. Limits apply
 * to the idle handles, plans and operators together: at most max_plans of them holding at
 * most max_bytes of device workspace (their workspace_bytes at release; defaults 16 and 1 GiB,
 * from $WARPFFT_POOL_SIZE and $WARPFFT_POOL_BYTES, decimal digits, read at the first pool call,
 * or warpfft_pool_set_limits; the earlier names $WARPFFT_PLAN_CACHE_SIZE and
 * $WARPFFT_PLAN_CACHE_BYTES, are read when the new ones are unset, and are deprecated); beyond
 * them the least recently released go first. Handles in use are never destroyed under their
 * user: a clear or a limit that wants one destroys it when it is released.
 *
 * Streams: release records an event on the plan's stream (opts.stream) after the caller's
 * work, and a pooled plan is destroyed only after waiting for that event, never for the stream:
 * a caller may destroy its stream once it has released the plan. Release before destroying the
 * stream. The pool's lock is never held while a plan is created or destroyed or an event is
 * waited for.
 *
 * Points: release forgets the plan's points (the next acquirer must set its own; executing
 * without gives WARPFFT_ERR_NO_POINTS) unless flags has WARPFFT_POOL_KEEP_POINTS. A caller that
 * keeps points and wants them back later compares warpfft_plan_points_id after acquiring with
 * the id it read after its setpts: any setpts or setpts3 since (by whoever acquired the plan
 * meanwhile) changes it, and ids are never reused in the process, so equal ids mean the same
 * point set (whose arrays the caller must keep valid, as for any setpts).
 *
 * CUDA graphs: a plan whose work was captured into a graph (warpfft.h, "CUDA graphs") is the
 * graph's until it is destroyed: released, it counts as busy, and a clear or limit that wants
 * it (or WARPFFT_POOL_DISCARD) destroys it at the first pool call that destroys plans after
 * that; otherwise it is idle again. During a capture a release records no fence: it refuses
 * (WARPFFT_ERR_UNSUPPORTED, nothing changed) a plan that ran work outside the capture since it
 * was acquired.
 *
 * Thread-safe. A pooled plan must not be passed to warpfft_plan_destroy (it refuses with
 * WARPFFT_ERR_INVALID_ARG). Like the cache of plan resources, the pool is forgotten in the
 * child of a fork(); at exit its idle plans are not destroyed (the process's memory goes with
 * it; call warpfft_pool_clear first where that matters, e.g. under a leak checker). */

/* warpfft_pool_release flag: the plan keeps its points for a later acquirer. */
#define WARPFFT_POOL_KEEP_POINTS 1u
/* warpfft_pool_release flag: destroy the plan now instead of keeping it idle, e.g. one that ran
 * out of memory, so that its device memory is free before the caller tries a smaller plan
 * (its cuFFT plan, fine grid and factors go to the cache of plan resources, which a later
 * allocation that runs out of memory empties first). */
#define WARPFFT_POOL_DISCARD 2u

/* Filled by warpfft_pool_get_info. Counts since the process started, except where "now". */
typedef struct warpfft_pool_info {
    uint32_t struct_size; /* set by the caller to sizeof(warpfft_pool_info): the struct only grows
                           * at its end, and the library fills what fits in struct_size */
    uint32_t reserved;
    int64_t idle;                 /* idle handles (plans and operators) now */
    int64_t busy;                 /* acquired and not yet released, or held by a CUDA graph, now */
    int64_t idle_bytes;           /* device workspace of the idle handles now */
    int64_t max_plans, max_bytes; /* the limits on the idle handles */
    int64_t created;              /* handles the pool created (acquires that found no idle one) */
    int64_t hits;                 /* acquires served by an idle handle */
    int64_t destroyed; /* handles destroyed by limits, clears and releases into a full pool */
    /* Of idle, busy and created: the Toeplitz operators. Appended. */
    int64_t operators_idle, operators_busy, operators_created;
} warpfft_pool_info;

/* An idle plan of these arguments (same meaning and checks as warpfft_plan_create), or a new
 * one. *plan is valid until warpfft_pool_release. Argument errors as plan_create's. */
WARPFFT_API warpfft_status warpfft_pool_acquire(int type, int dim, const int64_t n_modes[3],
                                                int iflag, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, warpfft_plan *plan);
/* Gives back a plan from warpfft_pool_acquire (flags: 0, WARPFFT_POOL_KEEP_POINTS and/or
 * WARPFFT_POOL_DISCARD). It returns to the pool, or is destroyed now when asked to (DISCARD), a
 * clear came while it was in use, the pool is full or off (max_plans 0), or it alone exceeds
 * max_bytes: then a failure of that destroy or
 * of the wait for its work (an asynchronous error) is returned, after destroying. Either way
 * the handle is the caller's no more. WARPFFT_ERR_INVALID_ARG for NULL, a plan the pool did not
 * hand out, or one released already (nothing changes then). */
WARPFFT_API warpfft_status warpfft_pool_release(warpfft_plan plan, uint32_t flags);
/* A zero Toeplitz operator (M = 0: the work grid and the FFT plans of the application, no
 * spectrum) of these arguments (those of warpfft_toeplitz_create, with the same checks), idle
 * in the pool or new: for warpfft_toeplitz_apply_spectrum with a spectrum the caller holds
 * (warpfft_toeplitz_spectrum), as the JAX and PyTorch operators do per call. *op is the
 * caller's alone until warpfft_pool_release_toeplitz; the pool rules above hold as for plans:
 * the key (opts.stream and opts.device included), the limits, the fence recorded at release
 * (evicting it never waits for its stream), CUDA graphs (an application captured into a graph
 * makes the graph hold the operator), and warpfft_toeplitz_destroy refuses it. */
WARPFFT_API warpfft_status warpfft_pool_acquire_toeplitz(int dim, const int64_t n_modes[3],
                                                         int64_t ntransf, double tol,
                                                         warpfft_precision precision,
                                                         const warpfft_opts *opts,
                                                         warpfft_toeplitz *op);
/* Gives back an operator from warpfft_pool_acquire_toeplitz, as warpfft_pool_release does a
 * plan (flags: 0 or WARPFFT_POOL_DISCARD; WARPFFT_POOL_KEEP_POINTS changes nothing). */
WARPFFT_API warpfft_status warpfft_pool_release_toeplitz(warpfft_toeplitz op, uint32_t flags);
/* Destroys every idle handle now and every one in use at its release. Returns the first
 * failure of a destroy (or of the wait for a handle's work), after trying all. Does not empty
 * the cache of plan resources (warpfft_release_cached does). */
WARPFFT_API warpfft_status warpfft_pool_clear(void);
/* Changes the limits (a negative value leaves that one unchanged) and destroys the idle handles
 * beyond them; max_plans 0 turns pooling off. Returns as warpfft_pool_clear. */
WARPFFT_API warpfft_status warpfft_pool_set_limits(int64_t max_plans, int64_t max_bytes);
/* Counts and limits (info->struct_size set first; WARPFFT_ERR_INVALID_ARG when too small). */
WARPFFT_API warpfft_status warpfft_pool_get_info(warpfft_pool_info *info);

/* An id of the plan's current point set, unique in the process: 0 before the first setpts; a
 * new one whenever the points are replaced or lost (every warpfft_setpts/warpfft_setpts3 that
 * gets past its argument checks, failed ones included, and every warpfft_pool_release without
 * WARPFFT_POOL_KEEP_POINTS), and at any release of a plan whose id is still 0 (so a pooled plan
 * with id 0 is one warpfft_pool_acquire has just made). For callers that reuse a pooled plan's
 * points. */
WARPFFT_API warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_POOL_H */
