"""warpfft.torch with real-valued data (``real_data=True``, docs/real.md): type 1 real values ->
complex half modes, type 2 half modes -> real values, with autograd.

Without a GPU: the ops' registration and fake (meta) shapes and dtypes, the argument errors,
the adjoint identities of the backward formulas with dense numpy matrices (the halving rule of
the type-1 backward, even N's N/2 column included), and the ops end to end over the fake C
library (conftest.py's fake_c: exact sums on host memory, as warpfft.h states real_data):
values, torch.autograd.gradcheck of values and points, torch.compile, opcheck. On a GPU
(skipped visibly without one): values against dense float64 sums and the complex op, f32/f64,
1-3 D, even and odd last N, batch 2, and gradcheck in float64.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_torch_real.py -q -rs
"""

import numpy as np
import pytest
from _nufft_ref import direct1, relerr
# first, before warpfft: skips the module without a library or PyTorch
from _torch_support import require_cuda, torch

import warpfft.torch as wt
from warpfft.torch import _real


def _k(n, modeord):
    return np.fft.fftfreq(n) * n if modeord else np.arange(-(n // 2), n - n // 2)


def _half_ks(n_modes, modeord):
    """The k of every half mode, (D, H_total) in the half's row-major order (last axis halved:
    k = 0 .. N//2)."""
    axes = [_k(n, modeord) for n in n_modes[:-1]] + [np.arange(n_modes[-1] // 2 + 1)]
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in grids]), grids[0].shape


def _matrix(pts, n_modes, s, modeord=1):
    """A_kj = e^{i s k.x_j} on the half (H_total, M), the half's shape, and a_k (H_total,)."""
    ks, shape = _half_ks(n_modes, modeord)
    A = np.exp(1j * s * (ks.T @ np.asarray(pts, np.float64)))
    a = np.where(ks[-1] > 0, 2.0, 1.0)
    return A, shape, a


def real1(c, pts, n_modes, s, modeord=1):
    """Dense type 1 of real c (..., M) -> half modes (..., N1, .., N//2 + 1)."""
    A, shape, _ = _matrix(pts, n_modes, s, modeord)
    return (np.asarray(c, np.float64) @ A.T).reshape(np.shape(c)[:-1] + shape)


def real2(f, pts, s, modeord=1):
    """Dense real type 2 of the half modes f (..., N1, .., H) -> real (..., M), planned as
    N = 2H - 1 (C's rule: a_k = 2 for k_last > 0)."""
    D = len(pts)
    half = f.shape[-D:]
    A, _, a = _matrix(pts, tuple(half[:-1]) + (2 * half[-1] - 1,), s, modeord)
    fl = np.asarray(f, np.complex128).reshape(f.shape[:-D] + (-1,))
    return ((fl * a) @ A).real


def _real_data(rng, dim, M, batch=(), dtype=torch.float64, device="cpu"):
    pts = rng.uniform(-np.pi, np.pi, (dim, M))
    c = rng.standard_normal(batch + (M,))
    return (torch.tensor(pts, dtype=dtype, device=device),
            torch.tensor(c, dtype=dtype, device=device), pts, c)


def _half(rng, batch, n_modes, dtype=torch.complex128, device="cpu"):
    shape = batch + _real.half(n_modes)
    f = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return torch.tensor(f, dtype=dtype, device=device), f


# ---- registration, fake shapes and dtypes ---------------------------------------------------


def test_real_data_rides_in_the_options_of_the_existing_ops():
    """No new ops: real_data is a field of the opts record the complex ops already take."""
    opts = wt.op_options(2, real_data=True)
    assert _real.is_real(opts) and not _real.is_real(wt.op_options(2))
    assert torch.ops.warpfft.nufft1.default is wt.nufft1_op
    assert _real.half((6, 7)) == (6, 4) and _real.full((6, 4)) == (6, 7)
    assert _real.half((8,)) == (5,) and _real.full((5,)) == (9,)


@pytest.mark.parametrize("dim,n_modes", [(1, (8,)), (2, (6, 7)), (3, (4, 5, 6))])
@pytest.mark.parametrize("real", [torch.float32, torch.float64])
def test_fake_shapes_and_dtypes_meta(dim, n_modes, real):
    cplx = _real.COMPLEX[real]
    opts = wt.op_options(dim, real_data=True)
    p = torch.empty((dim, 11), dtype=real, device="meta")
    v = torch.empty((2, 11), dtype=real, device="meta")
    f = wt.nufft1_op(p, v, list(n_modes), -1, 1e-6, opts)
    assert f.device.type == "meta" and f.dtype == cplx
    assert tuple(f.shape) == (2,) + n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    c = wt.nufft2_op(p, torch.empty(f.shape, dtype=cplx, device="meta"), -1, 1e-6, opts)
    assert c.dtype == real and tuple(c.shape) == (2, 11)


def test_fake_tensor_mode_shapes(monkeypatch):
    from torch._subclasses.fake_tensor import FakeTensorMode

    from warpfft.torch import _checks
    monkeypatch.setattr(_checks, "FIRST_DEVICE", -1)  # fake CPU tensors stand for CUDA ones
    opts = wt.op_options(2, real_data=True)
    with FakeTensorMode():
        p = torch.empty((2, 9), dtype=torch.float32)
        v = torch.empty((3, 9), dtype=torch.float32)
        f = wt.nufft1_op(p, v, [6, 10], 1, 1e-5, opts)
        c = wt.nufft2_op(p, f, 1, 1e-5, opts)
    assert tuple(f.shape) == (3, 6, 6) and f.dtype == torch.complex64
    assert tuple(c.shape) == (3, 9) and c.dtype == torch.float32


# ---- argument errors ------------------------------------------------------------------------


def _errors(device):
    rng = np.random.default_rng(1)
    p, v, _, _ = _real_data(rng, 2, 10, (2,), device=device)
    vc = v.to(torch.complex128)
    f, _ = _half(rng, (2,), (6, 8), device=device)
    t = torch.zeros((2, 5), dtype=torch.float64, device=device)
    return [
        (lambda: wt.finufft_type1(p, vc, (6, 8), real_data=True), TypeError,
         "real_data=True: type 1 takes real values"),
        (lambda: wt.finufft_type1(p, v, (6, 8)), TypeError, "real_data=True: type 1 takes real"),
        (lambda: wt.finufft_type1(p.float(), v, (6, 8), real_data=True), TypeError,
         "points have dtype torch.float32"),
        (lambda: wt.finufft_type1(p, v[:, :7], (6, 8), real_data=True), ValueError,
         "last axis must have the points' M"),
        (lambda: wt.finufft_type2(p, f.real, real_data=True), TypeError,
         "type 2 takes the complex half modes"),
        (lambda: wt.finufft_type2(p, f[..., :0], real_data=True), ValueError,
         "last axis H = N//2 \\+ 1 must be at least 1"),
        (lambda: wt.finufft_type3(p, vc, t, real_data=True), ValueError,
         "real_data=True is for types 1 and 2"),
        (lambda: wt.toeplitz(p, torch.zeros((2, 6, 8), dtype=torch.complex128, device=device),
                             real_data=True), ValueError, "Toeplitz operator takes complex"),
        (lambda: wt.Toeplitz(p, (6, 8), real_data=True), ValueError,
         "Toeplitz operator takes complex"),
        (lambda: wt.finufft_type1(p, v, (6, 8), real_data=2), ValueError, "real_data = 2"),
    ]


def test_argument_errors(fake_c):
    for call, exc, match in _errors("cpu"):
        with pytest.raises(exc, match=match):
            call()
    assert not any(c[0] == "warpfft_execute" for c in fake_c.calls)


def test_op_level_errors():
    """The ops themselves (called directly, or by torch.compile's graphs) check real data."""
    opts = wt.op_options(2, real_data=True)
    p = torch.empty((2, 9), dtype=torch.float64, device="meta")
    with pytest.raises(TypeError, match="real_data: values must be real"):
        wt.nufft1_op(p, torch.empty((1, 9), dtype=torch.complex128, device="meta"), [4, 4],
                     -1, 1e-6, opts)
    with pytest.raises(TypeError, match="points have dtype torch.float64 but values are"):
        wt.nufft1_op(p, torch.empty((1, 9), dtype=torch.float32, device="meta"), [4, 4],
                     -1, 1e-6, opts)
    with pytest.raises(TypeError, match="real_data: type 2 takes the complex half modes"):
        wt.nufft2_op(p, torch.empty((1, 4, 3), dtype=torch.float64, device="meta"), -1, 1e-6,
                     opts)
    with pytest.raises(ValueError, match="last axis H = N//2 \\+ 1 >= 1"):
        wt.nufft2_op(p, torch.empty((1, 4, 0), dtype=torch.complex128, device="meta"), -1,
                     1e-6, opts)
    with pytest.raises(ValueError, match="real_data is for types 1 and 2 only"):
        wt.nufft3_op(p, torch.empty((1, 9), dtype=torch.complex128, device="meta"),
                     torch.empty((2, 3), dtype=torch.float64, device="meta"), -1, 1e-6, opts)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):  # CPU tensors: no kernel
        wt.nufft1_op(torch.zeros((2, 9), dtype=torch.float64),
                     torch.zeros((1, 9), dtype=torch.float64), [4, 4], -1, 1e-6, opts)


# ---- the backward formulas against dense matrices (numpy only) ------------------------------


def _t1r_adjoint(g, pts, s, halve=True, modeord=1):
    """The type-1 backward's formula (_real.backward1): grad_c = T2r(-s, g / a), the C real
    type 2 (which doubles every k_last > 0 column, N/2 included) of the halved cotangent.
    halve=False: the formula without the halving (must fail the identity)."""
    a = np.where(np.arange(g.shape[-1]) > 0, 2.0, 1.0)
    return real2(g / a if halve else g, pts, -s, modeord)


@pytest.mark.parametrize("n_modes", [(8,), (7,), (4, 6), (5, 5), (3, 4, 6), (3, 4, 5)])
@pytest.mark.parametrize("s", [-1, 1])
def test_adjoint_identities_dense(n_modes, s):
    """<T1r c, g>_R = <c, T1r^H g> and <T2r f, g> = <f, T2r^H g>_R with dense matrices, for
    the formulas the backward uses; even last N (its N/2 column an ordinary output of type 1,
    weight 1 in the adjoint) and odd."""
    rng = np.random.default_rng(sum(n_modes) + s)
    D, M = len(n_modes), 13
    pts = rng.uniform(-np.pi, np.pi, (D, M))
    c = rng.standard_normal(M)
    hshape = _real.half(n_modes)
    g = rng.standard_normal(hshape) + 1j * rng.standard_normal(hshape)
    lhs = np.vdot(g, real1(c, pts, n_modes, s)).real  # Re(sum conj(g) y)
    assert abs(lhs - c @ _t1r_adjoint(g, pts, s)) <= 1e-11 * abs(lhs)
    # without the halving the identity fails (the C type 2's doubling would leak in)
    assert abs(lhs - c @ _t1r_adjoint(g, pts, s, halve=False)) > 1e-3 * abs(lhs)
    # type 2: y = T2r f (real), cotangent r real: grad_f = a * T1r(-s, r) on the half
    f = rng.standard_normal(hshape) + 1j * rng.standard_normal(hshape)
    r = rng.standard_normal(M)
    a = np.where(np.arange(hshape[-1]) > 0, 2.0, 1.0)
    lhs2 = r @ real2(f, pts, s)
    rhs2 = np.vdot(f, a * real1(r, pts, _real.full(hshape), -s)).real
    assert abs(lhs2 - rhs2) <= 1e-11 * abs(lhs2)


def test_half_type1_is_the_complex_sum_on_the_half():
    """The dense references agree with the complex exact sums (_nufft_ref) on the half; for even
    N the N/2 column (outside the complex range) is the same sum at k = N/2."""
    rng = np.random.default_rng(2)
    pts = rng.uniform(-np.pi, np.pi, (2, 9))
    c = rng.standard_normal((2, 9))
    full = direct1(c, list(pts), (4, 7), -1, 1)  # FFT order: k = 0, 1, 2, 3 first on axis 1
    assert relerr(real1(c, pts, (4, 7), -1)[..., :4], full[..., :4]) < 1e-14
    even = real1(c, pts, (4, 6), -1)
    assert even.shape == (2, 4, 4)
    assert relerr(even[..., 3], direct1(c, list(pts), (4, 8), -1, 1)[..., 3]) < 1e-14


# ---- the ops end to end over the fake C library (CPU) ---------------------------------------


@pytest.mark.parametrize("n_modes", [(8,), (7,), (4, 6), (5, 5), (3, 4, 6), (2, 3, 5)])
@pytest.mark.parametrize("real", [torch.float32, torch.float64])
def test_values_fake(fake_c, n_modes, real):
    rng = np.random.default_rng(len(n_modes) * 10 + n_modes[-1])
    D = len(n_modes)
    p, v, pn, vn = _real_data(rng, D, 17, (2,), real)
    tol = 1e-5 if real == torch.float32 else 1e-12
    for modeord in (0, 1):
        kw = dict(eps=1e-5 if real == torch.float32 else 1e-12, isign=1, modeord=modeord,
                  real_data=True)
        f = wt.finufft_type1(p, v, n_modes, **kw)
        assert f.dtype == _real.COMPLEX[real] and tuple(f.shape) == (2,) + _real.half(n_modes)
        assert relerr(f.numpy(), real1(vn, pn, n_modes, 1, modeord)) < tol
        c = wt.finufft_type2(p, f, **kw)
        assert c.dtype == real and tuple(c.shape) == (2, 17)
        assert relerr(c.numpy(), real2(f.numpy(), pn, 1, modeord)) < tol
    # batch axes: (2, 3, M) -> (2, 3, *half) and back
    v3 = torch.tensor(rng.standard_normal((2, 3, 17)), dtype=real)
    f3 = wt.finufft_type1(p, v3, n_modes, real_data=True)
    assert tuple(f3.shape) == (2, 3) + _real.half(n_modes)
    assert tuple(wt.finufft_type2(p, f3, real_data=True).shape) == (2, 3, 17)


def test_plans_are_real_plans_of_the_full_modes(fake_c):
    """Type 1 plans n_modes; type 2 plans N = 2H - 1 along the last axis, real_data set."""
    rng = np.random.default_rng(5)
    p, v, _, _ = _real_data(rng, 2, 10)
    f = wt.finufft_type1(p, v, (6, 8), real_data=True)
    wt.finufft_type2(p, f, real_data=True)
    creates = [c for c in fake_c.calls if c[0] == "warpfft_plan_create"]
    assert [c[3][:2] for c in creates] == [(8, 6), (9, 6)]  # C order: the halved axis first
    assert all(o["real_data"] == 1 for o in fake_c.opts_seen)


@pytest.mark.parametrize("n_modes", [(6,), (5,), (4, 6), (3, 5), (2, 3, 4), (2, 3, 3)])
@pytest.mark.parametrize("isign,modeord", [(-1, 1), (1, 0)])
def test_gradcheck_fake(fake_c, n_modes, isign, modeord):
    """gradcheck of values and points, types 1 and 2, even and odd last N, batch 2."""
    rng = np.random.default_rng(7 + n_modes[-1])
    p, v, _, _ = _real_data(rng, len(n_modes), 7, (2,))
    f, _ = _half(rng, (2,), n_modes)
    kw = dict(eps=1e-12, isign=isign, modeord=modeord, real_data=True)
    p.requires_grad_(True)
    v.requires_grad_(True)
    f.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda p, v: wt.finufft_type1(p, v, n_modes, **kw), (p, v))
    assert torch.autograd.gradcheck(lambda p, f: wt.finufft_type2(p, f, **kw), (p, f))


def test_gradcheck_fails_when_the_halving_is_wrong(fake_c, monkeypatch):
    """The gradcheck above sees a wrong N/2 column: doubled weights only below N/2 fail it."""
    rng = np.random.default_rng(9)
    p, v, _, _ = _real_data(rng, 1, 7, (1,))
    v.requires_grad_(True)

    right = _real.doubled

    def wrong(H, device, dtype):
        a = right(H, device, dtype)
        a[-1] = 1.0  # the even N's N/2 column treated as unpaired
        return a

    monkeypatch.setattr(_real, "doubled", wrong)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda v: wt.finufft_type1(p, v, 6, eps=1e-12, real_data=True),
                                 (v,))


def test_gradcheck_batched_points_fake(fake_c):
    rng = np.random.default_rng(11)
    p = torch.tensor(rng.uniform(-3, 3, (2, 2, 6)), requires_grad=True)  # S = 2 sets
    v = torch.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    f, _ = _half(rng, (4,), (3, 4))
    f.requires_grad_(True)
    kw = dict(eps=1e-12, real_data=True)
    assert torch.autograd.gradcheck(lambda p, v: wt.finufft_type1(p, v, (3, 4), **kw), (p, v))
    assert torch.autograd.gradcheck(lambda p, f: wt.finufft_type2(p, f, **kw), (p, f))


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_fake(fake_c, dynamic):
    """torch.compile (fullgraph, aot_eager: the fake implementations' shapes and dtypes) gives
    eager's values and gradients."""
    torch._dynamo.reset()
    rng = np.random.default_rng(12)
    p, v, _, _ = _real_data(rng, 2, 15, (2,))

    def fn(p, v):
        f = wt.finufft_type1(p, v, (6, 6), eps=1e-12, real_data=True)
        return wt.finufft_type2(p, f * 0.5, eps=1e-12, real_data=True)

    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    p1, v1 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    p2, v2 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    a, b = fn(p1, v1), compiled(p2, v2)
    assert b.dtype == torch.float64 and relerr(b.detach().numpy(), a.detach().numpy()) < 1e-12
    (a ** 2).sum().backward()
    (b ** 2).sum().backward()
    assert relerr(v2.grad.numpy(), v1.grad.numpy()) < 1e-10
    assert relerr(p2.grad.numpy(), p1.grad.numpy()) < 1e-10


def test_opcheck_real_fake(fake_c):
    if not hasattr(torch.library, "opcheck"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.opcheck")
    rng = np.random.default_rng(13)
    p = torch.tensor(rng.uniform(-3, 3, (2, 8)), requires_grad=True)
    v = torch.tensor(rng.standard_normal((2, 8)), requires_grad=True)
    f = torch.tensor(rng.standard_normal((2, 4, 3)) + 1j, requires_grad=True)
    opts = wt.op_options(2, real_data=True)
    for op, args in ((wt.nufft1_op, (p, v, [4, 5], -1, 1e-12, opts)),
                     (wt.nufft2_op, (p, f, -1, 1e-12, opts))):
        res = torch.library.opcheck(op, args)
        assert all(r == "SUCCESS" for r in res.values()), (op, res)


# ---- on a GPU -------------------------------------------------------------------------------


def test_argument_errors_gpu():
    require_cuda()
    for call, exc, match in _errors("cuda"):
        with pytest.raises(exc, match=match):
            call()


@pytest.mark.gpu
@pytest.mark.parametrize("n_modes", [(16,), (15,), (12, 10), (11, 9), (6, 8, 10), (6, 7, 9)])
@pytest.mark.parametrize("real", [torch.float32, torch.float64])
def test_values_gpu(n_modes, real):
    require_cuda()
    rng = np.random.default_rng(20 + n_modes[-1])
    D = len(n_modes)
    p, v, pn, vn = _real_data(rng, D, 300, (2,), real, device="cuda")
    eps, tol = (1e-5, 1e-4) if real == torch.float32 else (1e-10, 1e-8)
    for modeord, isign in ((1, -1), (0, 1)):
        kw = dict(eps=eps, isign=isign, modeord=modeord)
        f = wt.finufft_type1(p, v, n_modes, real_data=True, **kw)
        assert f.dtype == _real.COMPLEX[real] and tuple(f.shape) == (2,) + _real.half(n_modes)
        assert relerr(f.cpu().numpy(), real1(vn, pn, n_modes, isign, modeord)) < tol
        # the complex op of the same strengths, on the half's columns (FFT order: k = 0 .. first)
        if modeord == 1 and n_modes[-1] % 2:
            fc = wt.finufft_type1(p, v.to(f.dtype), n_modes, **kw)
            assert relerr(f.cpu().numpy(), fc[..., :n_modes[-1] // 2 + 1].cpu().numpy()) < tol
        c = wt.finufft_type2(p, f, real_data=True, **kw)
        assert c.dtype == real and tuple(c.shape) == (2, 300)
        assert relerr(c.cpu().numpy(), real2(f.cpu().numpy(), pn, isign, modeord)) < tol


@pytest.mark.gpu
@pytest.mark.parametrize("n_modes", [(6,), (5,), (4, 6), (3, 5), (2, 3, 4), (2, 3, 3)])
def test_gradcheck_gpu(n_modes):
    require_cuda()
    rng = np.random.default_rng(30 + n_modes[-1])
    p, v, _, _ = _real_data(rng, len(n_modes), 9, (2,), device="cuda")
    f, _ = _half(rng, (2,), n_modes, device="cuda")
    p.requires_grad_(True)
    v.requires_grad_(True)
    f.requires_grad_(True)
    kw = dict(eps=1e-12, isign=1, modeord=0, real_data=True)
    tols = dict(eps=1e-6, atol=1e-6, rtol=1e-5, nondet_tol=1e-12)  # spreading: atomics
    assert torch.autograd.gradcheck(lambda p, v: wt.finufft_type1(p, v, n_modes, **kw), (p, v),
                                    **tols)
    assert torch.autograd.gradcheck(lambda p, f: wt.finufft_type2(p, f, **kw), (p, f), **tols)
