//! A [`Plan`]'s points: `set_points*`, the batched `set_point_sets*` (a point set per transform
//! or group of transforms) and `take_points`, and [`ActivePoints`], what the C plan reads now
//! (the C core keeps the arrays' addresses after setpts).

use std::ffi::c_void;

use super::Plan;
use crate::device::DeviceBuffer;
use crate::error::{check, shape, Error, Result};
use crate::sys;
use crate::types::Real;

/// The point set the C plan uses now (after a successful setpts).
#[derive(Debug, Clone, Copy)]
pub(super) struct ActivePoints {
    /// Points per set, and the sets (1 for `set_points*`): the arrays hold `n_sets * m`.
    pub(super) m: usize,
    pub(super) n_sets: usize,
    pub(super) xyz: [u64; 3],
    /// Type 3: the number of targets and their arrays (always `stored_targets`); else 0.
    pub(super) k: usize,
    pub(super) stu: [u64; 3],
    /// True when the arrays are the plan's own `stored` buffers (host upload or moved in);
    /// false for `set_points_raw`.
    owned: bool,
}

impl<T: Real> Plan<T> {
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

    /// Points per set of arrays of `len` coordinates holding `n_sets` sets (`n_sets >= 1`
    /// dividing `len`; the C core checks that it divides ntransf).
    fn per_set(n_sets: usize, len: usize, what: &str) -> Result<usize> {
        if n_sets == 0 || len % n_sets != 0 {
            return Err(shape(format!(
                "set_point_sets: {what} arrays of {len} coordinates do not hold n_sets = \
                 {n_sets} sets of equal size (n_sets must be >= 1 and divide the length)"
            )));
        }
        Ok(len / n_sets)
    }

    /// Calls setpts on the plan's `stored` buffers (`n_sets` sets of `m` points) and records
    /// them as active.
    fn setpts_stored(&mut self, n_sets: usize, m: usize) -> Result<()> {
        let mut xyz = [0u64; 3];
        for (d, b) in self.stored.iter().enumerate() {
            xyz[d] = b.as_raw();
        }
        // SAFETY: the arrays are `stored` buffers of `n_sets * m` elements on the plan's
        // device; the plan owns them until the next set_points / take_points / drop, and
        // `active` is cleared before any of those could free them.
        unsafe { self.setpts_ptrs(n_sets, m, xyz, true) }
    }

    /// setpts (`n_sets` = 1) or setpts_sets with device addresses; on success records the
    /// active point set.
    ///
    /// # Safety
    /// As [`Plan::set_point_sets_raw`].
    unsafe fn setpts_ptrs(
        &mut self,
        n_sets: usize,
        m: usize,
        xyz: [u64; 3],
        owned: bool,
    ) -> Result<()> {
        self.active = None;
        let ptr = |a: u64| a as *const c_void;
        let prec = T::PRECISION.as_raw();
        check(if n_sets == 1 {
            sys::warpfft_setpts(
                self.raw,
                prec,
                m as i64,
                ptr(xyz[0]),
                ptr(xyz[1]),
                ptr(xyz[2]),
            )
        } else {
            sys::warpfft_setpts_sets(
                self.raw,
                prec,
                n_sets as i64,
                m as i64,
                ptr(xyz[0]),
                ptr(xyz[1]),
                ptr(xyz[2]),
            )
        })?;
        self.active = Some(ActivePoints {
            m,
            n_sets,
            xyz,
            k: 0,
            stu: [0; 3],
            owned,
        });
        Ok(())
    }

    /// Uploads `coords` into `bufs` (reusing them when the lengths match).
    fn upload<S: AsRef<[T]>>(
        device: usize,
        bufs: &mut Vec<DeviceBuffer<T>>,
        coords: &[S],
        m: usize,
    ) -> Result<()> {
        let reusable =
            bufs.len() == coords.len() && bufs.iter().all(|b| b.len() == m && b.device() == device);
        if reusable {
            for (buf, c) in bufs.iter_mut().zip(coords) {
                buf.copy_from(c.as_ref())?;
            }
        } else {
            bufs.clear();
            for c in coords {
                bufs.push(DeviceBuffer::from_slice_on(device, c.as_ref())?);
            }
        }
        Ok(())
    }

    /// Type 3: sets the `M` sources and `K` targets from host slices, one slice per dimension
    /// each (`&[&x, &y]`, `&[&s, &t]` in 2D). Any finite values (not periodic). The plan
    /// uploads them into device buffers it owns, finds their bounds, chooses its grids
    /// (reallocated when they change) and bin-sorts the rescaled points on the GPU.
    ///
    /// Errors: [`Error::Shape`] (wrong number of arrays, unequal lengths), [`Error::BadType`]
    /// (not a type-3 plan), [`Error::BadPoints`] (a NaN or infinite coordinate),
    /// [`Error::BadSize`] (spreads so large that the grids would not fit; the message names
    /// the grid). After an error the plan has no points.
    pub fn set_points3<S: AsRef<[T]>>(&mut self, sources: &[S], targets: &[S]) -> Result<()> {
        self.set_point_sets3(1, sources, targets)
    }

    /// Batched points for type 3: `n_sets` sets of sources and of targets, each slice holding
    /// the sets one after the other (`n_sets * M` sources and `n_sets * K` targets per
    /// dimension); transform `t` uses set `t / (ntransf / n_sets)`, its sources and its
    /// targets. One choice of grids serves every set (that of the bounds of all of them).
    /// Errors as [`set_points3`](Plan::set_points3) and [`set_point_sets`](Plan::set_point_sets).
    pub fn set_point_sets3<S: AsRef<[T]>>(
        &mut self,
        n_sets: usize,
        sources: &[S],
        targets: &[S],
    ) -> Result<()> {
        if self.ty != crate::types::TransformType::Type3 {
            return Err(Error::BadType(format!(
                "set_points3: the plan is {:?}; use set_points",
                self.ty
            )));
        }
        let lens: Vec<usize> = sources.iter().map(|c| c.as_ref().len()).collect();
        let total = self.check_coords(&lens)?;
        let tlens: Vec<usize> = targets.iter().map(|c| c.as_ref().len()).collect();
        let total_k = self.check_coords(&tlens).map_err(|e| match e {
            Error::Shape(msg) => shape(format!("targets: {msg}")),
            other => other,
        })?;
        let m = Self::per_set(n_sets, total, "source")?;
        let k = Self::per_set(n_sets, total_k, "target")?;
        self.active = None;
        self.sync_if_custom_stream()?;
        let dev = self.device();
        Self::upload(dev, &mut self.stored, sources, total)?;
        Self::upload(dev, &mut self.stored_targets, targets, total_k)?;
        let (mut xyz, mut stu) = ([0u64; 3], [0u64; 3]);
        for (d, b) in self.stored.iter().enumerate() {
            xyz[d] = b.as_raw();
        }
        for (d, b) in self.stored_targets.iter().enumerate() {
            stu[d] = b.as_raw();
        }
        let ptr = |a: u64| a as *const c_void;
        // SAFETY: the arrays are the plan's own buffers of n_sets * m and n_sets * k elements
        // on its device; the C plan does not keep them after the call (it copies the rescaled
        // points).
        let (x, y, z, s, t, u) = (
            ptr(xyz[0]),
            ptr(xyz[1]),
            ptr(xyz[2]),
            ptr(stu[0]),
            ptr(stu[1]),
            ptr(stu[2]),
        );
        let prec = T::PRECISION.as_raw();
        check(unsafe {
            if n_sets == 1 {
                sys::warpfft_setpts3(self.raw, prec, m as i64, x, y, z, k as i64, s, t, u)
            } else {
                sys::warpfft_setpts3_sets(
                    self.raw,
                    prec,
                    n_sets as i64,
                    m as i64,
                    x,
                    y,
                    z,
                    k as i64,
                    s,
                    t,
                    u,
                )
            }
        })?;
        self.active = Some(ActivePoints {
            m,
            n_sets,
            xyz,
            k,
            stu,
            owned: true,
        });
        self.sync_if_custom_stream()
    }

    /// Sets the `M` non-uniform points from host slices: one slice of `M` coordinates per
    /// dimension (`&[&x]`, `&[&x, &y]` or `&[&x, &y, &z]`). Coordinates may be any finite
    /// values (2π-periodic).
    ///
    /// The coordinates are uploaded into device buffers the plan owns (reused when `M` is
    /// unchanged), then bin-sorted on the GPU. Errors: [`Error::Shape`] (wrong number of arrays
    /// or unequal lengths, checked before any GPU work), [`Error::BadPoints`] (a NaN or
    /// infinite coordinate, with [`check_points(true)`](crate::PlanBuilder::check_points);
    /// by default such points are not checked here: executes write NaN outputs and
    /// [`Plan::setpts_check`] reports them). After an error the plan has no points until the
    /// next successful `set_points*`.
    pub fn set_points<S: AsRef<[T]>>(&mut self, coords: &[S]) -> Result<()> {
        self.set_point_sets(1, coords)
    }

    /// Batched points (types 1 and 2): each transform, or each group of `ntransf / n_sets`
    /// transforms, takes its own point set. One slice per dimension holds the `n_sets` sets
    /// one after the other (`n_sets * M` coordinates: point `j` of set `s` at `s * M + j`);
    /// transform `t` uses set `t / (ntransf / n_sets)` (`n_sets == ntransf`: one set per
    /// transform). `c` and `fk` keep their layout. All sets are sorted at once and every
    /// execute runs them in one launch per stage (`warpfft_setpts_sets`; docs/batched-points.md
    /// says how to pad sets of different sizes).
    ///
    /// Errors as [`set_points`](Plan::set_points), and [`Error::Shape`] when `n_sets` does not
    /// divide the slices' length, [`Error::InvalidArg`] when it does not divide `ntransf`,
    /// [`Error::Unsupported`] for more than 65535 sets, [`Error::BadSize`] when the sets'
    /// spreading bins would reach 2^31.
    pub fn set_point_sets<S: AsRef<[T]>>(&mut self, n_sets: usize, coords: &[S]) -> Result<()> {
        let lens: Vec<usize> = coords.iter().map(|c| c.as_ref().len()).collect();
        let total = self.check_coords(&lens)?;
        let m = Self::per_set(n_sets, total, "coordinate")?;
        // The C plan may point into `stored`: forget the active set, and let work still
        // reading it finish, before overwriting or freeing it.
        self.active = None;
        self.sync_if_custom_stream()?;
        let reusable = self.stored.len() == self.dim
            && self
                .stored
                .iter()
                .all(|b| b.len() == total && b.device() == self.device());
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
        self.setpts_stored(n_sets, m)?;
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
        self.set_device_point_sets(1, coords)
    }

    /// [`set_device_points`](Plan::set_device_points) with batched points: each buffer holds
    /// `n_sets` sets of `M` coordinates, as [`set_point_sets`](Plan::set_point_sets) takes them.
    pub fn set_device_point_sets<I>(&mut self, n_sets: usize, coords: I) -> Result<()>
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
        let total = self.check_coords(&lens)?;
        let m = Self::per_set(n_sets, total, "coordinate")?;
        if let Some(b) = self.stored.iter().find(|b| b.device() != self.device()) {
            return Err(shape(format!(
                "set_device_points: a buffer is on device {}, the plan on device {}",
                b.device(),
                self.device
            )));
        }
        self.setpts_stored(n_sets, m)?;
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
    /// on the plan's stream with [`check_points(true)`](crate::PlanBuilder::check_points), and
    /// not at all by default (then [`Plan::setpts_check`] reports a NaN/inf coordinate).
    ///
    /// # Safety
    /// `x`, `y`, `z` (those the dimension uses) must each point to `m` values of `T` in memory
    /// accessible from the plan's device, and must stay valid and unchanged until the next
    /// `set_points*` on this plan or its drop: the plan reads them at every execute (and in
    /// [`direct_sample`](Plan::direct_sample)).
    pub unsafe fn set_points_raw(&mut self, m: usize, x: u64, y: u64, z: u64) -> Result<()> {
        self.set_point_sets_raw(1, m, x, y, z)
    }

    /// [`set_points_raw`](Plan::set_points_raw) with batched points: `n_sets` sets of `m`
    /// points, `n_sets * m` coordinates at each address (set after set), as
    /// [`set_point_sets`](Plan::set_point_sets) takes them.
    ///
    /// # Safety
    /// As [`set_points_raw`](Plan::set_points_raw), with `n_sets * m` values at each of `x`,
    /// `y` (dim ≥ 2) and `z` (dim 3).
    pub unsafe fn set_point_sets_raw(
        &mut self,
        n_sets: usize,
        m: usize,
        x: u64,
        y: u64,
        z: u64,
    ) -> Result<()> {
        if n_sets == 0 {
            return Err(shape("set_point_sets_raw: n_sets must be >= 1".to_string()));
        }
        let total = m.checked_mul(n_sets).ok_or_else(|| {
            Error::BadNpoints(format!("n_sets = {n_sets} sets of M = {m} points overflow"))
        })?;
        let lens = vec![total; self.dim];
        self.check_coords(&lens)?;
        self.setpts_ptrs(n_sets, m, [x, y, z], false)
    }

    /// The active point set, or [`Error::NoPoints`].
    pub(super) fn active(&self, what: &str) -> Result<ActivePoints> {
        self.active.ok_or_else(|| {
            Error::NoPoints(format!(
                "{what}: the plan has no points (call set_points first; a failed set_points or \
                 take_points also clears them)"
            ))
        })
    }
}
