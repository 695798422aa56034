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
            assert p["width"] >= 2 and p["beta"] > 0 and 1.25 <= p["upsampfac"] <= 3
            assert p["kernel"] == "sinh" and p["predicted_ms"] > 0
            assert p["n_points"] is None


def test_plan_params_width_grows_with_accuracy():
    w = [warpfft.plan_params(1, 64, dtype=np.complex128, eps=e, upsampfac=2.0)["width"]
         for e in (1e-2, 1e-6, 1e-12)]
    assert w[0] < w[1] < w[2], w


@pytest.mark.parametrize("ups", [1.25, 1.5, 2.0, 2.5, 3.0])
def test_any_upsampfac_in_range_is_used_as_given(ups):
    """Any upsampfac of [1.25, 3] is the plan's sigma (issue 28: MRI packages pass 1.5); the
    fine grid is at least sigma N, and a larger sigma needs no wider kernel."""
    p = warpfft.plan_params(1, (64, 48), eps=1e-5, dtype=np.complex128, upsampfac=ups)
    assert p["upsampfac"] == ups and p["kernel"] == "sinh" and p["predicted_ms"] > 0
    assert all(f >= ups * n for f, n in zip(p["n_fine"], (64, 48))), p["n_fine"]
    q = warpfft.plan_params(1, (64, 48), eps=1e-5, dtype=np.complex128, upsampfac=1.25)
    assert p["width"] <= q["width"]


def test_upsampfac_zero_is_chosen_per_plan_with_the_points_hint():
    """upsampfac 0 (the default, and the reference's "auto") reaches the C library as 0: the
    plan chooses sigma with the width, by predicted time for points_hint points (default: one
    per mode); an explicit sigma is not overridden."""
    from warpfft._args import normalize_options
    assert normalize_options(1, {})[0].upsampfac == 0.0
    assert normalize_options(1, {"upsampfac": 1.5})[0].upsampfac == 1.5
    args = dict(nufft_type=1, n_modes=(256, 256), eps=1e-4, dtype=np.complex64)
    auto = warpfft.plan_params(**args)
    assert auto == warpfft.plan_params(**args, upsampfac=0)
    assert auto == warpfft.plan_params(**args, points_hint=0)
    dense = warpfft.plan_params(**args, points_hint=10**7)
    assert dense["predicted_ms"] > 10 * auto["predicted_ms"]  # spreading 1e7 points
    # the choice weighs spreading (w^2 per point) against the grid: many points, narrow kernel
    assert (dense["width"], dense["upsampfac"]) != (auto["width"], auto["upsampfac"])
    assert dense["width"] <= auto["width"] and dense["upsampfac"] >= auto["upsampfac"]
    assert warpfft.plan_params(**args, upsampfac=2.0, points_hint=10**7)["upsampfac"] == 2.0
    _raises(_errors.ERR_INVALID_ARG, points_hint=-1)  # Python-side range check
    _raises(_errors.ERR_INVALID_ARG, points_hint=1.5)


def test_kernel_shape_reader_gives_the_library_beta():
    """The tests' kernel (kernels/test/kernel_shape.py, reading kernels/kernel_shape.h, which
    _kernel_sum and the fake library use) has the plans' beta, bit for bit, at the width and
    sigma each plan chose; and the kernel is 0 at its edge and positive inside."""
    import _kernel_sum
    seen = set()
    for dtype, eps in ((np.complex64, 1e-3), (np.complex64, 1e-5), (np.complex128, 1e-8),
                       (np.complex128, 1e-12)):
        for ups in (0, 1.25, 1.5, 2.0, 3.0):
            try:
                p = warpfft.plan_params(1, (64, 48), eps=eps, dtype=dtype, upsampfac=ups)
            except warpfft.InvalidArgumentError:  # a tol too fine for this sigma
                continue
            w, sigma = p["width"], p["upsampfac"]
            assert _kernel_sum.kernel_beta(w, sigma) == p["beta"], (w, sigma)
            seen.add(w)
            phi = _kernel_sum.phi(np.array([-w / 2, -w / 4, 0.0, w / 3, w / 2]), w, p["beta"])
            assert phi[0] == phi[-1] == 0 and (phi[1:-1] > 0).all(), (w, phi)
    assert len(seen) >= 4, seen


def test_plan_params3_reports_the_kernel():
    p = warpfft.plan_params3([(-1, 1)], [(-20, 20)], eps=1e-6)
    assert p["kernel"] == "sinh" and p["upsampfac"] == 2.0  # type 3: sigma 2 for 0
    assert p["predicted_ms"] is None  # no cost model for type 3
    assert warpfft.plan_params3([(-1, 1)], [(-20, 20)], eps=1e-4, upsampfac=1.5)["upsampfac"] \
        == 1.5


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
    """The reference accepts any eps (raising one below machine epsilon to it, with a warning):
    so does every interface, to the nearer end of the C library's range (warpfft_tol_effective:
    the rule is C's, and the C ABI applies it too, plan_info's tol saying what it ran at; it
    refused such a tol before, where Python clamped), with a warning in Python."""
    for eps, dtype, used in ((1e-9, np.complex64, 1e-6), (0.5, np.complex64, 0.1),
                             (1e-20, np.complex128, 1e-13)):
        with pytest.warns(UserWarning, match=f"using {used:g}"):
            p = warpfft.plan_params(1, (32, 32), eps=eps, dtype=dtype)
        assert p == warpfft.plan_params(1, (32, 32), eps=used, dtype=dtype)
        assert p["tol"] == used
    with pytest.raises(warpfft.InvalidArgumentError, match="tol = nan"):
        warpfft.plan_params(1, 8, eps=float("nan"))
    info, n = _lib.new_plan_info(), _lib.n_modes_array((32, 32))
    assert _lib.lib.warpfft_plan_params(1, 2, n, 1, 1e-9, 1, None, ctypes.byref(info)) == 0
    assert info.tol == 1e-6
    assert _lib.lib.warpfft_plan_params(1, 2, n, 1, float("nan"), 1, None,
                                        ctypes.byref(info)) == _errors.ERR_BAD_TOL


def test_bad_options():
    _raises(_errors.ERR_INVALID_ARG, modeord=7)
    _raises(_errors.ERR_INVALID_ARG, gpu_method=9)  # Python-side check (0..4)
    _raises(_errors.ERR_INVALID_ARG, method="sm")  # not the reference's name: unknown option
    for ups in (1.2, 3.5, float("nan"), float("inf"), -1.0):  # C check: 0 or [1.25, 3]
        e = _raises(_errors.ERR_INVALID_ARG, upsampfac=ups)
        assert "upsampfac" in e.message and "[1.25, 3]" in e.message, e.message
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
    q = warpfft.plan_params(1, (50, 37), eps=1e-5, upsampfac=2.0)  # sio: sigma 2's for 0
    assert p["n_fine"] == (50, 37) and p["method"] == "gm"
    assert (p["width"], p["beta"]) == (q["width"], q["beta"])
    assert p["workspace_bytes"] < q["workspace_bytes"]
    _raises(_errors.ERR_BAD_SIZE, n_modes=(64, 5), gpu_spreadinterponly=1)


def test_plan_params_method_never_auto_when_resolved():
    p = warpfft.plan_params(1, (64, 64), eps=1e-5, gpu_method=2)
    assert p["method"] == "sm"


def test_deterministic_plan_params():
    """deterministic=True (issue 29): type 1 and type 3 spread output-driven ("od"), type 2
    keeps its method; the kernel and grid are the default plan's; info says so. gpu_method=3
    (the reference's OD) asks for output-driven spreading without the promise."""
    base = dict(nufft_type=1, n_modes=(64, 48), eps=1e-5, dtype=np.complex64)
    plain = warpfft.plan_params(**base)
    det = warpfft.plan_params(**base, deterministic=True)
    assert plain["deterministic"] is False and plain["method"] != "od"
    assert det["deterministic"] is True and det["method"] == "od"
    assert (det["width"], det["n_fine"]) == (plain["width"], plain["n_fine"])
    t2 = dict(base, nufft_type=2)
    assert (warpfft.plan_params(**t2, deterministic=True)["method"] ==
            warpfft.plan_params(**t2)["method"])
    od = warpfft.plan_params(**base, gpu_method=3)
    assert od["method"] == "od" and od["deterministic"] is False
    assert warpfft.plan_params(**t2, gpu_method=3)["method"] != "od"  # no effect on type 2
    with pytest.raises(warpfft.InvalidArgumentError, match="deterministic"):
        warpfft.plan_params(**base, deterministic=True, gpu_method=1)
    p3 = warpfft.plan_params3([(-1, 1), (0, 2)], [(-30, 30), (-5, 5)], eps=1e-8,
                              dtype=np.complex128, deterministic=True)
    assert p3["method"] == "od" and p3["deterministic"] is True
