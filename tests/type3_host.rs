//! Type 3 through the safe API without a GPU: the parameter choice (`params3`) and every
//! argument check that happens before the GPU. With a GPU the build-dependent parts check the
//! GPU-side outcome instead, so they pass there too.

use warpfft::{Complex, Error, Plan, Precision, TransformType};

const PI: f64 = std::f64::consts::PI;

#[test]
fn params3_reports_the_choice() {
    let b = Plan::<f32>::type3(1).tol(1e-5);
    assert_eq!(b.transform_type(), TransformType::Type3);
    assert_eq!(b.sign(), 1, "type 3 defaults to iflag +1 (as FINUFFT)");
    let info = b.params3(&[(-PI, PI)], &[(-5e5, 5e5)]).unwrap();
    assert_eq!(info.transform_type, TransformType::Type3);
    assert_eq!(info.precision, Precision::F32);
    assert_eq!(info.n_points, None);
    let t3 = info.type3.clone().expect("type-3 fields");
    assert_eq!(t3.n_targets, None);
    // x'/h stays inside the grid with the kernel's half width to spare
    let nf = info.n_fine[0] as f64;
    assert!((2e6..2.1e6).contains(&nf), "grid {nf}");
    assert_eq!(info.n_modes[0], info.n_fine[0]);
    let u = t3.x_half[0] / t3.gamma[0] / (2.0 * PI / nf);
    assert!(
        u + info.width as f64 / 2.0 <= nf / 2.0,
        "u {u} w {}",
        info.width
    );
    // targets fill the band |xi| <= nf/(2 upsampfac)
    assert!((t3.gamma[0] * t3.s_half[0] - nf / (2.0 * info.upsampfac)).abs() < 1e-6 * nf);
    // f32 coordinates would lose ~1e-1 at X·S = 1.6e6: the inner steps run in f64
    assert_eq!(t3.inner_precision, Precision::F64);
    assert!(t3.inner_fine[0] >= info.n_fine[0]);
    assert!(info.workspace_bytes > 0);
}

#[test]
fn params3_centres_and_dims() {
    let info = Plan::<f64>::type3(3)
        .tol(1e-9)
        .params3(
            &[(10.0, 12.0), (-1.0, 1.0), (0.0, 4.0)],
            &[(1000.0, 1010.0), (-5.0, 5.0), (-2.0, 6.0)],
        )
        .unwrap();
    let t3 = info.type3.unwrap();
    assert_eq!(t3.x_center, [11.0, 0.0, 2.0]);
    assert_eq!(t3.s_center, [1005.0, 0.0, 2.0]);
    assert_eq!(t3.inner_precision, Precision::F64);
    assert_eq!(info.dim, 3);
    // a small problem at a loose tol keeps f32 inside
    let info = Plan::<f32>::type3(2)
        .tol(1e-2)
        .params3(&[(-1.0, 1.0); 2], &[(-8.0, 8.0); 2])
        .unwrap();
    assert_eq!(info.type3.unwrap().inner_precision, Precision::F32);
}

#[test]
fn params3_argument_checks() {
    let b = Plan::<f64>::type3(2).tol(1e-6);
    assert!(matches!(
        b.params3(&[(-1.0, 1.0)], &[(-1.0, 1.0); 2]),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        b.params3(&[(-1.0, 1.0); 2], &[(-1.0, 1.0); 3]),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        b.params3(&[(f64::NAN, 1.0); 2], &[(-1.0, 1.0); 2]),
        Err(Error::BadPoints(_))
    ));
    assert!(matches!(
        b.params3(&[(1.0, -1.0); 2], &[(-1.0, 1.0); 2]),
        Err(Error::BadPoints(_))
    ));
    let e = Plan::<f64>::type3(1)
        .params3(&[(-1e7, 1e7)], &[(-1e7, 1e7)])
        .unwrap_err();
    assert!(
        matches!(e, Error::BadSize(_)) && e.message().contains("grid"),
        "{e}"
    );
    assert!(matches!(
        Plan::<f32>::type3(0).params3(&[], &[]),
        Err(Error::BadDim(_))
    ));
    assert!(matches!(
        Plan::<f32>::type3(4).params3(&[(0.0, 1.0); 4], &[(0.0, 1.0); 4]),
        Err(Error::BadDim(_))
    ));
    assert!(matches!(
        Plan::<f32>::type3(1)
            .tol(f64::NAN)
            .params3(&[(0.0, 1.0)], &[(0.0, 1.0)]),
        Err(Error::BadTol(_))
    ));
    // a tol below the range runs at its end (warpfft_tol_effective), as types 1 and 2
    let below = Plan::<f32>::type3(1)
        .tol(1e-7)
        .params3(&[(0.0, 1.0)], &[(0.0, 1.0)])
        .unwrap();
    assert_eq!(below.tol, 1e-6);
    assert!(matches!(
        Plan::<f32>::type3(1)
            .ntransf(0)
            .params3(&[(0.0, 1.0)], &[(0.0, 1.0)]),
        Err(Error::BadSize(_))
    ));
    // params3 is for type 3; params is not
    assert!(matches!(
        Plan::<f32>::type1(&[8]).params3(&[(0.0, 1.0)], &[(0.0, 1.0)]),
        Err(Error::BadType(_))
    ));
    let e = Plan::<f32>::type3(1).params().unwrap_err();
    assert!(
        matches!(e, Error::Unsupported(_)) && e.message().contains("params3"),
        "{e}"
    );
}

/// Spread/interp only is a type 1/2 mode: handed to type 3's inner type-2 step it skipped that
/// step's FFT and deconvolution and returned wrong numbers with success. The C core refuses it
/// for params3 and for a type-3 plan, before the GPU.
#[test]
fn spread_interp_only_is_refused_for_type3() {
    let b = Plan::<f32>::type3(1).tol(1e-5).spread_interp_only(true);
    let e = b.params3(&[(-PI, PI)], &[(-50.0, 50.0)]).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArg(_)) && e.message().contains("spreadinterponly"),
        "{e}"
    );
    let e = b.build().unwrap_err();
    assert!(
        matches!(e, Error::InvalidArg(_)) && e.message().contains("type-3 plan needs it 0"),
        "{e}"
    );
    // types 1 and 2 keep it
    let info = Plan::<f32>::type1(&[32])
        .tol(1e-5)
        .spread_interp_only(true)
        .params()
        .unwrap();
    assert_eq!(info.n_fine[0], 32);
}

#[test]
fn plan_argument_checks() {
    let plan = Plan::<f64>::type3(2).tol(1e-6).build();
    let mut plan = match plan {
        Err(e) if e.is_no_gpu() => {
            eprintln!("skipped (GPU part): no GPU: {e}");
            return;
        }
        r => r.unwrap(),
    };
    assert_eq!(plan.transform_type(), TransformType::Type3);
    assert_eq!(plan.fk_len(), 0);
    assert_eq!(plan.n_targets(), None);
    let mut out = vec![Complex::default(); 3];
    assert!(matches!(
        plan.execute(&[], &mut out),
        Err(Error::NoPoints(_))
    ));
    let x = vec![vec![0.0, 1.0], vec![0.5, 0.25]];
    let s3 = vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]];
    // unequal lengths, wrong dimension
    assert!(matches!(
        plan.set_points3(&x, &[vec![1.0], vec![1.0, 2.0]]),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        plan.set_points3(&x[..1], &s3),
        Err(Error::Shape(_))
    ));
    plan.set_points3(&x, &s3).unwrap();
    assert_eq!(plan.fk_len(), 3);
    assert_eq!(plan.n_targets(), Some(3));
    let c = vec![Complex::new(1.0, 0.0); 2];
    assert!(matches!(
        plan.execute(&c, &mut out[..2]),
        Err(Error::Shape(_))
    ));
    plan.execute(&c, &mut out).unwrap();
    let exact = plan.direct_sample(&c, &[0, 1, 2]).unwrap();
    assert!(warpfft::relative_l2_error(&out, &exact) <= 1e-6);
    assert!(matches!(plan.direct_sample(&c, &[3]), Err(Error::Shape(_))));
}

/// The C ABI's type-3 entry points refuse bad arguments before touching the GPU.
#[test]
fn c_abi_argument_checks() {
    use std::ptr::null;
    use warpfft::sys;
    let last = || {
        unsafe { std::ffi::CStr::from_ptr(sys::warpfft_last_error()) }
            .to_string_lossy()
            .into_owned()
    };
    let st = unsafe {
        sys::warpfft_setpts3(
            std::ptr::null_mut(),
            sys::WARPFFT_F32,
            1,
            null(),
            null(),
            null(),
            1,
            null(),
            null(),
            null(),
        )
    };
    assert_eq!(st, sys::WARPFFT_ERR_INVALID_ARG);
    assert!(last().contains("plan is NULL"), "{}", last());
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    for (dim, tol, prec, ntransf, want) in [
        (0, 1e-6, sys::WARPFFT_F32, 1, sys::WARPFFT_ERR_BAD_DIM),
        (1, f64::NAN, sys::WARPFFT_F32, 1, sys::WARPFFT_ERR_BAD_TOL),
        (1, 1e-6, 3, 1, sys::WARPFFT_ERR_INVALID_ARG),
        (2, 1e-6, sys::WARPFFT_F64, 0, sys::WARPFFT_ERR_BAD_SIZE),
    ] {
        // n_modes is ignored for type 3 (NULL is fine)
        let st = unsafe {
            sys::warpfft_plan_create(3, dim, null(), 1, ntransf, tol, prec, null(), &mut plan)
        };
        assert_eq!(st, want, "dim {dim} tol {tol} prec {prec}: {}", last());
        assert!(plan.is_null());
    }
    let mut opts = std::mem::MaybeUninit::<sys::warpfft_opts>::uninit();
    assert_eq!(
        unsafe { sys::warpfft_opts_default(opts.as_mut_ptr()) },
        sys::WARPFFT_SUCCESS
    );
    let mut opts = unsafe { opts.assume_init() };
    opts.spreadinterponly = 1;
    let st = unsafe {
        sys::warpfft_plan_create(3, 2, null(), 1, 1, 1e-6, sys::WARPFFT_F64, &opts, &mut plan)
    };
    assert_eq!(st, sys::WARPFFT_ERR_INVALID_ARG, "{}", last());
    assert!(last().contains("opts.spreadinterponly = 1"), "{}", last());
    assert!(plan.is_null());
    // direct_sample3: every check before the device
    let mut out = [0.0f64; 2];
    let one = [0i64];
    let p = 8 as *const std::ffi::c_void; // never dereferenced: the checks fail first
    let mut call =
        |dim: i32, m: i64, k: i64, n: i64, sample: *const i64, s: *const std::ffi::c_void| unsafe {
            sys::warpfft_direct_sample3(
                dim,
                1,
                sys::WARPFFT_F64,
                0,
                m,
                p,
                p,
                p,
                p,
                k,
                s,
                p,
                p,
                n,
                sample,
                out.as_mut_ptr(),
            )
        };
    assert_eq!(call(4, 1, 1, 1, one.as_ptr(), p), sys::WARPFFT_ERR_BAD_DIM);
    assert_eq!(
        call(1, -1, 1, 1, one.as_ptr(), p),
        sys::WARPFFT_ERR_BAD_NPOINTS
    );
    assert_eq!(call(1, 1, 1, 1, null(), p), sys::WARPFFT_ERR_INVALID_ARG);
    assert_eq!(
        call(1, 1, 1, 1, one.as_ptr(), null()),
        sys::WARPFFT_ERR_INVALID_ARG
    );
    assert!(last().contains("target array s"), "{}", last());
    assert_eq!(
        call(1, 1, 0, 1, one.as_ptr(), p),
        sys::WARPFFT_ERR_INVALID_ARG
    );
    assert!(last().contains("outside [0, 0)"), "{}", last());
    assert_eq!(call(1, 1, 0, 0, null(), null()), sys::WARPFFT_SUCCESS);
}
