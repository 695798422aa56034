"""The Toeplitz normal operator T = A^H W A (warpfft.h's last block) in the reference's Python
conventions: :class:`Toeplitz` and :func:`toeplitz_params`.

A is the type-2 transform of sign ``isign`` over the points (``isign=-1`` by default, the
reference's type-2 default: ``(A f)_j = sum_k f[k] exp(-i k.x_j)``), A^H the type-1 transform of
sign ``-isign``, W the weights (None: all ones; a real array: density compensation; a complex
array). ``T f = A^H (W (A f))`` is a convolution of the modes with one kernel, so the operator
holds the kernel's spectrum (computed once, when it is made) and applies T with an FFT pair:
docs/toeplitz.md. Shapes as Plan's: modes ``([n_trans,] N1[, N2[, N3]])`` with x along axis 0;
the C ABI gets the mode counts and coordinates reversed (zero-copy, as Plan).

Arrays: numpy (copied to the device; ``apply`` returns numpy and waits), or device arrays --
cupy, torch, jax, numba, anything with ``__cuda_array_interface__`` or ``__dlpack__`` -- used in
place; ``apply`` then returns an array of the input's kind without waiting, its work queued on
the operator's stream (``gpu_stream``) after the producers' streams, which wait for it in turn.
"""

import ctypes

import numpy as np

from . import _lib
from ._args import effective_eps, normalize_modes, normalize_options
from ._arrays import empty_like, finish, wrap
from ._handle import DeviceHandle
from ._errors import invalid, live
from ._plan import precision_of

WEIGHTS_NONE, WEIGHTS_REAL, WEIGHTS_COMPLEX = 0, 1, 2
_WEIGHT_KINDS = {None: WEIGHTS_NONE, "none": WEIGHTS_NONE, "real": WEIGHTS_REAL,
                 "complex": WEIGHTS_COMPLEX}
_STRUCT_ROOM = 4096  # the info struct only grows at its end: room for any version of it


def _info_dict(info):
    """A warpfft_toeplitz_info as a dict, per-dimension tuples in the Python order."""
    d = info.dim if 1 <= info.dim <= 3 else 3

    def t(a):
        return tuple(a[:d])[::-1]

    return {
        "dim": info.dim,
        "precision": {1: "f32", 2: "f64"}.get(info.precision, info.precision),
        "weights": {0: None, 1: "real", 2: "complex"}.get(info.weights, info.weights),
        "modeord": info.modeord,
        "isign": info.iflag or None,
        "spectrum_real": bool(info.spectrum_real),
        "n_modes": t(info.n_modes),
        "n_grid": t(info.n_grid),
        "ntransf": info.ntransf,
        "n_points": None if info.n_points < 0 else info.n_points,
        "tol": info.tol,
        "kernel_tol": info.kernel_tol,
        "kernel_width": info.kernel_width,
        "fft_steps": info.fft_steps,
        "kernel_upsampfac": info.kernel_upsampfac,
        "kernel_fine": t(info.kernel_fine),
        "build_ms": info.build_ms,
        "spectrum_bytes": info.spectrum_bytes,
        "grid_bytes": info.grid_bytes,
        "workspace_bytes": info.workspace_bytes,
    }


def _new_info():
    buf = (ctypes.c_char * _STRUCT_ROOM)()
    return buf, ctypes.cast(buf, ctypes.POINTER(_lib.ToeplitzInfo))


def _weights_kind(weights):
    if isinstance(weights, str) or weights is None:
        try:
            return _WEIGHT_KINDS[weights]
        except KeyError:
            raise invalid(f"weights={weights!r}: None, 'real' or 'complex'") from None
    raise invalid(f"weights={weights!r}: None, 'real' or 'complex'")


def toeplitz_params(n_modes, n_trans=1, eps=1e-6, dtype="complex64", weights=None, **kwargs):
    """What a :class:`Toeplitz` of these arguments would hold, without a GPU: a dict with the
    grid ``n_grid`` (L_d >= 2 N_d - 1 per axis, Python order), ``spectrum_bytes`` (the
    kernel's spectrum: L1 L2 L3 reals, or complexes with complex weights), ``grid_bytes`` (the
    work grid of n_trans transforms), the kernel's type-1 tolerance, width and fine grid.
    ``weights``: None, "real" or "complex" (the kind, not the array)."""
    dim, modes = normalize_modes(1, n_modes)
    prec, _, _ = precision_of(dtype)
    opts, _ = normalize_options(1, kwargs)
    buf, info = _new_info()
    _lib.check(_lib.lib.warpfft_toeplitz_params(
        dim, _lib.n_modes_array(modes[::-1]),
        _lib.as_int("n_trans", n_trans, -_lib.INT64_MAX, _lib.INT64_MAX),
        effective_eps(eps, prec), prec, ctypes.byref(opts), _weights_kind(weights), info))
    return _info_dict(info.contents)


class Toeplitz(DeviceHandle):
    """The normal operator ``T = A^H W A`` of the points, as a convolution (docs/toeplitz.md):

    ``Toeplitz(n_modes, x, y=None, z=None, weights=None, n_trans=1, eps=1e-6, isign=-1,
    dtype="complex64", **kwargs)``

    * ``n_modes``: ``N1``, ``(N1, N2)`` or ``(N1, N2, N3)``, the shape of a mode array.
    * ``x, y, z``: the M points (real arrays of the real dtype: float32 for complex64).
    * ``weights``: None (W = I), M reals (e.g. density compensation) or M complexes.
    * ``isign``: the sign of A (type 2); A^H has ``-isign``. Default -1.
    * ``eps``: the relative l2 accuracy of ``T f`` against type 2 + weights + type 1.
    * ``n_trans``: mode arrays per ``apply`` (one batched application).
    * ``**kwargs``: Plan's options (``modeord`` for the mode arrays; ``gpu_device_id``,
      ``gpu_stream``; ``upsampfac``, ``gpu_method``, bins for the kernel's type-1 transform).

    Making it computes the kernel's spectrum (one type-1 transform of about 2N modes and an
    FFT) and waits for it: the points and weights may change afterwards. ``apply(f)`` (or
    ``op(f)``) returns ``T f``; ``apply(f, adjoint=True)`` returns ``T^H f`` (the same with
    real weights or none: T is Hermitian). ``info`` reports the grid, memory and build time.
    """

    _noun = "operator"

    def __init__(self, n_modes, x, y=None, z=None, weights=None, n_trans=1, eps=1e-6, isign=-1,
                 dtype="complex64", **kwargs):
        self._handle = None
        self._undestroyed = None  # a handle whose destroy failed: close() tries it again
        self._init_handle(1, n_modes, n_trans, eps, isign, dtype, isign_type=2)
        opts, _ = normalize_options(1, kwargs)
        self._device, self._stream = opts.device, opts.stream
        self._L = _lib.lib
        coords = self._coords((x, y, z))
        M = coords[0].size
        kind, w = self._weights(weights, M)
        ptrs, _, keep = self._device_inputs(coords + ([w] if w is not None else []))
        pts = ptrs[:self._dim][::-1] + [None] * (3 - self._dim)  # C order: x is the last axis
        wp = ptrs[self._dim] if w is not None else None
        handle = ctypes.c_void_p()
        try:
            _lib.check(self._L.warpfft_toeplitz_create(
                self._dim, _lib.n_modes_array(self._n_modes[::-1]), self._isign, self._n_trans,
                self._eps, self._precision, ctypes.byref(opts), M, pts[0] or None,
                pts[1] or None, pts[2] or None, kind, wp or None, ctypes.byref(handle)))
        finally:
            for d in keep:  # create waited for its work: the uploads are no longer read
                d.close()
        self._handle = handle.value
        self._M, self._weights_kind = M, kind

    # ---- properties ----

    M = property(lambda self: self._M)  # the others: DeviceHandle's

    @property
    def info(self):
        """What the operator holds (warpfft_toeplitz_get_info), per-axis tuples in the Python
        order: n_grid, spectrum_bytes, grid_bytes, workspace_bytes, build_ms, kernel_tol, ..."""
        buf, info = _new_info()
        with self._lock:
            _lib.check(self._L.warpfft_toeplitz_get_info(self._live(), info))
        return _info_dict(info.contents)

    @property
    def workspace_bytes(self):
        """Device bytes the operator holds (spectrum, work grid, cuFFT's work area)."""
        n = ctypes.c_size_t()
        with self._lock:
            _lib.check(self._L.warpfft_toeplitz_workspace_bytes(self._live(), ctypes.byref(n)))
        return n.value

    # ---- arguments ----

    def _is_closed(self):
        return self._handle is None

    def _live(self):
        return live(self._handle, "the Toeplitz operator")

    def _coords(self, values):
        names = "xyz"
        coords = list(values)
        if coords[0] is None:
            raise invalid(f"x is needed for a {self._dim}D operator")
        for d in range(self._dim, 3):
            if coords[d] is not None:
                raise invalid(f"the operator is {self._dim}D, but `{names[d]}` was given")
        arrs = []
        for d in range(self._dim):
            if coords[d] is None:
                raise invalid(f"{names[d]} is needed for a {self._dim}D operator")
            a = wrap(coords[d], names[d], self._real_dtype, stream=self._stream)
            if len(a.shape) != 1 or (arrs and a.shape != arrs[0].shape):
                raise invalid(f"Argument `{names[d]}` must be a vector like x (shape "
                              f"{a.shape})")
            arrs.append(a)
        return arrs

    def _weights(self, weights, M):
        if weights is None:
            return WEIGHTS_NONE, None
        kind = WEIGHTS_REAL
        dt = getattr(weights, "dtype", None)
        if dt is None:
            dt = np.asarray(weights).dtype
        try:
            complex_ = np.dtype(dt).kind == "c"
        except TypeError:  # torch dtypes
            complex_ = "complex" in str(dt)
        if complex_:
            kind = WEIGHTS_COMPLEX
        want = self._dtype if complex_ else self._real_dtype
        w = wrap(weights, "weights", want, stream=self._stream)
        if w.shape != (M,):
            raise invalid(f"Argument `weights` must have shape ({M},) like the points (got "
                          f"{w.shape})")
        return kind, w

    def _batch(self, shape):
        k = self._dim
        batch = tuple(shape[:-k]) if len(shape) >= k else None
        if batch is None or tuple(shape[-k:]) != self._n_modes or \
                int(np.prod(batch, dtype=np.int64)) != self._n_trans:
            want = self._n_modes if self._n_trans == 1 else (self._n_trans,) + self._n_modes
            raise invalid(f"Argument `f` must be of shape {want} (got {tuple(shape)})")
        return batch

    # ---- the application ----

    def apply(self, f, out=None, adjoint=False):
        """``T f`` (``adjoint=True``: ``T^H f``) for mode arrays ``f`` of shape
        ``([n_trans,] *n_modes)``; ``out`` (same shape) may be ``f`` itself. Returns ``out`` if
        given, else a new array of f's kind."""
        with self._lock:
            h = self._live()
            a = wrap(f, "f", self._dtype, stream=self._stream)
            o = wrap(out, "out", self._dtype, output=True, stream=self._stream)
            shape = self._batch(a.shape) + self._n_modes
            if o is not None and o.shape != shape:
                raise invalid(f"Argument `out` must be of shape {shape} (got {o.shape})")
            if a.is_device:
                return self._apply_device(h, a, o, out, shape, adjoint)
            if o is not None and o.is_device:
                raise invalid("f is a host array: out must be a host (numpy) array or None")
            return self._apply_host(h, a, o, out, shape, adjoint)

    __call__ = apply

    def _apply_device(self, h, a, o, out, shape, adjoint):
        def run(pin, pout):
            _lib.check(self._L.warpfft_toeplitz_apply(h, self._precision, int(bool(adjoint)), pin,
                                                      pout))

        return self._device_call(a, o, out, shape, run)

    def _apply_host(self, h, a, o, out, shape, adjoint):
        if o is None:
            out = empty_like(a, shape, self._dtype, self._device)
            o = wrap(out, "out", self._dtype, output=True)
        buf = self._buffer("io", a.size, self._dtype)
        buf.copy_from_host(a.host)
        self._uploaded()
        _lib.check(self._L.warpfft_toeplitz_apply(h, self._precision, int(bool(adjoint)),
                                                  buf.ptr, buf.ptr))
        _lib.check(self._L.warpfft_stream_sync(self._device, self._stream))
        buf.get(o.host.reshape(-1))
        return finish(a, out)

    # ---- lifetime ----

    def close(self):
        """Waits for the operator's stream and frees it (idempotent). Raises the status of failed
        asynchronous work (the wait) or of the destroy; when both fail, the wait's error names
        the destroy's too. A failed destroy leaves the operator allocated (warpfft.h): it can no
        longer be applied, and the next close() tries to destroy it again."""
        with self._lock:
            h, self._handle = self._handle, None
            if h is None:
                h, self._undestroyed = self._undestroyed, None
            if h is None:
                return
            err = None
            st = self._L.warpfft_stream_sync(self._device, self._stream)
            if st:
                err = _lib.make_error(st)
            st = self._L.warpfft_toeplitz_destroy(h)
            if st:
                self._undestroyed = h  # still valid: not lost, tried again at the next close()
                failed = _lib.make_error(st)
                err = failed if err is None else type(err)(
                    f"{err.message}; and warpfft_toeplitz_destroy failed too ({failed}): the "
                    "operator is still allocated, close() again to retry", err.status, err.name)
            self._drop_device_work()
        if err is not None:
            raise err

    def __repr__(self):
        state = "closed" if self._handle is None else f"M={self._M}"
        return (f"Toeplitz(n_modes={self._n_modes}, n_trans={self._n_trans}, eps={self._eps:g}, "
                f"isign={self._isign:+d}, dtype={self._dtype.name!r}, {state})")
