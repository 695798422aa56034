"""``cufinufft._cufinufft`` of the stand-in: the reference's low-level names, over warpfft.

* ``NufftOpts``: the options struct, field for field (``warpfft._nufft_opts``);
  ``_default_opts(opts)`` fills it with the reference's defaults.
* The plan calls, with the reference's arguments (a plan handle is a ``ctypes.c_void_p``):
  ``_make_plan(type, dim, n_modes, iflag, n_trans, tol, byref(handle), byref(opts))``
  (``_make_planf``: single precision; ``n_modes`` three int64 in the C order, x first),
  ``_set_pts(handle, M, x, y, z, N, s, t, u)`` (device pointers, C order),
  ``_exec_plan(handle, c, fk)`` and ``_destroy_plan(handle)``; ``_set_ptsf``,
  ``_exec_planf`` and ``_destroy_planf`` are the same calls (the plan knows its precision).
  A handle made by ``_make_plan`` names a warpfft Plan kept alive until ``_destroy_plan``; a
  ``Plan(...)._plan`` works as well. Each returns 0 and raises on failure (the reference
  returns a nonzero status: callers that test it and raise RuntimeError get a RuntimeError
  either way, warpfft's errors being RuntimeErrors).

Not here: ``lib`` (the reference's loaded libcufinufft.so) -- there is no such library to
call; code that loads it itself (ctypes on the .so) is not served by the stand-in.
"""

import ctypes
import threading

import numpy as np

from .. import _lib
from .._compat import Plan
from .._errors import invalid
from .._nufft_opts import NufftOpts, default_opts, opts_kwargs
from .._pointer_api import handle_value, plan_of

__all__ = ["NufftOpts", "_default_opts", "_make_plan", "_make_planf", "_set_pts", "_set_ptsf",
           "_exec_plan", "_exec_planf", "_destroy_plan", "_destroy_planf"]

_default_opts = default_opts

_OWNED = {}  # handle value -> Plan made by _make_plan (alive until _destroy_plan)
_owned_lock = threading.Lock()


def _handle_out(plan_out):
    """The c_void_p that receives a new handle: the c_void_p itself, byref() or pointer()."""
    if isinstance(plan_out, ctypes.c_void_p):
        return plan_out
    obj = getattr(plan_out, "_obj", None)
    if isinstance(obj, ctypes.c_void_p):
        return obj
    if isinstance(plan_out, ctypes.POINTER(ctypes.c_void_p)) and plan_out:
        return plan_out.contents
    raise invalid("the plan argument of _make_plan must be ctypes.byref(c_void_p()) (or a "
                  f"c_void_p), not {type(plan_out).__name__}")


def _make(dtype, nufft_type, dim, n_modes, iflag, n_trans, tol, plan_out, opts=None):
    out = _handle_out(plan_out)
    dim = _lib.as_int("dim", dim, 1, 3)
    nufft_type = _lib.as_int("nufft_type", nufft_type, 1, 3)
    if nufft_type == 3:
        modes = dim
    else:
        try:
            c_order = [int(n_modes[i]) for i in range(dim)]
        except (TypeError, IndexError, ValueError):
            raise invalid(f"n_modes must hold {dim} integers (C order: x first), not "
                          f"{n_modes!r}") from None
        modes = tuple(c_order[::-1])  # the Python order: the C order reversed
    plan = Plan(nufft_type, modes, n_trans, tol, iflag, dtype, **opts_kwargs(opts))
    handle = plan._c._handle
    with _owned_lock:
        _OWNED[handle] = plan
    out.value = handle
    return 0


def _make_plan(nufft_type, dim, n_modes, iflag, n_trans, tol, plan_out, opts=None):
    """A double-precision plan (complex128); its handle goes into `plan_out`."""
    return _make(np.complex128, nufft_type, dim, n_modes, iflag, n_trans, tol, plan_out, opts)


def _make_planf(nufft_type, dim, n_modes, iflag, n_trans, tol, plan_out, opts=None):
    """A single-precision plan (complex64); its handle goes into `plan_out`."""
    return _make(np.complex64, nufft_type, dim, n_modes, iflag, n_trans, tol, plan_out, opts)


def _set_pts(plan, M, x, y=None, z=None, N=0, s=None, t=None, u=None):
    """Points (device pointers, C order) of the plan `plan` names: Plan._setpts."""
    return plan_of(plan)._setpts(plan, M, x, y, z, N, s, t, u)


def _exec_plan(plan, c, fk):
    """Runs the plan `plan` names on device pointers c and fk: Plan._exec_plan."""
    return plan_of(plan)._exec_plan(plan, c, fk)


def _destroy_plan(plan):
    """Destroys the plan `plan` names (NULL: nothing to do, as the reference's)."""
    value = handle_value(plan)
    if not value:
        return 0
    with _owned_lock:
        owned = _OWNED.pop(value, None)
    target = owned if owned is not None else plan_of(plan)
    return target._destroy_plan(plan)


_set_ptsf = _set_pts
_exec_planf = _exec_plan
_destroy_planf = _destroy_plan
