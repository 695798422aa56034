//! The ways [`Context::load_with`] loads an image: the driver's loader for fatbins and CUBINs,
//! its JIT for one PTX file, its linker for several, NVRTC for sources; the last two with the
//! kernel cache in front.

use std::ffi::{c_int, c_void, CString};

use crate::cache::{CompiledImage, CompiledKind, KernelCache, KeyBuilder};
use crate::context::Context;
use crate::driver::{version_text, CUmodule, Driver, CUDA_ERROR_OUT_OF_MEMORY};
use crate::embedded::{Image, Module};
use crate::error::{Error, ErrorKind, Result};
use crate::load::LoadedFrom;
use crate::nvrtc::Nvrtc;

/// `CUjit_option` values (cuda.h) for the JIT error log, and `CU_JIT_INPUT_PTX`.
const JIT_ERROR_LOG_BUFFER: c_int = 5;
const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
const JIT_INPUT_PTX: c_int = 1;

impl Context {
    /// `cuModuleLoadData` of an image (a fatbin, a CUBIN, or NUL-terminated PTX).
    pub(super) fn load_image(&self, data: &[u8], step: &str) -> Result<CUmodule> {
        let d = self.inner.driver;
        let mut m = std::ptr::null_mut();
        // SAFETY: the context is current; `data` is a whole image (PTX NUL-terminated).
        let r = unsafe { (d.api.cuModuleLoadData)(&mut m, data.as_ptr().cast()) };
        d.check(r, || step.to_string()).map(|_| m)
    }

    /// One PTX file through the driver's JIT, with its error log.
    pub(super) fn load_ptx(&self, module: &Module, img: &Image) -> Result<CUmodule> {
        let d = self.inner.driver;
        let data = img.ptx_with_nul().unwrap_or(img.data);
        let mut log = JitLog::new();
        let mut m = std::ptr::null_mut();
        // SAFETY: the context is current; the PTX is NUL-terminated; the log outlives the call.
        let r = unsafe {
            (d.api.cuModuleLoadDataEx)(
                &mut m,
                data.as_ptr().cast(),
                2,
                log.opts.as_mut_ptr(),
                log.vals.as_mut_ptr(),
            )
        };
        d.check(r, || {
            format!(
                "cuModuleLoadDataEx (PTX JIT of module `{}`, {}){}",
                module.name(),
                img.label(),
                log.text()
            )
        })
        .map(|_| m)
    }

    /// Links PTX parts with the driver's linker: the module and the linked CUBIN.
    pub(super) fn link(
        &self,
        module: &Module,
        parts: &[(&[u8], &str)],
    ) -> Result<(CUmodule, Vec<u8>)> {
        let d = self.inner.driver;
        let mut log = JitLog::new();
        let mut ls = std::ptr::null_mut();
        let what = |step: &str, log: &JitLog| {
            format!(
                "{step} (linking the PTX of module `{}`){}",
                module.name(),
                log.text()
            )
        };
        // SAFETY: the context is current; the option arrays and log outlive the link state.
        let r = unsafe {
            (d.api.cuLinkCreate)(2, log.opts.as_mut_ptr(), log.vals.as_mut_ptr(), &mut ls)
        };
        d.check(r, || what("cuLinkCreate", &log))?;
        let guard = LinkGuard { driver: d, ls };
        for (ptx, label) in parts {
            let name = CString::new(*label).unwrap_or_default();
            // SAFETY: NUL-terminated PTX of `len` bytes including the NUL.
            let r = unsafe {
                (d.api.cuLinkAddData)(
                    ls,
                    JIT_INPUT_PTX,
                    ptx.as_ptr() as *mut c_void,
                    ptx.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            d.check(r, || what("cuLinkAddData", &log))?;
        }
        let (mut cubin, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: writes a pointer into the link state's memory and its size.
        let r = unsafe { (d.api.cuLinkComplete)(ls, &mut cubin, &mut size) };
        d.check(r, || what("cuLinkComplete", &log))?;
        // SAFETY: `cubin` holds `size` bytes until cuLinkDestroy.
        let bytes = unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec();
        let m = self.load_image(&bytes, "cuModuleLoadData (linked CUBIN)")?;
        drop(guard);
        Ok((m, bytes))
    }

    /// Several PTX files: the linked CUBIN from the cache, else linked now and stored.
    pub(super) fn link_ptx_cached(
        &self,
        module: &Module,
        cache: &KernelCache,
    ) -> Result<(CUmodule, LoadedFrom)> {
        let d = self.inner.driver;
        let parts: Vec<(&[u8], &str)> = module
            .ptx()
            .map(|i| (i.ptx_with_nul().unwrap_or(i.data), i.label()))
            .collect();
        let mut k =
            KeyBuilder::new("fatbuild-rt kernel cache 1: embedded PTX, linked by the driver")
                .text(module.name());
        for (p, _) in &parts {
            k = k.bytes(p);
        }
        let key = k
            .text(&format!("sm {} driver {}", self.sm(), d.version()))
            .finish();
        if let Some(m) = self.cached(cache, &key) {
            return Ok((m, LoadedFrom::PtxLinkedCache));
        }
        let (m, cubin) = self.link(module, &parts)?;
        cache.put(
            &key,
            &CompiledImage {
                kind: CompiledKind::Cubin,
                data: cubin,
            },
        );
        Ok((m, LoadedFrom::PtxLinked))
    }

    /// A cached CUBIN (or PTX) loaded; an entry the driver refuses is removed (a miss).
    pub(super) fn cached(&self, cache: &KernelCache, key: &str) -> Option<CUmodule> {
        let img = cache.get(key)?;
        match self.load_compiled(&img, "cached image") {
            Ok(m) => Some(m),
            Err(_) => {
                cache.remove(key);
                None
            }
        }
    }

    pub(super) fn load_compiled(&self, img: &CompiledImage, what: &str) -> Result<CUmodule> {
        match img.kind {
            CompiledKind::Cubin => {
                self.load_image(&img.data, &format!("cuModuleLoadData ({what}, CUBIN)"))
            }
            CompiledKind::Ptx => {
                self.load_image(&img.data, &format!("cuModuleLoadData ({what}, PTX JIT)"))
            }
        }
    }

    /// The sources through NVRTC, with the kernel cache.
    pub(super) fn load_nvrtc(
        &self,
        module: &Module,
        cache: &KernelCache,
        nvrtc: Option<&'static Nvrtc>,
    ) -> Result<(CUmodule, LoadedFrom)> {
        let nv = match nvrtc {
            Some(n) => n,
            None => Nvrtc::get()?,
        };
        let target = nv.target(self.sm())?;
        let key = nvrtc_key(module, nv, &target, self.inner.driver);
        if let Some(m) = self.cached(cache, &key) {
            return Ok((m, LoadedFrom::NvrtcCache));
        }
        let parts = nv.compile(module, &target)?;
        let (m, keep) = if parts.len() == 1 {
            let m = self
                .load_compiled(&parts[0], "compiled by NVRTC")
                .map_err(|e| self.nvrtc_refused(module, nv, e))?;
            (m, parts.into_iter().next().expect("one part"))
        } else {
            let labels: Vec<&str> = module.sources().to_vec();
            let p: Vec<(&[u8], &str)> = parts
                .iter()
                .map(|c| c.data.as_slice())
                .zip(labels)
                .collect();
            let (m, cubin) = self
                .link(module, &p)
                .map_err(|e| self.nvrtc_refused(module, nv, e))?;
            (
                m,
                CompiledImage {
                    kind: CompiledKind::Cubin,
                    data: cubin,
                },
            )
        };
        cache.put(&key, &keep);
        Ok((m, LoadedFrom::Nvrtc))
    }

    /// NVRTC's output refused by the driver: a driver older than NVRTC is the usual cause.
    pub(super) fn nvrtc_refused(&self, module: &Module, nv: &Nvrtc, e: Error) -> Error {
        let (maj, min) = nv.version();
        let need = maj * 1000 + min * 10;
        let have = self.inner.driver.version();
        if have < need && e.code() != Some(CUDA_ERROR_OUT_OF_MEMORY) {
            return Error::with_code(
                ErrorKind::DriverTooOld,
                e.code().unwrap_or(0),
                format!(
                    "module `{}`: the NVIDIA driver (CUDA {}) is older than NVRTC {maj}.{min} \
                     ({}), whose output it cannot load: update the driver, or use an NVRTC of \
                     the driver's CUDA release or older ({}) [{}]",
                    module.name(),
                    version_text(have),
                    nv.path(),
                    crate::nvrtc::NVRTC_LIB_ENV,
                    e.message()
                ),
            );
        }
        e
    }
}

/// The key of a module's NVRTC output: everything it depends on. A linked image (several
/// sources) comes from the driver's linker, so the driver version is part of it then.
fn nvrtc_key(module: &Module, nv: &Nvrtc, target: &crate::nvrtc::Target, d: &Driver) -> String {
    let (maj, min) = nv.version();
    let mut k = KeyBuilder::new("fatbuild-rt kernel cache 1: sources compiled by NVRTC")
        .text(env!("CARGO_PKG_VERSION"))
        .text(module.sources_digest())
        .text(module.name())
        .text(&format!("{} sources", module.sources().len()));
    for s in module.sources() {
        k = k.text(s);
    }
    k = k.text(&format!("{} options", module.nvrtc_options().len()));
    for o in module.nvrtc_options() {
        k = k.text(o);
    }
    let linker = if module.sources().len() > 1 {
        d.version()
    } else {
        0
    };
    k.text(&target.option())
        .text(&format!("nvrtc {maj}.{min}"))
        .text(&format!("linked by driver {linker}"))
        .finish()
}

/// The JIT's error log: a buffer, and the two options (`opts`, `vals`) that hand it to the
/// driver, its size one less than its length. It must outlive the call (or link state) given
/// the options.
struct JitLog {
    buf: Vec<u8>,
    opts: [c_int; 2],
    vals: [*mut c_void; 2],
}

impl JitLog {
    fn new() -> JitLog {
        let mut buf = vec![0u8; 8192];
        let vals = [
            buf.as_mut_ptr().cast::<c_void>(),
            (buf.len() - 1) as *mut c_void,
        ];
        JitLog {
            buf,
            opts: [JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES],
            vals,
        }
    }

    /// What the driver wrote, as `"; JIT log: ..."`, or `""`.
    fn text(&self) -> String {
        let log = &self.buf;
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let s = String::from_utf8_lossy(&log[..end]);
        let s = s.trim();
        if s.is_empty() {
            String::new()
        } else {
            format!("; JIT log: {s}")
        }
    }
}

struct LinkGuard {
    driver: &'static Driver,
    ls: *mut c_void,
}

impl Drop for LinkGuard {
    fn drop(&mut self) {
        // SAFETY: created by cuLinkCreate; destroyed once.
        unsafe { (self.driver.api.cuLinkDestroy)(self.ls) };
    }
}
