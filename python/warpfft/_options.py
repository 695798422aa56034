"""The option table of the C library, and the one loop every front-end sets options through.

The C library owns one table of plan options (warpfft.h: ``warpfft_opt_count``,
``warpfft_opt_describe``, ``warpfft_opts_set``; c_core/src/params/options.c): per option its
name (the ``warpfft_opts`` field), type, default, bounds, the reference's spellings (cuFINUFFT's
opts fields: ``gpu_method``, ``gpu_binsizex``, ...; jax-finufft's ``gpu_upsampfac``) and a line
of doc, and the reference's options warpfft accepts without effect (``gpu_sort``, ...). It is
read here once (:data:`TABLE`). A front-end -- Plan and the one-call functions (_args.py), the
reference's options struct (_nufft_opts.py), warpfft.jax (jax/options.py), warpfft.torch
(torch/__init__.py) -- keeps only a map from its keyword spellings to the table's names
(:func:`spelled`: the table's own map, for a front-end that takes the reference's spellings)
and calls :func:`record`, which sets each value by name through ``warpfft_opts_set``: the C
library checks it against the table and a bad value raises its message, the same in every
interface. No default or bound of an option is written in Python
(python/tests/test_option_table.py checks that, and walks the table through every interface).

A record (:class:`warpfft._lib.Opts`) is what crosses into C: by pointer for the C calls, as
its bytes in hex (:func:`to_hex`, :func:`from_hex`) for the XLA handlers (one attribute) and the
torch ops (one argument).
"""

import ctypes
import functools
import operator
import struct
from collections import namedtuple

import numpy as np

from . import _lib
from ._errors import invalid

_TYPES = {1: "int32", 2: "int64", 3: "uint64", 4: "float64"}
_FORMATS = {"int32": "<i", "int64": "<q", "uint64": "<Q", "float64": "<d"}

Row = namedtuple("Row", "name aliases values doc type offset default min max ref_default "
                        "zero_auto no_effect")
Row.__doc__ = """One option of the C library's table (warpfft_opt_describe): ``name`` its
warpfft_opts field ("upsampfac", "bin_size[0]"), ``aliases`` the reference's spellings,
``values`` an enumeration's value names, ``type`` "int32"/"int64"/"uint64"/"float64",
``offset`` in the record (-1: ``no_effect``, the reference's option warpfft ignores), its
``default``, ``min``, ``max`` (None for uint64), ``ref_default`` (the reference's default),
``zero_auto`` (0 is taken besides [min, max]: chosen per plan)."""


def _read_table():
    rows = {}
    for i in range(_lib.lib.warpfft_opt_count()):
        d = _lib.OptDesc()
        d.struct_size = ctypes.sizeof(d)
        _lib.check(_lib.lib.warpfft_opt_describe(i, ctypes.byref(d)), "warpfft_opt_describe")
        kind = _TYPES.get(d.type)
        if kind == "float64":
            lim = (d.float_default, d.float_min, d.float_max, d.float_ref_default)
        elif kind == "uint64":
            lim = (0, None, None, 0)
        else:
            lim = (d.int_default, d.int_min, d.int_max, d.int_ref_default)
        name = _lib._str(d.name)
        rows[name] = Row(name, tuple(_lib._str(d.aliases).split()),
                         tuple(_lib._str(d.values).split()), _lib._str(d.doc), kind, d.offset,
                         *lim, bool(d.flags & 1), bool(d.flags & 2))
    return rows


TABLE = _read_table()
# The reference's spellings of the table's options, and warpfft's own options by their names:
# the keywords a front-end that follows the reference takes (Plan, the one-call functions,
# warpfft.torch), each -> its row's name.
SPELLINGS = {}
for _row in TABLE.values():
    for _spelling in _row.aliases or (_row.name,):
        SPELLINGS[_spelling] = _row.name


def spelled(keyword):
    """The table's name of a reference spelling (or of warpfft's own option), else None."""
    return SPELLINGS.get(keyword)


def default(name):
    """The table's default of option `name` (a bool for a 0/1 switch of warpfft's)."""
    return TABLE[name].default


def ref_default(name):
    """The reference's default of option `name` (the table's, where warpfft has its own)."""
    return TABLE[name].ref_default


def value(name, label):
    """The value an enumeration option gives `label` (method "AUTO": 0, "OD": 3; modeord
    "FFT": 1), from the table's value names."""
    row = TABLE[name]
    return row.min + row.values.index(label)


def text(name, value):
    """`value` as the text the C library parses: integers (bools and numpy scalars too, as the
    reference's ctypes struct takes them) in decimal, floats in the digits that read back as
    them. What is not a real number raises here; its range is the table's to check."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    try:
        return str(operator.index(value))
    except TypeError:
        pass
    raise invalid(f"{name} must be a number, not {type(value).__name__} {value!r}")


def set_option(opts, name, value):
    """Sets option `name` (a table name or a reference spelling) of the record `opts` through
    the C library's table; InvalidArgumentError with its message for a bad value."""
    st = _lib.lib.warpfft_opts_set(ctypes.byref(opts), name.encode(),
                                   text(name, value).encode())
    if st:
        raise _lib.make_error(st)


def record(items=()):
    """A record with the table's defaults, then each ``(name, value)`` of `items` (a tuple, in
    order) set through the table. Made once per distinct items and shared by its callers:
    read-only -- never change its bytes (:func:`copy` gives a record to change). Distinct
    means of distinct types too: 1 and 1.0 (or True) are equal keys to a plain cache, but the
    table takes 1 and refuses 1.0 for an integer option, so the types are part of the key."""
    return _record(tuple((name, type(value), value) for name, value in items))


@functools.lru_cache(maxsize=512)
def _record(typed_items):
    opts = _lib.default_opts()
    for name, _, value in typed_items:
        set_option(opts, name, value)
    return opts


def copy(opts):
    """A record of the same bytes that may be changed."""
    return _from_bytes(bytes(opts)[:opts.struct_size])


def get(opts, name):
    """The value of option `name`'s field in the record (its default for a row with no field)."""
    row = TABLE[name]
    if row.offset < 0:
        return row.default
    return struct.unpack_from(_FORMATS[row.type], bytes(opts), row.offset)[0]


def to_hex(opts):
    """The record's bytes (its struct_size of them) in hex: how the options cross as one value
    into the XLA handlers and the torch ops."""
    return bytes(opts)[:opts.struct_size].hex()


def _from_bytes(raw):
    opts = _lib.default_opts()
    ctypes.memmove(ctypes.addressof(opts), raw, min(len(raw), ctypes.sizeof(opts)))
    return opts


@functools.lru_cache(maxsize=512)
def from_hex(h):
    """The record of :func:`to_hex`'s text (made once per text and shared: read-only); the C
    library checks its values where it uses it."""
    return _from_bytes(bytes.fromhex(h))


def describe():
    """The table as a list of :class:`Row` (warpfft.option_table())."""
    return list(TABLE.values())
