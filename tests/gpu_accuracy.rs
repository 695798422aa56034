//! Accuracy of types 1 and 2 against the exact non-uniform DFT (computed in double on the GPU by
//! `warpfft_direct_sample`), over dim × type × precision × tol × method, with modeord, ntransf,
//! odd/even sizes, small/large M, points folded from outside [-π, π) and points clustered in one
//! bin cycled through the cases; then the point sets of issue 14 (grid-aligned, the doubles next
//! to ±π, tight f32 clusters of 10⁶ points, far points, the band edge). Prints the tables.
//! Skips visibly without a GPU.
//!
//! The contract (README, Accuracy): relative l2 error ≤ max(tol, tol_floor) for ANY point set,
//! `tol_floor` being the plan's reported rounding floor (`warpfft_plan_info`). The reference sees
//! the coordinates the library saw (f32 points are summed as the f32 values) and reduces phases
//! exactly (kernels/direct.cu), so it is exact also for |x| up to 1e4.

mod common;
use common::*;
use std::os::raw::c_void;
use warpfft::sys;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dist {
    Uniform,
    Wide,    // uniform in [-3π, 3π): exercises folding
    Cluster, // all points inside one spreading bin
    /// every point exactly on a fine-grid node (x = -π + 2π l / nf)
    Nodes,
    /// every point half-way between two nodes (the worst offset for odd widths)
    HalfNodes,
    /// half the points on nodes, half uniform
    MixNodes,
    /// ±π, the doubles (or floats) next to them, 0, and nodes
    NearPi,
    /// a normal cloud of σ = 1e-3 around one location
    Tight,
    /// uniform in [-1e4, 1e4)
    Far,
}

#[derive(Clone, Debug)]
struct Case {
    dim: i32,
    ty: i32,
    f64: bool,
    tol: f64,
    method: i32,
    modeord: i32,
    ntransf: i64,
    n: [i64; 3],
    m: i64,
    dist: Dist,
    upsampfac: f64,
    /// type 2 input in the band-edge corner mode k = (-N/2, ..) only (even N, modeord 0)
    edge_only: bool,
    /// opts.bin_size (0: the default per dim)
    bin_size: [i32; 3],
}

struct Outcome {
    err: f64,
    /// the plan's reported rounding floor (`warpfft_plan_info::tol_floor`)
    floor: f64,
    width: i32,
}

/// The next representable value of the precision above (`up`) or below `v` (finite, nonzero;
/// by the bit pattern: `next_up` needs Rust 1.86, the crate's MSRV is 1.70).
fn next_to(v: f64, up: bool, f64: bool) -> f64 {
    let away = up == (v > 0.0); // away from zero: the magnitude's bit pattern grows
    if f64 {
        let b = v.to_bits();
        f64::from_bits(if away { b + 1 } else { b - 1 })
    } else {
        let b = (v as f32).to_bits();
        f64::from(f32::from_bits(if away { b + 1 } else { b - 1 }))
    }
}

/// Points of a case; `nf` is the plan's fine grid (grid-aligned sets).
fn points(rng: &mut Rng, c: &Case, nf: [i64; 3]) -> Vec<Vec<f64>> {
    let pi = std::f64::consts::PI;
    let node = |rng: &mut Rng, d: usize, half: f64| {
        let l = rng.below(nf[d] as u64) as f64 + half;
        -pi + 2.0 * pi * (l / nf[d] as f64)
    };
    (0..c.dim as usize)
        .map(|d| {
            let special = [
                -pi,
                pi,
                next_to(pi, true, c.f64),
                next_to(pi, false, c.f64),
                next_to(-pi, false, c.f64),
                next_to(-pi, true, c.f64),
                0.0,
            ];
            (0..c.m as usize)
                .map(|j| match c.dist {
                    Dist::Uniform => rng.range(-pi, pi),
                    Dist::Wide => rng.range(-3.0 * pi, 3.0 * pi),
                    // a cube of 8 fine-grid cells (upsampling 2) at an arbitrary place
                    Dist::Cluster => {
                        0.3 + d as f64 * 0.1 + rng.uniform() * 8.0 * pi / c.n[d] as f64
                    }
                    Dist::Nodes => node(rng, d, 0.0),
                    Dist::HalfNodes => node(rng, d, 0.5),
                    Dist::MixNodes if j % 2 == 0 => node(rng, d, 0.0),
                    Dist::MixNodes => rng.range(-pi, pi),
                    Dist::NearPi if j % 3 == 0 => special[rng.below(special.len() as u64) as usize],
                    Dist::NearPi => node(rng, d, 0.0),
                    Dist::Tight => {
                        // Box-Muller
                        let (a, b) = (rng.uniform().max(1e-300), rng.uniform());
                        let g = (-2.0 * a.ln()).sqrt() * (2.0 * pi * b).cos();
                        0.7 - 0.4 * d as f64 + 1e-3 * g
                    }
                    Dist::Far => rng.range(-1e4, 1e4),
                })
                .collect()
        })
        .collect()
}

/// Documented floor of f32 type 1 with the GM method for points that pile into the same
/// fine-grid cells (README, Accuracy): every point of a tight cluster adds into the same cells
/// with float atomics, ~2^-24 sqrt(M / 3) relative. It is a random walk (the atomics' order
/// changes from run to run): the 3D case at M = 1e6 measured 1.9e-5 to 8.5e-5 on the H100
/// against the scale's 3.4e-5, so the bound is 4x the scale (2x failed once at 8.5e-5).
fn gm_pileup_floor(c: &Case) -> f64 {
    if !c.f64 && c.ty == 1 && c.method == 1 && c.dist == Dist::Tight {
        2f64.powi(-24) * (c.m as f64 / 3.0).sqrt() * 4.0
    } else {
        0.0
    }
}

/// The plan options and precision of case `c`.
fn case_opts(c: &Case) -> (sys::warpfft_opts, sys::warpfft_precision) {
    let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_opts_default(&mut opts) },
        "opts_default",
    );
    opts.modeord = c.modeord;
    opts.method = c.method;
    opts.upsampfac = c.upsampfac;
    opts.bin_size = c.bin_size;
    (opts, precision(c.f64))
}

fn run(c: &Case, seed: u64) -> Result<Outcome, String> {
    let mut rng = Rng::new(seed);
    let (opts, prec) = case_opts(c);
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    let st = unsafe {
        sys::warpfft_plan_create(
            c.ty,
            c.dim,
            c.n.as_ptr(),
            1,
            c.ntransf,
            c.tol,
            prec,
            &opts,
            &mut plan,
        )
    };
    if st != sys::WARPFFT_SUCCESS {
        return Err(format!("plan_create: {}", last_error()));
    }
    let nmodes: i64 = c.n.iter().product();
    let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_plan_get_info(plan, &mut info) },
        "plan_get_info",
    );
    let pts = points(&mut rng, c, info.n_fine);
    let dpts: Vec<Dev> = pts.iter().map(|p| Dev::from_reals(c.f64, p)).collect();
    let ptr = |d: usize| point_ptr(&dpts, d);
    let _guard = PlanGuard(plan);
    {
        check(
            unsafe { sys::warpfft_setpts(plan, prec, c.m, ptr(0), ptr(1), ptr(2)) },
            "setpts",
        );
        // the binning's device totals: every point sorted, the subproblems within the capacity
        check(unsafe { sys::warpfft_setpts_check(plan) }, "setpts_check");
        let n_in = if c.ty == 1 { c.m } else { nmodes } * c.ntransf;
        let n_out = if c.ty == 1 { nmodes } else { c.m } * c.ntransf;
        let mut input: Vec<f64> = (0..2 * n_in).map(|_| rng.range(-1.0, 1.0)).collect();
        if c.edge_only && c.ty == 2 {
            // CMCL order, even N: flat index 0 of each transform is k = (-N/2, -N/2, ..)
            for (i, v) in input.iter_mut().enumerate() {
                if (i / 2) as i64 % nmodes != 0 {
                    *v = 0.0;
                }
            }
        }
        let din = Dev::from_reals(c.f64, &input);
        let dout = Dev::new((2 * n_out) as usize * real_bytes(c.f64));
        let (cptr, fkptr) = if c.ty == 1 {
            (din.ptr, dout.ptr)
        } else {
            (dout.ptr, din.ptr)
        };
        check(
            unsafe { sys::warpfft_execute(plan, prec, cptr, fkptr) },
            "execute",
        );
        check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
        // Check the last transform of the batch: offsets exercise the batch layout.
        let t = c.ntransf - 1;
        let per_out = n_out / c.ntransf;
        let per_in = n_in / c.ntransf;
        // tol bounds the l2 error of the whole output: every output where the exact sum is
        // cheap, else 20000 stratified ones
        let mut sample = stratified_sample(&mut rng, per_out, 20_000);
        if c.edge_only && c.ty == 1 {
            // type 1 at the band edge: the outputs whose first mode is among the lowest 5%
            // (CMCL order: k1 = -N1/2, ..), every other mode
            let edge = (c.n[0] / 20).max(1);
            sample = (0..per_out).filter(|i| i % c.n[0] < edge).collect();
            sample = stratified_sample(&mut rng, sample.len() as i64, 20_000)
                .into_iter()
                .map(|i| sample[i as usize])
                .collect();
        }
        let off_in = (t * per_in * 2) as usize * real_bytes(c.f64);
        let in_t = unsafe { (din.ptr as *const u8).add(off_in) } as *const c_void;
        let exact = Exact {
            ty: c.ty,
            dim: c.dim,
            n: c.n,
            modeord: c.modeord,
            f64: c.f64,
            m: c.m,
            pts: &dpts,
        }
        .sample(in_t, &sample);
        let out = dout.reals(c.f64, (2 * n_out) as usize);
        let approx = gather(&out, (t * per_out) as usize, &sample);
        Ok(Outcome {
            err: rel_l2(&approx, &exact),
            floor: info.tol_floor,
            width: info.width,
        })
    }
}

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
            for (f64, tol) in [(false, 1e-4), (true, 1e-8)] {
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
    for (i, c) in cases().iter().enumerate() {
        let r = run(c, 1000 + i as u64);
        let (err_s, ok) = match &r {
            Ok(o) => (format!("{:.2e}", o.err), o.err <= c.tol.max(o.floor)),
            Err(e) => (e.clone(), false),
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

/// Runs `cases`, prints a table and asserts error ≤ max(tol, tol_floor, extra floor) for each.
fn run_table(name: &str, cases: &[Case], seed: u64) {
    let mut failures = Vec::new();
    println!("== {name}");
    println!(
        "{:>3} {:>4} {:>4} {:>7} {:>6} {:>3} {:>16} {:>8} {:>9} {:>9} {:>9} {:>6}  ok",
        "dim",
        "type",
        "prec",
        "tol",
        "method",
        "w",
        "N",
        "M",
        "dist",
        "rel_err",
        "floor",
        "err/tol"
    );
    for (i, c) in cases.iter().enumerate() {
        let r = run(c, seed + i as u64);
        let (row, ok) = match &r {
            Ok(o) => {
                let bound = c.tol.max(o.floor).max(gm_pileup_floor(c));
                (
                    format!(
                        "{:>3} {:>9.2e} {:>9.2e} {:>6.2}",
                        o.width,
                        o.err,
                        o.floor,
                        o.err / c.tol
                    ),
                    o.err <= bound,
                )
            }
            Err(e) => (e.clone(), false),
        };
        println!(
            "{:>3} {:>4} {:>4} {:>7.0e} {:>6} {:>16} {:>8} {:>9} {}  {}",
            c.dim,
            c.ty,
            if c.f64 { "f64" } else { "f32" },
            c.tol,
            ["auto", "GM", "SM"][c.method as usize],
            format!("{:?}", &c.n[..c.dim as usize]),
            c.m,
            format!("{:?}{}", c.dist, if c.edge_only { "+edge" } else { "" }),
            row,
            if ok { "yes" } else { "NO" }
        );
        if !ok {
            failures.push(format!("{c:?}: {row}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} case(s) above max(tol, floor):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A case with the defaults of the issue-14 tables (modeord 0, one transform, upsampfac 2).
fn case(dim: i32, ty: i32, f64: bool, tol: f64, n: [i64; 3], m: i64, dist: Dist) -> Case {
    Case {
        dim,
        ty,
        f64,
        tol,
        method: 0,
        modeord: 0,
        ntransf: 1,
        n,
        m,
        dist,
        upsampfac: 2.0,
        edge_only: false,
        bin_size: [0; 3],
    }
}

/// Tolerances per precision for the issue-14 tables.
fn tols(f64: bool) -> &'static [f64] {
    if f64 {
        &[1e-5, 1e-9, 1e-12]
    } else {
        &[1e-2, 1e-4, 1e-5]
    }
}

/// Even sizes (the band-edge mode -N/2 exists) and an odd one per dim.
fn sizes(dim: i32, odd: bool) -> [i64; 3] {
    let o = i64::from(odd);
    match dim {
        1 => [2000 + o, 1, 1],
        2 => [96 + o, 98, 1],
        _ => [24 + o, 26, 28],
    }
}

/// Grid-aligned point sets (issue 14: on the H100 the rule before it missed tol by up to 6.5x on
/// them): every point on a node, half-way between nodes, half on nodes, and ±π with the values
/// next to them, for every dim × type × precision × tol. The width rule bounds the worst offset.
#[test]
fn grid_aligned() {
    if !gpu_or_skip("gpu_accuracy::grid_aligned") {
        return;
    }
    let mut v = Vec::new();
    let mut k = 0;
    for dim in 1..=3 {
        for ty in [1, 2] {
            for f64 in [false, true] {
                for &tol in tols(f64) {
                    for dist in [Dist::Nodes, Dist::HalfNodes, Dist::MixNodes, Dist::NearPi] {
                        k += 1;
                        let mut c = case(dim, ty, f64, tol, sizes(dim, k % 2 == 1), 20_000, dist);
                        c.method = 1 + (k % 2);
                        v.push(c);
                    }
                }
            }
        }
    }
    run_table("grid-aligned points", &v, 5000);
}

/// Tight clusters in f32 (σ = 1e-3, M = 10⁶): every dim × type, GM and SM, two tols. GM type 1
/// carries the documented pile-up floor of float atomics (README).
#[test]
fn tight_clusters_f32() {
    if !gpu_or_skip("gpu_accuracy::tight_clusters_f32") {
        return;
    }
    let mut v = Vec::new();
    for dim in 1..=3 {
        for ty in [1, 2] {
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
    }
    run_table("tight f32 clusters, M = 1e6", &v, 6000);
}

/// Plans with more bins than the one-block scan is for (c_core/src/params.h, WF_SCAN_BIG_BINS =
/// 8192): setpts takes the multi-block scan of module scan_big (kernels/scan_big.cu). Small
/// opts.bin_size gives ~10⁴ (1D, 2D) and ~1.8·10⁴ (3D) bins, none a multiple of the 1024-bin
/// tile (asserted); every dim × type × precision, GM and SM, uniform points (a few per bin) and
/// a cluster (a cube of 8 fine-grid cells: a few bins hold every point, each split into many
/// subproblems, the other bins empty). `warpfft_setpts_check` checks the device totals.
#[test]
fn many_bins_multi_block_scan() {
    if !gpu_or_skip("gpu_accuracy::many_bins_multi_block_scan") {
        return;
    }
    let mut v = Vec::new();
    for dim in 1..=3 {
        let (n, bs) = match dim {
            1 => ([5000, 1, 1], [1, 1, 1]),
            2 => ([98, 98, 1], [2, 2, 1]),
            _ => ([24, 26, 28], [2, 2, 2]),
        };
        for ty in [1, 2] {
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
    let (opts, prec) = case_opts(c);
    let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
    check(
        unsafe {
            sys::warpfft_plan_params(
                c.ty,
                c.dim,
                c.n.as_ptr(),
                c.ntransf,
                c.tol,
                prec,
                &opts,
                &mut info,
            )
        },
        "plan_params",
    );
    (0..3)
        .map(|d| {
            let bs = i64::from(info.bin_size[d]);
            (info.n_fine[d] + bs - 1) / bs
        })
        .product()
}

/// Far points, |x| up to 1e4 (issue 14: 9x tol with a single-double 2π fold), f64 at three tols
/// in every dim and type, 1D up to N = 1e5 (where the rounding floor N 2^-52 = 2.2e-11 is above
/// tol 1e-12: the plan reports it); f32 at 1e-5.
#[test]
fn far_points() {
    if !gpu_or_skip("gpu_accuracy::far_points") {
        return;
    }
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
    run_table("far points, |x| < 1e4", &v, 7000);
}

/// The band edge: type 2 with all energy in the corner mode k = (-N/2, ..), type 1 measured
/// on the lowest 5% of the first dimension's modes; random and grid-aligned points. Before
/// issue 14 this was the documented exception (up to 1.58x tol); the width rule now covers it.
#[test]
fn band_edge() {
    if !gpu_or_skip("gpu_accuracy::band_edge") {
        return;
    }
    let mut v = Vec::new();
    for dim in 1..=3 {
        for ty in [1, 2] {
            for f64 in [false, true] {
                for &tol in tols(f64) {
                    for dist in [Dist::Uniform, Dist::Nodes] {
                        let mut c = case(dim, ty, f64, tol, sizes(dim, false), 20_000, dist);
                        c.edge_only = true;
                        v.push(c);
                    }
                }
            }
        }
    }
    run_table("band edge", &v, 8000);
}

/// <type1(c), f> = <c, type2(f)> with opposite signs: the two transforms are adjoint.
#[test]
fn adjointness() {
    if !gpu_or_skip("gpu_accuracy::adjointness") {
        return;
    }
    for (dim, f64, tol) in [
        (1, false, 1e-5),
        (2, false, 1e-5),
        (3, true, 1e-10),
        (2, true, 1e-12),
    ] {
        let mut rng = Rng::new(7 + dim as u64);
        let n = [[3001, 1, 1], [120, 97, 1], [30, 27, 33]][dim as usize - 1];
        let m = 20_000i64;
        let nm: i64 = n.iter().product();
        let prec = precision(f64);
        let pi = std::f64::consts::PI;
        let pts: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| rng.range(-pi, pi)).collect())
            .collect();
        let dp: Vec<Dev> = pts.iter().map(|p| Dev::from_reals(f64, p)).collect();
        let ptr = |d: usize| point_ptr(&dp, d);
        let cv: Vec<f64> = (0..2 * m).map(|_| rng.range(-1.0, 1.0)).collect();
        let fv: Vec<f64> = (0..2 * nm).map(|_| rng.range(-1.0, 1.0)).collect();
        let (dc, df) = (Dev::from_reals(f64, &cv), Dev::from_reals(f64, &fv));
        let (dfk, dcc) = (
            Dev::new((2 * nm) as usize * real_bytes(f64)),
            Dev::new((2 * m) as usize * real_bytes(f64)),
        );
        for (ty, iflag, cp, fp) in [(1, 1, dc.ptr, dfk.ptr), (2, -1, dcc.ptr, df.ptr)] {
            let mut plan: sys::warpfft_plan = std::ptr::null_mut();
            check(
                unsafe {
                    sys::warpfft_plan_create(
                        ty,
                        dim,
                        n.as_ptr(),
                        iflag,
                        1,
                        tol,
                        prec,
                        std::ptr::null(),
                        &mut plan,
                    )
                },
                "plan_create",
            );
            check(
                unsafe { sys::warpfft_setpts(plan, prec, m, ptr(0), ptr(1), ptr(2)) },
                "setpts",
            );
            check(
                unsafe { sys::warpfft_execute(plan, prec, cp, fp) },
                "execute",
            );
            check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
            unsafe { sys::warpfft_plan_destroy(plan) };
        }
        let get = |d: &Dev, n: i64| d.reals(f64, 2 * n as usize);
        let (fk, cc) = (get(&dfk, nm), get(&dcc, m));
        let dot = |a: &[f64], b: &[f64]| {
            // <a, b> = Σ conj(a) b
            a.chunks(2)
                .zip(b.chunks(2))
                .fold((0.0, 0.0), |(re, im), (x, y)| {
                    (
                        re + x[0] * y[0] + x[1] * y[1],
                        im + x[0] * y[1] - x[1] * y[0],
                    )
                })
        };
        let lhs = dot(&fk, &fv);
        let rhs = dot(&cv, &cc);
        let norm = (lhs.0.hypot(lhs.1)).max(1e-300);
        let rel = (lhs.0 - rhs.0).hypot(lhs.1 - rhs.1) / norm;
        println!(
            "adjointness dim {dim} {} tol {tol:e}: relative difference {rel:.2e}",
            if f64 { "f64" } else { "f32" }
        );
        // Each side carries an error ≤ tol relative to its norms; the inner products differ by
        // up to about tol·|c|·|f|·sqrt(N·M)/|<.,.>|: allow a generous factor, still far below 1.
        assert!(rel < tol * 1e3, "adjointness failed: {rel:e}");
    }
}
