/*
 * test_params.h — what the plan-parameter tests share beyond check.h (the reference kernel of
 * test_params_kernel.c, the default options) and the test groups main (test_params.c) runs, one
 * file per part of params.h:
 *   test_params_kernel.c   Gauss-Legendre quadrature, phihat and the deconvolution factors;
 *   test_params_width.c    beta, the aliasing model, the width rule, the accuracy floor;
 *   test_params_emulate.c  the width rule's bound against a brute-force type 1 on the host;
 *   test_params_grid.c     fine-grid sizes, mode ordering, folding points into the grid;
 *   test_params_opts.c     argument and option validation, spreadinterponly, check_points;
 *   test_params_table.c    the option table: its rows, defaults, the setter and its messages;
 *   test_params_bins.c     bins and method, the bin scan's tiles, size limits, reference cases;
 *   test_params_cost.c     the choice of sigma and width by predicted time (upsampfac 0);
 *   test_params_det.c      opts.deterministic and the OD method: choice, shapes, refusals.
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
/* The n-point Gauss-Legendre rule into x, wt on the first call (*ready 0 -> 1). */
void gl_once(int n, double *x, double *wt, int *ready);
/* The kernel by its defining formula, at a = t / (w/2) in (-1, 1). */
double phi_sinh(double a, double beta);
/* The kernel as the device evaluates it at offset z of a footprint of w (0 at w/2). */
double phi_dev(double z, int w, double beta);
/* phihat at mode k of a fine grid nf, by 400 Gauss-Legendre nodes on the full interval. */
double phihat_ref(double k, int64_t nf, int width, double beta);
void test_gauss_legendre(void);
void test_phihat(void);

/* ---- test_params_width.c ---- */
void test_width_beta(void);
void test_alias_sampling(void);
void test_tol_floor(void);

/* ---- test_params_cost.c ---- */
void test_cost_choice(void);

/* ---- test_params_emulate.c ---- */
void test_alias_emulation(void);

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

/* ---- test_params_bins.c ---- */
void test_bins(void);
void test_sm_blocks(void);
void test_scan_tiles(void);
void test_method_fallback(void);
void test_method_density(void);
void test_fine_dim_limit(void);
void test_fine_dim_limit_nd(void);
void test_reference_cases(void);

#endif /* WARPFFT_TEST_PARAMS_H */
