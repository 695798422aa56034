//! The main table: dim × type × precision × tol × method, with mode order, batch size,
//! odd/even sizes, small/large M, points folded from outside [-π, π) and points clustered in
//! one bin cycled through the cases, upsampling 1.25 in every dim and type, and every case again
//! at another upsampling factor (`with_sigmas`: the plan's choice, or 1.5 to 3).

use crate::cases::{with_sigmas, Case, Dist};
use crate::common::gpu_or_skip;
use crate::{refused_ok, run};

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let mut k = 0usize;
    for dim in 1..=3 {
        for ty in [1, 2] {
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
                                dim,
                                ty,
                                f64,
                                tol,
                                method,
                                modeord: (k / 2 % 2) as i32,
                                ntransf: if k % 4 < 2 { 1 } else { 3 },
                                n,
                                m,
                                dist,
                                upsampfac: 2.0,
                                edge_only: false,
                                bin_size: [0; 3],
                            });
                        }
                    }
                }
            }
        }
    }
    // upsampling 1.25 (smaller fine grid, wider kernel): every dim and type, both precisions
    for dim in 1..=3 {
        for ty in [1, 2] {
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
                    dim,
                    ty,
                    f64,
                    tol,
                    method: 1 + (k % 2) as i32,
                    modeord: 0,
                    ntransf: 1,
                    n,
                    m: 20_000,
                    dist: Dist::Uniform,
                    upsampfac: 1.25,
                    edge_only: false,
                    bin_size: [0; 3],
                });
            }
        }
    }
    v
}

#[test]
fn accuracy_table() {
    if !gpu_or_skip("gpu_accuracy::accuracy_table") {
        return;
    }
    let mut failures = Vec::new();
    println!(
        "{:>3} {:>4} {:>4} {:>7} {:>6} {:>3} {:>3} {:>4} {:>16} {:>7} {:>7} {:>9}  ok",
        "dim", "type", "prec", "tol", "method", "ord", "nt", "up", "N", "M", "dist", "rel_err"
    );
    for (i, c) in with_sigmas(cases()).iter().enumerate() {
        let r = run(c, 1000 + i as u64);
        let (err_s, ok) = match &r {
            Ok(o) => (format!("{:.2e}", o.err), o.err <= c.tol.max(o.floor)),
            Err(e) => (e.clone(), refused_ok(c, e)),
        };
        println!(
            "{:>3} {:>4} {:>4} {:>7.0e} {:>6} {:>3} {:>3} {:>4} {:>16} {:>7} {:>7} {:>9}  {}",
            c.dim,
            c.ty,
            if c.f64 { "f64" } else { "f32" },
            c.tol,
            if c.method == 1 { "GM" } else { "SM" },
            c.modeord,
            c.ntransf,
            c.upsampfac,
            format!("{:?}", &c.n[..c.dim as usize]),
            c.m,
            format!("{:?}", c.dist),
            err_s,
            if ok { "yes" } else { "NO" }
        );
        if !ok {
            failures.push(format!("{c:?}: {err_s}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) above tol:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
