//! NVRTC, found at run time (never linked), compiling a module's embedded sources for the GPU
//! present: a CUBIN for `sm_XX` when this NVRTC can write one for that arch, else PTX for the
//! newest `compute_XX` it knows at or below the GPU's, which the driver JIT-compiles. Works
//! without a GPU (it only needs the arch), so it is tested on build machines.

use std::ffi::{c_char, c_int, c_void, CStr, CString, OsStr};
use std::path::Path;

use crate::cache::{CompiledImage, CompiledKind};
use crate::dl::{self, Library};
use crate::embedded::Module;
use crate::error::{Error, ErrorKind, Result};

/// The variable naming the NVRTC library to load (a path), instead of the search.
pub const NVRTC_LIB_ENV: &str = "FATBUILD_RT_NVRTC_LIB";

/// Sonames tried, newest first: CUDA 13's, then CUDA 12's.
const SONAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12"];

type NvrtcResult = c_int;
type Program = *mut c_void;

type ErrorStringFn = unsafe extern "C" fn(NvrtcResult) -> *const c_char;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> NvrtcResult;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> NvrtcResult;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult;
type NumArchsFn = unsafe extern "C" fn(*mut c_int) -> NvrtcResult;
type ArchsFn = unsafe extern "C" fn(*mut c_int) -> NvrtcResult;

macro_rules! nvrtc_api {
    (required { $($req:ident: $rt:ty,)* } optional { $($opt:ident: $ot:ty,)* }) => {
        /// The entry points, resolved by name; the optional ones are newer (CUDA 11.1+,
        /// 11.2+) and absent in older libraries.
        #[allow(non_snake_case)]
        struct Api {
            $( $req: $rt, )*
            $( $opt: Option<$ot>, )*
        }

        impl Api {
            /// Every required entry point, or the name of the first one missing.
            fn resolve(lib: &Library) -> std::result::Result<Api, &'static str> {
                macro_rules! sym {
                    ($name:ident, $t:ty) => {
                        lib.symbol(stringify!($name)).map(|p| {
                            // SAFETY: NVRTC exports `$name` with this signature (nvrtc.h);
                            // function and data pointers have one size here.
                            unsafe { std::mem::transmute::<*mut c_void, $t>(p) }
                        })
                    };
                }
                Ok(Api {
                    $( $req: sym!($req, $rt).ok_or(stringify!($req))?, )*
                    $( $opt: sym!($opt, $ot), )*
                })
            }
        }
    };
}

nvrtc_api! {
    required {
        nvrtcGetErrorString: ErrorStringFn,
        nvrtcVersion: VersionFn,
        nvrtcCreateProgram: CreateFn,
        nvrtcDestroyProgram: DestroyFn,
        nvrtcCompileProgram: CompileFn,
        nvrtcGetProgramLogSize: SizeFn,
        nvrtcGetProgramLog: GetFn,
        nvrtcGetPTXSize: SizeFn,
        nvrtcGetPTX: GetFn,
    }
    optional {
        nvrtcGetCUBINSize: SizeFn,
        nvrtcGetCUBIN: GetFn,
        nvrtcGetNumSupportedArchs: NumArchsFn,
        nvrtcGetSupportedArchs: ArchsFn,
    }
}

/// A loaded NVRTC.
pub struct Nvrtc {
    api: Api,
    path: String,
    version: (i32, i32),
    archs: Vec<u32>,
}

debug_fields!(Nvrtc { path, version, archs } finish_non_exhaustive);

/// What NVRTC compiles for: a real arch (a CUBIN) or a virtual one (PTX for the driver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target {
    /// The arch number, e.g. 90.
    pub arch: u32,
    /// CUBIN for `sm_<arch>` (true) or PTX for `compute_<arch>` (false).
    pub cubin: bool,
}

impl Target {
    /// The NVRTC option: `-arch=sm_90` or `-arch=compute_90`.
    pub fn option(&self) -> String {
        let k = if self.cubin { "sm" } else { "compute" };
        format!("-arch={k}_{}", self.arch)
    }
}

/// NVRTC libraries loaded so far.
static LOADED: dl::Loaded<Nvrtc> = dl::Loaded::new();

impl Nvrtc {
    /// NVRTC: `$FATBUILD_RT_NVRTC_LIB` if set (that file only), else `libnvrtc.so.13` and
    /// `.12` in `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64`, `/usr/local/cuda/lib64`, then by the
    /// system loader's search. The first that loads and has the entry points is kept for the
    /// process; a failed search is not (fix the environment and call again).
    pub fn get() -> Result<&'static Nvrtc> {
        let mut tried = Vec::new();
        for c in dl::candidates(NVRTC_LIB_ENV, SONAMES) {
            match Nvrtc::load(c.as_os_str()) {
                Ok(n) => return Ok(n),
                Err(e) => tried.push(e.message().to_string()),
            }
        }
        Err(Error::new(
            ErrorKind::NoNvrtc,
            format!(
                "NVRTC (the CUDA run-time compiler this build compiles its kernels with) not \
                 found; tried: {}; install it (`pip install nvidia-cuda-nvrtc`, or the CUDA \
                 toolkit's libnvrtc) or set {NVRTC_LIB_ENV} to the path of libnvrtc.so",
                tried.join("; ")
            ),
        ))
    }

    /// The NVRTC library at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<&'static Nvrtc> {
        Nvrtc::load(path.as_ref().as_os_str())
    }

    fn load(name: &OsStr) -> Result<&'static Nvrtc> {
        LOADED.get_or_load(name, Nvrtc::load_new)
    }

    /// The NVRTC library `name` (`shown` in messages) loaded, with its version and archs.
    fn load_new(name: &OsStr, shown: String) -> Result<Nvrtc> {
        let no = |why: String| Error::new(ErrorKind::NoNvrtc, why);
        let lib = Library::open(name).map_err(|e| no(format!("{shown}: {e}")))?;
        let path = lib.path(name);
        let api = Api::resolve(&lib)
            .map_err(|sym| no(format!("{path} is not NVRTC: it has no symbol {sym}")))?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        let r = unsafe { (api.nvrtcVersion)(&mut major, &mut minor) };
        if r != 0 {
            return Err(no(format!("{path}: nvrtcVersion failed (nvrtcResult {r})")));
        }
        let mut archs = Vec::new();
        if let (Some(num), Some(get)) = (api.nvrtcGetNumSupportedArchs, api.nvrtcGetSupportedArchs)
        {
            let mut n = 0;
            // SAFETY: writes one int, then `n` ints into a buffer of `n`.
            if unsafe { num(&mut n) } == 0 && n > 0 {
                let mut all = vec![0 as c_int; n as usize];
                if unsafe { get(all.as_mut_ptr()) } == 0 {
                    archs = all
                        .into_iter()
                        .filter(|&a| a > 0)
                        .map(|a| a as u32)
                        .collect();
                }
            }
        }
        lib.leak();
        Ok(Nvrtc {
            api,
            path,
            version: (major, minor),
            archs,
        })
    }

    /// The file loaded.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// (major, minor), e.g. (13, 0).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The real archs it compiles for, ascending (empty when it cannot list them).
    pub fn supported_archs(&self) -> &[u32] {
        &self.archs
    }

    /// What to compile for a GPU of `sm`: a CUBIN for it when this NVRTC knows the arch, else
    /// PTX for the newest arch it knows below it (a GPU newer than NVRTC); an error when it
    /// knows only newer archs.
    pub fn target(&self, sm: u32) -> Result<Target> {
        let cubin = self.api.nvrtcGetCUBIN.is_some() && self.api.nvrtcGetCUBINSize.is_some();
        if self.archs.is_empty() {
            return Ok(Target { arch: sm, cubin });
        }
        match self.archs.iter().copied().filter(|&a| a <= sm).max() {
            Some(best) => Ok(Target {
                arch: best,
                cubin: cubin && best == sm,
            }),
            None => Err(Error::new(
                ErrorKind::NoImageForGpu,
                format!(
                    "NVRTC {}.{} ({}) compiles for sm_{} and newer only, not for this GPU's \
                     sm_{sm}: use an NVRTC of an older CUDA release ({NVRTC_LIB_ENV}), or a \
                     build with embedded images (features `jit` / `aot`)",
                    self.version.0, self.version.1, self.path, self.archs[0]
                ),
            )),
        }
    }

    /// Compiles `module`'s sources for `target`: one source gives one image (a CUBIN when
    /// `target.cubin`, else PTX); several give relocatable PTX each (`-rdc=true`), for the
    /// driver's linker.
    pub fn compile(&self, module: &Module, target: &Target) -> Result<Vec<CompiledImage>> {
        let sources = module.sources();
        if sources.is_empty() {
            return Err(Error::new(
                ErrorKind::NoImageForGpu,
                format!(
                    "module `{}` embeds no sources for NVRTC (its build did not have the \
                     `nvrtc` feature)",
                    module.name()
                ),
            ));
        }
        let files = module.files();
        // The file table is NVRTC's header list; every text ends in its NUL.
        let names: Vec<CString> = files
            .iter()
            .map(|f| CString::new(f.name()).unwrap_or_default())
            .collect();
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let text_ptrs: Vec<*const c_char> =
            files.iter().map(|f| f.with_nul().as_ptr().cast()).collect();
        let rdc = sources.len() > 1;
        let mut opts: Vec<CString> = module
            .nvrtc_options()
            .iter()
            .map(|o| CString::new(*o).unwrap_or_default())
            .collect();
        opts.push(CString::new(target.option()).unwrap_or_default());
        if rdc {
            opts.push(CString::new("-rdc=true").unwrap_or_default());
        }
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut out = Vec::new();
        for src in sources {
            let file = files.iter().find(|f| f.name() == *src).ok_or_else(|| {
                Error::new(
                    ErrorKind::Compile,
                    format!(
                        "module `{}`: source {src} is not in the embedded files",
                        module.name()
                    ),
                )
            })?;
            let job = Job {
                module: module.name(),
                source: src,
                arch: target.option(),
            };
            let cubin = target.cubin && !rdc;
            out.push(self.compile_one(
                &job,
                file.with_nul().as_ptr().cast(),
                (&name_ptrs, &text_ptrs),
                &opt_ptrs,
                cubin,
            )?);
        }
        Ok(out)
    }

    fn compile_one(
        &self,
        job: &Job<'_>,
        text: *const c_char,
        headers: (&[*const c_char], &[*const c_char]),
        opts: &[*const c_char],
        cubin: bool,
    ) -> Result<CompiledImage> {
        let a = &self.api;
        let src_name = CString::new(job.source).unwrap_or_default();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: every pointer is a NUL-terminated string that outlives the call; the header
        // arrays have `len` entries each.
        let r = unsafe {
            (a.nvrtcCreateProgram)(
                &mut prog,
                text,
                src_name.as_ptr(),
                headers.0.len() as c_int,
                headers.1.as_ptr(),
                headers.0.as_ptr(),
            )
        };
        if r != 0 {
            return Err(self.fail(job, "nvrtcCreateProgram", r, None));
        }
        let guard = ProgramGuard { api: a, prog };
        // SAFETY: a live program and `opts.len()` C strings.
        let r = unsafe { (a.nvrtcCompileProgram)(prog, opts.len() as c_int, opts.as_ptr()) };
        if r != 0 {
            return Err(self.fail(job, "nvrtcCompileProgram", r, Some(prog)));
        }
        let (size_f, get_f, step) = match (cubin, a.nvrtcGetCUBINSize, a.nvrtcGetCUBIN) {
            (true, Some(s), Some(g)) => (s, g, "nvrtcGetCUBIN"),
            _ => (a.nvrtcGetPTXSize, a.nvrtcGetPTX, "nvrtcGetPTX"),
        };
        let mut size = 0usize;
        // SAFETY: a compiled program; writes one size.
        let r = unsafe { size_f(prog, &mut size) };
        if r != 0 {
            return Err(self.fail(job, step, r, Some(prog)));
        }
        if size == 0 {
            return Err(Error::new(
                ErrorKind::Compile,
                format!("module `{}`: NVRTC produced an empty image", job.module),
            ));
        }
        let mut data = vec![0u8; size];
        // SAFETY: the buffer holds `size` bytes, what the size call reported.
        let r = unsafe { get_f(prog, data.as_mut_ptr().cast()) };
        if r != 0 {
            return Err(self.fail(job, step, r, Some(prog)));
        }
        drop(guard);
        let kind = if step == "nvrtcGetCUBIN" {
            CompiledKind::Cubin
        } else {
            // PTX sizes count its NUL; keep exactly one.
            while data.last() == Some(&0) {
                data.pop();
            }
            data.push(0);
            CompiledKind::Ptx
        };
        Ok(CompiledImage { kind, data })
    }

    fn fail(&self, job: &Job<'_>, step: &str, r: NvrtcResult, prog: Option<Program>) -> Error {
        let a = &self.api;
        let mut log = String::new();
        if let Some(p) = prog {
            let mut n = 0usize;
            // SAFETY: a live program; the buffer holds the size it reports.
            if unsafe { (a.nvrtcGetProgramLogSize)(p, &mut n) } == 0 && n > 1 {
                let mut buf = vec![0u8; n];
                if unsafe { (a.nvrtcGetProgramLog)(p, buf.as_mut_ptr().cast()) } == 0 {
                    log = String::from_utf8_lossy(&buf[..n - 1]).trim().to_string();
                }
            }
        }
        // SAFETY: returns a static string (or NULL).
        let name = unsafe { (a.nvrtcGetErrorString)(r) };
        let name = if name.is_null() {
            format!("nvrtcResult {r}")
        } else {
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        const MAX_LOG: usize = 4000;
        if log.len() > MAX_LOG {
            let mut cut = MAX_LOG;
            while !log.is_char_boundary(cut) {
                cut -= 1;
            }
            log.truncate(cut);
            log.push_str(" [...]");
        }
        Error::with_code(
            ErrorKind::Compile,
            r,
            format!(
                "module `{}`: NVRTC {}.{} ({}) failed to compile {} ({}): {step}: {name}{}{log}",
                job.module,
                self.version.0,
                self.version.1,
                self.path,
                job.source,
                job.arch,
                if log.is_empty() { "" } else { "\nlog:\n" },
            ),
        )
    }
}

struct Job<'a> {
    module: &'a str,
    source: &'a str,
    arch: String,
}

/// Destroys the program on every path out.
struct ProgramGuard<'a> {
    api: &'a Api,
    prog: Program,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: a program from nvrtcCreateProgram, destroyed once.
        unsafe { (self.api.nvrtcDestroyProgram)(&mut self.prog) };
    }
}
