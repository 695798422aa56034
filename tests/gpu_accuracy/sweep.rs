//! The main table: dim × type × precision × tol × method, with mode order, batch size,
//! odd/even sizes, small/large M, points folded from outside [-π, π) and points clustered in
//! one bin cycled through the cases, upsampling 1.25 in every dim and type, and every case again
//! at another upsampling factor (`with_sigmas`: the plan's choice, or 1.5 to 3).

use crate::cases::{case, dims_types, with_sigmas, Case, Dist, LEAD};
use crate::common::{gpu_or_skip, Failures};
use crate::{refused_ok, run};

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let mut k = 0usize;
    for (dim, ty) in dims_types() {
        for (f64, tols) in [
            (false, &[1e-2, 1e-5][..]),
            (true, &[1e-2, 1e-5, 1e-9, 1e-12][..]),
        ] {
            for &tol in tols {
                for method in [1, 2] {
                    // two variants per combination, cycling the remaining factors
                    for _ in 0..2 {
                        k += 1;
                        let odd = k % 2 == 1;
                        let base: i64 = match dim {
                            1 => 2000,
                            2 => 96,
                            _ => 24,
                        };
                        let nd = base + i64::from(odd);
                        let mut n = [1i64; 3];
                        for (d, nd_d) in n.iter_mut().take(dim as usize).enumerate() {
                            *nd_d = nd + d as i64; // unequal sizes per dim
                        }
                        let large = k % 3 == 0;
                        let m = if large {
                            200_000
                        } else {
                            3_000 + (k as i64 % 7)
                        };
                        let dist = match k % 5 {
                            0 => Dist::Cluster,
                            1 => Dist::Wide,
                            _ => Dist::Uniform,
                        };
                        v.push(Case {
                            method,
                            modeord: (k / 2 % 2) as i32,
                            ntransf: if k % 4 < 2 { 1 } else { 3 },
                            ..case(dim, ty, f64, tol, n, m, dist)
                        });
                    }
                }
            }
        }
    }
    // upsampling 1.25 (smaller fine grid, wider kernel): every dim and type, both precisions
    for (dim, ty) in dims_types() {
        // f32 3D at 1.25 refuses 1e-4: its rounding floor (the deconvolution's amplification,
        // c_core/src/params/grid.c) is above it; 2D at 1e-4 measured 1.1e-5
        for (f64, tol) in [(false, if dim == 3 { 1e-3 } else { 1e-4 }), (true, 1e-8)] {
            k += 1;
            let base: i64 = [1500, 80, 20][dim as usize - 1];
            let mut n = [1i64; 3];
            for (d, nd) in n.iter_mut().take(dim as usize).enumerate() {
                *nd = base + d as i64 + (k % 2) as i64;
            }
            v.push(Case {
                method: 1 + (k % 2) as i32,
                upsampfac: 1.25,
                ..case(dim, ty, f64, tol, n, 20_000, Dist::Uniform)
            });
        }
    }
    v
}

#[test]
fn accuracy_table() {
    if !gpu_or_skip("gpu_accuracy::accuracy_table") {
        return;
    }
    let mut failures = Failures::default();
    println!(
        "{LEAD} {:>6} {:>3} {:>3} {:>4} {:>16} {:>7} {:>7} {:>9}  ok",
        "method", "ord", "nt", "up", "N", "M", "dist", "rel_err"
    );
    for (i, c) in with_sigmas(cases()).iter().enumerate() {
        let r = run(c, 1000 + i as u64);
        let (err_s, ok) = match &r {
            Ok(o) => (format!("{:.2e}", o.err), o.err <= c.tol.max(o.floor)),
            Err(e) => (e.clone(), refused_ok(c, e)),
        };
        println!(
            "{} {:>6} {:>3} {:>3} {:>4} {:>16} {:>7} {:>7} {:>9}  {}",
            c.lead(),
            if c.method == 1 { "GM" } else { "SM" },
            c.modeord,
            c.ntransf,
            c.upsampfac,
            format!("{:?}", &c.n[..c.dim as usize]),
            c.m,
            format!("{:?}", c.dist),
            err_s,
            failures.verdict(ok, || format!("{c:?}: {err_s}"))
        );
    }
    failures.assert_none("above tol");
}
