//! The one error type: every message says what failed, where, and how to fix it.

use std::fmt;
use std::io;
use std::path::Path;

/// What kind of failure an [`Error`] reports (its message carries the details).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No usable CUDA toolkit was found, or one of its tools is missing.
    ToolkitNotFound,
    /// A tool (nvcc, ptxas, nvlink, fatbinary, nvidia-smi) could not start or exited with an error.
    ToolFailed,
    /// An arch list or PTX arch could not be parsed or is not supported by the toolkit.
    InvalidArch,
    /// `native` was asked for but the GPUs of the build machine could not be queried.
    NativeArch,
    /// Neither JIT nor AOT was asked for.
    NoMode,
    /// The builder was configured inconsistently (bad module, empty name, ...).
    InvalidConfig,
    /// Reading or writing a file failed.
    Io,
}

/// A build failure. `Display` gives the full, multi-line explanation including the fix;
/// `Debug` gives the same text after the kind, so `unwrap()` and a `main` returning the error
/// print it readably too.
///
/// Build scripts usually just stop with it:
/// `let emb = build.embed("kernels").unwrap_or_else(|e| panic!("{e}"));`
/// or print it and `std::process::exit(1)`.
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// An I/O failure on `path` while doing `what`.
    pub(crate) fn io(what: &str, path: &Path, err: io::Error) -> Error {
        Error::new(
            ErrorKind::Io,
            format!("fatbuild: {what} `{}` failed: {err}", path.display()),
        )
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The full message (the same text as `Display`).
    pub fn message(&self) -> &str {
        &self.message
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
