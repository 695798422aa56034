//! [`PlanBuilder`]: a plan's options, checked and resolved on the host without a GPU
//! ([`PlanBuilder::params`]), and the direct-sum problem they describe ([`direct_sample`]).
//! The plan itself is made by `build` in plan.rs.

use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_int;

use num_complex::Complex;

use crate::direct::{self, Problem};
use crate::error::{check, Error, Result};
use crate::info::PlanInfo;
use crate::options::Record;
use crate::sys;
use crate::types::{Method, ModeOrder, Real, TransformType};

/// Options for a [`Plan`]; made by [`Plan::type1`], [`Plan::type2`] or [`Plan::builder`].
///
/// Every setter takes and returns the builder, so a plan reads as one expression:
///
/// ```
/// use warpfft::{Method, ModeOrder, Plan};
///
/// let builder = Plan::<f64>::type2(&[64, 32, 16])
///     .tol(1e-9)
///     .modeord(ModeOrder::Fft)
///     .ntransf(4)
///     .method(Method::Auto)
///     .upsampfac(2.0);
/// // What the plan would choose, computed on the host (no GPU needed):
/// let info = builder.params()?;
/// assert_eq!(info.dim, 3);
/// assert!(info.n_fine[0] >= 128);
/// // builder.build()? makes the plan on device 0.
/// # Ok::<(), warpfft::Error>(())
/// ```
///
/// Nothing is checked until [`build`](PlanBuilder::build) or [`params`](PlanBuilder::params),
/// which run the same argument checks. The options are set through the C core's option table
/// ([`options`](crate::options())): the typed setters below and [`option`](PlanBuilder::option)
/// (any option by name) all go there, so their defaults and bounds are the table's and a bad
/// value fails with its message.
///
/// [`Plan`]: crate::Plan
/// [`Plan::type1`]: crate::Plan::type1
/// [`Plan::type2`]: crate::Plan::type2
/// [`Plan::builder`]: crate::Plan::builder
#[derive(Clone)]
pub struct PlanBuilder<T: Real> {
    // `pub(crate)`: read by `build` (plan.rs), which makes the plan.
    pub(crate) ty: TransformType,
    pub(crate) n_modes: Vec<usize>,
    pub(crate) tol: f64,
    iflag: Option<i32>,
    pub(crate) ntransf: usize,
    opts: Record,
    _real: PhantomData<T>,
}

impl<T: Real> fmt::Debug for PlanBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanBuilder")
            .field("precision", &T::PRECISION)
            .field("type", &self.ty)
            .field("n_modes", &self.n_modes)
            .field("tol", &self.tol)
            .field("iflag", &self.sign())
            .field("ntransf", &self.ntransf)
            .field("opts", &self.opts)
            .finish()
    }
}

/// The C plan arguments a builder converts to.
pub(crate) struct RawArgs {
    pub(crate) ty: c_int,
    pub(crate) dim: c_int,
    pub(crate) n_modes: [i64; 3],
    pub(crate) iflag: c_int,
    pub(crate) ntransf: i64,
    pub(crate) opts: sys::warpfft_opts,
}

impl<T: Real> PlanBuilder<T> {
    pub(crate) fn new(ty: TransformType, n_modes: &[usize]) -> Self {
        PlanBuilder {
            ty,
            n_modes: n_modes.to_vec(),
            tol: T::DEFAULT_TOL,
            iflag: None,
            ntransf: 1,
            opts: Record::new(),
            _real: PhantomData,
        }
    }

    /// Sets any option of the C core's option table ([`options`](crate::options())) by its
    /// name or one of the reference's spellings, e.g. `.option("gpu_maxsubprobsize", 256)` or
    /// `.option("gpu_sort", 1)` (the reference's options without effect here are checked and
    /// ignored). The value is written as text: an integer, or any number for a float option.
    /// A bad name or value makes [`build`](PlanBuilder::build) and
    /// [`params`](PlanBuilder::params) fail with [`Error::InvalidArg`] and the table's message
    /// (the first such setting's).
    pub fn option(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.opts.set(name, value);
        self
    }

    /// Requested relative l2 accuracy against the exact sum. Supported: f32 `1e-6..=1e-1`,
    /// f64 `1e-13..=1e-1` (docs/accuracy.md); one outside runs at the nearer end
    /// ([`PlanInfo::tol`] says what a plan ran at), as the reference raises a tol below machine
    /// precision to it; NaN gives [`Error::BadTol`]. Default: [`Real::DEFAULT_TOL`].
    ///
    /// [`PlanInfo::tol`]: crate::PlanInfo::tol
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sign of the exponent: `>= 0` means `+1`, `< 0` means `-1`. Default: `+1` for types 1
    /// and 3 and `-1` for type 2 (so the default type 2 is the adjoint of the default type 1,
    /// as in FINUFFT's Python interface).
    pub fn iflag(mut self, iflag: i32) -> Self {
        self.iflag = Some(iflag);
        self
    }

    /// Order of the mode arrays (option `modeord`). Default: [`ModeOrder::Cmcl`].
    pub fn modeord(self, modeord: ModeOrder) -> Self {
        self.option("modeord", modeord.as_raw())
    }

    /// Number of transforms executed together on one point set (`>= 1`, default 1). Batched
    /// arrays hold transform `t` at offset `t*M` (strengths) or `t*N1*N2*N3` (modes).
    pub fn ntransf(mut self, ntransf: usize) -> Self {
        self.ntransf = ntransf;
        self
    }

    /// Spreading/interpolation method (option `method`). Default: [`Method::Auto`].
    pub fn method(self, method: Method) -> Self {
        self.option("method", method.as_raw())
    }

    /// Fine grid size / mode count per dimension: `0.0` (default) lets the plan choose it with
    /// the kernel width, the least predicted time that meets `tol` ([`PlanInfo::upsampfac`]
    /// says what it chose), or any value in `1.25..=3.0` (a larger one: bigger FFT, narrower
    /// kernel).
    ///
    /// [`PlanInfo::upsampfac`]: crate::PlanInfo::upsampfac
    pub fn upsampfac(self, upsampfac: f64) -> Self {
        self.option("upsampfac", upsampfac)
    }

    /// The number of points `set_points` will usually be given (types 1 and 2): what the
    /// choice of upsampling factor and width weighs spreading against the FFT with. Default 0:
    /// one point per mode. A hint only; any number of points may be set.
    pub fn points_hint(self, m: usize) -> Self {
        self.option("points_hint", m)
    }

    /// CUDA device ordinal (default 0). Device buffers passed to the plan must live on it.
    pub fn device(self, device: usize) -> Self {
        self.option("device", device)
    }

    /// Spreading bin edge per dimension in fine-grid points (entries past the dimension are
    /// ignored); `0` (the default) lets warpfft choose.
    pub fn bin_size(self, bin_size: [usize; 3]) -> Self {
        self.option("bin_size[0]", bin_size[0])
            .option("bin_size[1]", bin_size[1])
            .option("bin_size[2]", bin_size[2])
    }

    /// Points per shared-memory subproblem; `0` (the default) lets warpfft choose.
    pub fn max_subprob(self, max_subprob: usize) -> Self {
        self.option("max_subprob", max_subprob)
    }

    /// Spread (type 1) or interpolate (type 2) only, as the reference's `gpu_spreadinterponly`
    /// (e.g. for sampling-density estimates): no FFT and no deconvolution. The grid is the mode
    /// array itself (`N_d >= 2 width` per dimension; index `i_d` at coordinate `2 pi i_d / N_d`,
    /// mode order ignored), the kernel the one `tol` and `upsampfac` choose for a NUFFT (see
    /// [`PlanInfo`](crate::PlanInfo)'s `width` and `beta`), method GM. Default `false`.
    pub fn spread_interp_only(self, on: bool) -> Self {
        self.option("spreadinterponly", u8::from(on))
    }

    /// Whether setting points checks the coordinates before returning (types 1 and 2).
    ///
    /// `false` (the default): [`Plan::set_points`](crate::Plan::set_points) and friends enqueue the binning without
    /// waiting for the GPU (no host synchronisation). A NaN or infinite coordinate then never
    /// reads or writes out of bounds; it makes every output of every later execute with that
    /// point set NaN (type 1: all modes; type 2: all strengths), and
    /// [`Plan::setpts_check`](crate::Plan::setpts_check) returns [`Error::BadPoints`](crate::Error::BadPoints).
    ///
    /// `true`: setting points waits for the binning and returns `Error::BadPoints` for such a
    /// point set (the plan then has no points). Type 3 always checks (it waits for the points'
    /// bounds anyway).
    pub fn check_points(self, on: bool) -> Self {
        self.option("check_points", u8::from(on))
    }

    /// Bitwise-reproducible results (`opts.deterministic`): the same inputs on the same GPU give
    /// the same bits on every execute, of every plan built with the same options, on any stream
    /// (types 1, 2 and 3). Type 1 and type 3's spreading step then spread with
    /// [`Method::OutputDriven`] in a fixed order (the method must be [`Method::Auto`] or
    /// `OutputDriven`, else building fails with [`Error::InvalidArg`](crate::Error::InvalidArg)),
    /// and setting points ranks them inside their bins by input order (a stable sort, about
    /// 0.1 ns per point more). Type 2 is unchanged: its interpolation is deterministic with
    /// every method. The cost: output-driven spreading is 3-4x slower than shared-memory
    /// spreading on an H100 (`docs/spreaders.md`). Default `false`.
    pub fn deterministic(self, on: bool) -> Self {
        self.option("deterministic", u8::from(on))
    }

    /// Runs the plan's work on `stream` (a `CUstream` / `cudaStream_t` as an integer, e.g. from
    /// another CUDA crate) instead of the legacy default stream `0`.
    ///
    /// With a stream other than `0`, the plan's safe methods that take device buffers
    /// ([`Plan::set_device_points`], [`Plan::execute_device`]) wait for the stream before they
    /// return, so no borrowed buffer is in use after the borrow ends; use
    /// [`Plan::execute_raw`] to stay fully asynchronous.
    ///
    /// Work on a non-blocking stream is not ordered with the legacy default stream that
    /// [`DeviceBuffer`] copies use: order it yourself (e.g. [`Plan::synchronize`]) when other
    /// work touches the same buffers.
    ///
    /// # Safety
    /// `stream` must be `0` or a valid stream of the plan's device's primary context, and must
    /// outlive the plan (the C core enqueues on it until `warpfft_plan_destroy`).
    ///
    /// [`Plan::set_device_points`]: crate::Plan::set_device_points
    /// [`Plan::execute_device`]: crate::Plan::execute_device
    /// [`Plan::execute_raw`]: crate::Plan::execute_raw
    /// [`Plan::synchronize`]: crate::Plan::synchronize
    /// [`DeviceBuffer`]: crate::DeviceBuffer
    pub unsafe fn stream(self, stream: u64) -> Self {
        self.option("stream", stream)
    }

    /// The transform type.
    pub fn transform_type(&self) -> TransformType {
        self.ty
    }

    /// The mode counts as given.
    pub fn n_modes(&self) -> &[usize] {
        &self.n_modes
    }

    /// The exponent sign the plan will use (`+1` or `-1`).
    pub fn sign(&self) -> i32 {
        match self.iflag {
            Some(f) if f >= 0 => 1,
            Some(_) => -1,
            None if self.ty == TransformType::Type2 => -1,
            None => 1,
        }
    }

    /// The mode order.
    pub fn mode_order(&self) -> ModeOrder {
        mode_order_of(self.opts.raw())
    }

    /// The device ordinal.
    pub fn device_ordinal(&self) -> usize {
        usize::try_from(self.opts.raw().device).unwrap_or(0) // the table keeps it >= 0
    }

    /// The stream (option `stream`).
    pub(crate) fn stream_handle(&self) -> u64 {
        self.opts.raw().stream
    }

    /// The `warpfft_opts` record this builder passes to the C core (for calls through
    /// [`sys`](crate::sys)), or the first failed setting's error.
    pub fn raw_opts(&self) -> Result<sys::warpfft_opts> {
        self.opts.get()
    }

    /// Converts to C arguments, with the Rust-side range checks (counts must fit C's types);
    /// the options as set, or the first setting's failure.
    pub(crate) fn raw_args(&self) -> Result<RawArgs> {
        let (dim, n_modes, ntransf) = shape(&self.n_modes, self.ntransf)?;
        let opts = self.opts.get()?;
        Ok(RawArgs {
            ty: self.ty.as_raw(),
            dim,
            n_modes,
            iflag: self.sign(),
            ntransf,
            opts,
        })
    }

    /// What [`build`](PlanBuilder::build) would choose — kernel width and shape, fine grid,
    /// bins, and the method where it does not depend on the GPU — computed on the host without
    /// a GPU (`warpfft_plan_params`). Runs the same argument checks as `build`, so it is also a
    /// GPU-free way to validate options. `n_points` is `None`; `workspace_bytes` is the plan's
    /// fixed device memory (fine grid, bins) as estimated on the host, without cuFFT's work
    /// area.
    pub fn params(&self) -> Result<PlanInfo> {
        let a = self.raw_args()?;
        let mut info = std::mem::MaybeUninit::<sys::warpfft_plan_info>::zeroed();
        // SAFETY: all pointers are valid for the call; `info` is plain data the call fills.
        check(unsafe {
            sys::warpfft_plan_params(
                a.ty,
                a.dim,
                a.n_modes.as_ptr(),
                a.ntransf,
                self.tol,
                T::PRECISION.as_raw(),
                &a.opts,
                info.as_mut_ptr(),
            )
        })?;
        // SAFETY: zero-initialised plain data, filled on success.
        PlanInfo::from_raw(unsafe { &info.assume_init() })
    }

    /// What a type-3 plan ([`Plan::type3`](crate::Plan::type3)) would choose at
    /// [`Plan::set_points3`](crate::Plan::set_points3) for sources within `sources[d] = (lo,
    /// hi)` and targets within `targets[d]` (one pair per dimension), computed on the host
    /// without a GPU (`warpfft_plan_params3`): the spreading grid (`n_fine`), kernel width and
    /// the [`Type3Info`](crate::Type3Info) fields.
    ///
    /// ```
    /// use warpfft::Plan;
    /// let pi = std::f64::consts::PI;
    /// let info = Plan::<f64>::type3(1).tol(1e-9).params3(&[(-pi, pi)], &[(-500.0, 500.0)])?;
    /// let t3 = info.type3.expect("type-3 fields");
    /// assert!(info.n_fine[0] >= 2000); // about 2·upsampfac·X·S/π + width
    /// assert_eq!(t3.x_center[0], 0.0);
    /// # Ok::<(), warpfft::Error>(())
    /// ```
    pub fn params3(&self, sources: &[(f64, f64)], targets: &[(f64, f64)]) -> Result<PlanInfo> {
        let a = self.raw_args()?;
        let dim = self.n_modes.len();
        if self.ty != TransformType::Type3 {
            return Err(Error::BadType(format!(
                "params3 is for type-3 builders; this one is {:?} (use params)",
                self.ty
            )));
        }
        if sources.len() != dim || targets.len() != dim {
            return Err(crate::error::shape(format!(
                "params3: {} source and {} target bounds given; the plan is {dim}-dimensional",
                sources.len(),
                targets.len()
            )));
        }
        let (mut xl, mut xh, mut sl, mut sh) = ([0f64; 3], [0f64; 3], [0f64; 3], [0f64; 3]);
        for d in 0..dim {
            (xl[d], xh[d]) = sources[d];
            (sl[d], sh[d]) = targets[d];
        }
        let mut info = std::mem::MaybeUninit::<sys::warpfft_plan_info>::zeroed();
        // SAFETY: all pointers are valid for the call; `info` is plain data the call fills.
        check(unsafe {
            sys::warpfft_plan_params3(
                a.dim,
                a.ntransf,
                self.tol,
                T::PRECISION.as_raw(),
                &a.opts,
                xl.as_ptr(),
                xh.as_ptr(),
                sl.as_ptr(),
                sh.as_ptr(),
                info.as_mut_ptr(),
            )
        })?;
        // SAFETY: zero-initialised plain data, filled on success.
        PlanInfo::from_raw(unsafe { &info.assume_init() })
    }

    /// The pieces of a direct-sum problem this builder describes (no points yet).
    pub(crate) fn direct_problem(&self, m: usize) -> Result<Problem> {
        let a = self.raw_args()?;
        let mut n_modes = [1usize; 3];
        n_modes[..self.n_modes.len()].copy_from_slice(&self.n_modes);
        let n: usize = n_modes.iter().product();
        Ok(Problem {
            ty: self.ty,
            dim: self.n_modes.len(),
            n_modes,
            iflag: a.iflag,
            modeord: self.mode_order(),
            device: a.opts.device,
            m,
            out_len: match self.ty {
                TransformType::Type1 => n,
                TransformType::Type2 | TransformType::Type3 => m,
            },
        })
    }
}

/// The mode order of an options record.
pub(crate) fn mode_order_of(o: &sys::warpfft_opts) -> ModeOrder {
    if o.modeord == ModeOrder::Fft.as_raw() {
        ModeOrder::Fft
    } else {
        ModeOrder::Cmcl
    }
}

/// The shape arguments a plan and a Toeplitz operator share, with the Rust-side range checks:
/// the dimension (1 to 3, from `n_modes`), the mode counts and `ntransf` as int64.
pub(crate) fn shape(n_modes_in: &[usize], ntransf: usize) -> Result<(c_int, [i64; 3], i64)> {
    let dim = n_modes_in.len();
    if !(1..=3).contains(&dim) {
        return Err(Error::BadDim(format!(
            "n_modes has {dim} entries ({n_modes_in:?}); the dimension must be 1, 2 or 3"
        )));
    }
    let mut n_modes = [1i64; 3];
    for (d, &n) in n_modes_in.iter().enumerate() {
        n_modes[d] = i64::try_from(n)
            .map_err(|_| Error::BadSize(format!("n_modes[{d}] = {n} does not fit int64")))?;
    }
    let ntransf = i64::try_from(ntransf)
        .map_err(|_| Error::BadSize(format!("ntransf = {ntransf} does not fit int64")))?;
    Ok((dim as c_int, n_modes, ntransf))
}

/// Exact transform values at a sample of outputs, computed by direct summation in double
/// precision on the GPU (`warpfft_direct_sample`), for checking accuracy without a plan.
///
/// `problem` describes the transform (type, modes, sign, mode order, device; tolerance and
/// tuning options are ignored); `points` holds one slice of `M` coordinates per dimension,
/// `input` one transform's input (type 1: `M` strengths; type 2: `N1·N2·N3` modes), and
/// `sample` the output indices (type 1: mode-array indices; type 2: point indices). Shapes are
/// checked before anything reaches the GPU ([`Error::Shape`]).
///
/// ```no_run
/// use warpfft::{Complex, Plan};
/// # fn main() -> warpfft::Result<()> {
/// let x = [0.1f64, -2.0, 3.0];
/// let c = [Complex::new(1.0, 0.0); 3];
/// let problem = Plan::<f64>::type1(&[16]);
/// let exact = warpfft::direct_sample(&problem, &[&x], &c, &[0, 8, 15])?;
/// assert_eq!(exact.len(), 3);
/// # Ok(()) }
/// ```
pub fn direct_sample<T: Real, S: AsRef<[T]>>(
    problem: &PlanBuilder<T>,
    points: &[S],
    input: &[Complex<T>],
    sample: &[usize],
) -> Result<Vec<Complex<f64>>> {
    let m = direct::point_count(points, problem.n_modes().len())?;
    let p = problem.direct_problem(m)?;
    direct::direct_sample_host(&p, problem.device_ordinal(), points, input, sample)
}

#[cfg(test)]
mod tests {
    use crate::Plan;

    #[test]
    fn check_points_reaches_the_c_opts() {
        let b = Plan::<f32>::type1(&[8, 8]);
        assert_eq!(
            b.raw_args().unwrap().opts.check_points,
            0,
            "default: unchecked"
        );
        let b = b.check_points(true);
        assert_eq!(b.raw_args().unwrap().opts.check_points, 1);
        assert!(format!("{b:?}").contains("\"check_points\": 1"));
        assert_eq!(
            b.check_points(false).raw_args().unwrap().opts.check_points,
            0
        );
    }

    #[test]
    fn deterministic_reaches_the_c_opts() {
        let b = Plan::<f64>::type3(2);
        assert_eq!(b.raw_args().unwrap().opts.deterministic, 0, "default off");
        let b = b.deterministic(true);
        assert_eq!(b.raw_args().unwrap().opts.deterministic, 1);
        assert!(format!("{b:?}").contains("\"deterministic\": 1"));
    }
}
