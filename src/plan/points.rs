//! A [`Plan`]'s points: `set_points*` and `take_points`, and [`ActivePoints`], what the C plan
//! reads now (the C core keeps the arrays' addresses after setpts).

use std::ffi::c_void;

use super::Plan;
use crate::device::DeviceBuffer;
use crate::error::{check, shape, Error, Result};
use crate::sys;
use crate::types::Real;

/// The point set the C plan uses now (after a successful setpts).
#[derive(Debug, Clone, Copy)]
pub(super) struct ActivePoints {
    pub(super) m: usize,
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
        self.active = Some(ActivePoints {
            m,
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
        if self.ty != crate::types::TransformType::Type3 {
            return Err(Error::BadType(format!(
                "set_points3: the plan is {:?}; use set_points",
                self.ty
            )));
        }
        let lens: Vec<usize> = sources.iter().map(|c| c.as_ref().len()).collect();
        let m = self.check_coords(&lens)?;
        let tlens: Vec<usize> = targets.iter().map(|c| c.as_ref().len()).collect();
        let k = self.check_coords(&tlens).map_err(|e| match e {
            Error::Shape(msg) => shape(format!("targets: {msg}")),
            other => other,
        })?;
        self.active = None;
        self.sync_if_custom_stream()?;
        let dev = self.device();
        Self::upload(dev, &mut self.stored, sources, m)?;
        Self::upload(dev, &mut self.stored_targets, targets, k)?;
        let (mut xyz, mut stu) = ([0u64; 3], [0u64; 3]);
        for (d, b) in self.stored.iter().enumerate() {
            xyz[d] = b.as_raw();
        }
        for (d, b) in self.stored_targets.iter().enumerate() {
            stu[d] = b.as_raw();
        }
        let ptr = |a: u64| a as *const c_void;
        // SAFETY: the arrays are the plan's own buffers of m and k elements on its device; the
        // C plan does not keep them after the call (it copies the rescaled points).
        check(unsafe {
            sys::warpfft_setpts3(
                self.raw,
                T::PRECISION.as_raw(),
                m as i64,
                ptr(xyz[0]),
                ptr(xyz[1]),
                ptr(xyz[2]),
                k as i64,
                ptr(stu[0]),
                ptr(stu[1]),
                ptr(stu[2]),
            )
        })?;
        self.active = Some(ActivePoints {
            m,
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
    /// on the plan's stream with [`check_points(true)`](crate::PlanBuilder::check_points), and
    /// not at all by default (then [`Plan::setpts_check`] reports a NaN/inf coordinate).
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
    pub(super) fn active(&self, what: &str) -> Result<ActivePoints> {
        self.active.ok_or_else(|| {
            Error::NoPoints(format!(
                "{what}: the plan has no points (call set_points first; a failed set_points or \
                 take_points also clears them)"
            ))
        })
    }
}
