/*
 * offsets_report.c — the widths of docs/accuracy.md's "The width the points need": for every
 * suite-B and D row, today's (sigma, w) and the width the points give at that sigma for each
 * kind of point set; then the (sigma, w) the cost model takes when the bound is that of M
 * random points (wf_offsets_stats_expected) and the widths each kind gets there. Not a test:
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -DWARPFFT_BUILDING -Ic_core/include -Ic_core/src \
 *       c_core/tests/offsets_report.c c_core/tests/test_params_points.c \
 *       c_core/tests/test_params_kernel.c c_core/src/params/[a-z]*.c \
 *       c_core/src/runtime/error.c -lm -o /tmp/offsets_report && /tmp/offsets_report
 * (~10 min; the point sets are drawn a million at a time, at most WF_REPORT_M points per row,
 * and the choice for random points assumes that many).
 */
#include "test_params.h"

#include "params/cost.h"
#include "params/offsets.h"

int n_pass, n_fail; /* test_params_kernel.c's checks, unused here */

#define WF_REPORT_M 10000000

typedef struct row {
    const char *name;
    int type, dim, precision;
    int64_t N[3], M, ntransf;
    double tol;
} row;

static const row rows[] = {
    {"B1", 1, 1, WARPFFT_F32, {1000000, 1, 1}, 10000000, 1, 1e-5},
    {"B2", 1, 2, WARPFFT_F32, {1024, 1024, 1}, 10000000, 1, 1e-5},
    {"B3", 2, 2, WARPFFT_F32, {1024, 1024, 1}, 10000000, 1, 1e-5},
    {"B4", 1, 3, WARPFFT_F32, {128, 128, 128}, 10000000, 1, 1e-5},
    {"B5", 2, 3, WARPFFT_F32, {128, 128, 128}, 10000000, 1, 1e-5},
    {"B6", 1, 2, WARPFFT_F64, {1024, 1024, 1}, 10000000, 1, 1e-9},
    {"B7", 1, 3, WARPFFT_F64, {128, 128, 128}, 10000000, 1, 1e-9},
    {"B8", 2, 3, WARPFFT_F64, {128, 128, 128}, 10000000, 1, 1e-9},
    {"B9", 1, 2, WARPFFT_F32, {256, 256, 1}, 1000000, 8, 1e-5},
    {"B1m", 1, 1, WARPFFT_F32, {1000000, 1, 1}, 10000000, 1, 1e-6},
    {"B2m", 1, 2, WARPFFT_F32, {1024, 1024, 1}, 10000000, 1, 1e-6},
    {"B3m", 2, 2, WARPFFT_F32, {1024, 1024, 1}, 10000000, 1, 1e-6},
    {"B4m", 1, 3, WARPFFT_F32, {128, 128, 128}, 10000000, 1, 1e-6},
    {"B5m", 2, 3, WARPFFT_F32, {128, 128, 128}, 10000000, 1, 1e-6},
    {"D1t1", 1, 3, WARPFFT_F64, {256, 256, 256}, 1700000, 1, 1e-6},
    {"D1t2", 2, 3, WARPFFT_F64, {256, 256, 256}, 1700000, 1, 1e-6},
    {"D2t1", 1, 3, WARPFFT_F64, {256, 256, 256}, 17000000, 1, 1e-6},
    {"D2t2", 2, 3, WARPFFT_F64, {256, 256, 256}, 17000000, 1, 1e-6},
    {"D3t1", 1, 3, WARPFFT_F64, {256, 256, 256}, 170000000, 1, 1e-6},
    {"D3t2", 2, 3, WARPFFT_F64, {256, 256, 256}, 170000000, 1, 1e-6},
};

static const int kinds[] = {SET_UNIFORM, SET_NORMAL, SET_RADIAL, SET_CLUSTERED,
                            SET_NODES,   SET_HALF,   SET_LATTICE};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };

static void fine(const row *r, double sigma, int w, int64_t nf[3]) {
    for (int d = 0; d < 3; d++)
        nf[d] = d < r->dim ? wf_fine_size(r->N[d], sigma, w) : 1;
}

/* The widths each kind of point set gets at sigma with every-point-set width w_hi. */
static void widths_at(const row *r, double sigma, int w_hi, int out[N_KINDS]) {
    int64_t nf[3];
    fine(r, sigma, w_hi, nf);
    wf_offset_plan *op = NULL;
    wf_offsets_plan_make(r->dim, r->N, nf, sigma, r->precision, r->tol, w_hi, &op);
    wf_offset_stats *st = malloc(sizeof *st);
    int64_t M = r->M < WF_REPORT_M ? r->M : WF_REPORT_M;
    for (int k = 0; k < N_KINDS; k++) {
        if (!op || op->n_cand == 0) { /* nothing below w_hi: no points needed */
            out[k] = w_hi;
            continue;
        }
        wf_offsets_stats_init(st);
        for (int64_t done = 0; done < M; done += 1000000) {
            int m = (int)(M - done < 1000000 ? M - done : 1000000);
            pts p = pts_new(kinds[k], r->dim, r->N, nf, m);
            wf_offsets_gather(r->dim, nf, m, (const double *const *)p.x, st);
            pts_free(&p);
        }
        out[k] = op ? wf_offsets_choose(op, st) : w_hi;
    }
    free(st);
    free(op);
}

/* Whether (sigma, w) meets tol for random points: the bound M random points are expected to
 * give, the rounding floor as cost.c takes it, and an every-point-set width at sigma that the
 * precision embeds (what on-node points fall back to). */
static int passes_random(const row *r, double sigma, int w, wf_offset_stats *ex) {
    int wmax = wf_max_width(r->precision);
    int w_hi = wf_kernel_width(r->dim, r->N, r->tol, sigma, wmax);
    if (w_hi > wmax)
        return 0;
    if (w >= w_hi)
        return 1;
    int64_t nf[3];
    fine(r, sigma, w_hi, nf);
    wf_offset_plan *op = NULL;
    /* tables for w: a plan whose tol every width passes, w its last candidate */
    if (wf_offsets_plan_make(r->dim, r->N, nf, sigma, r->precision, 0.5, w + 1, &op) != 0)
        return 0;
    double lim = r->tol / wf_alias_safety(r->dim, r->tol);
    int ok = op->n_cand > 0 && wf_offsets_bound(op, op->n_cand - 1, ex) <= lim * lim;
    free(op);
    if (ok && sigma < 2.0)
        ok = wf_tol_floor_of(r->precision, r->dim, r->N, nf, w, wf_kernel_beta(w, sigma)) <=
             0.25 * r->tol;
    return ok;
}

static double sigma_of(double u) {
    return 1.0 / (1.0 - u * u);
}

static double predict(const row *r, double sigma, int w, int w_grid) {
    int64_t nf[3];
    fine(r, sigma, w_grid, nf);
    return wf_cost_predict_ms(r->type, r->dim, r->precision, w, nf, r->ntransf, r->M);
}

/* cost.c's search with passes_random: each width's least sigma (bisection in sqrt(1 - 1/sigma)
 * to 1%), the least predicted time, sigma 2 unless another is 5% faster. */
static void choose_random(const row *r, double *sig, int *wid) {
    wf_offset_stats *ex = malloc(sizeof *ex);
    wf_offsets_stats_expected(r->dim, r->M < WF_REPORT_M ? r->M : WF_REPORT_M, ex);
    double best = INFINITY;
    *wid = 0;
    for (int w = 2; w <= wf_max_width(r->precision); w++) {
        if (!passes_random(r, WF_SIGMA_MAX, w, ex))
            continue;
        double ulo = sqrt(1.0 - 1.0 / WF_SIGMA_MIN), uhi = sqrt(1.0 - 1.0 / WF_SIGMA_MAX), s;
        if (passes_random(r, WF_SIGMA_MIN, w, ex)) {
            s = WF_SIGMA_MIN;
        } else {
            while (sigma_of(uhi) - sigma_of(ulo) > 0.01 * sigma_of(ulo)) {
                double um = 0.5 * (ulo + uhi);
                if (passes_random(r, sigma_of(um), w, ex))
                    uhi = um;
                else
                    ulo = um;
            }
            s = sigma_of(uhi);
        }
        int w_hi = wf_kernel_width(r->dim, r->N, r->tol, s, 16);
        double t = predict(r, s, w, w_hi);
        if (t < best) {
            best = t;
            *wid = w;
            *sig = s;
        }
    }
    for (int w = 2; w <= wf_max_width(r->precision); w++)
        if (passes_random(r, 2.0, w, ex)) {
            int w_hi = wf_kernel_width(r->dim, r->N, r->tol, 2.0, 16);
            if (best > 0.95 * predict(r, 2.0, w, w_hi)) {
                *wid = w;
                *sig = 2.0;
            }
            break;
        }
    free(ex);
}

int main(void) {
    printf("| row | today σ, w (ms) | at today's σ: uniform normal radial clustered nodes half "
           "lattice | random points' σ, w (ms) | every-point-set w there (ms) | there: uniform "
           "normal radial clustered nodes half lattice |\n|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        warpfft_opts o = defaults();
        o.points_hint = r->M;
        wf_params p;
        if (wf_params_make(r->type, r->dim, r->N, r->ntransf, r->tol, r->precision, &o,
                           WF_SHARED_OPTIN_SM90, &p) != 0)
            continue;
        int w_today[N_KINDS], w_rand[N_KINDS], wr = 0;
        widths_at(r, p.upsampfac, p.width, w_today);
        double sr = 0.0;
        choose_random(r, &sr, &wr);
        int w_hi = wf_kernel_width(r->dim, r->N, r->tol, sr, 16);
        widths_at(r, sr, w_hi, w_rand);
        printf("| %s | %.3f, %d (%.2f) |", r->name, p.upsampfac, p.width, p.predicted_ms);
        for (int k = 0; k < N_KINDS; k++)
            printf(" %d", w_today[k]);
        printf(" | %.3f, %d (%.2f) | %d (%.2f) |", sr, wr, predict(r, sr, wr, w_hi), w_hi,
               predict(r, sr, w_hi, w_hi));
        for (int k = 0; k < N_KINDS; k++)
            printf(" %d", w_rand[k]);
        printf(" |\n");
        fflush(stdout);
    }
    return 0;
}
