//! The safe plan: [`PlanBuilder`] (options, checked without a GPU by
//! [`PlanBuilder::params`]) and [`Plan`] (RAII over `warpfft_plan`: `set_points`, `execute`,
//! `Drop` destroys).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_int;

use num_complex::Complex;

use crate::device::{device_ordinal, DeviceBuffer};
use crate::error::{check, shape, Error, Result};
use crate::info::PlanInfo;
use crate::{sys, Real};

/// The NUFFT type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransformType {
    /// Type 1, non-uniform points → uniform modes: `f[k] = Σ_j c[j] exp(±i k·x_j)`.
    Type1,
    /// Type 2, uniform modes → non-uniform points: `c[j] = Σ_k f[k] exp(±i k·x_j)`
    /// (the adjoint of type 1 with the opposite sign).
    Type2,
}

impl TransformType {
    /// The C value (1 or 2).
    pub fn as_raw(self) -> c_int {
        match self {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
        }
    }

    pub(crate) fn from_raw(v: i32) -> Result<Self> {
        match v {
            1 => Ok(TransformType::Type1),
            2 => Ok(TransformType::Type2),
            _ => Err(Error::Internal(format!(
                "the C core reported transform type {v}"
            ))),
        }
    }
}

/// How mode arrays are ordered along each dimension (`opts.modeord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ModeOrder {
    /// CMCL order (the default): index `i` holds mode `k = i - floor(N/2)`, so modes run from
    /// `-floor(N/2)` to `ceil(N/2) - 1`.
    #[default]
    Cmcl,
    /// FFT order: index `i` holds mode `k = i` for `i < ceil(N/2)`, else `k = i - N`.
    Fft,
}

impl ModeOrder {
    /// The C value (0 or 1).
    pub fn as_raw(self) -> c_int {
        match self {
            ModeOrder::Cmcl => 0,
            ModeOrder::Fft => 1,
        }
    }
}

/// How points meet the fine grid (spreading for type 1, interpolation for type 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// Let warpfft pick by its measured rules per type, dimension, precision, kernel width and
    /// point density (the default). [`Plan::info`] reports the method actually used.
    #[default]
    Auto,
    /// Points-driven over bin-sorted points, with global-memory atomics (`WARPFFT_METHOD_GM`).
    GlobalMemory,
    /// Subproblems: per-bin tiles in shared memory (`WARPFFT_METHOD_SM`).
    SharedMemory,
}

impl Method {
    /// The C value (`WARPFFT_METHOD_*`).
    pub fn as_raw(self) -> c_int {
        match self {
            Method::Auto => sys::WARPFFT_METHOD_AUTO as c_int,
            Method::GlobalMemory => sys::WARPFFT_METHOD_GM as c_int,
            Method::SharedMemory => sys::WARPFFT_METHOD_SM as c_int,
        }
    }

    pub(crate) fn from_raw(v: i32) -> Result<Self> {
        match v as sys::warpfft_method {
            sys::WARPFFT_METHOD_AUTO => Ok(Method::Auto),
            sys::WARPFFT_METHOD_GM => Ok(Method::GlobalMemory),
            sys::WARPFFT_METHOD_SM => Ok(Method::SharedMemory),
            _ => Err(Error::Internal(format!("the C core reported method {v}"))),
        }
    }
}

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
/// which run the same argument checks.
#[derive(Clone)]
pub struct PlanBuilder<T: Real> {
    ty: TransformType,
    n_modes: Vec<usize>,
    tol: f64,
    iflag: Option<i32>,
    modeord: ModeOrder,
    ntransf: usize,
    method: Method,
    upsampfac: f64,
    device: usize,
    stream: u64,
    bin_size: [usize; 3],
    max_subprob: usize,
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
            .field("modeord", &self.modeord)
            .field("ntransf", &self.ntransf)
            .field("method", &self.method)
            .field("upsampfac", &self.upsampfac)
            .field("device", &self.device)
            .field("stream", &self.stream)
            .field("bin_size", &self.bin_size)
            .field("max_subprob", &self.max_subprob)
            .finish()
    }
}

/// The C plan arguments a builder converts to.
struct RawArgs {
    ty: c_int,
    dim: c_int,
    n_modes: [i64; 3],
    iflag: c_int,
    ntransf: i64,
    opts: sys::warpfft_opts,
}

impl<T: Real> PlanBuilder<T> {
    fn new(ty: TransformType, n_modes: &[usize]) -> Self {
        PlanBuilder {
            ty,
            n_modes: n_modes.to_vec(),
            tol: T::DEFAULT_TOL,
            iflag: None,
            modeord: ModeOrder::Cmcl,
            ntransf: 1,
            method: Method::Auto,
            upsampfac: 2.0,
            device: 0,
            stream: 0,
            bin_size: [0; 3],
            max_subprob: 0,
            _real: PhantomData,
        }
    }

    /// Requested relative l2 accuracy against the exact sum. Supported: f32 `1e-6..=1e-1`,
    /// f64 `1e-13..=1e-1` (others give [`Error::BadTol`]). Default: [`Real::DEFAULT_TOL`].
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sign of the exponent: `>= 0` means `+1`, `< 0` means `-1`. Default: `+1` for type 1
    /// and `-1` for type 2 (so the default type 2 is the adjoint of the default type 1, as in
    /// FINUFFT's Python interface).
    pub fn iflag(mut self, iflag: i32) -> Self {
        self.iflag = Some(iflag);
        self
    }

    /// Order of the mode arrays. Default: [`ModeOrder::Cmcl`].
    pub fn modeord(mut self, modeord: ModeOrder) -> Self {
        self.modeord = modeord;
        self
    }

    /// Number of transforms executed together on one point set (`>= 1`, default 1). Batched
    /// arrays hold transform `t` at offset `t*M` (strengths) or `t*N1*N2*N3` (modes).
    pub fn ntransf(mut self, ntransf: usize) -> Self {
        self.ntransf = ntransf;
        self
    }

    /// Spreading/interpolation method. Default: [`Method::Auto`].
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Fine grid size / mode count per dimension: `2.0` (default) or `1.25` (smaller grid,
    /// wider kernel).
    pub fn upsampfac(mut self, upsampfac: f64) -> Self {
        self.upsampfac = upsampfac;
        self
    }

    /// CUDA device ordinal (default 0). Device buffers passed to the plan must live on it.
    pub fn device(mut self, device: usize) -> Self {
        self.device = device;
        self
    }

    /// Spreading bin edge per dimension in fine-grid points (entries past the dimension are
    /// ignored); `0` (the default) lets warpfft choose.
    pub fn bin_size(mut self, bin_size: [usize; 3]) -> Self {
        self.bin_size = bin_size;
        self
    }

    /// Points per shared-memory subproblem; `0` (the default) lets warpfft choose.
    pub fn max_subprob(mut self, max_subprob: usize) -> Self {
        self.max_subprob = max_subprob;
        self
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
    pub unsafe fn stream(mut self, stream: u64) -> Self {
        self.stream = stream;
        self
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
            None if self.ty == TransformType::Type1 => 1,
            None => -1,
        }
    }

    /// The mode order.
    pub fn mode_order(&self) -> ModeOrder {
        self.modeord
    }

    /// The device ordinal.
    pub fn device_ordinal(&self) -> usize {
        self.device
    }

    /// Converts to C arguments, with the Rust-side range checks (counts must fit C's types).
    fn raw_args(&self) -> Result<RawArgs> {
        let dim = self.n_modes.len();
        if !(1..=3).contains(&dim) {
            return Err(Error::BadDim(format!(
                "n_modes has {dim} entries ({:?}); the dimension must be 1, 2 or 3",
                self.n_modes
            )));
        }
        let mut n_modes = [1i64; 3];
        for (d, &n) in self.n_modes.iter().enumerate() {
            n_modes[d] = i64::try_from(n)
                .map_err(|_| Error::BadSize(format!("n_modes[{d}] = {n} does not fit int64")))?;
        }
        let ntransf = i64::try_from(self.ntransf).map_err(|_| {
            Error::BadSize(format!("ntransf = {} does not fit int64", self.ntransf))
        })?;
        let mut opts = default_opts()?;
        opts.modeord = self.modeord.as_raw();
        opts.method = self.method.as_raw();
        opts.device = device_ordinal(self.device)?;
        opts.upsampfac = self.upsampfac;
        opts.stream = self.stream;
        for (d, &b) in self.bin_size.iter().enumerate() {
            opts.bin_size[d] = i32::try_from(b).map_err(|_| {
                Error::InvalidArg(format!("bin_size[{d}] = {b} does not fit int32"))
            })?;
        }
        opts.max_subprob = i32::try_from(self.max_subprob).map_err(|_| {
            Error::InvalidArg(format!(
                "max_subprob = {} does not fit int32",
                self.max_subprob
            ))
        })?;
        Ok(RawArgs {
            ty: self.ty.as_raw(),
            dim: dim as c_int,
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

    /// Creates the plan on the GPU (`warpfft_plan_create`): loads the kernels it needs (JIT
    /// builds compile them now), creates the cuFFT plan and allocates the fine grid.
    ///
    /// Without a GPU this returns [`Error::NoDriver`] or [`Error::NoDevice`]
    /// ([`Error::is_no_gpu`]) with the C core's message.
    pub fn build(&self) -> Result<Plan<T>> {
        let a = self.raw_args()?;
        let mut raw: sys::warpfft_plan = std::ptr::null_mut();
        // SAFETY: all pointers are valid for the call; `raw` receives the new plan.
        check(unsafe {
            sys::warpfft_plan_create(
                a.ty,
                a.dim,
                a.n_modes.as_ptr(),
                a.iflag,
                a.ntransf,
                self.tol,
                T::PRECISION.as_raw(),
                &a.opts,
                &mut raw,
            )
        })?;
        if raw.is_null() {
            return Err(Error::Internal(
                "warpfft_plan_create succeeded but gave no plan".into(),
            ));
        }
        let mut n_modes = [1usize; 3];
        n_modes[..self.n_modes.len()].copy_from_slice(&self.n_modes);
        Ok(Plan {
            raw,
            ty: self.ty,
            dim: self.n_modes.len(),
            n_modes,
            ntransf: self.ntransf,
            iflag: a.iflag,
            modeord: self.modeord,
            device: a.opts.device,
            stream: self.stream,
            stored: Vec::new(),
            active: None,
            scratch_in: None,
            scratch_out: None,
        })
    }
}

/// `warpfft_opts_default` (no GPU involved).
fn default_opts() -> Result<sys::warpfft_opts> {
    let mut opts = std::mem::MaybeUninit::<sys::warpfft_opts>::zeroed();
    // SAFETY: `opts` is a valid out-pointer to plain data.
    check(unsafe { sys::warpfft_opts_default(opts.as_mut_ptr()) })?;
    // SAFETY: zero-initialised plain data, filled on success.
    Ok(unsafe { opts.assume_init() })
}

/// The point set the C plan uses now (after a successful setpts).
#[derive(Debug, Clone, Copy)]
struct ActivePoints {
    m: usize,
    xyz: [u64; 3],
    /// True when the arrays are the plan's own `stored` buffers (host upload or moved in);
    /// false for `set_points_raw`.
    owned: bool,
}

/// A NUFFT plan on one GPU, for one precision `T` (`f32` or `f64`).
///
/// Made by a [`PlanBuilder`]; the four verbs of the C ABI become: build → [`set_points`] →
/// [`execute`] (as often as needed, and new points at any time) → `Drop`
/// (`warpfft_plan_destroy`).
///
/// # Data layout
/// Modes (`fk`): `ntransf` arrays of `N1·N2·N3` complex values, dimension 1 fastest,
/// `fk[t*N + i1 + N1*(i2 + N2*i3)]`, each index mapped to a mode by the [`ModeOrder`].
/// Strengths (`c`): `ntransf` arrays of `M` complex values, `c[t*M + j]`. Points: one array of
/// `M` coordinates per dimension; any finite value is allowed (2π-periodic).
///
/// # Host slices or device buffers
/// * Host slices ([`set_points`], [`execute`]): data are copied to the GPU, the transform runs,
///   the plan waits for its stream and copies the result back. The plan keeps the uploaded
///   points and reusable staging buffers for `c`/`fk` in device memory between calls.
/// * [`DeviceBuffer`]s ([`set_device_points`], [`execute_device`]): no copies.
/// * Raw device pointers from other CUDA libraries ([`set_points_raw`], [`execute_raw`],
///   `unsafe`).
///
/// # Who owns the points
/// The C core keeps the point arrays' addresses after setpts and reads them at every execute,
/// so the arrays must outlive their use. The safe API makes that hold by ownership, not by a
/// lifetime on `Plan`: [`set_points`] uploads into buffers the plan owns, and
/// [`set_device_points`] *moves* the caller's [`DeviceBuffer`]s into the plan (get them back
/// with [`take_points`], after which the plan has no points). A plan therefore never borrows
/// anything, can be stored and sent freely, and the compiler rules out freeing points still in
/// use. To share point arrays without moving them, use [`set_points_raw`], whose safety
/// contract carries the lifetime obligation. The Rust side also remembers whether the C plan's
/// points are valid: after a failed `set_points` or a `take_points`, `execute` returns
/// [`Error::NoPoints`] without calling into C.
///
/// # Streams
/// Work runs on the legacy default stream `0` unless the builder was given another
/// ([`PlanBuilder::stream`]). On stream `0`, `execute_device` returns as soon as the work is
/// enqueued: later [`DeviceBuffer`] copies (and frees) are ordered after it by that stream's
/// semantics. On another stream the device-buffer methods wait for the stream before they
/// return; `execute_raw` never waits; [`synchronize`](Plan::synchronize) waits explicitly.
///
/// # Threads
/// `Plan` is `Send` but not `Sync`: the C header allows one thread at a time per plan
/// (different plans concurrently), which is exactly what `Send` + `&mut self` give. Moving a
/// plan to another thread is fine; sharing `&Plan` between threads is not allowed:
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<warpfft::Plan<f32>>();
/// ```
///
/// [`set_points`]: Plan::set_points
/// [`execute`]: Plan::execute
/// [`set_device_points`]: Plan::set_device_points
/// [`execute_device`]: Plan::execute_device
/// [`take_points`]: Plan::take_points
/// [`set_points_raw`]: Plan::set_points_raw
/// [`execute_raw`]: Plan::execute_raw
pub struct Plan<T: Real> {
    raw: sys::warpfft_plan,
    ty: TransformType,
    dim: usize,
    n_modes: [usize; 3],
    ntransf: usize,
    iflag: i32,
    modeord: ModeOrder,
    device: c_int,
    stream: u64,
    /// Point buffers the plan owns (uploaded from the host or moved in).
    stored: Vec<DeviceBuffer<T>>,
    /// What the C plan uses now; `None` before a successful setpts, after a failed one, and
    /// after `take_points` took the arrays it used.
    active: Option<ActivePoints>,
    /// Staging buffers of the host-slice `execute` (input and output side), reused.
    scratch_in: Option<DeviceBuffer<Complex<T>>>,
    scratch_out: Option<DeviceBuffer<Complex<T>>>,
}

// SAFETY: the C plan may be used from any thread, one at a time (warpfft.h, "Threads"); every
// method that calls into it takes `&self` or `&mut self`, and without `Sync` no two threads
// can hold references at once. The buffers it owns are `Send`.
unsafe impl<T: Real> Send for Plan<T> {}

impl<T: Real> Plan<T> {
    /// A builder for a type-1 plan (points → modes) with `n_modes = [N1]`, `[N1, N2]` or
    /// `[N1, N2, N3]` (its length is the dimension).
    pub fn type1(n_modes: &[usize]) -> PlanBuilder<T> {
        PlanBuilder::new(TransformType::Type1, n_modes)
    }

    /// A builder for a type-2 plan (modes → points); see [`Plan::type1`].
    pub fn type2(n_modes: &[usize]) -> PlanBuilder<T> {
        PlanBuilder::new(TransformType::Type2, n_modes)
    }

    /// A builder for a plan of type `ty`; see [`Plan::type1`].
    pub fn builder(ty: TransformType, n_modes: &[usize]) -> PlanBuilder<T> {
        PlanBuilder::new(ty, n_modes)
    }

    /// The transform type.
    pub fn transform_type(&self) -> TransformType {
        self.ty
    }

    /// The dimension (1, 2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Mode counts per dimension (`dim` entries).
    pub fn n_modes(&self) -> &[usize] {
        &self.n_modes[..self.dim]
    }

    /// Number of transforms per execute.
    pub fn ntransf(&self) -> usize {
        self.ntransf
    }

    /// The exponent sign (`+1` or `-1`).
    pub fn sign(&self) -> i32 {
        self.iflag
    }

    /// The mode order.
    pub fn mode_order(&self) -> ModeOrder {
        self.modeord
    }

    /// The CUDA device ordinal.
    pub fn device(&self) -> usize {
        self.device as usize
    }

    /// The stream the plan enqueues on (`0` = legacy default stream).
    pub fn stream(&self) -> u64 {
        self.stream
    }

    /// The number of points `M` of the current point set, or `None` when no point set is
    /// active (before `set_points`, after a failed one, after `take_points`).
    pub fn n_points(&self) -> Option<usize> {
        self.active.map(|a| a.m)
    }

    /// Modes per transform, `N1·N2·N3`.
    pub fn modes_per_transform(&self) -> usize {
        self.n_modes.iter().product()
    }

    /// Length of a mode array for a whole batch: `ntransf·N1·N2·N3`.
    pub fn fk_len(&self) -> usize {
        self.ntransf * self.modes_per_transform()
    }

    /// Length of a strength array for a whole batch, `ntransf·M`, once points are set.
    pub fn c_len(&self) -> Option<usize> {
        self.n_points().map(|m| m * self.ntransf)
    }

    /// The raw C handle, for calling `warpfft::sys` functions directly. It stays owned by this
    /// `Plan` (do not destroy it).
    pub fn as_raw(&self) -> sys::warpfft_plan {
        self.raw
    }

    /// What the plan chose (`warpfft_plan_get_info`): kernel width, fine grid, method actually
    /// used, current `M`, workspace bytes.
    pub fn info(&self) -> Result<PlanInfo> {
        let mut info = std::mem::MaybeUninit::<sys::warpfft_plan_info>::zeroed();
        // SAFETY: `raw` is a live plan; `info` is a valid out-pointer.
        check(unsafe { sys::warpfft_plan_get_info(self.raw, info.as_mut_ptr()) })?;
        // SAFETY: zero-initialised plain data, filled on success.
        PlanInfo::from_raw(unsafe { &info.assume_init() })
    }

    /// Device bytes the C plan holds now: fine grid, cuFFT work area, sort and bin arrays
    /// (`warpfft_plan_workspace_bytes`). Not included: the point and staging buffers the Rust
    /// `Plan` keeps for host-slice calls.
    pub fn workspace_bytes(&self) -> Result<usize> {
        let mut bytes = 0usize;
        // SAFETY: `raw` is a live plan; `bytes` is a valid out-pointer.
        check(unsafe { sys::warpfft_plan_workspace_bytes(self.raw, &mut bytes) })?;
        Ok(bytes)
    }

    /// Waits until all work enqueued on the plan's stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: plain call; the stream was declared valid when the plan was built.
        check(unsafe { sys::warpfft_stream_sync(self.device, self.stream) })
    }

    /// Waits for the stream when it is not the legacy default one (see "Streams").
    fn sync_if_custom_stream(&self) -> Result<()> {
        if self.stream != 0 {
            self.synchronize()?;
        }
        Ok(())
    }

    /// Checks the coordinate arrays: one per dimension, equal lengths. Returns `M`.
    fn check_coords(&self, lens: &[usize]) -> Result<usize> {
        if lens.len() != self.dim {
            return Err(shape(format!(
                "set_points: {} coordinate arrays given, the plan is {}-dimensional (one array \
                 per dimension: x, y, z)",
                lens.len(),
                self.dim
            )));
        }
        let m = lens[0];
        if let Some(d) = lens.iter().position(|&l| l != m) {
            return Err(shape(format!(
                "set_points: coordinate arrays differ in length: {} has {} points, x has {m}",
                ["x", "y", "z"][d],
                lens[d]
            )));
        }
        if m.checked_mul(self.ntransf)
            .and_then(|n| i64::try_from(n).ok())
            .is_none()
        {
            return Err(Error::BadNpoints(format!(
                "M = {m} points (times ntransf = {}) do not fit int64",
                self.ntransf
            )));
        }
        Ok(m)
    }

    /// Calls setpts on the plan's `stored` buffers and records them as active.
    fn setpts_stored(&mut self, m: usize) -> Result<()> {
        let mut xyz = [0u64; 3];
        for (d, b) in self.stored.iter().enumerate() {
            xyz[d] = b.as_raw();
        }
        // SAFETY: the arrays are `stored` buffers of `m` elements on the plan's device; the plan
        // owns them until the next set_points / take_points / drop, and `active` is cleared
        // before any of those could free them.
        unsafe { self.setpts_ptrs(m, xyz, true) }
    }

    /// setpts with device addresses; on success records the active point set.
    ///
    /// # Safety
    /// As [`Plan::set_points_raw`].
    unsafe fn setpts_ptrs(&mut self, m: usize, xyz: [u64; 3], owned: bool) -> Result<()> {
        self.active = None;
        let ptr = |a: u64| a as *const c_void;
        check(sys::warpfft_setpts(
            self.raw,
            T::PRECISION.as_raw(),
            m as i64,
            ptr(xyz[0]),
            ptr(xyz[1]),
            ptr(xyz[2]),
        ))?;
        self.active = Some(ActivePoints { m, xyz, owned });
        Ok(())
    }

    /// Sets the `M` non-uniform points from host slices: one slice of `M` coordinates per
    /// dimension (`&[&x]`, `&[&x, &y]` or `&[&x, &y, &z]`). Coordinates may be any finite
    /// values (2π-periodic).
    ///
    /// The coordinates are uploaded into device buffers the plan owns (reused when `M` is
    /// unchanged), then bin-sorted on the GPU. Errors: [`Error::Shape`] (wrong number of arrays
    /// or unequal lengths, checked before any GPU work), [`Error::BadPoints`] (a NaN or
    /// infinite coordinate). After an error the plan has no points until the next successful
    /// `set_points*`.
    pub fn set_points<S: AsRef<[T]>>(&mut self, coords: &[S]) -> Result<()> {
        let lens: Vec<usize> = coords.iter().map(|c| c.as_ref().len()).collect();
        let m = self.check_coords(&lens)?;
        // The C plan may point into `stored`: forget the active set, and let work still
        // reading it finish, before overwriting or freeing it.
        self.active = None;
        self.sync_if_custom_stream()?;
        let reusable = self.stored.len() == self.dim
            && self
                .stored
                .iter()
                .all(|b| b.len() == m && b.device() == self.device());
        if reusable {
            for (buf, c) in self.stored.iter_mut().zip(coords) {
                buf.copy_from(c.as_ref())?;
            }
        } else {
            self.stored.clear();
            for c in coords {
                self.stored
                    .push(DeviceBuffer::from_slice_on(self.device(), c.as_ref())?);
            }
        }
        self.setpts_stored(m)?;
        self.sync_if_custom_stream()
    }

    /// Sets the points from device buffers, one per dimension, which the plan takes ownership
    /// of (no copy): `plan.set_device_points([x, y])?`. Get them back with
    /// [`take_points`](Plan::take_points).
    ///
    /// The buffers must be on the plan's device and of equal length ([`Error::Shape`]
    /// otherwise). The plan keeps the buffers even when this fails, so `take_points` returns
    /// them in every case; after an error the plan has no points.
    pub fn set_device_points<I>(&mut self, coords: I) -> Result<()>
    where
        I: IntoIterator<Item = DeviceBuffer<T>>,
    {
        self.active = None;
        let coords: Vec<DeviceBuffer<T>> = coords.into_iter().collect();
        // The buffers being replaced may still be read by work on a custom stream.
        if let Err(e) = self.sync_if_custom_stream() {
            self.stored = coords;
            return Err(e);
        }
        self.stored = coords;
        let lens: Vec<usize> = self.stored.iter().map(|b| b.len()).collect();
        let m = self.check_coords(&lens)?;
        if let Some(b) = self.stored.iter().find(|b| b.device() != self.device()) {
            return Err(shape(format!(
                "set_device_points: a buffer is on device {}, the plan on device {}",
                b.device(),
                self.device
            )));
        }
        self.setpts_stored(m)?;
        self.sync_if_custom_stream()
    }

    /// Takes back the point buffers the plan owns (those moved in by
    /// [`set_device_points`](Plan::set_device_points) or uploaded by
    /// [`set_points`](Plan::set_points)); empty if it owns none. If the plan's active point
    /// set was made of them, the plan has no points afterwards ([`Error::NoPoints`] until the
    /// next `set_points*`).
    ///
    /// With a custom stream, this first waits for the stream (work enqueued by
    /// [`execute_raw`](Plan::execute_raw) may still read the points).
    pub fn take_points(&mut self) -> Vec<DeviceBuffer<T>> {
        if self.active.is_some_and(|a| a.owned) {
            self.active = None;
        }
        // Nothing to report an error to here; a failed wait means a broken context, in which
        // no further work on these buffers can run either.
        let _ = self.sync_if_custom_stream();
        std::mem::take(&mut self.stored)
    }

    /// Sets the points from raw device addresses (`CUdeviceptr` values, e.g. from another CUDA
    /// crate): `m` coordinates of type `T` at each of `x`, `y` (dim ≥ 2) and `z` (dim 3);
    /// pass `0` for unused dimensions. Like `warpfft_setpts`, it waits once for its own work
    /// on the plan's stream.
    ///
    /// # Safety
    /// `x`, `y`, `z` (those the dimension uses) must each point to `m` values of `T` in memory
    /// accessible from the plan's device, and must stay valid and unchanged until the next
    /// `set_points*` on this plan or its drop: the plan reads them at every execute (and in
    /// [`direct_sample`](Plan::direct_sample)).
    pub unsafe fn set_points_raw(&mut self, m: usize, x: u64, y: u64, z: u64) -> Result<()> {
        let lens = vec![m; self.dim];
        let m = self.check_coords(&lens)?;
        self.setpts_ptrs(m, [x, y, z], false)
    }

    /// The active point set, or [`Error::NoPoints`].
    fn active(&self, what: &str) -> Result<ActivePoints> {
        self.active.ok_or_else(|| {
            Error::NoPoints(format!(
                "{what}: the plan has no points (call set_points first; a failed set_points or \
                 take_points also clears them)"
            ))
        })
    }

    /// Lengths of (input, output) for a whole batch: type 1 (c, fk), type 2 (fk, c).
    fn io_lens(&self, m: usize) -> (usize, usize) {
        let (c, fk) = (self.ntransf * m, self.fk_len());
        match self.ty {
            TransformType::Type1 => (c, fk),
            TransformType::Type2 => (fk, c),
        }
    }

    /// Checks input/output lengths against the plan (`M` from the active points).
    fn check_io(&self, what: &str, input: usize, output: usize) -> Result<()> {
        let a = self.active(what)?;
        let (want_in, want_out) = self.io_lens(a.m);
        let (in_name, out_name) = match self.ty {
            TransformType::Type1 => ("input c (ntransf·M)", "output fk (ntransf·N1·N2·N3)"),
            TransformType::Type2 => ("input fk (ntransf·N1·N2·N3)", "output c (ntransf·M)"),
        };
        for (name, got, want) in [(in_name, input, want_in), (out_name, output, want_out)] {
            if got != want {
                return Err(shape(format!(
                    "{what}: {name} has {got} elements, the plan needs {want} (ntransf = {}, \
                     M = {}, modes = {:?})",
                    self.ntransf,
                    a.m,
                    self.n_modes()
                )));
            }
        }
        Ok(())
    }

    /// Calls execute with the input/output addresses in the C order (c, fk).
    ///
    /// # Safety
    /// As [`Plan::execute_raw`], with `input`/`output` in the plan type's order.
    unsafe fn execute_io(&mut self, input: u64, output: u64) -> Result<()> {
        let (c, fk) = match self.ty {
            TransformType::Type1 => (input, output),
            TransformType::Type2 => (output, input),
        };
        self.execute_raw(c, fk)
    }

    /// Runs the `ntransf` transforms on host data and waits for the result.
    ///
    /// * type 1: `input` = strengths `c` (`ntransf·M`), `output` = modes `fk`
    ///   (`ntransf·N1·N2·N3`);
    /// * type 2: `input` = modes `fk`, `output` = strengths `c`.
    ///
    /// Lengths are checked first ([`Error::Shape`]); without points, [`Error::NoPoints`]. The
    /// input is staged in device buffers the plan keeps for the next call.
    pub fn execute(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.check_io("execute", input.len(), output.len())?;
        let dev = self.device();
        let stage = |slot: &mut Option<DeviceBuffer<Complex<T>>>, len: usize| -> Result<()> {
            if slot.as_ref().map_or(true, |b| b.len() != len) {
                *slot = None; // free before allocating the new size
                *slot = Some(DeviceBuffer::zeros_on(dev, len)?);
            }
            Ok(())
        };
        stage(&mut self.scratch_in, input.len())?;
        stage(&mut self.scratch_out, output.len())?;
        let (din, dout) = match (&mut self.scratch_in, &self.scratch_out) {
            (Some(i), Some(o)) => (i, o.as_raw()),
            _ => unreachable!("staging buffers were just allocated"),
        };
        din.copy_from(input)?;
        let din = din.as_raw();
        // SAFETY: both are plan-owned buffers of the checked lengths on the plan's device; the
        // plan waits for the stream below before they can be touched again.
        unsafe { self.execute_io(din, dout)? };
        self.synchronize()?;
        match &self.scratch_out {
            Some(o) => o.copy_to(output),
            None => unreachable!("staging buffers were just allocated"),
        }
    }

    /// Runs the `ntransf` transforms on device buffers (no copies); `input`/`output` as in
    /// [`execute`](Plan::execute), both on the plan's device.
    ///
    /// On the legacy default stream this returns once the work is enqueued; reading `output`
    /// with [`DeviceBuffer::to_vec`] (or any later copy) waits for it. On another stream it
    /// waits for the stream before returning.
    pub fn execute_device(
        &mut self,
        input: &DeviceBuffer<Complex<T>>,
        output: &mut DeviceBuffer<Complex<T>>,
    ) -> Result<()> {
        self.check_io("execute_device", input.len(), output.len())?;
        for (name, b) in [("input", input.device()), ("output", output.device())] {
            if b != self.device() {
                return Err(shape(format!(
                    "execute_device: {name} is on device {b}, the plan on device {}",
                    self.device
                )));
            }
        }
        // SAFETY: lengths and devices checked; `output` is exclusively borrowed; with a custom
        // stream the call below waits before the borrows end, and on stream 0 later copies and
        // frees of these buffers are ordered after the work.
        unsafe { self.execute_io(input.as_raw(), output.as_raw())? };
        self.sync_if_custom_stream()
    }

    /// Runs the `ntransf` transforms on raw device addresses, in the C order: `c`
    /// (`ntransf·M` complex values of `T`, interleaved) and `fk` (`ntransf·N1·N2·N3`). Type 1
    /// reads `c` and writes `fk`; type 2 reads `fk` and writes `c`. Returns once the work is
    /// enqueued on the plan's stream (no wait).
    ///
    /// Returns [`Error::NoPoints`] without calling C when the plan has no active points.
    ///
    /// # Safety
    /// `c` and `fk` must point to arrays of at least those lengths in memory accessible from
    /// the plan's device, must not overlap, and must stay valid (and the input unchanged, the
    /// output unread) until the work on the plan's stream has finished.
    pub unsafe fn execute_raw(&mut self, c: u64, fk: u64) -> Result<()> {
        self.active("execute")?;
        check(sys::warpfft_execute(
            self.raw,
            T::PRECISION.as_raw(),
            c as *mut c_void,
            fk as *mut c_void,
        ))
    }

    /// Exact transform values, computed directly in double precision on the GPU
    /// (`warpfft_direct_sample`), at a sample of outputs of *one* transform, for checking
    /// accuracy. Uses the plan's current points, sign and mode order.
    ///
    /// `input` is one transform's input — type 1: `M` strengths; type 2: `N1·N2·N3` modes
    /// (for transform `t` of a batch pass `&c[t*M..(t+1)*M]`). `sample` indexes the outputs:
    /// type 1 mode-array indices (`< N1·N2·N3`, ordered per the mode order), type 2 point
    /// indices (`< M`). Returns one exact value per sample index; compare with
    /// [`relative_l2_error`](crate::relative_l2_error).
    pub fn direct_sample(
        &self,
        input: &[Complex<T>],
        sample: &[usize],
    ) -> Result<Vec<Complex<f64>>> {
        let out_len = self.direct_out_len("direct_sample", input.len())?;
        crate::direct::sample_indices(sample, out_len)?;
        let input = DeviceBuffer::from_slice_on(self.device(), input)?;
        self.direct_sample_device(&input, sample)
    }

    /// For direct sampling: the number of outputs per transform, after checking that points
    /// are set and that `input_len` is one transform's input.
    fn direct_out_len(&self, what: &str, input_len: usize) -> Result<usize> {
        let a = self.active(what)?;
        let (want, out_len) = match self.ty {
            TransformType::Type1 => (a.m, self.modes_per_transform()),
            TransformType::Type2 => (self.modes_per_transform(), a.m),
        };
        if input_len != want {
            return Err(shape(format!(
                "{what}: input has {input_len} elements, one transform's input has {want}"
            )));
        }
        Ok(out_len)
    }

    /// [`direct_sample`](Plan::direct_sample) with the input already in a device buffer.
    pub fn direct_sample_device(
        &self,
        input: &DeviceBuffer<Complex<T>>,
        sample: &[usize],
    ) -> Result<Vec<Complex<f64>>> {
        let out_len = self.direct_out_len("direct_sample_device", input.len())?;
        let idx = crate::direct::sample_indices(sample, out_len)?;
        let a = self.active("direct_sample_device")?;
        if input.device() != self.device() {
            return Err(shape(format!(
                "direct_sample: input is on device {}, the plan on device {}",
                input.device(),
                self.device
            )));
        }
        let problem = crate::direct::Problem {
            ty: self.ty,
            dim: self.dim,
            n_modes: self.n_modes,
            iflag: self.iflag,
            modeord: self.modeord,
            device: self.device,
            m: a.m,
            out_len,
        };
        // SAFETY: the active points are valid (owned by the plan, or promised by
        // set_points_raw's contract); `input` was checked to hold one transform's input.
        unsafe { crate::direct::direct_sample_raw::<T>(&problem, a.xyz, input.as_raw(), &idx) }
    }
}

impl<T: Real> Drop for Plan<T> {
    fn drop(&mut self) {
        // Work enqueued by execute_raw on a custom stream may still use the plan's point and
        // staging buffers; on stream 0, freeing orders itself after it.
        let _ = self.sync_if_custom_stream();
        // SAFETY: `raw` is a live plan, destroyed once. The point and staging buffers are
        // freed after it (fields drop after this body).
        unsafe {
            sys::warpfft_plan_destroy(self.raw);
        }
    }
}

impl<T: Real> fmt::Debug for Plan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("precision", &T::PRECISION)
            .field("type", &self.ty)
            .field("n_modes", &self.n_modes())
            .field("ntransf", &self.ntransf)
            .field("sign", &self.iflag)
            .field("modeord", &self.modeord)
            .field("device", &self.device)
            .field("stream", &self.stream)
            .field("n_points", &self.n_points())
            .finish()
    }
}

impl<T: Real> PlanBuilder<T> {
    /// The pieces of a direct-sum problem this builder describes (no points yet).
    pub(crate) fn direct_problem(&self, m: usize) -> Result<crate::direct::Problem> {
        let a = self.raw_args()?;
        let mut n_modes = [1usize; 3];
        n_modes[..self.n_modes.len()].copy_from_slice(&self.n_modes);
        let n: usize = n_modes.iter().product();
        Ok(crate::direct::Problem {
            ty: self.ty,
            dim: self.n_modes.len(),
            n_modes,
            iflag: a.iflag,
            modeord: self.modeord,
            device: a.opts.device,
            m,
            out_len: match self.ty {
                TransformType::Type1 => n,
                TransformType::Type2 => m,
            },
        })
    }
}
