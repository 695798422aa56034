"""warpfft.torch's ops check their arguments themselves (issue 31, items 5, 6 and 8): what
torch.ops.warpfft.nufft1/2/3 run -- through the dispatcher, on the wrappers' direct eager path,
and as fake implementations -- rejects bad shapes, dtypes and devices before any pointer reaches
the C library; points made under torch.inference_mode() are set on every call; the option memo
stays bounded. CPU torch is enough for all but the tests marked for a GPU (they skip visibly).

    WARPFFT_LIBRARY=target/release/libwarpfft.so python -m pytest python/tests/test_torch_checks.py
"""

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3, relerr
from _support import gpu_status

torch = pytest.importorskip("torch", reason="PyTorch is not installed: warpfft.torch tests "
                            "skipped")
# The tensors here are tiny: torch's intra-op threads only spin, and on 2 busy cores made the CPU
# gradchecks ~8x slower (110 s against 14 s).
torch.set_num_threads(1)

import warpfft.torch as wt  # noqa: E402
from warpfft import _lib as native  # noqa: E402
from warpfft.torch import _checks, _ops  # noqa: E402

OPTS = (wt.op_options(1, upsampfac=2.0),)  # the options record (hex), FFT mode order


def require_cuda(n=1):
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    if torch.cuda.device_count() < n:
        pytest.skip(f"no GPU: torch sees {torch.cuda.device_count()} CUDA device(s), this test "
                    f"needs {n}")


class _NoC:
    """Stands in for the C library: any use of it fails the test (the checks come first)."""

    def __getattr__(self, name):
        raise AssertionError(f"the C library was called ({name}) before the arguments were "
                             "checked")


@pytest.fixture
def no_c(monkeypatch):
    monkeypatch.setattr(native, "lib", _NoC())
    # a CUDA query on a machine without a GPU would raise RuntimeError: fail clearly instead
    monkeypatch.setattr(_ops, "_device_of", lambda t: pytest.fail("the op asked for a device"))


# Calls of the three ops on tensors made by `mk(shape, dtype)`: (label, call, exception, match).
# The well-formed ones (last of each op) raise only for their device.
def _calls(op1, op2, op3):
    f32, f64, c64, c128 = torch.float32, torch.float64, torch.complex64, torch.complex128
    return [
        ("values shorter than the points", lambda mk: op1(mk((2, 20), f32), mk((3, 5), c64),
                                                          [8, 8]), ValueError, "values have shape"),
        ("f32 points, c128 values", lambda mk: op1(mk((2, 20), f32), mk((3, 20), c128), [8, 8]),
         TypeError, "points have dtype"),
        ("f64 points, c64 values", lambda mk: op1(mk((2, 20), f64), mk((3, 20), c64), [8, 8]),
         TypeError, "points must be torch.float32"),
        ("real values", lambda mk: op1(mk((2, 20), f32), mk((3, 20), f32), [8, 8]), TypeError,
         "complex64 or complex128"),
        ("points (M,)", lambda mk: op1(mk((20,), f32), mk((3, 20), c64), [8]), ValueError,
         "points must have shape"),
        ("points (4, M)", lambda mk: op1(mk((4, 20), f32), mk((3, 20), c64), [8] * 4),
         ValueError, "points must have shape"),
        ("values (M,)", lambda mk: op1(mk((2, 20), f32), mk((20,), c64), [8, 8]), ValueError,
         "values have shape"),
        ("n_modes of 1D for 2D points", lambda mk: op1(mk((2, 20), f32), mk((3, 20), c64), [8]),
         ValueError, "n_modes"),
        ("a zero mode", lambda mk: op1(mk((2, 20), f32), mk((3, 20), c64), [8, 0]), ValueError,
         "n_modes"),
        ("type 1 well formed", lambda mk: op1(mk((2, 20), f32), mk((3, 20), c64), [8, 8]), None,
         None),
        ("type 2: 1 mode axis for 2D points", lambda mk: op2(mk((2, 20), f32), mk((3, 8), c64)),
         ValueError, "mode axes"),
        ("type 2: 3 mode axes for 2D points",
         lambda mk: op2(mk((2, 20), f32), mk((3, 8, 8, 8), c64)), ValueError, "mode axes"),
        ("type 2: f64 points, c64 targets",
         lambda mk: op2(mk((2, 20), f64), mk((3, 8, 8), c64)), TypeError, "points have dtype"),
        ("type 2 well formed", lambda mk: op2(mk((2, 20), f32), mk((3, 8, 8), c64)), None, None),
        ("type 3: values shorter", lambda mk: op3(mk((2, 20), f32), mk((3, 19), c64),
                                                  mk((2, 7), f32)), ValueError, "values have"),
        ("type 3: f64 targets, f32 points", lambda mk: op3(mk((2, 20), f32), mk((3, 20), c64),
                                                           mk((2, 7), f64)), TypeError,
         "targets have dtype"),
        ("type 3: targets (1, K) for 2D points",
         lambda mk: op3(mk((2, 20), f32), mk((3, 20), c64), mk((1, 7), f32)), ValueError,
         "targets must have shape"),
        ("type 3: c128 values, f32 points",
         lambda mk: op3(mk((2, 20), f32), mk((3, 20), c128), mk((2, 7), f32)), TypeError,
         "points have dtype"),
        ("type 3 well formed", lambda mk: op3(mk((2, 20), f32), mk((3, 20), c64),
                                              mk((2, 7), f32)), None, None),
    ]


def _dispatched():
    """The ops through torch.ops.warpfft (the dispatcher)."""
    ops = torch.ops.warpfft
    return (lambda p, v, n: ops.nufft1(p, v, n, -1, 1e-6, *OPTS),
            lambda p, t: ops.nufft2(p, t, -1, 1e-6, *OPTS),
            lambda p, v, t: ops.nufft3(p, v, t, -1, 1e-6, *OPTS))


def _kernels():
    """The kernels called as the wrappers' direct eager path calls them."""
    return (lambda p, v, n: _ops._nufft1_impl(p, v, n, -1, 1e-6, *OPTS),
            lambda p, t: _ops._nufft2_impl(p, t, -1, 1e-6, *OPTS),
            lambda p, v, t: _ops._nufft3_impl(p, v, t, -1, 1e-6, *OPTS))


CASES = _calls(*_dispatched())
IDS = [c[0] for c in CASES]


def _cpu(shape, dtype):
    return torch.zeros(shape, dtype=dtype)


# ---- item 5: bad input raises before any C call ----------------------------------------------


@pytest.mark.parametrize("path", ["dispatcher", "direct"])
@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_bad_input_raises_before_the_c_library_on_cpu_tensors(no_c, path, index):
    """CPU tensors, the real checks: each bad shape or dtype raises its own error, and a well
    formed call raises for the device (CPU tensors never reach the C library, whose kernels
    would read host pointers as device memory)."""
    ops = _dispatched() if path == "dispatcher" else _kernels()
    label, call, exc, match = _calls(*ops)[index]
    if exc is None:
        exc, match = ValueError, "runs on CUDA tensors; the tensors are on cpu"
    with pytest.raises(exc, match=match):
        call(_cpu)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_bad_input_raises_on_the_kernels_host_stand_in(fake_c, index):
    """With the fake C library, CPU tensors standing in for device ones (well-formed calls take
    the kernels' fast path and run): the same errors, and no C call for them."""
    label, call, exc, match = _calls(*_dispatched())[index]
    if exc is None:
        assert call(_cpu).dtype in (torch.complex64, torch.complex128)
        return
    with pytest.raises(exc, match=match):
        call(_cpu)
    assert fake_c.calls == []


@pytest.mark.parametrize("device", ["cuda", "meta"])
@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_bad_input_raises_in_the_fake_implementations(index, device):
    """Fake CUDA tensors (torch.compile's tracing, no GPU needed) and meta tensors: the fake
    implementations raise what the kernels raise, and give shapes for well-formed calls."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    label, call, exc, match = CASES[index]

    def mk(shape, dtype):
        return torch.empty(shape, dtype=dtype, device=device)

    with FakeTensorMode():
        if exc is None:
            assert call(mk).device.type == device
            return
        with pytest.raises(exc, match=match):
            call(mk)


def test_fake_implementations_check_devices():
    """Under FakeTensorMode the devices are known: tensors on two GPUs, or CPU and CUDA mixed,
    raise as the kernels do; fake CPU tensors raise as CPU tensors do."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    if torch.cuda.is_available() and torch.cuda.device_count() < 2:
        # with CUDA present, a fake tensor on cuda:1 initializes that device for real
        pytest.skip(f"torch sees {torch.cuda.device_count()} CUDA device(s): fake tensors on "
                    "cuda:1 need 2 (without CUDA, e.g. CPU CI, they need none)")
    nufft1, nufft2, nufft3 = _dispatched()
    with FakeTensorMode():
        def mk(shape, dtype, device):
            return torch.empty(shape, dtype=dtype, device=device)

        p0, p1 = mk((2, 9), torch.float32, "cuda:0"), mk((2, 9), torch.float32, "cuda:1")
        v0, v1 = mk((3, 9), torch.complex64, "cuda:0"), mk((3, 9), torch.complex64, "cuda:1")
        assert nufft1(p1, v1, [4, 4]).device == torch.device("cuda:1")
        with pytest.raises(ValueError, match="points are on cuda:1 but values on cuda:0"):
            nufft1(p1, v0, [4, 4])
        with pytest.raises(ValueError, match="points are on cuda:0 but targets on cuda:1"):
            nufft2(p0, mk((3, 4, 4), torch.complex64, "cuda:1"))
        with pytest.raises(ValueError, match="but targets on cuda:1"):
            nufft3(p0, v0, mk((2, 5), torch.float32, "cuda:1"))
        with pytest.raises(ValueError, match="points are on cpu but values on cuda:0"):
            nufft1(mk((2, 9), torch.float32, "cpu"), v0, [4, 4])
        with pytest.raises(ValueError, match="runs on CUDA tensors; the tensors are on cpu"):
            nufft1(mk((2, 9), torch.float32, "cpu"), mk((3, 9), torch.complex64, "cpu"), [4, 4])


def test_fast_path_accepts_only_what_the_full_check_accepts(monkeypatch):
    """The kernels' fast path (one test for well-formed tensors) against the full check over
    combinations of shapes and dtypes (CPU tensors standing in for device ones): it accepts
    nothing the full check rejects, and accepts the well-formed ones."""
    monkeypatch.setattr(_checks, "FIRST_DEVICE", -1)
    reals, cplx = (torch.float32, torch.float64), (torch.complex64, torch.complex128)
    shapes_p = [(20,), (1, 20), (2, 20), (3, 20), (4, 20), (2, 19), (0, 20)]
    accepted = 0
    for pt in reals:
        for ps in shapes_p:
            p = torch.zeros(ps, dtype=pt)
            for vt in cplx + reals:
                for vs in [(3, 20), (20,), (3, 19), (1, 3, 20), (3, 20, 1)]:
                    v = torch.zeros(vs, dtype=vt)
                    for n in ([8], [8, 8], [8, 8, 8], [8, 0], [], [8, 8, 8, 8]):
                        full = _outcome(_checks.nufft1, p, v, n, fake=True)
                        assert _outcome(_checks.nufft1, p, v, n) == full, (ps, pt, vs, vt, n)
                        accepted += full is None
                    for ts in [(3, 8), (3, 8, 8), (3, 8, 8, 8), (8, 8)]:
                        t = torch.zeros(ts, dtype=vt)
                        full = _outcome(_checks.nufft2, p, t, fake=True)
                        assert _outcome(_checks.nufft2, p, t) == full, (ps, pt, ts, vt)
                        accepted += full is None
    assert accepted > 10


def _outcome(check, *args, **kw):
    try:
        check(*args, **kw)
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    return None


def test_non_contiguous_inputs_give_their_values(fake_c):
    """The C library reads contiguous arrays: strided, transposed and expanded tensors are
    copied by the kernels, through the dispatcher and the direct path alike."""
    rng = np.random.default_rng(7)
    M, n_modes = 15, (6, 5)
    pn = rng.uniform(-3, 3, (2, M))
    p = torch.tensor(pn.T.copy()).T  # (2, M) with strides (1, 2)
    assert not p.is_contiguous()
    big = torch.tensor(rng.standard_normal((3, 2 * M)) + 1j * rng.standard_normal((3, 2 * M)))
    v = big[:, ::2]
    fk = torch.tensor(rng.standard_normal((1, 5, 6)) + 0j).transpose(1, 2).expand(2, 6, 5)
    assert not v.is_contiguous() and not fk.is_contiguous()
    tn = rng.uniform(-4, 4, (7, 2))
    t = torch.tensor(tn).T
    for nufft1, nufft2, nufft3 in (_dispatched(), _kernels()):
        f = nufft1(p, v, list(n_modes))
        assert relerr(f.numpy(), direct1(v.numpy(), list(pn), n_modes, -1, 1)) < 1e-12
        c = nufft2(p, fk)
        assert relerr(c.numpy(), direct2(fk.numpy(), list(pn), -1, 1)) < 1e-12
        g = nufft3(p, v, t)
        assert relerr(g.numpy(), direct3(v.numpy(), list(pn), list(tn.T), -1)) < 1e-12


# ---- item 6: points made under torch.inference_mode() ----------------------------------------


def test_inference_mode_points_are_set_on_every_call(fake_c):
    """Inference tensors have no version counter, so an unchanged tensor cannot be told from
    one changed in place: their points are set on every call (never reused), in and out of
    inference mode, and an in-place change between calls is seen."""
    rng = np.random.default_rng(8)
    pn = rng.uniform(-3, 3, (2, 12))
    vn = rng.standard_normal((2, 12)) + 1j * rng.standard_normal((2, 12))
    with torch.inference_mode():
        p, v = torch.tensor(pn), torch.tensor(vn)
        assert p.is_inference()
        for _ in range(2):
            f = wt.finufft_type1(p, v, (6, 5), eps=1e-10)
            assert relerr(f.numpy(), direct1(vn, list(pn), (6, 5), -1, 1)) < 1e-12
        p.mul_(0.5)  # an inference tensor changed in place: nothing records it
        f = wt.finufft_type1(p, v, (6, 5), eps=1e-10)
        assert relerr(f.numpy(), direct1(vn, list(pn * 0.5), (6, 5), -1, 1)) < 1e-12
        c = torch.ops.warpfft.nufft2(p, f, -1, 1e-10, *OPTS)  # through the dispatcher
        assert relerr(c.numpy(), direct2(f.numpy(), list(pn * 0.5), -1, 1)) < 1e-12
    f = wt.finufft_type1(p, v, (6, 5), eps=1e-10)  # inference tensors outside the mode
    assert relerr(f.numpy(), direct1(vn, list(pn * 0.5), (6, 5), -1, 1)) < 1e-12
    names = fake_c.names()
    assert names.count("warpfft_setpts") == 5 and names.count("warpfft_execute") == 5, names


def test_normal_points_in_inference_mode_are_still_reused(fake_c):
    """A normal tensor keeps its version counter in inference mode: it is reused as before."""
    rng = np.random.default_rng(9)
    p = torch.tensor(rng.uniform(-3, 3, (1, 10)))
    v = torch.tensor(rng.standard_normal(10) + 0j)
    with torch.inference_mode():
        for _ in range(3):
            wt.finufft_type1(p, v, 8, eps=1e-10)
    assert fake_c.names().count("warpfft_setpts") == 1


# ---- item 8: the memos stay bounded ----------------------------------------------------------


def _memo_sizes(module):
    """Sizes of the containers and lru caches among a module's globals."""
    sizes = {}
    for name, obj in vars(module).items():
        if name.startswith("__"):
            continue
        if isinstance(obj, (dict, set, list)):
            sizes[name] = len(obj)
        elif callable(getattr(obj, "cache_info", None)):
            sizes[name] = obj.cache_info().currsize
    return sizes


def test_option_memo_is_bounded(fake_c):
    """Op calls with ever new options (here max_subprob) leave warpfft.torch's memos bounded:
    the plan options were memoised in a dict that grew by one entry per distinct option set."""
    p = torch.zeros((1, 4), dtype=torch.float64)
    v = torch.zeros((1, 4), dtype=torch.complex128)
    for i in range(300):
        torch.ops.warpfft.nufft1(p, v, [8], -1, 1e-6,
                                 wt.op_options(1, upsampfac=2.0, gpu_maxsubprobsize=i + 1))
    for i in range(3000):
        _ops.op_record(wt.op_options(1, gpu_maxsubprobsize=i + 1), 1)
    for module in (_ops, wt):
        sizes = _memo_sizes(module)
        assert max(sizes.values()) <= 256, (module.__name__, sizes)


# ---- on a GPU --------------------------------------------------------------------------------


def test_cuda_bad_input_raises_and_the_context_survives():
    """Real CUDA tensors: bad shapes and dtypes, and a points or values tensor left on the CPU,
    raise before the C library is called; the CUDA context still works afterwards (host
    pointers in a kernel would have broken it for the process)."""
    require_cuda()
    for label, call, exc, match in CASES:
        if exc is not None:
            with pytest.raises(exc, match=match):
                call(lambda shape, dtype: torch.zeros(shape, dtype=dtype, device="cuda"))
    nufft1, nufft2, nufft3 = _dispatched()
    rng = np.random.default_rng(10)
    pn = rng.uniform(-3, 3, (2, 30))
    vn = rng.standard_normal((2, 30)) + 1j * rng.standard_normal((2, 30))
    p, v = torch.tensor(pn, device="cuda"), torch.tensor(vn, device="cuda")
    with pytest.raises(ValueError, match="points are on cpu but values on cuda"):
        nufft1(p.cpu(), v, [6, 5])
    with pytest.raises(ValueError, match="points are on cuda:0 but values on cpu"):
        nufft1(p, v.cpu(), [6, 5])
    with pytest.raises(ValueError, match="points are on cpu but targets on cuda"):
        nufft2(p.cpu(), torch.zeros((2, 6, 5), dtype=torch.complex128, device="cuda"))
    with pytest.raises(ValueError, match="but targets on cpu"):
        nufft3(p, v, torch.zeros((2, 4), dtype=torch.float64))
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        _ops._nufft1_impl(p.cpu(), v.cpu(), [6, 5], -1, 1e-6, *OPTS)
    f = nufft1(p, v, [6, 5])
    torch.cuda.synchronize()
    assert relerr(f.cpu().numpy(), direct1(vn, list(pn), (6, 5), -1, 1)) < 1e-5


def test_points_on_another_gpu_raise():
    require_cuda(2)
    nufft1 = _dispatched()[0]
    p = torch.zeros((2, 9), device="cuda:1")
    v = torch.zeros((3, 9), dtype=torch.complex64, device="cuda:0")
    with pytest.raises(ValueError, match="points are on cuda:1 but values on cuda:0"):
        nufft1(p, v, [4, 4])


def test_cuda_inference_mode_points_twice():
    require_cuda()
    rng = np.random.default_rng(11)
    pn = rng.uniform(-3, 3, (2, 40))
    vn = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    with torch.inference_mode():
        p, v = torch.tensor(pn, device="cuda"), torch.tensor(vn, device="cuda")
        for scale in (1.0, 1.0, 0.5):
            if scale != 1.0:
                p.mul_(scale)
            f = wt.finufft_type1(p, v, (8, 7), eps=1e-10)
            ref = direct1(vn, list(p.cpu().numpy()), (8, 7), -1, 1)
            assert relerr(f.cpu().numpy(), ref) < 1e-8
