/*
 * test_xla_ffi_pool.c — the XLA handler's use of the live-plan pool (test_xla_ffi.h): a clear
 * during a call (the call keeps its own plan to the end, nothing stays busy or leaks), no call
 * waiting behind another's plan creation or behind the destruction of an evicted plan (two
 * threads; the stand-in holds the first inside the C ABI), no stream synchronised at eviction
 * (the user's stream may be gone: the pool waits for a fence instead), and empty arrays with
 * huge dimensions (no signed overflow in the size products: UBSan aborts on one).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test_xla_ffi.h"

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

/* Type 1 1D f32 with n modes: a key per n. */
static config key_n(int64_t n) {
    config cf = {1, 1, WARPFFT_F32, 1, 1, 1, 5, 0, {n, 1, 1}};
    return cf;
}

/* ---- a clear while a call runs ---- */

static const config running = {1, 2, WARPFFT_F32, 3, 3, 2, 5, 0, {8, 6, 1}}; /* 3 point sets */
static const config meanwhile = {1, 1, WARPFFT_F64, 1, 1, 1, 7, 0, {10, 1, 1}};
static int running_plan;
static XLA_FFI_Error *meanwhile_err;

/* At the running call's first setpts: another thread's clear, then another thread's call with
 * another key (both run here, inside the running call, where no lock of the handler is held). */
static void clear_and_call(void) {
    on_setpts = NULL;
    running_plan = plan_ids; /* the plan the running call just made */
    warpfft_pool_clear();
    frame_store fs;
    meanwhile_err = warpfft_xla_nufft(frame_at(&fs, &meanwhile));
}

void test_clear_during_call(void) {
    warpfft_pool_clear();
    int live0 = plans_live;
    arm(0, WARPFFT_SUCCESS);
    const config idle = key_n(6); /* an idle plan the clear destroys */
    CHECK(warpfft_xla_nufft(frame(&idle)) == NULL);
    arm(0, WARPFFT_SUCCESS);
    on_setpts = clear_and_call;
    XLA_FFI_Error *err = warpfft_xla_nufft(frame(&running));
    on_setpts = NULL;
    CHECK(err == NULL && meanwhile_err == NULL, "the running call: %s", err ? xla_msg : "ok");
    /* every set-points and execute of the running call (f32: "prec 1") on its own plan */
    int on_own = 0, on_other = 0;
    for (const char *l = trace; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        char verb[16];
        int id = 0, prec = 0;
        if (sscanf(l, "%15s P%d prec %d", verb, &id, &prec) == 3 && prec == 1 &&
            (strcmp(verb, "setpts") == 0 || strcmp(verb, "execute") == 0))
            id == running_plan ? on_own++ : on_other++;
    }
    CHECK(on_own == 6 && on_other == 0,
          "the running call ran %d steps on its plan P%d and %d on another:\n%s", on_own,
          running_plan, on_other, trace);
    /* its plan went at its release; the other call's stays idle */
    CHECK(pool_size() == 1 && plans_live == live0 + 1,
          "after the call: %lld plans in the pool, %d live (want 1, %d)", (long long)pool_size(),
          plans_live, live0 + 1);
    warpfft_pool_clear();
    CHECK(plans_live == live0 && pool_size() == 0, "after a clear: %d plans live, %lld in the pool",
          plans_live - live0, (long long)pool_size());
}

/* ---- two threads: neither waits behind the other's slow plan creation or destruction ---- */

typedef struct caller {
    config cf;
    frame_store fs;
    atomic_int done;
    XLA_FFI_Error *err;
} caller;

static void *call_thread(void *arg) {
    caller *c = arg;
    c->err = warpfft_xla_nufft(frame_at(&c->fs, &c->cf));
    atomic_store(&c->done, 1);
    return NULL;
}

static int wait_done(caller *c, int ms) {
    for (int t = 0; t < ms && !atomic_load(&c->done); t += 5)
        sleep_ms(5);
    return atomic_load(&c->done);
}

/* slow: a call held inside the stand-in at `fn` ("create" or "destroy"); quick: a call whose
 * plan is idle in the pool, made meanwhile on another thread, which must finish. */
static void expect_not_blocked(const char *what, const char *fn, caller *slow, caller *quick) {
    pthread_t ts, tq;
    block_arm(fn);
    pthread_create(&ts, NULL, call_thread, slow);
    int entered = block_wait_entered(2000);
    CHECK(entered, "%s: the first call never reached %s", what, fn);
    pthread_create(&tq, NULL, call_thread, quick);
    int quick_done = wait_done(quick, 2000);
    CHECK(quick_done, "%s: a call with a pooled plan waited for the other call", what);
    block_release();
    pthread_join(ts, NULL);
    pthread_join(tq, NULL);
    CHECK(slow->err == NULL && quick->err == NULL, "%s: %s", what, xla_msg);
}

void test_no_waiting_behind_create(void) {
    warpfft_pool_clear();
    static caller slow, quick;
    memset(&slow, 0, sizeof slow);
    memset(&quick, 0, sizeof quick);
    slow.cf = key_n(12); /* a new key: its call creates a plan */
    quick.cf = key_n(14);
    arm(0, WARPFFT_SUCCESS);
    CHECK(warpfft_xla_nufft(frame(&quick.cf)) == NULL); /* now idle in the pool */
    expect_not_blocked("behind a plan creation", "create", &slow, &quick);
    warpfft_pool_clear();
}

void test_no_waiting_behind_destroy(void) {
    warpfft_pool_clear();
    warpfft_pool_set_limits(16, -1);
    arm(0, WARPFFT_SUCCESS);
    for (int k = 0; k < 16; k++) { /* a full pool (16 idle plans; the old cache held 16) */
        config cf = key_n(20 + k);
        CHECK(warpfft_xla_nufft(frame(&cf)) == NULL);
    }
    static caller slow, quick;
    memset(&slow, 0, sizeof slow);
    memset(&quick, 0, sizeof quick);
    slow.cf = key_n(40); /* one more key: the least recently used plan is destroyed */
    quick.cf = key_n(25);
    expect_not_blocked("behind an evicted plan's destruction", "destroy", &slow, &quick);
    warpfft_pool_clear();
}

/* Evicting a plan waits for its fence, never for its stream (its user may have destroyed it). */
void test_eviction_syncs_no_stream(void) {
    warpfft_pool_clear();
    warpfft_pool_set_limits(16, -1);
    int first = plan_ids + 1;
    for (int k = 0; k < 17; k++) {
        config cf = key_n(60 + k);
        arm(0, WARPFFT_SUCCESS);
        CHECK(warpfft_xla_nufft(frame(&cf)) == NULL);
    }
    char destroyed[32];
    snprintf(destroyed, sizeof destroyed, "destroy P%d\n", first);
    CHECK(strstr(trace, destroyed) && !strstr(trace, "sync"),
          "the 17th call evicts P%d, synchronising no stream:\n%s", first, trace);
    warpfft_pool_clear();
}

/* ---- sizes ---- */

void test_empty_huge(void) {
    const int64_t big = (int64_t)1 << 40;
    const config empty[] = {
        {1, 2, WARPFFT_F32, 0, 1, big, big, 0, {big, big, 1}},
        {2, 1, WARPFFT_F64, 0, 1, big, big, 0, {big, 1, 1}},
        {3, 1, WARPFFT_F32, 0, 1, big, big, big, {1, 1, 1}},
        {3, 2, WARPFFT_F64, 2, 2, big, big, 0, {1, 1, 1}}, /* K = 0 */
    };
    char name[160];
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&empty[i]));
        CHECK(err == NULL && trace[0] == '\0', "%s: %s, calls:\n%s",
              describe(&empty[i], name, sizeof name), err ? xla_msg : "no error", trace);
    }
    /* not empty, but products past 2^63 (shapes XLA could never allocate): an error, no call */
    const config huge[] = {
        {1, 1, WARPFFT_F32, 1, 1, big, big, 0, {4, 1, 1}},
        {2, 2, WARPFFT_F64, 1, 1, 2, 3, 0, {big, big, 1}},
        {3, 1, WARPFFT_F32, 1, 1, big, 4, big, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&huge[i]));
        CHECK(err == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, "overflow") &&
                  trace[0] == '\0',
              "%s: %s, calls:\n%s", describe(&huge[i], name, sizeof name),
              err ? xla_msg : "no error", trace);
    }
}
