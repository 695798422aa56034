//! Batched points (`Plan::set_point_sets`, `set_point_sets3`, issue 32): a plan of `ntransf`
//! transforms whose transforms (or groups of `ntransf / n_sets` transforms) each have their own
//! point set, on a GPU. For types 1, 2 and 3, 1D to 3D, f32 and f64, one set per transform and
//! sets of two transforms each, the batched plan's output must match that of separate plans,
//! one per set, each given its set's points and its transforms' inputs: to rounding for types 1
//! and 2 (the same grids), within the tolerance for type 3 (the batched plan's one geometry
//! covers the bounds of every set). Then the argument checks that need a plan (`n_sets` not
//! dividing the arrays or `ntransf`, deterministic type 1), device buffers, and switching between
//! batched and shared points on one plan. Skips visibly without a GPU.

#[macro_use]
mod common;
use common::{gpu_or_skip, Rng};
use warpfft::{Complex, DeviceBuffer, Error, Plan, PlanBuilder, Real, TransformType};

const PI: f64 = std::f64::consts::PI;

struct Case {
    ty: TransformType,
    n_modes: &'static [usize],
    dim: usize,
    m: usize,
    k: usize, // type 3 targets per set
}

const CASES: &[Case] = &[
    Case {
        ty: TransformType::Type1,
        n_modes: &[200],
        dim: 1,
        m: 3000,
        k: 0,
    },
    Case {
        ty: TransformType::Type1,
        n_modes: &[48, 40],
        dim: 2,
        m: 4000,
        k: 0,
    },
    Case {
        ty: TransformType::Type1,
        n_modes: &[16, 12, 20],
        dim: 3,
        m: 3000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[200],
        dim: 1,
        m: 3000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[48, 40],
        dim: 2,
        m: 4000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[16, 12, 20],
        dim: 3,
        m: 3000,
        k: 0,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 1,
        m: 2000,
        k: 500,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 2,
        m: 2000,
        k: 400,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 3,
        m: 1500,
        k: 300,
    },
];

/// `n_sets` sets of `m` points per dimension, set after set; set `s` is a different cloud (its
/// own centre and spread, so that the sets differ in where their points fall).
fn sets<T: Real>(rng: &mut Rng, dim: usize, n_sets: usize, m: usize, half: f64) -> Vec<Vec<T>> {
    let mut out = vec![Vec::with_capacity(n_sets * m); dim];
    for s in 0..n_sets {
        let spread = half * (0.4 + 0.6 * (s + 1) as f64 / n_sets as f64);
        let centre = 0.3 * half * (s as f64 - 1.0) / n_sets as f64;
        for coords in out.iter_mut() {
            coords.extend((0..m).map(|_| T::from_f64(centre + rng.sym(spread))));
        }
    }
    out
}

/// The coordinates of set `s` alone.
fn one_set<T: Real>(all: &[Vec<T>], s: usize, m: usize) -> Vec<Vec<T>> {
    all.iter().map(|c| c[s * m..(s + 1) * m].to_vec()).collect()
}

fn builder<T: Real>(c: &Case, tol: f64, ntransf: usize) -> PlanBuilder<T> {
    let b = if c.ty == TransformType::Type3 {
        Plan::<T>::type3(c.dim)
    } else {
        Plan::<T>::builder(c.ty, c.n_modes)
    };
    // σ fixed: by default each plan picks its own from its batch size, and plans of different
    // σ differ by up to the tolerance, not by rounding
    b.tol(tol).ntransf(ntransf).upsampfac(2.0)
}

fn rel_l2<T: Real>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (p, q) in a.iter().zip(b) {
        let (pr, pi, qr, qi): (f64, f64, f64, f64) =
            (p.re.into(), p.im.into(), q.re.into(), q.im.into());
        num += (pr - qr).powi(2) + (pi - qi).powi(2);
        den += qr * qr + qi * qi;
    }
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

/// The batched plan's output against separate plans, for `n_sets` sets feeding `ntransf`
/// transforms; returns the relative l2 difference over the whole batch.
fn compare<T: Real>(c: &Case, tol: f64, ntransf: usize, n_sets: usize, seed: u64) -> f64 {
    let mut rng = Rng::new(seed);
    let tps = ntransf / n_sets;
    let x = sets::<T>(&mut rng, c.dim, n_sets, c.m, PI);
    let s = sets::<T>(&mut rng, c.dim, n_sets, c.k, 30.0);
    let n_in = match c.ty {
        TransformType::Type2 => c.n_modes.iter().product::<usize>(),
        _ => c.m,
    };
    let input = rng.complex::<T>(ntransf * n_in);
    let what = format!(
        "{:?} {}D {} ntransf {ntransf} n_sets {n_sets}",
        c.ty,
        c.dim,
        std::any::type_name::<T>()
    );

    let mut plan = builder::<T>(c, tol, ntransf).build().expect("build");
    if c.ty == TransformType::Type3 {
        plan.set_point_sets3(n_sets, &x, &s)
            .expect("set_point_sets3");
        assert_eq!(plan.n_targets(), Some(c.k), "{what}: n_targets");
    } else {
        plan.set_point_sets(n_sets, &x).expect("set_point_sets");
    }
    assert_eq!(plan.n_points(), Some(c.m), "{what}: n_points");
    assert_eq!(plan.n_sets(), Some(n_sets), "{what}: n_sets");
    let info = plan.info().expect("info");
    assert_eq!(info.n_sets, Some(n_sets), "{what}: info.n_sets");
    assert_eq!(info.n_points, Some(c.m), "{what}: info.n_points");
    let out_len = match c.ty {
        TransformType::Type2 => plan.c_len().expect("points set"),
        _ => plan.fk_len(),
    };
    assert_eq!(out_len % ntransf, 0);
    let n_out = out_len / ntransf;
    let mut batched = vec![Complex::default(); out_len];
    plan.execute(&input, &mut batched)
        .expect("execute (batched)");

    let mut separate = vec![Complex::default(); out_len];
    for set in 0..n_sets {
        let mut single = builder::<T>(c, tol, tps).build().expect("build (one set)");
        let xs = one_set(&x, set, c.m);
        if c.ty == TransformType::Type3 {
            single
                .set_points3(&xs, &one_set(&s, set, c.k))
                .expect("set_points3");
        } else {
            single.set_points(&xs).expect("set_points");
        }
        assert_eq!(single.n_sets(), Some(1));
        let (t0, t1) = (set * tps, (set + 1) * tps);
        single
            .execute(
                &input[t0 * n_in..t1 * n_in],
                &mut separate[t0 * n_out..t1 * n_out],
            )
            .expect("execute (one set)");
    }
    let diff = rel_l2(&batched, &separate);
    let bound = if c.ty == TransformType::Type3 {
        3.0 * tol.max(info.tol_floor)
    } else {
        // the same grids and kernel: rounding and the order of atomic sums only
        if T::PRECISION == warpfft::Precision::F32 {
            1e-5
        } else {
            1e-12
        }
    };
    assert!(
        diff <= bound,
        "{what}: batched vs separate plans differ by {diff:.3e} > {bound:.1e}"
    );
    // every transform has an output of its own set: not all sets alike (the check would pass
    // trivially if the plan used set 0 everywhere and the sets were equal)
    eprintln!("{what}: batched vs separate {diff:.2e} (bound {bound:.1e})");
    diff
}

/// Every case in precision T: one set per transform, then two transforms per set.
fn run_all<T: Real>(tol: f64, seed: u64) {
    for (i, c) in CASES.iter().enumerate() {
        compare::<T>(c, tol, 4, 4, seed + 10 * i as u64); // one set per transform
        compare::<T>(c, tol, 6, 3, seed + 10 * i as u64 + 1); // two transforms per set
    }
}

gpu_tests! {
    batched_points_match_separate_plans_f32: run_all::<f32>(1e-5, 1000);
    batched_points_match_separate_plans_f64: run_all::<f64>(1e-10, 2000);
}

/// A type-1 plan of `n_sets` transforms over `modes`, transform s on point set s of `x`.
fn type1_on_sets<T: Real>(modes: &[usize], tol: f64, x: &[Vec<T>], n_sets: usize) -> Plan<T> {
    let mut plan = Plan::<T>::type1(modes)
        .tol(tol)
        .ntransf(n_sets)
        .build()
        .unwrap();
    plan.set_point_sets(n_sets, x).unwrap();
    plan
}

/// The modes a type-1 plan makes of strengths `c`.
fn type1_output<T: Real>(plan: &mut Plan<T>, c: &[Complex<T>]) -> Vec<Complex<T>> {
    let mut f = vec![Complex::default(); plan.fk_len()];
    plan.execute(c, &mut f).unwrap();
    f
}

/// The sets really are used per transform: a batch of two transforms with the same strengths
/// but different sets gives different outputs, and swapping the sets swaps the outputs.
#[test]
fn each_transform_uses_its_own_set() {
    if !gpu_or_skip("each_transform_uses_its_own_set") {
        return;
    }
    let mut rng = Rng::new(5);
    let m = 2000;
    let x = sets::<f64>(&mut rng, 2, 2, m, PI);
    let c1 = rng.complex::<f64>(m);
    let c: Vec<Complex<f64>> = c1.iter().chain(c1.iter()).copied().collect();
    let mut plan = type1_on_sets(&[32, 32], 1e-9, &x, 2);
    let f = type1_output(&mut plan, &c);
    let n = 32 * 32;
    assert!(
        rel_l2(&f[..n], &f[n..]) > 0.1,
        "both transforms used the same points"
    );
    let swapped: Vec<Vec<f64>> = x.iter().map(|v| [&v[m..], &v[..m]].concat()).collect();
    plan.set_point_sets(2, &swapped).unwrap();
    let g = type1_output(&mut plan, &c);
    assert!(rel_l2(&g[..n], &f[n..]) < 1e-12 && rel_l2(&g[n..], &f[..n]) < 1e-12);
}

/// Device buffers, switching between batched and shared points, and the argument checks that
/// need a plan.
#[test]
fn batched_points_api() {
    if !gpu_or_skip("batched_points_api") {
        return;
    }
    let mut rng = Rng::new(9);
    let m = 1000;
    let x = sets::<f32>(&mut rng, 2, 4, m, PI);
    let c = rng.complex::<f32>(4 * m);
    let mut plan = type1_on_sets(&[24, 20], 1e-5, &x, 4);
    let host = type1_output(&mut plan, &c);

    // the same sets from device buffers
    let bufs: Vec<DeviceBuffer<f32>> = x
        .iter()
        .map(|v| DeviceBuffer::from_slice(v).unwrap())
        .collect();
    plan.set_device_point_sets(4, bufs).unwrap();
    assert_eq!((plan.n_points(), plan.n_sets()), (Some(m), Some(4)));
    let dev = type1_output(&mut plan, &c);
    assert!(
        rel_l2(&dev, &host) < 1e-6,
        "device buffers: {:e}",
        rel_l2(&dev, &host)
    );
    assert_eq!(plan.take_points().len(), 2);

    // shared points (one set of 4m points) after batched ones, and back
    plan.set_points(&x).unwrap();
    assert_eq!((plan.n_points(), plan.n_sets()), (Some(4 * m), Some(1)));
    assert_eq!(plan.info().unwrap().n_sets, Some(1));
    plan.set_point_sets(2, &x).unwrap();
    assert_eq!((plan.n_points(), plan.n_sets()), (Some(2 * m), Some(2)));

    // n_sets must divide the arrays (Shape) and ntransf (InvalidArg); errors leave no points
    let e = plan.set_point_sets(3, &x).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    assert_eq!(
        plan.n_points(),
        Some(2 * m),
        "a shape error keeps the points"
    );
    let e = plan.set_point_sets(0, &x).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    let short: Vec<Vec<f32>> = x.iter().map(|v| v[..(8 * m / 10)].to_vec()).collect();
    let e = plan.set_point_sets(8, &short).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArg(_)),
        "8 sets of 4 transforms: {e:?}"
    );
    assert!(e.message().contains("divide ntransf"), "{e}");
    assert_eq!(plan.n_points(), None);

    // deterministic type 1 spreads by OD, which takes one set
    let mut det = Plan::<f32>::type1(&[24, 20])
        .tol(1e-5)
        .ntransf(4)
        .deterministic(true)
        .build()
        .unwrap();
    let e = det.set_point_sets(4, &x).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    assert!(e.message().contains("method OD"), "{e}");
    // type 3's call on a type-1 plan and the reverse
    let e = plan.set_point_sets3(2, &x, &x).unwrap_err();
    assert!(matches!(e, Error::BadType(_)), "{e:?}");
    let mut p3 = Plan::<f32>::type3(2).tol(1e-5).ntransf(4).build().unwrap();
    let e = p3.set_point_sets(2, &x).unwrap_err();
    assert!(matches!(e, Error::BadType(_)), "{e:?}");
    let t = sets::<f32>(&mut rng, 2, 4, 30, 20.0);
    let e = p3.set_point_sets3(4, &x, &t[..1]).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    let odd: Vec<Vec<f32>> = t.iter().map(|v| v[..119].to_vec()).collect();
    let e = p3.set_point_sets3(4, &x, &odd).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    p3.set_point_sets3(4, &x, &t).unwrap();
    assert_eq!(
        (p3.n_points(), p3.n_targets(), p3.n_sets()),
        (Some(m), Some(30), Some(4))
    );
    assert_eq!(p3.fk_len(), 4 * 30);
}
