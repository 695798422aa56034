"""warpfft.torch's real op path on the CPU, over the fake C library (_fake.FakeLib: exact sums
on host memory, CPU tensors' data pointers standing in for device pointers; conftest.py's
``fake_c`` fixture): values, the C calls each call makes (the set-points skip), the options
and points hint that reach the library, the Python work per call, when a call bypasses or goes
through the dispatcher, conjugate and negative views, deterministic plans. Split from
test_torch.py.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_torch_op_path.py -q -rs
"""

import warnings

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3, relerr
# first, before warpfft: skips the module without a library or PyTorch
from _torch_support import data, data3, torch

import warpfft
import warpfft.torch as wt


# ---- the real op path (setpts skip, C calls per call, Python work per call) on the CPU ------
#
# The C library is _fake.FakeLib (exact sums on host memory: CPU tensors' data pointers stand in
# for device pointers): conftest.py's fake_c fixture.


def test_op_path_values_and_one_c_call_per_repeated_call(fake_c):
    rng = np.random.default_rng(40)
    p, v, pn, vn = data(rng, 2, 30, (2,), device="cpu")
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
        p, v, _, _ = data(rng, 2, M, (2,), device="cpu")
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
    p3, v3, t3, _, _, _ = data3(rng, 1, 9, 7, (2,), device="cpu")
    wt.finufft_type3(p3, v3, t3, eps=1e-6, upsampfac=1.5)
    assert (fake_c.opts_seen[-1]["upsampfac"], fake_c.opts_seen[-1]["points_hint"]) == (1.5, 0)


@pytest.mark.parametrize("dim", [1, 3])
def test_op_path_every_dimension_and_type3(fake_c, dim):
    """Row pointers of the (D, M) points (and type 3's (D, K) targets) reach the C ABI in its
    order (x last): values against exact sums through the real op path."""
    rng = np.random.default_rng(44 + dim)
    n_modes = (5, 4, 3)[:dim]
    p, v, pn, vn = data(rng, dim, 12, (2,), device="cpu")
    f = wt.finufft_type1(p, v, n_modes, eps=1e-10, isign=-1, modeord=1)
    assert relerr(f.numpy(), direct1(vn, list(pn), n_modes, -1, 1)) < 1e-12
    p3, v3, t3, pn3, vn3, tn3 = data3(rng, dim, 9, 7, (2,), device="cpu")
    g = wt.finufft_type3(p3, v3, t3, eps=1e-10, isign=1)
    assert relerr(g.numpy(), direct3(vn3, list(pn3), list(tn3), 1)) < 1e-12
    assert fake_c.names().count("warpfft_setpts3") == 1


def test_op_path_failing_execute_raises_with_the_library_message(fake_c):
    rng = np.random.default_rng(41)
    p, v, _, _ = data(rng, 1, 10, (), device="cpu")
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
    p, v, _, _ = data(rng, 2, 20, (), real=torch.float32, device="cpu")
    n = _python_calls(lambda: wt.finufft_type1(p, v, (8, 8), eps=1e-5, isign=-1, modeord=0))
    assert n["torch"] <= 3, n
    assert n["warpfft"] <= 20, n
    fk = torch.zeros((8, 8), dtype=torch.complex64)
    n = _python_calls(lambda: wt.finufft_type2(p, fk, eps=1e-5, isign=-1, modeord=0))
    assert n["torch"] <= 3 and n["warpfft"] <= 20, n


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
    p, v, _, _ = data(rng, 2, 25, (3,), device="cpu")
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
    p, v, _, _ = data(rng, 1, 12, (), device="cpu")
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
    p, v, pn, vn = data(rng, 2, 20, (2,), device="cpu")
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
        p3, v3, t3, pn3, vn3, tn3 = data3(rng, 2, 9, 7, (2,), device="cpu")
        g = wt.finufft_type3(_neg_view(p3), v3.conj(), _neg_view(t3), **dict(eps=1e-10, isign=1))
        assert relerr(g.numpy(), direct3(vn3.conj(), list(-pn3), list(-tn3), 1)) < 1e-12, direct


def test_deterministic_mode_runs_deterministic_plans(fake_c):
    """Under torch.use_deterministic_algorithms(True) (read when each op runs) the spreading ops
    -- types 1 and 3, and type 2's backward -- run on the library's deterministic plans
    (opts.deterministic = 1; GM/SM asked for give way to AUTO, which picks OD) instead of
    raising, forward and backward, with the same results; the keyword deterministic=True does
    the same without the global flag; off, the plans are the default kind."""
    rng = np.random.default_rng(47)
    p, v, pn, vn = data(rng, 2, 10, (), device="cpu")
    fk = torch.tensor(rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5)))
    p3, v3, t3, pn3, vn3, tn3 = data3(rng, 1, 6, 4, (), device="cpu")

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
