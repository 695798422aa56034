//! The safe API on a GPU: accuracy of types 1 and 2 in 1, 2 and 3 dimensions, f32 and f64,
//! through the host-slice, device-buffer and raw-pointer paths, against the exact sums of
//! `direct_sample`; plus the error contract (bad points, no points, shapes) and ownership.
//!
//! Every test starts with `require_gpu!()`, which returns early with
//! "skipped: no GPU (<reason>)" on stderr when the driver or device is missing, so the file
//! passes (vacuously) on machines without a GPU.

use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int, c_uint};

use warpfft::{Complex, DeviceBuffer, Error, ModeOrder, Plan, Real, TransformType};

#[macro_use]
mod common; // require_gpu!

/// splitmix64: a tiny deterministic generator, enough for test data.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [-a, a).
    fn sym(&mut self, a: f64) -> f64 {
        a * (2.0 * self.uniform() - 1.0)
    }
    fn points<T: Real>(&mut self, m: usize, a: f64) -> Vec<T> {
        (0..m).map(|_| T::from_f64(self.sym(a))).collect()
    }
    fn complex<T: Real>(&mut self, n: usize) -> Vec<Complex<T>> {
        (0..n)
            .map(|_| Complex::new(T::from_f64(self.sym(1.0)), T::from_f64(self.sym(1.0))))
            .collect()
    }
}

const PI: f64 = std::f64::consts::PI;
const TOL_F32: f64 = 1e-5;
const TOL_F64: f64 = 1e-9;
const NTRANSF: usize = 3;

/// How data reach the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    /// `set_points` / `execute` on host slices.
    Host,
    /// `set_device_points` / `execute_device` on `DeviceBuffer`s.
    Device,
    /// `set_points_raw` / `execute_raw` on raw device addresses.
    Raw,
}

/// Output indices of one transform: all of them up to 20000, else 20000 stratified plus the last.
fn sample_indices(rng: &mut Rng, n: usize) -> Vec<usize> {
    // Every output where the exact sum is cheap: tol bounds the l2 error of the whole output,
    // and a few dozen samples estimate it only to ~+-30% (band-edge modes carry most of it).
    if n <= 20_000 {
        return (0..n).collect();
    }
    // one at random in each of 20000 equal strata (evenly spaced ones can all share a mode
    // index, e.g. the band edge -N/2 of the last dim)
    let mut s: Vec<usize> = (0..20_000)
        .map(|i| (((i as f64 + rng.uniform()) * n as f64 / 20_000.0) as usize).min(n - 1))
        .collect();
    s.push(n - 1);
    s
}

/// Runs one transform through `path` and returns (input, output, plan) for checking.
fn run<T: Real>(
    builder: warpfft::PlanBuilder<T>,
    coords: &[Vec<T>],
    input: &[Complex<T>],
    path: Path,
) -> (Vec<Complex<T>>, Plan<T>, Vec<DeviceBuffer<T>>) {
    let mut plan = builder.build().expect("build");
    let m = coords[0].len();
    let out_len = match plan.transform_type() {
        TransformType::Type1 => plan.fk_len(),
        _ => plan.ntransf() * m,
    };
    let mut keep = Vec::new(); // raw path: the caller keeps the point arrays alive
    let output = match path {
        Path::Host => {
            plan.set_points(coords).expect("set_points");
            let mut out = vec![Complex::default(); out_len];
            plan.execute(input, &mut out).expect("execute");
            out
        }
        Path::Device => {
            let bufs = coords.iter().map(|x| DeviceBuffer::from_slice(x).unwrap());
            plan.set_device_points(bufs).expect("set_device_points");
            let din = DeviceBuffer::from_slice(input).unwrap();
            let mut dout = DeviceBuffer::zeros(out_len).unwrap();
            plan.execute_device(&din, &mut dout)
                .expect("execute_device");
            dout.to_vec().unwrap()
        }
        Path::Raw => {
            keep = coords
                .iter()
                .map(|x| DeviceBuffer::from_slice(x).unwrap())
                .collect();
            let mut xyz = [0u64; 3];
            for (d, b) in keep.iter().enumerate() {
                xyz[d] = b.as_raw();
            }
            let din = DeviceBuffer::from_slice(input).unwrap();
            let dout = DeviceBuffer::<Complex<T>>::zeros(out_len).unwrap();
            let (c, fk) = match plan.transform_type() {
                TransformType::Type1 => (din.as_raw(), dout.as_raw()),
                _ => (dout.as_raw(), din.as_raw()),
            };
            // SAFETY: the arrays are live device buffers of the right lengths; `keep` holds the
            // points until the plan is dropped, and we synchronise before reading.
            unsafe {
                plan.set_points_raw(m, xyz[0], xyz[1], xyz[2])
                    .expect("set_points_raw");
                plan.execute_raw(c, fk).expect("execute_raw");
            }
            plan.synchronize().unwrap();
            dout.to_vec().unwrap()
        }
    };
    (output, plan, keep)
}

/// Checks every transform of the batch at ~50 outputs against `direct_sample`; returns the
/// worst relative l2 error.
fn check_batch<T: Real>(
    plan: &Plan<T>,
    input: &[Complex<T>],
    output: &[Complex<T>],
    rng: &mut Rng,
) -> f64 {
    let m = plan.n_points().unwrap();
    let n = plan.modes_per_transform();
    let (in_len, out_len) = match plan.transform_type() {
        TransformType::Type1 => (m, n),
        _ => (n, m),
    };
    let mut worst = 0.0f64;
    for t in 0..plan.ntransf() {
        let sample = sample_indices(rng, out_len);
        let exact = plan
            .direct_sample(&input[t * in_len..(t + 1) * in_len], &sample)
            .unwrap();
        let approx: Vec<Complex<T>> = sample.iter().map(|&s| output[t * out_len + s]).collect();
        worst = worst.max(warpfft::relative_l2_error(&approx, &exact));
    }
    worst
}

/// One accuracy case: all mode orders and paths for a type, shape and precision.
fn accuracy<T: Real>(ty: TransformType, n_modes: &[usize], tol: f64) {
    let m = 2000;
    let mut rng = Rng(0x5EED ^ ((n_modes.len() as u64) << 8) ^ (ty.as_raw() as u64));
    let coords: Vec<Vec<T>> = (0..n_modes.len()).map(|_| rng.points(m, PI)).collect();
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

#[test]
fn type1_1d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type1, &[301], TOL_F32);
}

#[test]
fn type1_2d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type1, &[48, 37], TOL_F32);
}

#[test]
fn type1_3d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type1, &[20, 15, 12], TOL_F32);
}

#[test]
fn type2_1d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type2, &[301], TOL_F32);
}

#[test]
fn type2_2d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type2, &[48, 37], TOL_F32);
}

#[test]
fn type2_3d_f32() {
    require_gpu!();
    accuracy::<f32>(TransformType::Type2, &[20, 15, 12], TOL_F32);
}

#[test]
fn type1_1d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type1, &[301], TOL_F64);
}

#[test]
fn type1_2d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type1, &[48, 37], TOL_F64);
}

#[test]
fn type1_3d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type1, &[20, 15, 12], TOL_F64);
}

#[test]
fn type2_1d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type2, &[301], TOL_F64);
}

#[test]
fn type2_2d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type2, &[48, 37], TOL_F64);
}

#[test]
fn type2_3d_f64() {
    require_gpu!();
    accuracy::<f64>(TransformType::Type2, &[20, 15, 12], TOL_F64);
}

#[test]
fn negative_sign_and_points_outside_the_base_period() {
    require_gpu!();
    let mut rng = Rng(7);
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
    let mut rng = Rng(11);
    let m = 1000;
    let coords: Vec<Vec<f32>> = vec![rng.points(m, PI), rng.points(m, PI)];
    let input = rng.complex::<f32>(m);
    for tol in [1e-1, 1e-3, 1e-6] {
        let b = Plan::<f32>::type1(&[32, 32]).tol(tol);
        let (output, plan, _) = run(b, &coords, &input, Path::Host);
        let err = check_batch(&plan, &input, &output, &mut rng);
        assert!(err <= tol, "f32 tol {tol:e}: error {err:.3e}");
    }
    let coords: Vec<Vec<f64>> = vec![rng.points(m, PI)];
    let input = rng.complex::<f64>(m);
    for tol in [1e-4, 1e-12] {
        let b = Plan::<f64>::type1(&[64]).tol(tol);
        let (output, plan, _) = run(b, &coords, &input, Path::Host);
        let err = check_batch(&plan, &input, &output, &mut rng);
        assert!(err <= tol, "f64 tol {tol:e}: error {err:.3e}");
    }
}

#[test]
fn per_thread_default_stream() {
    require_gpu!();
    // CU_STREAM_PER_THREAD (0x2) is a valid stream handle without any CUDA bindings: it
    // exercises the plan's "custom stream" paths (waits in the device-buffer methods).
    let mut rng = Rng(17);
    let m = 1000;
    let coords: Vec<Vec<f32>> = vec![rng.points(m, PI), rng.points(m, PI)];
    for ty in [TransformType::Type1, TransformType::Type2] {
        let n = 32 * 24;
        let input = rng.complex::<f32>(NTRANSF * if ty == TransformType::Type1 { m } else { n });
        for path in [Path::Host, Path::Device, Path::Raw] {
            let b = Plan::<f32>::builder(ty, &[32, 24])
                .tol(TOL_F32)
                .ntransf(NTRANSF);
            // SAFETY: CU_STREAM_PER_THREAD is valid for the process's lifetime.
            let b = unsafe { b.stream(2) };
            let (output, plan, _keep) = run(b, &coords, &input, path);
            assert_eq!(plan.stream(), 2);
            let err = check_batch(&plan, &input, &output, &mut rng);
            assert!(
                err <= TOL_F32,
                "{ty:?} {path:?} on stream 0x2: error {err:.3e}"
            );
        }
    }
}

#[test]
fn nan_or_inf_points_give_bad_points_then_no_points() {
    require_gpu!();
    let mut rng = Rng(3);
    let mut plan = Plan::<f32>::type1(&[16, 16])
        .tol(1e-4)
        .check_points(true)
        .build()
        .unwrap();
    let x: Vec<f32> = rng.points(100, PI);
    let mut y: Vec<f32> = rng.points(100, PI);
    let c = rng.complex::<f32>(100);
    let mut fk = vec![Complex::default(); plan.fk_len()];

    plan.set_points(&[&x, &y]).unwrap();
    plan.execute(&c, &mut fk).unwrap();

    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        y[57] = bad;
        let e = plan.set_points(&[&x, &y]).unwrap_err();
        assert!(matches!(e, Error::BadPoints(_)), "{bad}: {e:?}");
        assert!(!e.message().is_empty());
        assert_eq!(plan.n_points(), None);
        let e = plan.execute(&c, &mut fk).unwrap_err();
        assert!(
            matches!(e, Error::NoPoints(_)),
            "execute after bad points: {e:?}"
        );
    }
    // Device path too.
    let dx = DeviceBuffer::from_slice(&x).unwrap();
    let dy = DeviceBuffer::from_slice(&y).unwrap();
    let e = plan.set_device_points([dx, dy]).unwrap_err();
    assert!(matches!(e, Error::BadPoints(_)), "{e:?}");
    assert_eq!(
        plan.take_points().len(),
        2,
        "the plan keeps moved buffers on error"
    );

    // Good points again: the plan works.
    y[57] = 0.5;
    plan.set_points(&[&x, &y]).unwrap();
    plan.execute(&c, &mut fk).unwrap();
    let exact = plan.direct_sample(&c, &[0, 100, 255]).unwrap();
    let approx = [fk[0], fk[100], fk[255]];
    assert!(warpfft::relative_l2_error(&approx, &exact) <= 1e-4);
    // checked plans have checked already
    plan.setpts_check().unwrap();
}

/// The default (unchecked) mode: set_points returns at once; a NaN/inf coordinate makes every
/// output of the transform NaN and setpts_check reports BadPoints; good points afterwards work
/// again. Both types, GM and SM, 1D to 3D, enough points for many subproblems (run under
/// compute-sanitizer memcheck: the bad point must never index out of range).
#[test]
fn unchecked_bad_points_give_nan_outputs_and_setpts_check_reports_them() {
    require_gpu!();
    let mut rng = Rng(31);
    let m = 20_000;
    for (ty, n_modes, method) in [
        (
            TransformType::Type1,
            vec![40usize],
            warpfft::Method::SharedMemory,
        ),
        (
            TransformType::Type2,
            vec![24, 20],
            warpfft::Method::GlobalMemory,
        ),
        (
            TransformType::Type1,
            vec![12, 10, 8],
            warpfft::Method::GlobalMemory,
        ),
        (
            TransformType::Type2,
            vec![12, 10, 8],
            warpfft::Method::SharedMemory,
        ),
        (
            TransformType::Type1,
            vec![24, 20],
            warpfft::Method::SharedMemory,
        ),
    ] {
        let dim = n_modes.len();
        let mut plan = Plan::<f64>::builder(ty, &n_modes)
            .tol(1e-6)
            .ntransf(2)
            .method(method)
            .build()
            .unwrap();
        let mut coords: Vec<Vec<f64>> = (0..dim).map(|_| rng.points(m, PI)).collect();
        let (in_len, out_len) = if ty == TransformType::Type1 {
            (2 * m, plan.fk_len())
        } else {
            (plan.fk_len(), 2 * m)
        };
        let input = rng.complex::<f64>(in_len);
        let mut out = vec![Complex::default(); out_len];
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            coords[dim - 1][m / 3] = bad;
            coords[0][m - 1] = bad;
            plan.set_points(&coords).unwrap();
            assert_eq!(plan.n_points(), Some(m));
            let e = plan.setpts_check().unwrap_err();
            assert!(
                matches!(e, Error::BadPoints(_)),
                "{ty:?} {dim}D {bad}: {e:?}"
            );
            assert!(e.message().contains("NaN"), "{}", e.message());
            plan.execute(&input, &mut out).unwrap();
            let finite = out
                .iter()
                .filter(|v| v.re.is_finite() || v.im.is_finite())
                .count();
            assert_eq!(
                finite, 0,
                "{ty:?} {dim}D {method:?} {bad}: {finite} finite outputs"
            );
        }
        // good points again: the flag is cleared, the transform is accurate
        coords[dim - 1][m / 3] = 0.25;
        coords[0][m - 1] = -1.0;
        plan.set_points(&coords).unwrap();
        plan.setpts_check().unwrap();
        plan.execute(&input, &mut out).unwrap();
        assert!(out.iter().all(|v| v.re.is_finite() && v.im.is_finite()));
        // transform 0: its input is the first half, its outputs the first half
        let sample: Vec<usize> = vec![0, 7, out_len / 2 - 1];
        let exact = plan.direct_sample(&input[..in_len / 2], &sample).unwrap();
        let approx: Vec<_> = sample.iter().map(|&i| out[i]).collect();
        let err = warpfft::relative_l2_error(&approx, &exact);
        assert!(
            err <= 1e-5,
            "{ty:?} {dim}D {method:?}: error {err:.2e} after good points"
        );
    }
}

#[test]
fn execute_before_set_points_is_no_points() {
    require_gpu!();
    let mut plan = Plan::<f64>::type2(&[8, 8]).tol(1e-6).build().unwrap();
    assert_eq!(plan.n_points(), None);
    assert_eq!(plan.c_len(), None);
    let fk = vec![Complex::default(); plan.fk_len()];
    let mut c = vec![Complex::default(); 10];
    let e = plan.execute(&fk, &mut c).unwrap_err();
    assert!(matches!(e, Error::NoPoints(_)), "host: {e:?}");
    assert_eq!(e.status(), warpfft::sys::WARPFFT_ERR_NO_POINTS);

    let dfk = DeviceBuffer::from_slice(&fk).unwrap();
    let mut dc = DeviceBuffer::from_slice(&c).unwrap();
    let e = plan.execute_device(&dfk, &mut dc).unwrap_err();
    assert!(matches!(e, Error::NoPoints(_)), "device: {e:?}");
    // SAFETY: valid buffers; the call fails before any GPU work anyway.
    let e = unsafe { plan.execute_raw(dc.as_raw(), dfk.as_raw()) }.unwrap_err();
    assert!(matches!(e, Error::NoPoints(_)), "raw: {e:?}");
    let e = plan.direct_sample(&fk, &[0]).unwrap_err();
    assert!(matches!(e, Error::NoPoints(_)), "direct_sample: {e:?}");
}

#[test]
fn shape_errors_on_a_gpu_plan() {
    require_gpu!();
    let mut plan = Plan::<f32>::type1(&[10, 12]).ntransf(2).build().unwrap();
    let x = vec![0.1f32; 50];
    let y = vec![0.2f32; 50];
    let short = vec![0.3f32; 49];
    let is_shape = |r: warpfft::Result<()>, what: &str| match r {
        Err(Error::Shape(m)) => assert!(!m.is_empty(), "{what}"),
        other => panic!("{what}: expected Error::Shape, got {other:?}"),
    };
    is_shape(plan.set_points(&[&x]), "one array for 2D");
    is_shape(plan.set_points(&[&x, &y, &y]), "three arrays for 2D");
    is_shape(plan.set_points(&[&x, &short]), "unequal lengths");
    plan.set_points(&[&x, &y]).unwrap();
    assert_eq!(plan.c_len(), Some(100));
    assert_eq!(plan.fk_len(), 240);

    let c = vec![Complex::new(1.0f32, 0.0); 100];
    let mut fk = vec![Complex::default(); 240];
    is_shape(plan.execute(&c[..99], &mut fk), "c too short");
    is_shape(plan.execute(&c, &mut fk[..239]), "fk too short");
    is_shape(plan.execute(&fk, &mut c.clone()), "arguments swapped");
    plan.execute(&c, &mut fk).unwrap();

    let dc = DeviceBuffer::from_slice(&c[..50]).unwrap();
    let mut dfk = DeviceBuffer::zeros(240).unwrap();
    is_shape(plan.execute_device(&dc, &mut dfk), "device c too short");
    is_shape(
        plan.direct_sample(&c, &[0]).map(drop),
        "direct_sample input is one transform",
    );
    is_shape(
        plan.direct_sample(&c[..50], &[120]).map(drop),
        "sample out of range",
    );

    let dx = DeviceBuffer::from_slice(&x).unwrap();
    is_shape(plan.set_device_points([dx]), "one device array for 2D");
    assert_eq!(
        plan.n_points(),
        None,
        "a failed set_device_points leaves no points"
    );
    assert_eq!(plan.take_points().len(), 1);

    let mut buf = DeviceBuffer::from_slice(&x).unwrap();
    is_shape(buf.copy_from(&short), "copy_from length");
    is_shape(buf.copy_to(&mut [0.0; 51]), "copy_to length");
}

#[test]
fn moved_points_can_be_taken_back() {
    require_gpu!();
    let mut rng = Rng(5);
    let m = 300;
    let x: Vec<f64> = rng.points(m, PI);
    let c = rng.complex::<f64>(m);
    let mut plan = Plan::<f64>::type1(&[40]).tol(1e-9).build().unwrap();
    plan.set_device_points([DeviceBuffer::from_slice(&x).unwrap()])
        .unwrap();
    let mut fk1 = vec![Complex::default(); 40];
    plan.execute(&c, &mut fk1).unwrap();

    let taken = plan.take_points();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].to_vec().unwrap(), x);
    let mut fk2 = vec![Complex::default(); 40];
    assert!(matches!(
        plan.execute(&c, &mut fk2),
        Err(Error::NoPoints(_))
    ));

    plan.set_device_points(taken).unwrap();
    plan.execute(&c, &mut fk2).unwrap();
    // Same points, same result (up to the order of floating-point atomics).
    let d = warpfft::relative_l2_error(&fk2, &fk1);
    assert!(d < 1e-12, "results differ by {d:e}");
}

#[test]
fn host_points_are_reused_and_replaced() {
    require_gpu!();
    let mut rng = Rng(9);
    let mut plan = Plan::<f32>::type2(&[24, 24]).tol(1e-5).build().unwrap();
    let fk = rng.complex::<f32>(24 * 24);
    for m in [500, 500, 800, 10] {
        let x: Vec<f32> = rng.points(m, PI);
        let y: Vec<f32> = rng.points(m, PI);
        plan.set_points(&[&x, &y]).unwrap();
        assert_eq!(plan.n_points(), Some(m));
        let mut c = vec![Complex::default(); m];
        plan.execute(&fk, &mut c).unwrap();
        let err = check_batch(&plan, &fk, &c, &mut rng);
        assert!(err <= 1e-5, "M = {m}: error {err:.3e}");
    }
}

#[test]
fn info_and_workspace() {
    require_gpu!();
    let builder = Plan::<f64>::type1(&[32, 16, 8]).tol(1e-7).ntransf(2);
    let params = builder.params().unwrap();
    let mut plan = builder.build().unwrap();
    let info = plan.info().unwrap();
    assert_eq!(info.width, params.width);
    assert_eq!(info.n_fine, params.n_fine);
    assert_eq!(info.n_modes, [32, 16, 8]);
    assert_eq!(info.ntransf, 2);
    assert_ne!(
        info.method,
        warpfft::Method::Auto,
        "a plan reports the method it uses"
    );
    assert_eq!(info.n_points, None);
    let ws = plan.workspace_bytes().unwrap();
    let fine: usize = info.n_fine.iter().product();
    assert!(
        ws >= fine * 16,
        "workspace {ws} B < one f64 fine grid ({fine} points)"
    );
    assert_eq!(info.workspace_bytes, ws);

    let mut rng = Rng(1);
    let pts: Vec<Vec<f64>> = (0..3).map(|_| rng.points(123, PI)).collect();
    plan.set_points(&pts).unwrap();
    assert_eq!(plan.info().unwrap().n_points, Some(123));
    assert_eq!(plan.n_points(), Some(123));
}

#[test]
fn free_direct_sample_matches_the_plan_one() {
    require_gpu!();
    let mut rng = Rng(13);
    let m = 200;
    let coords: Vec<Vec<f32>> = (0..3).map(|_| rng.points(m, PI)).collect();
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
fn plans_move_between_threads_and_run_in_parallel() {
    require_gpu!();
    let handles: Vec<_> = (0..3u64)
        .map(|i| {
            let mut plan = Plan::<f32>::type1(&[64]).tol(1e-5).build().unwrap();
            std::thread::spawn(move || {
                let mut rng = Rng(100 + i);
                let x: Vec<f32> = rng.points(1000, PI);
                let c = rng.complex::<f32>(1000);
                plan.set_points(&[&x]).unwrap();
                let mut fk = vec![Complex::default(); 64];
                plan.execute(&c, &mut fk).unwrap();
                check_batch(&plan, &c, &fk, &mut rng)
            })
        })
        .collect();
    for h in handles {
        let err = h.join().unwrap();
        assert!(err <= 1e-5, "error {err:.3e}");
    }
}

#[test]
fn device_buffer_round_trip() {
    require_gpu!();
    let data: Vec<Complex<f64>> = (0..1000)
        .map(|i| Complex::new(i as f64, -(i as f64)))
        .collect();
    let mut buf = DeviceBuffer::from_slice(&data).unwrap();
    assert_eq!(buf.len(), 1000);
    assert_eq!(buf.device(), 0);
    assert_ne!(buf.as_raw(), 0);
    assert_eq!(buf.to_vec().unwrap(), data);
    let rev: Vec<_> = data.iter().rev().copied().collect();
    buf.copy_from(&rev).unwrap();
    let mut back = vec![Complex::default(); 1000];
    buf.copy_to(&mut back).unwrap();
    assert_eq!(back, rev);
    assert!(DeviceBuffer::<f32>::zeros(7)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&v| v == 0.0));
    let empty = DeviceBuffer::<f32>::from_slice(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
    // Buffers are Send + Sync: read one from another thread.
    let shared = std::sync::Arc::new(buf);
    let s2 = shared.clone();
    let v = std::thread::spawn(move || s2.to_vec().unwrap())
        .join()
        .unwrap();
    assert_eq!(v, rev);
}

#[test]
fn runtime_info_on_a_gpu() {
    require_gpu!();
    let json = warpfft::runtime_info(0).unwrap();
    assert!(json.trim_start().starts_with('{'), "{json}");
    assert!(
        json.contains("sm"),
        "runtime info names the GPU's sm: {json}"
    );
    let e = warpfft::runtime_info(4096).unwrap_err();
    assert!(matches!(e, Error::NoDevice(_)), "device 4096: {e:?}");
    assert!(warpfft::runtime_report(4096).json().starts_with('{'));
}

#[test]
fn bad_device_ordinal_is_no_device() {
    require_gpu!();
    let e = Plan::<f32>::type1(&[8]).device(4096).build().unwrap_err();
    assert!(matches!(e, Error::NoDevice(_)), "{e:?}");
    let e = DeviceBuffer::from_slice_on(4096, &[1.0f32]).unwrap_err();
    assert!(matches!(e, Error::NoDevice(_)), "{e:?}");
}

/// Out of device memory is a status with a message, not a crash, and leaves nothing behind: a
/// plan whose fine grid cannot exist (80000² complex f64 = 102 GB) fails with OutOfMemory, and
/// so does a point set whose sort arrays cannot exist (2^40 points, caught before any point is
/// read); afterwards the same plan still takes a sane point set and executes.
#[test]
fn out_of_device_memory() {
    require_gpu!();
    let e = Plan::<f64>::type1(&[40_000, 40_000])
        .tol(1e-9)
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::OutOfMemory(_)), "{e:?}");
    assert!(!e.message().is_empty());

    let mut plan = Plan::<f32>::type1(&[64]).tol(1e-5).build().unwrap();
    let x = DeviceBuffer::from_slice(&[0.5f32; 16]).unwrap();
    // SAFETY: the pointer is valid for 16 points; M = 2^40 fails while allocating the sort
    // arrays, before any coordinate is read.
    let e = unsafe { plan.set_points_raw(1 << 40, x.as_raw(), 0, 0) }.unwrap_err();
    assert!(matches!(e, Error::OutOfMemory(_)), "{e:?}");
    // the plan is still usable with a sane point set
    plan.set_points(&[&[0.1f32, -2.0, 3.0]]).unwrap();
    let mut fk = vec![Complex::default(); plan.fk_len()];
    plan.execute(&[Complex::new(1.0f32, 0.0); 3], &mut fk)
        .unwrap();
    assert!((fk[32].re - 3.0).abs() < 1e-4, "f[0] = {}", fk[32]);
}

/// The sinh kernel of kernels/common.cuh: 2 e^-beta sinh(beta s) / s, s = sqrt(1 - (2z/w)^2).
fn sinh_kernel(z: f64, w: f64, beta: f64) -> f64 {
    let a = 2.0 * z / w;
    if a * a >= 1.0 {
        return 0.0;
    }
    let s = (1.0 - a * a).sqrt();
    2.0 * (-beta).exp() * (beta * s).sinh() / s
}

/// Per-dimension kernel weights of every grid index for a point: periodic on n points.
fn kernel_row(x: f64, n: usize, w: f64, beta: f64) -> Vec<f64> {
    let mut u = x / (2.0 * PI);
    u = (u - u.floor()) * n as f64;
    if u >= n as f64 {
        u -= n as f64;
    }
    (0..n)
        .map(|i| {
            [-1.0, 0.0, 1.0]
                .iter()
                .map(|m| sinh_kernel(i as f64 + m * n as f64 - u, w, beta))
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
    let mut rng = Rng(11);
    let (m, n1, n2) = (400, 30, 26);
    let x: Vec<f64> = rng.points(m, PI);
    let y: Vec<f64> = rng.points(m, PI);
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
        let rows1: Vec<Vec<f64>> = x.iter().map(|&v| kernel_row(v, n1, w, beta)).collect();
        let rows2: Vec<Vec<f64>> = y.iter().map(|&v| kernel_row(v, n2, w, beta)).collect();
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

/// A setpts that fails part-way through allocating its per-point arrays frees them: M = 2^33
/// (f32, 1D) needs a 64 GiB sort index, which fits an H100/H200, then more arrays that do not;
/// the plan must not keep the 64 GiB (issue 19).
#[test]
fn failed_set_points_frees_what_it_allocated() {
    require_gpu!();
    let mut plan = Plan::<f32>::type1(&[64]).tol(1e-5).build().unwrap();
    let before = plan.workspace_bytes().unwrap();
    let x = DeviceBuffer::from_slice(&[0.5f32; 16]).unwrap();
    // SAFETY: M = 2^33 fails while allocating the per-point arrays (no GPU holds them all),
    // before any coordinate is read.
    let e = unsafe { plan.set_points_raw(1 << 33, x.as_raw(), 0, 0) }.unwrap_err();
    assert!(matches!(e, Error::OutOfMemory(_)), "{e:?}");
    assert_eq!(
        plan.workspace_bytes().unwrap(),
        before,
        "the failed set_points kept device memory"
    );
    assert_eq!(plan.info().unwrap().n_points, None);
}

/// `n_points()` and `info().n_points` agree: after set_points, and after take_points (the C plan
/// still holds the taken arrays' addresses, but the Plan has no points).
#[test]
fn n_points_and_info_agree_after_take_points() {
    require_gpu!();
    let mut plan = Plan::<f32>::type1(&[16]).tol(1e-4).build().unwrap();
    assert_eq!(plan.info().unwrap().n_points, None);
    plan.set_points(&[&[0.1f32, 0.2, 0.3]]).unwrap();
    assert_eq!(plan.n_points(), Some(3));
    assert_eq!(plan.info().unwrap().n_points, Some(3));
    let taken = plan.take_points();
    assert_eq!(taken.len(), 1);
    assert_eq!(plan.n_points(), None);
    assert_eq!(plan.info().unwrap().n_points, None);
}

/// `DeviceBuffer::zeros` zeroes on the device (no host buffer of that size), also memory that
/// held data before.
#[test]
fn device_buffer_zeros_are_zero() {
    require_gpu!();
    for _ in 0..3 {
        let junk = DeviceBuffer::from_slice(&vec![Complex::new(1.5f64, -2.5); 1 << 16]).unwrap();
        drop(junk);
        let z = DeviceBuffer::<Complex<f64>>::zeros(1 << 16).unwrap();
        assert!(z
            .to_vec()
            .unwrap()
            .iter()
            .all(|v| v.re == 0.0 && v.im == 0.0));
    }
    assert!(DeviceBuffer::<f32>::zeros(0).unwrap().is_empty());
}

/// A CUDA stream created with `CU_STREAM_NON_BLOCKING` through the driver (dlopen; the crate
/// has no CUDA bindings): nothing orders it after the legacy default stream, on which
/// synchronous uploads run.
struct NonBlockingStream {
    raw: u64,
    ctx: *mut c_void,
    dev: c_int,
    push: CuPush,
    pop: CuPop,
    destroy: CuDestroy,
    release: CuRelease,
}

type CuPush = unsafe extern "C" fn(*mut c_void) -> c_int;
type CuPop = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type CuDestroy = unsafe extern "C" fn(*mut c_void) -> c_int;
type CuRelease = unsafe extern "C" fn(c_int) -> c_int;
type CuGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type CuRetain = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
type CuCreate = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

impl NonBlockingStream {
    fn new() -> NonBlockingStream {
        use std::mem::transmute;
        // SAFETY: libcuda.so.1 is loaded (warpfft::init succeeded); each symbol is cast to its
        // documented driver API signature; the context is pushed around the stream creation.
        unsafe {
            let h = dlopen(c"libcuda.so.1".as_ptr(), 2 /* RTLD_NOW */);
            assert!(!h.is_null(), "dlopen libcuda.so.1");
            let sym = |name: &CStr| {
                let p = dlsym(h, name.as_ptr());
                assert!(!p.is_null(), "libcuda.so.1 has no {name:?}");
                p
            };
            let get = transmute::<*mut c_void, CuGet>(sym(c"cuDeviceGet"));
            let retain = transmute::<*mut c_void, CuRetain>(sym(c"cuDevicePrimaryCtxRetain"));
            let create = transmute::<*mut c_void, CuCreate>(sym(c"cuStreamCreate"));
            let mut s = NonBlockingStream {
                raw: 0,
                ctx: std::ptr::null_mut(),
                dev: 0,
                push: transmute::<*mut c_void, CuPush>(sym(c"cuCtxPushCurrent_v2")),
                pop: transmute::<*mut c_void, CuPop>(sym(c"cuCtxPopCurrent_v2")),
                destroy: transmute::<*mut c_void, CuDestroy>(sym(c"cuStreamDestroy_v2")),
                release: transmute::<*mut c_void, CuRelease>(sym(c"cuDevicePrimaryCtxRelease_v2")),
            };
            assert_eq!(get(&mut s.dev, 0), 0, "cuDeviceGet");
            assert_eq!(retain(&mut s.ctx, s.dev), 0, "cuDevicePrimaryCtxRetain");
            assert_eq!((s.push)(s.ctx), 0, "cuCtxPushCurrent");
            let mut stream = std::ptr::null_mut();
            let r = create(&mut stream, 1 /* CU_STREAM_NON_BLOCKING */);
            (s.pop)(&mut std::ptr::null_mut());
            assert_eq!(r, 0, "cuStreamCreate(NON_BLOCKING)");
            s.raw = stream as u64;
            s
        }
    }
}

impl Drop for NonBlockingStream {
    fn drop(&mut self) {
        // SAFETY: the stream and the retained context were created in new().
        unsafe {
            (self.push)(self.ctx);
            (self.destroy)(self.raw as *mut c_void);
            (self.pop)(&mut std::ptr::null_mut());
            (self.release)(self.dev);
        }
    }
}

/// Host uploads are ordered before the plan's work on a non-blocking stream: set_points
/// replaces a point set in the same device buffers (all points at 0, then random ones) and
/// execute stages its input over the previous input (zeros, then random values). Stale data
/// (a synchronous copy still landing on the legacy stream while the plan's kernels run) would
/// make the outputs those of the old points or inputs. Type 2 checks the last 4096 points (the
/// tail of the upload lands last) and a spread sample; type 1 every mode against the exact sum.
#[test]
fn non_blocking_stream_sees_fresh_uploads() {
    require_gpu!();
    let stream = NonBlockingStream::new();
    let mut rng = Rng(23);
    let m = 1 << 22;
    let zeros = vec![0.0f64; m];
    let x: Vec<f64> = rng.points(m, PI);
    // type 2: c[j] depends on x[j] only
    let n = 48;
    // SAFETY: the stream outlives the plan (declared first, dropped last).
    let mut plan = unsafe { Plan::<f64>::type2(&[n]).tol(1e-9).stream(stream.raw) }
        .build()
        .unwrap();
    let fk = rng.complex::<f64>(n);
    let mut c = vec![Complex::default(); m];
    let sample: Vec<usize> = (m - 4096..m).chain((0..m).step_by(4099)).collect();
    for round in 0..4 {
        plan.set_points(&[&zeros]).unwrap();
        plan.execute(&fk, &mut c).unwrap();
        plan.set_points(&[&x]).unwrap();
        plan.execute(&fk, &mut c).unwrap();
        let exact = plan.direct_sample(&fk, &sample).unwrap();
        let approx: Vec<Complex<f64>> = sample.iter().map(|&j| c[j]).collect();
        let err = warpfft::relative_l2_error(&approx, &exact);
        assert!(
            err <= 1e-9,
            "type 2 round {round}: error {err:.3e} (stale points?)"
        );
    }
    // type 1: every mode depends on every strength
    let mut plan = unsafe { Plan::<f64>::type1(&[n]).tol(1e-9).stream(stream.raw) }
        .build()
        .unwrap();
    let c_zero = vec![Complex::default(); m];
    let c_new = rng.complex::<f64>(m);
    let mut out = vec![Complex::default(); n];
    let all: Vec<usize> = (0..n).collect();
    for round in 0..4 {
        plan.set_points(&[&zeros]).unwrap();
        plan.set_points(&[&x]).unwrap();
        plan.execute(&c_zero, &mut out).unwrap();
        plan.execute(&c_new, &mut out).unwrap();
        let exact = plan.direct_sample(&c_new, &all).unwrap();
        let err = warpfft::relative_l2_error(&out, &exact);
        assert!(
            err <= 1e-9,
            "type 1 round {round}: error {err:.3e} (stale input?)"
        );
    }
}

/// The number after `"key":` in the first place it occurs in `json` at or after `from`.
fn json_number(json: &str, from: &str, key: &str) -> f64 {
    let start = json.find(from).unwrap_or(0);
    let pat = format!("\"{key}\":");
    let at = json[start..].find(&pat).expect(key) + start + pat.len();
    let end = json[at..].find([',', '}']).expect("a number") + at;
    json[at..end].parse().expect("a number")
}

/// Issue 12: a plan created after the first of its shape takes its cuFFT plan, work area, fine
/// grid and deconvolution factors from the plan cache and takes at most a millisecond or so
/// (the accuracy tests run five of their six plans per shape from the cache: same results).
/// runtime_info reports the cache and where plan creation spent its time.
#[test]
fn second_plan_of_a_shape_is_fast() {
    require_gpu!();
    warpfft::release_cached();
    for n_modes in [&[1_000_000usize][..], &[1024, 1024], &[128, 128, 128]] {
        let first = std::time::Instant::now();
        drop(Plan::<f32>::type1(n_modes).tol(1e-5).build().unwrap());
        let first = first.elapsed().as_secs_f64() * 1e3;
        let before = warpfft::runtime_info(0).unwrap();
        let again = std::time::Instant::now();
        let plan = Plan::<f32>::type1(n_modes).tol(1e-5).build().unwrap();
        let again = again.elapsed().as_secs_f64() * 1e3;
        let after = warpfft::runtime_info(0).unwrap();
        let hits = json_number(&after, "plan_cache", "fft_hits")
            - json_number(&before, "plan_cache", "fft_hits");
        let last = |k| json_number(&after, "\"last\"", k);
        eprintln!(
            "{n_modes:?}: first plan {first:.2} ms, again {again:.3} ms (modules {:.3}, cufft \
             {:.3}, alloc {:.3}, factors {:.3} ms)",
            last("modules_ms"),
            last("cufft_ms"),
            last("alloc_ms"),
            last("factors_ms")
        );
        assert_eq!(
            hits, 1.0,
            "{n_modes:?}: the second plan's cuFFT plan came from the cache"
        );
        assert!(
            again < 2.0,
            "{n_modes:?}: the second plan took {again:.3} ms (target 1 ms)"
        );
        drop(plan);
    }
    warpfft::release_cached();
    let info = warpfft::runtime_info(0).unwrap();
    assert_eq!(json_number(&info, "plan_cache", "items"), 0.0, "{info}");
}

/// warpfft_bench_fft (a tuning aid): positive, finite times that grow with the grid and the
/// batch, f32 and f64. (That it frees everything: the fault-injection walk of
/// c_core/tests/test_bench.c, and memcheck --leak-check full in the sanitize stage.)
#[test]
fn bench_fft_times_grow_with_the_grid() {
    require_gpu!();
    use warpfft::{bench_fft, Precision};
    for p in [Precision::F32, Precision::F64] {
        let small = bench_fft(2, [64, 64, 1], p, 1, 0, 20).unwrap();
        let large = bench_fft(2, [2048, 2048, 1], p, 1, 0, 20).unwrap();
        let batch = bench_fft(2, [2048, 2048, 1], p, 4, 0, 5).unwrap();
        let cube = bench_fft(3, [256, 256, 256], p, 1, 0, 5).unwrap();
        eprintln!(
            "{p:?}: 64² {small:.4} ms, 2048² {large:.4}, 4 × 2048² {batch:.4}, 256³ {cube:.4}"
        );
        for t in [small, large, batch, cube] {
            assert!(t > 0.0 && t.is_finite(), "{t}");
        }
        // loose bounds: under compute-sanitizer the per-launch overhead dominates small grids
        assert!(large > small, "2048² {large} vs 64² {small}");
        assert!(batch > large, "batch of 4: {batch} vs one {large}");
    }
}
