//! The error contract on a GPU: NaN/inf points (checked and unchecked plans), no points,
//! shapes, a bad device ordinal, out of device memory, and a failed set_points that frees what
//! it allocated. Errors are statuses with messages; the plan stays usable afterwards.

use crate::common::Rng;
use crate::PI;
use warpfft::{Complex, DeviceBuffer, Error, Plan, TransformType};

#[test]
fn nan_or_inf_points_give_bad_points_then_no_points() {
    require_gpu!();
    let mut rng = Rng::from_state(3);
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
    let mut rng = Rng::from_state(31);
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
        let mut coords: Vec<Vec<f64>> = rng.coords(dim, m, PI);
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
