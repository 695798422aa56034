//! Types 1 and 2 with opposite signs are adjoint: <type1(c), f> = <c, type2(f)>.

use crate::common::*;
use warpfft::sys;

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
