"""Numerics on a GPU against a numpy direct sum (small sizes): 1D/2D/3D, type 1/2, f32/f64,
numpy (host) path, DeviceArray / cupy / torch (zero-copy) paths. Skip with "no GPU: ..." when
device 0 cannot be initialised."""

import numpy as np
import pytest
from _support import direct_matrix, rel_err, require_gpu, warpfft

pytestmark = pytest.mark.gpu

SHAPES = {1: (37,), 2: (24, 17), 3: (12, 9, 10)}  # (N1[, N2[, N3]]), odd and even
EPS = {np.complex64: 1e-5, np.complex128: 1e-10}
M = 300
# The binding tests allow 10x the requested eps: a layout, sign, batch or mode-order mistake
# gives O(1) errors. test_accuracy_contract holds the library to eps itself (DESIGN.md).
SLACK = 10


@pytest.fixture(autouse=True)
def _gpu():
    require_gpu()


def _problem(dim, dtype, n_trans=1, seed=0, M=M):
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]
    pts[0][:3] = [-np.pi, 3.0, 7.5]  # edge and out-of-range (folded) coordinates
    shape = ((n_trans,) if n_trans > 1 else ()) + (M,)
    c = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    fshape = ((n_trans,) if n_trans > 1 else ()) + SHAPES[dim][::-1]
    f = (rng.standard_normal(fshape) + 1j * rng.standard_normal(fshape)).astype(dtype)
    return pts, c, f


def _reference(type_, pts, data, n_modes, isign, modeord=0, n_trans=1):
    A = direct_matrix(pts, n_modes, isign, modeord)
    d = np.asarray(data, np.complex128).reshape(n_trans, -1)
    out = (d @ A) if type_ == 1 else (d @ A.T)  # type 1: sum_j c_j A[j, k]; type 2: A @ f
    return out


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
def test_plan_host_numpy(type_, dim, dtype):
    n = SHAPES[dim]
    pts, c, f = _problem(dim, dtype)
    eps = EPS[dtype]
    isign = 1 if type_ == 1 else -1
    with warpfft.Plan(type_, n, dtype=dtype, eps=eps, isign=isign) as plan:
        plan.setpts(*pts)
        assert plan.fk_shape == n[::-1] and plan.c_shape == (M,)
        data = c if type_ == 1 else f
        out = plan.execute(data)
        assert isinstance(out, np.ndarray) and out.dtype == dtype
        assert out.shape == (plan.fk_shape if type_ == 1 else plan.c_shape)
        ref = _reference(type_, pts, data, n, isign)
        assert rel_err(out, ref) <= SLACK * eps
        info = plan.info
        assert info["n_points"] == M and info["dim"] == dim and info["method"] in ("gm", "sm")
        assert info["n_modes"] == n and plan.workspace_bytes > 0


@pytest.mark.parametrize("type_", [1, 2])
def test_batch_modeord_isign(type_):
    dim, dtype, n_trans = 2, np.complex128, 3
    n = SHAPES[dim]
    pts, c, f = _problem(dim, dtype, n_trans=n_trans, seed=1)
    with warpfft.Plan(type_, n, dtype=dtype, eps=1e-9, isign=-1, n_trans=n_trans,
                      modeord=1) as plan:
        plan.setpts(*pts)
        assert plan.fk_shape == (n_trans,) + n[::-1] and plan.c_shape == (n_trans, M)
        data = c if type_ == 1 else f
        out = plan.execute(data)
        ref = _reference(type_, pts, data, n, -1, modeord=1, n_trans=n_trans)
        assert out.shape == (plan.fk_shape if type_ == 1 else plan.c_shape)
        assert rel_err(out, ref) <= SLACK * 1e-9


def test_plan_reuse_new_points_and_out():
    dtype, n = np.complex64, SHAPES[2]
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        for seed, m in ((2, 200), (3, 500)):
            pts, c, _ = _problem(2, dtype, seed=seed, M=m)
            plan.setpts(*pts)
            out = np.empty(plan.fk_shape, dtype)
            for scale in (1, 2):
                r = plan.execute(scale * c, out=out)
                assert r is out
                assert rel_err(out, _reference(1, pts, scale * c, n, 1)) <= SLACK * 1e-5


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_convenience_functions(dim):
    dtype = np.complex128
    n = SHAPES[dim]
    pts, c, f = _problem(dim, dtype, seed=4)
    t1 = getattr(warpfft, f"nufft{dim}d1")(*pts, c, n, eps=1e-9)
    assert t1.shape == n[::-1]
    assert rel_err(t1, _reference(1, pts, c, n, 1)) <= SLACK * 1e-9
    t2 = getattr(warpfft, f"nufft{dim}d2")(*pts, f, eps=1e-9)
    assert t2.shape == (M,)
    assert rel_err(t2, _reference(2, pts, f, n, -1)) <= SLACK * 1e-9


def test_direct_sample_matches_numpy():
    dim, dtype = 3, np.complex128
    n = SHAPES[dim]
    pts, c, f = _problem(dim, dtype, seed=5)
    sample = np.array([0, 1, 17, np.prod(n) - 1])
    got = warpfft.direct_sample(1, n, *pts, c=c, sample=sample)
    ref = _reference(1, pts, c, n, 1).ravel()[sample]
    assert rel_err(got, ref) < 1e-12
    sample = np.array([0, 5, M - 1])
    got = warpfft.direct_sample(2, n, *pts, fk=f, sample=sample, isign=-1)
    ref = _reference(2, pts, f, n, -1).ravel()[sample]
    assert rel_err(got, ref) < 1e-12


def test_device_array_zero_copy_path():
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = _problem(2, dtype, seed=6)
    dpts = [warpfft.DeviceArray.from_host(p) for p in pts]
    dc = warpfft.DeviceArray.from_host(c)
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        plan.setpts(*dpts)
        dout = plan.execute(dc)
        assert isinstance(dout, warpfft.DeviceArray) and dout.shape == plan.fk_shape
        out = dout.get()
    assert rel_err(out, _reference(1, pts, c, n, 1)) <= SLACK * 1e-5


def test_cupy_path():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    dtype, n = np.complex64, SHAPES[3]
    pts, c, f = _problem(3, dtype, seed=7)
    gpts = [cp.asarray(p) for p in pts]
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        plan.setpts(*gpts)
        gout = plan.execute(cp.asarray(c))
        assert isinstance(gout, cp.ndarray) and gout.shape == plan.fk_shape
        assert rel_err(cp.asnumpy(gout), _reference(1, pts, c, n, 1)) <= SLACK * 1e-5
    with warpfft.Plan(2, n, dtype=dtype, eps=1e-5) as plan:
        plan.setpts(*gpts)
        gc = cp.empty(M, dtype)
        r = plan.execute(cp.asarray(f), out=gc)
        assert r is gc
        cp.cuda.Stream.null.synchronize()
        assert rel_err(cp.asnumpy(gc), _reference(2, pts, f, n, 1)) <= SLACK * 1e-5


def test_cupy_convenience_and_stream():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    dtype, n = np.complex128, SHAPES[2]
    pts, c, _ = _problem(2, dtype, seed=8)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        gpts = [cp.asarray(p) for p in pts]
        gc = cp.asarray(c)
    out = warpfft.nufft2d1(*gpts, gc, n, eps=1e-10, stream=stream.ptr)
    stream.synchronize()
    assert isinstance(out, cp.ndarray)
    assert rel_err(cp.asnumpy(out), _reference(1, pts, c, n, 1)) <= SLACK * 1e-10


def test_torch_path():
    torch = pytest.importorskip("torch", reason="torch not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    dtype, n = np.complex64, SHAPES[1]
    pts, c, _ = _problem(1, dtype, seed=9)
    tx = torch.from_numpy(pts[0]).cuda()
    tc = torch.from_numpy(c).cuda()
    out = warpfft.nufft1d1(tx, tc, n, eps=1e-5)
    assert isinstance(out, torch.Tensor) and out.is_cuda and tuple(out.shape) == n
    torch.cuda.synchronize()
    assert rel_err(out.cpu().numpy(), _reference(1, pts, c, n, 1)) <= SLACK * 1e-5


def test_errors_with_a_gpu():
    dtype, n = np.complex64, SHAPES[2]
    pts, c, _ = _problem(2, dtype, seed=10)
    with warpfft.Plan(1, n, dtype=dtype, eps=1e-5) as plan:
        with pytest.raises(warpfft.WarpfftError) as ei:
            plan.execute(c)
        assert ei.value.name == "WARPFFT_ERR_NO_POINTS"
        bad = pts[0].copy()
        bad[5] = np.nan
        with pytest.raises(warpfft.InvalidArgumentError) as ei:
            plan.setpts(bad, pts[1])
        assert ei.value.name == "WARPFFT_ERR_BAD_POINTS"
        plan.setpts(*pts)
        with pytest.raises(warpfft.InvalidArgumentError):
            plan.execute(c[:-1])
        with pytest.raises(warpfft.InvalidArgumentError):
            plan.setpts(pts[0])  # y missing for 2D
        # raw C call with the wrong precision
        st = warpfft._lib.lib.warpfft_execute(plan._handle, 2, None, None)
        assert st != 0
    assert plan._handle is None
    plan.close()  # idempotent


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
    pts, c, f = _problem(dim, dtype, seed=11, M=1000)
    data = c if type_ == 1 else f
    ref = _reference(type_, pts, data, n, 1)
    misses = []
    for eps in ((1e-2, 1e-4, 1e-5, 1e-6) if dtype == np.complex64 else (1e-6, 1e-9, 1e-12)):
        with warpfft.Plan(type_, n, dtype=dtype, eps=eps) as plan:
            plan.setpts(*pts)
            err = rel_err(plan.execute(data), ref)
            if err > eps:
                misses.append(f"eps {eps:g}: error {err:.3g} (width {plan.info['width']})")
    assert not misses, "relative l2 error above eps: " + "; ".join(misses)
