/*
 * memory.h — device memory for the core (memory.c): allocation with out-of-memory mapped to a
 * status, the accounted buffers plans own, and the hook that frees idle memory (the plan
 * cache registers it) before an allocation gives up.
 */
#ifndef WARPFFT_RUNTIME_MEMORY_H
#define WARPFFT_RUNTIME_MEMORY_H

#include <stddef.h>

#include "runtime/driver.h"

/* cuMemAlloc with OUT_OF_MEMORY mapped and a message naming `what` and the size. bytes == 0
 * gives *p = 0 and success. The current context must be the device's. */
warpfft_status wf_alloc(CUdeviceptr *p, size_t bytes, const char *what);
void wf_free(CUdeviceptr *p); /* frees and zeroes; 0 is a no-op */

/* What frees idle device memory when an allocation runs out (the plan cache, cache.c, registers
 * it at load): returns how many items it freed. NULL: nothing to free. */
typedef size_t (*wf_reclaim_fn)(void);
void wf_memory_set_reclaim(wf_reclaim_fn fn);
/* Calls the registered hook; 0 when none is registered or it freed nothing. wf_alloc calls it
 * after an out-of-memory (and then tries once more); so may callers whose own allocations
 * (cuFFT's) ran out. */
size_t wf_memory_reclaim(void);

/* A device allocation an object owns; `bytes` counts toward the object's workspace. */
typedef struct wf_dbuf {
    CUdeviceptr ptr;
    size_t bytes;
} wf_dbuf;
/* wf_alloc into b, adding its bytes to *workspace. */
warpfft_status wf_dbuf_alloc(wf_dbuf *b, size_t bytes, const char *what, size_t *workspace);
/* Frees b (a no-op when empty) and takes its bytes off *workspace. */
void wf_dbuf_free(wf_dbuf *b, size_t *workspace);

#endif /* WARPFFT_RUNTIME_MEMORY_H */
