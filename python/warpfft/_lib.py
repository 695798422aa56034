"""Finding libwarpfft.so and declaring every function of warpfft.h for ctypes.

Search order (the first that applies wins):
  1. $WARPFFT_LIBRARY — a path; if set, it is the only candidate (a failure to load it is an error,
     never a silent fall-back to another copy);
  2. libwarpfft.so next to this package's __init__.py (where the wheel puts it);
  3. the system loader: ctypes.CDLL("libwarpfft.so.0") (LD_LIBRARY_PATH, ld.so.cache, ...).
"""

import ctypes
import operator
import os
from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)

from ._errors import LibraryNotFoundError, error_class, invalid

SONAME = "libwarpfft.so.0"
PRECISION_F32 = 1
PRECISION_F64 = 2


class Opts(Structure):
    """warpfft_opts, field for field."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("modeord", c_int32),
        ("method", c_int32),
        ("device", c_int32),
        ("upsampfac", c_double),
        ("stream", c_uint64),
        ("bin_size", c_int32 * 3),
        ("max_subprob", c_int32),
        ("spreadinterponly", c_int32),
        ("check_points", c_int32),
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
    ]


# Every function of warpfft.h: name -> (restype, argtypes). `status` functions return c_int.
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
    "warpfft_plan_create": (
        _status,
        [c_int, c_int, _i64x3, c_int, c_int64, c_double, c_int, POINTER(Opts), POINTER(c_void_p)],
    ),
    "warpfft_setpts": (_status, [_p, c_int, c_int64, _p, _p, _p]),
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


def check(status):
    """Raises the matching WarpfftError if a C call did not return WARPFFT_SUCCESS."""
    if status != 0:
        raise make_error(status)


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
    opts = Opts()
    call("opts_default", ctypes.byref(opts))
    return opts


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
