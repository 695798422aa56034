//! Types 1 and 2 with opposite signs are adjoint: <type1(c), f> = <c, type2(f)>; with one choice
//! per problem (issue 39) to rounding.

use crate::cases::{case, Dist};
use crate::common::*;
use crate::create_plan;
use std::os::raw::c_void;
use warpfft::sys;

/// The data of an adjointness check on the device: random strengths `cv` (type 1's input) and
/// modes `fv` (type 2's), and room for type 1's modes and type 2's strengths.
pub struct AdjointData {
    f64: bool,
    cv: Vec<f64>,
    fv: Vec<f64>,
    dc: Dev,
    df: Dev,
    dfk: Dev,
    dcc: Dev,
}

impl AdjointData {
    /// `m` strengths and `nm` modes, in the precision `f64` selects.
    pub fn new(rng: &mut Rng, f64: bool, m: i64, nm: i64) -> Self {
        let cv: Vec<f64> = (0..2 * m).map(|_| rng.range(-1.0, 1.0)).collect();
        let fv: Vec<f64> = (0..2 * nm).map(|_| rng.range(-1.0, 1.0)).collect();
        let (dc, df) = (Dev::from_reals(f64, &cv), Dev::from_reals(f64, &fv));
        let (dfk, dcc) = (
            Dev::new(fv.len() * real_bytes(f64)),
            Dev::new(cv.len() * real_bytes(f64)),
        );
        AdjointData {
            f64,
            cv,
            fv,
            dc,
            df,
            dfk,
            dcc,
        }
    }

    /// The (c, fk) arguments of `warpfft_execute` for type 1 (c to fk), then type 2 (fk to c).
    pub fn io(&self) -> [(*mut c_void, *mut c_void); 2] {
        [(self.dc.ptr, self.dfk.ptr), (self.dcc.ptr, self.df.ptr)]
    }

    /// |<fk, fv> - <cv, cc>| / |<fk, fv>|, <a, b> = Σ conj(a) b, once both transforms ran (the
    /// stream synchronised): how far type 1's modes fk of cv and type 2's strengths cc of fv
    /// are from adjoint.
    pub fn gap(&self) -> f64 {
        let fk = self.dfk.reals(self.f64, self.fv.len());
        let cc = self.dcc.reals(self.f64, self.cv.len());
        let dot = |a: &[f64], b: &[f64]| {
            a.chunks(2)
                .zip(b.chunks(2))
                .fold((0.0, 0.0), |(re, im), (x, y)| {
                    (
                        re + x[0] * y[0] + x[1] * y[1],
                        im + x[0] * y[1] - x[1] * y[0],
                    )
                })
        };
        let (lhs, rhs) = (dot(&fk, &self.fv), dot(&self.cv, &cc));
        (lhs.0 - rhs.0).hypot(lhs.1 - rhs.1) / lhs.0.hypot(lhs.1).max(1e-300)
    }
}

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
    let data = AdjointData::new(&mut rng, f64, m, nm);
    let mut infos: [sys::warpfft_plan_info; 2] = unsafe { std::mem::zeroed() };
    for (k, ((ty, iflag), (cp, fp))) in [(1, 1), (2, -1)].into_iter().zip(data.io()).enumerate() {
        let c = case(dim, ty, f64, tol, n, m, Dist::Uniform);
        let plan = checked(create_plan(&c, iflag, std::ptr::null()), "plan_create");
        check(
            unsafe { sys::warpfft_setpts(plan, prec, m, ptr(0), ptr(1), ptr(2)) },
            "setpts",
        );
        check(
            unsafe { sys::warpfft_execute(plan, prec, cp, fp) },
            "execute",
        );
        check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
        infos[k] = plan_info(plan);
        unsafe { sys::warpfft_plan_destroy(plan) };
    }
    (data.gap(), infos)
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
