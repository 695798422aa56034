/*
 * capture.h — what a plan does while its stream is being captured into a CUDA graph, for the
 * public calls of points.c and plan.c (warpfft.h, "CUDA graphs"): the plan's side of live.h's
 * graph calls (capture.c), which a Toeplitz operator (toeplitz.c) uses directly. Not installed.
 */
#ifndef WARPFFT_API_CAPTURE_H
#define WARPFFT_API_CAPTURE_H

#include "api/handle.h"

/* The capture state of the plan's stream (its device's context current), naming `who` in a
 * failure (wf_stream_capture). */
warpfft_status wf_plan_capture(const struct warpfft_plan_s *plan, const char *who, wf_capture *cap);

/* The plan joins the graph being captured (wf_live_join_graph). */
static inline warpfft_status wf_plan_join_graph(struct warpfft_plan_s *plan, const wf_capture *cap,
                                                const char *who) {
    return wf_live_join_graph(&plan->live, wf_handle_exec(plan), cap, who);
}

/* Whether CUDA graphs hold the plan now (their work reads and writes its buffers). */
static inline int wf_plan_in_graphs(const struct warpfft_plan_s *plan) {
    return wf_live_in_graphs(&plan->live);
}

#endif /* WARPFFT_API_CAPTURE_H */
