//! Benchmark suite B of DESIGN.md: per case the plan, set-points and execute times (median of
//! repeated runs after a warm-up, host clock around work + stream sync), throughput and the
//! measured relative error on 1024 stratified outputs against the exact sum (double, on the GPU),
//! printed beside the reference times; JSON to $WARPFFT_BENCH_JSON (default
//! target/suite_b.json).
//!
//! `cargo bench --bench suite_b [-- B2 B3]` runs all or the named cases; `B3x` names all the
//! type-3 cases (T1..T8, issue 9: sources in [-π, π)^d, targets in [-S, S]^d, M = K), which
//! also run by their own names (`-- T1 T5`). The non-uniform rows (issue 12;
//! docs/performance.md) are R2t1 R2t2 R3t1 R3t2 (radial) and C2t1 C2t2 C3t1 C3t2 (clustered); a prefix
//! names a group of them (`-- R2` = R2t1 R2t2, `-- C` = all clustered, `-- NU` = all eight).
//!
//! Per case: `plan_ms` is the first plan_create of the case's shape in the process, `plan2_ms`
//! a second one of the same shape after the first was destroyed (what a cache of plan state
//! saves); then a roofline line: the bytes and flops of one execute in the model of
//! benches/suite_b/model.rs, the floor they give at the H100's bandwidth and peak (printed;
//! `WARPFFT_BENCH_BW_GBS`, `WARPFFT_BENCH_GFLOPS` override), execute / floor, and the measured
//! cuFFT time of the case's fine grid alone (`warpfft::bench_fft`) and its share of execute.
//!
//! `WARPFFT_BENCH_METHODS=all` also times each case with the GM and SM methods forced, and
//! the cases that spread (types 1 and 3) with OD (output-driven) forced: rows `GM!`, `SM!`,
//! `OD!`. `WARPFFT_BENCH_DETERMINISTIC=1` also times each case with `opts.deterministic = 1`
//! (bitwise-reproducible; OD spreading and the stable sort for types 1 and 3): rows marked `*`,
//! `"deterministic": true` in the JSON. With either, a summary table at the end lists every
//! case's execute (and setpts) times per variant and the deterministic mode's cost over AUTO.
//! `WARPFFT_BENCH_REPS=N` sets the timed repetitions (default 20).
//! `WARPFFT_BENCH_BINS=B2:32x16,...` overrides a case's bin edges (tuning). The JSON is
//! rewritten after every row, so a run cut short keeps the rows it finished.

#[path = "suite_b/cases.rs"]
mod cases;
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "suite_b/model.rs"]
mod model;
#[path = "suite_b/type3.rs"]
mod type3;
use cases::{Bench, SUITE, SUITE3};
use common::*;
use model::{Dist, Roof, Row};
use std::ffi::c_void;
use std::time::Instant;
use warpfft::sys;

/// Bandwidth (GB/s) and peak (GFLOP/s) the floors use: the H100's, or the environment's.
fn machine(f64: bool) -> (f64, f64) {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    let peak = if f64 {
        model::H100_GFLOPS_F64
    } else {
        model::H100_GFLOPS_F32
    };
    (
        env("WARPFFT_BENCH_BW_GBS").unwrap_or(model::H100_BW_GBS),
        env("WARPFFT_BENCH_GFLOPS").unwrap_or(peak),
    )
}

/// The measured cuFFT time of `batch` grids of `n_fine` (NaN, with a note, if it failed).
fn fft_ms(dim: i32, n_fine: [i64; 3], f64: bool, batch: i64, reps: usize) -> f64 {
    let n = n_fine.map(|v| v.max(1) as usize);
    let prec = if f64 {
        warpfft::Precision::F64
    } else {
        warpfft::Precision::F32
    };
    match warpfft::bench_fft(dim as usize, n, prec, batch as usize, 0, reps) {
        Ok(ms) => ms,
        Err(e) => {
            println!("     bench_fft {n_fine:?} failed: {e}");
            f64::NAN
        }
    }
}

/// Creates a plan of the case's shape, destroys it, creates a second one: (plan, first ms,
/// second ms).
fn plan_twice(
    create: impl Fn(&mut sys::warpfft_plan) -> sys::warpfft_status,
) -> Result<(sys::warpfft_plan, f64, f64), String> {
    let mut ms = [0.0; 2];
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    for (i, slot) in ms.iter_mut().enumerate() {
        plan = std::ptr::null_mut();
        let t0 = Instant::now();
        if create(&mut plan) != sys::WARPFFT_SUCCESS {
            return Err(last_error());
        }
        *slot = t0.elapsed().as_secs_f64() * 1e3;
        if i == 0 {
            check(unsafe { sys::warpfft_plan_destroy(plan) }, "plan_destroy");
        }
    }
    Ok((plan, ms[0], ms[1]))
}

/// The case's points: `dim` coordinate arrays of `b.m` points (docs/performance.md: suite B's point sets).
fn points(b: &Bench, rng: &mut Rng) -> Vec<Vec<f64>> {
    let pi = std::f64::consts::PI;
    let dim = b.dim as usize;
    let m = b.m as usize;
    match b.dist {
        Dist::Uniform => (0..dim)
            .map(|_| (0..m).map(|_| rng.range(-pi, pi)).collect())
            .collect(),
        Dist::Radial { spokes, samples } => {
            assert_eq!(
                spokes * samples,
                m,
                "{}: M must be spokes × samples",
                b.name
            );
            model::radial(dim, spokes, samples)
        }
        Dist::Clustered {
            clusters,
            frac,
            sigma_cells,
        } => {
            model::clustered(dim, m, b.n, clusters, frac, sigma_cells, &mut || {
                rng.uniform()
            })
            .0
        }
        Dist::Normal { std } => model::normal(dim, m, std, &mut || rng.uniform()),
        Dist::Spiral {
            arms,
            samples,
            turns,
            power,
        } => {
            assert_eq!(arms * samples, m, "{}: M must be arms × samples", b.name);
            model::spiral(arms, samples, turns, power)
        }
    }
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

/// A case's plan and times: the plan (destroyed on drop) and its info after setpts, the first
/// and second plan_create, the setpts times and the median execute, in ms.
struct Timed {
    _plan: PlanGuard,
    info: sys::warpfft_plan_info,
    plan_ms: f64,
    plan2_ms: f64,
    setpts: Vec<f64>,
    exec_ms: f64,
}

/// Creates the case's plan twice (`plan_twice`), times 5 `setpts` calls and `reps` executes
/// from `c` to `fk` (`execute_ms`).
fn measure(
    create: impl Fn(&mut sys::warpfft_plan) -> sys::warpfft_status,
    mut setpts: impl FnMut(sys::warpfft_plan) -> Result<(), String>,
    prec: sys::warpfft_precision,
    c: *mut c_void,
    fk: *mut c_void,
    reps: usize,
) -> Result<Timed, String> {
    let (plan, plan_ms, plan2_ms) = plan_twice(create)?;
    let guard = PlanGuard(plan);
    let setpts = timed_ms(5, || setpts(plan))?;
    let exec_ms = execute_ms(plan, prec, c, fk, reps);
    let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_plan_get_info(plan, &mut info) },
        "get_info",
    );
    Ok(Timed {
        _plan: guard,
        info,
        plan_ms,
        plan2_ms,
        setpts,
        exec_ms,
    })
}

impl Timed {
    /// The case's row: `points` non-uniform points per execute give the throughput; `err` is
    /// the error on the sample. Destroys the plan.
    #[allow(clippy::too_many_arguments)]
    fn row(
        self,
        name: &str,
        dist: &'static str,
        ref_ms: f64,
        tol: f64,
        points: i64,
        err: f64,
        roof: Roof,
    ) -> Row {
        Row {
            name: name.to_string(),
            dist,
            method: ["auto", "GM", "SM", "OD"][self.info.method as usize].to_string(),
            deterministic: self.info.deterministic != 0,
            width: self.info.width,
            sigma: self.info.upsampfac,
            predicted_ms: self.info.predicted_ms,
            plan_ms: self.plan_ms,
            plan2_ms: self.plan2_ms,
            setpts_ms: median(self.setpts),
            exec_ms: self.exec_ms,
            ref_ms,
            err,
            tol,
            pts_per_s: points as f64 / (self.exec_ms * 1e-3),
            roof,
        }
    }
}

/// How a case is timed: the method (0 = AUTO, or forced) and opts.deterministic.
#[derive(Clone, Copy)]
struct Variant {
    method: i32,
    deterministic: bool,
}

/// The variants of a case of type `ty`: AUTO; with `WARPFFT_BENCH_METHODS=all` GM, SM and (when
/// the case spreads: types 1 and 3) OD forced; with `WARPFFT_BENCH_DETERMINISTIC=1`
/// deterministic AUTO.
fn variants(ty: i32) -> Vec<Variant> {
    let all = std::env::var("WARPFFT_BENCH_METHODS").as_deref() == Ok("all");
    let det = std::env::var("WARPFFT_BENCH_DETERMINISTIC").as_deref() == Ok("1");
    let mut v = vec![Variant {
        method: 0,
        deterministic: false,
    }];
    if all {
        let forced: &[i32] = if ty == 2 { &[1, 2] } else { &[1, 2, 3] };
        v.extend(forced.iter().map(|&method| Variant {
            method,
            deterministic: false,
        }));
    }
    if det {
        v.push(Variant {
            method: 0,
            deterministic: true,
        });
    }
    v
}

/// Default options with the variant's method and deterministic flag, and the case's points as
/// the hint the choice of upsampling factor and width weighs (what a caller that knows M
/// passes); `WARPFFT_BENCH_UPSAMPFAC` forces an upsampling factor (e.g. 2 for the plans before
/// it was chosen per plan).
fn bench_opts(v: Variant, points: i64) -> sys::warpfft_opts {
    let mut opts: sys::warpfft_opts = unsafe { std::mem::zeroed() };
    unsafe { sys::warpfft_opts_default(&mut opts) };
    opts.method = v.method;
    opts.deterministic = i32::from(v.deterministic);
    opts.points_hint = points;
    if let Some(s) = std::env::var("WARPFFT_BENCH_UPSAMPFAC")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        opts.upsampfac = s;
    }
    opts
}

/// The reference's best execute time per case from `peer_bench.sh`'s table (`| B1 | args |
/// method | setpts | execute |`) in the file `WARPFFT_BENCH_PEER`, when set: run in the same
/// call on the same card, it replaces the cases' stale `ref_ms` notes; unset, there is no
/// reference column (NaN), never an old number.
fn peer_ms(case: &str) -> f64 {
    let Some(text) = std::env::var("WARPFFT_BENCH_PEER")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
    else {
        return f64::NAN;
    };
    text.lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            (cols.len() >= 6 && cols[1] == case).then(|| cols[5].parse().ok())?
        })
        .next()
        .unwrap_or(f64::NAN)
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

fn run(b: &Bench, v: Variant, reps: usize) -> Result<Row, String> {
    let mut rng = Rng::new(42);
    let prec = precision(b.f64);
    let el = real_bytes(b.f64);
    let pts: Vec<Dev> = points(b, &mut rng)
        .iter()
        .map(|v| Dev::from_reals(b.f64, v))
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

    let mut opts = bench_opts(v, b.m);
    if let Some(bins) = bin_override(b.name) {
        opts.bin_size = bins;
    }
    let create = |plan: &mut sys::warpfft_plan| unsafe {
        sys::warpfft_plan_create(
            b.ty,
            b.dim,
            b.n.as_ptr(),
            1,
            b.ntransf,
            b.tol,
            prec,
            &opts,
            plan,
        )
    };
    let setpts = |plan| {
        check(
            unsafe { sys::warpfft_setpts(plan, prec, b.m, ptr(0), ptr(1), ptr(2)) },
            "setpts",
        );
        Ok(())
    };
    let (cp, fp) = if b.ty == 1 {
        (input.ptr, output.ptr)
    } else {
        (output.ptr, input.ptr)
    };
    let timed = measure(create, setpts, prec, cp, fp, reps)?;
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
    let info = &timed.info;
    let dim = b.dim as usize;
    let (bw_gbs, gflops) = machine(b.f64);
    let roof = Roof {
        model: model::roofline(
            b.ty,
            dim,
            el as f64,
            &b.n[..dim],
            &info.n_fine[..dim],
            info.width as f64,
            b.m as f64,
            b.ntransf as f64,
        ),
        bw_gbs,
        gflops,
        n_fine: info.n_fine,
        fft_ms: fft_ms(b.dim, info.n_fine, b.f64, b.ntransf, reps),
    };
    let (err, points) = (rel_l2(&approx, &exact), b.m * b.ntransf);
    Ok(timed.row(
        b.name,
        b.dist.label(),
        peer_ms(b.name),
        b.tol,
        points,
        err,
        roof,
    ))
}

/// Per case: execute ms of AUTO, of each forced method and of deterministic AUTO, the latter's
/// setpts ms, and its cost over AUTO (execute and setpts ratios): the table docs/spreaders.md
/// leaves for the H100's numbers.
fn summary(rows: &[Row]) -> Vec<String> {
    let mut out = vec![format!(
        "{:<5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
        "case", "auto", "GM!", "SM!", "OD!", "det", "det/auto", "setpts", "det setpts"
    )];
    let mut names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    for name in names {
        let of = |label: &str, det: bool| {
            rows.iter().find(|r| {
                r.name == name
                    && r.deterministic == det
                    && (r.method == label || (label == "auto" && !det && !r.method.ends_with('!')))
            })
        };
        let auto = of("auto", false);
        let det = rows.iter().find(|r| r.name == name && r.deterministic);
        let ms = |r: Option<&Row>| r.map_or(f64::NAN, |r| r.exec_ms);
        let setpts = |r: Option<&Row>| r.map_or(f64::NAN, |r| r.setpts_ms);
        out.push(format!(
            "{:<5} {} {} {} {} {} {} {} {}",
            name,
            model::num(ms(auto), 10, 3),
            model::num(ms(of("GM!", false)), 10, 3),
            model::num(ms(of("SM!", false)), 10, 3),
            model::num(ms(of("OD!", false)), 10, 3),
            model::num(ms(det), 10, 3),
            model::num(ms(det) / ms(auto), 11, 2),
            model::num(setpts(auto), 11, 3),
            model::num(setpts(det), 11, 3),
        ));
    }
    out
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
    let mut rows = Vec::new();
    let path = std::env::var("WARPFFT_BENCH_JSON").unwrap_or_else(|_| "target/suite_b.json".into());
    let (bw, f32_peak) = machine(false);
    println!(
        "roofline floors: {bw:.0} GB/s, {f32_peak:.0} GFLOP/s f32 / {:.0} f64 (override: \
         WARPFFT_BENCH_BW_GBS, WARPFFT_BENCH_GFLOPS); model: benches/suite_b/model.rs",
        machine(true).1
    );
    println!("{}", model::header());
    let jobs: Vec<(&'static str, bool, usize)> = SUITE
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name, false, i))
        .chain(SUITE3.iter().enumerate().map(|(i, b)| (b.name, true, i)))
        .filter(|&(name, t3, i)| {
            let group = if t3 {
                model::Group::Type3
            } else if SUITE[i].dist == Dist::Uniform {
                model::Group::Uniform
            } else {
                model::Group::NonUniform
            };
            model::selected(&args, name, group)
        })
        .collect();
    for (name, t3, i) in jobs {
        for v in variants(if t3 { 3 } else { SUITE[i].ty }) {
            let r = if t3 {
                type3::run3(&SUITE3[i], v, reps)
            } else {
                run(&SUITE[i], v, reps)
            };
            match r {
                Ok(mut r) => {
                    if v.deterministic {
                        r.method = format!("{}*", r.method);
                    } else if v.method != 0 {
                        r.method = format!("{}!", r.method);
                    }
                    for line in model::row_lines(&r) {
                        println!("{line}");
                    }
                    rows.push(r);
                    // after every row: a run cut short (a time limit) keeps what it measured
                    write_json(&path, &rows);
                }
                Err(e) => println!(
                    "{name:<5} method {} deterministic {}: failed: {e}",
                    v.method, v.deterministic
                ),
            }
        }
    }
    if variants(1).len() > 1 {
        for line in summary(&rows) {
            println!("{line}");
        }
    }
    write_json(&path, &rows);
    println!("JSON written to {path}");
}

/// The rows so far as a JSON array (rewritten whole: a few dozen rows).
fn write_json(path: &str, rows: &[Row]) {
    let json: Vec<String> = rows.iter().map(model::json_row).collect();
    let _ = std::fs::write(path, format!("[\n{}\n]\n", json.join(",\n")));
}
