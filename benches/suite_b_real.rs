//! Real-valued data (docs/real.md) against complex data on suite B's cases B1-B9 (types 1
//! and 2; benches/suite_b/cases.rs): per case a complex plan and a real plan ([`RealPlan`]) of
//! the same shape, tolerance, points and batch, each timed over its execute only (set-points
//! excluded; median of repeated runs after a warm-up, host clock around the execute and a
//! stream sync, device buffers), printed with their ratio and each plan's relative l2 error on
//! 32 sampled outputs of transform 0 against exact sums computed on the host in f64 (threads).
//! The target of issue 43 is `real / complex <= 0.6`: the `target` column says whether a case
//! meets it.
//!
//! Same problem: the complex type 1 gets the real strengths with zero imaginary parts; the
//! complex type 2 gets full complex modes (its time does not depend on their values), the real
//! type 2 the half modes. Points uniform in [-π, π)^d, as suite B's.
//!
//! `cargo bench --bench suite_b_real [-- B2 B3]` runs all or the named cases;
//! `WARPFFT_BENCH_REPS=N` sets the timed repetitions (default 20); JSON to $WARPFFT_BENCH_JSON
//! (default target/suite_b_real.json), rewritten after every row;
//! `WARPFFT_BENCH_REAL_BINS=B4:16x16x4,B7:8x8x8` gives the real plans of those cases their
//! bins (tuning; the complex plans keep theirs; the bins used go to stderr). Skips visibly
//! without a GPU.

#[path = "suite_b/cases.rs"]
mod cases;
#[path = "../tests/common/mod.rs"]
mod common;
// cases.rs names its point distributions from here
#[path = "suite_b/model.rs"]
mod model;

use std::time::Instant;

use cases::{Bench, SUITE};
use common::{gpu_or_skip, Rng};
use warpfft::{Complex, DeviceBuffer, Plan, Real, RealPlan, Result, TransformType};

const SAMPLES: usize = 32;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median ms of `reps` calls of `f` (each waited for) after 3 warm-ups.
fn time_ms(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..3 {
        f()?;
    }
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(ms))
}

/// The wave vector of a mode-array index: dimension 1 fastest; `half`: dimension 1 is
/// `k1 = i1` (the real plans' half), else CMCL `i1 - N1/2`; dimensions 2 and 3 CMCL.
fn k_of(mut i: usize, n: &[usize], half: bool) -> [f64; 3] {
    let mut k = [0.0; 3];
    for d in 0..n.len() {
        let nd = if d == 0 && half { n[0] / 2 + 1 } else { n[d] };
        let id = i % nd;
        i /= nd;
        k[d] = if d == 0 && half {
            id as f64
        } else {
            id as f64 - (n[d] / 2) as f64
        };
    }
    k
}

/// `f(s)` for every sample `s`, on all host threads.
fn par_map(samples: &[usize], f: impl Fn(usize) -> Complex<f64> + Sync) -> Vec<Complex<f64>> {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let chunk = ((samples.len() + threads - 1) / threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = samples
            .chunks(chunk)
            .map(|part| {
                let f = &f;
                s.spawn(move || part.iter().map(|&i| f(i)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("exact-sum thread"))
            .collect()
    })
}

fn rel_l2(approx: &[Complex<f64>], exact: &[Complex<f64>]) -> f64 {
    let num: f64 = approx
        .iter()
        .zip(exact)
        .map(|(a, e)| (a - e).norm_sqr())
        .sum();
    let den: f64 = exact.iter().map(|e| e.norm_sqr()).sum();
    (num / den).sqrt()
}

fn to64<T: Real>(z: Complex<T>) -> Complex<f64> {
    Complex::new(z.re.to_f64(), z.im.to_f64())
}

/// The case's points on the host, in f64 as the plans see them, and its shape and sign.
struct Problem {
    x64: Vec<Vec<f64>>,
    n: Vec<usize>,
    m: usize,
    sign: f64,
}

impl Problem {
    fn phase(&self, k: &[f64; 3], j: usize) -> f64 {
        self.sign * self.x64.iter().zip(k).map(|(x, k)| k * x[j]).sum::<f64>()
    }

    /// Type 1, transform 0: `Σ_j c_j e^{sign i k·x_j}` at the sampled mode indices.
    fn exact1(&self, c: &[f64], sample: &[usize], half: bool) -> Vec<Complex<f64>> {
        par_map(sample, |i| {
            let k = k_of(i, &self.n, half);
            (0..self.m)
                .map(|j| Complex::from_polar(c[j], self.phase(&k, j)))
                .sum()
        })
    }

    /// Type 2, transform 0, at the sampled points: the complex sum over the full modes, or
    /// (half) `Re Σ a_k1 f_k e^{..}` with `a_0 = 1`, `a_k1 = 2` (as a complex of zero
    /// imaginary part).
    fn exact2(&self, fk: &[Complex<f64>], sample: &[usize], half: bool) -> Vec<Complex<f64>> {
        par_map(sample, |j| {
            let s: Complex<f64> = fk
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let k = k_of(i, &self.n, half);
                    let a = if half && k[0] > 0.0 { 2.0 } else { 1.0 };
                    f * Complex::from_polar(a, self.phase(&k, j))
                })
                .sum();
            if half {
                Complex::new(s.re, 0.0)
            } else {
                s
            }
        })
    }
}

/// One case's row.
struct RowOut {
    name: &'static str,
    complex_ms: f64,
    real_ms: f64,
    err_complex: f64,
    err_real: f64,
    tol: f64,
}

/// The bins WARPFFT_BENCH_REAL_BINS gives case `case` (`B4:16x16x4,B7:8x8x8`), if any.
fn real_bins(case: &str) -> Option<[usize; 3]> {
    let spec = std::env::var("WARPFFT_BENCH_REAL_BINS").ok()?;
    spec.split(',').find_map(|item| {
        let (name, dims) = item.split_once(':')?;
        if name != case {
            return None;
        }
        let mut bins = [0usize; 3];
        for (slot, v) in bins.iter_mut().zip(dims.split('x')) {
            *slot = v.parse().ok()?;
        }
        Some(bins)
    })
}

fn sample(rng: &mut Rng, n: usize) -> Vec<usize> {
    (0..SAMPLES.min(n))
        .map(|_| rng.below(n as u64) as usize)
        .collect()
}

fn run<T: Real>(b: &Bench, reps: usize) -> Result<RowOut> {
    let mut rng = Rng::new(42);
    let dim = b.dim as usize;
    let n: Vec<usize> = b.n[..dim].iter().map(|&v| v as usize).collect();
    let (m, nt) = (b.m as usize, b.ntransf as usize);
    let ty = if b.ty == 1 {
        TransformType::Type1
    } else {
        TransformType::Type2
    };
    let x: Vec<Vec<T>> = rng.coords(dim, m, std::f64::consts::PI);
    let builder = Plan::<T>::builder(ty, &n)
        .tol(b.tol)
        .ntransf(nt)
        .points_hint(m);
    let dev_points = |x: &[Vec<T>]| -> Result<Vec<DeviceBuffer<T>>> {
        x.iter().map(|v| DeviceBuffer::from_slice(v)).collect()
    };
    let mut cplx: Plan<T> = builder.build()?;
    cplx.set_device_points(dev_points(&x)?)?;
    // WARPFFT_BENCH_REAL_BINS=B4:16x16x4,...: the real plan's bins (tuning; the complex
    // plan keeps its defaults)
    let real_builder = match real_bins(b.name) {
        Some(bins) => builder.clone().bin_size(bins),
        None => builder.clone(),
    };
    let mut real: RealPlan<T> = real_builder.build_real()?;
    let bins = real.info()?.bin_size;
    eprintln!("{}: real plan bins {:?}", b.name, &bins[..dim]);
    real.set_device_points(dev_points(&x)?)?;
    let p = Problem {
        x64: x
            .iter()
            .map(|v| v.iter().map(|a| a.to_f64()).collect())
            .collect(),
        n: n.clone(),
        m,
        sign: cplx.sign() as f64,
    };
    let (full_len, half_len) = (cplx.modes_per_transform(), real.modes_per_transform());
    if b.ty == 1 {
        let c: Vec<T> = (0..nt * m).map(|_| T::from_f64(rng.sym(1.0))).collect();
        let cz: Vec<Complex<T>> = c.iter().map(|&v| Complex::new(v, T::default())).collect();
        let (c_dev, cz_dev) = (
            DeviceBuffer::from_slice(&c)?,
            DeviceBuffer::from_slice(&cz)?,
        );
        let mut full = DeviceBuffer::<Complex<T>>::zeros(cplx.fk_len())?;
        let mut half = DeviceBuffer::<Complex<T>>::zeros(real.fk_len())?;
        let complex_ms = time_ms(reps, || {
            cplx.execute_device(&cz_dev, &mut full)?;
            cplx.synchronize()
        })?;
        let real_ms = time_ms(reps, || {
            real.execute_device(&c_dev, &mut half)?;
            real.synchronize()
        })?;
        let c64: Vec<f64> = c[..m].iter().map(|v| v.to_f64()).collect();
        let (sf, sh) = (sample(&mut rng, full_len), sample(&mut rng, half_len));
        let (full, half) = (full.to_vec()?, half.to_vec()?);
        let err = |out: &[Complex<T>], s: &[usize], h: bool| {
            let approx: Vec<Complex<f64>> = s.iter().map(|&i| to64(out[i])).collect();
            rel_l2(&approx, &p.exact1(&c64, s, h))
        };
        Ok(RowOut {
            name: b.name,
            complex_ms,
            real_ms,
            err_complex: err(&full, &sf, false),
            err_real: err(&half, &sh, true),
            tol: b.tol,
        })
    } else {
        let fz: Vec<Complex<T>> = rng.complex(cplx.fk_len());
        let fh: Vec<Complex<T>> = rng.complex(real.fk_len());
        let (fz_dev, fh_dev) = (
            DeviceBuffer::from_slice(&fz)?,
            DeviceBuffer::from_slice(&fh)?,
        );
        let mut cz = DeviceBuffer::<Complex<T>>::zeros(nt * m)?;
        let mut c = DeviceBuffer::<T>::zeros(nt * m)?;
        let complex_ms = time_ms(reps, || {
            cplx.execute_device(&fz_dev, &mut cz)?;
            cplx.synchronize()
        })?;
        let real_ms = time_ms(reps, || {
            real.execute_device(&fh_dev, &mut c)?;
            real.synchronize()
        })?;
        let s = sample(&mut rng, m);
        let (cz, c) = (cz.to_vec()?, c.to_vec()?);
        let f64z: Vec<Complex<f64>> = fz[..full_len].iter().map(|&z| to64(z)).collect();
        let f64h: Vec<Complex<f64>> = fh[..half_len].iter().map(|&z| to64(z)).collect();
        let az: Vec<Complex<f64>> = s.iter().map(|&j| to64(cz[j])).collect();
        let ar: Vec<Complex<f64>> = s
            .iter()
            .map(|&j| Complex::new(c[j].to_f64(), 0.0))
            .collect();
        Ok(RowOut {
            name: b.name,
            complex_ms,
            real_ms,
            err_complex: rel_l2(&az, &p.exact2(&f64z, &s, false)),
            err_real: rel_l2(&ar, &p.exact2(&f64h, &s, true)),
            tol: b.tol,
        })
    }
}

fn json(r: &RowOut) -> String {
    let num = |v: f64| {
        if v.is_finite() {
            format!("{v:.6e}")
        } else {
            "null".into()
        }
    };
    format!(
        "  {{\"case\": \"{}\", \"complex_ms\": {}, \"real_ms\": {}, \"ratio\": {}, \
         \"err_complex\": {}, \"err_real\": {}, \"tol\": {}}}",
        r.name,
        num(r.complex_ms),
        num(r.real_ms),
        num(r.real_ms / r.complex_ms),
        num(r.err_complex),
        num(r.err_real),
        num(r.tol)
    )
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !gpu_or_skip("benches/suite_b_real") {
        return;
    }
    let reps: usize = std::env::var("WARPFFT_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let path =
        std::env::var("WARPFFT_BENCH_JSON").unwrap_or_else(|_| "target/suite_b_real.json".into());
    let cases = SUITE.iter().filter(|b| {
        let b_1_to_9 = b.name.len() == 2 && b.name.starts_with('B');
        b_1_to_9 && (args.is_empty() || args.iter().any(|a| a == b.name))
    });
    println!(
        "real vs complex execute (set-points excluded; median of {reps}); errors on {SAMPLES} \
         outputs of transform 0 against exact f64 sums; target real/complex <= 0.6"
    );
    println!(
        "{:<5} {:<4} {:<4} {:>10} {:>10} {:>7} {:>11} {:>11} {:>8} target",
        "case", "type", "prec", "complex ms", "real ms", "ratio", "err complex", "err real", "tol"
    );
    let mut rows = Vec::new();
    for b in cases {
        let r = if b.f64 {
            run::<f64>(b, reps)
        } else {
            run::<f32>(b, reps)
        };
        match r {
            Ok(r) => {
                let ratio = r.real_ms / r.complex_ms;
                println!(
                    "{:<5} {:<4} {:<4} {:>10.3} {:>10.3} {:>7.2} {:>11.2e} {:>11.2e} {:>8.0e} {}",
                    r.name,
                    b.ty,
                    if b.f64 { "f64" } else { "f32" },
                    r.complex_ms,
                    r.real_ms,
                    ratio,
                    r.err_complex,
                    r.err_real,
                    r.tol,
                    if ratio <= 0.6 { "met" } else { "NOT met" }
                );
                rows.push(r);
                let body: Vec<String> = rows.iter().map(json).collect();
                let _ = std::fs::write(&path, format!("[\n{}\n]\n", body.join(",\n")));
            }
            Err(e) => println!("{:<5} failed: {e}", b.name),
        }
    }
    println!("JSON written to {path}");
}
