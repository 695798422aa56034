//! Stage 1, resolving the configuration: checks a [`Build`](crate::Build)'s settings against
//! the file system and the toolkit and turns them into what the planner takes (module specs,
//! the PTX arch, the arch list, the header files, the output and cache directories, the job
//! count) plus the `cargo:` lines for the inputs. Nothing runs here but `native` arch
//! detection; no cache entry is looked at.

use std::collections::BTreeSet;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

use crate::arch::{self, Archs, DEFAULT_ARCHS};
use crate::cache::{self, KeyHasher, CACHE_DIR_ENV};
use crate::error::{Error, ErrorKind};
use crate::module::Module;
use crate::plan::ModuleSpec;
use crate::toolkit::{Toolkit, DEFAULT_CUDA_ROOT, NVCC_ENV_VARS, TOOLKIT_ENV_VARS};

/// Extensions of the files in include dirs (and beside sources) that are watched as headers.
const HEADER_EXTENSIONS: &[&str] = &["h", "hh", "hpp", "hxx", "cuh", "inc", "inl", "def"];

/// Validates the modules and resolves their paths.
pub(crate) fn module_specs(
    modules: &[Module],
    abs: &dyn Fn(&Path) -> PathBuf,
) -> Result<Vec<ModuleSpec>, Error> {
    let config = |msg: String| Error::new(ErrorKind::InvalidConfig, msg);
    let mut names = BTreeSet::new();
    let mut specs = Vec::new();
    for m in modules {
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

/// Pushes the `rerun-if-env-changed` lines (the build's own variables and, when images are
/// built (`find_toolkit` is `Some`), the cache directory's, nvcc's and, when the toolkit is
/// searched for (`Some(true)`), the toolkit's) and the `rerun-if-changed` lines of the sources
/// and of the header files in the include dirs and beside the sources; returns the latter.
pub(crate) fn announce_inputs(
    env_vars: &[String],
    find_toolkit: Option<bool>,
    specs: &[ModuleSpec],
    includes: &[PathBuf],
    cargo: &mut Vec<String>,
) -> Result<Vec<PathBuf>, Error> {
    let mut vars: Vec<&str> = env_vars.iter().map(String::as_str).collect();
    if let Some(find) = find_toolkit {
        vars.push(CACHE_DIR_ENV);
        vars.extend(NVCC_ENV_VARS);
        if find {
            vars.extend(TOOLKIT_ENV_VARS);
        }
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

/// The `cargo:` lines that make a toolkit switch rerun the build script: the nvcc used (as
/// found and, when that is a link such as `/usr/local/cuda/bin/nvcc`, the file it resolves
/// to; Cargo compares their times with the last run) and, when the toolkit was found by
/// searching `PATH` (no `NVCC`/`CUDA_PATH`/`CUDA_HOME`), `PATH`.
pub(crate) fn announce_toolkit(tk: &Toolkit, cargo: &mut Vec<String>) {
    let nvcc = tk.tool("nvcc");
    cargo.push(format!("rerun-if-changed={}", nvcc.display()));
    if let Ok(real) = fs::canonicalize(&nvcc) {
        if real != nvcc {
            cargo.push(format!("rerun-if-changed={}", real.display()));
        }
    }
    if tk.found_via() == "PATH" || tk.found_via() == DEFAULT_CUDA_ROOT {
        cargo.push("rerun-if-env-changed=PATH".into());
    }
}

/// The warning for an arch-list variable that is set but blank (the default list, much
/// longer, is built).
pub(crate) fn blank_archs_warning(var: &str) -> String {
    format!(
        "warning=fatbuild: {var} is set but blank, so the default arch list ({}: {} archs, \
         each a ptxas run per source) is built; set it to the archs you need, e.g. {var}=\"80;90\", \
         or unset it to silence this",
        arch::list(DEFAULT_ARCHS),
        DEFAULT_ARCHS.len()
    )
}

/// The variables of [`NVCC_ENV_VARS`] that are set (even to nothing), with their values.
pub(crate) fn nvcc_env() -> Vec<(String, String)> {
    NVCC_ENV_VARS
        .iter()
        .filter_map(|v| {
            let value = env::var_os(v)?;
            Some((v.to_string(), value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The output directory and the cache directory, from the explicit settings, else `OUT_DIR`
/// and [`CACHE_DIR_ENV`] (else the default beside the target dir); and where the cache
/// directory came from, for messages.
pub(crate) fn dirs(
    out_dir: Option<&Path>,
    cache_dir: Option<&Path>,
    abs: &dyn Fn(&Path) -> PathBuf,
) -> Result<(PathBuf, PathBuf, String), Error> {
    let out_dir = match out_dir {
        Some(d) => abs(d),
        None => env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidConfig,
                "fatbuild: OUT_DIR is not set: embed() is meant to run in a Cargo build \
                 script; elsewhere set Build::out_dir",
            )
        })?,
    };
    let (cache_dir, origin) = match (cache_dir, env::var_os(CACHE_DIR_ENV)) {
        (Some(d), _) => (abs(d), "Build::cache_dir".to_string()),
        (None, Some(d)) if !d.is_empty() => (abs(Path::new(&d)), CACHE_DIR_ENV.to_string()),
        _ => (
            cache::default_cache_dir(&out_dir),
            "the default beside the target directory (the checkout's path, \
             CARGO_TARGET_DIR or CARGO_BUILD_BUILD_DIR)"
                .to_string(),
        ),
    };
    Ok((out_dir, cache_dir, origin))
}

/// What a shell expands inside double quotes, which is how nvcc passes arguments to the
/// steps it runs through `sh -c`.
const SHELL_SPECIAL: &[char] = &['$', '`', '"', '\\'];

/// One thing handed to nvcc, for [`check_nvcc_inputs`].
pub(crate) struct NvccInput {
    /// What it is and where it came from, e.g. "nvcc flag `-DX=$(id)` (from WARPFFT_NVCC_FLAGS)".
    what: String,
    value: String,
    fix: String,
}

impl NvccInput {
    pub(crate) fn flag(flag: &str, origin: &str) -> NvccInput {
        NvccInput {
            what: format!("nvcc flag `{flag}` (from {origin})"),
            value: flag.to_string(),
            fix: format!(
                "remove those characters from {origin}: the flags reach nvcc as separate \
                 arguments, so they never need quoting or escaping"
            ),
        }
    }

    fn path(what: String, path: &Path, fix: String) -> NvccInput {
        NvccInput {
            what,
            value: path.to_string_lossy().into_owned(),
            fix,
        }
    }
}

/// Refuses anything handed to nvcc that holds a character of [`SHELL_SPECIAL`]: nvcc runs
/// its compilation steps through `sh -c`, so `-DX=$(cmd)` in a flag, or a checkout, target
/// or cache path with `$(...)`, backticks or `$HOME` in it, would run a command or break the
/// build. The error names the flag or path, where it came from, and why.
pub(crate) fn check_nvcc_inputs(
    flags: impl Iterator<Item = NvccInput>,
    specs: &[ModuleSpec],
    includes: &[PathBuf],
    cache: (&Path, &str),
    toolkit: &Toolkit,
    nvcc_env: &[(String, String)],
) -> Result<(), Error> {
    let mut items: Vec<NvccInput> = flags.collect();
    for m in specs {
        for f in &m.flags {
            items.push(NvccInput::flag(
                f,
                &format!("Module::nvcc_flag of module `{}`", m.name),
            ));
        }
        for (k, v) in &m.defines {
            let value = v.as_ref().map_or(k.clone(), |v| format!("{k}={v}"));
            items.push(NvccInput {
                what: format!("define `{value}` of module `{}`", m.name),
                value,
                fix: "change the define in the build script".into(),
            });
        }
        for (src, _) in &m.sources {
            items.push(NvccInput::path(
                format!("source path {} (module `{}`)", src.display(), m.name),
                src,
                "build from a checkout whose path has none of these characters".into(),
            ));
        }
    }
    for dir in includes {
        items.push(NvccInput::path(
            format!("include directory {}", dir.display()),
            dir,
            "build from a checkout whose path has none of these characters".into(),
        ));
    }
    let (cache_dir, origin) = cache;
    items.push(NvccInput::path(
        format!("cache directory {} (from {origin})", cache_dir.display()),
        cache_dir,
        format!("set {CACHE_DIR_ENV} to a directory whose path has none of these characters"),
    ));
    items.push(NvccInput::path(
        format!(
            "toolkit directory {} (found via {})",
            toolkit.bin_dir().display(),
            toolkit.found_via()
        ),
        toolkit.bin_dir(),
        "use a toolkit installed at a path without these characters".into(),
    ));
    for (var, value) in nvcc_env {
        items.push(NvccInput {
            what: format!("environment variable {var}=`{value}`"),
            value: value.clone(),
            fix: format!("remove those characters from {var}, or unset it"),
        });
    }
    for item in items {
        let bad: Vec<String> = SHELL_SPECIAL
            .iter()
            .filter(|c| item.value.contains(**c))
            .map(|&c| match c {
                '`' => "a backtick".to_string(),
                c => format!("`{c}`"),
            })
            .collect();
        if !bad.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: the {} contains {}: nvcc runs its compilation steps through a \
                     shell (`sh -c`), which would expand it (`$(...)` or backticks run a \
                     command, `$VAR` is replaced), so fatbuild refuses `$`, backticks, `\"` \
                     and `\\` in anything handed to nvcc. Nothing was run.\nfix: {}",
                    item.what,
                    bad.join(", "),
                    item.fix
                ),
            ));
        }
    }
    Ok(())
}

/// The cache's size bound: [`cache::MAX_SIZE_ENV`] if set, else [`cache::DEFAULT_MAX_SIZE`].
pub(crate) fn cache_max_size() -> Result<u64, Error> {
    match env::var(cache::MAX_SIZE_ENV) {
        Ok(v) if !v.trim().is_empty() => cache::parse_size(&v).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: {}=\"{v}\" is not a size.\nfix: give bytes, or a number with K, \
                     M or G (e.g. 4G, 500M); 0 turns eviction off",
                    cache::MAX_SIZE_ENV
                ),
            )
        }),
        _ => Ok(cache::DEFAULT_MAX_SIZE),
    }
}

/// How many tools run at once when [`Build::jobs`](crate::Build::jobs) is not set: `NUM_JOBS`,
/// else the available parallelism.
pub(crate) fn default_jobs() -> usize {
    env::var("NUM_JOBS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `"compute_75"`, `"sm_75"`, `"75"` → 75, checked against the toolkit.
pub(crate) fn parse_ptx_arch(s: &str, tk: &Toolkit, tk_name: &str) -> Result<u32, Error> {
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

/// The real archs of an AOT build, checked against the toolkit and the PTX arch.
pub(crate) fn resolve_archs(
    archs: &Archs,
    tk: &Toolkit,
    tk_name: &str,
    ptx_arch: u32,
) -> Result<Vec<u32>, Error> {
    let supported = tk.supported_archs();
    let archs = match archs {
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

/// The key over the header files' names that enters every PTX key
/// ([`PlanInputs::header_listing`](crate::plan::PlanInputs::header_listing)).
pub(crate) fn header_listing(headers: &[PathBuf]) -> String {
    let mut listing = KeyHasher::new();
    for h in headers {
        listing.field("header", h.to_string_lossy().as_bytes());
    }
    listing.finish_key()
}
