//! Finding the CUDA toolkit (nvcc and its siblings) and asking it what it supports.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::arch::CUDA_13_0_ARCHS;
use crate::error::{Error, ErrorKind};

/// The environment variables [`Toolkit::find`] reads, in the order it tries them.
pub const TOOLKIT_ENV_VARS: &[&str] = &["NVCC", "CUDA_PATH", "CUDA_HOME"];

/// Environment variables that change what nvcc writes, so they are part of every PTX cache key
/// and printed as `cargo:rerun-if-env-changed`: nvcc's own (flags it prepends or appends to
/// every command line, its host compiler) and those of the host compiler's preprocessor that
/// nvcc runs (include search paths).
pub const NVCC_ENV_VARS: &[&str] = &[
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "NVCC_CCBIN",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
];

/// Where [`Toolkit::find`] looks last.
pub const DEFAULT_CUDA_ROOT: &str = "/usr/local/cuda";

/// A CUDA toolkit: nvcc and, from the same directory, ptxas, nvlink and fatbinary.
#[derive(Debug, Clone)]
pub struct Toolkit {
    bin_dir: PathBuf,
    found_via: String,
    version: String,
    version_text: String,
    major: u32,
    minor: u32,
    real_archs: Vec<u32>,
    virtual_archs: Vec<u32>,
}

impl Toolkit {
    /// Finds the toolkit. The first of these that is set decides:
    /// 1. `NVCC`: the path of the nvcc executable;
    /// 2. `CUDA_PATH`, then `CUDA_HOME`: a toolkit root with `bin/nvcc`;
    ///
    /// and when none is set: `nvcc` on `PATH`, then `/usr/local/cuda/bin/nvcc`. A variable that
    /// is set but wrong is an error (it is never silently skipped); the error lists every place
    /// and what was found there. ptxas, nvlink and fatbinary are taken from nvcc's directory.
    pub fn find() -> Result<Toolkit, Error> {
        let (nvcc, via) = locate(&|k| env::var_os(k), Path::new(DEFAULT_CUDA_ROOT))?;
        Toolkit::from_nvcc_via(&nvcc, via)
    }

    /// The toolkit whose nvcc is `nvcc` (runs `nvcc --version`).
    pub fn from_nvcc(nvcc: impl AsRef<Path>) -> Result<Toolkit, Error> {
        let nvcc = nvcc.as_ref();
        Toolkit::from_nvcc_via(nvcc, format!("explicit path {}", nvcc.display()))
    }

    fn from_nvcc_via(nvcc: &Path, found_via: String) -> Result<Toolkit, Error> {
        let bin_dir = nvcc.parent().unwrap_or(Path::new(".")).to_path_buf();
        let text = run_nvcc(nvcc, "--version")?;
        let (major, minor, version) = parse_version(&text).ok_or_else(|| {
            Error::new(
                ErrorKind::ToolkitNotFound,
                format!(
                    "fatbuild: `{} --version` (found via {found_via}) printed no \
                     `release X.Y, VX.Y.Z` line:\n{text}\nfix: point NVCC or CUDA_PATH at a \
                     real CUDA toolkit",
                    nvcc.display()
                ),
            )
        })?;
        // Old nvcc lacks --list-gpu-code; then assume the CUDA 13.0 list.
        let list = |flag: &str, prefix: &str| {
            run_nvcc(nvcc, flag)
                .ok()
                .map(|t| parse_arch_list(&t, prefix))
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| CUDA_13_0_ARCHS.to_vec())
        };
        Ok(Toolkit {
            real_archs: list("--list-gpu-code", "sm_"),
            virtual_archs: list("--list-gpu-arch", "compute_"),
            bin_dir,
            found_via,
            version,
            version_text: text.trim().to_string(),
            major,
            minor,
        })
    }

    /// The directory holding nvcc, ptxas, nvlink and fatbinary.
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// How this toolkit was found, e.g. `PATH` or `CUDA_PATH=/opt/cuda`.
    pub fn found_via(&self) -> &str {
        &self.found_via
    }

    /// The full version, e.g. `13.0.88`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// `major * 1000 + minor * 10`, e.g. 13000 (the encoding of `CUDA_VERSION`).
    pub fn cuda_version(&self) -> i32 {
        (self.major * 1000 + self.minor * 10) as i32
    }

    /// The real archs (`sm_XX`) this toolkit compiles for (`nvcc --list-gpu-code`).
    pub fn supported_archs(&self) -> &[u32] {
        &self.real_archs
    }

    /// The virtual archs (`compute_XX`) this toolkit emits PTX for (`nvcc --list-gpu-arch`).
    pub fn supported_ptx_archs(&self) -> &[u32] {
        &self.virtual_archs
    }

    /// The path of one of the toolkit's programs (`nvcc`, `ptxas`, `nvlink`, `fatbinary`).
    pub fn tool(&self, name: &str) -> PathBuf {
        self.bin_dir
            .join(format!("{name}{}", env::consts::EXE_SUFFIX))
    }

    /// The text hashed into every cache key: the tool versions decide the outputs.
    pub(crate) fn version_text(&self) -> &str {
        &self.version_text
    }

    /// Checks that `tools` exist next to nvcc.
    pub(crate) fn require(&self, tools: &[&str], why: &str) -> Result<(), Error> {
        for t in tools {
            let p = self.tool(t);
            if !is_executable(&p) {
                return Err(Error::new(
                    ErrorKind::ToolkitNotFound,
                    format!(
                        "fatbuild: {} does not exist, but {why} needs {t} (the toolkit was \
                         found via {}).\nfix: install the complete CUDA toolkit, or point \
                         NVCC/CUDA_PATH at one that has nvcc, ptxas, nvlink and fatbinary in \
                         one bin directory",
                        p.display(),
                        self.found_via
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A toolkit that is never run (for command-line tests).
    #[cfg(test)]
    pub(crate) fn fake(bin_dir: &Path) -> Toolkit {
        Toolkit {
            bin_dir: bin_dir.to_path_buf(),
            found_via: "test".into(),
            version: "13.0.88".into(),
            version_text: "Cuda compilation tools, release 13.0, V13.0.88".into(),
            major: 13,
            minor: 0,
            real_archs: CUDA_13_0_ARCHS.to_vec(),
            virtual_archs: CUDA_13_0_ARCHS.to_vec(),
        }
    }
}

fn run_nvcc(nvcc: &Path, flag: &str) -> Result<String, Error> {
    let out = Command::new(nvcc).arg(flag).output().map_err(|e| {
        Error::new(
            ErrorKind::ToolkitNotFound,
            format!(
                "fatbuild: could not run `{} {flag}`: {e}\nfix: install the CUDA toolkit or \
                 point NVCC/CUDA_PATH at a working one",
                nvcc.display()
            ),
        )
    })?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::ToolkitNotFound,
            format!(
                "fatbuild: `{} {flag}` failed ({}):\n{}\nfix: install the CUDA toolkit or point \
                 NVCC/CUDA_PATH at a working one",
                nvcc.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `... release 13.0, V13.0.88` → (13, 0, "13.0.88").
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32, String)> {
    let line = text.lines().find(|l| l.contains("release "))?;
    let rest = &line[line.find("release ")? + "release ".len()..];
    let (release, tail) = rest.split_once(',').unwrap_or((rest, ""));
    let (major, minor) = release.trim().split_once('.')?;
    let (major, minor) = (major.parse().ok()?, minor.parse().ok()?);
    let full = tail
        .trim()
        .strip_prefix('V')
        .map(|v| v.split_whitespace().next().unwrap_or(v).to_string())
        .unwrap_or_else(|| format!("{major}.{minor}"));
    Some((major, minor, full))
}

/// Lines like `sm_90` / `compute_90` → 90; arch-specific variants (`sm_90a`) are skipped.
fn parse_arch_list(text: &str, prefix: &str) -> Vec<u32> {
    let mut v: Vec<u32> = text
        .split_whitespace()
        .filter_map(|t| t.strip_prefix(prefix)?.parse().ok())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = p.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// What one place held.
fn describe_nvcc(p: &Path) -> Result<(), String> {
    if is_executable(p) {
        Ok(())
    } else if p.exists() {
        Err(format!(
            "{} exists but is not an executable file",
            p.display()
        ))
    } else {
        Err(format!("{} does not exist", p.display()))
    }
}

/// Decides which nvcc to use (see [`Toolkit::find`]); `env` reads a variable.
pub(crate) fn locate(
    env: &dyn Fn(&str) -> Option<OsString>,
    default_root: &Path,
) -> Result<(PathBuf, String), Error> {
    let nvcc_name = format!("nvcc{}", env::consts::EXE_SUFFIX);
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    // One note per place for the error message; the first variable that is set decides.
    let mut notes: Vec<String> = Vec::new();
    let mut chosen: Option<(PathBuf, String)> = None;
    let mut broken: Option<String> = None;
    let mut decided = false;

    for var in TOOLKIT_ENV_VARS {
        match get(var) {
            None => notes.push(format!("{var}: not set")),
            Some(val) => {
                let shown = format!("{var}={}", Path::new(&val).display());
                let cand = if *var == "NVCC" {
                    PathBuf::from(&val)
                } else {
                    Path::new(&val).join("bin").join(&nvcc_name)
                };
                let root_missing = *var != "NVCC" && !Path::new(&val).exists();
                let note = match describe_nvcc(&cand) {
                    Ok(()) => format!("{shown}: found {}", cand.display()),
                    Err(_) if root_missing => format!("{shown}: the directory does not exist"),
                    Err(_) if *var == "NVCC" && !cand.exists() => format!("{shown} does not exist"),
                    Err(_) if *var == "NVCC" => {
                        format!("{shown} exists but is not an executable file")
                    }
                    Err(why) => format!("{shown}: {why}"),
                };
                if decided {
                    notes.push(format!("{note} (not used: an earlier variable is set)"));
                    continue;
                }
                decided = true;
                if describe_nvcc(&cand).is_ok() {
                    chosen = Some((cand, shown));
                } else {
                    broken = Some(note.clone());
                }
                notes.push(note);
            }
        }
    }

    let path_dirs: Vec<PathBuf> = get("PATH")
        .map(|p| env::split_paths(&p).collect())
        .unwrap_or_default();
    let on_path = path_dirs
        .iter()
        .map(|d| d.join(&nvcc_name))
        .find(|c| is_executable(c));
    let unused = if decided {
        " (not used: a variable above is set)"
    } else {
        ""
    };
    match &on_path {
        Some(c) => notes.push(format!("PATH: found {}{unused}", c.display())),
        None => notes.push(format!(
            "PATH: no {nvcc_name} in any of its {} directories",
            path_dirs.len()
        )),
    }
    let default_nvcc = default_root.join("bin").join(&nvcc_name);
    let default_ok = describe_nvcc(&default_nvcc);
    match &default_ok {
        Ok(()) => notes.push(format!(
            "{}: found {}{unused}",
            default_root.display(),
            default_nvcc.display()
        )),
        Err(_) if !default_root.exists() => {
            notes.push(format!("{}: does not exist", default_root.display()))
        }
        Err(why) => notes.push(format!("{}: {why}", default_root.display())),
    }

    if let Some(found) = chosen {
        return Ok(found);
    }
    let looked = notes
        .iter()
        .map(|n| format!("  {n}"))
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(note) = broken {
        let var = note.split('=').next().unwrap_or("NVCC").to_string();
        let what = if var == "NVCC" {
            "point NVCC at the nvcc executable"
        } else {
            "point it at a CUDA toolkit root (the directory holding bin/nvcc)"
        };
        return Err(Error::new(
            ErrorKind::ToolkitNotFound,
            format!(
                "fatbuild: cannot use the CUDA toolkit: {note}.\nlooked at:\n{looked}\nfix: {what}, \
                 or unset {var} to search the places below it."
            ),
        ));
    }
    if let Some(c) = on_path {
        return Ok((c, "PATH".into()));
    }
    if default_ok.is_ok() {
        return Ok((default_nvcc, default_root.display().to_string()));
    }
    Err(Error::new(
        ErrorKind::ToolkitNotFound,
        format!(
            "fatbuild: the CUDA toolkit (nvcc) was not found.\nlooked at:\n{looked}\nfix: \
             install the CUDA toolkit (it provides nvcc, ptxas, nvlink and fatbinary), or set \
             NVCC=/path/to/bin/nvcc or CUDA_PATH=/path/to/cuda."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let m: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn version_line_is_parsed() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA \
                    Corporation\nCuda compilation tools, release 13.0, V13.0.88\nBuild x\n";
        assert_eq!(parse_version(text), Some((13, 0, "13.0.88".into())));
        assert_eq!(
            parse_version("Cuda compilation tools, release 12.4"),
            Some((12, 4, "12.4".into()))
        );
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn arch_lists_are_parsed() {
        let t = "sm_75\nsm_80\nsm_90\nsm_90a\nsm_100\n";
        assert_eq!(parse_arch_list(t, "sm_"), [75, 80, 90, 100]);
        assert_eq!(
            parse_arch_list("compute_75\ncompute_90\n", "compute_"),
            [75, 90]
        );
    }

    #[test]
    fn nvcc_env_pointing_nowhere_is_an_error_that_names_it() {
        let nowhere = Path::new("/nonexistent-fatbuild-root");
        let e = locate(&env_of(&[("NVCC", "/nonexistent")]), nowhere).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ToolkitNotFound);
        let msg = e.to_string();
        assert!(msg.contains("NVCC=/nonexistent does not exist"), "{msg}");
        assert!(msg.contains("CUDA_PATH: not set"), "{msg}");
        assert!(
            msg.contains("fix: point NVCC at the nvcc executable"),
            "{msg}"
        );
    }

    #[test]
    fn nothing_found_lists_every_place_and_the_fix() {
        let nowhere = Path::new("/nonexistent-fatbuild-root");
        let e = locate(
            &env_of(&[("PATH", "/nonexistent-a:/nonexistent-b")]),
            nowhere,
        );
        let msg = e.unwrap_err().to_string();
        for want in [
            "nvcc) was not found",
            "NVCC: not set",
            "CUDA_PATH: not set",
            "CUDA_HOME: not set",
            "PATH: no nvcc in any of its 2 directories",
            "/nonexistent-fatbuild-root: does not exist",
            "install the CUDA toolkit",
            "CUDA_PATH=/path/to/cuda",
        ] {
            assert!(msg.contains(want), "missing `{want}` in:\n{msg}");
        }
        let e = locate(&env_of(&[("CUDA_HOME", "/nonexistent-home")]), nowhere);
        let msg = e.unwrap_err().to_string();
        assert!(msg.contains("CUDA_HOME=/nonexistent-home: the directory does not exist"));
        assert!(msg.contains("unset CUDA_HOME"), "{msg}");
    }

    #[cfg(unix)]
    #[test]
    fn order_is_nvcc_cuda_path_cuda_home_path_default() {
        let root = crate::cache::test_dir("locate");
        let mk = |name: &str| {
            let bin = root.join(name).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            crate::cache::write_script(&bin.join("nvcc"), "#!/bin/sh\n");
            bin.join("nvcc")
        };
        let (a, b, c, d) = (mk("a"), mk("b"), mk("c"), mk("d"));
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let root_of = |p: &Path| s(p.parent().unwrap().parent().unwrap());
        let dflt = root.join("d");
        let path = s(c.parent().unwrap());
        let all = [
            ("NVCC", s(&a)),
            ("CUDA_PATH", root_of(&b)),
            ("CUDA_HOME", root_of(&c)),
            ("PATH", path.clone()),
        ];
        let pick = |n: usize| {
            let pairs: Vec<(&str, &str)> = all[n..].iter().map(|(k, v)| (*k, v.as_str())).collect();
            locate(&env_of(&pairs), &dflt).unwrap().0
        };
        assert_eq!(pick(0), a);
        assert_eq!(pick(1), b);
        assert_eq!(pick(2), c);
        assert_eq!(pick(3), c);
        assert_eq!(locate(&env_of(&[]), &dflt).unwrap().0, d);
        let _ = std::fs::remove_dir_all(root);
    }
}
