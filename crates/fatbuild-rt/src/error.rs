//! The one error type: every message says what failed, on what, and what to do.

use std::fmt;

/// What kind of failure an [`Error`] reports (its message carries the details).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The CUDA driver library (`libcuda.so.1`) could not be loaded, is not a usable driver
    /// (a symbol is missing), or is the toolkit's link stub.
    NoDriver,
    /// The driver sees no GPU, or the device ordinal is out of range.
    NoDevice,
    /// The driver is older than the embedded images (or NVRTC's output) need.
    DriverTooOld,
    /// NVRTC (`libnvrtc.so`) could not be loaded or is not usable.
    NoNvrtc,
    /// No embedded image runs on this GPU and nothing can compile one for it: the wrong arch
    /// list, or no PTX and no sources.
    NoImageForGpu,
    /// NVRTC or the driver's JIT compiler rejected a kernel (the message has the log).
    Compile,
    /// A kernel name that the module does not have.
    KernelNotFound,
    /// A driver call failed (the message names the call and the `CUresult`).
    Driver,
    /// A bad argument (e.g. buffers of different lengths).
    InvalidArgument,
}

/// A run-time failure. `Display` gives the whole explanation; `Debug` the same after the kind.
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    code: Option<i32>,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            code: None,
            message: message.into(),
        }
    }

    #[cfg_attr(not(feature = "driver"), allow(dead_code))]
    pub(crate) fn with_code(kind: ErrorKind, code: i32, message: impl Into<String>) -> Error {
        Error {
            kind,
            code: Some(code),
            message: message.into(),
        }
    }

    /// An [`ErrorKind::InvalidArgument`] error with `message`: for crates that wrap kernels
    /// and check their arguments before a launch.
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// The category.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The `CUresult` (driver errors) or `nvrtcResult` (NVRTC errors) behind it, if any.
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// The message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether this machine simply has no usable GPU (no driver, the stub driver, no device):
    /// the case a program may want to report and skip rather than fail on.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self.kind, ErrorKind::NoDriver | ErrorKind::NoDevice)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
