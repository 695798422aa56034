"""The eight memory-safety items of issue 16, each with a test that fails on the package as it
was before (python/warpfft at e34b31f). Most run without a GPU: the argument checks happen
before any C call, or the Python layer runs over the fake C library and driver of _fake.py.
The GPU halves are in test_gpu_memory_safety.py."""

import gc
import threading
import time
import weakref

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import warpfft


def _pts(dim, M=9, real=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-np.pi, np.pi, M).astype(real) for _ in range(dim)]


# 1. direct_sample checks every length before the GPU reads anything.
def test_1_direct_sample_checks_every_length():
    x, y = _pts(2)
    c = np.ones(9, np.complex128)
    for kw, what in ((dict(x=x, y=y[:5], c=c), "y has 5"),
                     (dict(x=x, y=y, c=c[:4]), "c has 4"),
                     (dict(x=x, y=None, c=c), "y is needed")):
        with pytest.raises(warpfft.InvalidArgumentError, match=what):
            warpfft.direct_sample(1, (8, 8), **kw)
    with pytest.raises(warpfft.InvalidArgumentError, match="fk has 10"):
        warpfft.direct_sample(2, (8, 8), x, y, fk=np.ones(10, np.complex128))
    with pytest.raises(warpfft.InvalidArgumentError, match="z has"):
        warpfft.direct_sample(1, (4, 4, 4), x, y, x[:3], c=c)
    with pytest.raises(warpfft.InvalidArgumentError, match=r"sample indices"):
        warpfft.direct_sample(1, (8, 8), x, y, c=c, sample=[64])


# 2. Host uploads are ordered before the plan's work on a non-default stream.
def test_2_host_uploads_ordered_before_plan_stream(fake):
    x, y = _pts(2)
    S = 0xABC0
    with warpfft.Plan(1, (6, 5), dtype="complex128", gpu_stream=S) as plan:
        plan.setpts(x, y)
        names = [c[0] for c in fake.calls] + []
        i_copy = max(i for i, c in enumerate(fake.calls) if c[0] == "warpfft_memcpy_htod")
        i_set = names.index("warpfft_setpts")
        assert i_copy < i_set
        assert ("order", 0, S) in fake.driver.calls, fake.driver.calls
        fake.driver.calls.clear()
        plan.execute(np.ones(9, np.complex128))
        assert ("order", 0, S) in fake.driver.calls  # the strengths' upload too


def test_2_device_producer_stream_waited_by_events(fake):
    x, y = _pts(2)
    P = 0x5150  # the producer's stream (cupy non_blocking, torch side stream, ...)
    with warpfft.Plan(1, (6, 5), dtype="complex128") as plan:
        plan.setpts(*[FakeDeviceArray(fake, p, stream=P) for p in (x, y)])
        assert ("order", P, 0) in fake.driver.calls
        assert "warpfft_stream_sync" not in fake.names()  # no host wait


# 3. Device-array execute keeps data/out alive until the work is known complete, and the
#    producers' streams wait for it (memory pools reuse blocks in their stream's order).
def test_3_execute_keeps_device_arrays_until_complete(fake):
    x, = _pts(1)
    P = 0x7070
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        plan.setpts(FakeDeviceArray(fake, x))
        fake.driver.complete = False  # the queued work has not finished
        data = FakeDeviceArray(fake, np.ones(9, np.complex128), stream=P)
        ref = weakref.ref(data)
        out = plan.execute(data)
        del data
        gc.collect()
        assert ref() is not None, "data was released while the plan's stream may read it"
        rec = [c for c in fake.driver.calls if c[0] == "record"][-1]
        assert ("wait", P, rec[2]) in fake.driver.calls  # producer waits for our work
        fake.driver.complete = True
        plan.execute(FakeDeviceArray(fake, np.ones(9, np.complex128)), out=out)
        gc.collect()
        assert ref() is None, "data still held after its work completed"


# 4. Calls on one plan from two threads are serialised (ctypes drops the GIL).
def test_4_plan_calls_serialised_across_threads(fake):
    x, = _pts(1)
    fake.delay = 0.05
    plan = warpfft.Plan(1, (7,), dtype="complex128")
    plan.setpts(x)
    errors = []

    def run():
        try:
            plan.execute(np.ones(9, np.complex128))
        except Exception as e:  # a closed plan is a clean error, never a crash
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.01)
    closer = threading.Thread(target=plan.close)
    closer.start()
    for t in threads + [closer]:
        t.join()
    assert fake.max_active == 1, "two C calls ran on one plan at once"
    names = fake.names()
    assert names.index("warpfft_plan_destroy") > max(
        i for i, n in enumerate(names) if n == "warpfft_execute")
    assert all(isinstance(e, warpfft.InvalidArgumentError) for e in errors), errors


# 5. Integers that do not fit are refused before any C call (ctypes would wrap them).
@pytest.mark.parametrize("call", [
    lambda: warpfft.Plan(2**32 + 1, (8,)),
    lambda: warpfft.Plan(1, (2**64 + 8,)),
    lambda: warpfft.Plan(1, (8,), n_trans=2**64 + 1),
    lambda: warpfft.Plan(1, (8.5,)),
    lambda: warpfft.DeviceArray((2**60 + 1,), np.complex128),
    lambda: warpfft.DeviceArray((-1,), np.complex128),
    lambda: warpfft.DeviceArray((4,), np.float32, device=2**32),
    lambda: warpfft.init(2**32),
], ids=["type", "n_modes", "n_trans", "float n_modes", "DeviceArray bytes", "DeviceArray<0",
        "DeviceArray device", "init device"])
def test_5_out_of_range_integers_refused_before_c(call, monkeypatch):
    from warpfft import _lib

    monkeypatch.setattr(_lib, "lib", None)  # any C call would raise AttributeError
    with pytest.raises(warpfft.InvalidArgumentError):
        call()


# 5b. Options cross as text checked by the C library's option table (warpfft_opts_set), so an
# integer past its field's type is refused there, never wrapped.
@pytest.mark.parametrize("kw, message", [
    ({"gpu_binsizex": 2**32 + 4}, "opts.bin_size[0] = 4294967300; must be >= 0"),
    ({"gpu_device_id": 2**32}, "opts.device = 4294967296; must be >= 0"),
    ({"gpu_device_id": -1}, "opts.device = -1; must be >= 0"),
    ({"modeord": 2**32}, "opts.modeord = 4294967296; must be 0 (CMCL) or 1 (FFT)"),
    ({"gpu_maxsubprobsize": 2**31}, "opts.max_subprob = 2147483648; must be >= 0"),
    ({"points_hint": 2**63}, "opts.points_hint = 9223372036854775808; must be >= 0"),
    ({"gpu_stream": -1}, "opts.stream = -1; must be in [0, 18446744073709551615]"),
    ({"gpu_stream": 2**64}, "opts.stream = 18446744073709551616; must be in [0, 1844674407"),
])
def test_5b_out_of_range_options_refused_by_the_table(kw, message, fake):
    with pytest.raises(warpfft.InvalidArgumentError) as ei:
        warpfft.Plan(1, (8,), **kw)
    assert message in str(ei.value)
    assert "warpfft_plan_create" not in fake.names()  # refused before any plan


# 6. close() and the one-call functions raise the status of the final wait and destroy.
def test_6_close_raises_failed_async_work(fake):
    x, = _pts(1)
    plan = warpfft.Plan(1, (7,), dtype="complex128")
    plan.setpts(x)
    fake.fail["warpfft_stream_sync"] = 17  # an error from asynchronous work
    with pytest.raises(warpfft.WarpfftError) as ei:
        plan.close()
    assert ei.value.status == 17
    assert "warpfft_plan_destroy" in fake.names()  # destroyed anyway: no leak
    plan.close()  # idempotent, silent


def test_6_close_raises_failed_destroy(fake):
    plan = warpfft.Plan(1, (7,), dtype="complex128")
    fake.fail["warpfft_plan_destroy"] = 17
    with pytest.raises(warpfft.WarpfftError):
        plan.close()


def test_6_one_call_raises_failed_final_sync(fake):
    x, = _pts(1)
    fake.fail["warpfft_stream_sync"] = 17
    with pytest.raises(warpfft.WarpfftError) as ei:
        warpfft.nufft1d1(x, np.ones(9, np.complex128), (7,))
    assert ei.value.status == 17


def test_6_one_call_without_cache_raises_failed_destroy(fake):
    warpfft.set_plan_cache_limits(plans=0)
    try:
        x, = _pts(1)
        fake.fail["warpfft_plan_destroy"] = 17
        with pytest.raises(warpfft.WarpfftError):
            warpfft.nufft1d1(x, np.ones(9, np.complex128), (7,))
    finally:
        fake.fail.pop("warpfft_plan_destroy", None)
        warpfft.set_plan_cache_limits(plans=16)
    # the pool kept the plan it could not destroy, and a later clear destroys it
    assert len(fake.plans) == 1
    warpfft.clear_plan_cache()
    assert fake.plans == {}


# 7. Device pointers must be on the plan's device; a mask or negative extents are refused.
def test_7_pointer_on_another_device_refused(fake):
    x, = _pts(1)
    dx = FakeDeviceArray(fake, x)
    fake.driver.devices[dx.ptr] = 1
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        with pytest.raises(warpfft.InvalidArgumentError, match="device 1"):
            plan.setpts(dx)
        assert "warpfft_setpts" not in fake.names()
        fake.driver.devices[dx.ptr] = None  # not device memory at all
        with pytest.raises(warpfft.InvalidArgumentError, match="not device memory"):
            plan.setpts(dx)


class _CAI:
    def __init__(self, **kw):
        self.cai = dict(shape=(9,), typestr="<f8", data=(0x1000, False), version=3,
                        strides=None)
        self.cai.update(kw)

    @property
    def __cuda_array_interface__(self):
        return self.cai


@pytest.mark.parametrize("kw,match", [
    (dict(mask=_CAI()), "mask"),
    (dict(shape=(-9,)), "negative extent"),
    (dict(strides=(16,)), "C-contiguous"),
    (dict(stream=0), "stream 0"),
    (dict(typestr="<f4"), "dtype"),
])
def test_7_bad_cuda_array_interface_refused(fake, kw, match):
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        with pytest.raises(warpfft.InvalidArgumentError, match=match):
            plan.setpts(_CAI(**kw))
    assert "warpfft_setpts" not in fake.names()


# 8. Failed setpts, exceptions from an array's interface, 2-D n_modes, isign=None, casts.
def test_8_failed_setpts_clears_M(fake):
    x, = _pts(1)
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        plan.setpts(x)
        assert plan.M == 9
        fake.fail["warpfft_setpts"] = 7
        with pytest.raises(warpfft.InvalidArgumentError):
            plan.setpts(x[:5])
        assert plan.M is None
        with pytest.raises(warpfft.WarpfftError, match="setpts"):
            plan.execute(np.ones(5, np.complex128))


class _Raising:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("producer says: tensor needs grad")


def test_8_array_interface_errors_propagate(fake):
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        with pytest.raises(RuntimeError, match="producer says"):
            plan.setpts(_Raising())


def test_8_two_d_n_modes_and_isign_none():
    with pytest.raises(warpfft.InvalidArgumentError, match="n_modes"):
        warpfft.plan_params(1, [[4, 4]])
    with pytest.raises(warpfft.InvalidArgumentError, match="n_modes"):
        warpfft.Plan(1, np.zeros((2, 2), int))
    p = warpfft.plan_params(2, (8, 8))  # isign has no role here; Plan's default is per type
    assert p["type"] == 2


def test_8_isign_none_defaults_per_type(fake):
    assert warpfft.Plan(1, 8, isign=None).isign == 1
    assert warpfft.Plan(2, 8, isign=None).isign == -1
    x, = _pts(1)
    warpfft.nufft1d2(x, np.ones(8, np.complex128), isign=None)
    creates = [c for c in fake.calls if c[0] == "warpfft_plan_create"]
    assert creates[-1][4] == -1


def test_8_no_silent_casts(fake):
    x, = _pts(1, real=np.float64)
    with warpfft.Plan(1, (7,), dtype="complex64") as plan:
        with pytest.raises(TypeError, match="float64 was given, but float32"):
            plan.setpts(x)
        with pytest.raises(TypeError, match="complex64 was given, but float32"):
            plan.setpts(x.astype(np.complex64))  # complex coordinates
        plan.setpts(x.astype(np.float32))
        with pytest.raises(TypeError, match="complex128 was given, but complex64"):
            plan.execute(np.ones(9, np.complex128))
    with pytest.raises(TypeError, match="float32 was given, but float64"):
        warpfft.nufft1d1(x.astype(np.float32), np.ones(9, np.complex128), (7,))
    with pytest.raises(TypeError, match="complex64 or complex128"):
        warpfft.nufft1d1(x, np.ones(9, np.float64), (7,))


# Per-call cost of the bookkeeping above (issue 17: Plan.execute had slowed from ~30 to 40-60 us
# per call): one driver round trip per execute, and no repeated pointer query for the same live
# array -- with every check still made.
def test_execute_bookkeeping_is_one_driver_cycle_per_call(fake):
    x, = _pts(1)
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        plan.setpts(FakeDeviceArray(fake, x))
        data = FakeDeviceArray(fake, np.ones(9, np.complex128))
        out = FakeDeviceArray(fake, np.zeros(7, np.complex128))
        plan.execute(data, out=out)
        fake.driver.calls.clear()
        for _ in range(5):
            plan.execute(data, out=out)
        kinds = [c[0] for c in fake.driver.calls]
        assert kinds == ["record"] * 5, kinds  # driver.cycle: record + query, one push
        assert len(plan._pending) == 1  # completed work's references dropped at once
        other = FakeDeviceArray(fake, np.ones(9, np.complex128))
        fake.driver.calls.clear()
        plan.execute(other, out=out)
        assert ("pointer_device", other.ptr) in fake.driver.calls  # a new array: asked again
        fake.driver.devices[other.ptr] = 1
        third = FakeDeviceArray(fake, np.ones(9, np.complex128))
        fake.driver.devices[third.ptr] = 1
        with pytest.raises(warpfft.InvalidArgumentError, match="device 1"):
            plan.execute(third, out=out)


def test_pending_references_bounded_while_the_gpu_is_behind(fake):
    x, = _pts(1)
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        plan.setpts(FakeDeviceArray(fake, x))
        fake.driver.complete = False
        out = FakeDeviceArray(fake, np.zeros(7, np.complex128))
        for _ in range(70):
            plan.execute(FakeDeviceArray(fake, np.ones(9, np.complex128)), out=out)
        assert len(plan._pending) <= 65
        assert any(c[0] == "synchronize" for c in fake.driver.calls)  # waited for the oldest
        fake.driver.complete = True
        plan.execute(FakeDeviceArray(fake, np.ones(9, np.complex128)), out=out)
        assert len(plan._pending) == 1


def _cuda_like(torch):
    """A torch.Tensor subclass that says it is on CUDA device 0: on the CPU, its host memory
    is the fake library's "device" memory, so Plan takes the torch device path (data_ptr)."""
    class CudaLike(torch.Tensor):
        is_cuda = property(lambda self: True)

        def get_device(self):
            return 0

    CudaLike.__module__ = "torch.cuda_like"  # classified as a torch tensor
    return CudaLike


def test_torch_device_path_one_stream_query_per_execute(fake, monkeypatch):
    """The torch CUDA path of Plan.execute on the CPU: a tensor subclass that says it is on
    CUDA device 0 (its host memory is the fake library's "device" memory). The made output's
    descriptor comes from the input's (device, torch's current stream): one stream query per
    call, and the values are the exact sums."""
    torch = pytest.importorskip("torch")
    from warpfft import _arrays
    CudaLike = _cuda_like(torch)
    queries = []
    monkeypatch.setattr(_arrays, "torch_stream", lambda device: queries.append(device) or 0)
    x, = _pts(1)
    c = np.arange(9) + 1j
    with warpfft.Plan(1, (7,), dtype="complex128") as plan:
        plan.setpts(FakeDeviceArray(fake, x))
        data = torch.tensor(c).as_subclass(CudaLike)
        queries.clear()
        f = plan.execute(data)
        assert queries == [0], queries  # the input's; the output reuses it
        k = np.arange(-3, 4)
        ref = np.exp(1j * np.outer(k, x)) @ c
        assert np.allclose(np.asarray(f), ref, rtol=1e-12, atol=1e-12)
        with pytest.raises(warpfft.InvalidArgumentError, match="device 1"):
            monkeypatch.setattr(CudaLike, "get_device", lambda self: 1)
            plan.execute(torch.tensor(c).as_subclass(CudaLike))


def test_torch_conjugate_and_negative_views(fake, monkeypatch):
    """A torch tensor with the lazy conjugate or negative bit keeps the unconjugated numbers in
    memory: as an input the library gets the values the view stands for; as an output it is
    refused (the library would write what the view then conjugates)."""
    torch = pytest.importorskip("torch")
    from warpfft import _arrays
    monkeypatch.setattr(_arrays, "torch_stream", lambda device: 0)
    x, = _pts(1)
    c = np.arange(9) + 1j * np.linspace(-1, 2, 9)
    k = np.arange(-3, 4)
    ref = np.exp(1j * np.outer(k, x)) @ c.conj()
    for kind in (lambda t: t, lambda t: t.as_subclass(_cuda_like(torch))):  # host, "device"
        with warpfft.Plan(1, (7,), dtype="complex128") as plan:
            neg = kind(torch.complex(torch.zeros(9, dtype=torch.float64),
                                     torch.tensor(-x))).conj().imag
            assert neg.is_neg()
            plan.setpts(neg)  # -(-x) = x
            data = kind(torch.tensor(c)).conj()
            assert data.is_conj()
            f = plan.execute(data)
            assert np.allclose(np.asarray(f), ref, rtol=1e-12, atol=1e-12)
            out = kind(torch.zeros(7, dtype=torch.complex128)).conj()
            with pytest.raises(warpfft.InvalidArgumentError, match="out.*conjugated or negated"):
                plan.execute(kind(torch.tensor(c)), out=out)
