//! The Toeplitz normal operator on the GPU ([`warpfft::Toeplitz`], the C ABI's
//! `warpfft_toeplitz_*`): `T f` and `Tᴴ f` against type 2 + weights + type 1 with warpfft's own
//! plans at tol/100 in f64 (every dim × precision × weights none/real/complex, batches, both
//! signs and mode orders), the accuracy promise (relative l2 error ≤ tol), device buffers, the
//! zero operator, a caller's spectrum (`warpfft_toeplitz_spectrum` +
//! `warpfft_toeplitz_apply_spectrum` against `apply`), NaN points. Small sizes: it also runs
//! under `compute-sanitizer --tool memcheck` (scripts/gpu_run.sh). Skips visibly without a GPU.

mod common;
use common::{gpu_or_skip, Rng};
use std::ffi::c_void;
use warpfft::{sys, Complex, DeviceBuffer, Error, ModeOrder, Plan, Real, Toeplitz, Weights};

const SHAPES: [&[usize]; 3] = [&[200], &[40, 33], &[16, 12, 10]];
const M: [usize; 3] = [1500, 4000, 9000];

#[derive(Clone, Copy, Debug, PartialEq)]
enum W {
    None,
    Real,
    Complex,
}

struct Problem {
    pts: Vec<Vec<f64>>,
    w_re: Vec<f64>,
    w_ph: Vec<f64>,
    f: Vec<Complex<f64>>,
}

fn problem(rng: &mut Rng, dim: usize, ntransf: usize) -> Problem {
    let pi = std::f64::consts::PI;
    let m = M[dim - 1];
    let n: usize = SHAPES[dim - 1].iter().product();
    let mut pts: Vec<Vec<f64>> = (0..dim)
        .map(|_| (0..m).map(|_| rng.range(-pi, pi)).collect())
        .collect();
    pts[0][0] = -pi;
    pts[0][1] = 4.0; // folded
    Problem {
        pts,
        w_re: (0..m).map(|_| rng.range(0.1, 1.0)).collect(),
        w_ph: (0..m).map(|_| rng.range(0.0, 6.0)).collect(),
        f: (0..ntransf * n)
            .map(|_| Complex::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)))
            .collect(),
    }
}

fn weights_c(p: &Problem, w: W) -> Vec<Complex<f64>> {
    p.w_re
        .iter()
        .zip(&p.w_ph)
        .map(|(&r, &ph)| match w {
            W::None => Complex::new(1.0, 0.0),
            W::Real => Complex::new(r, 0.0),
            W::Complex => Complex::from_polar(r, ph),
        })
        .collect()
}

/// Type 2 (sign iflag), the weights (conjugated for the adjoint), type 1 (sign -iflag): f64
/// plans at tol/100, on the points as the operator saw them (rounded to T).
fn reference<T: Real>(
    p: &Problem,
    w: W,
    iflag: i32,
    modeord: ModeOrder,
    ntransf: usize,
    tol: f64,
    adjoint: bool,
) -> Vec<Complex<f64>> {
    let dim = p.pts.len();
    let pts: Vec<Vec<f64>> = p
        .pts
        .iter()
        .map(|c| c.iter().map(|&v| T::from_f64(v).to_f64()).collect())
        .collect();
    let f: Vec<Complex<f64>> =
        p.f.iter()
            .map(|z| Complex::new(T::from_f64(z.re).to_f64(), T::from_f64(z.im).to_f64()))
            .collect();
    let rtol = (tol / 100.0).max(1e-13);
    let n = SHAPES[dim - 1];
    let mut a = Plan::<f64>::type2(n)
        .tol(rtol)
        .iflag(iflag)
        .modeord(modeord)
        .ntransf(ntransf)
        .build()
        .expect("type-2 plan");
    a.set_points(&pts).expect("setpts");
    let m = pts[0].len();
    let mut u = vec![Complex::default(); ntransf * m];
    a.execute(&f, &mut u).expect("type 2");
    let ww: Vec<Complex<f64>> = weights_c(p, w)
        .iter()
        .map(|z| {
            let z = Complex::new(T::from_f64(z.re).to_f64(), T::from_f64(z.im).to_f64());
            if adjoint {
                z.conj()
            } else {
                z
            }
        })
        .collect();
    for (j, v) in u.iter_mut().enumerate() {
        *v *= ww[j % m];
    }
    let mut b = Plan::<f64>::type1(n)
        .tol(rtol)
        .iflag(-iflag)
        .modeord(modeord)
        .ntransf(ntransf)
        .build()
        .expect("type-1 plan");
    b.set_points(&pts).expect("setpts");
    let mut out = vec![Complex::default(); f.len()];
    b.execute(&u, &mut out).expect("type 1");
    out
}

fn rel_err<T: Real>(got: &[Complex<T>], want: &[Complex<f64>]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (g, w) in got.iter().zip(want) {
        num += (Complex::new(g.re.to_f64(), g.im.to_f64()) - w).norm_sqr();
        den += w.norm_sqr();
    }
    (num / den).sqrt()
}

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

fn to_ct<T: Real>(v: &[Complex<f64>]) -> Vec<Complex<T>> {
    v.iter()
        .map(|z| Complex::new(T::from_f64(z.re), T::from_f64(z.im)))
        .collect()
}

fn check_case<T: Real>(dim: usize, w: W, tol: f64) {
    let ntransf = 2;
    let mut rng = Rng::new(7 + dim as u64);
    let p = problem(&mut rng, dim, ntransf);
    let pts: Vec<Vec<T>> = p.pts.iter().map(|c| to_t(c)).collect();
    let wr: Vec<T> = to_t(&p.w_re);
    let wc: Vec<Complex<T>> = to_ct(&weights_c(&p, W::Complex));
    let weights = match w {
        W::None => Weights::None,
        W::Real => Weights::Real(&wr),
        W::Complex => Weights::Complex(&wc),
    };
    let f: Vec<Complex<T>> = to_ct(&p.f);
    for (iflag, modeord) in [(-1, ModeOrder::Cmcl), (1, ModeOrder::Fft)] {
        let mut op = Toeplitz::<T>::builder(SHAPES[dim - 1])
            .tol(tol)
            .iflag(iflag)
            .modeord(modeord)
            .ntransf(ntransf)
            .build(&pts, weights)
            .expect("build");
        let info = op.info().expect("info");
        assert_eq!(info.n_points, Some(M[dim - 1]));
        assert!(info.spectrum_bytes > 0 && info.build_ms > 0.0);
        assert!(op.workspace_bytes().unwrap() >= info.spectrum_bytes + info.grid_bytes);
        for adjoint in [false, true] {
            let mut out = vec![Complex::<T>::default(); f.len()];
            if adjoint {
                op.apply_adjoint(&f, &mut out).expect("apply_adjoint");
            } else {
                op.apply(&f, &mut out).expect("apply");
            }
            let want = reference::<T>(&p, w, iflag, modeord, ntransf, tol, adjoint);
            let err = rel_err(&out, &want);
            println!(
                "  {dim}D {} weights {w:?} iflag {iflag:+} {modeord:?} adjoint {adjoint}: grid \
                 {:?}, kernel tol {:.1e} width {}, build {:.2} ms, rel err {err:.2e} (tol {tol:.0e})",
                std::any::type_name::<T>(),
                &info.n_grid[..dim],
                info.kernel_tol,
                info.kernel_width,
                info.build_ms
            );
            assert!(err <= tol, "relative error {err:.3e} > tol {tol:.0e}");
        }
    }
}

#[test]
fn against_type2_then_type1_every_dim_precision_weights() {
    if !gpu_or_skip("gpu_toeplitz::against_type2_then_type1_every_dim_precision_weights") {
        return;
    }
    for dim in 1..=3 {
        for w in [W::None, W::Real, W::Complex] {
            check_case::<f32>(dim, w, 1e-5);
            check_case::<f64>(dim, w, 1e-9);
        }
    }
}

#[test]
fn device_buffers_zero_operator_and_a_callers_spectrum() {
    if !gpu_or_skip("gpu_toeplitz::device_buffers_zero_operator_and_a_callers_spectrum") {
        return;
    }
    let mut rng = Rng::new(3);
    let p = problem(&mut rng, 2, 3);
    let pts: Vec<Vec<f32>> = p.pts.iter().map(|c| to_t(c)).collect();
    let wr: Vec<f32> = to_t(&p.w_re);
    let f: Vec<Complex<f32>> = to_ct(&p.f);
    let n = SHAPES[1];
    let mut op = Toeplitz::<f32>::builder(n)
        .tol(1e-5)
        .ntransf(3)
        .build(&pts, Weights::Real(&wr))
        .unwrap();
    let mut host = vec![Complex::<f32>::default(); f.len()];
    op.apply(&f, &mut host).unwrap();
    let din = DeviceBuffer::from_slice(&f).unwrap();
    let mut dout = DeviceBuffer::<Complex<f32>>::zeros(f.len()).unwrap();
    op.apply_device(&din, &mut dout, false).unwrap();
    assert_eq!(dout.to_vec().unwrap(), host, "device and host paths differ");

    // a caller's spectrum (what the framework ops hold) applied by a zero operator
    let info = op.info().unwrap();
    let lprod: usize = info.n_grid.iter().product();
    let spec = DeviceBuffer::<f32>::zeros(lprod).unwrap();
    let bufs: Vec<DeviceBuffer<f32>> = pts
        .iter()
        .map(|c| DeviceBuffer::from_slice(c).unwrap())
        .collect();
    let wbuf = DeviceBuffer::from_slice(&wr).unwrap();
    let modes = [n[0] as i64, n[1] as i64, 1];
    let mut opts = std::mem::MaybeUninit::<sys::warpfft_opts>::zeroed();
    // SAFETY: plain calls on live buffers of the stated lengths; the spectrum call waits.
    let st = unsafe {
        sys::warpfft_opts_default(opts.as_mut_ptr());
        sys::warpfft_toeplitz_spectrum(
            2,
            modes.as_ptr(),
            -1,
            1e-5,
            sys::WARPFFT_F32,
            opts.as_ptr(),
            pts[0].len() as i64,
            bufs[0].as_ptr(),
            bufs[1].as_ptr(),
            std::ptr::null(),
            sys::WARPFFT_WEIGHTS_REAL as i32,
            wbuf.as_ptr(),
            spec.as_raw() as *mut c_void,
        )
    };
    assert_eq!(st, sys::WARPFFT_SUCCESS, "{}", common::last_error());
    let zero_pts: [Vec<f32>; 2] = [vec![], vec![]];
    let mut zero = Toeplitz::<f32>::builder(n)
        .tol(1e-5)
        .ntransf(3)
        .build(&zero_pts, Weights::None)
        .unwrap();
    assert_eq!(zero.info().unwrap().spectrum_bytes, 0);
    let mut z = vec![Complex::<f32>::new(1.0, 1.0); f.len()];
    zero.apply(&f, &mut z).unwrap();
    assert!(z.iter().all(|v| *v == Complex::default()), "zero operator");
    let mut via = DeviceBuffer::<Complex<f32>>::zeros(f.len()).unwrap();
    // SAFETY: live buffers of the operator's lengths; the copy below waits for the stream.
    let st = unsafe {
        sys::warpfft_toeplitz_apply_spectrum(
            zero.as_raw(),
            sys::WARPFFT_F32,
            1,
            spec.as_ptr(),
            0,
            din.as_ptr(),
            via.as_mut_ptr(),
        )
    };
    assert_eq!(st, sys::WARPFFT_SUCCESS, "{}", common::last_error());
    let via = via.to_vec().unwrap();
    let want: Vec<Complex<f64>> = host
        .iter()
        .map(|z| Complex::new(z.re as f64, z.im as f64))
        .collect();
    let err = rel_err(&via, &want);
    assert!(
        err < 1e-6,
        "caller's spectrum vs the operator's own: {err:.2e}"
    );
}

#[test]
fn nan_points_and_shapes_are_errors() {
    if !gpu_or_skip("gpu_toeplitz::nan_points_and_shapes_are_errors") {
        return;
    }
    let mut x = vec![0.5f64; 50];
    x[7] = f64::NAN;
    let y = vec![0.1f64; 50];
    let err = Toeplitz::<f64>::builder(&[8, 8])
        .build(&[&x, &y], Weights::None)
        .unwrap_err();
    assert!(matches!(err, Error::BadPoints(_)), "{err}");
    x[7] = 0.2;
    let mut op = Toeplitz::<f64>::builder(&[8, 8])
        .build(&[&x, &y], Weights::None)
        .unwrap();
    let mut out = vec![Complex::default(); 63];
    assert!(matches!(
        op.apply(&[Complex::default(); 64], &mut out),
        Err(Error::Shape(_))
    ));
}
