"""Type 3 (non-uniform to non-uniform) in the reference's (cufinufft's) conventions, checked
without a GPU: the Python layer runs over the fake C library (tests/_fake.py), whose
warpfft_setpts3/execute compute the exact sum f[k] = sum_j c[j] exp(iflag i s_k . x_j).
Shapes, defaults, batches, the cache, plan.info, argument errors and plan_params3 (the real
library: no GPU needed). test_gpu.py runs type 3 on the real library."""

import gc
import inspect

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import exact3, warpfft


def problem3(dim, M=9, K=7, n_trans=None, dtype=np.complex128, seed=0):
    """Sources in a box off the origin, targets spread wider (any finite reals)."""
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    x = [rng.uniform(-3 + d, 5 + 2 * d, M).astype(real) for d in range(dim)]
    s = [rng.uniform(-20 - d, 12 + 3 * d, K).astype(real) for d in range(dim)]
    b = () if n_trans is None else (n_trans,)
    c = (rng.standard_normal(b + (M,)) + 1j * rng.standard_normal(b + (M,))).astype(dtype)
    return x, s, c


def close(a, b, tol=1e-9):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) <= tol * np.linalg.norm(np.ravel(b))


def setpts3_calls(fake):
    return [c for c in fake.calls if c[0] == "warpfft_setpts3"]


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_simple_shapes_and_default_isign(fake, dim):
    x, s, c = problem3(dim)
    f = getattr(warpfft, f"nufft{dim}d3")(*x, c, *s)
    assert f.shape == (7,) and f.dtype == np.complex128
    assert close(f, exact3(x, s, c, +1))  # the reference's default isign for type 3: +1
    g = getattr(warpfft, f"nufft{dim}d3")(*x, c, *s, isign=-1)
    assert close(g, exact3(x, s, c, -1))
    create = [c for c in fake.calls if c[0] == "warpfft_plan_create"][0]
    assert create[1:3] == (3, dim)
    # sources and targets reach the C ABI reversed (as the coordinates of types 1 and 2)
    call = setpts3_calls(fake)[0]
    assert call[3] == 9 and call[7] == 7  # M, K


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_plan_type3_batch_and_properties(fake, dim):
    nt = 2
    x, s, c = problem3(dim, n_trans=nt, seed=1)
    plan = warpfft.Plan(3, dim, nt, 1e-9, None, "complex128")
    assert plan.isign == 1 and plan.type == 3 and plan.dim == dim
    assert plan.n_modes == (1,) * dim  # as the reference's (ignored)
    assert plan.M is None and plan.K is None
    plan.setpts(*x, *[None] * (3 - dim), *s)
    assert plan.M == 9 and plan.K == 7
    assert plan.c_shape == (nt, 9) and plan.fk_shape == (nt, 7)
    out = plan.execute(c)
    assert out.shape == (nt, 7)
    assert close(out, exact3(x, s, c, +1))
    given = np.empty((nt, 7), np.complex128)
    assert plan.execute(c, out=given) is given and close(given, out, 0)
    with pytest.raises(TypeError, match="shape"):
        plan.execute(c, out=np.empty((nt, 9), np.complex128))
    with pytest.raises(TypeError, match="shape"):
        plan.execute(c[0])  # n_trans = 2 needs (2, M)
    assert "K=7" in repr(plan) and "n_modes=" + str(dim) in repr(plan)
    plan.close()


def test_setpts_keywords_and_new_points(fake):
    x, s, c = problem3(2, seed=2)
    with warpfft.Plan(3, 2, dtype="complex128") as plan:
        plan.setpts(x[0], x[1], s=s[0], t=s[1])
        assert close(plan.execute(c), exact3(x, s, c, 1))
        x2, s2, c2 = problem3(2, M=5, K=11, seed=3)  # other M and K on the same plan
        plan.setpts(*x2, None, *s2)
        out = plan.execute(c2)
        assert out.shape == (11,) and close(out, exact3(x2, s2, c2, 1))


def test_float32(fake):
    x, s, c = problem3(3, dtype=np.complex64, seed=4)
    f = warpfft.nufft3d3(*x, c, *s)
    assert f.dtype == np.complex64 and close(f, exact3(x, s, c, 1), 1e-5)
    with pytest.raises(TypeError):  # no silent casts: float64 points for a complex64 plan
        warpfft.nufft3d3(*[v.astype(np.float64) for v in x], c, *s)


def test_cache_reuses_a_type3_plan_across_M_and_K(fake):
    warpfft.clear_plan_cache()
    for M, K in ((9, 7), (5, 12), (9, 7)):
        x, s, c = problem3(2, M=M, K=K, seed=M + K)
        assert close(warpfft.nufft2d3(*x, c, *s), exact3(x, s, c, 1))
    assert fake.names().count("warpfft_plan_create") == 1
    x, s, c = problem3(2, seed=5)
    warpfft.nufft2d3(*x, c, *s, isign=-1)  # another key: another plan
    warpfft.nufft1d3(x[0], c, s[0])  # another dimension: another plan
    assert fake.names().count("warpfft_plan_create") == 3
    # and never a type 1/2 plan of the same shape
    warpfft.nufft1d1(x[0], c, (1,))
    assert fake.names().count("warpfft_plan_create") == 4
    assert warpfft.plan_cache_info()["plans"] == 4


def test_points_are_not_pinned(fake):
    """The C library copies type 3's sources and targets: the plan keeps no user array."""
    import weakref

    x, s, c = problem3(1, seed=6)
    xd = FakeDeviceArray(fake, x[0])
    sd = FakeDeviceArray(fake, s[0])
    refs = [weakref.ref(xd), weakref.ref(sd)]
    with warpfft.Plan(3, 1, dtype="complex128") as plan:
        plan.setpts(xd, s=sd)
        call = setpts3_calls(fake)[-1]
        assert call[4] == xd.ptr and call[8] == sd.ptr
        del xd, sd
        gc.collect()
        plan._reap()
        assert all(r() is None for r in refs)
        out = plan.execute(FakeDeviceArray(fake, c))  # the fake copied the points
        got = fake.view(out.ptr, np.complex128, out.size)
        assert close(got, exact3(x, s, c, 1))


def test_device_arrays_reversed_to_c(fake):
    x, s, c = problem3(3, seed=7)
    xd = [FakeDeviceArray(fake, v) for v in x]
    sd = [FakeDeviceArray(fake, v) for v in s]
    with warpfft.Plan(3, 3, dtype="complex128") as plan:
        plan.setpts(*xd, *sd)
        call = setpts3_calls(fake)[-1]
        assert call[4:7] == (xd[2].ptr, xd[1].ptr, xd[0].ptr)  # (z, y, x)
        assert call[8:11] == (sd[2].ptr, sd[1].ptr, sd[0].ptr)  # (u, t, s)
        out = plan.execute(FakeDeviceArray(fake, c))
        assert isinstance(out, warpfft.DeviceArray) and out.shape == (7,)


def test_info_type3_fields_in_python_order(fake):
    x, s, c = problem3(3, seed=8)
    with warpfft.Plan(3, 3, dtype="complex128") as plan:
        before = plan.info
        assert before["type"] == 3 and before["n_targets"] is None
        assert before["n_points"] is None
        plan.setpts(*x, *s)
        info = plan.info
    assert info["n_points"] == 9 and info["n_targets"] == 7
    assert info["inner_precision"] == "f64" and info["inner_width"] == 5
    centre = tuple((v.max() + v.min()) / 2 for v in x)
    assert np.allclose(info["x_center"], centre)  # x first: reversed back from the C order
    assert np.allclose(info["s_half"], tuple(np.ptp(v) / 2 for v in s))
    assert info["gamma"] == (3.0, 2.0, 1.0) and info["inner_fine"] == (48, 32, 16)
    for key in ("inner_beta", "x_half", "s_center"):
        assert key in info


def test_info_of_type1_has_empty_type3_fields(fake):
    with warpfft.Plan(1, (6, 5), dtype="complex128") as plan:
        info = plan.info
    assert info["n_targets"] is None and info["inner_precision"] is None
    assert info["gamma"] == (0.0, 0.0) and info["inner_fine"] == (0, 0)


def test_reference_signatures_type3():
    for dim, pts, tg in ((1, ["x"], ["s"]), (2, ["x", "y"], ["s", "t"]),
                         (3, ["x", "y", "z"], ["s", "t", "u"])):
        p = inspect.signature(getattr(warpfft, f"nufft{dim}d3")).parameters
        assert list(p) == pts + ["data"] + tg + ["out", "eps", "isign", "kwargs"]
        assert p["isign"].default == 1 and p["eps"].default == 1e-6


def test_argument_errors(fake):
    x, s, c = problem3(2, seed=9)
    with warpfft.Plan(3, 2, dtype="complex128") as plan:
        with pytest.raises(TypeError, match="t is needed"):
            plan.setpts(*x, s=s[0])
        with pytest.raises(TypeError, match="s is needed"):
            plan.setpts(*x)
        with pytest.raises(TypeError, match="u is not allowed"):
            plan.setpts(*x, None, *s, s[0])
        with pytest.raises(TypeError, match="y is needed"):
            plan.setpts(x[0], s=s[0], t=s[1])
        with pytest.raises(TypeError, match=r"Argument `t` must be of shape \(7,\)"):
            plan.setpts(*x, s=s[0], t=s[1][:4])
        with pytest.raises(TypeError, match=r"Argument `y` must be of shape \(9,\)"):
            plan.setpts(x[0], x[1][:3], s=s[0], t=s[1])
        with pytest.raises(TypeError, match="`s` must be a vector"):
            plan.setpts(*x, s=s[0].reshape(7, 1), t=s[1])
        assert "warpfft_setpts3" not in fake.names()  # all refused before any C call
        with pytest.raises(warpfft.WarpfftError, match="setpts"):
            plan.execute(c)
        plan.setpts(*x, None, *s)
        with pytest.raises(TypeError, match="shape"):
            plan.execute(c[:5])  # M = 9
    for bad in ((2,), (1, 2), 2.0, "2", True, None):
        with pytest.raises(TypeError, match="n_modes_or_dim must be a single number"):
            warpfft.Plan(3, bad)
    for bad in (0, 4, -1):
        with pytest.raises(TypeError, match="Only dimensions"):
            warpfft.Plan(3, bad)
    with pytest.raises(TypeError, match="s, t, u are the target frequencies"):
        with warpfft.Plan(1, (6, 5), dtype="complex128") as plan:
            plan.setpts(*x, s=s[0])
    with pytest.raises(TypeError, match="s, t, u"):
        warpfft.direct_sample(1, (6, 5), *x, c=c, s=s[0])
    with pytest.raises(TypeError, match="s is needed"):
        warpfft.nufft1d3(x[0], c, None)
    with pytest.raises(TypeError, match="data"):
        warpfft.nufft1d3(x[0], c[:4], s[0])  # 4 strengths for 9 sources


def test_failed_setpts3_clears_M_and_K(fake):
    x, s, c = problem3(1, seed=10)
    with warpfft.Plan(3, 1, dtype="complex128") as plan:
        plan.setpts(x[0], s=s[0])
        fake.fail["warpfft_setpts3"] = 7  # WARPFFT_ERR_BAD_POINTS (what C says for a NaN)
        with pytest.raises(warpfft.InvalidArgumentError):
            plan.setpts(x[0], s=s[0])
        assert plan.M is None and plan.K is None
        with pytest.raises(warpfft.WarpfftError, match="setpts"):
            plan.execute(c)


def test_zero_sources_and_targets(fake):
    x, s, c = problem3(1, seed=11)
    with warpfft.Plan(3, 1, dtype="complex128") as plan:
        plan.setpts(np.zeros(0), s=s[0])
        out = plan.execute(np.zeros(0, np.complex128))
        assert out.shape == (7,) and not out.any()
        plan.setpts(x[0], s=np.zeros(0))
        assert plan.execute(c).shape == (0,)


def test_plan_params3_no_gpu():
    """The real library (no GPU needed): bounds in the Python order (x first)."""
    info = warpfft.plan_params3([(-1.0, 1.0), (0.0, 4.0)], [(-10.0, 10.0), (-3.0, 1.0)],
                                eps=1e-6, dtype="complex128")
    assert info["type"] == 3 and info["dim"] == 2
    assert info["n_points"] is None and info["n_targets"] is None
    assert info["x_center"] == (0.0, 2.0) and info["x_half"] == (1.0, 2.0)
    assert info["s_center"] == (0.0, -1.0) and info["s_half"] == (10.0, 2.0)
    assert info["inner_precision"] in ("f32", "f64") and info["inner_width"] > 0
    assert all(g > 0 for g in info["gamma"]) and all(n > 1 for n in info["n_fine"])
    wider = warpfft.plan_params3([(-1.0, 1.0), (0.0, 4.0)], [(-100.0, 100.0), (-3.0, 1.0)],
                                 eps=1e-6, dtype="complex128")
    assert wider["n_fine"][0] > info["n_fine"][0] and wider["n_fine"][1] == info["n_fine"][1]
    tight = warpfft.plan_params3([(-1.0, 1.0)], [(-10.0, 10.0)], eps=1e-12,
                                 dtype="complex128")
    loose = warpfft.plan_params3([(-1.0, 1.0)], [(-10.0, 10.0)], eps=1e-3, dtype="complex128")
    assert tight["width"] > loose["width"]
    for xb, sb, match in (([(1.0, -1.0)], [(0.0, 1.0)], "lo <= hi"),
                          ([(0.0, float("nan"))], [(0.0, 1.0)], "finite"),
                          ([(0.0, 1.0)], [(0.0, 1.0), (0.0, 1.0)], "dimensions"),
                          ([], [], "1 to 3"),
                          ([0.0], [(0.0, 1.0)], "pairs")):
        with pytest.raises(TypeError, match=match):
            warpfft.plan_params3(xb, sb)
    with pytest.raises(TypeError, match="plan_params3"):
        warpfft.plan_params(3, 1)


def test_direct_sample3_checks_every_length():
    """Every length is checked before the GPU reads anything (no GPU needed)."""
    x, s, c = problem3(2, seed=12)
    for kw, what in ((dict(x=x[0], y=x[1][:5], c=c, s=s[0], t=s[1]), "y has 5"),
                     (dict(x=x[0], y=x[1], c=c[:4], s=s[0], t=s[1]), "c has 4"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0], t=s[1][:3]), "t has 3"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0]), "t is needed"),
                     (dict(x=x[0], y=x[1], c=c, s=None, t=s[1]), "s is needed"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0], t=s[1], u=s[0]), "u is not allowed"),
                     (dict(x=x[0], y=None, c=c, s=s[0], t=s[1]), "y is needed"),
                     (dict(x=x[0], y=x[1], s=s[0], t=s[1]), "needs c"),
                     (dict(x=x[0], y=x[1], c=c, fk=c, s=s[0], t=s[1]), "not fk"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0], t=s[1], sample=[7]), "sample indices"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0], t=s[1], sample=[-1]), "sample indices"),
                     (dict(x=x[0], y=x[1], c=c, s=s[0], t=s[1], sample=[0.5]), "integers")):
        with pytest.raises(warpfft.InvalidArgumentError, match=what):
            warpfft.direct_sample(3, 2, **kw)
    with pytest.raises(TypeError, match="single number, the dimension"):
        warpfft.direct_sample(3, (2,), x[0], x[1], c=c, s=s[0], t=s[1])
    with pytest.raises(TypeError):  # float32 points for complex128 strengths: no silent cast
        warpfft.direct_sample(3, 2, *[v.astype(np.float32) for v in x], c=c, s=s[0], t=s[1])


def test_spreadinterponly_refused_for_type3():
    """gpu_spreadinterponly is a type 1/2 mode: handed to type 3's inner type-2 step it skipped
    that step's FFT and deconvolution, and the result was wrong with success. The C library
    refuses it for plan_params3 and a type-3 plan, before any GPU work (the real library: no GPU
    needed)."""
    with pytest.raises(warpfft.InvalidArgumentError, match="spreadinterponly = 1 is for types 1"):
        warpfft.plan_params3([(-1.0, 1.0)], [(-10.0, 10.0)], gpu_spreadinterponly=1)
    with pytest.raises(warpfft.InvalidArgumentError, match="type-3 plan needs it 0"):
        warpfft.Plan(3, 2, gpu_spreadinterponly=1)
    x, s, c = problem3(1)
    with pytest.raises(warpfft.InvalidArgumentError, match="spreadinterponly"):
        warpfft.nufft1d3(x[0], c, s[0], gpu_spreadinterponly=1)
    # types 1 and 2 keep it
    assert warpfft.plan_params(1, (32,), eps=1e-5, gpu_spreadinterponly=1)["n_fine"] == (32,)
