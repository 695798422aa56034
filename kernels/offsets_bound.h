/*
 * offsets_bound.h — the width the given points need, defined once for the host and the device:
 * the statistics of the points' fine-grid offsets, the tables a plan uploads, and the error
 * bound they give per candidate width (c_core/src/params/offsets.c derives it; docs/accuracy.md,
 * "The width the points need", has the numbers). Plain C, static inline, like kernel_shape.h:
 * the C core includes it (params/offsets.h: the tables, the host's serial evaluation), the
 * kernels (offsets.cu: the gather and the one-block choice, under nvcc and NVRTC), the CPU
 * emulator (kernels/test/emu) and the stand-in driver of the fault tests.
 *
 * The bound is assembled from pieces both sides call: the bins' fractions of one dim, the
 * per-dim terms from its sums, a pair's dependence term and its cross term. The host sums in
 * index order (wf_offb_bound_serial); the device forms the same sums with a block's tree
 * reduction (offsets.cu), so the two agree to rounding (~1e-15 relative) and differ in the
 * choice only where a bound equals the limit to rounding. Both are deterministic.
 *
 * Layout (fixed, 8-byte aligned; the device reads the host's bytes as they are):
 *   wf_offset_stats   WF_OFF_STATS_WORDS u64: count, cell[3][256], joint[3][64*64];
 *   wf_offset_plan    an 80-byte header, then n_tab tables of 53,768 bytes (wf_offset_dim_table).
 */
#ifndef WF_OFFSETS_BOUND_H
#define WF_OFFSETS_BOUND_H

#if defined(__CUDACC__)
#define WF_OFFB_FN static __device__ __forceinline__
typedef int wf_off_i32;
typedef unsigned long long wf_off_u64;
#else
#define WF_OFFB_FN static inline
#if !defined(__cplusplus) /* C++ includers (the emulator) bring <cmath> and <cstdint> first */
#include <math.h>
#include <stdint.h>
#endif
typedef int32_t wf_off_i32;
typedef uint64_t wf_off_u64;
#endif

#define WF_OFF_CELLS    256 /* offset cells per dim: floor(delta * 256), exact in binary */
#define WF_OFF_BINS     64  /* bins per dim (4 cells each) for the joint histograms and tables */
#define WF_OFF_CPB      4   /* cells per bin */
#define WF_OFF_TOP      24  /* modes with their own row in a table; the rest share one row */
#define WF_OFF_MAX_CAND 3   /* candidate widths below w_hi, at most */
#define WF_OFF_PAIRS    3   /* pairs of dims (0, 1), (0, 2), (1, 2) */
/* Independent samples a point set must hold before its width follows its offsets: the bound is
 * the mean over the points of |E_k(delta_j)|^2, the error's expectation over random strengths
 * (modes); the error of points within a few coarse-grid cells of each other is one draw of few
 * independent terms and can exceed its mean (a cluster of 1e6 points of width 1e-3 in 3D f32
 * type 2 at tol 1e-5: the narrower width 6 measured 1.25e-5 on the H100, 2026-12-06). Counted
 * at the binning's resolution: occupied bins times the coarse-grid cells of a bin (bin extents
 * over sigma); a set below keeps w_hi (the host passes the bins it takes: wf_offsets_choose_p's
 * min_bins). */
#define WF_OFF_MIN_SAMPLES 256
/* u64 words of one point set's statistics, and where its parts start */
#define WF_OFF_STATS_WORDS (1 + 3 * WF_OFF_CELLS + WF_OFF_PAIRS * WF_OFF_BINS * WF_OFF_BINS)
#define WF_OFF_CELL_AT     1
#define WF_OFF_JOINT_AT    (1 + 3 * WF_OFF_CELLS)
#define WF_OFF_HEAD_BYTES  80 /* the plan's header; its tables follow */

/* A point set's offsets: delta_d = u_d - floor(u_d), u_d = wf_fold(x_d, nf_d) the fine-grid
 * coordinate (as every kernel computes it), cell c_d = floor(delta_d * WF_OFF_CELLS) and bin
 * c_d / WF_OFF_CPB. Counts, so that blocks can add theirs:
 *   count            points;
 *   cell[d][c]       points whose offset in dim d lies in cell c;
 *   joint[P][b b']   points in bin b of dim d and bin b' of dim d' (index b * WF_OFF_BINS + b')
 *                    for the pair P of dims (d, d') = (0, 1), (0, 2), (1, 2).
 * Unused dims and pairs stay 0. */
typedef struct wf_offset_stats {
    wf_off_u64 count;
    wf_off_u64 cell[3][WF_OFF_CELLS];
    wf_off_u64 joint[WF_OFF_PAIRS][WF_OFF_BINS * WF_OFF_BINS];
} wf_offset_stats;

/* One dim's tables for one width (E(k, delta) the error factor of mode k at offset delta,
 * width.c; abar(k, b) its mean over bin b, eta = E - abar(k, bin)):
 *   e2[i][c]   max over the offsets of cell c of |E|^2, row i < WF_OFF_TOP for one of the modes
 *              where it is largest, row WF_OFF_TOP the maximum over all the other modes;
 *   eta2[c]    max over the modes and the offsets of cell c of |eta|^2;
 *   amax[b]    max over the modes of |abar(k, b)|;
 *   pbar       max over the modes of |mean_b abar(k, b)| (~0: E has no mean over offsets). */
typedef struct wf_offset_dim_table {
    double e2[WF_OFF_TOP + 1][WF_OFF_CELLS];
    double eta2[WF_OFF_CELLS];
    double amax[WF_OFF_BINS];
    double pbar;
} wf_offset_dim_table;

/* What a plan uploads, one allocation (wf_offsets_plan_bytes): the candidates, narrowest first,
 * and their dims' tables (a cube's dims share one), WF_OFF_HEAD_BYTES after the start. A
 * candidate passes when its bound is <= limit2; the choice is the first that passes, else w_hi.
 * C sees the tables as tabs[]; C++ (no flexible arrays) through wf_off_tab, as C may too. */
typedef struct wf_offset_plan {
    wf_off_i32 dim, n_cand, w_hi, n_tab;
    double limit2;                      /* (tol / safety)^2, the width rule's factor */
    wf_off_i32 width[WF_OFF_MAX_CAND];  /* candidate c's width */
    wf_off_i32 tab[WF_OFF_MAX_CAND][3]; /* index in tabs[] of candidate c's table of dim d */
    wf_off_i32 reserved[2];             /* 0: the tables start at byte WF_OFF_HEAD_BYTES */
#if !defined(__cplusplus)
    wf_offset_dim_table tabs[]; /* n_tab tables */
#endif
} wf_offset_plan;

/* Table i of plan op. */
WF_OFFB_FN const wf_offset_dim_table *wf_off_tab(const wf_offset_plan *op, int i) {
    return (const wf_offset_dim_table *)((const char *)op + WF_OFF_HEAD_BYTES) + i;
}

/* The cell of an offset delta in [0, 1) (the device's gather computes the same). */
WF_OFFB_FN int wf_offsets_cell(double delta) {
    int c = (int)(delta * WF_OFF_CELLS);
    return c < WF_OFF_CELLS ? c : WF_OFF_CELLS - 1;
}

/* Pairs of dims: P = 0, 1, 2 is (0, 1), (0, 2), (1, 2); pairs in dim: 0, 1, 3. */
WF_OFFB_FN int wf_off_pair_first(int P) {
    return P == 2 ? 1 : 0;
}
WF_OFFB_FN int wf_off_pair_second(int P) {
    return P == 0 ? 1 : 2;
}
WF_OFFB_FN int wf_off_n_pairs(int dim) {
    return dim == 3 ? 3 : dim - 1;
}

/* ---- the bound's pieces (offsets.c says what each bounds) ---------------------------------- */

/* The fraction of the points in bin b of a dim whose cell counts are cell[] (inv = 1 / count):
 * the bin's integer count, exact, then one product. */
WF_OFFB_FN double wf_offb_bin_fraction(const wf_off_u64 *cell, int b, double inv) {
    wf_off_u64 s = 0;
    for (int q = 0; q < WF_OFF_CPB; q++)
        s += cell[b * WF_OFF_CPB + q];
    return (double)s * inv;
}

/* One dim's terms: e = sqrt(max_r mean e2 row), n = sqrt(mean eta2), a = min(sqrt(sum_b h
 * amax^2), e + n), p = pbar + sum_b |h - 1/64| amax (the bins' distance from uniform). */
typedef struct wf_offb_dim {
    double e2, e, n, a, p;
} wf_offb_dim;

/* The terms from the dim's sums: e2max = max over the table's rows of sum_c cell[c] e2[r][c]
 * times inv, sn = sum_c cell[c] eta2[c] (not yet times inv), hb its bins' fractions. The sums
 * over the 64 bins run in index order on both sides (the device's one thread does them). */
WF_OFFB_FN wf_offb_dim wf_offb_dim_terms(const wf_offset_dim_table *t, const double *hb,
                                         double e2max, double sn, double inv) {
    double pd = t->pbar, sa = 0.0;
    for (int b = 0; b < WF_OFF_BINS; b++) {
        pd += fabs(hb[b] - 1.0 / WF_OFF_BINS) * t->amax[b];
        sa += hb[b] * t->amax[b] * t->amax[b];
    }
    wf_offb_dim r;
    r.e2 = e2max;
    r.e = sqrt(e2max);
    r.n = sqrt(sn * inv);
    r.a = fmin(sqrt(sa), r.e + r.n);
    r.p = pd;
    return r;
}

/* One joint bin's part of a pair's dependence: H^2 / (h h') for its count c (0 for c = 0). */
WF_OFFB_FN double wf_offb_chi2_term(wf_off_u64 c, double inv, double h, double h2) {
    if (!c)
        return 0.0;
    double H = (double)c * inv;
    return H * H / (h * h2);
}
/* The dependence chi2 = sum (H - h h')^2 / (h h') = sum H^2 / (h h') - 1 from that sum. */
WF_OFFB_FN double wf_offb_chi2(double sum) {
    return fmax(sum - 1.0, 0.0);
}

/* A pair's cross term of the bound: 2 min(e e', P P' + sqrt(chi2) a a' + n e' + a n'). */
WF_OFFB_FN double wf_offb_pair(wf_offb_dim d, wf_offb_dim d2, double chi2) {
    double x = d.p * d2.p + sqrt(chi2) * d.a * d2.a + d.n * d2.e + d.a * d2.n;
    return 2.0 * fmin(d.e * d2.e, x);
}

/* ---- the host's evaluation: every sum in index order ------------------------------------- */
#if !defined(__CUDACC__)

/* A pair's dependence from the statistics (h, h2 the pair's dims' bin fractions). */
static inline double wf_offb_chi2_serial(const wf_offset_stats *st, int P, const double *h,
                                         const double *h2, double inv) {
    double s = 0.0;
    for (int b = 0; b < WF_OFF_BINS; b++)
        for (int b2 = 0; b2 < WF_OFF_BINS; b2++)
            s += wf_offb_chi2_term(st->joint[P][b * WF_OFF_BINS + b2], inv, h[b], h2[b2]);
    return wf_offb_chi2(s);
}

/* Candidate c's (0 <= c < n_cand) bound on the relative l2 error squared (no safety factor);
 * count 0 gives 0. */
static inline double wf_offb_bound_serial(const wf_offset_plan *op, int c,
                                          const wf_offset_stats *st) {
    if (st->count == 0)
        return 0.0;
    double inv = 1.0 / (double)st->count, hb[3][WF_OFF_BINS], bound = 0.0;
    wf_offb_dim t[3];
    for (int d = 0; d < op->dim; d++) {
        const wf_offset_dim_table *tb = wf_off_tab(op, op->tab[c][d]);
        double sn = 0.0, e2 = 0.0;
        for (int q = 0; q < WF_OFF_CELLS; q++)
            sn += (double)st->cell[d][q] * tb->eta2[q];
        for (int b = 0; b < WF_OFF_BINS; b++)
            hb[d][b] = wf_offb_bin_fraction(st->cell[d], b, inv);
        for (int r = 0; r <= WF_OFF_TOP; r++) {
            double s = 0.0;
            for (int q = 0; q < WF_OFF_CELLS; q++)
                s += (double)st->cell[d][q] * tb->e2[r][q];
            e2 = fmax(e2, s * inv);
        }
        t[d] = wf_offb_dim_terms(tb, hb[d], e2, sn, inv);
        bound += t[d].e2;
    }
    for (int P = 0; P < wf_off_n_pairs(op->dim); P++) {
        int d = wf_off_pair_first(P), d2 = wf_off_pair_second(P);
        bound += wf_offb_pair(t[d], t[d2], wf_offb_chi2_serial(st, P, hb[d], hb[d2], inv));
    }
    return bound;
}

/* The index of the chosen width: the first candidate whose bound is <= limit2, else n_cand
 * (w_hi; also for count 0). */
static inline int wf_offb_choose_serial(const wf_offset_plan *op, const wf_offset_stats *st) {
    if (st->count == 0)
        return op->n_cand;
    for (int c = 0; c < op->n_cand; c++)
        if (wf_offb_bound_serial(op, c, st) <= op->limit2)
            return c;
    return op->n_cand;
}
#endif /* !__CUDACC__ */

#endif /* WF_OFFSETS_BOUND_H */
