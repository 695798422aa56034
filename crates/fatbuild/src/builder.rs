//! The [`Build`] builder and what it returns.

use std::collections::BTreeSet;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::arch::{self, DEFAULT_ARCHS, DEFAULT_PTX_ARCH};
use crate::cache::{self, write_atomic, KeyHasher};
use crate::embed::{self, json_string, BlobKind, CBlob, CModule};
use crate::error::{Error, ErrorKind};
use crate::fatbin;
use crate::mode::Mode;
use crate::plan::{self, ModuleSpec, PlanInputs};
use crate::run::{self, Stats};
use crate::toolkit::{Toolkit, TOOLKIT_ENV_VARS};

/// Environment variable overriding the cache directory.
pub const CACHE_DIR_ENV: &str = "FATBUILD_CACHE_DIR";

/// Extensions of the files in include dirs (and beside sources) that are watched as headers.
const HEADER_EXTENSIONS: &[&str] = &["h", "hh", "hpp", "hxx", "cuh", "inc", "inl", "def"];

/// A kernel module: one or more `.cu` files compiled with the same defines and linked together
/// (device functions may call across its files). It becomes one fatbin (AOT) and/or one PTX blob
/// per source (JIT), and at run time one `CUmodule`.
#[derive(Debug, Clone)]
pub struct Module {
    name: String,
    sources: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
}

impl Module {
    /// A module named `name` (the name the C side looks modules up by).
    pub fn new(name: impl Into<String>) -> Module {
        Module {
            name: name.into(),
            sources: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
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

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Where the arch list comes from.
#[derive(Debug, Clone)]
enum Archs {
    Default,
    Spec { spec: String, origin: String },
    List(Vec<u32>),
}

/// Builds CUDA kernels into blobs embedded in a generated C file. See the crate docs for the
/// walk-through; every method documents its environment-variable twin where it has one.
#[derive(Debug, Clone)]
pub struct Build {
    mode: Mode,
    archs: Archs,
    ptx_arch: String,
    nvcc_flags: Vec<String>,
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
}

impl Default for Build {
    fn default() -> Build {
        Build::new()
    }
}

impl Build {
    /// A build with the defaults: [`Mode::Jit`], [`DEFAULT_ARCHS`], PTX for
    /// [`DEFAULT_PTX_ARCH`], no flags, no modules.
    pub fn new() -> Build {
        Build {
            mode: Mode::Jit,
            archs: Archs::Default,
            ptx_arch: DEFAULT_PTX_ARCH.to_string(),
            nvcc_flags: Vec::new(),
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
        }
    }

    /// What to embed (default [`Mode::Jit`]); see [`Mode::from_features`].
    pub fn mode(mut self, mode: Mode) -> Build {
        self.mode = mode;
        self
    }

    /// The real archs to build SASS for in the AOT modes, as a spec: `"80;90"`, `"80,90"`,
    /// `"sm_80 sm_90"`, `"8.0 9.0"`, `"native"` (see [`parse_archs`](crate::parse_archs)). Parsed by
    /// [`embed`](Build::embed), and only when the mode is AOT. Default: [`DEFAULT_ARCHS`].
    pub fn archs(mut self, spec: &str) -> Build {
        self.archs = Archs::Spec {
            spec: spec.to_string(),
            origin: format!("arch list `{spec}`"),
        };
        self
    }

    /// The arch list from environment variable `var` (e.g. `WARPFFT_CUDA_ARCHS`), in the syntax
    /// of [`archs`](Build::archs). Unset or blank keeps the current list (the default unless
    /// set before). Emits `cargo:rerun-if-env-changed=<var>`.
    pub fn archs_from_env(mut self, var: &str) -> Build {
        self.env_vars.push(var.to_string());
        if let Some(v) = env::var_os(var) {
            let spec = v.to_string_lossy().into_owned();
            if !spec.trim().is_empty() {
                self.archs = Archs::Spec {
                    origin: format!("{var}=\"{spec}\""),
                    spec,
                };
            }
        }
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
        self
    }

    /// Adds nvcc flags from environment variable `var` (e.g. `WARPFFT_NVCC_FLAGS`), split on
    /// whitespace (no quoting). Emits `cargo:rerun-if-env-changed=<var>`.
    pub fn nvcc_flags_from_env(mut self, var: &str) -> Build {
        self.env_vars.push(var.to_string());
        if let Some(v) = env::var_os(var) {
            let v = v.to_string_lossy().into_owned();
            self.nvcc_flags
                .extend(v.split_whitespace().map(str::to_string));
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
    /// the crate docs, "Cache"). Headers beside a source are treated the same way.
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

    /// Compiles every module (only what the cache lacks) and writes `<out dir>/<name>.c` and
    /// `<out dir>/<name>.h`; `name` must be a C identifier. Prints the `cargo:` lines first, so
    /// a failed build reruns when an input changes. Build scripts usually stop on error with
    /// `panic!("{e}")` (the message is the explanation and the fix).
    pub fn embed(&self, name: &str) -> Result<Embedded, Error> {
        let metadata = self
            .cargo_metadata
            .unwrap_or_else(|| env::var_os("OUT_DIR").is_some());
        let mut cargo = Vec::new();
        let out = self.embed_inner(name, &mut cargo);
        if metadata {
            for line in cargo {
                println!("cargo:{line}");
            }
        }
        out
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
        let cwd = env::current_dir().map_err(|e| Error::io("reading", Path::new("."), e))?;
        let abs = |p: &Path| cwd.join(p); // `join` keeps absolute paths as they are
        let specs = self.module_specs(&abs)?;
        let includes: Vec<PathBuf> = self.includes.iter().map(|p| abs(p)).collect();
        // These lines come first: they must reach Cargo even when a later step fails.
        let headers = self.announce_inputs(&specs, &includes, cargo)?;
        let (out_dir, cache_dir) = self.dirs(&abs)?;

        let toolkit = match &self.toolkit {
            Some(t) => t.clone(),
            None => Toolkit::find()?,
        };
        let tk_name = format!(
            "CUDA {} ({})",
            toolkit.version(),
            toolkit.bin_dir().display()
        );
        let ptx_arch = parse_ptx_arch(&self.ptx_arch, &toolkit, &tk_name)?;
        let archs = if self.mode.aot() {
            toolkit.require(&["ptxas", "nvlink", "fatbinary"], "an AOT build")?;
            self.resolve_archs(&toolkit, &tk_name, ptx_arch)?
        } else {
            Vec::new()
        };
        let mut listing = KeyHasher::new();
        for h in &headers {
            listing.field("header", h.to_string_lossy().as_bytes());
        }
        let header_listing = listing.finish_key();
        let inputs = PlanInputs {
            mode: self.mode,
            archs: &archs,
            ptx_arch,
            nvcc_flags: &self.nvcc_flags,
            ptxas_flags: &self.ptxas_flags,
            includes: &includes,
            header_listing: header_listing.as_bytes(),
            compress: self.compress,
            cache_dir: &cache_dir,
            toolkit_version: toolkit.version_text(),
        };
        let built = self.compile(&inputs, &specs, &toolkit, &headers, cargo)?;
        let (modules, datas) = collect(&specs, &built)?;

        let mut emb = Embedded {
            name: name.to_string(),
            c_file: out_dir.join(format!("{name}.c")),
            h_file: out_dir.join(format!("{name}.h")),
            manifest_json: String::new(),
            mode: self.mode,
            archs,
            ptx_arch: format!("compute_{ptx_arch}"),
            toolkit_version: toolkit.version().to_string(),
            cuda_version: toolkit.cuda_version(),
            hash: blobs_hash(&modules, &datas),
            cache_dir,
            modules,
            stats: built.stats,
        };
        emb.manifest_json = manifest(&emb);
        write_c(&emb, &datas)?;
        Ok(emb)
    }

    /// Pushes the `rerun-if-env-changed` lines and the `rerun-if-changed` lines of the sources
    /// and of the header files in the include dirs and beside the sources; returns the latter.
    fn announce_inputs(
        &self,
        specs: &[ModuleSpec],
        includes: &[PathBuf],
        cargo: &mut Vec<String>,
    ) -> Result<Vec<PathBuf>, Error> {
        let mut vars: Vec<&str> = self.env_vars.iter().map(String::as_str).collect();
        vars.push(CACHE_DIR_ENV);
        if self.toolkit.is_none() {
            vars.extend(TOOLKIT_ENV_VARS);
        }
        let mut seen = BTreeSet::new();
        for v in vars.into_iter().filter(|v| seen.insert(*v)) {
            cargo.push(format!("rerun-if-env-changed={v}"));
        }
        for (src, _) in specs.iter().flat_map(|m| &m.sources) {
            cargo.push(format!("rerun-if-changed={}", src.display()));
        }
        let headers = header_files(includes, specs)?;
        for h in &headers {
            cargo.push(format!("rerun-if-changed={}", h.display()));
        }
        Ok(headers)
    }

    /// The output directory and the cache directory.
    fn dirs(&self, abs: &dyn Fn(&Path) -> PathBuf) -> Result<(PathBuf, PathBuf), Error> {
        let out_dir = match &self.out_dir {
            Some(d) => abs(d),
            None => env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidConfig,
                    "fatbuild: OUT_DIR is not set: embed() is meant to run in a Cargo build \
                     script; elsewhere set Build::out_dir",
                )
            })?,
        };
        let cache_dir = match (&self.cache_dir, env::var_os(CACHE_DIR_ENV)) {
            (Some(d), _) => abs(d),
            (None, Some(d)) if !d.is_empty() => abs(Path::new(&d)),
            _ => cache::default_cache_dir(&out_dir),
        };
        Ok((out_dir, cache_dir))
    }

    /// Phase 1, PTX for every source (also for AOT: kernel names come from it), then phase 2,
    /// ptxas/nvlink/fatbinary. Tool warnings and the non-system headers the sources included
    /// go to `cargo`.
    fn compile(
        &self,
        inputs: &PlanInputs<'_>,
        specs: &[ModuleSpec],
        toolkit: &Toolkit,
        headers: &[PathBuf],
        cargo: &mut Vec<String>,
    ) -> Result<Built, Error> {
        let jobs = self.jobs.unwrap_or_else(default_jobs);
        let mut stats = Stats::default();
        let mut warnings = Vec::new();
        let mut warn = |tool: &str, what: &str, text: &str| {
            for l in text.lines() {
                warnings.push(format!("warning={tool} ({what}): {l}"));
            }
        };
        let ptx_plan = plan::plan_ptx(inputs, specs)?;
        let cache_dir = inputs.cache_dir;
        let ptx = run::resolve_ptx(&ptx_plan, toolkit, cache_dir, jobs, &mut stats, &mut warn);
        if let Ok(outs) = &ptx {
            let toolkit_root = toolkit.bin_dir().parent().unwrap_or(Path::new("/"));
            let extra: BTreeSet<&PathBuf> = outs
                .iter()
                .flat_map(|o| &o.headers)
                .filter(|h| {
                    !(h.starts_with("/usr/include")
                        || h.starts_with("/usr/lib")
                        || h.starts_with(toolkit_root)
                        || headers.contains(h)
                        || specs_have(specs, h))
                })
                .collect();
            cargo.extend(
                extra
                    .iter()
                    .map(|f| format!("rerun-if-changed={}", f.display())),
            );
        }
        let res = ptx.and_then(|ptx| {
            let ptx_paths: Vec<Vec<PathBuf>> = ptx_plan
                .modules
                .iter()
                .map(|ids| ids.iter().map(|&i| ptx[i].path.clone()).collect())
                .collect();
            let plan = plan::plan_aot(inputs, specs, &ptx_paths)?;
            let roots: Vec<usize> = plan.modules.iter().filter_map(|m| m.fatbin).collect();
            run::execute(&plan, &roots, toolkit, jobs, &mut stats, &mut warn)?;
            Ok((ptx_paths, plan))
        });
        cargo.append(&mut warnings);
        let (ptx_paths, plan) = res?;
        Ok(Built {
            ptx_paths,
            plan,
            stats,
        })
    }

    /// Validates the modules and resolves their paths.
    fn module_specs(&self, abs: &dyn Fn(&Path) -> PathBuf) -> Result<Vec<ModuleSpec>, Error> {
        let config = |msg: String| Error::new(ErrorKind::InvalidConfig, msg);
        let mut names = BTreeSet::new();
        let mut specs = Vec::new();
        for m in &self.modules {
            if m.name.is_empty() {
                return Err(config("fatbuild: a module has an empty name".into()));
            }
            if !names.insert(m.name.as_str()) {
                return Err(config(format!(
                    "fatbuild: two modules are named `{}`; module names must be unique",
                    m.name
                )));
            }
            if m.sources.is_empty() {
                return Err(config(format!(
                    "fatbuild: module `{}` has no sources; add them with Module::source",
                    m.name
                )));
            }
            specs.push(ModuleSpec {
                name: m.name.clone(),
                sources: m
                    .sources
                    .iter()
                    .map(|s| (abs(s), s.to_string_lossy().replace('\\', "/")))
                    .collect(),
                defines: m.defines.clone(),
                flags: m.flags.clone(),
            });
        }
        Ok(specs)
    }

    fn resolve_archs(&self, tk: &Toolkit, tk_name: &str, ptx_arch: u32) -> Result<Vec<u32>, Error> {
        let supported = tk.supported_archs();
        let archs = match &self.archs {
            Archs::Default => DEFAULT_ARCHS
                .iter()
                .copied()
                .filter(|a| supported.contains(a) && *a >= ptx_arch)
                .collect(),
            Archs::Spec { spec, origin } => {
                arch::parse_with(spec, origin, tk_name, supported, &mut arch::native)?
            }
            Archs::List(list) => {
                let spec = list
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(";");
                let origin = format!("arch list {list:?}");
                arch::parse_with(&spec, &origin, tk_name, supported, &mut || Ok(vec![]))?
            }
        };
        if archs.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidArch,
                format!(
                    "fatbuild: no arch of the default list {} is supported by {tk_name}.\nfix: \
                     give an arch list; supported: {}",
                    arch::list(DEFAULT_ARCHS),
                    arch::list(supported)
                ),
            ));
        }
        if let Some(a) = archs.iter().find(|&&a| a < ptx_arch) {
            return Err(Error::new(
                ErrorKind::InvalidArch,
                format!(
                    "fatbuild: sm_{a} is older than the PTX arch compute_{ptx_arch}, so ptxas \
                     cannot compile the PTX for it.\nfix: drop sm_{a} from the arch list or \
                     lower the PTX arch"
                ),
            ));
        }
        Ok(archs)
    }
}

/// The compiled build: each module's PTX files and the AOT plan (whose outputs all exist).
struct Built {
    ptx_paths: Vec<Vec<PathBuf>>,
    plan: plan::Plan,
    stats: Stats,
}

/// The bytes of one module's blobs, in C-table order.
type ModuleData = Vec<Vec<u8>>;

/// Reads the blobs of every module (in C-table order) and describes them.
fn collect(
    specs: &[ModuleSpec],
    built: &Built,
) -> Result<(Vec<EmbeddedModule>, Vec<ModuleData>), Error> {
    let read = |p: &Path| fs::read(p).map_err(|e| Error::io("reading", p, e));
    let mut modules = Vec::new();
    let mut datas = Vec::new();
    for ((spec, mp), ptx_paths) in specs.iter().zip(&built.plan.modules).zip(&built.ptx_paths) {
        let ptx: Vec<Vec<u8>> = ptx_paths
            .iter()
            .map(|p| read(p))
            .collect::<Result<_, _>>()?;
        let mut kernels = Vec::new();
        for k in ptx.iter().flat_map(|p| embed::ptx_entries(p)) {
            if !kernels.contains(&k) {
                kernels.push(k);
            }
        }
        let mut blobs = Vec::new();
        let mut data = Vec::new();
        if let Some(j) = mp.fatbin {
            let path = built.plan.jobs[j].output.clone();
            let bytes = read(&path)?;
            let images = fatbin::parse(&bytes).map_err(|e| {
                let msg = format!(
                    "fatbuild: fatbinary wrote {} that does not parse: {e}",
                    path.display()
                );
                Error::new(ErrorKind::ToolFailed, msg)
            })?;
            blobs.push(EmbeddedBlob {
                kind: BlobKind::Fatbin,
                label: "fatbin".into(),
                path,
                bytes: bytes.len(),
                images: images.iter().map(fatbin::Image::describe).collect(),
            });
            data.push(bytes);
        }
        if mp.ptx_blobs {
            let labels = ptx_labels(&spec.sources);
            for ((path, bytes), label) in ptx_paths.iter().zip(ptx).zip(labels) {
                blobs.push(EmbeddedBlob {
                    kind: BlobKind::Ptx,
                    label,
                    path: path.clone(),
                    bytes: bytes.len(),
                    images: Vec::new(),
                });
                data.push(bytes);
            }
        }
        modules.push(EmbeddedModule {
            name: spec.name.clone(),
            sources: spec.sources.iter().map(|(_, s)| s.clone()).collect(),
            defines: spec.defines.clone(),
            kernels,
            blobs,
        });
        datas.push(data);
    }
    Ok((modules, datas))
}

/// Writes `<name>.h` and `<name>.c`.
fn write_c(emb: &Embedded, datas: &[ModuleData]) -> Result<(), Error> {
    let cmods: Vec<CModule<'_>> = emb
        .modules
        .iter()
        .zip(datas)
        .map(|(m, data)| CModule {
            name: &m.name,
            blobs: (m.blobs.iter().zip(data))
                .map(|(b, d)| CBlob {
                    kind: b.kind,
                    label: &b.label,
                    data: d,
                })
                .collect(),
        })
        .collect();
    let c = embed::source(
        &emb.name,
        &cmods,
        &emb.manifest_json,
        emb.mode.as_str(),
        emb.cuda_version,
    );
    write_atomic(&emb.h_file, embed::header(&emb.name).as_bytes())?;
    write_atomic(&emb.c_file, &c)
}

/// `"compute_75"`, `"sm_75"`, `"75"` → 75, checked against the toolkit.
fn parse_ptx_arch(s: &str, tk: &Toolkit, tk_name: &str) -> Result<u32, Error> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_prefix("compute_")
        .or_else(|| t.strip_prefix("sm_"))
        .unwrap_or(&t);
    match t.parse::<u32>() {
        Ok(a) if tk.supported_ptx_archs().contains(&a) => Ok(a),
        _ => Err(Error::new(
            ErrorKind::InvalidArch,
            format!(
                "fatbuild: PTX arch `{s}` is not a virtual arch {tk_name} supports.\nfix: use one \
                 of compute_{}",
                tk.supported_ptx_archs()
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", compute_")
            ),
        )),
    }
}

/// The header-like files (by extension) under the include dirs, recursively, and beside the
/// sources. Their names go into every PTX key (a new header may shadow another) and they are
/// printed as `rerun-if-changed`; which of them a source really includes, and so whose
/// contents its key covers, nvcc reports when it compiles it.
fn header_files(includes: &[PathBuf], specs: &[ModuleSpec]) -> Result<Vec<PathBuf>, Error> {
    let is_header = |p: &Path| {
        p.extension()
            .is_some_and(|x| HEADER_EXTENSIONS.iter().any(|h| x == *h))
    };
    let mut files = BTreeSet::new();
    for dir in includes {
        if !dir.is_dir() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: include directory {} does not exist",
                    dir.display()
                ),
            ));
        }
        files.extend(
            cache::files_under(dir)?
                .into_iter()
                .filter(|p| is_header(p)),
        );
    }
    let src_dirs: BTreeSet<&Path> = specs
        .iter()
        .flat_map(|m| &m.sources)
        .filter_map(|(p, _)| p.parent())
        .collect();
    for dir in src_dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if is_header(&p) && p.is_file() {
                files.insert(p);
            }
        }
    }
    Ok(files.into_iter().collect())
}

/// Whether `p` is one of the sources.
fn specs_have(specs: &[ModuleSpec], p: &Path) -> bool {
    specs.iter().flat_map(|m| &m.sources).any(|(s, _)| s == p)
}

/// Labels of a module's PTX blobs: the source's file stem, made unique within the module.
fn ptx_labels(sources: &[(PathBuf, String)]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for (p, _) in sources {
        let stem = p
            .file_stem()
            .map_or_else(|| "ptx".into(), |s| s.to_string_lossy().into_owned());
        let mut label = stem.clone();
        let mut n = 2;
        while labels.contains(&label) {
            label = format!("{stem}-{n}");
            n += 1;
        }
        labels.push(label);
    }
    labels
}

fn default_jobs() -> usize {
    env::var("NUM_JOBS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// SHA-256 over every blob with its module name, label and length.
fn blobs_hash(modules: &[EmbeddedModule], datas: &[ModuleData]) -> String {
    let mut h = Sha256::new();
    for (m, data) in modules.iter().zip(datas) {
        for (b, d) in m.blobs.iter().zip(data) {
            for part in [m.name.as_bytes(), b.label.as_bytes(), d] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part);
            }
        }
    }
    cache::hex(&h.finalize())
}

/// The manifest JSON (one line).
fn manifest(e: &Embedded) -> String {
    let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(",");
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"name\":{},\"mode\":{},\"archs\":[{}],\"ptx_arch\":{},\"toolkit\":{},\"hash\":{},\
         \"modules\":[",
        json_string(&e.name),
        json_string(e.mode.as_str()),
        list(&mut e.archs.iter().map(u32::to_string)),
        json_string(&e.ptx_arch),
        json_string(&e.toolkit_version),
        json_string(&e.hash)
    );
    for (i, m) in e.modules.iter().enumerate() {
        let defines = list(&mut m.defines.iter().map(|(k, v)| {
            let v = v.as_deref().map_or_else(|| "null".to_string(), json_string);
            format!("{}:{v}", json_string(k))
        }));
        let blobs = list(&mut m.blobs.iter().map(|b| {
            let images = if b.kind == BlobKind::Fatbin {
                format!(
                    ",\"images\":[{}]",
                    list(&mut b.images.iter().map(|i| json_string(i)))
                )
            } else {
                String::new()
            };
            format!(
                "{{\"kind\":{},\"label\":{},\"bytes\":{}{images}}}",
                json_string(b.kind.as_str()),
                json_string(&b.label),
                b.bytes
            )
        }));
        let _ = write!(
            s,
            "{}{{\"name\":{},\"sources\":[{}],\"defines\":{{{defines}}},\"kernels\":[{}],\
             \"blobs\":[{blobs}]}}",
            if i > 0 { "," } else { "" },
            json_string(&m.name),
            list(&mut m.sources.iter().map(|x| json_string(x))),
            list(&mut m.kernels.iter().map(|x| json_string(x))),
        );
    }
    s.push_str("]}");
    s
}

/// What [`Build::embed`] produced.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The name passed to `embed` (the prefix of the C symbols).
    pub name: String,
    /// `<out dir>/<name>.c`: compile it with the `cc` crate.
    pub c_file: PathBuf,
    /// `<out dir>/<name>.h`: include it from the C code that loads the blobs.
    pub h_file: PathBuf,
    /// The manifest (also in the C file as `<name>_manifest`).
    pub manifest_json: String,
    /// The mode built.
    pub mode: Mode,
    /// The SASS archs in the fatbins (empty for [`Mode::Jit`]).
    pub archs: Vec<u32>,
    /// The virtual arch of the PTX, e.g. `compute_75`.
    pub ptx_arch: String,
    /// The toolkit version, e.g. `13.0.88`.
    pub toolkit_version: String,
    /// `major * 1000 + minor * 10` of the toolkit, e.g. 13000.
    pub cuda_version: i32,
    /// SHA-256 over all blobs (hex).
    pub hash: String,
    /// The cache directory used.
    pub cache_dir: PathBuf,
    /// The modules, in the order added.
    pub modules: Vec<EmbeddedModule>,
    /// Tool runs and cache hits of this build.
    pub stats: Stats,
}

/// One embedded module.
#[derive(Debug, Clone)]
pub struct EmbeddedModule {
    /// Its name.
    pub name: String,
    /// Its sources, as given.
    pub sources: Vec<String>,
    /// Its defines.
    pub defines: Vec<(String, Option<String>)>,
    /// Kernel entry points, from the PTX `.entry` lines.
    pub kernels: Vec<String>,
    /// Its blobs, in the order of the C table.
    pub blobs: Vec<EmbeddedBlob>,
}

/// One embedded blob.
#[derive(Debug, Clone)]
pub struct EmbeddedBlob {
    /// PTX or fatbin.
    pub kind: BlobKind,
    /// `"fatbin"`, or the source's file stem for PTX.
    pub label: String,
    /// The cache file it was read from.
    pub path: PathBuf,
    /// Its size in bytes (for PTX without the terminating NUL).
    pub bytes: usize,
    /// For fatbins: the images inside, e.g. `["elf sm_80", "elf sm_90", "ptx sm_75"]`.
    pub images: Vec<String>,
}

#[cfg(all(test, unix))]
mod tests {
    //! The builder against a fake toolkit of shell scripts (no CUDA needed); the real toolchain
    //! is exercised by `tests/end_to_end.rs`.
    use super::*;
    use crate::cache::{test_dir, write_script};

    struct Fake {
        dir: PathBuf,
        log: PathBuf,
        toolkit: Toolkit,
    }

    fn fake() -> Fake {
        let dir = test_dir("builder");
        let bin = dir.join("bin");
        fs::create_dir_all(&bin).unwrap();
        let log = dir.join("log");
        let out_arg = r#"out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;; -MF) deps="$2"; shift ;; --create=*) out="${1#--create=}" ;;
    *.cu) src="$1" ;;
  esac
  shift
done"#;
        let log_s = log.display();
        write_script(
            &bin.join("nvcc"),
            &format!(
                "#!/bin/sh\n{out_arg}\necho nvcc >> {log_s}\n\
                 if grep -q FAIL \"$src\"; then echo \"$src(1): error: boom\" >&2; exit 2; fi\n\
                 n=$(basename \"$src\" .cu)\n\
                 hdr=\"\"; [ \"$n\" = a ] && hdr=\"$(dirname \"$src\")/common.cuh\"\n\
                 printf '%s : %s %s\\n' \"$out\" \"$src\" \"$hdr\" > \"$deps\"\n\
                 printf '.version 9.0\\n.target sm_75\\n.visible .entry %s_k(\\n)\\n' \"$n\" > \"$out\"\n"
            ),
        );
        for tool in ["ptxas", "nvlink"] {
            write_script(
                &bin.join(tool),
                &format!("#!/bin/sh\n{out_arg}\necho {tool} >> {log_s}\necho cubin > \"$out\"\n"),
            );
        }
        // An empty but well-formed fatbin container.
        write_script(
            &bin.join("fatbinary"),
            &format!(
                "#!/bin/sh\n{out_arg}\necho fatbinary >> {log_s}\n\
                 printf '\\120\\355\\125\\272\\001\\000\\020\\000\\000\\000\\000\\000\\000\\000\\000\\000' > \"$out\"\n"
            ),
        );
        let k = dir.join("kernels");
        fs::create_dir_all(&k).unwrap();
        fs::write(k.join("a.cu"), "// a").unwrap();
        fs::write(k.join("b.cu"), "// b").unwrap();
        fs::write(k.join("common.cuh"), "// common").unwrap();
        Fake {
            toolkit: Toolkit::fake(&bin),
            log,
            dir,
        }
    }

    impl Fake {
        fn build(&self, mode: Mode) -> Build {
            let k = self.dir.join("kernels");
            Build::new()
                .mode(mode)
                .arch_list(&[80, 90])
                .toolkit(self.toolkit.clone())
                .cargo_metadata(false)
                .out_dir(self.dir.join("out"))
                .cache_dir(self.dir.join("cache"))
                .module(
                    Module::new("pair")
                        .source(k.join("a.cu"))
                        .source(k.join("b.cu")),
                )
                .module(Module::new("solo").source(k.join("a.cu")).define("X", "1"))
        }

        fn runs(&self) -> usize {
            let n = fs::read_to_string(&self.log).map_or(0, |s| s.lines().count());
            let _ = fs::remove_file(&self.log);
            n
        }
    }

    #[test]
    fn second_embed_runs_no_tool_and_jit_aot_share_ptx() {
        let f = fake();
        let e = f.build(Mode::Jit).embed("k").unwrap();
        assert_eq!((e.stats.nvcc, e.stats.tools_run()), (3, 3));
        assert_eq!(f.runs(), 3);
        assert_eq!(e.modules[0].kernels, ["a_k", "b_k"]);
        let e = f.build(Mode::Jit).embed("k").unwrap();
        assert_eq!(
            (e.stats.tools_run(), e.stats.cache_hits, f.runs()),
            (0, 3, 0)
        );
        // AOT reuses the PTX; ptxas keys on the PTX content, and the fake writes the same PTX
        // for a.cu with and without X=1: 2 distinct PTX x 2 archs ptxas, 2 modules x 2 archs
        // nvlink, 2 fatbins.
        let e = f.build(Mode::Aot).embed("k").unwrap();
        let s = e.stats;
        assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (0, 4, 4, 2));
        assert_eq!(f.runs(), 10);
        let e = f.build(Mode::Aot).embed("k").unwrap();
        assert_eq!((e.stats.tools_run(), f.runs()), (0, 0));
        // Editing a header reruns nvcc for the sources that include it (the fake says only
        // a.cu does, in two modules with different defines), and nothing downstream here since
        // the fake's PTX does not depend on the header.
        fs::write(f.dir.join("kernels/common.cuh"), "// edited").unwrap();
        let e = f.build(Mode::Aot).embed("k").unwrap();
        assert_eq!((e.stats.nvcc, e.stats.tools_run()), (2, 2));
        // A new header anywhere in an include dir or beside a source may shadow another one:
        // everything is recompiled.
        fs::write(f.dir.join("kernels/new.h"), "").unwrap();
        let e = f.build(Mode::Aot).embed("k").unwrap();
        assert_eq!(e.stats.nvcc, 3);
        let c = fs::read_to_string(&e.c_file).unwrap();
        assert!(c.contains("const char k_mode[] = \"aot\";"));
        let _ = fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn a_failing_tool_reports_command_status_output_and_fix() {
        let f = fake();
        fs::write(f.dir.join("kernels/b.cu"), "FAIL").unwrap();
        let e = f.build(Mode::Jit).embed("k").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ToolFailed);
        let msg = e.to_string();
        for want in [
            "nvcc failed building PTX of ",
            "b.cu (module `pair`)",
            "exit status: 2",
            "command: ",
            "/bin/nvcc -ptx -rdc=true -arch=compute_75 ",
            "error: boom",
            "fix: correct the CUDA source",
        ] {
            assert!(msg.contains(want), "missing `{want}` in:\n{msg}");
        }
        // No partial outputs are left in the cache.
        let names: Vec<String> = fs::read_dir(f.dir.join("cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
        let _ = fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn configuration_errors_are_explained() {
        let f = fake();
        let err = |b: Build, name: &str| b.embed(name).unwrap_err().to_string();
        assert!(err(f.build(Mode::Jit), "bad-name").contains("C identifier"));
        let msg = err(f.build(Mode::Aot).archs("80;95"), "k");
        assert!(
            msg.contains("sm_95 is not supported") && msg.contains("75 80 86"),
            "{msg}"
        );
        let msg = err(
            f.build(Mode::Aot).arch_list(&[75]).ptx_arch("compute_80"),
            "k",
        );
        assert!(msg.contains("older than the PTX arch"), "{msg}");
        let msg = err(f.build(Mode::Jit).ptx_arch("compute_52"), "k");
        assert!(msg.contains("PTX arch `compute_52`"), "{msg}");
        let msg = err(
            f.build(Mode::Jit)
                .module(Module::new("pair").source("x.cu")),
            "k",
        );
        assert!(msg.contains("two modules are named `pair`"), "{msg}");
        let msg = err(f.build(Mode::Jit).module(Module::new("empty")), "k");
        assert!(msg.contains("module `empty` has no sources"), "{msg}");
        let msg = err(f.build(Mode::Jit).include(f.dir.join("nope")), "k");
        assert!(msg.contains("nope does not exist"), "{msg}");
        // In JIT mode a bad arch list is never looked at.
        assert!(f.build(Mode::Jit).archs("nonsense").embed("k").is_ok());
        let _ = fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn cargo_lines_cover_sources_includes_and_env_vars() {
        let f = fake();
        let b = f.build(Mode::Jit).include(f.dir.join("kernels"));
        let b = b.archs_from_env("FATBUILD_TEST_UNSET_ARCHS");
        let b = b.nvcc_flags_from_env("FATBUILD_TEST_UNSET_FLAGS");
        let mut lines = Vec::new();
        b.embed_inner("k", &mut lines).unwrap();
        for want in [
            "rerun-if-env-changed=FATBUILD_TEST_UNSET_ARCHS".to_string(),
            "rerun-if-env-changed=FATBUILD_TEST_UNSET_FLAGS".to_string(),
            "rerun-if-env-changed=FATBUILD_CACHE_DIR".to_string(),
            format!("rerun-if-changed={}", f.dir.join("kernels/a.cu").display()),
            format!(
                "rerun-if-changed={}",
                f.dir.join("kernels/common.cuh").display()
            ),
        ] {
            assert!(lines.contains(&want), "missing {want} in {lines:?}");
        }
        // An explicit toolkit means NVCC & co. are not read.
        assert!(!lines.iter().any(|l| l.ends_with("=NVCC")));
        let _ = fs::remove_dir_all(&f.dir);
    }

    #[test]
    fn ptx_labels_are_unique() {
        let s = |p: &str| (PathBuf::from(p), p.to_string());
        let l = ptx_labels(&[s("a/x.cu"), s("b/x.cu"), s("c/y.cu"), s("d/x.cu")]);
        assert_eq!(l, ["x", "x-2", "y", "x-3"]);
    }
}
