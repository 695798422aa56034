/*
 * test_params.c — unit tests of the plan parameters, c_core/src/params/params.h (params.c,
 * kernel.c, width.c, offsets.c, grid.c, bins.c; no GPU): kernel width and shape, fine-grid sizes,
 * Gauss-Legendre quadrature and deconvolution factors, mode ordering, point folding, argument
 * validation through warpfft_plan_params, bins and method choice, the deterministic option.
 *
 * Build and run: c_core/tests/run_test_params.sh (ASan + UBSan). Prints "N passed, M failed";
 * exits non-zero on any failure. This file: main and the counters (and the stub error
 * functions of a build without error.c); the groups of checks are test_params_*.c, listed in
 * test_params.h.
 */
#include "test_params.h"

#ifdef WF_TEST_STUB_ERROR /* error.c is not there yet */
#include "stub_error.h"
#endif

int n_pass, n_fail;

int main(void) {
    test_width_beta();
    test_alias_sampling();
    test_alias_emulation();
    test_offsets_gather();
    test_offsets_bound();
    test_offsets_choice();
    test_offsets_emulate();
    test_fine_dim_limit();
    test_fine_dim_limit_nd();
    test_fine_grid();
    test_kernel_shape();
    test_gauss_legendre();
    test_phihat();
    test_modes();
    test_fold();
    test_fold_far();
    test_tol_floor();
    test_cost_choice();
    test_validation_args();
    test_validation_tol();
    test_validation_opts();
    test_validation_size();
    test_spreadinterponly();
    test_check_points();
    test_table_rows();
    test_table_set();
    test_table_sizes();
    test_bins();
    test_sm_blocks();
    test_smr_table();
    test_smr_plans();
    test_scan_tiles();
    test_method_fallback();
    test_method_density();
    test_reference_cases();
    test_deterministic_field();
    test_deterministic_auto();
    test_od_shapes();
    test_od_requests();
    test_od_bins();
    test_deterministic_info();
    test_real_field();
    test_real_refusals();
    test_real_sizes();
    return check_summary("");
}
