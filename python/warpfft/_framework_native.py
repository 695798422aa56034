"""The C entry points warpfft.jax and warpfft.torch call, loaded through ctypes.

The library is the file ``warpfft`` itself loaded (``_lib.path``); ctypes hands back the same
handle for the same file, so error messages are read through ``_lib``.
Only the functions used here are declared, on a private CDLL object; the option structs are
the package's (``_lib.Opts``, ``_lib.PlanInfo``), which track warpfft.h.
"""

import ctypes
import threading
from ctypes import POINTER, c_double, c_int, c_int64, c_uint64, c_void_p

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


def _load():
    path = _lib.path  # the file warpfft loaded (its search order, its LibraryNotFoundError)
    lib = ctypes.CDLL(path)  # its own object: these argtypes differ from _lib's declarations
    missing = _lib.declare(lib, _SIGNATURES)
    if missing:
        raise _errors.LibraryNotFoundError(
            f"{path} has no {', '.join(missing)}: rebuild libwarpfft (cargo build --release) "
            "from a checkout that has c_core/src/framework/xla_ffi.c"
        )
    return lib, path


lib, path = _load()


def _raise(status, prefix="", suffix=""):
    """Raises warpfft's exception for a failed C call (message read on this thread)."""
    raise _errors.error_class(status)(f"{prefix}{_lib.last_error()}{suffix}", status,
                                      _lib.status_name(status))


def check(status, what):
    """Raises warpfft's exception for a failed C call, naming the call."""
    if status != 0:
        _raise(status, f"{what}: ")


def default_opts():
    """warpfft_opts_default into a buffer with room for any version of the struct; the Opts
    view shares (and keeps alive) that buffer, so byref(opts) passes all of it."""
    buf = (ctypes.c_char * _STRUCT_ROOM)()
    check(lib.warpfft_opts_default(ctypes.cast(buf, POINTER(Opts))), "warpfft_opts_default")
    return Opts.from_buffer(buf)


def unchecked_points(o):
    """Asks for the unchecked set-points (``check_points = 0``: no host wait and no
    WARPFFT_ERR_BAD_POINTS in setpts; non-finite points give all-NaN outputs) where the loaded
    library's warpfft_opts has that field: the Python declaration has it and the library's
    struct_size covers it. Against a library without the field this changes nothing (its
    setpts is today's). The framework ops set points on every call, so they must not wait."""
    field = getattr(type(o), "check_points", None)
    if field is not None and o.struct_size >= field.offset + field.size:
        o.check_points = 0
    return o


def make_opts(modeord=0, method=0, upsampfac=2.0, max_subprob=0, bin_size=(0, 0, 0), device=0,
              stream=0):
    """The options of a plan made for warpfft.jax / warpfft.torch (unchecked set-points)."""
    o = unchecked_points(default_opts())
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
    return _lib.n_modes_array([int(v) for v in n])


_params_lock = threading.Lock()
_params_ok = {}


def _known_valid(key):
    return key in _params_ok  # one dict lookup (atomic): no lock needed to read


def _remember_valid(key, status, what, eps):
    """Raises for a failed plan_params call (naming the argument for a tolerance the precision
    cannot reach); memoises a passing one."""
    if status != 0:
        hint = f" (argument {what}={eps!r})" if status == _errors.ERR_BAD_TOL else ""
        _raise(status, suffix=hint)
    with _params_lock:
        _params_ok[key] = True


def validate(nufft_type, n_modes_c, ntransf, eps, precision, opts_kw, what="eps"):
    """Runs warpfft_plan_params (no GPU) on the arguments a plan would get, so a tolerance the
    precision cannot reach, a bad option or a too-large size raise here, at trace/call time,
    with the library's message. Results are memoised."""
    key = (nufft_type, tuple(n_modes_c), ntransf, float(eps), precision, opts_kw)
    if _known_valid(key):
        return
    o = make_opts(**dict(opts_kw))
    info = (ctypes.c_char * _STRUCT_ROOM)()  # not read: only the status matters here
    st = lib.warpfft_plan_params(int(nufft_type), len(n_modes_c), modes3(n_modes_c),
                                 max(int(ntransf), 1), float(eps), int(precision),
                                 ctypes.byref(o), ctypes.cast(info, POINTER(PlanInfo)))
    _remember_valid(key, st, what, eps)


def validate3(dim, ntransf, eps, precision, opts_kw):
    """validate() for a type-3 plan: warpfft_plan_params3 with the points at the origin (the
    grids depend on the coordinates, which are only known when the transform runs; this checks
    dim, ntransf, the tolerance and the options, without a GPU). Memoised."""
    key = (3, int(dim), ntransf, float(eps), precision, opts_kw)
    if _known_valid(key):
        return
    o = make_opts(**dict(opts_kw))
    info = (ctypes.c_char * _STRUCT_ROOM)()
    zero = (c_double * 3)(0.0, 0.0, 0.0)
    st = lib.warpfft_plan_params3(int(dim), max(int(ntransf), 1), float(eps), int(precision),
                                  ctypes.byref(o), zero, zero, zero, zero,
                                  ctypes.cast(info, POINTER(PlanInfo)))
    _remember_valid(key, st, "eps", eps)
