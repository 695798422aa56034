/*
 * oneshot.c — the one-call transforms (warpfft/oneshot.h): warpfft_nufft1, _nufft2 and _nufft3
 * acquire a plan from the live-plan pool (api/pool.c), set the points, execute, and give the plan
 * back without its points. Nothing here chooses or checks what the four public calls do not:
 * the pool resolves the request (so a repeated call finds the idle plan its predecessor gave
 * back), setpts and execute check their arrays. What is added: the points_hint of the call's M
 * (types 1 and 2, when opts leaves it 0), and the release after a failure, which keeps the
 * failure's message and destroys a plan that ran out of device memory.
 */
#include <stdio.h>

#include "params/options.h"
#include "runtime/error.h"

/* The points_hint of a call with M points: M rounded to the nearest power of two (a tie goes
 * up; 0 for M <= 0, the library's "one point per mode"). Not M itself: the pool keys plans on
 * every option, and an exact M would make a new plan for every distinct M, while the choice it
 * informs (upsampfac and width, by predicted time) changes slowly with M. The rule of the other
 * callers that take a plan per call: the XLA handlers (framework/xla_ffi.c, which may use only
 * the public ABI) and the Python package (_lib.points_hint_for). */
static int64_t points_hint_for(int64_t m) {
    if (m <= 0)
        return 0;
    int64_t lo = 1;
    while (lo <= m / 2)
        lo *= 2;
    if (lo > INT64_MAX / 2) /* 2 lo does not fit */
        return lo;
    return m - lo < 2 * lo - m ? lo : 2 * lo;
}

/* One call's arguments beyond the plan's. */
typedef struct one_call {
    int64_t M, K;
    const void *x[3], *s[3];
    void *c, *fk;
} one_call;

/* The plan's options: opts (or the defaults) resolved, with the points_hint of M. */
static warpfft_status call_opts(int type, const warpfft_opts *opts, int64_t M, warpfft_opts *o) {
    warpfft_status st = wf_opts_resolve(opts, o);
    if (st == WARPFFT_SUCCESS && type != 3 && o->points_hint == 0)
        o->points_hint = points_hint_for(M);
    return st;
}

static warpfft_status run(warpfft_plan plan, int type, warpfft_precision precision,
                          const one_call *a) {
    warpfft_status st = type == 3
                            ? warpfft_setpts3(plan, precision, a->M, a->x[0], a->x[1], a->x[2],
                                              a->K, a->s[0], a->s[1], a->s[2])
                            : warpfft_setpts(plan, precision, a->M, a->x[0], a->x[1], a->x[2]);
    return st != WARPFFT_SUCCESS ? st : warpfft_execute(plan, precision, a->c, a->fk);
}

static warpfft_status one_call_run(int type, int dim, const int64_t n_modes[3], int iflag,
                                   int64_t ntransf, double tol, warpfft_precision precision,
                                   const warpfft_opts *opts, const one_call *a) {
    wf_clear_error();
    warpfft_opts o;
    warpfft_status st = call_opts(type, opts, a->M, &o);
    warpfft_plan plan = NULL;
    if (st == WARPFFT_SUCCESS)
        st = warpfft_pool_acquire(type, dim, n_modes, iflag, ntransf, tol, precision, &o, &plan);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = run(plan, type, precision, a);
    if (st == WARPFFT_SUCCESS)
        return warpfft_pool_release(plan, 0);
    /* the failure is the call's result: the release's own (rarer) failure is dropped, and its
     * message must not replace the failure's */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", wf_last_error());
    warpfft_pool_release(plan, st == WARPFFT_ERR_OUT_OF_MEMORY ? WARPFFT_POOL_DISCARD : 0);
    return wf_error(st, "%s", msg);
}

WARPFFT_API warpfft_status warpfft_nufft1(int dim, const int64_t n_modes[3], int iflag,
                                          int64_t ntransf, double tol, warpfft_precision precision,
                                          const warpfft_opts *opts, int64_t M, const void *x,
                                          const void *y, const void *z, const void *c, void *fk) {
    /* execute's strengths are an input of type 1: it does not write them */
    one_call a = {M, 0, {x, y, z}, {NULL, NULL, NULL}, (void *)c, fk};
    return one_call_run(1, dim, n_modes, iflag, ntransf, tol, precision, opts, &a);
}

WARPFFT_API warpfft_status warpfft_nufft2(int dim, const int64_t n_modes[3], int iflag,
                                          int64_t ntransf, double tol, warpfft_precision precision,
                                          const warpfft_opts *opts, int64_t M, const void *x,
                                          const void *y, const void *z, void *c, const void *fk) {
    /* the modes are an input of type 2: execute does not write them */
    one_call a = {M, 0, {x, y, z}, {NULL, NULL, NULL}, c, (void *)fk};
    return one_call_run(2, dim, n_modes, iflag, ntransf, tol, precision, opts, &a);
}

WARPFFT_API warpfft_status warpfft_nufft3(int dim, int iflag, int64_t ntransf, double tol,
                                          warpfft_precision precision, const warpfft_opts *opts,
                                          int64_t M, const void *x, const void *y, const void *z,
                                          const void *c, int64_t K, const void *s, const void *t,
                                          const void *u, void *fk) {
    one_call a = {M, K, {x, y, z}, {s, t, u}, (void *)c, fk};
    return one_call_run(3, dim, NULL, iflag, ntransf, tol, precision, opts, &a);
}
