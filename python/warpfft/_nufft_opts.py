"""The reference's (cufinufft's) options struct as Python sees it: ``NufftOpts``, a ctypes
Structure with the fields, types and order of its C ``cufinufft_opts`` (so code that reads its
field names, offsets or size keeps working), its defaults, and the conversions between it and
the option keywords Plan takes.

``Plan._opts`` is one of these, filled from the plan's keywords (introspection only: changing
it after the plan exists changes nothing, as in the reference). ``cufinufft._cufinufft``
(``warpfft.cufinufft._cufinufft``) exports it with ``_default_opts``, and its ``_make_plan``
reads one back into keywords. The fields' layout is the reference's C struct (written here: it
is that ABI); each field's default is the reference's, from the C library's option table
(``ref_default`` of the row its name spells, _options.py).
"""

import ctypes
from ctypes import c_double, c_int, c_void_p

from . import _options
from ._errors import invalid

# (field, C type): cufinufft_opts of v2.5.1, in order
_FIELDS = (
    ("upsampfac", c_double),
    ("gpu_method", c_int),
    ("gpu_sort", c_int),
    ("gpu_binsizex", c_int),
    ("gpu_binsizey", c_int),
    ("gpu_binsizez", c_int),
    ("gpu_obinsizex", c_int),
    ("gpu_obinsizey", c_int),
    ("gpu_obinsizez", c_int),
    ("gpu_maxsubprobsize", c_int),
    ("gpu_kerevalmeth", c_int),
    ("gpu_spreadinterponly", c_int),
    ("gpu_maxbatchsize", c_int),
    ("gpu_device_id", c_int),
    ("gpu_stream", c_void_p),
    ("modeord", c_int),
    ("gpu_np", c_int),
    ("debug", c_int),
)


def _ref_default(name, ctype):
    value = _options.ref_default(_options.spelled(name))
    return (value or None) if ctype is c_void_p else value  # a stream of 0 is NULL


# the reference's defaults (cufinufft_default_opts), from the option table
DEFAULTS = {name: _ref_default(name, ctype) for name, ctype in _FIELDS}


class NufftOpts(ctypes.Structure):
    """The reference's options (its C ``cufinufft_opts``), field for field. Plan takes the
    same names as keywords; see ``warpfft._compat`` for what each does here."""

    _fields_ = list(_FIELDS)


def _struct(opts):
    """The NufftOpts behind `opts`: the struct itself, ``ctypes.byref(struct)`` or
    ``ctypes.pointer(struct)`` (the forms the reference's ctypes functions take)."""
    if isinstance(opts, NufftOpts):
        return opts
    obj = getattr(opts, "_obj", None)  # ctypes.byref(...)
    if isinstance(obj, NufftOpts):
        return obj
    if isinstance(opts, ctypes.POINTER(NufftOpts)):
        if not opts:
            raise invalid("options: NULL pointer to NufftOpts")
        return opts.contents
    raise invalid(f"options must be a NufftOpts (or a pointer to one), not "
                  f"{type(opts).__name__}")


def default_opts(opts):
    """Fills `opts` (a NufftOpts, or byref/pointer to one) with the reference's defaults, as
    its ``cufinufft_default_opts``; returns None."""
    s = _struct(opts)
    for name, value in DEFAULTS.items():
        setattr(s, name, value)


def opts_struct(kwargs):
    """A NufftOpts with the defaults, then the reference's option keywords in `kwargs` (already
    checked by _args.normalize_options; warpfft's own, check_points and points_hint, have no
    field). A stream object is stored as its handle."""
    from ._args import stream_value

    s = NufftOpts()
    default_opts(s)
    for name, value in kwargs.items():
        if name not in DEFAULTS:
            continue
        if name == "gpu_stream":
            value = stream_value(value) or None
        elif name != "upsampfac":
            value = int(value)
        setattr(s, name, value)
    return s


def opts_kwargs(opts):
    """The option keywords for Plan of the fields of `opts` that differ from the reference's
    defaults (a default that means "automatic" there, e.g. gpu_maxsubprobsize 1024, stays
    automatic here). None (a NULL options pointer in the reference) gives {}."""
    if opts is None:
        return {}
    s = _struct(opts)
    out = {}
    for name, default in DEFAULTS.items():
        value = getattr(s, name)
        if value != default:
            out[name] = 0 if value is None else value
    return out
