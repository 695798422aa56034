"""The C ABI plan, thin: the four verbs of warpfft.h on pointers, in the C ABI's dimension order
(dimension 1 fastest). Every call on one plan holds the plan's lock (the header allows one
thread per plan at a time, and ctypes releases the GIL during a call), and every integer is
range-checked before it crosses the ABI (ctypes would wrap it silently).

The reference's conventions (shapes, axis order, option names, arrays) live in _compat.py (Plan)
and _args.py (argument checks).
"""

import ctypes
import threading

import numpy as np

from . import _lib
from ._errors import ERR_NO_POINTS, WarpfftError, invalid, live

METHODS = {"auto": 0, "gm": 1, "sm": 2, "od": 3}
_METHOD_NAMES = {v: k for k, v in METHODS.items()}
_PRECISIONS = {
    np.dtype(np.complex64): (_lib.PRECISION_F32, np.dtype(np.float32)),
    np.dtype(np.complex128): (_lib.PRECISION_F64, np.dtype(np.float64)),
}


def precision_of(dtype):
    """(warpfft_precision, complex dtype, real dtype) for complex64/complex128; anything else
    raises InvalidArgumentError (a TypeError, with the reference's wording)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise invalid(f"Expected complex64 or complex128 (dtype {dtype!r} is not a numpy "
                      "dtype)") from None
    if dt not in _PRECISIONS:
        raise invalid(f"Expected complex64 or complex128 (got dtype {dt})")
    prec, real = _PRECISIONS[dt]
    return prec, dt, real


def c_modes(type_, n_modes_c):
    """int64_t[3] of the C order mode counts (each range-checked)."""
    n = [_lib.as_int("n_modes", v, -_lib.INT64_MAX, _lib.INT64_MAX) for v in n_modes_c]
    return _lib.n_modes_array(n)


def info_dict(info, reverse=True):
    """A warpfft_plan_info as a dict; per-dimension tuples cut to dim entries and, with
    `reverse`, in the Python order (axis 0 = x first: the reverse of the C ABI's)."""
    d = info.dim if 1 <= info.dim <= 3 else 3

    def t(a):
        v = tuple(a[:d])
        return v[::-1] if reverse else v

    prec = {1: "f32", 2: "f64"}
    return {
        "type": info.type,
        "dim": info.dim,
        "precision": prec.get(info.precision, info.precision),
        "method": _METHOD_NAMES.get(info.method, info.method),
        # the kernel and grid the plan uses: upsampfac is the sigma in use (the one chosen when
        # the option was 0), kernel its name ("sinh"; None from a library that does not say),
        # predicted_ms the cost model's execute time at points_hint points (None where the
        # library makes no prediction: type 3, or a library without the field)
        "width": info.width,
        "beta": info.beta,
        "upsampfac": info.upsampfac,
        "kernel": _lib.KERNEL_NAMES.get(info.kernel, info.kernel or None),
        "predicted_ms": info.predicted_ms if info.predicted_ms > 0 else None,
        # bitwise-reproducible executes (the deterministic option; method "od" then spreads)
        "deterministic": bool(info.deterministic),
        "n_modes": t(info.n_modes),
        "n_fine": t(info.n_fine),
        "bin_size": t(info.bin_size),
        "ntransf": info.ntransf,
        "n_points": None if info.n_points < 0 else info.n_points,
        # point sets of the last setpts (batched points: n_points per set); None before one
        # (and from a library without the field)
        "n_sets": info.n_sets if info.n_sets > 0 else None,
        "workspace_bytes": info.workspace_bytes,
        # type 3 (after a setpts with sources and targets; None / 0 before and for types 1
        # and 2): sources x_d = x_center_d + x_half_d [-1, 1], targets s_d likewise; the
        # inner type-2 step's precision, kernel and fine grid; the rescaling factors gamma.
        "n_targets": None if info.n_targets < 0 else info.n_targets,
        "inner_precision": prec.get(info.inner_precision),
        "inner_width": info.inner_width,
        "inner_beta": info.inner_beta,
        "inner_fine": t(info.inner_fine),
        "x_center": t(info.x_center),
        "x_half": t(info.x_half),
        "s_center": t(info.s_center),
        "s_half": t(info.s_half),
        "gamma": t(info.gamma),
        "tol_floor": info.tol_floor,
        # the tolerance the plan was made for (eps, or the nearer end of the supported range)
        "tol": info.tol,
        # real strengths and the half modes (the real_data option; docs/real.md)
        "real_data": bool(info.real_data),
    }


def plan_params_c(type_, n_modes_c, ntransf, tol, precision, opts):
    """warpfft_plan_params (no GPU): the warpfft_plan_info plan_create would fill."""
    info = _lib.new_plan_info()
    _lib.call("plan_params", _lib.as_int("nufft_type", type_, -_lib.INT32_MAX, _lib.INT32_MAX),
              len(n_modes_c),
              c_modes(type_, n_modes_c),
              _lib.as_int("n_trans", ntransf, -_lib.INT64_MAX, _lib.INT64_MAX),
              float(tol), precision, ctypes.byref(opts), ctypes.byref(info))
    return info


def plan_params3_c(dim, ntransf, tol, precision, opts, x_lo, x_hi, s_lo, s_hi):
    """warpfft_plan_params3 (no GPU): bounds per C dimension (dim entries each)."""
    info = _lib.new_plan_info()

    def arr(v):
        a = (ctypes.c_double * 3)(0.0, 0.0, 0.0)
        for i, x in enumerate(v):
            a[i] = x
        return a

    _lib.call("plan_params3", dim,
              _lib.as_int("n_trans", ntransf, -_lib.INT64_MAX, _lib.INT64_MAX),
              float(tol), precision, ctypes.byref(opts), arr(x_lo), arr(x_hi), arr(s_lo),
              arr(s_hi), ctypes.byref(info))
    return info


class CPlan:
    """A warpfft_plan: create, setpts(M, pointers), execute(pointers), destroy. Pointers are
    device pointers on ``device``; the caller keeps the arrays alive and orders streams.

    ``pooled``: the plan comes from the C library's live-plan pool (warpfft_pool_acquire:
    an idle plan of these arguments, or a new one) and ``destroy`` gives it back
    (warpfft_pool_release, which forgets its points and waits for nothing)."""

    def __init__(self, type_, n_modes_c, iflag, ntransf, tol, precision, opts, pooled=False):
        self._lock = threading.Lock()
        self._handle = None
        self.type = _lib.as_int("nufft_type", type_, 1, 3)
        self.dim = len(n_modes_c)
        if not 1 <= self.dim <= 3:
            raise invalid(f"dim must be 1, 2 or 3 (got {self.dim})")
        self.precision = precision
        self.device = opts.device
        self.stream = opts.stream
        self.M = None
        self.K = None  # type 3: targets of the last setpts3
        self.n_sets = None  # point sets of the last setpts (1: shared by every transform)
        # type 3 takes no mode counts (the grids are chosen at setpts3): NULL, as warpfft.h allows
        n = None if self.type == 3 else c_modes(type_, n_modes_c)
        iflag = 1 if iflag >= 0 else -1
        ntransf = _lib.as_int("n_trans", ntransf, -_lib.INT64_MAX, _lib.INT64_MAX)
        handle = ctypes.c_void_p()
        self._L = L = _lib.lib  # the library this plan lives in (every later call uses it)
        self.pooled = pooled
        make = L.warpfft_pool_acquire if pooled else L.warpfft_plan_create
        _lib.check(make(self.type, self.dim, n, iflag, ntransf, float(tol), precision,
                        ctypes.byref(opts), ctypes.byref(handle)))
        self._handle = handle.value

    @property
    def closed(self):
        return self._handle is None

    def _live(self):
        return live(self._handle, "the plan")

    def setpts(self, M, px, py=None, pz=None, n_sets=1):
        """warpfft_setpts, or warpfft_setpts_sets for n_sets > 1 (batched points: n_sets sets
        of M points at each pointer, set after set). On failure ``M`` and ``n_sets`` become
        None: the C plan has no usable points."""
        M = _lib.as_int("M", M, 0, _lib.INT64_MAX)
        n_sets = _lib.as_int("n_sets", n_sets, 1, _lib.INT64_MAX)
        with self._lock:
            handle = self._live()
            self.M = self.n_sets = None
            ptrs = (px or None, py or None, pz or None)
            if n_sets == 1:
                st = self._L.warpfft_setpts(handle, self.precision, M, *ptrs)
            else:
                st = self._L.warpfft_setpts_sets(handle, self.precision, n_sets, M, *ptrs)
            _lib.check(st)
            self.M, self.n_sets = M, n_sets

    def setpts_check(self):
        """warpfft_setpts_check: waits for the plan's stream; raises BAD_POINTS if the last
        setpts held a NaN/inf coordinate (unchecked plans), NO_POINTS without points."""
        with self._lock:
            _lib.check(self._L.warpfft_setpts_check(self._live()))

    def setpts3(self, M, pxs, K, pss, n_sets=1):
        """warpfft_setpts3: M sources at pointers pxs, K targets at pss (dim each, C order);
        warpfft_setpts3_sets for n_sets > 1 (n_sets sets of each, set after set). On failure
        ``M``, ``K`` and ``n_sets`` become None."""
        M = _lib.as_int("M", M, 0, _lib.INT64_MAX)
        K = _lib.as_int("K", K, 0, _lib.INT64_MAX)
        n_sets = _lib.as_int("n_sets", n_sets, 1, _lib.INT64_MAX)
        px = [p or None for p in pxs] + [None] * (3 - len(pxs))
        ps = [p or None for p in pss] + [None] * (3 - len(pss))
        with self._lock:
            handle = self._live()
            self.M = self.K = self.n_sets = None
            if n_sets == 1:
                st = self._L.warpfft_setpts3(handle, self.precision, M, *px, K, *ps)
            else:
                st = self._L.warpfft_setpts3_sets(handle, self.precision, n_sets, M, *px, K,
                                                  *ps)
            _lib.check(st)
            self.M, self.K, self.n_sets = M, K, n_sets

    def execute(self, c, fk):
        with self._lock:
            handle = self._live()
            if self.M is None:
                raise WarpfftError("execute before a successful setpts", ERR_NO_POINTS,
                                   "WARPFFT_ERR_NO_POINTS")
            st = self._L.warpfft_execute(handle, self.precision, c or None, fk or None)
            if st:
                raise _lib.make_error(st)

    def sync(self):
        """Waits for the plan's stream; raises the status of asynchronous work that failed."""
        with self._lock:
            _lib.check(self._L.warpfft_stream_sync(self.device, self.stream))

    def info(self, reverse=True):
        info = _lib.new_plan_info()
        with self._lock:
            _lib.check(self._L.warpfft_plan_get_info(self._live(), ctypes.byref(info)))
        return info_dict(info, reverse)

    def workspace_bytes(self):
        n = ctypes.c_size_t()
        with self._lock:
            _lib.check(self._L.warpfft_plan_workspace_bytes(self._live(), ctypes.byref(n)))
        return n.value

    def destroy(self, sync=True):
        """Waits for the plan's stream (if `sync`), then destroys the plan (idempotent). Raises
        the first failing status (of the wait or of the destroy) -- after destroying. A pooled
        plan goes back to the pool instead, without a wait (the pool fences its work); a
        failure is that of destroying it when the pool did not keep it."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is None:
                return
            if self.pooled:
                _lib.check(self._L.warpfft_pool_release(handle, 0), "warpfft_pool_release")
                return
            err = None
            if sync:
                st = self._L.warpfft_stream_sync(self.device, self.stream)
                if st != 0:
                    err = _lib.make_error(st)
            st = self._L.warpfft_plan_destroy(handle)
            if st != 0 and err is None:
                err = _lib.make_error(st)
        if err is not None:
            raise err
