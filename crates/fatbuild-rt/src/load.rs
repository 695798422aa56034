//! Loading an embedded [`Module`] onto a GPU, by the first way that fits it:
//!
//! 1. the fatbin (`cuModuleLoadData`), when its SASS or PTX runs on this GPU;
//! 2. the PTX: one file JIT-compiled by the driver (`cuModuleLoadDataEx`; the driver's own
//!    cache, `~/.nv/ComputeCache` or `CUDA_CACHE_PATH`, keeps the result), several linked with
//!    `cuLinkCreate` / `cuLinkAddData` / `cuLinkComplete` (the linked CUBIN is kept in the
//!    [`KernelCache`], which the driver's cache does not cover);
//! 3. the sources, compiled by [`Nvrtc`] for this GPU and kept in the [`KernelCache`];
//! 4. else [`ErrorKind::NoImageForGpu`], listing what is embedded and what would fit.
//!
//! [`LoadedModule::report`] says which way was taken and how long it took: the first thing
//! to look at when a first launch is slow.

use std::ffi::CString;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cache::KernelCache;
use crate::context::{Context, Function};
use crate::driver::{
    version_text, CUmodule, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_PTX, CUDA_ERROR_NOT_FOUND,
    CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
};
use crate::embedded::{Image, ImageKind, Module};
use crate::error::{Error, ErrorKind, Result};
use crate::nvrtc::Nvrtc;

/// Which image a module was loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadedFrom {
    /// The embedded fatbin (SASS for this GPU, or the PTX inside it JIT-compiled).
    Fatbin,
    /// The embedded PTX, JIT-compiled by the driver (its cache may have served it).
    Ptx,
    /// Several embedded PTX files, linked by the driver now.
    PtxLinked,
    /// Several embedded PTX files, linked earlier: read from the kernel cache.
    PtxLinkedCache,
    /// The embedded sources, compiled by NVRTC now.
    Nvrtc,
    /// The embedded sources, compiled by NVRTC earlier: read from the kernel cache.
    NvrtcCache,
}

impl LoadedFrom {
    /// `"fatbin"`, `"ptx"`, `"ptx-link"`, `"ptx-link-cache"`, `"nvrtc"`, `"nvrtc-cache"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadedFrom::Fatbin => "fatbin",
            LoadedFrom::Ptx => "ptx",
            LoadedFrom::PtxLinked => "ptx-link",
            LoadedFrom::PtxLinkedCache => "ptx-link-cache",
            LoadedFrom::Nvrtc => "nvrtc",
            LoadedFrom::NvrtcCache => "nvrtc-cache",
        }
    }
}

impl std::fmt::Display for LoadedFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a module was loaded.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// The image used.
    pub from: LoadedFrom,
    /// Wall time of the load (including any JIT or NVRTC compilation and cache I/O).
    pub time: Duration,
    /// Images tried before, and why they did not do (empty when the first one loaded).
    pub skipped: Vec<String>,
    /// The kernel cache's note, if it met a problem (e.g. removed an invalid entry).
    pub cache_note: String,
}

/// Where [`Context::load_with`] may look beyond the embedded images.
#[derive(Debug)]
pub struct LoadOptions<'a> {
    /// The kernel cache (default: [`KernelCache::from_env`]).
    pub cache: Option<&'a KernelCache>,
    /// The NVRTC to compile sources with (default: [`Nvrtc::get`], searched only when needed).
    pub nvrtc: Option<&'static Nvrtc>,
}

pub(crate) struct ModuleInner {
    pub(crate) ctx: Context,
    pub(crate) def: &'static Module,
    module: CUmodule,
    report: LoadReport,
}

// The module handle is used only through the driver, with its context current.
unsafe impl Send for ModuleInner {}
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if let Ok(_b) = self.ctx.bind() {
            // SAFETY: loaded in this context; unloaded once.
            unsafe { (self.ctx.inner.driver.api.cuModuleUnload)(self.module) };
        }
    }
}

/// A module loaded on a GPU; unloaded when the last clone (and every [`Function`] from it) is
/// dropped.
#[derive(Clone)]
pub struct LoadedModule {
    inner: Arc<ModuleInner>,
}

impl LoadedModule {
    /// The kernel `name` of this module.
    pub fn function(&self, name: &str) -> Result<Function> {
        let c = CString::new(name).map_err(|_| {
            Error::new(
                ErrorKind::KernelNotFound,
                format!("kernel name {name:?} holds a NUL"),
            )
        })?;
        let ctx = &self.inner.ctx;
        let d = ctx.inner.driver;
        let _b = ctx.bind()?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module, a C string; writes one handle.
        let r = unsafe { (d.api.cuModuleGetFunction)(&mut f, self.inner.module, c.as_ptr()) };
        if r == CUDA_ERROR_NOT_FOUND {
            let have = self.inner.def.kernels();
            return Err(Error::with_code(
                ErrorKind::KernelNotFound,
                r,
                format!(
                    "module `{}` has no kernel `{name}`; it has: {}. A kernel is found by its \
                     extern \"C\" name (a C++ name is mangled)",
                    self.inner.def.name(),
                    if have.is_empty() {
                        "(names not recorded in this build)".to_string()
                    } else {
                        have.join(", ")
                    }
                ),
            ));
        }
        d.check(r, || format!("cuModuleGetFunction(`{name}`)"))?;
        Ok(Function {
            module: self.inner.clone(),
            f,
            name: name.to_string(),
        })
    }

    /// What it was loaded from and how long that took.
    pub fn report(&self) -> &LoadReport {
        &self.inner.report
    }

    /// Its embedded description.
    pub fn module(&self) -> &'static Module {
        self.inner.def
    }

    /// The context it is loaded in.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }
}

impl std::fmt::Debug for LoadedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedModule")
            .field("module", &self.inner.def.name())
            .field("from", &self.inner.report.from)
            .finish()
    }
}

impl Context {
    /// Loads `module` on this GPU (see the [module docs](crate::load) for the order), with the
    /// kernel cache the environment names and NVRTC searched for when it is needed.
    pub fn load(&self, module: &'static Module) -> Result<LoadedModule> {
        let cache = KernelCache::from_env();
        self.load_with(
            module,
            &LoadOptions {
                cache: Some(&cache),
                nvrtc: None,
            },
        )
    }

    /// Loads `module` with an explicit cache and NVRTC.
    pub fn load_with(
        &self,
        module: &'static Module,
        opts: &LoadOptions<'_>,
    ) -> Result<LoadedModule> {
        let start = Instant::now();
        let own_cache;
        let cache = match opts.cache {
            Some(c) => c,
            None => {
                own_cache = KernelCache::from_env();
                &own_cache
            }
        };
        let _b = self.bind()?;
        let mut skipped = Vec::new();
        let plan = plan(module, self.sm(), &mut skipped);
        let mut last_err: Option<Error> = None;
        for step in plan {
            let got = match step {
                Step::Fatbin(img) => self
                    .load_image(img.data, "cuModuleLoadData (fatbin)")
                    .map(|m| (m, LoadedFrom::Fatbin)),
                Step::Ptx(img) => self.load_ptx(module, img).map(|m| (m, LoadedFrom::Ptx)),
                Step::PtxLink => self.link_ptx_cached(module, cache),
                Step::Nvrtc => self.load_nvrtc(module, cache, opts.nvrtc),
            };
            match got {
                Ok((m, from)) => {
                    let report = LoadReport {
                        from,
                        time: start.elapsed(),
                        skipped,
                        cache_note: cache.note(),
                    };
                    return Ok(LoadedModule {
                        inner: Arc::new(ModuleInner {
                            ctx: self.clone(),
                            def: module,
                            module: m,
                            report,
                        }),
                    });
                }
                Err(e) if may_try_next(&e) => {
                    skipped.push(format!("{}: {}", step.describe(), e.message()));
                    last_err = Some(e);
                }
                Err(e) => return Err(self.explain(module, e)),
            }
        }
        match last_err {
            // Compiling was the way left, and NVRTC is missing: that is what to fix.
            Some(e) if e.kind() == ErrorKind::NoNvrtc => Err(Error::new(
                ErrorKind::NoNvrtc,
                format!(
                    "module `{}` has no embedded image for this GPU ({}, sm_{}) and must be \
                     compiled from its sources: {}",
                    module.name(),
                    self.device_name(),
                    self.sm(),
                    e.message()
                ),
            )),
            last => Err(no_image(module, self, &skipped, last)),
        }
    }

    /// A failure that no other image can fix, with the driver-version hint when it applies.
    fn explain(&self, module: &Module, e: Error) -> Error {
        let have = self.inner.driver.version();
        let need = module.cuda_version();
        if e.code() == Some(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) && need > have {
            return Error::with_code(
                ErrorKind::DriverTooOld,
                CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                format!(
                    "module `{}`: the NVIDIA driver (CUDA {}) is older than the toolkit that \
                     built the kernels (CUDA {}): update the driver, or build with an older \
                     toolkit [{}]",
                    module.name(),
                    version_text(have),
                    version_text(need),
                    e.message()
                ),
            );
        }
        e
    }
}

/// Errors after which another image may still load.
fn may_try_next(e: &Error) -> bool {
    matches!(
        e.code(),
        Some(
            CUDA_ERROR_NO_BINARY_FOR_GPU
                | CUDA_ERROR_INVALID_PTX
                | CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                | CUDA_ERROR_INVALID_IMAGE
        )
    ) || matches!(e.kind(), ErrorKind::NoNvrtc | ErrorKind::NoImageForGpu)
}

/// One way to load a module, in the order tried.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Fatbin(&'static Image),
    Ptx(&'static Image),
    PtxLink,
    Nvrtc,
}

impl Step {
    fn describe(&self) -> String {
        match self {
            Step::Fatbin(i) => format!("fatbin ({})", entries_text(i)),
            Step::Ptx(i) => format!("PTX `{}`", i.label()),
            Step::PtxLink => "PTX (linked)".into(),
            Step::Nvrtc => "sources (NVRTC)".into(),
        }
    }
}

fn entries_text(i: &Image) -> String {
    let e: Vec<String> = i.fatbin_entries().iter().map(|e| e.to_string()).collect();
    if e.is_empty() {
        "contents not recorded".into()
    } else {
        e.join(", ")
    }
}

/// The ways to try for a GPU of `sm`, in order; images that cannot run on it are left out
/// with the reason pushed to `skipped` (so a wrong arch list is explained without a driver
/// call). Pure: tested without a GPU.
pub(crate) fn plan(module: &'static Module, sm: u32, skipped: &mut Vec<String>) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some(f) = module.fatbin() {
        if f.fatbin_entries().is_empty() || f.runs_on(sm) {
            steps.push(Step::Fatbin(f));
        } else {
            skipped.push(format!(
                "fatbin ({}): nothing in it runs on sm_{sm}",
                entries_text(f)
            ));
        }
    }
    let ptx: Vec<&'static Image> = module.ptx().collect();
    match ptx.len() {
        0 => {}
        1 => steps.push(Step::Ptx(ptx[0])),
        _ => steps.push(Step::PtxLink),
    }
    if module.has_sources() {
        steps.push(Step::Nvrtc);
    }
    steps
}

/// The error when nothing fits: what is embedded, the GPU, and how to build one that fits.
pub(crate) fn no_image(
    module: &Module,
    ctx: &Context,
    skipped: &[String],
    last: Option<Error>,
) -> Error {
    no_image_for(module, ctx.sm(), ctx.device_name(), skipped, last)
}

pub(crate) fn no_image_for(
    module: &Module,
    sm: u32,
    device: &str,
    skipped: &[String],
    last: Option<Error>,
) -> Error {
    let mut have: Vec<String> = module
        .images()
        .iter()
        .map(|i| match i.kind() {
            ImageKind::Fatbin => format!("a fatbin ({})", entries_text(i)),
            ImageKind::Ptx => format!("PTX `{}`", i.label()),
        })
        .collect();
    if module.has_sources() {
        have.push("its sources (for NVRTC)".into());
    }
    let have = if have.is_empty() {
        "nothing".to_string()
    } else {
        have.join(", ")
    };
    let tried = if skipped.is_empty() {
        String::new()
    } else {
        format!(" Tried: {}.", skipped.join("; "))
    };
    Error::with_code(
        ErrorKind::NoImageForGpu,
        last.and_then(|e| e.code())
            .unwrap_or(CUDA_ERROR_NO_BINARY_FOR_GPU),
        format!(
            "module `{}` has no image for this GPU ({device}, sm_{sm}): the build embedded \
             {have}.{tried} Fix: build with the GPU's arch in the arch list (e.g. `{}` in it, \
             or `native` on a machine with this GPU), or enable the `jit` feature (PTX the \
             driver compiles for any newer GPU) or `nvrtc` (sources compiled at run time)",
            module.name(),
            sm
        ),
    )
}

mod images;

#[cfg(test)]
mod tests;
