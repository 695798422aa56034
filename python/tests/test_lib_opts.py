"""The one module into C (warpfft._lib): its make_opts (check_points 0 by default, as the C
library, which the framework ops need; Plan passes its own), check_points written only where the
library's warpfft_opts has the field, and the bounded memo of validated plan arguments. No GPU,
no framework needed."""

import ctypes

from _support import warpfft  # skips the module without a library

_lib = warpfft._lib


def _buffer_opts(struct_size, check_points):
    buf = (ctypes.c_char * 4096)()
    o = _lib.Opts.from_buffer(buf)
    o.struct_size = struct_size
    o.check_points = check_points
    o._keep = buf
    return o


def test_check_points_set_where_the_library_has_the_field():
    o = _buffer_opts(ctypes.sizeof(_lib.Opts), 1)
    assert _lib.set_check_points(o, 0).check_points == 0


def test_check_points_left_alone_when_the_library_struct_is_older():
    field = _lib.Opts.check_points
    o = _buffer_opts(field.offset, 7)  # a library without the field
    assert _lib.set_check_points(o, 0).check_points == 7  # not written past its struct


def test_make_opts_defaults_and_the_plan_option():
    o = _lib.make_opts(modeord=1)
    assert o.modeord == 1 and o.check_points == 0
    assert o.struct_size >= _lib.Opts.check_points.offset + 4
    assert _lib.make_opts(check_points=1).check_points == 1
    # Plan's default (the reference raises for a bad point at setpts)
    from warpfft._args import normalize_options
    o, _ = normalize_options(1, {})
    assert _lib.make_opts(**o).check_points == 1


def test_make_opts_range_checks():
    import pytest
    with pytest.raises(warpfft.InvalidArgumentError, match="gpu_device_id"):
        _lib.make_opts(device=-1)
    with pytest.raises(warpfft.InvalidArgumentError, match="bin size"):
        _lib.make_opts(bin_size=(2**31, 0, 0))


def test_plans_still_validate_and_the_memo_is_bounded():
    _lib.validate(1, [16, 12], 1, 1e-5, _lib.F32, (("modeord", 1),))
    n = _lib._PARAMS_OK_MAX + 300
    for k in range(n):  # a sweep over many tolerances: the memo stays bounded
        _lib.validate(1, [16], 1, 1e-3 * (1 + k / n), _lib.F32, ())
    assert len(_lib._params_ok) <= _lib._PARAMS_OK_MAX
    _lib.validate3(2, 3, 1e-6, _lib.F64, ())
    assert len(_lib._params_ok) <= _lib._PARAMS_OK_MAX


def test_every_declared_function_is_in_the_library():
    # the framework ops' functions are declared here too: one module loads the library
    for name in ("warpfft_pool_acquire", "warpfft_pool_release", "warpfft_pool_clear",
                 "warpfft_pool_set_limits", "warpfft_pool_get_info", "warpfft_plan_points_id",
                 "warpfft_xla_plans_created", "warpfft_xla_cache_clear"):
        assert name in _lib.SIGNATURES
        assert getattr(_lib.lib, name).argtypes is not None or name.startswith("warpfft_xla")
