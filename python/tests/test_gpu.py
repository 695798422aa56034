"""The conventions suite on a GPU, against exact sums (numpy direct sums at small sizes and
warpfft.direct_sample): shapes (N1, N2, N3) with x along axis 0, defaults, batch shapes,
modeord, option names, the one-call functions and plans, host (numpy) and device paths, each
array library present (cupy, torch, jax, numba, DLPack). Skips with "no GPU: ..." when device 0
cannot be initialised; array-library tests skip when the library (or its CUDA) is missing."""

import numpy as np
import pytest
from _support import exact, exact3, rel_err, require_gpu, torch_cuda, warpfft

pytestmark = pytest.mark.gpu

SHAPES = {1: (37,), 2: (24, 17), 3: (12, 9, 10)}  # (N1[, N2[, N3]]), odd and even, distinct
EPS = {np.complex64: 1e-5, np.complex128: 1e-10}
M = 300
# 10x the requested eps: a layout, sign, batch or mode-order mistake gives O(1) errors.
# test_accuracy_contract holds the library to eps itself.
SLACK = 10


@pytest.fixture(autouse=True)
def _gpu():
    require_gpu()


def problem(dim, dtype, n_trans=None, seed=0, M=M):
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]
    pts[0][:3] = [-np.pi, 3.0, 7.5]  # edge and out-of-range (folded) coordinates
    b = () if n_trans is None else (n_trans,)
    c = (rng.standard_normal(b + (M,)) + 1j * rng.standard_normal(b + (M,))).astype(dtype)
    f = (rng.standard_normal(b + SHAPES[dim]) + 1j * rng.standard_normal(b + SHAPES[dim]))
    return pts, c, f.astype(dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
def test_plan_host_numpy(type_, dim, dtype):
    n = SHAPES[dim]
    pts, c, f = problem(dim, dtype)
    eps = EPS[dtype]
    with warpfft.Plan(type_, n, eps=eps, dtype=dtype) as plan:  # isign: the default per type
        plan.setpts(*pts)
        assert plan.fk_shape == n and plan.c_shape == (M,)
        data = c if type_ == 1 else f
        out = plan.execute(data)
        assert isinstance(out, np.ndarray) and out.dtype == dtype
        assert out.shape == (n if type_ == 1 else (M,))
        assert rel_err(out, exact(type_, pts, data, n, 1 if type_ == 1 else -1)) <= SLACK * eps
        info = plan.info
        assert info["n_points"] == M and info["dim"] == dim and info["method"] in ("gm", "sm")
        assert info["n_modes"] == n and plan.workspace_bytes > 0


@pytest.mark.parametrize("type_", [1, 2])
def test_batch_modeord_isign(type_):
    dim, dtype, nt = 2, np.complex128, 3
    n = SHAPES[dim]
    pts, c, f = problem(dim, dtype, n_trans=nt, seed=1)
    with warpfft.Plan(type_, n, nt, 1e-9, -1, dtype, modeord=1) as plan:
        plan.setpts(*pts)
        data = c if type_ == 1 else f
        out = plan.execute(data)
        assert out.shape == ((nt,) + n if type_ == 1 else (nt, M))
        assert rel_err(out, exact(type_, pts, data, n, -1, modeord=1)) <= SLACK * 1e-9


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_one_call_functions(dim):
    dtype, n = np.complex128, SHAPES[dim]
    pts, c, f = problem(dim, dtype, seed=4)
    for _ in range(2):  # the second call reuses the cached plan
        t1 = getattr(warpfft, f"nufft{dim}d1")(*pts, c, n, eps=1e-9)
        assert t1.shape == n
        assert rel_err(t1, exact(1, pts, c, n, 1)) <= SLACK * 1e-9
        t2 = getattr(warpfft, f"nufft{dim}d2")(*pts, f, eps=1e-9)
        assert t2.shape == (M,)
        assert rel_err(t2, exact(2, pts, f, n, -1)) <= SLACK * 1e-9
    # batch axis first, isign given, out given (n_modes from out's shape)
    pts, c, _ = problem(dim, dtype, n_trans=2, seed=5)
    out = np.empty((2,) + n, dtype)
    r = getattr(warpfft, f"nufft{dim}d1")(*pts, c, out=out, eps=1e-9, isign=-1)
    assert r is out and rel_err(out, exact(1, pts, c, n, -1)) <= SLACK * 1e-9


def test_options_on_the_gpu():
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=6)
    ref = exact(1, pts, c, n, 1)
    for kw in ({"gpu_method": 1}, {"gpu_method": 2}, {"gpu_method": 3}, {"gpu_sort": 0},
               {"gpu_kerevalmeth": 0}, {"gpu_maxbatchsize": 1}, {"upsampfac": 1.25},
               {"upsampfac": 0}, {"gpu_binsizex": 16, "gpu_binsizey": 16},
               {"gpu_maxsubprobsize": 256}, {"gpu_device_id": 0}):
        out = warpfft.nufft2d1(*pts, c, n, eps=1e-4, **kw)
        assert rel_err(out, ref) <= SLACK * 1e-4, kw


@pytest.mark.parametrize("ups", [0, 1.25, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("type_", [1, 2])
def test_any_upsampfac_meets_eps(type_, dtype, ups):
    """Any upsampfac of [1.25, 3] (issue 28), and 0 (chosen per plan for points_hint points),
    is the plan's sigma and meets eps; plan.info reports sigma, width, beta, kernel and the
    predicted time."""
    dim = 2
    n = SHAPES[dim]
    eps = 1e-3 if dtype == np.complex64 else 1e-8  # f32 at 1.25: the floor is ~2e-4
    pts, c, f = problem(dim, dtype, seed=11)
    with warpfft.Plan(type_, n, eps=eps, dtype=dtype, upsampfac=ups, points_hint=M) as plan:
        plan.setpts(*pts)
        data = c if type_ == 1 else f
        out = plan.execute(data)
        assert rel_err(out, exact(type_, pts, data, n, 1 if type_ == 1 else -1)) <= eps
        info = plan.info
    assert info["upsampfac"] == ups if ups else 1.25 <= info["upsampfac"] <= 3, info
    assert info["kernel"] == "sinh" and info["predicted_ms"] > 0 and info["width"] >= 2
    assert all(fine >= info["upsampfac"] * m for fine, m in zip(info["n_fine"], n))
    p = warpfft.plan_params(type_, n, eps=eps, dtype=dtype, upsampfac=ups, points_hint=M)
    assert {k: p[k] for k in ("upsampfac", "n_fine", "predicted_ms")} == \
        {k: info[k] for k in ("upsampfac", "n_fine", "predicted_ms")}
    # plan_params reports the every-point-set width (no points yet); after a checked setpts
    # the plan reports the width these points took, never wider (docs/accuracy.md)
    assert info["width"] <= p["width"], (info, p)
    if info["width"] == p["width"]:
        assert info["beta"] == p["beta"]


def test_direct_sample_matches_numpy():
    dim, dtype = 3, np.complex128
    n = SHAPES[dim]
    pts, c, f = problem(dim, dtype, seed=5)
    sample = np.array([0, 1, 17, np.prod(n) - 1])
    got = warpfft.direct_sample(1, n, *pts, c=c, sample=sample)
    assert rel_err(got, exact(1, pts, c, n, 1).ravel()[sample]) < 1e-12
    sample = np.array([0, 5, M - 1])
    got = warpfft.direct_sample(2, n, *pts, fk=f, sample=sample)
    assert rel_err(got, exact(2, pts, f, n, -1).ravel()[sample]) < 1e-12


def test_large_against_direct_sample():
    """M = 100k, 2D f32 type 1/2 through the one-call functions vs warpfft.direct_sample."""
    dtype, n = np.complex64, (256, 128)
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-np.pi, np.pi, (2, 100_000)).astype(np.float32)
    c = (rng.standard_normal(100_000) + 1j * rng.standard_normal(100_000)).astype(dtype)
    f = warpfft.nufft2d1(x, y, c, n, eps=1e-5)
    s = rng.integers(0, f.size, 50)
    ref = warpfft.direct_sample(1, n, x, y, c=c, sample=s)
    assert rel_err(f.ravel()[s], ref) <= SLACK * 1e-5
    c2 = warpfft.nufft2d2(x, y, f, eps=1e-5)
    s = rng.integers(0, 100_000, 50)
    ref = warpfft.direct_sample(2, n, x, y, fk=f, sample=s)
    assert rel_err(c2[s], ref) <= SLACK * 1e-5


def test_device_array_zero_copy_path():
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=6)
    dpts = [warpfft.DeviceArray.from_host(p) for p in pts]
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        plan.setpts(*dpts)
        dout = plan.execute(warpfft.DeviceArray.from_host(c))
        assert isinstance(dout, warpfft.DeviceArray) and dout.shape == n
        out = dout.get()
    assert rel_err(out, exact(1, pts, c, n, 1)) <= SLACK * 1e-5


@pytest.mark.parametrize("type_", [1, 2])
def test_cupy(type_):
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    dtype, n = np.complex64, SHAPES[3]
    pts, c, f = problem(3, dtype, seed=7)
    data = c if type_ == 1 else f
    g = [cp.asarray(p) for p in pts]
    out = getattr(warpfft, f"nufft3d{type_}")(*g, cp.asarray(data), *((n,) if type_ == 1 else ()),
                                              eps=1e-5)
    assert isinstance(out, cp.ndarray) and out.shape == (n if type_ == 1 else (M,))
    ref = exact(type_, pts, data, n, 1 if type_ == 1 else -1)
    assert rel_err(cp.asnumpy(out), ref) <= SLACK * 1e-5
    with warpfft.Plan(type_, n, eps=1e-5) as plan:  # cupy out=
        plan.setpts(*g)
        o = cp.empty(out.shape, dtype)
        assert plan.execute(cp.asarray(data), out=o) is o
        assert rel_err(cp.asnumpy(o), ref) <= SLACK * 1e-5


def test_cupy_non_blocking_stream_and_gpu_stream():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    dtype, n = np.complex128, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=8)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        g = [cp.asarray(p) for p in pts]
        gc = cp.asarray(c)
        out = warpfft.nufft2d1(*g, gc, n, eps=1e-10)  # producer stream: `stream`
        got = cp.asnumpy(out, stream=stream)
        stream.synchronize()
    assert isinstance(out, cp.ndarray)
    assert rel_err(got, exact(1, pts, c, n, 1)) <= SLACK * 1e-10
    out = warpfft.nufft2d1(*g, gc, n, eps=1e-10, gpu_stream=stream)  # a stream object
    stream.synchronize()
    assert rel_err(cp.asnumpy(out), exact(1, pts, c, n, 1)) <= SLACK * 1e-10


@pytest.mark.parametrize("type_", [1, 2])
def test_torch(type_):
    torch = torch_cuda()
    dtype, n = np.complex64, SHAPES[2]
    pts, c, f = problem(2, dtype, seed=9)
    data = c if type_ == 1 else f
    t = [torch.from_numpy(p).cuda() for p in pts]
    td = torch.from_numpy(data).cuda().requires_grad_(False)
    out = getattr(warpfft, f"nufft2d{type_}")(*t, td, *((n,) if type_ == 1 else ()), eps=1e-5)
    assert isinstance(out, torch.Tensor) and out.is_cuda
    assert tuple(out.shape) == (n if type_ == 1 else (M,))
    torch.cuda.synchronize()
    ref = exact(type_, pts, data, n, 1 if type_ == 1 else -1)
    assert rel_err(out.cpu().numpy(), ref) <= SLACK * 1e-5


def test_torch_side_stream_and_requires_grad():
    torch = torch_cuda()
    dtype, n = np.complex64, SHAPES[1]
    pts, c, _ = problem(1, dtype, seed=10)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        tx = torch.from_numpy(pts[0]).cuda().requires_grad_(True)
        tc = torch.from_numpy(c).cuda()
        out = warpfft.nufft1d1(tx, tc, n, eps=1e-5)
        got = out.cpu().numpy()  # on `side`: ordered after our work
    assert rel_err(got, exact(1, pts, c, n, 1)) <= SLACK * 1e-5


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch", reason="torch not installed")
    dtype, n = np.complex128, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=11)
    out = warpfft.nufft2d1(*[torch.from_numpy(p) for p in pts], torch.from_numpy(c), n,
                           eps=1e-9)
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu"
    assert rel_err(out.numpy(), exact(1, pts, c, n, 1)) <= SLACK * 1e-9


def test_jax():
    jax = pytest.importorskip("jax", reason="jax not installed")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("jax has no GPU")
    dtype, n = np.complex64, SHAPES[2]
    pts, c, f = problem(2, dtype, seed=12)
    jx = [jax.device_put(p, gpu) for p in pts]
    out = warpfft.nufft2d1(*jx, jax.device_put(c, gpu), n, eps=1e-5)
    assert isinstance(out, jax.Array) and out.shape == n
    assert rel_err(np.asarray(out), exact(1, pts, c, n, 1)) <= SLACK * 1e-5
    out2 = warpfft.nufft2d2(*jx, jax.device_put(f, gpu), eps=1e-5)
    assert isinstance(out2, jax.Array)
    assert rel_err(np.asarray(out2), exact(2, pts, f, n, -1)) <= SLACK * 1e-5


def test_numba():
    cuda = pytest.importorskip("numba.cuda", reason="numba not installed")
    if not cuda.is_available():
        pytest.skip("numba has no CUDA")
    dtype, n = np.complex128, SHAPES[1]
    pts, c, _ = problem(1, dtype, seed=13)
    out = warpfft.nufft1d1(cuda.to_device(pts[0]), cuda.to_device(c), n, eps=1e-9)
    assert rel_err(out.copy_to_host(), exact(1, pts, c, n, 1)) <= SLACK * 1e-9


def test_dlpack_generic_producer():
    """Anything with __dlpack__ (here a DeviceArray seen only through DLPack)."""
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=14)

    class Only:
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__(stream=stream)

    d = [Only(warpfft.DeviceArray.from_host(p)) for p in pts]
    out = warpfft.nufft2d1(*d, Only(warpfft.DeviceArray.from_host(c)), n, eps=1e-5)
    assert isinstance(out, warpfft.DeviceArray)
    assert rel_err(out.get(), exact(1, pts, c, n, 1)) <= SLACK * 1e-5


def _no_points_then_bad_points(plan, c, pts, targets=(), at=0):
    """A fresh plan: execute raises NO_POINTS; setpts with a NaN at pts[0][at] raises
    BAD_POINTS and leaves the plan without points."""
    with pytest.raises(warpfft.WarpfftError) as ei:
        plan.execute(c)
    assert ei.value.name == "WARPFFT_ERR_NO_POINTS"
    bad = pts[0].copy()
    bad[at] = np.nan
    with pytest.raises(warpfft.InvalidArgumentError) as ei:
        plan.setpts(bad, *pts[1:], *targets)
    assert ei.value.name == "WARPFFT_ERR_BAD_POINTS"
    assert plan.M is None


def test_errors_with_a_gpu():
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = problem(2, dtype, seed=15)
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        _no_points_then_bad_points(plan, c, pts, at=5)
        plan.setpts(*pts)
        with pytest.raises(TypeError):
            plan.execute(c[:-1])
        with pytest.raises(warpfft.InvalidArgumentError):
            plan.setpts(pts[0])  # y missing for 2D
    plan.close()  # idempotent


@pytest.mark.parametrize("type_", [1, 2])
def test_unchecked_bad_points_give_nan_and_setpts_check_raises(type_):
    """check_points=False: setpts does not raise (no host wait); every output of execute is NaN
    and setpts_check raises BAD_POINTS; good points afterwards give an accurate result."""
    dtype, n = np.complex128, SHAPES[3]
    pts, c, f = problem(3, dtype, seed=16)
    with warpfft.Plan(type_, n, dtype=dtype, eps=1e-9, check_points=False) as plan:
        bad = pts[1].copy()
        bad[3] = np.inf
        plan.setpts(pts[0], bad, pts[2])
        assert plan.M == pts[0].size
        with pytest.raises(warpfft.InvalidArgumentError) as ei:
            plan.setpts_check()
        assert ei.value.name == "WARPFFT_ERR_BAD_POINTS"
        out = plan.execute(c if type_ == 1 else f)
        assert np.isnan(out).all()
        plan.setpts(*pts)
        plan.setpts_check()
        out = plan.execute(c if type_ == 1 else f)
        want = exact(1, pts, c, n, 1) if type_ == 1 else exact(2, pts, f, n, -1)
        assert rel_err(out, want) <= SLACK * 1e-9


def test_runtime_info_and_cufft_probe():
    info = warpfft.runtime_info()
    assert isinstance(info, dict) and "gpu_error" not in info, info
    path, version = warpfft.cufft_probe()
    assert path and version > 0


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
def test_accuracy_contract(type_, dim, dtype):
    """Relative l2 error vs the direct sum <= eps (DESIGN.md: "Ours must be <= tol")."""
    n = SHAPES[dim]
    pts, c, f = problem(dim, dtype, seed=11, M=1000)
    data = c if type_ == 1 else f
    ref = exact(type_, pts, data, n, 1)
    misses = []
    for eps in ((1e-2, 1e-4, 1e-5, 1e-6) if dtype == np.complex64 else (1e-6, 1e-9, 1e-12)):
        with warpfft.Plan(type_, n, eps=eps, isign=1, dtype=dtype) as plan:
            plan.setpts(*pts)
            err = rel_err(plan.execute(data), ref)
            if err > eps:
                misses.append(f"eps {eps:g}: error {err:.3g} (width {plan.info['width']})")
    assert not misses, "relative l2 error above eps: " + "; ".join(misses)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
def test_spreadinterponly_against_kernel_sum(type_, dim, dtype):
    """gpu_spreadinterponly=1 (as the reference: no FFT, no deconvolution, the grid is the mode
    array) against the direct kernel sum with the plan's width and beta; batch of 2."""
    from _kernel_sum import interp, spread

    n = {1: (64,), 2: (40, 36), 3: (24, 26, 28)}[dim]  # each N >= 2w (w 12 at 1e-9 3D)
    pts, c, _ = problem(dim, dtype, n_trans=2, seed=16)
    f = (np.random.default_rng(17).standard_normal((2,) + n) + 0j).astype(dtype)
    eps = 1e-5 if dtype == np.complex64 else 1e-9
    # f64: the device's kernel against numpy's at w 12, beta 28 (2D/3D at 1e-9) differ by 1.5e-12
    # (H200): two evaluations of e^(beta (sqrt(1 - z^2) - 1)) at a larger beta
    tol = 1e-5 if dtype == np.complex64 else 1e-11
    with warpfft.Plan(type_, n, 2, eps, dtype=dtype, gpu_spreadinterponly=1) as plan:
        plan.setpts(*pts)
        info = plan.info
        assert info["n_fine"] == n and info["method"] == "gm"
        w, beta = info["width"], info["beta"]
        if type_ == 1:
            got = plan.execute(c)
            assert got.shape == (2,) + n
            assert rel_err(got, spread(pts, c, n, w, beta)) <= tol
        else:
            got = plan.execute(f)
            assert got.shape == (2, M)
            assert rel_err(got, interp(pts, f, n, w, beta)) <= tol
    # the one-call form, on cupy where installed (MRI density compensation's use)
    if type_ == 1:
        got = getattr(warpfft, f"nufft{dim}d1")(*pts, c, n, eps=eps, gpu_spreadinterponly=1)
        assert rel_err(got, spread(pts, c, n, w, beta)) <= tol


def test_spreadinterponly_small_grid_refused():
    with pytest.raises(warpfft.InvalidArgumentError, match="twice the kernel width"):
        warpfft.Plan(1, (64, 5), eps=1e-5, gpu_spreadinterponly=1)


# ---- type 3 (non-uniform to non-uniform), against exact numpy sums ----

EPS3 = {np.complex64: 1e-4, np.complex128: 1e-9}


def problem3(dim, dtype, n_trans=None, seed=20, M=200, K=150):
    """Sources in boxes off the origin, targets over wider, shifted ranges (not periodic)."""
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    x = [rng.uniform(-2.0 + d, 7.0 + d, M).astype(real) for d in range(dim)]
    s = [rng.uniform(-25.0 - 3 * d, 40.0, K).astype(real) for d in range(dim)]
    b = () if n_trans is None else (n_trans,)
    c = (rng.standard_normal(b + (M,)) + 1j * rng.standard_normal(b + (M,))).astype(dtype)
    return x, s, c


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_plan_host_numpy(dim, dtype):
    x, s, c = problem3(dim, dtype)
    eps = EPS3[dtype]
    with warpfft.Plan(3, dim, eps=eps, dtype=dtype) as plan:  # isign: +1, the reference's
        plan.setpts(*x, *[None] * (3 - dim), *s)
        assert plan.M == 200 and plan.K == 150 and plan.fk_shape == (150,)
        out = plan.execute(c)
        assert isinstance(out, np.ndarray) and out.dtype == dtype and out.shape == (150,)
        assert rel_err(out, exact3(x, s, c, 1)) <= SLACK * eps
        info = plan.info
        assert info["type"] == 3 and info["n_points"] == 200 and info["n_targets"] == 150
        assert info["inner_precision"] in ("f32", "f64") and info["inner_width"] > 0
        # centres and half-widths in the Python order: x first
        for d in range(dim):
            lo, hi = float(x[d].min()), float(x[d].max())
            assert abs(info["x_center"][d] - (lo + hi) / 2) <= 1e-5 * (abs(lo) + abs(hi))
            assert abs(info["x_half"][d] - (hi - lo) / 2) <= 1e-5 * (abs(lo) + abs(hi))
            lo, hi = float(s[d].min()), float(s[d].max())
            assert abs(info["s_half"][d] - (hi - lo) / 2) <= 1e-5 * (abs(lo) + abs(hi))


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_one_call_batch_and_isign(dim):
    dtype, nt = np.complex128, 2
    x, s, c = problem3(dim, dtype, n_trans=nt, seed=21)
    f3 = getattr(warpfft, f"nufft{dim}d3")
    for _ in range(2):  # the second call reuses the cached plan
        out = f3(*x, c, *s, eps=1e-9)
        assert out.shape == (nt, 150)
        assert rel_err(out, exact3(x, s, c, 1)) <= SLACK * 1e-9
    given = np.empty((nt, 150), dtype)
    assert f3(*x, c, *s, out=given, eps=1e-9, isign=-1) is given
    assert rel_err(given, exact3(x, s, c, -1)) <= SLACK * 1e-9
    # another M and K (and spreads) through the same cached plan: new grids at setpts
    x2, s2, c2 = problem3(dim, dtype, n_trans=nt, seed=22, M=57, K=311)
    s2 = [(3 if dim < 3 else 1.5) * v for v in s2]  # 3D at 3x: a 52 GB cuFFT work area
    out = f3(*x2, c2, *s2, eps=1e-9)
    assert out.shape == (nt, 311) and rel_err(out, exact3(x2, s2, c2, 1)) <= SLACK * 1e-9


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
def test_type3_direct_sample_and_accuracy(dtype):
    """warpfft.direct_sample(3, ...) is the exact sum; the plan meets eps against it."""
    x, s, c = problem3(2, dtype, seed=23, M=2000, K=1000)
    ref = exact3(x, s, c, 1)
    idx = np.array([0, 1, 500, 999])
    got = warpfft.direct_sample(3, 2, *x, c=c, s=s[0], t=s[1], sample=idx)
    assert rel_err(got, ref[idx]) < (1e-5 if dtype == np.complex64 else 1e-12)
    misses = []
    for eps in ((1e-2, 1e-4, 1e-5) if dtype == np.complex64 else (1e-6, 1e-9, 1e-12)):
        err = rel_err(warpfft.nufft2d3(*x, c, *s, eps=eps), ref)
        if err > eps:
            misses.append(f"eps {eps:g}: error {err:.3g}")
    assert not misses, "type 3 relative l2 error above eps: " + "; ".join(misses)


def test_type3_device_arrays_and_errors():
    dtype = np.complex64
    x, s, c = problem3(3, dtype, seed=24)
    dx = [warpfft.DeviceArray.from_host(v) for v in x]
    ds = [warpfft.DeviceArray.from_host(v) for v in s]
    with warpfft.Plan(3, 3, eps=1e-5, dtype=dtype) as plan:
        _no_points_then_bad_points(plan, c, x, s, at=3)
        plan.setpts(*dx, *ds)
        del dx, ds  # the C library copied them
        dout = plan.execute(warpfft.DeviceArray.from_host(c))
        assert isinstance(dout, warpfft.DeviceArray) and dout.shape == (150,)
        assert rel_err(dout.get(), exact3(x, s, c, 1)) <= SLACK * 1e-5


def test_type3_cupy():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    dtype, nt = np.complex128, 2
    x, s, c = problem3(2, dtype, n_trans=nt, seed=25)
    out = warpfft.nufft2d3(*[cp.asarray(v) for v in x], cp.asarray(c),
                           *[cp.asarray(v) for v in s], eps=1e-9)
    assert isinstance(out, cp.ndarray) and out.shape == (nt, 150)
    assert rel_err(cp.asnumpy(out), exact3(x, s, c, 1)) <= SLACK * 1e-9
    with warpfft.Plan(3, 2, nt, 1e-9, dtype=dtype) as plan:  # cupy out=
        plan.setpts(*[cp.asarray(v) for v in x], None, *[cp.asarray(v) for v in s])
        o = cp.empty((nt, 150), dtype)
        assert plan.execute(cp.asarray(c), out=o) is o
        assert rel_err(cp.asnumpy(o), exact3(x, s, c, 1)) <= SLACK * 1e-9
