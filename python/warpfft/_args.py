"""The reference's (cufinufft's) arguments, checked and converted for the C ABI: the option
keywords of Plan and the one-call functions (the table of what each does is in _compat.py's
docstring), eps clamped into the supported range, n_modes, isign, type 3's (lo, hi) bounds, and
the shape of an array-like. No GPU and no plan: Plan (_compat.py), the one-call functions
(_simple.py) and plan_params/direct_sample (_info.py) share them."""

import math
import warnings

import numpy as np

from . import _lib
from ._errors import ERR_BAD_DIM, invalid

_I32 = (-_lib.INT32_MAX - 1, _lib.INT32_MAX)
# Accepted and ignored (they change no result), range-checked: the reference's C int fields
# (any value for gpu_sort, where nonzero means "sort"; 0/1 for gpu_kerevalmeth).
_IGNORED = {"gpu_sort": _I32, "gpu_kerevalmeth": (0, 1), "gpu_maxbatchsize": (0, None),
            "gpu_obinsizex": _I32, "gpu_obinsizey": _I32, "gpu_obinsizez": _I32,
            "gpu_np": _I32, "debug": _I32}
_HONOURED = ("modeord", "upsampfac", "gpu_method", "gpu_binsizex", "gpu_binsizey",
             "gpu_binsizez", "gpu_maxsubprobsize", "gpu_device_id", "gpu_stream",
             "gpu_spreadinterponly", "check_points", "points_hint", "deterministic")
OPTION_NAMES = frozenset(_HONOURED) | frozenset(_IGNORED)


def option_int(name, value, lo, hi):
    """An integer option as the reference's option table (C int fields set through ctypes)
    takes it: an int, a bool (True/False are 1/0: ``gpu_sort=False``), a numpy integer or bool
    -- range-checked, where ctypes would wrap silently; floats and strings raise."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    return _lib.as_int(name, value, lo, hi)


def option_float(name, value):
    """A float option (upsampfac) as a C double field takes it: a real number (int, float,
    bool, numpy scalar); strings, None and complex numbers raise. Its range is the C
    library's to check (upsampfac: 0 or [1.25, 3]; NaN is refused there too)."""
    if isinstance(value, (str, bytes, complex, np.complexfloating)) or value is None:
        raise invalid(f"{name} must be a real number, not {type(value).__name__} {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise invalid(f"{name} must be a real number, not {type(value).__name__} "
                      f"{value!r}") from None


def shape_of(a):
    """The shape of an array-like without converting it (None if it has none)."""
    shape = getattr(a, "shape", None)
    if shape is None:
        return np.shape(a)
    return tuple(shape)


def stream_value(s):
    """A CUDA stream given as an int, None, ctypes pointer or a stream object -> int."""
    if s is None:
        return 0
    if hasattr(s, "value") and not isinstance(s, (int, np.integer)):  # ctypes.c_void_p
        return 0 if s.value is None else _lib.as_int("gpu_stream", s.value, 0, _lib.UINT64_MAX)
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, cupy, pycuda/numba
        v = getattr(s, attr, None)
        if v is not None and not callable(v):
            return _lib.as_int("gpu_stream", v, 0, _lib.UINT64_MAX)
    return _lib.as_int("gpu_stream", s, 0, _lib.UINT64_MAX)


def _check_points(v):
    """check_points: a bool (or 0/1) -> 0/1."""
    return option_int("check_points", v, 0, 1)


def normalize_options(type_, kwargs):
    """The reference's option keywords -> (our option values, a hashable key). Unknown names
    raise; ignored ones are range-checked."""
    for k in kwargs:
        if k not in OPTION_NAMES:
            raise invalid(f"Invalid option '{k}' (known: {', '.join(sorted(OPTION_NAMES))})")
    for k, (lo, hi) in _IGNORED.items():
        if k in kwargs:
            option_int(k, kwargs[k], lo, _lib.INT32_MAX if hi is None else hi)
    g = kwargs.get
    sio = option_int("gpu_spreadinterponly", g("gpu_spreadinterponly", 0), 0, 1)
    method = option_int("gpu_method", g("gpu_method", 0), 0, 4)
    if method == 3:  # the reference's OD: output-driven spreading; no effect on interpolation
        method = 3 if type_ in (1, 3) else 0
    elif method >= 2:  # SM, and 4 (block gather: an output-driven shared-memory method)
        method = 2 if type_ == 1 else 0
    # 0 (the default, the reference's "auto") goes to the C library as 0: the plan chooses
    # sigma with the kernel width; any other value goes as it is, the C refusing one outside
    # [1.25, 3] (InvalidArgumentError, a RuntimeError as the reference's plan failure).
    upsampfac = option_float("upsampfac", g("upsampfac", 0.0))
    bins = tuple(max(0, option_int(k, g(k, 0), *_I32))
                 for k in ("gpu_binsizex", "gpu_binsizey", "gpu_binsizez"))
    opts = {
        "modeord": option_int("modeord", g("modeord", 0), *_I32),
        "method": method,
        "upsampfac": upsampfac,
        "device": option_int("gpu_device_id", g("gpu_device_id", 0), 0, _lib.INT32_MAX),
        "stream": stream_value(g("gpu_stream")),
        "bin_size": bins,
        "max_subprob": max(0, option_int("gpu_maxsubprobsize", g("gpu_maxsubprobsize", 0),
                                         *_I32)),
        "spreadinterponly": sio,
        "check_points": _check_points(g("check_points", True)),
        # warpfft's own: the expected M per setpts, for the choice of upsampfac and width
        "points_hint": option_int("points_hint", g("points_hint", 0), 0, _lib.INT64_MAX),
        # warpfft's own: bitwise-reproducible results (docs/spreaders.md)
        "deterministic": option_int("deterministic", g("deterministic", False), 0, 1),
    }
    return opts, tuple(sorted(opts.items()))


# The C library's supported tolerance range per precision (warpfft.h: f32 1e-6..0.1, f64
# 1e-13..0.1). The reference accepts any eps (it clamps below machine epsilon with a warning):
# so does this layer, to the nearest supported value, with a warning.
_EPS_RANGE = {_lib.PRECISION_F32: (1e-6, 0.1), _lib.PRECISION_F64: (1e-13, 0.1)}


def effective_eps(eps, precision):
    """eps clamped into the supported range of `precision` (a warning says so); NaN or a
    non-number raises."""
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise invalid(f"eps must be a number, not {eps!r}") from None
    if e != e:
        raise invalid("eps is NaN")
    lo, hi = _EPS_RANGE[precision]
    if lo <= e <= hi:
        return e
    c = min(max(e, lo), hi)
    warnings.warn(f"eps = {e:g} is outside what warpfft supports at this precision "
                  f"[{lo:g}, {hi:g}]: using {c:g}", stacklevel=3)
    return c


def normalize_modes(nufft_type, n_modes):
    """(dim, n_modes tuple in the Python order) as the reference reads them. Type 3: n_modes
    is the dimension (an integer, as the reference requires) and the tuple (1,) * dim."""
    if nufft_type == 3:
        if isinstance(n_modes, (bool, np.bool_)) or not isinstance(n_modes, (int, np.integer)):
            raise invalid(f"For a type 3 plan, n_modes_or_dim must be a single number, the "
                          f"dimension: 1, 2 or 3 (got {n_modes!r})")
        if not 1 <= n_modes <= 3:
            raise invalid(f"Only dimensions 1, 2, and 3 supported (type 3 dim {n_modes})",
                          ERR_BAD_DIM)
        return int(n_modes), (1,) * int(n_modes)
    if isinstance(n_modes, (bool, float, str, bytes)):
        raise invalid(f"Invalid n_modes {n_modes!r}: an integer or a tuple of 1 to 3 integers")
    if np.ndim(n_modes) == 0:
        n = (n_modes,)
    else:
        if np.ndim(n_modes) != 1:
            raise invalid(f"Invalid n_modes {n_modes!r}: an integer or a flat tuple of 1 to 3 "
                          "integers")
        n = tuple(n_modes)
    if not 1 <= len(n) <= 3:
        raise invalid(f"Only dimensions 1, 2, and 3 supported (n_modes {n_modes!r})", ERR_BAD_DIM)
    return len(n), tuple(_lib.as_int("n_modes", v, -_lib.INT64_MAX, _lib.INT64_MAX) for v in n)


def bounds(name, b):
    """[(lo, hi), ...] per dimension, finite floats, lo <= hi (the C checks them again)."""
    try:
        pairs = [(float(lo), float(hi)) for lo, hi in b]
    except (TypeError, ValueError):
        raise invalid(f"{name} must be a sequence of (lo, hi) pairs, one per dimension "
                      f"(got {b!r})") from None
    if not 1 <= len(pairs) <= 3:
        raise invalid(f"{name} has {len(pairs)} (lo, hi) pairs: 1 to 3 (one per dimension)",
                      ERR_BAD_DIM)
    for lo, hi in pairs:
        if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise invalid(f"{name}: ({lo}, {hi}) must be finite with lo <= hi")
    return pairs


def normalize_isign(nufft_type, isign):
    """The sign of the exponent as the reference reads it: None -> -1 for type 2, +1 for types
    1 and 3; any other integer -> +1 if >= 0, else -1 (range-checked)."""
    if isign is None:
        isign = -1 if nufft_type == 2 else 1
    return 1 if _lib.as_int("isign", isign, -_lib.INT64_MAX, _lib.INT64_MAX) >= 0 else -1
