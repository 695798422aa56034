/*
 * spreader.h — the spreader: one object that owns everything between non-uniform points and a
 * uniform grid, used by every plan — types 1 and 2 on their fine grid, spread/interp-only plans
 * on the caller's fk, type 3 on its own spreading grid:
 *   spreader.c         create (its modules, kernels, per-bin arrays, optionally its own grid),
 *                      spread / interp by the method's kernels, the NaN pass, release;
 *   spreader_points.c  setpts: binning a point set (count, scan, the stable ranks of
 *                      deterministic spreaders, scatter into sorted order, unpack; the SM
 *                      method's subproblems), asynchronously, and the check of the totals it
 *                      leaves on the device.
 *   spreader_width.c   the width the given points take (docs/accuracy.md, "The width the
 *                      points need"): a spreader whose every-point-set width p.width has
 *                      narrower candidates uploads their tables, gathers the statistics of
 *                      each point set's offsets at setpts and chooses the width on the device
 *                      (module offsets_{d}d_p), and runs every width's kernel, of which all but
 *                      the chosen return at once (kernels/ABI.md, "Widths from the points").
 * Nothing here knows transforms, cuFFT or the public API. Every function but the module list
 * runs in the device's context, made current by the caller; all work goes on ex's stream.
 *
 * Room to grow: the spreading method is data (wf_params.method selects a row of spreader.c's
 * method table: module suffix, whether it splits bins into subproblems, whether it needs the
 * grid zeroed, its launch), so another method is another row.
 *
 * Point sets (batched points, kernels/ABI.md "Point sets"): a setpts may bring n_sets sets of M
 * points each, set s feeding the ntransf / n_sets transforms s*tps ..; the spreader then bins all
 * n_sets * M points at once over n_sets * nbins bins (set-major, so each set's points and
 * subproblems stay contiguous) and spreads or interpolates every set in one launch. The per-bin
 * arrays, sized for one set at creation, grow at the first setpts that needs more (and the
 * multi-block scan's kernels load then, when the bins first exceed WF_SCAN_BIG_BINS). OD's
 * kernels take one set: a plan spreading by OD takes n_sets = 1 only (wf_spreader_sets_ok).
 *
 * Deterministic spreading (p.deterministic, a spreader that spreads: wf_spreader_stable): the
 * method is OD, whose sums run in the sorted order, and setpts makes that order the same every
 * run by ranking the points inside their bins by input order (module sort_stable) instead of
 * by atomics. Its scratch is per-point memory that setpts writes only after it: keys in
 * sort_idx, values in rec, the tile histogram in xs[0] (sized for it); nothing more is held.
 */
#ifndef WARPFFT_PLANS_SPREADER_H
#define WARPFFT_PLANS_SPREADER_H

#include <stddef.h>
#include <stdint.h>

#include "params/base.h"
#include "params/offsets.h"
#include "plans/launch.h"
#include "runtime/memory.h"

/* The directions a spreader can run (bits of wf_spreader.ops): a plan loads only the kernels
 * of the ones it uses. */
enum { WF_SI_SPREAD = 1, WF_SI_INTERP = 2 };

#define WF_SCAN_BLOCK 512 /* wf_bin_scan: exactly one block of this many threads */
/* Point sets per setpts: the SM kernels run set z as gridDim.z = z (kernels/ABI.md). */
#define WF_MAX_SETS 65535

/* The device block setpts leaves its totals in (written by wf_bin_scan, the flag set by
 * wf_bin_scatter_p); read back only in checked mode and by wf_spreader_check. The SM kernels take
 * the address of n_subprob as their subproblem count. */
typedef struct wf_setpts_result {
    uint64_t n_sorted;    /* total of the bin counts (= M) */
    uint64_t n_subprob;   /* number of subproblems (SM), clamped to wf_params_subprob_cap */
    int32_t bad;          /* a NaN/inf coordinate */
    int32_t sub_overflow; /* the unclamped number exceeded the cap (a bug) */
    int32_t w_sel;        /* the width the points took: its index in wf_pwidth.width (written by
                             wf_offsets_choose_p; never written for a spreader of one width) */
    int32_t reserved;
} wf_setpts_result;

/* Widths a spreader may run with: the candidates below p.width, then p.width. */
#define WF_MAX_WIDTHS (WF_OFF_MAX_CAND + 1)
/* Point sets of a setpts with several sets get statistics (one each) when they hold at least
 * this many points: below, a set's statistics (104 KB) would outweigh its points' arrays, and
 * (2D, 3D) their dependence term makes the bound about that of points on nodes anyway; such a
 * setpts runs p.width. */
#define WF_PW_MIN_SET_POINTS 4096

/* The width the given points take (spreader_width.c). n_w = 1 (no candidates, or points_width
 * off): p.width, and nothing below is made, loaded or launched. */
typedef struct wf_pwidth {
    int n_w;                    /* widths: the candidates, narrowest first, then p.width */
    int width[WF_MAX_WIDTHS];   /* width[n_w - 1] = p.width */
    double beta[WF_MAX_WIDTHS]; /* wf_kernel_beta(width, p.upsampfac) */
    wf_offset_plan *host;       /* the tables until wf_spreader_width_alloc uploads them */
    size_t plan_bytes;          /* wf_offsets_plan_bytes of the tables */
    wf_kernel k_si[WF_MAX_WIDTHS - 1][2]; /* the candidates' spread [0] / interp [1] kernels */
    wf_kernel k_gather, k_choose;         /* module offsets_{d}d_p */
    wf_dbuf tables;     /* the tables, then WF_MAX_WIDTHS * 3 u64: the deconvolution factors of
                           width i, dim d at [3 i + d] (types 1 and 2 write them: nufft12.c) */
    wf_dbuf stats;      /* wf_offset_stats per point set */
    int64_t stats_sets; /* point sets `stats` holds */
    int gathered;       /* the last setpts gathered statistics (else it chose p.width) */
    int in_use;         /* the current points' width, once read back; 0 while unknown */
} wf_pwidth;

/* Per-bin arrays of setpts: counts and starts (u64 per bin), the subproblem starts (methods with
 * subproblems), and the multi-block scan's tile sums (u64 x 2 per tile; none at most
 * WF_SCAN_BIG_BINS bins). */
typedef struct wf_bin_arrays {
    wf_dbuf count, start, nsub_start, tile_sums;
    int64_t cap; /* bins they hold; 0: none allocated */
} wf_bin_arrays;

typedef struct wf_spreader {
    wf_params p; /* the grid (n_fine), kernel (width, beta), bins, method, ntransf, precision,
                    check_points; the rest of a plan's parameters is not read */
    wf_exec ex;
    int ops;          /* WF_SI_* directions loaded */
    int trusted;      /* the points are known finite (type 3 checked them): no NaN pass */
    size_t workspace; /* device bytes of every buffer below */

    /* kernels */
    wf_kernel k_bin_count, k_scan; /* k_scan: wf_bin_scan, for spreaders without tile sums */
    wf_kernel k_scan_big[3];       /* wf_scan_big_reduce, _tiles, _down (module scan_big) */
    wf_kernel k_scatter;           /* wf_bin_scatter_p: one record per point into sorted order */
    wf_kernel k_unpack;    /* wf_sort_unpack_p: records -> arrays (and the subproblem list) */
    wf_kernel k_poison;    /* wf_poison_u32: NaN outputs for a non-finite point set */
    wf_kernel k_stable[3]; /* wf_stable_hist, _rowscan, _scatter (module sort_stable; stable
                              spreaders only) */
    wf_kernel k_si[2];     /* [0]: spread, [1]: interp (those in ops), of width p.width */
    wf_pwidth pw;          /* the width the points take (its candidates' kernels, tables) */
    wf_kernel k_gm[WF_MAX_WIDTHS]; /* p.interp_gm_late: GM interpolation of each width, indexed
                                      as pw.width (n_w 1: [0] is p.width's) */
    int use_gm;                    /* the current points interpolate by GM (wf_late_gm) */

    /* allocated at creation */
    wf_dbuf grid;       /* its own grid (wf_spreader_alloc with own_grid), else empty */
    wf_bin_arrays bins; /* one point set's bins (nbins) */
    wf_dbuf result;     /* wf_setpts_result */
    /* several point sets' bins (n_sets * nbins): made by the first setpts with that many, freed
     * again if it fails, kept for later ones */
    wf_bin_arrays set_bins;

    /* per point set, grown by setpts (sizes for all n_sets * M points) */
    wf_dbuf sort_idx, bin_of, pos_in_bin; /* i64, i32, u32 (u64 for M >= 2^32) per point */
    wf_dbuf rec;         /* the scatter's records, u32 words per point (spreader_points.c) */
    wf_dbuf xs[3];       /* the coordinates in sorted order, T per point per used dim (xs[0] at
                            least the stable sort's histogram: spreader_points.c) */
    wf_dbuf subprob_bin; /* i32, bins + ceil(points / maxsub) (methods with subproblems) */
    int64_t point_cap;   /* points the per-point arrays hold */
    int64_t sub_cap;     /* entries subprob_bin holds */

    /* the current point sets */
    int64_t M;                    /* points per set (-1: none yet) */
    int64_t n_sets;               /* sets, each feeding ntransf / n_sets transforms (1) */
    CUdeviceptr x, y, z;          /* the caller's coordinates (binning reads them) */
    wf_setpts_result result_host; /* target of the device-to-host copy of `result` */
} wf_spreader;

/* Every point of the current point sets (n_sets * M; 0 before a setpts) and the bins they are
 * sorted into (n_sets * nbins). */
static inline int64_t wf_spreader_points(const wf_spreader *sp) {
    return sp->M > 0 ? sp->M * sp->n_sets : 0;
}
static inline int64_t wf_spreader_bins(const wf_spreader *sp) {
    return sp->p.nbins * sp->n_sets;
}
/* The per-bin arrays of the current point sets. */
static inline const wf_bin_arrays *wf_spreader_bin_arrays(const wf_spreader *sp) {
    return sp->n_sets > 1 ? &sp->set_bins : &sp->bins;
}

/* ---- spreader.c ---- */

/* The module and entry point of a spreading or interpolation kernel (kernels/module_names.h, the
 * names the build gives them): dimension, precision, real (1: the real-valued module, precision
 * string f32r / f64r), width, dir "spread" or "interp", method "gm", "sm" or "od". */
#define WF_SI_NAME_MAX 48
void wf_si_names(int dim, int precision, int real, int width, const char *dir, const char *method,
                 char module[WF_SI_NAME_MAX], char entry[WF_SI_NAME_MAX]);
/* Adds the modules a spreader with parameters p and directions ops launches from to s: "sort",
 * "bin_{d}d_p", one si module per direction (wf_si_names), "scan_big" for many bins,
 * "sort_stable" for deterministic spreading. No GPU. */
void wf_spreader_modules(const wf_params *p, int ops, wf_module_set *s);
/* Sets sp up for parameters p on ex, directions ops (no GPU work, nothing to release yet). */
void wf_spreader_init(wf_spreader *sp, const wf_params *p, const wf_exec *ex, int ops);
/* The per-bin arrays and the result block, after its own grid (fine_prod * ntransf values) when
 * own_grid. On failure what it made stays for wf_spreader_release. */
warpfft_status wf_spreader_alloc(wf_spreader *sp, int own_grid);
/* The kernel handles (its modules loaded) and the SM kernel's shared-memory limit. */
warpfft_status wf_spreader_kernels(wf_spreader *sp);
/* Frees every buffer (any stage of a partial build); sp may be set up again. */
void wf_spreader_release(wf_spreader *sp);
/* The module and kernel suffix of p's method: "gm", "sm" or "od". */
const char *wf_spreader_suffix(const wf_params *p);
/* Whether sp's method splits bins into subproblems (SM: the subproblem arrays and scan). */
int wf_spreader_subproblems(const wf_spreader *sp);
/* Per-bin arrays for `bins` bins into b (empty before; on failure what was made stays for
 * wf_bin_arrays_free), and their release (any stage). */
warpfft_status wf_bin_arrays_alloc(wf_spreader *sp, wf_bin_arrays *b, int64_t bins);
void wf_bin_arrays_free(wf_spreader *sp, wf_bin_arrays *b);
/* Whether sp's setpts ranks points stably (deterministic, and sp spreads). */
int wf_spreader_stable(const wf_spreader *sp);

/* Spreads the strengths c (ntransf * M) onto grid (fine_prod * ntransf values: complex, or real
 * with p.real_data; `what` names it in messages), zeroing it first unless the method writes
 * every cell (OD). */
warpfft_status wf_spreader_spread(wf_spreader *sp, CUdeviceptr c, CUdeviceptr grid,
                                  const char *what);
/* Interpolates grid at the points into c (ntransf * M). */
warpfft_status wf_spreader_interp(wf_spreader *sp, CUdeviceptr grid, CUdeviceptr c);
/* The NaN pass of an unchecked point set: n values of value_bytes each (a multiple of 4: real
 * or complex) at out become NaN on the device when setpts flagged a non-finite coordinate.
 * Nothing for checked or trusted points. */
warpfft_status wf_spreader_poison(const wf_spreader *sp, CUdeviceptr out, int64_t n,
                                  size_t value_bytes);

/* ---- spreader_width.c ---- */

/* Whether sp (p.points_width on) may run narrower widths than p.width: the offsets plan of its
 * shape (memoised per process, so a second plan of a shape does not compute it again), the
 * candidates into sp->pw (n_w = 1 when there are none, or when the device cannot give the
 * gather its shared memory). Host only: plan creation calls it after starting the module
 * loads. WARPFFT_ERR_OUT_OF_MEMORY when host memory runs out. */
warpfft_status wf_spreader_width_plan(wf_spreader *sp);
/* Adds the modules of the candidates (their spread/interp modules for sp's directions, and
 * offsets_{d}d_p) to s; nothing for n_w = 1. */
void wf_spreader_width_modules(const wf_spreader *sp, wf_module_set *s);
/* p.interp_gm_late: the GM interpolation modules of every width sp may run (after
 * wf_spreader_width_plan); nothing otherwise. */
void wf_spreader_gm_modules(const wf_spreader *sp, wf_module_set *s);
/* The device tables (uploaded on sp's stream) and one point set's statistics; nothing for
 * n_w = 1. On failure what it made stays for wf_spreader_release. */
warpfft_status wf_spreader_width_alloc(wf_spreader *sp);
/* The candidates' kernels (their shared-memory limits set by set_shared), the gather's and the
 * choice's. */
warpfft_status wf_spreader_width_kernels(wf_spreader *sp,
                                         warpfft_status (*set_shared)(const wf_spreader *,
                                                                      const wf_kernel *, int, int));
/* Statistics for n_sets point sets (grown when fewer; *grew says so); none needed when the sets
 * are too small to be gathered. */
warpfft_status wf_spreader_width_stats(wf_spreader *sp, int64_t n_sets, int64_t set_M, int *grew);
/* The choice for the current point sets on the stream (after binning): zero the statistics,
 * gather, choose; or only the choice of p.width for sets too small. Nothing for n_w = 1. */
warpfft_status wf_spreader_width_setpts(wf_spreader *sp);
/* After the result block was read back (wf_spreader_check): pw.in_use from its w_sel.
 * WARPFFT_ERR_INTERNAL for an index out of range (a bug). */
warpfft_status wf_spreader_width_read(wf_spreader *sp, const char *who);
/* Copies the statistics of the current point sets (n_sets * WF_OFF_STATS_WORDS u64, at most
 * `words`) to host memory `out` (one copy, one wait); zeros where they were not gathered. */
warpfft_status wf_spreader_width_stats_read(wf_spreader *sp, uint64_t *out, int64_t words);
/* Frees the tables, the statistics and a host copy not yet uploaded. */
void wf_spreader_width_release(wf_spreader *sp);
/* The width index and kernel of direction dir to launch i-th (i < pw.n_w). */
const wf_kernel *wf_spreader_width_kernel(const wf_spreader *sp, int i, int dir);

/* ---- spreader_points.c ---- */

/* Bins n_sets sets of M points each (the coordinates x, y, z on the device, set after set:
 * n_sets * M values each; unused dims 0) on the stream, without a host sync; per-point arrays
 * grow when the points exceed what they hold, and what this call grew of them is freed again
 * if it fails; the per-bin arrays grow for n_sets * nbins bins. The caller has checked n_sets:
 * it divides ntransf, n_sets <= WF_MAX_SETS and n_sets * nbins < 2^31 (wf_spreader_sets_ok).
 * M = 0: nothing to bin. With p.check_points, then checks as wf_spreader_check does, naming
 * `who`. */
warpfft_status wf_spreader_setpts(wf_spreader *sp, int64_t n_sets, int64_t M, CUdeviceptr x,
                                  CUdeviceptr y, CUdeviceptr z, const char *who);
/* Whether wf_spreader_setpts of n_sets sets of M points would run in what sp holds: no per-point
 * or per-bin array to grow, no scan module to load (a setpts captured into a CUDA graph, or
 * one on a plan such a graph holds, must neither allocate nor free). No GPU. */
int wf_spreader_setpts_fits(const wf_spreader *sp, int64_t n_sets, int64_t M);
/* Whether a spreader with parameters p can take n_sets point sets (a divisor of ntransf, at
 * most WF_MAX_SETS, fewer than 2^31 bins in all, n_sets = 1 for method OD); else the error, naming
 * `who`. No GPU. */
warpfft_status wf_spreader_sets_ok(const wf_params *p, int64_t n_sets, const char *who);
/* Reads the totals of the last setpts back (one copy, one wait on the stream) and checks them:
 * BAD_POINTS for a non-finite coordinate (message: `who`, then `after`), INTERNAL when they
 * disagree with M (a bug). */
warpfft_status wf_spreader_check(wf_spreader *sp, const char *who, const char *after);

#endif /* WARPFFT_PLANS_SPREADER_H */
