/*
 * standin_cufft.c — a stand-in libcufft.so.12 for the fault-injection suite (see standin.h).
 * Shares the call numbering and the allocation table of the stand-in libcuda.so.1 (linked).
 * Plans record their size; cufftSetWorkArea and the transforms check their buffers.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/cufft.h"
#include "standin.h"

#define API                  __attribute__((visibility("default")))
#define CUFFT_INVALID_PLAN   1
#define CUFFT_ALLOC_FAILED   2
#define CUFFT_INTERNAL_ERROR 5
#define MAX_PLANS            1024
#define WORK_BYTES           STANDIN_FFT_WORK_BYTES

static struct {
    int live, made;
    size_t data_bytes; /* the batch's bytes, for the transforms */
    CUstream stream;   /* cufftSetStream's: checked alive at each transform */
} plans[MAX_PLANS];

#define TICK(name)                                                                                 \
    do {                                                                                           \
        if (standin_tick(name))                                                                    \
            return CUFFT_INTERNAL_ERROR;                                                           \
    } while (0)

/* Guards the plan table: plans are created and destroyed from several threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int valid(cufftHandle h) {
    pthread_mutex_lock(&lock);
    int ok = h >= 0 && h < MAX_PLANS && plans[h].live;
    pthread_mutex_unlock(&lock);
    return ok;
}

API cufftResult cufftCreate(cufftHandle *h) {
    TICK("cufftCreate");
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < MAX_PLANS && plans[i].live)
        i++;
    if (i < MAX_PLANS) {
        plans[i].live = 1;
        plans[i].made = 0;
        *h = i;
    }
    pthread_mutex_unlock(&lock);
    if (i == MAX_PLANS)
        return CUFFT_INTERNAL_ERROR;
    standin_fft_plans(1);
    return 0;
}
API cufftResult cufftDestroy(cufftHandle h) {
    int fail = standin_tick("cufftDestroy"); /* released either way */
    pthread_mutex_lock(&lock);
    int ok = h >= 0 && h < MAX_PLANS && plans[h].live;
    if (ok)
        plans[h].live = 0;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUFFT_INVALID_PLAN;
    standin_fft_plans(-1);
    return fail ? CUFFT_INTERNAL_ERROR : 0;
}
API cufftResult cufftSetAutoAllocation(cufftHandle h, int v) {
    (void)v;
    TICK("cufftSetAutoAllocation");
    return valid(h) ? 0 : CUFFT_INVALID_PLAN;
}
API cufftResult cufftMakePlanMany64(cufftHandle h, int rank, long long *n, long long *inembed,
                                    long long istride, long long idist, long long *onembed,
                                    long long ostride, long long odist, int type, long long batch,
                                    size_t *work) {
    TICK("cufftMakePlanMany64");
    if (!valid(h) || rank < 1 || rank > 3 || batch < 1)
        return CUFFT_INVALID_PLAN;
    if (!standin_mem_room(WORK_BYTES)) /* cuFFT's own device memory (twiddles) */
        return CUFFT_ALLOC_FAILED;
    /* The elements the batch spans: batch * prod(n) in the basic layout; with an advanced one
     * (inembed != NULL), element x of transform b at b*idist + stride*sum_d x_d prod_{d'>d}
     * embed[d'], so the last is (batch-1)*idist + stride*sum_d (n_d-1) prod_{d'>d} embed[d']. */
    long long total = batch;
    for (int d = 0; d < rank; d++)
        total *= n[d];
    long long span[2] = {total, total};
    long long *embed[2] = {inembed, onembed}, stride[2] = {istride, ostride},
              dist[2] = {idist, odist};
    for (int io = 0; io < 2; io++) {
        if (!embed[io])
            continue;
        long long last = 0, inner = 1;
        for (int d = rank - 1; d >= 0; d--) {
            if (n[d] > embed[io][d] && d > 0) /* the outermost embed is not read */
                return CUFFT_INVALID_PLAN;
            last += (n[d] - 1) * inner;
            inner *= embed[io][d];
        }
        span[io] = (batch - 1) * dist[io] + stride[io] * last + 1;
    }
    plans[h].data_bytes =
        (size_t)(span[0] > span[1] ? span[0] : span[1]) * (type == WF_CUFFT_Z2Z ? 16 : 8);
    plans[h].made = 1;
    *work = WORK_BYTES;
    standin_fft_made();
    return 0;
}
API cufftResult cufftSetWorkArea(cufftHandle h, void *area) {
    TICK("cufftSetWorkArea");
    if (!valid(h) || !plans[h].made || !standin_check_range(area, WORK_BYTES, "cufftSetWorkArea"))
        return CUFFT_INVALID_PLAN;
    return 0;
}
API cufftResult cufftSetStream(cufftHandle h, CUstream s) {
    TICK("cufftSetStream");
    standin_check_stream(s, "cufftSetStream");
    if (!valid(h))
        return CUFFT_INVALID_PLAN;
    plans[h].stream = s;
    return 0;
}
static cufftResult exec(const char *fn, cufftHandle h, void *in, void *out) {
    TICK(fn);
    if (!valid(h) || !plans[h].made)
        return CUFFT_INVALID_PLAN;
    standin_check_stream(plans[h].stream, fn);
    standin_stream_work(plans[h].stream, fn);
    if (!standin_check_range(in, plans[h].data_bytes, fn) ||
        !standin_check_range(out, plans[h].data_bytes, fn))
        return CUFFT_INTERNAL_ERROR;
    return 0;
}
API cufftResult cufftExecC2C(cufftHandle h, void *in, void *out, int dir) {
    (void)dir;
    return exec("cufftExecC2C", h, in, out);
}
API cufftResult cufftExecZ2Z(cufftHandle h, void *in, void *out, int dir) {
    (void)dir;
    return exec("cufftExecZ2Z", h, in, out);
}
API cufftResult cufftGetVersion(int *v) {
    *v = 12000;
    return 0;
}
