//! The configuration: [`Build`] with its knobs (over [`crate::module::Module`]s), and
//! [`Build::embed`], which drives the stages in order:
//!
//! 1. [`crate::resolve`]: the configuration checked and resolved (module specs, archs,
//!    headers, directories; the `cargo:` lines for the inputs); in the modes with sources,
//!    [`crate::sources`]: the sources and the headers they include read, named and digested
//!    (no toolkit; in [`Mode::Nvrtc`] stages 2 and 3 do not run at all);
//! 2. [`crate::plan`]: tool jobs with cache-keyed output names (nothing runs);
//! 3. [`crate::run`]: cache hits decided, the missing outputs built through [`crate::spawn`];
//! 4. [`crate::output`]: the blobs read back and written as C ([`crate::embed`] formats it).

use std::collections::HashSet;
use std::env;
use std::path::{Path, PathBuf};

use crate::arch::{Archs, DEFAULT_PTX_ARCH};
use crate::cache;
use crate::embed;
use crate::error::{Error, ErrorKind};
use crate::mode::Mode;
use crate::module::Module;
use crate::output::{self, Embedded, EmbeddedFile};
use crate::plan::{ModuleSpec, PlanInputs};
use crate::resolve;
use crate::run;
use crate::rust;
use crate::sources::{self, Sources};
use crate::toolkit::Toolkit;

/// Builds CUDA kernels into blobs embedded in a generated C file. See the crate docs for the
/// walk-through; every method documents its environment-variable twin where it has one.
#[derive(Debug, Clone)]
pub struct Build {
    mode: Mode,
    archs: Archs,
    ptx_arch: String,
    nvcc_flags: Vec<String>,
    /// Where each of `nvcc_flags` came from, for messages.
    nvcc_flag_origins: Vec<String>,
    ptxas_flags: Vec<String>,
    includes: Vec<PathBuf>,
    modules: Vec<Module>,
    out_dir: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    jobs: Option<usize>,
    cargo_metadata: Option<bool>,
    toolkit: Option<Toolkit>,
    compress: bool,
    env_vars: Vec<String>,
    /// The arch list's variable (read only by the AOT modes) and whether it was set blank.
    arch_env: Option<(String, bool)>,
    cache_max_size: Option<u64>,
    emit_rust: bool,
    emit_c: bool,
    rust_runtime: String,
}

impl Default for Build {
    fn default() -> Build {
        Build::new()
    }
}

impl Build {
    /// A build with the defaults: [`Mode::Jit`], [`DEFAULT_ARCHS`](crate::DEFAULT_ARCHS), PTX for
    /// [`DEFAULT_PTX_ARCH`], no flags, no modules.
    pub fn new() -> Build {
        Build {
            mode: Mode::Jit,
            archs: Archs::Default,
            ptx_arch: DEFAULT_PTX_ARCH.to_string(),
            nvcc_flags: Vec::new(),
            nvcc_flag_origins: Vec::new(),
            ptxas_flags: Vec::new(),
            includes: Vec::new(),
            modules: Vec::new(),
            out_dir: None,
            cache_dir: None,
            jobs: None,
            cargo_metadata: None,
            toolkit: None,
            compress: true,
            env_vars: Vec::new(),
            arch_env: None,
            cache_max_size: None,
            emit_rust: true,
            emit_c: false,
            rust_runtime: "::fatbuild_rt".to_string(),
        }
    }

    /// What to embed (default [`Mode::Jit`]); see [`Mode::from_features`].
    pub fn mode(mut self, mode: Mode) -> Build {
        self.mode = mode;
        self
    }

    /// The real archs to build SASS for in the AOT modes, as a spec: `"80;90"`, `"80,90"`,
    /// `"sm_80 sm_90"`, `"8.0 9.0"`, `"native"` (see [`parse_archs`](crate::parse_archs)). Parsed by
    /// [`embed`](Build::embed), and only when the mode is AOT. Default:
    /// [`DEFAULT_ARCHS`](crate::DEFAULT_ARCHS).
    pub fn archs(mut self, spec: &str) -> Build {
        self.archs = Archs::Spec {
            spec: spec.to_string(),
            origin: format!("arch list `{spec}`"),
        };
        self
    }

    /// The arch list from environment variable `var` (e.g. `WARPFFT_CUDA_ARCHS`), in the syntax
    /// of [`archs`](Build::archs). Unset or blank keeps the current list (the default unless
    /// set before; set but blank gets a `cargo:warning`, since it usually means a list was
    /// meant). In the AOT modes (the only ones that read it) emits
    /// `cargo:rerun-if-env-changed=<var>`.
    pub fn archs_from_env(mut self, var: &str) -> Build {
        let mut blank = false;
        if let Some(v) = env::var_os(var) {
            let spec = v.to_string_lossy().into_owned();
            blank = spec.trim().is_empty();
            if !blank {
                self.archs = Archs::Spec {
                    origin: format!("{var}=\"{spec}\""),
                    spec,
                };
            }
        }
        self.arch_env = Some((var.to_string(), blank));
        self
    }

    /// The arch list as numbers, e.g. `&[80, 90]` (checked against the toolkit by `embed`).
    pub fn arch_list(mut self, archs: &[u32]) -> Build {
        self.archs = Archs::List(archs.to_vec());
        self
    }

    /// The virtual arch the PTX is generated for: `"compute_75"` (also `"sm_75"`, `"75"`).
    /// Default [`DEFAULT_PTX_ARCH`]. PTX runs on this arch and newer; in the AOT modes every
    /// listed arch must be at least this one.
    pub fn ptx_arch(mut self, arch: &str) -> Build {
        self.ptx_arch = arch.to_string();
        self
    }

    /// Adds one nvcc flag (e.g. `"--use_fast_math"`, `"-lineinfo"`), for every module.
    pub fn nvcc_flag(mut self, flag: impl Into<String>) -> Build {
        self.nvcc_flags.push(flag.into());
        self.nvcc_flag_origins.push("Build::nvcc_flag".into());
        self
    }

    /// Adds nvcc flags from environment variable `var` (e.g. `WARPFFT_NVCC_FLAGS`), split on
    /// whitespace (no quoting). Emits `cargo:rerun-if-env-changed=<var>`. In the modes with
    /// sources they also become NVRTC options where NVRTC has them (crate docs, "Embedded
    /// sources").
    pub fn nvcc_flags_from_env(mut self, var: &str) -> Build {
        self.env_vars.push(var.to_string());
        if let Some(v) = env::var_os(var) {
            let v = v.to_string_lossy().into_owned();
            for flag in v.split_whitespace() {
                self.nvcc_flags.push(flag.to_string());
                self.nvcc_flag_origins.push(var.to_string());
            }
        }
        self
    }

    /// Adds one ptxas flag (e.g. `"-O3"`, `"--maxrregcount=64"`) for the AOT modes. (JIT
    /// compilation happens in the driver and does not see it.)
    pub fn ptxas_flag(mut self, flag: impl Into<String>) -> Build {
        self.ptxas_flags.push(flag.into());
        self
    }

    /// Adds an include directory (`-I`). Its header files (`.h`, `.cuh`, `.hpp`, ..., found
    /// recursively) are printed as `cargo:rerun-if-changed` and their names enter every PTX
    /// cache key; the contents of the headers a source actually includes enter its key (see
    /// the crate docs, "Cache"). Headers beside a source are treated the same way. In the modes
    /// with sources, quoted includes are looked up here (after the including file's directory)
    /// and embedded files are named relative to the first of these that holds them.
    pub fn include(mut self, dir: impl AsRef<Path>) -> Build {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds a module.
    pub fn module(mut self, module: Module) -> Build {
        self.modules.push(module);
        self
    }

    /// Where `<name>.c` and `<name>.h` go. Default: the `OUT_DIR` environment variable (set by
    /// Cargo for build scripts).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The cache directory. Default: `FATBUILD_CACHE_DIR` if set, else `fatbuild-cache` next to
    /// the profile directory of the target dir (derived from `OUT_DIR`), else
    /// `<out dir>/fatbuild-cache`. Emits `cargo:rerun-if-env-changed=FATBUILD_CACHE_DIR`.
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> Build {
        self.cache_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The cache's size bound in bytes (0: unbounded). After a successful build, while the
    /// cache directory is larger, the least recently used entries are removed (never this
    /// build's, nor any used within the last hour). Default: [`MAX_SIZE_ENV`](crate::MAX_SIZE_ENV)
    /// (`FATBUILD_CACHE_MAX_SIZE`, e.g. `4G`, `500M`) if set, else
    /// [`DEFAULT_MAX_SIZE`](crate::DEFAULT_MAX_SIZE) (2 GiB).
    pub fn cache_max_size(mut self, bytes: u64) -> Build {
        self.cache_max_size = Some(bytes);
        self
    }

    /// How many tools run at once. Default: `NUM_JOBS` (set by Cargo from `-j`), else the
    /// available parallelism.
    pub fn jobs(mut self, n: usize) -> Build {
        self.jobs = Some(n.max(1));
        self
    }

    /// Whether to print `cargo:rerun-if-changed`, `cargo:rerun-if-env-changed` and
    /// `cargo:warning` lines. Default: only when `OUT_DIR` is set, i.e. inside a build script.
    pub fn cargo_metadata(mut self, on: bool) -> Build {
        self.cargo_metadata = Some(on);
        self
    }

    /// Uses this toolkit instead of searching for one with [`Toolkit::find`] (which reads
    /// `NVCC`, `CUDA_PATH`, `CUDA_HOME`, `PATH`).
    pub fn toolkit(mut self, toolkit: Toolkit) -> Build {
        self.toolkit = Some(toolkit);
        self
    }

    /// Whether fatbinary compresses the PTX it packs (default true, fatbinary's own default;
    /// drivers of CUDA 12.8 and later read compressed fatbins).
    pub fn compress_ptx(mut self, on: bool) -> Build {
        self.compress = on;
        self
    }

    /// Whether `embed` writes the Rust module `<out dir>/<name>.rs` (and the image files it
    /// includes, under `<out dir>/<name>/`). Default true. See the crate docs, "Generated Rust".
    pub fn emit_rust(mut self, on: bool) -> Build {
        self.emit_rust = on;
        self
    }

    /// Whether `embed` writes the C embedding `<out dir>/<name>.c` and `<name>.h`, for C code
    /// to load the images (warpfft's C core does). Default false. See the crate docs,
    /// "Generated C".
    pub fn emit_c(mut self, on: bool) -> Build {
        self.emit_c = on;
        self
    }

    /// The path the generated Rust module names the runtime crate by. Default
    /// `::fatbuild_rt` (the `fatbuild-rt` package); set it when the crate renames that
    /// dependency or re-exports it (e.g. `"crate::rt"`).
    pub fn rust_runtime_crate(mut self, path: &str) -> Build {
        self.rust_runtime = path.to_string();
        self
    }

    /// Compiles every module (only what the cache lacks) and writes the outputs asked for: the
    /// Rust module `<out dir>/<name>.rs` (default; [`emit_rust`](Build::emit_rust)) and the C
    /// embedding `<out dir>/<name>.c` / `.h` ([`emit_c`](Build::emit_c)); `name` must be a C
    /// identifier. Prints the `cargo:` lines first, so a failed build reruns when an input
    /// changes. Build scripts usually stop on error with `panic!("{e}")` (the message is the
    /// explanation and the fix).
    pub fn embed(&self, name: &str) -> Result<Embedded, Error> {
        let metadata = self
            .cargo_metadata
            .unwrap_or_else(|| env::var_os("OUT_DIR").is_some());
        let mut cargo = Vec::new();
        let out = self.embed_inner(name, &mut cargo);
        dedup_lines(&mut cargo);
        if metadata {
            for line in cargo {
                println!("cargo:{line}");
            }
        }
        out
    }

    /// The variables this build reads: the flags' and, in the AOT modes, the arch list's.
    fn env_vars(&self) -> Vec<String> {
        let mut vars = self.env_vars.clone();
        if let Some((var, _)) = &self.arch_env {
            if self.mode.aot() {
                vars.push(var.clone());
            }
        }
        vars
    }

    fn embed_inner(&self, name: &str, cargo: &mut Vec<String>) -> Result<Embedded, Error> {
        if !embed::is_c_identifier(name) {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: embed(\"{name}\"): the name prefixes C symbols, so it must be a \
                     C identifier (letters, digits, `_`)"
                ),
            ));
        }
        // Stage 1: resolve the configuration.
        let cwd = env::current_dir().map_err(|e| Error::io("reading", Path::new("."), e))?;
        let abs = |p: &Path| cwd.join(p); // `join` keeps absolute paths as they are
        let specs = resolve::module_specs(&self.modules, &abs)?;
        let includes: Vec<PathBuf> = self.includes.iter().map(|p| abs(p)).collect();
        let images = self.mode.images();
        // These lines come first: they must reach Cargo even when a later step fails.
        let headers = resolve::announce_inputs(
            &self.env_vars(),
            images.then_some(self.toolkit.is_none()),
            &specs,
            &includes,
            cargo,
        )?;
        let (out_dir, cache_dir, cache_origin) =
            resolve::dirs(self.out_dir.as_deref(), self.cache_dir.as_deref(), &abs)?;

        // The sources (no toolkit needed), then the images (stages 2 and 3, with the toolkit).
        let sources = if self.mode.sources() {
            let flags: Vec<(String, String)> = (self.nvcc_flags.iter().cloned())
                .zip(self.nvcc_flag_origins.iter().cloned())
                .collect();
            sources::collect(&specs, &includes, &flags, cargo)?
        } else {
            Sources::default()
        };
        let paths = Paths {
            specs: &specs,
            includes: &includes,
            headers: &headers,
            cache: (&cache_dir, &cache_origin),
        };
        let img = if images {
            Some(self.build_images(&paths, cargo)?)
        } else {
            None
        };

        // Stage 4: read the blobs back, describe them, write the C files.
        let built = img.as_ref().map(|i| &i.built);
        let declared: Vec<Vec<String>> = self.modules.iter().map(|m| m.kernels.clone()).collect();
        let (modules, datas) = output::collect(&specs, built, &sources, &declared)?;
        dedup_lines(cargo);
        let mut emb = Embedded {
            name: name.to_string(),
            c_file: self.emit_c.then(|| out_dir.join(format!("{name}.c"))),
            h_file: self.emit_c.then(|| out_dir.join(format!("{name}.h"))),
            rs_file: None,
            manifest_json: String::new(),
            mode: self.mode,
            archs: img.as_ref().map_or_else(Vec::new, |i| i.archs.clone()),
            ptx_arch: img
                .as_ref()
                .map_or_else(String::new, |i| i.ptx_arch.clone()),
            toolkit_version: (img.as_ref())
                .map_or_else(String::new, |i| i.toolkit.version().to_string()),
            cuda_version: img.as_ref().map_or(0, |i| i.toolkit.cuda_version()),
            hash: output::blobs_hash(&modules, &datas),
            files: (sources.files.iter())
                .map(|f| EmbeddedFile {
                    name: f.name.clone(),
                    path: f.path.clone(),
                    bytes: f.text.len(),
                })
                .collect(),
            sources_digest: sources.digest.clone(),
            cache_dir,
            modules,
            stats: built.map(|b| b.stats).unwrap_or_default(),
            warnings: cargo
                .iter()
                .filter_map(|l| l.strip_prefix("warning="))
                .map(str::to_string)
                .collect(),
        };
        emb.manifest_json = output::manifest(&emb);
        if self.emit_c {
            output::write_c(&emb, &datas, &sources)?;
        }
        if self.emit_rust {
            emb.rs_file = Some(rust::write(
                &emb,
                &datas,
                &sources,
                &out_dir,
                &self.rust_runtime,
            )?);
        }

        // Keep the cache within its bound (this build's entries stay).
        if let Some(img) = &img {
            if img.max_size > 0 {
                let keep: HashSet<PathBuf> = (img.built.ptx_paths.iter().flatten())
                    .chain(img.built.plan.jobs.iter().map(|j| &j.output))
                    .cloned()
                    .collect();
                cache::evict(&emb.cache_dir, img.max_size, &keep, cache::EVICT_MIN_AGE);
            }
        }
        Ok(emb)
    }

    /// Stages 2 and 3 for the images (PTX, SASS): finds the toolkit, resolves the archs,
    /// plans, decides the cache hits and runs the rest.
    fn build_images(&self, p: &Paths<'_>, cargo: &mut Vec<String>) -> Result<Images, Error> {
        let toolkit = match &self.toolkit {
            Some(t) => t.clone(),
            None => Toolkit::find()?,
        };
        let tk_name = format!(
            "CUDA {} ({})",
            toolkit.version(),
            toolkit.bin_dir().display()
        );
        let ptx_arch = resolve::parse_ptx_arch(&self.ptx_arch, &toolkit, &tk_name)?;
        resolve::announce_toolkit(&toolkit, cargo);
        let archs = if self.mode.aot() {
            toolkit.require(&["ptxas", "nvlink", "fatbinary"], "an AOT build")?;
            if let Some((var, true)) = &self.arch_env {
                if matches!(self.archs, Archs::Default) {
                    cargo.push(resolve::blank_archs_warning(var));
                }
            }
            resolve::resolve_archs(&self.archs, &toolkit, &tk_name, ptx_arch)?
        } else {
            Vec::new()
        };
        let header_listing = resolve::header_listing(p.headers);
        let nvcc_env = resolve::nvcc_env();
        // nvcc runs its steps through a shell: nothing it is handed may hold what a shell
        // expands.
        let flags = self.nvcc_flags.iter().zip(&self.nvcc_flag_origins);
        resolve::check_nvcc_inputs(
            flags.map(|(f, o)| resolve::NvccInput::flag(f, o)),
            p.specs,
            p.includes,
            p.cache,
            &toolkit,
            &nvcc_env,
        )?;
        let inputs = PlanInputs {
            mode: self.mode,
            archs: &archs,
            ptx_arch,
            nvcc_flags: &self.nvcc_flags,
            ptxas_flags: &self.ptxas_flags,
            includes: p.includes,
            header_listing: header_listing.as_bytes(),
            compress: self.compress,
            cache_dir: p.cache.0,
            toolkit_version: toolkit.version_text(),
            nvcc_env: &nvcc_env,
        };
        let jobs = self.jobs.unwrap_or_else(resolve::default_jobs);
        let max_size = match self.cache_max_size {
            Some(n) => n,
            None => resolve::cache_max_size()?,
        };
        let built = run::compile(&inputs, p.specs, &toolkit, p.headers, jobs, cargo)?;
        Ok(Images {
            built,
            archs,
            ptx_arch: format!("compute_{ptx_arch}"),
            toolkit,
            max_size,
        })
    }
}

/// The resolved paths the image stages need.
struct Paths<'a> {
    specs: &'a [ModuleSpec],
    includes: &'a [PathBuf],
    headers: &'a [PathBuf],
    /// The cache directory and where it came from (for messages).
    cache: (&'a Path, &'a str),
}

/// What the image stages produced.
struct Images {
    built: run::Built,
    archs: Vec<u32>,
    ptx_arch: String,
    toolkit: Toolkit,
    max_size: u64,
}

/// Drops repeated `cargo:` lines (a source shared by many modules is one input), keeping
/// the first of each.
fn dedup_lines(lines: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    lines.retain(|l| seen.insert(l.clone()));
}

#[cfg(all(test, unix))]
mod tests;
