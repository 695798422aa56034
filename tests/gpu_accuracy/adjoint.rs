//! Types 1 and 2 with opposite signs are adjoint: <type1(c), f> = <c, type2(f)>; with one choice
//! per problem (issue 39) to rounding.

use crate::common::*;
use warpfft::sys;

/// The pair of one problem on m random points, with opposite signs and default options:
/// |<type1(c), f> - <c, type2(f)>| / |<type1(c), f>|, and the two plans' infos (after setpts).
fn pair(
    dim: i32,
    f64: bool,
    tol: f64,
    n: [i64; 3],
    m: i64,
    seed: u64,
) -> (f64, [sys::warpfft_plan_info; 2]) {
    let mut rng = Rng::new(seed);
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
    let mut infos: [sys::warpfft_plan_info; 2] = unsafe { std::mem::zeroed() };
    for (k, (ty, iflag, cp, fp)) in [(1, 1, dc.ptr, dfk.ptr), (2, -1, dcc.ptr, df.ptr)]
        .into_iter()
        .enumerate()
    {
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
        check(
            unsafe { sys::warpfft_plan_get_info(plan, &mut infos[k]) },
            "plan_get_info",
        );
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
    ((lhs.0 - rhs.0).hypot(lhs.1 - rhs.1) / norm, infos)
}

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
        let n = [[3001, 1, 1], [120, 97, 1], [30, 27, 33]][dim as usize - 1];
        let (rel, _) = pair(dim, f64, tol, n, 20_000, 7 + dim as u64);
        println!(
            "adjointness dim {dim} {} tol {tol:e}: relative difference {rel:.2e}",
            if f64 { "f64" } else { "f32" }
        );
        // Each side carries an error ≤ tol relative to its norms; the inner products differ by
        // up to about tol·|c|·|f|·sqrt(N·M)/|<.,.>|: allow a generous factor, still far below 1.
        assert!(rel < tol * 1e3, "adjointness failed: {rel:e}");
    }
}

/// One choice per problem (issue 39): the type-1 and type-2 plans of one problem take the same
/// upsampling factor and kernel (and, from the same points, the same width at setpts), so the
/// pair is adjoint to rounding — within the two plans' rounding floors (`tol_floor`), far below
/// tol. Before, upsampfac 0 chose per type: in each of these cases type 1 and type 2 took
/// different (sigma, w) (e.g. 1D N 1e5 f32 1e-3: sigma 2 w 5 against 1.25 w 7), and the pair
/// differed by about tol.
#[test]
fn one_choice_per_problem() {
    if !gpu_or_skip("gpu_accuracy::adjoint::one_choice_per_problem") {
        return;
    }
    for (dim, f64, tol, n) in [
        (1, false, 1e-3, [100_000, 1, 1]),
        (2, false, 1e-3, [120, 97, 1]),
        (2, true, 1e-8, [256, 256, 1]),
        (3, true, 1e-6, [30, 27, 33]),
    ] {
        let (rel, [a, b]) = pair(dim, f64, tol, n, 20_000, 11 + dim as u64);
        let floors = a.tol_floor + b.tol_floor;
        println!(
            "adjoint to rounding: dim {dim} {} tol {tol:e}: sigma {} / {}, width {} / {}, \
             relative difference {rel:.2e} (floors {floors:.2e})",
            if f64 { "f64" } else { "f32" },
            a.upsampfac,
            b.upsampfac,
            a.width,
            b.width
        );
        assert!(
            a.upsampfac == b.upsampfac && a.width == b.width && a.beta == b.beta,
            "type 1 and type 2 of one problem: sigma {} / {}, width {} / {}",
            a.upsampfac,
            b.upsampfac,
            a.width,
            b.width
        );
        assert!(
            rel <= 4.0 * floors && rel < 1e-2 * tol,
            "not adjoint to rounding: {rel:e} (floors {floors:e}, tol {tol:e})"
        );
    }
}
