//! The measurements the cost model of `c_core/src/params/cost.c` is fitted to: execute times of
//! types 1 and 2 over a grid of upsampling factors, tolerances (so kernel widths 3..16) and the
//! GM and SM methods, for 1D/2D/3D f32/f64 shapes at two densities, with the cuFFT time of each
//! fine grid alone. One JSON object per line on stdout (and `$WARPFFT_COSTMODEL_OUT`, default
//! target/costmodel.jsonl); `scripts/fit_costmodel.py` fits the coefficients from them.
//!
//! `cargo bench --bench costmodel [-- CASE ...]` (cases: 1s 1b 2s 2b 3s 3b; default all);
//! `WARPFFT_COSTMODEL_REPS` timed executes per point (default 5; 2 when one takes > 50 ms),
//! `WARPFFT_COSTMODEL_SIGMAS` (default 1.25,1.5,1.75,2,2.5,3), `WARPFFT_COSTMODEL_BUDGET_S`
//! (default 240): each case gets an equal share and measures its configurations in a shuffled
//! order, so a cut leaves an even sample.

#[path = "../tests/common/mod.rs"]
mod common;
use common::*;
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;
use warpfft::sys;

struct Case {
    name: &'static str,
    dim: i32,
    n: [i64; 3],
    m: i64,
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { name: "1s", dim: 1, n: [100_000, 1, 1], m: 1_000_000 },
    Case { name: "1b", dim: 1, n: [1_000_000, 1, 1], m: 10_000_000 },
    Case { name: "2s", dim: 2, n: [256, 256, 1], m: 1_000_000 },
    Case { name: "2b", dim: 2, n: [1024, 1024, 1], m: 10_000_000 },
    Case { name: "3s", dim: 3, n: [64, 64, 64], m: 1_000_000 },
    Case { name: "3b", dim: 3, n: [128, 128, 128], m: 10_000_000 },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn sync() {
    check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
}

/// Median ms of `reps` calls of `f` after two warm-ups, each call followed by a sync.
fn time_ms(reps: usize, mut f: impl FnMut() -> sys::warpfft_status) -> Result<f64, String> {
    let mut v = Vec::new();
    for i in 0..reps + 2 {
        let t = Instant::now();
        if f() != sys::WARPFFT_SUCCESS {
            return Err(last_error());
        }
        sync();
        if i >= 2 {
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(median(v))
}

fn main() {
    if !gpu_or_skip("costmodel") {
        return;
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let reps: usize = std::env::var("WARPFFT_COSTMODEL_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let sigmas: Vec<f64> = std::env::var("WARPFFT_COSTMODEL_SIGMAS")
        .unwrap_or_else(|_| "1.25,1.5,1.75,2,2.5,3".into())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    let budget: f64 = std::env::var("WARPFFT_COSTMODEL_BUDGET_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(240.0);
    let path =
        std::env::var("WARPFFT_COSTMODEL_OUT").unwrap_or_else(|_| "target/costmodel.jsonl".into());
    let mut out = std::fs::File::create(&path).expect("cannot write the output file");
    let mut fft_memo: HashMap<(i32, [i64; 3], bool), f64> = HashMap::new();
    let mut rng = Rng::new(7);
    let cases: Vec<&Case> = CASES
        .iter()
        .filter(|c| args.is_empty() || args.iter().any(|a| a == c.name))
        .collect();
    let share = budget / cases.len().max(1) as f64;
    for case in cases {
        let t_case = Instant::now();
        let dim = case.dim as usize;
        let m = case.m as usize;
        let pts: Vec<Vec<f64>> = (0..dim)
            .map(|_| (0..m).map(|_| rng.sym(std::f64::consts::PI)).collect())
            .collect();
        let modes: i64 = case.n.iter().product();
        let cvals: Vec<f64> = (0..2 * m).map(|_| rng.sym(1.0)).collect();
        let mut configs = Vec::new();
        for f64p in [false, true] {
            let tols: &[f64] = if f64p {
                &[1e-6, 1e-9, 1e-12]
            } else {
                &[1e-2, 1e-4, 1e-6]
            };
            for ty in [1, 2] {
                for &tol in tols {
                    for &sigma in &sigmas {
                        for method in [1, 2] {
                            configs.push((f64p, ty, tol, sigma, method));
                        }
                    }
                }
            }
        }
        for i in (1..configs.len()).rev() {
            configs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut bufs: HashMap<bool, (Vec<Dev>, Dev, Dev)> = HashMap::new();
        for (f64p, ty, tol, sigma, method) in configs {
            if t_case.elapsed().as_secs_f64() > share {
                eprintln!(
                    "costmodel: case {} cut at its {share:.0} s share",
                    case.name
                );
                break;
            }
            let prec = precision(f64p);
            let (dpts, c, fk) = bufs.entry(f64p).or_insert_with(|| {
                (
                    pts.iter().map(|p| Dev::from_reals(f64p, p)).collect(),
                    Dev::from_reals(f64p, &cvals),
                    Dev::new(2 * real_bytes(f64p) * modes as usize),
                )
            });
            let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
            unsafe { sys::warpfft_opts_default(&mut opts) };
            opts.upsampfac = sigma;
            opts.method = method;
            opts.points_hint = case.m;
            let mut plan: sys::warpfft_plan = std::ptr::null_mut();
            let st = unsafe {
                sys::warpfft_plan_create(
                    ty,
                    case.dim,
                    case.n.as_ptr(),
                    1,
                    1,
                    tol,
                    prec,
                    &opts,
                    &mut plan,
                )
            };
            if st != sys::WARPFFT_SUCCESS {
                continue; // e.g. tol out of reach at this sigma, SM tile too big
            }
            let guard = PlanGuard(plan);
            let p = |d: usize| point_ptr(dpts, d);
            let t_set = time_ms(2, || unsafe {
                sys::warpfft_setpts(plan, prec, case.m, p(0), p(1), p(2))
            });
            let exec = || unsafe { sys::warpfft_execute(plan, prec, c.ptr, fk.ptr) };
            let first = time_ms(1, exec);
            let t_exe = match first {
                Ok(t) if t > 50.0 => time_ms(2, exec),
                Ok(_) => time_ms(reps, exec),
                Err(e) => Err(e),
            };
            let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
            check(
                unsafe { sys::warpfft_plan_get_info(guard.0, &mut info) },
                "get_info",
            );
            drop(guard);
            let (Ok(t_set), Ok(t_exe)) = (t_set, t_exe) else {
                eprintln!("costmodel: {} failed: {}", case.name, last_error());
                continue;
            };
            let nf = info.n_fine;
            let fft = *fft_memo.entry((case.dim, nf, f64p)).or_insert_with(|| {
                let n = nf.map(|v| v.max(1) as usize);
                let pr = if f64p {
                    warpfft::Precision::F64
                } else {
                    warpfft::Precision::F32
                };
                warpfft::bench_fft(dim, n, pr, 1, 0, 10).unwrap_or(f64::NAN)
            });
            let line = format!(
                "{{\"case\":\"{}\",\"dim\":{},\"f64\":{},\"type\":{},\"method\":{},\"tol\":{:e},\"sigma\":{},\"width\":{},\"nf\":[{},{},{}],\"n\":[{},{},{}],\"M\":{},\"setpts_ms\":{:.5},\"exec_ms\":{:.5},\"fft_ms\":{:.5},\"predicted_ms\":{:.5}}}",
                case.name, case.dim, f64p, ty, info.method, tol, sigma, info.width,
                nf[0], nf[1], nf[2], case.n[0], case.n[1], case.n[2], case.m,
                t_set, t_exe, fft, info.predicted_ms
            );
            println!("{line}");
            writeln!(out, "{line}").unwrap();
        }
    }
}
