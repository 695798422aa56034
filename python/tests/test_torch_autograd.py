"""warpfft.torch's autograd formulas on the CPU, with the C transform replaced by exact sums in
torch (the ``exact_cpu_transform`` fixture): gradcheck of types 1, 2 and 3 in float64 (and that
a wrong formula fails it), torch.compile (aot_eager) against eager, type 3's shapes and errors,
and torch.library.opcheck of the three ops. No GPU needed; split from test_torch.py.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_torch_autograd.py -q -rs
"""

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3, relerr
# first, before warpfft: skips the module without a library or PyTorch
from _torch_support import data, data3, torch

import warpfft
import warpfft.torch as wt


# ---- the autograd formulas on the CPU, with the C transform replaced by an exact sum --------


def _exact_run(nufft_type, points, src, out, modes, isign, eps, opts, reuse_points=True):
    from warpfft import _options
    modeord = _options.get(_options.from_hex(opts), "modeord")  # the op's options record
    ks = [torch.fft.fftfreq(n, d=1.0 / n, dtype=torch.float64) if modeord
          else torch.arange(-(n // 2), n - n // 2, dtype=torch.float64) for n in modes]
    grids = torch.meshgrid(*ks, indexing="ij")
    ph = sum(g[..., None] * p.to(torch.float64) for g, p in zip(grids, points))
    e = torch.exp(1j * (1 if isign >= 0 else -1) * ph).reshape(-1, points.shape[1])  # (K, M)
    s = src.to(torch.complex128)
    if nufft_type == 1:
        res = (s @ e.T).reshape(out.shape)
    else:
        res = s.reshape(s.shape[0], -1) @ e
    out.copy_(res.to(out.dtype))
    return out


def _exact_run3(points, values, targets, out, isign, eps, opts):
    ph = targets.to(torch.float64).T @ points.to(torch.float64)  # (K, M)
    e = torch.exp(1j * (1 if isign >= 0 else -1) * ph)
    out.copy_((values.to(torch.complex128) @ e.T).to(out.dtype))
    return out


@pytest.fixture
def exact_cpu_transform(monkeypatch):
    from warpfft.torch import _checks, _ops
    monkeypatch.setattr(_checks, "FIRST_DEVICE", -1)  # CPU tensors too
    monkeypatch.setattr(_ops, "_run", _exact_run)
    monkeypatch.setattr(_ops, "_run3", _exact_run3)
    monkeypatch.setattr(wt, "_check_device", lambda *a: None)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("isign,modeord", [(-1, 1), (1, 0)])
def test_autograd_formulas_gradcheck_on_cpu(exact_cpu_transform, dim, isign, modeord):
    rng = np.random.default_rng(30 + dim)
    n_modes = (5, 4, 3)[:dim]
    p, v, pn, vn = data(rng, dim, 10, (2,), device="cpu")
    kw = dict(eps=1e-12, isign=isign, modeord=modeord)
    f = wt.finufft_type1(p, v, n_modes, **kw)
    assert relerr(f.numpy(), direct1(vn, list(pn), n_modes, isign, modeord)) < 1e-12
    p.requires_grad_(True)
    v.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda p, v: wt.finufft_type1(p, v, n_modes, **kw), (p, v))
    fk = torch.randn((2,) + n_modes, dtype=torch.complex128, requires_grad=True)
    c = wt.finufft_type2(p, fk, **kw)
    ref = direct2(fk.detach().numpy(), list(pn), isign, modeord)
    assert relerr(c.detach().numpy(), ref) < 1e-12
    assert torch.autograd.gradcheck(lambda p, f: wt.finufft_type2(p, f, **kw), (p, fk))


def test_autograd_formulas_fail_when_wrong(exact_cpu_transform, monkeypatch):
    """The check above can fail: a sign error in the points' derivative is caught."""
    from warpfft.torch import _ops
    real_ramp = _ops._ramp
    monkeypatch.setattr(_ops, "_ramp", lambda *a: -real_ramp(*a))
    rng = np.random.default_rng(3)
    p, v, _, _ = data(rng, 2, 8, (), device="cpu")
    p.requires_grad_(True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda p: wt.finufft_type1(p, v, (4, 3), eps=1e-12), (p,))


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_traces_ops_and_backward_on_cpu(exact_cpu_transform, dynamic):
    """torch.compile (fullgraph, aot_eager: Dynamo + AOTAutograd with the fake implementations)
    gives eager's values and gradients."""
    torch._dynamo.reset()
    rng = np.random.default_rng(8)
    p, v, _, _ = data(rng, 2, 30, (3,), device="cpu")

    def normal_op(p, v):
        f = wt.finufft_type1(p, v, (6, 5), eps=1e-12)
        return wt.finufft_type2(p, f * 0.5, eps=1e-12)

    compiled = torch.compile(normal_op, fullgraph=True, backend="aot_eager", dynamic=dynamic)
    p1, v1 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    p2, v2 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    a, b = normal_op(p1, v1), compiled(p2, v2)
    assert relerr(b.detach().numpy(), a.detach().numpy()) < 1e-12
    a.abs().sum().backward()
    b.abs().sum().backward()
    assert relerr(v2.grad.numpy(), v1.grad.numpy()) < 1e-10
    assert relerr(p2.grad.numpy(), p1.grad.numpy()) < 1e-10


# ---- type 3 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("isign", [-1, 1])
def test_type3_autograd_formulas_gradcheck_on_cpu(exact_cpu_transform, dim, isign):
    rng = np.random.default_rng(60 + dim)
    p, v, t, pn, vn, tn = data3(rng, dim, 9, 7, (2,), device="cpu")
    f = wt.finufft_type3(p, v, t, eps=1e-12, isign=isign)
    assert f.shape == (2, 7)
    assert relerr(f.numpy(), direct3(vn, list(pn), list(tn), isign)) < 1e-12
    for x in (p, v, t):
        x.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda p, v, t: wt.finufft_type3(p, v, t, eps=1e-12, isign=isign), (p, v, t))
    # values only (the points' and targets' branches skipped)
    v2 = v.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda v: wt.finufft_type3(p.detach(), v, t.detach(), eps=1e-12, isign=isign), (v2,))


def test_type3_autograd_fails_when_wrong(exact_cpu_transform, monkeypatch):
    """The check above can fail: a wrong sign in the adjoint transform is caught."""
    from warpfft.torch import _ops
    real_op = _ops.nufft3_op

    def wrong(points, values, targets, isign, *rest):
        return real_op(points, values, targets, -isign, *rest)

    monkeypatch.setattr(_ops, "nufft3_op", wrong)  # the backward's calls (the forward's is wt's)
    rng = np.random.default_rng(4)
    p, v, t, _, _, _ = data3(rng, 2, 8, 5, (), device="cpu")
    v.requires_grad_(True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda v: wt.finufft_type3(p, v, t, eps=1e-12), (v,))


def test_type3_shapes_and_bad_input_on_cpu(exact_cpu_transform):
    rng = np.random.default_rng(5)
    p, v, t, pn, vn, tn = data3(rng, 1, 6, 4, (3, 2), device="cpu")
    f = wt.finufft_type3(p[0], v, t[0], eps=1e-9)  # 1D: (M,) points and (K,) targets
    assert f.shape == (3, 2, 4)
    assert relerr(f.numpy(), direct3(vn, list(pn), list(tn), -1)) < 1e-12
    with pytest.raises(ValueError, match="targets must have shape"):
        wt.finufft_type3(p, v, torch.zeros((2, 4), dtype=torch.float64))
    with pytest.raises(TypeError, match="targets have dtype"):
        wt.finufft_type3(p, v, t.float())
    with pytest.warns(UserWarning, match="eps = 1e-20 is outside"):  # runs at the smallest
        wt.finufft_type3(p, v, t, eps=1e-20)
    with pytest.raises(warpfft.InvalidArgumentError, match="tol = nan"):
        wt.finufft_type3(p, v, t, eps=float("nan"))


# ---- torch.library.opcheck of the three ops -------------------------------------------------


def test_opcheck_schema_fake_autograd_registration_aot(exact_cpu_transform):
    """torch.library.opcheck on the three ops (CPU, exact-sum stand-in for the C transform):
    schema, autograd registration, fake tensors and AOT dispatch (static and dynamic) agree
    with eager -- the Library + Autograd-kernel registration is a well-formed custom op."""
    if not hasattr(torch.library, "opcheck"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.opcheck")
    rng = np.random.default_rng(43)
    p = torch.tensor(rng.uniform(-3, 3, (2, 10)), requires_grad=True)
    v = torch.tensor(rng.standard_normal((3, 10)) + 1j, requires_grad=True)
    f = torch.tensor(rng.standard_normal((3, 4, 5)) + 1j, requires_grad=True)
    t = torch.tensor(rng.uniform(-3, 3, (2, 7)), requires_grad=True)
    opts = wt.op_options(2, upsampfac=2.0)
    for op, args in ((torch.ops.warpfft.nufft1.default, (p, v, [4, 5], -1, 1e-12, opts)),
                     (torch.ops.warpfft.nufft2.default, (p, f, -1, 1e-12, opts)),
                     (torch.ops.warpfft.nufft3.default, (p, v, t, -1, 1e-12, opts))):
        res = torch.library.opcheck(op, args)
        assert all(r == "SUCCESS" for r in res.values()), (op, res)
