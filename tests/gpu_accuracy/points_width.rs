//! The width the points take (issue 39; docs/accuracy.md, "The width the points need"): a plan
//! whose every-point-set width `w_hi` has a narrower candidate chooses the width at setpts, on
//! the device, from statistics of the points' fine-grid offsets. The contract stays "error ≤
//! tol for every point set":
//! - `width_from_points`: uniform, normal, radial, clustered, on-node, half-node and
//!   near-lattice (1e-3 of a cell) sets in 1D/2D/3D, f32 and f64, types 1 and 2, at an
//!   upsampling factor where a candidate exists: every error ≤ max(tol, floor); uniform, normal,
//!   radial and clustered sets run narrower than `w_hi`; sets on or near the footprint edge of a
//!   candidate (nodes for even widths, half-way for odd ones) never take that candidate (the
//!   host rule's result at these shapes, c_core/tests/test_params_offsets.c);
//! - `statistics_equal_the_hosts`: the statistics the device gathered
//!   (`warpfft_plan_points_width`) equal a host count of the same coordinates bit for bit;
//! - `sets_take_the_widest`: point sets (`warpfft_setpts_sets`) take the widest of their own
//!   choices;
//! - `adjoint_to_rounding`: a type-1 and a type-2 plan of the same problem choose the same
//!   width for the same points, so they are adjoint to rounding (not merely to tol).

use crate::adjoint::AdjointData;
use crate::cases::{case, sizes, Case, Dist, LEAD};
use crate::common::*;
use crate::{create_plan, run};
use warpfft::sys;

// The tests' diagnostic of the width the points take: exported by the library, not part of
// warpfft.h's ABI (c_core/src/api/diagnostics.h says what it does).
extern "C" {
    fn warpfft_plan_points_width(
        plan: sys::warpfft_plan,
        widths: *mut i32,
        n_widths: *mut i32,
        in_use: *mut i32,
        stats: *mut u64,
        n_stats: i64,
    ) -> sys::warpfft_status;
}
/// u64 words of one point set's statistics (diagnostics.h's WARPFFT_OFFSET_STATS_WORDS).
const STATS_WORDS: usize = 1 + 3 * 256 + 3 * 64 * 64;

/// Shapes where a candidate exists and random points of this many take it (checked on the host
/// with the same rule): (dim, f64, tol, upsampfac) at `sizes(dim, false)`.
const SHAPES: [(i32, bool, f64, f64); 6] = [
    (1, false, 1e-5, 1.75), // w_hi 8, candidate 7
    (1, true, 1e-9, 2.25),  // 11, 10
    (2, false, 1e-5, 2.5),  // 7, 6
    (2, true, 1e-9, 2.5),   // 11, 10
    (3, false, 1e-5, 2.5),  // 7, 6
    (3, true, 1e-6, 2.0),   // 9, 8
];
const M: i64 = 50_000;

/// The widths plan may run with (narrowest first, the last `w_hi`), the one its points took,
/// and, with `words` > 0, the statistics of its last setpts.
fn points_width(plan: sys::warpfft_plan, words: usize) -> (Vec<i32>, i32, Vec<u64>) {
    let (mut w, mut n, mut in_use) = ([0i32; 4], 0i32, 0i32);
    let mut stats = vec![0u64; words];
    check(
        unsafe {
            warpfft_plan_points_width(
                plan,
                w.as_mut_ptr(),
                &mut n,
                &mut in_use,
                if words > 0 {
                    stats.as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                },
                words as i64,
            )
        },
        "plan_points_width",
    );
    (w[..n as usize].to_vec(), in_use, stats)
}

/// A plan of case c's problem, checked points (the choice read back at setpts).
fn plan_of(c: &Case, iflag: i32) -> sys::warpfft_plan {
    let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_opts_default(&mut opts) },
        "opts_default",
    );
    opts.upsampfac = c.upsampfac;
    opts.check_points = 1;
    checked(create_plan(c, iflag, &opts), "plan_create")
}

/// The case of a shape: one transform of M points of `dist` at the shape's upsampfac.
fn shape_case(s: (i32, bool, f64, f64), ty: i32, dist: Dist) -> Case {
    let (dim, f64, tol, sigma) = s;
    let mut c = case(dim, ty, f64, tol, sizes(dim, false), M, dist);
    c.upsampfac = sigma;
    c
}

#[test]
fn width_from_points() {
    if !gpu_or_skip("gpu_accuracy::width_from_points") {
        return;
    }
    let sets = [
        Dist::Uniform,
        Dist::Normal,
        Dist::Radial,
        Dist::Cluster,
        Dist::Nodes,
        Dist::HalfNodes,
        Dist::Lattice,
    ];
    let mut failures = Failures::default();
    println!("== the width the points take (M = {M})");
    println!(
        "{LEAD} {:>5} {:>9} {:>5} {:>3} {:>9} {:>7}  ok",
        "sigma", "points", "w_hi", "w", "rel_err", "err/tol"
    );
    let mut k = 0u64;
    for s in SHAPES {
        for ty in [1, 2] {
            for dist in sets {
                k += 1;
                let c = shape_case(s, ty, dist);
                let r = run(&c, 39_000 + k);
                let (row, ok) = match &r {
                    Ok(o) => {
                        // narrower for random points; a candidate whose footprint edge the
                        // points sit on (or within 1e-3 of a cell of) is never taken
                        let width_ok = match dist {
                            Dist::Nodes | Dist::Lattice => o.width == o.w_hi || o.width % 2 == 1,
                            Dist::HalfNodes => o.width == o.w_hi || o.width % 2 == 0,
                            // a cube of 8 fine cells: few bins, fewer independent samples than
                            // the choice needs where bins are small (offsets_bound.h's
                            // WF_OFF_MIN_SAMPLES), either width
                            Dist::Cluster => true,
                            _ => o.width < o.w_hi,
                        };
                        (
                            format!(
                                "{:>5} {:>3} {:>9.2e} {:>7.2}",
                                o.w_hi,
                                o.width,
                                o.err,
                                o.err / c.tol
                            ),
                            o.err <= c.tol.max(o.floor) && width_ok && o.width <= o.w_hi,
                        )
                    }
                    Err(e) => (e.clone(), false),
                };
                println!(
                    "{} {:>5} {:>9} {}  {}",
                    c.lead(),
                    c.upsampfac,
                    format!("{dist:?}"),
                    row,
                    failures.verdict(ok, || format!("{c:?}: {row}"))
                );
            }
        }
    }
    failures.assert_none("failed: the width the points take");
}

/// wf_fold of c_core/src/params/grid.c (kernels/common.cuh), in Rust, the same operations:
/// u = frac(x / 2π)·nf by a two-part 2π, in [0, nf).
fn fold(x: f64, nf: i64) -> f64 {
    // grid.c's literals: 1/(2π) and 2π rounded to double (the constants', exactly), and the
    // rest of 2π
    const INV_2PI: f64 = std::f64::consts::FRAC_1_PI / 2.0;
    const HI: f64 = std::f64::consts::TAU;
    const LO: f64 = 2.449_293_598_294_706_4e-16;
    let q = x * INV_2PI;
    let mut n = q.round(); // rint: ties to even
    if (q - q.trunc()).abs() == 0.5 && n % 2.0 != 0.0 {
        n -= q.signum();
    }
    let r = (-n).mul_add(HI, x);
    let r = (-n).mul_add(LO, r);
    let mut u = r * INV_2PI;
    u -= u.floor();
    u *= nf as f64;
    if u >= nf as f64 {
        u -= nf as f64;
    }
    u
}

/// The statistics of one point set (warpfft.h, warpfft_plan_points_width): count, cell[3][256],
/// joint[3][64·64] of the pairs (0,1), (0,2), (1,2); a non-finite point at coordinate 0.
fn host_stats(pts: &[Vec<f64>], nf: [i64; 3], lo: usize, hi: usize) -> Vec<u64> {
    let dim = pts.len();
    let mut s = vec![0u64; STATS_WORDS];
    let pairs: &[(usize, usize)] = match dim {
        1 => &[],
        2 => &[(0, 1)],
        _ => &[(0, 1), (0, 2), (1, 2)],
    };
    for j in lo..hi {
        let finite = pts.iter().all(|p| p[j].is_finite());
        let mut cell = [0usize; 3];
        for d in 0..dim {
            let u = fold(if finite { pts[d][j] } else { 0.0 }, nf[d]);
            cell[d] = (((u - u.floor()) * 256.0) as usize).min(255);
            s[1 + d * 256 + cell[d]] += 1;
        }
        for (p, &(a, b)) in pairs.iter().enumerate() {
            s[1 + 3 * 256 + p * 4096 + (cell[a] / 4) * 64 + cell[b] / 4] += 1;
        }
        s[0] += 1;
    }
    s
}

/// Uploads points (as the precision rounds them: the host count sees the same values).
fn upload(pts: &[Vec<f64>], f64: bool) -> (Vec<Dev>, Vec<Vec<f64>>) {
    let seen: Vec<Vec<f64>> = pts
        .iter()
        .map(|p| {
            p.iter()
                .map(|&v| if f64 { v } else { f64::from(v as f32) })
                .collect()
        })
        .collect();
    (seen.iter().map(|p| Dev::from_reals(f64, p)).collect(), seen)
}

#[test]
fn statistics_equal_the_hosts() {
    if !gpu_or_skip("gpu_accuracy::statistics_equal_the_hosts") {
        return;
    }
    for (i, s) in SHAPES.iter().enumerate() {
        for dist in [Dist::Uniform, Dist::Nodes, Dist::Far, Dist::NearPi] {
            let c = shape_case(*s, 1 + (i as i32 % 2), dist);
            let plan = plan_of(&c, 1);
            let _g = PlanGuard(plan);
            let nf = plan_info(plan).n_fine;
            let mut rng = Rng::new(4000 + i as u64);
            let (dp, seen) = upload(&crate::cases::points(&mut rng, &c, nf), c.f64);
            let ptr = |d: usize| point_ptr(&dp, d);
            check(
                unsafe { sys::warpfft_setpts(plan, precision(c.f64), M, ptr(0), ptr(1), ptr(2)) },
                "setpts",
            );
            let words = STATS_WORDS;
            let (widths, in_use, got) = points_width(plan, words);
            let want = host_stats(&seen, nf, 0, M as usize);
            println!(
                "statistics {}D {} {:?}: widths {widths:?}, in use {in_use}: {}",
                c.dim,
                c.prec(),
                dist,
                if got == want { "equal" } else { "DIFFER" }
            );
            assert!(widths.len() >= 2, "no candidate: {c:?}");
            assert!(got == want, "statistics differ from the host's: {c:?}");
        }
    }
}

#[test]
fn sets_take_the_widest() {
    if !gpu_or_skip("gpu_accuracy::sets_take_the_widest") {
        return;
    }
    for (i, s) in SHAPES.iter().enumerate() {
        for wide in [false, true] {
            let mut c = shape_case(*s, 2 - (i as i32 % 2), Dist::Uniform);
            c.ntransf = 2;
            let plan = plan_of(&c, 1);
            let _g = PlanGuard(plan);
            let nf = plan_info(plan).n_fine;
            // the second set: uniform too, or on the candidate's footprint edge (nodes for an
            // even width, half-way for an odd one), which takes w_hi
            let w_lo = points_width(plan, 0).0[0];
            let second = match (wide, w_lo % 2) {
                (false, _) => Dist::Uniform,
                (true, 0) => Dist::Nodes,
                _ => Dist::HalfNodes,
            };
            let mut rng = Rng::new(5000 + i as u64);
            let mut pts = crate::cases::points(&mut rng, &c, nf);
            let c2 = Case {
                dist: second,
                ..c.clone()
            };
            for (p, q) in pts.iter_mut().zip(crate::cases::points(&mut rng, &c2, nf)) {
                p.extend(q);
            }
            let (dp, seen) = upload(&pts, c.f64);
            let ptr = |d: usize| point_ptr(&dp, d);
            check(
                unsafe {
                    sys::warpfft_setpts_sets(plan, precision(c.f64), 2, M, ptr(0), ptr(1), ptr(2))
                },
                "setpts_sets",
            );
            let words = STATS_WORDS;
            let (widths, in_use, got) = points_width(plan, 2 * words);
            let w_hi = *widths.last().unwrap();
            let info = plan_info(plan);
            let want = [
                host_stats(&seen, nf, 0, M as usize),
                host_stats(&seen, nf, M as usize, 2 * M as usize),
            ]
            .concat();
            println!(
                "sets {}D {}: uniform + {second:?}: widths {widths:?}, in use {in_use}",
                c.dim,
                c.prec()
            );
            assert!(
                got == want,
                "the sets' statistics differ from the host's: {c:?}"
            );
            assert!(
                info.width == in_use,
                "plan_info {} after a checked setpts",
                info.width
            );
            assert!(
                if wide { in_use == w_hi } else { in_use < w_hi },
                "uniform + {second:?}: width {in_use} of {widths:?}"
            );
        }
    }
}

#[test]
fn adjoint_to_rounding() {
    if !gpu_or_skip("gpu_accuracy::adjoint_to_rounding") {
        return;
    }
    for (i, s) in SHAPES.iter().enumerate() {
        let c = shape_case(*s, 1, Dist::Uniform);
        let f64 = c.f64;
        let mut rng = Rng::new(6000 + i as u64);
        let nm: i64 = c.n.iter().product();
        let (p1, p2) = (plan_of(&c, 1), plan_of(&Case { ty: 2, ..c.clone() }, -1));
        let (_g1, _g2) = (PlanGuard(p1), PlanGuard(p2));
        let nf = plan_info(p1).n_fine;
        let (dp, _) = upload(&crate::cases::points(&mut rng, &c, nf), f64);
        let ptr = |d: usize| point_ptr(&dp, d);
        let data = AdjointData::new(&mut rng, f64, M, nm);
        let mut used = Vec::new();
        let mut floor = 0.0f64;
        for (plan, (cp, fp)) in [p1, p2].into_iter().zip(data.io()) {
            check(
                unsafe { sys::warpfft_setpts(plan, precision(f64), M, ptr(0), ptr(1), ptr(2)) },
                "setpts",
            );
            check(
                unsafe { sys::warpfft_execute(plan, precision(f64), cp, fp) },
                "execute",
            );
            let (widths, in_use, _) = points_width(plan, 0);
            let info = plan_info(plan);
            floor = floor.max(info.tol_floor);
            used.push((in_use, *widths.last().unwrap()));
        }
        check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
        let rel = data.gap();
        println!(
            "adjoint {}D {} tol {:e}: widths (type 1, type 2) {:?}, <A c, f> vs <c, A^H f>: \
             {rel:.2e} (floor {floor:.1e})",
            c.dim,
            if f64 { "f64" } else { "f32" },
            c.tol,
            used
        );
        assert!(
            used[0] == used[1] && used[0].0 < used[0].1,
            "type 1 and type 2 took widths {used:?}"
        );
        // rounding, not tol: within 10x the plans' rounding floor (f32 ~7e-7, f64 ~1e-15 plus
        // the coordinates' phase term N 2^-52, which both types share)
        assert!(rel < 10.0 * floor, "adjointness {rel:e}, floor {floor:e}");
    }
}
