/*
 * test_fault_width.c — the width the points take, through the whole C core on the stand-in
 * driver, whose module offsets_{d}d_p gathers and chooses on the host with offsets_bound.h
 * (standin_cuda_width.c): the plumbing between the host rule and the kernels, not the kernels
 * (kernels/test/emu tests those, the GPU tests both):
 *  - a plan whose width has a narrower candidate lists its widths (warpfft_plan_points_width),
 *    the same for type 1 and type 2; a checked setpts reads the choice back and plan_info
 *    reports it (width and beta), equal to the host rule on the same (f32) points, and the
 *    statistics the plan gathered equal wf_offsets_gather's bit for bit; uniform points take the
 *    narrower width, points on grid nodes the plan's;
 *  - unchecked: plan_info keeps the plan's width until warpfft_plan_points_width (one copy, one
 *    wait) or warpfft_setpts_check reads the choice;
 *  - point sets: the widest of the sets' choices, each set's statistics its own; sets too small
 *    to gather take the plan's width and report no statistics;
 *  - plans that keep one width (no candidate, spread/interp only, type 3) report one width.
 * Also prints what the offsets plan costs a first plan of its shape and a second.
 */
#include "api/diagnostics.h"
#include "params/offsets.h"
#include "plans/spreader.h" /* WF_PW_MIN_SET_POINTS */
#include "test_fault.h"

enum { WM = 5000 }; /* points per set */
#define PI_T 3.14159265358979323846

static const int64_t n64[3] = {64, 64, 1};

static double ms_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* 2D f32 64 x 64 at tol 1e-5, upsampfac 2.5: width 7 for every point set, 6 for uniform ones. */
static warpfft_plan width_plan(int type, int64_t ntransf, int check_points) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 2.5;
    o.check_points = check_points;
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(type, 2, n64, 1, ntransf, 1e-5, WARPFFT_F32, &o, &plan);
    CHECK(st == 0, "create: %s", warpfft_last_error());
    return st == 0 ? plan : NULL;
}

/* n points per set of `sets` sets into x, y (f32, host): set s uniform in [-pi, pi) when
 * kinds[s] is 0, on grid nodes of the fine grid nf when 1. */
static void points(const int *kinds, int sets, int n, const int64_t nf[3], float *x, float *y) {
    unsigned r = 12345u;
    for (int s = 0; s < sets; s++)
        for (int j = 0; j < n; j++) {
            float *xy[2] = {x + s * n + j, y + s * n + j};
            for (int d = 0; d < 2; d++) {
                r = r * 1103515245u + 12345u;
                double u = (double)(r >> 8) / 16777216.0;
                *xy[d] = kinds[s] == 0
                             ? (float)(2 * PI_T * u - PI_T)
                             : (float)(2 * PI_T * (double)(int)(u * (double)nf[d]) / (double)nf[d] -
                                       PI_T);
            }
        }
}

/* The host rule on points x, y (n per set, `sets` sets): per set the statistics (into st) and
 * the widest choice. */
static int host_choice(warpfft_plan plan, const float *x, const float *y, int sets, int n,
                       wf_offset_stats *st) {
    warpfft_plan_info in;
    warpfft_plan_get_info(plan, &in);
    wf_offset_plan *op = NULL;
    int64_t N[3] = {in.n_modes[0], in.n_modes[1], in.n_modes[2]};
    int64_t nf[3] = {in.n_fine[0], in.n_fine[1], in.n_fine[2]};
    if (wf_offsets_plan_make(2, N, nf, in.upsampfac, WARPFFT_F32, 1e-5, in.width, &op) != 0)
        return -1;
    int w = 0;
    double *xd = malloc((size_t)n * sizeof *xd), *yd = malloc((size_t)n * sizeof *yd);
    for (int s = 0; s < sets; s++) {
        for (int j = 0; j < n; j++) {
            xd[j] = x[s * n + j];
            yd[j] = y[s * n + j];
        }
        const double *xy[3] = {xd, yd, NULL};
        wf_offsets_stats_init(&st[s]);
        wf_offsets_gather(2, nf, n, xy, &st[s]);
        int ws = wf_offsets_choose(op, &st[s]);
        w = ws > w ? ws : w;
    }
    free(xd);
    free(yd);
    free(op);
    return w;
}

static int info_width(warpfft_plan plan) {
    warpfft_plan_info in;
    warpfft_plan_get_info(plan, &in);
    return in.width;
}

/* One case: `sets` sets of n points of kinds[], a plan of type, checked or not. */
static void width_case(int type, int check_points, const int *kinds, int sets, int n) {
    warpfft_plan plan = width_plan(type, sets, check_points);
    if (!plan)
        return;
    warpfft_plan_info in;
    warpfft_plan_get_info(plan, &in);
    int64_t nf[3] = {in.n_fine[0], in.n_fine[1], in.n_fine[2]};
    size_t np = (size_t)sets * (size_t)n;
    float *x = malloc(np * 4), *y = malloc(np * 4);
    points(kinds, sets, n, nf, x, y);
    void *dx = NULL, *dy = NULL, *c = NULL, *fk = NULL;
    warpfft_malloc(0, np * 4, &dx);
    warpfft_malloc(0, np * 4, &dy);
    warpfft_malloc(0, np * 8, &c);
    warpfft_malloc(0, (size_t)sets * 64 * 64 * 8, &fk);
    warpfft_memset(0, c, 0, np * 8);
    warpfft_memset(0, fk, 0, (size_t)sets * 64 * 64 * 8);
    warpfft_memcpy_htod(0, dx, x, np * 4);
    warpfft_memcpy_htod(0, dy, y, np * 4);
    int32_t w[4], nw = 0, in_use = -1;
    CHECK(warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw == 2 && w[0] == 6 &&
              w[1] == 7 && in_use == 0 && in.width == 7,
          "type %d: widths %d: %d %d (plan %d), before setpts in use %d", type, nw, w[0], w[1],
          in.width, in_use);
    wf_offset_stats *want = calloc((size_t)sets, sizeof *want);
    int host = host_choice(plan, x, y, sets, n, want);
    int st = sets > 1 ? warpfft_setpts_sets(plan, WARPFFT_F32, sets, n, dx, dy, NULL)
                      : warpfft_setpts(plan, WARPFFT_F32, n, dx, dy, NULL);
    CHECK(st == 0, "setpts: %s", warpfft_last_error());
    int gathered = sets == 1 || n >= WF_PW_MIN_SET_POINTS, any_nodes = 0;
    for (int s = 0; s < sets; s++)
        any_nodes |= kinds[s];
    int expect = gathered ? host : 7;
    CHECK(host == (any_nodes ? 7 : 6), "the host rule: %s points take width %d",
          any_nodes ? "node" : "uniform", host);
    /* checked: plan_info says the choice; unchecked: the plan's width until it is read */
    CHECK(info_width(plan) == (check_points ? expect : 7),
          "type %d checked %d, %d sets of %d: info width %d, host %d", type, check_points, sets, n,
          info_width(plan), expect);
    CHECK(warpfft_execute(plan, WARPFFT_F32, c, fk) == 0, "execute: %s", warpfft_last_error());
    size_t words = (size_t)sets * WARPFFT_OFFSET_STATS_WORDS;
    uint64_t *got = malloc((words + 1) * 8);
    got[words] = 0x5150;
    CHECK(warpfft_plan_points_width(plan, w, &nw, &in_use, got, (int64_t)words) == 0 &&
              in_use == expect && info_width(plan) == expect && got[words] == 0x5150,
          "type %d: in use %d, host %d, info %d", type, in_use, expect, info_width(plan));
    if (gathered)
        CHECK(memcmp(got, want, words * 8) == 0, "type %d: the statistics differ from the host's",
              type);
    else
        for (size_t i = 0; i < words; i++)
            if (got[i]) {
                CHECK(0, "type %d: statistics of sets too small to gather", type);
                break;
            }
    if (!check_points) /* setpts_check reads nothing more: the choice is known */
        CHECK(warpfft_setpts_check(plan) == 0, "setpts_check: %s", warpfft_last_error());
    printf("  type %d %s, %d set(s) of %d (%s): width %d (host %d)\n", type,
           check_points ? "checked" : "unchecked", sets, n,
           kinds[0] == 0 && (sets == 1 || kinds[1] == 0) ? "uniform" : "with nodes", in_use,
           expect);
    free(got);
    free(want);
    free(x);
    free(y);
    destroy_plan(plan);
    void *bufs[] = {dx, dy, c, fk};
    for (int i = 0; i < 4; i++)
        warpfft_free(0, bufs[i]);
}

/* Plans that keep one width report one; a type 3 plan too. */
static void one_width(void) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 2.0;
    warpfft_plan plan = NULL;
    int32_t w[4], nw = 0, in_use = -1;
    CHECK(warpfft_plan_create(1, 2, n64, 1, 1, 1e-5, WARPFFT_F32, &o, &plan) == 0 &&
              warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw == 1 &&
              w[0] == info_width(plan) && in_use == 0,
          "no candidate at sigma 2: %d widths", nw);
    destroy_plan(plan);
    o.upsampfac = 2.5;
    o.spreadinterponly = 1;
    CHECK(warpfft_plan_create(1, 2, n64, 1, 1, 1e-5, WARPFFT_F32, &o, &plan) == 0 &&
              warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw == 1,
          "spread/interp only: %d widths", nw);
    destroy_plan(plan);
    CHECK(warpfft_plan_create(3, 2, NULL, 1, 1, 1e-5, WARPFFT_F32, NULL, &plan) == 0 &&
              warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw == 1 &&
              in_use == 0,
          "type 3: %d widths", nw);
    uint64_t s = 1;
    CHECK(warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 1) == WARPFFT_ERR_INVALID_ARG &&
              warpfft_plan_points_width(NULL, w, &nw, &in_use, &s, 1) == WARPFFT_ERR_INVALID_ARG &&
              warpfft_plan_points_width(plan, w, NULL, &in_use, &s, 1) == WARPFFT_ERR_INVALID_ARG,
          "argument checks");
    destroy_plan(plan);
}

/* A 3D f64 type 1 SM plan at width 11 (its tile in shared memory) may run w10's spreading (the
 * tile in registers) with its default bins (8 x 8 x 4); given bins whose last extent w10's
 * register tile cannot hold (8 x 8 x 16), it keeps one width (the H100 faulted there). */
static void candidates_fit_the_bins(void) {
    static const int64_t n24[3] = {24, 25, 26};
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 2.0;
    o.method = WARPFFT_METHOD_SM;
    warpfft_plan plan = NULL;
    int32_t w[4], nw = 0, in_use = -1;
    CHECK(warpfft_plan_create(1, 3, n24, 1, 1, 1e-8, WARPFFT_F64, &o, &plan) == 0 &&
              warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw >= 2 &&
              w[nw - 1] == 11 && w[nw - 2] == 10,
          "3D f64 1e-8 sigma 2, default bins: %d widths, widest %d", nw, nw ? w[nw - 1] : -1);
    destroy_plan(plan);
    o.bin_size[0] = o.bin_size[1] = 8;
    o.bin_size[2] = 16;
    CHECK(warpfft_plan_create(1, 3, n24, 1, 1, 1e-8, WARPFFT_F64, &o, &plan) == 0 &&
              warpfft_plan_points_width(plan, w, &nw, &in_use, NULL, 0) == 0 && nw == 1 &&
              w[0] == 11,
          "3D f64 1e-8 sigma 2, bins 8 x 8 x 16: %d widths, widest %d", nw, nw ? w[nw - 1] : -1);
    destroy_plan(plan);
}

void test_points_width(void) {
    static const int uni[2] = {0, 0}, nodes[2] = {1, 1}, mixed[2] = {0, 1};
    for (int type = 1; type <= 2; type++) {
        width_case(type, 1, uni, 1, WM);
        width_case(type, 1, nodes, 1, WM);
        width_case(type, 0, uni, 1, WM);
        width_case(type, 1, uni, 2, WM);
        width_case(type, 0, mixed, 2, WM);
        width_case(type, 1, uni, 2, 300); /* too small to gather: the plan's width */
    }
    one_width();
    candidates_fit_the_bins();
    /* what the offsets plan costs: a first plan of a new shape builds it, a second takes the
     * memo's (both after the modules loaded, with the plan cache on) */
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 2.45;
    const int64_t n3[3] = {16, 16, 16};
    double t[2];
    for (int i = 0; i < 2; i++) {
        warpfft_plan plan = NULL;
        double t0 = ms_now();
        CHECK(warpfft_plan_create(1, 3, n3, 1, 1, 1e-5, WARPFFT_F32, &o, &plan) == 0, "3D: %s",
              warpfft_last_error());
        t[i] = ms_now() - t0;
        destroy_plan(plan);
    }
    printf("  3D 16^3 f32 1e-5 upsampfac 2.45 (candidate 6): create %.2f ms, again %.2f ms\n", t[0],
           t[1]);
    warpfft_release_cached();
}
