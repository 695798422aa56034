//! Accuracy of types 1 and 2 against the exact sums: every dim and precision through every
//! path and mode order, the sign and points outside the base period, the ends of the tol range,
//! a hand-computed sum, the free direct_sample, and spread/interp-only against the kernel sum.

use crate::common::kernel_shape::KernelShape;
use crate::common::Rng;
use crate::{check_batch, run, Path, NTRANSF, PI, TOL_F32, TOL_F64};
use warpfft::{Complex, ModeOrder, Plan, Real, TransformType};

/// One accuracy case: all mode orders and paths for a type, shape and precision.
fn accuracy<T: Real>(ty: TransformType, n_modes: &[usize], tol: f64) {
    let m = 2000;
    let mut rng = Rng::from_state(0x5EED ^ ((n_modes.len() as u64) << 8) ^ (ty.as_raw() as u64));
    let coords: Vec<Vec<T>> = rng.coords(n_modes.len(), m, PI);
    let n: usize = n_modes.iter().product();
    let in_len = NTRANSF * if ty == TransformType::Type1 { m } else { n };
    let input = rng.complex::<T>(in_len);
    for modeord in [ModeOrder::Cmcl, ModeOrder::Fft] {
        for path in [Path::Host, Path::Device, Path::Raw] {
            let builder = Plan::<T>::builder(ty, n_modes)
                .tol(tol)
                .modeord(modeord)
                .ntransf(NTRANSF);
            let (output, plan, _keep) = run(builder, &coords, &input, path);
            let err = check_batch(&plan, &input, &output, &mut rng);
            let case = format!("{ty:?} {n_modes:?} {:?} {modeord:?} {path:?}", T::PRECISION);
            eprintln!("{case}: relative l2 error {err:.2e} (tol {tol:.0e})");
            assert!(
                err <= tol,
                "{case}: relative l2 error {err:.3e} > tol {tol:.0e}"
            );
        }
    }
}

/// Two tests per case, `f32 name, f64 name: type, modes;`: every mode order and path, in f32 at
/// TOL_F32 and in f64 at TOL_F64.
macro_rules! accuracy_tests {
    ($($name32:ident, $name64:ident: $ty:ident, $modes:expr;)*) => {
        $(
            #[test]
            fn $name32() {
                require_gpu!();
                accuracy::<f32>(TransformType::$ty, &$modes, TOL_F32);
            }

            #[test]
            fn $name64() {
                require_gpu!();
                accuracy::<f64>(TransformType::$ty, &$modes, TOL_F64);
            }
        )*
    };
}

accuracy_tests! {
    type1_1d_f32, type1_1d_f64: Type1, [301];
    type1_2d_f32, type1_2d_f64: Type1, [48, 37];
    type1_3d_f32, type1_3d_f64: Type1, [20, 15, 12];
    type2_1d_f32, type2_1d_f64: Type2, [301];
    type2_2d_f32, type2_2d_f64: Type2, [48, 37];
    type2_3d_f32, type2_3d_f64: Type2, [20, 15, 12];
}

#[test]
fn negative_sign_and_points_outside_the_base_period() {
    require_gpu!();
    let mut rng = Rng::from_state(7);
    let m = 1500;
    // Points in [-3π, 3π), plus the period ends themselves: all fold into [-π, π).
    let mut x: Vec<f64> = rng.points(m, 3.0 * PI);
    let mut y: Vec<f64> = rng.points(m, 3.0 * PI);
    x[..4].copy_from_slice(&[-PI, PI, 3.0 * PI, -10.0 * PI]);
    y[..4].copy_from_slice(&[PI, -PI, 0.0, 7.5]);
    for ty in [TransformType::Type1, TransformType::Type2] {
        let builder = Plan::<f64>::builder(ty, &[33, 40]).tol(TOL_F64).iflag(-1);
        let n = 33 * 40;
        let input = rng.complex::<f64>(if ty == TransformType::Type1 { m } else { n });
        let (output, plan, _) = run(builder, &[x.clone(), y.clone()], &input, Path::Host);
        assert_eq!(plan.sign(), -1);
        let err = check_batch(&plan, &input, &output, &mut rng);
        assert!(
            err <= TOL_F64,
            "{ty:?} iflag -1, wide points: error {err:.3e}"
        );
    }
}

#[test]
fn tol_range_ends_meet_the_contract() {
    require_gpu!();
    let mut rng = Rng::from_state(11);
    let m = 1000;
    let coords: Vec<Vec<f32>> = rng.coords(2, m, PI);
    let input = rng.complex::<f32>(m);
    for tol in [1e-1, 1e-3, 1e-6] {
        let b = Plan::<f32>::type1(&[32, 32]).tol(tol);
        let (output, plan, _) = run(b, &coords, &input, Path::Host);
        let err = check_batch(&plan, &input, &output, &mut rng);
        assert!(err <= tol, "f32 tol {tol:e}: error {err:.3e}");
    }
    let coords: Vec<Vec<f64>> = rng.coords(1, m, PI);
    let input = rng.complex::<f64>(m);
    for tol in [1e-4, 1e-12] {
        let b = Plan::<f64>::type1(&[64]).tol(tol);
        let (output, plan, _) = run(b, &coords, &input, Path::Host);
        let err = check_batch(&plan, &input, &output, &mut rng);
        assert!(err <= tol, "f64 tol {tol:e}: error {err:.3e}");
    }
}

#[test]
fn type1_1d_matches_a_hand_computed_sum() {
    require_gpu!();
    // One point at x = 0.5 with c = 1: f[k] = exp(i k 0.5); CMCL order for N = 4: k = -2..1.
    let mut plan = Plan::<f64>::type1(&[4]).tol(1e-12).build().unwrap();
    plan.set_points(&[[0.5f64]]).unwrap();
    let mut fk = vec![Complex::default(); 4];
    plan.execute(&[Complex::new(1.0, 0.0)], &mut fk).unwrap();
    for (i, f) in fk.iter().enumerate() {
        let k = i as f64 - 2.0;
        let want = Complex::new((0.5 * k).cos(), (0.5 * k).sin());
        assert!((f - want).norm() < 1e-10, "k = {k}: {f} vs {want}");
    }
}

#[test]
fn free_direct_sample_matches_the_plan_one() {
    require_gpu!();
    let mut rng = Rng::from_state(13);
    let m = 200;
    let coords: Vec<Vec<f32>> = rng.coords(3, m, PI);
    for ty in [TransformType::Type1, TransformType::Type2] {
        for modeord in [ModeOrder::Cmcl, ModeOrder::Fft] {
            let builder = Plan::<f32>::builder(ty, &[6, 5, 4]).modeord(modeord);
            let mut plan = builder.build().unwrap();
            plan.set_points(&coords).unwrap();
            let input = rng.complex::<f32>(if ty == TransformType::Type1 { m } else { 120 });
            let sample = [0, 1, 7, 59, 119];
            let a = plan.direct_sample(&input, &sample).unwrap();
            let b = warpfft::direct_sample(&builder, &coords, &input, &sample).unwrap();
            assert!(
                warpfft::relative_l2_error(&b, &a) < 1e-12,
                "{ty:?} {modeord:?}"
            );
        }
    }
}

/// Per-dimension kernel weights of every grid index for a point: periodic on n points. The
/// kernel is kernels/kernel_shape.h's, read by `common::kernel_shape`.
fn kernel_row(k: &KernelShape, x: f64, n: usize, w: f64, beta: f64) -> Vec<f64> {
    let mut u = x / (2.0 * PI);
    u = (u - u.floor()) * n as f64;
    if u >= n as f64 {
        u -= n as f64;
    }
    (0..n)
        .map(|i| {
            [-1.0, 0.0, 1.0]
                .iter()
                .map(|m| k.phi(i as f64 + m * n as f64 - u, w, beta))
                .sum()
        })
        .collect()
}

/// spread_interp_only (the reference's gpu_spreadinterponly): type 1 spreads onto the mode
/// array itself and type 2 interpolates from it, no FFT, no deconvolution; checked against the
/// direct kernel sum with the plan's width and beta (2D, f64, dimension 1 fastest).
#[test]
fn spread_interp_only_is_the_kernel_sum() {
    require_gpu!();
    let mut rng = Rng::from_state(11);
    let (m, n1, n2) = (400, 30, 26);
    let x: Vec<f64> = rng.points(m, PI);
    let y: Vec<f64> = rng.points(m, PI);
    let ks = KernelShape::load();
    for ty in [TransformType::Type1, TransformType::Type2] {
        let mut plan = Plan::<f64>::builder(ty, &[n1, n2])
            .tol(1e-9)
            .spread_interp_only(true)
            .build()
            .expect("spread/interp-only plan");
        let info = plan.info().unwrap();
        assert_eq!(&info.n_fine[..2], &[n1, n2]);
        let (w, beta) = (info.width as f64, info.beta);
        plan.set_points(&[x.clone(), y.clone()]).unwrap();
        let rows1: Vec<Vec<f64>> = x.iter().map(|&v| kernel_row(&ks, v, n1, w, beta)).collect();
        let rows2: Vec<Vec<f64>> = y.iter().map(|&v| kernel_row(&ks, v, n2, w, beta)).collect();
        let (n_in, n_out) = if ty == TransformType::Type1 {
            (m, n1 * n2)
        } else {
            (n1 * n2, m)
        };
        let input = rng.complex::<f64>(n_in);
        let mut output = vec![Complex::new(0.0, 0.0); n_out];
        plan.execute(&input, &mut output).unwrap();
        let mut want = vec![Complex::new(0.0f64, 0.0); n_out];
        for j in 0..m {
            for i2 in 0..n2 {
                for i1 in 0..n1 {
                    let k = rows1[j][i1] * rows2[j][i2];
                    if ty == TransformType::Type1 {
                        want[i1 + n1 * i2] += input[j] * k;
                    } else {
                        want[j] += input[i1 + n1 * i2] * k;
                    }
                }
            }
        }
        let num: f64 = output
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).norm_sqr())
            .sum();
        let den: f64 = want.iter().map(|b| b.norm_sqr()).sum();
        let err = (num / den).sqrt();
        assert!(
            err < 1e-12,
            "{ty:?} spread/interp only: error {err:.3e} vs the kernel sum"
        );
    }
}
