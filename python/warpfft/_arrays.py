"""Array protocols: what an argument is (host or device), its pointer, shape and dtype, the
checks on them, and an output array of the same kind.

Accepted, in this order:
  * numpy arrays (and lists/scalars, converted with numpy) -> host;
  * torch tensors (CUDA: zero-copy through ``data_ptr``, also with ``requires_grad``; CPU: as
    numpy, zero-copy);
  * anything with ``__cuda_array_interface__`` (cupy, numba, pycuda's GPUArray,
    :class:`~warpfft.DeviceArray`, ...): zero-copy; version 0-3; a ``mask`` or negative extents
    are refused; its v3 ``stream`` is the producer's stream;
  * anything with ``__dlpack__`` / ``__dlpack_device__`` (jax, and any array-API library):
    CUDA memory zero-copy (``__dlpack__(stream=<the plan's stream>)``, so the producer orders its
    work before ours, as the DLPack protocol defines), CPU memory through numpy.

Not C-contiguous (as the reference): an input is copied to a C-contiguous array of its own
library (numpy, torch, cupy, numba, or anything with ``copy(order="C")``) with a UserWarning
saying "... does not satisfy the following requirement: C. Copying ..."; an output, or an input
that cannot be copied so (pycuda, DLPack-only producers), raises InvalidArgumentError (a
TypeError) saying "... does not satisfy the following requirement: C".

Errors raised by an array's own protocol (anything but AttributeError for a missing attribute)
propagate unchanged.
"""

import ctypes
import math
import os
import sys
import warnings

import numpy as np

from ._device import DeviceArray
from ._errors import invalid

_TORCH_DTYPES = {"complex64", "complex128", "float32", "float64", "float16", "int32", "int64",
                 "int8", "int16", "uint8", "bool"}


class Arr:
    """One argument, classified. ``kind``: "host" (``host`` is a C-contiguous numpy array) or
    "device" (``ptr``, ``device`` ordinal, ``stream``: the producer's stream or None)."""

    __slots__ = ("name", "kind", "lib", "obj", "host", "ptr", "shape", "dtype", "readonly",
                 "device", "stream", "keep")

    def __init__(self, name, kind, lib, obj, shape, dtype, ptr=0, host=None, readonly=False,
                 device=None, stream=None, keep=None):
        self.name, self.kind, self.lib, self.obj = name, kind, lib, obj
        if type(shape) is not tuple:
            shape = tuple(shape)
        if type(dtype) is not _DTYPE:
            dtype = np.dtype(dtype)
        self.shape, self.dtype, self.ptr, self.host = shape, dtype, ptr, host
        self.readonly, self.device, self.stream, self.keep = readonly, device, stream, keep

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def is_device(self):
        return self.kind == "device"


_DTYPE = type(np.dtype(np.float32))  # numpy's dtype class of float32 (dtypes are per-class)
_module_of_type = {}
_MODULE_ALIASES = {"jaxlib": "jax", "numba_cuda": "numba"}  # numba-cuda: numba's CUDA target


def _module(obj):
    """The top-level module an array's type comes from ("jaxlib" counts as "jax"); memoised per
    type (called several times per argument)."""
    t = type(obj)
    mod = _module_of_type.get(t)
    if mod is None:
        mod = t.__module__.split(".")[0]
        mod = _module_of_type[t] = _MODULE_ALIASES.get(mod, mod)
    return mod


def _attr(obj, name):
    """obj.name, or None if the attribute does not exist. Other exceptions propagate."""
    try:
        return getattr(obj, name)
    except AttributeError:
        return None


def not_c_contiguous(name, detail):
    """The error for an array that must be C-contiguous and is not (the reference's wording,
    then ours)."""
    return invalid(f"Argument `{name}` does not satisfy the following requirement: C "
                   f"({detail})")


def warn_copied(name, detail):
    """The warning for a non-C-contiguous input copied to a C-contiguous one (the reference's
    wording, then ours)."""
    warnings.warn(f"Argument `{name}` does not satisfy the following requirement: C. Copying "
                  f"it to a C-contiguous array, which may reduce performance ({detail})",
                  UserWarning, stacklevel=_caller_level())


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_level():
    """The warnings stacklevel of the first frame outside this package (the user's call)."""
    level, f = 1, sys._getframe(1)
    while f is not None:
        d = os.path.dirname(os.path.abspath(f.f_code.co_filename))
        if d != _PACKAGE_DIR and not d.startswith(_PACKAGE_DIR + os.sep):
            break
        level += 1
        f = f.f_back
    return level


def _host(name, a, lib="numpy", obj=None, output=False):
    if not a.flags.c_contiguous:
        detail = f"shape {a.shape}, strides {a.strides}"
        if output:
            raise not_c_contiguous(name, "an output array must be C-contiguous; " + detail)
        warn_copied(name, detail)
        a = np.ascontiguousarray(a)
    if output and not a.flags.writeable:
        raise invalid(f"{name}: output array is read-only")
    return Arr(name, "host", lib, a if obj is None else obj, a.shape, a.dtype, host=a,
               readonly=not a.flags.writeable)


def _check_shape(name, shape):
    try:
        shape = tuple(map(int, shape))
    except (TypeError, ValueError):
        raise invalid(f"{name}: shape {shape!r} is not a tuple of integers") from None
    if shape and min(shape) < 0:
        raise invalid(f"{name}: negative extent in shape {shape}")
    return shape


def _c_contiguous(name, shape, strides, itemsize):
    """Whether `strides` (bytes; None: C order) describe a C-contiguous `shape`."""
    if strides is None:
        return True
    strides = tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise invalid(f"{name}: {len(strides)} strides for shape {shape}")
    expect = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expect:
            return False
        expect *= extent
    return True


def can_copy_contiguous(obj):
    """Whether `copy_contiguous` can make a C-contiguous copy of `obj` in its own library
    (the reference's ``array_can_contiguous``: all but pycuda's GPUArray there)."""
    lib = _module(obj)
    if lib in ("numpy", "torch", "cupy", "numba"):
        return True
    if lib == "pycuda":
        return False
    return callable(_attr(obj, "copy"))


def copy_contiguous(obj):
    """A C-contiguous copy of `obj` of the same library (device arrays stay on their device;
    cupy's and torch's copies are queued on the library's current stream, which the copy's
    __cuda_array_interface__ names; numba's goes through the host, synchronously). TypeError if
    `can_copy_contiguous(obj)` is False."""
    lib = _module(obj)
    if lib == "numpy":
        return np.ascontiguousarray(obj)
    if lib == "torch":
        return obj.contiguous()
    if lib == "cupy":
        import cupy

        with cupy.cuda.Device(obj.device.id):
            return cupy.ascontiguousarray(obj)
    if lib == "numba":
        from numba import cuda

        # Through the host, with no kernel: numba's element-wise device copy compiles one, and
        # its compiler failed on the GPU machine (numba-cuda against NumPy 2.4: np.row_stack is
        # gone), so every non-contiguous numba input failed there. copy_to_host takes the strided
        # allocation as it is; the copy runs on the default stream, after the array's producers.
        return cuda.to_device(np.ascontiguousarray(obj.copy_to_host()))
    if not can_copy_contiguous(obj):
        raise TypeError(f"{type(obj).__module__}.{type(obj).__name__}: no C-contiguous copy "
                        "can be made of this array")
    return obj.copy(order="C")


def _from_cai(name, obj, cai, output):
    if not isinstance(cai, dict):
        raise invalid(f"{name}: __cuda_array_interface__ is not a dict")
    if cai.get("mask") is not None:
        raise invalid(f"{name}: __cuda_array_interface__ with a mask is not supported")
    shape = _check_shape(name, cai["shape"])
    dtype = np.dtype(cai["typestr"])
    if not _c_contiguous(name, shape, cai.get("strides"), dtype.itemsize):
        return _copied_device(name, obj, shape, cai.get("strides"), output)
    ptr, readonly = cai["data"]
    if output and readonly:
        raise invalid(f"{name}: output device array is read-only")
    stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
    if stream is not None:
        stream = int(stream)
        if stream == 0:
            raise invalid(f"{name}: __cuda_array_interface__ stream 0 is disallowed by the "
                          "protocol (1: legacy default stream, 2: per-thread default stream)")
    lib = _module(obj)
    device = None  # unknown: asked of the CUDA driver (Plan._check_device)
    if lib == "cupy":
        device = obj.device.id  # cupy knows (and saves a driver query per call)
    elif isinstance(obj, DeviceArray):
        device = obj.device
    return Arr(name, "device", lib if lib in ("cupy", "numba") else
               "warpfft" if isinstance(obj, DeviceArray) else "cai",
               obj, shape, dtype, ptr=int(ptr or 0), readonly=bool(readonly), stream=stream,
               device=device)


def _copied_device(name, obj, shape, strides, output):
    """A non-C-contiguous device array (__cuda_array_interface__): an output is refused; an
    input is copied to a C-contiguous array of its library, with a warning (the reference's
    behaviour), or refused where no such copy can be made (pycuda, as the reference)."""
    detail = f"device array of shape {shape}, strides {tuple(strides)}"
    if output:
        raise not_c_contiguous(name, "an output array must be C-contiguous; " + detail)
    if not can_copy_contiguous(obj):
        raise not_c_contiguous(name, f"a C-contiguous device array is needed and no copy can "
                               f"be made of a {type(obj).__name__}; {detail}")
    warn_copied(name, detail)
    copy = copy_contiguous(obj)
    cai = _attr(copy, "__cuda_array_interface__")
    if not isinstance(cai, dict) or not _c_contiguous(name, _check_shape(name, cai["shape"]),
                                                      cai.get("strides"),
                                                      np.dtype(cai["typestr"]).itemsize):
        raise not_c_contiguous(name, f"{type(obj).__name__}.copy(order='C') did not give a "
                               f"C-contiguous device array; {detail}")
    return _from_cai(name, copy, cai, output)


_torch_np_dtype = {}  # torch dtype -> numpy dtype (filled as met)


def _torch_dtype(name, tdt):
    dtype = _torch_np_dtype.get(tdt)
    if dtype is None:
        s = str(tdt).replace("torch.", "")
        if s not in _TORCH_DTYPES:
            raise invalid(f"{name}: torch dtype {tdt} is not supported")
        dtype = _torch_np_dtype[tdt] = np.dtype(s)
    return dtype


_torch_stream = None


def torch_stream(device):
    """torch's current CUDA stream of device ordinal `device` as an integer (0: the legacy
    default stream). The raw getter skips building a torch.cuda.Stream object per call."""
    global _torch_stream
    if _torch_stream is None:
        import torch

        _torch_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _torch_stream(device)


def _from_torch(name, t, output):
    dtype = _torch_dtype(name, t.dtype)
    if t.is_conj() or t.is_neg():
        # torch's lazy conjugate / negative views (x.conj(), the imaginary part of one) hold the
        # unconjugated numbers in memory, which is what the library would read or write
        if output:
            raise invalid(f"{name}: output tensor is a lazily conjugated or negated view "
                          "(is_conj() / is_neg()): pass a plain tensor")
        t = t.resolve_conj().resolve_neg()  # the values the view stands for (a copy)
    if not t.is_cuda:
        if t.device.type != "cpu":
            raise invalid(f"{name}: torch tensor on {t.device}: only CUDA and CPU tensors")
        if output and t.requires_grad:
            raise invalid(f"{name}: output tensor requires grad")
        a = t.detach().numpy()
        arr = _host(name, a, "torch", t, output)
        if arr.host is not a:  # copied to make it contiguous: keep the copy, not the tensor
            arr.obj = arr.host
        return arr
    if not t.is_contiguous():
        detail = f"tensor of shape {tuple(t.shape)}, strides {t.stride()}"
        if output:
            raise not_c_contiguous(name, "an output tensor must be contiguous; " + detail)
        warn_copied(name, detail)
        t = t.contiguous()
    device = t.get_device()
    return Arr(name, "device", "torch", t, tuple(t.shape), dtype, ptr=t.data_ptr(),
               device=device, stream=int(torch_stream(device)) or 1)


# DLPack (dlpack.h v0.8 / 1.0 unversioned capsule "dltensor").
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_KIND = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_capsule_get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _from_dlpack(name, obj, output, stream):
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type in (_DL_CPU, _DL_CUDA_HOST):
        if output:
            raise invalid(f"{name}: a DLPack array cannot be written: give a numpy or device "
                          "array as out")
        return _host(name, np.from_dlpack(obj), _module(obj), obj)
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise invalid(f"{name}: DLPack device type {dev_type} is not CUDA or CPU memory")
    if output:
        raise invalid(f"{name}: a DLPack array cannot be written in place (jax arrays are "
                      "immutable): leave out=None to get a new array")
    # The consumer passes the stream it will use; the producer orders its work before it. A
    # producer that refuses the stream argument is waited for instead (block_until_ready for
    # jax-like arrays), then exported without one.
    try:
        capsule = obj.__dlpack__(stream=1 if stream == 0 else int(stream))
    except (TypeError, ValueError, NotImplementedError, BufferError):
        if callable(getattr(obj, "block_until_ready", None)):
            obj.block_until_ready()
        capsule = obj.__dlpack__()
    t = _DLTensor.from_address(_capsule_get(capsule, b"dltensor"))
    if t.dtype.lanes != 1 or t.dtype.code not in _DL_KIND:
        raise invalid(f"{name}: DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                      f"{t.dtype.lanes} lanes) is not supported")
    dtype = np.dtype(f"{_DL_KIND[t.dtype.code]}{t.dtype.bits // 8}")
    shape = _check_shape(name, [t.shape[i] for i in range(t.ndim)])
    strides = None if not t.strides else [t.strides[i] * dtype.itemsize for i in range(t.ndim)]
    if not _c_contiguous(name, shape, strides, dtype.itemsize):
        raise not_c_contiguous(name, f"a DLPack device array must be C-contiguous (shape "
                               f"{shape}, strides {tuple(strides)})")
    # The capsule stays unconsumed and referenced (keep): its destructor releases the tensor.
    return Arr(name, "device", _module(obj), obj, shape, dtype,
               ptr=(t.data or 0) + t.byte_offset, device=t.device.device_id, stream=None,
               keep=capsule)


def describe(obj, name):
    """(shape, numpy dtype) of an array argument read from its attributes, without converting
    or copying it (a non-C-contiguous device array is copied once, by the `wrap` that uses
    it); lists and scalars through numpy."""
    if isinstance(obj, np.ndarray):
        return obj.shape, obj.dtype
    if _module(obj) == "torch" and hasattr(obj, "data_ptr"):
        return tuple(obj.shape), _torch_dtype(name, obj.dtype)
    shape, dtype = _attr(obj, "shape"), _attr(obj, "dtype")
    if shape is not None and dtype is not None:
        try:
            return _check_shape(name, shape), np.dtype(dtype)
        except TypeError:
            pass
    cai = None if _module(obj) == "jax" else _attr(obj, "__cuda_array_interface__")
    if isinstance(cai, dict):
        return _check_shape(name, cai["shape"]), np.dtype(cai["typestr"])
    a = wrap(obj, name)
    return a.shape, a.dtype


def wrap(obj, name, dtype=None, output=False, stream=0):
    """Classifies `obj` (see the module doc) and checks its dtype against `dtype` (if given).
    `stream`: the stream the work will run on (passed to ``__dlpack__``)."""
    if obj is None:
        return None
    if isinstance(obj, np.ndarray):
        arr = _host(name, obj, output=output)
    elif _module(obj) == "torch" and hasattr(obj, "data_ptr"):
        arr = _from_torch(name, obj, output)
    else:
        # jax arrays also expose __cuda_array_interface__ (v2, no stream): DLPack carries the
        # stream and gives a jax result back.
        cai = None if _module(obj) == "jax" else _attr(obj, "__cuda_array_interface__")
        if cai is not None:
            arr = _from_cai(name, obj, cai, output)
        elif _attr(obj, "__dlpack_device__") is not None:
            arr = _from_dlpack(name, obj, output, stream)
        elif output:
            raise invalid(f"{name}: {type(obj).__name__} is not a writeable array (numpy or "
                          "device)")
        else:
            if isinstance(obj, (str, bytes, dict)):
                raise invalid(f"{name}: {type(obj).__name__} is not an array")
            host = np.asarray(obj, dtype=dtype if _attr(obj, "dtype") is None else None)
            if host.dtype == object:
                raise invalid(f"{name}: {type(obj).__name__} is not an array")
            arr = _host(name, host)
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise invalid(f"Argument `{name}` does not have the correct dtype: {arr.dtype} was "
                      f"given, but {np.dtype(dtype)} was expected (no silent casts)")
    return arr


def empty_like(arr, shape, dtype, device):
    """A new array of `arr`'s kind: numpy for host arrays (a torch CPU tensor for one), else a
    device array of the same library (cupy, torch, numba; a DeviceArray otherwise — a jax or
    other DLPack producer gets its result converted back after the work, see `finish`)."""
    shape = tuple(int(s) for s in shape)
    if arr.kind == "host":
        out = np.empty(shape, dtype)
        if arr.lib == "torch":
            import torch

            return torch.from_numpy(out)
        return out
    if arr.lib == "cupy":
        import cupy

        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype)
    if arr.lib == "torch":
        import torch

        tdt = {np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128): torch.complex128,
               np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}
        return torch.empty(shape, dtype=tdt[np.dtype(dtype)], device=arr.obj.device)
    if arr.lib == "numba":
        from numba import cuda

        with cuda.gpus[device]:
            return cuda.device_array(shape, dtype)
    return DeviceArray(shape, dtype, device)


def wrap_made(template, out, stream=0, dtype=None):
    """The Arr of an output just made by ``empty_like(template, ...)`` in `dtype` (default the
    template's): a torch tensor made on the template's device is on its device and current
    stream already (no second query of torch); other kinds go through `wrap`."""
    dtype = template.dtype if dtype is None else np.dtype(dtype)
    if template.lib == "torch" and template.kind == "device":
        return Arr("out", "device", "torch", out, tuple(out.shape), dtype,
                   ptr=out.data_ptr(), device=template.device, stream=template.stream)
    return wrap(out, "out", dtype, output=True, stream=stream)


def finish(template, out):
    """The result handed back for an output made by `empty_like`: jax (and other DLPack
    producers with a from_dlpack) get their own array type back, zero-copy."""
    if template.lib == "jax":
        import jax

        if isinstance(out, DeviceArray):
            return jax.dlpack.from_dlpack(out)
        return jax.numpy.asarray(out)
    return out
