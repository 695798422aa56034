"""warpfft.torch's Toeplitz operator from many threads at once (issue 40): every application takes
a zero operator from the C library's live-plan pool and gives it back after enqueueing, so no
handle outlives its call. The operator cache it had before handed out raw handles after
dropping its lock: an eviction (a 9th key) or a clear in another thread destroyed an operator a
call was about to apply (a use after free in the C library), and two threads applying operators
of one shape on torch's default stream (every thread's) got the same operator at once (one work
grid, one cuFFT plan driven twice: outputs silently mixed).

On the CPU the fake C library (_fake.py) runs the operators exactly and records any application
of a destroyed operator, or of one another thread is applying, in ``violations``; its
applications take a moment (``delay``) so that the threads overlap. On the GPU the same threads
run the real library and their results are compared with one thread's.

    python -m pytest python/tests/test_toeplitz_threads.py -q -rs
"""

import threading

import numpy as np
import pytest
from _support import gpu_status, rel_err
from test_toeplitz import SHAPES, dense_normal, problem

THREADS = 6


@pytest.fixture
def torch_fake(fake_c, monkeypatch):
    """warpfft.torch's Toeplitz over the fake library: CPU tensors, device 0, stream 0 (torch's
    default stream, shared by every thread), applications that take 2 ms."""
    from warpfft.torch import _toeplitz as tt

    monkeypatch.setattr(tt, "_device", lambda t: 0)
    monkeypatch.setattr(tt, "_stream", lambda device: 0)
    monkeypatch.setattr(tt, "_CPU_OK", [True])
    fake_c.delay = 0.002
    yield fake_c
    fake_c.delay = 0.0
    tt.clear_cache()


def _run(threads):
    """Runs the callables on threads started together; re-raises the first failure."""
    errors, start = [], threading.Barrier(len(threads))

    def body(fn):
        start.wait()
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    ts = [threading.Thread(target=body, args=(fn,)) for fn in threads]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def _operators(torch, n_ops, dim=2):
    """n_ops operators of one shape (different points), with their dense references."""
    import warpfft.torch as wt

    out = []
    for k in range(n_ops):
        pts, w, f = problem(dim, np.complex128, "real", n_trans=2, M=10, seed=k)
        op = wt.Toeplitz(torch.tensor(np.stack(pts)), SHAPES[dim],
                         weights=torch.tensor(w), eps=1e-12)
        out.append((op, torch.tensor(f), dense_normal(f, pts, w, -1, 1)))
    return out


def test_threads_never_share_an_operator(torch_fake):
    """Six threads applying operators of one shape on one stream: each application has an
    operator of its own (the pool hands a busy one to nobody else), every result is right."""
    import torch

    ops = _operators(torch, THREADS)
    bad = []

    def apply(i):
        op, f, want = ops[i]
        for _ in range(5):
            got = op(f).numpy()
            if rel_err(got, want) > 1e-10:
                bad.append((i, rel_err(got, want)))

    _run([lambda i=i: apply(i) for i in range(THREADS)])
    assert torch_fake.violations == []
    assert bad == []
    created = sum(c[0] == "warpfft_toeplitz_create" for c in torch_fake.calls)
    assert 2 <= created <= THREADS  # concurrent calls got operators of their own, then reused


def test_eviction_and_clear_while_threads_apply(torch_fake):
    """Threads applying operators of nine batch sizes (nine keys, past the old cache's eight)
    while another thread clears the pool and the limits evict: no operator is destroyed while a
    call applies it, none is applied after its destruction, every result is right."""
    import torch
    from warpfft import _lib
    from warpfft.torch import _toeplitz as tt

    _lib.lib.warpfft_pool_set_limits(2, -1)  # evictions at almost every release
    try:
        ops = _operators(torch, THREADS)
        stop = threading.Event()
        bad = []

        def apply(i):
            op, f, want = ops[i]
            for rep in range(4):
                for t in range(1, 10):  # batch sizes 1..9: nine keys
                    fb = f[0].expand((t,) + f.shape[1:])
                    got = op(fb).numpy()
                    if rel_err(got, np.broadcast_to(want[0], got.shape)) > 1e-10:
                        bad.append((i, t))
            stop.set()

        def clear():
            while not stop.is_set():
                tt.clear_cache()

        _run([lambda i=i: apply(i) for i in range(THREADS - 1)] + [clear])
        assert torch_fake.violations == []
        assert bad == []
        destroyed = sum(c[0] == "warpfft_toeplitz_destroy" for c in torch_fake.calls)
        assert destroyed == 0  # the pool destroys its operators itself, after their fence
    finally:
        _lib.lib.warpfft_pool_set_limits(16, -1)


def test_fake_sees_a_shared_operator(torch_fake):
    """The check can fail: two threads applying one operator handle at once (what the old
    cache did on one stream) are seen."""
    import ctypes

    import torch
    from warpfft import _lib
    from warpfft import _options as table
    from warpfft.torch import _toeplitz as tt

    lib = _lib.lib
    o = tt._opts(0, 0, table.to_hex(table.record(())))
    h = ctypes.c_void_p()
    assert lib.warpfft_toeplitz_create(2, _lib.n_modes_array([7, 12]), 1, 1, 1e-6, 2,
                                       ctypes.byref(o), 0, None, None, None, 0, None,
                                       ctypes.byref(h)) == 0
    h = h.value
    f = torch.zeros((12, 7), dtype=torch.complex128)
    spec = torch.zeros((24, 14), dtype=torch.float64)
    outs = [torch.empty_like(f) for _ in range(2)]
    _run([lambda k=k: lib.warpfft_toeplitz_apply_spectrum(h, 2, 1, spec.data_ptr(), 0,
                                                           f.data_ptr(), outs[k].data_ptr())
          for k in range(2)])
    assert any("two threads" in v for v in torch_fake.violations)
    torch_fake.violations.clear()
    lib.warpfft_toeplitz_destroy(h)


@pytest.mark.gpu
def test_gpu_threads_clear_and_evict():
    """On the GPU: six threads applying operators (nine batch sizes each, torch's default
    stream) while another clears the pool and the limits evict; every result equals the one
    thread's, nothing raises (a freed operator would fault or corrupt; compute-sanitizer
    memcheck of this test sees any access to freed memory)."""
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: torch sees no CUDA device")
    import warpfft
    import warpfft.torch as wt

    rng = np.random.default_rng(3)
    pts = torch.tensor(rng.uniform(-np.pi, np.pi, (2, 3000)), device="cuda")
    op = wt.Toeplitz(pts, (48, 40), eps=1e-9)
    fs = [torch.tensor(rng.standard_normal((t, 48, 40)) + 1j * rng.standard_normal((t, 48, 40)),
                       device="cuda") for t in range(1, 10)]
    want = [op(f).cpu().numpy() for f in fs]
    warpfft.set_plan_cache_limits(plans=2)
    stop = threading.Event()
    bad = []
    try:
        def apply():
            for _ in range(3):
                for f, w in zip(fs, want):
                    got = op(f)
                    torch.cuda.current_stream().synchronize()
                    if rel_err(got.cpu().numpy(), w) > 1e-12:
                        bad.append(rel_err(got.cpu().numpy(), w))
            stop.set()

        def clear():
            while not stop.is_set():
                wt.clear_plan_cache()

        _run([apply] * (THREADS - 1) + [clear])
    finally:
        warpfft.set_plan_cache_limits(plans=16)
    assert bad == []
