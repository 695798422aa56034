//! Builds CUDA kernels from a Cargo build script and embeds them in the crate: as a Rust
//! module that the crate `include!`s (loaded at run time by the companion crate
//! [fatbuild-rt](https://docs.rs/fatbuild-rt)), and/or as C arrays for a C core.
//!
//! fatbuild drives the CUDA toolkit's command-line tools (nvcc, ptxas, nvlink, fatbinary) for
//! an arch list (or `native`), caches every output under a content hash (verified on reuse),
//! and embeds the results: PTX for the driver to JIT (`jit`), fatbins with SASS per arch
//! (`aot`), or the kernel *sources* (with the headers they include) for NVRTC to compile at run
//! time (`nvrtc`), which needs no CUDA toolkit at build time at all.
//!
//! # Walk-through
//!
//! A crate with kernels in `kernels/` and the features `jit`, `aot` and `nvrtc`
//! (`[features] default = ["jit"]; jit = []; aot = []; nvrtc = []`), fatbuild as a
//! build-dependency and fatbuild-rt as a dependency:
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     // 1. The mode its features select (none: an error that says why).
//!     let mode = fatbuild::Mode::from_cargo_features().unwrap_or_else(|e| panic!("{e}"));
//!     fatbuild::Build::new()
//!         .mode(mode)
//!         // 2. Knobs; each `*_from_env` makes Cargo rerun the script when the variable changes.
//!         .archs_from_env("MY_CRATE_CUDA_ARCHS") // "80;90", "sm_80,sm_90", "native"
//!         .include("kernels")                   // -I; its headers are tracked
//!         // 3. Modules: one or more .cu files (several are device-linked), their defines,
//!         //    and the kernels they must hold (checked against the PTX).
//!         .module(fatbuild::Module::new("saxpy").source("kernels/saxpy.cu").kernel("saxpy"))
//!         .module(
//!             fatbuild::Module::new("reduce_f64")
//!                 .source("kernels/reduce.cu")
//!                 .define("REAL", "double")
//!                 .kernel("reduce"),
//!         )
//!         // 4. Compile what the cache lacks; write OUT_DIR/kernels.rs.
//!         .embed("kernels")
//!         .unwrap_or_else(|e| panic!("{e}")); // the message says what failed and the fix
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! mod kernels {
//!     include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! }
//! // kernels::SAXPY and kernels::REDUCE_F64 are fatbuild_rt::Module values: their images
//! // (&'static [u8], 8-byte aligned), kernel names, sources; kernels::EMBED the build.
//! let ctx = fatbuild_rt::Context::new(0)?;
//! let saxpy = ctx.load(&kernels::SAXPY)?.function("saxpy")?; // fatbin, PTX or NVRTC
//! ```
//!
//! A C core takes the same build as C instead (`.emit_c(true).emit_rust(false)`, then
//! `cc::Build::new().file(emb.c_file.unwrap())...`): warpfft's build script does.
//!
//! # Modes
//!
//! | [`Mode`]  | pipeline | blobs per module |
//! |-----------|----------|------------------|
//! | `Jit`     | `nvcc -ptx -rdc=true -arch=compute_75` per source | one PTX per source |
//! | `Aot`     | PTX → `ptxas -c -arch=sm_XX` per source and arch → `nvlink -arch=sm_XX` per arch → `fatbinary` (one ELF per arch) | one fatbin |
//! | `AotJit`  | as `Aot`; a single-source module's fatbin also holds its PTX | one fatbin; for multi-source modules also one PTX per source |
//! | `Nvrtc`   | none: the sources and their headers are read and embedded as text, with each module's NVRTC options | none |
//! | `JitNvrtc`, `AotNvrtc`, `AotJitNvrtc` | as `Jit`, `Aot`, `AotJit`, plus the sources as in `Nvrtc` | as `Jit`, `Aot`, `AotJit` |
//!
//! [`Mode::from_features`] maps a crate's `jit` / `aot` / `nvrtc` features to the mode.
//!
//! # Embedded sources (the modes with `Nvrtc`)
//!
//! [`Mode::Nvrtc`] compiles nothing: no toolkit is searched for, probed or run (no `NVCC`,
//! `CUDA_PATH`, `PATH` lookup, no cache directory), so a build script using it works on a
//! machine without CUDA (docs.rs, CI runners, laptops) and the generated
//! `<name>_cuda_version` is 0. Each module's sources are scanned for `#include "name"`,
//! transitively: a quoted include is looked for beside the including file, then in each
//! [`Build::include`] directory in order, like nvcc does. The scanner drops comments and joins
//! continued lines but does not evaluate `#if`, so every quoted include it sees must exist;
//! `#include <...>` (the CUDA and C++ headers NVRTC brings) and `#include MACRO` are left to
//! NVRTC. A quoted include that is not found is an error naming the file and line.
//!
//! Every file is embedded once, named as NVRTC finds it (NVRTC matches header names exactly):
//! its path relative to the first include directory that holds it (`common.cuh`,
//! `spreadinterp/tile.cuh`); a source outside every include directory by its file name, a
//! header beside it relative to its directory. An include must spell that name
//! (`#include "leaf.cuh"` from `sub/deep.cuh` that finds `sub/leaf.cuh` is an error saying to
//! write `"sub/leaf.cuh"`), and two files may not share one. Each file is printed as
//! `cargo:rerun-if-changed`.
//!
//! A module's NVRTC options are, in order: its defines (`-DNAME=VALUE`), then the build's and
//! its own nvcc flags that mean something to NVRTC, in NVRTC's spelling (`-std c++17` →
//! `--std=c++17`, `-Xptxas -v` → `--ptxas-options=-v`; `--use_fast_math`, `-lineinfo`, `-G`,
//! `--maxrregcount=N`, `-ftz`, `-prec-div`, `-prec-sqrt`, `-fmad`, `-D`/`-U`, `-rdc`, ... as
//! they are). Arch flags (`-arch`, `-gencode`, `-code`) are dropped: NVRTC's caller picks the
//! arch. Any other flag (`-O3`, `-ccbin gcc-12`, `-Xcompiler ...`) is dropped with a
//! `cargo:warning` naming it and where it came from. `-rdc=true` is not added: a module with
//! several sources must be compiled with it per source and linked by the loader.
//!
//! The sources digest ([`Embedded::sources_digest`], [`sources_digest`]) is the lower-case hex SHA-256 over every
//! embedded file in name order: its name, a NUL byte, its size as 8 little-endian bytes, its
//! text. It changes exactly when an embedded file (or its name) does, so a run-time cache of
//! NVRTC outputs can key on it.
//!
//! Multi-source modules use relocatable device code, so their PTX cannot be JIT-loaded file by
//! file: it goes in separate PTX blobs that the loader links with `cuLinkCreate` /
//! `cuLinkAddData(CU_JIT_INPUT_PTX)` / `cuLinkComplete`. PTX is always built first (also for
//! `Aot`), so kernel names are read from its `.entry` lines into the manifest, and JIT and AOT
//! builds share the cached PTX.
//!
//! # Generated Rust
//!
//! With [`Build::emit_rust`] (the default), `<name>.rs` defines, for the runtime crate's types
//! (`::fatbuild_rt` unless [`Build::rust_runtime_crate`] says otherwise; with
//! `default-features = false` that crate is only those types):
//!
//! - per module `pub static <NAME>: fatbuild_rt::Module`, named as the module in upper case
//!   (characters other than letters and digits become `_`, a leading digit gets `M_`; two
//!   modules with one such name, or one named `MODULES` or `EMBED`, are an error): its images
//!   in the C table's order (each `&'static [u8]` with its kind, label and, for a fatbin, the
//!   images inside it, e.g. `[Sass(80), Sass(90), Ptx(75)]`), its kernels' names, and with
//!   sources its translation units and NVRTC options;
//! - `pub static MODULES: &[&Module]`, every module in build order;
//! - `pub static EMBED: fatbuild_rt::Embed`: mode, arch list, PTX arch, toolkit version and
//!   `cuda_version`, the blobs' hash, the sources digest, the manifest (below), the embedded
//!   files.
//!
//! The bytes are `include_bytes!` of copies under `<out dir>/<name>/` (8-byte aligned through a
//! wrapper type; PTX and sources with a NUL appended, which the accessors leave out), so the
//! crate's compile reads exactly what this build produced. The names go through
//! `fatbuild_rt::__private::v1`, whose module name is the output format's version: a fatbuild
//! writing a format the runtime crate does not know fails to compile there, not at run time.
//!
//! A module's kernel names are the `.entry` names of its PTX in every mode that compiles;
//! [`Module::kernel`] declares names that must be among them (a C++ kernel without
//! `extern "C"` has a mangled name: the usual mistake, caught at build time). In
//! [`Mode::Nvrtc`], which compiles nothing, the declared names are the list.
//!
//! # Generated C
//!
//! `<name>.h` declares the `fatbuild_blob` / `fatbuild_file` / `fatbuild_module` types (shared
//! by every embed, guarded by `FATBUILD_TYPES_DEFINED`, which also defines
//! `FATBUILD_HAS_SOURCES`) and `<name>_modules`, `<name>_n_modules`, `<name>_manifest` (JSON),
//! `<name>_mode` ([`Mode::as_str`]: `"jit"`, `"aot"`, `"aot+jit"`, `"nvrtc"`, `"jit+nvrtc"`,
//! `"aot+nvrtc"`, `"aot+jit+nvrtc"`), `<name>_cuda_version` (e.g. 13000; 0 when no toolkit
//! built anything), `<name>_files` / `<name>_n_files` (the embedded sources and headers,
//! sorted by name; none without sources) and `<name>_sources_digest` (`""` without sources).
//! Per module the blobs are, in order: the fatbin (`FATBUILD_BLOB_FATBIN`, label `"fatbin"`)
//! in the AOT modes, then the PTX blobs (`FATBUILD_BLOB_PTX`, label = the source's file stem)
//! where the mode table above has them (`blobs` is NULL when there are none). Every blob is
//! 8-byte aligned; PTX is NUL-terminated and `size` excludes the NUL. With sources, a module's
//! `sources` / `n_sources` name its translation units in the files table, in build order, and
//! `options` / `n_options` are its NVRTC options (else NULL and 0); a file's `text` is
//! NUL-terminated and its `size` excludes the NUL.
//!
//! The manifest:
//! `{"name":..,"mode":..,"archs":[80,90],"ptx_arch":"compute_75","toolkit":"13.0.88",
//! "hash":"<sha256 of all blobs>","sources_digest":"..","files":[{"name":"common.cuh",
//! "bytes":N}],"modules":[{"name":..,"sources":[..],"defines":{..},"kernels":[..],
//! "blobs":[{"kind":"fatbin","label":"fatbin","bytes":N,"images":["elf sm_80","elf sm_90",
//! "ptx sm_75"]},{"kind":"ptx","label":"scan","bytes":N}],"nvrtc_sources":[..],
//! "nvrtc_options":[..]}]}`. In [`Mode::Nvrtc`] `ptx_arch` and `toolkit` are `""`, `archs`
//! and `blobs` are empty, `kernels` are the declared ones ([`Module::kernel`]; read from the
//! PTX in the other modes), and `hash` is that of no blobs.
//!
//! # Archs
//!
//! The default list for the AOT modes is [`DEFAULT_ARCHS`] = 75, 80, 86, 89, 90, 100, 120
//! (Turing to Blackwell; SASS for sm_X0 also runs on later sm_Xy, so this covers every GPU
//! CUDA 13 supports except Jetson Thor, sm_110), filtered to what the toolkit supports. The PTX
//! arch defaults to [`DEFAULT_PTX_ARCH`] = `compute_75`, the lowest CUDA 13 accepts. Arch
//! lists are validated against `nvcc --list-gpu-code`; CUDA 13.0 knows 75 80 86 87 88 89 90
//! 100 103 110 120 121. `native` runs `nvidia-smi --query-gpu=compute_cap
//! --format=csv,noheader` (build machine GPUs only). In the modes without AOT the arch list is
//! not read at all.
//!
//! # Cache
//!
//! Every output is stored as `<stem>.<key>.<ext>` in the cache directory, with its SHA-256 and
//! length in `<stem>.<key>.<ext>.sum` beside it. An output whose key matches and whose contents
//! match its digest is up to date, and its tool does not run; one that fails the check
//! (truncated, altered, zero-length after a crash, no digest) is rebuilt and replaced, with a
//! one-line `cargo:warning` naming the file ([`Embedded::warnings`]). A fully cached build
//! runs no tool at all ([`Embedded::stats`]). The keys are SHA-256 hashes over:
//!
//! - PTX: the toolkit version, the nvcc command line (minus the output path), the values of
//!   the variables nvcc reads ([`NVCC_ENV_VARS`]), the source's path
//!   and contents, the names of the header files (`.h .hh .hpp .hxx .cuh .inc .inl .def`) under
//!   the include directories and beside the sources, and the contents of every file the source
//!   included when it was last compiled (nvcc's `-MD` list, kept as `<stem>.<key>.deps`). So
//!   editing a header recompiles exactly the sources that include it; adding or removing a
//!   header (which may change what an `#include` finds) recompiles everything.
//! - cubins: the ptxas command line and the PTX contents (a header edit that leaves the PTX
//!   unchanged stops there); linked cubins and fatbins: their command lines and the keyed names
//!   of their inputs.
//!
//! The same `.cu` with other defines or flags is a different output, and JIT and AOT builds
//! share the PTX. Outputs are written to a temporary name, synced to disk, their digest filed,
//! and then renamed into place, so concurrent builds sharing the cache are safe and a crash
//! leaves nothing that passes the check. A build about to run a tool first claims its output
//! (`<output>.lock`, created exclusively, holding the process id and host); a concurrent build
//! needing the same output waits for the claim to go and then uses the result, so two builds
//! never run the same job (a claim whose process is gone, or older than 30 minutes, is taken
//! over). Tools run in parallel within each stage, `NUM_JOBS` at a time.
//!
//! The cache is bounded: after each successful build, while the directory is larger than
//! [`MAX_SIZE_ENV`] (`FATBUILD_CACHE_MAX_SIZE`: bytes, or `K`/`M`/`G`; `0` = unbounded;
//! [`Build::cache_max_size`]; default [`DEFAULT_MAX_SIZE`], 2 GiB), the least recently used
//! entries are removed (a hit refreshes an entry's time, at most every 10 minutes); this
//! build's entries and any used within the last hour stay.
//!
//! # Environment
//!
//! | variable | read by | meaning |
//! |----------|---------|---------|
//! | `NVCC` | [`Toolkit::find`] (never in [`Mode::Nvrtc`], which reads only the flags' variable) | path of nvcc; the toolkit is its directory |
//! | `CUDA_PATH`, `CUDA_HOME` | [`Toolkit::find`] | toolkit root (`bin/nvcc`) |
//! | `PATH`, then `/usr/local/cuda` | [`Toolkit::find`] | searched when none of the above is set |
//! | any, e.g. `WARPFFT_CUDA_ARCHS` | [`Build::archs_from_env`] | arch list |
//! | any, e.g. `WARPFFT_NVCC_FLAGS` | [`Build::nvcc_flags_from_env`] | extra nvcc flags, whitespace-separated |
//! | `FATBUILD_CACHE_DIR` | [`Build::embed`] | cache directory (default: `<target>/<profile>/../fatbuild-cache`) |
//! | `FATBUILD_CACHE_MAX_SIZE` | [`Build::embed`] | the cache's size bound (default 2G; `0`: unbounded); not a rerun trigger |
//! | [`NVCC_ENV_VARS`]: `NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`, `NVCC_CCBIN`, `CPATH`, `C_INCLUDE_PATH`, `CPLUS_INCLUDE_PATH` | nvcc (and its host preprocessor) | part of every PTX key |
//! | `NUM_JOBS` | [`Build::embed`] | parallel tool runs (Cargo sets it from `-j`) |
//! | `OUT_DIR` | [`Build::embed`] | where the generated files go; also: print `cargo:` lines only when set |
//!
//! Every variable above except `PATH`, `NUM_JOBS`, `OUT_DIR` and `FATBUILD_CACHE_MAX_SIZE` is printed as
//! `cargo:rerun-if-env-changed` (in [`Mode::Nvrtc`] only the flags' variable, the only one it
//! reads; the arch list's only in the AOT modes, the only ones that read it; `PATH` too when the toolkit was found by searching it or the default root); every
//! source, every header file in the include directories and beside the sources, every other
//! non-system file a source included, and the nvcc used (as found and as resolved through
//! links, so a switched `/usr/local/cuda` link reruns when the new nvcc is newer than the last
//! build), as `cargo:rerun-if-changed`, each line once. An arch-list variable that is set but
//! blank in an AOT build gets a `cargo:warning` (the default list is long). (The include directories themselves are not printed: Cargo would
//! then rerun the build script whenever anything at all under them changed, e.g. files of a
//! test build.)
//!
//! # Errors
//!
//! [`Build::embed`] returns [`Error`], whose message names the tool, the full command line,
//! its exit status and output, and the fix (or, for a missing toolkit, every place searched).
//! A build script should stop with it: `panic!("{e}")`, or print it and exit non-zero.
//!
//! nvcc runs its own compilation steps through `sh -c`, so a `$`, backtick, `"` or `\` in
//! anything it is handed (flags, defines, source, include, cache and toolkit paths, the
//! [`NVCC_ENV_VARS`]) would be expanded by a shell: `embed` refuses them before any tool
//! runs, naming the flag or path and where it came from.
//!
//! # Fatbins
//!
//! [`fatbin::parse`] lists the images in a fatbin without the toolkit (the header layout is
//! documented in that module), e.g. to test that an AOT build holds the intended archs.
//!
//! # Source layout
//!
//! [`Build::embed`] runs four stages, one file each; the rest support them.
//!
//! | file | job |
//! |------|-----|
//! | `builder.rs` | configuration: [`Build`] and its knobs; `embed` drives the stages (tests with a fake toolkit in `builder/tests.rs`) |
//! | `module.rs` | a [`Module`] as configured: sources, defines, flags |
//! | `resolve.rs` | stage 1: configuration → module specs, PTX arch, arch list, header files, out/cache dirs, job count, the inputs' `cargo:` lines |
//! | `plan.rs` | stage 2: module specs → nvcc jobs, then (given the PTX files) ptxas/nvlink/fatbinary jobs, each output named by its cache key; runs nothing (tests in `plan/tests.rs`) |
//! | `run.rs` | stage 3: decides every cache hit (PTX by its `.deps` list and header contents, every output by its digest), runs the misses stage by stage, files outputs into the cache |
//! | `spawn.rs` | starts the tool processes (the only place that does) and runs a stage's commands in parallel; explains failures |
//! | `sources.rs` | the modes with sources: the include scanner, file names, NVRTC options, the sources digest; reads files only (tests in `sources/tests.rs`; the builder's in `builder/tests/sources.rs`) |
//! | `output.rs` | stage 4: reads the blobs back, [`Embedded`] and its manifest and hash, writes `<name>.h` / `<name>.c` |
//! | `rust.rs` | stage 4 for Rust: writes `<name>.rs` and the image files it includes |
//! | `embed.rs` | formats the C text (blob literals, tables), JSON strings, PTX `.entry` names |
//! | `cache.rs` | key hashing, the cache directory ([`CACHE_DIR_ENV`]) and its default, atomic writes, entry digests (store/check) |
//! | `toolkit.rs`, `arch.rs`, `mode.rs` | finding the toolkit and what it supports; arch lists and where they come from; [`Mode`] |
//! | `fatbin.rs`, `error.rs` | the fatbin parser; [`Error`] |

// The walk-through is a whole build.rs, `fn main` included.
#![allow(clippy::needless_doctest_main)]

mod arch;
mod builder;
mod cache;
mod embed;
mod error;
pub mod fatbin;
mod mode;
mod module;
mod output;
mod plan;
mod resolve;
mod run;
mod rust;
mod sources;
mod spawn;
mod toolkit;

pub use arch::{
    native as native_archs, parse as parse_archs, CUDA_13_0_ARCHS, DEFAULT_ARCHS, DEFAULT_PTX_ARCH,
};
pub use builder::Build;
pub use cache::{CACHE_DIR_ENV, DEFAULT_MAX_SIZE, MAX_SIZE_ENV};
pub use embed::BlobKind;
pub use error::{Error, ErrorKind};
pub use mode::Mode;
pub use module::Module;
pub use output::{Embedded, EmbeddedBlob, EmbeddedFile, EmbeddedModule};
pub use run::Stats;
pub use sources::sources_digest;
pub use toolkit::{Toolkit, DEFAULT_CUDA_ROOT, NVCC_ENV_VARS, TOOLKIT_ENV_VARS};
