/*
 * test_params_cost.c — the choice of upsampling factor and width per plan (upsampfac 0,
 * params/cost.c): every choice meets the worst-case bound and the rounding floor, lies in
 * [1.25, 3], predicts no more time than upsampfac 2 at the same tol, follows the density hint
 * (more points per mode: spreading costs more, so a larger sigma and a narrower kernel), and is
 * the same on a second call (the memo).
 */
#include "test_params.h"

#include "params/cost.h"

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
        CHECK(p.predicted_ms <= q.predicted_ms * 1.0000001,
              "%dD tol %g: chosen %.4f ms (sigma %.3f w %d) vs sigma 2 %.4f ms (w %d)", c->dim,
              c->tol, p.predicted_ms, p.upsampfac, p.width, q.predicted_ms, q.width);
    wf_params r;
    CHECK(wf_params_make(c->type, c->dim, n, 1, c->tol, c->prec, &o, WF_SHARED_OPTIN_SM90, &r) ==
                  0 &&
              r.upsampfac == p.upsampfac && r.width == p.width,
          "the same choice twice");
}

void test_cost_choice(void) {
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
