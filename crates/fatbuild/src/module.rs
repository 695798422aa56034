//! A kernel module as the build script configures it: its sources, defines and flags
//! ([`crate::resolve`] checks it and turns it into a [`crate::plan::ModuleSpec`]).

use std::path::{Path, PathBuf};

/// A kernel module: one or more `.cu` files compiled with the same defines and linked together
/// (device functions may call across its files). It becomes one fatbin (AOT) and/or one PTX blob
/// per source (JIT), and at run time one `CUmodule`.
#[derive(Debug, Clone)]
pub struct Module {
    pub(crate) name: String,
    pub(crate) sources: Vec<PathBuf>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) flags: Vec<String>,
    pub(crate) kernels: Vec<String>,
}

impl Module {
    /// A module named `name` (the name the C side looks modules up by).
    pub fn new(name: impl Into<String>) -> Module {
        Module {
            name: name.into(),
            sources: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
            kernels: Vec::new(),
        }
    }

    /// Adds a `.cu` file (relative paths are relative to the current directory, which for a
    /// build script is the package root).
    pub fn source(mut self, path: impl AsRef<Path>) -> Module {
        self.sources.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds `-DNAME=VALUE` (or `-DNAME` for `None`) for every source of this module. The same
    /// `.cu` with different defines is a different compilation with its own cached output.
    pub fn define<'a>(mut self, name: &str, value: impl Into<Option<&'a str>>) -> Module {
        self.defines
            .push((name.to_string(), value.into().map(str::to_string)));
        self
    }

    /// Adds an nvcc flag for this module only (after the build-wide flags).
    pub fn nvcc_flag(mut self, flag: impl Into<String>) -> Module {
        self.flags.push(flag.into());
        self
    }

    /// Declares a kernel of this module by its `extern "C"` name. In the builds that compile
    /// (`jit`, `aot`) the PTX must have it, or `embed` fails saying so (a C++ kernel's name
    /// is mangled: the usual cause); in an `nvrtc`-only build, which compiles nothing, the
    /// declared names are the module's kernel list (the generated Rust module's
    /// `Module::kernels`, the manifest's `kernels`).
    pub fn kernel(mut self, name: impl Into<String>) -> Module {
        self.kernels.push(name.into());
        self
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}
