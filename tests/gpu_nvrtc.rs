//! Kernels compiled at run time by NVRTC (feature `nvrtc`), on a GPU: the first plan of a
//! fresh process with an empty kernel cache (every module compiled: image `"nvrtc"`), then with
//! that cache (image `"nvrtc-cache"`, no compile), timed; the results agree with the exact sum.
//!
//! Each phase runs in its own process (this test binary re-run with `WF_NVRTC_PHASE` set), so
//! that nothing is loaded yet when the first plan is made. Skips, saying why, without a GPU and
//! in builds whose mode has no `nvrtc`. Run: `cargo test --no-default-features --features nvrtc
//! --release --test gpu_nvrtc -- --nocapture`.

use std::process::Command;
use std::time::Instant;

#[macro_use]
mod common; // require_gpu!

use warpfft::{Complex, Plan};

/// The build mode, from the runtime report's `"build":{"mode":"..."}`.
fn build_mode() -> String {
    let json = warpfft::runtime_report(0).json().to_string();
    let key = "\"mode\":\"";
    json.find(key)
        .map(|i| {
            let rest = &json[i + key.len()..];
            rest[..rest.find('"').unwrap_or(0)].to_string()
        })
        .unwrap_or_default()
}

/// The `"image"` of every module in the runtime report.
fn module_images(json: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = json;
    while let Some(i) = rest.find("\"image\":\"") {
        rest = &rest[i + 9..];
        out.push(rest[..rest.find('"').unwrap_or(0)].to_string());
    }
    out
}

/// One phase, in a child process: a 2D type-1 plan (f32) from nothing to its first result,
/// timed, checked at one mode against the direct sum; prints `first_plan_ms=<ms>` and the
/// module images for the parent.
fn child_phase(phase: &str) {
    let (n1, n2, m) = (64usize, 64usize, 10_000usize);
    let mut s = 12345u64;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let x: Vec<f32> = (0..m)
        .map(|_| (next() * std::f64::consts::PI) as f32)
        .collect();
    let y: Vec<f32> = (0..m)
        .map(|_| (next() * std::f64::consts::PI) as f32)
        .collect();
    let c: Vec<Complex<f32>> = (0..m)
        .map(|_| Complex::new(next() as f32, next() as f32))
        .collect();
    let t0 = Instant::now();
    let mut plan = Plan::<f32>::type1(&[n1, n2])
        .tol(1e-5)
        .iflag(1)
        .build()
        .expect("build");
    plan.set_points(&[&x, &y]).expect("set_points");
    let mut fk = vec![Complex::<f32>::default(); n1 * n2];
    plan.execute(&c, &mut fk).expect("execute");
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    // Mode (k1, k2) = (3, -5) in CMCL order: index (k2 + n2/2) * n1 + (k1 + n1/2).
    let (k1, k2) = (3i64, -5i64);
    let mut exact = Complex::<f64>::default();
    for j in 0..m {
        let ph = (k1 as f64) * x[j] as f64 + (k2 as f64) * y[j] as f64;
        let cj = Complex::new(c[j].re as f64, c[j].im as f64);
        exact += cj * Complex::new(ph.cos(), ph.sin());
    }
    let got = fk[((k2 + n2 as i64 / 2) as usize) * n1 + (k1 + n1 as i64 / 2) as usize];
    let err = ((got.re as f64 - exact.re).powi(2) + (got.im as f64 - exact.im).powi(2)).sqrt()
        / exact.norm();
    assert!(err < 1e-3, "{phase}: mode (3, -5) relative error {err:e}");
    let json = warpfft::runtime_info(0).expect("runtime_info");
    println!("first_plan_ms={ms:.1}");
    println!("images={}", module_images(&json).join(","));
    println!("runtime_info={json}");
}

#[test]
fn nvrtc_cold_and_warm_first_plan() {
    if let Ok(phase) = std::env::var("WF_NVRTC_PHASE") {
        child_phase(&phase);
        return;
    }
    require_gpu!();
    let mode = build_mode();
    if !mode.contains("nvrtc") {
        eprintln!("skipped: build mode '{mode}' compiles nothing with NVRTC (feature nvrtc)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("warpfft-nvrtc-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().expect("current_exe");
    let mut times = Vec::new();
    for (phase, want) in [("cold", "nvrtc"), ("warm", "nvrtc-cache")] {
        let out = Command::new(&exe)
            .args(["--exact", "nvrtc_cold_and_warm_first_plan", "--nocapture"])
            .env("WF_NVRTC_PHASE", phase)
            .env("WARPFFT_CACHE_DIR", &dir)
            .output()
            .expect("running the test binary again");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{phase} phase failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k))
                .unwrap_or_default()
                .to_string()
        };
        let ms: f64 = field("first_plan_ms=").parse().expect("first_plan_ms");
        let images = field("images=");
        println!("{phase}: first plan {ms:.1} ms, module images {images}");
        // An nvrtc-only build compiles every module; with embedded images too, only those
        // that do not fit this GPU are.
        if mode == "nvrtc" {
            assert!(
                !images.is_empty() && images.split(',').all(|i| i == want),
                "{phase}: images {images}, want all {want}\n{}",
                field("runtime_info=")
            );
        }
        times.push(ms);
    }
    println!(
        "first plan (2D type 1, f32, 64x64 modes, 1e4 points): cold cache {:.1} ms, warm cache {:.1} ms",
        times[0], times[1]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
