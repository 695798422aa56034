/*
 * plan_kernels.c — the modules and kernels a plan launches: which modules (one job each, so a
 * jit build compiles nothing the plan does not launch), when they load during plan creation,
 * the kernel handles, and the SM kernel's shared-memory limit. Split from plan.c.
 */
#include <stdio.h>
#include <string.h>

#include "plan.h"

static warpfft_status load_kernel(struct warpfft_plan_s *plan, const char *module, const char *name,
                                  wf_kernel *k) {
    snprintf(k->name, sizeof k->name, "%s", name);
    return wf_kernel_get(plan->dev, module, k->name, &k->fn);
}

/* Module "sort": the one-block bin scan and the NaN pass of execute; a plan with many bins takes
 * its scan from module "scan_big" (three multi-block kernels) instead. */
static warpfft_status load_sort_kernels(struct warpfft_plan_s *plan) {
    static const char *const big[3] = {"wf_scan_big_reduce", "wf_scan_big_tiles",
                                       "wf_scan_big_down"};
    warpfft_status st = load_kernel(plan, "sort", "wf_poison_u32", &plan->k_poison);
    if (wf_params_scan_tiles(&plan->p) == 0)
        return st == WARPFFT_SUCCESS ? load_kernel(plan, "sort", "wf_bin_scan", &plan->k_scan) : st;
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS; i++)
        st = load_kernel(plan, "scan_big", big[i], &plan->k_scan_big[i]);
    return st;
}

/* The modules a plan launches from: "sort", "bin_{d}d_p" (count, scatter, unpack of setpts),
 * "si_{d}d_p_w{w}_{spread|interp}_{gm|sm}" (the direction and method the plan launches),
 * "deconvolve_{d}d_p" (type 1) or "amplify_{d}d_p" (type 2; neither for spread/interp-only
 * plans), and "scan_big" for plans with many bins. A plan loads nothing it does not launch: in a
 * jit build each module is JIT-compiled on its first use. */
typedef struct plan_modules {
    const char *ps, *op, *fix, *method; /* f32/f64, spread/interp, deconvolve/amplify, gm/sm */
    char bin[32], modes[32], si[48];
    const char *names[5];
    size_t n;
} plan_modules;

static void plan_modules_of(const wf_params *p, plan_modules *m) {
    m->ps = wf_prec_name(p->precision);
    m->op = p->type == 1 ? "spread" : "interp";
    m->fix = p->type == 1 ? "deconvolve" : "amplify";
    m->method = p->method == WARPFFT_METHOD_SM ? "sm" : "gm";
    snprintf(m->bin, sizeof m->bin, "bin_%dd_%s", p->dim, m->ps);
    snprintf(m->modes, sizeof m->modes, "%s_%dd_%s", m->fix, p->dim, m->ps);
    snprintf(m->si, sizeof m->si, "si_%dd_%s_w%d_%s_%s", p->dim, m->ps, p->width, m->op, m->method);
    m->n = 0;
    m->names[m->n++] = "sort";
    m->names[m->n++] = m->bin;
    m->names[m->n++] = m->si;
    if (!p->spreadinterponly)
        m->names[m->n++] = m->modes;
    if (wf_params_scan_tiles(p) > 0) /* scan_big: only plans that use it */
        m->names[m->n++] = "scan_big";
}

static warpfft_status load_kernels(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    plan_modules m;
    plan_modules_of(p, &m);
    const char *ps = m.ps;
    char name[64];
    /* the modules not loaded yet load in parallel (a no-op when plan_build started them) */
    warpfft_status st = wf_modules_preload(plan->dev, m.names, m.n);
    if (st == WARPFFT_SUCCESS)
        st = load_sort_kernels(plan);
    snprintf(name, sizeof name, "wf_bin_count_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = load_kernel(plan, m.bin, name, &plan->k_bin_count);
    snprintf(name, sizeof name, "wf_bin_scatter_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = load_kernel(plan, m.bin, name, &plan->k_scatter);
    snprintf(name, sizeof name, "wf_sort_unpack_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = load_kernel(plan, m.bin, name, &plan->k_unpack);
    snprintf(name, sizeof name, "wf_%s_%s", m.fix, ps);
    if (st == WARPFFT_SUCCESS && !p->spreadinterponly)
        st = load_kernel(plan, m.modes, name, &plan->k_modes);
    snprintf(name, sizeof name, "wf_%s_%s_%dd_%s_w%d", m.op, m.method, p->dim, ps, p->width);
    if (st == WARPFFT_SUCCESS)
        st = load_kernel(plan, m.si, name, &plan->k_spreadinterp);
    return st;
}

/* SM tiles whose dynamic plus static shared memory exceeds the 48 KiB default need the
 * function's dynamic shared memory limit raised; the sum must fit the device's opt-in limit. */
static warpfft_status set_shared_limit(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    if (p->method != WARPFFT_METHOD_SM)
        return WARPFFT_SUCCESS;
    int static_bytes = 0;
    CUresult r = plan->drv->cuFuncGetAttribute(&static_bytes, WF_FUNC_ATTR_SHARED_SIZE_BYTES,
                                               plan->k_spreadinterp.fn);
    if (r != WF_CUDA_SUCCESS)
        return wf_cuda_error(r, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    if (p->tile_bytes + (size_t)static_bytes > (size_t)plan->dev->max_shared_optin)
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "%s: tile of %zu bytes + %d bytes of static shared memory exceed the "
                        "device's %d bytes per block (WF_SM_STATIC_RESERVE too small)",
                        plan->k_spreadinterp.name, p->tile_bytes, static_bytes,
                        plan->dev->max_shared_optin);
    if (p->tile_bytes + (size_t)static_bytes <= WF_SHARED_STATIC_MAX)
        return WARPFFT_SUCCESS;
    r = plan->drv->cuFuncSetAttribute(plan->k_spreadinterp.fn, WF_FUNC_ATTR_MAX_DYNAMIC_SHARED,
                                      (int)p->tile_bytes);
    if (r != WF_CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = %zu) on %s",
                 p->tile_bytes, plan->k_spreadinterp.name);
        return wf_cuda_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

/* A CUDA tool injected into the process: compute-sanitizer (its NV_SANITIZER_INJECTION_*
 * variables) or an Nsight tool (CUDA_INJECTION64_PATH). */
static int cuda_tool_attached(void) {
    static const char *const vars[] = {"NV_SANITIZER_INJECTION_PORT_BASE", "CUDA_INJECTION64_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = wf_getenv(vars[i]);
        if (v && v[0])
            return 1;
    }
    return 0;
}

warpfft_status wf_plan_start_modules(struct warpfft_plan_s *plan, wf_preload **loading) {
    /* Modules that must be compiled (a jit or nvrtc build's first use) compile on their own
     * threads while plan creation makes the cuFFT plan (its first plan in a process takes
     * ~0.2 s: cuFFT's own start-up), the buffers and the factors: the driver's linker
     * (module_ptx.c) runs beside cuFFT (cuModuleLoadDataEx's JIT held cuFFT's calls until it
     * finished). SASS loads in ~1 ms and is loaded first, as it always was (nothing to gain).
     * Under a CUDA tool nothing overlaps either: with the JIT beside cuFFT's first plan,
     * compute-sanitizer memcheck stalled for minutes in gpu_api's second_plan_of_a_shape_is_fast
     * (H100, jit build, in two sessions), while the same tests run in ~0.1 s without the tool. */
    plan_modules m;
    plan_modules_of(&plan->p, &m);
    *loading = NULL;
    if (!cuda_tool_attached() && wf_modules_need_compile(plan->dev, m.names, m.n)) {
        wf_modules_preload_start(plan->dev, m.names, m.n, loading);
        return WARPFFT_SUCCESS;
    }
    return wf_modules_preload(plan->dev, m.names, m.n);
}

warpfft_status wf_plan_finish_modules(struct warpfft_plan_s *plan, wf_preload *loading) {
    warpfft_status st = wf_modules_preload_finish(loading);
    if (st == WARPFFT_SUCCESS)
        st = load_kernels(plan);
    if (st == WARPFFT_SUCCESS)
        st = set_shared_limit(plan);
    return st;
}
