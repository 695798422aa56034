/*
 * test_fault.h — what the parts of the fault-injection suite share (test_fault.c: the stand-in's
 * controls, the configurations, device arrays and plan helpers) and the parts main runs:
 *   test_fault_walk.c     plan lifecycles failing each driver/cuFFT call in turn, and the
 *                         failed setpts/destroy and stream-ordering cases;
 *   test_fault_cache.c    the plan cache: reuse, bounds, out-of-memory release, two threads;
 *   test_fault_modules.c  module loads: parallel, per direction, scan_big, one JIT, fork();
 *   test_fault_calls.c    the driver calls of repeated setpts/execute/setpts_check and of a
 *                         second plan of a shape (the stand-in's call log);
 *   test_fault_type3.c    type-3 lifecycles failing each call in turn;
 *   test_fault_toeplitz.c the Toeplitz operator's lifecycles failing each call in turn, the
 *                         calls of an application, its argument checks;
 *   test_fault_sets.c     batched points: switching between one set and several, arguments;
 *   test_fault_width.c    the width the points take, against the host rule;
 *   test_fault_real.c     real-valued data: the cuFFT plan kinds, modules, the plan cache and
 *                         the pool by kind, the requests that refuse it.
 */
#ifndef WARPFFT_TEST_FAULT_H
#define WARPFFT_TEST_FAULT_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "params/base.h"
#include "params/params.h"
#include "runtime/cache.h"
#include "runtime/driver.h"
#include "runtime/module.h"
#include "standin.h"
#include "warpfft.h"

/* The stand-in libcuda.so.1's controls (standin.h), resolved by main. */
extern standin_arm_fn arm;
extern standin_get_fn get;
extern standin_slow_load_fn slow_load;
extern standin_mem_limit_fn mem_limit;
extern standin_log_fn call_log;

typedef struct config {
    int type, dim, precision, method;
    int64_t ntransf;
    double upsampfac;
    uint64_t stream;   /* 0: legacy; else a stand-in stream (non-blocking) */
    int check_points;  /* opts.check_points: 1 = setpts syncs and reads the totals back */
    int32_t bin_size;  /* opts.bin_size in every dim (0: default); 1: more bins than
                          WF_SCAN_BIG_BINS in 3D, so setpts scans with module scan_big */
    int64_t n_sets;    /* > 1: batched points, warpfft_setpts_sets with that many sets of M
                          points (it divides ntransf); 0: warpfft_setpts */
    int deterministic; /* opts.deterministic: OD spreading and the stable sort's passes */
    int real;          /* opts.real_data: real strengths, the half modes, R2C / C2R */
} config;

/* "AUTO", "GM", "SM" or "OD". */
const char *method_name(int method);

/* The configurations walked (some parts pick one by index), n_configs of them. */
extern const config configs[];
extern const size_t n_configs;
enum { M = 300 };                /* points of every setpts */
extern const int64_t n_modes[3]; /* modes of every configuration's plan: 24, 10, 6 */

/* The caller's arrays, allocated (outside any walk) through the stand-in. */
typedef struct arrays {
    void *x, *y, *z, *c, *fk;
} arrays;

/* Arrays of M points (times n_sets) and n_modes for configuration cf, each of exactly the bytes
 * execute may touch (real strengths and the half modes for cf->real); a failed allocation ends
 * the program. */
arrays arrays_make(const config *cf);
void arrays_free(arrays *a);
/* The options of configuration cf: method, upsampfac, stream, check_points, bin_size,
 * deterministic, real_data. */
void config_opts(const config *cf, warpfft_opts *o);
/* warpfft_setpts of M points, or warpfft_setpts_sets of cf->n_sets sets of M (n_sets > 1). */
int config_setpts(const config *cf, warpfft_plan plan, const arrays *a);
/* A 1D plan of N n0 at tol 1e-4, default options; a failure is a failed check (NULL). */
warpfft_plan make_plan(int type, int64_t n0, int64_t ntransf, int precision);
/* Destroys plan; a NULL plan or a failed destroy is a failed check. */
void destroy_plan(warpfft_plan plan);
/* Live allocations and cuFFT plans, and cufftMakePlanMany64 calls so far. */
standin_counts counts(void);

/* ---- test_fault_walk.c ---- */
/* Walks every configuration in the three plan-cache states; returns the lifecycles walked. */
long walk_all(void);
/* The plan-cache states a walk runs in, and their names. */
enum { CACHE_OFF, CACHE_COLD, CACHE_WARM };
extern const char *const cache_mode_name[];
/* Takes the cache's out-of-memory retries now as the baseline of check_status. */
void note_oom_baseline(void);
/* A walk's start: note_oom_baseline, then call k armed to fail. */
void walk_arm(long k);
/* Checks the status of `step` of a walk with call k failing: success only when nothing was
 * injected or the failed call was a release nothing depends on (or an allocation retried after
 * the cache was emptied since note_oom_baseline); else a status other than INTERNAL whose
 * message names the failed call. */
void check_status(const char *step, int st, long k);
/* How many lines of a call log start with prefix. */
int count_lines(const char *log, const char *prefix);
/* Sets *flag when the stand-in has injected its failure. */
void set_injected(int *flag);
/* A step of a walk: check_status, then set_injected(injected) (the walk's flag). */
void check_step(const char *step, int st, long k, int *injected);
/* One step of a walk with call k failing (`injected`: the walk's flag, an int): its status
 * checked (check_status); after a failure the same call, with nothing failing, must succeed (a
 * failed call leaves its handle usable: a destroy that failed can be repeated); after a success
 * that absorbed the injected failure, injection is disarmed. `walk` names the walk (a string)
 * in the message. */
#define WALK_STEP(walk, name, call, k, injected)                                                   \
    do {                                                                                           \
        int st_ = (call);                                                                          \
        check_step(name, st_, k, &(injected));                                                     \
        if (st_ == WARPFFT_SUCCESS && (injected))                                                  \
            arm(0);                                                                                \
        if (st_ != WARPFFT_SUCCESS) {                                                              \
            arm(0);                                                                                \
            st_ = (call);                                                                          \
            CHECK(st_ == WARPFFT_SUCCESS, "%s, k %ld: %s after a failed one: %s", walk, k, name,   \
                  warpfft_last_error());                                                           \
        }                                                                                          \
    } while (0)
/* The end of one walk: disarms injection, releases the cache, then checks that nothing of the
 * walk is left on the stand-in (allocations beyond base_allocs, cuFFT plans, link states,
 * pushed contexts, violations, modules the module table does not record); the printf-style
 * label names the walk in the message, k its failing call. */
void check_walk_left_nothing(long base_allocs, long k, const char *label_fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One lifecycle of configuration cf (its arrays a) with call k failing, in cache state `cache`;
 * returns 1 when the failure was injected somewhere. */
typedef int (*walk_fn)(const void *cf, const void *a, long k, long base_allocs, int cache);
/* The walks of one configuration (its arrays made) in each cache state: k = 1, 2, ... until a
 * lifecycle runs to its end without an injected failure, then report(cf, cache, that k).
 * Returns the lifecycles walked. */
long walk_cache_modes(walk_fn walk, void (*report)(const void *cf, int cache, long k),
                      const void *cf, const void *a);
void test_setpts_keeps_points(void);
void test_stream_order(void);

/* ---- test_fault_cache.c ---- */
void test_cache_reuse(void);
void test_cache_bounds(void);
void test_cache_oom(void);
void test_cache_threads(void);

/* ---- test_fault_modules.c (test_parallel_loads first: it needs nothing loaded yet) ---- */
void test_parallel_loads(void);
void test_module_per_direction(void);
void test_scan_big_module(void);
void test_one_jit_per_module(void);
void test_fork(void);
void test_module_without_images(void);

/* ---- test_fault_calls.c ---- */
void test_steady_calls(void);
void test_late_gm(void);
/* The stable sort's three radix passes on the stand-in (bounds-checked scratch). */
void test_stable_passes(void);

/* ---- test_fault_type3.c ---- */
/* Walks type-3 lifecycles (create, setpts3, execute, setpts3 on new grids, execute, destroy)
 * failing each call in turn, in the three cache states; returns the lifecycles walked. */
long walk_type3(void);
/* The calls of a repeated setpts3 and execute: one context push each, no allocation. */
void test_type3_steady_calls(void);

/* ---- test_fault_width.c ---- */
/* The width the points take: the choice read back against the host rule, the statistics
 * against wf_offsets_gather, point sets, plans of one width, the offsets plan's cost. */
void test_points_width(void);

/* ---- test_fault_sets.c ---- */
/* Batched points (the walks above run configurations with point sets too): a plan alternating
 * one point set and several (the sets' bins made once and kept, scan_big loaded when they need
 * it, a failed growth freed again), its info and workspace; the argument checks. */
void test_sets_switching(void);
void test_sets_arguments(void);

/* ---- test_fault_real.c ---- */
/* Real-valued data beside the walks of the real configurations: each type and precision's
 * cuFFT plan kind, modules and info; the plan cache and the pool by kind; the refusals. */
void test_real_data(void);

/* ---- test_fault_toeplitz.c ---- */
/* Walks Toeplitz operator lifecycles (create with its kernel, apply, adjoint, apply_spectrum,
 * the stand-alone spectrum, a zero operator, destroy) failing each call in turn, in the three
 * cache states; returns the lifecycles walked. */
long walk_toeplitz(void);
/* The calls of an application (one push, pad, FFT steps, product, inverse steps, crop). */
void test_toeplitz_steady_calls(void);
/* Argument errors, warpfft_toeplitz_params' sizes, info and workspace. */
void test_toeplitz_arguments(void);

#endif /* WARPFFT_TEST_FAULT_H */
