"""Plan: the four verbs of warpfft.h (create, setpts, execute, destroy) over numpy arrays or
device arrays (__cuda_array_interface__)."""

import ctypes
import math

import numpy as np

from . import _lib
from ._device import DeviceArray, alloc_like, device_pointer, is_device
from ._errors import ERR_BAD_DIM, ERR_NO_POINTS, WarpfftError, invalid

METHODS = {"auto": 0, "gm": 1, "sm": 2}
_METHOD_NAMES = {v: k for k, v in METHODS.items()}
_PRECISIONS = {
    np.dtype(np.complex64): (_lib.PRECISION_F32, np.dtype(np.float32)),
    np.dtype(np.complex128): (_lib.PRECISION_F64, np.dtype(np.float64)),
}


def precision_of(dtype):
    """(warpfft_precision, complex dtype, real dtype) for complex64/complex128."""
    dt = np.dtype(dtype)
    if dt not in _PRECISIONS:
        raise invalid(f"dtype must be complex64 or complex128, not {dt}")
    prec, real = _PRECISIONS[dt]
    return prec, dt, real


def normalize_modes(n_modes):
    """(N1,) / (N1, N2) / (N1, N2, N3) from an int or a sequence of 1..3 ints."""
    n = (n_modes,) if np.ndim(n_modes) == 0 else tuple(n_modes)
    if not 1 <= len(n) <= 3:
        raise invalid(f"n_modes must have 1 to 3 entries (got {len(n)}): dim must be 1, 2 or 3",
                      ERR_BAD_DIM)
    return tuple(int(v) for v in n)


def make_opts(modeord=0, method="auto", upsampfac=2.0, device=0, stream=0, bin_size=None,
              max_subprob=None):
    """A warpfft_opts from keyword values (warpfft_opts_default for the rest)."""
    opts = _lib.default_opts()
    opts.modeord = int(modeord)
    if isinstance(method, str):
        if method.lower() not in METHODS:
            raise invalid(f"method must be one of {sorted(METHODS)}, not {method!r}")
        method = METHODS[method.lower()]
    opts.method = int(method)
    opts.upsampfac = float(upsampfac)
    opts.device = int(device)
    opts.stream = int(stream)
    if bin_size is not None:
        b = (bin_size,) * 3 if np.ndim(bin_size) == 0 else tuple(bin_size)
        for i, v in enumerate(b[:3]):
            opts.bin_size[i] = int(v)
    if max_subprob is not None:
        opts.max_subprob = int(max_subprob)
    return opts


def info_dict(info):
    """A warpfft_plan_info as a dict (per-dimension tuples cut to dim entries)."""
    d = info.dim if 1 <= info.dim <= 3 else 3
    return {
        "type": info.type,
        "dim": info.dim,
        "precision": {1: "f32", 2: "f64"}.get(info.precision, info.precision),
        "method": _METHOD_NAMES.get(info.method, info.method),
        "width": info.width,
        "beta": info.beta,
        "upsampfac": info.upsampfac,
        "n_modes": tuple(info.n_modes[:d]),
        "n_fine": tuple(info.n_fine[:d]),
        "bin_size": tuple(info.bin_size[:d]),
        "ntransf": info.ntransf,
        "n_points": None if info.n_points < 0 else info.n_points,
        "workspace_bytes": info.workspace_bytes,
        "tol_floor": info.tol_floor,
    }


class Plan:
    """A NUFFT plan on one GPU.

    ``Plan(type, n_modes, dtype=np.complex64, eps=1e-6, isign=+1, n_trans=1, modeord=0,
    method="auto", upsampfac=2.0, device=0, stream=0, bin_size=None, max_subprob=None)``

    * ``type``: 1 (non-uniform points -> modes) or 2 (modes -> points).
    * ``n_modes``: ``N1`` or ``(N1, N2)`` or ``(N1, N2, N3)``; ``N1`` goes with ``x``,
      ``N2`` with ``y``, ``N3`` with ``z``. Its length is the dimension.
    * ``dtype``: complex64 (f32 plan) or complex128 (f64 plan); points are float32/float64.
    * ``eps``: requested relative l2 accuracy. ``isign``: sign of the exponent.
    * ``stream``: a CUDA stream handle as an integer (0 = legacy default stream).

    Array shapes (numpy C order, the same memory layout as the C ABI, dimension 1 fastest):
    modes ``fk`` have shape ``(N1,)``, ``(N2, N1)`` or ``(N3, N2, N1)`` -- the *reverse* of
    ``n_modes`` -- so ``fk[i3, i2, i1]`` is mode ``(k1, k2, k3)``; strengths/values ``c`` have
    shape ``(M,)``. With ``n_trans > 1`` both get a leading batch axis: ``(n_trans, N3, N2, N1)``
    and ``(n_trans, M)``. Inputs of any shape with the right number of elements are accepted.
    ``plan.fk_shape`` / ``plan.c_shape`` give the shapes.

    Host arrays (numpy) are copied to the device; results come back as numpy arrays and
    ``execute`` waits for the GPU. Device arrays (anything with ``__cuda_array_interface__``:
    cupy, torch, :class:`DeviceArray`) are used in place, zero-copy: ``execute`` then returns a
    device array (``out`` if given, else a new array of the input's kind) without waiting; the
    work is queued on ``stream``. Point arrays passed to ``setpts`` must stay unchanged until the
    next ``setpts`` or ``close`` (the plan keeps a reference to them).
    """

    def __init__(self, type, n_modes, dtype=np.complex64, eps=1e-6, isign=+1, n_trans=1,
                 modeord=0, method="auto", upsampfac=2.0, device=0, stream=0, bin_size=None,
                 max_subprob=None):
        self._handle = None
        self._points = []  # objects whose device memory the C plan points at
        self._buffers = {}  # host path: cached DeviceArrays for inputs/outputs
        self._pending = False  # device-path work queued since the last sync
        self.type = int(type)
        self.n_modes = normalize_modes(n_modes)
        self.dim = len(self.n_modes)
        self.precision, self.dtype, self.real_dtype = precision_of(dtype)
        self.eps = float(eps)
        self.isign = 1 if isign >= 0 else -1
        self.n_trans = int(n_trans)
        self.modeord = int(modeord)
        self.device = int(device)
        self.stream = int(stream)
        self.M = None
        opts = make_opts(modeord, method, upsampfac, device, stream, bin_size, max_subprob)
        handle = ctypes.c_void_p()
        _lib.call("plan_create", self.type, self.dim, _lib.n_modes_array(self.n_modes),
                  self.isign, self.n_trans, self.eps, self.precision, ctypes.byref(opts),
                  ctypes.byref(handle))
        self._handle = handle.value

    # ---- shapes ----

    @property
    def fk_shape(self):
        """numpy shape of the mode array: ([n_trans,] [N3,] [N2,] N1)."""
        batch = (self.n_trans,) if self.n_trans > 1 else ()
        return batch + self.n_modes[::-1]

    @property
    def c_shape(self):
        """numpy shape of the strengths/values at the points: ([n_trans,] M)."""
        if self.M is None:
            raise WarpfftError("setpts has not been called", ERR_NO_POINTS, "WARPFFT_ERR_NO_POINTS")
        return ((self.n_trans,) if self.n_trans > 1 else ()) + (self.M,)

    # ---- the verbs ----

    def _live(self):
        if self._handle is None:
            raise invalid("the plan is closed")
        return self._handle

    def setpts(self, x, y=None, z=None):
        """Sets the M non-uniform points (coordinates are 2*pi periodic). x, y, z: numpy
        arrays (copied to the device) or device arrays of the plan's real dtype (kept)."""
        handle = self._live()
        coords = (x, y, z)
        for d in range(3):
            given = coords[d] is not None
            if given != (d < self.dim):
                name = "xyz"[d]
                need = "needed" if d < self.dim else "not allowed"
                raise invalid(f"{name} is {need} for a {self.dim}D plan")
        keep, ptrs, M = [], [], None
        for d in range(self.dim):
            name, obj = "xyz"[d], coords[d]
            if is_device(obj):
                n = math.prod(obj.__cuda_array_interface__["shape"])
                ptr = device_pointer(obj, self.real_dtype, n, name, self.device, self.stream)
            else:
                host = np.asarray(obj, dtype=self.real_dtype)
                obj = DeviceArray.from_host(host.ravel(), device=self.device)
                n, ptr = obj.size, obj.ptr
            if M is None:
                M = n
            elif n != M:
                raise invalid(f"{name} has {n} points but x has {M}")
            keep.append(obj)
            ptrs.append(ptr)
        ptrs += [None] * (3 - len(ptrs))
        status = _lib.lib.warpfft_setpts(handle, self.precision, M, *[p or None for p in ptrs])
        if status != 0:
            err = _lib.make_error(status)
            self._points += keep  # the plan may hold either set now; keep both alive
            raise err
        self._points = keep
        self.M = M
        return self

    def _buffer(self, key, n):
        buf = self._buffers.get(key)
        if buf is None or buf.size != n:
            if buf is not None:
                buf.close()
            buf = self._buffers[key] = DeviceArray((n,), self.dtype, self.device)
        return buf

    def execute(self, data, out=None):
        """Runs the transform(s). Type 1: data = strengths c, returns modes fk; type 2: data =
        modes fk, returns values c. numpy in -> numpy out (synchronous); device array in ->
        device array out (asynchronous on the plan's stream)."""
        handle = self._live()
        if self.M is None:
            raise WarpfftError("execute before setpts", ERR_NO_POINTS, "WARPFFT_ERR_NO_POINTS")
        n_c = self.n_trans * self.M
        n_fk = self.n_trans * math.prod(self.n_modes)
        if self.type == 1:
            n_in, n_out, out_shape, what = n_c, n_fk, self.fk_shape, ("c", "fk")
        else:
            n_in, n_out, out_shape, what = n_fk, n_c, self.c_shape, ("fk", "c")

        if is_device(data):
            pin = device_pointer(data, self.dtype, n_in, what[0], self.device, self.stream)
            if out is None:
                out = alloc_like(data, out_shape, self.dtype, self.device)
            elif not is_device(out):
                raise invalid("data is a device array: out must be a device array too")
            pout = device_pointer(out, self.dtype, n_out, what[1], self.device, self.stream,
                                  writable=True)
            self._run(handle, pin, pout)
            self._pending = True
            if isinstance(out, DeviceArray):
                out.stream = self.stream
            return out

        if is_device(out):
            raise invalid("data is a host array: out must be a numpy array or None")
        host = np.ascontiguousarray(data, dtype=self.dtype)
        if host.size != n_in:
            raise invalid(f"{what[0]} has {host.size} elements but the plan needs {n_in} "
                          f"(shape {self.c_shape if self.type == 1 else self.fk_shape})")
        if out is None:
            out = np.empty(out_shape, self.dtype)
        elif (not isinstance(out, np.ndarray) or out.dtype != self.dtype or out.size != n_out
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise invalid(f"out must be a writeable C-contiguous {self.dtype} numpy array of "
                          f"{n_out} elements")
        din, dout = self._buffer("in", n_in), self._buffer("out", n_out)
        din.copy_from_host(host)
        if self.stream != 0:  # the copies ran on the legacy stream; order them before ours
            _lib.call("stream_sync", self.device, 0)
        self._run(handle, din.ptr, dout.ptr)
        _lib.call("stream_sync", self.device, self.stream)
        dout.get(out.reshape(-1))
        return out

    def _run(self, handle, pin, pout):
        c, fk = (pin, pout) if self.type == 1 else (pout, pin)
        _lib.call("execute", handle, self.precision, c or None, fk or None)

    # ---- introspection ----

    @property
    def info(self):
        """What the plan chose (warpfft_plan_get_info) as a dict."""
        info = _lib.PlanInfo()
        _lib.call("plan_get_info", self._live(), ctypes.byref(info))
        return info_dict(info)

    @property
    def workspace_bytes(self):
        """Device bytes the plan holds now."""
        n = ctypes.c_size_t()
        _lib.call("plan_workspace_bytes", self._live(), ctypes.byref(n))
        return n.value

    # ---- lifetime ----

    def close(self):
        """Destroys the plan and frees the device memory this object allocated (idempotent).
        Waits first for device-path work still queued on the plan's stream."""
        handle, self._handle = self._handle, None
        if handle is not None:
            if self._pending:
                _lib.lib.warpfft_stream_sync(self.device, self.stream)
            _lib.lib.warpfft_plan_destroy(handle)
        for buf in self._buffers.values():
            buf.close()
        self._buffers = {}
        self._points = []
        self._pending = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        state = "closed" if self._handle is None else f"M={self.M}"
        return (f"Plan(type={self.type}, n_modes={self.n_modes}, dtype={self.dtype.name}, "
                f"eps={self.eps:g}, isign={self.isign:+d}, n_trans={self.n_trans}, {state})")
