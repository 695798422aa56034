//! What the integration tests share: a fresh directory of test kernels.

use std::fs;
use std::path::{Path, PathBuf};

/// A fresh directory `<name>-<pid>` in cargo's scratch space for tests, with `kernels/`
/// holding `files` (name, text).
pub fn kernel_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let k = d.join("kernels");
    fs::create_dir_all(&k).unwrap();
    for (file, text) in files {
        fs::write(k.join(file), text).unwrap();
    }
    d
}
