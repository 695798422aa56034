/*
 * standin_cufft.c — a stand-in libcufft.so.12 for the fault-injection suite (see standin.h).
 * Shares the call numbering and the allocation table of the stand-in libcuda.so.1 (linked).
 * Plans record their type and sizes; cufftSetWorkArea and the transforms check their buffers
 * (real-to-complex and complex-to-real ones: the real side's and the half spectrum's sizes, and
 * that the transform called is the plan's type).
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
    int type;                   /* the cufftType made */
    size_t in_bytes, out_bytes; /* the batch's bytes read and written, for the transforms */
    CUstream stream;            /* cufftSetStream's: checked alive at each transform */
} plans[MAX_PLANS];

/* Guards the plan table: plans are created and destroyed from several threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts of cufftMakePlanMany64 calls that succeeded, per type (R2C, C2R, C2C, D2Z, Z2D, Z2Z):
 * what kind of plan a plan creation made. */
static long made_of_type[6];
static int type_index(int type) {
    switch (type) {
    case WF_CUFFT_R2C:
        return 0;
    case WF_CUFFT_C2R:
        return 1;
    case WF_CUFFT_C2C:
        return 2;
    case WF_CUFFT_D2Z:
        return 3;
    case WF_CUFFT_Z2D:
        return 4;
    case WF_CUFFT_Z2Z:
        return 5;
    default:
        return -1;
    }
}
/* The plans made of cufftType `type` so far (ever). */
API long standin_fft_made_of_type(int type) {
    int i = type_index(type);
    pthread_mutex_lock(&lock);
    long n = i >= 0 ? made_of_type[i] : 0;
    pthread_mutex_unlock(&lock);
    return n;
}

#define TICK(name)                                                                                 \
    do {                                                                                           \
        if (standin_tick(name))                                                                    \
            return CUFFT_INTERNAL_ERROR;                                                           \
    } while (0)

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
    if (!valid(h) || rank < 1 || rank > 3 || batch < 1 || type_index(type) < 0)
        return CUFFT_INVALID_PLAN;
    if (!standin_mem_room(WORK_BYTES)) /* cuFFT's own device memory (twiddles) */
        return CUFFT_ALLOC_FAILED;
    /* The elements the batch spans: batch * prod(n) in the basic layout; with an advanced one
     * (inembed != NULL), element x of transform b at b*idist + stride*sum_d x_d prod_{d'>d}
     * embed[d'], so the last is (batch-1)*idist + stride*sum_d (n_d-1) prod_{d'>d} embed[d']. */
    long long total = batch, half = batch; /* half: the complex side of R2C and C2R */
    for (int d = 0; d < rank; d++) {
        total *= n[d];
        half *= d == rank - 1 ? n[d] / 2 + 1 : n[d];
    }
    int r2c = type == WF_CUFFT_R2C || type == WF_CUFFT_D2Z;
    int c2r = type == WF_CUFFT_C2R || type == WF_CUFFT_Z2D;
    long long span[2] = {c2r ? half : total, r2c ? half : total};
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
    if ((r2c || c2r) && (inembed || onembed)) /* warpfft's real plans use the basic layout */
        return CUFFT_INVALID_PLAN;
    size_t real = type == WF_CUFFT_D2Z || type == WF_CUFFT_Z2D || type == WF_CUFFT_Z2Z ? 8 : 4;
    if (!r2c && !c2r) { /* in place or not, either side may be the larger */
        long long big = span[0] > span[1] ? span[0] : span[1];
        span[0] = span[1] = big;
    }
    plans[h].type = type;
    plans[h].in_bytes = (size_t)span[0] * (r2c ? real : 2 * real);
    plans[h].out_bytes = (size_t)span[1] * (c2r ? real : 2 * real);
    plans[h].made = 1;
    pthread_mutex_lock(&lock);
    made_of_type[type_index(type)]++;
    pthread_mutex_unlock(&lock);
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
/* A transform of type `type` (the plan must be of it, as cuFFT requires: CUFFT_INVALID_VALUE
 * there, reported here as a violation too): stream, then its input and output ranges. */
static cufftResult exec(const char *fn, int type, cufftHandle h, void *in, void *out) {
    TICK(fn);
    if (!valid(h) || !plans[h].made)
        return CUFFT_INVALID_PLAN;
    standin_check_stream(plans[h].stream, fn);
    standin_stream_work(plans[h].stream, fn);
    if (plans[h].type != type) {
        standin_check_range(NULL, 1, "a cuFFT transform of another type than its plan's");
        return CUFFT_INTERNAL_ERROR;
    }
    if (!standin_check_range(in, plans[h].in_bytes, fn) ||
        !standin_check_range(out, plans[h].out_bytes, fn))
        return CUFFT_INTERNAL_ERROR;
    return 0;
}
API cufftResult cufftExecC2C(cufftHandle h, void *in, void *out, int dir) {
    (void)dir;
    return exec("cufftExecC2C", WF_CUFFT_C2C, h, in, out);
}
API cufftResult cufftExecZ2Z(cufftHandle h, void *in, void *out, int dir) {
    (void)dir;
    return exec("cufftExecZ2Z", WF_CUFFT_Z2Z, h, in, out);
}
API cufftResult cufftExecR2C(cufftHandle h, void *in, void *out) {
    return exec("cufftExecR2C", WF_CUFFT_R2C, h, in, out);
}
API cufftResult cufftExecC2R(cufftHandle h, void *in, void *out) {
    return exec("cufftExecC2R", WF_CUFFT_C2R, h, in, out);
}
API cufftResult cufftExecD2Z(cufftHandle h, void *in, void *out) {
    return exec("cufftExecD2Z", WF_CUFFT_D2Z, h, in, out);
}
API cufftResult cufftExecZ2D(cufftHandle h, void *in, void *out) {
    return exec("cufftExecZ2D", WF_CUFFT_Z2D, h, in, out);
}
API cufftResult cufftGetVersion(int *v) {
    *v = 12000;
    return 0;
}
