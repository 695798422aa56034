//! Library, build and runtime information, and [`PlanInfo`].

use std::ffi::CStr;
use std::os::raw::c_char;
use std::path::PathBuf;

use crate::device::device_ordinal;
use crate::error::{check, Error, Result};
use crate::sys;
use crate::types::{Method, Precision, TransformType};

/// A `'static` C string from the library as `&'static str` (`""` if not UTF-8; the C core
/// returns ASCII).
fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the C core returns pointers to static NUL-terminated strings here.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// The C core's version, e.g. `"0.1.0"` (`warpfft_version`; no GPU needed).
pub fn version() -> &'static str {
    // SAFETY: plain call returning a static string.
    static_str(unsafe { sys::warpfft_version() })
}

/// JSON describing the embedded kernels (`warpfft_build_manifest`; no GPU needed): mode
/// (`"jit"`, `"aot"`, `"aot+jit"`, `"nvrtc"`, `"jit+nvrtc"`, `"aot+nvrtc"` or
/// `"aot+jit+nvrtc"`), real archs, PTX arch, toolkit version, content hash, the embedded
/// source files and their digest (`nvrtc` builds), modules with their kernel names and NVRTC
/// options.
pub fn build_manifest() -> &'static str {
    // SAFETY: plain call returning a static string.
    static_str(unsafe { sys::warpfft_build_manifest() })
}

/// Initialises the CUDA driver and `device` (retaining its primary context), as plan creation
/// does implicitly (`warpfft_init`). A cheap way to ask "is there a usable GPU?":
/// `Err(e) if e.is_no_gpu()` means no.
pub fn init(device: usize) -> Result<()> {
    let device = device_ordinal(device)?;
    // SAFETY: plain call.
    check(unsafe { sys::warpfft_init(device) })
}

/// Empties the plan cache (`warpfft_release_cached`): destroying a [`Plan`](crate::Plan) keeps
/// its cuFFT plan, work area, fine grid and deconvolution factors for the next plan of the
/// same shape (which then takes well under a millisecond to create), bounded by 32 items and
/// `WARPFFT_PLAN_CACHE_MB` MiB of device memory (default 1024; 0 turns the cache off). warpfft's
/// own allocations empty it when the device is full; call this to hand the memory to other
/// allocators. Plans in use are untouched. No GPU needed.
pub fn release_cached() {
    // SAFETY: plain call; it cannot fail.
    unsafe { sys::warpfft_release_cached() };
}

/// The runtime report of [`runtime_report`]: the JSON the C core always writes, and the
/// status of initialising the driver and device.
#[derive(Debug, Clone)]
pub struct RuntimeReport {
    json: String,
    error: Option<Error>,
}

impl RuntimeReport {
    /// The JSON report: build manifest summary, driver version, device name, sm, per loaded
    /// module the image used (`"sass"`; the embedded PTX linked by the driver now, `"ptx-link"`,
    /// or read back from the kernel cache, `"ptx-cache"`; `"ptx-jit"` for PTX inside a fatbin;
    /// with the `nvrtc` feature `"nvrtc"` when compiled now and `"nvrtc-cache"` when read from
    /// the kernel cache)
    /// and load/JIT/compile time, cuFFT path and version, `"nvrtc"` (path and version) and
    /// `"kernel_cache"` (`"dir"` and a `"note"` on why it is off or its last problem). Present
    /// even when the GPU could not be initialised (then with `"gpu_error"` / `"cufft_error"` /
    /// `"nvrtc_error"` fields saying why).
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The error from initialising the driver and device, if any.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// `Ok(json)` when the device initialised, otherwise the error (the JSON is dropped).
    pub fn into_result(self) -> Result<String> {
        match self.error {
            None => Ok(self.json),
            Some(e) => Err(e),
        }
    }
}

/// The runtime report for `device` (`warpfft_runtime_info`), whether or not the GPU could be
/// initialised: always the JSON, plus the error if initialisation failed. Use it for
/// diagnostics (`warpfft info`-style output); use [`runtime_info`] when a failure should be
/// an error.
pub fn runtime_report(device: usize) -> RuntimeReport {
    let device = match device_ordinal(device) {
        Ok(d) => d,
        Err(e) => {
            return RuntimeReport {
                json: String::new(),
                error: Some(e),
            }
        }
    };
    let mut buf = vec![0u8; 16 * 1024];
    let mut attempts = 0;
    loop {
        let mut needed = 0usize;
        // SAFETY: `buf` is writable for `buf.len()` bytes; `needed` is a valid out-pointer.
        let status = unsafe {
            sys::warpfft_runtime_info(device, buf.as_mut_ptr().cast(), buf.len(), &mut needed)
        };
        // Read the message now, before any other warpfft call on this thread.
        let error = (status != sys::WARPFFT_SUCCESS).then(|| Error::from_status(status));
        attempts += 1;
        if needed > buf.len() && attempts < 4 {
            buf = vec![0u8; needed];
            continue;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let json = String::from_utf8_lossy(&buf[..end]).into_owned();
        return RuntimeReport { json, error };
    }
}

/// The runtime report for `device` as JSON (see [`RuntimeReport::json`]), or the error from
/// initialising the driver and device. [`runtime_report`] gives the JSON in both cases.
pub fn runtime_info(device: usize) -> Result<String> {
    runtime_report(device).into_result()
}

/// Finds and loads cuFFT (no GPU needed; `warpfft_cufft_probe`): the loaded file's path and
/// `cufftGetVersion`'s value. On failure [`Error::NoCufft`], whose message lists every place
/// tried (`$WARPFFT_CUFFT_LIB`, pip wheels, `$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`,
/// the system loader).
pub fn cufft_probe() -> Result<(PathBuf, i32)> {
    let mut buf = vec![0u8; 4096];
    let mut version = 0;
    // SAFETY: `buf` is writable for its length; `version` is a valid out-pointer.
    check(unsafe { sys::warpfft_cufft_probe(buf.as_mut_ptr().cast(), buf.len(), &mut version) })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    use std::os::unix::ffi::OsStringExt;
    Ok((PathBuf::from(std::ffi::OsString::from_vec(buf)), version))
}

/// A tuning aid (`warpfft_bench_fft`): the time in milliseconds of one cuFFT transform of the
/// fine grid a plan executes (in-place batched C2C/Z2Z over `batch` grids of `n_fine`, as
/// [`PlanInfo::n_fine`] reports; entries past `dim` are ignored), averaged over `reps`
/// transforms timed with CUDA events after one warm-up, on `device`'s legacy default stream.
/// Everything it allocates is freed before it returns. Compare with a plan's execute time to
/// see how much of it is the FFT.
///
/// ```no_run
/// # fn main() -> warpfft::Result<()> {
/// let ms = warpfft::bench_fft(2, [2048, 2048, 1], warpfft::Precision::F32, 1, 0, 20)?;
/// println!("FFT of the 2048² fine grid: {ms:.3} ms");
/// # Ok(())
/// # }
/// ```
pub fn bench_fft(
    dim: usize,
    n_fine: [usize; 3],
    precision: Precision,
    batch: usize,
    device: usize,
    reps: usize,
) -> Result<f64> {
    let int = |what: &str, v: usize| {
        i64::try_from(v).map_err(|_| Error::InvalidArg(format!("{what} {v} does not fit an i64")))
    };
    let dim_c = i32::try_from(dim)
        .map_err(|_| Error::InvalidArg(format!("dim {dim} does not fit a C int")))?;
    let reps_c = i32::try_from(reps)
        .map_err(|_| Error::InvalidArg(format!("reps {reps} does not fit a C int")))?;
    let n = [
        int("n_fine[0]", n_fine[0])?,
        int("n_fine[1]", n_fine[1])?,
        int("n_fine[2]", n_fine[2])?,
    ];
    let mut ms = 0.0;
    // SAFETY: `n` holds three values; `ms` is a valid out-pointer.
    check(unsafe {
        sys::warpfft_bench_fft(
            dim_c,
            n.as_ptr(),
            precision.as_raw(),
            int("batch", batch)?,
            device_ordinal(device)?,
            reps_c,
            &mut ms,
        )
    })?;
    Ok(ms)
}

/// What a plan chose: from [`Plan::info`](crate::Plan::info) (`warpfft_plan_get_info`) or,
/// without a GPU, [`PlanBuilder::params`](crate::PlanBuilder::params)
/// (`warpfft_plan_params`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanInfo {
    /// Transform type.
    pub transform_type: TransformType,
    /// Dimension (1, 2 or 3).
    pub dim: usize,
    /// Precision.
    pub precision: Precision,
    /// Spreading/interpolation method: the one actually used by a plan (never `Auto`);
    /// from `params()` possibly `Auto` when the choice depends on the GPU.
    pub method: Method,
    /// Kernel width in fine-grid points.
    pub width: usize,
    /// Shape parameter β of the sinh-type kernel (docs/accuracy.md).
    pub beta: f64,
    /// Fine grid size / modes: the upsampling factor σ the plan uses (its choice when the
    /// builder left it at 0).
    pub upsampfac: f64,
    /// Mode counts `N1, N2, N3` (1 for unused dimensions).
    pub n_modes: [usize; 3],
    /// Fine-grid size per dimension (1 for unused dimensions).
    pub n_fine: [usize; 3],
    /// Spreading bin edge per dimension.
    pub bin_size: [usize; 3],
    /// Transforms per execute.
    pub ntransf: usize,
    /// `M` of the last successful setpts (per point set); `None` before one (and from
    /// `params()`).
    pub n_points: Option<usize>,
    /// The point sets of the last successful setpts: 1 for [`set_points`](crate::Plan::set_points)
    /// and friends, `n_sets` for [`set_point_sets`](crate::Plan::set_point_sets) (batched
    /// points); `None` before one (and from `params()`).
    pub n_sets: Option<usize>,
    /// Device bytes the plan holds now; from `params()`, the fixed part estimated on the
    /// host (fine grid, bins; without cuFFT's work area and the per-point arrays).
    pub workspace_bytes: usize,
    /// Rounding floor of the relative l2 error (points in [-π, π)): the plan promises
    /// `max(tol, tol_floor)` (docs/accuracy.md).
    pub tol_floor: f64,
    /// The tolerance the plan was made for: the `tol` asked for, or the nearer end of the
    /// precision's range (f32 `1e-6..=1e-1`, f64 `1e-13..=1e-1`) when it was outside.
    pub tol: f64,
    /// The cost model's predicted execute time in ms (one call on an H100) at the builder's
    /// `points_hint` points, or one per mode: what the choice of σ and width minimised.
    pub predicted_ms: f64,
    /// The spreading kernel.
    pub kernel: Kernel,
    /// Whether the plan gives bitwise-reproducible results
    /// ([`PlanBuilder::deterministic`](crate::PlanBuilder::deterministic)); its type-1 (and
    /// type-3) spreading method is then [`Method::OutputDriven`].
    pub deterministic: bool,
    /// Whether the plan is on real-valued data (option `real_data`: real strengths and the
    /// half modes; a [`RealPlan`](crate::RealPlan), docs/real.md).
    pub real_data: bool,
    /// Type 3 only, once its grids are chosen (after `set_points3`, or from `params3`):
    /// centres, scale factors and the inner type-2 step. For type 3, `n_fine` (= `n_modes`)
    /// is the spreading grid and `width`/`beta` its kernel.
    pub type3: Option<Type3Info>,
}

/// The spreading kernel of a plan (`warpfft_kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel {
    /// `φ(t) = 2e^{−β} (sinh(β s)/s − β)`, `s = √(1 − (2t/w)²)` (Potts–Tasche's sinh form
    /// less its edge value: continuous, 0 at `|t| = w/2`), `β` in [`PlanInfo::beta`].
    Sinh,
}

impl Kernel {
    fn from_raw(v: i32) -> Result<Kernel> {
        match v {
            v if v == sys::WARPFFT_KERNEL_SINH as i32 => Ok(Kernel::Sinh),
            v => Err(Error::Internal(format!("the C core reported kernel = {v}"))),
        }
    }
}

/// What a type-3 plan chose for its current points (see `warpfft.h`, "type 3"): sources
/// `x_d ∈ x_center[d] ± x_half[d]`, targets `s_d ∈ s_center[d] ± s_half[d]`, rescaled sources
/// `x' = (x − C)/γ` on the spreading grid and inner targets `s' = (2π/n_fine)·γ·(s − D)`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Type3Info {
    /// `K` of the last successful `set_points3`; `None` before one (and from `params3`).
    pub n_targets: Option<usize>,
    /// Precision of the inner steps: an `f32` plan runs them in `f64` when rescaled
    /// coordinates in `f32` would not meet the tolerance.
    pub inner_precision: Precision,
    /// Kernel width of the inner type-2 step.
    pub inner_width: usize,
    /// Kernel shape of the inner type-2 step.
    pub inner_beta: f64,
    /// Fine grid of the inner type-2 step (1 for unused dimensions).
    pub inner_fine: [usize; 3],
    /// Source centres `C_d`.
    pub x_center: [f64; 3],
    /// Source half-widths `X_d` (after the `X·S ≥ 1` guard).
    pub x_half: [f64; 3],
    /// Target centres `D_d`.
    pub s_center: [f64; 3],
    /// Target half-widths `S_d`.
    pub s_half: [f64; 3],
    /// Scale factors `γ_d`.
    pub gamma: [f64; 3],
}

impl PlanInfo {
    /// Converts the C struct, rejecting values this crate does not know.
    pub(crate) fn from_raw(r: &sys::warpfft_plan_info) -> Result<PlanInfo> {
        let count = |what: &str, v: i64| {
            usize::try_from(v)
                .map_err(|_| Error::Internal(format!("the C core reported {what} = {v}")))
        };
        let three = |what: &str, v: [i64; 3]| -> Result<[usize; 3]> {
            Ok([count(what, v[0])?, count(what, v[1])?, count(what, v[2])?])
        };
        Ok(PlanInfo {
            transform_type: TransformType::from_raw(r.type_)?,
            dim: count("dim", r.dim.into())?,
            precision: Precision::from_raw(r.precision)?,
            method: Method::from_raw(r.method)?,
            width: count("width", r.width.into())?,
            beta: r.beta,
            upsampfac: r.upsampfac,
            n_modes: three("n_modes", r.n_modes)?,
            n_fine: three("n_fine", r.n_fine)?,
            bin_size: three("bin_size", r.bin_size.map(i64::from))?,
            ntransf: count("ntransf", r.ntransf)?,
            n_points: usize::try_from(r.n_points).ok(),
            n_sets: usize::try_from(r.n_sets).ok(),
            workspace_bytes: r.workspace_bytes,
            type3: if r.type_ == 3 && r.inner_precision != 0 {
                Some(Type3Info {
                    n_targets: usize::try_from(r.n_targets).ok(),
                    inner_precision: Precision::from_raw(r.inner_precision)?,
                    inner_width: count("inner_width", r.inner_width.into())?,
                    inner_beta: r.inner_beta,
                    inner_fine: three("inner_fine", r.inner_fine)?,
                    x_center: r.x_center,
                    x_half: r.x_half,
                    s_center: r.s_center,
                    s_half: r.s_half,
                    gamma: r.gamma,
                })
            } else {
                None
            },
            tol_floor: r.tol_floor,
            tol: r.tol,
            predicted_ms: r.predicted_ms,
            kernel: Kernel::from_raw(r.kernel)?,
            deterministic: r.deterministic != 0,
            real_data: r.real_data != 0,
        })
    }
}
