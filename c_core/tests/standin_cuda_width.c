/*
 * standin_cuda_width.c — the kernels of the width the points take, in the stand-in driver
 * (standin_cuda.h; kernels/ABI.md, "Module offsets_{d}d_p" and "Widths from the points"):
 * module offsets_{d}d_p's gather and choice computed on the host with kernels/offsets_bound.h
 * (the bound the device evaluates, from the same source), so that a checked setpts reads back
 * the width the host rule gives for the points; and the launches that read the choice (the
 * spreading kernels of every width, the deconvolution/amplification through its factor table)
 * checked: the word and the table inside live allocations, the chosen factors too. Every array
 * bounds-checked; a launch outside the kernels' contract is a violation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "offsets_bound.h"
#include "standin_cuda.h"

/* A device range: its host pointer, or NULL (and a violation) outside one live allocation. */
static void *range(CUdeviceptr p, size_t bytes, const char *what) {
    return standin_check_range(dptr(p), bytes, what) ? dptr(p) : NULL;
}

#define WF_INV_2PI 0.15915494309189533576888376337251436
#define WF_2PI_HI  6.283185307179586232
#define WF_2PI_LO  2.4492935982947064e-16
static double mul_rn(double a, double b) {
    volatile double r = a * b; /* never contracted */
    return r;
}
double sc_fold(double x, int64_t nf) {
    const double n = rint(mul_rn(x, WF_INV_2PI));
    double r = fma(-n, WF_2PI_HI, x);
    r = fma(-n, WF_2PI_LO, r);
    double u = mul_rn(r, WF_INV_2PI);
    u = u - floor(u);
    u = mul_rn(u, (double)nf);
    if (u >= (double)nf)
        u -= (double)nf;
    return u;
}

/* wf_offsets_gather_p(M, dim, x, y, z, nf1, nf2, nf3, set_M, stats, w_sel), grid (gx, n_sets). */
static void gather(int f64, void **args, const sc_geom *g, const char *name) {
    long long M = *(long long *)args[0], set_M = *(long long *)args[8];
    int dim = *(int32_t *)args[1];
    long long nf[3] = {*(long long *)args[5], *(long long *)args[6], *(long long *)args[7]};
    size_t real = f64 ? 8 : 4,
           need =
               (size_t)(dim * WF_OFF_CELLS + wf_off_n_pairs(dim) * WF_OFF_BINS * WF_OFF_BINS) * 4;
    if (g->bx != 256 || g->shared < need)
        sc_named_violation("traps: blocks of other than 256 threads or too little shared memory",
                           name);
    if (set_M <= 0)
        set_M = M;
    long long n_sets = g->gy;
    if (set_M * n_sets != M)
        sc_named_violation("has grid.y other than the point sets", name);
    const void *c[3] = {NULL, NULL, NULL};
    for (int d = 0; d < dim; d++)
        if (!(c[d] = range(*(CUdeviceptr *)args[2 + d], (size_t)M * real, "gather coordinates")))
            return;
    wf_offset_stats *st =
        range(*(CUdeviceptr *)args[9], (size_t)n_sets * sizeof *st, "gather statistics");
    CUdeviceptr w = *(CUdeviceptr *)args[10];
    int32_t *w_sel = w ? range(w, 4, "gather w_sel") : NULL;
    if (!st || (w && !w_sel))
        return;
    if (w_sel)
        *w_sel = 0;
    for (long long j = 0; j < M; j++) {
        wf_offset_stats *s = st + j / set_M;
        double v[3] = {0, 0, 0};
        int finite = 1, cell[3] = {0, 0, 0};
        for (int d = 0; d < dim; d++) {
            v[d] = f64 ? ((const double *)c[d])[j] : ((const float *)c[d])[j];
            finite &= isfinite(v[d]);
        }
        for (int d = 0; d < dim; d++) {
            double u = sc_fold(finite ? v[d] : 0.0, nf[d]);
            cell[d] = wf_offsets_cell(u - floor(u));
            s->cell[d][cell[d]]++;
        }
        for (int P = 0; P < wf_off_n_pairs(dim); P++)
            s->joint[P][cell[wf_off_pair_first(P)] / WF_OFF_CPB * WF_OFF_BINS +
                        cell[wf_off_pair_second(P)] / WF_OFF_CPB]++;
        s->count++;
    }
}

/* wf_offsets_choose_p(n_sets, stats, plan, w_sel, bounds, bin_count, nbins, min_bins). */
static void choose(void **args, const sc_geom *g, const char *name) {
    long long n_sets = *(long long *)args[0];
    if (g->bx != 256)
        sc_named_violation("traps: blocks of other than 256 threads", name);
    const wf_offset_plan *op = range(*(CUdeviceptr *)args[2], WF_OFF_HEAD_BYTES, "choose plan");
    int32_t *w_sel = range(*(CUdeviceptr *)args[3], 4, "choose w_sel");
    if (!op || !w_sel)
        return;
    if (op->n_cand < 1 || op->n_cand > WF_OFF_MAX_CAND || op->dim < 1 || op->dim > 3 ||
        !range(*(CUdeviceptr *)args[2],
               WF_OFF_HEAD_BYTES + (size_t)op->n_tab * sizeof(wf_offset_dim_table),
               "choose tables")) {
        sc_named_violation("reads a plan that is none", name);
        return;
    }
    if (n_sets <= 0) {
        *w_sel = op->n_cand;
        return;
    }
    const wf_offset_stats *st =
        range(*(CUdeviceptr *)args[1], (size_t)n_sets * sizeof *st, "choose statistics");
    CUdeviceptr b = *(CUdeviceptr *)args[4];
    double *bounds = b ? range(b, (size_t)n_sets * WF_OFF_MAX_CAND * 8, "choose bounds") : NULL;
    if (!st || (b && !bounds))
        return;
    CUdeviceptr bc = *(CUdeviceptr *)args[5];
    long long nbins = *(long long *)args[6], min_bins = *(long long *)args[7];
    const uint64_t *bin_count =
        bc ? range(bc, (size_t)n_sets * (size_t)nbins * 8, "choose bin counts") : NULL;
    if (bc && !bin_count)
        return;
    int widest = 0;
    for (long long s = 0; s < n_sets; s++) {
        long long occupied = 0;
        for (long long b = 0; bin_count && min_bins > 1 && b < nbins; b++)
            occupied += bin_count[s * nbins + b] != 0;
        int c = bin_count && min_bins > 1 && occupied < min_bins
                    ? op->n_cand
                    : wf_offb_choose_serial(op, &st[s]);
        widest = c > widest ? c : widest;
        for (int k = 0; bounds && k < op->n_cand; k++)
            bounds[s * WF_OFF_MAX_CAND + k] = wf_offb_bound_serial(op, k, &st[s]);
    }
    if (*w_sel > widest) /* as atomicMax after the gather's 0 */
        widest = *w_sel;
    *w_sel = widest;
}

/* wf_deconvolve_p / wf_amplify_p: the factors they read, fac1..3 or, with w_sel, the chosen
 * width's from the table (N_d/2 + 1 reals per used dim). */
static void factors(int f64, void **args, const char *name) {
    int dim = *(int32_t *)args[0];
    long long N[3] = {*(long long *)args[1], *(long long *)args[2], *(long long *)args[3]};
    CUdeviceptr fac[3] = {*(CUdeviceptr *)args[8], *(CUdeviceptr *)args[9],
                          *(CUdeviceptr *)args[10]};
    CUdeviceptr w = *(CUdeviceptr *)args[14], tab = *(CUdeviceptr *)args[15];
    if (w) {
        const int32_t *w_sel = range(w, 4, "factors w_sel");
        if (!w_sel)
            return;
        if (*w_sel < 0 || *w_sel >= WF_OFF_MAX_CAND + 1) {
            sc_named_violation("reads a width index out of range", name);
            return;
        }
        const uint64_t *t = range(tab + (CUdeviceptr)(24 * *w_sel), 24, "factor table");
        if (!t)
            return;
        for (int d = 0; d < 3; d++)
            fac[d] = (CUdeviceptr)t[d];
    }
    for (int d = 0; d < dim; d++)
        range(fac[d], (size_t)(N[d] / 2 + 1) * (f64 ? 8 : 4), "deconvolution factors");
}

int sc_emulate_width(const char *name, void **args, const sc_geom *g) {
    if (strncmp(name, "wf_offsets_gather_f", 19) == 0) {
        gather(strcmp(name + 19, "64") == 0, args, g, name);
        return 1;
    }
    if (strncmp(name, "wf_offsets_choose_f", 19) == 0) {
        choose(args, g, name);
        return 1;
    }
    if (strncmp(name, "wf_deconvolve_f", 15) == 0 || strncmp(name, "wf_amplify_f", 12) == 0) {
        factors(strstr(name, "f64") != NULL, args, name);
        return 1;
    }
    return 0;
}
