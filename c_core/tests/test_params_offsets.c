/*
 * test_params_offsets.c — the width the given points need (offsets.c): the statistics gathered
 * from points, the bound from them against the first-order error computed directly from every
 * point (every point set, small and suite-B sizes), the choice (never wider than the every-
 * point-set rule, narrower for random points, today's width on and near grid nodes, the same
 * for type 1 and type 2), and the chosen width through the emulated type 1 and type 2
 * pipelines (test_params_emulate.c) on uniform, normal, radial, clustered, on-node, half-node
 * and near-lattice points.
 */
#include "test_params.h"

#include "params/offsets.h"

/* ------------------------------------------------------------------ helpers */

/* Tables whose last candidate is width w (a tol that every width passes: the candidates are
 * w - 2 .. w), on the grid nf. */
static wf_offset_plan *tables_for(int dim, const int64_t N[3], const int64_t nf[3], double sigma,
                                  int w) {
    wf_offset_plan *op = NULL;
    if (wf_offsets_plan_make(dim, N, nf, sigma, WARPFFT_F64, 0.5, w + 1, &op) != 0)
        return NULL;
    if (!CHECK(op->n_cand >= 1 && op->width[op->n_cand - 1] == w, "tables for w %d", w)) {
        free(op);
        return NULL;
    }
    return op;
}

static wf_offset_stats *stats_of(int dim, const int64_t nf[3], const pts *p) {
    wf_offset_stats *st = malloc(sizeof *st);
    wf_offsets_stats_init(st);
    wf_offsets_gather(dim, nf, p->M, (const double *const *)p->x, st);
    return st;
}

/* sqrt(sum_d edge2_d): the band edge on ideally uniform offsets (width.c), what no bound for
 * random points can go below. */
static double ideal_uniform(int dim, const int64_t N[3], const int64_t nf[3], double sigma, int w) {
    double e = 0.0;
    for (int d = 0; d < dim; d++) {
        wf_alias_dim s;
        wf_alias_dim_stats(N[d], nf[d], w, wf_kernel_beta(w, sigma), &s);
        e += s.edge2;
    }
    return sqrt(e);
}

/* ------------------------------------------------------------------ tests */

/* The gather: every point counted once per dim and pair, in the cell of its folded offset;
 * the joint histograms' marginals are the cells' bins; folding takes far points to the same
 * cells as the device's wf_fold. */
void test_offsets_gather(void) {
    int64_t N[3] = {20, 24, 16}, nf[3] = {48, 50, 40};
    pts p = pts_new(SET_UNIFORM, 3, N, nf, 5000);
    for (int j = 0; j < 100; j++) /* a few far points */
        p.x[j % 3][j] += 2 * PI * (double)(j * 37 - 1800);
    wf_offset_stats *st = stats_of(3, nf, &p), ref;
    wf_offsets_stats_init(&ref);
    int bad = 0;
    for (int j = 0; j < p.M; j++) {
        int b[3];
        for (int d = 0; d < 3; d++) {
            double u = wf_fold(p.x[d][j], nf[d]);
            int c = (int)floor((u - floor(u)) * WF_OFF_CELLS);
            bad += c < 0 || c >= WF_OFF_CELLS;
            c = c < 0 ? 0 : c >= WF_OFF_CELLS ? WF_OFF_CELLS - 1 : c;
            ref.cell[d][c]++;
            b[d] = c * WF_OFF_BINS / WF_OFF_CELLS;
        }
        ref.joint[0][b[0] * WF_OFF_BINS + b[1]]++;
        ref.joint[1][b[0] * WF_OFF_BINS + b[2]]++;
        ref.joint[2][b[1] * WF_OFF_BINS + b[2]]++;
    }
    ref.count = (uint64_t)p.M;
    CHECK(!bad && memcmp(&ref, st, sizeof ref) == 0, "gathered statistics");
    for (int P = 0; P < 3; P++) {
        static const int pd[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        uint64_t rows[WF_OFF_BINS] = {0}, total = 0, cells[WF_OFF_BINS] = {0};
        for (int i = 0; i < WF_OFF_BINS * WF_OFF_BINS; i++) {
            rows[i / WF_OFF_BINS] += st->joint[P][i];
            total += st->joint[P][i];
        }
        for (int c = 0; c < WF_OFF_CELLS; c++)
            cells[c * WF_OFF_BINS / WF_OFF_CELLS] += st->cell[pd[P][0]][c];
        CHECK(total == st->count && memcmp(rows, cells, sizeof rows) == 0, "pair %d marginals", P);
    }
    /* adding in two parts is adding at once (blocks add theirs) */
    wf_offset_stats *two = malloc(sizeof *two);
    wf_offsets_stats_init(two);
    const double *half[3] = {p.x[0] + 2000, p.x[1] + 2000, p.x[2] + 2000};
    wf_offsets_gather(3, nf, 2000, (const double *const *)p.x, two);
    wf_offsets_gather(3, nf, p.M - 2000, half, two);
    CHECK(memcmp(two, st, sizeof *st) == 0, "gathered in parts");
    /* an offset a rounding below 1 stays in the last cell */
    CHECK(wf_offsets_cell(nextafter(1.0, 0.0)) == WF_OFF_CELLS - 1 && wf_offsets_cell(0.0) == 0 &&
              wf_offsets_cell(0.5) == WF_OFF_CELLS / 2,
          "cells");
    free(two);
    free(st);
    pts_free(&p);
}

/* The bound against the first-order error computed from every point for every mode (small
 * problems) or the band-edge and random modes (suite B's sizes): never below it, for every
 * point set; on ideally uniform offsets within 1.3x of width.c's band edge on random offsets. */
static void bound_case(int dim, const int64_t N[3], double sigma, int w, int M, int every_mode) {
    /* suite B's sizes: the sets that differ (normal, same, one-offset: as uniform, nodes) */
    static const int few[] = {SET_UNIFORM, SET_RADIAL, SET_CLUSTERED, SET_HALF, SET_LATTICE};
    int64_t nf[3] = {1, 1, 1};
    for (int d = 0; d < dim; d++)
        nf[d] = wf_fine_size(N[d], sigma, w + 1);
    wf_offset_plan *op = tables_for(dim, N, nf, sigma, w);
    if (!op)
        return;
    int c = op->n_cand - 1;
    double beta = wf_kernel_beta(w, sigma), ratio[N_SETS] = {0};
    for (int ki = 0; ki < (every_mode ? N_SETS : 5); ki++) {
        int kind = every_mode ? ki : few[ki];
        pts p = pts_new(kind, dim, N, nf, M);
        wf_offset_stats *st = stats_of(dim, nf, &p);
        double *ks[3], kb[3];
        int nk[3];
        if (every_mode)
            pts_all_modes(dim, N, ks, nk);
        else
            pts_some_modes(dim, N, ks, nk);
        double direct = pts_direct_max(dim, nf, w, beta, &p, ks, nk, kb);
        double bound = wf_offsets_bound(op, c, st);
        ratio[kind] = sqrt(bound / direct);
        CHECK(direct <= bound * (1 + 1e-9),
              "%dD N %lld sigma %g w %d %s: direct %.4g above the bound %.4g (mode %g %g %g)", dim,
              (long long)N[0], sigma, w, pts_set_name[kind], sqrt(direct), sqrt(bound), kb[0],
              kb[1], kb[2]);
        pts_free_modes(ks);
        free(st);
        pts_free(&p);
    }
    wf_offset_stats *uni = malloc(sizeof *uni);
    wf_offsets_stats_uniform(dim, (uint64_t)1 << 20, uni);
    double ideal = ideal_uniform(dim, N, nf, sigma, w), ub = sqrt(wf_offsets_bound(op, c, uni));
    CHECK(ub >= 0.97 * ideal && ub <= 1.3 * ideal,
          "%dD N %lld sigma %g w %d: uniform bound %.4g, ideal %.4g", dim, (long long)N[0], sigma,
          w, ub, ideal);
    printf("%dD N %lld sigma %g w %d M %d: bound/direct (error)", dim, (long long)N[0], sigma, w,
           M);
    for (int kind = 0; kind < N_SETS; kind++)
        if (ratio[kind] > 0)
            printf(" %s %.2f", pts_set_name[kind], ratio[kind]);
    printf("; ideally uniform: bound/width.c's band edge %.3f\n", ub / ideal);
    free(uni);
    free(op);
}

void test_offsets_bound(void) {
    static const struct {
        int dim;
        int64_t N[3];
        double sigma;
        int w, M, every;
    } c[] = {{1, {48, 1, 1}, 2.0, 6, 3000, 1},         {1, {33, 1, 1}, 1.25, 9, 3000, 1},
             {2, {16, 18, 1}, 2.0, 6, 3000, 1},        {2, {14, 12, 1}, 1.5, 10, 2000, 1},
             {3, {10, 12, 8}, 2.0, 6, 1500, 1},        {3, {10, 10, 10}, 2.31, 7, 1500, 1},
             {3, {8, 8, 8}, 2.0, 11, 800, 1},          {1, {1000000, 1, 1}, 2.2644, 6, 10000, 0},
             {2, {1024, 1024, 1}, 2.264, 6, 10000, 0}, {3, {128, 128, 128}, 2.31, 6, 10000, 0},
             {3, {128, 128, 128}, 2.0, 7, 10000, 0},   {3, {256, 256, 256}, 1.514, 9, 10000, 0},
             {2, {1024, 1024, 1}, 2.243, 10, 10000, 0}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        bound_case(c[i].dim, c[i].N, c[i].sigma, c[i].w, c[i].M, c[i].every);
}

/* Statistics of count points all at one offset delta in every dim. */
static void stats_at(int dim, double delta, uint64_t count, wf_offset_stats *st) {
    wf_offsets_stats_init(st);
    st->count = count;
    int c = wf_offsets_cell(delta), b = c * WF_OFF_BINS / WF_OFF_CELLS;
    for (int d = 0; d < dim; d++)
        st->cell[d][c] = count;
    for (int P = 0; P < (dim == 3 ? 3 : dim - 1); P++)
        st->joint[P][b * WF_OFF_BINS + b] = count;
}

/* The choice never goes wider than the every-point-set width w_hi; at these shapes points at a
 * width's footprint edge (grid nodes for even widths, half-way for odd ones) or within 1e-3 of a
 * cell of it never get that width (but may get one of the other parity, whose footprint centre
 * they are); without points, w_hi. Random
 * points get a narrower one where the plan's sigma leaves room (the sigma a choice for random
 * points would take: docs/accuracy.md). The same tables for type 1 and type 2. */
void test_offsets_choice(void) {
    static const struct {
        int dim, precision;
        int64_t N[3];
        double tol, sigma;
        int M;
    } c[] = {
        /* suite B's shapes at the sigma a choice for random points takes (docs/accuracy.md) */
        {1, WARPFFT_F32, {1000000, 1, 1}, 1e-5, 2.2, 200000},
        {2, WARPFFT_F32, {1024, 1024, 1}, 1e-5, 2.3, 200000},
        {3, WARPFFT_F32, {128, 128, 128}, 1e-5, 2.45, 400000},
        {3, WARPFFT_F64, {128, 128, 128}, 1e-9, 2.45, 400000},
        {3, WARPFFT_F64, {256, 256, 256}, 1e-6, 1.6, 400000},
    };
    static const int kinds[] = {SET_UNIFORM,   SET_NORMAL, SET_RADIAL,
                                SET_CLUSTERED, SET_NODES,  SET_LATTICE};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int dim = c[i].dim, wmax = wf_max_width(c[i].precision);
        int w_hi = wf_kernel_width(dim, c[i].N, c[i].tol, c[i].sigma, wmax);
        int64_t nf[3] = {1, 1, 1};
        for (int d = 0; d < dim; d++)
            nf[d] = wf_fine_size(c[i].N[d], c[i].sigma, w_hi);
        wf_offset_plan *op = NULL;
        if (!CHECK(wf_offsets_plan_make(dim, c[i].N, nf, c[i].sigma, c[i].precision, c[i].tol, w_hi,
                                        &op) == 0))
            continue;
        CHECK(wf_offsets_plan_bytes(op) ==
                  sizeof *op + (size_t)op->n_tab * sizeof(wf_offset_dim_table),
              "plan bytes");
        CHECK(op->n_cand >= 1 && op->width[0] < w_hi, "%dD sigma %g tol %g: no candidate below %d",
              dim, c[i].sigma, c[i].tol, w_hi);
        printf("%dD N %lld %s tol %g sigma %g: every point set w %d, candidates", dim,
               (long long)c[i].N[0], wf_prec_name(c[i].precision), c[i].tol, c[i].sigma, w_hi);
        for (int k = 0; k < op->n_cand; k++)
            printf(" %d", op->width[k]);
        printf(";");
        wf_offset_stats *st = malloc(sizeof *st);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            pts p = pts_new(kinds[k], dim, c[i].N, nf, c[i].M);
            wf_offsets_stats_init(st);
            wf_offsets_gather(dim, nf, p.M, (const double *const *)p.x, st);
            int w = wf_offsets_choose(op, st);
            double b = w < w_hi ? sqrt(wf_offsets_bound(op, w - op->width[0], st)) : 0.0;
            if (kinds[k] == SET_UNIFORM) { /* what a choice of sigma for M points can assume */
                wf_offset_stats *ex = malloc(sizeof *ex);
                wf_offsets_stats_expected(dim, c[i].M, ex);
                double be = sqrt(wf_offsets_bound(op, 0, ex)),
                       bu = sqrt(wf_offsets_bound(op, 0, st));
                CHECK(fabs(be / bu - 1) < 0.03, "expected %.4g, uniform %.4g", be, bu);
                free(ex);
            }
            printf(" %s w %d (bound %.2g)", pts_set_name[kinds[k]], w, b);
            if (kinds[k] == SET_NODES || kinds[k] == SET_LATTICE) /* nodes: even widths' edge */
                CHECK(w == w_hi || w % 2 == 1, "%s: width %d, every-point-set %d",
                      pts_set_name[kinds[k]], w, w_hi);
            else
                CHECK(w < w_hi, "%s: width %d not below %d", pts_set_name[kinds[k]], w, w_hi);
            pts_free(&p);
        }
        printf("\n");
        /* at and near each width's footprint edge */
        for (int k = 0; k < op->n_cand; k++) {
            int wc = op->width[k];
            double edge = wc % 2 == 0 ? 0.0 : 0.5, at[3] = {edge, edge + 1e-3, edge + 1 - 1e-3};
            for (int a = 0; a < 3; a++) {
                double off = at[a] - floor(at[a]);
                stats_at(dim, off, 1000, st);
                int w = wf_offsets_choose(op, st);
                CHECK(w > wc && (w == w_hi || w % 2 != wc % 2), "offset %g: width %d", off, w);
            }
        }
        wf_offsets_stats_init(st);
        CHECK(wf_offsets_choose(op, st) == w_hi && wf_offsets_bound(op, 0, st) == 0.0, "no points");
        free(st);
        free(op);
    }
    /* the sigma the every-point-set rule chooses leaves no room on suite B's shapes: that
     * bound is tight there, and random points' is 2.3-4x lower, less than a width's step
     * (docs/accuracy.md): no candidate, the choice is the plan's width */
    warpfft_opts o = defaults();
    o.points_hint = 10000000;
    o.points_width = 0;
    static const int64_t n3[3] = {128, 128, 128};
    wf_params p1, p2;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p1) == 0);
    wf_offset_plan *a = NULL, *b = NULL;
    CHECK(wf_offsets_plan_make(3, p1.n_modes, p1.n_fine, p1.upsampfac, p1.precision, p1.tol,
                               p1.width, &a) == 0 &&
              a->n_cand == 0,
          "B4's plan (points_width 0): %d candidates", a ? a->n_cand : -1);
    free(a);
    /* points_width (the default): sigma chosen for random points, whose width (6) is a
     * candidate below the plan's every-point-set width (7) there, and what the tables choose
     * for the statistics 1e7 random points are expected to give (test_params_cost.c: every
     * row) */
    o.points_width = 1;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p1) == 0 &&
          p1.width == 7 && p1.width_random == 6);
    CHECK(wf_offsets_plan_make(3, p1.n_modes, p1.n_fine, p1.upsampfac, p1.precision, p1.tol,
                               p1.width, &a) == 0 &&
              a->n_cand >= 1 && a->width[0] == 6,
          "B4's plan: %d candidates (sigma %g)", a ? a->n_cand : -1, p1.upsampfac);
    free(a);
    /* type 1 and type 2 of one shape, sigma and tol: the same tables */
    o.upsampfac = 2.45;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p1) == 0 &&
          wf_params_make(2, 3, n3, 4, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p2) == 0);
    CHECK(wf_offsets_plan_make(3, p1.n_modes, p1.n_fine, p1.upsampfac, p1.precision, p1.tol,
                               p1.width, &a) == 0 &&
          wf_offsets_plan_make(3, p2.n_modes, p2.n_fine, p2.upsampfac, p2.precision, p2.tol,
                               p2.width, &b) == 0);
    CHECK(a && b && wf_offsets_plan_bytes(a) == wf_offsets_plan_bytes(b) &&
              memcmp(a, b, wf_offsets_plan_bytes(a)) == 0 && a->n_cand >= 1,
          "type 1 and type 2 tables");
    free(a);
    free(b);
}

/* Emulated errors of one point set at width w on the grid nf: type 1 with random strengths,
 * type 2 with random modes and type 2 with all energy in the mode of largest first-order error
 * (found from every point and mode: the worst data for these points). */
static void emulate_all(int dim, const int64_t N[3], const int64_t nf[3], double sigma, int w,
                        const pts *p, double err[3]) {
    double beta = wf_kernel_beta(w, sigma), *ks[3], kb[3] = {0, 0, 0};
    int nk[3];
    pts_all_modes(dim, N, ks, nk);
    pts_direct_max(dim, nf, w, beta, p, ks, nk, kb);
    pts_free_modes(ks);
    int64_t np = N[0] * (dim >= 2 ? N[1] : 1) * (dim >= 3 ? N[2] : 1);
    double *ar = malloc((size_t)(p->M > np ? p->M : np) * sizeof *ar);
    double *ai = malloc((size_t)(p->M > np ? p->M : np) * sizeof *ai);
    for (int j = 0; j < p->M; j++) {
        ar[j] = 2 * pts_urand() - 1;
        ai[j] = 2 * pts_urand() - 1;
    }
    err[0] = emulate_t1(dim, N, nf, w, beta, p->M, p->u, ar, ai);
    for (int64_t m = 0; m < np; m++) {
        ar[m] = 2 * pts_urand() - 1;
        ai[m] = 2 * pts_urand() - 1;
    }
    err[1] = emulate_t2(dim, N, nf, w, beta, p->M, p->u, ar, ai);
    int64_t at = 0, stride = 1;
    for (int d = 0; d < dim; d++) {
        at += ((int64_t)kb[d] + N[d] / 2) * stride;
        stride *= N[d];
    }
    memset(ar, 0, (size_t)np * sizeof *ar);
    memset(ai, 0, (size_t)np * sizeof *ai);
    ar[at] = 1.0;
    err[2] = emulate_t2(dim, N, nf, w, beta, p->M, p->u, ar, ai);
    free(ar);
    free(ai);
}

/* The chosen width through the emulated pipelines, dims 1-3, f32-like and f64-like tols: the
 * tol is set where the plan's rule needs one point more than uniform points of this size do
 * (1.15x their bound at the narrower width w_t), so the choice has room; every set's errors, for
 * every kind of data, stay below tol, and below the bound the choice used; uniform points get
 * w_t. (Points on nodes may get it too: what binds the plan's rule there is not always the node
 * offset, and these tols sit only 1.7x above random points' error, small M's bound being about
 * Cauchy-Schwarz's; the errors say they may.) And the width the reference takes for 3D at 1e-5
 * and sigma 2 (6) misses tol on uniform points, with the worst data by 2x and with random data,
 * so no rule for those points can take it there. */
void test_offsets_emulate(void) {
    static const struct {
        int dim;
        int64_t N[3];
        double sigma;
        int w_t, M;
    } c[] = {{1, {48, 1, 1}, 2.0, 6, 2000},   {1, {40, 1, 1}, 2.0, 10, 2000},
             {2, {16, 16, 1}, 2.0, 6, 2000},  {2, {14, 12, 1}, 2.0, 10, 1500},
             {3, {10, 10, 10}, 2.0, 6, 1000}, {3, {12, 12, 12}, 2.0, 10, 700}};
    static const int kinds[] = {SET_UNIFORM, SET_NORMAL, SET_RADIAL, SET_CLUSTERED,
                                SET_NODES,   SET_HALF,   SET_LATTICE};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int dim = c[i].dim, w_t = c[i].w_t;
        int64_t nf[3] = {1, 1, 1};
        for (int d = 0; d < dim; d++) /* sigma N >= 2 (w_t + 2): the grid does not follow w */
            nf[d] = wf_fine_size(c[i].N[d], c[i].sigma, 2);
        pts u = pts_new(SET_UNIFORM, dim, c[i].N, nf, c[i].M);
        wf_offset_plan *t = tables_for(dim, c[i].N, nf, c[i].sigma, w_t);
        if (!t) {
            pts_free(&u);
            continue;
        }
        wf_offset_stats *st = stats_of(dim, nf, &u);
        double b = sqrt(wf_offsets_bound(t, t->n_cand - 1, st)), tol = 1.15 * 1.1 * b;
        tol *= wf_alias_safety(dim, tol) / 1.1;
        free(st);
        free(t);
        pts_free(&u);
        int w_hi = wf_kernel_width(dim, c[i].N, tol, c[i].sigma, 16);
        wf_offset_plan *op = NULL;
        CHECK(w_hi > w_t && wf_fine_size(c[i].N[0], c[i].sigma, w_hi) == nf[0] &&
                  wf_offsets_plan_make(dim, c[i].N, nf, c[i].sigma, WARPFFT_F64, tol, w_hi, &op) ==
                      0,
              "%dD w %d: tol %.3g, every-point-set width %d", dim, w_t, tol, w_hi);
        if (!op)
            continue;
        printf("%dD N %lld sigma %g tol %.3g (every point set w %d):", dim, (long long)c[i].N[0],
               c[i].sigma, tol, w_hi);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            pts p = pts_new(kinds[k], dim, c[i].N, nf, c[i].M);
            wf_offset_stats *s2 = stats_of(dim, nf, &p);
            int w = wf_offsets_choose(op, s2);
            double err[3];
            emulate_all(dim, c[i].N, nf, c[i].sigma, w, &p, err);
            double worst = fmax(err[0], fmax(err[1], err[2]));
            printf(" %s w %d %.2f/%.2f/%.2f", pts_set_name[kinds[k]], w, err[0] / tol, err[1] / tol,
                   err[2] / tol);
            CHECK(worst <= tol, "%dD %s w %d: errors %.3g %.3g %.3g above tol %.3g", dim,
                  pts_set_name[kinds[k]], w, err[0], err[1], err[2], tol);
            if (w < w_hi) /* the band-edge error within the bound (first order: a few %) */
                CHECK(err[2] <= 1.05 * sqrt(wf_offsets_bound(op, w - op->width[0], s2)),
                      "%s: error %.3g above the bound", pts_set_name[kinds[k]], err[2]);
            if (kinds[k] == SET_UNIFORM)
                CHECK(w == w_t, "%dD uniform: width %d, expected %d", dim, w, w_t);
            free(s2);
            pts_free(&p);
        }
        printf(" (error/tol: type 1, type 2, type 2 worst mode)\n");
        free(op);
    }
    /* 3D, sigma 2, tol 1e-5: width 6 (the reference's) on uniform points */
    int64_t N[3] = {10, 10, 10}, nf[3] = {20, 20, 20};
    pts p = pts_new(SET_UNIFORM, 3, N, nf, 1000);
    double err[3];
    emulate_all(3, N, nf, 2.0, 6, &p, err);
    CHECK(err[2] > 1.5e-5 && wf_kernel_width(3, N, 1e-5, 2.0, 12) == 7,
          "3D sigma 2 w 6, uniform points: worst-mode error %.3g", err[2]);
    printf("3D sigma 2 w 6 uniform points: type 1 %.3g, type 2 %.3g, worst mode %.3g (tol 1e-5)\n",
           err[0], err[1], err[2]);
    pts_free(&p);
}
