"""The C entry points warpfft.jax and warpfft.torch call, loaded through ctypes.

The library is the one ``warpfft`` itself loaded (same search order: $WARPFFT_LIBRARY, the
package directory, the system loader); ctypes hands back the same handle for the same file.
Only the functions used here are declared, on a private CDLL object; the option structs are
the package's (``_lib.Opts``, ``_lib.PlanInfo``), which track warpfft.h.
"""

import ctypes
import importlib
import os
import threading
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_uint64, c_void_p

from . import _errors, _lib

F32 = 1
F64 = 2


# The option and info structs come from the package's own declarations (warpfft.h field for
# field). Both structs only ever grow at their end, and the library writes its own full size
# (warpfft_opts_default, warpfft_plan_params): so they are backed here by buffers larger than
# any version of them, and a Python declaration that lags behind the library cannot be
# overrun (this happened: a grown warpfft_plan_info corrupted the heap through plan_params).
Opts = _lib.Opts
PlanInfo = _lib.PlanInfo
_STRUCT_ROOM = 4096


_SIGNATURES = {
    "warpfft_last_error": (c_char_p, []),
    "warpfft_status_name": (c_char_p, [c_int]),
    "warpfft_opts_default": (c_int, [POINTER(Opts)]),
    "warpfft_plan_create": (
        c_int,
        [c_int, c_int, POINTER(c_int64), c_int, c_int64, c_double, c_int, POINTER(Opts),
         POINTER(c_void_p)],
    ),
    "warpfft_setpts": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p]),
    "warpfft_setpts3": (
        c_int,
        [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
         c_void_p],
    ),
    "warpfft_execute": (c_int, [c_void_p, c_int, c_void_p, c_void_p]),
    "warpfft_plan_destroy": (c_int, [c_void_p]),
    "warpfft_plan_params": (
        c_int,
        [c_int, c_int, POINTER(c_int64), c_int64, c_double, c_int, POINTER(Opts),
         POINTER(PlanInfo)],
    ),
    "warpfft_plan_params3": (
        c_int,
        [c_int, c_int64, c_double, c_int, POINTER(Opts), POINTER(c_double), POINTER(c_double),
         POINTER(c_double), POINTER(c_double), POINTER(PlanInfo)],
    ),
    "warpfft_stream_sync": (c_int, [c_int, c_uint64]),
    "warpfft_xla_plans_created": (c_int64, []),
    "warpfft_xla_cache_size": (c_int64, []),
    "warpfft_xla_cache_clear": (None, []),
}


def _library_path():
    """The file warpfft loaded (its own search order), without depending on its internals."""
    env = os.environ.get("WARPFFT_LIBRARY")
    if env:
        return env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libwarpfft.so")
    return here if os.path.exists(here) else "libwarpfft.so.0"


def _load():
    importlib.import_module("warpfft")  # raises LibraryNotFoundError listing places tried

    path = _library_path()
    lib = ctypes.CDLL(path)
    missing = []
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        f.restype = restype
        f.argtypes = argtypes
    if missing:
        raise _errors.LibraryNotFoundError(
            f"{path} has no {', '.join(missing)}: rebuild libwarpfft (cargo build --release) "
            "from a checkout that has c_core/src/xla_ffi.c"
        )
    return lib, path


lib, path = _load()


def _str(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def check(status, what):
    """Raises warpfft's exception for a failed C call (message read on this thread)."""
    if status != 0:
        message = _str(lib.warpfft_last_error())
        name = _str(lib.warpfft_status_name(int(status)))
        raise _errors.error_class(status)(f"{what}: {message}", status, name)


def default_opts():
    """warpfft_opts_default into a buffer with room for any version of the struct; the Opts
    view shares (and keeps alive) that buffer, so byref(opts) passes all of it."""
    buf = (ctypes.c_char * _STRUCT_ROOM)()
    check(lib.warpfft_opts_default(ctypes.cast(buf, POINTER(Opts))), "warpfft_opts_default")
    return Opts.from_buffer(buf)


def make_opts(modeord=0, method=0, upsampfac=2.0, max_subprob=0, bin_size=(0, 0, 0), device=0,
              stream=0):
    o = default_opts()
    o.modeord = int(modeord)
    o.method = int(method)
    o.upsampfac = float(upsampfac)
    o.max_subprob = int(max_subprob)
    for i in range(3):
        o.bin_size[i] = int(bin_size[i]) if i < len(bin_size) else 0
    o.device = int(device)
    o.stream = int(stream)
    return o


def modes3(n):
    arr = (c_int64 * 3)(1, 1, 1)
    for i, v in enumerate(n):
        arr[i] = int(v)
    return arr


_params_lock = threading.Lock()
_params_ok = {}


def validate(nufft_type, n_modes_c, ntransf, eps, precision, opts_kw, what="eps"):
    """Runs warpfft_plan_params (no GPU) on the arguments a plan would get, so a tolerance the
    precision cannot reach, a bad option or a too-large size raise here, at trace/call time,
    with the library's message. Results are memoised."""
    key = (nufft_type, tuple(n_modes_c), ntransf, float(eps), precision, opts_kw)
    with _params_lock:
        if key in _params_ok:
            return
    o = make_opts(**dict(opts_kw))
    info = (ctypes.c_char * _STRUCT_ROOM)()  # not read: only the status matters here
    st = lib.warpfft_plan_params(int(nufft_type), len(n_modes_c), modes3(n_modes_c),
                                 max(int(ntransf), 1), float(eps), int(precision),
                                 ctypes.byref(o), ctypes.cast(info, POINTER(PlanInfo)))
    if st != 0:
        message = _str(lib.warpfft_last_error())
        name = _str(lib.warpfft_status_name(int(st)))
        hint = f" (argument {what}={eps!r})" if st == _errors.ERR_BAD_TOL else ""
        raise _errors.error_class(st)(f"{message}{hint}", st, name)
    with _params_lock:
        _params_ok[key] = True


def validate3(dim, ntransf, eps, precision, opts_kw):
    """validate() for a type-3 plan: warpfft_plan_params3 with the points at the origin (the
    grids depend on the coordinates, which are only known when the transform runs; this checks
    dim, ntransf, the tolerance and the options, without a GPU). Memoised."""
    key = (3, int(dim), ntransf, float(eps), precision, opts_kw)
    with _params_lock:
        if key in _params_ok:
            return
    o = make_opts(**dict(opts_kw))
    info = (ctypes.c_char * _STRUCT_ROOM)()
    zero = (c_double * 3)(0.0, 0.0, 0.0)
    st = lib.warpfft_plan_params3(int(dim), max(int(ntransf), 1), float(eps), int(precision),
                                  ctypes.byref(o), zero, zero, zero, zero,
                                  ctypes.cast(info, POINTER(PlanInfo)))
    if st != 0:
        message = _str(lib.warpfft_last_error())
        name = _str(lib.warpfft_status_name(int(st)))
        hint = f" (argument eps={eps!r})" if st == _errors.ERR_BAD_TOL else ""
        raise _errors.error_class(st)(f"{message}{hint}", st, name)
    with _params_lock:
        _params_ok[key] = True
