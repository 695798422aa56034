"""The reference's (cufinufft's) arguments, checked and converted for the C ABI: the option
keywords of Plan and the one-call functions (the table of what each does is in _compat.py's
docstring) onto the C library's option table, eps run at the nearest supported value, n_modes,
isign, type 3's (lo, hi) bounds, and the shape of an array-like. No GPU and no plan: Plan
(_compat.py), the one-call functions (_simple.py) and plan_params/direct_sample (_info.py)
share them."""

import ctypes
import math
import operator
import warnings

import numpy as np

from . import _lib, _options
from ._errors import ERR_BAD_DIM, error_class, invalid

# Plan's keywords are the option table's spellings (the reference's opts field names, and
# warpfft's own options by name: _options.SPELLINGS), each set through the table, which checks
# it. What Plan adds is the reference's meaning of a few values:
#   gpu_method   4 (block gather, an output-driven shared-memory method) is SM; for type 2
#                (where the reference says they have no effect) 2..4 are auto, and 3 (OD, a
#                spreading method) is kept for types 1 and 3;
#   gpu_binsizex/y/z, gpu_maxsubprobsize: <= 0 is automatic, as there;
#   gpu_stream   a stream object is its handle (stream_value);
# and one default of its own: check_points is 1 (setpts raises for a bad point, as the
# reference; the C library's default is 0, no host wait).
OPTION_NAMES = frozenset(_options.SPELLINGS)
PLAN_DEFAULTS = {"check_points": 1}
_AUTO_WHEN_NEGATIVE = frozenset(("gpu_binsizex", "gpu_binsizey", "gpu_binsizez",
                                 "gpu_maxsubprobsize"))


# The reference's gpu_method numbers (cuFINUFFT: 1 GM, 2 SM, 3 OD, 4 block gather).
_REF_SM, _REF_OD, _REF_BLOCK_GATHER = 2, 3, 4


def _plan_method(type_, value):
    """The reference's gpu_method for a plan of `type_`, as the option table's method (other
    values go on: the table checks them)."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    try:
        m = operator.index(value)
    except TypeError:  # not an integer: the table says so
        return value
    auto = _options.value("method", "AUTO")
    if m == _REF_OD:  # output-driven spreading; no effect on interpolation
        return _options.value("method", "OD") if type_ in (1, 3) else auto
    if m in (_REF_SM, _REF_BLOCK_GATHER):  # block gather: an output-driven shared-memory method
        return _options.value("method", "SM") if type_ == 1 else auto
    return value


def _reference_value(type_, keyword, value):
    """A keyword's value with the reference's meaning (the comment above)."""
    if keyword == "gpu_method":
        return _plan_method(type_, value)
    if keyword == "gpu_stream":
        return stream_value(value)
    if keyword in _AUTO_WHEN_NEGATIVE:
        try:
            return max(0, value) if not isinstance(value, (float, np.floating)) else value
        except TypeError:
            return value
    return value


def shape_of(a):
    """The shape of an array-like without converting it (None if it has none)."""
    shape = getattr(a, "shape", None)
    if shape is None:
        return np.shape(a)
    return tuple(shape)


def stream_value(s):
    """A CUDA stream given as an int, None, ctypes pointer or a stream object -> its handle
    (the option table checks it: an integer that fits a CUstream)."""
    if s is None:
        return 0
    if hasattr(s, "value") and not isinstance(s, (int, np.integer)):  # ctypes.c_void_p
        return 0 if s.value is None else s.value
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, cupy, pycuda/numba
        v = getattr(s, attr, None)
        if v is not None and not callable(v):
            return v
    return s


def normalize_options(type_, kwargs):
    """The reference's option keywords -> (the options record, the (table name, value) items
    it was made of). Unknown names raise; every value is set through the option table (its
    message for a bad one), the reference's options without effect included."""
    for k in kwargs:
        if k not in OPTION_NAMES:
            raise invalid(f"Invalid option '{k}' (known: {', '.join(sorted(OPTION_NAMES))})")
    items = dict(PLAN_DEFAULTS)
    for k, v in kwargs.items():
        v = _reference_value(type_, k, v)
        _options.text(k, v)  # not a number: raised naming the keyword as given
        items[_options.spelled(k)] = v
    items = tuple(items.items())
    return _options.record(items), items


def real_data_of(opts):
    """The record's real_data option (0 with a library whose table has no such row)."""
    return _options.get(opts, "real_data") if "real_data" in _options.TABLE else 0


def effective_eps(eps, precision):
    """The tolerance a plan of `precision` runs at (the C library's rule, warpfft_tol_effective:
    eps itself inside the supported range, else its nearer end, as the reference raises an eps
    below machine precision to it), with a warning when that is not eps; NaN or a non-number
    raises."""
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise invalid(f"eps must be a number, not {eps!r}") from None
    out = ctypes.c_double()
    st = _lib.lib.warpfft_tol_effective(e, precision, ctypes.byref(out))
    if st:
        raise error_class(st)(f"{_lib.last_error()} (argument eps={eps!r})", st,
                              _lib.status_name(st))
    if out.value != e:
        lo, hi = ctypes.c_double(), ctypes.c_double()
        _lib.check(_lib.lib.warpfft_tol_bounds(precision, ctypes.byref(lo), ctypes.byref(hi)))
        warnings.warn(f"eps = {e:g} is outside what warpfft supports at this precision "
                      f"[{lo.value:g}, {hi.value:g}]: using {out.value:g}", stacklevel=3)
    return out.value


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
