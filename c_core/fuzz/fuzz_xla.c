/*
 * fuzz_xla.c — libFuzzer target: the decoding of the XLA FFI handler (xla_ffi.c,
 * warpfft_xla_nufft). The input describes a call frame as XLA could hand it over: arguments and
 * results (buffers of any element type, rank and shape that XLA allows, or other kinds),
 * attributes (the handler's names or others, scalars of any type, or other kinds), the metadata
 * extension, the stage, an API table with or without Stream_Get, and which call fails. The
 * handler is linked with a checking stand-in of the public C ABI it calls (as test_xla_ffi.c
 * does, so the target does not depend on how plans are kept): every pointer it passes must lie,
 * with the bytes the call reads or writes, inside one buffer of the frame of the right element
 * type (the transform's output inside the result, never an input); set-points must come before
 * an execute on that plan in the same call, with the plan's type and precision; the options
 * record (attribute opts, hex) must reach the plan field for field, a malformed one never (the
 * handler refuses the call); the plan's points_hint must be
 * the power of two nearest to the M its set-points get (types 1 and 2; 0 for type 3 and for
 * M = 0); real_data (opts) makes execute's strengths real and its modes the half (dimension
 * 1: n1/2 + 1), and never reaches a type-3 plan; every plan taken from the live-plan pool (a small
 * stand-in of warpfft_pool_*: plans kept by key between inputs) must be given back exactly once by
 * the end of the call; and an error must come back through XLA_FFI_Error_Create with a message. Any
 * other outcome aborts, as do the sanitizers. The input's decoding into the frame is
 * fuzz_xla_frame.c's; this file holds the stand-in, its checks and the entry point.
 * c_core/fuzz/run.sh builds and runs it (with fuzz_xla_frame.c); corpus/fuzz_xla holds the seeds
 * (make_seeds.py); WF_FUZZ_TRACE=1 prints the stand-in's calls (fuzz_xla SEED runs one input).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/xla_ffi.h"
#include "fuzz_xla_frame.h"

const char *fuzz_target = "fuzz_xla";

/* ---- the checking stand-in of the C ABI ---- */

struct warpfft_plan_s {
    int type, dim, precision, real; /* real: opts.real_data (real strengths, half modes) */
    int64_t n[3], ntransf, M, K;
    int64_t hint;       /* opts.points_hint it was made with */
    int points_set;     /* in the current handler call */
    uint64_t points_id; /* warpfft_plan_points_id's: 0 until its first set-points or release */
};
static uint64_t points_ids;

static int fail_fn;                /* 1 create, 2 setpts, 3 execute (0: none) */
static warpfft_status fail_status; /* what it returns */
static long live_plans;
static struct warpfft_plan_s *call_plans[64];
static int n_call_plans;

static size_t real_size(int precision) {
    return precision == WARPFFT_F64 ? 8 : 4;
}

warpfft_status warpfft_opts_default(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->upsampfac = 0.0;
    o->check_points = 1;
    o->points_hint = -1; /* not the library's default: the handler must set it */
    return WARPFFT_SUCCESS;
}

/* The power of two nearest to M (a tie up), 0 for M <= 0: what points_hint must be. */
static int64_t nearest_pow2(int64_t M) {
    if (M <= 0)
        return 0;
    int64_t p = 1;
    while (p <= M / 2)
        p *= 2;
    return p > INT64_MAX / 2 || M - p < 2 * p - M ? p : 2 * p;
}

/* The plan's options must be the record of attribute opts (over the defaults when there is none;
 * a malformed one must have been refused), but for what the handler sets per call: check_points
 * 0, the stream, the device, points_hint (checked at set-points) and, for type 3, modeord 0. */
static void check_opts(int type, const warpfft_opts *o) {
    warpfft_opts def, r;
    warpfft_opts_default(&def);
    int k = opts_attr(&def, &r);
    if (k == 0)
        bug("plan_create: the call's opts attribute is malformed, yet a plan was asked for");
    if (o->check_points != 0 || o->stream != 0x5150)
        bug("plan_create: check_points %d, stream %#llx (want 0, 0x5150)", o->check_points,
            (unsigned long long)o->stream);
    if (o->method != r.method || o->max_subprob != r.max_subprob ||
        o->deterministic != r.deterministic || o->spreadinterponly != r.spreadinterponly ||
        o->real_data != r.real_data ||
        memcmp(&o->upsampfac, &r.upsampfac, sizeof r.upsampfac) != 0 ||
        memcmp(o->bin_size, r.bin_size, sizeof r.bin_size) != 0 ||
        o->modeord != (type == 3 ? 0 : r.modeord))
        bug("plan_create: the options differ from the record of attribute opts (method %d/%d, "
            "modeord %d/%d, max_subprob %d/%d, bins %d/%d)",
            o->method, r.method, o->modeord, r.modeord, o->max_subprob, r.max_subprob,
            o->bin_size[0], r.bin_size[0]);
}

warpfft_status warpfft_plan_create(int type, int dim, const int64_t n[3], int iflag,
                                   int64_t ntransf, double eps, warpfft_precision precision,
                                   const warpfft_opts *o, warpfft_plan *plan) {
    trace("plan_create type %d dim %d n %lld %lld %lld iflag %d T %lld eps %g prec %d\n", type, dim,
          n ? (long long)n[0] : -1, n ? (long long)n[1] : -1, n ? (long long)n[2] : -1, iflag,
          (long long)ntransf, eps, (int)precision);
    if (!o || !plan || o->struct_size != sizeof *o || (type != 3 && !n))
        bug("plan_create: bad opts, plan or n_modes pointer");
    check_opts(type, o);
    if (fail_fn == 1)
        return fail_status;
    struct warpfft_plan_s *p = calloc(1, sizeof *p);
    if (!p)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    if (o->points_hint < 0 || (type == 3 && o->points_hint != 0))
        bug("plan_create: type %d with points_hint %lld", type, (long long)o->points_hint);
    if (type == 3 && o->real_data)
        bug("plan_create: type 3 with real_data %d (the handler refuses it)", o->real_data);
    *p = (struct warpfft_plan_s){.type = type,
                                 .dim = dim,
                                 .precision = (int)precision,
                                 .real = o->real_data != 0,
                                 .n = {1, 1, 1},
                                 .ntransf = ntransf,
                                 .M = -1,
                                 .K = -1,
                                 .hint = o->points_hint};
    for (int d = 0; d < 3 && type != 3; d++)
        p->n[d] = n[d];
    live_plans++;
    *plan = p;
    return WARPFFT_SUCCESS;
}

static void note_plan(struct warpfft_plan_s *p) {
    for (int i = 0; i < n_call_plans; i++)
        if (call_plans[i] == p)
            return;
    if (n_call_plans < 64)
        call_plans[n_call_plans++] = p;
}

/* The common end of the four set-points stand-ins: the call's plan noted, a new points id (the
 * old points are gone even if the call fails), the injected failure, else M and K taken. */
static warpfft_status take_points(struct warpfft_plan_s *p, int64_t M, int64_t K) {
    note_plan(p);
    p->points_set = 0;
    p->points_id = ++points_ids;
    if (fail_fn == 2)
        return fail_status;
    p->M = M;
    p->K = K;
    p->points_set = 1;
    return WARPFFT_SUCCESS;
}

static void check_coords(const char *what, const struct warpfft_plan_s *p, int64_t len,
                         const void *const c[3]) {
    if (len < 0)
        bug("%s: %lld points", what, (long long)len);
    int real = p->precision == WARPFFT_F64 ? WF_XLA_F64 : WF_XLA_F32;
    for (int d = 0; d < 3; d++) {
        if (d >= p->dim) {
            if (c[d])
                bug("%s: coordinate %d given to a %dD plan", what, d, p->dim);
            continue;
        }
        if (!c[d] && len > 0)
            bug("%s: coordinate %d is NULL", what, d);
        check_extent(what, c[d], mul((uint64_t)len, real_size(p->precision)), real, 0);
    }
}

warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                              const void *x, const void *y, const void *z) {
    if (plan->type == 3 || (int)precision != plan->precision)
        bug("setpts on a type-%d %s plan with precision %d", plan->type,
            plan->precision == WARPFFT_F64 ? "f64" : "f32", (int)precision);
    trace("setpts M %lld\n", (long long)M);
    if (plan->hint != nearest_pow2(M))
        bug("setpts M %lld on a plan made with points_hint %lld", (long long)M,
            (long long)plan->hint);
    const void *c[3] = {x, y, z};
    check_coords("setpts", plan, M, c);
    return take_points(plan, M, plan->K);
}

warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision, int64_t M,
                               const void *x, const void *y, const void *z, int64_t K,
                               const void *s, const void *t, const void *u) {
    if (plan->type != 3 || (int)precision != plan->precision)
        bug("setpts3 on a type-%d plan with precision %d", plan->type, (int)precision);
    trace("setpts3 M %lld K %lld\n", (long long)M, (long long)K);
    const void *src[3] = {x, y, z}, *tgt[3] = {s, t, u};
    check_coords("setpts3 sources", plan, M, src);
    check_coords("setpts3 targets", plan, K, tgt);
    return take_points(plan, M, K);
}

/* Batched points: n_sets sets of M (and K) points, set after set; n_sets divides ntransf. */
static void check_sets(const char *what, const struct warpfft_plan_s *plan, int64_t n_sets,
                       int64_t M) {
    if (n_sets < 2 || plan->ntransf % n_sets != 0 || n_sets > 65535)
        bug("%s: %lld point sets for ntransf %lld", what, (long long)n_sets,
            (long long)plan->ntransf);
    if (M < 0 || M > (int64_t)(UINT64_MAX / 16) / n_sets)
        bug("%s: %lld sets of %lld points", what, (long long)n_sets, (long long)M);
}

warpfft_status warpfft_setpts_sets(warpfft_plan plan, warpfft_precision precision, int64_t n_sets,
                                   int64_t M, const void *x, const void *y, const void *z) {
    if (plan->type == 3 || (int)precision != plan->precision)
        bug("setpts_sets on a type-%d plan with precision %d", plan->type, (int)precision);
    trace("setpts_sets n_sets %lld M %lld\n", (long long)n_sets, (long long)M);
    if (plan->hint != nearest_pow2(M))
        bug("setpts_sets M %lld on a plan made with points_hint %lld", (long long)M,
            (long long)plan->hint);
    check_sets("setpts_sets", plan, n_sets, M);
    const void *c[3] = {x, y, z};
    check_coords("setpts_sets", plan, n_sets * M, c);
    return take_points(plan, M, plan->K);
}

warpfft_status warpfft_setpts3_sets(warpfft_plan plan, warpfft_precision precision, int64_t n_sets,
                                    int64_t M, const void *x, const void *y, const void *z,
                                    int64_t K, const void *s, const void *t, const void *u) {
    if (plan->type != 3 || (int)precision != plan->precision)
        bug("setpts3_sets on a type-%d plan with precision %d", plan->type, (int)precision);
    trace("setpts3_sets n_sets %lld M %lld K %lld\n", (long long)n_sets, (long long)M,
          (long long)K);
    check_sets("setpts3_sets", plan, n_sets, M > K ? M : K);
    const void *src[3] = {x, y, z}, *tgt[3] = {s, t, u};
    check_coords("setpts3_sets sources", plan, n_sets * M, src);
    check_coords("setpts3_sets targets", plan, n_sets * K, tgt);
    return take_points(plan, M, K);
}

warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c, void *fk) {
    if ((int)precision != plan->precision || !plan->points_set)
        bug("execute on a type-%d plan: precision %d (plan %d), points %s in this call", plan->type,
            (int)precision, plan->precision, plan->points_set ? "set" : "NOT set");
    trace("execute c %p fk %p\n", c, fk);
    int cplx = plan->precision == WARPFFT_F64 ? WF_XLA_C128 : WF_XLA_C64;
    int real = plan->precision == WARPFFT_F64 ? WF_XLA_F64 : WF_XLA_F32;
    uint64_t cb = 2 * real_size(plan->precision);
    /* real_data: real strengths, the half modes (dimension 1: n/2 + 1) */
    uint64_t n1 = plan->real ? (uint64_t)plan->n[0] / 2 + 1 : (uint64_t)plan->n[0];
    uint64_t nk = plan->type == 3 ? (uint64_t)plan->K : mul(mul(n1, plan->n[1]), plan->n[2]);
    uint64_t c_bytes =
        mul(mul((uint64_t)plan->ntransf, (uint64_t)plan->M), plan->real ? cb / 2 : cb);
    uint64_t fk_bytes = mul(mul((uint64_t)plan->ntransf, nk), cb);
    /* type 2 writes c (interpolated strengths); types 1 and 3 write fk */
    check_extent("execute c", c, c_bytes, plan->real ? real : cplx, plan->type == 2);
    check_extent("execute fk", fk, fk_bytes, cplx, plan->type != 2);
    return fail_fn == 3 ? fail_status : WARPFFT_SUCCESS;
}

static int pool_has(warpfft_plan plan);

warpfft_status warpfft_plan_destroy(warpfft_plan plan) {
    if (pool_has(plan))
        bug("warpfft_plan_destroy on a plan of the pool");
    free(plan);
    live_plans--;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id) {
    if (!plan || !id)
        bug("warpfft_plan_points_id: a NULL argument");
    *id = plan->points_id;
    return WARPFFT_SUCCESS;
}

/* ---- the live-plan pool (warpfft.h), as a small stand-in: the target checks the handler's use
 * of it, not the pool (api/pool.c: test_pool*.c and test_xla_ffi.c). Idle plans are kept by key
 * between inputs, so that inputs reach the handler with a plan another call used. ---- */

enum { POOL_MAX = 8 };
typedef struct pool_key {
    int type, dim, iflag, precision;
    int64_t n[3], ntransf;
    double tol;
    warpfft_opts opts;
} pool_key;
static struct pool_entry {
    pool_key key;
    warpfft_plan plan; /* NULL: a free slot */
    int busy;
} pool[POOL_MAX];
static int pool_busy;

static int pool_has(warpfft_plan plan) {
    for (int i = 0; i < POOL_MAX; i++)
        if (pool[i].plan && pool[i].plan == plan)
            return 1;
    return 0;
}

static void pool_drop(int i) {
    /* a plan this call used and gave back (the handler's fallback from batched points) may be
     * evicted within the call: it is no longer one of the call's */
    for (int j = 0; j < n_call_plans; j++)
        if (call_plans[j] == pool[i].plan)
            call_plans[j--] = call_plans[--n_call_plans];
    free(pool[i].plan);
    live_plans--;
    memset(&pool[i], 0, sizeof pool[i]);
}

warpfft_status warpfft_pool_acquire(int type, int dim, const int64_t n_modes[3], int iflag,
                                    int64_t ntransf, double tol, warpfft_precision precision,
                                    const warpfft_opts *opts, warpfft_plan *plan) {
    if (!plan || !opts)
        bug("warpfft_pool_acquire: a NULL opts or plan");
    pool_key k;
    memset(&k, 0, sizeof k); /* compared with memcmp */
    k.type = type, k.dim = dim, k.iflag = iflag >= 0 ? 1 : -1, k.precision = (int)precision;
    for (int d = 0; n_modes && type != 3 && d < 3; d++)
        k.n[d] = n_modes[d];
    k.ntransf = ntransf, k.tol = tol;
    memcpy(&k.opts, opts, sizeof k.opts);
    for (int i = 0; i < POOL_MAX; i++)
        if (pool[i].plan && !pool[i].busy && memcmp(&pool[i].key, &k, sizeof k) == 0) {
            pool[i].busy = 1;
            pool_busy++;
            *plan = pool[i].plan;
            trace("pool: plan %p again\n", (void *)*plan);
            return WARPFFT_SUCCESS;
        }
    warpfft_status st =
        warpfft_plan_create(type, dim, n_modes, iflag, ntransf, tol, precision, opts, plan);
    if (st != WARPFFT_SUCCESS)
        return st;
    int slot = -1; /* a free slot, else an idle plan's */
    for (int i = 0; i < POOL_MAX && slot < 0; i++)
        if (!pool[i].plan)
            slot = i;
    for (int i = 0; i < POOL_MAX && slot < 0; i++)
        if (!pool[i].busy)
            slot = i;
    if (slot < 0)
        bug("warpfft_pool_acquire: %d plans in use at once", POOL_MAX);
    if (pool[slot].plan)
        pool_drop(slot);
    pool[slot] = (struct pool_entry){k, *plan, 1};
    pool_busy++;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_pool_release(warpfft_plan plan, uint32_t flags) {
    if (flags & ~(WARPFFT_POOL_KEEP_POINTS | WARPFFT_POOL_DISCARD))
        bug("warpfft_pool_release: flags %#x", (unsigned)flags);
    for (int i = 0; i < POOL_MAX; i++) {
        if (!pool[i].plan || pool[i].plan != plan)
            continue;
        if (!pool[i].busy)
            bug("warpfft_pool_release: the plan was released already");
        pool[i].busy = 0;
        pool_busy--;
        if (flags & WARPFFT_POOL_DISCARD) { /* destroyed now (a batched plan that failed) */
            trace("pool: plan %p discarded\n", (void *)plan);
            pool_drop(i);
            return WARPFFT_SUCCESS;
        }
        if (!(flags & WARPFFT_POOL_KEEP_POINTS) || !plan->points_id) {
            plan->points_set = 0;
            plan->points_id = ++points_ids;
        }
        return WARPFFT_SUCCESS;
    }
    bug("warpfft_pool_release: a plan the pool did not hand out");
}

warpfft_status warpfft_pool_clear(void) {
    for (int i = 0; i < POOL_MAX; i++)
        if (pool[i].plan && !pool[i].busy)
            pool_drop(i);
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_pool_get_info(warpfft_pool_info *info) {
    if (!info || info->struct_size < sizeof *info)
        bug("warpfft_pool_get_info: no room");
    int64_t idle = 0;
    for (int i = 0; i < POOL_MAX; i++)
        idle += pool[i].plan && !pool[i].busy;
    info->idle = idle;
    info->busy = pool_busy;
    return WARPFFT_SUCCESS;
}

/* ---- one input ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    uint8_t flags = (uint8_t)take(&r, 1);
    fail_fn = flags % 4;
    fail_status = (warpfft_status)(1 + flags / 4 % 19);
    stream_fails = flags / 128;
    if (!make_frame(&r))
        return -1; /* not a frame XLA would make: not added to the corpus */
    n_call_plans = 0;
    xla_side();
    XLA_FFI_Error *e = warpfft_xla_nufft(&fr.f);
    trace("handler: %s\n", e ? "an error" : "success");
    check_error(e);
    if (pool_busy)
        bug("the call kept %d plan(s) of the pool", pool_busy);
    for (int i = 0; i < n_call_plans; i++)
        call_plans[i]->points_set = 0;
    return 0;
}
