/*
 * standin_cuda_modules.c — the stand-in driver's modules (standin_cuda.h): loads (optionally
 * slow, for the tests of parallel loads and fork), link states, functions by name, their
 * attributes, and kernel launches, which compute nothing but the binning kernels a checked
 * setpts reads back and type 3's bounds (standin_cuda_kernels.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "standin_cuda.h"

struct CUmod_st {
    int live;
};
struct CUfunc_st {
    char name[64];
    struct CUfunc_st *next;
};
struct CUlinkState_st {
    unsigned char cubin[16];
};
static struct CUfunc_st *funcs; /* every function handed out, freed never (like the driver's) */

static CUresult module_load(CUmodule *m, const void *image) {
    sc_capture_none("a module load");
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    if (sc_slow_load_ms)
        usleep((useconds_t)sc_slow_load_ms * 1000u);
    struct CUmod_st *mod = malloc(sizeof *mod);
    if (!mod)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    mod->live = 1;
    sc_count(&sc_counts.live_modules);
    *m = mod;
    return 0;
}
API CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    TICK("cuModuleLoadData");
    return module_load(m, image);
}
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, int *o, void **v) {
    (void)n, (void)o, (void)v;
    TICK("cuModuleLoadDataEx");
    return module_load(m, image);
}
API CUresult cuModuleUnload(CUmodule m) {
    return sc_release("cuModuleUnload", &sc_counts.live_modules, m);
}
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    TICK("cuModuleGetFunction");
    if (!m || !m->live || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sc_lock);
    struct CUfunc_st *fn = funcs;
    while (fn && strcmp(fn->name, name) != 0)
        fn = fn->next;
    if (!fn && (fn = calloc(1, sizeof *fn))) {
        snprintf(fn->name, sizeof fn->name, "%s", name);
        fn->next = funcs;
        funcs = fn;
    }
    pthread_mutex_unlock(&sc_lock);
    if (!fn)
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    *f = fn;
    return 0;
}
API CUresult cuLinkCreate_v2(unsigned int n, int *o, void **v, CUlinkState *ls) {
    (void)n, (void)o, (void)v;
    TICK("cuLinkCreate");
    sc_capture_none("cuLinkCreate");
    if (!(*ls = calloc(1, sizeof **ls)))
        return WF_CUDA_ERROR_OUT_OF_MEMORY;
    sc_count(&sc_counts.live_links);
    return 0;
}
API CUresult cuLinkAddData_v2(CUlinkState ls, int type, void *data, size_t size, const char *name,
                              unsigned int n, int *o, void **v) {
    (void)ls, (void)type, (void)data, (void)size, (void)name, (void)n, (void)o, (void)v;
    TICK("cuLinkAddData");
    return 0;
}
API CUresult cuLinkComplete(CUlinkState ls, void **cubin, size_t *size) {
    TICK("cuLinkComplete");
    *cubin = ls->cubin;
    *size = sizeof ls->cubin;
    return 0;
}
API CUresult cuLinkDestroy(CUlinkState ls) {
    return sc_release("cuLinkDestroy", &sc_counts.live_links, ls);
}
API CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
    (void)f, (void)attr, (void)v;
    TICK("cuFuncSetAttribute");
    return 0;
}
API CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
    (void)f;
    TICK("cuFuncGetAttribute");
    *v = attr == 0 ? 1024 : 64; /* MAX_THREADS_PER_BLOCK: a device's; else shared bytes */
    return 0;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s, void **args,
                            void **extra) {
    (void)extra;
    TICK("cuLaunchKernel");
    if (!f || !args || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (sc_depth <= 0) {
        pthread_mutex_lock(&sc_lock);
        sc_violation("%s %p %zu: no current context", f->name, NULL, 0);
        pthread_mutex_unlock(&sc_lock);
    }
    standin_log_launch(f->name);
    sc_check_order(s, f->name);
    sc_geom g = {gx, gy, bx, shared};
    sc_emulate(f->name, args, &g);
    sc_count(&sc_counts.launches);
    return 0;
}
