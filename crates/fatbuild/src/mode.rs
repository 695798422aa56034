//! What gets embedded: PTX for the driver to JIT, SASS ahead of time, the kernel sources for
//! NVRTC at run time, or a combination.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};

/// What a build embeds: images (PTX, SASS or both), the sources (`Nvrtc`), or images and
/// sources. See the crate docs for the exact contents of each mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// PTX for the virtual arch ([`Build::ptx_arch`](crate::Build::ptx_arch)), one blob per
    /// source; the driver JIT-compiles it for the GPU present (and caches the result).
    Jit,
    /// A fatbin with SASS (ELF) for each arch of the arch list; no JIT at run time, and no
    /// support for GPUs outside the list.
    Aot,
    /// The AOT fatbin plus PTX as a fallback for GPUs outside the arch list.
    AotJit,
    /// The kernel sources and the headers they include, as text, plus each module's compile
    /// options, for NVRTC to compile at run time; no images. Needs no CUDA toolkit at all:
    /// nothing is compiled, searched for or run.
    Nvrtc,
    /// [`Jit`](Mode::Jit) and [`Nvrtc`](Mode::Nvrtc): PTX and the sources.
    JitNvrtc,
    /// [`Aot`](Mode::Aot) and [`Nvrtc`](Mode::Nvrtc): the fatbins and the sources.
    AotNvrtc,
    /// [`AotJit`](Mode::AotJit) and [`Nvrtc`](Mode::Nvrtc): fatbins, PTX and the sources.
    AotJitNvrtc,
}

impl Mode {
    /// Every mode, in the order of the table in the crate docs.
    pub const ALL: [Mode; 7] = [
        Mode::Jit,
        Mode::Aot,
        Mode::AotJit,
        Mode::Nvrtc,
        Mode::JitNvrtc,
        Mode::AotNvrtc,
        Mode::AotJitNvrtc,
    ];

    /// The mode for a crate's `jit` / `aot` / `nvrtc` Cargo features (read from
    /// `CARGO_FEATURE_JIT`, `CARGO_FEATURE_AOT`, `CARGO_FEATURE_NVRTC` in a build script). Any
    /// non-empty combination is a mode; none is an error that says why.
    pub fn from_features(jit: bool, aot: bool, nvrtc: bool) -> Result<Mode, Error> {
        Mode::from_parts(jit, aot, nvrtc).ok_or_else(|| {
            Error::new(
                ErrorKind::NoMode,
                "fatbuild: none of the `jit`, `aot` and `nvrtc` features is enabled, so there \
                 would be no GPU code to embed: `jit` embeds PTX that the driver compiles for \
                 the GPU present, `aot` embeds SASS for a list of GPU archs, `nvrtc` embeds the \
                 kernel sources for NVRTC to compile at run time (and needs no CUDA toolkit to \
                 build).\n\
                 fix: enable at least one of them, e.g. keep the default features (`jit`) or add \
                 `features = [\"aot\"]` (or `[\"nvrtc\"]`) next to `default-features = false`.",
            )
        })
    }

    /// The mode for the features of the crate whose build script is running: reads
    /// `CARGO_FEATURE_JIT`, `CARGO_FEATURE_AOT` and `CARGO_FEATURE_NVRTC` (Cargo sets them
    /// for a build script from the crate's `jit`, `aot` and `nvrtc` features) and calls
    /// [`from_features`](Mode::from_features).
    pub fn from_cargo_features() -> Result<Mode, Error> {
        let on = |f: &str| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some();
        Mode::from_features(on("JIT"), on("AOT"), on("NVRTC"))
    }

    /// The mode with these parts, `None` for none at all.
    pub fn from_parts(jit: bool, aot: bool, sources: bool) -> Option<Mode> {
        Some(match (jit, aot, sources) {
            (true, false, false) => Mode::Jit,
            (false, true, false) => Mode::Aot,
            (true, true, false) => Mode::AotJit,
            (false, false, true) => Mode::Nvrtc,
            (true, false, true) => Mode::JitNvrtc,
            (false, true, true) => Mode::AotNvrtc,
            (true, true, true) => Mode::AotJitNvrtc,
            (false, false, false) => return None,
        })
    }

    /// `"jit"`, `"aot"`, `"aot+jit"`, `"nvrtc"`, `"jit+nvrtc"`, `"aot+nvrtc"` or
    /// `"aot+jit+nvrtc"` (the spelling of the generated `<name>_mode` string).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Jit => "jit",
            Mode::Aot => "aot",
            Mode::AotJit => "aot+jit",
            Mode::Nvrtc => "nvrtc",
            Mode::JitNvrtc => "jit+nvrtc",
            Mode::AotNvrtc => "aot+nvrtc",
            Mode::AotJitNvrtc => "aot+jit+nvrtc",
        }
    }

    /// Whether this mode builds SASS (a fatbin).
    pub fn aot(self) -> bool {
        matches!(
            self,
            Mode::Aot | Mode::AotJit | Mode::AotNvrtc | Mode::AotJitNvrtc
        )
    }

    /// Whether this mode embeds PTX for JIT.
    pub fn jit(self) -> bool {
        matches!(
            self,
            Mode::Jit | Mode::AotJit | Mode::JitNvrtc | Mode::AotJitNvrtc
        )
    }

    /// Whether this mode embeds the sources (for NVRTC).
    pub fn sources(self) -> bool {
        matches!(
            self,
            Mode::Nvrtc | Mode::JitNvrtc | Mode::AotNvrtc | Mode::AotJitNvrtc
        )
    }

    /// Whether this mode compiles anything at build time (and so needs the CUDA toolkit):
    /// every mode but [`Nvrtc`](Mode::Nvrtc).
    pub fn images(self) -> bool {
        self.aot() || self.jit()
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = Error;

    /// Parses the [`as_str`](Mode::as_str) spellings, case-insensitively, with the parts in
    /// any order (`jit+aot`, `nvrtc+jit`).
    fn from_str(s: &str) -> Result<Mode, Error> {
        let t = s.trim().to_ascii_lowercase();
        let (mut jit, mut aot, mut nvrtc) = (0, 0, 0);
        for part in t.split('+') {
            match part.trim() {
                "jit" => jit += 1,
                "aot" => aot += 1,
                "nvrtc" => nvrtc += 1,
                _ => jit = 9, // unknown: refused below
            }
        }
        match (jit, aot, nvrtc) {
            (0..=1, 0..=1, 0..=1) => Mode::from_parts(jit == 1, aot == 1, nvrtc == 1),
            _ => None,
        }
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: unknown mode `{t}`; expected `jit`, `aot`, `nvrtc` or a \
                     combination joined with `+` (`aot+jit`, `jit+nvrtc`, `aot+jit+nvrtc`, ...)"
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_map_to_modes() {
        for (jit, aot, nvrtc, want) in [
            (true, false, false, Mode::Jit),
            (false, true, false, Mode::Aot),
            (true, true, false, Mode::AotJit),
            (false, false, true, Mode::Nvrtc),
            (true, false, true, Mode::JitNvrtc),
            (false, true, true, Mode::AotNvrtc),
            (true, true, true, Mode::AotJitNvrtc),
        ] {
            assert_eq!(Mode::from_features(jit, aot, nvrtc).unwrap(), want);
        }
        let e = Mode::from_features(false, false, false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoMode);
        assert!(e
            .to_string()
            .contains("none of the `jit`, `aot` and `nvrtc`"));
        assert!(e.to_string().contains("fix:"));
    }

    #[test]
    fn names_round_trip_and_parts_agree() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>().unwrap(), m);
            assert_eq!(Mode::from_parts(m.jit(), m.aot(), m.sources()), Some(m));
            assert_eq!(m.images(), m != Mode::Nvrtc);
            let parts: Vec<&str> = m.as_str().split('+').collect();
            assert_eq!(parts.contains(&"jit"), m.jit(), "{m}");
            assert_eq!(parts.contains(&"aot"), m.aot(), "{m}");
            assert_eq!(parts.contains(&"nvrtc"), m.sources(), "{m}");
        }
        assert_eq!("jit+aot".parse::<Mode>().unwrap(), Mode::AotJit);
        assert_eq!(" NVRTC+Jit ".parse::<Mode>().unwrap(), Mode::JitNvrtc);
        for bad in ["both", "", "jit+jit", "aot+", "jit+cubin"] {
            let e = bad.parse::<Mode>().unwrap_err();
            assert!(e.to_string().contains("unknown mode"), "{bad}: {e}");
        }
        assert!(Mode::AotJit.aot() && Mode::AotJit.jit() && !Mode::AotJit.sources());
        assert!(!Mode::Jit.aot() && !Mode::Aot.jit() && !Mode::Nvrtc.images());
    }
}
