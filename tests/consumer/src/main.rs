//! A small program using warpfft as a dependency (`default-features = false, features =
//! ["aot"]`): runs a 1D type-1 transform and checks it against the exact sum on a GPU, or
//! prints the clean "no GPU" error. Exit status 0 in both cases, 1 on any other error or an
//! accuracy miss.

use std::process::ExitCode;

use warpfft::{Complex, Plan};

const TOL: f64 = 1e-5;

/// The transform; `Ok(relative l2 error)` on a GPU.
fn run() -> warpfft::Result<f64> {
    let m = 500;
    let x: Vec<f32> = (0..m).map(|j| (j as f32 * 0.737).sin() * 3.0).collect();
    let c: Vec<Complex<f32>> = (0..m)
        .map(|j| Complex::new((j as f32 * 0.3).cos(), (j as f32 * 0.11).sin()))
        .collect();
    let mut plan = Plan::<f32>::type1(&[64]).tol(TOL).build()?;
    plan.set_points(&[&x])?;
    let mut fk = vec![Complex::default(); plan.fk_len()];
    plan.execute(&c, &mut fk)?;
    let sample: Vec<usize> = (0..64).collect();
    let exact = plan.direct_sample(&c, &sample)?;
    Ok(warpfft::relative_l2_error(&fk, &exact))
}

/// The build this crate got: only the `aot` feature was asked for.
fn manifest_is_aot() -> bool {
    warpfft::build_manifest().contains("\"aot\"")
}

fn main() -> ExitCode {
    println!("warpfft {}", warpfft::version());
    if !manifest_is_aot() {
        eprintln!(
            "error: expected an aot-only build, manifest: {}",
            warpfft::build_manifest()
        );
        return ExitCode::FAILURE;
    }
    match run() {
        Ok(err) if err <= TOL => {
            println!("ok: 1D type-1 f32 transform, relative l2 error {err:.2e} (tol {TOL:e})");
            ExitCode::SUCCESS
        }
        Ok(err) => {
            eprintln!("error: relative l2 error {err:.3e} exceeds tol {TOL:e}");
            ExitCode::FAILURE
        }
        Err(e) if e.is_no_gpu() => {
            println!("no GPU: {e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_or_reports_no_gpu() {
        match run() {
            Ok(err) => assert!(err <= TOL, "relative l2 error {err:e}"),
            Err(e) => assert!(e.is_no_gpu(), "unexpected error: {e}"),
        }
    }

    #[test]
    fn the_build_is_aot_only() {
        assert!(manifest_is_aot(), "{}", warpfft::build_manifest());
    }

    #[test]
    fn no_gpu_work_still_works() {
        let info = Plan::<f64>::type2(&[32, 32]).tol(1e-9).params().unwrap();
        assert_eq!(info.n_modes, [32, 32, 1]);
        assert!(!warpfft::version().is_empty());
    }
}
