"""warpfft.torch under CUDA graphs (docs/cuda-graphs.md; issue 40): torch.cuda.graph and
torch.compile(mode="reduce-overhead").

Without a GPU (over the fake C library, conftest.py's ``fake_c``; the capture state stood in):
during a capture the ops set their points on every call (a replay must sort the points tensor's
contents of its own moment, not skip a set-points because the tensor looked unchanged at capture
time) and remember none for later calls; an acquire the C library refuses during a capture (no
idle plan of the key: making one allocates) says how to warm up; type 3 refuses during a capture
and is tagged ``cudagraph_unsafe`` (torch.compile's CUDA graphs go around it), types 1 and 2 are
not.

On a GPU: a graph captured with torch.cuda.graph after a warm-up on its stream, replayed with new
strengths and new points copied into its static inputs, equals the eager results every time;
the pooled plan it captured is the graph's until the graph is freed (then the pool has it back);
type 3 in a capture raises the clear error; torch.compile(mode="reduce-overhead") of types 1 and
2 (with autograd) equals eager over several calls, and a compiled type 3 still runs.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \\
        python -m pytest python/tests/test_torch_graphs.py -q -rs
"""

import gc
import time

import numpy as np
import pytest
# first, before warpfft: skips the module without a library or PyTorch
from _torch_support import data, data3, require_cuda, torch

import warpfft
import warpfft.torch as wt
from warpfft.torch import _ops

KW = dict(eps=1e-6, isign=1, modeord=0)


def _rel(a, b):
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


# ---- without a GPU: the op path during a capture, over the fake C library -----------------


def _capture(monkeypatch):
    """A capture in progress on a stream of torch's (the legacy stream, 0, cannot capture)."""
    monkeypatch.setattr(_ops, "_stream_of", lambda device: 0x5A5A)
    monkeypatch.setattr(_ops, "_capturing", lambda t: True)


def test_capture_sets_points_every_call_and_remembers_none(fake_c, monkeypatch):
    rng = np.random.default_rng(71)
    p, v, _, _ = data(rng, 2, 30, (2,), device="cpu")
    wt.finufft_type1(p, v, (6, 5), **KW)  # eager: points set, remembered
    fake_c.calls.clear()
    wt.finufft_type1(p, v, (6, 5), **KW)  # eager again: the set-points skipped
    assert "warpfft_setpts" not in fake_c.names()
    _capture(monkeypatch)
    wt.finufft_type1(p, v, (6, 5), **KW)  # (the capture stream's plan made: the fake allows it)
    for _ in range(2):  # the same, unmodified points tensor: set on every call all the same
        fake_c.calls.clear()
        wt.finufft_type1(p, v, (6, 5), **KW)
        assert fake_c.names() == ["warpfft_pool_acquire", "warpfft_setpts", "warpfft_execute",
                                  "warpfft_pool_release"], fake_c.names()
    fk = torch.tensor(rng.standard_normal((2, 6, 5)) + 0j)
    for _ in range(2):  # type 2 too
        fake_c.calls.clear()
        wt.finufft_type2(p, fk, **KW)
        assert fake_c.names().count("warpfft_setpts") == 1
    monkeypatch.setattr(_ops, "_capturing", lambda t: False)
    fake_c.calls.clear()
    wt.finufft_type1(p, v, (6, 5), **KW)  # nothing remembered in the capture: set again
    assert "warpfft_setpts" in fake_c.names()


def test_capture_acquire_refused_says_how_to_warm_up(fake_c, monkeypatch):
    rng = np.random.default_rng(72)
    p, v, _, _ = data(rng, 1, 20, (1,), device="cpu")
    _capture(monkeypatch)
    fake_c.fail["warpfft_pool_acquire"] = 18  # what the C library says during a capture
    with pytest.raises(warpfft.UnsupportedError, match=r"torch\.cuda\.graph\(g, stream=s\)"):
        wt.finufft_type1(p, v, (8,), **KW)
    del fake_c.fail["warpfft_pool_acquire"]
    wt.finufft_type1(p, v, (8,), **KW)  # a plan to be had: fine


def test_type3_refuses_during_a_capture(fake_c, monkeypatch):
    rng = np.random.default_rng(73)
    p, v, t, _, _, _ = data3(rng, 1, 20, 7, (1,), device="cpu")
    wt.finufft_type3(p, v, t, eps=1e-6)
    _capture(monkeypatch)
    fake_c.calls.clear()
    with pytest.raises(warpfft.UnsupportedError, match="cannot be captured into a CUDA graph"):
        wt.finufft_type3(p, v, t, eps=1e-6)
    assert fake_c.names() == []  # refused before any C call


def test_tags():
    unsafe = getattr(torch.Tag, "cudagraph_unsafe", None)
    if unsafe is None:
        pytest.skip("this PyTorch has no torch.Tag.cudagraph_unsafe")
    assert unsafe in torch.ops.warpfft.nufft3.default.tags
    assert unsafe not in torch.ops.warpfft.nufft1.default.tags
    assert unsafe not in torch.ops.warpfft.nufft2.default.tags


def test_capturing_asks_cuda_only_for_cuda_tensors():
    assert not _ops._capturing(torch.zeros(3))  # no CUDA call for a CPU tensor


# ---- on the GPU ------------------------------------------------------------------------------


def _pool():
    return warpfft.plan_cache_info()


@pytest.mark.parametrize("nufft_type", [1, 2])
def test_graph_replays_equal_eager(nufft_type):
    """torch.cuda.graph after a warm-up on its stream; replays with new strengths and new points
    copied into the static inputs equal eager calls on the same data."""
    require_cuda()
    rng = np.random.default_rng(80 + nufft_type)
    dev = "cuda"
    modes = (24, 20)
    M, B = 700, 3
    p, v, _, _ = data(rng, 2, M, (B,), torch.float32, device=dev)
    fk = torch.randn((B,) + modes, dtype=torch.complex64, device=dev)
    static_p = p.clone()
    static_in = (v if nufft_type == 1 else fk).clone()

    def op():
        if nufft_type == 1:
            return wt.finufft_type1(static_p, static_in, modes, **KW)
        return wt.finufft_type2(static_p, static_in, **KW)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):  # the warm-up: the pool's plan for this stream
            op()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        static_out = op()
    busy = _pool()["busy"]
    assert busy >= 1  # the captured plan: the graph's
    for k in range(5):
        new_p = (torch.rand((2, M), device=dev) * 2 - 1) * np.pi
        new_in = (torch.randn_like(static_in) if k % 2 else static_in * (1 + k))
        static_p.copy_(new_p)
        static_in.copy_(new_in)
        g.replay()
        torch.cuda.synchronize()
        want = (wt.finufft_type1(new_p, new_in, modes, **KW) if nufft_type == 1 else
                wt.finufft_type2(new_p, new_in, **KW))
        err = _rel(static_out, want)
        assert err < 1e-5, (k, err)  # float atomics: not bitwise, within float rounding
    del g
    gc.collect()
    torch.cuda.synchronize()
    for _ in range(200):  # CUDA lets go on a thread of its own, maybe a moment later
        if _pool()["busy"] == busy - 1:
            break
        time.sleep(0.01)
    assert _pool()["busy"] == busy - 1  # freed: the pool has the plan back


def test_graph_type3_refused():
    require_cuda()
    rng = np.random.default_rng(83)
    p, v, t, _, _, _ = data3(rng, 1, 200, 30, (1,), torch.float32, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        wt.finufft_type3(p, v, t, eps=1e-5)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(warpfft.UnsupportedError, match="cannot be captured"):
        with torch.cuda.graph(g, stream=s):
            wt.finufft_type3(p, v, t, eps=1e-5)


def test_compile_reduce_overhead_equals_eager():
    """torch.compile(mode="reduce-overhead"): its CUDA graphs capture types 1 and 2 (forward and
    backward) after their warm-up; several calls with new data equal eager."""
    require_cuda()
    rng = np.random.default_rng(84)
    modes = (16, 12)
    M = 500

    def f(points, values):
        fk = wt.finufft_type1(points, values, modes, **KW)
        c = wt.finufft_type2(points, fk * 0.5, **KW)
        return (c.abs() ** 2).sum(), fk

    from torch._dynamo.utils import counters
    counters.clear()
    cf = torch.compile(f, mode="reduce-overhead")
    for k in range(4):
        p, v, _, _ = data(rng, 2, M, (2,), torch.float32, device="cuda")
        v.requires_grad_(True)
        loss, fk = cf(p, v)
        (gv,) = torch.autograd.grad(loss, v)
        v2 = v.detach().clone().requires_grad_(True)
        loss_e, fk_e = f(p, v2)
        (gv_e,) = torch.autograd.grad(loss_e, v2)
        assert _rel(fk, fk_e) < 1e-5 and abs(float(loss - loss_e)) <= 1e-4 * abs(float(loss_e))
        assert _rel(gv, gv_e) < 1e-4, k
    # the ops ran inside torch.compile's CUDA graphs: it skipped none of them
    assert counters["inductor"]["cudagraph_skips"] == 0, dict(counters["inductor"])


def test_compile_reduce_overhead_type3_runs():
    """A compiled function with type 3 in it: the op is cudagraph_unsafe, so torch.compile
    runs it outside its graphs; the results equal eager."""
    require_cuda()
    rng = np.random.default_rng(85)

    def f(points, values, targets):
        return wt.finufft_type3(points, values * 2, targets, eps=1e-5) + 1

    cf = torch.compile(f, mode="reduce-overhead")
    for _ in range(3):
        p, v, t, _, _, _ = data3(rng, 2, 300, 40, (2,), torch.float32, device="cuda")
        assert _rel(cf(p, v, t), f(p, v, t)) < 1e-5
