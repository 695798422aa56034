//! Type 3 on the GPU against the exact sum (`warpfft_direct_sample3`, double precision on the
//! GPU): every dim × precision, tols from 1e-1 to the precision's floor, uniform / clustered /
//! shifted / large-spread inputs, the large-X·S f32 case of the issue, batches, adjointness
//! (type 3 with sources and targets swapped and the sign flipped is the adjoint), agreement
//! with type 1 at integer targets, and the edge cases (M = 0, K = 0, NaN, grids too large).
//! Prints the table. Skips visibly without a GPU.

mod common;
use common::{gpu_or_skip, stratified_sample, transform_error, Failures, Rng};
use warpfft::{Complex, Error, Plan, Precision, Real};

const FLOOR_F32: f64 = 1e-6;
const FLOOR_F64: f64 = 1e-14;

#[derive(Clone, Copy, Debug)]
enum Dist {
    /// sources in [-π, π)^d, targets in [-S, S]^d
    Uniform,
    /// sources in a small box off the origin, targets in a narrow band around a far centre
    Cluster,
    /// sources in [5, 9]^d, targets in [-0.8 S, 0.2 S]^d: both centres non-zero
    Shifted,
    /// sources in [-3π, 3π)^d: X·S 3x the uniform case
    Wide,
}

struct Problem {
    x: Vec<Vec<f64>>,
    s: Vec<Vec<f64>>,
}

fn problem(rng: &mut Rng, dim: usize, m: usize, k: usize, smax: f64, dist: Dist) -> Problem {
    let pi = std::f64::consts::PI;
    let x = (0..dim)
        .map(|d| {
            (0..m)
                .map(|_| match dist {
                    Dist::Uniform => rng.range(-pi, pi),
                    Dist::Cluster => 1.3 + 0.2 * d as f64 + 0.05 * rng.uniform(),
                    Dist::Shifted => rng.range(5.0, 9.0),
                    Dist::Wide => rng.range(-3.0 * pi, 3.0 * pi),
                })
                .collect()
        })
        .collect();
    let s = (0..dim)
        .map(|_| {
            (0..k)
                .map(|_| match dist {
                    Dist::Uniform | Dist::Wide => rng.range(-smax, smax),
                    Dist::Cluster => 40.0 * smax + rng.range(0.0, 0.5 * smax),
                    Dist::Shifted => rng.range(-0.8 * smax, 0.2 * smax),
                })
                .collect()
        })
        .collect();
    Problem { x, s }
}

fn to_t<T: Real>(v: &[Vec<f64>]) -> Vec<Vec<T>> {
    v.iter()
        .map(|a| a.iter().map(|&x| T::from_f64(x)).collect())
        .collect()
}

fn strengths<T: Real>(rng: &mut Rng, n: usize) -> Vec<Complex<T>> {
    (0..n)
        .map(|_| {
            Complex::new(
                T::from_f64(rng.range(-1.0, 1.0)),
                T::from_f64(rng.range(-1.0, 1.0)),
            )
        })
        .collect()
}

struct Run {
    err: f64,
    info: String,
}

#[allow(clippy::too_many_arguments)]
fn run<T: Real>(
    dim: usize,
    tol: f64,
    dist: Dist,
    m: usize,
    k: usize,
    smax: f64,
    ntransf: usize,
    iflag: i32,
    seed: u64,
) -> Result<Run, Error> {
    let mut rng = Rng::new(seed);
    let p = problem(&mut rng, dim, m, k, smax, dist);
    let mut plan = Plan::<T>::type3(dim)
        .tol(tol)
        .ntransf(ntransf)
        .iflag(iflag)
        .build()?;
    plan.set_points3(&to_t::<T>(&p.x), &to_t::<T>(&p.s))?;
    let c = strengths::<T>(&mut rng, m * ntransf);
    let mut f = vec![Complex::default(); plan.fk_len()];
    assert_eq!(f.len(), k * ntransf);
    plan.execute(&c, &mut f)?;
    let sample: Vec<usize> = stratified_sample(&mut rng, k as i64, 2000)
        .into_iter()
        .map(|i| i as usize)
        .collect();
    let mut err: f64 = 0.0;
    for t in [0, ntransf - 1] {
        err = err.max(transform_error(&plan, &c, &f, (m, k), t, &sample)?);
    }
    let info = plan.info()?;
    let t3 = info.type3.expect("type-3 info after set_points3");
    Ok(Run {
        err,
        info: format!(
            "w {} nf {:?} ip {:?} iw {} inner {:?}",
            info.width,
            &info.n_fine[..dim],
            t3.inner_precision,
            t3.inner_width,
            &t3.inner_fine[..dim]
        ),
    })
}

#[test]
fn accuracy_table() {
    if !gpu_or_skip("gpu_type3::accuracy_table") {
        return;
    }
    let mut failures = Failures::default();
    let mut seed = 300;
    println!(
        "{:>3} {:>4} {:>7} {:>8} {:>3} {:>9}  {:<3} plan",
        "dim", "prec", "tol", "dist", "nt", "rel_err", "ok"
    );
    for dim in 1..=3usize {
        let (m, k, smax) = [(4000, 5000, 800.0), (4000, 4000, 60.0), (3000, 3000, 12.0)][dim - 1];
        for f64 in [false, true] {
            let tols: &[f64] = if f64 {
                &[1e-1, 1e-5, 1e-9, 1e-12]
            } else {
                &[1e-1, 1e-3, 1e-5, 1e-6]
            };
            for &tol in tols {
                for dist in [Dist::Uniform, Dist::Cluster, Dist::Shifted, Dist::Wide] {
                    seed += 1;
                    let ntransf = if seed % 3 == 0 { 3 } else { 1 };
                    let iflag = if seed % 2 == 0 { 1 } else { -1 };
                    let r = if f64 {
                        run::<f64>(dim, tol, dist, m, k, smax, ntransf, iflag, seed)
                    } else {
                        run::<f32>(dim, tol, dist, m, k, smax, ntransf, iflag, seed)
                    };
                    let floor = if f64 { FLOOR_F64 } else { FLOOR_F32 };
                    let (err_s, ok, info) = match &r {
                        Ok(o) => (
                            format!("{:.2e}", o.err),
                            o.err <= tol.max(floor),
                            &o.info[..],
                        ),
                        Err(e) => (format!("{e}"), false, ""),
                    };
                    println!(
                        "{dim:>3} {:>4} {tol:>7.0e} {:>8} {ntransf:>3} {err_s:>9}  {:<3} {info}",
                        if f64 { "f64" } else { "f32" },
                        format!("{dist:?}"),
                        failures.verdict(ok, || format!(
                            "{dim}D f64={f64} tol {tol} {dist:?}: {err_s}"
                        )),
                    );
                }
            }
        }
    }
    failures.assert_none("above tol");
}

/// The large-X·S case: 1D f32, x in [-π, π), s in [-5e5, 5e5], tol 1e-5 (the
/// reference library: 1.1e-1). Here M = K = 1e6 (the bench T1 runs 1e7).
#[test]
fn large_spread_f32() {
    if !gpu_or_skip("gpu_type3::large_spread_f32") {
        return;
    }
    for tol in [1e-3, 1e-5] {
        let r = run::<f32>(1, tol, Dist::Uniform, 1_000_000, 1_000_000, 5e5, 1, 1, 77)
            .unwrap_or_else(|e| panic!("tol {tol}: {e}"));
        println!(
            "large X·S f32 tol {tol:e}: rel err {:.2e} ({})",
            r.err, r.info
        );
        assert!(r.err <= tol, "tol {tol}: error {:.3e}", r.err);
    }
    let r = run::<f64>(1, 1e-9, Dist::Uniform, 1_000_000, 1_000_000, 5e5, 1, 1, 78).unwrap();
    println!("large X·S f64 tol 1e-9: rel err {:.2e} ({})", r.err, r.info);
    assert!(r.err <= 1e-9, "f64: error {:.3e}", r.err);
}

/// <g, A c> = <B g, c> with A: sources x, targets s, sign +1 and B: sources s, targets x,
/// sign -1 (B = A^H), to ~tol relative to |g| |A c|.
fn adjoint_case<T: Real>(dim: usize, tol: f64, seed: u64) -> Result<f64, Error> {
    let mut rng = Rng::new(seed);
    let (m, k) = (3000, 2500);
    let p = problem(
        &mut rng,
        dim,
        m,
        k,
        [300.0, 40.0, 10.0][dim - 1],
        Dist::Shifted,
    );
    let (x, s) = (to_t::<T>(&p.x), to_t::<T>(&p.s));
    let mut a = Plan::<T>::type3(dim).tol(tol).iflag(1).build()?;
    let mut b = Plan::<T>::type3(dim).tol(tol).iflag(-1).build()?;
    a.set_points3(&x, &s)?;
    b.set_points3(&s, &x)?;
    let c = strengths::<T>(&mut rng, m);
    let g = strengths::<T>(&mut rng, k);
    let mut ac = vec![Complex::default(); k];
    let mut bg = vec![Complex::default(); m];
    a.execute(&c, &mut ac)?;
    b.execute(&g, &mut bg)?;
    let wide = |v: Complex<T>| Complex::new(v.re.to_f64(), v.im.to_f64());
    let lhs: Complex<f64> = g
        .iter()
        .zip(&ac)
        .map(|(&g, &y)| wide(g).conj() * wide(y))
        .sum();
    let rhs: Complex<f64> = bg
        .iter()
        .zip(&c)
        .map(|(&z, &c)| wide(z).conj() * wide(c))
        .sum();
    let norm = |v: &[Complex<T>]| v.iter().map(|&z| wide(z).norm_sqr()).sum::<f64>().sqrt();
    Ok((lhs - rhs).norm() / (norm(&g) * norm(&ac)))
}

#[test]
fn adjointness() {
    if !gpu_or_skip("gpu_type3::adjointness") {
        return;
    }
    for dim in 1..=3 {
        for (prec, tol) in [(Precision::F32, 1e-5), (Precision::F64, 1e-10)] {
            let e = match prec {
                Precision::F32 => adjoint_case::<f32>(dim, tol, 90 + dim as u64),
                Precision::F64 => adjoint_case::<f64>(dim, tol, 95 + dim as u64),
            }
            .unwrap();
            println!("adjointness {dim}D {prec:?} tol {tol:e}: {e:.2e}");
            assert!(e <= 2.0 * tol, "{dim}D {prec:?}: {e:.3e}");
        }
    }
}

/// At integer targets k (CMCL order) and sources in [-π, π), type 3 is type 1.
#[test]
fn matches_type1_at_integer_targets() {
    if !gpu_or_skip("gpu_type3::matches_type1_at_integer_targets") {
        return;
    }
    let mut rng = Rng::new(5);
    let n = [64usize, 48, 20];
    for dim in 1..=3usize {
        let m = 3000;
        let pi = std::f64::consts::PI;
        let x: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| rng.range(-pi, pi)).collect())
            .collect();
        let nn = &n[..dim];
        let kk: usize = nn.iter().product();
        let mut s: Vec<Vec<f64>> = vec![Vec::with_capacity(kk); dim];
        for idx in 0..kk {
            let mut i = idx;
            for d in 0..dim {
                s[d].push((i % nn[d]) as f64 - (nn[d] / 2) as f64);
                i /= nn[d];
            }
        }
        let c = strengths::<f64>(&mut rng, m);
        let mut t1 = Plan::<f64>::type1(nn).tol(1e-11).build().unwrap();
        t1.set_points(&x).unwrap();
        let mut f1 = vec![Complex::default(); t1.fk_len()];
        t1.execute(&c, &mut f1).unwrap();
        let mut t3 = Plan::<f64>::type3(dim).tol(1e-11).build().unwrap();
        t3.set_points3(&x, &s).unwrap();
        let mut f3 = vec![Complex::default(); kk];
        t3.execute(&c, &mut f3).unwrap();
        let exact: Vec<Complex<f64>> = f1.clone();
        let e = warpfft::relative_l2_error(&f3, &exact);
        println!("type 3 vs type 1, {dim}D {nn:?}: {e:.2e}");
        assert!(e <= 3e-11, "{dim}D: {e:.3e}");
    }
}

#[test]
fn empty_and_bad_inputs() {
    if !gpu_or_skip("gpu_type3::empty_and_bad_inputs") {
        return;
    }
    let mut plan = Plan::<f64>::type3(2).tol(1e-6).ntransf(2).build().unwrap();
    let x = vec![vec![0.5, -1.0, 2.0], vec![0.1, 0.2, 0.3]];
    let s = vec![vec![3.0, 4.0], vec![-5.0, 6.0]];
    // M = 0: zeros
    let none: Vec<Vec<f64>> = vec![vec![], vec![]];
    plan.set_points3(&none, &s).unwrap();
    let mut f = vec![Complex::new(7.0, 7.0); 4];
    plan.execute(&[], &mut f).unwrap();
    assert!(f.iter().all(|z| *z == Complex::new(0.0, 0.0)), "{f:?}");
    // K = 0: nothing
    plan.set_points3(&x, &none).unwrap();
    plan.setpts_check().unwrap(); // type 3 checked at set_points3
    let c = vec![Complex::new(1.0, 0.0); 6];
    plan.execute(&c, &mut []).unwrap();
    // wrong lengths
    assert!(matches!(
        plan.execute(&c[..5], &mut []),
        Err(Error::Shape(_))
    ));
    // NaN / inf
    let bad = vec![vec![0.5, f64::NAN, 2.0], vec![0.1, 0.2, 0.3]];
    assert!(matches!(
        plan.set_points3(&bad, &s),
        Err(Error::BadPoints(_))
    ));
    assert!(matches!(
        plan.execute(&c, &mut [Complex::default(); 4]),
        Err(Error::NoPoints(_))
    ));
    assert!(matches!(plan.setpts_check(), Err(Error::NoPoints(_))));
    let bad_s = vec![vec![3.0, f64::INFINITY], vec![-5.0, 6.0]];
    assert!(matches!(
        plan.set_points3(&x, &bad_s),
        Err(Error::BadPoints(_))
    ));
    // type 1/2 setpts on a type-3 plan, and setpts3 on a type-1 plan
    assert!(matches!(plan.set_points(&x), Err(Error::BadType(_))));
    let mut t1 = Plan::<f64>::type1(&[8, 8]).build().unwrap();
    assert!(matches!(t1.set_points3(&x, &s), Err(Error::BadType(_))));
    // grids too large: per dim (1D, X·S = 1e12) and in total (3D, ~2e4 points per dim)
    let mut p1 = Plan::<f64>::type3(1).tol(1e-6).build().unwrap();
    let e = p1
        .set_points3(&[vec![-1e6, 1e6]], &[vec![-1e6, 1e6]])
        .unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("grid"),
        "{e}"
    );
    let mut p3 = Plan::<f32>::type3(3).tol(1e-3).build().unwrap();
    let xs = vec![vec![-100.0f32, 100.0]; 3];
    let ss = vec![vec![-300.0f32, 300.0]; 3];
    let e = p3.set_points3(&xs, &ss).unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("grid"),
        "{e}"
    );
    // the plan still works afterwards
    p3.set_points3(&vec![vec![-1.0f32, 1.0]; 3], &vec![vec![-3.0f32, 3.0]; 3])
        .unwrap();
    let mut out = vec![Complex::default(); 2];
    p3.execute(&[Complex::new(1.0, 0.0); 2], &mut out).unwrap();
    let exact = p3
        .direct_sample(&[Complex::new(1.0, 0.0); 2], &[0, 1])
        .unwrap();
    assert!(warpfft::relative_l2_error(&out, &exact) <= 1e-3);
    let info = p3.info().unwrap();
    let t3 = info.type3.unwrap();
    assert_eq!(t3.n_targets, Some(2));
    assert_eq!(info.n_points, Some(2));
    assert!(info.workspace_bytes > 0);
}

/// New points with other spreads reallocate the grids; the same spreads reuse them.
#[test]
fn repeated_setpts() {
    if !gpu_or_skip("gpu_type3::repeated_setpts") {
        return;
    }
    let mut rng = Rng::new(11);
    let mut plan = Plan::<f32>::type3(2).tol(1e-4).build().unwrap();
    for (round, smax) in [50.0, 50.0, 200.0, 10.0].into_iter().enumerate() {
        let p = problem(&mut rng, 2, 2000, 1500 + 100 * round, smax, Dist::Uniform);
        plan.set_points3(&to_t::<f32>(&p.x), &to_t::<f32>(&p.s))
            .unwrap();
        let c = strengths::<f32>(&mut rng, 2000);
        let mut f = vec![Complex::default(); plan.fk_len()];
        plan.execute(&c, &mut f).unwrap();
        let k = f.len();
        let sample: Vec<usize> = (0..k).step_by(7).collect();
        let e = transform_error(&plan, &c, &f, (2000, k), 0, &sample).unwrap();
        println!(
            "round {round} S {smax}: err {e:.2e}, n_fine {:?}",
            plan.info().unwrap().n_fine
        );
        assert!(e <= 1e-4, "round {round}: {e:.3e}");
    }
}
