/*
 * launch.c — where a plan's work runs: its device, driver and stream, the modules it loads, its
 * kernels, and the grid-stride launches and memsets every part of a plan issues on its stream.
 */
#include "plans/launch.h"

#include <stdarg.h>
#include <stdio.h>

#include "runtime/error.h"
#include "runtime/libfind.h"

warpfft_status wf_exec_attach(wf_exec *ex, const warpfft_opts *o) {
    warpfft_status st = wf_device_get(o->device, &ex->dev);
    if (st == WARPFFT_SUCCESS)
        st = wf_driver_get(&ex->drv);
    ex->stream = (CUstream)(uintptr_t)o->stream;
    /* Creation allocates device memory and uploads to it on the stream: during a capture into
     * a CUDA graph the upload would become a node reading host memory freed right after. */
    if (st == WARPFFT_SUCCESS)
        st = wf_stream_not_capturing(ex->dev, ex->stream, "creating a plan",
                                     "create it before the capture begins (from the live-plan "
                                     "pool: run the same call once on this stream before "
                                     "capturing, so that an idle plan of its arguments is there)");
    return st;
}

size_t wf_exec_shared_limit(const wf_exec *ex) {
    return ex->dev->max_shared_optin > 0 ? (size_t)ex->dev->max_shared_optin : 0;
}

warpfft_status wf_kernel_load(const wf_exec *ex, const char *module, const char *name,
                              wf_kernel *k) {
    snprintf(k->name, sizeof k->name, "%s", name);
    return wf_kernel_get(ex->dev, module, k->name, &k->fn);
}

warpfft_status wf_exec_launch(const wf_exec *ex, const wf_kernel *k, int64_t n, void **args) {
    if (n <= 0)
        return WARPFFT_SUCCESS;
    int64_t blocks = n / WF_BLOCK + (n % WF_BLOCK != 0);
    int64_t cap = (int64_t)(ex->dev->n_sm > 0 ? ex->dev->n_sm : 1) * WF_BLOCKS_PER_SM;
    if (cap > (int64_t)WF_GRID_MAX)
        cap = WF_GRID_MAX;
    if (blocks > cap)
        blocks = cap;
    return wf_launch(k->fn, k->name, (unsigned)blocks, 1, WF_BLOCK, 0, ex->stream, args);
}

warpfft_status wf_exec_memset(const wf_exec *ex, CUdeviceptr p, size_t bytes, const char *what) {
    if (bytes == 0)
        return WARPFFT_SUCCESS;
    CUresult r = ex->drv->cuMemsetD8Async(p, 0, bytes, ex->stream);
    if (r != WF_CUDA_SUCCESS) {
        char msg[160];
        snprintf(msg, sizeof msg, "cuMemsetD8Async of %zu bytes (%s)", bytes, what);
        return wf_cuda_error(r, msg);
    }
    return WARPFFT_SUCCESS;
}

void wf_module_set_add(wf_module_set *s, const char *fmt, ...) {
    if (s->n >= WF_MAX_PLAN_MODULES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->buf[s->n], sizeof s->buf[s->n], fmt, ap);
    va_end(ap);
    s->names[s->n] = s->buf[s->n];
    s->n++;
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

warpfft_status wf_modules_start(const wf_exec *ex, const wf_module_set *s, wf_preload **loading) {
    /* Modules that must be compiled (a jit or nvrtc build's first use) compile on their own
     * threads while plan creation makes the cuFFT plan (its first plan in a process takes
     * ~0.2 s: cuFFT's own start-up), the buffers and the factors: the driver's linker
     * (module_ptx.c) runs beside cuFFT (cuModuleLoadDataEx's JIT held cuFFT's calls until it
     * finished). SASS loads in ~1 ms and is loaded first, as it always was (nothing to gain).
     * Under a CUDA tool nothing overlaps either: with the JIT beside cuFFT's first plan,
     * compute-sanitizer memcheck stalled for minutes in gpu_api's second_plan_of_a_shape_is_fast
     * (H100, jit build, in two sessions), while the same tests run in ~0.1 s without the tool. */
    *loading = NULL;
    if (!cuda_tool_attached() && wf_modules_need_compile(ex->dev, s->names, s->n)) {
        wf_modules_preload_start(ex->dev, s->names, s->n, loading);
        return WARPFFT_SUCCESS;
    }
    return wf_modules_preload(ex->dev, s->names, s->n);
}
