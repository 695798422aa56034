"""The reference's (cufinufft's) Python conventions, checked without a GPU: the Python layer
runs over a fake C library (tests/_fake.py) that computes the exact sum with the C ABI's
conventions, so shapes, axis order (x <-> axis 0, passed reversed to the C ABI), batch axes,
defaults, modeord and option names are checked against a numpy direct sum. test_gpu.py runs
the same conventions on the real library."""

import gc
import inspect

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import exact, warpfft

SHAPES = {1: (7,), 2: (6, 5), 3: (4, 5, 3)}  # (N1[, N2[, N3]]): distinct, odd and even


def problem(dim, dtype=np.complex128, n_trans=None, M=11, seed=0):
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]
    b = () if n_trans is None else (n_trans,)
    c = (rng.standard_normal(b + (M,)) + 1j * rng.standard_normal(b + (M,))).astype(dtype)
    f = (rng.standard_normal(b + SHAPES[dim]) + 1j * rng.standard_normal(b + SHAPES[dim]))
    return pts, c, f.astype(dtype)


def close(a, b, tol=1e-9):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) <= tol * np.linalg.norm(np.ravel(b))


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_simple_shapes_axis_order_and_default_isign(fake, dim):
    n = SHAPES[dim]
    pts, c, f = problem(dim)
    f1 = getattr(warpfft, f"nufft{dim}d1")(*pts, c, n)
    assert f1.shape == n  # (N1, N2, N3): x <-> axis 0
    assert close(f1, exact(1, pts, c, n, +1))
    c2 = getattr(warpfft, f"nufft{dim}d2")(*pts, f)
    assert c2.shape == c.shape
    assert close(c2, exact(2, pts, f, n, -1))
    # the C ABI got the dimensions and the coordinates reversed (no data transposed)
    create = [x for x in fake.calls if x[0] == "warpfft_plan_create"][0]
    assert create[3][:dim] == n[::-1]


def test_axis_reversal_is_zero_copy_for_device_points(fake):
    pts, c, _ = problem(3)
    dev = [FakeDeviceArray(fake, p) for p in pts]
    with warpfft.Plan(1, SHAPES[3], dtype="complex128") as plan:
        plan.setpts(*dev)
        setpts = [x for x in fake.calls if x[0] == "warpfft_setpts"][-1]
        assert setpts[4:7] == (dev[2].ptr, dev[1].ptr, dev[0].ptr)  # (z, y, x) -> C (x, y, z)
        out = plan.execute(FakeDeviceArray(fake, c))
        assert isinstance(out, warpfft.DeviceArray) and out.shape == SHAPES[3]
        got = fake.view(out.ptr, np.complex128, out.size).reshape(out.shape)
        assert close(got, exact(1, pts, c, SHAPES[3], 1))


@pytest.mark.parametrize("type_", [1, 2])
def test_plan_signature_defaults_batch_and_modeord(fake, type_):
    n, nt = SHAPES[2], 3
    pts, c, f = problem(2, n_trans=nt, seed=1)
    plan = warpfft.Plan(type_, n, nt, 1e-9, None, "complex128", modeord=1)
    assert plan.isign == (1 if type_ == 1 else -1)
    assert (plan.type, plan.n_modes, plan.n_trans, plan.dim) == (type_, n, nt, 2)
    assert plan.dtype == np.complex128
    plan.setpts(*pts)
    data = c if type_ == 1 else f
    out = plan.execute(data)
    assert out.shape == ((nt,) + n if type_ == 1 else (nt, 11))
    assert close(out, exact(type_, pts, data, n, plan.isign, modeord=1))
    given = np.empty_like(out)
    assert plan.execute(data, out=given) is given
    with pytest.raises(TypeError):  # the reference: out must have the exact shape
        plan.execute(data, out=np.empty(out.size, out.dtype))
    plan.close()


def test_reference_signatures():
    """The public signatures are the reference's (cufinufft 2.x)."""
    sig = inspect.signature(warpfft.Plan)
    assert list(sig.parameters)[:6] == ["nufft_type", "n_modes", "n_trans", "eps", "isign",
                                        "dtype"]
    assert sig.parameters["n_trans"].default == 1 and sig.parameters["eps"].default == 1e-6
    assert sig.parameters["isign"].default is None
    assert sig.parameters["dtype"].default == "complex64"
    assert list(inspect.signature(warpfft.Plan.setpts).parameters) == [
        "self", "x", "y", "z", "s", "t", "u"]
    assert list(inspect.signature(warpfft.Plan.execute).parameters) == ["self", "data", "out"]
    for dim, pts in ((1, ["x"]), (2, ["x", "y"]), (3, ["x", "y", "z"])):
        p1 = inspect.signature(getattr(warpfft, f"nufft{dim}d1")).parameters
        assert list(p1)[:dim + 4] == pts + ["data", "n_modes", "out", "eps"]
        assert p1["isign"].default == 1 and p1["eps"].default == 1e-6
        p2 = inspect.signature(getattr(warpfft, f"nufft{dim}d2")).parameters
        assert list(p2)[:dim + 3] == pts + ["data", "out", "eps"]
        assert p2["isign"].default == -1
        p3 = inspect.signature(getattr(warpfft, f"nufft{dim}d3")).parameters
        assert list(p3)[:2 * dim + 1] == pts + ["data"] + ["s", "t", "u"][:dim]
        assert p3["isign"].default == 1


def test_type1_n_modes_from_out(fake):
    pts, c, _ = problem(2)
    out = np.zeros(SHAPES[2], np.complex128)
    r = warpfft.nufft2d1(*pts, c, out=out)
    assert r is out and close(out, exact(1, pts, c, SHAPES[2], 1))


def test_options_accepted_honoured_or_refused(fake):
    pts, c, _ = problem(1)
    for kw in ({"gpu_sort": 0}, {"gpu_kerevalmeth": 0}, {"gpu_maxbatchsize": 4},
               {"gpu_obinsizex": 8}, {"gpu_np": 16}, {"debug": 1}, {"upsampfac": 0.0},
               {"gpu_method": 1}, {"gpu_binsizex": -1}, {"gpu_maxsubprobsize": 1024},
               {"gpu_spreadinterponly": 0}, {"gpu_device_id": 0}, {"gpu_stream": None}):
        f1 = warpfft.nufft1d1(pts[0], c, SHAPES[1], **kw)
        assert close(f1, exact(1, pts, c, SHAPES[1], 1)), kw
    with pytest.raises(TypeError, match="Invalid option 'gpu_foo'"):
        warpfft.nufft1d1(pts[0], c, SHAPES[1], gpu_foo=1)
    with pytest.raises(TypeError):
        warpfft.Plan(1, 8, method="sm")  # our old name: not the reference's
    with pytest.raises(TypeError, match=r"opts.spreadinterponly = 2; must be 0 or 1"):
        warpfft.Plan(1, 8, gpu_spreadinterponly=2)
    # honoured: modeord, device, stream reach the C ABI's opts
    warpfft.Plan(1, 8, modeord=1, gpu_device_id=0, gpu_stream=0x1234).close()
    create = [x for x in fake.calls if x[0] == "warpfft_plan_create"][-1]
    assert create[-3:] == (1, 0, 0x1234)


def test_type3_is_supported_on_the_fake(fake):
    """Type 3 no longer raises UnsupportedError (the details: test_type3.py)."""
    x, s = np.linspace(-1, 1, 3), np.linspace(-5, 5, 2)
    f = warpfft.nufft1d3(x, np.ones(3, complex), s)
    assert f.shape == (2,)
    assert np.allclose(f, np.exp(1j * np.outer(s, x)).sum(axis=1))


def test_errors_are_the_reference_exception_types():
    assert issubclass(warpfft.WarpfftError, RuntimeError)
    assert issubclass(warpfft.InvalidArgumentError, TypeError)
    assert issubclass(warpfft.InvalidArgumentError, ValueError)
    with pytest.raises(TypeError):
        warpfft.Plan(1, 8, dtype="float32")


def test_import_warpfft_as_cufinufft_names():
    import warpfft as cufinufft

    for name in ("Plan", "nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2",
                 "nufft2d3", "nufft3d1", "nufft3d2", "nufft3d3"):
        assert callable(getattr(cufinufft, name)), name


def test_one_call_reuses_a_cached_plan(fake):
    warpfft.clear_plan_cache()
    pts, c, _ = problem(2)
    for _ in range(3):
        warpfft.nufft2d1(*pts, c, SHAPES[2])
    assert fake.names().count("warpfft_plan_create") == 1
    assert warpfft.plan_cache_info()["plans"] == 1
    warpfft.nufft2d1(*pts, c, SHAPES[2], eps=1e-5)  # another key: another plan
    assert fake.names().count("warpfft_plan_create") == 2
    warpfft.clear_plan_cache()
    assert fake.names().count("warpfft_plan_destroy") == 2
    assert warpfft.plan_cache_info()["plans"] == 0


def test_plan_cache_is_bounded(fake):
    warpfft.clear_plan_cache()
    warpfft.set_plan_cache_limits(plans=2)
    try:
        pts, c, _ = problem(1)
        for n in (5, 6, 7, 8):
            warpfft.nufft1d1(pts[0], c, (n,))
        assert warpfft.plan_cache_info()["plans"] == 2
        assert fake.names().count("warpfft_plan_destroy") == 2
        warpfft.set_plan_cache_limits(plans=0)
        assert warpfft.plan_cache_info()["plans"] == 0
    finally:
        warpfft.set_plan_cache_limits(plans=16)


class _DLPackOnly:
    """A producer seen only through DLPack (like an array-API library's array)."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None, **kw):
        return self.a.__dlpack__(**kw)


def test_dlpack_host_producer(fake):
    pts, c, _ = problem(2, seed=3)
    out = warpfft.nufft2d1(*[_DLPackOnly(p) for p in pts], _DLPackOnly(c), SHAPES[2])
    assert isinstance(out, np.ndarray) and close(out, exact(1, pts, c, SHAPES[2], 1))


def test_jax_cpu_arrays_give_jax_results(fake):
    jax = pytest.importorskip("jax", reason="jax not installed")
    jax.config.update("jax_enable_x64", True)
    # CPU arrays explicitly: where jax has a GPU its default device is the GPU, and the fake
    # library (host memory) must not be handed device pointers.
    cpu = jax.devices("cpu")[0]

    def put(a):
        return jax.device_put(jax.numpy.asarray(a), cpu)

    pts, c, f = problem(2, seed=4)
    out = warpfft.nufft2d1(*[put(p) for p in pts], put(c), SHAPES[2])
    assert isinstance(out, jax.Array) and out.shape == SHAPES[2]
    assert close(np.asarray(out), exact(1, pts, c, SHAPES[2], 1))
    out2 = warpfft.nufft2d2(*[put(p) for p in pts], put(f))
    assert isinstance(out2, jax.Array) and close(np.asarray(out2), exact(2, pts, f, SHAPES[2], -1))


def test_lists_and_non_contiguous_inputs(fake):
    pts, c, _ = problem(1, seed=5)
    out = warpfft.nufft1d1(list(pts[0]), list(c), SHAPES[1])
    assert close(out, exact(1, pts, c, SHAPES[1], 1))
    x2 = np.repeat(pts[0], 2)[::2]  # strided view: copied with a warning (as the reference)
    with pytest.warns(UserWarning, match="requirement: C. Copying"):
        out = warpfft.nufft1d1(x2, c, SHAPES[1])
    assert close(out, exact(1, pts, c, SHAPES[1], 1))
    with pytest.raises(TypeError, match="C-contiguous"):
        warpfft.nufft1d1(pts[0], c, out=np.empty((14,), complex)[::2])


def test_empty_unused_coordinates_are_allowed(fake):
    """The reference ignores empty y/z arrays for lower-dimensional plans."""
    pts, c, _ = problem(1, seed=6)
    with warpfft.Plan(1, SHAPES[1], dtype="complex128") as plan:
        plan.setpts(pts[0], np.zeros(0), np.zeros(0))
        assert close(plan.execute(c), exact(1, pts, c, SHAPES[1], 1))
        with pytest.raises(TypeError, match="y is not allowed"):
            plan.setpts(pts[0], pts[0])


def test_idle_cached_plans_release_arrays_when_work_completes(fake):
    import weakref

    warpfft.clear_plan_cache()
    pts, c, _ = problem(1, seed=7)
    fake.driver.complete = False
    data = FakeDeviceArray(fake, c)
    ref = weakref.ref(data)
    warpfft.nufft1d1(FakeDeviceArray(fake, pts[0]), data, SHAPES[1])
    del data
    gc.collect()
    assert ref() is not None  # queued work may still read it
    fake.driver.complete = True
    warpfft.nufft1d1(pts[0], c, (9,))  # any one-call: idle plans drop completed arrays
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("type_", [1, 2])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_spreadinterponly_axis_order_against_kernel_sum(fake, type_, dim):
    """gpu_spreadinterponly=1 reaches the C ABI (opts.spreadinterponly) and the grid comes back
    in the reference's axis order: checked against the direct kernel sum (fake C library)."""
    from _kernel_sum import interp, spread

    n = {1: (13,), 2: (12, 9), 3: (8, 10, 9)}[dim]
    pts, c, _ = problem(dim, seed=8)
    f = np.random.default_rng(9).standard_normal((2,) + n) + 0j
    # eps 1e-2: kernel width 4 (the real library's choice), so every N_d >= 2 widths
    with warpfft.Plan(type_, n, 2, 1e-2, dtype="complex128", gpu_spreadinterponly=1) as plan:
        assert fake.last_opts["spreadinterponly"] == 1
        plan.setpts(*pts)
        w, beta = plan.info["width"], plan.info["beta"]
        if type_ == 1:
            cc = np.stack([c, 2 * c])
            got = plan.execute(cc)
            assert got.shape == (2,) + n
            assert close(got, spread(pts, cc, n, w, beta), 1e-12)
        else:
            got = plan.execute(f)
            assert got.shape == (2, 11)
            assert close(got, interp(pts, f, n, w, beta), 1e-12)


def test_check_points_default_on_and_opt_out(fake):
    """Plan checks points at setpts by default (opts.check_points = 1: the exception where the
    points are set, as the reference); check_points=False passes 0 (no host sync in setpts)
    and setpts_check() reaches warpfft_setpts_check, whose BAD_POINTS status raises."""
    pts, c, _ = problem(2)
    with warpfft.Plan(1, SHAPES[2], dtype="complex128") as plan:
        assert fake.last_opts["check_points"] == 1
        with pytest.raises(warpfft.WarpfftError) as ei:
            plan.setpts_check()
        assert ei.value.name == "WARPFFT_ERR_NO_POINTS"
        plan.setpts(*pts)
        plan.setpts_check()
    with warpfft.Plan(2, SHAPES[2], dtype="complex128", check_points=False) as plan:
        assert fake.last_opts["check_points"] == 0
        plan.setpts(*pts)
        plan.setpts_check()
        assert fake.names()[-1] == "warpfft_setpts_check"
        fake.fail["warpfft_setpts_check"] = 7  # WARPFFT_ERR_BAD_POINTS
        with pytest.raises(warpfft.InvalidArgumentError) as ei:
            plan.setpts_check()
        assert ei.value.name == "WARPFFT_ERR_BAD_POINTS"
        assert plan.M == 11  # the points stay set (its executes write NaN)
    with pytest.raises(TypeError, match="check_points"):
        warpfft.Plan(1, 8, check_points=2)
    # the one-call functions accept it too (and it is part of their plan cache key)
    f1 = warpfft.nufft2d1(*pts, c, SHAPES[2], check_points=False)
    assert close(f1, exact(1, pts, c, SHAPES[2], 1))
    assert fake.last_opts["check_points"] == 0
