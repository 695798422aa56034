//! Error mapping: every C status becomes one [`Error`] variant carrying the C core's message.
//!
//! This is the middle layer of the crate (`sys` → error mapping → safe types): [`check`] turns a
//! `warpfft_status` into a [`Result`], reading `warpfft_last_error()` immediately, on the same
//! thread, before any other warpfft call can overwrite the thread-local message.

use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// `Result<T, warpfft::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in warpfft.
///
/// One variant per status of the C ABI (`warpfft_status` in `warpfft.h`), plus [`Error::Shape`]
/// for argument checks the Rust API makes before anything reaches the GPU (slice lengths that
/// do not match the plan). Every variant carries a human-readable message: for C statuses the
/// text of `warpfft_last_error()` for the failing call (it names the cause, e.g. the library
/// that could not be loaded or the size that could not be allocated).
///
/// ```
/// use warpfft::{Error, Plan};
///
/// // Rejected by the C core's argument checks; no GPU is involved. f32 at upsampfac 1.25
/// // cannot reach 1e-6 (its rounding floor is higher):
/// let err = Plan::<f32>::type1(&[64, 64]).tol(1e-6).upsampfac(1.25).params().unwrap_err();
/// assert!(matches!(err, Error::BadTol(_)));
/// assert_eq!(err.status_name(), "WARPFFT_ERR_BAD_TOL");
/// println!("{err}"); // "tolerance not reachable: ..."
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `WARPFFT_ERR_INVALID_ARG`: a null pointer, a bad enum or option value.
    InvalidArg(String),
    /// `WARPFFT_ERR_BAD_TYPE`: the transform type is not 1 or 2.
    BadType(String),
    /// `WARPFFT_ERR_BAD_DIM`: the dimension is not 1, 2 or 3.
    BadDim(String),
    /// `WARPFFT_ERR_BAD_SIZE`: a mode count < 1, `ntransf` < 1, or sizes too large.
    BadSize(String),
    /// `WARPFFT_ERR_BAD_TOL`: `tol` is NaN, or one the options cannot reach (an explicit
    /// upsampling factor); a tol outside the precision's range runs at its nearer end instead.
    BadTol(String),
    /// `WARPFFT_ERR_BAD_NPOINTS`: a negative or too large number of points.
    BadNpoints(String),
    /// `WARPFFT_ERR_BAD_POINTS`: a NaN or infinite coordinate.
    BadPoints(String),
    /// `WARPFFT_ERR_PRECISION`: arrays' precision differs from the plan's.
    Precision(String),
    /// `WARPFFT_ERR_NO_POINTS`: execute before a successful `set_points`.
    NoPoints(String),
    /// `WARPFFT_ERR_NO_DRIVER`: `libcuda.so.1` is missing, or a symbol is missing in it.
    NoDriver(String),
    /// `WARPFFT_ERR_NO_DEVICE`: no CUDA device, or the device ordinal is out of range.
    NoDevice(String),
    /// `WARPFFT_ERR_DRIVER_TOO_OLD`: the driver is older than the embedded kernels need.
    DriverTooOld(String),
    /// `WARPFFT_ERR_NO_KERNEL`: no embedded kernel image runs on this GPU, or a kernel is missing.
    NoKernel(String),
    /// `WARPFFT_ERR_NO_CUFFT`: the cuFFT library was not found, or a symbol is missing in it.
    NoCufft(String),
    /// `WARPFFT_ERR_CUFFT`: a cuFFT call failed.
    Cufft(String),
    /// `WARPFFT_ERR_OUT_OF_MEMORY`: device (or host) memory exhausted.
    OutOfMemory(String),
    /// `WARPFFT_ERR_CUDA`: any other CUDA driver error.
    Cuda(String),
    /// `WARPFFT_ERR_UNSUPPORTED`: a valid request this build does not do (e.g. type 3).
    Unsupported(String),
    /// `WARPFFT_ERR_INTERNAL`: a bug in warpfft (please report it), or a status this version of
    /// the crate does not know.
    Internal(String),
    /// `WARPFFT_ERR_NO_NVRTC`: a kernel module must be compiled at run time (a build with the
    /// `nvrtc` feature, on a GPU no embedded image fits) and NVRTC was not found; the message
    /// lists every place tried.
    NoNvrtc(String),
    /// A Rust-side argument check failed before anything reached the GPU: coordinate slices of
    /// different lengths or a missing one, `c`/`fk` lengths that do not match the plan, a buffer
    /// on another device. [`Error::status`] reports it as `WARPFFT_ERR_INVALID_ARG`.
    Shape(String),
}

impl Error {
    /// Builds the error for a failed C call from its status and this thread's
    /// `warpfft_last_error()`. Call it immediately after the failing call.
    pub(crate) fn from_status(status: sys::warpfft_status) -> Error {
        // SAFETY: warpfft_last_error returns a NUL-terminated thread-local string, valid until
        // this thread's next warpfft call; it is copied out at once.
        let msg = unsafe { cstr_to_string(sys::warpfft_last_error()) };
        Error::from_status_message(status, msg)
    }

    /// Builds the error for `status` with an explicit message.
    pub(crate) fn from_status_message(status: sys::warpfft_status, msg: String) -> Error {
        match status {
            sys::WARPFFT_ERR_INVALID_ARG => Error::InvalidArg(msg),
            sys::WARPFFT_ERR_BAD_TYPE => Error::BadType(msg),
            sys::WARPFFT_ERR_BAD_DIM => Error::BadDim(msg),
            sys::WARPFFT_ERR_BAD_SIZE => Error::BadSize(msg),
            sys::WARPFFT_ERR_BAD_TOL => Error::BadTol(msg),
            sys::WARPFFT_ERR_BAD_NPOINTS => Error::BadNpoints(msg),
            sys::WARPFFT_ERR_BAD_POINTS => Error::BadPoints(msg),
            sys::WARPFFT_ERR_PRECISION => Error::Precision(msg),
            sys::WARPFFT_ERR_NO_POINTS => Error::NoPoints(msg),
            sys::WARPFFT_ERR_NO_DRIVER => Error::NoDriver(msg),
            sys::WARPFFT_ERR_NO_DEVICE => Error::NoDevice(msg),
            sys::WARPFFT_ERR_DRIVER_TOO_OLD => Error::DriverTooOld(msg),
            sys::WARPFFT_ERR_NO_KERNEL => Error::NoKernel(msg),
            sys::WARPFFT_ERR_NO_CUFFT => Error::NoCufft(msg),
            sys::WARPFFT_ERR_CUFFT => Error::Cufft(msg),
            sys::WARPFFT_ERR_OUT_OF_MEMORY => Error::OutOfMemory(msg),
            sys::WARPFFT_ERR_CUDA => Error::Cuda(msg),
            sys::WARPFFT_ERR_UNSUPPORTED => Error::Unsupported(msg),
            sys::WARPFFT_ERR_INTERNAL => Error::Internal(msg),
            sys::WARPFFT_ERR_NO_NVRTC => Error::NoNvrtc(msg),
            other => Error::Internal(format!("unknown warpfft status {other}: {msg}")),
        }
    }

    /// The C status this error corresponds to (a `WARPFFT_ERR_*` value; never
    /// `WARPFFT_SUCCESS`). [`Error::Shape`] gives `WARPFFT_ERR_INVALID_ARG`.
    pub fn status(&self) -> sys::warpfft_status {
        match self {
            Error::InvalidArg(_) | Error::Shape(_) => sys::WARPFFT_ERR_INVALID_ARG,
            Error::BadType(_) => sys::WARPFFT_ERR_BAD_TYPE,
            Error::BadDim(_) => sys::WARPFFT_ERR_BAD_DIM,
            Error::BadSize(_) => sys::WARPFFT_ERR_BAD_SIZE,
            Error::BadTol(_) => sys::WARPFFT_ERR_BAD_TOL,
            Error::BadNpoints(_) => sys::WARPFFT_ERR_BAD_NPOINTS,
            Error::BadPoints(_) => sys::WARPFFT_ERR_BAD_POINTS,
            Error::Precision(_) => sys::WARPFFT_ERR_PRECISION,
            Error::NoPoints(_) => sys::WARPFFT_ERR_NO_POINTS,
            Error::NoDriver(_) => sys::WARPFFT_ERR_NO_DRIVER,
            Error::NoDevice(_) => sys::WARPFFT_ERR_NO_DEVICE,
            Error::DriverTooOld(_) => sys::WARPFFT_ERR_DRIVER_TOO_OLD,
            Error::NoKernel(_) => sys::WARPFFT_ERR_NO_KERNEL,
            Error::NoCufft(_) => sys::WARPFFT_ERR_NO_CUFFT,
            Error::Cufft(_) => sys::WARPFFT_ERR_CUFFT,
            Error::OutOfMemory(_) => sys::WARPFFT_ERR_OUT_OF_MEMORY,
            Error::Cuda(_) => sys::WARPFFT_ERR_CUDA,
            Error::Unsupported(_) => sys::WARPFFT_ERR_UNSUPPORTED,
            Error::Internal(_) => sys::WARPFFT_ERR_INTERNAL,
            Error::NoNvrtc(_) => sys::WARPFFT_ERR_NO_NVRTC,
        }
    }

    /// The fixed name of [`Error::status`], e.g. `"WARPFFT_ERR_NO_DEVICE"` (as
    /// `warpfft_status_name`; needs no library call).
    pub fn status_name(&self) -> &'static str {
        match self {
            Error::InvalidArg(_) | Error::Shape(_) => "WARPFFT_ERR_INVALID_ARG",
            Error::BadType(_) => "WARPFFT_ERR_BAD_TYPE",
            Error::BadDim(_) => "WARPFFT_ERR_BAD_DIM",
            Error::BadSize(_) => "WARPFFT_ERR_BAD_SIZE",
            Error::BadTol(_) => "WARPFFT_ERR_BAD_TOL",
            Error::BadNpoints(_) => "WARPFFT_ERR_BAD_NPOINTS",
            Error::BadPoints(_) => "WARPFFT_ERR_BAD_POINTS",
            Error::Precision(_) => "WARPFFT_ERR_PRECISION",
            Error::NoPoints(_) => "WARPFFT_ERR_NO_POINTS",
            Error::NoDriver(_) => "WARPFFT_ERR_NO_DRIVER",
            Error::NoDevice(_) => "WARPFFT_ERR_NO_DEVICE",
            Error::DriverTooOld(_) => "WARPFFT_ERR_DRIVER_TOO_OLD",
            Error::NoKernel(_) => "WARPFFT_ERR_NO_KERNEL",
            Error::NoCufft(_) => "WARPFFT_ERR_NO_CUFFT",
            Error::Cufft(_) => "WARPFFT_ERR_CUFFT",
            Error::OutOfMemory(_) => "WARPFFT_ERR_OUT_OF_MEMORY",
            Error::Cuda(_) => "WARPFFT_ERR_CUDA",
            Error::Unsupported(_) => "WARPFFT_ERR_UNSUPPORTED",
            Error::Internal(_) => "WARPFFT_ERR_INTERNAL",
            Error::NoNvrtc(_) => "WARPFFT_ERR_NO_NVRTC",
        }
    }

    /// The message: the C core's `warpfft_last_error()` text for the failing call, or the Rust
    /// check's description for [`Error::Shape`].
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArg(m)
            | Error::BadType(m)
            | Error::BadDim(m)
            | Error::BadSize(m)
            | Error::BadTol(m)
            | Error::BadNpoints(m)
            | Error::BadPoints(m)
            | Error::Precision(m)
            | Error::NoPoints(m)
            | Error::NoDriver(m)
            | Error::NoDevice(m)
            | Error::DriverTooOld(m)
            | Error::NoKernel(m)
            | Error::NoCufft(m)
            | Error::Cufft(m)
            | Error::OutOfMemory(m)
            | Error::Cuda(m)
            | Error::Unsupported(m)
            | Error::Internal(m)
            | Error::NoNvrtc(m)
            | Error::Shape(m) => m,
        }
    }

    /// True when the error says there is no usable GPU on this machine ([`Error::NoDriver`] or
    /// [`Error::NoDevice`]): what tests and examples check to skip cleanly on a machine
    /// without a GPU.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver(_) | Error::NoDevice(_))
    }

    /// A short description of the kind of error, used by `Display`.
    fn kind(&self) -> &'static str {
        match self {
            Error::InvalidArg(_) => "invalid argument",
            Error::BadType(_) => "bad transform type",
            Error::BadDim(_) => "bad dimension",
            Error::BadSize(_) => "bad size",
            Error::BadTol(_) => "tolerance not reachable",
            Error::BadNpoints(_) => "bad number of points",
            Error::BadPoints(_) => "bad points",
            Error::Precision(_) => "precision mismatch",
            Error::NoPoints(_) => "no points set",
            Error::NoDriver(_) => "no CUDA driver",
            Error::NoDevice(_) => "no CUDA device",
            Error::DriverTooOld(_) => "CUDA driver too old",
            Error::NoKernel(_) => "no kernel image for this GPU",
            Error::NoCufft(_) => "cuFFT not found",
            Error::Cufft(_) => "cuFFT error",
            Error::OutOfMemory(_) => "out of memory",
            Error::Cuda(_) => "CUDA error",
            Error::Unsupported(_) => "unsupported",
            Error::Internal(_) => "internal error (a bug in warpfft)",
            Error::NoNvrtc(_) => "NVRTC not found",
            Error::Shape(_) => "shape mismatch",
        }
    }
}

impl fmt::Display for Error {
    /// `"<kind>: <message>"`, e.g. `"no CUDA driver: cannot load libcuda.so.1: ..."`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = self.message();
        if msg.is_empty() {
            write!(f, "{} ({})", self.kind(), self.status_name())
        } else {
            write!(f, "{}: {}", self.kind(), msg)
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `WARPFFT_SUCCESS`, otherwise the [`Error`] for `status` with this thread's
/// message. Must be called right after the C call, before anything else calls into warpfft
/// (including `Drop` of a buffer, which would clear the message).
pub(crate) fn check(status: sys::warpfft_status) -> Result<()> {
    if status == sys::WARPFFT_SUCCESS {
        Ok(())
    } else {
        Err(Error::from_status(status))
    }
}

/// Shorthand for a Rust-side shape error.
pub(crate) fn shape(msg: impl Into<String>) -> Error {
    Error::Shape(msg.into())
}

/// Copies a C string into a `String` (lossily); null gives `""`.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn cstr_to_string(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}
