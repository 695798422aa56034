/*
 * cache.c — the process-wide cache of idle plan resources, so that a plan created after the
 * first of its shape costs well under a millisecond: a cuFFT plan (cufftMakePlanMany takes
 * milliseconds), its work area and the fine grid (cuMemAlloc/cuMemFree of up to GiBs), and the
 * deconvolution factors (computing phihat for N/2 + 1 modes takes ~20 ms for N = 1e6); and a
 * Toeplitz operator's step cuFFT plans with its device block (plans/toeplitz.c), so that the
 * next operator of its shape builds at about the cost of its kernel's type-1 transform.
 *
 * warpfft_plan_destroy (and warpfft_toeplitz_destroy) gives a plan's items to the cache after
 * waiting for the plan's stream (what cuMemFree waited for before; the live-plan pool waited for
 * the handle's fence instead), and warpfft_plan_create (warpfft_toeplitz_create) takes matching
 * ones, so an item is always owned by exactly one plan or by the cache. Idle items are bounded by
 * count (WF_CACHE_MAX_ITEMS) and by their device bytes (WARPFFT_PLAN_CACHE_MB, default 1024; 0
 * disables the cache); beyond either bound the least recently cached go first. A device
 * allocation or cuFFT plan that fails for want of memory empties the cache and is retried once
 * (memory.c, plans/nufft12.c, plans/toeplitz.c), so the cache never causes an out-of-memory of
 * warpfft's own.
 * warpfft_release_cached empties it on demand; an atexit handler empties it before the driver
 * and cuFFT unload. In the child of a fork() the items are forgotten (the child cannot use the
 * parent's CUDA state).
 *
 * Also kept here: the cumulative split of plan-creation time that warpfft_runtime_info reports
 * (module loads, cuFFT plan, allocations, factors), so a slow first plan can be explained.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cache.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"

typedef struct slot {
    wf_cache_item it;
    uint64_t stamp; /* when it was cached: the smallest goes first */
} slot;

static pthread_mutex_t wf_cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* All below guarded by wf_cache_lock. */
static slot wf_slots[WF_CACHE_MAX_ITEMS];
static size_t wf_n_slots, wf_slot_bytes;
static uint64_t wf_stamp;
static int wf_limits_set, wf_atexit_done;
static size_t wf_max_items, wf_max_bytes;
static wf_cache_stats wf_stats;

static void atfork_child(void) {
    pthread_mutex_init(&wf_cache_lock, NULL);
    wf_n_slots = 0; /* the parent's handles and pointers mean nothing here */
    wf_slot_bytes = 0;
}

/* Registered at load: a fork() while another thread holds the lock leaves it held in the child
 * (loader.c says what a child may still do). */
__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}

/* The out-of-memory hook (memory.h): an allocation that ran out frees every idle item and, when
 * there were some, tries again. */
static size_t reclaim_for_oom(void) {
    size_t n = wf_cache_release();
    if (n > 0)
        wf_cache_note_oom_retry();
    return n;
}

__attribute__((constructor)) static void register_reclaim(void) {
    wf_memory_set_reclaim(reclaim_for_oom);
}

/* Bounds from the environment, once (wf_cache_set_limits overrides them). */
static void limits_locked(void) {
    if (wf_limits_set)
        return;
    wf_limits_set = 1;
    wf_max_items = WF_CACHE_MAX_ITEMS;
    wf_max_bytes = (size_t)WF_CACHE_DEFAULT_MB << 20;
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    const char *mb = secure_getenv("WARPFFT_PLAN_CACHE_MB");
#else
    const char *mb = getenv("WARPFFT_PLAN_CACHE_MB");
#endif
    if (mb && mb[0]) {
        char *end = NULL;
        unsigned long long v = strtoull(mb, &end, 10);
        if (end && *end == '\0' && v <= ((size_t)-1 >> 20))
            wf_max_bytes = (size_t)v << 20;
        if (end && *end == '\0' && v == 0)
            wf_max_items = 0;
    }
}

void wf_cache_set_limits(size_t max_items, size_t max_bytes) {
    pthread_mutex_lock(&wf_cache_lock);
    wf_limits_set = 1;
    wf_max_items = max_items < WF_CACHE_MAX_ITEMS ? max_items : WF_CACHE_MAX_ITEMS;
    wf_max_bytes = max_bytes;
    pthread_mutex_unlock(&wf_cache_lock);
}

static size_t item_bytes(const wf_cache_item *it) {
    return it->bytes[0] + it->bytes[1];
}

void wf_cache_destroy(wf_cache_item *it) {
    if (!it->dev)
        return;
    /* Fails only in the child of a fork or with a broken context: then nothing can be freed. */
    if (wf_ctx_enter(it->dev) == WARPFFT_SUCCESS) {
        /* idle plans: nothing depends on the result */
        if ((it->kind == WF_CACHE_FFT || it->kind == WF_CACHE_TOEPLITZ) && it->cufft)
            it->cufft->cufftDestroy(it->fft);
        if (it->kind == WF_CACHE_TOEPLITZ && it->has_fft2 && it->cufft)
            it->cufft->cufftDestroy(it->fft2);
        wf_free(&it->buf[0]);
        wf_free(&it->buf[1]);
        wf_ctx_leave(it->dev);
    }
    memset(it, 0, sizeof *it);
}

/* Removes slot i (the caller destroys or hands out its item). */
static wf_cache_item remove_locked(size_t i) {
    wf_cache_item it = wf_slots[i].it;
    wf_slot_bytes -= item_bytes(&it);
    wf_slots[i] = wf_slots[--wf_n_slots];
    return it;
}

int wf_cache_take(wf_cache_item *want) {
    int found = 0;
    pthread_mutex_lock(&wf_cache_lock);
    size_t best = wf_n_slots;
    for (size_t i = 0; i < wf_n_slots; i++) {
        const wf_cache_item *c = &wf_slots[i].it;
        if (c->kind == want->kind && c->dev == want->dev &&
            memcmp(c->key, want->key, sizeof c->key) == 0 &&
            (best == wf_n_slots || wf_slots[i].stamp > wf_slots[best].stamp))
            best = i; /* the most recent: its memory is the likeliest to be warm */
    }
    if (best < wf_n_slots) {
        *want = remove_locked(best);
        found = 1;
    }
    if (want->kind == WF_CACHE_FFT)
        found ? wf_stats.fft_hits++ : wf_stats.fft_misses++;
    else if (want->kind == WF_CACHE_TOEPLITZ)
        found ? wf_stats.toeplitz_hits++ : wf_stats.toeplitz_misses++;
    else
        found ? wf_stats.other_hits++ : wf_stats.other_misses++;
    pthread_mutex_unlock(&wf_cache_lock);
    return found;
}

static void release_all_at_exit(void) {
    wf_cache_release();
}

static int accepts_locked(size_t bytes) {
    limits_locked();
    if (!wf_atexit_done) /* after cuInit and cuFFT's loading: runs before they unload */
        wf_atexit_done = atexit(release_all_at_exit) == 0;
    return wf_max_items > 0 && bytes <= wf_max_bytes && wf_atexit_done;
}

int wf_cache_accepts(size_t bytes) {
    pthread_mutex_lock(&wf_cache_lock);
    int yes = accepts_locked(bytes);
    pthread_mutex_unlock(&wf_cache_lock);
    return yes;
}

void wf_cache_put(wf_cache_item *it) {
    wf_cache_item evict[WF_CACHE_MAX_ITEMS + 1];
    size_t n_evict = 0;
    pthread_mutex_lock(&wf_cache_lock);
    if (!accepts_locked(item_bytes(it))) {
        evict[n_evict++] = *it;
    } else {
        while (wf_n_slots > 0 &&
               (wf_n_slots + 1 > wf_max_items || wf_slot_bytes + item_bytes(it) > wf_max_bytes)) {
            size_t oldest = 0;
            for (size_t i = 1; i < wf_n_slots; i++)
                if (wf_slots[i].stamp < wf_slots[oldest].stamp)
                    oldest = i;
            evict[n_evict++] = remove_locked(oldest);
        }
        wf_slots[wf_n_slots++] = (slot){*it, ++wf_stamp};
        wf_slot_bytes += item_bytes(it);
    }
    wf_stats.evicted += n_evict;
    pthread_mutex_unlock(&wf_cache_lock);
    memset(it, 0, sizeof *it);
    for (size_t i = 0; i < n_evict; i++) /* outside the lock: cuFFT and the driver may take time */
        wf_cache_destroy(&evict[i]);
}

size_t wf_cache_release(void) {
    wf_cache_item all[WF_CACHE_MAX_ITEMS];
    pthread_mutex_lock(&wf_cache_lock);
    size_t n = wf_n_slots;
    for (size_t i = 0; i < n; i++)
        all[i] = wf_slots[i].it;
    wf_n_slots = 0;
    wf_slot_bytes = 0;
    wf_stats.released += n;
    pthread_mutex_unlock(&wf_cache_lock);
    for (size_t i = 0; i < n; i++)
        wf_cache_destroy(&all[i]);
    return n;
}

void wf_cache_note_create(const wf_create_times *t) {
    pthread_mutex_lock(&wf_cache_lock);
    wf_stats.plans++;
    wf_stats.total.modules_ms += t->modules_ms;
    wf_stats.total.cufft_ms += t->cufft_ms;
    wf_stats.total.alloc_ms += t->alloc_ms;
    wf_stats.total.factors_ms += t->factors_ms;
    wf_stats.total.total_ms += t->total_ms;
    wf_stats.last = *t;
    pthread_mutex_unlock(&wf_cache_lock);
}

void wf_cache_note_toeplitz_build(const wf_toep_build_times *t) {
    pthread_mutex_lock(&wf_cache_lock);
    wf_stats.toeplitz_builds++;
    wf_stats.toeplitz_last = *t;
    pthread_mutex_unlock(&wf_cache_lock);
}

void wf_cache_note_oom_retry(void) {
    pthread_mutex_lock(&wf_cache_lock);
    wf_stats.oom_retries++;
    pthread_mutex_unlock(&wf_cache_lock);
}

void wf_cache_get_stats(wf_cache_stats *out) {
    pthread_mutex_lock(&wf_cache_lock);
    limits_locked();
    *out = wf_stats;
    out->items = wf_n_slots;
    out->bytes = wf_slot_bytes;
    out->max_items = wf_max_items;
    out->max_bytes = wf_max_bytes;
    pthread_mutex_unlock(&wf_cache_lock);
}

WARPFFT_API warpfft_status warpfft_release_cached(void) {
    wf_clear_error();
    wf_cache_release();
    return WARPFFT_SUCCESS;
}

wf_cache_item wf_cache_fft_item(const wf_device *dev, int dim, const int64_t n[3], int64_t ntransf,
                                int precision, int type) {
    wf_cache_item it;
    memset(&it, 0, sizeof it);
    it.kind = WF_CACHE_FFT;
    it.dev = dev;
    int64_t key[6] = {dim, n[0], n[1], n[2], ntransf, precision | (int64_t)type << 8};
    memcpy(it.key, key, sizeof key);
    return it;
}
