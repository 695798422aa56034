//! [`Toeplitz`]: RAII over `warpfft_toeplitz`, the normal operator `T = Aᴴ W A` as a
//! convolution (docs/toeplitz.md), with its [`ToeplitzBuilder`] and [`ToeplitzInfo`].
//!
//! `A` is the type-2 transform of sign `iflag` over `M` points, `Aᴴ` the type-1 transform of
//! sign `-iflag`, `W` the [`Weights`]. Building the operator computes the spectrum of its
//! kernel `K(m) = Σ_j w_j exp(-iflag·i m·x_j)` (a type-1 transform of about `2N` modes and an
//! FFT); each application is then a zero-padded FFT, a product with the spectrum, an inverse
//! FFT and a crop.

use std::ffi::c_void;
use std::fmt;
use std::os::raw::c_int;

use num_complex::Complex;

use crate::builder;
use crate::device::{check_on_device, DeviceBuffer};
use crate::error::{check, shape, Error, Result};
use crate::options::Record;
use crate::sys;
use crate::types::{Method, ModeOrder, Precision, Real};

/// The weights `W` of `T = Aᴴ W A`, one per point.
#[derive(Debug, Clone, Copy)]
pub enum Weights<'a, T: Real> {
    /// `W = I`.
    None,
    /// Real weights (e.g. density compensation): `T` is Hermitian, its spectrum real.
    Real(&'a [T]),
    /// Complex weights: `Tᴴ = Aᴴ conj(W) A` ([`Toeplitz::apply_adjoint`]).
    Complex(&'a [Complex<T>]),
}

impl<T: Real> Weights<'_, T> {
    fn kind(&self) -> c_int {
        match self {
            Weights::None => sys::WARPFFT_WEIGHTS_NONE as c_int,
            Weights::Real(_) => sys::WARPFFT_WEIGHTS_REAL as c_int,
            Weights::Complex(_) => sys::WARPFFT_WEIGHTS_COMPLEX as c_int,
        }
    }

    fn len(&self) -> Option<usize> {
        match self {
            Weights::None => None,
            Weights::Real(w) => Some(w.len()),
            Weights::Complex(w) => Some(w.len()),
        }
    }
}

/// What an operator holds or would hold (`warpfft_toeplitz_info`); per-dimension arrays in the
/// C order (dimension 1 first), `1` for unused dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct ToeplitzInfo {
    /// 1, 2 or 3.
    pub dim: usize,
    /// The operator's precision.
    pub precision: Precision,
    /// The sign of `A` (`+1`/`-1`); `0` from [`ToeplitzBuilder::params`].
    pub iflag: i32,
    /// Whether the spectrum is real (weights none or real).
    pub spectrum_real: bool,
    /// Modes `N_d`.
    pub n_modes: [usize; 3],
    /// The grid `L_d`: the smallest even 2,3,5,7-smooth integer ≥ `2 N_d − 1`.
    pub n_grid: [usize; 3],
    /// Mode arrays per application.
    pub ntransf: usize,
    /// `M` (0: the zero operator); `None` from [`ToeplitzBuilder::params`].
    pub n_points: Option<usize>,
    /// The operator's tolerance and its kernel's type-1 tolerance.
    pub tol: f64,
    /// The kernel's type-1 tolerance (`tol / 2`, at least the precision's smallest).
    pub kernel_tol: f64,
    /// The kernel's type-1 spreading width.
    pub kernel_width: usize,
    /// The application's FFT: 1 cuFFT plan of the whole grid, or 2 steps that skip the padding
    /// (larger grids; `WARPFFT_TOEPLITZ_FFT=full|pruned` overrides).
    pub fft_steps: usize,
    /// The kernel's type-1 upsampling factor.
    pub kernel_upsampfac: f64,
    /// The kernel's type-1 fine grid.
    pub kernel_fine: [usize; 3],
    /// Wall time of building the operator, ms (0 from `params`).
    pub build_ms: f64,
    /// The spectrum: `L1·L2·L3` reals (complexes with complex weights); 0 for `M = 0`.
    pub spectrum_bytes: usize,
    /// The work grid: `ntransf·L1·L2·L3` complexes.
    pub grid_bytes: usize,
    /// Device bytes held: spectrum, grid and cuFFT's work area (`params`: without cuFFT's).
    pub workspace_bytes: usize,
}

impl ToeplitzInfo {
    fn from_raw(i: &sys::warpfft_toeplitz_info) -> Result<Self> {
        let u = |v: i64| usize::try_from(v).unwrap_or(0);
        let arr = |a: &[i64; 3]| [u(a[0]), u(a[1]), u(a[2])];
        Ok(ToeplitzInfo {
            dim: i.dim as usize,
            precision: Precision::from_raw(i.precision)?,
            iflag: i.iflag,
            spectrum_real: i.spectrum_real != 0,
            n_modes: arr(&i.n_modes),
            n_grid: arr(&i.n_grid),
            ntransf: u(i.ntransf),
            n_points: usize::try_from(i.n_points).ok(),
            tol: i.tol,
            kernel_tol: i.kernel_tol,
            kernel_width: i.kernel_width.max(0) as usize,
            fft_steps: i.fft_steps.max(0) as usize,
            kernel_upsampfac: i.kernel_upsampfac,
            kernel_fine: arr(&i.kernel_fine),
            build_ms: i.build_ms,
            spectrum_bytes: i.spectrum_bytes,
            grid_bytes: i.grid_bytes,
            workspace_bytes: i.workspace_bytes,
        })
    }
}

/// Options of a [`Toeplitz`] operator; made by [`Toeplitz::builder`].
///
/// ```
/// use warpfft::{Toeplitz, Weights};
///
/// // The sizes an operator for 256 × 256 modes would hold, without a GPU:
/// let info = Toeplitz::<f32>::builder(&[256, 256]).tol(1e-5).params(Weights::None)?;
/// assert_eq!(info.n_grid[..2], [512, 512]);
/// assert_eq!(info.spectrum_bytes, 512 * 512 * 4); // real: no weights
/// # Ok::<(), warpfft::Error>(())
/// ```
#[derive(Clone)]
pub struct ToeplitzBuilder<T: Real> {
    n_modes: Vec<usize>,
    tol: f64,
    iflag: i32,
    ntransf: usize,
    opts: Record,
    _real: std::marker::PhantomData<T>,
}

impl<T: Real> fmt::Debug for ToeplitzBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToeplitzBuilder")
            .field("precision", &T::PRECISION)
            .field("n_modes", &self.n_modes)
            .field("tol", &self.tol)
            .field("iflag", &self.iflag)
            .field("ntransf", &self.ntransf)
            .field("opts", &self.opts)
            .finish()
    }
}

struct RawArgs {
    dim: c_int,
    n_modes: [i64; 3],
    ntransf: i64,
    opts: sys::warpfft_opts,
}

impl<T: Real> ToeplitzBuilder<T> {
    /// The requested relative l2 accuracy of `T f` against type 2 + weights + type 1 (default
    /// [`Real::DEFAULT_TOL`]).
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// The sign of `A`, the type-2 transform (default `-1`); `Aᴴ` has the opposite sign.
    pub fn iflag(mut self, iflag: i32) -> Self {
        self.iflag = if iflag >= 0 { 1 } else { -1 };
        self
    }

    /// Mode arrays per application (default 1).
    pub fn ntransf(mut self, ntransf: usize) -> Self {
        self.ntransf = ntransf;
        self
    }

    /// Sets any option of the option table by name or alias, as
    /// [`PlanBuilder::option`](crate::PlanBuilder::option): the mode order is the mode
    /// arrays', the others drive the kernel's type-1 transform.
    pub fn option(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.opts.set(name, value);
        self
    }

    /// The mode order of the mode arrays (default CMCL).
    pub fn modeord(self, modeord: ModeOrder) -> Self {
        self.option("modeord", modeord.as_raw())
    }

    /// The spreading method of the kernel's type-1 transform (default auto).
    pub fn method(self, method: Method) -> Self {
        self.option("method", method.as_raw())
    }

    /// The upsampling factor of the kernel's type-1 transform: `0.0` (the default, as for a
    /// plan) chooses it per plan with the kernel width, or any value in `1.25..=3.0`
    /// ([`ToeplitzInfo::kernel_upsampfac`] says what was used).
    pub fn upsampfac(self, upsampfac: f64) -> Self {
        self.option("upsampfac", upsampfac)
    }

    /// The CUDA device ordinal (default 0).
    pub fn device(self, device: usize) -> Self {
        self.option("device", device)
    }

    /// Runs everything on `stream` (a `CUstream` as an integer; default `0`, the legacy
    /// stream).
    ///
    /// # Safety
    /// The stream must belong to the builder's device and outlive the operator.
    pub unsafe fn stream(self, stream: u64) -> Self {
        self.option("stream", stream)
    }

    fn raw_args(&self) -> Result<RawArgs> {
        let (dim, n_modes, ntransf) = builder::shape(&self.n_modes, self.ntransf)?;
        let opts = self.opts.get()?;
        Ok(RawArgs {
            dim,
            n_modes,
            ntransf,
            opts,
        })
    }

    /// What [`build`](ToeplitzBuilder::build) would hold for weights of this kind (grid,
    /// spectrum and grid bytes, the kernel's tolerance, width and fine grid), without a GPU.
    pub fn params(&self, weights: Weights<'_, T>) -> Result<ToeplitzInfo> {
        let a = self.raw_args()?;
        let mut info = std::mem::MaybeUninit::<sys::warpfft_toeplitz_info>::zeroed();
        // SAFETY: all pointers are valid for the call; `info` is plain data the call fills.
        check(unsafe {
            sys::warpfft_toeplitz_params(
                a.dim,
                a.n_modes.as_ptr(),
                a.ntransf,
                self.tol,
                T::PRECISION.as_raw(),
                &a.opts,
                weights.kind(),
                info.as_mut_ptr(),
            )
        })?;
        // SAFETY: zero-initialised plain data, filled on success.
        ToeplitzInfo::from_raw(unsafe { &info.assume_init() })
    }

    /// Builds the operator for the points `coords` (one slice of `M` coordinates per
    /// dimension) and `weights`: uploads them, computes the kernel's spectrum on the GPU and
    /// waits for it. With `M = 0` the operator is zero.
    pub fn build<S: AsRef<[T]>>(
        &self,
        coords: &[S],
        weights: Weights<'_, T>,
    ) -> Result<Toeplitz<T>> {
        let a = self.raw_args()?;
        let dim = a.dim as usize;
        if coords.len() != dim {
            return Err(shape(format!(
                "{} coordinate slices for a {dim}D operator",
                coords.len()
            )));
        }
        let m = coords[0].as_ref().len();
        if coords.iter().any(|c| c.as_ref().len() != m) {
            return Err(shape("the coordinate slices differ in length"));
        }
        if let Some(n) = weights.len() {
            if n != m {
                return Err(shape(format!("{n} weights for {m} points")));
            }
        }
        let dev = usize::try_from(a.opts.device).unwrap_or(0); // the table keeps it >= 0
        let bufs = coords
            .iter()
            .map(|c| DeviceBuffer::from_slice_on(dev, c.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let wr = match weights {
            Weights::Real(w) => Some(DeviceBuffer::from_slice_on(dev, w)?),
            _ => None,
        };
        let wc = match weights {
            Weights::Complex(w) => Some(DeviceBuffer::from_slice_on(dev, w)?),
            _ => None,
        };
        let wptr = match (&wr, &wc) {
            (Some(b), _) => b.as_ptr(),
            (_, Some(b)) => b.as_ptr(),
            _ => std::ptr::null(),
        };
        let p = |d: usize| bufs.get(d).map_or(std::ptr::null(), |b| b.as_ptr());
        let m64 = i64::try_from(m).map_err(|_| Error::BadNpoints(format!("M = {m}")))?;
        let mut raw: sys::warpfft_toeplitz = std::ptr::null_mut();
        // SAFETY: the buffers hold M values each on the device; create waits for its work, so
        // they may be dropped when it returns; `raw` receives the operator.
        check(unsafe {
            sys::warpfft_toeplitz_create(
                a.dim,
                a.n_modes.as_ptr(),
                self.iflag,
                a.ntransf,
                self.tol,
                T::PRECISION.as_raw(),
                &a.opts,
                m64,
                p(0),
                p(1),
                p(2),
                weights.kind(),
                wptr,
                &mut raw,
            )
        })?;
        drop((bufs, wr, wc));
        let mut n_modes = [1usize; 3];
        n_modes[..dim].copy_from_slice(&self.n_modes);
        Ok(Toeplitz {
            raw,
            n_modes,
            ntransf: self.ntransf,
            device: a.opts.device,
            stream: a.opts.stream,
            scratch: None,
            _real: std::marker::PhantomData,
        })
    }
}

/// The normal operator `T = Aᴴ W A` on one GPU, for precision `T`.
///
/// Made by [`Toeplitz::builder`] → [`ToeplitzBuilder::build`]; then [`apply`] (host slices),
/// [`apply_device`] ([`DeviceBuffer`]s) as often as needed; `Drop` destroys it. Mode arrays:
/// `ntransf` arrays of `N1·N2·N3` values, dimension 1 fastest, as [`Plan`]'s.
///
/// `Toeplitz` is `Send`, not `Sync` (one thread at a time per operator, as plans).
///
/// [`apply`]: Toeplitz::apply
/// [`apply_device`]: Toeplitz::apply_device
/// [`Plan`]: crate::Plan
pub struct Toeplitz<T: Real> {
    raw: sys::warpfft_toeplitz,
    n_modes: [usize; 3],
    ntransf: usize,
    device: c_int,
    stream: u64,
    scratch: Option<DeviceBuffer<Complex<T>>>,
    _real: std::marker::PhantomData<T>,
}

// SAFETY: the C operator may be used from any thread, one at a time; every method takes
// `&self` or `&mut self`, and without `Sync` no two threads can hold references at once.
unsafe impl<T: Real> Send for Toeplitz<T> {}

impl<T: Real> Toeplitz<T> {
    /// A builder for an operator on `n_modes` (1 to 3 mode counts, dimension 1 first).
    pub fn builder(n_modes: &[usize]) -> ToeplitzBuilder<T> {
        ToeplitzBuilder {
            n_modes: n_modes.to_vec(),
            tol: T::DEFAULT_TOL,
            iflag: -1,
            ntransf: 1,
            opts: Record::new(),
            _real: std::marker::PhantomData,
        }
    }

    /// The length of a batch of mode arrays (`ntransf·N1·N2·N3`).
    pub fn len(&self) -> usize {
        self.ntransf * self.n_modes.iter().product::<usize>()
    }

    /// Always false: an operator has at least one mode.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The raw C handle (for calls the safe API does not wrap).
    pub fn as_raw(&self) -> sys::warpfft_toeplitz {
        self.raw
    }

    /// What the operator holds (`warpfft_toeplitz_get_info`).
    pub fn info(&self) -> Result<ToeplitzInfo> {
        let mut info = std::mem::MaybeUninit::<sys::warpfft_toeplitz_info>::zeroed();
        // SAFETY: a live operator and a valid out-pointer.
        check(unsafe { sys::warpfft_toeplitz_get_info(self.raw, info.as_mut_ptr()) })?;
        // SAFETY: filled on success.
        ToeplitzInfo::from_raw(unsafe { &info.assume_init() })
    }

    /// Device bytes held: spectrum, work grid and cuFFT's work area.
    pub fn workspace_bytes(&self) -> Result<usize> {
        let mut n = 0usize;
        // SAFETY: a live operator and a valid out-pointer.
        check(unsafe { sys::warpfft_toeplitz_workspace_bytes(self.raw, &mut n) })?;
        Ok(n)
    }

    /// Waits for the operator's stream.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: plain call.
        check(unsafe { sys::warpfft_stream_sync(self.device, self.stream) })
    }

    fn check_len(&self, what: &str, input: usize, output: usize) -> Result<()> {
        if input != self.len() || output != self.len() {
            return Err(shape(format!(
                "{what}: input has {input} and output {output} values; the operator takes \
                 ntransf·N1·N2·N3 = {}",
                self.len()
            )));
        }
        Ok(())
    }

    /// `output = T input` on host data (staged through a device buffer the operator keeps);
    /// waits for the result.
    pub fn apply(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.apply_host(false, input, output)
    }

    /// `output = Tᴴ input` (the same as [`apply`](Toeplitz::apply) unless the weights are
    /// complex).
    pub fn apply_adjoint(&mut self, input: &[Complex<T>], output: &mut [Complex<T>]) -> Result<()> {
        self.apply_host(true, input, output)
    }

    fn apply_host(
        &mut self,
        adjoint: bool,
        input: &[Complex<T>],
        output: &mut [Complex<T>],
    ) -> Result<()> {
        self.check_len("apply", input.len(), output.len())?;
        let b = DeviceBuffer::staging(&mut self.scratch, self.device as usize, input.len())?;
        b.copy_from(input)?;
        let p = b.as_raw() as *mut c_void;
        // SAFETY: the operator's own buffer of the checked length, in place (allowed); it waits
        // below before the buffer is touched again.
        check(unsafe {
            sys::warpfft_toeplitz_apply(self.raw, T::PRECISION.as_raw(), adjoint as c_int, p, p)
        })?;
        self.synchronize()?;
        match &self.scratch {
            Some(b) => b.copy_to(output),
            None => unreachable!("the staging buffer was just allocated"),
        }
    }

    /// `output = T input` (or `Tᴴ` with `adjoint`) on device buffers of the operator's device
    /// (no copies). On the legacy stream it returns once the work is enqueued; on another it
    /// waits for the stream.
    pub fn apply_device(
        &mut self,
        input: &DeviceBuffer<Complex<T>>,
        output: &mut DeviceBuffer<Complex<T>>,
        adjoint: bool,
    ) -> Result<()> {
        self.check_len("apply_device", input.len(), output.len())?;
        check_on_device(
            "apply_device",
            "operator",
            self.device as usize,
            input.device(),
            output.device(),
        )?;
        // SAFETY: lengths and devices checked; `output` is exclusively borrowed; on a custom
        // stream the call below waits before the borrows end, on stream 0 later copies and
        // frees are ordered after the work.
        check(unsafe {
            sys::warpfft_toeplitz_apply(
                self.raw,
                T::PRECISION.as_raw(),
                adjoint as c_int,
                input.as_ptr(),
                output.as_mut_ptr(),
            )
        })?;
        if self.stream != 0 {
            self.synchronize()?;
        }
        Ok(())
    }
}

impl<T: Real> Drop for Toeplitz<T> {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once; a failure leaves it valid, and nothing
        // can be done about it in Drop beyond trying again once.
        unsafe {
            if sys::warpfft_toeplitz_destroy(self.raw) != sys::WARPFFT_SUCCESS {
                sys::warpfft_toeplitz_destroy(self.raw);
            }
        }
    }
}

impl<T: Real> fmt::Debug for Toeplitz<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toeplitz")
            .field("precision", &T::PRECISION)
            .field("n_modes", &self.n_modes)
            .field("ntransf", &self.ntransf)
            .field("device", &self.device)
            .field("stream", &self.stream)
            .finish()
    }
}
