/*
 * spreader_width.c — the width the given points take (spreader.h; docs/accuracy.md, "The
 * width the points need"). The width rule (params/width.c) takes p.width for every point set;
 * for the points actually given the error is a mean over their fine-grid offsets, which
 * params/offsets.c bounds from statistics of those offsets, so a narrower width may meet tol.
 *
 * At creation (types 1 and 2 with p.points_width): the offsets plan of the plan's shape (the
 * candidates below p.width and their tables; memoised per process, since making it costs 1-17
 * ms of CPU) is uploaded, and the candidates' spread/interp kernels and module offsets_{d}d_p
 * are loaded. A shape without candidates costs nothing more: no module, buffer or launch.
 * At setpts, after binning, on the stream: the statistics are zeroed and gathered
 * (wf_offsets_gather_p) and one block per point set evaluates the bound of each candidate and
 * writes the width's index to the result block (wf_offsets_choose_p): no host sync. Execute
 * launches every width's kernel; each returns at once unless the index names it, and the
 * deconvolution/amplification reads the factors of that width through a pointer table
 * (kernels/ABI.md, "Widths from the points"). A checked setpts, which waits anyway, reads the
 * index back with the result block.
 *
 * Several point sets: one choice, the widest of the sets' own (each set's statistics are
 * gathered and bounded on their own), so every set meets tol; sets of fewer than
 * WF_PW_MIN_SET_POINTS points take p.width without a gather.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/bins.h"
#include "params/kernel.h"
#include "params/offsets.h"
#include "plans/spreader.h"
#include "runtime/error.h"

/* The gather's shared memory: a u32 counter per cell of each dim and per joint bin of each pair
 * (kernels/offsets.cu). */
static size_t gather_smem(int dim) {
    return (size_t)(dim * WF_OFF_CELLS + wf_off_n_pairs(dim) * WF_OFF_BINS * WF_OFF_BINS) *
           sizeof(uint32_t);
}

/* ---------------------------------------------------------------- creation */

warpfft_status wf_spreader_width_plan(wf_spreader *sp) {
    wf_pwidth *pw = &sp->pw;
    const wf_params *p = &sp->p;
    pw->n_w = 1;
    if (!p->points_width || p->spreadinterponly)
        return WARPFFT_SUCCESS;
    wf_offset_plan *op = NULL;
    warpfft_status st = wf_offsets_plan_get(p->dim, p->n_modes, p->n_fine, p->upsampfac,
                                            p->precision, p->tol, p->width, &op);
    if (st != WARPFFT_SUCCESS)
        return st;
    /* a device whose blocks cannot have the gather's counters (3D: 52 KB) keeps one width, and
     * so does a plan whose bins (fitted to p.width; given through opts.bin_size) a candidate's
     * spreading cannot run with: a register tile's last extent must be within its NR (a 3D
     * f64 w11 plan with bins 8 x 8 x 16 ran its w10 spreading out of bounds on the H100) */
    int runs = 1;
    for (int c = 0; c < op->n_cand; c++)
        runs &= wf_sm_spread_runs(p, op->width[c]);
    if (op->n_cand == 0 || !runs || gather_smem(p->dim) > (size_t)sp->ex.dev->max_shared_optin) {
        free(op);
        return WARPFFT_SUCCESS;
    }
    for (int c = 0; c < op->n_cand; c++) {
        pw->width[c] = op->width[c];
        pw->beta[c] = wf_kernel_beta(op->width[c], p->upsampfac);
    }
    pw->width[op->n_cand] = p->width;
    pw->beta[op->n_cand] = p->beta;
    pw->n_w = op->n_cand + 1;
    pw->host = op;
    pw->plan_bytes = wf_offsets_plan_bytes(op);
    return WARPFFT_SUCCESS;
}

static const char *const dir_names[2] = {"spread", "interp"};

void wf_spreader_width_modules(const wf_spreader *sp, wf_module_set *s) {
    const wf_params *p = &sp->p;
    if (sp->pw.n_w <= 1)
        return;
    char module[WF_SI_NAME_MAX], entry[WF_SI_NAME_MAX];
    wf_module_set_add(s, "offsets_%dd_%s", p->dim, wf_prec_name(p->precision));
    for (int i = 0; i < sp->pw.n_w - 1; i++)
        for (int dir = 0; dir < 2; dir++)
            if (sp->ops & (1 << dir)) {
                wf_si_names(p->dim, p->precision, p->real_data, sp->pw.width[i], dir_names[dir],
                            wf_spreader_suffix(p), module, entry);
                wf_module_set_add(s, "%s", module);
            }
}

warpfft_status wf_spreader_width_alloc(wf_spreader *sp) {
    wf_pwidth *pw = &sp->pw;
    if (pw->n_w <= 1)
        return WARPFFT_SUCCESS;
    size_t bytes = pw->plan_bytes + (size_t)WF_MAX_WIDTHS * 3 * sizeof(uint64_t);
    warpfft_status st = wf_dbuf_alloc(&pw->tables, bytes, "the width tables", &sp->workspace);
    if (st == WARPFFT_SUCCESS && pw->host) {
        /* on the stream the choice reads them on; pageable: staged before the call returns */
        CUresult r =
            sp->ex.drv->cuMemcpyHtoDAsync(pw->tables.ptr, pw->host, pw->plan_bytes, sp->ex.stream);
        if (r != WF_CUDA_SUCCESS)
            st = wf_cuda_error(r, "cuMemcpyHtoDAsync of the width tables");
    }
    if (st == WARPFFT_SUCCESS) {
        free(pw->host);
        pw->host = NULL;
        st = wf_dbuf_alloc(&pw->stats, sizeof(wf_offset_stats), "the offsets' statistics",
                           &sp->workspace);
    }
    if (st == WARPFFT_SUCCESS)
        pw->stats_sets = 1;
    return st;
}

warpfft_status wf_spreader_width_kernels(wf_spreader *sp,
                                         warpfft_status (*set_shared)(const wf_spreader *,
                                                                      const wf_kernel *, int,
                                                                      int)) {
    wf_pwidth *pw = &sp->pw;
    const wf_params *p = &sp->p;
    const char *ps = wf_prec_name(p->precision);
    char module[WF_SI_NAME_MAX], name[WF_SI_NAME_MAX];
    snprintf(module, sizeof module, "offsets_%dd_%s", p->dim, ps);
    snprintf(name, sizeof name, "wf_offsets_gather_%s", ps);
    warpfft_status st = wf_kernel_load(&sp->ex, module, name, &pw->k_gather);
    snprintf(name, sizeof name, "wf_offsets_choose_%s", ps);
    if (st == WARPFFT_SUCCESS)
        st = wf_kernel_load(&sp->ex, module, name, &pw->k_choose);
    size_t smem = gather_smem(p->dim);
    if (st == WARPFFT_SUCCESS && smem > WF_SHARED_STATIC_MAX) {
        CUresult r = sp->ex.drv->cuFuncSetAttribute(pw->k_gather.fn,
                                                    WF_FUNC_ATTR_MAX_DYNAMIC_SHARED, (int)smem);
        if (r != WF_CUDA_SUCCESS)
            st = wf_cuda_error(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) on "
                                  "wf_offsets_gather");
    }
    for (int i = 0; i < pw->n_w - 1 && st == WARPFFT_SUCCESS; i++)
        for (int dir = 0; dir < 2 && st == WARPFFT_SUCCESS; dir++) {
            if (!(sp->ops & (1 << dir)))
                continue;
            wf_si_names(p->dim, p->precision, p->real_data, pw->width[i], dir_names[dir],
                        wf_spreader_suffix(p), module, name);
            st = wf_kernel_load(&sp->ex, module, name, &pw->k_si[i][dir]);
            if (st == WARPFFT_SUCCESS && set_shared)
                st = set_shared(sp, &pw->k_si[i][dir], dir, pw->width[i]);
        }
    return st;
}

const wf_kernel *wf_spreader_width_kernel(const wf_spreader *sp, int i, int dir) {
    return i < sp->pw.n_w - 1 ? &sp->pw.k_si[i][dir] : &sp->k_si[dir];
}

void wf_spreader_width_release(wf_spreader *sp) {
    wf_pwidth *pw = &sp->pw;
    wf_dbuf_free(&pw->tables, &sp->workspace);
    wf_dbuf_free(&pw->stats, &sp->workspace);
    free(pw->host);
    pw->host = NULL;
    pw->stats_sets = 0;
    pw->gathered = 0;
    pw->in_use = 0;
}

/* ---------------------------------------------------------------- setpts */

/* Whether point sets of set_M points each (n_sets of them) get statistics. */
static int gathers(int64_t n_sets, int64_t set_M) {
    return n_sets == 1 || set_M >= WF_PW_MIN_SET_POINTS;
}

warpfft_status wf_spreader_width_stats(wf_spreader *sp, int64_t n_sets, int64_t set_M, int *grew) {
    wf_pwidth *pw = &sp->pw;
    *grew = 0;
    if (pw->n_w <= 1 || !gathers(n_sets, set_M) || n_sets <= pw->stats_sets)
        return WARPFFT_SUCCESS;
    wf_dbuf_free(&pw->stats, &sp->workspace);
    pw->stats_sets = 0;
    *grew = 1;
    warpfft_status st = wf_dbuf_alloc(&pw->stats, (size_t)n_sets * sizeof(wf_offset_stats),
                                      "the offsets' statistics", &sp->workspace);
    if (st == WARPFFT_SUCCESS)
        pw->stats_sets = n_sets;
    return st;
}

/* The bins a point set must occupy to hold WF_OFF_MIN_SAMPLES coarse-grid cells (a bin holds
 * prod_d bin_size_d / sigma of them; offsets_bound.h says why). */
static long long min_bins_of(const wf_params *p) {
    double cells = 1.0;
    for (int d = 0; d < p->dim; d++)
        cells *= (double)p->bin_size[d] / p->upsampfac;
    double bins = ceil((double)WF_OFF_MIN_SAMPLES / (cells > 1e-9 ? cells : 1e-9) - 1e-9);
    return bins > (double)p->nbins ? (long long)p->nbins + 1 : (long long)bins;
}

warpfft_status wf_spreader_width_setpts(wf_spreader *sp) {
    wf_pwidth *pw = &sp->pw;
    const wf_params *p = &sp->p;
    if (pw->n_w <= 1)
        return WARPFFT_SUCCESS;
    long long n_sets = sp->n_sets, set_M = sp->M, M = wf_spreader_points(sp);
    CUdeviceptr w_sel = sp->result.ptr + offsetof(wf_setpts_result, w_sel);
    CUdeviceptr plan = pw->tables.ptr, stats = pw->stats.ptr, bounds = 0;
    warpfft_status st = WARPFFT_SUCCESS;
    pw->gathered = gathers(n_sets, set_M);
    if (pw->gathered) {
        if (pw->stats_sets < n_sets)
            return wf_error(WARPFFT_ERR_INTERNAL, "statistics for %lld of %lld point sets",
                            (long long)pw->stats_sets, n_sets);
        st = wf_exec_memset(&sp->ex, stats, (size_t)n_sets * sizeof(wf_offset_stats),
                            "the offsets' statistics");
        /* about 2 blocks per multiprocessor in all, each flushing its counters once */
        int64_t per_set =
            (2 * (int64_t)(sp->ex.dev->n_sm > 0 ? sp->ex.dev->n_sm : 1) + n_sets - 1) / n_sets;
        int64_t most = (set_M + WF_BLOCK - 1) / WF_BLOCK;
        unsigned gx = (unsigned)(per_set < most ? per_set : most);
        int dim = p->dim;
        CUdeviceptr x = sp->x, y = sp->y, z = sp->z;
        long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
        void *args[] = {&M, &dim, &x, &y, &z, &nf1, &nf2, &nf3, &set_M, &stats, &w_sel};
        if (st == WARPFFT_SUCCESS)
            st = wf_launch(pw->k_gather.fn, pw->k_gather.name, gx > 0 ? gx : 1, (unsigned)n_sets,
                           WF_BLOCK, (unsigned)gather_smem(dim), sp->ex.stream, args);
    }
    long long sets = pw->gathered ? n_sets : 0; /* 0: the choice is p.width */
    /* the bins each set occupies (the binning's counts): a set of fewer independent samples
     * than WF_OFF_MIN_SAMPLES keeps w_hi */
    long long nbins = p->nbins, min_bins = min_bins_of(p);
    CUdeviceptr bin_count = min_bins > 1 ? wf_spreader_bin_arrays(sp)->count.ptr : 0;
    void *cargs[] = {&sets, &stats, &plan, &w_sel, &bounds, &bin_count, &nbins, &min_bins};
    unsigned grid = sets > 0 ? (sets < (long long)WF_GRID_MAX ? (unsigned)sets : WF_GRID_MAX) : 1;
    if (st == WARPFFT_SUCCESS)
        st = wf_launch(pw->k_choose.fn, pw->k_choose.name, grid, 1, WF_BLOCK, 0, sp->ex.stream,
                       cargs);
    return st;
}

warpfft_status wf_spreader_width_read(wf_spreader *sp, const char *who) {
    wf_pwidth *pw = &sp->pw;
    if (pw->n_w <= 1 || sp->M <= 0)
        return WARPFFT_SUCCESS;
    int i = sp->result_host.w_sel;
    if (i < 0 || i >= pw->n_w)
        return wf_error(WARPFFT_ERR_INTERNAL, "%s: the points chose width index %d of %d", who, i,
                        pw->n_w);
    pw->in_use = pw->width[i];
    return WARPFFT_SUCCESS;
}

warpfft_status wf_spreader_width_stats_read(wf_spreader *sp, uint64_t *out, int64_t words) {
    wf_pwidth *pw = &sp->pw;
    int64_t have =
        pw->n_w > 1 && pw->gathered && sp->M > 0 ? sp->n_sets * (int64_t)WF_OFF_STATS_WORDS : 0;
    int64_t n = have < words ? have : words;
    if (words > n)
        memset(out + n, 0, (size_t)(words - n) * sizeof *out);
    if (n <= 0)
        return WARPFFT_SUCCESS;
    WF_CU(sp->ex.drv->cuMemcpyDtoHAsync(out, pw->stats.ptr, (size_t)n * sizeof *out, sp->ex.stream),
          "cuMemcpyDtoHAsync of the offsets' statistics");
    WF_CU(sp->ex.drv->cuStreamSynchronize(sp->ex.stream),
          "cuStreamSynchronize (the offsets' statistics)");
    return WARPFFT_SUCCESS;
}
