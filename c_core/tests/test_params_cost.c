/*
 * test_params_cost.c — the choice of upsampling factor and width per plan (upsampfac 0,
 * params/cost.c): every choice meets the worst-case bound and the rounding floor, lies in
 * [1.25, 3], predicts no more time for the problem than upsampfac 2 at the same tol, follows
 * the density hint (more points per mode: spreading costs more, so a larger sigma and a
 * narrower kernel), is one per problem (types 1 and 2 and any ntransf alike), and where sigma
 * is chosen for random points, the offsets tables at it choose the width it expects for them.
 */
#include "test_params.h"

#include "params/cost.h"
#include "params/offsets.h"

typedef struct cost_case {
    int type, dim, prec;
    int64_t n;
    double tol;
} cost_case;

static const cost_case CASES[] = {
    {1, 1, WARPFFT_F32, 1000000, 1e-5}, {2, 2, WARPFFT_F32, 1024, 1e-5},
    {1, 3, WARPFFT_F32, 128, 1e-5},     {2, 3, WARPFFT_F32, 128, 1e-6},
    {1, 2, WARPFFT_F64, 1024, 1e-9},    {1, 3, WARPFFT_F64, 128, 1e-9},
    {2, 3, WARPFFT_F64, 64, 1e-12},     {1, 1, WARPFFT_F32, 77, 1e-2},
    {2, 2, WARPFFT_F64, 33, 1e-13},     {1, 3, WARPFFT_F32, 16, 1e-3},
};

/* What the choice minimises (cost.c): one transform of each type, at the width random points
 * take, on the plan's grid. */
static double problem_ms(const wf_params *p) {
    int64_t M = wf_params_points(p);
    return 0.5 * (wf_cost_predict_ms(1, p->dim, p->precision, p->width_random, p->n_fine, 1, M) +
                  wf_cost_predict_ms(2, p->dim, p->precision, p->width_random, p->n_fine, 1, M));
}

static void one(const cost_case *c, int64_t hint) {
    int64_t n[3] = {c->n, c->dim > 1 ? c->n : 1, c->dim > 2 ? c->n : 1};
    warpfft_opts o = defaults(), s2 = defaults();
    o.points_hint = s2.points_hint = hint;
    s2.upsampfac = 2.0;
    wf_params p, q;
    CHECK(wf_params_make(c->type, c->dim, n, 1, c->tol, c->prec, &o, WF_SHARED_OPTIN_SM90, &p) == 0,
          "auto %dD n %lld tol %g: %s", c->dim, (long long)c->n, c->tol, warpfft_last_error());
    CHECK(p.upsampfac >= WF_SIGMA_MIN && p.upsampfac <= WF_SIGMA_MAX, "sigma %g in range",
          p.upsampfac);
    double bound = wf_alias_error(c->dim, n, p.upsampfac, p.width);
    CHECK(wf_alias_safety(c->dim, c->tol) * bound <= c->tol, "%dD tol %g: sigma %.3f w %d bound %g",
          c->dim, c->tol, p.upsampfac, p.width, bound);
    CHECK(p.upsampfac >= 2.0 || p.tol_floor <= 0.25 * c->tol, "floor %g at sigma %.3f", p.tol_floor,
          p.upsampfac);
    CHECK(p.beta == wf_kernel_beta(p.width, p.upsampfac), "beta of the chosen sigma");
    if (wf_params_make(c->type, c->dim, n, 1, c->tol, c->prec, &s2, WF_SHARED_OPTIN_SM90, &q) == 0)
        CHECK(problem_ms(&p) <= problem_ms(&q) * 1.0000001,
              "%dD tol %g: chosen %.4f ms (sigma %.3f w %d) vs sigma 2 %.4f ms (w %d)", c->dim,
              c->tol, problem_ms(&p), p.upsampfac, p.width_random, problem_ms(&q), q.width);
    CHECK(p.width_random <= p.width && p.width - p.width_random <= WF_OFF_MAX_CAND, "widths %d/%d",
          p.width_random, p.width);
    if (p.width_random < p.width) { /* sigma for random points: what the device will choose */
        wf_offset_plan *op = NULL;
        wf_offset_stats *ex = malloc(sizeof *ex);
        CHECK(ex && wf_offsets_plan_make(c->dim, p.n_modes, p.n_fine, p.upsampfac, p.precision,
                                         p.tol, p.width, &op) == 0);
        wf_offsets_stats_expected(c->dim, wf_params_points(&p), ex);
        CHECK(op && wf_offsets_choose(op, ex) == p.width_random,
              "%dD tol %g: the tables choose %d for random points, the plan expects %d", c->dim,
              c->tol, op ? wf_offsets_choose(op, ex) : -1, p.width_random);
        free(op);
        free(ex);
    }
    /* points_width 0: the every-point-set rule's choice, one width */
    warpfft_opts off = o;
    off.points_width = 0;
    wf_params r;
    CHECK(wf_params_make(c->type, c->dim, n, 1, c->tol, c->prec, &off, WF_SHARED_OPTIN_SM90, &r) ==
                  0 &&
              r.width_random == r.width && !r.points_width &&
              (p.width_random < p.width || (r.upsampfac == p.upsampfac && r.width == p.width)),
          "points_width 0: sigma %g w %d/%d (on: %g w %d/%d)", r.upsampfac, r.width_random, r.width,
          p.upsampfac, p.width_random, p.width);
}

/* One choice per problem (issue 39): type 1 and type 2 of a shape, tol and points hint, and
 * any ntransf, choose the same sigma and widths (every point set's and random points'), so the
 * pair is adjoint to rounding and a batch split for memory computes the same bits. Over a grid
 * of 1D-3D shapes, f32 and f64 tols, with and without a hint. */
static void test_cost_per_problem(void) {
    static const int64_t ns[3][3] = {{100, 10000, 1000000}, {32, 256, 1024}, {16, 64, 128}};
    static const struct {
        int prec;
        double tol;
    } tols[4] = {
        {WARPFFT_F32, 1e-3}, {WARPFFT_F32, 1e-5}, {WARPFFT_F64, 1e-6}, {WARPFFT_F64, 1e-9}};
    static const int64_t hints[2] = {0, 10000000};
    static const struct {
        int type;
        int64_t ntransf;
    } runs[4] = {{1, 1}, {2, 1}, {1, 8}, {2, 3}};
    int cases = 0, same = 0;
    for (int dim = 1; dim <= 3; dim++)
        for (int in = 0; in < 3; in++)
            for (int it = 0; it < 4; it++)
                for (int ih = 0; ih < 2; ih++) {
                    int64_t N = ns[dim - 1][in], n[3] = {N, dim > 1 ? N : 1, dim > 2 ? N : 1};
                    warpfft_opts o = defaults();
                    o.points_hint = hints[ih];
                    wf_params p[4];
                    int ok = 1;
                    for (int r = 0; r < 4; r++)
                        ok &= wf_params_make(runs[r].type, dim, n, runs[r].ntransf, tols[it].tol,
                                             tols[it].prec, &o, WF_SHARED_OPTIN_SM90, &p[r]) == 0;
                    CHECK(ok, "%dD N %lld tol %g: %s", dim, (long long)N, tols[it].tol,
                          warpfft_last_error());
                    int eq = ok;
                    for (int r = 1; r < 4 && ok; r++)
                        eq &= p[r].upsampfac == p[0].upsampfac && p[r].width == p[0].width &&
                              p[r].width_random == p[0].width_random && p[r].beta == p[0].beta &&
                              memcmp(p[r].n_fine, p[0].n_fine, sizeof p[0].n_fine) == 0;
                    CHECK(eq,
                          "%dD N %lld tol %g hint %lld: type 1 sigma %.4f w %d/%d, type 2 %.4f "
                          "w %d/%d, type 1 x8 %.4f w %d/%d, type 2 x3 %.4f w %d/%d",
                          dim, (long long)N, tols[it].tol, (long long)hints[ih], p[0].upsampfac,
                          p[0].width_random, p[0].width, p[1].upsampfac, p[1].width_random,
                          p[1].width, p[2].upsampfac, p[2].width_random, p[2].width, p[3].upsampfac,
                          p[3].width_random, p[3].width);
                    cases++;
                    same += eq;
                }
    printf("one choice per problem: %d of %d problems alike for types 1, 2 and ntransf 1, 3, 8\n",
           same, cases);
}

void test_cost_choice(void) {
    test_cost_per_problem();
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        one(&CASES[i], 0);
        one(&CASES[i], 1000000000);
    }
    /* density: many points per mode favour a larger sigma (narrower kernel), few a smaller one */
    int64_t n[3] = {256, 256, 256};
    warpfft_opts lo = defaults(), hi = defaults();
    lo.points_hint = 100000;
    hi.points_hint = 500000000;
    wf_params a, b;
    CHECK(wf_params_make(1, 3, n, 1, 1e-6, WARPFFT_F64, &lo, WF_SHARED_OPTIN_SM90, &a) == 0 &&
              wf_params_make(1, 3, n, 1, 1e-6, WARPFFT_F64, &hi, WF_SHARED_OPTIN_SM90, &b) == 0 &&
              a.upsampfac < b.upsampfac && a.width >= b.width,
          "density: sigma %.3f w %d (1e5 points) vs %.3f w %d (5e8)", a.upsampfac, a.width,
          b.upsampfac, b.width);
    /* the model: linear in the points, grows with the width and the grid */
    int64_t nf[3] = {256, 256, 256}, nf2[3] = {320, 320, 320};
    double t1 = wf_cost_predict_ms(1, 3, WARPFFT_F32, 6, nf, 1, 1000000);
    double t2 = wf_cost_predict_ms(1, 3, WARPFFT_F32, 6, nf, 1, 2000000);
    double t3 = wf_cost_predict_ms(1, 3, WARPFFT_F32, 7, nf, 1, 1000000);
    double t4 = wf_cost_predict_ms(1, 3, WARPFFT_F32, 6, nf2, 1, 1000000);
    CHECK(t1 > 0.0 && t2 > t1 && t3 > t1 && t4 > t1, "model monotone: %g %g %g %g", t1, t2, t3, t4);
    CHECK(wf_cost_predict_ms(1, 3, WARPFFT_F32, 6, nf, 4, 1000000) > 3.5 * t1, "ntransf");
    /* a tol below the precision's range runs at its end (warpfft_tol_effective) before the
     * choice: f32 1e-7 chooses as 1e-6 does */
    warpfft_opts o = defaults();
    warpfft_plan_info below = {0}, at = {0};
    CHECK(warpfft_plan_params(1, 3, n, 1, 1e-7, WARPFFT_F32, &o, &below) == WARPFFT_SUCCESS &&
              warpfft_plan_params(1, 3, n, 1, 1e-6, WARPFFT_F32, &o, &at) == WARPFFT_SUCCESS &&
              below.tol == 1e-6 && below.width == at.width && below.upsampfac == at.upsampfac,
          "tol 1e-7 in f32: runs at 1e-6 (%g, w %d/%d)", below.tol, below.width, at.width);
}
