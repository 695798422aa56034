//! The vocabulary every layer shares, at the bottom of the module graph: the precisions
//! ([`Precision`], [`Real`]), the element types of device memory ([`DeviceCopy`]) and the plan
//! enums ([`TransformType`], [`ModeOrder`], [`Method`]) with their C values.

use std::fmt::{Debug, Display};
use std::os::raw::c_int;

use num_complex::Complex;

use crate::error::{Error, Result};
use crate::sys;

/// The precision of a plan's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Single precision (`f32`, `WARPFFT_F32`).
    F32,
    /// Double precision (`f64`, `WARPFFT_F64`).
    F64,
}

impl Precision {
    /// The C value (`WARPFFT_F32` / `WARPFFT_F64`).
    pub fn as_raw(self) -> sys::warpfft_precision {
        match self {
            Precision::F32 => sys::WARPFFT_F32,
            Precision::F64 => sys::WARPFFT_F64,
        }
    }

    pub(crate) fn from_raw(v: i32) -> Result<Self> {
        match v as sys::warpfft_precision {
            sys::WARPFFT_F32 => Ok(Precision::F32),
            sys::WARPFFT_F64 => Ok(Precision::F64),
            _ => Err(Error::Internal(format!(
                "the C core reported precision {v}"
            ))),
        }
    }
}

/// The real types a plan can work in: `f32` and `f64` (sealed).
pub trait Real: DeviceCopy + PartialOrd + Debug + Display + Into<f64> + sealed::Sealed {
    /// The C precision value.
    const PRECISION: Precision;
    /// The tolerance a [`PlanBuilder`] uses unless told otherwise: `1e-6` for `f32`, `1e-12`
    /// for `f64`.
    ///
    /// [`PlanBuilder`]: crate::PlanBuilder
    const DEFAULT_TOL: f64;
    /// Converts to `f64` (exact).
    fn to_f64(self) -> f64 {
        self.into()
    }
    /// Converts from `f64` (rounding for `f32`).
    fn from_f64(v: f64) -> Self;
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    const DEFAULT_TOL: f64 = 1e-6;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    const DEFAULT_TOL: f64 = 1e-12;
    fn from_f64(v: f64) -> Self {
        v
    }
}

pub(crate) mod sealed {
    /// Prevents implementations of [`Real`](super::Real) and
    /// [`DeviceCopy`](super::DeviceCopy) outside this crate.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl<T: super::Real> Sealed for num_complex::Complex<T> {}
}

/// Element types a [`DeviceBuffer`] can hold: `f32`, `f64`, `Complex<f32>` and `Complex<f64>`.
///
/// Sealed: plain-old-data types for which every bit pattern is a valid value, so bytes copied
/// back from the GPU are always valid. `Complex<T>` is `#[repr(C)]` `(re, im)`, the interleaved
/// layout the C core uses.
///
/// [`DeviceBuffer`]: crate::DeviceBuffer
pub trait DeviceCopy: sealed::Sealed + Copy + Default + Send + Sync + 'static {}

impl DeviceCopy for f32 {}
impl DeviceCopy for f64 {}
impl<T: Real> DeviceCopy for Complex<T> {}

/// The NUFFT type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransformType {
    /// Type 1, non-uniform points → uniform modes: `f[k] = Σ_j c[j] exp(±i k·x_j)`.
    Type1,
    /// Type 2, uniform modes → non-uniform points: `c[j] = Σ_k f[k] exp(±i k·x_j)`
    /// (the adjoint of type 1 with the opposite sign).
    Type2,
    /// Type 3, non-uniform points → non-uniform frequencies: `f[k] = Σ_j c[j] exp(±i s_k·x_j)`
    /// for `M` sources `x_j` and `K` targets `s_k` (any finite reals, not periodic).
    Type3,
}

impl TransformType {
    /// The C value (1, 2 or 3).
    pub fn as_raw(self) -> c_int {
        match self {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
            TransformType::Type3 => 3,
        }
    }

    pub(crate) fn from_raw(v: i32) -> Result<Self> {
        match v {
            1 => Ok(TransformType::Type1),
            2 => Ok(TransformType::Type2),
            3 => Ok(TransformType::Type3),
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
    ///
    /// [`Plan::info`]: crate::Plan::info
    #[default]
    Auto,
    /// Points-driven over bin-sorted points, with global-memory atomics (`WARPFFT_METHOD_GM`).
    GlobalMemory,
    /// Subproblems: per-bin tiles in shared memory (`WARPFFT_METHOD_SM`).
    SharedMemory,
    /// Output-driven spreading (`WARPFFT_METHOD_OD`): each warp owns a tile of the fine grid,
    /// gathers the points that reach it and writes every cell once, with no atomics. Type 1 and
    /// type 3's spreading step only (a type-2 plan refuses it); 3-4x slower than
    /// [`SharedMemory`](Method::SharedMemory) on an H100, so [`Auto`](Method::Auto) picks it only
    /// for [`deterministic`](crate::PlanBuilder::deterministic) plans.
    OutputDriven,
}

impl Method {
    /// The C value (`WARPFFT_METHOD_*`).
    pub fn as_raw(self) -> c_int {
        match self {
            Method::Auto => sys::WARPFFT_METHOD_AUTO as c_int,
            Method::GlobalMemory => sys::WARPFFT_METHOD_GM as c_int,
            Method::SharedMemory => sys::WARPFFT_METHOD_SM as c_int,
            Method::OutputDriven => sys::WARPFFT_METHOD_OD as c_int,
        }
    }

    pub(crate) fn from_raw(v: i32) -> Result<Self> {
        match v as sys::warpfft_method {
            sys::WARPFFT_METHOD_AUTO => Ok(Method::Auto),
            sys::WARPFFT_METHOD_GM => Ok(Method::GlobalMemory),
            sys::WARPFFT_METHOD_SM => Ok(Method::SharedMemory),
            sys::WARPFFT_METHOD_OD => Ok(Method::OutputDriven),
            _ => Err(Error::Internal(format!("the C core reported method {v}"))),
        }
    }
}
