//! More bins than the one-block scan is for: setpts takes the multi-block scan.

use crate::cases::{case, dims_types, Case, Dist};
use crate::{params_of, run_table};

/// Plans with more bins than the one-block scan is for (c_core/src/params/params.h,
/// WF_SCAN_BIG_BINS = 8192): setpts takes the multi-block scan of module scan_big
/// (kernels/scan_big.cu). Small opts.bin_size gives ~10⁴ (1D, 2D) and ~1.8·10⁴ (3D) bins, none
/// a multiple of the 1024-bin tile (asserted); every dim × type × precision, GM and SM, uniform
/// points (a few per bin) and a cluster (a cube of 8 fine-grid cells: a few bins hold every
/// point, each split into many subproblems, the other bins empty). `warpfft_setpts_check`
/// checks the device totals. The bin counts come from `warpfft_plan_params` (no GPU needed).
#[test]
fn many_bins_multi_block_scan() {
    let mut v = Vec::new();
    for (dim, ty) in dims_types() {
        let (n, bs) = match dim {
            1 => ([5000, 1, 1], [1, 1, 1]),
            2 => ([98, 98, 1], [2, 2, 1]),
            _ => ([24, 26, 28], [2, 2, 2]),
        };
        for (f64, tol) in [(false, 1e-4), (true, 1e-9)] {
            for method in [1, 2] {
                for dist in [Dist::Uniform, Dist::Cluster] {
                    let mut c = case(dim, ty, f64, tol, n, 200_000, dist);
                    c.method = method;
                    c.bin_size = bs;
                    v.push(c);
                }
            }
        }
    }
    // the bin counts the comment claims, from each case's fine grid (plan_params)
    for c in &v {
        let nbins = bins_of(c);
        println!("{}D {:?}: {nbins} bins", c.dim, c.bin_size);
        assert!(
            nbins > 8192 && nbins % 1024 != 0,
            "{c:?}: {nbins} bins (more than 8192, not a multiple of 1024 wanted)"
        );
    }
    run_table("many bins: the multi-block scan", &v, 7000);
}

/// The number of spreading bins of the plan case `c` would make (`warpfft_plan_params`).
fn bins_of(c: &Case) -> i64 {
    let info = params_of(c);
    (0..3)
        .map(|d| {
            let bs = i64::from(info.bin_size[d]);
            (info.n_fine[d] + bs - 1) / bs
        })
        .product()
}
