"""The reference's (cufinufft's) private per-plan calls on raw device pointers, which packages
built on it use -- mri-nufft sets the points of its plans this way, from the columns of one
F-ordered (M, dim) array:

    plan._setpts(plan._plan, M, x_ptr, y_ptr, z_ptr, 0, None, None, None)
    plan._exec_plan(plan._plan, c_ptr, fk_ptr)        # type 2: c is the output
    plan._destroy_plan(plan._plan)

``Plan._plan`` is the C plan's handle (a ``ctypes.c_void_p``; None once the plan is closed).
Pointers come in the C library's dimension order, the reverse of the Python one -- 1D x, 2D
(y, x), 3D (z, y, x) -- as in the reference, as ints, None (NULL), ``ctypes.c_void_p`` or numpy
integers. The plan keeps no reference to the arrays behind them (the caller keeps them alive,
as with the reference); each pointer must be device memory on the plan's device (asked of the
CUDA driver: a host pointer raises here instead of faulting on the GPU); the work is queued on
the plan's stream. Each call returns 0 (the reference's success status) and raises on failure
(never a status that a caller could ignore).

``warpfft.cufinufft._cufinufft``'s module-level functions (``_set_pts(handle, ...)``, ...) find
the Plan of a handle through `plan_of`.
"""

import ctypes
import weakref

import numpy as np

from . import _lib
from ._device import driver
from ._errors import ERR_NO_POINTS, WarpfftError, invalid

_PLANS = weakref.WeakValueDictionary()  # C handle value -> live Plan


def handle_value(handle):
    """A plan handle as an int (0 for NULL/None): a ctypes.c_void_p, an int or None."""
    if handle is None:
        return 0
    if isinstance(handle, ctypes.c_void_p):
        return handle.value or 0
    obj = getattr(handle, "_obj", None)  # ctypes.byref(c_void_p)
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if isinstance(handle, (int, np.integer)) and not isinstance(handle, (bool, np.bool_)):
        return int(handle)
    raise invalid(f"a plan handle is a ctypes.c_void_p or an int, not {type(handle).__name__}")


def plan_of(handle):
    """The live Plan whose C handle is `handle`."""
    value = handle_value(handle)
    plan = _PLANS.get(value) if value else None
    if plan is None or plan._c is None or plan._c._handle != value:
        raise invalid(f"{handle!r} is not the handle of a live warpfft plan")
    return plan


def _pointer(value, name):
    """A pointer argument as the reference's ctypes c_void_p arguments take it -> int."""
    if value is None:
        return 0
    if isinstance(value, ctypes.c_void_p):
        return value.value or 0
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return _lib.as_int(name, value, 0, _lib.UINT64_MAX)
    raise invalid(f"{name}: a device pointer is an int, None or ctypes.c_void_p, not "
                  f"{type(value).__name__} (pass an array's pointer, e.g. "
                  "cufinufft._compat.get_array_ptr(a))")


class PointerCalls:
    """Plan's ``_plan``, ``_setpts``, ``_exec_plan`` and ``_destroy_plan`` (see the module doc).
    Uses Plan's ``_c`` (CPlan), ``_lock``, ``_live``, ``_dim``, ``_type``, ``_device``,
    ``_points`` and ``_retire``."""

    def _register(self):
        _PLANS[self._c._handle] = self

    @property
    def _plan(self):
        """The C plan handle as a ctypes.c_void_p (the reference's ``Plan._plan``); None once
        the plan is closed."""
        c = self._c
        return None if c is None or c.closed else ctypes.c_void_p(c._handle)

    def _own(self, handle):
        """This plan's CPlan, if `handle` names it."""
        c = self._live()
        if handle_value(handle) != c._handle:
            raise invalid(f"{handle!r} is not this plan's handle (plan._plan)")
        return c

    def _device_pointers(self, ptrs, names):
        """Each non-NULL pointer must be memory of the plan's device (one driver query each)."""
        for p, name in zip(ptrs, names):
            if not p:
                continue
            dev = driver.pointer_device(p, self._device)
            if dev is None:
                raise invalid(f"{name}: pointer {p:#x} is not device memory the CUDA driver "
                              "knows (a host pointer?)")
            if dev != self._device:
                raise invalid(f"{name}: pointer {p:#x} is on device {dev}, the plan on device "
                              f"{self._device}")

    def _setpts(self, plan, M, x, y=None, z=None, N=0, s=None, t=None, u=None):
        """The reference's ``_setpts``: M points at device pointers x, y, z in the C order (for
        type 3 also N targets at s, t, u); pointers past the plan's dimension are ignored."""
        with self._lock:
            c = self._own(plan)
            M = _lib.as_int("M", M, 0, _lib.INT64_MAX)
            d = self._dim
            src = [_pointer(v, f"_setpts: pointer {n}") for v, n in zip((x, y, z), "xyz")][:d]
            names = [f"_setpts: source pointer {i + 1} of {d} (C order)" for i in range(d)]
            tgt, tnames = [], []
            if self._type == 3:
                N = _lib.as_int("N", N, 0, _lib.INT64_MAX)
                tgt = [_pointer(v, f"_setpts: pointer {n}") for v, n in zip((s, t, u), "stu")]
                tgt = tgt[:d]
                tnames = [f"_setpts: target pointer {i + 1} of {d} (C order)" for i in range(d)]
            for p, name, n in [(p, q, M) for p, q in zip(src, names)] + \
                    [(p, q, N) for p, q in zip(tgt, tnames)]:
                if n and not p:
                    raise invalid(f"{name} is NULL for {n} points")
            self._device_pointers(src + tgt, names + tnames)
            old, self._points = self._points, []
            self._retire(old)
            if self._type == 3:
                c.setpts3(M, src, N, tgt)
                self._nk = N
            else:
                c.setpts(M, *src)
            self._nj = M
            return 0

    def _exec_plan(self, plan, c, fk):
        """The reference's ``_exec_plan``: type 1 and 3 read c and write fk, type 2 reads fk
        and writes c (device pointers of the plan's dtype, the plan's sizes)."""
        with self._lock:
            cplan = self._own(plan)
            if cplan.M is None:
                raise WarpfftError("_exec_plan before a successful setpts", ERR_NO_POINTS,
                                   "WARPFFT_ERR_NO_POINTS")
            pc = _pointer(c, "_exec_plan: c")
            pf = _pointer(fk, "_exec_plan: fk")
            for p, name in ((pc, "c"), (pf, "fk")):
                if not p:
                    raise invalid(f"_exec_plan: {name} is NULL")
            self._device_pointers((pc, pf), ("_exec_plan: c", "_exec_plan: fk"))
            cplan.execute(pc, pf)
            return 0

    def _destroy_plan(self, plan):
        """The reference's ``_destroy_plan``: closes the plan (a closed plan: nothing to do)."""
        with self._lock:
            if self._c is None or self._c.closed:
                return 0
            self._own(plan)
            self.close()
            return 0
