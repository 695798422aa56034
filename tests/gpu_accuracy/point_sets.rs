//! The point sets of issue 14, each a table over dims, types, precisions and tols:
//! grid-aligned points, tight f32 clusters of 10⁶ points, far points (|x| up to 1e4), the band
//! edge. Each table is skipped (visibly) without a GPU.

use crate::cases::{case, dim_type_prec_tol, dims_types, sizes, tols, with_sigmas, Dist};
use crate::run_table;

/// Grid-aligned point sets (issue 14: on the H100 the rule before it missed tol by up to 6.5x on
/// them): every point on a node, half-way between nodes, half on nodes, and ±π with the values
/// next to them, for every dim × type × precision × tol. The width rule bounds the worst offset.
#[test]
fn grid_aligned() {
    let mut v = Vec::new();
    let mut k = 0;
    for (dim, ty, f64, tol) in dim_type_prec_tol() {
        for dist in [Dist::Nodes, Dist::HalfNodes, Dist::MixNodes, Dist::NearPi] {
            k += 1;
            let mut c = case(dim, ty, f64, tol, sizes(dim, k % 2 == 1), 20_000, dist);
            c.method = 1 + (k % 2);
            v.push(c);
        }
    }
    run_table("grid-aligned points", &with_sigmas(v), 5000);
}

/// Tight clusters in f32 (σ = 1e-3, M = 10⁶): every dim × type, GM and SM, two tols. GM type 1
/// carries the documented pile-up floor of float atomics (docs/accuracy.md).
#[test]
fn tight_clusters_f32() {
    let mut v = Vec::new();
    for (dim, ty) in dims_types() {
        for tol in [1e-3, 1e-5] {
            for method in [1, 2] {
                let mut c = case(
                    dim,
                    ty,
                    false,
                    tol,
                    sizes(dim, false),
                    1_000_000,
                    Dist::Tight,
                );
                c.method = method;
                v.push(c);
            }
        }
    }
    run_table("tight f32 clusters, M = 1e6", &with_sigmas(v), 6000);
}

/// Far points, |x| up to 1e4 (issue 14: 9x tol with a single-double 2π fold), f64 at three tols
/// in every dim and type, 1D up to N = 1e5 (where the rounding floor N 2^-52 = 2.2e-11 is above
/// tol 1e-12: the plan reports it); f32 at 1e-5.
#[test]
fn far_points() {
    let mut v = Vec::new();
    for dim in 1..=3 {
        for ty in [1, 2] {
            for &tol in tols(true) {
                v.push(case(
                    dim,
                    ty,
                    true,
                    tol,
                    sizes(dim, ty == 2),
                    20_000,
                    Dist::Far,
                ));
            }
            v.push(case(
                dim,
                ty,
                false,
                1e-5,
                sizes(dim, false),
                20_000,
                Dist::Far,
            ));
        }
        if dim == 1 {
            for ty in [1, 2] {
                for tol in [1e-9, 1e-12] {
                    v.push(case(1, ty, true, tol, [100_000, 1, 1], 200_000, Dist::Far));
                }
            }
        }
    }
    run_table("far points, |x| < 1e4", &with_sigmas(v), 7000);
}

/// The band edge: type 2 with all energy in the corner mode k = (-N/2, ..), type 1 measured
/// on the lowest 5% of the first dimension's modes; random and grid-aligned points. Before
/// issue 14 this was the documented exception (up to 1.58x tol); the width rule now covers it.
#[test]
fn band_edge() {
    let mut v = Vec::new();
    for (dim, ty, f64, tol) in dim_type_prec_tol() {
        for dist in [Dist::Uniform, Dist::Nodes] {
            let mut c = case(dim, ty, f64, tol, sizes(dim, false), 20_000, dist);
            c.edge_only = true;
            v.push(c);
        }
    }
    run_table("band edge", &with_sigmas(v), 8000);
}

/// A 3D f64 type-2 plan made without `points_hint` keeps SM at creation; each set-points then
/// interpolates by GM when its M gives fewer than 0.2 points per fine-grid cell, by SM
/// otherwise (c_core/src/params/bins.c, `wf_late_gm`), within tol either way (issue 39).
#[test]
fn late_gm_follows_m() {
    use crate::common::{gpu_or_skip, transform_error, Rng};
    use warpfft::{Complex, Method, Plan, TransformType};
    if !gpu_or_skip("gpu_accuracy::point_sets::late_gm_follows_m") {
        return;
    }
    let n = [32usize, 32, 32];
    let tol = 1e-6;
    let mut plan = Plan::<f64>::builder(TransformType::Type2, &n)
        .tol(tol)
        .build()
        .expect("plan");
    let info = plan.info().expect("info");
    assert_eq!(info.method, Method::SharedMemory, "before set-points");
    let fine: usize = info.n_fine.iter().product();
    let modes: usize = n.iter().product();
    let mut rng = Rng::new(7);
    for (m, want) in [
        (fine / 50, Method::GlobalMemory),
        (fine / 2, Method::SharedMemory),
        (fine / 50, Method::GlobalMemory),
    ] {
        let x: Vec<Vec<f64>> = rng.coords(3, m, std::f64::consts::PI);
        plan.set_points(&x).expect("set_points");
        let fk: Vec<Complex<f64>> = (0..modes)
            .map(|_| Complex::new(rng.sym(1.0), rng.sym(1.0)))
            .collect();
        let mut c = vec![Complex::new(0.0, 0.0); m];
        plan.execute(&fk, &mut c).expect("execute");
        let got = plan.info().expect("info").method;
        let sample: Vec<usize> = (0..256).map(|_| rng.below(m as u64) as usize).collect();
        let err = transform_error(&plan, &fk, &c, (modes, m), 0, &sample).expect("direct");
        println!(
            "late GM: M = {m} ({:.3} per cell): {got:?}, error {err:.2e}",
            m as f64 / fine as f64
        );
        assert!(
            got == want && err <= tol,
            "M = {m}: method {got:?} (want {want:?}), error {err:.2e} (tol {tol:e})"
        );
    }
}
