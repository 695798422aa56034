/*
 * test_pool.h — what the live-plan pool's test files share: test_pool.c (main, the pool's
 * contract as one caller sees it) defines the stand-in's controls, the device arrays and the
 * helpers below; test_pool_stress.c (dead user streams, no waiting behind others, threads, a
 * fault walk) and test_pool_toeplitz.c (Toeplitz operators in the pool) use them and define the
 * parts main runs after its own.
 */
#ifndef WARPFFT_TEST_POOL_H
#define WARPFFT_TEST_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "standin.h"
#include "warpfft.h"

/* The stand-in libcuda.so.1's controls (standin.h), resolved by main. */
extern standin_arm_fn arm;
extern standin_slow_load_fn slow_load;
extern standin_stream_dead_fn stream_dead;
extern standin_slow_event_sync_fn slow_event_sync;

enum { M = 200, NMAX = 64 };
extern void *xs, *cs, *fks; /* device arrays of the single-threaded parts */

/* The stand-in's counters now. */
standin_counts counts(void);
/* A device allocation through warpfft_malloc; a failure ends the program. */
void *dmalloc(size_t bytes);
/* A 1D f32 plan of n0 <= NMAX modes from the pool (type 1 or 2), on `stream`, at tol 1e-4. */
int acquire(int type, int64_t n0, uint64_t stream, warpfft_plan *plan);
/* setpts + execute on xs, cs, fks (M points, NMAX modes). */
int run(warpfft_plan p);
/* warpfft_pool_get_info, checked. */
warpfft_pool_info info(void);
/* After a part: the pool cleared and the resource cache emptied, nothing of the part left. */
void expect_clean(const char *part, const standin_counts *s0);

/* test_pool_stress.c: the parts main runs after the single-caller ones. */
void test_dead_streams(void);
void test_dead_streams_type3(void);
void test_no_waiting_behind_others(void);
void test_threads(void);
void test_legacy_stream_threads(void);
void test_fault_walk(void);
/* test_pool_toeplitz.c: Toeplitz operators in the pool. */
void test_pool_toeplitz(void);

#endif
