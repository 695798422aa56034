//! The main demo: a 2D type-1 NUFFT of one million random points onto 512 × 512 modes in single
//! precision at tol 1e-5, timed, and checked against the exact sum at a sample of modes.
//! Without a GPU it prints what it would have run and why it cannot.
//!
//! `cargo run --release --example demo` (or `./scripts/demo.sh`).

use std::time::Instant;
use warpfft::{Complex, Plan};

fn main() {
    if let Err(e) = run() {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> warpfft::Result<()> {
    let (n1, n2, m) = (512usize, 512usize, 1_000_000usize);
    let builder = Plan::<f32>::type1(&[n1, n2]).tol(1e-5);
    let p = builder.params()?;
    println!(
        "warpfft {} — 2D type 1, f32, {n1}x{n2} modes, M = {m}, tol 1e-5",
        warpfft::version()
    );
    println!(
        "kernel width {}, beta {:.2}, fine grid {}x{}",
        p.width, p.beta, p.n_fine[0], p.n_fine[1]
    );

    let t = Instant::now();
    let mut plan = match builder.build() {
        Ok(plan) => plan,
        Err(e) if e.is_no_gpu() => {
            println!("no GPU here, so nothing to run: {e}");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let plan_ms = ms(t);

    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let pi = std::f64::consts::PI;
    let x: Vec<f32> = (0..m)
        .map(|_| (pi * (2.0 * uniform() - 1.0)) as f32)
        .collect();
    let y: Vec<f32> = (0..m)
        .map(|_| (pi * (2.0 * uniform() - 1.0)) as f32)
        .collect();
    let c: Vec<Complex<f32>> = (0..m)
        .map(|_| Complex::new(uniform() as f32 - 0.5, uniform() as f32 - 0.5))
        .collect();

    let t = Instant::now();
    plan.set_points(&[&x, &y])?;
    plan.synchronize()?;
    let setpts_ms = ms(t);

    let mut fk = vec![Complex::default(); plan.fk_len()];
    let t = Instant::now();
    plan.execute(&c, &mut fk)?; // includes the host<->device copies of c and fk
    let exec_ms = ms(t);

    let sample: Vec<usize> = (0..fk.len()).step_by(997).collect();
    let exact = plan.direct_sample(&c, &sample)?;
    let approx: Vec<Complex<f32>> = sample.iter().map(|&i| fk[i]).collect();
    let err = warpfft::relative_l2_error(&approx, &exact);

    let info = plan.info()?;
    println!(
        "method {:?}, device workspace {:.1} MiB",
        info.method,
        info.workspace_bytes as f64 / 1048576.0
    );
    println!("plan {plan_ms:.1} ms (first call: driver init, kernel load, cuFFT plan), set points {setpts_ms:.2} ms, execute with host copies {exec_ms:.2} ms");
    println!(
        "relative l2 error vs exact sum at {} modes: {err:.2e} (tol 1e-5)",
        sample.len()
    );
    if err > 1e-5 {
        eprintln!("error above tol");
        std::process::exit(1);
    }
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
