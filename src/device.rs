//! Device memory: [`DeviceBuffer`], a small owned array of [`DeviceCopy`] elements in GPU
//! memory (RAII over `warpfft_malloc` / `warpfft_free`).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_int;

use crate::error::{check, shape, Error, Result};
use crate::sys;
use crate::types::DeviceCopy;

/// Converts a device ordinal to the C `int`.
pub(crate) fn device_ordinal(device: usize) -> Result<c_int> {
    c_int::try_from(device)
        .map_err(|_| Error::InvalidArg(format!("device ordinal {device} does not fit a C int")))
}

/// Checks that a method's `input` and `output` buffers live on `device`, the one of their
/// `owner` (`"plan"`, `"operator"`): [`Error::Shape`] naming the method (`what`) if not.
pub(crate) fn check_on_device(
    what: &str,
    owner: &str,
    device: usize,
    input: usize,
    output: usize,
) -> Result<()> {
    for (name, d) in [("input", input), ("output", output)] {
        if d != device {
            return Err(shape(format!(
                "{what}: {name} is on device {d}, the {owner} on device {device}"
            )));
        }
    }
    Ok(())
}

/// An owned array of `len` elements of `T` in the memory of one CUDA device.
///
/// Allocated with `warpfft_malloc` (no CUDA bindings needed) and freed by `Drop` with
/// `warpfft_free`. Copies to and from the host are synchronous: they are ordered after all work
/// enqueued earlier on the device's legacy default stream (stream `0`, what plans use unless
/// given another stream), so `to_vec` after [`Plan::execute_device`](crate::Plan::execute_device)
/// sees the result; and an upload has landed when it returns, so work enqueued afterwards on
/// any stream (a non-blocking one included) reads the new data.
///
/// ```no_run
/// # fn main() -> warpfft::Result<()> {
/// use warpfft::DeviceBuffer;
///
/// let mut buf = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?; // device 0
/// buf.copy_from(&[4.0, 5.0, 6.0])?;
/// assert_eq!(buf.to_vec()?, vec![4.0, 5.0, 6.0]);
/// let ptr: u64 = buf.as_raw(); // a CUdeviceptr, for other CUDA crates
/// # let _ = ptr;
/// # Ok(()) }
/// ```
///
/// # Threads
/// `DeviceBuffer` is `Send` and `Sync` (automatically: it is a device address, a length and
/// an ordinal, no host pointer). That is sound because the C calls behind its methods
/// (allocation, synchronous copies, free) are thread-safe and act on the device's primary
/// context from whichever thread calls them, `&self` methods only read the device memory, and
/// writing needs `&mut self`.
pub struct DeviceBuffer<T: DeviceCopy> {
    ptr: u64,
    len: usize,
    device: c_int,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// Allocates `len` elements on `device` without initialising them (contents unspecified,
    /// but any bit pattern is a valid `T`). More than `isize::MAX` bytes is [`Error::BadSize`].
    pub(crate) fn alloc(device: usize, len: usize) -> Result<Self> {
        let device = device_ordinal(device)?;
        let bytes = len
            .checked_mul(size_of::<T>())
            .filter(|&b| isize::try_from(b).is_ok())
            .ok_or_else(|| {
                Error::BadSize(format!(
                    "{len} elements of {} bytes exceed isize::MAX bytes",
                    size_of::<T>()
                ))
            })?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: `p` is a valid out-pointer.
        check(unsafe { sys::warpfft_malloc(device, bytes, &mut p) })?;
        Ok(DeviceBuffer {
            ptr: p as u64,
            len,
            device,
            _marker: PhantomData,
        })
    }

    /// The staging buffer in `slot`, made `len` elements on `device`: kept if it has that
    /// length, else freed and then allocated anew, uninitialised (the caller overwrites it).
    pub(crate) fn staging(slot: &mut Option<Self>, device: usize, len: usize) -> Result<&mut Self> {
        if slot.as_ref().map_or(true, |b| b.len() != len) {
            *slot = None; // free before allocating the new size
        }
        match slot {
            Some(b) => Ok(b),
            None => Ok(slot.insert(Self::alloc(device, len)?)),
        }
    }

    /// Copies `data` into a new buffer on device 0.
    pub fn from_slice(data: &[T]) -> Result<Self> {
        Self::from_slice_on(0, data)
    }

    /// Copies `data` into a new buffer on `device` (a CUDA device ordinal).
    pub fn from_slice_on(device: usize, data: &[T]) -> Result<Self> {
        let mut buf = Self::alloc(device, data.len())?;
        buf.copy_from(data)?;
        Ok(buf)
    }

    /// A new buffer of `len` zeros (`T::default()`) on device 0.
    pub fn zeros(len: usize) -> Result<Self> {
        Self::zeros_on(0, len)
    }

    /// A new buffer of `len` zeros on `device` (all bits zero, which is `T::default()` for
    /// every [`DeviceCopy`] type), set on the device: no host memory of that size is used.
    pub fn zeros_on(device: usize, len: usize) -> Result<Self> {
        let buf = Self::alloc(device, len)?;
        if buf.len > 0 {
            // SAFETY: the buffer holds `len * size_of::<T>()` bytes on `device`.
            check(unsafe {
                sys::warpfft_memset(
                    buf.device,
                    buf.ptr as *mut c_void,
                    0,
                    buf.len * size_of::<T>(),
                )
            })?;
        }
        Ok(buf)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The CUDA device ordinal the memory lives on.
    pub fn device(&self) -> usize {
        self.device as usize
    }

    /// The device address as an integer (`CUdeviceptr`), e.g. for other CUDA crates or the
    /// `*_raw` methods of [`Plan`](crate::Plan). It stays valid while the buffer lives.
    /// Zero for an empty buffer.
    pub fn as_raw(&self) -> u64 {
        self.ptr
    }

    /// The device address as a pointer, for C APIs that take `void *` device pointers. Do not
    /// dereference it on the host.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr as *const c_void
    }

    /// The device address as a mutable pointer; see [`DeviceBuffer::as_ptr`].
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr as *mut c_void
    }

    /// Overwrites the whole buffer with `src` (synchronous). `src.len()` must equal
    /// [`len`](DeviceBuffer::len), otherwise [`Error::Shape`].
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        if !self.copies("copy_from: source", src.len())? {
            return Ok(());
        }
        // SAFETY: the buffer holds `len` elements of T; `src` is a host slice of the same size.
        check(unsafe {
            sys::warpfft_memcpy_htod(
                self.device,
                self.ptr as *mut c_void,
                src.as_ptr().cast(),
                std::mem::size_of_val(src),
            )
        })
    }

    /// Copies the whole buffer into `dst` (synchronous). `dst.len()` must equal
    /// [`len`](DeviceBuffer::len), otherwise [`Error::Shape`].
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        if !self.copies("copy_to: destination", dst.len())? {
            return Ok(());
        }
        // SAFETY: the buffer holds `len` elements of T; `dst` is a host slice of the same size,
        // and every bit pattern is a valid T (DeviceCopy).
        check(unsafe {
            sys::warpfft_memcpy_dtoh(
                self.device,
                dst.as_mut_ptr().cast(),
                self.ptr as *const c_void,
                std::mem::size_of_val(dst),
            )
        })
    }

    /// Whether a copy between the buffer and a host slice of `host_len` elements (`what`: the
    /// method and the slice, for the message) moves any data: [`Error::Shape`] if the lengths
    /// differ, `false` for an empty buffer.
    fn copies(&self, what: &str, host_len: usize) -> Result<bool> {
        if host_len != self.len {
            return Err(shape(format!(
                "{what} has {host_len} elements, the device buffer {}",
                self.len
            )));
        }
        Ok(self.len > 0)
    }

    /// Copies the buffer into a new `Vec` (synchronous).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        self.copy_to(&mut v)?;
        Ok(v)
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from warpfft_malloc on `device` and is freed once. A failure
            // (e.g. a sticky context error) cannot be reported from Drop; the memory is then
            // reclaimed with the context.
            unsafe {
                sys::warpfft_free(self.device, self.ptr as *mut c_void);
            }
        }
    }
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("device", &self.device)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}
