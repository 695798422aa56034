//! [`RealPlan`]: a type-1 or type-2 plan on real-valued data (option `real_data`,
//! docs/real.md). Type 1 takes real strengths `c` (`T`) and writes the non-redundant half of
//! the Hermitian-symmetric modes (`Complex<T>`); type 2 takes that half and writes real `c`.
//! The element types of `execute`'s slices and buffers say which side is real, so a real plan
//! cannot be handed complex strengths, nor a complex plan ([`Plan`]) real ones: the plan is a
//! type of its own, built by [`PlanBuilder::build_real`], and [`PlanBuilder::build`] refuses a
//! builder with `real_data` set.

use num_complex::Complex;

use crate::builder::PlanBuilder;
use crate::device::{check_on_device, DeviceBuffer};
use crate::error::{shape, Error, Result};
use crate::info::PlanInfo;
use crate::plan::Plan;
use crate::sys;
use crate::types::{DeviceCopy, ModeOrder, Real, TransformType};

mod sealed {
    /// Keeps [`RealIo`](super::RealIo) to the two pairs below.
    pub trait Sealed {}
    impl<T: crate::Real> Sealed for (T, num_complex::Complex<T>) {}
    impl<T: crate::Real> Sealed for (num_complex::Complex<T>, T) {}
}

/// The (input, output) element types of a real plan's execute, one pair per transform type
/// (sealed): `(T, Complex<T>)` for type 1 (real strengths in, half modes out) and
/// `(Complex<T>, T)` for type 2 (half modes in, real values out). Any other pair does not
/// compile:
///
/// ```compile_fail
/// # fn f(plan: &mut warpfft::RealPlan<f32>) -> warpfft::Result<()> {
/// use warpfft::Complex;
/// let c = vec![Complex::<f32>::default(); 10];
/// let mut fk = vec![Complex::<f32>::default(); 10];
/// plan.execute(&c, &mut fk)?; // complex strengths: not a real plan's input
/// # Ok(()) }
/// ```
pub trait RealIo<T: Real>: sealed::Sealed {
    /// The transform type this pair is the data of.
    const TYPE: TransformType;
}

impl<T: Real> RealIo<T> for (T, Complex<T>) {
    const TYPE: TransformType = TransformType::Type1;
}

impl<T: Real> RealIo<T> for (Complex<T>, T) {
    const TYPE: TransformType = TransformType::Type2;
}

/// A slice of `T` or `Complex<T>` as the `T` values it is made of (`Complex` is `#[repr(C)]`
/// `(re, im)`): how the staging buffers, kept in `T`, take either side.
fn as_reals<T: Real, E: DeviceCopy>(s: &[E]) -> &[T] {
    let k = std::mem::size_of::<E>() / std::mem::size_of::<T>();
    debug_assert!(k * std::mem::size_of::<T>() == std::mem::size_of::<E>() && (k == 1 || k == 2));
    // SAFETY: E is T or Complex<T> (RealIo's two pairs are the only callers), a sequence of k
    // T values with T's alignment; the length covers the same bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, s.len() * k) }
}

fn as_reals_mut<T: Real, E: DeviceCopy>(s: &mut [E]) -> &mut [T] {
    let k = std::mem::size_of::<E>() / std::mem::size_of::<T>();
    // SAFETY: as `as_reals`; every bit pattern of T is a valid T (f32/f64), and of Complex<T>.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut T, s.len() * k) }
}

impl<T: Real> PlanBuilder<T> {
    /// Real-valued data (option `real_data`; types 1 and 2): the plan [`build_real`] makes
    /// takes real strengths `c` and the non-redundant half of the Hermitian-symmetric modes,
    /// `N1/2 + 1` along dimension 1 (docs/real.md). Set it to ask [`params`] what such a plan
    /// would choose; [`build_real`] sets it itself, and [`build`] refuses a builder that has
    /// it (its plan's `execute` takes complex strengths). Default `false`.
    ///
    /// [`build_real`]: PlanBuilder::build_real
    /// [`build`]: PlanBuilder::build
    /// [`params`]: PlanBuilder::params
    pub fn real_data(self, on: bool) -> Self {
        self.option("real_data", u8::from(on))
    }

    /// Whether option `real_data` is set (by [`real_data`](PlanBuilder::real_data) or by name).
    pub fn is_real_data(&self) -> bool {
        self.raw_opts().is_ok_and(|o| o.real_data != 0)
    }

    /// Creates a plan on real-valued data (`real_data = 1`; types 1 and 2): a [`RealPlan`],
    /// whose `execute` takes real strengths and the half modes. Errors as
    /// [`build`](PlanBuilder::build); a type-3 or spread/interp-only builder gives
    /// [`Error::Unsupported`].
    ///
    /// ```no_run
    /// use warpfft::{Complex, Plan};
    /// # fn main() -> warpfft::Result<()> {
    /// let mut plan = Plan::<f64>::type1(&[33, 16]).tol(1e-9).build_real()?;
    /// let x = [0.1, -2.0, 3.0];
    /// let y = [1.0, 0.5, -0.7];
    /// plan.set_points(&[&x[..], &y[..]])?;
    /// let c = [1.0, -0.5, 0.25]; // real strengths
    /// let mut fk = vec![Complex::default(); plan.fk_len()]; // 17 x 16 half modes
    /// plan.execute(&c[..], &mut fk[..])?;
    /// # Ok(()) }
    /// ```
    pub fn build_real(&self) -> Result<RealPlan<T>> {
        if self.transform_type() == TransformType::Type3 {
            return Err(Error::Unsupported(
                "build_real: real_data is for types 1 and 2 (real strengths, half modes); a \
                 type-3 plan has no half spectrum"
                    .into(),
            ));
        }
        let plan = self.clone().real_data(true).create()?;
        let n = plan.n_modes();
        let mut half = [1usize; 3];
        half[..n.len()].copy_from_slice(n);
        half[0] = half[0] / 2 + 1;
        Ok(RealPlan {
            plan,
            half,
            scratch_in: None,
            scratch_out: None,
        })
    }
}

/// A type-1 or type-2 NUFFT plan on real-valued data, one GPU, precision `T`
/// ([`PlanBuilder::build_real`]; docs/real.md).
///
/// * Type 1: real strengths `c` (`ntransf·M` values of `T`) → the half modes `fk`
///   (`ntransf·H1·N2·N3` values of `Complex<T>`, `H1 = N1/2 + 1`): dimension 1 (the fastest)
///   holds `k1 = 0, 1, ..., N1/2` in that order whatever the [`ModeOrder`]; dimensions 2 and 3
///   keep their `N_d` modes in the plan's mode order. Each value is the complex type 1's of the
///   same strengths at that `k` (for even `N1`, `k1 = N1/2` is the same sum, one past the
///   complex range); the other half is its conjugate, `f[-k] = conj(f[k])`.
/// * Type 2: the half modes in → real `c[j] = Re(Σ_{k in half} a_k1 f[k] e^{±i k·x_j})`,
///   `a_0 = 1`, `a_k1 = 2` for `k1 > 0`: for Hermitian-symmetric full modes, the complex type 2
///   of the full array.
///
/// Points, batches (`ntransf`, batched point sets), streams, tolerance and ownership are as
/// for [`Plan`], whose methods of the same names these are.
///
/// ```
/// use warpfft::{Complex, Plan};
///
/// # fn main() -> warpfft::Result<()> {
/// if warpfft::init(0).is_err() {
///     return Ok(()); // no GPU here
/// }
/// let mut plan = Plan::<f32>::type2(&[64, 32]).tol(1e-5).build_real()?;
/// assert_eq!(plan.half_modes(), &[33, 32]);
/// let x: Vec<f32> = (0..100).map(|j| j as f32 * 0.06 - 3.0).collect();
/// let y: Vec<f32> = (0..100).map(|j| (j as f32 * 0.37).sin() * 3.0).collect();
/// plan.set_points(&[&x, &y])?;
/// let fk = vec![Complex::new(1.0f32, 0.0); plan.fk_len()]; // 33 x 32 half modes in
/// let mut c = vec![0.0f32; 100]; // real values out
/// plan.execute(&fk, &mut c)?;
/// # Ok(()) }
/// ```
pub struct RealPlan<T: Real> {
    plan: Plan<T>,
    /// `[N1/2 + 1, N2, N3]` (1 past the dimension).
    half: [usize; 3],
    /// Staging buffers of the host-slice `execute`, in values of `T` (a complex side takes
    /// two per element), reused.
    scratch_in: Option<DeviceBuffer<T>>,
    scratch_out: Option<DeviceBuffer<T>>,
}

impl<T: Real> RealPlan<T> {
    /// The transform type (1 or 2).
    pub fn transform_type(&self) -> TransformType {
        self.plan.transform_type()
    }

    /// The dimension (1, 2 or 3).
    pub fn dim(&self) -> usize {
        self.plan.dim()
    }

    /// Mode counts per dimension as given (`[N1, ...]`, `dim` entries): the full problem.
    pub fn n_modes(&self) -> &[usize] {
        self.plan.n_modes()
    }

    /// The half-mode array's shape per dimension (`dim` entries): `[N1/2 + 1, N2, N3]`.
    pub fn half_modes(&self) -> &[usize] {
        &self.half[..self.dim()]
    }

    /// Half modes per transform, `(N1/2 + 1)·N2·N3`.
    pub fn modes_per_transform(&self) -> usize {
        self.half.iter().product()
    }

    /// Length of the half-mode array of a whole batch: `ntransf·(N1/2 + 1)·N2·N3` complex
    /// values.
    pub fn fk_len(&self) -> usize {
        self.ntransf() * self.modes_per_transform()
    }

    /// Length of the strength array of a whole batch, `ntransf·M` real values, once points
    /// are set.
    pub fn c_len(&self) -> Option<usize> {
        self.plan.c_len()
    }

    /// Number of transforms per execute.
    pub fn ntransf(&self) -> usize {
        self.plan.ntransf()
    }

    /// The exponent sign (`+1` or `-1`).
    pub fn sign(&self) -> i32 {
        self.plan.sign()
    }

    /// The mode order of dimensions 2 and 3 (dimension 1 is `k1 = 0 .. N1/2` always).
    pub fn mode_order(&self) -> ModeOrder {
        self.plan.mode_order()
    }

    /// The CUDA device ordinal.
    pub fn device(&self) -> usize {
        self.plan.device()
    }

    /// The stream the plan enqueues on (`0` = legacy default stream).
    pub fn stream(&self) -> u64 {
        self.plan.stream()
    }

    /// `M` of the current point set, or `None` without points ([`Plan::n_points`]).
    pub fn n_points(&self) -> Option<usize> {
        self.plan.n_points()
    }

    /// The number of point sets of the current points ([`Plan::n_sets`]).
    pub fn n_sets(&self) -> Option<usize> {
        self.plan.n_sets()
    }

    /// The raw C handle (owned by this plan: do not destroy it).
    pub fn as_raw(&self) -> sys::warpfft_plan {
        self.plan.as_raw()
    }

    /// What the plan chose ([`Plan::info`]).
    pub fn info(&self) -> Result<PlanInfo> {
        self.plan.info()
    }

    /// Device bytes the C plan holds now ([`Plan::workspace_bytes`]).
    pub fn workspace_bytes(&self) -> Result<usize> {
        self.plan.workspace_bytes()
    }

    /// Waits until all work enqueued on the plan's stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.plan.synchronize()
    }

    /// Reports a NaN or infinite coordinate of the last point set ([`Plan::setpts_check`]).
    pub fn setpts_check(&self) -> Result<()> {
        self.plan.setpts_check()
    }

    /// Sets the points from host slices, one per dimension ([`Plan::set_points`]).
    pub fn set_points<S: AsRef<[T]>>(&mut self, coords: &[S]) -> Result<()> {
        self.plan.set_points(coords)
    }

    /// Batched points from host slices ([`Plan::set_point_sets`]).
    pub fn set_point_sets<S: AsRef<[T]>>(&mut self, n_sets: usize, coords: &[S]) -> Result<()> {
        self.plan.set_point_sets(n_sets, coords)
    }

    /// Sets the points from device buffers the plan takes ([`Plan::set_device_points`]).
    pub fn set_device_points<I>(&mut self, coords: I) -> Result<()>
    where
        I: IntoIterator<Item = DeviceBuffer<T>>,
    {
        self.plan.set_device_points(coords)
    }

    /// Batched points from device buffers ([`Plan::set_device_point_sets`]).
    pub fn set_device_point_sets<I>(&mut self, n_sets: usize, coords: I) -> Result<()>
    where
        I: IntoIterator<Item = DeviceBuffer<T>>,
    {
        self.plan.set_device_point_sets(n_sets, coords)
    }

    /// Takes back the point buffers the plan owns ([`Plan::take_points`]).
    pub fn take_points(&mut self) -> Vec<DeviceBuffer<T>> {
        self.plan.take_points()
    }

    /// Sets the points from raw device addresses ([`Plan::set_points_raw`]).
    ///
    /// # Safety
    /// As [`Plan::set_points_raw`].
    pub unsafe fn set_points_raw(&mut self, m: usize, x: u64, y: u64, z: u64) -> Result<()> {
        self.plan.set_points_raw(m, x, y, z)
    }

    /// Checks that the pair's type is the plan's and the lengths (in elements) fit it.
    fn check_io(&self, what: &str, ty: TransformType, input: usize, output: usize) -> Result<()> {
        if ty != self.transform_type() {
            let (i, o) = match self.transform_type() {
                TransformType::Type1 => ("real strengths c (&[T])", "half modes fk"),
                _ => ("half modes fk (&[Complex<T>])", "real values c (&mut [T])"),
            };
            return Err(Error::BadType(format!(
                "{what}: this real plan is {:?}: it takes {i} in and writes {o}",
                self.transform_type()
            )));
        }
        let m = self.n_points().ok_or_else(|| {
            Error::NoPoints(format!(
                "{what}: the plan has no points (call set_points first; a failed set_points or \
                 take_points also clears them)"
            ))
        })?;
        let (c, fk) = (self.ntransf() * m, self.fk_len());
        let (want_in, want_out, in_name, out_name) = match ty {
            TransformType::Type1 => (c, fk, "input c (ntransf·M)", "output fk (ntransf·H1·N2·N3)"),
            _ => (fk, c, "input fk (ntransf·H1·N2·N3)", "output c (ntransf·M)"),
        };
        for (name, got, want) in [(in_name, input, want_in), (out_name, output, want_out)] {
            if got != want {
                return Err(shape(format!(
                    "{what}: {name} has {got} elements, the real plan needs {want} (ntransf = \
                     {}, M = {m}, half modes = {:?})",
                    self.ntransf(),
                    self.half_modes()
                )));
            }
        }
        Ok(())
    }

    /// Input and output addresses in the C order (c, fk).
    fn c_order(&self, input: u64, output: u64) -> (u64, u64) {
        match self.transform_type() {
            TransformType::Type2 => (output, input),
            _ => (input, output),
        }
    }

    /// Runs the `ntransf` transforms on host data and waits for the result: type 1
    /// `execute(&c, &mut fk)` with `c: &[T]` (`ntransf·M`) and `fk: &mut [Complex<T>]`
    /// (`ntransf·H1·N2·N3`); type 2 `execute(&fk, &mut c)`. The element types pick the
    /// direction ([`RealIo`]); the other direction's pair on this plan is [`Error::BadType`],
    /// wrong lengths [`Error::Shape`], no points [`Error::NoPoints`].
    pub fn execute<I, O>(&mut self, input: &[I], output: &mut [O]) -> Result<()>
    where
        I: DeviceCopy,
        O: DeviceCopy,
        (I, O): RealIo<T>,
    {
        self.check_io("execute", <(I, O)>::TYPE, input.len(), output.len())?;
        let (input, output) = (as_reals::<T, I>(input), as_reals_mut::<T, O>(output));
        let dev = self.device();
        let din = DeviceBuffer::staging(&mut self.scratch_in, dev, input.len())?;
        din.copy_from(input)?;
        let din = din.as_raw();
        let dout = DeviceBuffer::staging(&mut self.scratch_out, dev, output.len())?.as_raw();
        let (c, fk) = self.c_order(din, dout);
        // SAFETY: plan-owned buffers of the checked lengths on the plan's device; the plan
        // waits for its stream below before they can be touched again.
        unsafe { self.plan.execute_raw(c, fk)? };
        self.synchronize()?;
        match &self.scratch_out {
            Some(o) => o.copy_to(output),
            None => unreachable!("staging buffers were just allocated"),
        }
    }

    /// Runs the `ntransf` transforms on device buffers (no copies): type 1
    /// `execute_device(&c, &mut fk)` with `DeviceBuffer<T>` and `DeviceBuffer<Complex<T>>`,
    /// type 2 the reverse; both on the plan's device. Returns once the work is enqueued on
    /// the legacy default stream, after the stream's work on another ([`Plan::execute_device`]).
    pub fn execute_device<I, O>(
        &mut self,
        input: &DeviceBuffer<I>,
        output: &mut DeviceBuffer<O>,
    ) -> Result<()>
    where
        I: DeviceCopy,
        O: DeviceCopy,
        (I, O): RealIo<T>,
    {
        self.check_io("execute_device", <(I, O)>::TYPE, input.len(), output.len())?;
        check_on_device(
            "execute_device",
            "plan",
            self.device(),
            input.device(),
            output.device(),
        )?;
        let (c, fk) = self.c_order(input.as_raw(), output.as_raw());
        // SAFETY: lengths and devices checked; `output` is exclusively borrowed; with a custom
        // stream we wait below before the borrows end, and on stream 0 later copies and frees
        // of these buffers are ordered after the work.
        unsafe { self.plan.execute_raw(c, fk)? };
        if self.stream() != 0 {
            self.synchronize()?;
        }
        Ok(())
    }

    /// Runs the transforms on raw device addresses in the C order: `c` (`ntransf·M` real
    /// values of `T`) and `fk` (`ntransf·H1·N2·N3` complex values). Type 1 reads `c` and
    /// writes `fk`; type 2 the reverse. Returns once enqueued (no wait); [`Error::NoPoints`]
    /// without points.
    ///
    /// # Safety
    /// As [`Plan::execute_raw`], with those lengths.
    pub unsafe fn execute_raw(&mut self, c: u64, fk: u64) -> Result<()> {
        self.plan.execute_raw(c, fk)
    }
}

impl<T: Real> std::fmt::Debug for RealPlan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealPlan")
            .field("precision", &T::PRECISION)
            .field("type", &self.transform_type())
            .field("n_modes", &self.n_modes())
            .field("half_modes", &self.half_modes())
            .field("ntransf", &self.ntransf())
            .field("sign", &self.sign())
            .field("modeord", &self.mode_order())
            .field("device", &self.device())
            .field("n_points", &self.n_points())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, Plan, TransformType};

    #[test]
    fn real_data_reaches_the_c_opts() {
        let b = Plan::<f32>::type1(&[8, 8]);
        assert!(!b.is_real_data());
        assert_eq!(b.raw_opts().unwrap().real_data, 0, "default: complex");
        let b = b.real_data(true);
        assert!(b.is_real_data());
        assert_eq!(b.raw_opts().unwrap().real_data, 1);
        assert!(format!("{b:?}").contains("\"real_data\": 1"));
        assert!(!b.real_data(false).is_real_data());
        assert!(Plan::<f64>::type2(&[9])
            .option("real_data", 1)
            .is_real_data());
    }

    #[test]
    fn build_refuses_real_data_and_build_real_refuses_type3() {
        // Both checks run before anything reaches the GPU.
        let err = Plan::<f32>::type1(&[16])
            .real_data(true)
            .build()
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArg(_)), "{err:?}");
        assert!(err.message().contains("build_real"), "{err}");
        let err = Plan::<f64>::type3(2).build_real().unwrap_err();
        assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
        assert_eq!(
            Plan::<f64>::builder(TransformType::Type3, &[1]).transform_type(),
            TransformType::Type3
        );
    }
}
