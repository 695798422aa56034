//! GPU arch lists: parsing `"80;90"`-style specs, `native` detection, the defaults.

use std::ffi::OsStr;
use std::io;
use std::process::Command;

use crate::error::{Error, ErrorKind};

/// The real archs (`sm_XX`) CUDA 13.0 compiles for (`nvcc --list-gpu-code`, without the
/// arch-specific `a`/`f` variants). Used when the toolkit cannot be asked.
pub const CUDA_13_0_ARCHS: &[u32] = &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

/// The archs an AOT build targets when no arch list is given:
/// Turing (75), Ampere (80, 86), Ada (89), Hopper (90), Blackwell data-centre (100) and
/// Blackwell consumer/workstation (120). Each entry runs on later minor revisions of its major
/// arch (sm_80 SASS runs on sm_86/87/88, sm_100 on sm_103, sm_120 on sm_121), so this covers
/// every GPU CUDA 13 supports apart from Jetson Thor (110); entries the toolkit in use does not
/// support are dropped.
pub const DEFAULT_ARCHS: &[u32] = &[75, 80, 86, 89, 90, 100, 120];

/// The default virtual arch for PTX: `compute_75`, the lowest CUDA 13 supports, so the PTX can
/// be JIT-compiled for every GPU the toolkit knows.
pub const DEFAULT_PTX_ARCH: &str = "compute_75";

/// Parses an arch list such as `"80;90"`, `"80,90"`, `"sm_80 sm_90"`, `"8.0 9.0"` or `"native"`
/// (the GPUs of this machine, via `nvidia-smi`; may be combined with others: `"native;80"`).
/// The result is sorted and deduplicated; every entry must be in `supported`.
pub fn parse(spec: &str, supported: &[u32]) -> Result<Vec<u32>, Error> {
    parse_with(
        spec,
        &format!("arch list `{spec}`"),
        "the CUDA toolkit",
        supported,
        &mut native,
    )
}

/// The compute capabilities of the GPUs of this machine, as `nvidia-smi` reports them
/// (`9.0` → `90`), sorted and deduplicated.
pub fn native() -> Result<Vec<u32>, Error> {
    native_with(OsStr::new("nvidia-smi"))
}

/// [`parse`] with the origin of the spec (for messages) and the `native` query injected.
pub(crate) fn parse_with(
    spec: &str,
    origin: &str,
    toolkit: &str,
    supported: &[u32],
    native: &mut dyn FnMut() -> Result<Vec<u32>, Error>,
) -> Result<Vec<u32>, Error> {
    let mut archs = Vec::new();
    let tokens: Vec<&str> = spec
        .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidArch,
            format!(
                "fatbuild: {origin} is empty.\nfix: list archs like `80;90` or `sm_80,sm_90`, \
                 or use `native`; supported by {toolkit}: {}",
                list(supported)
            ),
        ));
    }
    for tok in tokens {
        if tok.eq_ignore_ascii_case("native") {
            for a in native()? {
                if !supported.contains(&a) {
                    return Err(Error::new(
                        ErrorKind::InvalidArch,
                        format!(
                            "fatbuild: {origin}: the GPU of this machine is sm_{a}, which \
                             {toolkit} cannot compile for.\nfix: list archs explicitly; \
                             supported: {}",
                            list(supported)
                        ),
                    ));
                }
                archs.push(a);
            }
            continue;
        }
        let arch = parse_token(tok).ok_or_else(|| {
            let hint = if tok.to_ascii_lowercase().starts_with("compute_") {
                " (a virtual arch: list real archs here, the PTX arch is set separately)"
            } else if tok.ends_with(['a', 'f']) {
                " (arch-specific `a`/`f` targets are not supported)"
            } else {
                ""
            };
            Error::new(
                ErrorKind::InvalidArch,
                format!(
                    "fatbuild: {origin}: `{tok}` is not a GPU arch{hint}.\nfix: write e.g. \
                     `80;90`, `sm_80,sm_90`, `8.0 9.0` or `native`; supported by {toolkit}: {}",
                    list(supported)
                ),
            )
        })?;
        if !supported.contains(&arch) {
            return Err(Error::new(
                ErrorKind::InvalidArch,
                format!(
                    "fatbuild: {origin}: sm_{arch} is not supported by {toolkit}.\nfix: use \
                     archs from: {}",
                    list(supported)
                ),
            ));
        }
        archs.push(arch);
    }
    archs.sort_unstable();
    archs.dedup();
    Ok(archs)
}

/// `"sm_86"`, `"86"`, `"8.6"` → 86.
fn parse_token(tok: &str) -> Option<u32> {
    let lower = tok.to_ascii_lowercase();
    let t = lower.strip_prefix("sm_").unwrap_or(&lower);
    if let Some((major, minor)) = t.split_once('.') {
        let major: u32 = digits(major)?;
        let minor: u32 = digits(minor)?;
        return (minor < 10 && major > 0).then_some(major * 10 + minor);
    }
    digits(t).filter(|&a| a >= 10)
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `75 80 86`.
pub(crate) fn list(archs: &[u32]) -> String {
    archs
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `program --query-gpu=compute_cap --format=csv,noheader` and parses its lines.
pub(crate) fn native_with(program: &OsStr) -> Result<Vec<u32>, Error> {
    const FIX: &str = "`native` needs an NVIDIA GPU and driver on the build machine.\nfix: give \
                       the archs explicitly instead, e.g. WARPFFT_CUDA_ARCHS=\"80;90\"";
    let shown = format!(
        "{} --query-gpu=compute_cap --format=csv,noheader",
        program.to_string_lossy()
    );
    let out = Command::new(program)
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .output()
        .map_err(|e| {
            let what = if e.kind() == io::ErrorKind::NotFound {
                "was not found".to_string()
            } else {
                format!("could not be started: {e}")
            };
            Error::new(
                ErrorKind::NativeArch,
                format!("fatbuild: `{shown}` {what}: {FIX}"),
            )
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::NativeArch,
            format!(
                "fatbuild: `{shown}` failed ({}): {}\n{FIX}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    let mut archs = Vec::new();
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let arch = line.split_once('.').and_then(|(maj, min)| {
            let (maj, min) = (digits(maj)?, digits(min)?);
            (min < 10).then_some(maj * 10 + min)
        });
        match arch {
            Some(a) => archs.push(a),
            None => {
                return Err(Error::new(
                    ErrorKind::NativeArch,
                    format!(
                        "fatbuild: `{shown}` printed `{line}`, not a compute capability.\n{FIX}"
                    ),
                ))
            }
        }
    }
    if archs.is_empty() {
        return Err(Error::new(
            ErrorKind::NativeArch,
            format!("fatbuild: `{shown}` listed no GPU.\n{FIX}"),
        ));
    }
    archs.sort_unstable();
    archs.dedup();
    Ok(archs)
}

/// Where the arch list comes from.
#[derive(Debug, Clone)]
pub(crate) enum Archs {
    Default,
    Spec { spec: String, origin: String },
    List(Vec<u32>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(spec: &str) -> Result<Vec<u32>, Error> {
        parse_with(
            spec,
            "WARPFFT_CUDA_ARCHS",
            "CUDA 13.0",
            CUDA_13_0_ARCHS,
            &mut || Ok(vec![90]),
        )
    }

    #[test]
    fn accepted_spellings() {
        assert_eq!(p("80;90").unwrap(), [80, 90]);
        assert_eq!(p("80,90").unwrap(), [80, 90]);
        assert_eq!(p("sm_80 sm_90").unwrap(), [80, 90]);
        assert_eq!(p(" SM_90 ; sm_80 ,").unwrap(), [80, 90]);
        assert_eq!(p("8.6;9.0;12.0").unwrap(), [86, 90, 120]);
        assert_eq!(p("90;80;90;sm_80").unwrap(), [80, 90]);
        assert_eq!(p("native").unwrap(), [90]);
        assert_eq!(p("native;75").unwrap(), [75, 90]);
    }

    #[test]
    fn rejected_spellings() {
        for bad in [
            "",
            " ; ",
            "sm_91",
            "70",
            "sm_90a",
            "compute_80",
            "abc",
            "9",
            "8.10",
            "sm_",
        ] {
            let e = p(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArch, "{bad}");
            let msg = e.to_string();
            assert!(msg.contains("WARPFFT_CUDA_ARCHS"), "{msg}");
            assert!(
                msg.contains("75 80 86 87 88 89 90 100 103 110 120 121"),
                "{msg}"
            );
        }
        assert!(p("sm_91")
            .unwrap_err()
            .to_string()
            .contains("sm_91 is not supported"));
        assert!(p("compute_80")
            .unwrap_err()
            .to_string()
            .contains("virtual arch"));
    }

    #[test]
    fn native_errors_propagate_and_unsupported_native_is_rejected() {
        let mut no_gpu = || Err(Error::new(ErrorKind::NativeArch, "no gpu"));
        let e = parse_with("native", "x", "CUDA 13.0", CUDA_13_0_ARCHS, &mut no_gpu);
        assert_eq!(e.unwrap_err().kind(), ErrorKind::NativeArch);
        let e = parse_with("native", "x", "CUDA 13.0", CUDA_13_0_ARCHS, &mut || {
            Ok(vec![70])
        });
        assert!(e.unwrap_err().to_string().contains("sm_70"));
    }

    #[test]
    fn native_without_nvidia_smi_says_what_to_do() {
        let e = native_with(OsStr::new("/nonexistent/nvidia-smi")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NativeArch);
        let msg = e.to_string();
        assert!(msg.contains("was not found"), "{msg}");
        assert!(msg.contains("needs an NVIDIA GPU"), "{msg}");
        assert!(msg.contains("explicitly"), "{msg}");
    }

    #[cfg(unix)]
    #[test]
    fn native_parses_nvidia_smi_output() {
        let dir = crate::cache::test_dir("native");
        let fake = dir.join("nvidia-smi");
        crate::cache::write_script(&fake, "#!/bin/sh\nprintf '9.0\\n8.6\\n9.0\\n'\n");
        assert_eq!(native_with(fake.as_os_str()).unwrap(), [86, 90]);
        let failing = dir.join("nvidia-smi-fail");
        crate::cache::write_script(
            &failing,
            "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate' >&2\nexit 9\n",
        );
        let msg = native_with(failing.as_os_str()).unwrap_err().to_string();
        assert!(msg.contains("could not communicate"), "{msg}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn defaults_are_supported_by_cuda_13() {
        assert!(DEFAULT_ARCHS.iter().all(|a| CUDA_13_0_ARCHS.contains(a)));
        assert!(DEFAULT_ARCHS.windows(2).all(|w| w[0] < w[1]));
    }
}
