/* A stand-in for libcuda.so.1 with the calls warpfft/_device.py makes, for GPU-free tests of
 * its ctypes declarations and call sequences. Pointers 0x5000-0x5fff are on device 0,
 * 0x7000-0x7fff on device 1, anything else unknown. Every call is appended to a log. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char log_buf[8192];
static int ctx_depth, n_events, events_done = 1;

static void logf_(const char *s) {
    if (strlen(log_buf) + strlen(s) + 2 < sizeof log_buf) {
        strcat(log_buf, s);
        strcat(log_buf, ";");
    }
}

int cuInit(unsigned flags) {
    (void)flags;
    return 0;
}
int cuDeviceGet(int *dev, int ordinal) {
    if (ordinal < 0 || ordinal > 1)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *dev = ordinal;
    return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    *ctx = (void *)(uintptr_t)(0x1000 + dev);
    return 0;
}
int cuCtxPushCurrent_v2(void *ctx) {
    char s[64];
    snprintf(s, sizeof s, "push %lx", (unsigned long)(uintptr_t)ctx);
    logf_(s);
    ctx_depth++;
    return 0;
}
int cuCtxPopCurrent_v2(void **ctx) {
    ctx_depth--;
    if (ctx)
        *ctx = NULL;
    return 0;
}
int cuPointerGetAttribute(void *data, int attr, uint64_t ptr) {
    if (attr != 9 || ctx_depth < 1)
        return 1;
    if (ptr >= 0x5000 && ptr < 0x6000)
        *(int *)data = 0;
    else if (ptr >= 0x7000 && ptr < 0x8000)
        *(int *)data = 1;
    else
        return 1; /* CUDA_ERROR_INVALID_VALUE: not device memory */
    return 0;
}
int cuEventCreate(void **ev, unsigned flags) {
    *ev = (void *)(uintptr_t)(++n_events);
    return flags == 2 ? 0 : 1;
}
int cuEventRecord(void *ev, void *stream) {
    char s[64];
    snprintf(s, sizeof s, "record e%lu s%lx", (unsigned long)(uintptr_t)ev,
             (unsigned long)(uintptr_t)stream);
    logf_(s);
    return ctx_depth > 0 ? 0 : 201;
}
int cuStreamWaitEvent(void *stream, void *ev, unsigned flags) {
    char s[64];
    snprintf(s, sizeof s, "wait s%lx e%lu", (unsigned long)(uintptr_t)stream,
             (unsigned long)(uintptr_t)ev);
    logf_(s);
    return flags == 0 && ctx_depth > 0 ? 0 : 1;
}
int cuEventQuery(void *ev) {
    char s[64];
    snprintf(s, sizeof s, "query e%lu", (unsigned long)(uintptr_t)ev);
    logf_(s);
    /* stub_events_done: 1 complete, 0 pending (CUDA_ERROR_NOT_READY), 2 a failed launch (719) */
    return events_done == 1 ? 0 : events_done == 0 ? 600 : 719;
}
int cuEventSynchronize(void *ev) {
    (void)ev;
    return 0;
}
int cuEventDestroy_v2(void *ev) {
    (void)ev;
    return 0;
}
/* test hooks */
const char *stub_log(void) {
    return log_buf;
}
void stub_clear(void) {
    log_buf[0] = 0;
}
int stub_ctx_depth(void) {
    return ctx_depth;
}
void stub_events_done(int done) {
    events_done = done;
}
