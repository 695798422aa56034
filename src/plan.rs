//! [`Plan`]: RAII over `warpfft_plan`. [`PlanBuilder::build`] makes it; here are its
//! accessors, the `execute*` paths, `direct_sample*` on its points, and `Drop`. Setting the
//! points (and knowing which set the C plan reads) is in `plan/points.rs`.

mod points;

use std::ffi::c_void;
use std::fmt;
use std::os::raw::c_int;

use num_complex::Complex;

use crate::builder::PlanBuilder;
use crate::device::{check_on_device, DeviceBuffer};
use crate::direct::{self, Problem};
use crate::error::{check, shape, Error, Result};
use crate::info::PlanInfo;
use crate::sys;
use crate::types::{ModeOrder, Real, TransformType};

use points::ActivePoints;

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
/// `M` coordinates per dimension; any finite value is allowed (2π-periodic). With batched
/// points ([`set_point_sets`](Plan::set_point_sets)) each array holds `n_sets` sets of `M`
/// coordinates, one after the other, and transform `t` uses set `t / (ntransf / n_sets)`; `c`
/// and `fk` keep their layout.
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
    /// Type 3: the target buffers the plan owns (uploaded by `set_points3`).
    stored_targets: Vec<DeviceBuffer<T>>,
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

impl<T: Real> PlanBuilder<T> {
    /// Creates the plan on the GPU (`warpfft_plan_create`): loads the kernels it needs (JIT
    /// builds compile them now), creates the cuFFT plan and allocates the fine grid.
    ///
    /// Without a GPU this returns [`Error::NoDriver`] or [`Error::NoDevice`]
    /// ([`Error::is_no_gpu`]) with the C core's message. A builder with option `real_data`
    /// set gives [`Error::InvalidArg`]: a real plan's data are not this plan's complex slices;
    /// build it with [`build_real`](PlanBuilder::build_real) (a [`RealPlan`](crate::RealPlan)).
    pub fn build(&self) -> Result<Plan<T>> {
        if self.raw_args()?.opts.real_data != 0 {
            return Err(Error::InvalidArg(
                "build: option real_data = 1 makes a plan on real strengths and half modes; \
                 build it with build_real (a RealPlan, whose execute takes them), or set \
                 real_data(false)"
                    .into(),
            ));
        }
        self.create()
    }

    /// Creates the C plan of the builder's arguments as they are (`build` and `build_real`).
    pub(crate) fn create(&self) -> Result<Plan<T>> {
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
            modeord: self.mode_order(),
            device: a.opts.device,
            stream: self.stream_handle(),
            stored: Vec::new(),
            stored_targets: Vec::new(),
            active: None,
            scratch_in: None,
            scratch_out: None,
        })
    }
}

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

    /// A builder for a type-3 plan (non-uniform points → non-uniform frequencies) in `dim`
    /// dimensions (1, 2 or 3). Points come with [`Plan::set_points3`] (sources and targets);
    /// `execute(&c, &mut f)` maps `ntransf·M` strengths to `ntransf·K` values
    /// `f[k] = Σ_j c[j] exp(±i s_k·x_j)`. The grids are chosen when the points are set
    /// ([`PlanBuilder::params3`] predicts them without a GPU).
    pub fn type3(dim: usize) -> PlanBuilder<T> {
        PlanBuilder::new(TransformType::Type3, &vec![1; dim])
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

    /// The number of points `M` of the current point set (of each set, with
    /// [`set_point_sets`](Plan::set_point_sets)), or `None` when no point set is active (before
    /// `set_points`, after a failed one, after `take_points`).
    pub fn n_points(&self) -> Option<usize> {
        self.active.map(|a| a.m)
    }

    /// The number of point sets of the current points: 1 after `set_points` (every transform
    /// takes the same points), `n_sets` after [`set_point_sets`](Plan::set_point_sets); `None`
    /// without points.
    pub fn n_sets(&self) -> Option<usize> {
        self.active.map(|a| a.n_sets)
    }

    /// Modes per transform, `N1·N2·N3`.
    pub fn modes_per_transform(&self) -> usize {
        self.n_modes.iter().product()
    }

    /// Length of a mode array for a whole batch: `ntransf·N1·N2·N3`; for type 3 the output
    /// length `ntransf·K` of the current targets (0 before `set_points3`).
    pub fn fk_len(&self) -> usize {
        match self.ty {
            TransformType::Type3 => self.active.map_or(0, |a| a.k * self.ntransf),
            _ => self.ntransf * self.modes_per_transform(),
        }
    }

    /// Type 3: the number of targets `K` of the current point set.
    pub fn n_targets(&self) -> Option<usize> {
        match self.ty {
            TransformType::Type3 => self.active.map(|a| a.k),
            _ => None,
        }
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
        let mut info = PlanInfo::from_raw(unsafe { &info.assume_init() })?;
        // After take_points the C plan still holds the (taken) arrays' addresses, but this
        // Plan has no points: report what execute would use, as n_points() does.
        info.n_points = self.n_points();
        info.n_sets = self.active.map(|a| a.n_sets);
        Ok(info)
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

    /// Waits for the plan's stream and reports whether the last point set held a NaN or
    /// infinite coordinate: [`Error::BadPoints`] if so (the plan keeps those points and its
    /// executes write NaN outputs), `Ok(())` if every coordinate was finite, and
    /// [`Error::NoPoints`] without points. Needed only with
    /// [`check_points(false)`](crate::PlanBuilder::check_points) (the default); checked plans
    /// and type 3 return `Ok(())` at once, having checked when the points were set.
    pub fn setpts_check(&self) -> Result<()> {
        // SAFETY: the handle is valid for the plan's lifetime; the call only reads the plan's
        // own result block back.
        check(unsafe { sys::warpfft_setpts_check(self.raw) })
    }

    /// Waits for the stream when it is not the legacy default one (see "Streams").
    fn sync_if_custom_stream(&self) -> Result<()> {
        if self.stream != 0 {
            self.synchronize()?;
        }
        Ok(())
    }

    /// Lengths of (input, output) for a whole batch: type 1 (c, fk), type 2 (fk, c), type 3
    /// (c, f).
    fn io_lens(&self, m: usize) -> (usize, usize) {
        let (c, fk) = (self.ntransf * m, self.fk_len());
        match self.ty {
            TransformType::Type1 | TransformType::Type3 => (c, fk),
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
            TransformType::Type3 => ("input c (ntransf·M)", "output f (ntransf·K)"),
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
            TransformType::Type1 | TransformType::Type3 => (input, output),
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
        // Uninitialised: the input is overwritten below, the output by execute.
        let din = DeviceBuffer::staging(&mut self.scratch_in, dev, input.len())?;
        let dout = DeviceBuffer::staging(&mut self.scratch_out, dev, output.len())?.as_raw();
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
        check_on_device(
            "execute_device",
            "plan",
            self.device(),
            input.device(),
            output.device(),
        )?;
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
    /// indices (`< M`), type 3 target indices (`< K`; input: `M` strengths). With batched
    /// points ([`set_point_sets`](Plan::set_point_sets)) it uses set 0's points (and targets):
    /// those of transforms `0 .. ntransf / n_sets`. Returns one exact value per sample index;
    /// compare with
    /// [`relative_l2_error`](crate::relative_l2_error).
    pub fn direct_sample(
        &self,
        input: &[Complex<T>],
        sample: &[usize],
    ) -> Result<Vec<Complex<f64>>> {
        let out_len = self.direct_out_len("direct_sample", input.len())?;
        direct::sample_indices(sample, out_len)?;
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
            TransformType::Type3 => (a.m, a.k),
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
        let idx = direct::sample_indices(sample, out_len)?;
        let a = self.active("direct_sample_device")?;
        if input.device() != self.device() {
            return Err(shape(format!(
                "direct_sample: input is on device {}, the plan on device {}",
                input.device(),
                self.device
            )));
        }
        if self.ty == TransformType::Type3 {
            // SAFETY: type-3 active points are always the plan's own stored buffers (sources
            // and targets); `input` holds one transform's M strengths.
            return unsafe {
                direct::direct_sample3_raw::<T>(
                    self.dim,
                    self.iflag,
                    self.device,
                    a.m,
                    a.xyz,
                    input.as_raw(),
                    a.k,
                    a.stu,
                    &idx,
                )
            };
        }
        let problem = Problem {
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
        unsafe { direct::direct_sample_raw::<T>(&problem, a.xyz, input.as_raw(), &idx) }
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
