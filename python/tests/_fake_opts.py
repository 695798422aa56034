"""What the fake C library (_fake.py and its parts) reads of a warpfft_opts record: its fields
by their option-table names, unpacked here with struct from the table's offsets and types."""

import struct

_FORMATS = {"int32": "<i", "int64": "<q", "uint64": "<Q", "float64": "<d"}


def opts_fields(opts):
    """A warpfft_opts record's fields by their option-table names, read here with struct (no
    call into warpfft's Python, whose per-call work some tests count)."""
    from warpfft import _options

    raw = bytes(opts)
    return {name: struct.unpack_from(_FORMATS[row.type], raw, row.offset)[0]
            for name, row in _options.TABLE.items() if row.offset >= 0}


class FieldView:
    """A record's fields as attributes (``view.modeord``), read once."""

    def __init__(self, opts):
        self.__dict__.update(opts_fields(opts))
