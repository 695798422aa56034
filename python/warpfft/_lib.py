"""The one road from Python into the C library: finding libwarpfft.so, declaring every function
of warpfft.h and warpfft_xla.h (the XLA handlers' exports) for ctypes in one table, the structs, the status checks, and
the plan-argument validation the framework ops (warpfft.jax, warpfft.torch) share. Every other
module (the Plan class, the one-call functions, JAX, PyTorch) calls C through ``lib`` here; the
options are set through the C library's option table (_options.py).

Search order (the first that applies wins):
  1. $WARPFFT_LIBRARY — a path; if set, it is the only candidate (a failure to load it is an error,
     never a silent fall-back to another copy);
  2. libwarpfft.so next to this package's __init__.py (where the wheel puts it);
  3. the system loader: ctypes.CDLL("libwarpfft.so.0") (LD_LIBRARY_PATH, ld.so.cache, ...).
"""

import collections
import ctypes
import operator
import os
import threading
from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_ubyte,
    c_uint32,
    c_uint64,
    c_void_p,
)

from ._errors import ERR_BAD_TOL, LibraryNotFoundError, error_class, invalid

SONAME = "libwarpfft.so.0"
PRECISION_F32 = F32 = 1
PRECISION_F64 = F64 = 2
POOL_KEEP_POINTS = 1  # warpfft_pool_release's flag


# The option struct only grows at its end, and warpfft_opts_default writes the library's full
# size: so it is a buffer larger than any version of it, and a Python declaration that lags
# behind the library cannot be overrun (this happened with a grown warpfft_plan_info).
_STRUCT_ROOM = 4096


class Opts(Structure):
    """A warpfft_opts record: its struct_size, then the bytes the C library's option table
    describes (each option's offset and type: _options.py), with room for any version of the
    struct. Fields read by name (``opts.device``) come from the table; they are set through it
    (_options.set_option), never written here."""

    _fields_ = [("struct_size", c_uint32), ("_bytes", c_ubyte * (_STRUCT_ROOM - 4))]

    def __getattr__(self, name):
        from . import _options

        if name in _options.TABLE:
            return _options.get(self, name)
        raise AttributeError(name)


class OptDesc(Structure):
    """warpfft_opt_desc, field for field (one row of the option table)."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("type", c_int32),
        ("flags", c_uint32),
        ("offset", c_int32),
        ("name", c_char_p),
        ("aliases", c_char_p),
        ("values", c_char_p),
        ("doc", c_char_p),
        ("int_default", c_int64),
        ("int_min", c_int64),
        ("int_max", c_int64),
        ("float_default", c_double),
        ("float_min", c_double),
        ("float_max", c_double),
        ("int_ref_default", c_int64),
        ("float_ref_default", c_double),
    ]


class PlanInfo(Structure):
    """warpfft_plan_info, field for field."""

    _fields_ = [
        ("type", c_int32),
        ("dim", c_int32),
        ("precision", c_int32),
        ("method", c_int32),
        ("width", c_int32),
        ("beta", c_double),
        ("upsampfac", c_double),
        ("n_modes", c_int64 * 3),
        ("n_fine", c_int64 * 3),
        ("bin_size", c_int32 * 3),
        ("ntransf", c_int64),
        ("n_points", c_int64),
        ("workspace_bytes", c_size_t),
        # type 3 (appended to the ABI after workspace_bytes)
        ("n_targets", c_int64),
        ("inner_precision", c_int32),
        ("inner_width", c_int32),
        ("inner_beta", c_double),
        ("inner_fine", c_int64 * 3),
        ("x_center", c_double * 3),
        ("x_half", c_double * 3),
        ("s_center", c_double * 3),
        ("s_half", c_double * 3),
        ("gamma", c_double * 3),
        ("tol_floor", c_double),
        # the cost model's predicted execute time and the spreading kernel (appended with
        # upsampfac 0, issue 28)
        ("predicted_ms", c_double),
        ("kernel", c_int32),
        # 1: bitwise-reproducible executes (opts.deterministic; appended, issue 29)
        ("deterministic", c_int32),
        # point sets of the last setpts: 1, or n_sets of warpfft_setpts_sets (batched points;
        # appended, issue 32); -1 before one
        ("n_sets", c_int64),
        # the tolerance the plan was made for (tol, or the nearer end of the precision's
        # range; appended with the option table, issue 41)
        ("tol", c_double),
        # 1: real strengths and the half modes (opts.real_data; appended, issue 43)
        ("real_data", c_int32),
    ]


KERNEL_NAMES = {1: "sinh"}  # warpfft_kernel: WARPFFT_KERNEL_SINH = 1


class PoolInfo(Structure):
    """warpfft_pool_info, field for field."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("reserved", c_uint32),
        ("idle", c_int64),
        ("busy", c_int64),
        ("idle_bytes", c_int64),
        ("max_plans", c_int64),
        ("max_bytes", c_int64),
        ("created", c_int64),
        ("hits", c_int64),
        ("destroyed", c_int64),
        # of idle, busy and created: the Toeplitz operators (appended with them, issue 41)
        ("operators_idle", c_int64),
        ("operators_busy", c_int64),
        ("operators_created", c_int64),
    ]


# Every function of warpfft.h and warpfft_xla.h: name -> (restype, argtypes). `status`
# functions return c_int.
_status = c_int
_p = c_void_p
_i64x3 = POINTER(c_int64)
_f64x3 = POINTER(c_double)
SIGNATURES = {
    "warpfft_version": (c_char_p, []),
    "warpfft_last_error": (c_char_p, []),
    "warpfft_status_name": (c_char_p, [c_int]),
    "warpfft_build_manifest": (c_char_p, []),
    "warpfft_embedded_module_count": (c_size_t, []),
    "warpfft_embedded_module": (_status, [c_size_t, POINTER(c_char_p), POINTER(c_size_t)]),
    "warpfft_embedded_blob": (
        _status,
        [c_size_t, c_size_t, POINTER(c_int), POINTER(c_char_p), POINTER(c_void_p),
         POINTER(c_size_t)],
    ),
    "warpfft_cufft_probe": (_status, [c_char_p, c_size_t, POINTER(c_int)]),
    "warpfft_init": (_status, [c_int]),
    "warpfft_runtime_info": (_status, [c_int, c_char_p, c_size_t, POINTER(c_size_t)]),
    "warpfft_malloc": (_status, [c_int, c_size_t, POINTER(c_void_p)]),
    "warpfft_free": (_status, [c_int, _p]),
    "warpfft_memcpy_htod": (_status, [c_int, _p, _p, c_size_t]),
    "warpfft_memcpy_dtoh": (_status, [c_int, _p, _p, c_size_t]),
    "warpfft_memset": (_status, [c_int, _p, c_int, c_size_t]),
    "warpfft_stream_sync": (_status, [c_int, c_uint64]),
    "warpfft_opts_default": (_status, [POINTER(Opts)]),
    # the option table (_options.py) and the tolerance's range
    "warpfft_opt_count": (c_size_t, []),
    "warpfft_opt_describe": (_status, [c_size_t, POINTER(OptDesc)]),
    "warpfft_opt_find": (_status, [c_char_p, POINTER(c_size_t)]),
    "warpfft_opts_set": (_status, [POINTER(Opts), c_char_p, c_char_p]),
    "warpfft_tol_bounds": (_status, [c_int, POINTER(c_double), POINTER(c_double)]),
    "warpfft_tol_effective": (_status, [c_double, c_int, POINTER(c_double)]),
    "warpfft_plan_create": (
        _status,
        [c_int, c_int, _i64x3, c_int, c_int64, c_double, c_int, POINTER(Opts), POINTER(c_void_p)],
    ),
    "warpfft_setpts": (_status, [_p, c_int, c_int64, _p, _p, _p]),
    "warpfft_setpts_sets": (_status, [_p, c_int, c_int64, c_int64, _p, _p, _p]),
    "warpfft_setpts_check": (_status, [_p]),
    "warpfft_execute": (_status, [_p, c_int, _p, _p]),
    "warpfft_plan_destroy": (_status, [_p]),
    "warpfft_release_cached": (_status, []),
    "warpfft_plan_get_info": (_status, [_p, POINTER(PlanInfo)]),
    "warpfft_plan_workspace_bytes": (_status, [_p, POINTER(c_size_t)]),
    "warpfft_plan_params": (
        _status,
        [c_int, c_int, _i64x3, c_int64, c_double, c_int, POINTER(Opts), POINTER(PlanInfo)],
    ),
    "warpfft_direct_sample": (
        _status,
        [c_int, c_int, _i64x3, c_int, c_int, c_int, c_int, c_int64, _p, _p, _p, _p, _p, c_int64,
         POINTER(c_int64), POINTER(c_double)],
    ),
    "warpfft_setpts3": (_status, [_p, c_int, c_int64, _p, _p, _p, c_int64, _p, _p, _p]),
    "warpfft_setpts3_sets": (
        _status, [_p, c_int, c_int64, c_int64, _p, _p, _p, c_int64, _p, _p, _p]),
    "warpfft_plan_params3": (
        _status,
        [c_int, c_int64, c_double, c_int, POINTER(Opts), _f64x3, _f64x3, _f64x3, _f64x3,
         POINTER(PlanInfo)],
    ),
    "warpfft_direct_sample3": (
        _status,
        [c_int, c_int, c_int, c_int, c_int64, _p, _p, _p, _p, c_int64, _p, _p, _p, c_int64,
         POINTER(c_int64), POINTER(c_double)],
    ),
    "warpfft_bench_fft": (
        _status, [c_int, _i64x3, c_int, c_int64, c_int, c_int, POINTER(c_double)]
    ),
    # the live-plan pool
    "warpfft_pool_acquire": (
        _status,
        [c_int, c_int, _i64x3, c_int, c_int64, c_double, c_int, POINTER(Opts), POINTER(c_void_p)],
    ),
    "warpfft_pool_release": (_status, [_p, c_uint32]),
    "warpfft_pool_clear": (_status, []),
    "warpfft_pool_set_limits": (_status, [c_int64, c_int64]),
    "warpfft_pool_get_info": (_status, [POINTER(PoolInfo)]),
    "warpfft_plan_points_id": (_status, [_p, POINTER(c_uint64)]),
    # one-call transforms over the pool (warpfft/oneshot.h; for C callers: Python's nufft*d*
    # functions acquire, set points and execute through the calls above)
    **dict.fromkeys(("warpfft_nufft1", "warpfft_nufft2"), (
        _status,
        [c_int, _i64x3, c_int, c_int64, c_double, c_int, POINTER(Opts), c_int64, _p, _p, _p, _p,
         _p],
    )),
    "warpfft_nufft3": (
        _status,
        [c_int, c_int, c_int64, c_double, c_int, POINTER(Opts), c_int64, _p, _p, _p, _p, c_int64,
         _p, _p, _p, _p],
    ),
    # the XLA FFI handlers (warpfft_xla.h; warpfft.jax registers them)
    "warpfft_xla_nufft": (c_void_p, [c_void_p]),
    "warpfft_xla_plans_created": (c_int64, []),
    "warpfft_xla_toeplitz_spectrum": (c_void_p, [c_void_p]),
    "warpfft_xla_toeplitz_apply": (c_void_p, [c_void_p]),
}


# ---- the Toeplitz normal operator (warpfft.h's last block; _toeplitz.py) ----


class ToeplitzInfo(Structure):
    """warpfft_toeplitz_info, field for field."""

    _fields_ = [
        ("dim", c_int32),
        ("precision", c_int32),
        ("weights", c_int32),
        ("modeord", c_int32),
        ("iflag", c_int32),
        ("spectrum_real", c_int32),
        ("kernel_width", c_int32),
        ("fft_steps", c_int32),
        ("n_modes", c_int64 * 3),
        ("n_grid", c_int64 * 3),
        ("kernel_fine", c_int64 * 3),
        ("ntransf", c_int64),
        ("n_points", c_int64),
        ("tol", c_double),
        ("kernel_tol", c_double),
        ("kernel_upsampfac", c_double),
        ("build_ms", c_double),
        ("spectrum_bytes", c_size_t),
        ("grid_bytes", c_size_t),
        ("workspace_bytes", c_size_t),
    ]


SIGNATURES.update({
    "warpfft_toeplitz_create": (
        _status,
        [c_int, _i64x3, c_int, c_int64, c_double, c_int, POINTER(Opts), c_int64, _p, _p, _p,
         c_int, _p, POINTER(c_void_p)],
    ),
    "warpfft_toeplitz_apply": (_status, [_p, c_int, c_int, _p, _p]),
    "warpfft_toeplitz_apply_spectrum": (_status, [_p, c_int, c_int, _p, c_int, _p, _p]),
    "warpfft_toeplitz_spectrum": (
        _status,
        [c_int, _i64x3, c_int, c_double, c_int, POINTER(Opts), c_int64, _p, _p, _p, c_int, _p,
         _p],
    ),
    "warpfft_toeplitz_params": (
        _status,
        [c_int, _i64x3, c_int64, c_double, c_int, POINTER(Opts), c_int, POINTER(ToeplitzInfo)],
    ),
    "warpfft_toeplitz_get_info": (_status, [_p, POINTER(ToeplitzInfo)]),
    "warpfft_toeplitz_workspace_bytes": (_status, [_p, POINTER(c_size_t)]),
    "warpfft_toeplitz_destroy": (_status, [_p]),
    # its zero operators from the live-plan pool (the JAX and PyTorch operators' per call)
    "warpfft_pool_acquire_toeplitz": (
        _status, [c_int, _i64x3, c_int64, c_double, c_int, POINTER(Opts), POINTER(c_void_p)]),
    "warpfft_pool_release_toeplitz": (_status, [_p, c_uint32]),
})


def _load():
    """Loads the library by the search order above; returns (CDLL, path or soname)."""
    tried = []
    env = os.environ.get("WARPFFT_LIBRARY")
    if env:
        candidates = [("$WARPFFT_LIBRARY", env)]
    else:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libwarpfft.so")
        candidates = [("package directory", here), ("system loader", SONAME)]
    for where, name in candidates:
        if os.sep in name and not os.path.exists(name):
            tried.append(f"{where}: {name} (no such file)")
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            tried.append(f"{where}: {name} ({e})")
    raise LibraryNotFoundError(
        "cannot load libwarpfft; tried:\n  " + "\n  ".join(tried)
        + "\nSet WARPFFT_LIBRARY to the path of libwarpfft.so (e.g. target/release/libwarpfft.so)."
    )


def declare(lib, signatures):
    """Sets restype/argtypes on `lib` for every name -> (restype, argtypes); returns the names
    the library lacks."""
    missing = []
    for name, (restype, argtypes) in signatures.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        f.restype = restype
        f.argtypes = argtypes
    return missing


lib, path = _load()
missing_symbols = declare(lib, SIGNATURES)
if missing_symbols:
    raise LibraryNotFoundError(
        f"{path} is not a compatible libwarpfft: missing {', '.join(missing_symbols)}"
    )


def _str(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def status_name(status):
    """warpfft_status_name(status), e.g. "WARPFFT_ERR_NO_DEVICE"."""
    return _str(lib.warpfft_status_name(int(status)))


def last_error():
    """warpfft_last_error() of the calling thread."""
    return _str(lib.warpfft_last_error())


def make_error(status):
    """The exception for a failed call; call it right after the call (same thread)."""
    message = last_error()
    return error_class(status)(message, status, status_name(status))


def check(status, what=None):
    """Raises the matching WarpfftError if a C call did not return WARPFFT_SUCCESS (its message
    prefixed with ``what: `` when given, e.g. the function's name)."""
    if status != 0:
        if what is None:
            raise make_error(status)
        raise error_class(status)(f"{what}: {last_error()}", status, status_name(status))


def call(name, *args):
    """Calls warpfft_<name>(*args) and raises on a failing status."""
    check(getattr(lib, "warpfft_" + name)(*args))


def n_modes_array(n):
    """int64_t[3] from 1..3 mode counts (unused entries 1)."""
    arr = (c_int64 * 3)(1, 1, 1)
    for i, v in enumerate(n):
        arr[i] = v
    return arr


def default_opts():
    """warpfft_opts_default: a record (room for any version of the struct) with the option
    table's defaults."""
    opts = Opts()
    check(lib.warpfft_opts_default(ctypes.byref(opts)), "warpfft_opts_default")
    return opts


def new_plan_info():
    """A zeroed PlanInfo backed by a buffer with room for any version of warpfft_plan_info:
    the library writes its whole struct (there is no size field), so a declaration that lags
    behind it must not be what it writes into. Fields a library older than the declaration
    does not write stay 0 (kernel 0: not reported)."""
    return PlanInfo.from_buffer((ctypes.c_char * _STRUCT_ROOM)())


INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
SIZE_MAX = 2**64 - 1


def as_int(name, value, lo, hi):
    """`value` as a Python int within [lo, hi], or InvalidArgumentError naming `name`. ctypes
    would wrap an out-of-range integer silently (2**32 + 1 -> 1 for a C int), so every integer
    that crosses the ABI goes through here first. Floats, bools and strings are refused."""
    if type(value) is int and lo <= value <= hi:  # the common case, fast
        return value
    if isinstance(value, bool):
        raise invalid(f"{name} must be an integer, not a bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise invalid(f"{name} must be an integer, not {type(value).__name__} {value!r}") from None
    if not lo <= v <= hi:
        raise invalid(f"{name} = {v} is out of range [{lo}, {hi}]")
    return v


# ---- plan arguments ------------------------------------------------------------------------


def points_hint_for(m):
    """The points_hint that the one-call functions, warpfft.torch and the XLA handler
    (c_core/src/framework/xla_ffi.c, the same rule) pass for M points: M rounded to the nearest
    power of two (a tie goes up; 0 for M <= 0, the library's "one point per mode"). Not M
    itself: their plans come from the live-plan pool, keyed on every option, and an exact M
    would make a new plan for every distinct M, while the choice it informs (upsampfac and
    width, by predicted time) changes slowly with M."""
    if m <= 0:
        return 0
    lo = 1 << (m.bit_length() - 1)
    if lo > INT64_MAX // 2:  # 2 lo does not fit the C field
        return lo
    return lo if m - lo < 2 * lo - m else 2 * lo


def modes3(n):
    """int64_t[3] of 1..3 mode counts in the C order (unused entries 1)."""
    return n_modes_array([int(v) for v in n])


# Arguments warpfft_plan_params accepted (validate, validate3): a bounded memo, least recently
# used first out, so that a program sweeping through shapes or tolerances holds no more than
# _PARAMS_OK_MAX keys.
_PARAMS_OK_MAX = 512
_params_lock = threading.Lock()
_params_ok = collections.OrderedDict()


def _known_valid(key):
    with _params_lock:
        if key in _params_ok:
            _params_ok.move_to_end(key)
            return True
    return False


def _remember_valid(key, status, what, eps):
    """Raises for a failed plan_params call (naming the argument for a tolerance the precision
    cannot reach); memoises a passing one."""
    if status != 0:
        hint = f" (argument {what}={eps!r})" if status == ERR_BAD_TOL else ""
        raise error_class(status)(f"{last_error()}{hint}", status, status_name(status))
    with _params_lock:
        _params_ok[key] = True
        while len(_params_ok) > _PARAMS_OK_MAX:
            _params_ok.popitem(last=False)


def validate(nufft_type, n_modes_c, ntransf, eps, precision, opts, what="eps"):
    """Runs warpfft_plan_params (no GPU) on the arguments a plan would get (`opts`: an options
    record, _options.record), so a tolerance the options cannot reach, a bad option or a
    too-large size raise here, at trace/call time, with the library's message. Results are
    memoised (bounded)."""
    key = (nufft_type, tuple(n_modes_c), ntransf, float(eps), precision, bytes(opts))
    if _known_valid(key):
        return
    o = opts
    info = (ctypes.c_char * _STRUCT_ROOM)()  # not read: only the status matters here
    st = lib.warpfft_plan_params(int(nufft_type), len(n_modes_c), modes3(n_modes_c),
                                 max(int(ntransf), 1), float(eps), int(precision),
                                 ctypes.byref(o), ctypes.cast(info, POINTER(PlanInfo)))
    _remember_valid(key, st, what, eps)


def validate3(dim, ntransf, eps, precision, opts):
    """validate() for a type-3 plan: warpfft_plan_params3 with the points at the origin (the
    grids depend on the coordinates, which are only known when the transform runs; this checks
    dim, ntransf, the tolerance and the options, without a GPU). Memoised (bounded)."""
    key = (3, int(dim), ntransf, float(eps), precision, bytes(opts))
    if _known_valid(key):
        return
    o = opts
    info = (ctypes.c_char * _STRUCT_ROOM)()
    zero = (c_double * 3)(0.0, 0.0, 0.0)
    st = lib.warpfft_plan_params3(int(dim), max(int(ntransf), 1), float(eps), int(precision),
                                  ctypes.byref(o), zero, zero, zero, zero,
                                  ctypes.cast(info, POINTER(PlanInfo)))
    _remember_valid(key, st, "eps", eps)
