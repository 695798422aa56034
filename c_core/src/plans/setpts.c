/*
 * setpts.c — takes a point set: bins the points (count, scan, scatter of one record per point
 * into sorted order, unpacked into sort_idx and the sorted coordinates that spread/interp read
 * contiguously; ABI.md), and for the SM method splits bins into subproblems. Asynchronous: the
 * subproblem list is sized on the device (the SM kernels are launched for the capacity and read the
 * count there), and a non-finite coordinate sets a device flag that execute turns into NaN outputs
 * and warpfft_setpts_check into WARPFFT_ERR_BAD_POINTS. With opts.check_points, one host sync reads
 * the flag and the totals back (the old behaviour).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan.h"

static warpfft_status check_args(const struct warpfft_plan_s *plan, int precision, int64_t M,
                                 const void *x, const void *y, const void *z) {
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_setpts: plan is NULL");
    if (plan->p.type == 3)
        return wf_error(WARPFFT_ERR_BAD_TYPE, "warpfft_setpts: the plan is type 3; use "
                                              "warpfft_setpts3 (sources and targets)");
    if (precision != plan->p.precision)
        return wf_error(WARPFFT_ERR_PRECISION, "warpfft_setpts: precision = %d but the plan is %s",
                        precision, wf_prec_name(plan->p.precision));
    if (M < 0)
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "warpfft_setpts: M = %lld; must be >= 0",
                        (long long)M);
    if (M > ((int64_t)1 << 56))
        return wf_error(WARPFFT_ERR_BAD_NPOINTS, "warpfft_setpts: M = %lld is too large",
                        (long long)M);
    const char *missing = wf_missing_coord(plan->p.dim, x, y, z);
    if (M > 0 && missing)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_setpts: %s is NULL but the plan is %dD and M = %lld", missing,
                        plan->p.dim, (long long)M);
    return WARPFFT_SUCCESS;
}

/* pos_in_bin holds u32 ranks unless a bin could hold 2^32 points or more. */
static int pos_wide(int64_t M) {
    return M > (int64_t)UINT32_MAX;
}

/* u32 words per record of wf_bin_scatter_p: dim coordinates and the input index (two words
 * when M needs 64 bits), rounded up to 2, 4 or 8 so a record is one aligned vector store. */
static int rec_words(const wf_params *p, int64_t M) {
    int n = p->dim * (int)(p->real_bytes / 4) + (pos_wide(M) ? 2 : 1);
    return n <= 2 ? 2 : n <= 4 ? 4 : 8;
}

/* Per-point arrays for M points; reallocated only when M exceeds the capacity. */
static warpfft_status ensure_capacity(struct warpfft_plan_s *plan, int64_t M) {
    if (M <= plan->point_cap)
        return WARPFFT_SUCCESS;
    wf_plan_free(plan, &plan->sort_idx);
    wf_plan_free(plan, &plan->bin_of);
    wf_plan_free(plan, &plan->pos_in_bin);
    wf_plan_free(plan, &plan->subprob_bin);
    wf_plan_free(plan, &plan->rec);
    for (int d = 0; d < 3; d++)
        wf_plan_free(plan, &plan->xs[d]);
    plan->point_cap = 0;
    size_t m = (size_t)M;
    size_t pos_bytes = pos_wide(M) ? sizeof(uint64_t) : sizeof(uint32_t);
    warpfft_status st = wf_plan_alloc(plan, &plan->sort_idx, m * sizeof(int64_t), "sort_idx");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(plan, &plan->bin_of, m * sizeof(int32_t), "bin_of");
    if (st == WARPFFT_SUCCESS)
        st = wf_plan_alloc(plan, &plan->pos_in_bin, m * pos_bytes, "pos_in_bin");
    if (st == WARPFFT_SUCCESS)
        st =
            wf_plan_alloc(plan, &plan->rec, m * 4 * (size_t)rec_words(&plan->p, M), "sort records");
    static const char *const xs_what[3] = {"sorted x", "sorted y", "sorted z"};
    for (int d = 0; d < plan->p.dim && st == WARPFFT_SUCCESS; d++)
        st = wf_plan_alloc(plan, &plan->xs[d], m * plan->p.real_bytes, xs_what[d]);
    if (st == WARPFFT_SUCCESS && plan->p.method == WARPFFT_METHOD_SM)
        st = wf_plan_alloc(plan, &plan->subprob_bin,
                           (size_t)wf_params_subprob_cap(&plan->p, M) * sizeof(int32_t),
                           "subprob_bin");
    if (st == WARPFFT_SUCCESS)
        plan->point_cap = M;
    return st;
}

/* After a failed setpts: the per-point arrays this call allocated are not kept (they can be
 * most of the device's memory, and the plan has no points to use them for). */
static void release_points(struct warpfft_plan_s *plan) {
    wf_dbuf *bufs[] = {&plan->sort_idx, &plan->bin_of, &plan->pos_in_bin, &plan->subprob_bin,
                       &plan->xs[0],    &plan->xs[1],  &plan->xs[2],      &plan->rec};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_plan_free(plan, bufs[i]);
    plan->point_cap = 0;
}

/* wf_bin_count_p: bin of each point, its rank in the bin, bin sizes. */
static warpfft_status launch_bin_count(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    long long M = plan->M;
    int dim = p->dim, wide = pos_wide(plan->M);
    CUdeviceptr x = plan->x, y = plan->y, z = plan->z;
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    int bs1 = p->bin_size[0], bs2 = p->bin_size[1], bs3 = p->bin_size[2];
    long long nb1 = p->n_bins[0], nb2 = p->n_bins[1], nb3 = p->n_bins[2];
    CUdeviceptr bin_of = plan->bin_of.ptr, pos = plan->pos_in_bin.ptr;
    CUdeviceptr count = plan->bin_count.ptr;
    void *args[] = {&M,   &dim, &x,   &y,   &z,   &nf1,    &nf2, &nf3,  &bs1,
                    &bs2, &bs3, &nb1, &nb2, &nb3, &bin_of, &pos, &wide, &count};
    return wf_plan_launch(plan, &plan->k_bin_count, M, args);
}

/* The bin scans: bin starts, subproblem starts (SM), the totals, the flag cleared. wf_bin_scan
 * (one block) for plans with few bins; else module scan_big's three kernels, one block per tile
 * for the reduce and the rescan, one block for the scan of the tile sums (ABI.md). Grids from
 * nbins alone: nothing is read back. */
static warpfft_status launch_scan(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    int sm = p->method == WARPFFT_METHOD_SM;
    long long n = p->nbins, maxsub = sm ? p->maxsub : 0;
    long long cap = sm ? wf_params_subprob_cap(p, plan->M) : 0;
    CUdeviceptr count = plan->bin_count.ptr, start = plan->bin_start.ptr;
    CUdeviceptr nsub_start = sm ? plan->nsub_start.ptr : 0, result = plan->result.ptr;
    int64_t tiles = wf_params_scan_tiles(p);
    if (tiles == 0) {
        void *args[] = {&n, &count, &start, &maxsub, &nsub_start, &cap, &result};
        return wf_launch(plan->k_scan.fn, plan->k_scan.name, 1, 1, WF_SCAN_BLOCK, 0, plan->stream,
                         args);
    }
    CUdeviceptr sums = plan->tile_sums.ptr;
    void *reduce[] = {&n, &count, &maxsub, &sums};
    void *scan[] = {&n, &sums, &maxsub, &cap, &result};
    void *down[] = {&n, &count, &start, &maxsub, &nsub_start, &sums};
    void **args[3] = {reduce, scan, down};
    warpfft_status st = WARPFFT_SUCCESS;
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS; i++) {
        const wf_kernel *k = &plan->k_scan_big[i];
        st = wf_launch(k->fn, k->name, i == 1 ? 1u : (unsigned)tiles, 1, WF_SCAN_BIG_BLOCK, 0,
                       plan->stream, args[i]);
    }
    return st;
}

/* wf_bin_scatter_p: the record (coordinates, input index) of point j to its sorted position
 * bin_start[bin_of[j]] + pos_in_bin[j] (the non-finite check). */
static warpfft_status launch_scatter(struct warpfft_plan_s *plan) {
    long long M = plan->M;
    int dim = plan->p.dim, wide = pos_wide(plan->M), rw = rec_words(&plan->p, plan->M);
    CUdeviceptr x = plan->x, y = plan->y, z = plan->z;
    CUdeviceptr bin_of = plan->bin_of.ptr, pos = plan->pos_in_bin.ptr;
    CUdeviceptr start = plan->bin_start.ptr, rec = plan->rec.ptr;
    CUdeviceptr bad = plan->result.ptr + offsetof(wf_setpts_result, bad);
    void *args[] = {&M, &dim, &x, &y, &z, &bin_of, &pos, &wide, &start, &rw, &rec, &bad};
    return wf_plan_launch(plan, &plan->k_scatter, M, args);
}

/* wf_sort_unpack_p: the records into sort_idx and xs_d, and for SM the subproblem -> bin list
 * over the device-side count. */
static warpfft_status launch_unpack(struct warpfft_plan_s *plan) {
    const wf_params *p = &plan->p;
    int sm = p->method == WARPFFT_METHOD_SM;
    long long M = plan->M, nbins = p->nbins;
    long long cap = sm ? wf_params_subprob_cap(p, plan->M) : 0;
    int dim = p->dim, wide = pos_wide(plan->M), rw = rec_words(p, plan->M);
    CUdeviceptr rec = plan->rec.ptr, sort_idx = plan->sort_idx.ptr;
    CUdeviceptr xs = plan->xs[0].ptr, ys = plan->xs[1].ptr, zs = plan->xs[2].ptr;
    CUdeviceptr nsub_start = sm ? plan->nsub_start.ptr : 0;
    CUdeviceptr n_subprob = plan->result.ptr + offsetof(wf_setpts_result, n_subprob);
    CUdeviceptr subprob_bin = sm ? plan->subprob_bin.ptr : 0;
    void *args[] = {&M,  &dim, &rec,   &rw,         &wide,      &sort_idx, &xs,
                    &ys, &zs,  &nbins, &nsub_start, &n_subprob, &cap,      &subprob_bin};
    return wf_plan_launch(plan, &plan->k_unpack, M > cap ? M : cap, args);
}

/* The whole binning pipeline on the plan's stream: one memset and four launches (six with
 * module scan_big's scan), sized on the host from M and nbins alone (nothing is read back). */
static warpfft_status enqueue_binning(struct warpfft_plan_s *plan) {
    warpfft_status st =
        wf_plan_memset(plan, plan->bin_count.ptr, plan->bin_count.bytes, "bin counts");
    if (st == WARPFFT_SUCCESS)
        st = launch_bin_count(plan);
    if (st == WARPFFT_SUCCESS)
        st = launch_scan(plan);
    if (st == WARPFFT_SUCCESS)
        st = launch_scatter(plan);
    if (st == WARPFFT_SUCCESS)
        st = launch_unpack(plan);
    return st;
}

/* Copies the result block back (on the stream, then waits for the stream only). */
static warpfft_status fetch_result(struct warpfft_plan_s *plan, const char *who) {
    wf_setpts_result *r = &plan->result_host;
    char what[96];
    snprintf(what, sizeof what, "cuMemcpyDtoHAsync of the setpts results (%s)", who);
    WF_CU(plan->drv->cuMemcpyDtoHAsync(r, plan->result.ptr, sizeof *r, plan->stream), what);
    snprintf(what, sizeof what, "cuStreamSynchronize (%s)", who);
    WF_CU(plan->drv->cuStreamSynchronize(plan->stream), what);
    return WARPFFT_SUCCESS;
}

/* Checks the fetched result block: BAD_POINTS for a non-finite coordinate, INTERNAL when the
 * binning's totals disagree with M (a bug). */
static warpfft_status check_result(const struct warpfft_plan_s *plan, const char *who,
                                   const char *after) {
    const wf_setpts_result *r = &plan->result_host;
    if (r->bad)
        return wf_error(WARPFFT_ERR_BAD_POINTS,
                        "%s: x, y or z holds a NaN or infinite coordinate (M = %lld)%s", who,
                        (long long)plan->M, after);
    int64_t cap = wf_params_subprob_cap(&plan->p, plan->M);
    if (r->n_sorted != (uint64_t)plan->M ||
        (plan->p.method == WARPFFT_METHOD_SM && (r->sub_overflow || r->n_subprob > (uint64_t)cap)))
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "%s: binning counted %llu of %lld points and %s%llu subproblems (at "
                        "most %lld)",
                        who, (unsigned long long)r->n_sorted, (long long)plan->M,
                        r->sub_overflow ? "more than " : "", (unsigned long long)r->n_subprob,
                        (long long)cap);
    return WARPFFT_SUCCESS;
}

static warpfft_status setpts_run(struct warpfft_plan_s *plan, int64_t M, const void *x,
                                 const void *y, const void *z) {
    int dim = plan->p.dim;
    plan->M = M;
    plan->x = wf_dptr(x);
    plan->y = dim >= 2 ? wf_dptr(y) : 0;
    plan->z = dim >= 3 ? wf_dptr(z) : 0;
    if (M == 0)
        return WARPFFT_SUCCESS; /* execute writes zeros (type 1) or nothing (type 2) */
    int grows = M > plan->point_cap;
    warpfft_status st = ensure_capacity(plan, M);
    if (st == WARPFFT_SUCCESS)
        st = enqueue_binning(plan);
    if (st == WARPFFT_SUCCESS && plan->p.check_points) {
        st = fetch_result(plan, "warpfft_setpts");
        if (st == WARPFFT_SUCCESS)
            st = check_result(plan, "warpfft_setpts", "");
    }
    if (st != WARPFFT_SUCCESS && grows)
        release_points(plan);
    return st;
}

WARPFFT_API warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                                          const void *x, const void *y, const void *z) {
    wf_clear_error();
    warpfft_status st = check_args(plan, (int)precision, M, x, y, z);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS) /* nothing changed: the previous points stay usable */
        return st;
    plan->has_points = 0; /* from here on the old point set is being replaced */
    st = setpts_run(plan, M, x, y, z);
    wf_ctx_leave(plan->dev);
    plan->has_points = st == WARPFFT_SUCCESS;
    return st;
}

WARPFFT_API warpfft_status warpfft_setpts_check(warpfft_plan plan) {
    wf_clear_error();
    if (!plan)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_setpts_check: plan is NULL");
    if (!plan->has_points)
        return wf_error(WARPFFT_ERR_NO_POINTS,
                        "warpfft_setpts_check: the plan has no points (its last setpts failed "
                        "or was never made)");
    /* type 3 and checked mode have checked at setpts; M = 0 has nothing to check */
    if (plan->p.type == 3 || plan->p.check_points || plan->M == 0)
        return WARPFFT_SUCCESS;
    warpfft_status st = wf_ctx_enter(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    st = fetch_result(plan, "warpfft_setpts_check");
    wf_ctx_leave(plan->dev);
    if (st != WARPFFT_SUCCESS)
        return st;
    return check_result(plan, "warpfft_setpts_check",
                        " in the last warpfft_setpts; the plan's executes write NaN outputs");
}
