/*
 * spreader_points.c — a spreader takes a point set: bins the points (count, scan, scatter of one
 * record per point into sorted order, unpacked into sort_idx and the sorted coordinates that
 * spread/interp read contiguously; ABI.md), and for methods with subproblems (SM) splits bins
 * into them. A deterministic spreader ranks the points inside their bins by input order
 * between the scan and the scatter (module sort_stable), so the sorted order, and every sum
 * spreading forms in it, is the same every run. Asynchronous: the subproblem list is sized on the
 * device (the SM kernels are launched for the capacity and read the count there), and a non-finite
 * coordinate sets a device flag that the NaN pass turns into NaN outputs and wf_spreader_check into
 * WARPFFT_ERR_BAD_POINTS. In checked mode (p.check_points), one host sync reads the flag and the
 * totals back. Point sets (spreader.h): n_sets sets are binned as one set of n_sets * M points
 * over n_sets * nbins bins, into per-bin arrays of their own made here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "params/bins.h"
#include "params/params.h"
#include "plans/spreader.h"
#include "runtime/error.h"

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

/* Module sort_stable (kernels/sort_stable.cu): items per tile, digits per pass. */
#define WF_ST_TILE  2048
#define WF_ST_RADIX 256

/* Tiles of the stable sort's passes. */
static int64_t stable_tiles(int64_t M) {
    return (M + WF_ST_TILE - 1) / WF_ST_TILE;
}

/* Bytes of the stable sort's tile histogram and digit totals (u64 each). */
static size_t stable_hist_bytes(int64_t M) {
    int64_t t = stable_tiles(M);
    return (size_t)WF_ST_RADIX * (size_t)(t > 0 ? t : 1) * 8 + WF_ST_RADIX * 8;
}

/* Radix passes over the bin indices 0 .. nbins - 1: 8 bits each, at least one. */
static int stable_passes(int64_t nbins) {
    int bits = 0;
    for (uint64_t v = nbins > 1 ? (uint64_t)(nbins - 1) : 0; v; v >>= 1)
        bits++;
    return bits <= 8 ? 1 : (bits + 7) / 8;
}

/* The per-point arrays, freed (after a failed setpts they are not kept: they can be most of the
 * device's memory, and there are no points to use them for). */
static void release_points(wf_spreader *sp) {
    wf_dbuf *bufs[] = {&sp->sort_idx, &sp->bin_of, &sp->pos_in_bin, &sp->subprob_bin,
                       &sp->xs[0],    &sp->xs[1],  &sp->xs[2],      &sp->rec};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        wf_dbuf_free(bufs[i], &sp->workspace);
    sp->point_cap = sp->sub_cap = 0;
}

/* Per-point arrays for M points (all sets'), and subprob_bin for sub entries; reallocated only
 * when either exceeds its capacity. */
static warpfft_status ensure_capacity(wf_spreader *sp, int64_t M, int64_t sub) {
    int subs = wf_spreader_subproblems(sp);
    if (M <= sp->point_cap && (!subs || sub <= sp->sub_cap))
        return WARPFFT_SUCCESS;
    release_points(sp);
    size_t m = (size_t)M, *ws = &sp->workspace;
    size_t pos_bytes = pos_wide(M) ? sizeof(uint64_t) : sizeof(uint32_t);
    warpfft_status st = wf_dbuf_alloc(&sp->sort_idx, m * sizeof(int64_t), "sort_idx", ws);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&sp->bin_of, m * sizeof(int32_t), "bin_of", ws);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&sp->pos_in_bin, m * pos_bytes, "pos_in_bin", ws);
    if (st == WARPFFT_SUCCESS)
        st = wf_dbuf_alloc(&sp->rec, m * 4 * (size_t)rec_words(&sp->p, M), "sort records", ws);
    static const char *const xs_what[3] = {"sorted x", "sorted y", "sorted z"};
    for (int d = 0; d < sp->p.dim && st == WARPFFT_SUCCESS; d++) {
        size_t bytes = m * sp->p.real_bytes; /* xs[0]: also the stable sort's histogram */
        if (d == 0 && wf_spreader_stable(sp) && stable_hist_bytes(M) > bytes)
            bytes = stable_hist_bytes(M);
        st = wf_dbuf_alloc(&sp->xs[d], bytes, xs_what[d], ws);
    }
    if (st == WARPFFT_SUCCESS && subs)
        st = wf_dbuf_alloc(&sp->subprob_bin, (size_t)sub * sizeof(int32_t), "subprob_bin", ws);
    if (st == WARPFFT_SUCCESS) {
        sp->point_cap = M;
        sp->sub_cap = subs ? sub : 0;
    }
    return st;
}

/* The per-bin arrays of n_sets > 1 point sets (spreader.h: set_bins), for `bins` bins: made
 * (again) when smaller; *grew says so, so that a failed setpts frees them again. One set uses
 * the creation's. */
static warpfft_status ensure_set_bins(wf_spreader *sp, int64_t bins, int *grew) {
    *grew = 0;
    if (sp->n_sets == 1 || bins <= sp->set_bins.cap)
        return WARPFFT_SUCCESS;
    wf_bin_arrays_free(sp, &sp->set_bins);
    *grew = 1;
    return wf_bin_arrays_alloc(sp, &sp->set_bins, bins);
}

/* The scan kernels the bins need: wf_bin_scan (module sort) up to WF_SCAN_BIG_BINS bins, module
 * scan_big's three beyond. Creation loaded the ones one point set needs; more sets may need the
 * others, loaded here the first time. */
static warpfft_status ensure_scan_kernels(wf_spreader *sp, int64_t bins) {
    static const char *const big[3] = {"wf_scan_big_reduce", "wf_scan_big_tiles",
                                       "wf_scan_big_down"};
    warpfft_status st = WARPFFT_SUCCESS;
    if (wf_scan_tiles(bins) == 0)
        return sp->k_scan.fn ? st : wf_kernel_load(&sp->ex, "sort", "wf_bin_scan", &sp->k_scan);
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS; i++)
        if (!sp->k_scan_big[i].fn)
            st = wf_kernel_load(&sp->ex, "scan_big", big[i], &sp->k_scan_big[i]);
    return st;
}

/* wf_bin_count_p: bin of each point (its set's), its rank in the bin, bin sizes. */
static warpfft_status launch_bin_count(wf_spreader *sp) {
    const wf_params *p = &sp->p;
    long long M = wf_spreader_points(sp), n_sets = sp->n_sets;
    int dim = p->dim, wide = pos_wide(M);
    CUdeviceptr x = sp->x, y = sp->y, z = sp->z;
    long long nf1 = p->n_fine[0], nf2 = p->n_fine[1], nf3 = p->n_fine[2];
    int bs1 = p->bin_size[0], bs2 = p->bin_size[1], bs3 = p->bin_size[2];
    long long nb1 = p->n_bins[0], nb2 = p->n_bins[1], nb3 = p->n_bins[2];
    CUdeviceptr bin_of = sp->bin_of.ptr, pos = sp->pos_in_bin.ptr;
    CUdeviceptr count = wf_spreader_bin_arrays(sp)->count.ptr;
    void *args[] = {&M,   &dim, &x,   &y,   &z,      &nf1, &nf2,  &nf3,   &bs1,   &bs2,
                    &bs3, &nb1, &nb2, &nb3, &bin_of, &pos, &wide, &count, &n_sets};
    return wf_exec_launch(&sp->ex, &sp->k_bin_count, M, args);
}

/* The bin scans: bin starts, subproblem starts (SM), the totals, the flag cleared. wf_bin_scan
 * (one block) for spreaders with few bins; else module scan_big's three kernels, one block per
 * tile for the reduce and the rescan, one block for the scan of the tile sums (ABI.md). Grids
 * from nbins alone: nothing is read back. */
static warpfft_status launch_scan(wf_spreader *sp) {
    const wf_params *p = &sp->p;
    int sub = wf_spreader_subproblems(sp);
    long long n = wf_spreader_bins(sp), maxsub = sub ? p->maxsub : 0;
    long long cap = sub ? wf_subprob_cap(n, wf_spreader_points(sp), p->maxsub) : 0;
    const wf_bin_arrays *b = wf_spreader_bin_arrays(sp);
    CUdeviceptr count = b->count.ptr, start = b->start.ptr;
    CUdeviceptr nsub_start = sub ? b->nsub_start.ptr : 0, result = sp->result.ptr;
    int64_t tiles = wf_scan_tiles(n);
    if (tiles == 0) {
        void *args[] = {&n, &count, &start, &maxsub, &nsub_start, &cap, &result};
        return wf_launch(sp->k_scan.fn, sp->k_scan.name, 1, 1, WF_SCAN_BLOCK, 0, sp->ex.stream,
                         args);
    }
    CUdeviceptr sums = b->tile_sums.ptr;
    void *reduce[] = {&n, &count, &maxsub, &sums};
    void *scan[] = {&n, &sums, &maxsub, &cap, &result};
    void *down[] = {&n, &count, &start, &maxsub, &nsub_start, &sums};
    void **args[3] = {reduce, scan, down};
    warpfft_status st = WARPFFT_SUCCESS;
    for (int i = 0; i < 3 && st == WARPFFT_SUCCESS; i++) {
        const wf_kernel *k = &sp->k_scan_big[i];
        st = wf_launch(k->fn, k->name, i == 1 ? 1u : (unsigned)tiles, 1, WF_SCAN_BIG_BLOCK, 0,
                       sp->ex.stream, args[i]);
    }
    return st;
}

/* Module sort_stable's passes (ABI.md): pos_in_bin becomes each point's rank among the earlier
 * points of its bin, replacing wf_bin_count_p's atomic ranks. An LSD radix sort of bin_of, one
 * pass per 8 bits of the bin index, each a histogram per tile, a scan per digit and a stable
 * scatter; the last pass writes the ranks. Scratch, all of it per-point memory that the scatter
 * and unpack write only after these passes: the keys of the passes between ping-pong in the two
 * halves of sort_idx (i32 each), their values in the two halves of rec (u32, u64 with
 * pos_wide: rec holds at least two of them per point, rec_words >= 2, >= 4 with pos_wide), the
 * histogram and digit totals in xs[0] (sized for them by ensure_capacity). */
static warpfft_status launch_stable(wf_spreader *sp) {
    long long M = wf_spreader_points(sp), ntiles = stable_tiles(M);
    int wide = pos_wide(M), passes = stable_passes(wf_spreader_bins(sp));
    size_t vbytes = wide ? 8 : 4, m = (size_t)M;
    if (sp->sort_idx.bytes < 8 * m || sp->rec.bytes < 2 * vbytes * m ||
        sp->xs[0].bytes < stable_hist_bytes(M))
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "the stable sort's scratch is too small for %lld "
                        "points",
                        M);
    CUdeviceptr keys[2] = {sp->sort_idx.ptr, sp->sort_idx.ptr + 4 * m};
    CUdeviceptr vals[2] = {sp->rec.ptr, sp->rec.ptr + vbytes * m};
    CUdeviceptr hist = sp->xs[0].ptr, total = hist + (size_t)WF_ST_RADIX * (size_t)ntiles * 8;
    CUdeviceptr in_keys = sp->bin_of.ptr, in_vals = 0; /* pass 0: the values are the indices */
    unsigned grid = ntiles < (long long)WF_GRID_MAX ? (unsigned)ntiles : WF_GRID_MAX;
    const wf_kernel *kh = &sp->k_stable[0], *kr = &sp->k_stable[1], *ks = &sp->k_stable[2];
    warpfft_status st = WARPFFT_SUCCESS;
    for (int pass = 0; pass < passes && st == WARPFFT_SUCCESS; pass++) {
        int last = pass == passes - 1, shift = 8 * pass;
        CUdeviceptr out_keys = last ? 0 : keys[pass % 2], out_vals = last ? 0 : vals[pass % 2];
        CUdeviceptr start = last ? wf_spreader_bin_arrays(sp)->start.ptr : 0,
                    pos = last ? sp->pos_in_bin.ptr : 0;
        void *h[] = {&M, &in_keys, &shift, &ntiles, &hist};
        void *r[] = {&ntiles, &hist, &total};
        void *s[] = {&M,     &in_keys,  &in_vals,  &shift, &ntiles, &hist,
                     &total, &out_keys, &out_vals, &wide,  &start,  &pos};
        st = wf_launch(kh->fn, kh->name, grid, 1, WF_ST_RADIX, 0, sp->ex.stream, h);
        if (st == WARPFFT_SUCCESS)
            st = wf_launch(kr->fn, kr->name, WF_ST_RADIX, 1, WF_ST_RADIX, 0, sp->ex.stream, r);
        if (st == WARPFFT_SUCCESS)
            st = wf_launch(ks->fn, ks->name, grid, 1, WF_ST_RADIX, 0, sp->ex.stream, s);
        in_keys = out_keys;
        in_vals = out_vals;
    }
    return st;
}

/* wf_bin_scatter_p: the record (coordinates, input index) of point j to its sorted position
 * bin_start[bin_of[j]] + pos_in_bin[j] (the non-finite check). */
static warpfft_status launch_scatter(wf_spreader *sp) {
    long long M = wf_spreader_points(sp);
    int dim = sp->p.dim, wide = pos_wide(M), rw = rec_words(&sp->p, M);
    CUdeviceptr x = sp->x, y = sp->y, z = sp->z;
    CUdeviceptr bin_of = sp->bin_of.ptr, pos = sp->pos_in_bin.ptr;
    CUdeviceptr start = wf_spreader_bin_arrays(sp)->start.ptr, rec = sp->rec.ptr;
    CUdeviceptr bad = sp->result.ptr + offsetof(wf_setpts_result, bad);
    void *args[] = {&M, &dim, &x, &y, &z, &bin_of, &pos, &wide, &start, &rw, &rec, &bad};
    return wf_exec_launch(&sp->ex, &sp->k_scatter, M, args);
}

/* wf_sort_unpack_p: the records into sort_idx (the index within its set) and xs_d, and for SM
 * the subproblem -> bin list over the device-side count. */
static warpfft_status launch_unpack(wf_spreader *sp) {
    const wf_params *p = &sp->p;
    int sub = wf_spreader_subproblems(sp);
    long long M = wf_spreader_points(sp), nbins = wf_spreader_bins(sp), set_M = sp->M;
    long long cap = sub ? wf_subprob_cap(nbins, M, p->maxsub) : 0;
    int dim = p->dim, wide = pos_wide(M), rw = rec_words(p, M);
    CUdeviceptr rec = sp->rec.ptr, sort_idx = sp->sort_idx.ptr;
    CUdeviceptr xs = sp->xs[0].ptr, ys = sp->xs[1].ptr, zs = sp->xs[2].ptr;
    CUdeviceptr nsub_start = sub ? wf_spreader_bin_arrays(sp)->nsub_start.ptr : 0;
    CUdeviceptr n_subprob = sp->result.ptr + offsetof(wf_setpts_result, n_subprob);
    CUdeviceptr subprob_bin = sub ? sp->subprob_bin.ptr : 0;
    void *args[] = {&M,  &dim,   &rec,        &rw,        &wide, &sort_idx,    &xs,   &ys,
                    &zs, &nbins, &nsub_start, &n_subprob, &cap,  &subprob_bin, &set_M};
    return wf_exec_launch(&sp->ex, &sp->k_unpack, M > cap ? M : cap, args);
}

/* The whole binning pipeline on the stream: one memset and four launches (six with module
 * scan_big's scan; three more per radix pass of the stable ranks), sized on the host from M,
 * n_sets and nbins alone (nothing is read back); then, for a spreader of several widths, the
 * choice of the width (a memset and two launches: spreader_width.c). */
static warpfft_status enqueue_binning(wf_spreader *sp) {
    warpfft_status st =
        wf_exec_memset(&sp->ex, wf_spreader_bin_arrays(sp)->count.ptr,
                       (size_t)wf_spreader_bins(sp) * sizeof(uint64_t), "bin counts");
    if (st == WARPFFT_SUCCESS)
        st = launch_bin_count(sp);
    if (st == WARPFFT_SUCCESS)
        st = launch_scan(sp);
    if (st == WARPFFT_SUCCESS && wf_spreader_stable(sp))
        st = launch_stable(sp);
    if (st == WARPFFT_SUCCESS)
        st = launch_scatter(sp);
    if (st == WARPFFT_SUCCESS)
        st = launch_unpack(sp);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_width_setpts(sp);
    return st;
}

warpfft_status wf_spreader_sets_ok(const wf_params *p, int64_t n_sets, const char *who) {
    if (n_sets < 1 || p->ntransf % n_sets != 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "%s: n_sets = %lld; must be >= 1 and divide ntransf = %lld (each set "
                        "feeds ntransf / n_sets transforms)",
                        who, (long long)n_sets, (long long)p->ntransf);
    if (n_sets > 1 && p->method == WARPFFT_METHOD_OD)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: n_sets = %lld point sets with spreading method OD (the deterministic "
                        "option's, for types 1 and 3): its kernels take one point set (set "
                        "n_sets = 1, or use a plan per set)",
                        who, (long long)n_sets);
    if (n_sets > WF_MAX_SETS)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "%s: n_sets = %lld point sets; at most %d per setpts (split the batch "
                        "into plans of at most that many sets)",
                        who, (long long)n_sets, WF_MAX_SETS);
    if (p->nbins > INT32_MAX / n_sets)
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "%s: n_sets = %lld point sets of %lld spreading bins each are %lld bins; "
                        "the kernels index fewer than 2^31 (use fewer sets per plan, or larger "
                        "opts.bin_size)",
                        who, (long long)n_sets, (long long)p->nbins,
                        (long long)(p->nbins * n_sets));
    return WARPFFT_SUCCESS;
}

int wf_spreader_setpts_fits(const wf_spreader *sp, int64_t n_sets, int64_t M) {
    if (M == 0)
        return 1;
    int64_t points = n_sets * M, bins = sp->p.nbins * n_sets;
    int64_t sub = wf_subprob_cap(bins, points, sp->p.maxsub);
    if (points > sp->point_cap || (wf_spreader_subproblems(sp) && sub > sp->sub_cap))
        return 0; /* ensure_capacity would reallocate */
    if (n_sets > 1 && bins > sp->set_bins.cap)
        return 0;                 /* ensure_set_bins would */
    if (wf_scan_tiles(bins) == 0) /* ensure_scan_kernels would load a module */
        return sp->k_scan.fn != NULL;
    return sp->k_scan_big[0].fn && sp->k_scan_big[1].fn && sp->k_scan_big[2].fn;
}

warpfft_status wf_spreader_setpts(wf_spreader *sp, int64_t n_sets, int64_t M, CUdeviceptr x,
                                  CUdeviceptr y, CUdeviceptr z, const char *who) {
    int dim = sp->p.dim;
    sp->M = M;
    sp->n_sets = n_sets;
    sp->pw.in_use = 0;
    sp->use_gm = wf_late_gm(&sp->p, M); /* no host wait: M alone decides (bins.c) */
    sp->x = x;
    sp->y = dim >= 2 ? y : 0;
    sp->z = dim >= 3 ? z : 0;
    if (M == 0)
        return WARPFFT_SUCCESS; /* nothing to bin: a type 1 writes zeros, a type 2 nothing */
    int64_t points = wf_spreader_points(sp), bins = wf_spreader_bins(sp);
    int64_t sub = wf_subprob_cap(bins, points, sp->p.maxsub);
    int grows = points > sp->point_cap || (wf_spreader_subproblems(sp) && sub > sp->sub_cap);
    int bins_grew = 0, stats_grew = 0;
    warpfft_status st = ensure_capacity(sp, points, sub);
    if (st == WARPFFT_SUCCESS)
        st = ensure_set_bins(sp, bins, &bins_grew);
    if (st == WARPFFT_SUCCESS)
        st = wf_spreader_width_stats(sp, n_sets, M, &stats_grew);
    if (st == WARPFFT_SUCCESS)
        st = ensure_scan_kernels(sp, bins);
    if (st == WARPFFT_SUCCESS)
        st = enqueue_binning(sp);
    if (st == WARPFFT_SUCCESS && sp->p.check_points)
        st = wf_spreader_check(sp, who, "");
    if (st != WARPFFT_SUCCESS && grows)
        release_points(sp);
    if (st != WARPFFT_SUCCESS && bins_grew)
        wf_bin_arrays_free(sp, &sp->set_bins);
    if (st != WARPFFT_SUCCESS && stats_grew) { /* made again by the next setpts that needs it */
        wf_dbuf_free(&sp->pw.stats, &sp->workspace);
        sp->pw.stats_sets = 0;
    }
    return st;
}

/* Copies the result block back (on the stream, then waits for the stream only). */
static warpfft_status fetch_result(wf_spreader *sp, const char *who) {
    wf_setpts_result *r = &sp->result_host;
    char what[96];
    snprintf(what, sizeof what, "cuMemcpyDtoHAsync of the setpts results (%s)", who);
    WF_CU(sp->ex.drv->cuMemcpyDtoHAsync(r, sp->result.ptr, sizeof *r, sp->ex.stream), what);
    snprintf(what, sizeof what, "cuStreamSynchronize (%s)", who);
    WF_CU(sp->ex.drv->cuStreamSynchronize(sp->ex.stream), what);
    return WARPFFT_SUCCESS;
}

warpfft_status wf_spreader_check(wf_spreader *sp, const char *who, const char *after) {
    warpfft_status st = fetch_result(sp, who);
    if (st != WARPFFT_SUCCESS)
        return st;
    const wf_setpts_result *r = &sp->result_host;
    int64_t points = wf_spreader_points(sp);
    if (r->bad)
        return wf_error(WARPFFT_ERR_BAD_POINTS,
                        "%s: x, y or z holds a NaN or infinite coordinate (M = %lld%s)%s", who,
                        (long long)sp->M, sp->n_sets > 1 ? " in one of the point sets" : "", after);
    int64_t cap = wf_subprob_cap(wf_spreader_bins(sp), points, sp->p.maxsub);
    if (r->n_sorted != (uint64_t)points ||
        (wf_spreader_subproblems(sp) && (r->sub_overflow || r->n_subprob > (uint64_t)cap)))
        return wf_error(WARPFFT_ERR_INTERNAL,
                        "%s: binning counted %llu of %lld points and %s%llu subproblems (at "
                        "most %lld)",
                        who, (unsigned long long)r->n_sorted, (long long)points,
                        r->sub_overflow ? "more than " : "", (unsigned long long)r->n_subprob,
                        (long long)cap);
    return wf_spreader_width_read(sp, who); /* the width the points took, now known here */
}
