/*
 * standin_cuda.h — internals shared by the files of the stand-in libcuda.so.1 (standin.h is its
 * control API for the tests; run_tests.sh links these files into the one shared object):
 *   standin_cuda.c          the state and counters, the control API, the numbered call that
 *                           fails, initialisation, devices, contexts, error strings;
 *   standin_cuda_memory.c   "device" memory with bounds checks, copies, memsets, streams, events;
 *   standin_cuda_modules.c  modules, link states, functions, kernel launches;
 *   standin_cuda_kernels.c  the binning kernels a checked setpts reads back, on the host; the
 *                           stable sort's passes and the OD spreader's launch, checked;
 *   standin_cuda_graphs.c   stream capture into CUDA graphs, user objects, and the checks of
 *                           work during a capture.
 *   standin_cuda_width.c    the width the points take: the offsets' gather and the choice on
 *                           the host, the launches that read the choice checked.
 * Everything here is hidden: the library exports only the driver's entry points and standin.h.
 */
#ifndef WARPFFT_STANDIN_CUDA_H
#define WARPFFT_STANDIN_CUDA_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/driver.h"
#include "standin.h"

#define API                      __attribute__((visibility("default")))
#define INTERNAL                 __attribute__((visibility("hidden")))
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_LAUNCH_FAILED 719
#define MAX_ALLOC_BYTES          ((size_t)1 << 30) /* the stand-in GPU's memory */

/* The counters standin_get reports (all but ctx_depth), under sc_lock. */
extern INTERNAL pthread_mutex_t sc_lock;
extern INTERNAL standin_counts sc_counts;
/* Pushes minus pops of the context on this thread. */
extern INTERNAL __thread long sc_depth;
/* Milliseconds every module load sleeps (standin_slow_load). */
extern INTERNAL int sc_slow_load_ms;

/* Counts a violation and prints fmt (with what, p, n) to stderr. Callers hold sc_lock (the
 * event checks, one thread's, excepted). */
INTERNAL void sc_violation(const char *fmt, const char *what, const void *p, size_t n);
/* A violation "NAME WHAT" of a kernel's launch contract (it would trap or write out of bounds),
 * taking sc_lock. */
INTERNAL void sc_named_violation(const char *what, const char *name);
/* The twin of c_core/src/params/grid.c's wf_fold (and kernels/common.cuh's), the same text:
 * the cells and bins the stand-in counts are the device's (standin_cuda_width.c). */
INTERNAL double sc_fold(double x, int64_t nf);
/* One more of *counter (a field of sc_counts), under the lock. */
INTERNAL void sc_count(long *counter);
/* A release call `fn`: numbers it, takes one off *live (a field of sc_counts) and frees p even
 * when this call is the one that fails (as the driver does), then reports the failure. */
INTERNAL CUresult sc_release(const char *fn, long *live, void *p);
/* Work on stream s (what: the call, for the message): a violation while a synchronous upload
 * may still be landing on the legacy stream (standin_cuda_memory.c). */
INTERNAL void sc_check_order(CUstream s, const char *what);
/* Stream capture (standin_cuda_graphs.c), sc_lock held: s's state (0 none, 1 capturing, 2 an
 * invalidated capture); work enqueued on s (counted as captured while s captures; a violation
 * on the legacy stream beside a blocking capture); work that must not go on a capturing stream
 * (a host copy, a wait: a violation). sc_capture_none (takes sc_lock): a violation when any
 * stream captures (allocations, frees, module loads: CUDA's global capture mode). */
INTERNAL int sc_capture_state_locked(CUstream s);
INTERNAL void sc_capture_work_locked(CUstream s, const char *what);
INTERNAL void sc_capture_forbid_locked(CUstream s, const char *what);
INTERNAL void sc_capture_none(const char *what);
/* A launch's geometry: grid, block and dynamic shared memory. */
typedef struct sc_geom {
    unsigned gx, gy, bx, shared;
} sc_geom;
/* Kernel `name` with its launch arguments and geometry: the binning kernels and module
 * sort_stable computed on the host, the OD spreader's launch checked against its traps, other
 * kernels nothing (standin_cuda_kernels.c). */
INTERNAL void sc_emulate(const char *name, void **args, const sc_geom *g);
/* The kernels of the width the points take (module offsets_{d}d_p computed, the launches that
 * read the choice checked: standin_cuda_width.c); 1 when name is one of them. */
INTERNAL int sc_emulate_width(const char *name, void **args, const sc_geom *g);

static inline void *dptr(CUdeviceptr p) {
    return (void *)(uintptr_t)p;
}

/* Numbers the call `name`; the armed one returns CUDA_ERROR_LAUNCH_FAILED from the caller. */
#define TICK(name)                                                                                 \
    do {                                                                                           \
        if (standin_tick(name))                                                                    \
            return CUDA_ERROR_LAUNCH_FAILED;                                                       \
    } while (0)

#endif /* WARPFFT_STANDIN_CUDA_H */
