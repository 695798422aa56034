"""The framework ops' plan options (warpfft._framework_native): the unchecked set-points
(check_points = 0) asked for where the library's warpfft_opts has the field, and nothing
changed where it does not (today's library). No GPU, no framework needed."""

import ctypes

from _support import warpfft  # skips the module without a library
from warpfft import _framework_native as native

_lib = warpfft._lib


class _OptsWithCheck(ctypes.Structure):
    _fields_ = _lib.Opts._fields_ + [("check_points", ctypes.c_int32)]


def _buffer_opts(cls, struct_size, check_points):
    buf = (ctypes.c_char * 4096)()
    o = cls.from_buffer(buf)
    o.struct_size = struct_size
    if hasattr(o, "check_points"):
        o.check_points = check_points
    o._keep = buf
    return o


def test_check_points_set_to_zero_when_the_library_has_the_field():
    o = _buffer_opts(_OptsWithCheck, ctypes.sizeof(_OptsWithCheck), 1)
    assert native.unchecked_points(o).check_points == 0


def test_check_points_left_alone_when_the_library_struct_is_older():
    field = _OptsWithCheck.check_points
    o = _buffer_opts(_OptsWithCheck, field.offset, 7)  # a library without the field
    assert native.unchecked_points(o).check_points == 7  # not written past its struct


def test_todays_opts_pass_through_and_plans_still_validate():
    o = native.make_opts(modeord=1)
    assert o.modeord == 1 and o.struct_size >= _lib.Opts.spreadinterponly.offset + 4
    native.validate(1, [16, 12], 1, 1e-5, native.F32, (("modeord", 1),))
