/*
 * spreader.c — the spreader's life and its grid work (spreader.h): the modules and kernels it
 * launches, its per-bin arrays and optional own grid, spreading strengths onto a grid and
 * interpolating a grid at the points by the plan's method (GM, SM, or OD: output-driven
 * spreading), and the NaN pass of unchecked point sets. Binning a point set is
 * spreader_points.c.
 */
#include "plans/spreader.h"

#include <stddef.h>
#include <stdio.h>

#include "module_names.h"
#include "params/bins.h"
#include "params/params.h"
#include "runtime/error.h"

_Static_assert(sizeof(wf_setpts_result) == 32, "params.c counts 32 bytes for the result block");

/* ---------------------------------------------------------------- methods */

/* One launch of a spreading or interpolation kernel: which, its width and T beta, and the
 * device word naming the width the points took with this kernel's index among the spreader's
 * widths (kernels/ABI.md, "Widths from the points"; w_sel 0 for a spreader of one width). */
typedef struct si_call {
    const wf_kernel *k;
    int dir; /* 0: spread, 1: interp */
    int width;
    void *beta;
    CUdeviceptr w_sel;
    int w_idx;
} si_call;

/* How one spreading method runs: the suffix of its modules and kernels, whether it splits bins
 * into subproblems (the per-bin subproblem starts and the subproblem list of setpts), whether
 * its kernels take a shared-memory tile (p.tile_bytes, sized for p.width, which holds every
 * narrower width's), whether spreading needs the grid zeroed first (OD writes every cell), and
 * its launch. Spread and interp of a method take one parameter list (kernels/ABI.md). */
typedef struct si_method {
    int method; /* WARPFFT_METHOD_* */
    const char *suffix;
    int subproblems, shared_tile, zero_grid;
    warpfft_status (*launch)(const wf_spreader *sp, const si_call *k, CUdeviceptr c,
                             CUdeviceptr grid);
} si_method;

/* What the launches of every method pass (kernels/ABI.md): the points (all sets': M; per set:
 * set_M points and tps transforms), the coordinates in sorted order (setpts) indexed like
 * sort_idx, the fine grid, the bins, and the width the points took. The kernels' argument arrays
 * point into it. */
typedef struct si_args {
    long long M, ntransf, set_M, tps;
    CUdeviceptr x, y, z, sort_idx;
    long long nf1, nf2, nf3;
    int bs1, bs2, bs3;
    long long nb1, nb2, nb3;
    CUdeviceptr bin_start, bin_count, w_sel;
    int w_idx;
} si_args;

static si_args si_args_of(const wf_spreader *sp, const si_call *k) {
    const wf_params *p = &sp->p;
    const wf_bin_arrays *b = wf_spreader_bin_arrays(sp);
    return (si_args){.M = wf_spreader_points(sp),
                     .ntransf = p->ntransf,
                     .set_M = sp->M,
                     .tps = p->ntransf / sp->n_sets,
                     .x = sp->xs[0].ptr,
                     .y = sp->xs[1].ptr,
                     .z = sp->xs[2].ptr,
                     .sort_idx = sp->sort_idx.ptr,
                     .nf1 = p->n_fine[0],
                     .nf2 = p->n_fine[1],
                     .nf3 = p->n_fine[2],
                     .bs1 = p->bin_size[0],
                     .bs2 = p->bin_size[1],
                     .bs3 = p->bin_size[2],
                     .nb1 = p->n_bins[0],
                     .nb2 = p->n_bins[1],
                     .nb3 = p->n_bins[2],
                     .bin_start = b->start.ptr,
                     .bin_count = b->count.ptr,
                     .w_sel = k->w_sel,
                     .w_idx = k->w_idx};
}

/* GM: one thread per point, grid-stride, in sorted order (every set's: kernels/ABI.md, "Point
 * sets"; set_M points and tps transforms per set). */
static warpfft_status launch_gm(const wf_spreader *sp, const si_call *k, CUdeviceptr c,
                                CUdeviceptr grid) {
    si_args a = si_args_of(sp, k);
    void *args[] = {&a.M,       &a.x,        &a.y,    &a.z,  &c,       &a.nf1, &a.nf2,   &a.nf3,
                    &a.ntransf, &a.sort_idx, k->beta, &grid, &a.set_M, &a.tps, &a.w_sel, &a.w_idx};
    return wf_exec_launch(&sp->ex, k->k, a.M, args);
}

/* SM: one block per subproblem (grid-stride), grid.y over a set's transforms, grid.z over the
 * point sets. */
static warpfft_status launch_sm(const wf_spreader *sp, const si_call *k, CUdeviceptr c,
                                CUdeviceptr grid) {
    const wf_params *p = &sp->p;
    si_args a = si_args_of(sp, k);
    const wf_bin_arrays *b = wf_spreader_bin_arrays(sp);
    CUdeviceptr nsub_start = b->nsub_start.ptr, subprob_bin = sp->subprob_bin.ptr;
    /* the count setpts left on the device; the grid covers its upper bound (blocks past the
     * count return at once), so no host read is needed */
    CUdeviceptr n_subprob = sp->result.ptr + offsetof(wf_setpts_result, n_subprob);
    long long maxsub = p->maxsub;
    /* the subproblems of one set: at most its bins plus its points over maxsub */
    int64_t cap = wf_subprob_cap(p->nbins, sp->M, p->maxsub);
    void *args[] = {&a.M,         &a.x,        &a.y,         &a.z,        &c,      &a.nf1,
                    &a.nf2,       &a.nf3,      &a.ntransf,   &a.sort_idx, k->beta, &a.bs1,
                    &a.bs2,       &a.bs3,      &a.nb1,       &a.nb2,      &a.nb3,  &a.bin_start,
                    &a.bin_count, &nsub_start, &subprob_bin, &n_subprob,  &maxsub, &grid,
                    &a.set_M,     &a.tps,      &a.w_sel,     &a.w_idx};
    unsigned gx = cap < (int64_t)WF_GRID_MAX ? (unsigned)cap : WF_GRID_MAX;
    unsigned gy = a.tps < 65535 ? (unsigned)a.tps : 65535u;
    unsigned gz = (unsigned)sp->n_sets; /* <= WF_MAX_SETS (wf_spreader_sets_ok) */
    /* spreading and interpolation take their per-width blocks and shared memory (bins.h: the
     * kernel's width, which may be a candidate below p.width, spreader_width.c) */
    unsigned block =
        (unsigned)(k->dir == 0 ? wf_sm_spread_block(p->dim, p->precision, k->width, p->bin_size)
                               : wf_sm_interp_block(p->dim, p->precision, k->width));
    return wf_launch3(k->k->fn, k->k->name, gx, gy, gz, block,
                      (unsigned)wf_sm_launch_bytes(p, k->dir == 0, k->width), sp->ex.stream, args);
}

/* OD (spreading only): each warp owns a tile of od_tile cells of the grid (row pitch od_pitch),
 * blocks of od_nwarps warps over the tiles (grid-stride), grid.y over transforms; the bins of
 * setpts tell it which points reach its tile (no subproblems). */
static warpfft_status launch_od(const wf_spreader *sp, const si_call *k, CUdeviceptr c,
                                CUdeviceptr grid) {
    const wf_params *p = &sp->p;
    si_args a = si_args_of(sp, k); /* one set (wf_spreader_sets_ok) */
    a.M = sp->M;
    int tl1 = p->od_tile[0], tl2 = p->od_tile[1], tl3 = p->od_tile[2], pitch = p->od_pitch;
    void *args[] = {&a.M,   &a.x,       &a.y,        &a.z,         &c,           &a.nf1, &a.nf2,
                    &a.nf3, &a.ntransf, &a.sort_idx, k->beta,      &a.bs1,       &a.bs2, &a.bs3,
                    &a.nb1, &a.nb2,     &a.nb3,      &a.bin_start, &a.bin_count, &tl1,   &tl2,
                    &tl3,   &pitch,     &grid,       &a.w_sel,     &a.w_idx};
    int64_t tiles = 1;
    for (int d = 0; d < 3; d++)
        tiles *= (p->n_fine[d] + p->od_tile[d] - 1) / p->od_tile[d];
    int64_t blocks = (tiles + p->od_nwarps - 1) / p->od_nwarps;
    unsigned gx = blocks < (int64_t)WF_GRID_MAX ? (unsigned)blocks : WF_GRID_MAX;
    unsigned gy = a.ntransf < 65535 ? (unsigned)a.ntransf : 65535u;
    return wf_launch(k->k->fn, k->k->name, gx, gy, 32u * (unsigned)p->od_nwarps,
                     (unsigned)p->tile_bytes, sp->ex.stream, args);
}

static const si_method si_methods[] = {
    {WARPFFT_METHOD_GM, "gm", 0, 0, 1, launch_gm},
    {WARPFFT_METHOD_SM, "sm", 1, 1, 1, launch_sm},
    {WARPFFT_METHOD_OD, "od", 0, 1, 0, launch_od},
};

/* The row of p's method (wf_params_make never leaves AUTO; an unknown one is a bug, and GM
 * is the method every grid size supports). */
static const si_method *method_of(const wf_params *p) {
    for (size_t i = 0; i < sizeof si_methods / sizeof si_methods[0]; i++)
        if (si_methods[i].method == p->method)
            return &si_methods[i];
    return &si_methods[0];
}

const char *wf_spreader_suffix(const wf_params *p) {
    return method_of(p)->suffix;
}

int wf_spreader_subproblems(const wf_spreader *sp) {
    return method_of(&sp->p)->subproblems;
}

int wf_spreader_stable(const wf_spreader *sp) {
    return sp->p.deterministic && (sp->ops & WF_SI_SPREAD);
}

/* ---------------------------------------------------------------- modules and kernels */

static const char *const op_names[2] = {"spread", "interp"};

void wf_si_names(int dim, int precision, int real, int width, const char *dir, const char *method,
                 char module[WF_SI_NAME_MAX], char entry[WF_SI_NAME_MAX]) {
    const char *ps = wf_si_prec_name(precision, real);
    snprintf(module, WF_SI_NAME_MAX, WF_SI_MODULE_FMT, dim, ps, width, dir, method);
    snprintf(entry, WF_SI_NAME_MAX, WF_SI_ENTRY_FMT, dir, method, dim, ps, width);
}

void wf_spreader_modules(const wf_params *p, int ops, wf_module_set *s) {
    const char *ps = wf_prec_name(p->precision);
    const char *m = method_of(p)->suffix;
    char module[WF_SI_NAME_MAX], entry[WF_SI_NAME_MAX];
    wf_module_set_add(s, "sort");
    wf_module_set_add(s, "bin_%dd_%s", p->dim, ps);
    for (int i = 0; i < 2; i++)
        if (ops & (1 << i)) {
            wf_si_names(p->dim, p->precision, p->real_data, p->width, op_names[i], m, module,
                        entry);
            wf_module_set_add(s, "%s", module);
        }
    if (wf_params_scan_tiles(p) > 0) /* scan_big: only plans that use it */
        wf_module_set_add(s, "scan_big");
    if (p->deterministic && (ops & WF_SI_SPREAD)) /* the stable ranks (wf_spreader_stable) */
        wf_module_set_add(s, "sort_stable");
}

/* The widths a spreader runs, narrowest first (p.width last; spreader_width.c). */
static int n_widths(const wf_spreader *sp) {
    return sp->pw.n_w > 1 ? sp->pw.n_w : 1;
}

static int width_at(const wf_spreader *sp, int i) {
    return sp->pw.n_w > 1 ? sp->pw.width[i] : sp->p.width;
}

void wf_spreader_gm_modules(const wf_spreader *sp, wf_module_set *s) {
    const wf_params *p = &sp->p;
    char module[WF_SI_NAME_MAX], entry[WF_SI_NAME_MAX];
    if (!p->interp_gm_late || !(sp->ops & WF_SI_INTERP))
        return;
    for (int i = 0; i < n_widths(sp); i++) {
        wf_si_names(p->dim, p->precision, p->real_data, width_at(sp, i), "interp", "gm", module,
                    entry);
        wf_module_set_add(s, "%s", module);
    }
}

void wf_spreader_init(wf_spreader *sp, const wf_params *p, const wf_exec *ex, int ops) {
    *sp = (wf_spreader){0};
    sp->p = *p;
    sp->ex = *ex;
    sp->ops = ops;
    sp->n_sets = 1;
    sp->M = -1;
}

/* Module "sort": the one-block bin scan and the NaN pass; a spreader with many bins takes its
 * scan from module "scan_big" (three multi-block kernels) instead; a stable one its ranks from
 * module "sort_stable". */
static warpfft_status load_sort_kernels(wf_spreader *sp) {
    static const char *const big[3] = {"wf_scan_big_reduce", "wf_scan_big_tiles",
                                       "wf_scan_big_down"};
    static const char *const stable[3] = {"wf_stable_hist", "wf_stable_rowscan",
                                          "wf_stable_scatter"};
    warpfft_status st = wf_kernel_load(&sp->ex, "sort", "wf_poison_u32", &sp->k_poison);
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS && wf_spreader_stable(sp); i++)
        st = wf_kernel_load(&sp->ex, "sort_stable", stable[i], &sp->k_stable[i]);
    if (wf_params_scan_tiles(&sp->p) == 0)
        return st == WARPFFT_SUCCESS ? wf_kernel_load(&sp->ex, "sort", "wf_bin_scan", &sp->k_scan)
                                     : st;
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS; i++)
        st = wf_kernel_load(&sp->ex, "scan_big", big[i], &sp->k_scan_big[i]);
    return st;
}

/* Tiles whose dynamic plus static shared memory exceeds the 48 KiB default need the function's
 * dynamic shared memory limit raised; the sum must fit the device's opt-in limit. The bytes are
 * those of the kernel's own width and direction (wf_sm_launch_bytes). */
static warpfft_status set_shared_limit(const wf_spreader *sp, const wf_kernel *k, int dir,
                                       int width) {
    const wf_driver *drv = sp->ex.drv;
    const wf_params *p = &sp->p;
    size_t bytes = wf_sm_launch_bytes(p, dir == 0, width);
    int static_bytes = 0, max_threads = 0;
    CUresult r = drv->cuFuncGetAttribute(&static_bytes, WF_FUNC_ATTR_SHARED_SIZE_BYTES, k->fn);
    if (r != WF_CUDA_SUCCESS)
        return wf_cuda_error(r, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    /* the block the launch will take must be one the compiled kernel can run (its registers):
     * a clear refusal at plan creation rather than a launch failure at execute */
    r = drv->cuFuncGetAttribute(&max_threads, WF_FUNC_ATTR_MAX_THREADS_PER_BLOCK, k->fn);
    if (r != WF_CUDA_SUCCESS)
        return wf_cuda_error(r, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
    int block = p->method != WARPFFT_METHOD_SM ? 0
                : dir == 0 ? wf_sm_spread_block(p->dim, p->precision, width, p->bin_size)
                           : wf_sm_interp_block(p->dim, p->precision, width);
    if (block > max_threads)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: the bins {%d, %d, %d} need blocks of %d threads, the kernel runs at "
                        "most %d on this device; use smaller opts.bin_size or method GM",
                        k->name, (int)p->bin_size[0], (int)p->bin_size[1], (int)p->bin_size[2],
                        block, max_threads);
    if (bytes + (size_t)static_bytes > (size_t)sp->ex.dev->max_shared_optin)
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "%s: tile of %zu bytes + %d bytes of static shared memory exceed the "
                        "device's %d bytes per block (WF_SM_STATIC_RESERVE too small)",
                        k->name, bytes, static_bytes, sp->ex.dev->max_shared_optin);
    if (bytes + (size_t)static_bytes <= WF_SHARED_STATIC_MAX)
        return WARPFFT_SUCCESS;
    r = drv->cuFuncSetAttribute(k->fn, WF_FUNC_ATTR_MAX_DYNAMIC_SHARED, (int)bytes);
    if (r != WF_CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = %zu) on %s",
                 bytes, k->name);
        return wf_cuda_error(r, what);
    }
    return WARPFFT_SUCCESS;
}

warpfft_status wf_spreader_kernels(wf_spreader *sp) {
    const wf_params *p = &sp->p;
    const si_method *m = method_of(p);
    const char *ps = wf_prec_name(p->precision);
    char module[WF_SI_NAME_MAX], name[64];
    snprintf(module, sizeof module, "bin_%dd_%s", p->dim, ps);
    warpfft_status st = load_sort_kernels(sp);
    snprintf(name, sizeof name, "wf_bin_count_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_load(&sp->ex, module, name, &sp->k_bin_count);
    snprintf(name, sizeof name, "wf_bin_scatter_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_load(&sp->ex, module, name, &sp->k_scatter);
    snprintf(name, sizeof name, "wf_sort_unpack_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_load(&sp->ex, module, name, &sp->k_unpack);
    for (int i = 0; i < 2 && st == WARPFFT_SUCCESS; i++) {
        if (!(sp->ops & (1 << i)))
            continue;
        wf_si_names(p->dim, p->precision, p->real_data, p->width, op_names[i], m->suffix, module,
                    name);
        st = wf_kernel_load(&sp->ex, module, name, &sp->k_si[i]);
        if (st == WARPFFT_SUCCESS && m->shared_tile)
            st = set_shared_limit(sp, &sp->k_si[i], i, p->width);
    }
    if (st == WARPFFT_SUCCESS && sp->pw.n_w > 1) /* the narrower widths' (spreader_width.c) */
        st = wf_spreader_width_kernels(sp, m->shared_tile ? set_shared_limit : NULL);
    int late_gm = p->interp_gm_late && (sp->ops & WF_SI_INTERP); /* wf_spreader_gm_modules */
    for (int i = 0; late_gm && i < n_widths(sp) && st == WARPFFT_SUCCESS; i++) {
        wf_si_names(p->dim, p->precision, p->real_data, width_at(sp, i), "interp", "gm", module,
                    name);
        st = wf_kernel_load(&sp->ex, module, name, &sp->k_gm[i]);
    }
    return st;
}

/* ---------------------------------------------------------------- buffers */

warpfft_status wf_bin_arrays_alloc(wf_spreader *sp, wf_bin_arrays *b, int64_t bins) {
    size_t per_bin = (size_t)bins * sizeof(uint64_t), *ws = &sp->workspace;
    size_t tiles = (size_t)wf_scan_tiles(bins);
    warpfft_status st = wf_dbuf_alloc(&b->count, per_bin, "bin counts", ws);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&b->start, per_bin, "bin starts", ws);
    if (st == WARPFFT_SUCCESS && method_of(&sp->p)->subproblems)
        st = wf_dbuf_alloc(&b->nsub_start, per_bin, "subproblem starts", ws);
    if (st == WARPFFT_SUCCESS && tiles > 0)
        st = wf_dbuf_alloc(&b->tile_sums, tiles * 2 * sizeof(uint64_t), "scan tile sums", ws);
    if (st == WARPFFT_SUCCESS)
        b->cap = bins;
    return st;
}

void wf_bin_arrays_free(wf_spreader *sp, wf_bin_arrays *b) {
    wf_dbuf *bufs[] = {&b->count, &b->start, &b->nsub_start, &b->tile_sums};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_dbuf_free(bufs[i], &sp->workspace);
    b->cap = 0;
}

warpfft_status wf_spreader_alloc(wf_spreader *sp, int own_grid) {
    const wf_params *p = &sp->p;
    size_t grid = (size_t)p->fine_prod * (size_t)p->ntransf * wf_value_bytes(p);
    warpfft_status st = WARPFFT_SUCCESS;
    if (own_grid)
        st = wf_dbuf_alloc(&sp->grid, grid, "the fine grid", &sp->workspace);
    if (st == WARPFFT_SUCCESS)
        st = wf_bin_arrays_alloc(sp, &sp->bins, p->nbins); /* one point set's */
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&sp->result, sizeof(wf_setpts_result), "setpts results", &sp->workspace);
    if (st == WARPFFT_SUCCESS && sp->pw.n_w > 1)
        st = wf_spreader_width_alloc(sp);
    return st;
}

void wf_spreader_release(wf_spreader *sp) {
    wf_dbuf *bufs[] = {&sp->grid, &sp->result, &sp->sort_idx, &sp->bin_of, &sp->pos_in_bin,
                       &sp->rec,  &sp->xs[0],  &sp->xs[1],    &sp->xs[2],  &sp->subprob_bin};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_dbuf_free(bufs[i], &sp->workspace);
    wf_bin_arrays_free(sp, &sp->bins);
    wf_bin_arrays_free(sp, &sp->set_bins);
    wf_spreader_width_release(sp);
    sp->point_cap = sp->sub_cap = 0;
    sp->M = -1;
    sp->n_sets = 1;
}

/* ---------------------------------------------------------------- grid work */

/* Spread c -> grid (dir 0) or interp grid -> c (dir 1) by the method's kernel; a spreader of
 * several widths launches each width's, of which all but the one the points took return at
 * once (spreader_width.c). */
static warpfft_status run_si(wf_spreader *sp, int dir, CUdeviceptr c, CUdeviceptr grid) {
    const wf_params *p = &sp->p;
    if (!(sp->ops & (1 << dir)))
        return wf_error(WARPFFT_ERR_INTERNAL, "the spreader was made without its %s kernel",
                        op_names[dir]);
    int n_w = n_widths(sp);
    CUdeviceptr w_sel = n_w > 1 ? sp->result.ptr + offsetof(wf_setpts_result, w_sel) : 0;
    /* GM for these points' interpolation (p.interp_gm_late, chosen at setpts) */
    int gm = dir == 1 && sp->use_gm;
    const si_method *m = gm ? &si_methods[0] : method_of(p);
    warpfft_status st = WARPFFT_SUCCESS;
    for (int i = 0; i < n_w && st == WARPFFT_SUCCESS; i++) {
        double b = n_w > 1 ? sp->pw.beta[i] : p->beta;
        float beta_f = (float)b; /* the kernel's T beta: pass exactly sizeof(T) */
        double beta_d = b;
        const wf_kernel *kern = gm ? &sp->k_gm[i] : wf_spreader_width_kernel(sp, i, dir);
        si_call k = {kern,
                     dir,
                     width_at(sp, i),
                     p->precision == WARPFFT_F64 ? (void *)&beta_d : (void *)&beta_f,
                     w_sel,
                     i};
        st = m->launch(sp, &k, c, grid);
    }
    return st;
}

warpfft_status wf_spreader_spread(wf_spreader *sp, CUdeviceptr c, CUdeviceptr grid,
                                  const char *what) {
    const wf_params *p = &sp->p;
    size_t bytes = (size_t)p->fine_prod * (size_t)p->ntransf * wf_value_bytes(p);
    warpfft_status st = WARPFFT_SUCCESS;
    if (method_of(p)->zero_grid) /* OD writes every cell itself */
        st = wf_exec_memset(&sp->ex, grid, bytes, what);
    return st == WARPFFT_SUCCESS ? run_si(sp, 0, c, grid) : st;
}

warpfft_status wf_spreader_interp(wf_spreader *sp, CUdeviceptr grid, CUdeviceptr c) {
    return run_si(sp, 1, c, grid);
}

/* One small launch; its blocks return at once when the flag is clear. Its grid is one block per
 * SM at most: the error path need not be fast, the common one should cost nothing. */
warpfft_status wf_spreader_poison(const wf_spreader *sp, CUdeviceptr out, int64_t n,
                                  size_t value_bytes) {
    if (sp->p.check_points || sp->trusted || n <= 0)
        return WARPFFT_SUCCESS;
    long long words = (long long)(n * (int64_t)(value_bytes / 4));
    CUdeviceptr flag = sp->result.ptr + offsetof(wf_setpts_result, bad);
    void *args[] = {&words, &flag, &out};
    int64_t blocks = words / WF_BLOCK + (words % WF_BLOCK != 0);
    int64_t cap = sp->ex.dev->n_sm > 0 ? sp->ex.dev->n_sm : 1;
    unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    return wf_launch(sp->k_poison.fn, sp->k_poison.name, grid, 1, WF_BLOCK, 0, sp->ex.stream, args);
}
