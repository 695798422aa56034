"""warpfft.torch on its own: op registration, fake tensors / tracing and argument errors (CPU
torch is enough), and on a GPU: values against exact sums, gradcheck in float64 for values,
points and targets, the set-points skip for an unchanged points tensor, torch.compile, streams,
pytorch-finufft's documented calls, one op per device on two GPUs.
The autograd formulas on the CPU (an exact-sum stand-in for the C transform) are in
test_torch_autograd.py; the real op path over the fake C library in test_torch_op_path.py;
argument checks before any pointer reaches C in test_torch_checks.py.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_torch.py -q -rs
"""

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3, relerr
# first, before warpfft: skips the module without a library or PyTorch
from _torch_support import data, data3, require_cuda, torch

import warpfft
import warpfft.torch as wt

OPTS = wt.op_options(1, upsampfac=2.0)  # the ops' options record (hex), FFT mode order


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
        f = torch.ops.warpfft.nufft1(p, v, [16, 12], -1, 1e-6, OPTS)
        assert f.shape == (3, 16, 12) and f.dtype == torch.complex64
        c = torch.ops.warpfft.nufft2(p, f, -1, 1e-6, OPTS)
        assert c.shape == (3, 100)


def test_make_fx_traces_the_op_and_its_backward_shapes():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(p, v):
        return torch.ops.warpfft.nufft1(p, v, [8, 6], -1, 1e-6, OPTS)

    g = make_fx(f, tracing_mode="fake")(torch.zeros(2, 50, device="meta"),
                                        torch.zeros(4, 50, dtype=torch.complex64, device="meta"))
    names = [str(n.target) for n in g.graph.nodes if n.op == "call_function"]
    assert any("warpfft.nufft1" in n for n in names), names


@pytest.mark.parametrize("call,exc,match", [
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), eps=float("nan")), ValueError, "tol = nan"),
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
    (lambda p, v: wt.finufft_type1(p, v, (8, 8), upsampfac="x"), ValueError, "must be a number"),
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


def test_tolerance_outside_the_range_runs_at_its_end_with_a_warning():
    """One tol rule everywhere (the C library's, warpfft_tol_effective; the reference raises a
    tol below machine precision to it): eps below f64's range runs at 1e-13, with the warning
    Plan gives; NaN raises (it refused 1e-15 before, where Plan clamped)."""
    p = torch.zeros((1, 20), dtype=torch.float64)
    v = torch.zeros((20,), dtype=torch.complex128)
    validated = []
    real = wt._native.validate
    try:
        wt._native.validate = lambda *a, **k: (validated.append(a[3]), real(*a, **k))
        with pytest.warns(UserWarning, match=r"eps = 1e-15 is outside .*: using 1e-13"):
            with pytest.raises(ValueError, match="CUDA tensors"):  # checked, then the device
                wt.finufft_type1(p, v, 8, eps=1e-15)
    finally:
        wt._native.validate = real
    assert validated == [1e-13]
    with pytest.raises(warpfft.InvalidArgumentError, match="tol = nan"):
        wt.finufft_type1(p, v, 8, eps=float("nan"))


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
    p, v, pn, vn = data(rng, dim, 300, (2,), real)
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
    p, v, pn, vn = data(rng, 1, 100)
    f = wt.finufft_type1(p[0], v, 17, eps=1e-10)
    assert relerr(f.cpu().numpy(), direct1(vn, [pn[0]], (17,), -1, 1)) < 1e-8


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gradcheck_f64_values_and_points(dim):
    require_cuda()
    rng = np.random.default_rng(20 + dim)
    n_modes = (5, 4, 3)[:dim]
    p, v, _, _ = data(rng, dim, 12, (2,))
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
    p, v, pn, vn = data(rng, 2, 500, (), torch.float32)
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
    p, v, _, _ = data(rng, 2, 400, (3,), torch.float32)

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
    p, v, pn, vn = data(rng, 2, 300, (2,), torch.float32)
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
    p, v, pn, vn = data(rng, 2, 400, (2,))
    f = finufft_type1(p, v, (16, 12), eps=1e-8, **kw)
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), (16, 12), -1, 1)) < 1e-8
    c = finufft_type2(p, f, eps=1e-8, **kw)
    assert relerr(c.cpu().numpy(), direct2(f.cpu().numpy(), list(pn), -1, 1)) < 1e-8


def test_one_op_per_device_on_two_gpus():
    require_cuda(2)
    rng = np.random.default_rng(6)
    p, v, _, _ = data(rng, 2, 2000, (4,), torch.float32, device="cuda:0")
    ref = wt.finufft_type1(p, v, (32, 32), eps=1e-5)
    p1, v1 = p.to("cuda:1"), v.to("cuda:1")
    out = wt.finufft_type1(p1, v1, (32, 32), eps=1e-5)
    assert out.device == torch.device("cuda:1")
    assert relerr(out.cpu().numpy(), ref.cpu().numpy()) < 1e-6
    with pytest.raises(ValueError, match="one device"):
        wt.finufft_type1(p, v1, (32, 32))


# ---- type 3 ---------------------------------------------------------------------------------


def test_type3_fake_tensors_give_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        p = torch.empty((2, 10), dtype=torch.float32, device="cuda")
        v = torch.empty((3, 10), dtype=torch.complex64, device="cuda")
        t = torch.empty((2, 7), dtype=torch.float32, device="cuda")
        out = torch.ops.warpfft.nufft3(p, v, t, -1, 1e-6, OPTS)
        assert out.shape == (3, 7) and out.dtype == torch.complex64


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_type3_values_against_exact_sums(dim, prec):
    require_cuda()
    rng = np.random.default_rng(70 + dim)
    real, eps = (torch.float32, 1e-5) if prec == "f32" else (torch.float64, 1e-10)
    p, v, t, pn, vn, tn = data3(rng, dim, 200, 150, (2,), real=real)
    for isign in (-1, 1):
        f = wt.finufft_type3(p, v, t, eps=eps, isign=isign)
        ref = direct3(vn, list(pn), list(tn), isign)
        assert f.shape == (2, 150) and relerr(f.cpu().numpy(), ref) < 10 * eps, (dim, isign)
    # another M and K reuse the cached plan (setpts3 on every call)
    created = wt.stats()["plans_created"]
    p2, v2, t2, pn2, vn2, tn2 = data3(rng, dim, 90, 60, (2,), real=real)
    f = wt.finufft_type3(p2, v2, t2, eps=eps, isign=-1)
    assert relerr(f.cpu().numpy(), direct3(vn2, list(pn2), list(tn2), -1)) < 10 * eps
    assert wt.stats()["plans_created"] == created


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_gradcheck_f64_values_points_targets(dim):
    require_cuda()
    rng = np.random.default_rng(80 + dim)
    p, v, t, _, _, _ = data3(rng, dim, 12, 9, (2,))
    for x in (p, v, t):
        x.requires_grad_(True)
    # spreading sums with atomics: repeated backward passes differ in the last bits (2D/3D on
    # the H100), as for types 1 and 2
    assert torch.autograd.gradcheck(lambda v: wt.finufft_type3(p.detach(), v, t.detach(),
                                                               eps=1e-12), (v,),
                                    nondet_tol=1e-10)
    assert torch.autograd.gradcheck(lambda p, v, t: wt.finufft_type3(p, v, t, eps=1e-12),
                                    (p, v, t), nondet_tol=1e-10)
