/*
 * test_type3.c — unit tests of the type-3 parameter choice, c_core/src/params/type3_params.c (no
 * GPU): centring, grid sizes and gamma (footprints stay off the wrap, targets inside the band), the
 * internal precision, the accuracy budget, the quadrature block the kernels read, and the argument
 * checks of warpfft_plan_params3.
 *
 * Build and run: c_core/tests/run_test_type3.sh (ASan + UBSan). Prints "N passed, M failed";
 * exits non-zero on any failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "params/grid.h"
#include "params/kernel.h"
#include "params/params.h"
#include "params/type3_params.h"
#include "params/width.h"
#include "runtime/error.h"

#define PI 3.14159265358979323846

int n_pass, n_fail;

static void test_centre(void) {
    double c, w;
    wf_t3_centre(-PI, PI, &c, &w);
    CHECK(c == 0.0 && w == PI, "c %g w %g", c, w);
    wf_t3_centre(1.0, 3.0, &c, &w);
    CHECK(c == 2.0 && w == 1.0, "c %g w %g", c, w);
    wf_t3_centre(-1.0, 1.1, &c, &w); /* |c| = 0.05 < 0.1 * 1.05: centred at 0, grown */
    CHECK(c == 0.0 && fabs(w - 1.1) < 1e-15, "c %g w %g", c, w);
    wf_t3_centre(5.0, 5.0, &c, &w);
    CHECK(c == 5.0 && w == 0.0, "c %g w %g", c, w);
    wf_t3_centre(-1.7e308, 1.7e308, &c, &w); /* no overflow */
    CHECK(c == 0.0 && isfinite(w), "c %g w %g", c, w);
}

static void test_grid_size(void) {
    int64_t n = wf_t3_grid_size(PI, 5e5, 2.0, 7);
    CHECK(n >= 2000008 && n % 2 == 0 && wf_is_smooth(n) && n < 2100000, "nf %lld", (long long)n);
    CHECK(wf_t3_grid_size(1.0, 1.0, 2.0, 8) == 16, "small grid %lld",
          (long long)wf_t3_grid_size(1.0, 1.0, 2.0, 8));
    CHECK(wf_t3_grid_size(1e200, 1e200, 2.0, 8) == -1, "huge");
}

/* Runs params3 on [xl, xh]^dim x [sl, sh]^dim and returns the status; fills q. */
static int make(int dim, double tol, int prec, double xl, double xh, double sl, double sh,
                wf_t3_params *q) {
    double xlo[3] = {xl, xl, xl}, xhi[3] = {xh, xh, xh}, slo[3] = {sl, sl, sl},
           shi[3] = {sh, sh, sh};
    return wf_t3_params_make(dim, 1, tol, prec, NULL, xlo, xhi, slo, shi, q);
}

/* Footprint margin and band: |x'/h| + w/2 <= nf/2 - 1/2 and gamma*S = nf/(2 sigma). */
static void check_geometry(const wf_t3_params *q, const char *what) {
    for (int d = 0; d < q->dim; d++) {
        double u = q->X[d] / q->gamma[d] / q->h[d];
        CHECK(u + 0.5 * q->width <= 0.5 * (double)q->nf[d] - 0.5, "%s: dim %d u %g w %d nf %lld",
              what, d, u, q->width, (long long)q->nf[d]);
        double band = q->gamma[d] * q->S[d];
        CHECK(fabs(band - (double)q->nf[d] / (2.0 * q->upsampfac)) <= 1e-9 * band,
              "%s: band %g nf %lld", what, band, (long long)q->nf[d]);
    }
}

/* The predicted total error meets tol (with the width rule's safety). */
static void check_budget(const wf_t3_params *q, const char *what) {
    wf_params ip;
    CHECK(wf_t3_inner_params(q, WF_SHARED_OPTIN_SM90, &ip) == WARPFFT_SUCCESS, "%s: inner", what);
    double e_in = wf_alias_error(q->dim, q->nf, q->upsampfac, ip.width);
    double tot = sqrt(q->err_outer * q->err_outer + q->amp * q->amp * e_in * e_in +
                      16.0 * q->err_coord * q->err_coord);
    CHECK(1.25 * tot <= q->tol * 1.0001 || q->inner_tol == 1e-13,
          "%s: predicted %.3g (outer %.3g, inner %.3g x amp %.3g, coord %.3g) > tol %g", what, tot,
          q->err_outer, e_in, q->amp, q->err_coord, q->tol);
    CHECK(ip.n_modes[0] == q->nf[0] && ip.modeord == 1 && ip.type == 2, "%s: inner plan", what);
    CHECK(q->amp >= 1.0 && q->amp < 1e4, "%s: amplification %g", what, q->amp);
}

static void test_reference_cases(void) {
    wf_t3_params q;
    /* T1: 1D f32, x in [-pi, pi), s in [-5e5, 5e5], tol 1e-5: f32 coordinates would lose
     * ~1e-1; the inner steps run in f64 */
    CHECK(make(1, 1e-5, WARPFFT_F32, -PI, PI, -5e5, 5e5, &q) == 0, "T1");
    CHECK(q.inner_precision == WARPFFT_F64 && q.nf[0] >= 2000000 && q.nf[0] < 2100000,
          "T1 ip %d nf %lld", q.inner_precision, (long long)q.nf[0]);
    CHECK(q.C[0] == 0.0 && q.D[0] == 0.0 && !q.pre_phase && !q.post_phase, "T1 centred");
    CHECK(q.width <= 9, "T1 width %d", q.width);
    check_geometry(&q, "T1");
    check_budget(&q, "T1");
    /* T2: f64, tol 1e-9 */
    CHECK(make(1, 1e-9, WARPFFT_F64, -PI, PI, -5e5, 5e5, &q) == 0, "T2");
    CHECK(q.inner_precision == WARPFFT_F64 && q.width <= 13, "T2 width %d", q.width);
    check_geometry(&q, "T2");
    check_budget(&q, "T2");
    /* T3-T8 */
    const struct {
        int dim, prec;
        double tol, s;
    } cases[] = {{2, WARPFFT_F32, 1e-5, 512},  {2, WARPFFT_F64, 1e-9, 512},
                 {3, WARPFFT_F32, 1e-5, 64},   {3, WARPFFT_F64, 1e-9, 64},
                 {3, WARPFFT_F32, 1e-1, 64},   {2, WARPFFT_F64, 1e-13, 100},
                 {1, WARPFFT_F32, 1e-6, 1000}, {3, WARPFFT_F64, 1e-13, 10}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "%dD %s tol %g S %g", cases[i].dim,
                 cases[i].prec == WARPFFT_F64 ? "f64" : "f32", cases[i].tol, cases[i].s);
        int st =
            make(cases[i].dim, cases[i].tol, cases[i].prec, -PI, PI, -cases[i].s, cases[i].s, &q);
        CHECK(st == 0, "%s: status %d", what, st);
        if (st != 0)
            continue;
        check_geometry(&q, what);
        check_budget(&q, what);
        printf("%s: ip %s width %d nf %lld amp %.2f inner tol %.2g\n", what,
               q.inner_precision == WARPFFT_F64 ? "f64" : "f32", q.width, (long long)q.nf[0], q.amp,
               q.inner_tol);
    }
}

static void test_internal_precision(void) {
    wf_t3_params q;
    /* small X*S and a loose tol: f32 coordinates suffice */
    CHECK(make(1, 1e-3, WARPFFT_F32, -1.0, 1.0, -10.0, 10.0, &q) == 0, "small");
    CHECK(q.inner_precision == WARPFFT_F32, "small: ip %d", q.inner_precision);
    check_budget(&q, "small f32");
    /* the same at tol 1e-6: the coordinate error would not fit */
    CHECK(make(1, 1e-6, WARPFFT_F32, -1.0, 1.0, -1e4, 1e4, &q) == 0, "f32 1e-6");
    CHECK(q.inner_precision == WARPFFT_F64, "f32 1e-6: ip %d", q.inner_precision);
}

static void test_shifts_and_zero_spread(void) {
    wf_t3_params q;
    CHECK(make(2, 1e-6, WARPFFT_F64, 10.0, 12.0, 1000.0, 1010.0, &q) == 0, "shifted");
    CHECK(q.C[0] == 11.0 && q.X[0] == 1.0 && q.D[1] == 1005.0 && q.S[1] == 5.0,
          "C %g X %g D %g S %g", q.C[0], q.X[0], q.D[1], q.S[1]);
    CHECK(q.pre_phase && q.post_phase, "phases");
    check_geometry(&q, "shifted");
    /* all targets at one frequency, all sources at one place */
    CHECK(make(1, 1e-6, WARPFFT_F64, 2.0, 2.0, 3.0, 3.0, &q) == 0, "zero spreads");
    CHECK(q.X[0] == 1.0 && q.S[0] == 1.0 && q.nf[0] <= 64, "X %g S %g nf %lld", q.X[0], q.S[0],
          (long long)q.nf[0]);
    CHECK(make(1, 1e-6, WARPFFT_F64, 2.0, 2.0, -100.0, 100.0, &q) == 0, "X = 0");
    CHECK(q.X[0] * q.S[0] >= 1.0 - 1e-12 && q.nf[0] <= 64, "X %g S %g", q.X[0], q.S[0]);
    check_geometry(&q, "X = 0");
}

static void test_geometry_block(void) {
    wf_t3_params q;
    double geom[WF_T3_G_COUNT];
    CHECK(make(2, 1e-9, WARPFFT_F64, -3.0, 5.0, -40.0, 60.0, &q) == 0, "geom");
    int nq = wf_t3_geometry(&q, geom);
    CHECK(nq > 0 && nq <= WF_T3_NQ, "nq %d", nq);
    for (int d = 0; d < 2; d++) {
        CHECK(geom[WF_T3_G_C + d] == q.C[d] && geom[WF_T3_G_D + d] == q.D[d] &&
                  fabs(geom[WF_T3_G_XS + d] * q.gamma[d] - 1.0) < 1e-15 &&
                  geom[WF_T3_G_GAM + d] == q.gamma[d],
              "geom dim %d", d);
        const double *a = geom + WF_T3_G_QUAD + 2 * WF_T3_NQ * d, *g = a + WF_T3_NQ;
        double xis[3] = {0.0, 0.3 * (double)q.nf[d] / 4.0, (double)q.nf[d] / 4.0};
        for (int i = 0; i < 3; i++) {
            double s = 0.0;
            for (int j = 0; j < nq; j++)
                s += g[j] * cos(PI * xis[i] * a[j]);
            double want = wf_phihat(xis[i], q.nf[d], q.width, q.beta, wf_quad_nodes(q.width));
            CHECK(fabs(s - want) <= 1e-13 * fabs(want), "phihat(%g): %.17g vs %.17g", xis[i], s,
                  want);
        }
    }
}

static void expect(int status, const char *word, int dim, double tol, int prec, const double *xl,
                   const double *xh, const double *sl, const double *sh, int line) {
    warpfft_plan_info info;
    int st =
        warpfft_plan_params3(dim, 1, tol, (warpfft_precision)prec, NULL, xl, xh, sl, sh, &info);
    check_status_msg(__FILE__, line, st, status, word);
    if (st == 0 && status == 0) {
        CHECK(info.type == 3 && info.dim == dim && info.n_points == -1 && info.n_targets == -1 &&
                  info.inner_fine[0] >= info.n_fine[0] && info.n_modes[0] == info.n_fine[0] &&
                  info.width >= 2 && info.inner_width >= 2 && info.workspace_bytes > 0 &&
                  info.kernel == WARPFFT_KERNEL_SINH && info.upsampfac == 2.0,
              "line %d: info (kernel %d, upsampfac %g)", line, (int)info.kernel, info.upsampfac);
    }
}

#define EXPECT(st, word, dim, tol, prec, xl, xh, sl, sh)                                           \
    expect(st, word, dim, tol, prec, xl, xh, sl, sh, __LINE__)

static void test_validation(void) {
    const double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1}, slo[3] = {-50, -50, -50},
                 shi[3] = {50, 50, 50};
    const double nan3[3] = {NAN, 0, 0}, inf3[3] = {INFINITY, 0, 0}, big[3] = {1e13, 1e7, 1e7},
                 nbig[3] = {-1e13, -1e7, -1e7};
    EXPECT(WARPFFT_SUCCESS, "", 1, 1e-6, WARPFFT_F32, lo, hi, slo, shi);
    EXPECT(WARPFFT_SUCCESS, "", 3, 1e-12, WARPFFT_F64, lo, hi, slo, shi);
    EXPECT(WARPFFT_ERR_BAD_DIM, "dim = 4", 4, 1e-6, WARPFFT_F32, lo, hi, slo, shi);
    EXPECT(WARPFFT_ERR_INVALID_ARG, "precision = 3", 1, 1e-6, 3, lo, hi, slo, shi);
    EXPECT(WARPFFT_ERR_BAD_TOL, "tol = nan", 1, NAN, WARPFFT_F32, lo, hi, slo, shi);
    /* a tol outside the range runs at its nearer end (warpfft_tol_effective), as types 1, 2 */
    warpfft_plan_info clamped, at_end;
    CHECK(warpfft_plan_params3(1, 1, 1e-7, WARPFFT_F32, NULL, lo, hi, slo, shi, &clamped) == 0 &&
              warpfft_plan_params3(1, 1, 1e-6, WARPFFT_F32, NULL, lo, hi, slo, shi, &at_end) == 0 &&
              clamped.tol == 1e-6 && clamped.width == at_end.width &&
              clamped.n_fine[0] == at_end.n_fine[0],
          "type 3, f32 tol 1e-7: runs at %g", clamped.tol);
    CHECK(warpfft_plan_params3(1, 1, 1e-14, WARPFFT_F64, NULL, lo, hi, slo, shi, &clamped) == 0 &&
              clamped.tol == 1e-13,
          "type 3, f64 tol 1e-14: runs at %g", clamped.tol);
    EXPECT(WARPFFT_ERR_INVALID_ARG, "NULL", 1, 1e-6, WARPFFT_F32, NULL, hi, slo, shi);
    EXPECT(WARPFFT_ERR_BAD_POINTS, "finite", 1, 1e-6, WARPFFT_F32, nan3, hi, slo, shi);
    EXPECT(WARPFFT_ERR_BAD_POINTS, "finite", 1, 1e-6, WARPFFT_F32, lo, hi, slo, inf3);
    EXPECT(WARPFFT_ERR_BAD_POINTS, "lo <= hi", 1, 1e-6, WARPFFT_F32, hi, lo, slo, shi);
    /* X*S = 1e13 in 1D: a grid of ~1.3e13 points */
    EXPECT(WARPFFT_ERR_BAD_SIZE, "spreading grid of", 1, 1e-6, WARPFFT_F64, lo, hi, nbig, big);
    /* 3D, 1.3e7 points per dim: fine per dim, the product is not addressable */
    const double b3[3] = {1e7, 1e7, 1e7}, nb3[3] = {-1e7, -1e7, -1e7};
    EXPECT(WARPFFT_ERR_BAD_SIZE, "too large", 3, 1e-6, WARPFFT_F64, lo, hi, nb3, b3);
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 3.5; /* outside [1.25, 3] */
    warpfft_plan_info info;
    CHECK(warpfft_plan_params3(1, 1, 1e-6, WARPFFT_F32, &o, lo, hi, slo, shi, &info) ==
              WARPFFT_ERR_INVALID_ARG,
          "upsampfac 3.5");
    CHECK(warpfft_plan_params3(1, 0, 1e-6, WARPFFT_F32, NULL, lo, hi, slo, shi, &info) ==
              WARPFFT_ERR_BAD_SIZE,
          "ntransf 0");
    CHECK(warpfft_plan_params3(1, 1, 1e-6, WARPFFT_F32, NULL, lo, hi, slo, shi, NULL) ==
              WARPFFT_ERR_INVALID_ARG,
          "info NULL");
    const int64_t n[3] = {8, 8, 8};
    CHECK(warpfft_plan_params(3, 1, n, 1, 1e-6, WARPFFT_F32, NULL, &info) ==
                  WARPFFT_ERR_UNSUPPORTED &&
              strstr(warpfft_last_error(), "params3"),
          "plan_params(3): %s", warpfft_last_error());
    /* Spread/interp only is for types 1 and 2: handed to type 3's inner type-2 step it skipped
     * that step's FFT and deconvolution (wrong numbers, success). Refused by the check that
     * warpfft_plan_create(3, ...) and warpfft_plan_params3 share. */
    warpfft_opts sio, resolved;
    warpfft_opts_default(&sio);
    sio.spreadinterponly = 1;
    CHECK(warpfft_plan_params3(1, 1, 1e-6, WARPFFT_F32, &sio, lo, hi, slo, shi, &info) ==
                  WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "opts.spreadinterponly = 1 is for types 1 and 2"),
          "params3 with spreadinterponly: %s", warpfft_last_error());
    CHECK(wf_t3_check(2, 1, &(double){1e-6}, WARPFFT_F64, &sio, &resolved) ==
                  WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "type-3 plan needs it 0"),
          "wf_t3_check with spreadinterponly: %s", warpfft_last_error());
    sio.spreadinterponly = 0;
    CHECK(wf_t3_check(2, 1, &(double){1e-6}, WARPFFT_F64, &sio, &resolved) == WARPFFT_SUCCESS);
    /* the inner step's options never carry it */
    resolved.spreadinterponly = 1;
    CHECK(wf_t3_inner_opts(&resolved).spreadinterponly == 0);
    /* upsampfac 1.25 works too, at a tol its widths reach: 1e-6 on this small grid now needs
     * more than 16 points inside (the band edge on nodes, width.c) and is refused */
    o.upsampfac = 1.25;
    CHECK(warpfft_plan_params3(2, 1, 1e-5, WARPFFT_F64, &o, lo, hi, slo, shi, &info) ==
                  WARPFFT_SUCCESS &&
              info.upsampfac == 1.25 && info.inner_fine[0] < 2 * info.n_fine[0],
          "upsampfac 1.25: %s", warpfft_last_error());
    CHECK(warpfft_plan_params3(2, 1, 1e-6, WARPFFT_F64, &o, lo, hi, slo, shi, &info) ==
              WARPFFT_ERR_BAD_TOL,
          "upsampfac 1.25 at 1e-6: %s", warpfft_last_error());
}

/* opts.deterministic for type 3: the spreading step spreads with OD (AUTO or OD asked for), the
 * inner type-2 step keeps AUTO's interpolation method (OD asked for becomes AUTO there), GM or
 * SM with the option are refused by the check create and params3 share; info reports it. */
static void test_deterministic(void) {
    const double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1}, slo[3] = {-50, -50, -50},
                 shi[3] = {50, 50, 50};
    warpfft_opts o, resolved;
    warpfft_opts_default(&o);
    warpfft_plan_info info, plain;
    CHECK(warpfft_plan_params3(3, 2, 1e-6, WARPFFT_F32, &o, lo, hi, slo, shi, &plain) == 0 &&
              plain.method != WARPFFT_METHOD_OD && plain.deterministic == 0,
          "default: method %d", plain.method);
    /* the kernel, as a plan reports it (params3 left it 0: Rust's PlanInfo refused that) */
    CHECK(plain.kernel == WARPFFT_KERNEL_SINH, "params3 kernel %d", plain.kernel);
    o.deterministic = 1;
    CHECK(warpfft_plan_params3(3, 2, 1e-6, WARPFFT_F32, &o, lo, hi, slo, shi, &info) == 0 &&
              info.method == WARPFFT_METHOD_OD && info.deterministic == 1 &&
              info.width == plain.width && info.n_fine[0] == plain.n_fine[0] &&
              info.inner_fine[0] == plain.inner_fine[0] && info.bin_size[0] == 4,
          "deterministic: method %d bins %d: %s", info.method, info.bin_size[0],
          warpfft_last_error());
    wf_t3_params q;
    CHECK(wf_t3_params_make(2, 1, 1e-9, WARPFFT_F64, &o, lo, hi, slo, shi, &q) == 0);
    wf_params sp, ip, ip_plain;
    warpfft_opts od = o;
    od.deterministic = 0;
    od.method = WARPFFT_METHOD_OD;
    CHECK(wf_t3_spread_params(&q, &od, WF_SHARED_OPTIN_SM90, &sp) == 0 &&
              sp.method == WARPFFT_METHOD_OD && sp.deterministic == 0,
          "method OD: spreading OD: %s", warpfft_last_error());
    CHECK(wf_t3_inner_opts(&od).method == WARPFFT_METHOD_AUTO, "the inner step: AUTO");
    wf_t3_params q_od; /* the inner step is resolved with the plan's options, once */
    CHECK(wf_t3_params_make(2, 1, 1e-9, WARPFFT_F64, &od, lo, hi, slo, shi, &q_od) == 0);
    CHECK(wf_t3_inner_params(&q_od, WF_SHARED_OPTIN_SM90, &ip) == 0 &&
              wf_t3_inner_params(&q, WF_SHARED_OPTIN_SM90, &ip_plain) == 0 && !ip.points_width &&
              !ip_plain.points_width && ip.method == ip_plain.method &&
              ip.method != WARPFFT_METHOD_OD && ip_plain.deterministic == 1,
          "inner type 2: method %d / %d: %s", ip.method, ip_plain.method, warpfft_last_error());
    CHECK(warpfft_plan_params3(1, 1, 1e-5, WARPFFT_F32, &od, lo, hi, slo, shi, &info) == 0 &&
              info.method == WARPFFT_METHOD_OD && info.deterministic == 0,
          "params3 with method OD: %s", warpfft_last_error());
    o.method = WARPFFT_METHOD_SM;
    CHECK(wf_t3_check(2, 1, &(double){1e-6}, WARPFFT_F64, &o, &resolved) ==
                  WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "type 3's spreading step would add with atomics"),
          "deterministic with SM: %s", warpfft_last_error());
    o.method = WARPFFT_METHOD_GM;
    CHECK(warpfft_plan_params3(1, 1, 1e-5, WARPFFT_F32, &o, lo, hi, slo, shi, &info) ==
                  WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "opts.method = 1 (GM)"),
          "params3 deterministic with GM: %s", warpfft_last_error());
}

int main(void) {
    test_deterministic();
    test_centre();
    test_grid_size();
    test_reference_cases();
    test_internal_precision();
    test_shifts_and_zero_spread();
    test_geometry_block();
    test_validation();
    return check_summary("");
}
