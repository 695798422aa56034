//! The run-time half of [fatbuild](https://docs.rs/fatbuild): loads the CUDA kernels a build
//! script embedded with `fatbuild::Build::embed` onto the GPU present, and hands back
//! function handles to launch them.
//!
//! - A fatbin (the `aot` feature) or PTX (`jit`) loads through the CUDA Driver API, which is
//!   opened at run time (`dlopen("libcuda.so.1")`, never linked): a program using this crate
//!   starts on any machine and gets an [`Error`] without a GPU.
//! - Embedded sources (`nvrtc`) are compiled for the GPU by NVRTC, also opened at run time,
//!   and kept in a disk cache whose entries are verified on every read ([`KernelCache`]).
//! - With `default-features = false` it is only the types of the generated module
//!   ([`Embed`], [`Module`], [`Image`]), with no dependencies: for crates that load the bytes
//!   with their own driver wrapper (see "With cudarc" below).
//!
//! # Walk-through
//!
//! The build script compiles the kernels in the mode the crate's features select and writes
//! `OUT_DIR/kernels.rs` (fatbuild's docs):
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     let mode = fatbuild::Mode::from_cargo_features().unwrap_or_else(|e| panic!("{e}"));
//!     fatbuild::Build::new()
//!         .mode(mode) // jit: PTX; aot: fatbin with SASS per arch; nvrtc: the sources
//!         .archs_from_env("MY_CRATE_CUDA_ARCHS")
//!         .module(fatbuild::Module::new("saxpy").source("kernels/saxpy.cu").kernel("saxpy"))
//!         .embed("kernels")
//!         .unwrap_or_else(|e| panic!("{e}"));
//! }
//! ```
//!
//! The crate includes it (`mod kernels { include!(concat!(env!("OUT_DIR"), "/kernels.rs")); }`),
//! which gives `kernels::SAXPY` (a [`Module`]), `kernels::MODULES` and `kernels::EMBED` (an
//! [`Embed`]), and launches:
//!
//! ```no_run
//! # #[cfg(feature = "driver")]
//! use fatbuild_rt::{Args, Context, LaunchConfig, Module};
//!
//! /// y = a * x + y on GPU 0, with the `saxpy(float a, const float *x, float *y, int n)`
//! /// kernel of `module` (e.g. `&kernels::SAXPY`).
//! # #[cfg(feature = "driver")]
//! fn saxpy(module: &'static Module, a: f32, x: &[f32], y: &mut [f32]) -> fatbuild_rt::Result<()> {
//!     // 1. The GPU: loads the driver, retains the device's primary context.
//!     let ctx = match Context::new(0) {
//!         Err(e) if e.is_no_gpu() => return Err(e), // the message says what is missing
//!         c => c?,
//!     };
//!     // 2. The module, from the first image that fits this GPU (fatbin, PTX, NVRTC).
//!     let m = ctx.load(module)?;
//!     println!("loaded from {} in {:?}", m.report().from, m.report().time);
//!     // 3. Memory and arguments, in the kernel's parameter order.
//!     let (dx, dy) = (ctx.upload(x)?, ctx.upload(y)?);
//!     let args = Args::new()
//!         .arg(a)
//!         .arg(dx.device_ptr())
//!         .arg(dy.device_ptr())
//!         .arg(x.len() as i32);
//!     // 4. The launch (unsafe: the arguments must match the kernel), then the result.
//!     let f = m.function("saxpy")?;
//!     unsafe { f.launch(&LaunchConfig::for_elements(x.len(), 256), &args)? };
//!     y.copy_from_slice(&dy.to_vec()?);
//!     Ok(())
//! }
//! ```
//!
//! `examples/rust-kernels` in fatbuild's repository is a complete crate (a saxpy and a
//! reduction, features `jit`, `aot`, `nvrtc`) that its CI builds in each mode and runs on a GPU.
//!
//! # Loading order
//!
//! [`Context::load`] tries, in order: the fatbin, if the SASS or PTX recorded in it at build
//! time runs on this GPU; the PTX (one file JIT-compiled by the driver, whose cache,
//! `CUDA_CACHE_PATH` or `~/.nv/ComputeCache`, keeps the result; several linked with the
//! driver's linker and kept in the [`KernelCache`]); the sources through NVRTC (kept in the
//! [`KernelCache`]). When none fits the error says what the build embedded, this GPU's arch,
//! and how to build for it. [`LoadedModule::report`] tells which image was used and how long
//! the load took.
//!
//! # With cudarc (or another driver wrapper)
//!
//! [`Module::images`] are plain bytes. With cudarc 0.19, `Ptx::from_binary` wraps "binary
//! CUBIN data" for `CudaContext::load_module`; the driver's module loader takes a fatbin the
//! same way (this path is from cudarc's documentation, not run here):
//!
//! ```ignore
//! let ctx = cudarc::driver::CudaContext::new(0)?;
//! let image = kernels::SAXPY.fatbin().or_else(|| kernels::SAXPY.ptx().next()).unwrap();
//! let module = match image.kind() {
//!     fatbuild_rt::ImageKind::Fatbin => ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image.bytes().to_vec()))?,
//!     fatbuild_rt::ImageKind::Ptx => ctx.load_module(cudarc::nvrtc::Ptx::from_src(image.ptx_text().unwrap()))?,
//! };
//! let f = module.load_function("saxpy")?;
//! ```
//!
//! cudarc 0.18 and older have no `from_binary`: write the fatbin to a file and use
//! `Ptx::from_file` (`cuModuleLoad` reads fatbins), or call `cudarc::driver::result::module::
//! load_data(image.bytes().as_ptr().cast())` for a raw `CUmodule`. The embedded sources work
//! with `cudarc::nvrtc::compile_ptx_with_opts` ([`SourceFile::text`], [`Module::nvrtc_options`]),
//! without this crate's disk cache.
//!
//! # Environment
//!
//! | variable | meaning |
//! |---|---|
//! | `FATBUILD_RT_CUDA_LIB` | the driver library to load instead of `libcuda.so.1` |
//! | `FATBUILD_RT_NVRTC_LIB` | the NVRTC library to load instead of searching |
//! | `CUDA_PATH`, `CUDA_HOME` | NVRTC is looked for in their `lib64` (then `/usr/local/cuda/lib64`, then the system loader) |
//! | `FATBUILD_RT_CACHE_DIR` | the kernel cache directory (default `$XDG_CACHE_HOME/fatbuild-rt` or `~/.cache/fatbuild-rt`); set and empty turns it off |
//! | `FATBUILD_RT_CACHE_MAX_SIZE` | the cache's bound in bytes (default 256 MiB) |
//! | `CUDA_CACHE_PATH`, `CUDA_CACHE_DISABLE` | the driver's own JIT cache (PTX loads) |
//!
//! In a setuid or setgid process these variables are ignored (they choose code to load).
//!
//! # Source layout
//!
//! | file | job |
//! |---|---|
//! | `embedded.rs` | the generated module's types ([`Embed`], [`Module`], [`Image`], [`SourceFile`]); no dependencies |
//! | `error.rs` | [`Error`], [`ErrorKind`] |
//! | `dl.rs` | `dlopen`, the environment, the library search |
//! | `driver.rs` | [`Driver`]: `libcuda.so.1`'s entry points, `cuInit`, error names |
//! | `context.rs` | [`Context`], [`DeviceBuffer`], [`Args`], [`LaunchConfig`], [`Function`] |
//! | `load.rs` | [`Context::load`]: the loading order, [`LoadedModule`], [`LoadReport`], the wrong-arch error (tests in `load/tests.rs`) |
//! | `load/images.rs` | each way of loading: the driver's loader, its JIT, its linker, NVRTC; the kernel cache in front |
//! | `nvrtc.rs` | [`Nvrtc`]: finding NVRTC, the target arch, compiling a module |
//! | `cache.rs` | [`KernelCache`]: keys, entries, verification, eviction (tests in `cache/tests.rs`) |
//! | `cache/dir.rs` | the cache directory, opened and checked once, every entry reached through it |

#![warn(missing_docs)]

/// `Debug` for a struct that shows only the fields named (the others are function tables,
/// locks or settings of no interest), ended by `finish` or `finish_non_exhaustive`.
#[cfg(feature = "driver")]
macro_rules! debug_fields {
    ($t:ident { $($field:ident),+ } $finish:ident) => {
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    $(.field(stringify!($field), &self.$field))+
                    .$finish()
            }
        }
    };
}

mod embedded;
mod error;

pub use embedded::{Embed, FatbinEntry, Image, ImageKind, Module, SourceFile};
pub use error::{Error, ErrorKind, Result};

#[doc(hidden)]
pub use embedded::__private;

#[cfg(feature = "driver")]
mod cache;
#[cfg(feature = "driver")]
mod context;
#[cfg(feature = "driver")]
mod dl;
#[cfg(feature = "driver")]
mod driver;
#[cfg(feature = "driver")]
pub mod load;
#[cfg(feature = "driver")]
mod nvrtc;

#[cfg(feature = "driver")]
pub use cache::{
    CompiledImage, CompiledKind, KernelCache, KeyBuilder, CACHE_DIR_ENV, CACHE_MAX_SIZE_ENV,
    DEFAULT_CACHE_MAX_SIZE,
};
#[cfg(feature = "driver")]
pub use context::{Args, Context, DeviceBuffer, Function, LaunchConfig};
#[cfg(feature = "driver")]
pub use driver::{Driver, CUDA_LIB_ENV};
#[cfg(feature = "driver")]
pub use load::{LoadOptions, LoadReport, LoadedFrom, LoadedModule};
#[cfg(feature = "driver")]
pub use nvrtc::{Nvrtc, Target, NVRTC_LIB_ENV};
