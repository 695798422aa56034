/*
 * bench.c — tuning aids: warpfft_bench_fft times the cuFFT transform of a fine grid alone, so
 * a benchmark can say how much of an execute is the FFT (benches/suite_b.rs, roofline line).
 *
 * The plan is made exactly as plans/nufft12.c makes a NUFFT plan's (in-place batched C2C/Z2Z,
 * dimension 1 fastest, no auto-allocation, a work area allocated here), through the core's own
 * cuFFT loader (cufft.c), so the time is the one execute's FFT step costs.
 *
 * Events are not in the core's driver table (the NUFFT path does not need them): they are
 * resolved here from the libcuda.so.1 the loader already opened (RTLD_NOLOAD), and a driver
 * without them gives WARPFFT_ERR_NO_DRIVER from this function only.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cufft.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"

/* Most repetitions one call times (keeps a mistaken argument from running for hours). */
#define WF_BENCH_MAX_REPS 100000

typedef struct wf_events {
    void *lib; /* dlopen handle of the already-loaded driver; dlclose'd at the end */
    CUresult (*create)(CUevent *, unsigned int);
    CUresult (*record)(CUevent, CUstream);
    CUresult (*sync)(CUevent);
    CUresult (*elapsed)(float *, CUevent, CUevent);
    CUresult (*destroy)(CUevent);
} wf_events;

static warpfft_status events_get(wf_events *ev) {
    memset(ev, 0, sizeof *ev);
    ev->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!ev->lib)
        return wf_error(WARPFFT_ERR_NO_DRIVER,
                        "warpfft_bench_fft: libcuda.so.1 is not loaded although the driver was "
                        "initialised");
    static const char *const names[][2] = {
        {"cuEventCreate", NULL},
        {"cuEventRecord", NULL},
        {"cuEventSynchronize", NULL},
        {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, /* _v2 from CUDA 12.8 on */
        {"cuEventDestroy_v2", NULL},
    };
    void *p[5];
    for (size_t i = 0; i < 5; i++) {
        p[i] = dlsym(ev->lib, names[i][0]);
        if (!p[i] && names[i][1])
            p[i] = dlsym(ev->lib, names[i][1]);
        if (!p[i]) {
            dlclose(ev->lib);
            ev->lib = NULL;
            return wf_error(WARPFFT_ERR_NO_DRIVER,
                            "warpfft_bench_fft: the CUDA driver library has no symbol %s",
                            names[i][0]);
        }
    }
    memcpy(&ev->create, &p[0], sizeof p[0]);
    memcpy(&ev->record, &p[1], sizeof p[1]);
    memcpy(&ev->sync, &p[2], sizeof p[2]);
    memcpy(&ev->elapsed, &p[3], sizeof p[3]);
    memcpy(&ev->destroy, &p[4], sizeof p[4]);
    return WARPFFT_SUCCESS;
}

/* What one measurement holds; released by bench_release whatever got made. */
typedef struct bench {
    const wf_driver *drv;
    const wf_cufft *cf;
    wf_events ev;
    CUdeviceptr grid, work;
    cufftHandle fft;
    int fft_created;
    CUevent start, stop;
} bench;

static warpfft_status bench_release(bench *b, warpfft_status st) {
    if (b->start)
        b->ev.destroy(b->start);
    if (b->stop)
        b->ev.destroy(b->stop);
    if (b->fft_created) {
        cufftResult r = b->cf->cufftDestroy(b->fft);
        if (r != 0 && st == WARPFFT_SUCCESS)
            st = wf_cufft_error(r, "cufftDestroy");
    }
    wf_free(&b->work);
    wf_free(&b->grid);
    if (b->ev.lib)
        dlclose(b->ev.lib);
    return st;
}

static warpfft_status bench_make(bench *b, int dim, const int64_t n_fine[3],
                                 warpfft_precision precision, int64_t batch, size_t grid_bytes) {
    warpfft_status st = events_get(&b->ev);
    if (st != WARPFFT_SUCCESS)
        return st;
    if ((st = wf_alloc(&b->grid, grid_bytes, "the benchmark's fine grid")) != WARPFFT_SUCCESS)
        return st;
    WF_CU(b->drv->cuMemsetD8Async(b->grid, 0, grid_bytes, NULL), "cuMemsetD8Async (fine grid)");
    cufftResult r = b->cf->cufftCreate(&b->fft);
    if (r != 0)
        return wf_cufft_error(r, "cufftCreate");
    b->fft_created = 1;
    if ((r = b->cf->cufftSetAutoAllocation(b->fft, 0)) != 0)
        return wf_cufft_error(r, "cufftSetAutoAllocation");
    long long n[3] = {1, 1, 1}; /* slowest dimension first, as nufft12.c */
    long long dist = 1;
    for (int d = 0; d < dim; d++) {
        n[d] = (long long)n_fine[dim - 1 - d];
        dist *= (long long)n_fine[d];
    }
    int type = precision == WARPFFT_F64 ? WF_CUFFT_Z2Z : WF_CUFFT_C2C;
    size_t work = 0;
    r = b->cf->cufftMakePlanMany64(b->fft, dim, n, NULL, 1, dist, NULL, 1, dist, type,
                                   (long long)batch, &work);
    if (r != 0) {
        char what[192];
        snprintf(what, sizeof what, "cufftMakePlanMany64 (%s, n = {%lld, %lld, %lld}, batch %lld)",
                 type == WF_CUFFT_Z2Z ? "Z2Z" : "C2C", n[0], n[1], n[2], (long long)batch);
        return wf_cufft_error(r, what);
    }
    if ((st = wf_alloc(&b->work, work, "the benchmark's cuFFT work area")) != WARPFFT_SUCCESS)
        return st;
    if ((r = b->cf->cufftSetWorkArea(b->fft, (void *)(uintptr_t)b->work)) != 0)
        return wf_cufft_error(r, "cufftSetWorkArea");
    if ((r = b->cf->cufftSetStream(b->fft, NULL)) != 0)
        return wf_cufft_error(r, "cufftSetStream");
    WF_CU(b->ev.create(&b->start, 0), "cuEventCreate");
    WF_CU(b->ev.create(&b->stop, 0), "cuEventCreate");
    return WARPFFT_SUCCESS;
}

static warpfft_status bench_exec(bench *b, warpfft_precision precision) {
    void *g = (void *)(uintptr_t)b->grid;
    cufftResult r = precision == WARPFFT_F64 ? b->cf->cufftExecZ2Z(b->fft, g, g, WF_CUFFT_FORWARD)
                                             : b->cf->cufftExecC2C(b->fft, g, g, WF_CUFFT_FORWARD);
    if (r != 0)
        return wf_cufft_error(r, precision == WARPFFT_F64 ? "cufftExecZ2Z" : "cufftExecC2C");
    return WARPFFT_SUCCESS;
}

/* One warm-up transform, then `reps` between two events on the legacy stream. */
static warpfft_status bench_time(bench *b, warpfft_precision precision, int reps, double *ms) {
    warpfft_status st = bench_exec(b, precision);
    if (st != WARPFFT_SUCCESS)
        return st;
    WF_CU(b->ev.record(b->start, NULL), "cuEventRecord");
    for (int i = 0; i < reps; i++)
        if ((st = bench_exec(b, precision)) != WARPFFT_SUCCESS)
            return st;
    WF_CU(b->ev.record(b->stop, NULL), "cuEventRecord");
    WF_CU(b->ev.sync(b->stop), "cuEventSynchronize");
    float total = 0.0f;
    WF_CU(b->ev.elapsed(&total, b->start, b->stop), "cuEventElapsedTime");
    *ms = (double)total / reps;
    return WARPFFT_SUCCESS;
}

/* Checks the arguments; *bytes receives the size of the batched complex grid. */
static warpfft_status check_args(int dim, const int64_t n_fine[3], warpfft_precision precision,
                                 int64_t batch, int reps, size_t *bytes) {
    if (dim < 1 || dim > 3)
        return wf_error(WARPFFT_ERR_BAD_DIM, "warpfft_bench_fft: dim is %d; it must be 1, 2 or 3",
                        dim);
    if (!n_fine)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_bench_fft: n_fine is NULL");
    if (precision != WARPFFT_F32 && precision != WARPFFT_F64)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_bench_fft: precision is %d; it must be WARPFFT_F32 (1) or "
                        "WARPFFT_F64 (2)",
                        (int)precision);
    if (reps < 1 || reps > WF_BENCH_MAX_REPS)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_bench_fft: reps is %d; it must be 1..%d",
                        reps, WF_BENCH_MAX_REPS);
    if (batch < 1)
        return wf_error(WARPFFT_ERR_BAD_SIZE, "warpfft_bench_fft: batch is %lld; it must be >= 1",
                        (long long)batch);
    size_t total = precision == WARPFFT_F64 ? 16 : 8;
    for (int d = 0; d <= dim; d++) {
        int64_t f = d < dim ? n_fine[d] : batch;
        if (f < 1)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "warpfft_bench_fft: n_fine[%d] is %lld; it must be >= 1", d,
                            (long long)f);
        if ((uint64_t)f > SIZE_MAX / total)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "warpfft_bench_fft: the grid (n_fine {%lld, %lld, %lld}, batch %lld) "
                            "does not fit in memory",
                            (long long)n_fine[0], (long long)(dim > 1 ? n_fine[1] : 1),
                            (long long)(dim > 2 ? n_fine[2] : 1), (long long)batch);
        total *= (size_t)f;
    }
    *bytes = total;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_bench_fft(int dim, const int64_t n_fine[3],
                                             warpfft_precision precision, int64_t batch, int device,
                                             int reps, double *ms) {
    wf_clear_error();
    if (!ms)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_bench_fft: ms is NULL");
    *ms = 0.0;
    size_t grid_bytes = 0;
    warpfft_status st = check_args(dim, n_fine, precision, batch, reps, &grid_bytes);
    if (st != WARPFFT_SUCCESS)
        return st;
    bench b;
    memset(&b, 0, sizeof b);
    const wf_device *dev = NULL;
    st = wf_device_get(device, &dev);
    if (st == WARPFFT_SUCCESS)
        st = wf_driver_get(&b.drv);
    if (st == WARPFFT_SUCCESS)
        st = wf_cufft_get(&b.cf);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = bench_make(&b, dim, n_fine, precision, batch, grid_bytes);
    double t = 0.0;
    if (st == WARPFFT_SUCCESS)
        st = bench_time(&b, precision, reps, &t);
    st = bench_release(&b, st);
    wf_ctx_leave(dev);
    if (st == WARPFFT_SUCCESS)
        *ms = t;
    return st;
}
