/*
 * fuzz_xla_toeplitz.c — libFuzzer target: the decoding of the Toeplitz operator's XLA FFI
 * handlers (xla_toeplitz.c: warpfft_xla_toeplitz_spectrum, warpfft_xla_toeplitz_apply), as
 * fuzz_xla.c does for the NUFFT handler. The input's first byte picks the handler and which C
 * call fails (and how); the rest is a call frame as XLA could hand it over (fuzz_xla_frame.c:
 * buffers of any element type, rank and shape, attributes of any name and type, the metadata
 * extension, the stage, an API table with or without Stream_Get). The handlers are linked with
 * a checking stand-in of the public C ABI they call: warpfft_toeplitz_params (the grid of
 * docs/toeplitz.md, and create's argument checks), _spectrum, _apply_spectrum, and the pool's
 * warpfft_pool_acquire_toeplitz / _release_toeplitz / warpfft_pool_clear (a small pool of zero
 * operators). Every pointer a handler passes must lie, with the bytes the call reads or writes,
 * inside one buffer of the frame of the right element type (what a call writes inside the
 * result, never an input); the spectrum call's arrays and the apply call's spectrum and modes
 * must match the grid params gave; the apply handler's operator must come from the pool, on
 * XLA's stream, be applied with the modes' precision only while the handler holds it, and be
 * given back before the call returns (no operator held between calls); no handler may wait on
 * the host for a stream (warpfft_stream_sync: the operators' old cache did at every eviction);
 * a handler's error must come back through XLA_FFI_Error_Create with a message. Any other
 * outcome aborts, as do the sanitizers. c_core/fuzz/run.sh builds and
 * runs it (with fuzz_xla_frame.c); corpus/fuzz_xla_toeplitz holds the seeds (make_seeds.py);
 * WF_FUZZ_TRACE=1 prints the stand-in's calls.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/xla_ffi.h"
#include "fuzz_xla_frame.h"

const char *fuzz_target = "fuzz_xla_toeplitz";

/* ---- the checking stand-in of the C ABI ---- */

enum { FAIL_NONE, FAIL_PARAMS, FAIL_SPECTRUM, FAIL_CREATE, FAIL_APPLY, FAIL_DESTROY };
static int fail_fn;
static warpfft_status fail_status;

warpfft_status warpfft_opts_default(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->upsampfac = 0.0;
    o->check_points = 1;
    return WARPFFT_SUCCESS;
}

/* The smallest even 2,3,5,7-smooth integer >= n (docs/toeplitz.md's L). */
static int64_t smooth_even(int64_t n) {
    for (int64_t m = n < 2 ? 2 : n + (n & 1);; m += 2) {
        int64_t r = m;
        for (int p = 2; p <= 7; p++)
            while (r % p == 0)
                r /= p;
        if (r == 1)
            return m;
    }
}

/* The grid and sizes of an operator of these arguments (create's checks). */
static warpfft_status grid(int dim, const int64_t n[3], int64_t ntransf, double tol, int prec,
                           const warpfft_opts *o, int weights, warpfft_toeplitz_info *info) {
    if (!o || o->struct_size != sizeof *o)
        bug("warpfft_toeplitz_*: bad opts");
    if (dim < 1 || dim > 3)
        return WARPFFT_ERR_BAD_DIM;
    if (prec != WARPFFT_F32 && prec != WARPFFT_F64)
        return WARPFFT_ERR_INVALID_ARG;
    if (!(tol >= (prec == WARPFFT_F32 ? 1e-6 : 1e-13) && tol <= 0.1))
        return WARPFFT_ERR_BAD_TOL;
    if (weights < 0 || weights > 2 || ntransf < 1 || ntransf > (int64_t)1 << 20)
        return WARPFFT_ERR_INVALID_ARG;
    memset(info, 0, sizeof *info);
    info->dim = dim;
    info->precision = prec;
    info->weights = weights;
    info->spectrum_real = weights != WARPFFT_WEIGHTS_COMPLEX;
    info->ntransf = ntransf;
    uint64_t cells = 1;
    for (int d = 0; d < 3; d++) {
        int64_t nd = d < dim ? n[d] : 1;
        if (nd < 1 || nd > 4096) /* the stand-in's bound: the real one is 2^31 cells */
            return WARPFFT_ERR_BAD_SIZE;
        info->n_modes[d] = nd;
        info->n_grid[d] = d < dim ? smooth_even(2 * nd - 1) : 1;
        cells = mul(cells, (uint64_t)info->n_grid[d]);
    }
    size_t real = prec == WARPFFT_F64 ? 8 : 4;
    info->spectrum_bytes = mul(cells, info->spectrum_real ? real : 2 * real);
    info->grid_bytes = mul(mul(cells, 2 * real), (uint64_t)ntransf);
    info->n_points = -1;
    info->tol = tol;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_params(int dim, const int64_t n_modes[3], int64_t ntransf,
                                       double tol, warpfft_precision precision,
                                       const warpfft_opts *opts, int weights,
                                       warpfft_toeplitz_info *info) {
    trace("toeplitz_params dim %d T %lld tol %g prec %d weights %d\n", dim, (long long)ntransf, tol,
          (int)precision, weights);
    if (!n_modes || !info)
        bug("warpfft_toeplitz_params: a NULL pointer");
    if (fail_fn == FAIL_PARAMS)
        return fail_status;
    return grid(dim, n_modes, ntransf, tol, (int)precision, opts, weights, info);
}

static int real_type(int prec) {
    return prec == WARPFFT_F64 ? WF_XLA_F64 : WF_XLA_F32;
}
static int cplx_type(int prec) {
    return prec == WARPFFT_F64 ? WF_XLA_C128 : WF_XLA_C64;
}

warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n[3], int iflag, double tol,
                                         warpfft_precision precision, const warpfft_opts *opts,
                                         int64_t M, const void *x, const void *y, const void *z,
                                         int weights, const void *w, void *spectrum) {
    (void)iflag;
    trace("toeplitz_spectrum dim %d M %lld weights %d\n", dim, (long long)M, weights);
    warpfft_toeplitz_info info;
    warpfft_status st = grid(dim, n, 1, tol, (int)precision, opts, weights, &info);
    if (st != WARPFFT_SUCCESS)
        bug("toeplitz_spectrum with arguments params refused (%d)", (int)st);
    if (opts->stream != 0x5150)
        bug("toeplitz_spectrum not on XLA's stream");
    if (M < 1) /* the handler passes on what XLA gave: an empty set is the library's refusal */
        return WARPFFT_ERR_BAD_NPOINTS;
    size_t real = precision == WARPFFT_F64 ? 8 : 4;
    const void *c[3] = {x, y, z};
    for (int d = 0; d < 3; d++) {
        if (d >= dim && c[d])
            bug("toeplitz_spectrum: coordinate %d given in %dD", d, dim);
        if (d < dim)
            check_extent("toeplitz_spectrum points", c[d], mul((uint64_t)M, real),
                         real_type((int)precision), 0);
    }
    if (weights != WARPFFT_WEIGHTS_NONE)
        check_extent("toeplitz_spectrum weights", w,
                     mul((uint64_t)M, weights == WARPFFT_WEIGHTS_REAL ? real : 2 * real),
                     weights == WARPFFT_WEIGHTS_REAL ? real_type((int)precision)
                                                     : cplx_type((int)precision),
                     0);
    else if (w)
        bug("toeplitz_spectrum: weights given with WARPFFT_WEIGHTS_NONE");
    check_extent("toeplitz_spectrum result", spectrum, info.spectrum_bytes,
                 info.spectrum_real ? real_type((int)precision) : cplx_type((int)precision), 1);
    return fail_fn == FAIL_SPECTRUM ? fail_status : WARPFFT_SUCCESS;
}

struct warpfft_toeplitz_s {
    warpfft_toeplitz_info info;
    uint64_t key_stream;
    int live, busy;
};

/* ---- the live-plan pool's operators (warpfft/pool.h), as a small stand-in: the target checks
 * the handler's use of it, not the pool (api/pool.c: test_pool_toeplitz.c, test_xla_ffi.c).
 * Idle operators are kept by key up to POOL_MAX; an acquire past that many busy at once is a
 * bug (the handler holds one per call). */

enum { POOL_MAX = 4 };
static struct warpfft_toeplitz_s *pool[POOL_MAX];
static long live_ops, busy_ops, acquired, reused;

static int same_key(const warpfft_toeplitz_info *a, const warpfft_toeplitz_info *b) {
    return a->dim == b->dim && a->precision == b->precision && a->ntransf == b->ntransf &&
           a->tol == b->tol && memcmp(a->n_modes, b->n_modes, sizeof a->n_modes) == 0;
}

static void drop(int i) {
    pool[i]->live = 0;
    free(pool[i]);
    pool[i] = NULL;
    live_ops--;
}

warpfft_status warpfft_pool_acquire_toeplitz(int dim, const int64_t n[3], int64_t ntransf,
                                             double tol, warpfft_precision precision,
                                             const warpfft_opts *opts, warpfft_toeplitz *op) {
    trace("pool_acquire_toeplitz dim %d T %lld prec %d\n", dim, (long long)ntransf, (int)precision);
    if (!op || !n)
        bug("warpfft_pool_acquire_toeplitz: a NULL pointer");
    if (opts->stream != 0x5150)
        bug("an operator not on XLA's stream");
    warpfft_toeplitz_info info;
    warpfft_status st = grid(dim, n, ntransf, tol, (int)precision, opts, 0, &info);
    if (st != WARPFFT_SUCCESS)
        bug("warpfft_pool_acquire_toeplitz with arguments params refused (%d)", (int)st);
    acquired++;
    int slot = -1;
    for (int i = 0; i < POOL_MAX; i++) {
        if (pool[i] && !pool[i]->busy && same_key(&pool[i]->info, &info)) {
            pool[i]->busy = 1;
            busy_ops++;
            reused++;
            *op = pool[i];
            return WARPFFT_SUCCESS;
        }
        if (slot < 0 && (!pool[i] || !pool[i]->busy))
            slot = i;
    }
    if (slot < 0)
        bug("warpfft_pool_acquire_toeplitz: %d operators in use at once", POOL_MAX);
    if (fail_fn == FAIL_CREATE)
        return fail_status;
    if (pool[slot])
        drop(slot); /* evicted: idle, its fence waited for, no stream */
    struct warpfft_toeplitz_s *h = calloc(1, sizeof *h);
    if (!h)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    h->info = info;
    h->live = h->busy = 1;
    pool[slot] = h;
    live_ops++;
    busy_ops++;
    *op = h;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_pool_release_toeplitz(warpfft_toeplitz op, uint32_t flags) {
    trace("pool_release_toeplitz %u\n", flags);
    if (!op || !op->live || !op->busy)
        bug("warpfft_pool_release_toeplitz of an operator the handler does not hold");
    if (flags & ~(uint32_t)(WARPFFT_POOL_KEEP_POINTS | WARPFFT_POOL_DISCARD))
        bug("warpfft_pool_release_toeplitz: flags %#x", flags);
    op->busy = 0;
    busy_ops--;
    /* a failed destroy (of one a clear doomed, say) comes back here: the operator stays */
    return fail_fn == FAIL_DESTROY ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_pool_clear(void) {
    for (int i = 0; i < POOL_MAX; i++)
        if (pool[i] && !pool[i]->busy)
            drop(i);
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op, warpfft_precision precision,
                                               int spectrum_real, const void *spectrum, int adjoint,
                                               const void *in, void *out) {
    (void)adjoint;
    trace("toeplitz_apply_spectrum real %d\n", spectrum_real);
    if (!op || !op->live || !op->busy)
        bug("toeplitz_apply_spectrum on an operator the handler does not hold");
    const warpfft_toeplitz_info *i = &op->info;
    if ((int)precision != i->precision)
        bug("toeplitz_apply_spectrum: precision %d on an operator of %d", (int)precision,
            i->precision);
    size_t real = precision == WARPFFT_F64 ? 8 : 4;
    uint64_t cells =
        mul(mul((uint64_t)i->n_grid[0], (uint64_t)i->n_grid[1]), (uint64_t)i->n_grid[2]);
    uint64_t modes =
        mul(mul(mul((uint64_t)i->n_modes[0], (uint64_t)i->n_modes[1]), (uint64_t)i->n_modes[2]),
            (uint64_t)i->ntransf);
    check_extent("toeplitz_apply_spectrum spectrum", spectrum,
                 mul(cells, spectrum_real ? real : 2 * real),
                 spectrum_real ? real_type((int)precision) : cplx_type((int)precision), 0);
    check_extent("toeplitz_apply_spectrum in", in, mul(modes, 2 * real), cplx_type((int)precision),
                 0);
    check_extent("toeplitz_apply_spectrum out", out, mul(modes, 2 * real),
                 cplx_type((int)precision), 1);
    return fail_fn == FAIL_APPLY ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_stream_sync(int device, uint64_t stream) {
    bug("warpfft_stream_sync(%d, %#llx): a handler waiting on the host for a stream (the "
        "operators' old cache did at every eviction)",
        device, (unsigned long long)stream);
}

/* ---- one input ---- */

/* Calls per handler, printed at exit (run.sh shows them). */
static long calls[2], errors[2];

static void print_calls(void) {
    fprintf(stderr,
            "fuzz_xla_toeplitz calls: warpfft_xla_toeplitz_spectrum %ld (%ld errors) "
            "warpfft_xla_toeplitz_apply %ld (%ld errors); operators acquired from the pool %ld "
            "(%ld idle ones reused)\n",
            calls[0], errors[0], calls[1], errors[1], acquired, reused);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    atexit(print_calls);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    uint8_t flags = (uint8_t)take(&r, 1);
    int apply = flags & 1;
    fail_fn = flags / 2 % 6;
    fail_status = (warpfft_status)(1 + flags / 12 % 19);
    stream_fails = (flags & 0xc0) == 0xc0;
    if (!make_frame(&r))
        return -1; /* not a frame XLA would make: not added to the corpus */
    xla_side();
    XLA_FFI_Error *e =
        apply ? warpfft_xla_toeplitz_apply(&fr.f) : warpfft_xla_toeplitz_spectrum(&fr.f);
    trace("handler (%s): %s\n", apply ? "apply" : "spectrum", e ? "an error" : "success");
    calls[apply]++;
    errors[apply] += e != NULL;
    check_error(e);
    if (busy_ops != 0) /* every operator the call acquired, given back */
        bug("%ld operators still held after the call", busy_ops);
    if (flags == 0xff) { /* now and then: the pool's clear (every idle operator goes) */
        warpfft_pool_clear();
        if (live_ops != 0)
            bug("%ld operators live after a clear", live_ops);
    }
    return 0;
}
