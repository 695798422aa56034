"""Device memory: DeviceArray (warpfft_malloc'd, exposes __cuda_array_interface__) and helpers
that read the pointer out of any object exposing __cuda_array_interface__ (cupy, torch, numba)."""

import ctypes
import math

import numpy as np

from . import _lib
from ._errors import invalid


def _cai_stream(stream):
    """A plan stream (0 = legacy default) as a __cuda_array_interface__ v3 stream value."""
    return 1 if stream == 0 else int(stream)


class DeviceArray:
    """A C-contiguous array in device memory, allocated with warpfft_malloc and freed with
    warpfft_free (on close() or garbage collection). Exposes ``__cuda_array_interface__`` so
    cupy/torch/numba can wrap it without a copy; ``get()`` copies it to a numpy array.

    ``stream``: the CUDA stream (as an integer) on which pending work writes this array, or
    None; consumers reading ``__cuda_array_interface__`` synchronise with it.
    """

    def __init__(self, shape, dtype, device=0):
        self.shape = tuple(int(s) for s in (shape if np.iterable(shape) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.device = int(device)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        self.stream = None
        self.ptr = 0
        if self.nbytes > 0:
            p = ctypes.c_void_p()
            _lib.call("malloc", self.device, self.nbytes, ctypes.byref(p))
            self.ptr = p.value or 0

    @classmethod
    def from_host(cls, a, dtype=None, device=0):
        """Copies a host array (anything numpy.asarray accepts) to a new DeviceArray."""
        a = np.ascontiguousarray(a, dtype=dtype)
        d = cls(a.shape, a.dtype, device)
        d.copy_from_host(a)
        return d

    def copy_from_host(self, a):
        """Synchronous host-to-device copy of a numpy array of the same size and dtype."""
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.size != self.size:
            raise invalid(f"size mismatch: host array has {a.size} elements, "
                          f"device array {self.size}")
        if self.nbytes:
            _lib.call("memcpy_htod", self.device, self.ptr, a.ctypes.data, self.nbytes)

    def get(self, out=None):
        """Waits for ``stream`` (if set) and copies the array to host memory (a numpy array of
        this shape, or ``out``: C-contiguous, same dtype and size)."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif (not isinstance(out, np.ndarray) or out.dtype != self.dtype or out.size != self.size
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise invalid("out must be a writeable C-contiguous numpy array of the same dtype "
                          "and size")
        if self.stream is not None:
            _lib.call("stream_sync", self.device, self.stream)
        if self.nbytes:
            _lib.call("memcpy_dtoh", self.device, out.ctypes.data, self.ptr, self.nbytes)
        return out

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
            "stream": None if self.stream is None else _cai_stream(self.stream),
        }

    def close(self):
        """Frees the device memory now (idempotent)."""
        ptr, self.ptr = self.ptr, 0
        if ptr and _lib is not None and _lib.lib is not None:
            _lib.lib.warpfft_free(self.device, ptr)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing useful left to do
            pass

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def is_device(obj):
    """True for objects exposing __cuda_array_interface__ (cupy, torch CUDA tensors, ...)."""
    try:
        return obj is not None and hasattr(obj, "__cuda_array_interface__")
    except Exception:
        return False


def device_pointer(obj, dtype, size, what, device, stream, writable=False):
    """The device pointer of a __cuda_array_interface__ object, after checking its dtype,
    size and C-contiguity, and waiting for the producer's stream if it differs from ours."""
    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    got = np.dtype(cai["typestr"])
    if got != np.dtype(dtype):
        raise invalid(f"{what}: dtype {got} but the plan needs {np.dtype(dtype)}")
    n = math.prod(shape)
    if n != size:
        raise invalid(f"{what}: {n} elements (shape {shape}) but {size} are needed")
    strides = cai.get("strides")
    if strides is not None:
        expect = got.itemsize
        for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
            if extent > 1 and stride != expect:
                raise invalid(f"{what}: device array must be C-contiguous "
                              f"(strides {tuple(strides)})")
            expect *= extent
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise invalid(f"{what}: device array is read-only")
    producer = cai.get("stream")
    if producer is not None and producer != _cai_stream(stream):
        _lib.call("stream_sync", device, int(producer))
    return ptr or 0


def alloc_like(template, shape, dtype, device):
    """A new device array of the same kind as `template` (DeviceArray, cupy, torch)."""
    mod = type(template).__module__.split(".")[0]
    if isinstance(template, DeviceArray):
        return DeviceArray(shape, dtype, device)
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(template.device.id):
            return cupy.empty(shape, dtype)
    if mod == "torch":
        import torch

        tdt = {np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128): torch.complex128}
        return torch.empty(shape, dtype=tdt[np.dtype(dtype)], device=template.device)
    raise invalid(
        f"cannot allocate an output like a {type(template).__name__}: pass out= (a device array)"
    )
