//! Embedding the kernel sources for NVRTC (the modes with `nvrtc`): finds every module's
//! sources and, transitively, the headers they include with `#include "..."`, names each file
//! as NVRTC will look it up, turns each module's defines and nvcc flags into NVRTC options,
//! and digests the files. Reads files only: no toolkit is looked for or run, so a build that
//! embeds only sources works on a machine without CUDA. The tests are in `sources/tests.rs`.
//!
//! The scanner is small on purpose: it drops comments, joins continued lines, and follows
//! every `#include "name"` it sees, whatever `#if` surrounds it (so a file the compiler would
//! skip must still exist); `#include <name>` and `#include MACRO` are left to NVRTC.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cache;
use crate::error::{Error, ErrorKind};
use crate::plan::ModuleSpec;

/// One embedded file: its name (as NVRTC looks it up), where it was read, its text.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) text: Vec<u8>,
}

/// What the modes with sources embed: the files (sorted by name), per module its translation
/// units (file names, in build order) and NVRTC options, and the digest of the files.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    pub(crate) files: Vec<SourceFile>,
    pub(crate) modules: Vec<(Vec<String>, Vec<String>)>,
    pub(crate) digest: String,
}

/// Collects the sources of `specs`. `includes` are the build's include directories (absolute),
/// `flags` the build-wide nvcc flags with where each came from. Pushes a `rerun-if-changed`
/// line per embedded file and a `warning=` line per flag that NVRTC has no use for.
pub(crate) fn collect(
    specs: &[ModuleSpec],
    includes: &[PathBuf],
    flags: &[(String, String)],
    cargo: &mut Vec<String>,
) -> Result<Sources, Error> {
    let dirs: Vec<PathBuf> = includes
        .iter()
        .map(|d| fs::canonicalize(d).map_err(|e| Error::io("resolving", d, e)))
        .collect::<Result<_, _>>()?;
    let mut files: BTreeMap<String, SourceFile> = BTreeMap::new();
    let mut modules = Vec::new();
    for m in specs {
        let mut units = Vec::new();
        for (src, shown) in &m.sources {
            let path = fs::canonicalize(src).map_err(|e| {
                config(format!(
                    "fatbuild: source {shown} of module `{}` cannot be read: {e}",
                    m.name
                ))
            })?;
            let root = path.parent().unwrap_or(Path::new("/")).to_path_buf();
            let name = match name_in(&path, &dirs) {
                Some(n) => n,
                None => path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            };
            add_tree(&mut files, name.clone(), path, &root, &dirs)?;
            units.push(name);
        }
        let (options, dropped) = nvrtc_options(&m.defines, flags, &m.flags, &m.name);
        for (flag, origin) in dropped {
            cargo.push(format!(
                "warning=fatbuild: nvcc flag `{flag}` (from {origin}) means nothing to NVRTC \
                 (or fatbuild does not know its NVRTC spelling), so the embedded sources are \
                 compiled without it"
            ));
        }
        modules.push((units, options));
    }
    let files: Vec<SourceFile> = files.into_values().collect();
    for f in &files {
        cargo.push(format!("rerun-if-changed={}", f.path.display()));
    }
    let digest = digest(&files);
    Ok(Sources {
        files,
        modules,
        digest,
    })
}

fn config(msg: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, msg)
}

/// Adds `path` (named `name`) and everything it includes, depth first. `root` is the directory
/// of the module source being scanned (names of headers outside every include directory are
/// relative to it).
fn add_tree(
    files: &mut BTreeMap<String, SourceFile>,
    name: String,
    path: PathBuf,
    root: &Path,
    dirs: &[PathBuf],
) -> Result<(), Error> {
    let mut stack = vec![(name, path)];
    while let Some((name, path)) = stack.pop() {
        if let Some(f) = files.get(&name) {
            if f.path == path {
                continue;
            }
            return Err(config(format!(
                "fatbuild: two embedded files would both be named `{name}`: {} and {}; NVRTC \
                 finds files by name, so the names must be unique.\nfix: rename one, or give \
                 the include directories so that they are told apart",
                f.path.display(),
                path.display()
            )));
        }
        let text = fs::read(&path).map_err(|e| Error::io("reading", &path, e))?;
        if let Some(at) = text.iter().position(|&b| b == 0) {
            return Err(config(format!(
                "fatbuild: {} holds a NUL byte (offset {at}); embedded sources must be text",
                path.display()
            )));
        }
        let here = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        for (line, spelling) in quoted_includes(&text) {
            let at = format!("{}:{line}", path.display());
            let found = resolve(&spelling, &here, dirs).ok_or_else(|| {
                config(format!(
                    "fatbuild: {at}: #include \"{spelling}\" not found (looked beside the file \
                     and in the include directories: {}).\nfix: add the directory that holds \
                     it with Build::include, or correct the name",
                    list_dirs(dirs)
                ))
            })?;
            let hname = name_in(&found, dirs)
                .or_else(|| rel_name(&found, root))
                .ok_or_else(|| {
                    config(format!(
                        "fatbuild: {at}: #include \"{spelling}\" is {}, outside every include \
                         directory ({}) and the source's directory, so it has no name NVRTC \
                         could find it by.\nfix: add its directory with Build::include",
                        found.display(),
                        list_dirs(dirs)
                    ))
                })?;
            if hname != spelling {
                return Err(config(format!(
                    "fatbuild: {at}: #include \"{spelling}\" finds {}, which is embedded as \
                     \"{hname}\" (its path relative to the include directory); NVRTC finds \
                     embedded headers by their exact names only.\nfix: write #include \
                     \"{hname}\"",
                    found.display()
                )));
            }
            stack.push((hname, found));
        }
        files.insert(name.clone(), SourceFile { name, path, text });
    }
    Ok(())
}

fn list_dirs(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "none given".into();
    }
    let v: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    v.join(", ")
}

/// Where the compiler finds `#include "spelling"` from a file in `here`: beside it, then in
/// each include directory in order. Canonical, so one file has one path.
fn resolve(spelling: &str, here: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    std::iter::once(here)
        .chain(dirs.iter().map(PathBuf::as_path))
        .map(|d| d.join(spelling))
        .find(|p| p.is_file())
        .and_then(|p| fs::canonicalize(p).ok())
}

/// `path` relative to the first include directory that holds it, `/`-separated.
fn name_in(path: &Path, dirs: &[PathBuf]) -> Option<String> {
    dirs.iter().find_map(|d| rel_name(path, d))
}

fn rel_name(path: &Path, dir: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The `#include "..."` directives of a C/C++ file: (line, spelling). Comments are dropped and
/// continued lines joined first; string and character literals are respected.
pub(crate) fn quoted_includes(text: &[u8]) -> Vec<(usize, String)> {
    // Logical lines, each with the number of its first physical line.
    let mut lines: Vec<(usize, Vec<u8>)> = Vec::new();
    let (mut cur, mut start, mut phys, mut i) = (Vec::new(), 1, 1, 0);
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with(b"\\\n") || rest.starts_with(b"\\\r\n") {
            phys += 1;
            i += if rest[1] == b'\n' { 2 } else { 3 };
            continue;
        }
        if rest[0] == b'\n' {
            lines.push((start, std::mem::take(&mut cur)));
            phys += 1;
            start = phys;
        } else {
            cur.push(rest[0]);
        }
        i += 1;
    }
    lines.push((start, cur));
    let mut out = Vec::new();
    let mut in_block = false;
    for (line, l) in lines {
        let mut code = Vec::with_capacity(l.len());
        let mut quote = None;
        let mut j = 0;
        while j < l.len() {
            let c = l[j];
            let next = l.get(j + 1).copied();
            j += 1;
            if in_block {
                if c == b'*' && next == Some(b'/') {
                    in_block = false;
                    code.push(b' ');
                    j += 1;
                }
                continue;
            }
            if let Some(q) = quote {
                code.push(c);
                if c == b'\\' {
                    code.extend(next);
                    j += 1;
                } else if c == q {
                    quote = None;
                }
                continue;
            }
            match (c, next) {
                (b'/', Some(b'/')) => break,
                (b'/', Some(b'*')) => {
                    in_block = true;
                    j += 1;
                }
                (b'"' | b'\'', _) => {
                    quote = Some(c);
                    code.push(c);
                }
                _ => code.push(c),
            }
        }
        if let Some(name) = include_directive(&code) {
            out.push((line, name));
        }
    }
    out
}

/// The name of a `# include "name"` line, if it is one.
fn include_directive(code: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(code);
    let rest = s.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?;
    if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return None; // #include_next, #includes...
    }
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string()).filter(|n| !n.is_empty())
}

/// nvcc flags that NVRTC takes as they are (`-x` and `-x=value` forms; `--x` too), besides
/// [`VALUE_FLAGS`], which it takes too.
const SAME_FLAGS: &[&str] = &[
    "use_fast_math",
    "lineinfo",
    "generate-line-info",
    "G",
    "device-debug",
    "extra-device-vectorization",
    "restrict",
    "w",
    "disable-warnings",
    "display-error-number",
    "no-display-error-number",
    "Xptxas",
    "ptxas-options",
];

/// Flags that NVRTC takes with a value, and that nvcc also accepts with the value as the next
/// argument (`-std c++17`): such a pair becomes `--flag=value`.
const VALUE_FLAGS: &[&str] = &[
    "ftz",
    "prec-div",
    "prec-sqrt",
    "fmad",
    "maxrregcount",
    "std",
    "rdc",
    "relocatable-device-code",
    "diag-suppress",
    "diag-error",
    "diag-warn",
    "dopt",
    "define-macro",
    "undefine-macro",
];

/// Flags that choose the target: the arch is NVRTC's caller's choice at run time, so these are
/// dropped without a warning (`-arch`, `-gencode`, `-code` and long forms).
const ARCH_FLAGS: &[&str] = &[
    "arch",
    "gpu-architecture",
    "gencode",
    "generate-code",
    "code",
    "gpu-code",
];

/// A module's NVRTC options, besides the arch: its defines (`-DNAME=VALUE`, `-DNAME`), then
/// the build's nvcc flags, then its own, each translated where NVRTC spells it differently;
/// and the flags dropped as meaningless to NVRTC, with where they came from.
pub(crate) fn nvrtc_options(
    defines: &[(String, Option<String>)],
    build_flags: &[(String, String)],
    module_flags: &[String],
    module: &str,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut opts: Vec<String> = defines
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("-D{k}={v}"),
            None => format!("-D{k}"),
        })
        .collect();
    let origin = format!("Module::nvcc_flag of module `{module}`");
    let all: Vec<(&str, &str)> = (build_flags.iter().map(|(f, o)| (f.as_str(), o.as_str())))
        .chain(module_flags.iter().map(|f| (f.as_str(), origin.as_str())))
        .collect();
    let mut dropped = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let (flag, from) = all[i];
        i += 1;
        let raw_next = all.get(i).map(|(f, _)| *f);
        // The next argument when it is not a flag itself: a value given separately.
        let next = raw_next.filter(|n| !n.starts_with('-'));
        let body = flag.trim_start_matches('-');
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (body, None),
        };
        if !flag.starts_with('-') || flag == "-" {
            dropped.push((flag.to_string(), from.to_string()));
        } else if flag.starts_with("-D") || flag.starts_with("-U") {
            // -DX, -D X, -UX, -U X (`--define-macro` is below)
            let name = match (&flag[2..], next) {
                ("", Some(n)) => {
                    i += 1;
                    n
                }
                (name, _) => name,
            };
            if !name.is_empty() {
                opts.push(format!("{}{name}", &flag[..2]));
            }
        } else if ARCH_FLAGS.contains(&key) {
            i += usize::from(value.is_none() && next.is_some());
        } else if !SAME_FLAGS.contains(&key) && !VALUE_FLAGS.contains(&key) {
            let mut shown = flag.to_string();
            if let (None, Some(n)) = (value, next) {
                shown = format!("{flag} {n}"); // most such flags take a value
                i += 1;
            }
            dropped.push((shown, from.to_string()));
        } else if key == "Xptxas" || key == "ptxas-options" {
            // ptxas options are flags themselves: `-Xptxas -v`
            let v = match (value, raw_next) {
                (Some(v), _) => v,
                (None, Some(n)) => {
                    i += 1;
                    n
                }
                (None, None) => continue,
            };
            opts.push(format!("--ptxas-options={v}"));
        } else if let (None, Some(n), true) = (value, next, VALUE_FLAGS.contains(&key)) {
            opts.push(format!("--{key}={n}"));
            i += 1;
        } else {
            opts.push(flag.to_string());
        }
    }
    (opts, dropped)
}

/// The digest of [`Embedded::files`](crate::Embedded::files) (internal form).
pub(crate) fn digest(files: &[SourceFile]) -> String {
    sources_digest(files.iter().map(|f| (f.name.as_str(), f.text.as_slice())))
}

/// The sources digest ([`Embedded::sources_digest`](crate::Embedded::sources_digest), the
/// generated `<name>_sources_digest`) of files given as `(name, text)`, in the order given
/// (an embed's are sorted by name): lower-case hex SHA-256 over, per file, the name's bytes, a
/// NUL, the text's length as 8 little-endian bytes, the text; `""` for no files. Public so
/// that a test or a run-time loader can recompute it.
pub fn sources_digest<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    let mut any = false;
    for (name, text) in files {
        any = true;
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((text.len() as u64).to_le_bytes());
        h.update(text);
    }
    if any {
        cache::hex(&h.finalize())
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests;
