"""The live-plan pool from Python: the one-call functions, the PyTorch ops (when torch imports)
and the JAX path share the C library's pool (warpfft.h, warpfft_pool_*), while other threads
clear it and change its limits.

Without a GPU the C library is the fake of _fake.py (exact sums on host memory, a pool kept as
warpfft.h defines it), so what is checked is the Python layer: every call's result, no plan left
busy or leaked, no stream touched when a plan is evicted, and that a clear in the middle of a
call changes nothing for that call. The XLA handler's C side is tested in C
(c_core/tests/test_xla_ffi*.c, test_pool*.c on the stand-in driver). The same stress then runs
for real on a GPU (``test_gpu_*``; skipped with "no GPU: ..." without one): one-call functions
on numpy and cupy arrays and on a caller's streams that are destroyed afterwards, PyTorch ops
and jitted JAX functions, all at once, against exact sums.
"""

import gc
import random
import threading
import time

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import exact, rel_err, require_gpu, warpfft

SHAPES = {1: (9,), 2: (6, 5)}


def _problem(rng, dim, M=20, dtype=np.complex128):
    real = np.float32 if dtype == np.complex64 else np.float64
    pts = [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]
    c = (rng.standard_normal(M) + 1j * rng.standard_normal(M)).astype(dtype)
    return pts, c


def _run_threads(workers, chaos, seconds_max=120):
    """Runs the worker callables on threads and `chaos` (a callable taking a stop Event) on
    another until the workers end; returns the exceptions the workers raised."""
    errors = []
    stop = threading.Event()

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 (reported by the test)
                errors.append(e)
        return run

    ts = [threading.Thread(target=guard(w)) for w in workers]
    tc = threading.Thread(target=guard(lambda: chaos(stop)))
    tc.start()
    for t in ts:
        t.start()
    for t in ts:
        t.join(seconds_max)
    stop.set()
    tc.join(seconds_max)
    assert not any(t.is_alive() for t in ts + [tc]), "a thread hung"
    return errors


def _chaos(stop, seed=1):
    """Clears the pool and changes its limits until told to stop."""
    r = random.Random(seed)
    rounds = 0
    while not stop.is_set():
        k = r.randrange(3)
        if k == 0:
            warpfft.clear_plan_cache()
        else:
            warpfft.set_plan_cache_limits(plans=r.randrange(4),
                                          nbytes=r.choice([1 << 30, 2500]))
        rounds += 1
        time.sleep(r.random() * 0.002)
    return rounds


def _expect_pool_empty(fake=None):
    warpfft.set_plan_cache_limits(plans=16, nbytes=1 << 30)
    warpfft.clear_plan_cache()
    info = warpfft.plan_cache_info()
    assert info["plans"] == 0 and info["busy"] == 0, info
    if fake is not None:
        assert fake.plans == {}, f"plans left: {list(fake.plans)}"


# ---- the one-call functions -----------------------------------------------------------------


def test_one_call_functions_under_clears_and_limit_changes(fake):
    """Threads run one-call transforms (host and "device" arrays, two shapes and dims, a
    caller's stream or none) while another clears the pool and changes its limits: every
    result is exact, and afterwards nothing is busy or left."""
    def worker(seed):
        rng = np.random.default_rng(seed)
        for i in range(40):
            dim = 1 + i % 2
            pts, c = _problem(rng, dim)
            n = SHAPES[dim]
            stream = (0, 0x5151, 0x5152)[i % 3]
            if i % 4 == 0:  # "device" arrays: returned without a wait
                dp = [FakeDeviceArray(fake, p) for p in pts]
                out = warpfft.nufft1d1(*dp, FakeDeviceArray(fake, c), n, eps=1e-10,
                                       gpu_stream=stream) if dim == 1 else \
                    warpfft.nufft2d1(*dp, FakeDeviceArray(fake, c), n, eps=1e-10,
                                     gpu_stream=stream)
                got = out.get() if hasattr(out, "get") else np.asarray(out)
            else:
                f = warpfft.nufft1d1 if dim == 1 else warpfft.nufft2d1
                got = f(*pts, c, n, eps=1e-10, gpu_stream=stream)
            assert rel_err(got, exact(1, pts, c, n, 1)) < 1e-10, (seed, i)

    errors = _run_threads([lambda s=s: worker(s) for s in range(4)], _chaos)
    assert not errors, errors[0]
    _expect_pool_empty(fake)
    assert fake.names().count("warpfft_plan_create") == fake.pool_counts["created"]


def test_one_call_plans_are_reused_across_streams_and_threads(fake):
    """The pool keys plans by stream too: a caller's stream gets its own plan (the old cache
    refused to keep those), reused by the next call on that stream."""
    rng = np.random.default_rng(5)
    pts, c = _problem(rng, 1)
    warpfft.clear_plan_cache()
    for stream in (0x5151, 0x5151, 0, 0x5152, 0x5151):
        warpfft.nufft1d1(*pts, c, SHAPES[1], gpu_stream=stream)
    assert fake.names().count("warpfft_plan_create") == 3
    assert warpfft.plan_cache_info()["plans"] == 3


def test_one_call_functions_pass_m_rounded_as_the_points_hint(fake):
    """Types 1 and 2 pass the plan points_hint = M rounded to the nearest power of two: calls
    whose M round alike share one pooled plan (an exact M would make a plan per M); type 3
    passes none (its choice does not use it); a call's own points_hint is used as given. The
    upsampfac option reaches the plan as given (0 by default: chosen per plan)."""
    rng = np.random.default_rng(7)
    warpfft.clear_plan_cache()
    fake.opts_seen.clear()
    for M, hint, new in ((11, 8, True), (9, 8, False), (13, 16, True), (16, 16, False)):
        pts, c = _problem(rng, 2, M)
        created = fake.pool_counts["created"]
        f = warpfft.nufft2d1(*pts, c, SHAPES[2], eps=1e-10)
        assert rel_err(f, exact(1, pts, c, SHAPES[2], 1)) < 1e-10
        assert fake.opts_seen[-1]["points_hint"] == hint, (M, fake.opts_seen[-1])
        assert fake.opts_seen[-1]["upsampfac"] == 0.0
        assert fake.pool_counts["created"] == created + new, M
        fk = warpfft.nufft2d2(*pts, f, eps=1e-6, upsampfac=1.5)
        assert fake.opts_seen[-1]["points_hint"] == hint
        assert fake.opts_seen[-1]["upsampfac"] == 1.5
        assert rel_err(fk, exact(2, pts, f, SHAPES[2], -1)) < 1e-10
    pts, c = _problem(rng, 1, 300)
    warpfft.nufft1d1(*pts, c, SHAPES[1], points_hint=5)
    assert fake.opts_seen[-1]["points_hint"] == 5
    warpfft.nufft1d3(*pts, c, pts[0][:7])
    assert fake.opts_seen[-1]["points_hint"] == 0
    with pytest.raises(warpfft.InvalidArgumentError, match="upsampfac"):
        warpfft.nufft1d1(*pts, c, SHAPES[1], upsampfac=3.5)


def test_evicting_a_plan_touches_no_stream(fake):
    """Once its user has destroyed a stream, evicting a plan made for it must not wait for it:
    the Python layer never synchronises a pooled plan's stream (the C pool waits for an event
    its release recorded; c_core/tests/test_pool_stress.c checks that on the stand-in driver)."""
    rng = np.random.default_rng(6)
    pts, c = _problem(rng, 1)
    dead = 0x5199
    warpfft.nufft1d1(*[FakeDeviceArray(fake, p) for p in pts], FakeDeviceArray(fake, c),
                     SHAPES[1], gpu_stream=dead)
    fake.calls.clear()
    fake.driver.calls.clear()
    warpfft.set_plan_cache_limits(plans=0)  # evicts it
    try:
        warpfft.clear_plan_cache()
    finally:
        warpfft.set_plan_cache_limits(plans=16)
    assert "warpfft_plan_destroy" in fake.names()
    assert not [cl for cl in fake.calls if cl[0] == "warpfft_stream_sync" and dead in cl[1:]]
    assert not [cl for cl in fake.driver.calls if dead in cl[1:2]]


# ---- PyTorch ----------------------------------------------------------------------------------


@pytest.fixture
def torch_fake(fake_c):
    """The torch ops over the fake library (conftest's fake_c: CPU tensors, whose pointers
    stand in for device pointers)."""
    import torch

    import warpfft.torch as wt
    from warpfft.torch import _ops
    yield torch, wt, _ops


def _torch_problem(torch, rng, dim, M=15):
    p = torch.tensor(rng.uniform(-np.pi, np.pi, (dim, M)))
    v = torch.tensor(rng.standard_normal((2, M)) + 1j * rng.standard_normal((2, M)))
    return p, v


def test_torch_clear_during_a_call_changes_nothing_for_it(torch_fake, monkeypatch, fake_c):
    """Issue 31 item 7: the old torch cache looked a plan up, then locked it: a clear (or an
    eviction) in between destroyed it under the call ('plan is NULL'). A clear from anywhere
    during a call -- before its plan is taken, or while it runs (from another thread) -- leaves
    the call's result exact, and the plan goes when the call ends."""
    torch, wt, _ops = torch_fake
    rng = np.random.default_rng(7)
    p, v = _torch_problem(torch, rng, 2)
    n = (6, 5)
    wt.finufft_type1(p, v, n, eps=1e-10, isign=1, modeord=0)  # a pooled plan to clear
    plain = _ops._plain
    state = {"plain": 0, "setpts": 0, "clear_done": None}

    def plain_then_clear(t):
        state["plain"] += 1
        if state["plain"] == 1:  # the old code's window: after the lookup, before the lock
            wt.clear_plan_cache()
        return plain(t)

    real_setpts = fake_c.warpfft_setpts

    def setpts_with_clear(*a):
        state["setpts"] += 1
        if state["setpts"] == 1:  # while the call holds its plan, another thread clears
            t = threading.Thread(target=wt.clear_plan_cache)
            t.start()
            t.join(5)
            state["clear_done"] = not t.is_alive()
        return real_setpts(*a)

    monkeypatch.setattr(_ops, "_plain", plain_then_clear)
    monkeypatch.setattr(fake_c, "warpfft_setpts", setpts_with_clear)
    q = p.clone()  # new points: the call sets them
    f = wt.finufft_type1(q, v, n, eps=1e-10, isign=1, modeord=0)
    assert rel_err(f.numpy(), exact(1, list(q.numpy()), v.numpy(), n, 1)) < 1e-10
    assert state["clear_done"], "a clear from another thread waited for the running call"
    assert warpfft.plan_cache_info()["busy"] == 0
    assert warpfft.plan_cache_info()["plans"] == 0  # the cleared plan went at the call's end


def test_torch_points_reuse_only_while_the_plan_keeps_them(torch_fake, fake_c):
    """The torch layer's points reuse on top of the pool: the same unmodified points tensor
    skips setpts, unless someone else set points on (or dropped them from) the plan since, which
    its points id shows."""
    torch, wt, _ops = torch_fake
    rng = np.random.default_rng(8)
    p, v = _torch_problem(torch, rng, 1)
    n = (7,)
    f0 = wt.finufft_type1(p, v, n, eps=1e-10, isign=1, modeord=0)
    s0 = wt.stats()
    wt.finufft_type1(p, v, n, eps=1e-10, isign=1, modeord=0)
    assert wt.stats()["setpts_skipped"] == s0["setpts_skipped"] + 1
    # a one-call function with the same key sets its points on that plan and drops them
    plan = next(iter(fake_c.pool_idle))
    hint = 16  # the ops' points_hint: M = 15 rounded to the nearest power of two
    opts = _ops.op_record(wt.op_options(1, modeord=0), 1)  # the record those calls' plans have
    a = _ops._plan_args(1, (7,), 2, 1e-10, 1, 2, opts, 0, 0, hint)
    import ctypes
    h = ctypes.c_void_p()
    assert fake_c.warpfft_pool_acquire(*a[:8], ctypes.byref(h)) == 0 and h.value == plan
    x = FakeDeviceArray(fake_c, rng.uniform(-3, 3, 4))
    assert fake_c.warpfft_setpts(plan, 2, 4, x.ptr, None, None) == 0
    assert fake_c.warpfft_pool_release(plan, 1) == 0  # keeps those other points
    f1 = wt.finufft_type1(p, v, n, eps=1e-10, isign=1, modeord=0)
    assert wt.stats()["setpts_calls"] == s0["setpts_calls"] + 1  # set again: not ours any more
    assert torch.equal(f0, f1)


def test_torch_eviction_touches_no_stream(torch_fake, monkeypatch, fake_c):
    """Issue 31 item 8: the old torch cache synchronised a plan's stream when it evicted the
    plan, though the stream (torch.cuda.Stream) may have been destroyed since. The pool waits
    for an event of the plan's last work instead (C side: test_pool_stress.c)."""
    torch, wt, _ops = torch_fake
    dead = 0x5177
    monkeypatch.setattr(_ops, "_stream_of", lambda device: dead)
    rng = np.random.default_rng(11)
    p, v = _torch_problem(torch, rng, 1)
    wt.finufft_type1(p, v, (7,), eps=1e-10, isign=1, modeord=0)
    fake_c.calls.clear()
    wt.clear_plan_cache()  # the stream's user destroyed it meanwhile
    assert "warpfft_plan_destroy" in fake_c.names()
    assert not [cl for cl in fake_c.calls if cl[0] == "warpfft_stream_sync"], fake_c.calls


def test_torch_ops_under_clears_and_limit_changes(torch_fake, fake_c):
    torch, wt, _ops = torch_fake

    def worker(seed):
        rng = np.random.default_rng(100 + seed)
        p, v = _torch_problem(torch, rng, 1 + seed % 2)
        n = SHAPES[1 + seed % 2]
        for i in range(30):
            if i % 5 == 4:
                p = p.clone()  # new points now and then; otherwise the same tensor
            f = wt.finufft_type1(p, v, n, eps=1e-10, isign=1, modeord=0)
            ref = exact(1, list(p.numpy()), v.numpy(), n, 1)
            assert rel_err(f.numpy(), ref) < 1e-10, (seed, i)
            fk = torch.tensor(ref)
            c = wt.finufft_type2(p, fk, eps=1e-10, isign=-1, modeord=0)
            assert rel_err(c.numpy(), exact(2, list(p.numpy()), ref, n, -1)) < 1e-10

    errors = _run_threads([lambda s=s: worker(s) for s in range(4)], _chaos)
    assert not errors, errors[0]
    s = wt.stats()
    assert s["setpts_skipped"] > 0 and s["setpts_calls"] > 0, s
    _expect_pool_empty(fake_c)


# ---- JAX (tracing: its validation memo and counters; the handler's C side: test_xla_ffi) -----


def test_jax_tracing_and_clears_share_the_pool(fake):
    """warpfft.jax's Python side under threads: tracing (the C library's plan_params checks,
    memoised in a bounded dict) while others clear the pool through warpfft.jax and through
    warpfft, and one-call functions run."""
    jax = pytest.importorskip("jax", reason="JAX is not installed: JAX path skipped")
    import warpfft.jax as wj

    def tracer(seed):
        for i in range(30):
            n = (4 + (seed + i) % 7, 5)
            x = jax.ShapeDtypeStruct((40,), np.float32)
            c = jax.ShapeDtypeStruct((2, 40), np.complex64)
            f = jax.eval_shape(lambda c, x, y: wj.nufft1(n, c, x, y, eps=1e-4 + 1e-6 * i), c, x,
                               x)
            assert f.shape == (2,) + n
            wj.clear_plan_cache()
            assert wj.cached_plans() >= 0

    def one_calls():
        rng = np.random.default_rng(9)
        for _ in range(30):
            pts, c = _problem(rng, 2)
            assert rel_err(warpfft.nufft2d1(*pts, c, SHAPES[2], eps=1e-10),
                           exact(1, pts, c, SHAPES[2], 1)) < 1e-10

    errors = _run_threads([lambda: tracer(0), lambda: tracer(1), one_calls], _chaos)
    assert not errors, errors[0]
    from warpfft import _lib
    assert len(_lib._params_ok) <= _lib._PARAMS_OK_MAX
    _expect_pool_empty(fake)


# ---- on a GPU: everything at once, for real ---------------------------------------------------


def _gpu_one_calls(seed, iters, use_cupy):
    rng = np.random.default_rng(seed)
    cp = None
    if use_cupy:
        try:
            import cupy as cp
        except ImportError:
            cp = None
    for i in range(iters):
        dim = 1 + i % 2
        n = (37,) if dim == 1 else (24, 17)
        pts, c = _problem(rng, dim, M=400)
        if cp is not None and i % 2:
            stream = cp.cuda.Stream(non_blocking=True)  # destroyed when collected
            with stream:
                dp = [cp.asarray(p) for p in pts]
                dc = cp.asarray(c)
                f = warpfft.nufft1d1 if dim == 1 else warpfft.nufft2d1
                out = f(*dp, dc, n, eps=1e-9, gpu_stream=stream)
                got = cp.asnumpy(out)
            del stream, dp, dc, out
        else:
            f = warpfft.nufft1d1 if dim == 1 else warpfft.nufft2d1
            got = f(*pts, c, n, eps=1e-9)
        assert rel_err(got, exact(1, pts, c, n, 1)) < 1e-7, (seed, i)
        if i % 7 == 6:
            gc.collect()  # destroys the caller's streams of earlier calls


def _gpu_torch(seed, iters):
    import torch

    import warpfft.torch as wt
    rng = np.random.default_rng(200 + seed)
    stream = torch.cuda.Stream()
    for i in range(iters):
        p = torch.tensor(rng.uniform(-np.pi, np.pi, (2, 300)), device="cuda")
        v = torch.tensor(rng.standard_normal((2, 300)) + 1j * rng.standard_normal((2, 300)),
                         device="cuda")
        with torch.cuda.stream(stream if i % 2 else torch.cuda.current_stream()):
            for _ in range(2):  # the second reuses the points (same tensor)
                f = wt.finufft_type1(p, v, (16, 12), eps=1e-9, isign=1, modeord=0)
            torch.cuda.current_stream().synchronize()
        ref = exact(1, list(p.cpu().numpy()), v.cpu().numpy(), (16, 12), 1)
        assert rel_err(f.cpu().numpy(), ref) < 1e-7, (seed, i)


def _gpu_jax(seed, iters):
    import jax

    import warpfft.jax as wj
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(300 + seed)
    dev = jax.devices("gpu")[0]
    fn = jax.jit(lambda c, x, y: wj.nufft1((16, 12), c, x, y, eps=1e-9))
    for i in range(iters):
        x, y = (rng.uniform(-np.pi, np.pi, 300) for _ in range(2))
        c = rng.standard_normal((2, 300)) + 1j * rng.standard_normal((2, 300))
        f = fn(*[jax.device_put(a, dev) for a in (c, x, y)])
        ref = exact(1, [x, y], c, (16, 12), 1)
        assert rel_err(np.asarray(f), ref) < 1e-7, (seed, i)


@pytest.mark.gpu
def test_gpu_every_path_under_clears_and_limit_changes():
    """One-call functions (numpy; cupy on its own streams, which are destroyed afterwards),
    PyTorch ops on two streams and jitted JAX functions run on threads at once while another
    thread clears the pool and changes its limits; every result against exact sums, and at the
    end nothing busy, nothing idle after a clear."""
    require_gpu()
    workers = [lambda: _gpu_one_calls(1, 40, False), lambda: _gpu_one_calls(2, 40, True)]
    skipped = []
    try:
        import torch
        if torch.cuda.is_available():
            workers.append(lambda: _gpu_torch(3, 20))
        else:
            skipped.append("torch without CUDA")
    except ImportError:
        skipped.append("torch not installed")
    try:
        import jax
        if jax.devices("gpu"):
            workers.append(lambda: _gpu_jax(4, 20))
    except (ImportError, RuntimeError):
        skipped.append("JAX without a GPU")
    errors = _run_threads(workers, _chaos, seconds_max=600)
    assert not errors, errors[0]
    _expect_pool_empty()
    if skipped:
        print("paths not run: " + ", ".join(skipped))
