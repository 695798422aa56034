/*
 * offsets.c — the kernel width the given points need: an error bound from statistics of the
 * points' fine-grid offsets, and the narrowest width whose bound meets tol. No GPU; see
 * offsets.h for the data and docs/accuracy.md ("The width the points need") for the numbers.
 *
 * The error. A point at offset delta_d in dim d reaches mode k with the factor
 * prod_d (1 + E_d(k_d, delta_d)) - 1 ~ sum_d E_d (width.c; products of two E are ~tol^2). For
 * mode data of any spectrum with random phases (type 2) the relative l2 error^2 over the M
 * outputs is a mean over the modes, weighted by their energy, of
 *   B(k) = mean_j |sum_d E_d(k_d, delta_jd)|^2,
 * so max_k B(k) bounds it, spread over the modes or all in one; with random strengths (type 1,
 * independent, of one variance) the error^2 is mean_k B(k), below the same maximum. width.c
 * bounds max_k B(k) over every point set; here it is bounded for the points given:
 *   B(k) = sum_d mean_j |E_d|^2 + 2 sum_{d < d'} Re mean_j E_d conj(E_d').
 * Diagonal: mean_j |E_d(k, delta_jd)|^2 <= sum_c hcell_d[c] e2_d(k, c) <= e_d^2, the maximum
 * over the table's rows (hcell the cell fractions, e2 the cells' maxima of |E|^2, one row per
 * mode for the WF_OFF_TOP largest, one for the rest).
 * Cross terms, per pair a = E_d(k, .), b = E_d'(k', .): with abar the bins' means and eta = E -
 * abar(bin) (abar piecewise constant on the 64 bins, eta small where E is smooth),
 *   mean_j a conj(b) = sum_bins H abar conj(bbar) + mean_j eta_a conj(b) + mean_j abar conj(eta_b)
 * (H the joint bins' fractions, h, h' its marginals), and
 *   sum H abar conj(bbar) = (sum_b h abar)(sum_b' h' bbar)^* + sum (H - h h') abar conj(bbar),
 * whose second part is at most sqrt(chi2) ||abar|| ||bbar|| (Cauchy-Schwarz), chi2 = sum (H -
 * h h')^2 / (h h') the pair's dependence (0 for independent offsets, ~63^2 / M for M independent
 * random ones). So
 *   |mean_j a conj(b)| <= P_d P_d' + sqrt(chi2) a_d a_d' + n_d e_d' + a_d n_d',
 * P_d = pbar + sum_b |h[b] - 1/64| amax[b] >= |sum_b h abar| (uniform offsets: ~0), n_d^2 =
 * sum_c hcell[c] eta2[c] >= mean_j |eta|^2, a_d = min(sqrt(sum_b h[b] amax[b]^2), e_d + n_d)
 * >= ||abar||; and never more than e_d e_d' (Cauchy-Schwarz: the whole coherence points on
 * nodes have). Independent uniform offsets make every cross term vanish, which no per-dim
 * statistic can see: Cauchy-Schwarz alone costs sqrt(2) of 2D error and sqrt(3) of 3D (every
 * pair as coherent as on nodes); the joint bins see it up to their resolution (n_d ~
 * 0.07-0.12 e_d): ideally uniform offsets bound at 1.02x width.c's band edge on random offsets
 * in 1D, 1.09-1.15x in 2D, 1.16-1.29x in 3D. The bound holds for every point set given its
 * statistics; what it assumes is what width.c's does: the sampled modes and offsets (maxima
 * over 3 offsets per cell plus the largest step between them) and first order in E, which the
 * same safety factor covers (wf_alias_safety).
 */
#include "params/offsets.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "params/grid.h"
#include "params/kernel.h"
#include "params/memo.h"
#include "params/width.h"
#include "runtime/error.h"

#define WF_OFF_SPC   2                           /* samples per cell (3 with both ends) */
#define WF_OFF_NS    (WF_OFF_CELLS * WF_OFF_SPC) /* offsets sampled, s / NS, s = 0..NS */
#define WF_OFF_EXACT 128 /* up to this many modes, every mode; beyond, a sample */
#define WF_OFF_NEVEN 96  /* ... of this many evenly spaced modes */
#define WF_OFF_EDGE  8   /* ... and the outermost modes at each band edge */
#define WF_OFF_NK    128 /* modes sampled, at most */
/* A candidate's rounding floor (grid.c) may reach this part of tol (cost.c's share) */
#define WF_OFF_FLOOR_SHARE 0.25

_Static_assert(WF_OFF_EXACT <= WF_OFF_NK && WF_OFF_NEVEN + 1 + 2 * WF_OFF_EDGE <= WF_OFF_NK,
               "mode sample");
_Static_assert(WF_OFF_CELLS == WF_OFF_BINS * WF_OFF_CPB && WF_OFF_BINS % 2 == 0, "bins of cells");
_Static_assert(sizeof(wf_offset_stats) == WF_OFF_STATS_WORDS * 8 &&
                   offsetof(wf_offset_stats, joint) == WF_OFF_JOINT_AT * 8,
               "the statistics' layout (offsets_bound.h)");
_Static_assert(offsetof(wf_offset_plan, tabs) == WF_OFF_HEAD_BYTES &&
                   sizeof(wf_offset_plan) == WF_OFF_HEAD_BYTES &&
                   sizeof(wf_offset_dim_table) % 8 == 0,
               "the layout offsets.h promises the device");

/* The modes whose maxima the tables take: every mode up to WF_OFF_EXACT, else WF_OFF_NEVEN + 1
 * evenly spaced ones from -(N/2) to (N-1)/2 and the WF_OFF_EDGE outermost at each edge (the
 * error factor is largest at the band edge and oscillates in k with period ~nf/w: the even
 * sample has >= 7 modes per period). Returns the count. */
static int off_modes(int64_t n, double *kk) {
    int nk = 0;
    int64_t kmin = -(n / 2), kmax = (n - 1) / 2;
    if (n <= WF_OFF_EXACT) {
        for (int64_t k = kmin; k <= kmax; k++)
            kk[nk++] = (double)k;
        return nk;
    }
    for (int i = 0; i <= WF_OFF_NEVEN; i++)
        kk[nk++] = round((double)kmin + (double)(kmax - kmin) * i / WF_OFF_NEVEN);
    for (int i = 1; i <= WF_OFF_EDGE; i++) {
        kk[nk++] = (double)(kmin + i);
        kk[nk++] = (double)(kmax - i);
    }
    return nk;
}

/* Maximum of f over samples s0..s1 plus the largest step between neighbours: a smooth peak
 * between samples is covered. */
static double run_max(const double *f, int s0, int s1) {
    double mx = f[s0], step = 0.0;
    for (int s = s0 + 1; s <= s1; s++) {
        mx = fmax(mx, f[s]);
        step = fmax(step, fabs(f[s] - f[s - 1]));
    }
    return mx + step;
}

/* The host scratch of the tables (~1.3 MB: the heap, not the stack). */
typedef struct off_scratch {
    double er[WF_OFF_NK * (WF_OFF_NS + 1)], ei[WF_OFF_NK * (WF_OFF_NS + 1)]; /* E(k, s / NS) */
    double e2[WF_OFF_NK][WF_OFF_CELLS], ar[WF_OFF_NK][WF_OFF_BINS], ai[WF_OFF_NK][WF_OFF_BINS];
    wf_offset_stats uni;
} off_scratch;

/* One dim's tables for width w (offsets.h). */
static void dim_tables(int64_t n, int64_t nf, int w, double beta, off_scratch *sc,
                       wf_offset_dim_table *tb) {
    enum { NS1 = WF_OFF_NS + 1 };
    double *er = sc->er, *ei = sc->ei, (*e2)[WF_OFF_CELLS] = sc->e2, (*ar)[WF_OFF_BINS] = sc->ar,
           (*ai)[WF_OFF_BINS] = sc->ai;
    double kk[WF_OFF_NK], ph[WF_OFF_NK], t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2];
    int nk = off_modes(n, kk), h = wf_phi_rule(w, beta, wf_quad_nodes(w), t, g);
    for (int i = 0; i < nk; i++) {
        double s = 0.0;
        for (int j = 0; j < h; j++)
            s += g[j] * cos(2.0 * WF_PI * kk[i] / (double)nf * t[j]);
        ph[i] = s;
    }
    wf_alias_factors(nf, w, beta, WF_OFF_NS, nk, kk, ph, NS1, er, ei);
    for (int i = 0; i < nk; i++) { /* E is periodic in delta: the footprint moves by a node */
        er[i * NS1 + WF_OFF_NS] = er[i * NS1];
        ei[i * NS1 + WF_OFF_NS] = ei[i * NS1];
    }
    /* per mode: cell maxima of |E|^2, bin means abar (trapezoid over the bin's samples) */
    double f[NS1], mean[WF_OFF_NK];
    enum { SPB = WF_OFF_NS / WF_OFF_BINS };
    memset(tb, 0, sizeof *tb);
    for (int i = 0; i < nk; i++) {
        const double *r = er + i * NS1, *q = ei + i * NS1;
        for (int s = 0; s < NS1; s++)
            f[s] = r[s] * r[s] + q[s] * q[s];
        double mr = 0.0, mi = 0.0;
        mean[i] = 0.0;
        for (int b = 0; b < WF_OFF_BINS; b++) {
            int s0 = b * SPB, s1 = s0 + SPB;
            for (int cb = 0; cb < WF_OFF_CPB; cb++) {
                int c = b * WF_OFF_CPB + cb;
                e2[i][c] = run_max(f, c * WF_OFF_SPC, (c + 1) * WF_OFF_SPC);
                mean[i] += e2[i][c];
            }
            double sr = 0.5 * (r[s0] + r[s1]), si = 0.5 * (q[s0] + q[s1]);
            for (int s = s0 + 1; s < s1; s++) {
                sr += r[s];
                si += q[s];
            }
            ar[i][b] = sr / SPB;
            ai[i][b] = si / SPB;
            mr += ar[i][b];
            mi += ai[i][b];
            tb->amax[b] = fmax(tb->amax[b], sqrt(ar[i][b] * ar[i][b] + ai[i][b] * ai[i][b]));
        }
        tb->pbar = fmax(tb->pbar, sqrt(mr * mr + mi * mi) / WF_OFF_BINS);
        /* eta = E - abar(bin): cell maxima, the maximum over the modes */
        for (int s = 0; s < NS1; s++) {
            int b = (s == WF_OFF_NS ? WF_OFF_NS - 1 : s) / SPB;
            double dr = r[s] - ar[i][b], di = q[s] - ai[i][b];
            f[s] = dr * dr + di * di;
        }
        for (int c = 0; c < WF_OFF_CELLS; c++) {
            int s0 = c * WF_OFF_SPC, s1 = s0 + WF_OFF_SPC;
            if (s1 % SPB == 0 && s1 < WF_OFF_NS) { /* the cell's last sample opens the next bin */
                int b = c / WF_OFF_CPB;
                double dr = r[s1] - ar[i][b], di = q[s1] - ai[i][b], keep = f[s1];
                f[s1] = dr * dr + di * di;
                tb->eta2[c] = fmax(tb->eta2[c], run_max(f, s0, s1));
                f[s1] = keep;
            } else {
                tb->eta2[c] = fmax(tb->eta2[c], run_max(f, s0, s1));
            }
        }
    }
    /* rows: the WF_OFF_TOP modes of largest mean cell maximum, then the maximum over the rest */
    int used[WF_OFF_NK] = {0};
    int rows = nk < WF_OFF_TOP ? nk : WF_OFF_TOP;
    for (int r = 0; r < rows; r++) {
        int best = -1;
        for (int i = 0; i < nk; i++)
            if (!used[i] && (best < 0 || mean[i] > mean[best]))
                best = i;
        used[best] = 1;
        memcpy(tb->e2[r], e2[best], sizeof tb->e2[r]);
    }
    for (int i = 0; i < nk; i++)
        for (int c = 0; c < WF_OFF_CELLS && !used[i]; c++)
            tb->e2[WF_OFF_TOP][c] = fmax(tb->e2[WF_OFF_TOP][c], e2[i][c]);
}

/* Candidate c = op->n_cand of width w: its dims' tables, appended to op->tabs (a dim whose
 * size and grid repeat the one before shares its table). */
static void cand_make(wf_offset_plan *op, const int64_t n_modes[3], const int64_t nf[3],
                      double sigma, int w, off_scratch *sc) {
    int c = op->n_cand;
    op->width[c] = w;
    for (int d = 0; d < op->dim; d++) {
        if (d > 0 && n_modes[d] == n_modes[d - 1] && nf[d] == nf[d - 1]) {
            op->tab[c][d] = op->tab[c][d - 1];
        } else {
            op->tab[c][d] = op->n_tab;
            dim_tables(n_modes[d], nf[d], w, wf_kernel_beta(w, sigma), sc, &op->tabs[op->n_tab++]);
        }
    }
    op->n_cand++;
}

double wf_offsets_bound(const wf_offset_plan *op, int c, const wf_offset_stats *st) {
    return wf_offb_bound_serial(op, c, st);
}

int wf_offsets_choose(const wf_offset_plan *op, const wf_offset_stats *st) {
    int c = wf_offb_choose_serial(op, st);
    return c < op->n_cand ? op->width[c] : op->w_hi;
}

void wf_offsets_stats_init(wf_offset_stats *st) {
    memset(st, 0, sizeof *st);
}

void wf_offsets_stats_uniform(int dim, uint64_t count, wf_offset_stats *st) {
    wf_offsets_stats_init(st);
    st->count = count;
    for (int d = 0; d < dim; d++)
        for (int c = 0; c < WF_OFF_CELLS; c++)
            st->cell[d][c] = count / WF_OFF_CELLS;
    for (int P = 0; P < wf_off_n_pairs(dim); P++)
        for (int i = 0; i < WF_OFF_BINS * WF_OFF_BINS; i++)
            st->joint[P][i] = count / (WF_OFF_BINS * WF_OFF_BINS);
}

void wf_offsets_stats_expected(int dim, int64_t M, wf_offset_stats *st) {
    enum { B = WF_OFF_BINS };
    uint64_t per = (uint64_t)1 << 24, count = per * B * B; /* per joint bin */
    wf_offsets_stats_uniform(dim, count, st);
    /* a checkerboard of +-chi leaves the marginals uniform and gives sum (H - h h')^2 / (h h') =
     * chi^2 */
    double chi = M > 0 ? (B - 1) / sqrt((double)M) : 1.0;
    uint64_t dev = (uint64_t)fmin(chi * (double)per, (double)per);
    for (int P = 0; P < wf_off_n_pairs(dim); P++)
        for (int i = 0; i < B * B; i++)
            st->joint[P][i] = (i / B + i % B) % 2 ? per - dev : per + dev;
}

void wf_offsets_gather(int dim, const int64_t nf[3], int64_t M, const double *const x[3],
                       wf_offset_stats *st) {
    for (int64_t j = 0; j < M; j++) {
        int bin[3];
        int finite = 1;
        for (int d = 0; d < dim; d++)
            finite &= isfinite(x[d][j]);
        for (int d = 0; d < dim; d++) {
            double u = wf_fold(finite ? x[d][j] : 0.0, nf[d]);
            int c = wf_offsets_cell(u - floor(u));
            st->cell[d][c]++;
            bin[d] = c / WF_OFF_CPB;
        }
        for (int P = 0; P < wf_off_n_pairs(dim); P++)
            st->joint[P][bin[wf_off_pair_first(P)] * WF_OFF_BINS + bin[wf_off_pair_second(P)]]++;
    }
    st->count += (uint64_t)M;
}

size_t wf_offsets_plan_bytes(const wf_offset_plan *op) {
    return sizeof *op + (size_t)op->n_tab * sizeof op->tabs[0];
}

warpfft_status wf_offsets_plan_make(int dim, const int64_t n_modes[3], const int64_t nf[3],
                                    double sigma, int precision, double tol, int w_hi,
                                    wf_offset_plan **out) {
    *out = NULL;
    size_t bytes =
        sizeof(wf_offset_plan) + (size_t)3 * WF_OFF_MAX_CAND * sizeof(wf_offset_dim_table);
    wf_offset_plan *op = calloc(1, bytes);
    off_scratch *sc = NULL;
    if (!op)
        goto oom;
    op->dim = dim;
    op->w_hi = w_hi;
    double safety = wf_alias_safety(dim, tol);
    op->limit2 = (tol / safety) * (tol / safety);
    double fl_hi = wf_tol_floor_of(precision, dim, n_modes, nf, w_hi, wf_kernel_beta(w_hi, sigma));
    double fl_max = fmax(WF_OFF_FLOOR_SHARE * tol, fl_hi);
    /* From the narrowest width that may pass upwards: the first that ideal uniform offsets
     * pass is w_lo, and every width from it to w_hi - 1 whose floor stays within bounds is a
     * candidate (the bound falls with the width). Screened first by width.c's band edge on
     * random offsets, sum_d edge2_d, which the uniform bound is never below. */
    int w0 = w_hi - WF_OFF_MAX_CAND < 2 ? 2 : w_hi - WF_OFF_MAX_CAND;
    for (int w = w0; w < w_hi; w++) {
        double beta = wf_kernel_beta(w, sigma);
        if (wf_tol_floor_of(precision, dim, n_modes, nf, w, beta) > fl_max)
            continue;
        if (op->n_cand == 0) {
            double edge = 0.0;
            wf_alias_dim s = {0, 0, 0, 0, 0};
            for (int d = 0; d < dim; d++) { /* a dim like the one before has its statistics */
                if (d == 0 || n_modes[d] != n_modes[d - 1] || nf[d] != nf[d - 1])
                    wf_alias_dim_stats(n_modes[d], nf[d], w, beta, &s);
                edge += s.edge2;
            }
            if (edge > op->limit2)
                continue;
        }
        if (!sc) {
            sc = malloc(sizeof *sc);
            if (!sc)
                goto oom;
            wf_offsets_stats_uniform(dim, (uint64_t)WF_OFF_CELLS * WF_OFF_BINS * WF_OFF_BINS,
                                     &sc->uni);
        }
        cand_make(op, n_modes, nf, sigma, w, sc);
        if (op->n_cand == 1 && wf_offsets_bound(op, 0, &sc->uni) > op->limit2)
            op->n_cand = op->n_tab = 0; /* not even uniform offsets: not a candidate */
    }
    free(sc);
    wf_offset_plan *fit = realloc(op, wf_offsets_plan_bytes(op)); /* shrinks: cannot fail */
    *out = fit ? fit : op;
    return WARPFFT_SUCCESS;
oom:
    free(op);
    return wf_error(WARPFFT_ERR_OUT_OF_MEMORY,
                    "the width-from-points tables need %zu bytes of host memory",
                    bytes + sizeof *sc);
}

/* ---------------------------------------------------------------- the memo */

/* The tables of the shapes seen: (dim, precision, w_hi, N, nf, sigma, tol) -> the plan (the
 * header alone for a shape without candidates). Plan creation asks twice (cost.c's choice of
 * sigma for random points, the spreader's upload), and a second plan of a shape asks again: one
 * make per shape and process while it stays among the 16 last used. */
#define WF_OFF_KEY_LEN 11
WF_MEMO(off_memo, 16);

warpfft_status wf_offsets_plan_get(int dim, const int64_t n_modes[3], const int64_t nf[3],
                                   double sigma, int precision, double tol, int w_hi,
                                   wf_offset_plan **out) {
    int64_t key[WF_OFF_KEY_LEN] = {dim, precision, w_hi};
    for (int d = 0; d < 3; d++) {
        key[3 + d] = d < dim ? n_modes[d] : 1;
        key[6 + d] = d < dim ? nf[d] : 1;
    }
    memcpy(&key[9], &sigma, sizeof(double));
    memcpy(&key[10], &tol, sizeof(double));
    void *kept = NULL;
    int found = wf_memo_get(&off_memo, key, sizeof key, &kept, NULL);
    *out = kept;
    if (found)
        return found > 0 ? WARPFFT_SUCCESS
                         : wf_error(WARPFFT_ERR_OUT_OF_MEMORY,
                                    "host allocation of the width-from-points tables");
    warpfft_status st = wf_offsets_plan_make(dim, n_modes, nf, sigma, precision, tol, w_hi, out);
    if (st == WARPFFT_SUCCESS)
        wf_memo_put(&off_memo, key, sizeof key, *out, wf_offsets_plan_bytes(*out));
    return st;
}
