"""Library, build and runtime information; plan parameters and the direct-sum reference."""

import ctypes
import json
import math

import numpy as np

from . import _lib
from ._device import DeviceArray, device_pointer, is_device
from ._errors import invalid
from ._plan import info_dict, make_opts, normalize_modes, precision_of


def version():
    """The C library's version string (warpfft_version), e.g. "0.1.0"."""
    return _lib._str(_lib.lib.warpfft_version())


def library_path():
    """The path (or soname) libwarpfft was loaded from."""
    return _lib.path


def build_manifest():
    """The embedded kernels' manifest (warpfft_build_manifest) as a dict: mode, archs, ..."""
    return json.loads(_lib._str(_lib.lib.warpfft_build_manifest()))


def embedded_modules():
    """The embedded kernel blobs: [{"name", "blobs": [{"kind": "ptx"|"fatbin", "label",
    "size"}]}], for inspection."""
    kinds = {1: "ptx", 2: "fatbin"}
    modules = []
    for m in range(_lib.lib.warpfft_embedded_module_count()):
        name, n = ctypes.c_char_p(), ctypes.c_size_t()
        _lib.call("embedded_module", m, ctypes.byref(name), ctypes.byref(n))
        blobs = []
        for b in range(n.value):
            kind, label, size = ctypes.c_int(), ctypes.c_char_p(), ctypes.c_size_t()
            _lib.call("embedded_blob", m, b, ctypes.byref(kind), ctypes.byref(label), None,
                      ctypes.byref(size))
            blobs.append({"kind": kinds.get(kind.value, kind.value),
                          "label": _lib._str(label.value), "size": size.value})
        modules.append({"name": _lib._str(name.value), "blobs": blobs})
    return modules


def init(device=0):
    """Initialises the driver and `device` (optional: plan creation does it)."""
    _lib.call("init", int(device))


def runtime_info(device=0):
    """The runtime report (warpfft_runtime_info) as a dict. If the driver or the device cannot
    be initialised, raises the matching WarpfftError (e.g. NoGpuError) with the report attached
    as ``.info`` (dict) and ``.json`` (text)."""
    needed = ctypes.c_size_t(0)
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        status = _lib.lib.warpfft_runtime_info(int(device), buf, size, ctypes.byref(needed))
        err = _lib.make_error(status) if status != 0 else None
        if needed.value <= size:
            break
        size = needed.value
    text = _lib._str(buf.value)
    try:
        info = json.loads(text)
    except ValueError:
        info = None
    if err is not None:
        err.info, err.json = info, text
        raise err
    return info


def cufft_probe():
    """Finds and loads cuFFT (no GPU needed): returns (path, version). Raises NoCufftError
    listing every place tried."""
    buf = ctypes.create_string_buffer(4096)
    ver = ctypes.c_int(0)
    _lib.call("cufft_probe", buf, len(buf), ctypes.byref(ver))
    return _lib._str(buf.value), ver.value


def plan_params(type, n_modes, dtype=np.complex64, eps=1e-6, n_trans=1, modeord=0,
                method="auto", upsampfac=2.0, bin_size=None, max_subprob=None):
    """What Plan(...) would choose (kernel width, beta, fine grid, bins), without a GPU; the
    same argument checks as plan creation (InvalidArgumentError on a bad dim, size, eps...)."""
    n = normalize_modes(n_modes)
    prec, _, _ = precision_of(dtype)
    opts = make_opts(modeord, method, upsampfac, 0, 0, bin_size, max_subprob)
    info = _lib.PlanInfo()
    _lib.call("plan_params", int(type), len(n), _lib.n_modes_array(n), int(n_trans), float(eps),
              prec, ctypes.byref(opts), ctypes.byref(info))
    return info_dict(info)


def _device_arg(obj, dtype, name, device, keep):
    """Device pointer and element count of a host (uploaded, kept in `keep`) or device array."""
    if obj is None:
        return None, 0
    if is_device(obj):
        n = math.prod(obj.__cuda_array_interface__["shape"])
        return device_pointer(obj, dtype, n, name, device, 0) or None, n
    d = DeviceArray.from_host(np.asarray(obj, dtype=dtype).ravel(), device=device)
    keep.append(d)
    return d.ptr or None, d.size


def direct_sample(type, n_modes, x, y=None, z=None, c=None, fk=None, sample=None, isign=1,
                  modeord=0, device=0):
    """Exact non-uniform DFT (double precision, on the GPU) at a sample of outputs of
    transform 0, for checking accuracy (warpfft_direct_sample).

    type 1: needs c; returns f at the flat indices `sample` of the mode array (flat index into
    the C-ordered (N3, N2, N1) array, modes per `modeord`). type 2: needs fk; returns c at the
    point indices `sample`. Arrays: numpy (uploaded) or device arrays; precision from the
    complex data's dtype. Returns a complex128 numpy array of len(sample).
    """
    n = normalize_modes(n_modes)
    data = c if int(type) == 1 else fk
    if data is None:
        raise invalid("type 1 needs c, type 2 needs fk")
    dt = np.dtype(data.__cuda_array_interface__["typestr"]) if is_device(data) else \
        np.asarray(data).dtype
    if dt not in (np.complex64, np.complex128):
        dt = np.dtype(np.complex128)
    prec, cdt, rdt = precision_of(dt)
    keep = []
    px, M = _device_arg(x, rdt, "x", device, keep)
    py, _ = _device_arg(y, rdt, "y", device, keep)
    pz, _ = _device_arg(z, rdt, "z", device, keep)
    pc, _ = _device_arg(c, cdt, "c", device, keep)
    pf, _ = _device_arg(fk, cdt, "fk", device, keep)
    s = np.ascontiguousarray(np.ravel(sample if sample is not None else []), dtype=np.int64)
    out = np.zeros(2 * s.size, np.float64)
    try:
        _lib.call("direct_sample", int(type), len(n), _lib.n_modes_array(n), int(isign),
                  int(modeord), prec, int(device), M, px, py, pz, pc, pf, s.size,
                  s.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                  out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    finally:
        for d in keep:
            d.close()
    return out.view(np.complex128)
