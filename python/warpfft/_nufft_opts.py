"""The reference's (cufinufft's) options struct as Python sees it: ``NufftOpts``, a ctypes
Structure with the fields, types and order of its C ``cufinufft_opts`` (so code that reads its
field names, offsets or size keeps working), its defaults, and the conversions between it and
the option keywords Plan takes.

``Plan._opts`` is one of these, filled from the plan's keywords (introspection only: changing
it after the plan exists changes nothing, as in the reference). ``cufinufft._cufinufft``
(``warpfft.cufinufft._cufinufft``) exports it with ``_default_opts``, and its ``_make_plan``
reads one back into keywords.
"""

import ctypes
from ctypes import c_double, c_int, c_void_p

from ._errors import invalid

# (field, C type, the reference's default: cufinufft_default_opts of v2.5.1)
_FIELDS = (
    ("upsampfac", c_double, 0.0),  # 0: automatic
    ("gpu_method", c_int, 0),  # 0: automatic
    ("gpu_sort", c_int, 1),
    ("gpu_binsizex", c_int, 0),
    ("gpu_binsizey", c_int, 0),
    ("gpu_binsizez", c_int, 0),
    ("gpu_obinsizex", c_int, 0),
    ("gpu_obinsizey", c_int, 0),
    ("gpu_obinsizez", c_int, 0),
    ("gpu_maxsubprobsize", c_int, 1024),
    ("gpu_kerevalmeth", c_int, 1),
    ("gpu_spreadinterponly", c_int, 0),
    ("gpu_maxbatchsize", c_int, 0),
    ("gpu_device_id", c_int, 0),
    ("gpu_stream", c_void_p, None),
    ("modeord", c_int, 0),
    ("gpu_np", c_int, 0),
    ("debug", c_int, 0),
)
DEFAULTS = {name: value for name, _, value in _FIELDS}


class NufftOpts(ctypes.Structure):
    """The reference's options (its C ``cufinufft_opts``), field for field. Plan takes the
    same names as keywords; see ``warpfft._compat`` for what each does here."""

    _fields_ = [(name, ctype) for name, ctype, _ in _FIELDS]


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
