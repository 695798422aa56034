//! Real-valued data (option `real_data`, [`RealPlan`]; docs/real.md) on a GPU: type 1 (real
//! strengths → the half modes `N1/2 + 1` along dimension 1) and type 2 (half modes → real
//! values) against exact sums computed here on the host in f64 (with the coordinates as the
//! plan saw them), for dims 1-3, f32 and f64, ntransf 2, even and odd N1, modeord 0 and 1, and
//! every method the plan takes (GM, SM; OD for type 1): relative l2 error ≤ max(tol,
//! tol_floor), the contract of docs/accuracy.md. Then the real transforms against the complex
//! ones of the same data: real type 1 equals the complex type 1 of the same real strengths at
//! k1 ≥ 0, real type 2 equals Re of the complex type 2 of the Hermitian extension of the half
//! modes (odd sizes: every half mode has its mirror in the full array). Then the argument
//! checks that need a plan. Skips visibly without a GPU.

#[macro_use]
mod common;
use common::{Failures, Rng};
use warpfft::{Complex, Error, Method, ModeOrder, Plan, Real, RealPlan, TransformType};

const NTRANSF: usize = 2;

/// A mode index of an axis of `n` modes in `modeord`'s order (warpfft.h: CMCL `-n/2 ..`, FFT
/// `0 .. , -n/2 ..`).
fn k_of(i: usize, n: usize, modeord: ModeOrder) -> f64 {
    let (i, n) = (i as i64, n as i64);
    (match modeord {
        ModeOrder::Cmcl => i - n / 2,
        _ if i < (n + 1) / 2 => i,
        _ => i - n,
    }) as f64
}

/// The wave vectors of the half-mode array, in its memory order (dimension 1 fastest, `k1 = i1`;
/// dimensions 2 and 3 by `modeord`).
fn half_ks(n: &[usize], modeord: ModeOrder) -> Vec<[f64; 3]> {
    let mut full = [1usize; 3];
    full[..n.len()].copy_from_slice(n);
    let h1 = full[0] / 2 + 1;
    let mut ks = Vec::with_capacity(h1 * full[1] * full[2]);
    for i3 in 0..full[2] {
        for i2 in 0..full[1] {
            for i1 in 0..h1 {
                let k2 = if n.len() > 1 {
                    k_of(i2, full[1], modeord)
                } else {
                    0.0
                };
                let k3 = if n.len() > 2 {
                    k_of(i3, full[2], modeord)
                } else {
                    0.0
                };
                ks.push([i1 as f64, k2, k3]);
            }
        }
    }
    ks
}

/// The phase `sign · k·x_j` of point `j`.
fn phase(sign: f64, k: &[f64; 3], x: &[Vec<f64>], j: usize) -> f64 {
    sign * x.iter().zip(k).map(|(xd, kd)| kd * xd[j]).sum::<f64>()
}

/// Exact real type 1: `fk[t][k] = Σ_j c[t][j] e^{sign i k·x_j}` over the half modes.
fn exact1(sign: f64, ks: &[[f64; 3]], x: &[Vec<f64>], c: &[f64]) -> Vec<Complex<f64>> {
    let m = x[0].len();
    let mut fk = vec![Complex::new(0.0, 0.0); NTRANSF * ks.len()];
    for (ik, k) in ks.iter().enumerate() {
        for j in 0..m {
            let e = Complex::from_polar(1.0, phase(sign, k, x, j));
            for t in 0..NTRANSF {
                fk[t * ks.len() + ik] += e * c[t * m + j];
            }
        }
    }
    fk
}

/// Exact real type 2: `c[t][j] = Re Σ_{k in half} a_k1 fk[t][k] e^{sign i k·x_j}`, `a_0 = 1`,
/// `a_k1 = 2` for `k1 > 0`.
fn exact2(sign: f64, ks: &[[f64; 3]], x: &[Vec<f64>], fk: &[Complex<f64>]) -> Vec<f64> {
    let m = x[0].len();
    let mut c = vec![0.0; NTRANSF * m];
    for j in 0..m {
        for (ik, k) in ks.iter().enumerate() {
            let a = if k[0] == 0.0 { 1.0 } else { 2.0 };
            let e = Complex::from_polar(a, phase(sign, k, x, j));
            for t in 0..NTRANSF {
                c[t * m + j] += (fk[t * ks.len() + ik] * e).re;
            }
        }
    }
    c
}

/// Relative l2 distance of `a` from `b`, over the components of each.
fn rel(a: impl Iterator<Item = f64>, b: impl Iterator<Item = f64>) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (a, b) in a.zip(b) {
        num += (a - b) * (a - b);
        den += b * b;
    }
    (num / den).sqrt()
}

fn parts<T: Real>(v: &[Complex<T>]) -> impl Iterator<Item = f64> + '_ {
    v.iter().flat_map(|z| [z.re.to_f64(), z.im.to_f64()])
}

fn parts64(v: &[Complex<f64>]) -> impl Iterator<Item = f64> + '_ {
    v.iter().flat_map(|z| [z.re, z.im])
}

/// The shapes a dimension is tested at: (modes with an even N1, modes with an odd N1, M).
fn shapes(dim: usize) -> (&'static [usize], &'static [usize], usize) {
    match dim {
        1 => (&[32], &[33], 600),
        2 => (&[20, 12], &[21, 12], 800),
        _ => (&[12, 10, 8], &[13, 10, 8], 1000),
    }
}

fn tol_of<T: Real>() -> f64 {
    if T::PRECISION == warpfft::Precision::F32 {
        1e-5
    } else {
        1e-10
    }
}

/// Points (as the plan sees them, and in f64 for the sums) and the data of a case.
struct Data<T: Real> {
    x: Vec<Vec<T>>,
    x64: Vec<Vec<f64>>,
}

fn data<T: Real>(rng: &mut Rng, dim: usize, m: usize) -> Data<T> {
    let x: Vec<Vec<T>> = rng.coords(dim, m, std::f64::consts::PI);
    let x64 = x
        .iter()
        .map(|v| v.iter().map(|&a| a.to_f64()).collect())
        .collect();
    Data { x, x64 }
}

/// The real plan of a case with its points set; `None` (printed) where the GPU refused to
/// build it, which the caller records as a failure.
fn real_plan<T: Real>(
    ty: TransformType,
    n: &[usize],
    modeord: ModeOrder,
    method: Method,
    d: &Data<T>,
) -> Result<RealPlan<T>, Error> {
    let mut plan = Plan::<T>::builder(ty, n)
        .tol(tol_of::<T>())
        .modeord(modeord)
        .method(method)
        .ntransf(NTRANSF)
        .build_real()?;
    plan.set_points(&d.x)?;
    Ok(plan)
}

/// One case's error against the exact sums, and the bound it must meet.
fn case_error<T: Real>(
    ty: TransformType,
    n: &[usize],
    modeord: ModeOrder,
    method: Method,
    rng: &mut Rng,
    m: usize,
) -> Result<(f64, f64), Error> {
    let d = data::<T>(rng, n.len(), m);
    let mut plan = real_plan(ty, n, modeord, method, &d)?;
    let bound = {
        let info = plan.info()?;
        info.tol.max(info.tol_floor)
    };
    let ks = half_ks(n, modeord);
    let sign = plan.sign() as f64;
    let err = if ty == TransformType::Type1 {
        let c: Vec<T> = (0..NTRANSF * m)
            .map(|_| T::from_f64(rng.sym(1.0)))
            .collect();
        let mut fk = vec![Complex::<T>::default(); plan.fk_len()];
        plan.execute(&c, &mut fk)?;
        let c64: Vec<f64> = c.iter().map(|v| v.to_f64()).collect();
        let exact = exact1(sign, &ks, &d.x64, &c64);
        rel(parts(&fk), parts64(&exact))
    } else {
        let fk: Vec<Complex<T>> = rng.complex(plan.fk_len());
        let mut c = vec![T::default(); NTRANSF * m];
        plan.execute(&fk, &mut c)?;
        let fk64: Vec<Complex<f64>> = fk
            .iter()
            .map(|z| Complex::new(z.re.to_f64(), z.im.to_f64()))
            .collect();
        let exact = exact2(sign, &ks, &d.x64, &fk64);
        rel(c.iter().map(|v| v.to_f64()), exact.into_iter())
    };
    Ok((err, bound))
}

/// Every case of one precision against the exact sums: dims 1-3 × type × even/odd N1 ×
/// modeord × method, printed as a table; every row must hold.
fn against_direct_sums<T: Real>() {
    let mut fails = Failures::default();
    let mut rng = Rng::new(43);
    println!(
        "real data vs exact sums, {:?}, ntransf {NTRANSF}\ndim type N               modeord method  error      bound      ok",
        T::PRECISION
    );
    for dim in 1..=3 {
        let (even, odd, m) = shapes(dim);
        for ty in [TransformType::Type1, TransformType::Type2] {
            let methods: &[Method] = if ty == TransformType::Type1 {
                &[
                    Method::GlobalMemory,
                    Method::SharedMemory,
                    Method::OutputDriven,
                ]
            } else {
                &[Method::GlobalMemory, Method::SharedMemory]
            };
            for n in [even, odd] {
                for modeord in [ModeOrder::Cmcl, ModeOrder::Fft] {
                    for &method in methods {
                        let label = format!("{dim}D {ty:?} {n:?} {modeord:?} {method:?}");
                        match case_error::<T>(ty, n, modeord, method, &mut rng, m) {
                            Ok((err, bound)) => {
                                let ok = fails.verdict(err <= bound, || {
                                    format!("{label}: error {err:.2e} > {bound:.1e}")
                                });
                                println!(
                                    "{dim}   {:<4} {:<15} {:<7} {:<7} {err:<10.2e} {bound:<10.1e} {ok}",
                                    format!("{ty:?}").trim_start_matches("Type"),
                                    format!("{n:?}"),
                                    format!("{modeord:?}"),
                                    format!("{method:?}").chars().filter(|c| c.is_uppercase()).collect::<String>(),
                                );
                            }
                            Err(e) => {
                                println!("{label}: failed: {e}");
                                fails.verdict(false, || format!("{label}: {e}"));
                            }
                        }
                    }
                }
            }
        }
    }
    fails.assert_none("real data against the exact sums");
}

/// Real type 1 against the complex type 1 of the same real strengths, at every half mode the
/// complex array holds (k1 = 0 .. (N1-1)/2), and real type 2 against Re of the complex type 2
/// of the half modes' Hermitian extension (odd sizes). Both plans meet tol against the same
/// exact values, so they differ by at most twice the bound.
fn against_complex<T: Real>() {
    let mut fails = Failures::default();
    let mut rng = Rng::new(44);
    for dim in 1..=3 {
        let (even, odd, m) = shapes(dim);
        let all_odd: &[usize] = match dim {
            1 => &[33],
            2 => &[21, 13],
            _ => &[13, 11, 9],
        };
        for modeord in [ModeOrder::Cmcl, ModeOrder::Fft] {
            for n in [even, odd] {
                let r = type1_vs_complex::<T>(n, modeord, &mut rng, m);
                record(&mut fails, &format!("{dim}D type 1 {n:?} {modeord:?}"), r);
            }
            let r = type2_vs_complex::<T>(all_odd, modeord, &mut rng, m);
            record(
                &mut fails,
                &format!("{dim}D type 2 {all_odd:?} {modeord:?}"),
                r,
            );
        }
    }
    fails.assert_none("real data against the complex transforms");
}

fn record(fails: &mut Failures, label: &str, r: Result<(f64, f64), Error>) {
    match r {
        Ok((diff, bound)) => {
            let ok = fails.verdict(diff <= bound, || {
                format!("{label}: real vs complex {diff:.2e} > {bound:.1e}")
            });
            println!("{label:<36} real vs complex {diff:.2e} (bound {bound:.1e}) {ok}");
        }
        Err(e) => {
            println!("{label}: failed: {e}");
            fails.verdict(false, || format!("{label}: {e}"));
        }
    }
}

/// The full-array index (memory order, dimension 1 fastest) of wave vector `k`, if the full
/// array of `n` modes in `modeord` holds it.
fn full_index(k: [i64; 3], n: &[usize], modeord: ModeOrder) -> Option<usize> {
    let mut idx = 0;
    let mut stride = 1;
    for (d, &kd) in k.iter().enumerate() {
        let nd = n.get(d).copied().unwrap_or(1) as i64;
        let i = match modeord {
            ModeOrder::Cmcl => kd + nd / 2,
            _ if kd >= 0 => kd,
            _ => kd + nd,
        };
        // both orders hold k_d in -(N_d/2) ..= (N_d-1)/2
        if kd < -(nd / 2) || kd > (nd - 1) / 2 {
            return None;
        }
        idx += i as usize * stride;
        stride *= nd as usize;
    }
    Some(idx)
}

fn complex_plan<T: Real>(
    ty: TransformType,
    n: &[usize],
    modeord: ModeOrder,
    d: &Data<T>,
) -> Result<Plan<T>, Error> {
    let mut plan = Plan::<T>::builder(ty, n)
        .tol(tol_of::<T>())
        .modeord(modeord)
        .ntransf(NTRANSF)
        .build()?;
    plan.set_points(&d.x)?;
    Ok(plan)
}

fn type1_vs_complex<T: Real>(
    n: &[usize],
    modeord: ModeOrder,
    rng: &mut Rng,
    m: usize,
) -> Result<(f64, f64), Error> {
    let d = data::<T>(rng, n.len(), m);
    let mut real = real_plan(TransformType::Type1, n, modeord, Method::Auto, &d)?;
    let mut cplx = complex_plan(TransformType::Type1, n, modeord, &d)?;
    let c: Vec<T> = (0..NTRANSF * m)
        .map(|_| T::from_f64(rng.sym(1.0)))
        .collect();
    let cz: Vec<Complex<T>> = c.iter().map(|&v| Complex::new(v, T::default())).collect();
    let mut half = vec![Complex::<T>::default(); real.fk_len()];
    let mut full = vec![Complex::<T>::default(); cplx.fk_len()];
    real.execute(&c, &mut half)?;
    cplx.execute(&cz, &mut full)?;
    let ks = half_ks(n, modeord);
    let (hn, fnn) = (ks.len(), cplx.modes_per_transform());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for t in 0..NTRANSF {
        for (ih, k) in ks.iter().enumerate() {
            let k = [k[0] as i64, k[1] as i64, k[2] as i64];
            if let Some(i) = full_index(k, n, modeord) {
                a.push(half[t * hn + ih]);
                b.push(full[t * fnn + i]);
            }
        }
    }
    // every half mode but, for even N1, the k1 = N1/2 column (one past the complex range)
    let nyquist = if n[0] % 2 == 0 {
        hn / (n[0] / 2 + 1)
    } else {
        0
    };
    assert_eq!(a.len(), NTRANSF * (hn - nyquist), "modes compared");
    let bound = 2.0 * real.info()?.tol.max(real.info()?.tol_floor);
    Ok((rel(parts(&a), parts(&b)), bound))
}

fn type2_vs_complex<T: Real>(
    n: &[usize],
    modeord: ModeOrder,
    rng: &mut Rng,
    m: usize,
) -> Result<(f64, f64), Error> {
    assert!(
        n.iter().all(|v| v % 2 == 1),
        "the extension needs odd sizes"
    );
    let d = data::<T>(rng, n.len(), m);
    let mut real = real_plan(TransformType::Type2, n, modeord, Method::Auto, &d)?;
    let mut cplx = complex_plan(TransformType::Type2, n, modeord, &d)?;
    let half: Vec<Complex<T>> = rng.complex(real.fk_len());
    // The Hermitian extension: f[k] for k1 >= 0 from the half, f[-k] = conj(f[k]) for k1 > 0.
    let ks = half_ks(n, modeord);
    let (hn, fnn) = (ks.len(), cplx.modes_per_transform());
    let mut full = vec![Complex::<T>::default(); cplx.fk_len()];
    for t in 0..NTRANSF {
        for (ih, k) in ks.iter().enumerate() {
            let k = [k[0] as i64, k[1] as i64, k[2] as i64];
            let v = half[t * hn + ih];
            let i = full_index(k, n, modeord).expect("odd sizes hold every half mode");
            full[t * fnn + i] = v;
            if k[0] > 0 {
                let j = full_index([-k[0], -k[1], -k[2]], n, modeord).expect("and its mirror");
                full[t * fnn + j] = Complex::new(v.re, T::from_f64(-v.im.to_f64()));
            }
        }
    }
    let mut c = vec![T::default(); NTRANSF * m];
    let mut cz = vec![Complex::<T>::default(); NTRANSF * m];
    real.execute(&half, &mut c)?;
    cplx.execute(&full, &mut cz)?;
    let bound = 2.0 * real.info()?.tol.max(real.info()?.tol_floor);
    let diff = rel(
        c.iter().map(|v| v.to_f64()),
        cz.iter().map(|z| z.re.to_f64()),
    );
    Ok((diff, bound))
}

/// What a real plan refuses, on a GPU: the other type's direction, wrong lengths, no points.
fn argument_checks() {
    let mut plan = match Plan::<f32>::type1(&[16, 8]).build_real() {
        Ok(p) => p,
        Err(e) => panic!("a real type-1 plan: {e}"),
    };
    assert_eq!(plan.half_modes(), &[9, 8]);
    assert_eq!(plan.fk_len(), 72);
    let c = vec![0.5f32; 10];
    let mut fk = vec![Complex::<f32>::default(); 72];
    let e = plan.execute(&c, &mut fk).unwrap_err();
    assert!(matches!(e, Error::NoPoints(_)), "{e:?}");
    let x = vec![0.1f32; 10];
    plan.set_points(&[&x, &x]).unwrap();
    let mut out = vec![0f32; 10];
    let e = plan.execute(&fk, &mut out).unwrap_err();
    assert!(
        matches!(e, Error::BadType(_)),
        "type 2's direction on type 1: {e:?}"
    );
    let mut short = vec![Complex::<f32>::default(); 71];
    let e = plan.execute(&c, &mut short).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    assert!(e.message().contains("72"), "{e}");
    plan.execute(&c, &mut fk).unwrap();
    // Every value there is Σ_j 0.5 e^{i k·0.1 (1,1)}: |f| = 5 at each mode.
    assert!(
        fk.iter().all(|z| (z.norm() - 5.0).abs() < 1e-4),
        "{:?}",
        &fk[..3]
    );
    // build() of a real builder and type 3 are refused before the GPU.
    assert!(Plan::<f32>::type2(&[8]).real_data(true).build().is_err());
    let e = Plan::<f64>::type3(1)
        .option("real_data", 1)
        .build()
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArg(_) | Error::Unsupported(_)),
        "{e:?}"
    );
}

gpu_tests! {
    real_data_matches_direct_sums_f32: against_direct_sums::<f32>();
    real_data_matches_direct_sums_f64: against_direct_sums::<f64>();
    real_data_matches_complex_transforms_f32: against_complex::<f32>();
    real_data_matches_complex_transforms_f64: against_complex::<f64>();
    real_plan_argument_checks: argument_checks();
}
