/*
 * direct3.c — warpfft_direct_sample3: the exact type-3 sum in double on the GPU at a sample of
 * targets (kernels/direct.cu, wf_direct_t3_p), for accuracy checks. Synchronous; uses the
 * legacy default stream.
 */
#include <stdint.h>
#include <stdio.h>

#include "params/params.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/module.h"

typedef struct direct3_req {
    int dim, iflag, precision;
    int64_t M, K, n_sample;
    CUdeviceptr x, y, z, c, s, t, u;
} direct3_req;

static warpfft_status check3(int dim, int precision, int64_t M, const void *x, const void *y,
                             const void *z, const void *c, int64_t K, const void *s, const void *t,
                             const void *u, int64_t n_sample, const int64_t *sample,
                             const double *out) {
    warpfft_status st = wf_check_dim(dim);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_precision(precision);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (M < 0 || K < 0)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "M = %lld, K = %lld; must be >= 0", (long long)M,
                        (long long)K);
    if (n_sample < 0 || n_sample > ((int64_t)1 << 40))
        return wf_error(WARPFFT_ERR_INVALID_ARG, "n_sample = %lld; must be in [0, 2^40]",
                        (long long)n_sample);
    if (n_sample == 0)
        return WARPFFT_SUCCESS;
    if (!sample || !out)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL and n_sample = %lld",
                        !sample ? "sample" : "out", (long long)n_sample);
    const char *mx = wf_missing_coord(dim, x, y, z), *ms = wf_missing_coord(dim, s, t, u);
    if (M > 0 && (mx || !c))
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL but dim = %d and M = %lld",
                        mx ? mx : "c", dim, (long long)M);
    if (ms)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "target array %s is NULL (dim = %d)",
                        ms[0] == 'x'   ? "s"
                        : ms[0] == 'y' ? "t"
                                       : "u",
                        dim);
    for (int64_t i = 0; i < n_sample; i++)
        if (sample[i] < 0 || sample[i] >= K)
            return wf_error(WARPFFT_ERR_INVALID_ARG, "sample[%lld] = %lld is outside [0, %lld)",
                            (long long)i, (long long)sample[i], (long long)K);
    return WARPFFT_SUCCESS;
}

static warpfft_status run3(const direct3_req *r, const wf_driver *drv, CUfunction fn,
                           const char *name, const int64_t *sample, CUdeviceptr d_list,
                           CUdeviceptr d_out, double *out) {
    size_t n = (size_t)r->n_sample;
    WF_CU(drv->cuMemcpyHtoD(d_list, sample, n * sizeof(int64_t)), "cuMemcpyHtoD of the sample");
    int dim = r->dim, iflag = r->iflag;
    long long M = r->M, n_out = r->n_sample;
    CUdeviceptr x = r->x, y = r->y, z = r->z, c = r->c, s = r->s, t = r->t, u = r->u;
    void *args[] = {&dim, &M, &x, &y, &z, &c, &n_out, &d_list, &s, &t, &u, &iflag, &d_out};
    unsigned grid = n_out < 65535 ? (unsigned)n_out : 65535u;
    warpfft_status st = wf_launch(fn, name, grid, 1, 256, 0, (CUstream)0, args);
    if (st != WARPFFT_SUCCESS)
        return st;
    WF_CU(drv->cuStreamSynchronize((CUstream)0), "cuStreamSynchronize after the direct sum");
    WF_CU(drv->cuMemcpyDtoH(out, d_out, n * 2 * sizeof(double)), "cuMemcpyDtoH of the direct sums");
    return WARPFFT_SUCCESS;
}

static warpfft_status direct3_device(int device, const direct3_req *r, const int64_t *sample,
                                     double *out) {
    const wf_device *dev = NULL;
    const wf_driver *drv = NULL;
    warpfft_status st = wf_device_get(device, &dev);
    if (st == WARPFFT_SUCCESS)
        st = wf_driver_get(&drv);
    if (st == WARPFFT_SUCCESS)
        st = wf_ctx_enter(dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    const char *ps = wf_prec_name(r->precision);
    char mod[32], name[64];
    snprintf(mod, sizeof mod, "direct_%s", ps);
    snprintf(name, sizeof name, "wf_direct_t3_%s", ps);
    CUfunction fn = NULL;
    CUdeviceptr d_list = 0, d_out = 0;
    size_t n = (size_t)r->n_sample;
    st = wf_kernel_get(dev, mod, name, &fn);
    if (st == WARPFFT_SUCCESS)
        st = wf_alloc(&d_list, n * sizeof(int64_t), "the direct-sum sample list");
    if (st == WARPFFT_SUCCESS)
        st = wf_alloc(&d_out, n * 2 * sizeof(double), "the direct sums");
    if (st == WARPFFT_SUCCESS)
        st = run3(r, drv, fn, name, sample, d_list, d_out, out);
    wf_free(&d_list);
    wf_free(&d_out);
    wf_ctx_leave(dev);
    return st;
}

WARPFFT_API warpfft_status warpfft_direct_sample3(int dim, int iflag, warpfft_precision precision,
                                                  int device, int64_t M, const void *x,
                                                  const void *y, const void *z, const void *c,
                                                  int64_t K, const void *s, const void *t,
                                                  const void *u, int64_t n_sample,
                                                  const int64_t *sample, double *out) {
    wf_clear_error();
    warpfft_status st =
        check3(dim, (int)precision, M, x, y, z, c, K, s, t, u, n_sample, sample, out);
    if (st != WARPFFT_SUCCESS || n_sample == 0)
        return st;
    direct3_req r = {dim,
                     iflag,
                     (int)precision,
                     M,
                     K,
                     n_sample,
                     (CUdeviceptr)(uintptr_t)x,
                     dim >= 2 ? (CUdeviceptr)(uintptr_t)y : 0,
                     dim >= 3 ? (CUdeviceptr)(uintptr_t)z : 0,
                     (CUdeviceptr)(uintptr_t)c,
                     (CUdeviceptr)(uintptr_t)s,
                     dim >= 2 ? (CUdeviceptr)(uintptr_t)t : 0,
                     dim >= 3 ? (CUdeviceptr)(uintptr_t)u : 0};
    return direct3_device(device, &r, sample, out);
}
