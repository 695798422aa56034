"""The GPU halves of issue 16's memory-safety items (test_memory_safety.py has the GPU-free
ones): uploads and producers on non-blocking streams, temporaries returned to cupy's and
torch's pools while queued work uses them, threads sharing a plan, pointers that are not on the
plan's device. Skips with "no GPU: ..." without a device."""

import threading

import numpy as np
import pytest
from _support import rel_err, require_gpu, torch_cuda, warpfft

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu():
    require_gpu()


def _problem(M, seed=0, dtype=np.complex64):
    rng = np.random.default_rng(seed)
    real = np.float32 if dtype == np.complex64 else np.float64
    x, y = rng.uniform(-np.pi, np.pi, (2, M)).astype(real)
    c = (rng.standard_normal(M) + 1j * rng.standard_normal(M)).astype(dtype)
    return x, y, c


def _check_type1(f, x, y, c, n, eps, seed=0):
    s = np.random.default_rng(seed).integers(0, int(np.prod(n)), 40)
    ref = warpfft.direct_sample(1, n, x, y, c=c, sample=s)
    assert rel_err(np.asarray(f).ravel()[s], ref) <= 10 * eps


def test_2_host_points_on_a_non_blocking_stream():
    """numpy points are copied on the legacy stream; the plan runs on a cupy non_blocking
    stream: the copy must be ordered before setpts' kernels (big M: a long copy)."""
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    n, M = (64, 64), 4_000_000
    x, y, c = _problem(M, seed=1)
    s = cp.cuda.Stream(non_blocking=True)
    with warpfft.Plan(1, n, eps=1e-5, gpu_stream=s.ptr) as plan:
        for rep in range(3):
            plan.setpts(x, y)
            with s:
                out = plan.execute(cp.asarray(c))
                got = cp.asnumpy(out, stream=s)
                s.synchronize()
            _check_type1(got, x, y, c, n, 1e-5, seed=rep)


def test_2_torch_side_stream_producer():
    torch = torch_cuda()
    n, M = (64, 32), 2_000_000
    x, y, c = _problem(M, seed=2)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        for rep in range(3):
            tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
            tc = torch.from_numpy(c).cuda()
            out = warpfft.nufft2d1(tx, ty, tc, n, eps=1e-5)
            got = out.cpu().numpy()
            _check_type1(got, x, y, c, n, 1e-5, seed=rep)


def test_3_temporaries_returned_to_cupy_pool():
    """Inputs freed right after execute and their memory refilled at once on the producer's
    stream: the plan (on another stream) must still read the right values."""
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    n, M = (128, 128), 1_000_000
    x, y, c = _problem(M, seed=3)
    s = cp.cuda.Stream(non_blocking=True)
    gx, gy = cp.asarray(x), cp.asarray(y)
    outs, scales = [], [1, 2, 3, 4]
    with warpfft.Plan(1, n, eps=1e-5, gpu_stream=s.ptr) as plan:
        plan.setpts(gx, gy)
        for k in scales:
            outs.append(plan.execute(cp.asarray(c) * k))  # a temporary
            junk = cp.full(M, 1e30 + 0j, np.complex64)  # likely the freed block, refilled
            del junk
        s.synchronize()
    f1 = cp.asnumpy(outs[0])
    _check_type1(f1, x, y, c, n, 1e-5)
    for k, o in zip(scales, outs):
        assert rel_err(cp.asnumpy(o), k * f1) < 1e-6, k


def test_3_temporaries_returned_to_torch_pool():
    torch = torch_cuda()
    n, M = (128, 128), 1_000_000
    x, y, c = _problem(M, seed=4)
    side = torch.cuda.Stream()
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    tc = torch.from_numpy(c).cuda()
    outs = []
    with warpfft.Plan(1, n, eps=1e-5, gpu_stream=side.cuda_stream) as plan:
        plan.setpts(tx, ty)
        for k in (1, 2, 3):
            outs.append(plan.execute(tc * k))
            junk = torch.full((M,), 1e30 + 0j, dtype=torch.complex64, device="cuda")
            del junk
    torch.cuda.synchronize()
    f1 = outs[0].cpu().numpy()
    _check_type1(f1, x, y, c, n, 1e-5)
    for k, o in zip((1, 2, 3), outs):
        assert rel_err(o.cpu().numpy(), k * f1) < 1e-6, k


def test_4_threads_share_a_plan():
    n, M = (48, 40), 20_000
    x, y, c = _problem(M, seed=5, dtype=np.complex128)
    plan = warpfft.Plan(1, n, eps=1e-9, dtype="complex128")
    plan.setpts(x, y)
    want = plan.execute(c)
    bad, errors = [], []

    def run(k):
        try:
            for _ in range(30):
                got = plan.execute(c * k)
                if rel_err(got, k * want) > 1e-12:
                    bad.append(k)
        except warpfft.WarpfftError as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad and not errors, (bad, errors)
    racers = [threading.Thread(target=run, args=(1,)) for _ in range(2)]
    for t in racers:
        t.start()
    plan.close()  # racing the executes: they finish first or fail cleanly
    for t in racers:
        t.join()
    assert all("closed" in str(e) for e in errors), errors


def test_7_host_pointer_is_not_device_memory():
    x = np.zeros(10, np.float32)

    class HostAsDevice:
        __cuda_array_interface__ = {"shape": (10,), "typestr": "<f4",
                                    "data": (x.ctypes.data, False), "version": 3,
                                    "strides": None, "stream": None}

    with warpfft.Plan(1, (8,), eps=1e-5) as plan:
        with pytest.raises(warpfft.InvalidArgumentError, match="not device memory"):
            plan.setpts(HostAsDevice())


def test_7_pointer_on_another_device():
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU: a pointer on another device cannot be made")
    with cp.cuda.Device(1):
        gx = cp.zeros(10, np.float32)
    with warpfft.Plan(1, (8,), eps=1e-5, gpu_device_id=0) as plan:
        with pytest.raises(warpfft.InvalidArgumentError, match="device 1"):
            plan.setpts(gx)
