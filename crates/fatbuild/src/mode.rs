//! What gets embedded: PTX for the driver to JIT, SASS ahead of time, or both.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};

/// What a build embeds. See the crate docs for the exact blobs of each mode.
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
}

impl Mode {
    /// The mode for a crate's `jit` / `aot` Cargo features (read from `CARGO_FEATURE_JIT` /
    /// `CARGO_FEATURE_AOT` in a build script). Neither is an error that says why.
    pub fn from_features(jit: bool, aot: bool) -> Result<Mode, Error> {
        match (jit, aot) {
            (true, false) => Ok(Mode::Jit),
            (false, true) => Ok(Mode::Aot),
            (true, true) => Ok(Mode::AotJit),
            (false, false) => Err(Error::new(
                ErrorKind::NoMode,
                "fatbuild: neither the `jit` nor the `aot` feature is enabled, so there would be \
                 no GPU code to embed: `jit` embeds PTX that the driver compiles for the GPU \
                 present, `aot` embeds SASS for a list of GPU archs.\n\
                 fix: enable at least one of them, e.g. keep the default features (`jit`) or add \
                 `features = [\"aot\"]` next to `default-features = false`.",
            )),
        }
    }

    /// `"jit"`, `"aot"` or `"aot+jit"` (the spelling of the generated `<name>_mode` string).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Jit => "jit",
            Mode::Aot => "aot",
            Mode::AotJit => "aot+jit",
        }
    }

    /// Whether this mode builds SASS (a fatbin).
    pub fn aot(self) -> bool {
        matches!(self, Mode::Aot | Mode::AotJit)
    }

    /// Whether this mode embeds PTX for JIT.
    pub fn jit(self) -> bool {
        matches!(self, Mode::Jit | Mode::AotJit)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = Error;

    /// Parses `jit`, `aot`, `aot+jit` (also `jit+aot`), case-insensitively.
    fn from_str(s: &str) -> Result<Mode, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "jit" => Ok(Mode::Jit),
            "aot" => Ok(Mode::Aot),
            "aot+jit" | "jit+aot" => Ok(Mode::AotJit),
            other => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("fatbuild: unknown mode `{other}`; expected `jit`, `aot` or `aot+jit`"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_map_to_modes() {
        assert_eq!(Mode::from_features(true, false).unwrap(), Mode::Jit);
        assert_eq!(Mode::from_features(false, true).unwrap(), Mode::Aot);
        assert_eq!(Mode::from_features(true, true).unwrap(), Mode::AotJit);
        let e = Mode::from_features(false, false).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoMode);
        assert!(e
            .to_string()
            .contains("neither the `jit` nor the `aot` feature"));
        assert!(e.to_string().contains("fix:"));
    }

    #[test]
    fn names_round_trip() {
        for m in [Mode::Jit, Mode::Aot, Mode::AotJit] {
            assert_eq!(m.as_str().parse::<Mode>().unwrap(), m);
        }
        assert!("both".parse::<Mode>().is_err());
        assert!(Mode::AotJit.aot() && Mode::AotJit.jit());
        assert!(!Mode::Jit.aot() && !Mode::Aot.jit());
    }
}
