"""Argument checks that need no GPU (through warpfft_plan_params and the Python layer)."""

import ctypes

import numpy as np
import pytest
from _support import warpfft
from warpfft import _errors, _lib


def test_plan_params_reports_choices():
    for dim, n in ((1, (100,)), (2, (64, 48)), (3, (16, 12, 10))):
        for dtype, eps in ((np.complex64, 1e-5), (np.complex128, 1e-10)):
            p = warpfft.plan_params(1, n, dtype=dtype, eps=eps)
            assert p["dim"] == dim and p["type"] == 1
            assert p["n_modes"] == n  # the Python order: axis 0 (x) first
            assert p["precision"] == ("f32" if dtype == np.complex64 else "f64")
            assert p["n_modes"] == n
            assert all(f >= 2 * m for f, m in zip(p["n_fine"], n)), p
            assert p["width"] >= 2 and p["beta"] > 0 and p["upsampfac"] == 2.0
            assert p["n_points"] is None


def test_plan_params_width_grows_with_accuracy():
    w = [warpfft.plan_params(1, 64, dtype=np.complex128, eps=e)["width"]
         for e in (1e-2, 1e-6, 1e-12)]
    assert w[0] < w[1] < w[2], w


def _raises(status, **kw):
    args = dict(nufft_type=1, n_modes=(32, 32), dtype=np.complex64, eps=1e-5)
    args.update(kw)
    with pytest.raises(warpfft.InvalidArgumentError) as ei:
        warpfft.plan_params(**args)
    e = ei.value
    assert e.status == status, (e.status, str(e))
    assert e.name == warpfft.status_name(status)
    assert e.message
    return e


def test_bad_type():
    _raises(_errors.ERR_BAD_TYPE, nufft_type=0)
    _raises(_errors.ERR_BAD_TYPE, nufft_type=4)


def test_bad_size():
    _raises(_errors.ERR_BAD_SIZE, n_modes=(32, 0))
    _raises(_errors.ERR_BAD_SIZE, n_modes=-5)
    _raises(_errors.ERR_BAD_SIZE, n_trans=0)


def test_eps_outside_the_range_is_clamped_with_a_warning():
    """The reference accepts any eps (clamping below machine epsilon with a warning): the
    Python layer clamps into the C library's range, with a warning; the C ABI itself refuses."""
    for eps, dtype, used in ((1e-9, np.complex64, 1e-6), (0.5, np.complex64, 0.1),
                             (1e-20, np.complex128, 1e-13)):
        with pytest.warns(UserWarning, match=f"using {used:g}"):
            p = warpfft.plan_params(1, (32, 32), eps=eps, dtype=dtype)
        assert p == warpfft.plan_params(1, (32, 32), eps=used, dtype=dtype)
    with pytest.raises(warpfft.InvalidArgumentError, match="NaN"):
        warpfft.plan_params(1, 8, eps=float("nan"))
    info, n = _lib.PlanInfo(), _lib.n_modes_array((32, 32))
    assert _lib.lib.warpfft_plan_params(1, 2, n, 1, 1e-9, 1, None, ctypes.byref(info)) == \
        _errors.ERR_BAD_TOL


def test_bad_options():
    _raises(_errors.ERR_INVALID_ARG, modeord=7)
    _raises(_errors.ERR_INVALID_ARG, gpu_method=9)  # Python-side check (0..4)
    _raises(_errors.ERR_INVALID_ARG, method="sm")  # not the reference's name: unknown option
    _raises(_errors.ERR_INVALID_ARG, upsampfac=1.5)  # C check
    _raises(_errors.ERR_BAD_DIM, n_modes=(4, 4, 4, 4))  # Python-side check


def test_bad_dim_in_c():
    """dim is checked by the C core itself (Python derives it from n_modes)."""
    info, n = _lib.PlanInfo(), _lib.n_modes_array((8, 8, 8))
    for dim in (0, 4):
        st = _lib.lib.warpfft_plan_params(1, dim, n, 1, 1e-5, 1, None, ctypes.byref(info))
        assert st == _errors.ERR_BAD_DIM
        assert _lib.last_error(), "no message for BAD_DIM"


def test_null_pointers_are_invalid_arg():
    info = _lib.PlanInfo()
    st = _lib.lib.warpfft_plan_params(1, 1, None, 1, 1e-5, 1, None, ctypes.byref(info))
    assert st == _errors.ERR_INVALID_ARG
    st = _lib.lib.warpfft_opts_default(None)
    assert st == _errors.ERR_INVALID_ARG
    assert _lib.lib.warpfft_plan_destroy(None) == 0
    assert _lib.lib.warpfft_free(0, None) == 0


def test_bad_dtype_is_rejected_before_c():
    with pytest.raises(warpfft.InvalidArgumentError):
        warpfft.plan_params(1, 8, dtype=np.float32)
    with pytest.raises(warpfft.InvalidArgumentError):
        warpfft.Plan(1, 8, dtype=np.int32)


def test_spreadinterponly_params():
    """gpu_spreadinterponly=1: the grid is the mode array (n_fine = n_modes), GM, less
    workspace; grids below two kernel widths are refused (no GPU needed)."""
    p = warpfft.plan_params(1, (50, 37), eps=1e-5, gpu_spreadinterponly=1, gpu_method=2)
    q = warpfft.plan_params(1, (50, 37), eps=1e-5)
    assert p["n_fine"] == (50, 37) and p["method"] == "gm"
    assert (p["width"], p["beta"]) == (q["width"], q["beta"])
    assert p["workspace_bytes"] < q["workspace_bytes"]
    _raises(_errors.ERR_BAD_SIZE, n_modes=(64, 5), gpu_spreadinterponly=1)


def test_plan_params_method_never_auto_when_resolved():
    p = warpfft.plan_params(1, (64, 64), eps=1e-5, gpu_method=2)
    assert p["method"] == "sm"
