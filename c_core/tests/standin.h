/*
 * standin.h — control API of the stand-in CUDA driver (standin_cuda*.c over standin_cuda.h,
 * built as libcuda.so.1) and cuFFT (standin_cufft.c, built as libcufft.so.12) of the
 * fault-injection suite (test_fault*.c, run by run_tests.sh).
 *
 * The stand-ins keep "device" memory on the host (malloc), check that every copy, memset, cuFFT
 * transform and the few emulated kernels stay inside one live allocation, and count what is live:
 * allocations, modules, link states, cuFFT plans, events, the context push depth. Every call of
 * either library gets a number; the armed one fails (cuMemAlloc with OUT_OF_MEMORY, cuFFT calls
 * with CUFFT_INTERNAL_ERROR, other driver calls with CUDA_ERROR_LAUNCH_FAILED), and the names of
 * the calls since the last arm are logged (standin_log). Release calls
 * (cuMemFree, cuModuleUnload, cuLinkDestroy, cufftDestroy, cuEventDestroy) release and then report
 * the failure; cuCtxPopCurrent never fails (the driver cannot fail a pop after a successful push).
 *
 * Kernels do not run: launches succeed without computing, except the binning kernels whose
 * totals a checked setpts (and warpfft_setpts_check) reads back (wf_bin_count_p: every point
 * into bin 0; wf_bin_scan, or module scan_big's three passes) and type 3's bounds
 * (wf_t3_minmax_p, read back by setpts3), which the driver stand-in computes on the host.
 */
#ifndef WARPFFT_STANDIN_H
#define WARPFFT_STANDIN_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct CUstream_st; /* CUstream (runtime/driver.h) */

typedef struct standin_counts {
    long calls;             /* numbered calls since the last standin_arm */
    long failed_at;         /* the call that failed (0: none failed) */
    char failed_fn[48];     /* its function name */
    long live_allocs;       /* cuMemAlloc minus cuMemFree */
    size_t live_bytes;      /* bytes of those */
    long live_modules;      /* cuModuleLoadData(Ex) minus cuModuleUnload */
    long live_links;        /* cuLinkCreate minus cuLinkDestroy */
    long live_fft_plans;    /* cufftCreate minus cufftDestroy */
    long ctx_depth;         /* pushes minus pops on this thread */
    long violations;        /* out-of-bounds accesses, bad frees, pops without a push, ... */
    long launches;          /* cuLaunchKernel calls that succeeded */
    long fft_creates;       /* cufftCreate calls that succeeded (ever) */
    long fft_makes;         /* cufftMakePlanMany64 calls that succeeded (ever) */
    long live_events;       /* cuEventCreate minus cuEventDestroy */
    long legacy_syncs;      /* cuStreamSynchronize of the legacy stream (0) that succeeded (ever) */
    long event_syncs;       /* cuEventSynchronize calls that succeeded (ever) */
    long captured;          /* work enqueued on capturing streams (ever): launches, memsets, FFTs */
    long live_graphs;       /* graphs of standin_capture_begin not yet standin_graph_destroy'ed */
    long live_user_objects; /* cuUserObjectCreate'd, not yet released to zero */
} standin_counts;

/* Fails numbered call `fail_at` (counting from 1 from now; 0: none) and resets the call count. */
typedef void (*standin_arm_fn)(long fail_at);
typedef void (*standin_get_fn)(standin_counts *out);
/* Sleeps `ms` in every cuModuleLoadData(Ex) (a slow JIT, for the fork test). */
typedef void (*standin_slow_load_fn)(int ms);
/* The stand-in GPU's memory: cuMemAlloc fails with OUT_OF_MEMORY, and cufftMakePlanMany64 with
 * CUFFT_ALLOC_FAILED (its own 4 KiB), beyond `bytes` live bytes; 0: no limit (the default). */
typedef void (*standin_mem_limit_fn)(size_t bytes);

/* Sleeps `ms` in every cuEventSynchronize (a plan's slow last work, for the pool's lock test). */
typedef void (*standin_slow_event_sync_fn)(int ms);
/* Declares stream s destroyed by its user (dead = 1) or alive again (0, e.g. a new stream with
 * the same handle): any later use of it (a synchronisation, an event record, an asynchronous
 * copy or memset, a launch, cufftSetStream, a cuFFT transform) is a violation. */
typedef void (*standin_stream_dead_fn)(struct CUstream_st *s, int dead);

/* Stream capture into CUDA graphs (standin_cuda_graphs.c). standin_capture_begin(s, flags):
 * stream s (not the legacy one) starts capturing into a new graph, returned (flags
 * STANDIN_CAPTURE_BLOCKING: s is a blocking stream, so the legacy stream cannot be used
 * meanwhile: cuStreamIsCapturing and cuStreamGetCaptureInfo_v2 fail on it with
 * STREAM_CAPTURE_IMPLICIT, and work on it is a violation). While s captures, work enqueued on it
 * (launches, memsets, event records, cuFFT transforms) is counted as captured
 * (standin_counts.captured; emulated kernels compute all the same), and waiting for s, a copy
 * between host and device on s, a wait for an event recorded during the capture, and (unless
 * STANDIN_CAPTURE_RELAXED: CUDA's relaxed capture mode) any allocation, free, module load or
 * link anywhere (CUDA's global capture mode) are violations. standin_capture_invalidate(s): the
 * capture is invalidated (status INVALIDATED). standin_capture_end(s): the capture ends (returns
 * the work captured into its graph; the graph lives until standin_graph_destroy).
 * standin_graph_destroy(g): the graph (and every executable graph of it) destroyed: the references
 * it holds on user objects are released, and the destructors of those at zero run now, or at
 * standin_run_destructors (which returns how many) after standin_defer_destructors(1) (CUDA runs
 * them on a thread of its own, maybe later). */
enum { STANDIN_CAPTURE_BLOCKING = 1, STANDIN_CAPTURE_RELAXED = 2 };
typedef void *(*standin_capture_begin_fn)(struct CUstream_st *s, int flags);
typedef void (*standin_capture_invalidate_fn)(struct CUstream_st *s);
typedef long (*standin_capture_end_fn)(struct CUstream_st *s);
typedef void (*standin_graph_destroy_fn)(void *graph);
typedef void (*standin_defer_destructors_fn)(int defer);
typedef int (*standin_run_destructors_fn)(void);

/* The calls numbered since the last standin_arm, one per line in order ("cuMemsetD8Async",
 * launches as "launch <kernel name>", cuFFT's as "cufftExecC2C", ...), into buf (at most cap bytes
 * with the NUL; cut at a line end when longer). Returns the number of calls. The first
 * STANDIN_LOG_MAX calls are kept; later ones are counted but not listed. */
typedef long (*standin_log_fn)(char *buf, size_t cap);
#define STANDIN_LOG_MAX 4096

/* The work area every stand-in cuFFT plan asks for (cufftMakePlanMany64's *work). */
#define STANDIN_FFT_WORK_BYTES 4096

/* Exported by libcuda.so.1 for libcufft.so.12: numbers a call (1: it must fail), checks a range. */
int standin_tick(const char *fn);
/* Names the last numbered call a launch of kernel `name` in the log (cuLaunchKernel). */
void standin_log_launch(const char *name);
int standin_check_range(const void *p, size_t bytes, const char *what);
void standin_fft_plans(int delta);
void standin_fft_made(void);
int standin_mem_room(size_t bytes); /* 1 when `bytes` more fit under the memory limit */
void standin_check_stream(struct CUstream_st *s, const char *what); /* a violation when s is dead */
void standin_stream_work(struct CUstream_st *s, const char *what);  /* captured when s captures */

/* For the tests: sets their pointers to the control functions above, looked up in libcuda.so.1
 * (the stand-in when it is first on LD_LIBRARY_PATH). Pairs of a name and the address of the
 * pointer (as void **), NULL after the last. Returns the library's handle (for dlclose) when
 * all were found; else prints a FATAL line saying what is missing and returns NULL. */
__attribute__((sentinel)) static inline void *standin_lookup(const char *name, ...) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
    va_list ap;
    va_start(ap, name);
    for (; h && name && !missing; name = va_arg(ap, const char *)) {
        void **fn = va_arg(ap, void **);
        if (!(*fn = dlsym(h, name)))
            missing = name;
    }
    va_end(ap);
    if (h && !missing)
        return h;
    printf("FATAL: the stand-in libcuda.so.1 is not first on LD_LIBRARY_PATH (%s%s)\n",
           h ? "no " : "", h ? missing : dlerror());
    return NULL;
}

#endif
