/*
 * direct.c — warpfft_direct_sample: the exact non-uniform DFT in double on the GPU at a sample
 * of outputs, for accuracy checks. Synchronous; uses the legacy default stream.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/grid.h"
#include "params/params.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/module.h"

typedef struct direct_req {
    int type, dim, iflag, modeord, precision;
    int64_t n[3], n_prod, M, n_sample;
    CUdeviceptr x, y, z, c, fk;
} direct_req;

static warpfft_status check_scalars(int type, int dim, const int64_t n_modes[3], int modeord,
                                    int precision, int64_t M, int64_t n_sample) {
    warpfft_status st = wf_check_problem(type, dim, precision, n_modes);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (modeord != 0 && modeord != 1)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "modeord = %d; must be 0 or 1", modeord);
    if (M < 0)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "M = %lld; must be >= 0", (long long)M);
    if (n_sample < 0 || n_sample > ((int64_t)1 << 40))
        return wf_error(WARPFFT_ERR_INVALID_ARG, "n_sample = %lld; must be in [0, 2^40]",
                        (long long)n_sample);
    return WARPFFT_SUCCESS;
}

/* Fills r from the arguments (unused dims: N = 1, pointer 0); BAD_SIZE if N1*N2*N3 overflows. */
static warpfft_status fill_req(direct_req *r, int type, int dim, const int64_t n_modes[3],
                               int iflag, int modeord, int precision, int64_t M, int64_t n_sample) {
    memset(r, 0, sizeof *r);
    r->type = type;
    r->dim = dim;
    r->iflag = iflag;
    r->modeord = modeord;
    r->precision = precision;
    r->M = M;
    r->n_sample = n_sample;
    r->n_prod = 1;
    for (int d = 0; d < 3; d++)
        r->n[d] = d < dim ? n_modes[d] : 1;
    for (int d = 0; d < 3; d++)
        if (__builtin_mul_overflow(r->n_prod, r->n[d], &r->n_prod))
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "n_modes = {%lld, %lld, %lld}: the product overflows int64",
                            (long long)r->n[0], (long long)r->n[1], (long long)r->n[2]);
    return WARPFFT_SUCCESS;
}

static warpfft_status check_arrays(const direct_req *r, const void *x, const void *y, const void *z,
                                   const void *c, const void *fk, const int64_t *sample,
                                   const double *out) {
    if (r->n_sample == 0)
        return WARPFFT_SUCCESS;
    if (!sample || !out)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL and n_sample = %lld",
                        !sample ? "sample" : "out", (long long)r->n_sample);
    const char *missing = wf_missing_coord(r->dim, x, y, z);
    if (r->M > 0 && missing)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL but dim = %d and M = %lld", missing,
                        r->dim, (long long)r->M);
    if (r->type == 1 && r->M > 0 && !c)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "c is NULL for type 1 with M = %lld",
                        (long long)r->M);
    if (r->type == 2 && !fk)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "fk is NULL for type 2");
    int64_t bound = r->type == 1 ? r->n_prod : r->M;
    for (int64_t s = 0; s < r->n_sample; s++)
        if (sample[s] < 0 || sample[s] >= bound)
            return wf_error(WARPFFT_ERR_INVALID_ARG, "sample[%lld] = %lld is outside [0, %lld)",
                            (long long)s, (long long)sample[s], (long long)bound);
    return WARPFFT_SUCCESS;
}

/* type 1: k triples (k_list[3s + d]) of the mode indices; type 2: the point indices. */
static int64_t *make_list(const direct_req *r, const int64_t *sample) {
    int64_t per = r->type == 1 ? 3 : 1;
    int64_t *list = malloc((size_t)(r->n_sample * per) * sizeof *list);
    if (!list)
        return NULL;
    for (int64_t s = 0; s < r->n_sample; s++) {
        if (r->type == 2) {
            list[s] = sample[s];
            continue;
        }
        int64_t i = sample[s];
        for (int d = 0; d < 3; d++) {
            list[3 * s + d] = wf_mode_of_index(i % r->n[d], r->n[d], r->modeord);
            i /= r->n[d];
        }
    }
    return list;
}

static warpfft_status launch_direct(const direct_req *r, CUfunction fn, const char *name,
                                    CUdeviceptr list, CUdeviceptr out) {
    int dim = r->dim, iflag = r->iflag, modeord = r->modeord;
    long long M = r->M, n_out = r->n_sample, N1 = r->n[0], N2 = r->n[1], N3 = r->n[2];
    CUdeviceptr x = r->x, y = r->y, z = r->z, c = r->c, fk = r->fk;
    unsigned grid = n_out < 65535 ? (unsigned)n_out : 65535u;
    void *t1[] = {&dim, &M, &x, &y, &z, &c, &n_out, &list, &iflag, &out};
    void *t2[] = {&dim, &n_out, &list, &x, &y, &z, &fk, &N1, &N2, &N3, &modeord, &iflag, &out};
    return wf_launch(fn, name, grid, 1, 256, 0, (CUstream)0, r->type == 1 ? t1 : t2);
}

/* Upload, launch on the legacy stream, wait, copy back. The device's context is current. */
static warpfft_status direct_copy_run(const direct_req *r, const wf_driver *drv, CUfunction fn,
                                      const char *name, const int64_t *list, CUdeviceptr d_list,
                                      CUdeviceptr d_out, double *out) {
    size_t list_bytes = (size_t)r->n_sample * (r->type == 1 ? 3 : 1) * sizeof(int64_t);
    WF_CU(drv->cuMemcpyHtoD(d_list, list, list_bytes), "cuMemcpyHtoD of the sample list");
    warpfft_status st = launch_direct(r, fn, name, d_list, d_out);
    if (st != WARPFFT_SUCCESS)
        return st;
    WF_CU(drv->cuStreamSynchronize((CUstream)0), "cuStreamSynchronize after the direct sum");
    WF_CU(drv->cuMemcpyDtoH(out, d_out, (size_t)r->n_sample * 2 * sizeof(double)),
          "cuMemcpyDtoH of the direct sums");
    return WARPFFT_SUCCESS;
}

/* Loads the kernel, allocates the temporaries, runs, and frees them on every path. */
static warpfft_status direct_run(const wf_device *dev, const direct_req *r, const int64_t *list,
                                 double *out) {
    const wf_driver *drv = NULL;
    const char *ps = wf_prec_name(r->precision);
    char mod[32], name[64];
    snprintf(mod, sizeof mod, "direct_%s", ps);
    snprintf(name, sizeof name, "wf_direct_t%d_%s", r->type, ps);
    CUfunction fn = NULL;
    CUdeviceptr d_list = 0, d_out = 0;
    size_t list_bytes = (size_t)r->n_sample * (r->type == 1 ? 3 : 1) * sizeof(int64_t);
    warpfft_status st = wf_driver_get(&drv);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_get(dev, mod, name, &fn);
    if (st == WARPFFT_SUCCESS)
        st = wf_alloc(&d_list, list_bytes, "the direct-sum sample list");
    if (st == WARPFFT_SUCCESS)
        st = wf_alloc(&d_out, (size_t)r->n_sample * 2 * sizeof(double), "the direct sums");
    if (st == WARPFFT_SUCCESS)
        st = direct_copy_run(r, drv, fn, name, list, d_list, d_out, out);
    wf_free(&d_list);
    wf_free(&d_out);
    return st;
}

static warpfft_status direct_device(int device, const direct_req *r, const int64_t *sample,
                                    double *out) {
    const wf_device *dev = NULL;
    warpfft_status st = wf_device_get(device, &dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    int64_t *list = make_list(r, sample);
    if (!list)
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY,
                        "host allocation of the sample list (%lld "
                        "entries)",
                        (long long)r->n_sample);
    st = wf_ctx_enter(dev);
    if (st == WARPFFT_SUCCESS) {
        st = direct_run(dev, r, list, out);
        wf_ctx_leave(dev);
    }
    free(list);
    return st;
}

WARPFFT_API warpfft_status warpfft_direct_sample(int type, int dim, const int64_t n_modes[3],
                                                 int iflag, int modeord,
                                                 warpfft_precision precision, int device, int64_t M,
                                                 const void *x, const void *y, const void *z,
                                                 const void *c, const void *fk, int64_t n_sample,
                                                 const int64_t *sample, double *out) {
    wf_clear_error();
    direct_req r;
    warpfft_status st = check_scalars(type, dim, n_modes, modeord, (int)precision, M, n_sample);
    if (st == WARPFFT_SUCCESS)
        st = fill_req(&r, type, dim, n_modes, iflag, modeord, (int)precision, M, n_sample);
    if (st == WARPFFT_SUCCESS)
        st = check_arrays(&r, x, y, z, c, fk, sample, out);
    if (st != WARPFFT_SUCCESS || n_sample == 0)
        return st;
    r.x = (CUdeviceptr)(uintptr_t)x;
    r.y = dim >= 2 ? (CUdeviceptr)(uintptr_t)y : 0;
    r.z = dim >= 3 ? (CUdeviceptr)(uintptr_t)z : 0;
    r.c = (CUdeviceptr)(uintptr_t)c;
    r.fk = (CUdeviceptr)(uintptr_t)fk;
    return direct_device(device, &r, sample, out);
}
