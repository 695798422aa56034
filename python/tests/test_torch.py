"""warpfft.torch: op registration, fake tensors / tracing, error paths (CPU torch is enough),
and on a GPU: values against exact sums, gradcheck in float64 for values and points, the
set-points skip for an unchanged points tensor, torch.compile, streams, pytorch-finufft's
documented calls, one op per device on two GPUs.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_torch.py -q -rs
"""

import warnings

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3, relerr
from _support import gpu_status

torch = pytest.importorskip("torch", reason="PyTorch is not installed: warpfft.torch tests "
                            "skipped")
# The tensors here are tiny: torch's intra-op threads only spin, and on 2 busy cores made the CPU
# gradchecks ~8x slower (110 s against 14 s).
torch.set_num_threads(1)

import warpfft  # noqa: E402
import warpfft.torch as wt  # noqa: E402


def require_cuda(n=1):
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    if not torch.cuda.is_available() or torch.cuda.device_count() < n:
        pytest.skip(f"no GPU: torch sees {torch.cuda.device_count()} CUDA device(s), this test "
                    f"needs {n}")


def _data(rng, dim, M, batch=(), real=torch.float64, device="cuda"):
    pts = rng.uniform(-np.pi, np.pi, (dim, M))
    c = rng.standard_normal(batch + (M,)) + 1j * rng.standard_normal(batch + (M,))
    cplx = torch.complex64 if real == torch.float32 else torch.complex128
    tp = torch.tensor(pts, dtype=real, device=device)
    tc = torch.tensor(c, dtype=cplx, device=device)
    return tp, tc, tp.cpu().double().numpy(), c


# ---- without a GPU -------------------------------------------------------------------------


def test_ops_registered():
    assert hasattr(torch.ops.warpfft, "nufft1") and hasattr(torch.ops.warpfft, "nufft2")
    assert wt.stats()["cached_plans"] >= 0
    for name in ("nufft1", "nufft2", "nufft3"):  # as torch.library.custom_op would tag them
        assert torch.Tag.pt2_compliant_tag in getattr(torch.ops.warpfft, name).default.tags


def test_fake_tensors_give_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():  # fake CUDA tensors need no GPU
        p = torch.empty((2, 100), dtype=torch.float32, device="cuda")
        v = torch.empty((3, 100), dtype=torch.complex64, device="cuda")
        f = torch.ops.warpfft.nufft1(p, v, [16, 12], -1, 1e-6, 1, 0, 2.0, 0, [0, 0, 0])
        assert f.shape == (3, 16, 12) and f.dtype == torch.complex64
        c = torch.ops.warpfft.nufft2(p, f, -1, 1e-6, 1, 0, 2.0, 0, [0, 0, 0])
        assert c.shape == (3, 100)


def test_make_fx_traces_the_op_and_its_backward_shapes():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(p, v):
        return torch.ops.warpfft.nufft1(p, v, [8, 6], -1, 1e-6, 1, 0, 2.0, 0, [0, 0, 0])

    g = make_fx(f, tracing_mode="fake")(torch.zeros(2, 50, device="meta"),
                                        torch.zeros(4, 50, dtype=torch.complex64, device="meta"))
    names = [str(n.target) for n in g.graph.nodes if n.op == "call_function"]
    assert any("warpfft.nufft1" in n for n in names), names


@pytest.mark.parametrize("call,exc,match", [
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), eps=1e-9), ValueError, "eps"),
    (lambda p, v: wt.finufft_type1(p.double(), v, (8, 8)), TypeError, "points"),
    (lambda p, v: wt.finufft_type1(p, v.real, (8, 8)), TypeError, "complex"),
    (lambda p, v: wt.finufft_type1(p, v, 8), ValueError, "output_shape"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8, 8)), ValueError, "output_shape"),
    (lambda p, v: wt.finufft_type1(p, v[..., :5], (8, 8)), ValueError, "last axis"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), bogus=1), ValueError, "bogus"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), gpu_sort=0), ValueError, "gpu_sort"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), upsampfac=1.2), ValueError, "upsampfac"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), upsampfac=3.5), RuntimeError,
     r"upsampfac = 3.5; must be 0 \(chosen per plan\) or in \[1.25, 3\]"),
    (lambda p, v: wt.finufft_type2(p, v, gpu_upsampfac=float("nan")), ValueError, "upsampfac"),
    (lambda p, v: wt.finufft_type3(p, v, p, upsampfac=1.2), ValueError, "upsampfac"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), upsampfac="x"), ValueError, "real number"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), gpu_stream=1), ValueError, "stream"),
    (lambda p, v: wt.finufft_type1(p, v, (8, 8)), ValueError, "CUDA tensors"),
    (lambda p, v: wt.finufft_type2(p, v), ValueError, "CUDA tensors"),
    (lambda p, v: wt.finufft_type2(p, v[0]), ValueError, "mode axes"),
    (lambda p, v: wt.finufft_type3(p, v, p), ValueError, "CUDA tensors"),
    (lambda p, v: wt.finufft_type3(p, v, p[:1]), ValueError, "targets must have shape"),
])
def test_bad_input_raises(call, exc, match):
    p = torch.zeros((2, 20), dtype=torch.float32)
    v = torch.zeros((3, 20), dtype=torch.complex64)
    with pytest.raises(exc, match=match):
        call(p, v)


def test_tolerance_error_names_eps_and_is_a_warpfft_error():
    p = torch.zeros((1, 20), dtype=torch.float64)
    v = torch.zeros((20,), dtype=torch.complex128)
    with pytest.raises(warpfft.InvalidArgumentError, match="eps"):
        wt.finufft_type1(p, v, 8, eps=1e-15)


# ---- on a GPU ------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("isign", [1, -1])
@pytest.mark.parametrize("modeord", [0, 1])
def test_values_against_exact_sums(dim, prec, isign, modeord):
    require_cuda()
    rng = np.random.default_rng(dim)
    real = torch.float32 if prec == "f32" else torch.float64
    eps = 1e-5 if prec == "f32" else 1e-10
    n_modes = (13, 10, 6)[:dim]
    p, v, pn, vn = _data(rng, dim, 300, (2,), real)
    f = wt.finufft_type1(p, v, n_modes, eps=eps, isign=isign, modeord=modeord)
    assert f.shape == (2,) + n_modes and f.dtype == v.dtype
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), n_modes, isign, modeord)) < 10 * eps
    fk = torch.randn((2,) + n_modes, dtype=v.dtype, device="cuda")
    c = wt.finufft_type2(p, fk, eps=eps, isign=isign, modeord=modeord)
    ref = direct2(fk.cpu().numpy(), list(pn), isign, modeord)
    assert c.shape == (2, 300) and relerr(c.cpu().numpy(), ref) < 10 * eps


def test_one_dimensional_points_vector():
    require_cuda()
    rng = np.random.default_rng(1)
    p, v, pn, vn = _data(rng, 1, 100)
    f = wt.finufft_type1(p[0], v, 17, eps=1e-10)
    assert relerr(f.cpu().numpy(), direct1(vn, [pn[0]], (17,), -1, 1)) < 1e-8


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gradcheck_f64_values_and_points(dim):
    require_cuda()
    rng = np.random.default_rng(20 + dim)
    n_modes = (5, 4, 3)[:dim]
    p, v, _, _ = _data(rng, dim, 12, (2,))
    p.requires_grad_(True)
    v.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda p, v: wt.finufft_type1(p, v, n_modes, eps=1e-12, isign=1, modeord=0), (p, v),
        eps=1e-6, atol=1e-6, rtol=1e-5, nondet_tol=1e-12)  # spreading sums with atomics
    f = torch.randn((2,) + n_modes, dtype=torch.complex128, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, f: wt.finufft_type2(p, f, eps=1e-12), (p, f),
                                    eps=1e-6, atol=1e-6, rtol=1e-5, nondet_tol=1e-12)


def test_same_points_tensor_skips_setpts_and_a_change_is_seen():
    require_cuda()
    rng = np.random.default_rng(3)
    p, v, pn, vn = _data(rng, 2, 500, (), torch.float32)
    wt.clear_plan_cache()
    wt.finufft_type1(p, v, (16, 16), eps=1e-5)
    s0 = wt.stats()
    f = wt.finufft_type1(p, v, (16, 16), eps=1e-5)
    s1 = wt.stats()
    assert s1["setpts_skipped"] == s0["setpts_skipped"] + 1
    assert s1["setpts_calls"] == s0["setpts_calls"]
    assert s1["plans_created"] == s0["plans_created"]
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), (16, 16), -1, 1)) < 1e-4
    with torch.no_grad():
        p.mul_(0.5)  # in place: the version counter moves, the points are set again
    f2 = wt.finufft_type1(p, v, (16, 16), eps=1e-5)
    s2 = wt.stats()
    assert s2["setpts_calls"] == s1["setpts_calls"] + 1
    pn2 = p.cpu().double().numpy()
    assert relerr(f2.cpu().numpy(), direct1(vn, list(pn2), (16, 16), -1, 1)) < 1e-4
    q = p.clone()  # equal values, another tensor: set again
    wt.finufft_type1(q, v, (16, 16), eps=1e-5)
    assert wt.stats()["setpts_calls"] == s2["setpts_calls"] + 1


def test_torch_compile_matches_eager_with_backward():
    require_cuda()
    rng = np.random.default_rng(4)
    p, v, _, _ = _data(rng, 2, 400, (3,), torch.float32)

    def normal_op(p, v):
        f = wt.finufft_type1(p, v, (24, 20), eps=1e-5)
        return wt.finufft_type2(p, f * 0.5, eps=1e-5)

    compiled = torch.compile(normal_op, fullgraph=True)
    p1, v1 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    p2, v2 = p.clone().requires_grad_(True), v.clone().requires_grad_(True)
    a = normal_op(p1, v1)
    b = compiled(p2, v2)
    assert relerr(b.detach().cpu().numpy(), a.detach().cpu().numpy()) < 1e-5
    a.abs().sum().backward()
    b.abs().sum().backward()
    assert relerr(v2.grad.cpu().numpy(), v1.grad.cpu().numpy()) < 1e-4
    assert relerr(p2.grad.cpu().numpy(), p1.grad.cpu().numpy()) < 1e-3


def test_runs_on_the_current_stream():
    require_cuda()
    rng = np.random.default_rng(5)
    p, v, pn, vn = _data(rng, 2, 300, (2,), torch.float32)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        f = wt.finufft_type1(p, v, (12, 12), eps=1e-5)
    s.synchronize()
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), (12, 12), -1, 1)) < 1e-4


def test_pytorch_finufft_documented_calls():
    """Calls as pytorch-finufft's documentation shows them, through warpfft.torch."""
    require_cuda()
    from warpfft.torch import finufft_type1, finufft_type2
    M, N = 500, 20
    points = torch.rand((2, M), dtype=torch.float64, device="cuda") * 2 * np.pi
    values = torch.randn(M, dtype=torch.complex128, device="cuda")
    f = finufft_type1(points, values, (N, N))
    assert f.shape == (N, N)
    ref = direct1(values.cpu().numpy(), list(points.cpu().numpy()), (N, N), -1, 1)
    assert relerr(f.cpu().numpy(), ref) < 1e-5
    c = finufft_type2(points, f, eps=1e-8, isign=1, modeord=0)
    assert c.shape == (M,)
    values.requires_grad_(True)
    points.requires_grad_(True)
    finufft_type1(points, values, (N, N)).abs().pow(2).sum().backward()
    assert values.grad.shape == (M,) and points.grad.shape == (2, M)
    # a coil batch sharing the trajectory
    coils = torch.randn((8, M), dtype=torch.complex128, device="cuda")
    assert finufft_type1(points.detach(), coils, (N, N)).shape == (8, N, N)


@pytest.mark.parametrize("kw", [{}, {"upsampfac": 1.5}, {"gpu_upsampfac": 3.0},
                                {"upsampfac": 1.25}])
def test_upsampfac_options_meet_eps(kw):
    """pytorch-finufft's option names for sigma: 0 by default (chosen per plan for the call's
    M), any value of [1.25, 3] as given; each meets eps, forward and backward."""
    require_cuda()
    from warpfft.torch import finufft_type1, finufft_type2
    rng = np.random.default_rng(12)
    p, v, pn, vn = _data(rng, 2, 400, (2,))
    f = finufft_type1(p, v, (16, 12), eps=1e-8, **kw)
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), (16, 12), -1, 1)) < 1e-8
    c = finufft_type2(p, f, eps=1e-8, **kw)
    assert relerr(c.cpu().numpy(), direct2(f.cpu().numpy(), list(pn), -1, 1)) < 1e-8


def test_one_op_per_device_on_two_gpus():
    require_cuda(2)
    rng = np.random.default_rng(6)
    p, v, _, _ = _data(rng, 2, 2000, (4,), torch.float32, device="cuda:0")
    ref = wt.finufft_type1(p, v, (32, 32), eps=1e-5)
    p1, v1 = p.to("cuda:1"), v.to("cuda:1")
    out = wt.finufft_type1(p1, v1, (32, 32), eps=1e-5)
    assert out.device == torch.device("cuda:1")
    assert relerr(out.cpu().numpy(), ref.cpu().numpy()) < 1e-6
    with pytest.raises(ValueError, match="one device"):
        wt.finufft_type1(p, v1, (32, 32))


# ---- the autograd formulas on the CPU, with the C transform replaced by an exact sum --------


def _exact_run(nufft_type, points, src, out, modes, isign, eps, kw, reuse_points=True):
    modeord = dict(kw).get("modeord", 0)
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


def _exact_run3(points, values, targets, out, isign, eps, kw):
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
    p, v, pn, vn = _data(rng, dim, 10, (2,), device="cpu")
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
    p, v, _, _ = _data(rng, 2, 8, (), device="cpu")
    p.requires_grad_(True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda p: wt.finufft_type1(p, v, (4, 3), eps=1e-12), (p,))


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_traces_ops_and_backward_on_cpu(exact_cpu_transform, dynamic):
    """torch.compile (fullgraph, aot_eager: Dynamo + AOTAutograd with the fake implementations)
    gives eager's values and gradients."""
    torch._dynamo.reset()
    rng = np.random.default_rng(8)
    p, v, _, _ = _data(rng, 2, 30, (3,), device="cpu")

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


def _data3(rng, dim, M, K, batch=(), real=torch.float64, device="cuda"):
    p, v, pn, vn = _data(rng, dim, M, batch, real, device)
    tn = rng.uniform(-8, 8, (dim, K))
    return p, v, torch.tensor(tn, dtype=real, device=device), pn, vn, tn


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("isign", [-1, 1])
def test_type3_autograd_formulas_gradcheck_on_cpu(exact_cpu_transform, dim, isign):
    rng = np.random.default_rng(60 + dim)
    p, v, t, pn, vn, tn = _data3(rng, dim, 9, 7, (2,), device="cpu")
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
    p, v, t, _, _, _ = _data3(rng, 2, 8, 5, (), device="cpu")
    v.requires_grad_(True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda v: wt.finufft_type3(p, v, t, eps=1e-12), (v,))


def test_type3_shapes_and_bad_input_on_cpu(exact_cpu_transform):
    rng = np.random.default_rng(5)
    p, v, t, pn, vn, tn = _data3(rng, 1, 6, 4, (3, 2), device="cpu")
    f = wt.finufft_type3(p[0], v, t[0], eps=1e-9)  # 1D: (M,) points and (K,) targets
    assert f.shape == (3, 2, 4)
    assert relerr(f.numpy(), direct3(vn, list(pn), list(tn), -1)) < 1e-12
    with pytest.raises(ValueError, match="targets must have shape"):
        wt.finufft_type3(p, v, torch.zeros((2, 4), dtype=torch.float64))
    with pytest.raises(TypeError, match="targets have dtype"):
        wt.finufft_type3(p, v, t.float())
    with pytest.raises(warpfft.InvalidArgumentError, match="eps"):
        wt.finufft_type3(p, v, t, eps=1e-20)


def test_type3_fake_tensors_give_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        p = torch.empty((2, 10), dtype=torch.float32, device="cuda")
        v = torch.empty((3, 10), dtype=torch.complex64, device="cuda")
        t = torch.empty((2, 7), dtype=torch.float32, device="cuda")
        out = torch.ops.warpfft.nufft3(p, v, t, -1, 1e-6, 0, 2.0, 0, [0, 0, 0])
        assert out.shape == (3, 7) and out.dtype == torch.complex64


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_type3_values_against_exact_sums(dim, prec):
    require_cuda()
    rng = np.random.default_rng(70 + dim)
    real, eps = (torch.float32, 1e-5) if prec == "f32" else (torch.float64, 1e-10)
    p, v, t, pn, vn, tn = _data3(rng, dim, 200, 150, (2,), real=real)
    for isign in (-1, 1):
        f = wt.finufft_type3(p, v, t, eps=eps, isign=isign)
        ref = direct3(vn, list(pn), list(tn), isign)
        assert f.shape == (2, 150) and relerr(f.cpu().numpy(), ref) < 10 * eps, (dim, isign)
    # another M and K reuse the cached plan (setpts3 on every call)
    created = wt.stats()["plans_created"]
    p2, v2, t2, pn2, vn2, tn2 = _data3(rng, dim, 90, 60, (2,), real=real)
    f = wt.finufft_type3(p2, v2, t2, eps=eps, isign=-1)
    assert relerr(f.cpu().numpy(), direct3(vn2, list(pn2), list(tn2), -1)) < 10 * eps
    assert wt.stats()["plans_created"] == created


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_gradcheck_f64_values_points_targets(dim):
    require_cuda()
    rng = np.random.default_rng(80 + dim)
    p, v, t, _, _, _ = _data3(rng, dim, 12, 9, (2,))
    for x in (p, v, t):
        x.requires_grad_(True)
    # spreading sums with atomics: repeated backward passes differ in the last bits (2D/3D on
    # the H100), as for types 1 and 2
    assert torch.autograd.gradcheck(lambda v: wt.finufft_type3(p.detach(), v, t.detach(),
                                                               eps=1e-12), (v,),
                                    nondet_tol=1e-10)
    assert torch.autograd.gradcheck(lambda p, v, t: wt.finufft_type3(p, v, t, eps=1e-12),
                                    (p, v, t), nondet_tol=1e-10)


# ---- the real op path (setpts skip, C calls per call, Python work per call) on the CPU ------
#
# The C library is _fake.FakeLib (exact sums on host memory: CPU tensors' data pointers stand in
# for device pointers): conftest.py's fake_c fixture.


def test_op_path_values_and_one_c_call_per_repeated_call(fake_c):
    rng = np.random.default_rng(40)
    p, v, pn, vn = _data(rng, 2, 30, (2,), device="cpu")
    kw = dict(eps=1e-10, isign=1, modeord=0)
    f = wt.finufft_type1(p, v, (6, 5), **kw)
    assert relerr(f.numpy(), direct1(vn, list(pn), (6, 5), 1, 0)) < 1e-12
    # a plan from the pool (made now), its points set, their id read, the transform, back
    assert fake_c.names() == ["warpfft_pool_acquire", "warpfft_plan_create", "warpfft_setpts",
                              "warpfft_plan_points_id", "warpfft_execute", "warpfft_pool_release"]
    fake_c.calls.clear()
    for _ in range(3):  # the same points tensor, unmodified, still on the plan: the transform
        f = wt.finufft_type1(p, v, (6, 5), **kw)
    assert fake_c.names() == ["warpfft_pool_acquire", "warpfft_plan_points_id", "warpfft_execute",
                              "warpfft_pool_release"] * 3
    fake_c.calls.clear()
    with torch.no_grad():
        p.mul_(0.5)  # in place: the version counter moves, the points are set again
    f = wt.finufft_type1(p, v, (6, 5), **kw)
    assert fake_c.names() == ["warpfft_pool_acquire", "warpfft_setpts", "warpfft_plan_points_id",
                              "warpfft_execute", "warpfft_pool_release"]
    assert relerr(f.numpy(), direct1(vn, list(p.double().numpy()), (6, 5), 1, 0)) < 1e-12
    fk = torch.tensor(rng.standard_normal((2, 6, 5)) + 0j)
    c = wt.finufft_type2(p, fk, **kw)
    assert relerr(c.numpy(), direct2(fk.numpy(), list(p.double().numpy()), 1, 0)) < 1e-12


def test_op_path_upsampfac_and_points_hint_reach_the_library(fake_c):
    """upsampfac: 0 by default (chosen per plan; it was mapped to 2.0), 1.5 and 3.0 (either
    spelling) as given; the plan's points_hint is the call's M rounded to the nearest power of
    two (type 3: none), so calls whose M round alike share a pooled plan."""
    rng = np.random.default_rng(46)
    for M, hint in ((20, 16), (23, 16), (25, 32)):
        p, v, _, _ = _data(rng, 2, M, (2,), device="cpu")
        for kw, ups in (({}, 0.0), ({"upsampfac": 1.5}, 1.5), ({"gpu_upsampfac": 3.0}, 3.0)):
            wt.finufft_type1(p, v, (6, 5), eps=1e-6, **kw)
            assert (fake_c.opts_seen[-1]["upsampfac"], fake_c.opts_seen[-1]["points_hint"]) == \
                (ups, hint), (M, kw)
            fk = torch.zeros((6, 5), dtype=torch.complex128)
            wt.finufft_type2(p, fk, eps=1e-6, **kw)
            assert (fake_c.opts_seen[-1]["upsampfac"], fake_c.opts_seen[-1]["points_hint"]) == \
                (ups, hint), (M, kw)
    made = fake_c.pool_counts["created"]
    assert made == 2 * 3 * 2  # (hints 16, 32) x (3 upsampfacs) x (types 1, 2): M 23 reused 20's
    p3, v3, t3, _, _, _ = _data3(rng, 1, 9, 7, (2,), device="cpu")
    wt.finufft_type3(p3, v3, t3, eps=1e-6, upsampfac=1.5)
    assert (fake_c.opts_seen[-1]["upsampfac"], fake_c.opts_seen[-1]["points_hint"]) == (1.5, 0)


@pytest.mark.parametrize("dim", [1, 3])
def test_op_path_every_dimension_and_type3(fake_c, dim):
    """Row pointers of the (D, M) points (and type 3's (D, K) targets) reach the C ABI in its
    order (x last): values against exact sums through the real op path."""
    rng = np.random.default_rng(44 + dim)
    n_modes = (5, 4, 3)[:dim]
    p, v, pn, vn = _data(rng, dim, 12, (2,), device="cpu")
    f = wt.finufft_type1(p, v, n_modes, eps=1e-10, isign=-1, modeord=1)
    assert relerr(f.numpy(), direct1(vn, list(pn), n_modes, -1, 1)) < 1e-12
    p3, v3, t3, pn3, vn3, tn3 = _data3(rng, dim, 9, 7, (2,), device="cpu")
    g = wt.finufft_type3(p3, v3, t3, eps=1e-10, isign=1)
    assert relerr(g.numpy(), direct3(vn3, list(pn3), list(tn3), 1)) < 1e-12
    assert fake_c.names().count("warpfft_setpts3") == 1


def test_op_path_failing_execute_raises_with_the_library_message(fake_c):
    rng = np.random.default_rng(41)
    p, v, _, _ = _data(rng, 1, 10, (), device="cpu")
    fake_c.fail["warpfft_execute"] = 17
    with pytest.raises(warpfft.WarpfftError, match="warpfft_execute"):
        wt.finufft_type1(p, v, (8,), eps=1e-6)


def _python_calls(fn):
    """Python-level function calls made by one fn() (after a warm-up call) in warpfft's package
    and in torch's (the fake C library's own work is not counted)."""
    import os
    import sys
    fn()
    counts = {"warpfft": 0, "torch": 0}
    own = os.path.dirname(warpfft.__file__)
    theirs = os.path.dirname(torch.__file__)

    def prof(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(own):
                counts["warpfft"] += 1
            elif name.startswith(theirs):
                counts["torch"] += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return counts


def test_op_call_python_work_stays_small(fake_c):
    """Per-call Python work of a repeated op call (the dispatch overhead the benchmark's "tiny"
    case measures): torch.library.custom_op + register_autograd made ~60 Python calls through
    torch's layers (pytree walks, backend dispatch) per call; the Library + Autograd-kernel
    registration makes none, and warpfft's own wrapper a bounded few."""
    rng = np.random.default_rng(42)
    p, v, _, _ = _data(rng, 2, 20, (), real=torch.float32, device="cpu")
    n = _python_calls(lambda: wt.finufft_type1(p, v, (8, 8), eps=1e-5, isign=-1, modeord=0))
    assert n["torch"] <= 3, n
    assert n["warpfft"] <= 20, n
    fk = torch.zeros((8, 8), dtype=torch.complex64)
    n = _python_calls(lambda: wt.finufft_type2(p, fk, eps=1e-5, isign=-1, modeord=0))
    assert n["torch"] <= 3 and n["warpfft"] <= 20, n


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
    opts = (0, 2.0, 0, [0, 0, 0])
    for op, args in ((torch.ops.warpfft.nufft1.default, (p, v, [4, 5], -1, 1e-12, 1) + opts),
                     (torch.ops.warpfft.nufft2.default, (p, f, -1, 1e-12, 1) + opts),
                     (torch.ops.warpfft.nufft3.default, (p, v, t, -1, 1e-12) + opts)):
        res = torch.library.opcheck(op, args)
        assert all(r == "SUCCESS" for r in res.values()), (op, res)


def _dispatcher_calls(monkeypatch):
    """Counts the calls finufft_type1/2 route through torch.ops.warpfft (the dispatcher)."""
    n = {"op": 0}
    for name in ("nufft1_op", "nufft2_op"):
        real = getattr(wt, name)

        def counted(*a, _real=real):
            n["op"] += 1
            return _real(*a)
        monkeypatch.setattr(wt, name, counted)
    return n


def test_eager_calls_without_grad_skip_the_dispatcher_with_the_same_result(fake_c, monkeypatch):
    """A plain eager call with no gradient to record runs the op's kernel directly (what the
    dispatcher's Autograd kernel would redispatch to); the result equals the op path's."""
    rng = np.random.default_rng(44)
    p, v, _, _ = _data(rng, 2, 25, (3,), device="cpu")
    fk = torch.tensor(rng.standard_normal((3, 6, 5)), dtype=torch.complex128)
    kw = dict(eps=1e-10, isign=1, modeord=0)
    n = _dispatcher_calls(monkeypatch)
    direct1, direct2 = wt.finufft_type1(p, v, (6, 5), **kw), wt.finufft_type2(p, fk, **kw)
    assert n["op"] == 0
    monkeypatch.setattr(wt, "_CAN_DIRECT", False)
    via1, via2 = wt.finufft_type1(p, v, (6, 5), **kw), wt.finufft_type2(p, fk, **kw)
    assert n["op"] == 2
    assert torch.equal(direct1, via1) and torch.equal(direct2, via2)


def test_calls_that_something_must_see_go_through_the_dispatcher(fake_c, monkeypatch):
    """A gradient to record, a subclass, a torch function mode, a dispatch mode (fake tensors),
    a torch.func transform or forward-mode AD: the call goes through torch.ops.warpfft."""
    from torch.overrides import TorchFunctionMode
    rng = np.random.default_rng(45)
    p, v, _, _ = _data(rng, 1, 12, (), device="cpu")
    n = _dispatcher_calls(monkeypatch)
    call = lambda p, v: wt.finufft_type1(p, v, 4, eps=1e-10)  # noqa: E731

    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    call(p, v.requires_grad_(True))
    assert n["op"] == 1
    with torch.no_grad():
        call(p, v)  # no gradient recorded: direct
    assert n["op"] == 1
    call(torch.nn.Parameter(p, requires_grad=False), v.detach())
    assert n["op"] == 2
    with Spy():
        call(p, v.detach())
    assert n["op"] == 3 and any("warpfft" in s for s in seen), seen
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    fp, fv = mode.from_tensor(p), mode.from_tensor(v.detach())
    with mode:
        out = call(fp, fv)
    assert n["op"] == 4 and out.shape == (4,)
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        try:
            call(p, fwAD.make_dual(v.detach(), torch.ones_like(v.detach())))
        except Exception:
            pass  # the op defines no forward-mode rule; what matters is that it was asked
    assert n["op"] == 5


def _neg_view(t):
    """A real tensor equal to -t held as a view with the negative bit set (torch's lazy
    negation: the imaginary part of a conjugate view), over a copy of t's memory."""
    v = torch.complex(torch.zeros_like(t), t).conj().imag
    assert v.is_neg() and torch.equal(v.resolve_neg(), -t)
    return v


def test_conjugate_and_negative_views_are_read_as_their_values(fake_c, monkeypatch):
    """Tensors with torch's lazy conjugate or negative bit (x.conj(), the imaginary part of a
    conjugate) hold the unconjugated numbers in memory: the op must see their values, on the
    direct eager path and through the dispatcher alike, and a negative view of the points must
    not reuse the set-points of the tensor it views."""
    rng = np.random.default_rng(46)
    p, v, pn, vn = _data(rng, 2, 20, (2,), device="cpu")
    fk = torch.tensor(rng.standard_normal((2, 6, 5)) + 1j * rng.standard_normal((2, 6, 5)))
    kw = dict(eps=1e-10, isign=1, modeord=0)
    for direct in (True, False):
        monkeypatch.setattr(wt, "_CAN_DIRECT", direct)
        vc = v.conj()
        assert vc.is_conj()
        f = wt.finufft_type1(p, vc, (6, 5), **kw)
        assert relerr(f.numpy(), direct1(vn.conj(), list(pn), (6, 5), 1, 0)) < 1e-12, direct
        c = wt.finufft_type2(p, fk.conj(), **kw)
        assert relerr(c.numpy(), direct2(fk.numpy().conj(), list(pn), 1, 0)) < 1e-12, direct
        wt.finufft_type1(p, v, (6, 5), **kw)  # the plain points are set ...
        pneg = _neg_view(p)
        f = wt.finufft_type1(pneg, v, (6, 5), **kw)  # ... and -p is not mistaken for them
        assert relerr(f.numpy(), direct1(vn, list(-pn), (6, 5), 1, 0)) < 1e-12, direct
        p3, v3, t3, pn3, vn3, tn3 = _data3(rng, 2, 9, 7, (2,), device="cpu")
        g = wt.finufft_type3(_neg_view(p3), v3.conj(), _neg_view(t3), **dict(eps=1e-10, isign=1))
        assert relerr(g.numpy(), direct3(vn3.conj(), list(-pn3), list(-tn3), 1)) < 1e-12, direct


def test_deterministic_mode_runs_deterministic_plans(fake_c):
    """Under torch.use_deterministic_algorithms(True) (read when each op runs) the spreading ops
    -- types 1 and 3, and type 2's backward -- run on the library's deterministic plans
    (opts.deterministic = 1; GM/SM asked for give way to AUTO, which picks OD) instead of
    raising, forward and backward, with the same results; the keyword deterministic=True does
    the same without the global flag; off, the plans are the default kind."""
    rng = np.random.default_rng(47)
    p, v, pn, vn = _data(rng, 2, 10, (), device="cpu")
    fk = torch.tensor(rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5)))
    p3, v3, t3, pn3, vn3, tn3 = _data3(rng, 1, 6, 4, (), device="cpu")

    def last(**want):  # the options of the last plan the ops asked the pool for
        got = fake_c.opts_seen[-1]
        assert {k: got[k] for k in want} == want, got

    was, was_warn = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        torch.use_deterministic_algorithms(True)
        f = wt.finufft_type1(p, v, (6, 5), eps=1e-10, isign=1, modeord=0, gpu_method=2)
        last(deterministic=1, method=0)
        assert relerr(f.numpy(), direct1(vn, list(pn), (6, 5), 1, 0)) < 1e-12
        g = wt.finufft_type3(p3, v3, t3, eps=1e-10, isign=1)
        last(deterministic=1)
        assert relerr(g.numpy(), direct3(vn3, list(pn3), list(tn3), 1)) < 1e-12
        wt.finufft_type2(p, fk, eps=1e-10)
        last(deterministic=0)  # interpolation: deterministic with every plan
        # type 2's backward spreads: a type 1 on a deterministic plan
        tgt = fk.clone().requires_grad_(True)
        wt.finufft_type2(p, tgt, eps=1e-10).abs().sum().backward()
        last(deterministic=1)
        assert tgt.grad is not None and tgt.grad.shape == fk.shape
        torch.use_deterministic_algorithms(True, warn_only=True)  # no warning either
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            wt.finufft_type1(p, v, (6, 5), eps=1e-8)
    finally:
        torch.use_deterministic_algorithms(was, warn_only=was_warn)
    wt.finufft_type1(p, v, (6, 5), eps=1e-8)
    last(deterministic=0)
    # the keyword, without the global flag: the forward and the backward's type 1
    wt.finufft_type1(p, v, (6, 5), eps=1e-8, deterministic=True)
    last(deterministic=1)
    tgt = fk.clone().requires_grad_(True)
    wt.finufft_type2(p, tgt, eps=1e-8, deterministic=True).abs().sum().backward()
    last(deterministic=1)
    vv = v3.clone().requires_grad_(True)
    wt.finufft_type3(p3, vv, t3, eps=1e-8, deterministic=True).abs().sum().backward()
    last(deterministic=1)  # the backward's type 3
    with pytest.raises(ValueError, match="deterministic"):
        wt.finufft_type1(p, v, (6, 5), deterministic=2)
    f_od = wt.finufft_type1(p, v, (6, 5), eps=1e-10, isign=1, modeord=0, gpu_method=3)
    last(method=3, deterministic=0)
    assert relerr(f_od.numpy(), direct1(vn, list(pn), (6, 5), 1, 0)) < 1e-12
    wt.finufft_type2(p, fk, eps=1e-8, gpu_method=3)
    last(method=0)  # OD spreads: no effect on interpolation (as the reference)
