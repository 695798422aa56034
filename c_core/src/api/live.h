/*
 * live.h — what every live GPU handle of the public ABI keeps for the live-plan pool and for CUDA
 * graphs, alike for a plan (handle.h, struct warpfft_plan_s) and a Toeplitz operator (struct
 * warpfft_toeplitz_s): whether the pool owns it, its fence (an event recorded on its stream
 * when it goes back to the pool, waited for before the pool destroys it, so that no destroy
 * waits for a stream its user may have destroyed, nor for another caller's work on it), and the
 * graphs that captured its work (they own it until CUDA destroys them). The fence and the wait
 * are live.c's; joining a graph is capture.c's. Not installed.
 */
#ifndef WARPFFT_API_LIVE_H
#define WARPFFT_API_LIVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "plans/launch.h"
#include "runtime/driver.h"
#include "warpfft.h"

typedef struct wf_live {
    int pooled;      /* the pool's: the public destroy refuses it */
    CUevent fence;   /* recorded on the stream at each release to the pool (made at the first) */
    int fence_state; /* WF_FENCE_*: what is known of the work enqueued so far */
    int eager_work;  /* work enqueued outside a stream capture since the last fence (the
                      * creation's uploads included): a release during a capture, which cannot
                      * record a fence, refuses it */
    /* the graphs that hold work of this handle captured from its stream own it until they are
     * destroyed (their user objects' destructors count them down, on a driver thread); the
     * last capture sequence it joined */
    atomic_int graph_refs;
    uint64_t capture_id;
    int captured; /* capture_id is set */
} wf_live;

/* wf_live.fence_state. SET: `fence` follows all the handle's work (recorded at its last
 * release); NONE: no fence follows it (the record failed: the stream itself is waited for, at
 * release, while it is known alive); WAITED / LOST: the pool waited for it before a destroy that
 * failed, successfully / not (a retry does not wait again). */
enum { WF_FENCE_NONE = 0, WF_FENCE_SET = 1, WF_FENCE_WAITED = 2, WF_FENCE_LOST = 3 };

/* What is known of a handle's enqueued work when it is destroyed (plans/nufft12.h's WF_WORK_*,
 * whose release takes it: PENDING, DONE or LOST). */

/* ---- live.c: the fence ---- */

/* Records the fence on ex's stream after all the work enqueued so far, on any stream: the
 * legacy one (0) too, so that destroying the handle waits for its own work, never for the
 * stream. `who` names the release in messages. On failure the handle has no fence (its stream
 * is waited for instead, while it is known alive: the pool destroys it at once).
 * While the stream is being captured into a CUDA graph (*capturing = 1) nothing can be recorded
 * on it (the record would be a node of the graph): the fence stays as it was, which covers the
 * handle's work when none was enqueued outside the capture since (its creation's included:
 * WARPFFT_SUCCESS); WARPFFT_ERR_UNSUPPORTED (the pool refuses the release, nothing changed)
 * when some was, or when the capture state cannot be read (an invalidated capture, the legacy
 * stream beside a blocking capture). */
warpfft_status wf_live_fence(wf_live *l, const wf_exec *ex, const char *who, int *capturing);
/* Waits for the handle's work as its fence state says (its fence; without one, its stream);
 * returns what the release may assume of it: WF_WORK_DONE or WF_WORK_LOST (the wait failed:
 * *st says why), or WF_WORK_PENDING when the context could not be entered (*st: why; nothing
 * can be destroyed either). */
int wf_live_wait(wf_live *l, const wf_exec *ex, warpfft_status *st);
/* Destroys the fence (the context current); nothing waits on it any more. */
void wf_live_drop_fence(wf_live *l, const wf_exec *ex);
/* The device side of destroying a handle h (a `what`, "plan" or "operator", of public call
 * `who`): in the context of ex's device, release(h, work) frees its device buffers and cuFFT
 * plans, then the fence goes. On failure the handle stays valid (holding whatever could not be
 * released), so the caller can destroy it again instead of losing the device buffers with it,
 * and the message says so. On success the caller frees the host side. */
warpfft_status wf_live_destroy(wf_live *l, const wf_exec *ex, int (*release)(void *h, int work),
                               void *h, int work, const char *who, const char *what);

/* ---- capture.c: CUDA graphs ---- */

/* The handle joins the graph being captured (cap active), once per capture sequence: a user
 * object that graph owns holds a reference on it until the graph and every executable graph
 * instantiated from it are destroyed and their launches have finished (CUDA then runs its
 * destructor). Nothing changes on failure. `who` names the public call. */
warpfft_status wf_live_join_graph(wf_live *l, const wf_exec *ex, const wf_capture *cap,
                                  const char *who);
/* Whether CUDA graphs hold the handle now (their work reads and writes its buffers). Never
 * blocks (an atomic load). */
int wf_live_in_graphs(const wf_live *l);

#endif /* WARPFFT_API_LIVE_H */
