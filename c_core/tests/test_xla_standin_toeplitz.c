/*
 * test_xla_standin_toeplitz.c — for the XLA FFI handlers' test (test_xla_ffi.h): the recording
 * stand-in of the Toeplitz operator's public calls (warpfft_toeplitz_params, _spectrum,
 * _create, _apply_spectrum, _workspace_bytes, _destroy) and of the hooks the live-plan pool
 * calls for operators (api/plan_pool.h), in the trace of test_xla_ffi_standin.c. Its grid is
 * the library's: the smallest even 2,3,5,7-smooth integer >= 2N - 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/plan_pool.h"
#include "runtime/error.h"
#include "test_xla_ffi.h"

int op_ids, ops_live;

struct warpfft_toeplitz_s {
    int id;
    int pooled;
};

static int64_t smooth_even(int64_t n) {
    for (n = n < 2 ? 2 : n;; n++) {
        int64_t m = n;
        for (int p = 2; p <= 7; p++)
            while (m % p == 0)
                m /= p;
        if (m == 1 && n % 2 == 0)
            return n;
    }
}

warpfft_status warpfft_toeplitz_params(int dim, const int64_t n[3], int64_t ntransf, double tol,
                                       warpfft_precision precision, const warpfft_opts *o,
                                       int weights, warpfft_toeplitz_info *info) {
    (void)ntransf, (void)o; /* no GPU, not numbered */
    if (tol < 1e-6 || weights < 0 || weights > 2 || dim < 1 || dim > 3)
        return wf_error(WARPFFT_ERR_BAD_TOL, "stand-in params: bad tol or weights");
    memset(info, 0, sizeof *info);
    info->dim = dim;
    info->precision = (int32_t)precision;
    for (int d = 0; d < 3; d++)
        info->n_grid[d] = d < dim ? smooth_even(2 * n[d] - 1) : 1;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n[3], int iflag, double tol,
                                         warpfft_precision precision, const warpfft_opts *o,
                                         int64_t M, const void *x, const void *y, const void *z,
                                         int weights, const void *w, void *spectrum) {
    char a[32], b[32], c[32], d[32], e[32];
    record("spectrum %dd n %lld %lld %lld iflag %d tol %g prec %d M %lld %s %s %s w%d %s -> %s "
           "stream %#llx upsampfac %g method %d det %d\n",
           dim, (long long)n[0], (long long)n[1], (long long)n[2], iflag, tol, (int)precision,
           (long long)M, where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c),
           weights, where(w, d, sizeof d), where(spectrum, e, sizeof e),
           (unsigned long long)o->stream, o->upsampfac, o->method, o->deterministic);
    return tick("warpfft_toeplitz_spectrum") ? WARPFFT_ERR_CUDA : WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_create(int dim, const int64_t n[3], int iflag, int64_t ntransf,
                                       double tol, warpfft_precision precision,
                                       const warpfft_opts *o, int64_t M, const void *x,
                                       const void *y, const void *z, int weights, const void *w,
                                       warpfft_toeplitz *op) {
    (void)iflag, (void)x, (void)y, (void)z, (void)w;
    record("create %dd n %lld %lld %lld T %lld tol %g prec %d modeord %d stream %#llx M %lld "
           "w%d\n",
           dim, (long long)n[0], (long long)n[1], (long long)n[2], (long long)ntransf, tol,
           (int)precision, o->modeord, (unsigned long long)o->stream, (long long)M, weights);
    if (tick("warpfft_toeplitz_create"))
        return WARPFFT_ERR_OUT_OF_MEMORY;
    struct warpfft_toeplitz_s *h = calloc(1, sizeof *h);
    if (!h)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    h->id = ++op_ids;
    ops_live++;
    *op = h;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op, warpfft_precision precision,
                                               int real, const void *spectrum, int adjoint,
                                               const void *in, void *out) {
    char a[32], b[32], c[32];
    record("apply O%d prec %d real %d %s adjoint %d %s -> %s\n", op->id, (int)precision, real,
           where(spectrum, a, sizeof a), adjoint, where(in, b, sizeof b), where(out, c, sizeof c));
    return tick("warpfft_toeplitz_apply_spectrum") ? WARPFFT_ERR_CUFFT : WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_workspace_bytes(warpfft_toeplitz op, size_t *bytes) {
    (void)op;
    *bytes = 1000;
    return WARPFFT_SUCCESS;
}

static void free_op(warpfft_toeplitz op) {
    record("destroy O%d\n", op->id);
    ops_live--;
    free(op);
}

warpfft_status warpfft_toeplitz_destroy(warpfft_toeplitz op) {
    if (op->pooled)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "stand-in: destroy of a pooled operator");
    free_op(op);
    return WARPFFT_SUCCESS;
}

/* ---- the pool's hooks ---- */

void wf_toeplitz_set_pooled(warpfft_toeplitz op, int pooled) {
    op->pooled = pooled;
}

warpfft_status wf_toeplitz_fence(warpfft_toeplitz op, int *capturing) {
    *capturing = 0;
    record("fence O%d\n", op->id);
    return WARPFFT_SUCCESS;
}

int wf_toeplitz_graph_held(warpfft_toeplitz op) {
    (void)op; /* the handlers capture nothing into CUDA graphs */
    return 0;
}

/* As the library's: waits for the fence (nothing to trace here), never for a stream. */
warpfft_status wf_toeplitz_destroy_fenced(warpfft_toeplitz op) {
    maybe_block("destroy");
    free_op(op);
    return WARPFFT_SUCCESS;
}
