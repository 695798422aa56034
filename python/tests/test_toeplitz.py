"""The Toeplitz normal operator T = A^H W A (warpfft.Toeplitz, warpfft.jax, warpfft.torch).

Without a GPU: the Python layer's conventions (axis order, isign, modeord, batches, weights
none/real/complex, adjoint), its argument errors and C calls, over the fake C library
(_fake.py: exact spectra and applications as warpfft.h defines them) against a dense
A^H W A; torch's autograd formulas (gradcheck, f64) on CPU tensors over the fake library;
JAX's primitives, shapes and derivatives with CPU stand-ins of the primitives
(scripts/toeplitz_jax_cpu.py, in a subprocess). On a GPU: values against warpfft's own
type 2 + weights + type 1 at eps/100 (dims 1-3, f32/f64, weights none/real/complex, batches,
modeord), the accuracy promise (relative error <= eps), cupy/torch/jax arrays, jax.grad /
vmap / jit, torch gradcheck.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \\
        python -m pytest python/tests/test_toeplitz.py -q -rs
"""

import os
import sys

import numpy as np
import pytest
from _support import LIBRARY, REPO, clean_env, gpu_status, rel_err, run, warpfft

SHAPES = {1: (19,), 2: (12, 7), 3: (6, 5, 4)}


def _k(n, modeord):
    return np.fft.fftfreq(n) * n if modeord else np.arange(-(n // 2), n - n // 2)


def dense_normal(f, pts, weights, isign, modeord=0, adjoint=False):
    """A^H W A f (W conjugated for the adjoint) by dense matrices: A_jk = exp(i isign k.x_j),
    modes (..., *n_modes) with x along the first mode axis."""
    dim = len(pts)
    n_modes = f.shape[f.ndim - dim:]
    grids = np.meshgrid(*[_k(n, modeord) for n in n_modes], indexing="ij")
    phase = sum(g.ravel()[None, :] * np.asarray(p, np.float64)[:, None]
                for g, p in zip(grids, pts))  # (M, N)
    A = np.exp(1j * (1 if isign >= 0 else -1) * phase)
    M = A.shape[0]
    w = np.ones(M) if weights is None else np.asarray(weights, np.complex128)
    if adjoint:
        w = np.conj(w)
    lead = f.shape[:f.ndim - dim]
    fl = np.asarray(f, np.complex128).reshape(lead + (-1,))
    out = ((fl @ A.T) * w) @ np.conj(A)
    return out.reshape(f.shape)


def problem(dim, dtype, weights, n_trans=None, M=40, seed=0, shapes=SHAPES, w_range=(0.2, 2.0),
            edge=False):
    """M points, weights (None, "real" or "complex": magnitudes uniform in w_range) and modes
    ((n_trans,) + shapes[dim]) drawn from the seed; edge: the first two x coordinates -pi (an
    edge) and 4.0 (a folded coordinate)."""
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]
    if edge:
        pts[0][:2] = [-np.pi, 4.0]
    if weights == "real":
        w = rng.uniform(*w_range, M).astype(real)
    elif weights == "complex":
        w = (rng.uniform(*w_range, M) * np.exp(1j * rng.uniform(0, 6, M))).astype(dtype)
    else:
        w = None
    b = () if n_trans is None else (n_trans,)
    shape = b + shapes[dim]
    f = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return pts, w, f


# ---- without a GPU: the Python layer over the fake library ---------------------------------


def test_params_without_gpu():
    p = warpfft.toeplitz_params((12, 7), n_trans=3, eps=1e-5)
    assert p["n_grid"] == (24, 14) and p["n_modes"] == (12, 7)  # L >= 2N - 1, even, smooth
    assert p["spectrum_real"] and p["spectrum_bytes"] == 24 * 14 * 4
    assert p["grid_bytes"] == 3 * 24 * 14 * 8 and p["kernel_tol"] == 5e-6
    q = warpfft.toeplitz_params(97, dtype="complex128", weights="complex", eps=1e-9)
    assert q["n_grid"] == (196,) and not q["spectrum_real"] and q["spectrum_bytes"] == 196 * 16
    with pytest.raises(warpfft.InvalidArgumentError, match="spreadinterponly"):
        warpfft.toeplitz_params(8, gpu_spreadinterponly=1)
    with pytest.raises(warpfft.InvalidArgumentError, match="weights="):
        warpfft.toeplitz_params(8, weights="imaginary")
    with pytest.raises(warpfft.WarpfftError, match="n_modes"):
        warpfft.toeplitz_params((8, 0))


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("weights", [None, "real", "complex"])
@pytest.mark.parametrize("isign,modeord", [(-1, 0), (1, 1)])
def test_values_on_the_fake_library(fake, dim, weights, isign, modeord):
    pts, w, f = problem(dim, np.complex128, weights, n_trans=2)
    with warpfft.Toeplitz(SHAPES[dim], *pts, weights=w, n_trans=2, eps=1e-9, isign=isign,
                          dtype="complex128", modeord=modeord) as op:
        for adjoint in (False, True):
            got = op.apply(f, adjoint=adjoint)
            want = dense_normal(f, pts, w, isign, modeord, adjoint)
            assert got.shape == f.shape and got.dtype == np.complex128
            assert rel_err(got, want) < 1e-10, (adjoint, rel_err(got, want))
    create = [c for c in fake.calls if c[0] == "warpfft_toeplitz_create"][0]
    # the C ABI's order: modes reversed, the sign of A, the weights' kind
    assert create[2] == SHAPES[dim][::-1] and create[3] == isign
    assert create[8] == {None: 0, "real": 1, "complex": 2}[weights]


def test_default_sign_is_type2s_and_f32(fake):
    pts, w, f = problem(2, np.complex64, "real")
    op = warpfft.Toeplitz(SHAPES[2], *pts, weights=w)  # isign -1, complex64
    got = op(f)
    assert got.dtype == np.complex64 and op.isign == -1
    assert rel_err(got, dense_normal(f, pts, w, -1)) < 1e-5
    assert rel_err(got, dense_normal(f, pts, w, +1)) > 1e-2  # the sign matters
    op.close()
    op.close()  # idempotent


def test_device_arrays_and_out(fake):
    from _fake import FakeDeviceArray

    pts, w, f = problem(3, np.complex128, "complex", n_trans=3)
    dpts = [FakeDeviceArray(fake, p) for p in pts]
    op = warpfft.Toeplitz(SHAPES[3], *dpts, weights=FakeDeviceArray(fake, w), n_trans=3,
                          eps=1e-9, dtype="complex128")
    din = FakeDeviceArray(fake, f)
    out = FakeDeviceArray(fake, np.zeros_like(f))
    assert op.apply(din, out=out) is out
    assert rel_err(out.get(), dense_normal(f, pts, w, -1)) < 1e-10
    op.apply(din, out=din)  # in place
    assert rel_err(din.get(), dense_normal(f, pts, w, -1)) < 1e-10
    info = op.info
    assert info["n_grid"] == (12, 10, 8) and info["n_points"] == 40 and not info["spectrum_real"]
    assert info["isign"] == -1 and info["ntransf"] == 3
    applies = [c for c in fake.calls if c[0] == "warpfft_toeplitz_apply"]
    assert len(applies) == 2 and [c[3] for c in applies] == [0, 0]
    op.close()
    assert fake.names()[-1] == "warpfft_toeplitz_destroy"


def test_argument_errors(fake):
    pts, w, f = problem(2, np.complex64, "real", M=10)
    with pytest.raises(warpfft.InvalidArgumentError, match="y is needed"):
        warpfft.Toeplitz((12, 7), pts[0])
    with pytest.raises(warpfft.InvalidArgumentError, match="`z` was given"):
        warpfft.Toeplitz((12, 7), *pts, pts[0])
    with pytest.raises(warpfft.InvalidArgumentError, match="weights"):
        warpfft.Toeplitz((12, 7), *pts, weights=w[:5])
    with pytest.raises(warpfft.InvalidArgumentError, match="dtype"):
        warpfft.Toeplitz((12, 7), *pts, weights=w.astype(np.float64))
    with pytest.raises(warpfft.InvalidArgumentError, match="Invalid option"):
        warpfft.Toeplitz((12, 7), *pts, nonsense=1)
    op = warpfft.Toeplitz((12, 7), *pts, weights=w, n_trans=2)
    with pytest.raises(warpfft.InvalidArgumentError, match=r"must be of shape \(2, 12, 7\)"):
        op(f)
    with pytest.raises(warpfft.InvalidArgumentError, match="dtype"):
        op(np.stack([f, f]).astype(np.complex128))
    fake.fail["warpfft_toeplitz_apply"] = 17
    with pytest.raises(warpfft.WarpfftError, match="fake failure"):
        op(np.stack([f, f]))
    op.close()
    with pytest.raises(warpfft.InvalidArgumentError, match="closed"):
        op(np.stack([f, f]))
    fake.fail["warpfft_toeplitz_create"] = 7
    with pytest.raises(warpfft.WarpfftError):
        warpfft.Toeplitz((12, 7), *pts)


# ---- torch's autograd on CPU tensors, over the fake library -------------------------------


@pytest.fixture
def torch_fake(fake_c, monkeypatch):
    """warpfft.torch's Toeplitz over the fake library (its type-2 transforms too: fake_c)."""
    from _fake import FakeLib
    from warpfft import _lib
    from warpfft.torch import _toeplitz as tt

    monkeypatch.setattr(_lib, "lib", FakeLib(_lib.lib))
    monkeypatch.setattr(tt, "_device", lambda t: 0)
    monkeypatch.setattr(tt, "_stream", lambda device: 0)
    monkeypatch.setattr(tt, "_CPU_OK", [True])
    tt.clear_cache()
    yield _lib.lib
    tt.clear_cache()


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("weights", [None, "real", "complex"])
@pytest.mark.parametrize("adjoint", [False, True])
def test_torch_values_and_gradcheck_on_cpu(torch_fake, dim, weights, adjoint):
    import torch
    import warpfft.torch as wt

    pts, w, f = problem(dim, np.complex128, weights, n_trans=2, M=12, seed=dim)
    points = torch.tensor(np.stack(pts))
    # torch's default mode order (modeord=1, FFT order) and isign=-1
    ft = torch.tensor(f, requires_grad=True)
    wtt = None if w is None else torch.tensor(w, requires_grad=True)
    op = wt.Toeplitz(points, SHAPES[dim], weights=wtt, eps=1e-12)
    got = op(ft, adjoint=adjoint)
    assert rel_err(got.detach().numpy(), dense_normal(f, pts, w, -1, 1, adjoint)) < 1e-10
    args = (ft,) if wtt is None else (ft, wtt)
    assert torch.autograd.gradcheck(lambda *a: op(a[0], adjoint=adjoint) if len(a) == 1 else
                                    wt.Toeplitz(points, SHAPES[dim], weights=a[1],
                                                eps=1e-12)(a[0], adjoint=adjoint), args)


def test_torch_gradcheck_fails_when_the_weights_formula_is_wrong(torch_fake, monkeypatch):
    """The gradient checks can fail: conjugating the weights' gradient is caught."""
    import torch
    import warpfft.torch as wt
    from warpfft.torch import _toeplitz as tt

    pts, w, f = problem(2, np.complex128, "complex", M=8)
    points = torch.tensor(np.stack(pts))
    ft = torch.tensor(f, requires_grad=True)
    wtt = torch.tensor(w, requires_grad=True)
    real_backward = tt._Normal.backward

    def wrong(ctx, g):
        gf, gw, *rest = real_backward(ctx, g)
        return (gf, None if gw is None else torch.conj(gw), *rest)

    monkeypatch.setattr(tt._Normal, "backward", staticmethod(wrong))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda a, b: wt.Toeplitz(points, SHAPES[2], weights=b,
                                                          eps=1e-12)(a), (ft, wtt))


def test_torch_argument_errors(torch_fake):
    import torch
    import warpfft.torch as wt

    pts = torch.zeros((2, 5), dtype=torch.float64)
    with pytest.raises(ValueError, match="not differentiable with respect to the points"):
        wt.Toeplitz(pts.clone().requires_grad_(True), (4, 4))
    with pytest.raises(ValueError, match="entries for 2D"):
        wt.Toeplitz(pts, (4,))
    with pytest.raises(TypeError, match="weights have dtype"):
        wt.Toeplitz(pts, (4, 4), weights=torch.ones(5, dtype=torch.float32))
    op = wt.Toeplitz(pts, (4, 4))
    with pytest.raises(TypeError, match="complex128"):
        op(torch.zeros((4, 4), dtype=torch.complex64))
    with pytest.raises(ValueError, match="last axes"):
        op(torch.zeros((4, 5), dtype=torch.complex128))


# ---- JAX: shapes and errors here, derivatives with CPU stand-ins (subprocess) ---------------


def test_jax_shapes_and_errors():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import warpfft.jax as wj
    from warpfft.jax import _toeplitz as jt

    x = jnp.zeros(30, jnp.float32)
    f = jnp.zeros((3, 12, 7), jnp.complex64)
    op = jax.eval_shape(lambda x, y: wj.Toeplitz((12, 7), x, y, weights=x), x, x)
    assert op.spectrum.shape == (24, 14) and op.spectrum.dtype == jnp.float32
    out = jax.eval_shape(lambda f, x, w: wj.toeplitz(f, x, x, weights=w), f, x,
                         jnp.zeros(30, jnp.complex64))
    assert out.shape == (3, 12, 7) and out.dtype == jnp.complex64
    assert jt.grid((12, 7), 1e-5, 1, (), "complex") == (24, 14)
    with pytest.raises(TypeError, match="real weights must be float32"):
        wj.Toeplitz((12, 7), x, x, weights=jnp.zeros(30, jnp.float64))
    with pytest.raises(ValueError, match="entries for 2 point arrays"):
        wj.Toeplitz((12,), x, x)
    with pytest.warns(UserWarning, match="eps = 1e-09 is outside"):  # runs at f32's 1e-6
        jax.eval_shape(lambda x, y: wj.Toeplitz((12, 7), x, y, eps=1e-9), x, x)
    with pytest.raises(warpfft.WarpfftError, match="tol = nan"):
        wj.Toeplitz((12, 7), x, x, eps=float("nan"))
    assert wj.Toeplitz.__name__ == "Toeplitz" and callable(wj.toeplitz)
    assert jt.operators_created() >= 0
    jt.clear_cache()


def test_jax_derivatives_vmap_jit_with_cpu_stand_ins():
    pytest.importorskip("jax", reason="JAX is not installed")
    script = os.path.join(os.path.dirname(__file__), "scripts", "toeplitz_jax_cpu.py")
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=os.pathsep.join(
        [os.path.join(REPO, "python"), os.path.dirname(__file__)]), JAX_PLATFORMS="cpu")
    r = run([sys.executable, script], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "toeplitz jax cpu: all checks passed" in r.stdout, r.stdout


# ---- on a GPU -------------------------------------------------------------------------------

gpu = pytest.mark.gpu


def _require_gpu():
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")


def pair_reference(f, pts, w, eps, isign, modeord=0, adjoint=False):
    """Type 2 (sign isign), weights, type 1 (sign -isign) with warpfft's own plans at eps/100,
    in f64: the reference the operator is held to."""
    dim = len(pts)
    n_modes = f.shape[f.ndim - dim:]
    lead = f.shape[:f.ndim - dim]
    nt = int(np.prod(lead, dtype=np.int64))
    p64 = [np.asarray(p, np.float64) for p in pts]
    fl = np.asarray(f, np.complex128).reshape((nt,) + n_modes)
    tol = max(eps / 100, 1e-13)
    c = warpfft.Plan(2, n_modes, n_trans=nt, eps=tol, isign=isign, dtype="complex128",
                     modeord=modeord)
    c.setpts(*p64)
    u = c.execute(fl if nt > 1 else fl[0]).reshape(nt, -1)
    ww = 1.0 if w is None else np.asarray(w, np.complex128)
    u = u * (np.conj(ww) if adjoint else ww)
    a = warpfft.Plan(1, n_modes, n_trans=nt, eps=tol, isign=-isign, dtype="complex128",
                     modeord=modeord)
    a.setpts(*p64)
    out = a.execute(u if nt > 1 else u[0])
    return np.asarray(out).reshape(f.shape)


GPU_SHAPES = {1: (1000,), 2: (64, 48), 3: (24, 20, 16)}


def gpu_problem(dim, dtype, weights, n_trans, M, seed=1):
    return problem(dim, dtype, weights, n_trans, M, seed, GPU_SHAPES, (0.1, 1.0), edge=True)


@gpu
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("weights", [None, "real", "complex"])
def test_gpu_against_type2_then_type1(dim, dtype, weights):
    """The accuracy promise: T f within eps of type 2 + weights + type 1 (at eps/100), for
    T and T^H, a batch of 3, both signs and mode orders."""
    _require_gpu()
    eps = 1e-5 if dtype == np.complex64 else 1e-9
    M = {1: 3000, 2: 8000, 3: 20000}[dim]
    pts, w, f = gpu_problem(dim, dtype, weights, 3, M)
    for isign, modeord in ((-1, 0), (1, 1)):
        op = warpfft.Toeplitz(GPU_SHAPES[dim], *pts, weights=w, n_trans=3, eps=eps,
                              isign=isign, dtype=dtype, modeord=modeord)
        for adjoint in (False, True):
            got = op.apply(f, adjoint=adjoint)
            ref = pair_reference(f, pts, w, eps, isign, modeord, adjoint)
            err = rel_err(got, ref)
            assert err <= eps, (isign, modeord, adjoint, err)
        info = op.info
        assert info["n_points"] == M and info["spectrum_bytes"] > 0 and info["build_ms"] > 0
        assert op.workspace_bytes >= info["spectrum_bytes"] + info["grid_bytes"]
        op.close()


@gpu
def test_gpu_array_kinds():
    """cupy, torch and jax arrays in, the same kind out (zero-copy)."""
    _require_gpu()
    pts, w, f = gpu_problem(2, np.complex64, "real", 2, 5000)
    op = warpfft.Toeplitz(GPU_SHAPES[2], *pts, weights=w, n_trans=2, eps=1e-5)
    want = op.apply(f)
    done = 0
    try:
        import cupy

        got = op.apply(cupy.asarray(f))
        assert isinstance(got, cupy.ndarray) and rel_err(got.get(), want) < 1e-6
        done += 1
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            got = op.apply(torch.tensor(f, device="cuda"))
            assert isinstance(got, torch.Tensor) and rel_err(got.cpu().numpy(), want) < 1e-6
            done += 1
    except ImportError:
        pass
    if done == 0:
        pytest.skip("neither cupy nor torch with CUDA is installed")
    op.close()


@gpu
def test_gpu_nan_points_raise():
    _require_gpu()
    pts, w, f = gpu_problem(2, np.complex64, None, 1, 100)
    pts[1][5] = np.nan
    with pytest.raises(warpfft.WarpfftError, match="NaN or infinite"):
        warpfft.Toeplitz(GPU_SHAPES[2], *pts)


@gpu
def test_gpu_zero_points_is_the_zero_operator():
    _require_gpu()
    op = warpfft.Toeplitz((8, 8), np.zeros(0, np.float32), np.zeros(0, np.float32))
    out = op.apply(np.ones((8, 8), np.complex64))
    assert np.all(out == 0) and op.info["spectrum_bytes"] == 0


@gpu
@pytest.mark.parametrize("weights", [None, "real", "complex"])
def test_gpu_jax_values_grad_vmap_jit(weights):
    _require_gpu()
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import warpfft.jax as wj

    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("no GPU: JAX sees no CUDA device")
    pts, w, f = gpu_problem(2, np.complex128, weights, 3, 4000)
    eps = 1e-9
    P = [jax.device_put(p, dev) for p in pts]
    W = None if w is None else jax.device_put(w, dev)
    F = jax.device_put(f, dev)
    op = wj.Toeplitz(GPU_SHAPES[2], *P, weights=W, eps=eps)
    ref = pair_reference(f, pts, w, eps, -1)
    assert rel_err(np.asarray(op(F)), ref) <= eps
    assert rel_err(np.asarray(wj.toeplitz(F, *P, weights=W, eps=eps)), ref) <= eps
    # vmap over the batch axis: one batched application; jit: no new operator after the first
    assert rel_err(np.asarray(jax.vmap(op)(F)), ref) <= eps
    step = jax.jit(lambda op, x: op(x))
    step(op, F).block_until_ready()
    created = wj._toeplitz.operators_created()
    for _ in range(3):
        step(op, F).block_until_ready()
    assert wj._toeplitz.operators_created() == created
    # derivatives against central differences of a real loss (f64)
    rng = np.random.default_rng(5)

    def loss(f, w):
        o = wj.Toeplitz(GPU_SHAPES[2], *P, weights=w, eps=eps)
        return jnp.sum(jnp.abs(o(f)) ** 2)

    df = jax.device_put(rng.standard_normal(f.shape) + 1j * rng.standard_normal(f.shape), dev)
    h = 1e-6
    gf = jax.grad(loss, 0)(F, W)
    num = (loss(F + h * df, W) - loss(F - h * df, W)) / (2 * h)
    ana = jnp.sum(jnp.real(gf * df))  # JAX's grad of a real L: dL = Re(grad . d)
    assert abs(float(num - ana)) <= 1e-5 * abs(float(num)), (num, ana)
    if W is not None:
        dw = rng.standard_normal(w.shape)
        if np.iscomplexobj(w):
            dw = dw + 1j * rng.standard_normal(w.shape)
        dw = jax.device_put(dw.astype(w.dtype), dev)
        gw = jax.grad(loss, 1)(F, W)
        num = (loss(F, W + h * dw) - loss(F, W - h * dw)) / (2 * h)
        ana = jnp.sum(jnp.real(gw * dw))
        assert abs(float(num - ana)) <= 1e-5 * abs(float(num)), (num, ana)


@gpu
def test_gpu_torch_values_and_gradcheck():
    _require_gpu()
    torch = pytest.importorskip("torch", reason="torch not installed")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: torch has no CUDA")
    import warpfft.torch as wt

    for weights in (None, "real", "complex"):
        pts, w, f = gpu_problem(2, np.complex128, weights, 2, 300, seed=3)
        points = torch.tensor(np.stack(pts), device="cuda")
        ft = torch.tensor(f[:, :8, :6].copy(), device="cuda", requires_grad=True)
        wtt = None if w is None else torch.tensor(w, device="cuda", requires_grad=True)
        op = wt.Toeplitz(points, (8, 6), weights=wtt, eps=1e-12)
        ref = pair_reference(f[:, :8, :6], pts, w, 1e-12, -1, modeord=1)
        assert rel_err(op(ft).detach().cpu().numpy(), ref) < 1e-10
        args = (ft,) if wtt is None else (ft, wtt)
        # atol 1e-6: outputs reach ~700 (300 points), so a central difference at eps 1e-6 carries
        # ~700 * 2^-52 / 1e-6 ~ 1e-7 of rounding where the Jacobian is exactly 0 (between the
        # two transforms); H200 measured 3e-8..1e-7 there, over atol 1e-8. The nonzero entries
        # (10..300) are held to rtol 1e-3.
        assert torch.autograd.gradcheck(
            lambda *a: wt.Toeplitz(points, (8, 6), weights=a[1] if len(a) > 1 else None,
                                   eps=1e-12)(a[0]), args, atol=1e-6)
