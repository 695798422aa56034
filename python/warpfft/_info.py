"""Library, build and runtime information; plan parameters (plan_params, plan_params3: what a
plan would choose, no GPU) and the direct-sum reference (direct_sample)."""

import ctypes
import json
import math

import numpy as np

from . import _lib
from ._args import bounds, effective_eps, normalize_isign, normalize_modes, normalize_options
from ._arrays import wrap
from ._device import DeviceArray, driver
from ._errors import ERR_BAD_DIM, ERR_BAD_NPOINTS, ERR_BAD_SIZE, invalid
from ._plan import info_dict, plan_params3_c, plan_params_c, precision_of


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
    _lib.call("init", _lib.as_int("device", device, 0, _lib.INT32_MAX))


def release_cached():
    """Empties the C library's plan cache (warpfft_release_cached): a destroyed plan's cuFFT
    plan, work area, fine grid and deconvolution factors, kept for the next plan of the same
    shape (bounded by 32 items and WARPFFT_PLAN_CACHE_MB MiB of device memory, default 1024; 0
    turns it off). warpfft's own allocations empty it when the device is full; call this to
    hand the memory to other allocators (CuPy, PyTorch). clear_plan_cache() calls it too."""
    _lib.call("release_cached")


def runtime_info(device=0):
    """The runtime report (warpfft_runtime_info) as a dict. If the driver or the device cannot
    be initialised, raises the matching WarpfftError (e.g. NoGpuError) with the report attached
    as ``.info`` (dict) and ``.json`` (text)."""
    dev = _lib.as_int("device", device, 0, _lib.INT32_MAX)
    needed = ctypes.c_size_t(0)
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        status = _lib.lib.warpfft_runtime_info(dev, buf, size, ctypes.byref(needed))
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


def plan_params(nufft_type, n_modes, n_trans=1, eps=1e-6, dtype="complex64", **kwargs):
    """What ``Plan(nufft_type, n_modes, n_trans, eps, dtype=dtype, **kwargs)`` would choose
    (kernel width, beta, fine grid, bins, method), without a GPU; the same argument checks as
    plan creation. Per-dimension tuples are in the Python order (axis 0 first)."""
    nufft_type = _lib.as_int("nufft_type", nufft_type, -_lib.INT32_MAX, _lib.INT32_MAX)
    if nufft_type == 3:
        raise invalid("type 3 grids depend on the spreads of the sources and targets: use "
                      "warpfft.plan_params3(x_bounds, s_bounds, ...)")
    dim, n = normalize_modes(nufft_type, n_modes)
    prec, _, _ = precision_of(dtype)
    opts, _ = normalize_options(nufft_type, kwargs)
    eps = effective_eps(eps, prec)
    return info_dict(plan_params_c(nufft_type, n[::-1], n_trans, eps, prec, opts))


def plan_params3(x_bounds, s_bounds, n_trans=1, eps=1e-6, dtype="complex64", **kwargs):
    """What a type 3 plan's setpts would choose (warpfft_plan_params3; no GPU) for sources
    with x in ``x_bounds[0] = (lo, hi)``, y in ``x_bounds[1]``, ... and targets with s in
    ``s_bounds[0]``, ... (one pair per dimension, Python order: x first): kernel width and
    beta, spreading grid (``n_fine``), the inner type-2 step's precision, width, beta and fine
    grid, centres, half-widths and gamma. The reference has no such function."""
    xb, sb = bounds("x_bounds", x_bounds), bounds("s_bounds", s_bounds)
    if len(xb) != len(sb):
        raise invalid(f"x_bounds has {len(xb)} dimensions but s_bounds {len(sb)}", ERR_BAD_DIM)
    prec, _, _ = precision_of(dtype)
    opts, _ = normalize_options(3, kwargs)
    eps = effective_eps(eps, prec)
    xb, sb = xb[::-1], sb[::-1]  # the C ABI's dimension 1 is the last Python axis
    info = plan_params3_c(len(xb), n_trans, eps, prec, opts,
                          [b[0] for b in xb], [b[1] for b in xb],
                          [b[0] for b in sb], [b[1] for b in sb])
    return info_dict(info)


def _device_arg(arr, device, keep):
    """Device pointer of a classified argument: host arrays are uploaded (kept in `keep`)."""
    if arr is None:
        return None
    if arr.is_device:
        if arr.device is None:
            dev = driver.pointer_device(arr.ptr, device) if arr.ptr else device
            if dev != device:
                raise invalid(f"{arr.name}: not device memory of device {device}")
        elif arr.device != device:
            raise invalid(f"{arr.name}: array is on device {arr.device}, not {device}")
        keep.append(arr)
        return arr.ptr or None
    d = DeviceArray.from_host(arr.host.ravel(), device=device)
    keep.append(d)
    return d.ptr or None


def direct_sample(type, n_modes, x, y=None, z=None, c=None, fk=None, sample=None, isign=None,
                  modeord=0, device=0, s=None, t=None, u=None):
    """Exact non-uniform DFT (double precision, on the GPU) at a sample of outputs of
    transform 0, for checking accuracy (warpfft_direct_sample), in the same conventions as
    Plan: ``n_modes = (N1[, N2[, N3]])`` with x paired with N1 (axis 0).

    type 1: needs c (M strengths); returns f at the flat indices `sample` of the C-ordered
    mode array of shape n_modes (modes per `modeord`). type 2: needs fk (N1*N2*N3 modes);
    returns c at the point indices `sample`. x, y, z: M points each (y, z as the dimension
    needs, else None). Arrays: numpy (uploaded) or device arrays of the data's precision;
    every length is checked before the GPU reads anything. ``isign``: default +1 for types 1
    and 3, -1 for type 2. Returns a complex128 numpy array of len(sample).

    type 3 (warpfft_direct_sample3): ``n_modes`` is the dimension; needs c (M strengths at the
    sources x, y, z) and the K targets s (t, u as the dimension needs); returns f at the
    target indices `sample`.
    """
    type_ = _lib.as_int("type", type, 1, 3)
    if type_ == 3:
        return _direct_sample3(n_modes, x, y, z, c, fk, s, t, u, sample, isign, device)
    if any(v is not None for v in (s, t, u)):
        raise invalid(f"s, t, u are the targets of type 3; this is type {type_}")
    dim, n = normalize_modes(type_, n_modes)
    isign = normalize_isign(type_, isign)
    modeord = _lib.as_int("modeord", modeord, -_lib.INT32_MAX - 1, _lib.INT32_MAX)
    device = _lib.as_int("device", device, 0, _lib.INT32_MAX)
    if any(v < 1 for v in n):
        raise invalid(f"n_modes {n}: every entry must be >= 1", ERR_BAD_SIZE)
    data = c if type_ == 1 else fk
    if data is None:
        raise invalid("type 1 needs c, type 2 needs fk")
    if (fk if type_ == 1 else c) is not None:
        raise invalid("type 1 takes c (not fk), type 2 takes fk (not c)")
    d = wrap(data, "c" if type_ == 1 else "fk", None)
    prec, _, rdt = precision_of(d.dtype)
    pts, M = _point_set(dim, (x, y, z), "xyz", rdt)
    N = math.prod(n)
    if type_ == 1 and d.size != M:
        raise invalid(f"c has {d.size} elements but there are {M} points", ERR_BAD_NPOINTS)
    if type_ == 2 and d.size != N:
        raise invalid(f"fk has {d.size} elements but n_modes {n} needs {N}", ERR_BAD_SIZE)
    idx = _sample_indices(sample, N if type_ == 1 else M)

    def args(ptrs):
        pd = ptrs[dim]
        return (type_, dim, _lib.n_modes_array(n[::-1]), isign, modeord, prec, device, M,
                *_abi_order(ptrs[:dim]), pd if type_ == 1 else None, pd if type_ == 2 else None)

    return _sampled("direct_sample", device, pts + [d], args, idx)


def _sample_indices(sample, bound):
    """`sample` as a contiguous int64 array of indices in [0, bound)."""
    s = np.ascontiguousarray(np.ravel(sample if sample is not None else []))
    if s.size and s.dtype.kind not in "iu":
        raise invalid(f"sample must hold integers, not {s.dtype}")
    s = s.astype(np.int64)
    if s.size and (s.min() < 0 or s.max() >= bound):
        raise invalid(f"sample indices must be in [0, {bound})")
    return s


def _point_set(dim, values, names, rdt):
    """The dim coordinate arrays of one point set, all of one length (returned with it)."""
    arrs = []
    for i in range(3):
        if (values[i] is not None) != (i < dim):
            need = "needed" if i < dim else "not allowed"
            raise invalid(f"{names[i]} is {need} for a {dim}D transform")
        if i < dim:
            arrs.append(wrap(values[i], names[i], rdt))
    n = arrs[0].size
    for a in arrs[1:]:
        if a.size != n:
            raise invalid(f"{a.name} has {a.size} points but {names[0]} has {n}",
                          ERR_BAD_NPOINTS)
    return arrs, n


def _direct_sample3(dim, x, y, z, c, fk, s, t, u, sample, isign, device):
    dim, _ = normalize_modes(3, dim)
    isign = normalize_isign(3, isign)
    device = _lib.as_int("device", device, 0, _lib.INT32_MAX)
    if c is None:
        raise invalid("type 3 needs c (the strengths at the sources)")
    if fk is not None:
        raise invalid("type 3 takes c (not fk): it returns f at the targets")
    d = wrap(c, "c", None)
    prec, _, rdt = precision_of(d.dtype)
    src, M = _point_set(dim, (x, y, z), "xyz", rdt)
    tgt, K = _point_set(dim, (s, t, u), "stu", rdt)
    if d.size != M:
        raise invalid(f"c has {d.size} elements but there are {M} sources", ERR_BAD_NPOINTS)
    idx = _sample_indices(sample, K)

    def args(ptrs):
        return (dim, isign, prec, device, M, *_abi_order(ptrs[:dim]), ptrs[2 * dim], K,
                *_abi_order(ptrs[dim:2 * dim]))

    return _sampled("direct_sample3", device, src + tgt + [d], args, idx)


def _abi_order(ptrs):
    """One point set's coordinate pointers in the C ABI's order, whose dimension 1 is the last
    Python axis (as Plan passes them), padded with None to three."""
    return ptrs[::-1] + [None] * (3 - len(ptrs))


def _sampled(name, device, arrays, args, idx):
    """warpfft_<name>(*args(pointers), len(idx), idx, out) -> out as complex128: `arrays`
    (classified arguments) reach `device` first, in order (host ones uploaded and freed after
    the call); args(pointers) makes the leading arguments from their pointers."""
    out = np.zeros(2 * idx.size, np.float64)
    keep = []
    try:
        ptrs = [_device_arg(a, device, keep) for a in arrays]
        _lib.call(name, *args(ptrs), idx.size, idx.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                  out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    finally:
        for k in keep:
            if isinstance(k, DeviceArray):
                k.close()
    return out.view(np.complex128)
