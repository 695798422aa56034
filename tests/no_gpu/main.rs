//! The safe API on a machine without a GPU (CI): everything that needs no GPU works, and
//! everything that does fails cleanly with `Error::NoDriver` / `Error::NoDevice` and the C
//! core's message. On a machine with a GPU the same tests check the GPU-side outcome instead,
//! so they pass there too.

use warpfft::{
    Complex, DeviceBuffer, Error, Method, ModeOrder, Plan, PlanInfo, Precision, TransformType,
};

#[path = "../common/kernel_shape.rs"]
mod kernel_shape;
mod options; // the option table through the builders

/// `None` when a GPU is usable, otherwise the no-GPU error (any other error fails the test).
fn no_gpu() -> Option<Error> {
    match warpfft::init(0) {
        Ok(()) => None,
        Err(e) if e.is_no_gpu() => Some(e),
        Err(e) => panic!("warpfft::init(0) failed with an error other than 'no GPU': {e}"),
    }
}

/// The checks every no-GPU error must pass.
fn assert_clean_no_gpu(e: &Error, what: &str) {
    assert!(
        e.is_no_gpu(),
        "{what}: expected NoDriver/NoDevice, got {e:?}"
    );
    assert!(
        !e.message().trim().is_empty(),
        "{what}: empty message in {e:?}"
    );
    if let Error::NoDriver(m) = e {
        assert!(
            m.contains("libcuda"),
            "{what}: NoDriver message should name libcuda: {m}"
        );
    }
    let shown = e.to_string();
    assert!(
        shown.contains(e.message()),
        "{what}: Display should include the message: {shown}"
    );
}

#[test]
fn version_matches_header_and_crate() {
    let v = warpfft::version();
    let header = format!(
        "{}.{}.{}",
        warpfft::sys::WARPFFT_VERSION_MAJOR,
        warpfft::sys::WARPFFT_VERSION_MINOR,
        warpfft::sys::WARPFFT_VERSION_PATCH
    );
    assert_eq!(v, header);
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
}

#[test]
fn build_manifest_is_json() {
    let m = warpfft::build_manifest();
    assert!(
        m.trim_start().starts_with('{') && m.trim_end().ends_with('}'),
        "manifest: {m}"
    );
    assert!(m.contains("\"mode\""), "manifest has no mode: {m}");
}

#[test]
fn plan_build_without_gpu_is_a_clean_error() {
    let result = Plan::<f32>::type1(&[32, 32]).tol(1e-5).build();
    match (no_gpu(), result) {
        (Some(_), Err(e)) => assert_clean_no_gpu(&e, "Plan::build"),
        (Some(reason), Ok(_)) => panic!("init says no GPU ({reason}) but a plan was built"),
        (None, Ok(plan)) => eprintln!("GPU present: built {plan:?}"),
        (None, Err(e)) => panic!("GPU present but Plan::build failed: {e}"),
    }
}

#[test]
fn f64_and_type2_builds_give_the_same_no_gpu_error() {
    let Some(_) = no_gpu() else {
        eprintln!("GPU present: nothing to check here");
        return;
    };
    let e1 = Plan::<f64>::type2(&[8, 8, 8])
        .tol(1e-9)
        .build()
        .unwrap_err();
    let e2 = Plan::<f32>::type1(&[100]).build().unwrap_err();
    assert_clean_no_gpu(&e1, "f64 type 2 build");
    assert_clean_no_gpu(&e2, "f32 type 1 build");
    assert_eq!(e1.status(), e2.status());
}

#[test]
fn params_without_gpu() {
    let info: PlanInfo = Plan::<f32>::type1(&[100, 64])
        .tol(1e-5)
        .ntransf(3)
        .params()
        .unwrap();
    assert_eq!(info.transform_type, TransformType::Type1);
    assert_eq!(info.dim, 2);
    assert_eq!(info.precision, Precision::F32);
    assert_eq!(info.n_modes, [100, 64, 1]);
    assert_eq!(info.ntransf, 3);
    assert_eq!(info.n_points, None);
    // The host estimate of the fixed workspace covers at least the batch's fine grids.
    let fine: usize = info.n_fine.iter().product();
    assert!(
        info.workspace_bytes >= fine * 3 * 8,
        "workspace_bytes {} for {fine} fine points x 3 transforms",
        info.workspace_bytes
    );
    assert_eq!(info.upsampfac, 2.0);
    assert!((2..=16).contains(&info.width), "width {}", info.width);
    assert!(info.beta > 0.0, "beta {}", info.beta);
    for d in 0..2 {
        assert!(
            info.n_fine[d] >= 2 * info.n_modes[d],
            "n_fine {:?}",
            info.n_fine
        );
        assert!(info.n_fine[d] >= 2 * info.width, "n_fine {:?}", info.n_fine);
        assert!(
            info.n_fine[d] <= 4 * info.n_modes[d] + 4 * info.width,
            "n_fine {:?}",
            info.n_fine
        );
        assert!(info.bin_size[d] >= 1, "bin_size {:?}", info.bin_size);
    }
    assert_eq!(info.n_fine[2], 1);
}

/// The tests' kernel (`kernel_shape`, read from kernels/kernel_shape.h; the GPU test
/// `spread_interp_only_is_the_kernel_sum` compares the device against it) has the plans' beta,
/// bit for bit, at the width and upsampling factor each chose, and is 0 at its edge.
#[test]
fn kernel_shape_reader_gives_the_plans_beta() {
    let ks = kernel_shape::KernelShape::load();
    let mut widths = std::collections::BTreeSet::new();
    for tol in [1e-2, 1e-5, 1e-8, 1e-12] {
        for sigma in [0.0, 1.25, 2.0, 3.0] {
            let params = Plan::<f64>::type1(&[64, 48])
                .tol(tol)
                .upsampfac(sigma)
                .params();
            let info = match params {
                Ok(info) => info,
                Err(Error::BadTol(_)) => continue, // a tol too fine for this sigma
                Err(e) => panic!("tol {tol} sigma {sigma}: {e}"),
            };
            let (w, beta) = (info.width, info.beta);
            assert_eq!(
                ks.beta(w as i32, info.upsampfac),
                beta,
                "w {w} sigma {sigma}"
            );
            let w = w as f64;
            assert_eq!(ks.phi(-0.5 * w, w, beta), 0.0);
            assert_eq!(ks.phi(0.5 * w, w, beta), 0.0);
            assert!(ks.phi(0.0, w, beta) > ks.phi(0.25 * w, w, beta));
            assert!(ks.phi(0.49 * w, w, beta) > 0.0);
            widths.insert(info.width);
        }
    }
    assert!(widths.len() >= 4, "{widths:?}");
}

#[test]
fn params_width_follows_tol_and_precision() {
    let width = |tol: f64| Plan::<f64>::type2(&[64]).tol(tol).params().unwrap().width;
    let (w1, w6, w12) = (width(1e-1), width(1e-6), width(1e-12));
    assert!(
        w1 < w6 && w6 < w12,
        "widths for tol 1e-1, 1e-6, 1e-12: {w1}, {w6}, {w12}"
    );
    let f32_w = Plan::<f32>::type1(&[64]).tol(1e-6).params().unwrap().width;
    assert!(f32_w <= 16);
    // upsampfac 1.25: smaller fine grid.
    let p2 = Plan::<f32>::type1(&[512]).tol(1e-4).params().unwrap();
    let p125 = Plan::<f32>::type1(&[512])
        .tol(1e-4)
        .upsampfac(1.25)
        .params()
        .unwrap();
    assert_eq!(p125.upsampfac, 1.25);
    assert!(
        p125.n_fine[0] < p2.n_fine[0],
        "{:?} vs {:?}",
        p125.n_fine,
        p2.n_fine
    );
    assert!(p125.n_fine[0] >= 640, "{:?}", p125.n_fine);
}

#[test]
fn params_reflect_options() {
    let info = Plan::<f64>::type2(&[16, 8, 4])
        .tol(1e-9)
        .modeord(ModeOrder::Fft)
        .method(Method::GlobalMemory)
        .params()
        .unwrap();
    assert_eq!(info.transform_type, TransformType::Type2);
    assert_eq!(info.precision, Precision::F64);
    assert_eq!(info.dim, 3);
    assert_eq!(info.n_modes, [16, 8, 4]);
    assert_eq!(info.method, Method::GlobalMemory);
}

/// `deterministic(true)`: type 1 (and type 3's spreading) choose output-driven spreading,
/// type 2 keeps its method; OD asked for by a type-2 plan, and GM/SM with the option for type
/// 1, are refused before any GPU work; the default never picks OD.
#[test]
fn deterministic_via_params() {
    let t1 = Plan::<f32>::type1(&[64, 48]).tol(1e-5);
    let plain = t1.clone().params().unwrap();
    assert!(!plain.deterministic);
    assert_ne!(plain.method, Method::OutputDriven);
    let det = t1.clone().deterministic(true).params().unwrap();
    assert!(det.deterministic);
    assert_eq!(det.method, Method::OutputDriven);
    assert_eq!((det.width, det.n_fine), (plain.width, plain.n_fine));
    let t2 = Plan::<f64>::type2(&[16, 8, 4]).tol(1e-9);
    let t2_det = t2.clone().deterministic(true).params().unwrap();
    assert!(t2_det.deterministic);
    assert_eq!(t2_det.method, t2.clone().params().unwrap().method);
    let od = t1
        .clone()
        .method(Method::OutputDriven)
        .params()
        .expect("OD without the option");
    assert_eq!((od.method, od.deterministic), (Method::OutputDriven, false));
    let e = params_err(t2.method(Method::OutputDriven));
    assert!(
        matches!(e, Error::Unsupported(_)) && e.message().contains("(OD)"),
        "type 2 with OD: {e:?}"
    );
    for m in [Method::GlobalMemory, Method::SharedMemory] {
        let e = params_err(t1.clone().deterministic(true).method(m));
        assert!(
            matches!(e, Error::InvalidArg(_)) && e.message().contains("deterministic"),
            "deterministic with {m:?}: {e:?}"
        );
    }
    let t3 = Plan::<f64>::type3(2)
        .tol(1e-8)
        .deterministic(true)
        .params3(&[(-1.0, 1.0), (0.0, 2.0)], &[(-30.0, 30.0), (-5.0, 5.0)])
        .unwrap();
    assert!(t3.deterministic);
    assert_eq!(t3.method, Method::OutputDriven);
}

/// Batched points (issue 32): params() reports no point sets (as no points), and a plan that
/// could take them needs the GPU first.
#[test]
fn batched_points_without_gpu() {
    let p = Plan::<f32>::type1(&[32, 32]).ntransf(4).params().unwrap();
    assert_eq!((p.n_points, p.n_sets), (None, None));
    let p3 = Plan::<f64>::type3(1)
        .ntransf(2)
        .params3(&[(-1.0, 1.0)], &[(-5.0, 5.0)])
        .unwrap();
    assert_eq!(p3.n_sets, None);
    if let Some(e) = no_gpu() {
        assert_clean_no_gpu(&e, "batched points");
        let b = Plan::<f32>::type2(&[16]).ntransf(4).build();
        assert!(matches!(b, Err(ref e) if e.is_no_gpu()), "{b:?}");
    }
}

fn params_err<T: warpfft::Real>(b: warpfft::PlanBuilder<T>) -> Error {
    let e = b.params().expect_err("params() should have failed");
    assert!(!e.message().is_empty(), "empty message: {e:?}");
    e
}

#[test]
fn bad_tol_dim_size_via_params() {
    // tol: NaN is refused; one outside the range runs at the nearer end (as the reference
    // raises a tol below machine precision to it), and PlanInfo::tol says so
    let e = params_err(Plan::<f32>::type1(&[32]).tol(f64::NAN));
    assert!(matches!(e, Error::BadTol(_)), "f32 tol NaN: {e:?}");
    assert_eq!(e.status(), warpfft::sys::WARPFFT_ERR_BAD_TOL);
    assert_eq!(e.status_name(), "WARPFFT_ERR_BAD_TOL");
    for (tol, runs_at) in [
        (1e-9, 1e-6),
        (0.5, 0.1),
        (0.0, 1e-6),
        (-1e-3, 1e-6),
        (1e-4, 1e-4),
    ] {
        let info = Plan::<f32>::type1(&[32]).tol(tol).params().unwrap();
        let at_end = Plan::<f32>::type1(&[32]).tol(runs_at).params().unwrap();
        assert_eq!(info.tol, runs_at, "f32 tol {tol}");
        assert_eq!(
            (info.width, info.upsampfac),
            (at_end.width, at_end.upsampfac)
        );
    }
    assert_eq!(
        Plan::<f64>::type2(&[32]).tol(1e-15).params().unwrap().tol,
        1e-13
    );
    // dim: from the length of n_modes
    for n in [&[][..], &[4, 4, 4, 4][..]] {
        let e = params_err(Plan::<f32>::type1(n));
        assert!(matches!(e, Error::BadDim(_)), "n_modes {n:?}: {e:?}");
    }
    // size
    let e = params_err(Plan::<f32>::type1(&[16, 0]));
    assert!(matches!(e, Error::BadSize(_)), "n_modes [16, 0]: {e:?}");
    let e = params_err(Plan::<f64>::type2(&[16]).ntransf(0));
    assert!(matches!(e, Error::BadSize(_)), "ntransf 0: {e:?}");
    let e = params_err(Plan::<f32>::type1(&[usize::MAX]));
    assert!(matches!(e, Error::BadSize(_)), "n_modes usize::MAX: {e:?}");
    // an option value the C core rejects (upsampfac: 0 or 1.25..=3)
    let e = params_err(Plan::<f32>::type1(&[16]).upsampfac(3.5));
    assert!(matches!(e, Error::InvalidArg(_)), "upsampfac 3.5: {e:?}");
}

#[test]
fn build_runs_the_same_argument_checks_before_the_gpu() {
    let e = Plan::<f32>::type1(&[32]).tol(f64::NAN).build().unwrap_err();
    assert!(matches!(e, Error::BadTol(_)), "{e:?}");
    let e = Plan::<f32>::type2(&[4, 4, 4, 4]).build().unwrap_err();
    assert!(matches!(e, Error::BadDim(_)), "{e:?}");
}

#[test]
fn shape_errors_come_before_the_gpu() {
    // direct_sample checks shapes before uploading anything: Shape, not NoDriver.
    let problem = Plan::<f32>::type1(&[16, 16]);
    let x = vec![0.5f32; 10];
    let y = vec![0.25f32; 9];
    let c = vec![Complex::new(1.0f32, 0.0); 10];
    let shape = |r: warpfft::Result<Vec<Complex<f64>>>, what: &str| match r {
        Err(e @ Error::Shape(_)) => {
            assert_eq!(e.status(), warpfft::sys::WARPFFT_ERR_INVALID_ARG);
            assert!(!e.message().is_empty());
        }
        other => panic!("{what}: expected Error::Shape, got {other:?}"),
    };
    shape(
        warpfft::direct_sample(&problem, &[&x], &c, &[0]),
        "one coordinate array for 2D",
    );
    shape(
        warpfft::direct_sample(&problem, &[&x, &y], &c, &[0]),
        "unequal coordinate lengths",
    );
    shape(
        warpfft::direct_sample(&problem, &[&x, &x], &c[..5], &[0]),
        "c too short",
    );
    shape(
        warpfft::direct_sample(&problem, &[&x, &x], &c, &[256]),
        "sample out of range",
    );
    let problem2 = Plan::<f32>::type2(&[16, 16]);
    shape(
        warpfft::direct_sample(&problem2, &[&x, &x], &c, &[0]),
        "type 2 input is fk, not c",
    );
}

#[test]
fn device_buffer_without_gpu() {
    match (no_gpu(), DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])) {
        (Some(_), Err(e)) => assert_clean_no_gpu(&e, "DeviceBuffer::from_slice"),
        (Some(reason), Ok(_)) => panic!("init says no GPU ({reason}) but memory was allocated"),
        (None, Ok(b)) => assert_eq!(b.to_vec().unwrap(), vec![1.0, 2.0, 3.0]),
        (None, Err(e)) => panic!("GPU present but DeviceBuffer::from_slice failed: {e}"),
    }
    if no_gpu().is_some() {
        let e = DeviceBuffer::<Complex<f64>>::zeros(4).unwrap_err();
        assert_clean_no_gpu(&e, "DeviceBuffer::zeros");
    }
}

/// Sizes past `isize::MAX` bytes are `BadSize` before any driver call (GPU or not): no panic
/// ("capacity overflow") and no host buffer of that size.
#[test]
fn device_buffer_too_large_is_bad_size() {
    let errs = [
        DeviceBuffer::<Complex<f64>>::zeros(1 << 60).unwrap_err(),
        DeviceBuffer::<f32>::zeros(1 << 61).unwrap_err(),
        DeviceBuffer::<f64>::zeros_on(0, usize::MAX).unwrap_err(),
    ];
    for e in errs {
        assert!(matches!(e, Error::BadSize(_)), "{e:?}");
        assert!(e.to_string().contains("isize::MAX"), "{e}");
    }
}

#[test]
fn runtime_report_without_gpu() {
    let report = warpfft::runtime_report(0);
    assert!(
        report.json().trim_start().starts_with('{'),
        "json: {}",
        report.json()
    );
    match (no_gpu(), report.error()) {
        (Some(_), Some(e)) => {
            assert_clean_no_gpu(e, "runtime_report");
            let e = warpfft::runtime_info(0).unwrap_err();
            assert_clean_no_gpu(&e, "runtime_info");
        }
        (None, None) => {
            warpfft::runtime_info(0).unwrap();
        }
        (gpu, err) => panic!("init and runtime_report disagree: {gpu:?} vs {err:?}"),
    }
}

#[test]
fn cufft_probe_finds_it_or_lists_where_it_looked() {
    match warpfft::cufft_probe() {
        Ok((path, version)) => {
            assert!(
                path.exists(),
                "cuFFT path {} does not exist",
                path.display()
            );
            assert!(version > 0, "cuFFT version {version}");
        }
        Err(e) => {
            assert!(matches!(e, Error::NoCufft(_)), "{e:?}");
            assert!(!e.message().is_empty());
        }
    }
}

#[test]
fn errors_are_well_behaved() {
    fn assert_traits<T: std::error::Error + Send + Sync + 'static>() {}
    assert_traits::<Error>();
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Plan<f32>>();
    send::<Plan<f64>>();
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<DeviceBuffer<Complex<f64>>>();

    let e = Error::NoDevice("device ordinal 3 out of range".into());
    assert!(e.is_no_gpu());
    assert!(Error::NoDriver(String::new()).is_no_gpu());
    assert!(!Error::Cuda("x".into()).is_no_gpu());
    assert!(!Error::Shape("x".into()).is_no_gpu());
    assert_eq!(e.status(), warpfft::sys::WARPFFT_ERR_NO_DEVICE);
    assert!(e.to_string().contains("device ordinal 3 out of range"));
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert!(!boxed.to_string().is_empty());
    // NVRTC missing (feature nvrtc): its own status, name and kind.
    let e = Error::NoNvrtc("tried: somewhere".into());
    assert_eq!(e.status(), warpfft::sys::WARPFFT_ERR_NO_NVRTC);
    assert_eq!(e.status_name(), "WARPFFT_ERR_NO_NVRTC");
    assert!(!e.is_no_gpu() && e.to_string().contains("NVRTC not found"));
    // SAFETY: warpfft_status_name returns a static NUL-terminated string.
    let c_name = unsafe {
        std::ffi::CStr::from_ptr(warpfft::sys::warpfft_status_name(
            warpfft::sys::WARPFFT_ERR_NO_NVRTC as i32,
        ))
    };
    assert_eq!(c_name.to_str().unwrap(), e.status_name());
    // An empty message still displays something useful.
    assert!(Error::Internal(String::new())
        .to_string()
        .contains("WARPFFT_ERR_INTERNAL"));
}

#[test]
fn relative_l2_error_helper() {
    let exact = [Complex::new(3.0, 4.0), Complex::new(0.0, 0.0)];
    let approx = [Complex::new(3.0f32, 4.0), Complex::new(0.0, 0.5)];
    assert!((warpfft::relative_l2_error(&approx, &exact) - 0.1).abs() < 1e-12);
    assert_eq!(warpfft::relative_l2_error::<f64>(&[], &[]), 0.0);
}

/// The tests above adapt to the machine: this one states which case ran, and checks that the
/// entry points agree about it.
#[test]
fn tests_adapt_to_a_gpu_if_present() {
    let none = no_gpu();
    let plan = Plan::<f32>::type1(&[8]).build();
    let buf = DeviceBuffer::<f32>::zeros(1);
    assert_eq!(
        none.is_some(),
        plan.is_err(),
        "init vs Plan::build: {none:?} / {plan:?}"
    );
    assert_eq!(
        none.is_some(),
        buf.is_err(),
        "init vs DeviceBuffer: {none:?} / {buf:?}"
    );
    match none {
        Some(reason) => eprintln!("no GPU on this machine ({reason}): checked the clean errors"),
        None => eprintln!("GPU present: checked the GPU-side outcomes"),
    }
}

#[test]
fn bench_fft_checks_arguments_before_the_gpu() {
    use warpfft::bench_fft;
    let p = Precision::F32;
    let e = bench_fft(4, [8, 8, 8], p, 1, 0, 5).unwrap_err();
    assert!(matches!(e, Error::BadDim(_)), "{e:?}");
    let e = bench_fft(2, [8, 0, 8], p, 1, 0, 5).unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("n_fine[1]"),
        "{e:?}"
    );
    let e = bench_fft(2, [8, 8, 0], p, 0, 0, 5).unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("batch"),
        "{e:?}"
    );
    let e = bench_fft(1, [8, 0, 0], p, 1, 0, 0).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArg(_)) && e.message().contains("reps"),
        "{e:?}"
    );
    let e = bench_fft(3, [1 << 40, 1 << 40, 1 << 40], p, 1, 0, 5).unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("does not fit"),
        "{e:?}"
    );
    // valid arguments: a clean no-GPU error here, a positive time on a GPU
    match (no_gpu(), bench_fft(2, [64, 32, 1], p, 2, 0, 3)) {
        (Some(_), Err(e)) => assert!(e.is_no_gpu() || matches!(e, Error::NoCufft(_)), "{e:?}"),
        (None, Ok(ms)) => assert!(ms > 0.0 && ms.is_finite(), "{ms}"),
        (gpu, r) => panic!("no GPU error {gpu:?} but bench_fft gave {r:?}"),
    }
}
