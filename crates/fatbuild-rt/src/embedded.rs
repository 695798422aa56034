//! What a build script embedded: the types of the module that `fatbuild::Build::embed`
//! writes to `OUT_DIR` ([`Embed`], [`Module`], [`Image`], [`SourceFile`]). Plain data with
//! `'static` lifetimes, no dependencies: a crate that loads the bytes with its own driver
//! wrapper needs nothing else from this crate (`default-features = false`).

use std::fmt;

/// Everything one `embed` call wrote: its modules and the build's description. The generated
/// module names it `EMBED`.
#[derive(Debug, Clone, Copy)]
pub struct Embed {
    pub(crate) name: &'static str,
    pub(crate) mode: &'static str,
    pub(crate) archs: &'static [u32],
    pub(crate) ptx_arch: &'static str,
    pub(crate) toolkit: &'static str,
    pub(crate) cuda_version: i32,
    pub(crate) hash: &'static str,
    pub(crate) sources_digest: &'static str,
    pub(crate) manifest: &'static str,
    pub(crate) files: &'static [SourceFile],
    pub(crate) modules: &'static [&'static Module],
}

impl Embed {
    /// The name passed to `embed` (also the generated file's stem).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The build mode: `"jit"`, `"aot"`, `"aot+jit"`, `"nvrtc"`, `"jit+nvrtc"`, `"aot+nvrtc"`
    /// or `"aot+jit+nvrtc"`.
    pub fn mode(&self) -> &'static str {
        self.mode
    }

    /// The real archs the fatbins hold SASS for, e.g. `[80, 90]` (empty without `aot`).
    pub fn archs(&self) -> &'static [u32] {
        self.archs
    }

    /// The virtual arch of the PTX, e.g. `"compute_75"` (`""` when no toolkit built anything).
    pub fn ptx_arch(&self) -> &'static str {
        self.ptx_arch
    }

    /// The CUDA toolkit that built the images, e.g. `"13.0.88"` (`""` in an `nvrtc`-only build).
    pub fn toolkit(&self) -> &'static str {
        self.toolkit
    }

    /// The toolkit as `major * 1000 + minor * 10`, e.g. 13000 (0 when none built anything). A
    /// driver older than this cannot load the images.
    pub fn cuda_version(&self) -> i32 {
        self.cuda_version
    }

    /// SHA-256 (hex) over every image with its module name and label.
    pub fn hash(&self) -> &'static str {
        self.hash
    }

    /// SHA-256 (hex) over the embedded source files (`""` without sources); a run-time cache
    /// of NVRTC outputs keys on it.
    pub fn sources_digest(&self) -> &'static str {
        self.sources_digest
    }

    /// The build manifest, one line of JSON: mode, archs, toolkit, hashes, and per module its
    /// sources, defines, kernels, images (with the archs inside each fatbin) and NVRTC
    /// options (fatbuild's crate docs give the format).
    pub fn manifest(&self) -> &'static str {
        self.manifest
    }

    /// The embedded source files (sorted by name; empty without `nvrtc`).
    pub fn files(&self) -> &'static [SourceFile] {
        self.files
    }

    /// The modules, in the order the build script added them.
    pub fn modules(&self) -> &'static [&'static Module] {
        self.modules
    }

    /// The module named `name`.
    pub fn module(&self, name: &str) -> Option<&'static Module> {
        self.modules.iter().copied().find(|m| m.name == name)
    }

    /// Bytes embedded: every image, and every source file once.
    pub fn embedded_bytes(&self) -> usize {
        let images: usize = (self.modules.iter())
            .flat_map(|m| m.images)
            .map(|i| i.bytes().len())
            .sum();
        images + self.files.iter().map(|f| f.bytes().len()).sum::<usize>()
    }
}

/// One kernel module: its images (a fatbin and/or PTX), the names of its kernels, and in
/// builds with `nvrtc` its sources and NVRTC options. At run time it becomes one `CUmodule`.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    pub(crate) name: &'static str,
    pub(crate) images: &'static [Image],
    pub(crate) kernels: &'static [&'static str],
    pub(crate) sources: &'static [&'static str],
    pub(crate) options: &'static [&'static str],
    pub(crate) files: &'static [SourceFile],
    pub(crate) sources_digest: &'static str,
    pub(crate) cuda_version: i32,
}

impl Module {
    /// Its name, as the build script gave it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its images in load order: the fatbin first (builds with `aot`), then the PTX (one per
    /// source: several are linked at load time). Empty in an `nvrtc`-only build.
    pub fn images(&self) -> &'static [Image] {
        self.images
    }

    /// The fatbin, if the build made one.
    pub fn fatbin(&self) -> Option<&'static Image> {
        self.images.iter().find(|i| i.kind == ImageKind::Fatbin)
    }

    /// The PTX images (one per source), in build order.
    pub fn ptx(&self) -> impl Iterator<Item = &'static Image> {
        self.images.iter().filter(|i| i.kind == ImageKind::Ptx)
    }

    /// Its kernels' names: the `.entry` names of its PTX (every build that compiled
    /// something), or in an `nvrtc`-only build the names the build script declared with
    /// `fatbuild::Module::kernel`.
    pub fn kernels(&self) -> &'static [&'static str] {
        self.kernels
    }

    /// With `nvrtc`: its translation units, as names in [`Embed::files`], in build order.
    pub fn sources(&self) -> &'static [&'static str] {
        self.sources
    }

    /// With `nvrtc`: the options NVRTC compiles it with besides the arch (its defines, then
    /// the NVRTC spellings of its nvcc flags).
    pub fn nvrtc_options(&self) -> &'static [&'static str] {
        self.options
    }

    /// Every embedded source file of the build (what its sources may include).
    pub fn files(&self) -> &'static [SourceFile] {
        self.files
    }

    /// The build's [`Embed::sources_digest`].
    pub fn sources_digest(&self) -> &'static str {
        self.sources_digest
    }

    /// The build's [`Embed::cuda_version`].
    pub fn cuda_version(&self) -> i32 {
        self.cuda_version
    }

    /// Whether it embeds sources NVRTC can compile.
    pub fn has_sources(&self) -> bool {
        !self.sources.is_empty()
    }
}

/// The kind of an embedded image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// A fatbin: SASS (ELF) for the build's arch list, plus PTX when the build had `jit` too.
    /// Load it with `cuModuleLoadData`.
    Fatbin,
    /// PTX text for the build's virtual arch; the driver JIT-compiles it for the GPU present.
    Ptx,
}

impl ImageKind {
    /// `"fatbin"` or `"ptx"` (the manifest's spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            ImageKind::Fatbin => "fatbin",
            ImageKind::Ptx => "ptx",
        }
    }
}

impl fmt::Display for ImageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one entry of a fatbin holds: SASS for a real arch, or PTX for a virtual one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FatbinEntry {
    /// SASS (an ELF cubin) for `sm_N`; runs on that arch and later minors of its major.
    Sass(u32),
    /// PTX for `compute_N`; the driver JIT-compiles it for any GPU of that arch or newer.
    Ptx(u32),
}

impl fmt::Display for FatbinEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatbinEntry::Sass(sm) => write!(f, "SASS sm_{sm}"),
            FatbinEntry::Ptx(sm) => write!(f, "PTX compute_{sm}"),
        }
    }
}

/// One embedded image: its bytes (8-byte aligned), its kind and label.
#[derive(Debug, Clone, Copy)]
pub struct Image {
    pub(crate) kind: ImageKind,
    pub(crate) label: &'static str,
    /// PTX ends in a NUL byte here (the driver wants one); `bytes()` leaves it out.
    pub(crate) data: &'static [u8],
    pub(crate) entries: &'static [FatbinEntry],
}

impl Image {
    /// Fatbin or PTX.
    pub fn kind(&self) -> ImageKind {
        self.kind
    }

    /// `"fatbin"`, or for PTX the stem of the source it came from.
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// The image (for PTX without the terminating NUL), 8-byte aligned: what a driver
    /// wrapper's "load module from memory" call takes.
    pub fn bytes(&self) -> &'static [u8] {
        match self.kind {
            ImageKind::Ptx => self.data.strip_suffix(&[0]).unwrap_or(self.data),
            ImageKind::Fatbin => self.data,
        }
    }

    /// PTX with its terminating NUL (what `cuModuleLoadData` reads); `None` for a fatbin.
    pub fn ptx_with_nul(&self) -> Option<&'static [u8]> {
        (self.kind == ImageKind::Ptx && self.data.last() == Some(&0)).then_some(self.data)
    }

    /// PTX as text (`None` for a fatbin, or PTX that is not UTF-8, which nvcc never writes).
    pub fn ptx_text(&self) -> Option<&'static str> {
        match self.kind {
            ImageKind::Ptx => std::str::from_utf8(self.bytes()).ok(),
            ImageKind::Fatbin => None,
        }
    }

    /// For a fatbin, what it holds, e.g. `[Sass(80), Sass(90), Ptx(75)]` (read from it when it
    /// was built); empty for PTX.
    pub fn fatbin_entries(&self) -> &'static [FatbinEntry] {
        self.entries
    }

    /// Whether a GPU of `sm` (e.g. 90) can run this image: SASS for its major at or below
    /// its minor, or PTX for its arch or older.
    pub fn runs_on(&self, sm: u32) -> bool {
        match self.kind {
            ImageKind::Fatbin => self.entries.iter().any(|e| entry_runs_on(*e, sm)),
            ImageKind::Ptx => true, // the virtual arch is checked by the driver
        }
    }
}

/// Whether fatbin entry `e` runs on a GPU of arch `sm`: SASS of the same major and a minor at
/// most the GPU's (sm_80 SASS runs on sm_86, not on sm_90), or PTX of that arch or older.
pub(crate) fn entry_runs_on(e: FatbinEntry, sm: u32) -> bool {
    match e {
        FatbinEntry::Sass(s) => s / 10 == sm / 10 && s <= sm,
        FatbinEntry::Ptx(p) => p <= sm,
    }
}

/// One embedded source file, named as NVRTC looks it up (`common.cuh`, `sub/tile.cuh`).
#[derive(Debug, Clone, Copy)]
pub struct SourceFile {
    pub(crate) name: &'static str,
    /// The text with a terminating NUL (NVRTC wants C strings); `bytes()` leaves it out.
    pub(crate) data: &'static [u8],
}

impl SourceFile {
    /// Its name, relative to the include directory that holds it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its contents.
    pub fn bytes(&self) -> &'static [u8] {
        self.data.strip_suffix(&[0]).unwrap_or(self.data)
    }

    /// Its contents as text (`None` if they are not UTF-8).
    pub fn text(&self) -> Option<&'static str> {
        std::str::from_utf8(self.bytes()).ok()
    }

    /// The contents with the terminating NUL.
    #[cfg_attr(not(feature = "driver"), allow(dead_code))]
    pub(crate) fn with_nul(&self) -> &'static [u8] {
        self.data
    }
}

/// Constructors for the generated module; not for direct use (their signatures change with
/// fatbuild's output format, whose version is the module name: a fatbuild that writes a
/// format this crate does not know fails to compile with an unresolved `v1`).
#[doc(hidden)]
pub mod __private {
    /// Output format 1 (fatbuild 0.1).
    pub mod v1 {
        use crate::embedded::{Embed, FatbinEntry, Image, ImageKind, Module, SourceFile};

        /// 8-byte alignment for embedded bytes (`include_bytes!` aligns to 1; fatbins are
        /// read as 8-byte words).
        #[repr(C)]
        pub struct Aligned<B: ?Sized> {
            pub _align: [u64; 0],
            pub bytes: B,
        }

        pub const FATBIN: ImageKind = ImageKind::Fatbin;
        pub const PTX: ImageKind = ImageKind::Ptx;

        pub const fn sass(sm: u32) -> FatbinEntry {
            FatbinEntry::Sass(sm)
        }

        pub const fn ptx(sm: u32) -> FatbinEntry {
            FatbinEntry::Ptx(sm)
        }

        pub const fn image(
            kind: ImageKind,
            label: &'static str,
            data: &'static [u8],
            entries: &'static [FatbinEntry],
        ) -> Image {
            Image {
                kind,
                label,
                data,
                entries,
            }
        }

        pub const fn file(name: &'static str, data: &'static [u8]) -> SourceFile {
            SourceFile { name, data }
        }

        #[allow(clippy::too_many_arguments)]
        pub const fn module(
            name: &'static str,
            images: &'static [Image],
            kernels: &'static [&'static str],
            sources: &'static [&'static str],
            options: &'static [&'static str],
            files: &'static [SourceFile],
            sources_digest: &'static str,
            cuda_version: i32,
        ) -> Module {
            Module {
                name,
                images,
                kernels,
                sources,
                options,
                files,
                sources_digest,
                cuda_version,
            }
        }

        #[allow(clippy::too_many_arguments)]
        pub const fn embed(
            name: &'static str,
            mode: &'static str,
            archs: &'static [u32],
            ptx_arch: &'static str,
            toolkit: &'static str,
            cuda_version: i32,
            hash: &'static str,
            sources_digest: &'static str,
            manifest: &'static str,
            files: &'static [SourceFile],
            modules: &'static [&'static Module],
        ) -> Embed {
            Embed {
                name,
                mode,
                archs,
                ptx_arch,
                toolkit,
                cuda_version,
                hash,
                sources_digest,
                manifest,
                files,
                modules,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sass_runs_on_later_minors_of_its_major_only() {
        assert!(entry_runs_on(FatbinEntry::Sass(80), 80));
        assert!(entry_runs_on(FatbinEntry::Sass(80), 86));
        assert!(!entry_runs_on(FatbinEntry::Sass(86), 80));
        assert!(!entry_runs_on(FatbinEntry::Sass(80), 90));
        assert!(!entry_runs_on(FatbinEntry::Sass(90), 100));
        assert!(entry_runs_on(FatbinEntry::Ptx(75), 90));
        assert!(!entry_runs_on(FatbinEntry::Ptx(90), 86));
    }

    #[test]
    fn ptx_bytes_leave_out_the_nul() {
        let i = __private::v1::image(ImageKind::Ptx, "k", b".version 9.0\n\0", &[]);
        assert_eq!(i.bytes(), b".version 9.0\n");
        assert_eq!(i.ptx_with_nul().unwrap(), b".version 9.0\n\0");
        assert_eq!(i.ptx_text(), Some(".version 9.0\n"));
        let f = __private::v1::image(ImageKind::Fatbin, "fatbin", b"\x50\xed\x55\xba\0", &[]);
        assert_eq!(f.bytes().len(), 5);
        assert!(f.ptx_with_nul().is_none() && f.ptx_text().is_none());
    }
}
