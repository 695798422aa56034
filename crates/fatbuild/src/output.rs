//! Stage 4, the output: reads the blobs of a finished build back from the cache, describes
//! them ([`Embedded`], [`EmbeddedModule`], [`EmbeddedBlob`]), hashes them, writes the manifest,
//! and writes `<name>.h` / `<name>.c` (whose text [`crate::embed`] formats). Reads cache files
//! only by the paths the plan named; decides nothing about the cache.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cache::{self, write_atomic};
use crate::embed::{self, json_string, BlobKind, CBlob, CEmbed, CModule};
use crate::error::{Error, ErrorKind};
use crate::fatbin;
use crate::mode::Mode;
use crate::plan::{ModulePlan, ModuleSpec};
use crate::run::{Built, Stats};
use crate::sources::Sources;

/// What [`Build::embed`](crate::Build::embed) produced.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The name passed to `embed` (the prefix of the C symbols).
    pub name: String,
    /// `<out dir>/<name>.c` when [`Build::emit_c`](crate::Build::emit_c) is on: compile it
    /// with the `cc` crate.
    pub c_file: Option<PathBuf>,
    /// `<out dir>/<name>.h` when [`Build::emit_c`](crate::Build::emit_c) is on: include it from
    /// the C code that loads the blobs.
    pub h_file: Option<PathBuf>,
    /// `<out dir>/<name>.rs` when [`Build::emit_rust`](crate::Build::emit_rust) is on (the
    /// default): `include!` it (crate docs, "Generated Rust").
    pub rs_file: Option<PathBuf>,
    /// The manifest (also in the C file as `<name>_manifest`).
    pub manifest_json: String,
    /// The mode built.
    pub mode: Mode,
    /// The SASS archs in the fatbins (empty without AOT).
    pub archs: Vec<u32>,
    /// The virtual arch of the PTX, e.g. `compute_75` (empty in [`Mode::Nvrtc`]).
    pub ptx_arch: String,
    /// The toolkit version, e.g. `13.0.88` (empty in [`Mode::Nvrtc`]: no toolkit was used).
    pub toolkit_version: String,
    /// `major * 1000 + minor * 10` of the toolkit, e.g. 13000 (0 in [`Mode::Nvrtc`]).
    pub cuda_version: i32,
    /// SHA-256 over all blobs (hex).
    pub hash: String,
    /// The embedded source files, sorted by name (empty unless the mode embeds sources).
    pub files: Vec<EmbeddedFile>,
    /// SHA-256 (lower-case hex) over the embedded files (`""` without sources): for each file
    /// in `files` order its name, a NUL byte, its size as 8 little-endian bytes, its text.
    pub sources_digest: String,
    /// The cache directory used.
    pub cache_dir: PathBuf,
    /// The modules, in the order added.
    pub modules: Vec<EmbeddedModule>,
    /// Tool runs and cache hits of this build.
    pub stats: Stats,
    /// The warnings printed as `cargo:warning` lines: tool warnings, and cache entries that
    /// failed their integrity check and were rebuilt (one line each, naming the file).
    pub warnings: Vec<String>,
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
    /// With embedded sources: its translation units, as names in [`Embedded::files`], in
    /// build order (else empty).
    pub nvrtc_sources: Vec<String>,
    /// With embedded sources: the NVRTC options besides the arch: its defines, then the
    /// NVRTC spellings of the build's and its own nvcc flags (else empty).
    pub nvrtc_options: Vec<String>,
}

/// One embedded source file.
#[derive(Debug, Clone)]
pub struct EmbeddedFile {
    /// The name NVRTC finds it by: its path relative to the include directory that holds it
    /// (a source outside every include directory: its file name), `/`-separated.
    pub name: String,
    /// Where it was read.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
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

/// The bytes of one module's blobs, in C-table order.
pub(crate) type ModuleData = Vec<Vec<u8>>;

/// Reads the blobs of every module (in C-table order) and describes them, with their sources
/// when the mode embeds them. Without images (`built` is `None`) the modules have no blobs and
/// their kernels are the `declared` ones (per module, from `Module::kernel`); with images the
/// kernels are read from the PTX, which must hold every declared one.
pub(crate) fn collect(
    specs: &[ModuleSpec],
    built: Option<&Built>,
    sources: &Sources,
    declared: &[Vec<String>],
) -> Result<(Vec<EmbeddedModule>, Vec<ModuleData>), Error> {
    let read = |p: &Path| fs::read(p).map_err(|e| Error::io("reading", p, e));
    let mut modules = Vec::new();
    let mut datas = Vec::new();
    let no_ptx = Vec::new();
    let no_plan = ModulePlan {
        fatbin: None,
        ptx_blobs: false,
        ptx_in_fatbin: false,
    };
    for (i, spec) in specs.iter().enumerate() {
        let mp = built.map_or(&no_plan, |b| &b.plan.modules[i]);
        let ptx_paths = built.map_or(&no_ptx, |b| &b.ptx_paths[i]);
        let (nvrtc_sources, nvrtc_options) = sources.modules.get(i).cloned().unwrap_or_default();
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
        let declared = declared.get(i).map_or(&[][..], Vec::as_slice);
        if built.is_none() {
            kernels = declared.to_vec();
        } else if let Some(k) = declared.iter().find(|k| !kernels.contains(*k)) {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!(
                    "fatbuild: module `{}` declares kernel `{k}` (Module::kernel), but its PTX \
                     has no such entry; it has: {}.\nfix: declare the kernel `extern \"C\"` \
                     (a C++ kernel's name is mangled), or correct the name",
                    spec.name,
                    if kernels.is_empty() {
                        "none".to_string()
                    } else {
                        kernels.join(", ")
                    }
                ),
            ));
        }
        let mut blobs = Vec::new();
        let mut data = Vec::new();
        if let (Some(j), Some(built)) = (mp.fatbin, built) {
            let path = built.plan.jobs[j].output.clone();
            let bytes = read(&path)?;
            let images = fatbin::parse(&bytes).map_err(|e| {
                let msg = format!(
                    "fatbuild: the fatbin of module `{}` ({}) does not parse: {e}. It matched \
                     the digest stored when fatbinary wrote it, so fatbinary itself wrote it \
                     so (or the file changed while this build read it).\nfix: delete that \
                     file and its `.sum` and build again; if this recurs, run the fatbinary \
                     command by hand and check the toolkit installation",
                    spec.name,
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
            nvrtc_sources,
            nvrtc_options,
        });
        datas.push(data);
    }
    Ok((modules, datas))
}

/// Writes `<name>.h` and `<name>.c`.
pub(crate) fn write_c(emb: &Embedded, datas: &[ModuleData], src: &Sources) -> Result<(), Error> {
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
            sources: &m.nvrtc_sources,
            options: &m.nvrtc_options,
        })
        .collect();
    let c = embed::source(&CEmbed {
        name: &emb.name,
        modules: cmods,
        files: (src.files.iter())
            .map(|f| (f.name.as_str(), f.text.as_slice()))
            .collect(),
        sources_digest: &emb.sources_digest,
        manifest: &emb.manifest_json,
        mode: emb.mode.as_str(),
        cuda_version: emb.cuda_version,
    });
    let (Some(h), Some(cf)) = (&emb.h_file, &emb.c_file) else {
        return Ok(());
    };
    write_atomic(h, embed::header(&emb.name).as_bytes())?;
    write_atomic(cf, &c)
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

/// SHA-256 over every blob with its module name, label and length.
pub(crate) fn blobs_hash(modules: &[EmbeddedModule], datas: &[ModuleData]) -> String {
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
pub(crate) fn manifest(e: &Embedded) -> String {
    let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(",");
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"name\":{},\"mode\":{},\"archs\":[{}],\"ptx_arch\":{},\"toolkit\":{},\"hash\":{},\
         \"sources_digest\":{},\"files\":[{}],\"modules\":[",
        json_string(&e.name),
        json_string(e.mode.as_str()),
        list(&mut e.archs.iter().map(u32::to_string)),
        json_string(&e.ptx_arch),
        json_string(&e.toolkit_version),
        json_string(&e.hash),
        json_string(&e.sources_digest),
        list(&mut e.files.iter().map(|f| format!(
            "{{\"name\":{},\"bytes\":{}}}",
            json_string(&f.name),
            f.bytes
        )))
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
             \"blobs\":[{blobs}],\"nvrtc_sources\":[{}],\"nvrtc_options\":[{}]}}",
            if i > 0 { "," } else { "" },
            json_string(&m.name),
            list(&mut m.sources.iter().map(|x| json_string(x))),
            list(&mut m.kernels.iter().map(|x| json_string(x))),
            list(&mut m.nvrtc_sources.iter().map(|x| json_string(x))),
            list(&mut m.nvrtc_options.iter().map(|x| json_string(x))),
        );
    }
    s.push_str("]}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_labels_are_unique() {
        let s = |p: &str| (PathBuf::from(p), p.to_string());
        let l = ptx_labels(&[s("a/x.cu"), s("b/x.cu"), s("c/y.cu"), s("d/x.cu")]);
        assert_eq!(l, ["x", "x-2", "y", "x-3"]);
    }
}
