/*
 * pool.c — the live-plan pool (warpfft.h, "the live-plan pool"): every live GPU handle that is
 * made for a call and reused by later ones — plans ready to run, and zero Toeplitz operators
 * (grid and FFT plans, applied with a spectrum the caller holds) — handed out by key (every
 * argument of their creation, the resolved options with stream and device; for plans, or else
 * what the request resolves to) to one user at a time, and taken back. The one-call functions of
 * the Python package, its PyTorch ops and Toeplitz operator, the XLA handlers (framework/xla_ffi.c,
 * xla_toeplitz.c) and C callers all draw from this one pool. The two kinds of handle differ only in
 * their hooks (plan_pool.h: one row of `kinds` each); the busy state, fences, graphs and limits are
 * the same code.
 *
 * Every handle the pool knows is an entry of one list, idle or busy. The lock guards the list and
 * the counts only: plans are created, fenced, waited for and destroyed outside it, by the
 * thread that owns them at that moment (a busy entry's user; a victim removed from the list by
 * the thread that removed it). So no caller waits behind another's plan creation or GPU wait.
 *
 * Limits bound the idle plans (count and workspace bytes). Eviction takes the least recently
 * released idle plans; a busy plan is never touched: a clear marks it doomed, and its release
 * destroys it. Destroying waits for the plan's fence (recorded at its release), not for its
 * stream, which its user may have destroyed since (api/plan_pool.c). A destroy that fails leaves
 * the plan doomed and idle, for the next clear or eviction to try again.
 *
 * CUDA graphs: a plan whose work was captured into a graph is that graph's until the graph is
 * destroyed (api/capture.c). Released meanwhile, its entry is graph-held: counted busy, neither
 * handed out nor destroyed (a clear or limit only dooms it). CUDA tells the plan when the graphs
 * let go, on a thread of its own that may not call CUDA; the pool notices at its next call
 * (sweep_graphs_locked): the entry becomes idle, or is destroyed if doomed (by the calls that
 * destroy plans: release, clear, set_limits; acquire and get_info only make it idle). During a
 * capture of its stream a release records no fence (it would be a node of the graph): a plan
 * that ran work outside the capture since its last fence cannot be released then (refused,
 * nothing changed); and it destroys nothing (a free or a wait would break the capture): a plan
 * that should go is left doomed, evictions wait for a later call. Doomed idle plans are the
 * first an eviction takes.
 *
 * The pool depends on plans only through warpfft.h and plan_pool.h, never on the handle's
 * insides (so test_xla_ffi.c can run it over a recording stand-in). The child of a fork()
 * forgets it (the parent's plans mean nothing there).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/plan_pool.h"
#include "params/params.h"   /* wf_opts_resolve */
#include "runtime/error.h"   /* wf_error, wf_clear_error */
#include "runtime/libfind.h" /* wf_getenv */
#include "warpfft.h"

#define WF_POOL_DEFAULT_PLANS 16
#define WF_POOL_DEFAULT_BYTES ((int64_t)1 << 30)

/* A request as its caller made it: equal keys make interchangeable handles. Compared with memcmp
 * (built from a zeroed struct, field by field). A Toeplitz operator's has type 0. A plan request
 * that matches no entry is resolved (wf_plan_resolve, once) and looked up again by what it
 * resolves to (entry.req), then created from that: two requests that resolve alike share a plan
 * (two tols that run at one value, upsampfac 0 and the sigma it chose), and a request seen
 * before is not resolved again. */
typedef struct wf_pool_key {
    int32_t type, dim, precision, iflag;
    int64_t n[3];
    int64_t ntransf;
    double tol;
    warpfft_opts opts; /* resolved: every field this build knows, defaults filled in */
} wf_pool_key;

/* The arguments of an acquire, for the creation of a new handle (the options resolved). */
typedef struct pool_args {
    int type, dim, iflag;
    const int64_t *n_modes;
    int64_t ntransf;
    double tol;
    warpfft_precision precision;
    const warpfft_opts *opts;
} pool_args;

/* A kind of handle the pool holds: its hooks (plan_pool.h, the public ABI). */
typedef struct pool_kind {
    int id;              /* KIND_PLAN, KIND_TOEPLITZ */
    const char *noun;    /* "plan", "operator" */
    const char *acquire; /* the public calls, in messages */
    const char *release;
    warpfft_status (*create)(const pool_args *a, void **h); /* outside the lock */
    /* plans: the request resolved (outside the lock), and the handle made from it; NULL: the
     * kind is looked up by its key alone and made by create */
    warpfft_status (*resolve)(const pool_args *a, wf_plan_request *req);
    warpfft_status (*create_resolved)(const wf_plan_request *req, void **h);
    void (*set_pooled)(void *h, int pooled);
    warpfft_status (*fence)(void *h, int *capturing);
    int (*graph_held)(void *h);
    warpfft_status (*destroy_fenced)(void *h);
    warpfft_status (*destroy)(void *h); /* one just made that the pool cannot keep */
    size_t (*workspace)(void *h);
    /* at release: whether it keeps what it holds for its next user (a plan's points) */
    void (*forget)(void *h, uint32_t flags);
} pool_kind;

enum { KIND_PLAN, KIND_TOEPLITZ, N_KINDS };

typedef struct wf_pool_entry {
    wf_pool_key key;     /* the request that made the handle, as made */
    wf_plan_request req; /* ... and resolved (has_req: kinds with a resolve hook) */
    int has_req;
    const pool_kind *kind;
    void *h;        /* a warpfft_plan or a warpfft_toeplitz */
    int busy;       /* 1: acquired; 2: its release is under way (a second release is refused) */
    int doomed;     /* destroy it at release (busy) or at the next clear or eviction (idle) */
    int graph_held; /* released, but CUDA graphs still hold it: busy for the counts, not idle */
    int64_t bytes;
    struct wf_pool_entry *prev, *next; /* the list: most recently released first */
    struct wf_pool_entry *victim_next; /* a list of entries to destroy, outside the lock */
} wf_pool_entry;

static pthread_mutex_t wf_pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* All below guarded by wf_pool_lock. */
static wf_pool_entry *wf_pool_head, *wf_pool_tail;
static int64_t wf_pool_idle, wf_pool_busy, wf_pool_idle_bytes;
static int64_t wf_pool_max_plans, wf_pool_max_bytes;
static int wf_pool_limits_set;
static int64_t wf_pool_created, wf_pool_hits, wf_pool_destroyed;
static int64_t wf_pool_created_kind[N_KINDS];

static void pool_atfork_child(void) {
    pthread_mutex_init(&wf_pool_lock, NULL);
    wf_pool_head = wf_pool_tail = NULL; /* the parent's plans: not usable here */
    wf_pool_idle = wf_pool_busy = wf_pool_idle_bytes = 0;
}

__attribute__((constructor)) static void pool_register_atfork(void) {
    pthread_atfork(NULL, NULL, pool_atfork_child);
}

/* A limit from the environment: decimal digits only, as the kernel cache's size (kcache.c):
 * strtoll would take " 99999999999999999999" as no bound and "  -3" as 0 (pooling off).
 * Anything else, or a value past INT64_MAX, is `fallback`. */
static int64_t env_limit(const char *name, int64_t fallback) {
    const char *v = wf_getenv(name);
    if (!v || !v[0])
        return fallback;
    int64_t x = 0;
    for (const char *c = v; *c; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (d > 9 || x > (INT64_MAX - (int64_t)d) / 10)
            return fallback;
        x = 10 * x + (int64_t)d;
    }
    return x;
}

/* $WARPFFT_POOL_SIZE and $WARPFFT_POOL_BYTES; when one is unset (or empty), its earlier name,
 * which said "plan cache" for the pool (deprecated: the plan cache is runtime/cache.c's,
 * $WARPFFT_PLAN_CACHE_MB). */
static void limits_locked(void) {
    if (wf_pool_limits_set)
        return;
    wf_pool_limits_set = 1;
    wf_pool_max_plans =
        env_limit("WARPFFT_POOL_SIZE", env_limit("WARPFFT_PLAN_CACHE_SIZE", WF_POOL_DEFAULT_PLANS));
    wf_pool_max_bytes = env_limit("WARPFFT_POOL_BYTES",
                                  env_limit("WARPFFT_PLAN_CACHE_BYTES", WF_POOL_DEFAULT_BYTES));
}

/* ---- the list (lock held) ---- */

static void unlink_locked(wf_pool_entry *e) {
    if (e->prev)
        e->prev->next = e->next;
    else
        wf_pool_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        wf_pool_tail = e->prev;
    e->prev = e->next = NULL;
}

/* Puts e at the head of the list (most recently released) or, `back`, at its tail (the next
 * eviction's first victim). */
static void push_locked(wf_pool_entry *e, int back) {
    wf_pool_entry **end = back ? &wf_pool_tail : &wf_pool_head;
    wf_pool_entry *old = *end;
    e->prev = back ? old : NULL;
    e->next = back ? NULL : old;
    if (old)
        *(back ? &old->next : &old->prev) = e;
    else
        *(back ? &wf_pool_head : &wf_pool_tail) = e;
    *end = e;
}

/* Takes an idle entry out of the list onto *victims. */
static void take_idle_locked(wf_pool_entry *e, wf_pool_entry **victims) {
    unlink_locked(e);
    wf_pool_idle--;
    wf_pool_idle_bytes -= e->bytes;
    e->victim_next = *victims;
    *victims = e;
}

static int idle_locked(const wf_pool_entry *e) {
    return !e->busy && !e->graph_held;
}

/* Idle entries beyond the limits onto *victims, least recently released (the tail) first, after
 * the doomed ones (a release during a capture, or a destroy that failed, left them). */
static void evict_locked(wf_pool_entry **victims) {
    for (wf_pool_entry *e = wf_pool_head, *next; e; e = next) {
        next = e->next;
        if (idle_locked(e) && e->doomed)
            take_idle_locked(e, victims);
    }
    wf_pool_entry *e = wf_pool_tail;
    while (e && (wf_pool_idle > wf_pool_max_plans || wf_pool_idle_bytes > wf_pool_max_bytes)) {
        wf_pool_entry *prev = e->prev;
        if (idle_locked(e))
            take_idle_locked(e, victims);
        e = prev;
    }
}

/* Graph-held entries whose graphs have let go (wf_plan_graph_held: an atomic load): idle again
 * where they are in the list; a doomed one onto *victims, or left graph-held for a call that
 * destroys when victims is NULL. */
static void sweep_graphs_locked(wf_pool_entry **victims) {
    for (wf_pool_entry *e = wf_pool_head, *next; e; e = next) {
        next = e->next;
        if (!e->graph_held || e->kind->graph_held(e->h) || (e->doomed && !victims))
            continue;
        e->graph_held = 0;
        wf_pool_busy--;
        wf_pool_idle++;
        wf_pool_idle_bytes += e->bytes;
        if (e->doomed)
            take_idle_locked(e, victims);
    }
}

/* ---- destroying, outside the lock ---- */

/* Destroys the victims; one whose destroy fails goes back to the list, idle and doomed. Returns
 * the first failure (its message kept), or the failure of `mine` alone when mine is not NULL. */
static warpfft_status destroy_victims(wf_pool_entry *victims, const wf_pool_entry *mine) {
    warpfft_status first = WARPFFT_SUCCESS;
    char msg[1024] = "";
    int only_mine = mine != NULL;
    while (victims) {
        wf_pool_entry *e = victims;
        victims = e->victim_next;
        int is_mine = e == mine;
        if (is_mine)
            mine = NULL; /* freed below: never compared again */
        warpfft_status st = e->kind->destroy_fenced(e->h);
        if (st != WARPFFT_SUCCESS && first == WARPFFT_SUCCESS && (!only_mine || is_mine)) {
            first = st;
            strncpy(msg, warpfft_last_error(), sizeof msg - 1);
        }
        pthread_mutex_lock(&wf_pool_lock);
        if (st == WARPFFT_SUCCESS) {
            wf_pool_destroyed++;
        } else { /* still a valid handle: keep it for another try */
            e->busy = 0;
            e->doomed = 1;
            push_locked(e, 1);
            wf_pool_idle++;
            wf_pool_idle_bytes += e->bytes;
        }
        pthread_mutex_unlock(&wf_pool_lock);
        if (st == WARPFFT_SUCCESS)
            free(e);
    }
    if (first != WARPFFT_SUCCESS)
        return wf_error(first, "%s", msg);
    wf_clear_error();
    return WARPFFT_SUCCESS;
}

/* ---- acquire and release ---- */

static void make_key(wf_pool_key *k, int type, int dim, const int64_t n_modes[3], int iflag,
                     int64_t ntransf, double tol, int precision, const warpfft_opts *o) {
    memset(k, 0, sizeof *k);
    k->type = type;
    k->dim = dim;
    k->precision = precision;
    k->iflag = iflag >= 0 ? 1 : -1;
    /* what plan_create reads: n_modes[0..dim-1], nothing for type 3 */
    for (int d = 0; type != 3 && n_modes && d < dim && d < 3; d++)
        k->n[d] = n_modes[d];
    k->ntransf = ntransf;
    k->tol = tol;
    memcpy(&k->opts, o, sizeof *o);
}

/* The most recently released idle entry of key k, else (r not NULL) of the resolved request r
 * (a doomed one is never handed out). */
static wf_pool_entry *find_idle_locked(const pool_kind *kind, const wf_pool_key *k,
                                       const wf_plan_request *r) {
    for (wf_pool_entry *e = wf_pool_head; e; e = e->next)
        if (e->kind == kind && idle_locked(e) && !e->doomed && memcmp(&e->key, k, sizeof *k) == 0)
            return e;
    for (wf_pool_entry *e = wf_pool_head; r && e; e = e->next)
        if (e->kind == kind && e->has_req && idle_locked(e) && !e->doomed &&
            memcmp(&e->req, r, sizeof *r) == 0)
            return e;
    return NULL;
}

/* Hands out the idle entry e (lock held). */
static void *hand_out_locked(wf_pool_entry *e) {
    e->busy = 1;
    unlink_locked(e);
    push_locked(e, 0);
    wf_pool_idle--;
    wf_pool_idle_bytes -= e->bytes;
    wf_pool_busy++;
    wf_pool_hits++;
    return e->h;
}

/* An idle handle of key k (or, for a kind that resolves, of what the request resolves to), or a
 * new one made from a (outside the lock). */
static warpfft_status acquire(const pool_kind *kind, const wf_pool_key *key, const pool_args *a,
                              void **out) {
    pthread_mutex_lock(&wf_pool_lock);
    limits_locked();
    sweep_graphs_locked(NULL);
    wf_pool_entry *e = find_idle_locked(kind, key, NULL);
    if (e) {
        *out = hand_out_locked(e);
        pthread_mutex_unlock(&wf_pool_lock);
        return WARPFFT_SUCCESS;
    }
    pthread_mutex_unlock(&wf_pool_lock);

    /* outside the lock: resolving takes milliseconds, creating more */
    wf_plan_request req;
    warpfft_status st = WARPFFT_SUCCESS;
    if (kind->resolve) {
        st = kind->resolve(a, &req);
        if (st != WARPFFT_SUCCESS)
            return st;
        pthread_mutex_lock(&wf_pool_lock);
        sweep_graphs_locked(NULL);
        e = find_idle_locked(kind, key, &req);
        if (e) {
            *out = hand_out_locked(e);
            pthread_mutex_unlock(&wf_pool_lock);
            return WARPFFT_SUCCESS;
        }
        pthread_mutex_unlock(&wf_pool_lock);
    }
    void *made = NULL;
    st = kind->resolve ? kind->create_resolved(&req, &made) : kind->create(a, &made);
    if (st != WARPFFT_SUCCESS)
        return st;
    e = calloc(1, sizeof *e);
    if (!e) {
        kind->destroy(made); /* its stream is the caller's, alive now */
        return wf_error(WARPFFT_ERR_OUT_OF_MEMORY, "%s: host allocation of %zu bytes",
                        kind->acquire, sizeof *e);
    }
    e->key = *key;
    if (kind->resolve) {
        e->req = req;
        e->has_req = 1;
    }
    e->kind = kind;
    e->h = made;
    e->busy = 1;
    kind->set_pooled(made, 1);
    pthread_mutex_lock(&wf_pool_lock);
    push_locked(e, 0);
    wf_pool_busy++;
    wf_pool_created++;
    wf_pool_created_kind[kind->id]++;
    pthread_mutex_unlock(&wf_pool_lock);
    *out = made;
    return WARPFFT_SUCCESS;
}

static wf_pool_entry *find_handle_locked(const pool_kind *kind, const void *h) {
    for (wf_pool_entry *e = wf_pool_head; e; e = e->next)
        if (e->kind == kind && e->h == h)
            return e;
    return NULL;
}

static warpfft_status release(const pool_kind *kind, void *h, uint32_t flags) {
    wf_clear_error();
    if (!h)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: the %s is NULL", kind->release, kind->noun);
    const uint32_t known = WARPFFT_POOL_KEEP_POINTS | WARPFFT_POOL_DISCARD;
    if (flags & ~known)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s: flags = %#x; known: %#x", kind->release,
                        (unsigned)flags, known);
    pthread_mutex_lock(&wf_pool_lock);
    wf_pool_entry *e = find_handle_locked(kind, h);
    int was = e ? e->busy : 0;
    if (was == 1)
        e->busy = 2; /* ours to release; a concurrent second release is refused */
    pthread_mutex_unlock(&wf_pool_lock);
    if (was != 1)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        !e ? "%s: the %s is not one the pool handed out (%s)"
                           : "%s: the %s was released already%s",
                        kind->release, kind->noun, !e ? kind->acquire : "");

    /* The handle is still busy: nobody else touches it while these run. The fence first: during
     * a capture of its stream it may refuse the release, which then changes nothing. */
    int capturing = 0;
    warpfft_status fenced = kind->fence(h, &capturing);
    if (fenced == WARPFFT_ERR_UNSUPPORTED) {
        pthread_mutex_lock(&wf_pool_lock);
        e->busy = 1; /* still the caller's */
        pthread_mutex_unlock(&wf_pool_lock);
        return fenced;
    }
    if (kind->forget)
        kind->forget(h, flags);
    size_t bytes = kind->workspace(h);
    int held = kind->graph_held(h);

    wf_pool_entry *victims = NULL;
    pthread_mutex_lock(&wf_pool_lock);
    limits_locked();
    e->busy = 0;
    e->bytes = (int64_t)bytes;
    unlink_locked(e);
    push_locked(e, 0);
    int mine = e->doomed || (flags & WARPFFT_POOL_DISCARD) || fenced != WARPFFT_SUCCESS ||
               wf_pool_max_plans == 0 || e->bytes > wf_pool_max_bytes;
    if (held) { /* the graphs' until they let go: destroyed then if it would be now */
        e->graph_held = 1;
        e->doomed |= mine;
    } else {
        wf_pool_busy--;
        wf_pool_idle++;
        wf_pool_idle_bytes += e->bytes;
        if (mine && capturing) /* nothing destroyed during a capture: a later call does it */
            e->doomed = 1;
        else if (mine)
            take_idle_locked(e, &victims);
    }
    if (!capturing) {
        sweep_graphs_locked(&victims);
        evict_locked(&victims);
    }
    pthread_mutex_unlock(&wf_pool_lock);
    return destroy_victims(victims, e);
}

/* ---- the kinds: plans and Toeplitz operators ---- */

static void plan_set_pooled(void *h, int pooled) {
    wf_plan_set_pooled(h, pooled);
}
static warpfft_status plan_fence(void *h, int *capturing) {
    return wf_plan_fence(h, capturing);
}
static int plan_graph_held(void *h) {
    return wf_plan_graph_held(h);
}
static warpfft_status plan_destroy_fenced(void *h) {
    return wf_plan_destroy_fenced(h);
}
static warpfft_status plan_destroy(void *h) {
    return warpfft_plan_destroy(h);
}
static size_t plan_workspace(void *h) {
    size_t bytes = 0;
    warpfft_plan_workspace_bytes(h, &bytes);
    return bytes;
}
/* A plan that never had points takes an id too, kept or not: points id 0 then means a plan that
 * was never given back, i.e. one this acquire made (how the XLA handler counts the plans it
 * creates). */
static void plan_forget(void *h, uint32_t flags) {
    uint64_t points_id = 0;
    warpfft_plan_points_id(h, &points_id);
    if (!(flags & WARPFFT_POOL_KEEP_POINTS) || points_id == 0)
        wf_plan_forget_points(h);
}
static warpfft_status plan_resolve(const pool_args *a, wf_plan_request *req) {
    return wf_plan_resolve(a->type, a->dim, a->n_modes, a->iflag, a->ntransf, a->tol,
                           (int)a->precision, a->opts, req);
}
static warpfft_status plan_create_resolved(const wf_plan_request *req, void **h) {
    warpfft_plan plan = NULL;
    warpfft_status st = wf_plan_create_request(req, &plan);
    *h = plan;
    return st;
}

static void toep_set_pooled(void *h, int pooled) {
    wf_toeplitz_set_pooled(h, pooled);
}
static warpfft_status toep_fence(void *h, int *capturing) {
    return wf_toeplitz_fence(h, capturing);
}
static int toep_graph_held(void *h) {
    return wf_toeplitz_graph_held(h);
}
static warpfft_status toep_destroy_fenced(void *h) {
    return wf_toeplitz_destroy_fenced(h);
}
static warpfft_status toep_destroy(void *h) {
    return warpfft_toeplitz_destroy(h);
}
static size_t toep_workspace(void *h) {
    size_t bytes = 0;
    warpfft_toeplitz_workspace_bytes(h, &bytes);
    return bytes;
}
static warpfft_status toep_create(const pool_args *a, void **h) {
    warpfft_toeplitz op = NULL;
    warpfft_status st =
        warpfft_toeplitz_create(a->dim, a->n_modes, 1, a->ntransf, a->tol, a->precision, a->opts, 0,
                                NULL, NULL, NULL, WARPFFT_WEIGHTS_NONE, NULL, &op);
    *h = op;
    return st;
}

static const pool_kind kinds[N_KINDS] = {
    {KIND_PLAN, "plan", "warpfft_pool_acquire", "warpfft_pool_release", NULL, plan_resolve,
     plan_create_resolved, plan_set_pooled, plan_fence, plan_graph_held, plan_destroy_fenced,
     plan_destroy, plan_workspace, plan_forget},
    {KIND_TOEPLITZ, "operator", "warpfft_pool_acquire_toeplitz", "warpfft_pool_release_toeplitz",
     toep_create, NULL, NULL, toep_set_pooled, toep_fence, toep_graph_held, toep_destroy_fenced,
     toep_destroy, toep_workspace, NULL},
};

/* ---- the public acquire and release ---- */

WARPFFT_API warpfft_status warpfft_pool_acquire(int type, int dim, const int64_t n_modes[3],
                                                int iflag, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, warpfft_plan *plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_pool_acquire: plan (the output pointer) is NULL");
    *plan = NULL;
    warpfft_opts o;
    warpfft_status st = wf_opts_resolve(opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    /* Only a plan_create that succeeded makes an entry: a key found is a valid request. */
    wf_pool_key key;
    make_key(&key, type, dim, n_modes, iflag, ntransf, tol, (int)precision, &o);
    pool_args a = {type, dim, iflag, n_modes, ntransf, tol, precision, &o};
    void *h = NULL;
    st = acquire(&kinds[KIND_PLAN], &key, &a, &h);
    *plan = h;
    return st;
}

WARPFFT_API warpfft_status warpfft_pool_release(warpfft_plan plan, uint32_t flags) {
    return release(&kinds[KIND_PLAN], plan, flags);
}

WARPFFT_API warpfft_status warpfft_pool_acquire_toeplitz(int dim, const int64_t n_modes[3],
                                                         int64_t ntransf, double tol,
                                                         warpfft_precision precision,
                                                         const warpfft_opts *opts,
                                                         warpfft_toeplitz *op) {
    wf_clear_error();
    if (!op)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_pool_acquire_toeplitz: op (the output pointer) is NULL");
    *op = NULL;
    warpfft_opts o;
    warpfft_status st = wf_opts_resolve(opts, &o);
    if (st != WARPFFT_SUCCESS)
        return st;
    /* the plan's key with type 0: a zero operator (its iflag means nothing) */
    wf_pool_key key;
    make_key(&key, 0, dim, n_modes, 1, ntransf, tol, (int)precision, &o);
    pool_args a = {0, dim, 1, n_modes, ntransf, tol, precision, &o};
    void *h = NULL;
    st = acquire(&kinds[KIND_TOEPLITZ], &key, &a, &h);
    *op = h;
    return st;
}

WARPFFT_API warpfft_status warpfft_pool_release_toeplitz(warpfft_toeplitz op, uint32_t flags) {
    return release(&kinds[KIND_TOEPLITZ], op, flags);
}

/* ---- clear, limits, info ---- */

WARPFFT_API warpfft_status warpfft_pool_clear(void) {
    wf_clear_error();
    wf_pool_entry *victims = NULL;
    pthread_mutex_lock(&wf_pool_lock);
    for (wf_pool_entry *e = wf_pool_head, *next; e; e = next) {
        next = e->next;
        e->doomed = 1;
        if (idle_locked(e))
            take_idle_locked(e, &victims);
    }
    sweep_graphs_locked(&victims); /* graph-held ones the graphs let go of since */
    pthread_mutex_unlock(&wf_pool_lock);
    return destroy_victims(victims, NULL);
}

WARPFFT_API warpfft_status warpfft_pool_set_limits(int64_t max_plans, int64_t max_bytes) {
    wf_clear_error();
    wf_pool_entry *victims = NULL;
    pthread_mutex_lock(&wf_pool_lock);
    limits_locked();
    if (max_plans >= 0)
        wf_pool_max_plans = max_plans;
    if (max_bytes >= 0)
        wf_pool_max_bytes = max_bytes;
    sweep_graphs_locked(&victims);
    evict_locked(&victims);
    pthread_mutex_unlock(&wf_pool_lock);
    return destroy_victims(victims, NULL);
}

WARPFFT_API warpfft_status warpfft_pool_get_info(warpfft_pool_info *info) {
    wf_clear_error();
    size_t least = offsetof(warpfft_pool_info, idle) + sizeof info->idle;
    if (!info || info->struct_size < least)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_pool_get_info: %s (set struct_size to sizeof(warpfft_pool_info))",
                        !info ? "info is NULL" : "info->struct_size is too small");
    warpfft_pool_info all;
    memset(&all, 0, sizeof all);
    pthread_mutex_lock(&wf_pool_lock);
    limits_locked();
    sweep_graphs_locked(NULL);
    all.idle = wf_pool_idle;
    all.busy = wf_pool_busy;
    all.idle_bytes = wf_pool_idle_bytes;
    all.max_plans = wf_pool_max_plans;
    all.max_bytes = wf_pool_max_bytes;
    all.created = wf_pool_created;
    all.hits = wf_pool_hits;
    all.destroyed = wf_pool_destroyed;
    for (const wf_pool_entry *e = wf_pool_head; e; e = e->next)
        if (e->kind->id == KIND_TOEPLITZ)
            *(idle_locked(e) ? &all.operators_idle : &all.operators_busy) += 1;
    all.operators_created = wf_pool_created_kind[KIND_TOEPLITZ];
    pthread_mutex_unlock(&wf_pool_lock);
    uint32_t size = info->struct_size;
    size_t n = size < sizeof all ? size : sizeof all;
    memcpy((char *)info + sizeof all.struct_size, (char *)&all + sizeof all.struct_size,
           n - sizeof all.struct_size);
    return WARPFFT_SUCCESS;
}
