/*
 * test_capture.h — what the stream-capture tests share (CUDA graphs; warpfft.h, "CUDA graphs";
 * api/capture.c): test_capture.c (main, the helpers below, plans the caller owns: what each
 * call does during a capture, the graph's hold on the plan, the legacy stream beside a blocking
 * capture, an invalidated capture) and test_capture_pool.c (the live-plan pool: plans captured
 * and released during a capture are the graph's until it is destroyed, then idle again or
 * destroyed; a release that cannot fence refused; graphs let go from another thread) and
 * test_capture_toeplitz.c (Toeplitz operators, the caller's and the pool's, alike). On the
 * stand-in driver of standin.h, which reports the captures the tests begin and counts as a
 * violation any allocation, free or module load during a capture, any wait for a capturing
 * stream and any host copy on it (what would break a real capture or bake freed memory into
 * the graph).
 */
#ifndef WARPFFT_TEST_CAPTURE_H
#define WARPFFT_TEST_CAPTURE_H

#include <stdint.h>

#include "standin.h"
#include "warpfft.h"

extern standin_get_fn get_counts;
extern standin_capture_begin_fn capture_begin;
extern standin_capture_end_fn capture_end;
extern standin_capture_invalidate_fn capture_invalidate;
extern standin_graph_destroy_fn graph_destroy;
extern standin_defer_destructors_fn defer_destructors;
extern standin_run_destructors_fn run_destructors;

enum { M = 300, NMAX = 64 };
extern void *xs, *ys, *cs, *fks; /* device arrays: 2 * M coordinates, 2 * M strengths, modes */

standin_counts counts(void);
/* warpfft_pool_get_info, checked. */
warpfft_pool_info info(void);
/* A 1D f32 plan of NMAX modes (type 1 or 2) on `stream`, the caller's (pool: 0) or the pool's
 * (pool: 1), with opts.check_points = check. */
int make_plan(int pool, int type, uint64_t stream, int check, warpfft_plan *plan);
/* setpts of m points (x = xs) and execute on cs, fks. */
int run_plan(warpfft_plan plan, int64_t m);
/* After a part: nothing of it left (allocations, cuFFT plans, events, user objects, graphs, the
 * context), no violation. */
void expect_clean(const char *part, const standin_counts *s0);

/* test_capture_pool.c */
void test_pool_capture(void);
void test_pool_capture_clear_and_discard(void);
void test_pool_release_refused(void);
void test_pool_release_during_capture_destroys_nothing(void);
void test_pool_graphs_threads(void);

/* test_capture_toeplitz.c */
void test_toeplitz_capture(void);

#endif /* WARPFFT_TEST_CAPTURE_H */
