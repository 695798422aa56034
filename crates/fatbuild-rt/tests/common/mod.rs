//! What the integration tests share: the real NVRTC where this machine has one, the check of
//! an error's message, and the header the NVRTC tests' sources include.

use fatbuild_rt::__private::v1::file;
use fatbuild_rt::{Error, Nvrtc, SourceFile};

/// The real NVRTC, if this machine has one (compiling needs no GPU); `None`, reported, if not.
pub fn nvrtc() -> Option<&'static Nvrtc> {
    match Nvrtc::get() {
        Ok(n) => Some(n),
        Err(e) => {
            eprintln!("SKIPPED (NVRTC path): {e}");
            None
        }
    }
}

/// Asserts that `e`'s message holds each of `wants`.
#[track_caller]
pub fn assert_says(e: &Error, wants: &[&str]) {
    for want in wants {
        assert!(e.message().contains(want), "{want:?} not in: {e}");
    }
}

/// `common.cuh`, which defines `SCALE`.
pub const COMMON: SourceFile = file("common.cuh", b"#define SCALE 3.0f\n\0");
