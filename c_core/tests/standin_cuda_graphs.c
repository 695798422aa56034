/*
 * standin_cuda_graphs.c — the stand-in driver's stream capture into CUDA graphs (standin.h):
 * streams the test declares capturing (standin_capture_begin: a new graph with a capture id,
 * a blocking stream or not), cuStreamIsCapturing and cuStreamGetCaptureInfo_v2 reporting them,
 * user objects (cuUserObjectCreate / cuUserObjectRelease / cuGraphRetainUserObject) whose
 * destructors run when the graph holding them is destroyed (standin_graph_destroy; later, at
 * standin_run_destructors, when deferred: CUDA runs them on a thread of its own), and the
 * checks the other files make of work during a capture (standin_cuda.h: sc_capture_*): work
 * enqueued on a capturing stream is counted as captured; waiting for it, a host copy on it, a
 * wait for an event recorded in a capture, and an allocation, a free or a module load while
 * any capture runs (CUDA's default, global capture mode: the caller's graph breaks) are
 * violations.
 */
#include <stdio.h>
#include <string.h>

#include "standin_cuda.h"

#define MAX_CAPTURES   8
#define MAX_GRAPH_REFS 32
#define MAX_DEFERRED   64

struct CUuserObj_st {
    void *ptr;
    CUhostFn destroy;
    unsigned refs;
};

typedef struct sc_graph {
    struct {
        CUuserObject obj;
        unsigned count;
    } refs[MAX_GRAPH_REFS];
    int n_refs;
    long nodes; /* work captured into it */
} sc_graph;

/* Guarded by sc_lock. */
static struct {
    CUstream s; /* capturing (NULL slot: free; the legacy stream cannot capture) */
    int blocking, relaxed, invalidated;
    uint64_t id;
    sc_graph *graph;
} caps[MAX_CAPTURES];
static uint64_t capture_ids = 1000;
static int defer_destructors;
static struct {
    CUhostFn fn;
    void *ptr;
} deferred[MAX_DEFERRED];
static int n_deferred;

static int find_locked(CUstream s) {
    for (int i = 0; s && i < MAX_CAPTURES; i++)
        if (caps[i].s == s)
            return i;
    return -1;
}

static int blocking_locked(void) {
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (caps[i].s && caps[i].blocking)
            return 1;
    return 0;
}

/* ---- the control API (standin.h) ---- */

API void *standin_capture_begin(CUstream s, int flags) {
    sc_graph *g = calloc(1, sizeof *g);
    pthread_mutex_lock(&sc_lock);
    int i = 0;
    while (i < MAX_CAPTURES && caps[i].s)
        i++;
    if (!g || !s || i == MAX_CAPTURES || find_locked(s) >= 0) {
        sc_violation("%s %p %zu: cannot begin this capture", "standin_capture_begin", s, 0);
        pthread_mutex_unlock(&sc_lock);
        free(g);
        return NULL;
    }
    caps[i].s = s;
    caps[i].blocking = flags & STANDIN_CAPTURE_BLOCKING;
    caps[i].relaxed = (flags & STANDIN_CAPTURE_RELAXED) != 0;
    caps[i].invalidated = 0;
    caps[i].id = ++capture_ids;
    caps[i].graph = g;
    sc_counts.live_graphs++;
    pthread_mutex_unlock(&sc_lock);
    return g;
}

API void standin_capture_invalidate(CUstream s) {
    pthread_mutex_lock(&sc_lock);
    int i = find_locked(s);
    if (i >= 0)
        caps[i].invalidated = 1;
    pthread_mutex_unlock(&sc_lock);
}

API long standin_capture_end(CUstream s) {
    pthread_mutex_lock(&sc_lock);
    int i = find_locked(s);
    long nodes = i >= 0 ? caps[i].graph->nodes : -1;
    if (i >= 0)
        memset(&caps[i], 0, sizeof caps[i]);
    pthread_mutex_unlock(&sc_lock);
    return nodes;
}

/* Releases `count` references of o (sc_lock held); at zero its destructor runs now (after the
 * lock is let go: it may call into the pool) or is deferred. Returns the destructor to run. */
static int release_locked(CUuserObject o, unsigned count, CUhostFn *fn, void **ptr) {
    *fn = NULL;
    if (count > o->refs) {
        sc_violation("%s %p %zu: more references released than held", "cuUserObjectRelease", o,
                     count);
        count = o->refs;
    }
    o->refs -= count;
    if (o->refs > 0)
        return 0;
    sc_counts.live_user_objects--;
    if (defer_destructors && n_deferred < MAX_DEFERRED) {
        deferred[n_deferred].fn = o->destroy;
        deferred[n_deferred++].ptr = o->ptr;
    } else {
        *fn = o->destroy;
        *ptr = o->ptr;
    }
    free(o);
    return 1;
}

API void standin_graph_destroy(void *graph) {
    sc_graph *g = graph;
    if (!g)
        return;
    CUhostFn fns[MAX_GRAPH_REFS];
    void *ptrs[MAX_GRAPH_REFS];
    int n = 0;
    pthread_mutex_lock(&sc_lock);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (caps[i].graph == g) /* destroyed while still capturing: the capture ends too */
            memset(&caps[i], 0, sizeof caps[i]);
    for (int k = 0; k < g->n_refs; k++)
        if (release_locked(g->refs[k].obj, g->refs[k].count, &fns[n], &ptrs[n]) && fns[n])
            n++;
    sc_counts.live_graphs--;
    pthread_mutex_unlock(&sc_lock);
    free(g);
    for (int k = 0; k < n; k++)
        fns[k](ptrs[k]);
}

API void standin_defer_destructors(int defer) {
    pthread_mutex_lock(&sc_lock);
    defer_destructors = defer;
    pthread_mutex_unlock(&sc_lock);
}

API int standin_run_destructors(void) {
    pthread_mutex_lock(&sc_lock);
    int n = n_deferred;
    CUhostFn fns[MAX_DEFERRED];
    void *ptrs[MAX_DEFERRED];
    for (int k = 0; k < n; k++) {
        fns[k] = deferred[k].fn;
        ptrs[k] = deferred[k].ptr;
    }
    n_deferred = 0;
    pthread_mutex_unlock(&sc_lock);
    for (int k = 0; k < n; k++)
        fns[k](ptrs[k]);
    return n;
}

API void standin_stream_work(CUstream s, const char *what) {
    pthread_mutex_lock(&sc_lock);
    sc_capture_work_locked(s, what);
    pthread_mutex_unlock(&sc_lock);
}

/* ---- for the other files (standin_cuda.h), sc_lock held ---- */

int sc_capture_state_locked(CUstream s) {
    int i = find_locked(s);
    return i < 0 ? 0 : caps[i].invalidated ? 2 : 1;
}

void sc_capture_work_locked(CUstream s, const char *what) {
    (void)what;
    int i = find_locked(s);
    if (i >= 0) {
        caps[i].graph->nodes++;
        sc_counts.captured++;
    } else if (!s && blocking_locked()) {
        sc_violation("%s on the legacy stream %p (%zu) while a blocking stream captures", what,
                     NULL, 0);
    }
}

void sc_capture_forbid_locked(CUstream s, const char *what) {
    if (find_locked(s) >= 0)
        sc_violation("%s on stream %p (%zu), which is being captured into a CUDA graph", what, s,
                     0);
    else if (!s && blocking_locked())
        sc_violation("%s on the legacy stream %p (%zu) while a blocking stream captures", what,
                     NULL, 0);
}

void sc_capture_none(const char *what) {
    pthread_mutex_lock(&sc_lock);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (caps[i].s && !caps[i].relaxed) {
            sc_violation("%s while stream %p (%zu) is being captured into a CUDA graph (global "
                         "capture mode: the capture breaks)",
                         what, caps[i].s, 0);
            break;
        }
    pthread_mutex_unlock(&sc_lock);
}

/* ---- the driver's entry points ---- */

/* The capture state of s as the driver reports it; IMPLICIT for the legacy stream beside a
 * blocking capture. */
static CUresult query(CUstream s, int *status, uint64_t *id, CUgraph *graph) {
    pthread_mutex_lock(&sc_lock);
    CUresult r = 0;
    int i = find_locked(s);
    if (!s && blocking_locked()) {
        r = WF_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    } else {
        *status = i < 0                 ? WF_CAPTURE_NONE
                  : caps[i].invalidated ? WF_CAPTURE_INVALIDATED
                                        : WF_CAPTURE_ACTIVE;
        if (id && i >= 0)
            *id = caps[i].id;
        if (graph)
            *graph = i >= 0 ? (CUgraph)caps[i].graph : NULL;
    }
    pthread_mutex_unlock(&sc_lock);
    return r;
}

API CUresult cuStreamIsCapturing(CUstream s, int *status) {
    TICK("cuStreamIsCapturing");
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    standin_check_stream(s, "cuStreamIsCapturing");
    return query(s, status, NULL, NULL);
}

API CUresult cuStreamGetCaptureInfo_v2(CUstream s, int *status, uint64_t *id, CUgraph *graph,
                                       const CUgraphNode **deps, size_t *n_deps) {
    TICK("cuStreamGetCaptureInfo");
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    standin_check_stream(s, "cuStreamGetCaptureInfo");
    if (deps)
        *deps = NULL;
    if (n_deps)
        *n_deps = 0;
    return query(s, status, id, graph);
}

API CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy, unsigned refs,
                                unsigned flags) {
    TICK("cuUserObjectCreate");
    if (!out || !destroy || refs == 0 || flags != WF_USER_OBJECT_NO_DESTRUCTOR_SYNC)
        return CUDA_ERROR_INVALID_VALUE;
    CUuserObject o = calloc(1, sizeof *o);
    if (!o)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    o->ptr = ptr;
    o->destroy = destroy;
    o->refs = refs;
    sc_count(&sc_counts.live_user_objects);
    *out = o;
    return 0;
}

API CUresult cuUserObjectRelease(CUuserObject o, unsigned count) {
    int fail = standin_tick("cuUserObjectRelease"); /* released either way */
    if (!o || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUhostFn fn = NULL;
    void *ptr = NULL;
    pthread_mutex_lock(&sc_lock);
    release_locked(o, count, &fn, &ptr);
    pthread_mutex_unlock(&sc_lock);
    if (fn)
        fn(ptr);
    return fail ? CUDA_ERROR_LAUNCH_FAILED : 0;
}

API CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject o, unsigned count,
                                     unsigned flags) {
    TICK("cuGraphRetainUserObject");
    sc_graph *g = (sc_graph *)graph;
    if (!g || !o || count == 0 || (flags & ~(unsigned)WF_GRAPH_USER_OBJECT_MOVE))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sc_lock);
    CUresult r = 0;
    if (g->n_refs == MAX_GRAPH_REFS) {
        r = WF_CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        g->refs[g->n_refs].obj = o;
        g->refs[g->n_refs++].count = count;
        if (!(flags & WF_GRAPH_USER_OBJECT_MOVE))
            o->refs += count;
    }
    pthread_mutex_unlock(&sc_lock);
    return r;
}

/* ---- streams and graphs for a caller that captures (tests/c/graph_capture.c's flow on the
 * stand-in): a capture begun by cuStreamBeginCapture is standin_capture_begin's; an executable
 * graph holds its graph's user objects until both are destroyed; a launch does nothing ---- */

typedef struct sc_exec {
    sc_graph *graph;
} sc_exec;

API CUresult cuCtxSetCurrent(CUcontext ctx) {
    TICK("cuCtxSetCurrent");
    return ctx ? 0 : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    TICK("cuStreamCreate");
    static uintptr_t next = 0x7000;
    pthread_mutex_lock(&sc_lock);
    *s = (CUstream)(next += 0x10);
    pthread_mutex_unlock(&sc_lock);
    return 0;
}
API CUresult cuStreamDestroy_v2(CUstream s) {
    (void)s;
    TICK("cuStreamDestroy");
    return 0;
}
API CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
    TICK("cuStreamBeginCapture");
    return standin_capture_begin(s, mode == 2 ? STANDIN_CAPTURE_RELAXED : 0)
               ? 0
               : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuStreamEndCapture(CUstream s, CUgraph *graph) {
    TICK("cuStreamEndCapture");
    pthread_mutex_lock(&sc_lock);
    int i = find_locked(s);
    *graph = i >= 0 ? (CUgraph)caps[i].graph : NULL;
    pthread_mutex_unlock(&sc_lock);
    standin_capture_end(s);
    return *graph ? 0 : CUDA_ERROR_INVALID_VALUE;
}
/* The executable graph takes a reference on each of its graph's user objects. */
API CUresult cuGraphInstantiateWithFlags(void **exec, CUgraph graph, unsigned long long flags) {
    (void)flags;
    TICK("cuGraphInstantiateWithFlags");
    sc_graph *g = (sc_graph *)graph, *copy = calloc(1, sizeof *copy);
    sc_exec *e = calloc(1, sizeof *e);
    if (!g || !copy || !e) {
        free(copy);
        free(e);
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&sc_lock);
    *copy = *g;
    for (int k = 0; k < copy->n_refs; k++)
        copy->refs[k].obj->refs += copy->refs[k].count;
    sc_counts.live_graphs++;
    pthread_mutex_unlock(&sc_lock);
    e->graph = copy;
    *exec = e;
    return 0;
}
API CUresult cuGraphLaunch(void *exec, CUstream s) {
    TICK("cuGraphLaunch");
    standin_check_stream(s, "cuGraphLaunch");
    return exec ? 0 : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuGraphExecDestroy(void *exec) {
    TICK("cuGraphExecDestroy");
    sc_exec *e = exec;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    standin_graph_destroy(e->graph);
    free(e);
    return 0;
}
API CUresult cuGraphDestroy(CUgraph graph) {
    TICK("cuGraphDestroy");
    standin_graph_destroy(graph);
    return 0;
}
