/*
 * capture.h — what a plan does while its stream is being captured into a CUDA graph
 * (capture.c), for the public calls of points.c and plan.c and the pool's hooks in plan_pool.c
 * (warpfft.h, "CUDA graphs"). Not installed.
 */
#ifndef WARPFFT_API_CAPTURE_H
#define WARPFFT_API_CAPTURE_H

#include "api/handle.h"

/* The capture state of the plan's stream (its device's context current), naming `who` in a
 * failure (wf_stream_capture). */
warpfft_status wf_plan_capture(const struct warpfft_plan_s *plan, const char *who, wf_capture *cap);

/* The plan joins the graph being captured (cap active), once per capture sequence: a user
 * object that graph owns holds a reference on the plan until the graph and every executable
 * graph instantiated from it are destroyed and their launches have finished (CUDA then runs its
 * destructor). Nothing changes on failure. */
warpfft_status wf_plan_join_graph(struct warpfft_plan_s *plan, const wf_capture *cap,
                                  const char *who);

/* Whether CUDA graphs hold the plan now (their work reads and writes its buffers). */
int wf_plan_in_graphs(const struct warpfft_plan_s *plan);

#endif /* WARPFFT_API_CAPTURE_H */
