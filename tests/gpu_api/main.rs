//! The safe API on a GPU: accuracy of types 1 and 2 in 1, 2 and 3 dimensions, f32 and f64,
//! through the host-slice, device-buffer and raw-pointer paths, against the exact sums of
//! `direct_sample`; plus the error contract (bad points, no points, shapes) and ownership.
//! The tests are in the topic modules (transforms, contract, ownership, streams, diagnostics);
//! this file holds what they share: the paths, one transform through a path, checking a batch.
//!
//! Every test starts with `require_gpu!()`, which returns early with
//! "skipped: no GPU (<reason>)" on stderr when the driver or device is missing, so the binary
//! passes (vacuously) on machines without a GPU.

use warpfft::{Complex, DeviceBuffer, Plan, Real, TransformType};

#[macro_use]
#[path = "../common/mod.rs"]
mod common; // require_gpu!, Rng

mod contract;
mod diagnostics;
mod ownership;
mod streams;
mod transforms;

use common::{transform_error, Rng};

const PI: f64 = std::f64::consts::PI;
const TOL_F32: f64 = 1e-5;
const TOL_F64: f64 = 1e-9;
const NTRANSF: usize = 3;

/// How data reach the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    /// `set_points` / `execute` on host slices.
    Host,
    /// `set_device_points` / `execute_device` on `DeviceBuffer`s.
    Device,
    /// `set_points_raw` / `execute_raw` on raw device addresses.
    Raw,
}

/// Output indices of one transform: all of them up to 20000, else 20000 stratified plus the last.
fn sample_indices(rng: &mut Rng, n: usize) -> Vec<usize> {
    // Every output where the exact sum is cheap: tol bounds the l2 error of the whole output,
    // and a few dozen samples estimate it only to ~+-30% (band-edge modes carry most of it).
    if n <= 20_000 {
        return (0..n).collect();
    }
    // one at random in each of 20000 equal strata (evenly spaced ones can all share a mode
    // index, e.g. the band edge -N/2 of the last dim)
    let mut s: Vec<usize> = (0..20_000)
        .map(|i| (((i as f64 + rng.uniform()) * n as f64 / 20_000.0) as usize).min(n - 1))
        .collect();
    s.push(n - 1);
    s
}

/// Runs one transform through `path` and returns (input, output, plan) for checking.
fn run<T: Real>(
    builder: warpfft::PlanBuilder<T>,
    coords: &[Vec<T>],
    input: &[Complex<T>],
    path: Path,
) -> (Vec<Complex<T>>, Plan<T>, Vec<DeviceBuffer<T>>) {
    let mut plan = builder.build().expect("build");
    let m = coords[0].len();
    let out_len = match plan.transform_type() {
        TransformType::Type1 => plan.fk_len(),
        _ => plan.ntransf() * m,
    };
    let mut keep = Vec::new(); // raw path: the caller keeps the point arrays alive
    let output = match path {
        Path::Host => {
            plan.set_points(coords).expect("set_points");
            let mut out = vec![Complex::default(); out_len];
            plan.execute(input, &mut out).expect("execute");
            out
        }
        Path::Device => {
            let bufs = coords.iter().map(|x| DeviceBuffer::from_slice(x).unwrap());
            plan.set_device_points(bufs).expect("set_device_points");
            let din = DeviceBuffer::from_slice(input).unwrap();
            let mut dout = DeviceBuffer::zeros(out_len).unwrap();
            plan.execute_device(&din, &mut dout)
                .expect("execute_device");
            dout.to_vec().unwrap()
        }
        Path::Raw => {
            keep = coords
                .iter()
                .map(|x| DeviceBuffer::from_slice(x).unwrap())
                .collect();
            let mut xyz = [0u64; 3];
            for (d, b) in keep.iter().enumerate() {
                xyz[d] = b.as_raw();
            }
            let din = DeviceBuffer::from_slice(input).unwrap();
            let dout = DeviceBuffer::<Complex<T>>::zeros(out_len).unwrap();
            let (c, fk) = match plan.transform_type() {
                TransformType::Type1 => (din.as_raw(), dout.as_raw()),
                _ => (dout.as_raw(), din.as_raw()),
            };
            // SAFETY: the arrays are live device buffers of the right lengths; `keep` holds the
            // points until the plan is dropped, and we synchronise before reading.
            unsafe {
                plan.set_points_raw(m, xyz[0], xyz[1], xyz[2])
                    .expect("set_points_raw");
                plan.execute_raw(c, fk).expect("execute_raw");
            }
            plan.synchronize().unwrap();
            dout.to_vec().unwrap()
        }
    };
    (output, plan, keep)
}

/// Checks every transform of the batch at ~50 outputs against `direct_sample`; returns the
/// worst relative l2 error.
fn check_batch<T: Real>(
    plan: &Plan<T>,
    input: &[Complex<T>],
    output: &[Complex<T>],
    rng: &mut Rng,
) -> f64 {
    let m = plan.n_points().unwrap();
    let n = plan.modes_per_transform();
    let (in_len, out_len) = match plan.transform_type() {
        TransformType::Type1 => (m, n),
        _ => (n, m),
    };
    let mut worst = 0.0f64;
    for t in 0..plan.ntransf() {
        let sample = sample_indices(rng, out_len);
        let err = transform_error(plan, input, output, (in_len, out_len), t, &sample).unwrap();
        worst = worst.max(err);
    }
    worst
}
