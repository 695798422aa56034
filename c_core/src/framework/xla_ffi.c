/*
 * xla_ffi.c — the XLA FFI custom-call handler behind warpfft.jax (see xla_ffi.h for the
 * contract). It decodes XLA's call frame, takes a plan from the live-plan pool (warpfft.h,
 * api/pool.c: shared with every other user in the process), and runs setpts + execute on the
 * stream XLA hands it, all through the public C ABI. No GPU work happens outside the execute
 * stage; errors come back to XLA as XLA_FFI_Error values (JAX raises them).
 * G groups with their own points (Gp = G > 1) run as one plan of G * T transforms with batched
 * points (xla_ffi.h), else group after group on a plan of T.
 */
#include "framework/xla_ffi.h"

#include "framework/xla_common.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan's key: what warpfft_pool_acquire is called with. opts: the call's options record
 * (the attribute opts), whose device, stream and points_hint run_call sets per call. */
typedef struct wf_xla_key {
    int type, dim, precision, iflag;
    int64_t n[3];
    int64_t ntransf;
    double eps;
    warpfft_opts opts;
} wf_xla_key;

static atomic_llong wf_xla_created;

/* ---- plans, from the live-plan pool (api/pool.c) ---- */

/* A plan for `key` from the pool (made there if none is idle): the caller's until released. */
static warpfft_status acquire_plan(const wf_xla_key *key, warpfft_plan *plan) {
    warpfft_status st =
        warpfft_pool_acquire(key->type, key->dim, key->n, key->iflag, key->ntransf, key->eps,
                             (warpfft_precision)key->precision, &key->opts, plan);
    /* A plan the pool made for this acquire is the only kind with points id 0: every plan given
     * back to the pool has taken a nonzero one (warpfft.h). */
    uint64_t points_id = 1;
    if (st == WARPFFT_SUCCESS && warpfft_plan_points_id(*plan, &points_id) == WARPFFT_SUCCESS &&
        points_id == 0)
        atomic_fetch_add(&wf_xla_created, 1);
    return st;
}

WARPFFT_API int64_t warpfft_xla_plans_created(void) {
    return (int64_t)atomic_load(&wf_xla_created);
}

/* ---- the handler ---- */

/* A decoded call: its plan's key (run_call adds the stream and the device), and what each of
 * its G groups passes to setpts (types 1, 2) or setpts3 (type 3) and to execute. */
typedef struct wf_xla_call {
    wf_xla_key key;
    int64_t G, Gp, M, K;          /* groups, point sets (G or 1), points, type 3's targets */
    const XLA_FFI_Buffer *pts[6]; /* x, y, z (Gp, M), type 3's s, t, u (Gp, K); NULL past dim */
    /* execute's c and fk (strengths and modes; type 3: source and result), G slices each */
    const XLA_FFI_Buffer *c, *fk;
    size_t c_group, fk_group; /* bytes per slice */
    void *data;               /* a buffer on the device the plan is for */
    int empty;                /* nothing to compute: no stream, no plan */
} wf_xla_call;

/* base + off; NULL stays NULL (an empty array may have no data, and arithmetic on a null
 * pointer is undefined even for an offset of 0). */
static void *at(void *base, size_t off) {
    return base ? (char *)base + off : NULL;
}

/* Whether the G groups run as one plan with batched points: not with OD spreading (one set a
 * plan), nor past warpfft_setpts_sets' 65535 sets. */
static int batched_points(const wf_xla_call *c) {
    const warpfft_opts *o = &c->key.opts;
    int od = o->method == WARPFFT_METHOD_OD || (o->deterministic && c->key.type != 2);
    return c->Gp > 1 && c->G > 1 && c->G <= 65535 && !od;
}

/* All G point sets at once (the (G, M) arrays are the sets' layout); names the call in *what. */
static warpfft_status set_point_sets(const wf_xla_call *c, warpfft_plan plan, const char **what) {
    const void *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    for (int s = 0; s < 6; s++)
        if (c->pts[s])
            p[s] = c->pts[s]->data;
    warpfft_precision prec = (warpfft_precision)c->key.precision;
    if (c->key.type == 3) {
        *what = "warpfft_setpts3_sets";
        return warpfft_setpts3_sets(plan, prec, c->G, c->M, p[0], p[1], p[2], c->K, p[3], p[4],
                                    p[5]);
    }
    *what = "warpfft_setpts_sets";
    return warpfft_setpts_sets(plan, prec, c->G, c->M, p[0], p[1], p[2]);
}

/* Sets group g's points (row g of the coordinate arrays; row 0 when one set serves every group)
 * and names the call in *what. */
static warpfft_status set_points(const wf_xla_call *c, warpfft_plan plan, int64_t g,
                                 const char **what) {
    size_t real_bytes = c->key.precision == WARPFFT_F32 ? 4 : 8;
    const char *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    for (int s = 0; s < 6; s++) {
        size_t row = (size_t)(s < 3 ? c->M : c->K) * real_bytes;
        if (c->pts[s])
            p[s] = at(c->pts[s]->data, c->Gp > 1 ? (size_t)g * row : 0);
    }
    warpfft_precision prec = (warpfft_precision)c->key.precision;
    if (c->key.type == 3) {
        *what = "warpfft_setpts3";
        return warpfft_setpts3(plan, prec, c->M, p[0], p[1], p[2], c->K, p[3], p[4], p[5]);
    }
    *what = "warpfft_setpts";
    return warpfft_setpts(plan, prec, c->M, p[0], p[1], p[2]);
}

/* The groups on `plan`: all at once (sets), else each its points (once when shared) and its T
 * transforms. The first failure ends it. */
static warpfft_status run_groups(const wf_xla_call *c, warpfft_plan plan, int sets,
                                 const char **what) {
    warpfft_precision prec = (warpfft_precision)c->key.precision;
    warpfft_status st = WARPFFT_SUCCESS;
    if (sets) {
        st = set_point_sets(c, plan, what);
        if (st != WARPFFT_SUCCESS)
            return st;
        *what = "warpfft_execute";
        return warpfft_execute(plan, prec, c->c->data, c->fk->data);
    }
    for (int64_t g = 0; g < c->G && st == WARPFFT_SUCCESS; g++) {
        if (g == 0 || c->Gp > 1) {
            st = set_points(c, plan, g, what);
            if (st != WARPFFT_SUCCESS)
                break;
        }
        *what = "warpfft_execute";
        st = warpfft_execute(plan, prec, at(c->c->data, (size_t)g * c->c_group),
                             at(c->fk->data, (size_t)g * c->fk_group));
    }
    return st;
}

/* One call, any type: XLA's stream, a plan of the pool (G * T transforms with batched points,
 * else T), the groups, all enqueued on the stream. Where the batched plan cannot be made or
 * take the sets (OUT_OF_MEMORY: its G * T grids; BAD_SIZE: the sets' bins; nothing enqueued),
 * the groups run on a plan of T instead, as they did before batched points. The batched plan
 * that failed is destroyed, not given back idle: kept, its G * T grids would make the fallback
 * run out of memory too, and every later call of the shape would take it again. */
static XLA_FFI_Error *run_call(XLA_FFI_CallFrame *f, wf_xla_call *c) {
    XLA_FFI_Error *e = wf_xla_stream_of(f, &c->key.opts.stream);
    if (e)
        return e;
    c->key.opts.device = wf_xla_device_of(c->data);
    int sets = batched_points(c);
    int64_t T = c->key.ntransf;
    c->key.ntransf = sets ? T * c->G : T; /* G <= 65535 groups of T: their arrays exist: fits */
    warpfft_plan plan = NULL;
    warpfft_status st = acquire_plan(&c->key, &plan);
    const char *what = "warpfft_plan_create";
    if (st == WARPFFT_SUCCESS)
        st = run_groups(c, plan, sets, &what);
    if (sets && (st == WARPFFT_ERR_OUT_OF_MEMORY || st == WARPFFT_ERR_BAD_SIZE) &&
        strncmp(what, "warpfft_execute", 15) != 0) {
        /* its memory back before the fallback allocates (a destroy's failure matters less
         * than the call's own, which the fallback reports or replaces) */
        if (plan)
            warpfft_pool_release(plan, WARPFFT_POOL_DISCARD);
        c->key.ntransf = T;
        plan = NULL;
        st = acquire_plan(&c->key, &plan);
        if (st == WARPFFT_SUCCESS)
            st = run_groups(c, plan, 0, &what);
    }
    if (!plan)
        return wf_xla_status_error(f, st, "warpfft_plan_create");
    /* Back to the pool (which fences the work just enqueued). A failure there (destroying a plan
     * a clear asked for) matters less than the call's own. */
    XLA_FFI_Error *err = st != WARPFFT_SUCCESS ? wf_xla_status_error(f, st, what) : NULL;
    warpfft_status rst = warpfft_pool_release(plan, 0);
    if (err)
        return err;
    if (rst != WARPFFT_SUCCESS)
        return wf_xla_status_error(f, rst, "warpfft_pool_release");
    return NULL;
}

/* ---- decoding a call frame ---- */

/* The source, the result and the `dim` coordinate arrays (type 3: twice `dim`) of a call, and
 * its precision, from source and result. */
static XLA_FFI_Error *take_buffers(XLA_FFI_CallFrame *f, wf_xla_call *c, int dim,
                                   const XLA_FFI_Buffer **src, const XLA_FFI_Buffer **out) {
    *src = wf_xla_arg_buffer(f, 0);
    *out = (const XLA_FFI_Buffer *)f->rets.rets[0];
    for (int s = 0; s < (c->key.type == 3 ? 6 : 3); s++)
        if (s % 3 < dim && !(c->pts[s] = wf_xla_arg_buffer(f, 1 + s % 3 + (s < 3 ? 0 : dim))))
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: arguments must be buffers");
    if (!*src)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: arguments must be buffers");
    /* real_data (types 1 and 2, docs/real.md): the strengths are real -- type 1's source,
     * type 2's result -- and the modes complex of that precision */
    int real = c->key.opts.real_data != 0;
    int want_src32 = real && c->key.type == 1 ? WF_XLA_F32 : WF_XLA_C64;
    int want_out32 = real && c->key.type == 2 ? WF_XLA_F32 : WF_XLA_C64;
    int want_src64 = real && c->key.type == 1 ? WF_XLA_F64 : WF_XLA_C128;
    int want_out64 = real && c->key.type == 2 ? WF_XLA_F64 : WF_XLA_C128;
    if ((*src)->dtype == want_src32 && (*out)->dtype == want_out32)
        c->key.precision = WARPFFT_F32;
    else if ((*src)->dtype == want_src64 && (*out)->dtype == want_out64)
        c->key.precision = WARPFFT_F64;
    else if (!real)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: source and result must both be complex64 or complex128");
    else
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: real_data type %d: the %s must be float32 or float64 and "
                            "the %s complex64 or complex128 of that precision",
                            c->key.type, c->key.type == 1 ? "source" : "result",
                            c->key.type == 1 ? "result" : "source");
    c->key.dim = dim;
    c->data = (*src)->data ? (*src)->data : (*out)->data;
    return NULL;
}

/* Every coordinate array is a (Gp, M) (type 3's targets: (Gp, K)) array of the call's real type,
 * and Gp is G or 1. */
static XLA_FFI_Error *check_points(XLA_FFI_CallFrame *f, const wf_xla_call *c) {
    int f32 = c->key.precision == WARPFFT_F32, t3 = c->key.type == 3;
    for (int s = 0; s < 6; s++) {
        const XLA_FFI_Buffer *p = c->pts[s];
        int64_t len = s < 3 ? c->M : c->K;
        const char *what = !t3 ? "point" : s < 3 ? "source coordinate" : "target coordinate";
        if (p && (p->dtype != (f32 ? WF_XLA_F32 : WF_XLA_F64) || p->rank != 2 ||
                  p->dims[0] != c->Gp || p->dims[1] != len))
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                                "warpfft: %s array %d must be %s of shape (%lld, %lld)%s", what,
                                s % 3, f32 ? "float32" : "float64", (long long)c->Gp,
                                (long long)len, t3 ? "" : " like the first");
    }
    if (c->Gp != c->G && c->Gp != 1)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: %lld point sets for %lld source groups", (long long)c->Gp,
                            (long long)c->G);
    return NULL;
}

/* The bytes of one group's slice of c (T x M) and of fk (T x out[0] x out[1] x out[2]), for a
 * call with something to compute: its arrays exist, so these products fit; only an empty array
 * (a zero dimension beside huge ones, ruled out by the caller) could overflow them. They are
 * checked all the same: XLA's shapes are not ours. With real_data (types 1 and 2) a c value is
 * real, and out[0] is then the half mode count. */
static XLA_FFI_Error *group_bytes(XLA_FFI_CallFrame *f, wf_xla_call *c, int64_t T, int64_t M,
                                  const int64_t out[3]) {
    int64_t cplx = c->key.precision == WARPFFT_F32 ? 8 : 16, cb, fb;
    int64_t cel = c->key.opts.real_data ? cplx / 2 : cplx; /* real strengths: half a complex */
    if (__builtin_mul_overflow(T, M, &cb) || __builtin_mul_overflow(cb, cel, &cb) ||
        __builtin_mul_overflow(T, out[0], &fb) || __builtin_mul_overflow(fb, out[1], &fb) ||
        __builtin_mul_overflow(fb, out[2], &fb) || __builtin_mul_overflow(fb, cplx, &fb))
        return wf_xla_error(
            f, WF_XLA_ERR_INVALID_ARGUMENT,
            "warpfft: array sizes overflow (T = %lld, M = %lld, outputs %lld x %lld "
            "x %lld)",
            (long long)T, (long long)M, (long long)out[0], (long long)out[1], (long long)out[2]);
    c->c_group = (size_t)cb;
    c->fk_group = (size_t)fb;
    return NULL;
}

/* Types 1 and 2: source, then dim point arrays (G or 1, M); strengths (G, T, M) and modes
 * (G, T, N3?, N2?, N1), type 1 from strengths to modes, type 2 back. n: attributes n1..n3.
 * real_data: real strengths and the half modes (G, T, N3?, N2?, N1/2 + 1) (docs/real.md). */
static XLA_FFI_Error *decode12(XLA_FFI_CallFrame *f, wf_xla_call *c, int64_t n[3]) {
    int type = c->key.type, dim = (int)f->args.size - 1;
    if (dim < 1 || dim > 3 || f->rets.size != 1 || f->rets.types[0] != WF_XLA_RET_BUFFER)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: custom call takes source + 1..3 point arrays and returns one "
                            "array (got %lld arguments, %lld results)",
                            (long long)f->args.size, (long long)f->rets.size);
    const XLA_FFI_Buffer *src, *out;
    XLA_FFI_Error *e = take_buffers(f, c, dim, &src, &out);
    if (e)
        return e;
    int64_t src_rank_want = type == 1 ? 3 : 2 + dim;
    if (src->rank != src_rank_want)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: source has rank %lld, not %lld", (long long)src->rank,
                            (long long)src_rank_want);
    int64_t G = c->G = src->dims[0], T = c->key.ntransf = src->dims[1];
    int64_t M = c->M = c->pts[0]->rank == 2 ? c->pts[0]->dims[1] : -1;
    c->Gp = c->pts[0]->rank == 2 ? c->pts[0]->dims[0] : -1;
    if ((e = check_points(f, c)))
        return e;
    /* modes in the C plan's order: n[0] fastest = the last axis of the mode array */
    for (int d = 0; d < 3; d++) {
        if (d >= dim)
            n[d] = 1;
        if (n[d] < 1)
            return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT, "warpfft: mode count n%d = %lld",
                                d + 1, (long long)n[d]);
        c->key.n[d] = n[d];
    }
    const XLA_FFI_Buffer *modes = type == 1 ? out : src;
    const XLA_FFI_Buffer *strengths = type == 1 ? src : out;
    int ok = modes->rank == 2 + dim && modes->dims[0] == G && modes->dims[1] == T &&
             strengths->rank == 3 && strengths->dims[0] == G && strengths->dims[1] == T &&
             strengths->dims[2] == M;
    /* the mode array's extents, C order: with real_data the fastest is the half */
    const int64_t ext[3] = {c->key.opts.real_data ? n[0] / 2 + 1 : n[0], n[1], n[2]};
    for (int d = 0; ok && d < dim; d++)
        ok = modes->dims[1 + dim - d] == ext[d];
    if (!ok)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: shapes do not match (G=%lld, T=%lld, M=%lld, modes %lld x "
                            "%lld x %lld%s)",
                            (long long)G, (long long)T, (long long)M, (long long)ext[2],
                            (long long)ext[1], (long long)ext[0],
                            c->key.opts.real_data ? ", real_data: the last axis halved" : "");
    c->c = strengths, c->fk = modes;
    c->empty = G == 0 || T == 0;
    return c->empty ? NULL : group_bytes(f, c, T, M, ext);
}

/* Type 3: source (G, T, M) complex, dim source coordinate arrays (G or 1, M) then dim target
 * coordinate arrays (G or 1, K), result (G, T, K). The plan's key has no modes, M or K: setpts3
 * sets M and K on every call (per group when the coordinates are per group). */
static XLA_FFI_Error *decode3(XLA_FFI_CallFrame *f, wf_xla_call *c) {
    int64_t nargs = f->args.size;
    if (nargs < 3 || nargs > 7 || (nargs - 1) % 2 != 0 || f->rets.size != 1 ||
        f->rets.types[0] != WF_XLA_RET_BUFFER)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: a type-3 custom call takes source + 1..3 source coordinate "
                            "arrays + as many target coordinate arrays and returns one array (got "
                            "%lld arguments, %lld results)",
                            (long long)nargs, (long long)f->rets.size);
    const XLA_FFI_Buffer *src, *out;
    XLA_FFI_Error *e = take_buffers(f, c, (int)((nargs - 1) / 2), &src, &out);
    if (e)
        return e;
    if (src->rank != 3 || out->rank != 3 || c->pts[0]->rank != 2 || c->pts[3]->rank != 2)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: type 3 needs source and result of rank 3 and coordinates of "
                            "rank 2");
    int64_t G = c->G = src->dims[0], T = c->key.ntransf = src->dims[1], M = c->M = src->dims[2];
    int64_t K = c->K = c->pts[3]->dims[1];
    c->Gp = c->pts[0]->dims[0];
    if ((e = check_points(f, c)))
        return e;
    if (out->dims[0] != G || out->dims[1] != T || out->dims[2] != K)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: result has shape (%lld, %lld, %lld), expected (%lld, %lld, "
                            "%lld)",
                            (long long)out->dims[0], (long long)out->dims[1],
                            (long long)out->dims[2], (long long)G, (long long)T, (long long)K);
    for (int d = 0; d < 3; d++)
        c->key.n[d] = 1; /* unused by type 3: the grids are chosen at setpts3 */
    c->c = src, c->fk = out;
    c->empty = G == 0 || T == 0 || K == 0;
    const int64_t targets[3] = {K, 1, 1};
    return c->empty ? NULL : group_bytes(f, c, T, M, targets);
}

/* The plan's points_hint for a call with M points: M rounded to the nearest power of two (a tie
 * goes up; 0 for M <= 0, the library's "one point per mode"), the rule of the Python package's
 * _lib.points_hint_for. Not M itself: plans come from the pool, keyed on every option, so an
 * exact M would make a new plan for every distinct M, while the choice of upsampfac and width
 * it informs changes slowly with M. */
static int64_t points_hint_for(int64_t m) {
    if (m <= 0)
        return 0;
    int64_t lo = (int64_t)1 << (63 - __builtin_clzll((unsigned long long)m));
    if (lo > INT64_MAX / 2) /* 2 lo does not fit */
        return lo;
    return m - lo < 2 * lo - m ? lo : 2 * lo;
}

/* Decodes the attributes into the plan's key and the buffers by type, then runs the call unless
 * it has nothing to compute. The options are the record of attribute opts (its values are
 * checked by plan creation, against the option table); the handler sets its per-call fields:
 * unchecked set-points (points change every call: no host wait in setpts; non-finite points
 * give all-NaN outputs, docs/jax.md, "NaN points"), the points_hint of the call's M (the plan
 * chooses upsampfac 0 with the width for it), and run_call the stream and device. */
static XLA_FFI_Error *run(XLA_FFI_CallFrame *f) {
    const XLA_FFI_Attrs *at = &f->attrs;
    int64_t type, iflag, n[3];
    double eps;
    if (wf_xla_attr_i64(at, "nufft_type", &type) || wf_xla_attr_i64(at, "iflag", &iflag) ||
        wf_xla_attr_f64(at, "eps", &eps) || wf_xla_attr_i64(at, "n1", &n[0]) ||
        wf_xla_attr_i64(at, "n2", &n[1]) || wf_xla_attr_i64(at, "n3", &n[2]))
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: custom call needs integer attributes nufft_type, iflag, n1, "
                            "n2, n3 and a float eps");
    if (type != 1 && type != 2 && type != 3)
        return wf_xla_error(f, WF_XLA_ERR_INVALID_ARGUMENT,
                            "warpfft: nufft_type %lld is not 1, 2 or 3", (long long)type);
    wf_xla_call c;
    memset(&c, 0, sizeof c);
    XLA_FFI_Error *e = wf_xla_opts(f, &c.key.opts);
    if (e)
        return e;
    c.key.type = (int)type;
    c.key.iflag = iflag >= 0 ? 1 : -1;
    c.key.eps = eps;
    c.key.opts.check_points = 0;
    if (type == 3 && c.key.opts.real_data)
        return wf_xla_error(f, WF_XLA_ERR_UNIMPLEMENTED,
                            "warpfft: real_data is for types 1 and 2 only, not type 3 "
                            "(docs/real.md)");
    if (type == 3)
        c.key.opts.modeord = 0; /* type 3 has no mode order: one pooled plan whatever it says */
    e = type == 3 ? decode3(f, &c) : decode12(f, &c, n);
    if (e || c.empty)
        return e;
    /* types 1 and 2 only: the type-3 choice does not use it, and its plans serve any M */
    c.key.opts.points_hint = type == 3 ? 0 : points_hint_for(c.M);
    return run_call(f, &c);
}

WARPFFT_API XLA_FFI_Error *warpfft_xla_nufft(XLA_FFI_CallFrame *frame) {
    /* plans may be created, type 3 waits on the host: not CUDA-graph capturable */
    if (!frame || wf_xla_metadata(frame) || frame->stage != WF_XLA_STAGE_EXECUTE)
        return NULL;
    return run(frame);
}
