//! The CUDA Driver API, found at run time: `libcuda.so.1` opened with `dlopen` (never linked),
//! its entry points resolved into a table, `cuInit` called once. Every failure is an
//! [`Error`] naming the library, the call and the fix.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, OsStr};
use std::path::Path;

use crate::dl::{self, Library};
use crate::error::{Error, ErrorKind, Result};

/// The variable naming the driver library to load instead of `libcuda.so.1` (a path).
pub const CUDA_LIB_ENV: &str = "FATBUILD_RT_CUDA_LIB";

pub(crate) type CUresult = c_int;
pub(crate) type CUdevice = c_int;
pub(crate) type CUcontext = *mut c_void;
pub(crate) type CUmodule = *mut c_void;
pub(crate) type CUfunction = *mut c_void;
pub(crate) type CUlinkState = *mut c_void;
pub(crate) type CUstream = *mut c_void;
pub(crate) type CUdeviceptr = u64;

pub(crate) const CUDA_SUCCESS: CUresult = 0;
pub(crate) const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub(crate) const CUDA_ERROR_STUB_LIBRARY: CUresult = 34;
pub(crate) const CUDA_ERROR_INSUFFICIENT_DRIVER: CUresult = 35;
pub(crate) const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub(crate) const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub(crate) const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub(crate) const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub(crate) const CUDA_ERROR_UNSUPPORTED_PTX_VERSION: CUresult = 222;
pub(crate) const CUDA_ERROR_NOT_FOUND: CUresult = 500;

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;

macro_rules! driver_api {
    ($( $field:ident = $sym:literal ( $($arg:ty),* ); )*) => {
        /// The entry points, resolved by name (the `_v2` ones where the driver has two ABIs).
        #[allow(non_snake_case)]
        pub(crate) struct Api {
            $( pub(crate) $field: unsafe extern "C" fn($($arg),*) -> CUresult, )*
        }

        impl Api {
            /// Every entry point, or the name of the first one missing.
            fn resolve(lib: &Library) -> std::result::Result<Api, &'static str> {
                Ok(Api {
                    $( $field: {
                        let p = lib.symbol($sym).ok_or($sym)?;
                        // SAFETY: the driver exports `$sym` with exactly this C signature
                        // (cuda.h); a function pointer and a data pointer have one size here.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CUresult>(p)
                        }
                    }, )*
                })
            }
        }
    };
}

driver_api! {
    cuInit = "cuInit"(c_uint);
    cuDriverGetVersion = "cuDriverGetVersion"(*mut c_int);
    cuDeviceGetCount = "cuDeviceGetCount"(*mut c_int);
    cuDeviceGet = "cuDeviceGet"(*mut CUdevice, c_int);
    cuDeviceGetName = "cuDeviceGetName"(*mut c_char, c_int, CUdevice);
    cuDeviceGetAttribute = "cuDeviceGetAttribute"(*mut c_int, c_int, CUdevice);
    cuDevicePrimaryCtxRetain = "cuDevicePrimaryCtxRetain"(*mut CUcontext, CUdevice);
    cuDevicePrimaryCtxRelease = "cuDevicePrimaryCtxRelease_v2"(CUdevice);
    cuCtxPushCurrent = "cuCtxPushCurrent_v2"(CUcontext);
    cuCtxPopCurrent = "cuCtxPopCurrent_v2"(*mut CUcontext);
    cuCtxSynchronize = "cuCtxSynchronize"();
    cuModuleLoadData = "cuModuleLoadData"(*mut CUmodule, *const c_void);
    cuModuleLoadDataEx = "cuModuleLoadDataEx"(*mut CUmodule, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
    cuModuleUnload = "cuModuleUnload"(CUmodule);
    cuModuleGetFunction = "cuModuleGetFunction"(*mut CUfunction, CUmodule, *const c_char);
    cuLinkCreate = "cuLinkCreate_v2"(c_uint, *mut c_int, *mut *mut c_void, *mut CUlinkState);
    cuLinkAddData = "cuLinkAddData_v2"(CUlinkState, c_int, *mut c_void, usize, *const c_char, c_uint, *mut c_int, *mut *mut c_void);
    cuLinkComplete = "cuLinkComplete"(CUlinkState, *mut *mut c_void, *mut usize);
    cuLinkDestroy = "cuLinkDestroy"(CUlinkState);
    cuLaunchKernel = "cuLaunchKernel"(CUfunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CUstream, *mut *mut c_void, *mut *mut c_void);
    cuMemAlloc = "cuMemAlloc_v2"(*mut CUdeviceptr, usize);
    cuMemFree = "cuMemFree_v2"(CUdeviceptr);
    cuMemcpyHtoD = "cuMemcpyHtoD_v2"(CUdeviceptr, *const c_void, usize);
    cuMemcpyDtoH = "cuMemcpyDtoH_v2"(*mut c_void, CUdeviceptr, usize);
    cuGetErrorName = "cuGetErrorName"(CUresult, *mut *const c_char);
    cuGetErrorString = "cuGetErrorString"(CUresult, *mut *const c_char);
}

/// The loaded CUDA driver. [`Driver::get`] loads it once per process; [`Driver::open`] loads
/// a given file (tests, unusual installs).
pub struct Driver {
    pub(crate) api: Api,
    path: String,
    version: i32,
}

/// Drivers loaded so far.
static LOADED: dl::Loaded<Driver> = dl::Loaded::new();

impl Driver {
    /// The driver: `$FATBUILD_RT_CUDA_LIB` if set, else `libcuda.so.1` by the system loader's
    /// search (never the toolkit's `stubs/libcuda.so`, which only links). Loaded, resolved and
    /// initialised (`cuInit`) on the first call; later calls return the same driver.
    pub fn get() -> Result<&'static Driver> {
        let name = dl::env(CUDA_LIB_ENV)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "libcuda.so.1".into());
        Driver::load(&name)
    }

    /// The driver library at `path`, loaded and initialised (once per path).
    pub fn open(path: impl AsRef<Path>) -> Result<&'static Driver> {
        Driver::load(path.as_ref().as_os_str())
    }

    fn load(name: &OsStr) -> Result<&'static Driver> {
        LOADED.get_or_load(name, Driver::load_new)
    }

    /// The driver library `name` (`shown` in messages) loaded, resolved and initialised.
    fn load_new(name: &OsStr, shown: String) -> Result<Driver> {
        let lib = Library::open(name).map_err(|why| {
            Error::new(
                ErrorKind::NoDriver,
                format!(
                    "cannot load the CUDA driver library {shown} ({why}): the NVIDIA driver is \
                     not installed, or this machine has no NVIDIA GPU (check with nvidia-smi); \
                     {CUDA_LIB_ENV} names another driver library to load"
                ),
            )
        })?;
        let path = lib.path(name);
        let api = Api::resolve(&lib).map_err(|sym| {
            Error::new(
                ErrorKind::NoDriver,
                format!(
                    "{path} is not a usable CUDA driver: it has no symbol {sym} (every CUDA 12 \
                     or newer driver has it); install the NVIDIA driver, or point \
                     {CUDA_LIB_ENV} at its libcuda.so.1"
                ),
            )
        })?;
        let mut d = Driver {
            api,
            path,
            version: 0,
        };
        // SAFETY: the entry points were resolved from a CUDA driver library.
        let r = unsafe { (d.api.cuInit)(0) };
        if r != CUDA_SUCCESS {
            return Err(d.init_error(r));
        }
        let mut v = 0;
        // SAFETY: writes one int.
        d.check(unsafe { (d.api.cuDriverGetVersion)(&mut v) }, || {
            "cuDriverGetVersion".into()
        })?;
        d.version = v;
        lib.leak(); // the table points into it from now on
        Ok(d)
    }

    fn init_error(&self, r: CUresult) -> Error {
        let path = &self.path;
        let (kind, why) = match r {
            CUDA_ERROR_STUB_LIBRARY => (
                ErrorKind::NoDriver,
                format!(
                    "{path} is the CUDA toolkit's link stub, not a driver (it only lets programs \
                     link): install the NVIDIA driver, and make sure the stub directory is not \
                     on LD_LIBRARY_PATH"
                ),
            ),
            CUDA_ERROR_NO_DEVICE => (
                ErrorKind::NoDevice,
                "the NVIDIA driver is installed but sees no GPU (check nvidia-smi, \
                 CUDA_VISIBLE_DEVICES and the container's GPU access)"
                    .to_string(),
            ),
            CUDA_ERROR_INSUFFICIENT_DRIVER => (
                ErrorKind::DriverTooOld,
                format!("the driver {path} is too old for this system's CUDA libraries"),
            ),
            _ => (
                ErrorKind::Driver,
                format!("the driver {path} failed to start"),
            ),
        };
        Error::with_code(kind, r, format!("cuInit: {}: {why}", self.result_text(r)))
    }

    /// The file loaded (symbolic links resolved).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The driver's CUDA version, `major * 1000 + minor * 10` (e.g. 13000).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// How many GPUs the driver sees.
    pub fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: writes one int.
        self.check(unsafe { (self.api.cuDeviceGetCount)(&mut n) }, || {
            "cuDeviceGetCount".into()
        })?;
        Ok(n.max(0) as usize)
    }

    /// `CUDA_ERROR_NAME (code): description` for a `CUresult`.
    pub(crate) fn result_text(&self, r: CUresult) -> String {
        let (mut name, mut desc): (*const c_char, *const c_char) =
            (std::ptr::null(), std::ptr::null());
        // SAFETY: both calls only write a pointer to a static string (or leave it NULL).
        unsafe {
            (self.api.cuGetErrorName)(r, &mut name);
            (self.api.cuGetErrorString)(r, &mut desc);
        }
        let s = |p: *const c_char| {
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        match (
            s(name).or_else(|| known_name(r).map(str::to_string)),
            s(desc),
        ) {
            (Some(n), Some(d)) => format!("{n} ({r}): {d}"),
            (Some(n), None) => format!("{n} ({r})"),
            _ => format!("CUresult {r}"),
        }
    }

    /// `Ok` for `CUDA_SUCCESS`, else an [`ErrorKind::Driver`] error naming `what`.
    pub(crate) fn check(&self, r: CUresult, what: impl FnOnce() -> String) -> Result<()> {
        if r == CUDA_SUCCESS {
            return Ok(());
        }
        Err(Error::with_code(
            ErrorKind::Driver,
            r,
            format!("{}: {}", what(), self.result_text(r)),
        ))
    }

    /// Device `ordinal`: its handle, compute capability (e.g. 90) and name.
    pub(crate) fn device(&self, ordinal: usize) -> Result<(CUdevice, u32, String)> {
        let count = self.device_count()?;
        if ordinal >= count {
            return Err(Error::new(
                ErrorKind::NoDevice,
                format!(
                    "device {ordinal} does not exist: the driver sees {count} GPU(s) (check \
                     CUDA_VISIBLE_DEVICES)"
                ),
            ));
        }
        let mut dev = 0;
        // SAFETY: writes one int; the ordinal was checked.
        self.check(
            unsafe { (self.api.cuDeviceGet)(&mut dev, ordinal as c_int) },
            || format!("cuDeviceGet({ordinal})"),
        )?;
        let (mut major, mut minor) = (0, 0);
        for (attr, out) in [(ATTR_CC_MAJOR, &mut major), (ATTR_CC_MINOR, &mut minor)] {
            // SAFETY: writes one int.
            self.check(
                unsafe { (self.api.cuDeviceGetAttribute)(out, attr, dev) },
                || format!("cuDeviceGetAttribute({attr}) of device {ordinal}"),
            )?;
        }
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes and the driver writes a C string into it.
        let r = unsafe { (self.api.cuDeviceGetName)(name.as_mut_ptr(), 256, dev) };
        let name = if r == CUDA_SUCCESS {
            unsafe { CStr::from_ptr(name.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        } else {
            format!("device {ordinal}")
        };
        Ok((dev, (major * 10 + minor).max(0) as u32, name))
    }
}

debug_fields!(Driver { path, version } finish_non_exhaustive);

/// The names of the results this crate handles itself, for a driver that cannot name them
/// (the toolkit's stub answers every call with `CUDA_ERROR_STUB_LIBRARY`).
fn known_name(r: CUresult) -> Option<&'static str> {
    Some(match r {
        CUDA_ERROR_OUT_OF_MEMORY => "CUDA_ERROR_OUT_OF_MEMORY",
        CUDA_ERROR_STUB_LIBRARY => "CUDA_ERROR_STUB_LIBRARY",
        CUDA_ERROR_INSUFFICIENT_DRIVER => "CUDA_ERROR_INSUFFICIENT_DRIVER",
        CUDA_ERROR_NO_DEVICE => "CUDA_ERROR_NO_DEVICE",
        CUDA_ERROR_INVALID_IMAGE => "CUDA_ERROR_INVALID_IMAGE",
        CUDA_ERROR_NO_BINARY_FOR_GPU => "CUDA_ERROR_NO_BINARY_FOR_GPU",
        CUDA_ERROR_INVALID_PTX => "CUDA_ERROR_INVALID_PTX",
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        CUDA_ERROR_NOT_FOUND => "CUDA_ERROR_NOT_FOUND",
        _ => return None,
    })
}

/// `13.0` for 13000.
pub(crate) fn version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}
