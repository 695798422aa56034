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


def test_points_hint_set_where_the_library_has_the_field():
    o = _buffer_opts(ctypes.sizeof(_lib.Opts), 0)
    assert _lib.set_points_hint(o, 1 << 20).points_hint == 1 << 20


def test_points_hint_left_alone_when_the_library_struct_is_older():
    """A library whose warpfft_opts ends before points_hint (56 bytes) reads no byte past its
    struct_size: nothing is written there (a hint only; such a library makes no choice)."""
    o = _buffer_opts(_lib.Opts.points_hint.offset, 0)
    o.points_hint = 0
    assert _lib.set_points_hint(o, 4096).points_hint == 0
    assert _lib.make_opts().struct_size >= _lib.Opts.points_hint.offset + 8


def test_make_opts_upsampfac_and_points_hint():
    """upsampfac 0 by default (chosen per plan, as the C library's default: no more 2.0) and
    any value passed on (the C library checks the range); points_hint 0 by default."""
    o = _lib.make_opts()
    assert o.upsampfac == 0.0 and o.points_hint == 0
    o = _lib.make_opts(upsampfac=1.5, points_hint=1 << 40)
    assert o.upsampfac == 1.5 and o.points_hint == 1 << 40
    import pytest
    for bad in (-1, 2**63, 1.0):
        with pytest.raises(warpfft.InvalidArgumentError, match="points_hint"):
            _lib.make_opts(points_hint=bad)


def test_points_hint_for_rounds_to_the_nearest_power_of_two():
    """The rule the one-call functions and the torch ops use (the XLA handler's C twin is
    tested in c_core/tests/test_xla_ffi.c): nearest power of two, a tie up, 0 for no points."""
    cases = {-3: 0, 0: 0, 1: 1, 2: 2, 3: 4, 5: 4, 6: 8, 7: 8, 1000: 1024, 1535: 1024,
             1536: 2048, 10**6: 2**20, 2**62 + 2**61: 2**63 // 2, _lib.INT64_MAX: 2**62}
    for m, want in cases.items():
        assert _lib.points_hint_for(m) == want, m


def test_plan_info_has_room_for_a_larger_library_struct():
    """new_plan_info: a PlanInfo over a buffer with room for any later warpfft_plan_info (the
    library writes its whole struct: a bare PlanInfo() overran by 16 bytes once the struct
    gained predicted_ms and kernel, and a later field would do it again)."""
    info = _lib.new_plan_info()
    opts = _lib.default_opts()
    _lib.call("plan_params", 1, 1, _lib.n_modes_array((64,)), 1, 1e-6, _lib.F32,
              ctypes.byref(opts), ctypes.byref(info))
    assert info.kernel == 1 and info.predicted_ms > 0


def test_info_dict_of_a_library_without_the_new_fields():
    """kernel 0 and predicted_ms 0 (a library older than the declaration writes neither; type
    3 predicts nothing) read as None, not as a kernel 0 or a time of 0 ms."""
    from warpfft._plan import info_dict
    info = _lib.new_plan_info()
    info.dim = 1
    d = info_dict(info)
    assert d["kernel"] is None and d["predicted_ms"] is None
    info.kernel, info.predicted_ms = 1, 0.25
    d = info_dict(info)
    assert d["kernel"] == "sinh" and d["predicted_ms"] == 0.25


def test_deterministic_set_where_the_library_has_the_field():
    """opts.deterministic (issue 29): written where the library's warpfft_opts has it; a
    library whose struct ends before it (64 bytes) cannot keep the promise: 1 raises there, 0
    writes nothing (every plan of such a library is the default kind)."""
    import pytest
    o = _buffer_opts(ctypes.sizeof(_lib.Opts), 0)
    assert _lib.set_deterministic(o, 1).deterministic == 1
    old = _buffer_opts(_lib.Opts.deterministic.offset, 0)
    old.deterministic = 5  # past the old struct: must stay untouched
    assert _lib.set_deterministic(old, 0).deterministic == 5
    with pytest.raises(warpfft.InvalidArgumentError, match="no deterministic option"):
        _lib.set_deterministic(old, 1)
    assert _lib.make_opts().deterministic == 0
    assert _lib.make_opts(deterministic=1).deterministic == 1
    for bad in (2, -1, 0.5, True):  # ints only here: Plan's keywords take bools (_args)
        with pytest.raises(warpfft.InvalidArgumentError, match="deterministic"):
            _lib.make_opts(deterministic=bad)


def test_normalize_options_deterministic_and_method_od():
    """Plan's keywords: deterministic (False by default) and the reference's gpu_method=3 (OD:
    output-driven spreading for types 1 and 3; no effect on type 2's interpolation)."""
    from warpfft._args import normalize_options
    assert normalize_options(1, {})[0]["deterministic"] == 0
    assert normalize_options(1, {"deterministic": True})[0]["deterministic"] == 1
    assert normalize_options(1, {"gpu_method": 3})[0]["method"] == 3
    assert normalize_options(3, {"gpu_method": 3})[0]["method"] == 3
    assert normalize_options(2, {"gpu_method": 3})[0]["method"] == 0
    assert normalize_options(1, {"gpu_method": 4})[0]["method"] == 2
