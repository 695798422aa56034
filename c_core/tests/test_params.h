/*
 * test_params.h — what the plan-parameter tests share beyond check.h (the reference kernel of
 * test_params_kernel.c, the default options) and the test groups main (test_params.c) runs, one
 * file per part of params.h:
 *   test_params_kernel.c   Gauss-Legendre quadrature, phihat and the deconvolution factors;
 *   test_params_width.c    beta, the aliasing model, the width rule, the accuracy floor;
 *   test_params_emulate.c  the width rule's bound against a brute-force type 1 on the host;
 *   test_params_offsets.c  the width from the points given (offsets.c), with the point sets of
 *                          test_params_points.c;
 *   test_params_grid.c     fine-grid sizes, mode ordering, folding points into the grid;
 *   test_params_opts.c     argument and option validation, spreadinterponly, check_points;
 *   test_params_table.c    the option table: its rows, defaults, the setter and its messages;
 *   test_params_bins.c     bins and method, the bin scan's tiles, size limits, reference cases;
 *   test_params_cost.c     the choice of sigma and width by predicted time (upsampfac 0);
 *   test_params_det.c      opts.deterministic and the OD method: choice, shapes, refusals;
 *   test_params_real.c     opts.real_data: the field, its refusals, real plans' sizes.
 */
#ifndef WARPFFT_TEST_PARAMS_H
#define WARPFFT_TEST_PARAMS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "params/base.h"
#include "params/bins.h"
#include "params/grid.h"
#include "params/kernel.h"
#include "params/params.h"
#include "params/width.h"
#include "runtime/error.h"

#define PI 3.14159265358979323846

/* The options warpfft_opts_default gives. */
static inline warpfft_opts defaults(void) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    return o;
}

/* ---- test_params_kernel.c: the reference kernel, independent of kernel.c's shortcuts ---- */
/* The kernel itself is kernels/kernel_shape.h (through params/kernel.h): wf_kernel_def is its
 * defining formula, wf_kshape_* its evaluated and quadrature forms. */
/* The n-point Gauss-Legendre rule into x, wt on the first call (*ready 0 -> 1). */
void gl_once(int n, double *x, double *wt, int *ready);
/* The kernel as the device evaluates it at offset z of a footprint of w (0 at w/2). */
double phi_dev(double z, int w, double beta);
/* phihat at mode k of a fine grid nf, by 400 Gauss-Legendre nodes on the full interval. */
double phihat_ref(double k, int64_t nf, int width, double beta);
void test_kernel_shape(void);
void test_gauss_legendre(void);
void test_phihat(void);

/* ---- test_params_width.c ---- */
void test_width_beta(void);
void test_alias_sampling(void);
void test_tol_floor(void);

/* ---- test_params_cost.c ---- */
void test_cost_choice(void);

/* ---- test_params_emulate.c ---- */
/* The pipelines emulated on the host, brute force (dims 1-3, N_d <= 64, w <= 16): M points at
 * fine-grid coordinates u[d][j] on the grid nf, kernel (w, beta); returns the relative l2 error
 * against the exact sum. Type 1 takes strengths (cr, ci)[M], type 2 mode coefficients (fr,
 * fi)[N_0 N_1 N_2], mode k at index (k_0 + N_0/2) + N_0 ((k_1 + N_1/2) + N_1 (k_2 + N_2/2)). */
double emulate_t1(int dim, const int64_t N[3], const int64_t nf[3], int w, double beta, int M,
                  double *const u[3], const double *cr, const double *ci);
double emulate_t2(int dim, const int64_t N[3], const int64_t nf[3], int w, double beta, int M,
                  double *const u[3], const double *fr, const double *fi);
void test_alias_emulation(void);

/* ---- test_params_points.c: point sets and the first-order error from every point ---- */
enum {
    SET_UNIFORM,   /* uniform in [-pi, pi)^d */
    SET_NORMAL,    /* N(0, 1) per coordinate, folded (NonuniformFFTs.jl's benchmark) */
    SET_RADIAL,    /* spokes through 0 (benches/suite_b/model.rs), equispaced samples */
    SET_CLUSTERED, /* 16 Gaussian clusters of 2 mode cells holding 90%, the rest uniform */
    SET_NODES,     /* every point on a grid node */
    SET_HALF,      /* every point half-way between nodes */
    SET_LATTICE,   /* nodes jittered by up to 1e-3 of a cell */
    SET_SAME,      /* one random offset per point, the same in every dim (dims dependent) */
    SET_ONE,       /* every point at offset 0.3 in every dim */
    N_SETS
};
typedef struct pts {
    int M;
    double *x[3], *u[3];
} pts;
extern const char *const pts_set_name[N_SETS];
/* Uniform in [0, 1) and standard normal numbers from one deterministic stream. */
double pts_urand(void);
double pts_grand(void);
/* M points of a kind (radians, x) and their fine-grid coordinates (u = wf_fold(x, nf)) for modes
 * N on the grid nf; pts_free releases them. */
pts pts_new(int kind, int dim, const int64_t N[3], const int64_t nf[3], int M);
void pts_free(pts *p);
/* max over the mode tuples (ks[d][0..nk[d]-1] per dim) of mean_j |sum_d E_d(k_d, u_jd)|^2, the
 * first-order error^2 of data all in one mode, E from phi_dev and phihat_ref; kbest: the mode. */
double pts_direct_max(int dim, const int64_t nf[3], int w, double beta, const pts *p,
                      double *const ks[3], const int nk[3], double kbest[3]);
/* Every mode per dim; or the 3 outermost at each edge and 2 random ones. pts_free_modes frees. */
void pts_all_modes(int dim, const int64_t N[3], double *ks[3], int nk[3]);
void pts_some_modes(int dim, const int64_t N[3], double *ks[3], int nk[3]);
void pts_free_modes(double *ks[3]);

/* ---- test_params_offsets.c ---- */
void test_offsets_gather(void);
void test_offsets_bound(void);
void test_offsets_choice(void);
void test_offsets_emulate(void);

/* ---- test_params_grid.c ---- */
void test_fine_grid(void);
void test_modes(void);
void test_fold(void);
void test_fold_far(void);

/* ---- test_params_opts.c ---- */
void test_validation_args(void);
void test_validation_tol(void);
void test_validation_opts(void);
void test_validation_size(void);
void test_spreadinterponly(void);
void test_check_points(void);
void test_table_rows(void);
void test_table_set(void);
void test_table_sizes(void);

/* ---- test_params_det.c ---- */
void test_deterministic_field(void);
void test_deterministic_auto(void);
void test_od_shapes(void);
void test_od_requests(void);
void test_od_bins(void);
void test_deterministic_info(void);

/* ---- test_params_real.c ---- */
void test_real_field(void);
void test_real_refusals(void);
void test_real_sizes(void);

/* ---- test_params_bins.c ---- */
void test_bins(void);
void test_sm_blocks(void);
void test_smr_table(void);
void test_smr_plans(void);
void test_scan_tiles(void);
void test_method_fallback(void);
void test_method_density(void);
void test_fine_dim_limit(void);
void test_fine_dim_limit_nd(void);
void test_reference_cases(void);

#endif /* WARPFFT_TEST_PARAMS_H */
