/*
 * test_xla_ffi_standin.c — for the XLA FFI handler's test (test_xla_ffi.h): a recording
 * stand-in of the public C ABI the handler and the live-plan pool call, of the plan hooks
 * (api/plan_pool.h) and runtime functions the pool calls, and XLA's side (its API table and
 * frames). Its plans keep points ids as warpfft.h says (the handler counts the plans it created
 * by them).
 * Every call appends a line to `trace`; the armed one fails. Thread-safe enough for the tests
 * that run the handler on two threads (one lock around the trace, the counts and the plans).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/plan_pool.h"
#include "params/params.h"
#include "runtime/error.h"
#include "runtime/libfind.h"
#include "stub_error.h"
#include "test_xla_ffi.h"

char trace[8192];
long calls;
char failed_fn[48];
int plan_ids, plans_live;
void (*on_setpts)(void);
int sets_refuse;
int frame_det = 1;
int64_t mem_budget, mem_live;

static long fail_at;               /* the numbered call that fails (0: none) */
static warpfft_status fail_status; /* what a failing ABI call returns */
const char *buf_name[8];
int n_bufs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct warpfft_plan_s {
    int id;
    int pooled;
    uint64_t points_id; /* warpfft_plan_points_id's */
    int64_t bytes;      /* the stand-in GPU's memory it holds (mem_live) */
};
static uint64_t points_ids; /* the last points id given (under `lock`) */

static void new_points_id(warpfft_plan plan) {
    pthread_mutex_lock(&lock);
    plan->points_id = ++points_ids;
    pthread_mutex_unlock(&lock);
}

/* `bytes` more of the stand-in GPU's memory for the plan (NULL: not yet made), or 0 when they do
 * not fit under mem_budget (then "  OUT OF MEMORY" is traced). */
static int take_memory(warpfft_plan plan, int64_t bytes) {
    pthread_mutex_lock(&lock);
    int fits = mem_budget == 0 || mem_live + bytes <= mem_budget;
    if (fits) {
        mem_live += bytes;
        if (plan)
            plan->bytes += bytes;
    }
    pthread_mutex_unlock(&lock);
    if (!fits)
        record("  OUT OF MEMORY\n");
    return fits;
}

void record(const char *fmt, ...) {
    pthread_mutex_lock(&lock);
    size_t len = strlen(trace);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(trace + len, sizeof trace - len, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&lock);
}

void arm(long k, warpfft_status st) {
    pthread_mutex_lock(&lock);
    trace[0] = '\0';
    calls = 0;
    fail_at = k;
    fail_status = st;
    failed_fn[0] = '\0';
    pthread_mutex_unlock(&lock);
}

int tick(const char *fn) {
    pthread_mutex_lock(&lock);
    int fail = ++calls == fail_at;
    if (fail) {
        snprintf(failed_fn, sizeof failed_fn, "%s", fn);
        snprintf(stub_error_msg, sizeof stub_error_msg, "stand-in: %s failed", fn);
    }
    pthread_mutex_unlock(&lock);
    if (fail)
        record("  FAILED\n");
    return fail;
}

/* ---- blocking a thread inside a call ---- */

static pthread_cond_t block_cond = PTHREAD_COND_INITIALIZER;
static char block_fn[16];
static int block_entered, block_open = 1;

void block_arm(const char *fn) {
    pthread_mutex_lock(&lock);
    snprintf(block_fn, sizeof block_fn, "%s", fn);
    block_entered = 0;
    block_open = 0;
    pthread_mutex_unlock(&lock);
}

/* Waits here when fn is armed (once: the first caller). */
void maybe_block(const char *fn) {
    pthread_mutex_lock(&lock);
    if (!block_open && !block_entered && strcmp(block_fn, fn) == 0) {
        block_entered = 1;
        pthread_cond_broadcast(&block_cond);
        while (!block_open)
            pthread_cond_wait(&block_cond, &lock);
    }
    pthread_mutex_unlock(&lock);
}

int block_wait_entered(int ms) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&lock);
    while (!block_entered && pthread_cond_timedwait(&block_cond, &lock, &until) == 0)
        ;
    int entered = block_entered;
    pthread_mutex_unlock(&lock);
    return entered;
}

void block_release(void) {
    pthread_mutex_lock(&lock);
    block_open = 1;
    block_fn[0] = '\0';
    pthread_cond_broadcast(&block_cond);
    pthread_mutex_unlock(&lock);
}

/* ---- the C ABI ---- */

/* Buffer i of a frame lives at fake device address (i + 1) MiB: "name+offset". */
uintptr_t buf_base(int i) {
    return (uintptr_t)(i + 1) << 20;
}

const char *where(const void *p, char *s, size_t len) {
    uintptr_t a = (uintptr_t)p;
    snprintf(s, len, "%s", a ? "?" : "-"); /* NULL, or not in any buffer */
    for (int i = 0; i < n_bufs; i++)
        if (a >= buf_base(i) && a < buf_base(i + 1))
            snprintf(s, len, "%s+%lu", buf_name[i], (unsigned long)(a - buf_base(i)));
    return s;
}

warpfft_status warpfft_opts_default(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->upsampfac = 0.0;
    o->check_points = 1; /* not the library's default: shows that the handler asks for 0 */
    o->points_hint = 99; /* neither: shows that the handler sets it (types 1, 2) or 0 (type 3) */
    return WARPFFT_SUCCESS;
}

/* The pool's creation from a resolved request (api/plan_pool.h): traced as the
 * warpfft_plan_create it stands for, from the request the stand-in's wf_plan_resolve made (the
 * arguments as given). */
warpfft_status wf_plan_create_request(const wf_plan_request *req, warpfft_plan *plan) {
    const wf_params *q = &req->r.p;
    const warpfft_opts *o = &req->r.opts;
    record("create %d %dd n %lld %lld %lld iflag %d T %lld eps %g prec %d modeord %d method %d "
           "device %d upsampfac %g stream %#llx max_subprob %d bins %d %d %d check %d hint %lld "
           "det %d\n",
           req->type, q->dim, (long long)q->n_modes[0], (long long)q->n_modes[1],
           (long long)q->n_modes[2], req->iflag, (long long)q->ntransf, q->tol, q->precision,
           o->modeord, o->method, o->device, o->upsampfac, (unsigned long long)o->stream,
           o->max_subprob, o->bin_size[0], o->bin_size[1], o->bin_size[2], o->check_points,
           (long long)o->points_hint, o->deterministic);
    maybe_block("create");
    if (tick("warpfft_plan_create"))
        return fail_status;
    int64_t grids = PLAN_BYTES_PER_TRANSFORM * q->ntransf; /* its fine grids */
    if (!take_memory(NULL, grids))
        return WARPFFT_ERR_OUT_OF_MEMORY;
    struct warpfft_plan_s *p = calloc(1, sizeof *p);
    if (!p)
        return WARPFFT_ERR_OUT_OF_MEMORY;
    p->bytes = grids;
    pthread_mutex_lock(&lock);
    p->id = ++plan_ids;
    plans_live++;
    pthread_mutex_unlock(&lock);
    *plan = p;
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                              const void *x, const void *y, const void *z) {
    if (on_setpts)
        on_setpts();
    char a[32], b[32], c[32];
    record("setpts P%d prec %d M %lld %s %s %s\n", plan->id, (int)precision, (long long)M,
           where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c));
    new_points_id(plan);
    return tick("warpfft_setpts") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision, int64_t M,
                               const void *x, const void *y, const void *z, int64_t K,
                               const void *s, const void *t, const void *u) {
    if (on_setpts)
        on_setpts();
    char a[32], b[32], c[32], d[32], e[32], f[32];
    record("setpts3 P%d prec %d M %lld %s %s %s K %lld %s %s %s\n", plan->id, (int)precision,
           (long long)M, where(x, a, sizeof a), where(y, b, sizeof b), where(z, c, sizeof c),
           (long long)K, where(s, d, sizeof d), where(t, e, sizeof e), where(u, f, sizeof f));
    new_points_id(plan);
    return tick("warpfft_setpts3") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts_sets(warpfft_plan plan, warpfft_precision precision, int64_t n_sets,
                                   int64_t M, const void *x, const void *y, const void *z) {
    if (on_setpts)
        on_setpts();
    char a[32], b[32], c[32];
    record("setpts_sets P%d prec %d sets %lld M %lld %s %s %s\n", plan->id, (int)precision,
           (long long)n_sets, (long long)M, where(x, a, sizeof a), where(y, b, sizeof b),
           where(z, c, sizeof c));
    if (sets_refuse)
        return WARPFFT_ERR_BAD_SIZE; /* as a plan whose sets' bins reach 2^31: nothing set */
    new_points_id(plan);
    if (!take_memory(plan, SETS_BYTES_PER_SET * n_sets)) /* the sets' bins and sorted points */
        return WARPFFT_ERR_OUT_OF_MEMORY;
    return tick("warpfft_setpts_sets") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_setpts3_sets(warpfft_plan plan, warpfft_precision precision, int64_t n_sets,
                                    int64_t M, const void *x, const void *y, const void *z,
                                    int64_t K, const void *s, const void *t, const void *u) {
    if (on_setpts)
        on_setpts();
    char a[32], b[32], c[32], d[32], e[32], f[32];
    record("setpts3_sets P%d prec %d sets %lld M %lld %s %s %s K %lld %s %s %s\n", plan->id,
           (int)precision, (long long)n_sets, (long long)M, where(x, a, sizeof a),
           where(y, b, sizeof b), where(z, c, sizeof c), (long long)K, where(s, d, sizeof d),
           where(t, e, sizeof e), where(u, f, sizeof f));
    if (sets_refuse)
        return WARPFFT_ERR_BAD_SIZE;
    new_points_id(plan);
    return tick("warpfft_setpts3_sets") ? fail_status : WARPFFT_SUCCESS;
}

warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c, void *fk) {
    char a[32], b[32];
    record("execute P%d prec %d %s %s\n", plan->id, (int)precision, where(c, a, sizeof a),
           where(fk, b, sizeof b));
    return tick("warpfft_execute") ? fail_status : WARPFFT_SUCCESS;
}

static void free_plan(warpfft_plan plan) {
    record("destroy P%d\n", plan->id);
    pthread_mutex_lock(&lock);
    plans_live--;
    mem_live -= plan->bytes;
    pthread_mutex_unlock(&lock);
    free(plan);
}

warpfft_status warpfft_plan_destroy(warpfft_plan plan) {
    maybe_block("destroy");
    free_plan(plan);
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_stream_sync(int device, uint64_t stream) {
    record("sync %d %#llx\n", device, (unsigned long long)stream);
    maybe_block("destroy"); /* the old handlers' evictions began with one */
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id) {
    pthread_mutex_lock(&lock);
    *id = plan->points_id;
    pthread_mutex_unlock(&lock);
    return WARPFFT_SUCCESS;
}

warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes) {
    (void)plan;
    *bytes = 1000;
    return WARPFFT_SUCCESS;
}

const char *warpfft_status_name(int status) {
    static char name[32];
    snprintf(name, sizeof name, "STATUS_%d", status);
    return name;
}

/* ---- what the pool calls besides the ABI (api/plan_pool.h, params/params.h, runtime/; the
 * error functions: stub_error.h) ---- */

const char *wf_getenv(const char *name) {
    return getenv(name);
}

warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out) {
    if (opts)
        *out = *opts;
    else
        warpfft_opts_default(out);
    return WARPFFT_SUCCESS;
}

/* The arguments as given, nothing checked or chosen (the handler's own checks are what the
 * tests exercise): the request the pool keys and creates from. */
warpfft_status wf_plan_resolve(int type, int dim, const int64_t n_modes[3], int iflag,
                               int64_t ntransf, double tol, int precision, const warpfft_opts *opts,
                               wf_plan_request *req) {
    memset(req, 0, sizeof *req);
    req->type = type;
    req->iflag = iflag >= 0 ? 1 : -1;
    wf_opts_resolve(opts, &req->r.opts);
    wf_params *q = &req->r.p;
    q->type = type;
    q->dim = dim;
    q->precision = precision;
    q->ntransf = ntransf;
    q->tol = tol;
    for (int d = 0; d < 3; d++)
        q->n_modes[d] = n_modes ? n_modes[d] : 0;
    return WARPFFT_SUCCESS;
}

void wf_plan_set_pooled(warpfft_plan plan, int pooled) {
    plan->pooled = pooled;
}

void wf_plan_forget_points(warpfft_plan plan) {
    record("forget P%d\n", plan->id);
    new_points_id(plan);
}

warpfft_status wf_plan_fence(warpfft_plan plan, int *capturing) {
    *capturing = 0;
    record("fence P%d\n", plan->id);
    return WARPFFT_SUCCESS;
}

int wf_plan_graph_held(warpfft_plan plan) {
    (void)plan; /* the handler captures nothing into CUDA graphs (test_pool_graphs.c: the pool) */
    return 0;
}

warpfft_status wf_plan_destroy_fenced(warpfft_plan plan) {
    maybe_block("destroy");
    free_plan(plan);
    return WARPFFT_SUCCESS;
}

/* ---- XLA's side: the API table and a call frame ---- */

char xla_error_token, stream_error_token;
int xla_errc;
char xla_msg[1600];

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a) {
    xla_errc = a->errc;
    snprintf(xla_msg, sizeof xla_msg, "%s", a->message);
    return (XLA_FFI_Error *)&xla_error_token;
}

static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *a) {
    record("stream\n");
    if (tick("XLA_FFI_Stream_Get"))
        return (XLA_FFI_Error *)&stream_error_token;
    a->stream = (void *)(uintptr_t)0x5150;
    return NULL;
}

void set_buffer(frame_store *fr, int i, const char *name, int dtype, int rank,
                const int64_t *dims) {
    buf_name[i] = name;
    memcpy(fr->dims[i], dims, (size_t)rank * sizeof *dims);
    fr->buf[i] = (XLA_FFI_Buffer){sizeof(XLA_FFI_Buffer), NULL, dtype,
                                  (void *)buf_base(i),    rank, fr->dims[i]};
}

void set_attr(frame_store *fr, int i, const char *name, int dtype, void *value) {
    fr->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
    fr->name_ptrs[i] = &fr->names[i];
    fr->scalars[i] = (XLA_FFI_Scalar){dtype, value};
    fr->attr_ptrs[i] = &fr->scalars[i];
    fr->attr_types[i] = WF_XLA_ATTR_SCALAR;
}

void xla_api(XLA_FFI_Api *api) {
    memset(api, 0, sizeof *api);
    api->struct_size = sizeof *api;
    api->XLA_FFI_Error_Create = error_create;
    api->XLA_FFI_Stream_Get = stream_get;
}

XLA_FFI_CallFrame *frame_at(frame_store *fr, const config *cf) {
    memset(fr, 0, sizeof *fr);
    int f64 = cf->precision == WARPFFT_F64, cplx = f64 ? WF_XLA_C128 : WF_XLA_C64;
    int real = f64 ? WF_XLA_F64 : WF_XLA_F32, dim = cf->dim;
    int64_t src[5] = {cf->G, cf->T, cf->M}, out[5] = {cf->G, cf->T};
    int64_t pts[2] = {cf->Gp, cf->M}, tgt[2] = {cf->Gp, cf->K};
    if (cf->type == 3) {
        out[2] = cf->K;
    } else {
        int64_t *modes = cf->type == 1 ? out : src;
        for (int d = 0; d < dim; d++)
            modes[1 + dim - d] = cf->n[d];
        if (cf->type == 2)
            out[2] = cf->M;
    }
    static const char *const coord[6] = {"x", "y", "z", "s", "t", "u"};
    int nb = 0;
    set_buffer(fr, nb++, "src", cplx, cf->type == 2 ? 2 + dim : 3, src);
    for (int d = 0; d < dim; d++)
        set_buffer(fr, nb++, coord[d], real, 2, pts);
    for (int d = 0; cf->type == 3 && d < dim; d++)
        set_buffer(fr, nb++, coord[3 + d], real, 2, tgt);
    int nargs = nb;
    set_buffer(fr, nb++, "out", cplx, cf->type == 1 ? 2 + dim : 3, out);
    n_bufs = nb;

    static const char *const ints[5] = {"nufft_type", "iflag", "n1", "n2", "n3"};
    const int64_t vals[5] = {cf->type, -1, cf->n[0], cf->n[1], cf->n[2]};
    for (int i = 0; i < 5; i++) {
        fr->ivals[i] = vals[i];
        set_attr(fr, i, ints[i], WF_XLA_S64, &fr->ivals[i]);
    }
    fr->eps = 1e-5;
    set_attr(fr, 5, "eps", WF_XLA_F64, &fr->eps);
    /* the options record: what the plan's key must carry through */
    warpfft_opts_default(&fr->opts);
    fr->opts.modeord = 1;
    fr->opts.method = 2;
    fr->opts.bin_size[0] = 4, fr->opts.bin_size[1] = 5, fr->opts.bin_size[2] = 6;
    fr->opts.max_subprob = 7;
    fr->opts.upsampfac = 1.25;
    fr->opts.deterministic = frame_det;
    frame_finish(fr, nargs, 6);
    return &fr->f;
}

void frame_finish(frame_store *fr, int nargs, int n_attrs) {
    fr->names[n_attrs] = (XLA_FFI_ByteSpan){"opts", 4};
    fr->name_ptrs[n_attrs] = &fr->names[n_attrs];
    fr->attr_ptrs[n_attrs] = &fr->opts_span;
    fr->attr_types[n_attrs] = WF_XLA_ATTR_STRING;
    frame_opts(fr);
    for (int i = 0; i < nargs; i++) {
        fr->args[i] = &fr->buf[i];
        fr->arg_types[i] = WF_XLA_ARG_BUFFER;
    }
    fr->rets[0] = &fr->buf[nargs];
    fr->ret_types[0] = WF_XLA_RET_BUFFER;
    xla_api(&fr->api);
    fr->f.struct_size = sizeof fr->f;
    fr->f.api = &fr->api;
    fr->f.stage = WF_XLA_STAGE_EXECUTE;
    fr->f.args = (XLA_FFI_Args){sizeof(XLA_FFI_Args), NULL, nargs, fr->arg_types, fr->args};
    fr->f.rets = (XLA_FFI_Rets){sizeof(XLA_FFI_Rets), NULL, 1, fr->ret_types, fr->rets};
    fr->f.attrs = (XLA_FFI_Attrs){sizeof(XLA_FFI_Attrs), NULL,          n_attrs + 1,
                                  fr->attr_types,        fr->name_ptrs, fr->attr_ptrs};
}

void frame_opts(frame_store *fr) {
    const unsigned char *b = (const unsigned char *)&fr->opts;
    for (size_t i = 0; i < sizeof fr->opts; i++)
        snprintf(fr->opts_hex + 2 * i, 3, "%02x", b[i]);
    fr->opts_span = (XLA_FFI_ByteSpan){fr->opts_hex, 2 * sizeof fr->opts};
}

XLA_FFI_CallFrame *frame(const config *cf) {
    static frame_store main_store;
    return frame_at(&main_store, cf);
}

const char *describe(const config *cf, char *s, size_t len) {
    snprintf(s, len, "type %d %dD %s G %lld Gp %lld T %lld M %lld K %lld", cf->type, cf->dim,
             cf->precision == WARPFFT_F64 ? "f64" : "f32", (long long)cf->G, (long long)cf->Gp,
             (long long)cf->T, (long long)cf->M, (long long)cf->K);
    return s;
}

int64_t pool_size(void) {
    warpfft_pool_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    return warpfft_pool_get_info(&info) == WARPFFT_SUCCESS ? info.idle + info.busy : -1;
}
