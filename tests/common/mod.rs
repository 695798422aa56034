//! Shared helpers for the GPU tests and the benchmark runner: a GPU probe that explains itself,
//! a small deterministic RNG, a device buffer over the raw C ABI, error formatting, and the
//! spreading kernel read from its one definition (`kernel_shape`).
#![allow(dead_code)]

pub mod kernel_shape;

use std::ffi::CStr;
use std::os::raw::c_void;
use warpfft::{sys, Complex, Plan, Real};

/// The last error message of this thread, from the C core.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(sys::warpfft_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// The C ABI's precision for f64 (`true`) or f32 (`false`).
pub fn precision(f64: bool) -> sys::warpfft_precision {
    if f64 {
        sys::WARPFFT_F64
    } else {
        sys::WARPFFT_F32
    }
}

/// Panics with the status name and the C core's message unless `st` is success.
#[track_caller]
pub fn check(st: sys::warpfft_status, what: &str) {
    if st != sys::WARPFFT_SUCCESS {
        let name = unsafe { CStr::from_ptr(sys::warpfft_status_name(st as i32)) };
        panic!("{what}: {} ({})", name.to_string_lossy(), last_error());
    }
}

/// The value of a call's result, or panics as `check` does with the status it failed with.
#[track_caller]
pub fn checked<T>(r: Result<T, sys::warpfft_status>, what: &str) -> T {
    r.unwrap_or_else(|st| {
        check(st, what);
        unreachable!("{what}: status {st} is success")
    })
}

/// Returns from the test, with a note on stderr, when there is no usable GPU; any other
/// failure of `warpfft::init(0)` fails the test. (`#[macro_use] mod common;` to use it.)
#[allow(unused_macros)]
macro_rules! require_gpu {
    () => {
        match warpfft::init(0) {
            Ok(()) => {}
            Err(e) if e.is_no_gpu() => {
                eprintln!("skipped: no GPU ({e})");
                return;
            }
            Err(e) => panic!("warpfft::init(0) failed: {e}"),
        }
    };
}

/// One `#[test]` per `name: expression;`, each evaluating its expression when device 0
/// initialises and skipping visibly (`gpu_or_skip`) otherwise. (`#[macro_use] mod common;`)
#[allow(unused_macros)]
macro_rules! gpu_tests {
    ($($(#[$attr:meta])* $name:ident: $run:expr;)*) => {
        $(
            $(#[$attr])*
            #[test]
            fn $name() {
                if $crate::common::gpu_or_skip(stringify!($name)) {
                    $run;
                }
            }
        )*
    };
}

/// `true` when device 0 initialises; otherwise prints a visible skip line naming the test and
/// the reason, so a CPU-only run shows what it did not run.
pub fn gpu_or_skip(test: &str) -> bool {
    let st = unsafe { sys::warpfft_init(0) };
    if st == sys::WARPFFT_SUCCESS {
        return true;
    }
    eprintln!("skipped: no GPU: {test}: {}", last_error());
    false
}

/// splitmix64: deterministic, seedable, good enough for test data.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// Starts at state `state` as given (no mixing): the sequences gpu_api's data were drawn
    /// from.
    pub fn from_state(state: u64) -> Self {
        Rng(state)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// Uniform in [-a, a).
    pub fn sym(&mut self, a: f64) -> f64 {
        a * (2.0 * self.uniform() - 1.0)
    }
    /// `m` coordinates uniform in [-a, a).
    pub fn points<T: Real>(&mut self, m: usize, a: f64) -> Vec<T> {
        (0..m).map(|_| T::from_f64(self.sym(a))).collect()
    }
    /// `dims` coordinate arrays of `m` points each, uniform in [-a, a) (drawn array by array).
    pub fn coords<T: Real>(&mut self, dims: usize, m: usize, a: f64) -> Vec<Vec<T>> {
        (0..dims).map(|_| self.points(m, a)).collect()
    }
    /// `n` complex values, real and imaginary parts uniform in [-1, 1).
    pub fn complex<T: Real>(&mut self, n: usize) -> Vec<Complex<T>> {
        (0..n)
            .map(|_| Complex::new(T::from_f64(self.sym(1.0)), T::from_f64(self.sym(1.0))))
            .collect()
    }
}

/// `count` output indices in [0, n): one at random in each of `count` equal strata, or all of
/// them when count >= n. A few dozen plain random samples estimate an l2 error only to ~±30%
/// (the band-edge modes carry most of it); evenly spaced ones can all share a mode index, e.g.
/// the band edge -N/2 of the last dims.
pub fn stratified_sample(rng: &mut Rng, n: i64, count: i64) -> Vec<i64> {
    if count >= n {
        return (0..n).collect();
    }
    (0..count)
        .map(|i| ((i as f64 + rng.uniform()) * n as f64 / count as f64) as i64)
        .map(|s| s.min(n - 1))
        .collect()
}

/// A device allocation through the C ABI (freed on drop).
pub struct Dev {
    pub ptr: *mut c_void,
    pub bytes: usize,
}
impl Dev {
    pub fn new(bytes: usize) -> Dev {
        let mut ptr = std::ptr::null_mut();
        check(
            unsafe { sys::warpfft_malloc(0, bytes.max(1), &mut ptr) },
            "warpfft_malloc",
        );
        Dev { ptr, bytes }
    }
    pub fn from<T: Copy>(host: &[T]) -> Dev {
        let bytes = std::mem::size_of_val(host);
        let d = Dev::new(bytes);
        if bytes > 0 {
            check(
                unsafe {
                    sys::warpfft_memcpy_htod(0, d.ptr, host.as_ptr() as *const c_void, bytes)
                },
                "warpfft_memcpy_htod",
            );
        }
        d
    }
    pub fn to_vec<T: Copy + Default>(&self, n: usize) -> Vec<T> {
        let mut v = vec![T::default(); n];
        let bytes = std::mem::size_of_val(v.as_slice());
        assert!(bytes <= self.bytes);
        if bytes > 0 {
            check(
                unsafe {
                    sys::warpfft_memcpy_dtoh(0, v.as_mut_ptr() as *mut c_void, self.ptr, bytes)
                },
                "warpfft_memcpy_dtoh",
            );
        }
        v
    }
}
impl Dev {
    /// Uploads reals (or interleaved complex parts) in f64, or converted to f32.
    pub fn from_reals(f64: bool, v: &[f64]) -> Dev {
        if f64 {
            Dev::from(v)
        } else {
            Dev::from(&v.iter().map(|&a| a as f32).collect::<Vec<_>>())
        }
    }
    /// Downloads `n` reals of the given precision, widened to f64.
    pub fn reals(&self, f64: bool, n: usize) -> Vec<f64> {
        if f64 {
            self.to_vec::<f64>(n)
        } else {
            self.to_vec::<f32>(n).into_iter().map(f64::from).collect()
        }
    }
}

/// `m` points divided by `$WARPFFT_TEST_POINTS_DIV` (a whole number >= 1; unset: 1), at least
/// 64: the large-M cases of a test made small enough for compute-sanitizer's racecheck, which
/// runs a kernel hundreds of times slower (scripts/gpu_run.sh, stage sanitize-kernels).
pub fn scaled_points(m: usize) -> usize {
    let div = std::env::var("WARPFFT_TEST_POINTS_DIV")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&d| d >= 1)
        .unwrap_or(1);
    (m / div).max(64)
}

/// Bytes of one real of the precision.
pub fn real_bytes(f64: bool) -> usize {
    if f64 {
        8
    } else {
        4
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        unsafe { sys::warpfft_free(0, self.ptr) };
    }
}

/// Relative l2 distance between two complex vectors stored as (re, im) pairs of f64.
pub fn rel_l2(approx: &[f64], exact: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (a, e) in approx.iter().zip(exact) {
        num += (a - e) * (a - e);
        den += e * e;
    }
    (num / den).sqrt()
}

/// Relative l2 error of transform `t` of a batch (inputs of `n_in`, outputs of `n_out` values
/// per transform) at the outputs `sample`, against the plan's exact sums (`direct_sample`).
pub fn transform_error<T: Real>(
    plan: &Plan<T>,
    input: &[Complex<T>],
    output: &[Complex<T>],
    (n_in, n_out): (usize, usize),
    t: usize,
    sample: &[usize],
) -> Result<f64, warpfft::Error> {
    let exact = plan.direct_sample(&input[t * n_in..(t + 1) * n_in], sample)?;
    let approx: Vec<Complex<T>> = sample.iter().map(|&s| output[t * n_out + s]).collect();
    Ok(warpfft::relative_l2_error(&approx, &exact))
}

/// The failed rows of a printed table of checks, asserted to be none at the end.
#[derive(Default)]
pub struct Failures(Vec<String>);
impl Failures {
    /// The row's "ok" column, "yes" or "NO"; a failed row is recorded as `failure()`.
    pub fn verdict(&mut self, ok: bool, failure: impl FnOnce() -> String) -> &'static str {
        if ok {
            "yes"
        } else {
            self.0.push(failure());
            "NO"
        }
    }
    /// Panics listing the failed rows, "N case(s) {what}:", if there are any.
    #[track_caller]
    pub fn assert_none(&self, what: &str) {
        assert!(
            self.0.is_empty(),
            "{} case(s) {what}:\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// The plan's info (`warpfft_plan_get_info`).
pub fn plan_info(plan: sys::warpfft_plan) -> sys::warpfft_plan_info {
    let mut info: sys::warpfft_plan_info = unsafe { std::mem::zeroed() };
    check(
        unsafe { sys::warpfft_plan_get_info(plan, &mut info) },
        "plan_get_info",
    );
    info
}

/// Destroys a plan when dropped (also when a check panics).
pub struct PlanGuard(pub sys::warpfft_plan);
impl Drop for PlanGuard {
    fn drop(&mut self) {
        unsafe { sys::warpfft_plan_destroy(self.0) };
    }
}

/// Device pointer of coordinate array `d` (x, y, z), or NULL past the dimension.
pub fn point_ptr(pts: &[Dev], d: usize) -> *const c_void {
    pts.get(d)
        .map_or(std::ptr::null(), |b| b.ptr as *const c_void)
}

/// A problem as the exact (double precision, GPU) reference sees it: iflag +1, transform 0 of
/// `input` (c for type 1, fk for type 2), points `pts` in the precision `f64` selects.
pub struct Exact<'a> {
    pub ty: i32,
    pub dim: i32,
    pub n: [i64; 3],
    pub modeord: i32,
    pub f64: bool,
    pub m: i64,
    pub pts: &'a [Dev],
}

impl Exact<'_> {
    /// Exact outputs at the given indices, as (re, im) pairs.
    pub fn sample(&self, input: *const c_void, sample: &[i64]) -> Vec<f64> {
        let ptr = |d: usize| point_ptr(self.pts, d);
        let (c, fk) = if self.ty == 1 {
            (input, std::ptr::null())
        } else {
            (std::ptr::null(), input)
        };
        let prec = precision(self.f64);
        let mut exact = vec![0.0f64; 2 * sample.len()];
        check(
            unsafe {
                sys::warpfft_direct_sample(
                    self.ty,
                    self.dim,
                    self.n.as_ptr(),
                    1,
                    self.modeord,
                    prec,
                    0,
                    self.m,
                    ptr(0),
                    ptr(1),
                    ptr(2),
                    c,
                    fk,
                    sample.len() as i64,
                    sample.as_ptr(),
                    exact.as_mut_ptr(),
                )
            },
            "direct_sample",
        );
        exact
    }
}

/// The (re, im) pairs of `out` (interleaved complex) at `base + s` for each s in `sample`.
pub fn gather(out: &[f64], base: usize, sample: &[i64]) -> Vec<f64> {
    sample
        .iter()
        .flat_map(|&s| {
            let i = 2 * (base + s as usize);
            [out[i], out[i + 1]]
        })
        .collect()
}
