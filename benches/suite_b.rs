//! Benchmark suite B of DESIGN.md: per case the plan, set-points and execute times (median of
//! repeated runs after a warm-up, host clock around work + stream sync), throughput and the
//! measured relative error on 1024 stratified outputs against the exact sum (double, on the GPU),
//! printed beside the reference times; JSON to $WARPFFT_BENCH_JSON (default
//! target/suite_b.json).
//!
//! `cargo bench --bench suite_b [-- B2 B3]` runs all or the named cases; `B3x` names all the
//! type-3 cases (T1..T8, issue 9: sources in [-π, π)^d, targets in [-S, S]^d, M = K), which
//! also run by their own names (`-- T1 T5`).
//! `WARPFFT_BENCH_METHODS=all` also times each case with the GM and SM methods forced.
//! `WARPFFT_BENCH_REPS=N` sets the timed repetitions (default 20).
//! `WARPFFT_BENCH_BINS=B2:32x16,...` overrides a case's bin edges (tuning).

#[path = "../tests/common/mod.rs"]
mod common;
use common::*;
use std::ffi::c_void;
use std::time::Instant;
use warpfft::sys;

struct Bench {
    name: &'static str,
    dim: i32,
    ty: i32,
    f64: bool,
    n: [i64; 3],
    m: i64,
    ntransf: i64,
    tol: f64,
    ref_ms: f64,
}

#[rustfmt::skip]
const SUITE: &[Bench] = &[
    Bench { name: "B1", dim: 1, ty: 1, f64: false, n: [1_000_000, 1, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 0.62 },
    Bench { name: "B2", dim: 2, ty: 1, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 2.07 },
    Bench { name: "B3", dim: 2, ty: 2, f64: false, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 1.30 },
    Bench { name: "B4", dim: 3, ty: 1, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 5.61 },
    Bench { name: "B5", dim: 3, ty: 2, f64: false, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-5, ref_ms: 3.19 },
    Bench { name: "B6", dim: 2, ty: 1, f64: true, n: [1024, 1024, 1], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 12.6 },
    Bench { name: "B7", dim: 3, ty: 1, f64: true, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 341.0 },
    Bench { name: "B8", dim: 3, ty: 2, f64: true, n: [128, 128, 128], m: 10_000_000, ntransf: 1, tol: 1e-9, ref_ms: 20.5 },
    Bench { name: "B9", dim: 2, ty: 1, f64: false, n: [256, 256, 1], m: 1_000_000, ntransf: 8, tol: 1e-5, ref_ms: 2.66 },
];

/// A type-3 case: M sources uniform in [-π, π)^dim, K targets uniform in [-smax, smax]^dim.
struct Bench3 {
    name: &'static str,
    dim: i32,
    f64: bool,
    m: i64,
    k: i64,
    smax: f64,
    tol: f64,
    /// the reference library's execute time on the same H100, and its relative error
    ref_ms: f64,
    ref_err: f64,
}

#[rustfmt::skip]
const SUITE3: &[Bench3] = &[
    Bench3 { name: "T1", dim: 1, f64: false, m: 10_000_000, k: 10_000_000, smax: 5e5, tol: 1e-5, ref_ms: 1.89, ref_err: 1.1e-1 },
    Bench3 { name: "T2", dim: 1, f64: true, m: 10_000_000, k: 10_000_000, smax: 5e5, tol: 1e-9, ref_ms: 3.24, ref_err: 1.7e-9 },
    Bench3 { name: "T3", dim: 2, f64: false, m: 10_000_000, k: 10_000_000, smax: 512.0, tol: 1e-5, ref_ms: 6.85, ref_err: 1.7e-4 },
    Bench3 { name: "T4", dim: 2, f64: true, m: 10_000_000, k: 10_000_000, smax: 512.0, tol: 1e-9, ref_ms: 27.7, ref_err: 3.9e-9 },
    Bench3 { name: "T5", dim: 3, f64: false, m: 1_000_000, k: 1_000_000, smax: 64.0, tol: 1e-5, ref_ms: 17.8, ref_err: 3.2e-5 },
    Bench3 { name: "T6", dim: 3, f64: true, m: 1_000_000, k: 1_000_000, smax: 64.0, tol: 1e-9, ref_ms: 184.0, ref_err: 3.1e-9 },
    Bench3 { name: "T7", dim: 3, f64: false, m: 10_000_000, k: 10_000_000, smax: 64.0, tol: 1e-5, ref_ms: 151.0, ref_err: 4.4e-5 },
    Bench3 { name: "T8", dim: 3, f64: true, m: 10_000_000, k: 10_000_000, smax: 64.0, tol: 1e-9, ref_ms: 854.0, ref_err: 2.2e-9 },
];

struct Row {
    name: String,
    method: String,
    width: i32,
    plan_ms: f64,
    setpts_ms: f64,
    exec_ms: f64,
    ref_ms: f64,
    err: f64,
    tol: f64,
    pts_per_s: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// `WARPFFT_BENCH_BINS=B2:32x16,B5:16x16x4` overrides the bin edges per case (for tuning).
/// Milliseconds of each of `n` calls of `f`, each followed by a sync of the legacy stream.
fn timed_ms(n: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Vec<f64>, String> {
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f()?;
        check(unsafe { sys::warpfft_stream_sync(0, 0) }, "sync");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(ms)
}

/// Median execute time of a plan whose points are set: 3 warm-ups, then `reps` timed calls.
fn execute_ms(
    plan: sys::warpfft_plan,
    prec: sys::warpfft_precision,
    c: *mut c_void,
    fk: *mut c_void,
    reps: usize,
) -> f64 {
    let exec = || {
        check(
            unsafe { sys::warpfft_execute(plan, prec, c, fk) },
            "execute",
        );
        Ok(())
    };
    timed_ms(3, exec).unwrap();
    median(timed_ms(reps, exec).unwrap())
}

/// Default options with `method`.
fn bench_opts(method: i32) -> sys::warpfft_opts {
    let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
    unsafe { sys::warpfft_opts_default(&mut opts) };
    opts.method = method;
    opts
}

fn bin_override(case: &str) -> Option<[i32; 3]> {
    let spec = std::env::var("WARPFFT_BENCH_BINS").ok()?;
    spec.split(',').find_map(|item| {
        let (name, dims) = item.split_once(':')?;
        if name != case {
            return None;
        }
        let mut bins = [0i32; 3];
        for (slot, v) in bins.iter_mut().zip(dims.split('x')) {
            *slot = v.parse().ok()?;
        }
        Some(bins)
    })
}

fn run(b: &Bench, method: i32, reps: usize) -> Result<Row, String> {
    let mut rng = Rng::new(42);
    let prec = if b.f64 {
        sys::WARPFFT_F64
    } else {
        sys::WARPFFT_F32
    };
    let el = real_bytes(b.f64);
    let pi = std::f64::consts::PI;
    let pts: Vec<Dev> = (0..b.dim)
        .map(|_| {
            Dev::from_reals(
                b.f64,
                &(0..b.m).map(|_| rng.range(-pi, pi)).collect::<Vec<_>>(),
            )
        })
        .collect();
    let ptr = |d: usize| point_ptr(&pts, d);
    let nm: i64 = b.n.iter().product();
    let (n_in, n_out) = if b.ty == 1 { (b.m, nm) } else { (nm, b.m) };
    let input = Dev::from_reals(
        b.f64,
        &(0..2 * n_in * b.ntransf)
            .map(|_| rng.range(-1.0, 1.0))
            .collect::<Vec<_>>(),
    );
    let output = Dev::new((2 * n_out * b.ntransf) as usize * el);

    let mut opts = bench_opts(method);
    if let Some(bins) = bin_override(b.name) {
        opts.bin_size = bins;
    }
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    let t0 = Instant::now();
    let st = unsafe {
        sys::warpfft_plan_create(
            b.ty,
            b.dim,
            b.n.as_ptr(),
            1,
            b.ntransf,
            b.tol,
            prec,
            &opts,
            &mut plan,
        )
    };
    if st != sys::WARPFFT_SUCCESS {
        return Err(last_error());
    }
    let plan_ms = t0.elapsed().as_secs_f64() * 1e3;
    let _guard = PlanGuard(plan);
    {
        let setpts = timed_ms(5, || {
            check(
                unsafe { sys::warpfft_setpts(plan, prec, b.m, ptr(0), ptr(1), ptr(2)) },
                "setpts",
            );
            Ok(())
        })?;
        let (cp, fp) = if b.ty == 1 {
            (input.ptr, output.ptr)
        } else {
            (output.ptr, input.ptr)
        };
        let exec_ms = execute_ms(plan, prec, cp, fp, reps);
        // error on 1024 stratified outputs of transform 0
        let sample = stratified_sample(&mut rng, n_out, 1024);
        let exact = Exact {
            ty: b.ty,
            dim: b.dim,
            n: b.n,
            modeord: 0,
            f64: b.f64,
            m: b.m,
            pts: &pts,
        }
        .sample(input.ptr, &sample);
        let out = output.reals(b.f64, 2 * n_out as usize);
        let approx = gather(&out, 0, &sample);
        let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
        check(
            unsafe { sys::warpfft_plan_get_info(plan, &mut info) },
            "get_info",
        );
        Ok(Row {
            name: b.name.to_string(),
            method: ["auto", "GM", "SM"][info.method as usize].to_string(),
            width: info.width,
            plan_ms,
            setpts_ms: median(setpts),
            exec_ms,
            ref_ms: b.ref_ms,
            err: rel_l2(&approx, &exact),
            tol: b.tol,
            pts_per_s: (b.m * b.ntransf) as f64 / (exec_ms * 1e-3),
        })
    }
}

/// A type-3 case: plan, setpts3 (median of 5), execute (median of `reps` after 3 warm-ups),
/// error on 1024 stratified targets of transform 0 against warpfft_direct_sample3.
fn run3(b: &Bench3, method: i32, reps: usize) -> Result<Row, String> {
    let mut rng = Rng::new(43);
    let prec = if b.f64 {
        sys::WARPFFT_F64
    } else {
        sys::WARPFFT_F32
    };
    let el = real_bytes(b.f64);
    let pi = std::f64::consts::PI;
    let gen = |rng: &mut Rng, n: i64, lo: f64, hi: f64| {
        Dev::from_reals(
            b.f64,
            &(0..n).map(|_| rng.range(lo, hi)).collect::<Vec<_>>(),
        )
    };
    let x: Vec<Dev> = (0..b.dim).map(|_| gen(&mut rng, b.m, -pi, pi)).collect();
    let s: Vec<Dev> = (0..b.dim)
        .map(|_| gen(&mut rng, b.k, -b.smax, b.smax))
        .collect();
    let input = gen(&mut rng, 2 * b.m, -1.0, 1.0);
    let output = Dev::new(2 * b.k as usize * el);
    let xp = |d: usize| point_ptr(&x, d);
    let sp = |d: usize| point_ptr(&s, d);

    let opts = bench_opts(method);
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    let t0 = Instant::now();
    let st = unsafe {
        sys::warpfft_plan_create(
            3,
            b.dim,
            std::ptr::null(),
            1,
            1,
            b.tol,
            prec,
            &opts,
            &mut plan,
        )
    };
    if st != sys::WARPFFT_SUCCESS {
        return Err(last_error());
    }
    let plan_ms = t0.elapsed().as_secs_f64() * 1e3;
    let _guard = PlanGuard(plan);
    let setpts = timed_ms(5, || {
        let st = unsafe {
            sys::warpfft_setpts3(
                plan,
                prec,
                b.m,
                xp(0),
                xp(1),
                xp(2),
                b.k,
                sp(0),
                sp(1),
                sp(2),
            )
        };
        if st != sys::WARPFFT_SUCCESS {
            return Err(last_error());
        }
        Ok(())
    })?;
    let exec_ms = execute_ms(plan, prec, input.ptr, output.ptr, reps);
    let sample = stratified_sample(&mut rng, b.k, 1024);
    let mut exact = vec![0.0f64; 2 * sample.len()];
    check(
        unsafe {
            sys::warpfft_direct_sample3(
                b.dim,
                1,
                prec,
                0,
                b.m,
                xp(0),
                xp(1),
                xp(2),
                input.ptr,
                b.k,
                sp(0),
                sp(1),
                sp(2),
                sample.len() as i64,
                sample.as_ptr(),
                exact.as_mut_ptr(),
            )
        },
        "direct_sample3",
    );
    let out = output.reals(b.f64, 2 * b.k as usize);
    let approx = gather(&out, 0, &sample);
    let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_plan_get_info(plan, &mut info) },
        "get_info",
    );
    println!(
        "{:<4} type 3: grid {:?} inner {:?} w {}/{} internal {} | reference: {:.2} ms, rel err {:.1e}",
        b.name,
        &info.n_fine[..b.dim as usize],
        &info.inner_fine[..b.dim as usize],
        info.width,
        info.inner_width,
        if info.inner_precision == sys::WARPFFT_F64 as i32 { "f64" } else { "f32" },
        b.ref_ms,
        b.ref_err
    );
    Ok(Row {
        name: b.name.to_string(),
        method: ["auto", "GM", "SM"][info.method as usize].to_string(),
        width: info.width,
        plan_ms,
        setpts_ms: median(setpts),
        exec_ms,
        ref_ms: b.ref_ms,
        err: rel_l2(&approx, &exact),
        tol: b.tol,
        pts_per_s: (b.m + b.k) as f64 / (exec_ms * 1e-3),
    })
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !gpu_or_skip("benches/suite_b") {
        return;
    }
    let reps: usize = std::env::var("WARPFFT_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let methods: &[i32] = if std::env::var("WARPFFT_BENCH_METHODS").as_deref() == Ok("all") {
        &[0, 1, 2]
    } else {
        &[0]
    };
    let mut rows = Vec::new();
    println!(
        "{:<4} {:<6} {:>2} {:>9} {:>10} {:>10} {:>8} {:>6} {:>9} {:>7} {:>10}",
        "case",
        "method",
        "w",
        "plan_ms",
        "setpts_ms",
        "exec_ms",
        "ref_ms",
        "ratio",
        "rel_err",
        "tol",
        "Mpts/s"
    );
    let jobs: Vec<(&'static str, bool, usize)> = SUITE
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name, false, i))
        .chain(SUITE3.iter().enumerate().map(|(i, b)| (b.name, true, i)))
        .filter(|&(name, t3, _)| {
            args.is_empty() || args.iter().any(|a| a == name || (t3 && a == "B3x"))
        })
        .collect();
    for (name, t3, i) in jobs {
        for &m in methods {
            let r = if t3 {
                run3(&SUITE3[i], m, reps)
            } else {
                run(&SUITE[i], m, reps)
            };
            match r {
                Ok(mut r) => {
                    if m != 0 {
                        r.method = format!("{}!", r.method);
                    }
                    println!(
                        "{:<4} {:<6} {:>2} {:>9.1} {:>10.3} {:>10.3} {:>8.2} {:>6.2} {:>9.2e} {:>7.0e} {:>10.0}{}",
                        r.name, r.method, r.width, r.plan_ms, r.setpts_ms, r.exec_ms, r.ref_ms, r.exec_ms / r.ref_ms, r.err, r.tol, r.pts_per_s / 1e6,
                        if r.err > r.tol { "  ERR>TOL" } else { "" }
                    );
                    rows.push(r);
                }
                Err(e) => println!("{name:<4} method {m}: failed: {e}"),
            }
        }
    }
    let json: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"case\":\"{}\",\"method\":\"{}\",\"width\":{},\"plan_ms\":{:.3},\"setpts_ms\":{:.4},\"exec_ms\":{:.4},\"ref_ms\":{},\"rel_err\":{:.3e},\"tol\":{:e},\"points_per_s\":{:.4e}}}",
                r.name, r.method, r.width, r.plan_ms, r.setpts_ms, r.exec_ms, r.ref_ms, r.err, r.tol, r.pts_per_s
            )
        })
        .collect();
    let path = std::env::var("WARPFFT_BENCH_JSON").unwrap_or_else(|_| "target/suite_b.json".into());
    let _ = std::fs::write(&path, format!("[\n{}\n]\n", json.join(",\n")));
    println!("JSON written to {path}");
}
