"""The one module into C (warpfft._lib) and the option records (warpfft._options): a record
made through the C library's option table (defaults the table's, values set by name and checked
there), check_points 0 by default as the C library (which the framework ops need; Plan passes
its own), its hex form, and the bounded memo of validated plan arguments. No GPU, no framework
needed."""

import ctypes

from _support import warpfft  # skips the module without a library

_lib = warpfft._lib
_options = warpfft._options


def test_record_defaults_and_the_plan_option():
    o = _options.record((("modeord", 1),))
    assert o.modeord == 1 and o.check_points == 0
    assert o.struct_size >= _options.TABLE["check_points"].offset + 4
    assert _options.record((("check_points", 1),)).check_points == 1
    # Plan's default (the reference raises for a bad point at setpts): its own, declared
    from warpfft._args import PLAN_DEFAULTS, normalize_options
    assert normalize_options(1, {})[0].check_points == PLAN_DEFAULTS["check_points"] == 1


def test_record_range_checks_are_the_tables():
    import pytest
    with pytest.raises(warpfft.InvalidArgumentError, match=r"opts.device = -1; must be >= 0"):
        _options.record((("device", -1),))
    with pytest.raises(warpfft.InvalidArgumentError, match=r"opts.bin_size\[0\] = 2147483648"):
        _options.record((("gpu_binsizex", 2**31),))  # a reference spelling, as the table has it
    with pytest.raises(warpfft.InvalidArgumentError, match="points_hint must be a number"):
        _options.record((("points_hint", "many"),))


def test_record_hex_round_trip_and_copies():
    o = _options.record((("upsampfac", 1.5), ("points_hint", 1 << 40), ("deterministic", 1)))
    h = _options.to_hex(o)
    assert len(h) == 2 * o.struct_size
    back = _options.from_hex(h)
    assert (back.upsampfac, back.points_hint, back.deterministic) == (1.5, 1 << 40, 1)
    c = _options.copy(back)
    _options.set_option(c, "modeord", 1)
    assert c.modeord == 1 and back.modeord == 0  # the shared record is untouched


def test_plans_still_validate_and_the_memo_is_bounded():
    _lib.validate(1, [16, 12], 1, 1e-5, _lib.F32, _options.record((("modeord", 1),)))
    n = _lib._PARAMS_OK_MAX + 300
    for k in range(n):  # a sweep over many tolerances: the memo stays bounded
        _lib.validate(1, [16], 1, 1e-3 * (1 + k / n), _lib.F32, _options.record())
    assert len(_lib._params_ok) <= _lib._PARAMS_OK_MAX
    _lib.validate3(2, 3, 1e-6, _lib.F64, _options.record())
    assert len(_lib._params_ok) <= _lib._PARAMS_OK_MAX


def test_every_declared_function_is_in_the_library():
    # the framework ops' functions are declared here too: one module loads the library
    for name in ("warpfft_pool_acquire", "warpfft_pool_release", "warpfft_pool_clear",
                 "warpfft_pool_set_limits", "warpfft_pool_get_info", "warpfft_plan_points_id",
                 "warpfft_pool_acquire_toeplitz", "warpfft_pool_release_toeplitz",
                 "warpfft_xla_plans_created", "warpfft_xla_toeplitz_apply"):
        assert name in _lib.SIGNATURES
        assert getattr(_lib.lib, name).argtypes is not None or name.startswith("warpfft_xla")


def test_record_upsampfac_and_points_hint():
    """upsampfac 0 by default (chosen per plan, as the C library's default: no more 2.0) and
    any value in the table's range; points_hint 0 by default."""
    o = _options.record()
    assert o.upsampfac == 0.0 and o.points_hint == 0
    o = _options.record((("upsampfac", 1.5), ("points_hint", 1 << 40)))
    assert o.upsampfac == 1.5 and o.points_hint == 1 << 40
    import pytest
    for bad in (-1, 2**63, 1.0):
        with pytest.raises(warpfft.InvalidArgumentError, match="points_hint"):
            _options.record((("points_hint", bad),))


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


def test_record_deterministic():
    """opts.deterministic (issue 29): 0 by default, 1 set, anything else refused by the table."""
    import pytest
    assert _options.record().deterministic == 0
    assert _options.record((("deterministic", 1),)).deterministic == 1
    assert _options.record((("deterministic", True),)).deterministic == 1  # bools are 0/1
    for bad in (2, -1, 0.5):
        with pytest.raises(warpfft.InvalidArgumentError, match="deterministic"):
            _options.record((("deterministic", bad),))


def test_normalize_options_deterministic_and_method_od():
    """Plan's keywords: deterministic (False by default) and the reference's gpu_method=3 (OD:
    output-driven spreading for types 1 and 3; no effect on type 2's interpolation)."""
    from warpfft._args import normalize_options
    assert normalize_options(1, {})[0].deterministic == 0
    assert normalize_options(1, {"deterministic": True})[0].deterministic == 1
    assert normalize_options(1, {"gpu_method": 3})[0].method == 3
    assert normalize_options(3, {"gpu_method": 3})[0].method == 3
    assert normalize_options(2, {"gpu_method": 3})[0].method == 0
    assert normalize_options(1, {"gpu_method": 4})[0].method == 2
