"""The reference's (cufinufft's) array helpers -- its ``cufinufft._compat`` module -- written
over warpfft's array handling (_arrays.py), so they agree with what Plan does. Packages built on
the reference import them (mri-nufft: ``get_array_ptr``), and so do its tests
(``array_empty_like``, ``array_can_contiguous``).

* ``get_array_ptr(a)``: the device pointer (int) of a device array: from its
  ``__cuda_array_interface__``, or a CUDA torch tensor's ``data_ptr()`` (tensors that need grad
  included). TypeError ("Invalid GPU array implementation ...") for anything else, host arrays
  included.
* ``get_array_module(a)``: "numba", "torch", "pycuda" or "generic" (the reference's names:
  cupy, numpy and the rest are "generic").
* ``get_array_size(a)``, ``get_array_dtype(a)``: number of elements; numpy dtype (torch's
  mapped).
* ``is_array_contiguous(a)``: C-contiguous?
* ``array_can_contiguous(a)`` / ``array_contiguous(a)``: whether a C-contiguous copy of the
  same library can be made / that copy. Plan copies a non-C-contiguous input exactly when
  ``array_can_contiguous`` says True (with a warning), and refuses it otherwise.
* ``array_empty_like(a, shape, dtype=...)``: an uninitialised array of a's library and
  device: cupy, torch (numpy dtypes mapped), numba, numpy, warpfft.DeviceArray; other types
  are called as ``type(a)(shape, dtype=...)``, as the reference does.
"""

import math

import numpy as np

from ._arrays import _attr, _c_contiguous, _module, _torch_dtype
from ._arrays import can_copy_contiguous as array_can_contiguous  # noqa: F401
from ._arrays import copy_contiguous as array_contiguous  # noqa: F401
from ._device import DeviceArray

__all__ = ["get_array_ptr", "get_array_module", "get_array_size", "get_array_dtype",
           "is_array_contiguous", "array_can_contiguous", "array_contiguous",
           "array_empty_like"]


def _invalid_gpu_array(data, why):
    return TypeError(f"Invalid GPU array implementation: {why} (got "
                     f"{type(data).__module__}.{type(data).__name__}); a device array with "
                     "__cuda_array_interface__ or a CUDA torch tensor is needed")


def get_array_ptr(data):
    """The device pointer of `data` as an int (see the module doc)."""
    if _module(data) == "torch" and callable(_attr(data, "data_ptr")):
        if not data.is_cuda:
            raise _invalid_gpu_array(data, f"a torch tensor on {data.device}")
        return data.data_ptr()
    try:
        cai = data.__cuda_array_interface__
    except AttributeError:
        raise _invalid_gpu_array(data, "no __cuda_array_interface__") from None
    except RuntimeError:  # e.g. an array that refuses to export itself; data_ptr if it has one
        if callable(_attr(data, "data_ptr")):
            return data.data_ptr()
        raise
    if not isinstance(cai, dict) or "data" not in cai:
        raise _invalid_gpu_array(data, "__cuda_array_interface__ is not a dict with 'data'")
    return int(cai["data"][0] or 0)


def get_array_module(obj):
    """"numba", "torch", "pycuda" or "generic" (the reference's classification)."""
    lib = _module(obj)
    return lib if lib in ("numba", "torch", "pycuda") else "generic"


def _shape(obj):
    shape = _attr(obj, "shape")
    if shape is None:
        cai = _attr(obj, "__cuda_array_interface__")
        if isinstance(cai, dict):
            shape = cai.get("shape")
    if shape is None:
        raise TypeError(f"{type(obj).__name__} has no shape")
    return tuple(int(s) for s in shape)


def get_array_size(obj):
    """The number of elements of `obj`."""
    if _module(obj) == "torch" and callable(_attr(obj, "numel")):
        return int(obj.numel())
    size = _attr(obj, "size")
    if isinstance(size, (int, np.integer)):
        return int(size)
    return math.prod(_shape(obj))


def get_array_dtype(obj):
    """The numpy dtype of `obj` (a torch dtype mapped to numpy's)."""
    if _module(obj) == "torch":
        return _torch_dtype("array", obj.dtype)
    dtype = _attr(obj, "dtype")
    if dtype is None:
        cai = _attr(obj, "__cuda_array_interface__")
        if isinstance(cai, dict) and "typestr" in cai:
            return np.dtype(cai["typestr"])
        raise TypeError(f"{type(obj).__name__} has no dtype")
    return np.dtype(dtype)


def is_array_contiguous(obj):
    """Whether `obj` is C-contiguous."""
    lib = _module(obj)
    if lib == "torch":
        return bool(obj.is_contiguous())
    if lib == "numba" and callable(_attr(obj, "is_c_contiguous")):
        return bool(obj.is_c_contiguous())
    flags = _attr(obj, "flags")
    if flags is not None and _attr(flags, "c_contiguous") is not None:
        return bool(flags.c_contiguous)
    cai = _attr(obj, "__cuda_array_interface__")
    if isinstance(cai, dict):
        return _c_contiguous("array", _shape(obj), cai.get("strides"),
                             np.dtype(cai["typestr"]).itemsize)
    raise TypeError(f"{type(obj).__name__}: cannot tell whether it is C-contiguous")


def _torch_dtype_of(dtype):
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    return torch.from_numpy(np.empty(0, np.dtype(dtype))).dtype


def array_empty_like(obj, *args, **kwargs):
    """A new, uninitialised array of `obj`'s library (and device), made from the arguments
    as that library's empty() takes them: ``array_empty_like(a, shape, dtype=...)``."""
    lib = _module(obj)
    if lib == "numba":
        from numba import cuda

        return cuda.device_array(*args, **kwargs)
    if lib == "torch":
        import torch

        if "shape" in kwargs:
            kwargs["size"] = kwargs.pop("shape")
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = _torch_dtype_of(kwargs["dtype"])
        kwargs.setdefault("device", obj.device)
        return torch.empty(*args, **kwargs)
    if lib == "cupy":
        import cupy

        with cupy.cuda.Device(obj.device.id):
            return cupy.empty(*args, **kwargs)
    if lib == "numpy":
        return np.empty(*args, **kwargs)
    if isinstance(obj, DeviceArray):
        kwargs.setdefault("device", obj.device)
        return DeviceArray(*args, **kwargs)
    return type(obj)(*args, **kwargs)
