//! A device's primary context and the little a kernel launch needs around it: device memory
//! ([`DeviceBuffer`]), kernel arguments ([`Args`]), the launch itself ([`Function::launch`]).
//! Every call makes the context current on the calling thread for its duration only
//! (`cuCtxPushCurrent` / `cuCtxPopCurrent`), so it mixes with other CUDA code in the process.

use std::any::Any;
use std::ffi::{c_uint, c_void};
use std::marker::PhantomData;
use std::sync::Arc;

use crate::driver::{CUcontext, CUdevice, CUdeviceptr, CUfunction, Driver, CUDA_SUCCESS};
use crate::error::{Error, ErrorKind, Result};
use crate::load::ModuleInner;

/// A GPU's primary context (shared with the CUDA runtime and other libraries in the process),
/// retained while any clone of this, or anything loaded through it, is alive.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxInner>,
}

pub(crate) struct CtxInner {
    pub(crate) driver: &'static Driver,
    pub(crate) ordinal: usize,
    dev: CUdevice,
    ctx: CUcontext,
    pub(crate) sm: u32,
    name: String,
}

// The driver API is thread-safe; the context handle is only passed to it.
unsafe impl Send for CtxInner {}
unsafe impl Sync for CtxInner {}

impl Drop for CtxInner {
    fn drop(&mut self) {
        // SAFETY: retained in `Context::with_driver`; released once.
        unsafe { (self.driver.api.cuDevicePrimaryCtxRelease)(self.dev) };
    }
}

/// The context made current for one call; the previous one is restored on drop.
pub(crate) struct Bound<'a> {
    driver: &'static Driver,
    _ctx: PhantomData<&'a Context>,
}

impl Drop for Bound<'_> {
    fn drop(&mut self) {
        let mut prev: CUcontext = std::ptr::null_mut();
        // SAFETY: pops what `bind` pushed on this thread.
        unsafe { (self.driver.api.cuCtxPopCurrent)(&mut prev) };
    }
}

impl Context {
    /// The primary context of GPU `ordinal` (0 is the first), through [`Driver::get`].
    pub fn new(ordinal: usize) -> Result<Context> {
        Context::with_driver(Driver::get()?, ordinal)
    }

    /// The primary context of GPU `ordinal` through a given driver.
    pub fn with_driver(driver: &'static Driver, ordinal: usize) -> Result<Context> {
        let (dev, sm, name) = driver.device(ordinal)?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle; `dev` came from cuDeviceGet.
        driver.check(
            unsafe { (driver.api.cuDevicePrimaryCtxRetain)(&mut ctx, dev) },
            || format!("cuDevicePrimaryCtxRetain (device {ordinal}, {name})"),
        )?;
        Ok(Context {
            inner: Arc::new(CtxInner {
                driver,
                ordinal,
                dev,
                ctx,
                sm,
                name,
            }),
        })
    }

    /// The driver it runs on.
    pub fn driver(&self) -> &'static Driver {
        self.inner.driver
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The GPU's compute capability as one number, e.g. 90 for sm_90.
    pub fn sm(&self) -> u32 {
        self.inner.sm
    }

    /// The GPU's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn device_name(&self) -> &str {
        &self.inner.name
    }

    pub(crate) fn bind(&self) -> Result<Bound<'_>> {
        let d = self.inner.driver;
        // SAFETY: a retained context; popped by `Bound::drop`.
        d.check(unsafe { (d.api.cuCtxPushCurrent)(self.inner.ctx) }, || {
            "cuCtxPushCurrent".into()
        })?;
        Ok(Bound {
            driver: d,
            _ctx: PhantomData,
        })
    }

    /// Waits for all work on the context (`cuCtxSynchronize`); reports a failed kernel.
    pub fn synchronize(&self) -> Result<()> {
        let _b = self.bind()?;
        let d = self.inner.driver;
        // SAFETY: the context is current.
        d.check(unsafe { (d.api.cuCtxSynchronize)() }, || {
            "cuCtxSynchronize (waiting for the launched kernels)".into()
        })
    }

    /// Copies `data` to a new device allocation.
    pub fn upload<T: Copy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(data.len())?;
        if !data.is_empty() {
            let _b = self.bind()?;
            let d = self.inner.driver;
            // SAFETY: `buf` holds `size_of_val(data)` bytes; `data` is that long.
            d.check(
                unsafe {
                    (d.api.cuMemcpyHtoD)(buf.ptr, data.as_ptr().cast(), std::mem::size_of_val(data))
                },
                || format!("cuMemcpyHtoD of {} bytes", std::mem::size_of_val(data)),
            )?;
        }
        Ok(buf)
    }

    /// A new device allocation of `len` elements of `T`, uninitialised.
    pub fn alloc<T: Copy>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{len} elements of {} bytes overflow",
                    std::mem::size_of::<T>()
                ),
            )
        })?;
        let mut ptr: CUdeviceptr = 0;
        if bytes > 0 {
            let _b = self.bind()?;
            let d = self.inner.driver;
            // SAFETY: writes one device pointer.
            d.check(unsafe { (d.api.cuMemAlloc)(&mut ptr, bytes) }, || {
                format!(
                    "cuMemAlloc of {bytes} bytes on device {}",
                    self.inner.ordinal
                )
            })?;
        }
        Ok(DeviceBuffer {
            ctx: self.clone(),
            ptr,
            len,
            _t: PhantomData,
        })
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.inner.ordinal)
            .field("device", &self.inner.name)
            .field("sm", &self.inner.sm)
            .finish()
    }
}

/// Device memory holding `len` values of `T`; freed on drop.
pub struct DeviceBuffer<T> {
    ctx: Context,
    ptr: CUdeviceptr,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Copy> DeviceBuffer<T> {
    /// Its length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address, as a kernel takes a `T*` (pass it with [`Args::arg`]).
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Copies it back to the host (waits for the work before it on the context).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out: Vec<T> = Vec::with_capacity(self.len);
        let bytes = self.len * std::mem::size_of::<T>();
        if bytes > 0 {
            let _b = self.ctx.bind()?;
            let d = self.ctx.inner.driver;
            // SAFETY: `out` has room for `len` values; the copy writes exactly `bytes`, after
            // which they are initialised.
            d.check(
                unsafe { (d.api.cuMemcpyDtoH)(out.as_mut_ptr().cast(), self.ptr, bytes) },
                || format!("cuMemcpyDtoH of {bytes} bytes"),
            )?;
            unsafe { out.set_len(self.len) };
        }
        Ok(out)
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr == 0 {
            return;
        }
        if let Ok(_b) = self.ctx.bind() {
            // SAFETY: allocated by cuMemAlloc in this context; freed once.
            unsafe { (self.ctx.inner.driver.api.cuMemFree)(self.ptr) };
        }
    }
}

/// Kernel arguments, in the kernel's parameter order. Each value is copied in, so the
/// pointers the launch hands the driver stay valid for as long as the `Args` lives.
#[derive(Default)]
pub struct Args {
    values: Vec<Box<dyn Any>>,
    ptrs: Vec<*mut c_void>,
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Args {
        Args::default()
    }

    /// Appends one argument: a number (`f32`, `i32`, `u64`, ...), a device pointer
    /// ([`DeviceBuffer::device_ptr`]), or a `#[repr(C)]` struct the kernel takes by value.
    /// Its size and layout must match the kernel's parameter (the launch is `unsafe`).
    pub fn arg<T: Copy + 'static>(mut self, value: T) -> Args {
        let b: Box<dyn Any> = Box::new(value);
        // The heap slot does not move when the box does.
        let p = (&*b as *const dyn Any).cast::<c_void>() as *mut c_void;
        self.values.push(b);
        self.ptrs.push(p);
        self
    }

    /// How many arguments it holds.
    pub fn len(&self) -> usize {
        self.ptrs.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ptrs.is_empty()
    }
}

/// Grid and block dimensions and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1D launch of `block` threads per block covering `n` elements (at least one block).
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        let block = block.max(1);
        let b = block as usize;
        let blocks = (n / b + usize::from(n % b != 0)).clamp(1, u32::MAX as usize) as u32;
        LaunchConfig {
            grid: (blocks, 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
        }
    }
}

/// A kernel of a loaded module; keeps the module (and the context) loaded while it lives.
#[derive(Clone)]
pub struct Function {
    pub(crate) module: Arc<ModuleInner>,
    pub(crate) f: CUfunction,
    pub(crate) name: String,
}

// CUfunction handles may be used from any thread with their context current.
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

impl Function {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Launches it on the context's default stream (asynchronously: call
    /// [`Context::synchronize`] or copy a result back to wait).
    ///
    /// # Safety
    ///
    /// `args` must match the kernel's parameters in number, order, size and layout, every
    /// device pointer in them must point to memory the kernel may access at the indices it
    /// will touch, and that memory must outlive the kernel's run.
    pub unsafe fn launch(&self, cfg: &LaunchConfig, args: &Args) -> Result<()> {
        let ctx = &self.module.ctx;
        let _b = ctx.bind()?;
        let d = ctx.inner.driver;
        let mut ptrs = args.ptrs.clone();
        let (g, b) = (cfg.grid, cfg.block);
        let r = (d.api.cuLaunchKernel)(
            self.f,
            g.0 as c_uint,
            g.1 as c_uint,
            g.2 as c_uint,
            b.0 as c_uint,
            b.1 as c_uint,
            b.2 as c_uint,
            cfg.shared_bytes as c_uint,
            std::ptr::null_mut(),
            ptrs.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        if r == CUDA_SUCCESS {
            return Ok(());
        }
        d.check(r, || {
            format!(
                "cuLaunchKernel of `{}` (module `{}`, grid {:?}, block {:?}, {} B shared, {} \
                 arguments)",
                self.name,
                self.module.def.name(),
                g,
                b,
                cfg.shared_bytes,
                args.len()
            )
        })
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("module", &self.module.def.name())
            .finish()
    }
}
