//! Runs the saxpy and the sum on GPU 0, checks both against the exact results, and reports
//! what was embedded, which image each module was loaded from, and the first-launch latency.
//!
//! `rust-kernels --sizes` prints only the embedded sizes (no GPU needed).
//!
//! Exit status: 0 results correct; 2 no GPU here (no driver, or no device: the message says
//! which); 1 anything else (a load or launch error, a wrong result).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use fatbuild_rt::{Context, DeviceBuffer, Result};
use rust_kernels::{embedded_sizes, kernels, Kernels};

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn main() -> ExitCode {
    let start = Instant::now();
    let e = &kernels::EMBED;
    println!(
        "rust-kernels: mode {}, archs {:?}, ptx {}, toolkit {}",
        e.mode(),
        e.archs(),
        if e.ptx_arch().is_empty() {
            "-"
        } else {
            e.ptx_arch()
        },
        if e.toolkit().is_empty() {
            "none"
        } else {
            e.toolkit()
        }
    );
    let sizes = embedded_sizes();
    let total: usize = sizes.iter().map(|(_, b)| b).sum();
    let parts: Vec<String> = sizes.iter().map(|(n, b)| format!("{n} {b} B")).collect();
    println!("embedded: {total} B ({})", parts.join(", "));
    if std::env::args().skip(1).any(|a| a == "--sizes") {
        println!("SIZE mode={} bytes={total}", e.mode());
        return ExitCode::SUCCESS;
    }
    match run(start) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.is_no_gpu() => {
            eprintln!("no GPU: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Launches `y = a x + y` and waits for it, then the sum of `x`: the time of each, and the sum.
fn launch(
    ctx: &Context,
    k: &Kernels,
    a: f32,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> Result<(Duration, Duration, f32)> {
    let t = Instant::now();
    k.saxpy(a, x, y)?;
    ctx.synchronize()?;
    let saxpy = t.elapsed();
    let t = Instant::now();
    let sum = k.sum(x)?;
    Ok((saxpy, t.elapsed(), sum))
}

/// Loads, launches, checks; `Ok(false)` on a wrong result.
fn run(start: Instant) -> Result<bool> {
    let t = Instant::now();
    let ctx = Context::new(0)?;
    let init = t.elapsed();
    let drv = ctx.driver().version();
    println!(
        "device: {} (sm_{}), driver CUDA {}.{}; init (cuInit + context) {} ms",
        ctx.device_name(),
        ctx.sm(),
        drv / 1000,
        drv % 1000 / 10,
        ms(init)
    );

    // First launch: load both modules, launch each once, wait.
    let n = 1 << 20;
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let x = ctx.upload(&xs)?;
    let mut y = ctx.upload(&vec![1.0f32; n])?;
    let t = Instant::now();
    let k = Kernels::load(&ctx)?;
    let load = t.elapsed();
    for (m, r) in ["saxpy", "reduce"].iter().zip(&k.reports) {
        let skipped = if r.skipped.is_empty() {
            String::new()
        } else {
            format!(" (skipped: {})", r.skipped.join("; "))
        };
        println!("load {m}: from {} in {} ms{skipped}", r.from, ms(r.time));
        if !r.cache_note.is_empty() {
            println!("  kernel cache: {}", r.cache_note);
        }
    }
    let (first_saxpy, first_sum, sum) = launch(&ctx, &k, 2.0, &x, &mut y)?;
    let first = start.elapsed();

    // Again, warm: the launches alone.
    let (second_saxpy, second_sum, _) = launch(&ctx, &k, 0.0, &x, &mut y)?;

    let got = y.to_vec()?;
    let bad = (0..n).filter(|&i| got[i] != 2.0 * xs[i] + 1.0).count();
    let exact: f64 = xs.iter().map(|&v| f64::from(v)).sum();
    let ok = bad == 0 && f64::from(sum) == exact;
    println!(
        "saxpy: {bad} of {n} wrong; sum: {sum} (exact {exact}); {}",
        if ok { "ok" } else { "WRONG" }
    );
    println!(
        "first launch: load {} ms, saxpy {} ms, sum {} ms (second: {} ms, {} ms); process start \
         to first results {} ms",
        ms(load),
        ms(first_saxpy),
        ms(first_sum),
        ms(second_saxpy),
        ms(second_sum),
        ms(first)
    );
    let from: Vec<&str> = k.reports.iter().map(|r| r.from.as_str()).collect();
    println!(
        "RESULT mode={} from={} init_ms={} load_ms={} first_launch_ms={} total_ms={} ok={ok}",
        kernels::EMBED.mode(),
        from.join(","),
        ms(init),
        ms(load),
        ms(first_saxpy + first_sum),
        ms(first)
    );
    Ok(ok)
}
