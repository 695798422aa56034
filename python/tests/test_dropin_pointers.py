"""The reference's private per-plan calls on raw device pointers, as packages built on it use
them (on the fake library, no GPU):

* mri-nufft (1.5.x, its cufinufft backend) sets the points of each plan from the columns of
  one F-ordered (M, dim) device array, in the C library's order (last coordinate first):
  ``plan._setpts(plan._plan, M, *ptrs, 0, None, None, None)`` with
  ``ptrs = [get_array_ptr(s[:, -1]), get_array_ptr(s[:, -2]), ...]``, after setting
  ``plan._nk = 0``, ``plan._references`` and ``plan._nj``; then ``plan.execute(data, out)``;
* ``cufinufft._cufinufft``: ``_make_plan[f]``, ``_set_pts[f]``, ``_exec_plan[f]``,
  ``_destroy_plan[f]`` on a handle, with a ``NufftOpts``.
"""

import ctypes

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import exact, warpfft

from warpfft import Plan
from warpfft._compat import get_array_ptr
from warpfft.cufinufft import _cufinufft

SHAPES = {2: (6, 5), 3: (4, 5, 3)}


class FOrderSamples:
    """An F-ordered (M, dim) float32 "device" array (as mri-nufft's cupy samples): column j
    is contiguous; ``s[:, j]`` is a view with its own __cuda_array_interface__."""

    def __init__(self, fake, host):
        self.M, self.dim = host.shape
        self._mem = FakeDeviceArray(fake, np.ascontiguousarray(host.T))  # (dim, M) = F bytes
        self.dtype = host.dtype

    def __getitem__(self, key):
        rows, j = key
        assert rows == slice(None)
        return _Col(self._mem.ptr + (j % self.dim) * self.M * self.dtype.itemsize,
                    (self.M,), self.dtype)


class _Col:
    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, shape, dtype

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": None}


def _problem(dim, M=11, n_trans=1, seed=0):
    rng = np.random.default_rng(seed)
    samples = rng.uniform(-np.pi, np.pi, (M, dim)).astype(np.float32)
    b = (n_trans,) if n_trans > 1 else ()
    c = (rng.standard_normal(b + (M,)) + 1j * rng.standard_normal(b + (M,))).astype(
        np.complex64)
    f = (rng.standard_normal(b + SHAPES[dim]) + 1j * rng.standard_normal(b + SHAPES[dim]))
    return samples, c, f.astype(np.complex64)


def _close(a, b, tol=1e-5):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) <= tol * np.linalg.norm(np.ravel(b))


def _mri_nufft_set_pts(plan, samples):
    """What mri-nufft 1.5.1's RawCufinufftPlan._set_pts does, verbatim in behaviour."""
    M, d = samples.M, samples.dim
    ptr = [None, None, None]
    ptr[0] = get_array_ptr(samples[:, -1])
    ptr[1] = get_array_ptr(samples[:, -2])
    if d == 3:
        ptr[2] = get_array_ptr(samples[:, -3])
    plan._references = ptr
    plan._nj = M
    return plan._setpts(plan._plan, M, *ptr, 0, None, None, None)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("n_trans", [1, 2])
def test_mri_nufft_raw_plan_pattern(fake, dim, n_trans):
    samples_h, c, f = _problem(dim, n_trans=n_trans)
    samples = FOrderSamples(fake, samples_h)
    pts = [samples_h[:, i] for i in range(dim)]  # Python order: x = column 0
    plans = [None] + [Plan(t, SHAPES[dim], n_trans, 1e-6, dtype="complex64") for t in (1, 2)]
    for t in (1, 2):
        plans[t]._nk = 0  # mri-nufft: "no type3 points"
        assert _mri_nufft_set_pts(plans[t], samples) == 0
        assert plans[t].M == samples.M and plans[t]._nj == samples.M
        call = [x for x in fake.calls if x[0] == "warpfft_setpts"][-1]
        want = [samples[:, -1 - i].ptr for i in range(dim)] + [None] * (3 - dim)
        assert list(call[4:7]) == want  # C order: the last coordinate first, unchanged
    b = (n_trans,)  # mri-nufft batches with a leading axis even for n_trans = 1
    grid = FakeDeviceArray(fake, np.zeros(b + SHAPES[dim], np.complex64))
    coeff = FakeDeviceArray(fake, c.reshape(b + c.shape[-1:]))
    assert plans[1].execute(coeff, grid) is grid  # type 1: RawCufinufftPlan.type1
    assert _close(grid.get(), exact(1, pts, c.reshape(b + c.shape[-1:]), SHAPES[dim], 1))
    img = FakeDeviceArray(fake, f.reshape(b + SHAPES[dim]))
    ksp = FakeDeviceArray(fake, np.zeros(b + (samples.M,), np.complex64))
    plans[2].execute(img, ksp)  # type 2: RawCufinufftPlan.type2
    assert _close(ksp.get(), exact(2, pts, f.reshape(b + SHAPES[dim]), SHAPES[dim], -1))
    for p in plans[1:]:
        p.close()


def test_plan_handle_and_destroy(fake):
    plan = Plan(1, (6, 5), dtype="complex64")
    h = plan._plan
    assert isinstance(h, ctypes.c_void_p) and h.value == plan._c._handle
    assert plan._destroy_plan(h) == 0
    assert plan._plan is None and "warpfft_plan_destroy" in fake.names()
    assert plan._destroy_plan(None) == 0  # closed: nothing to do
    assert plan._destroy_plan(h) == 0


def test_exec_plan_on_pointers(fake):
    samples_h, c, f = _problem(2)
    pts = [samples_h[:, 0], samples_h[:, 1]]
    dev = [FakeDeviceArray(fake, p) for p in pts]
    p1 = Plan(1, SHAPES[2], dtype="complex64")
    p1._setpts(p1._plan, 11, dev[1].ptr, dev[0].ptr)  # C order: y, x
    cd = FakeDeviceArray(fake, c)
    fk = FakeDeviceArray(fake, np.zeros(SHAPES[2], np.complex64))
    assert p1._exec_plan(p1._plan, cd.ptr, ctypes.c_void_p(fk.ptr)) == 0
    assert _close(fk.get(), exact(1, pts, c, SHAPES[2], 1))
    p2 = Plan(2, SHAPES[2], dtype="complex64")
    p2._setpts(p2._plan, np.int64(11), ctypes.c_void_p(dev[1].ptr), np.uint64(dev[0].ptr))
    fd = FakeDeviceArray(fake, f)
    out = FakeDeviceArray(fake, np.zeros(11, np.complex64))
    assert p2._exec_plan(p2._plan, out.ptr, fd.ptr) == 0  # type 2: c is the output
    assert _close(out.get(), exact(2, pts, f, SHAPES[2], -1))


def test_type3_setpts_on_pointers(fake):
    rng = np.random.default_rng(3)
    x = [rng.uniform(-2, 2, 9) for _ in range(2)]
    s = [rng.uniform(-5, 5, 4) for _ in range(2)]
    c = rng.standard_normal(9) + 1j * rng.standard_normal(9)
    xd = [FakeDeviceArray(fake, v) for v in x]
    sd = [FakeDeviceArray(fake, v) for v in s]
    plan = Plan(3, 2, dtype="complex128")
    assert plan._setpts(plan._plan, 9, xd[1].ptr, xd[0].ptr, None, 4, sd[1].ptr, sd[0].ptr,
                        None) == 0
    assert (plan.M, plan.K, plan._nj, plan._nk) == (9, 4, 9, 4)
    got = plan.execute(c)
    f = np.exp(1j * (np.outer(s[0], x[0]) + np.outer(s[1], x[1]))) @ c
    assert _close(got, f, 1e-9)


def test_pointer_calls_refuse_what_would_fault_on_the_gpu(fake):
    samples_h, c, _ = _problem(2)
    dev = [FakeDeviceArray(fake, samples_h[:, i]) for i in range(2)]
    plan, other = Plan(1, SHAPES[2], dtype="complex64"), Plan(1, SHAPES[2], dtype="complex64")
    with pytest.raises(TypeError, match="not this plan's handle"):
        plan._setpts(other._plan, 11, dev[1].ptr, dev[0].ptr)
    with pytest.raises(TypeError, match="NULL"):
        plan._setpts(plan._plan, 11, dev[1].ptr, None)
    with pytest.raises(TypeError, match="device pointer is an int"):
        plan._setpts(plan._plan, 11, dev[1], dev[0])  # arrays, not pointers
    fake.driver.devices[dev[0].ptr] = None  # the driver does not know it: host memory
    with pytest.raises(TypeError, match="not device memory"):
        plan._setpts(plan._plan, 11, dev[1].ptr, dev[0].ptr)
    fake.driver.devices[dev[0].ptr] = 1
    with pytest.raises(TypeError, match="on device 1, the plan on device 0"):
        plan._setpts(plan._plan, 11, dev[1].ptr, dev[0].ptr)
    assert "warpfft_setpts" not in fake.names()
    del fake.driver.devices[dev[0].ptr]
    with pytest.raises(warpfft.WarpfftError, match="before a successful setpts"):
        plan._exec_plan(plan._plan, 1, 2)
    plan._setpts(plan._plan, 11, dev[1].ptr, dev[0].ptr)
    with pytest.raises(TypeError, match="NULL"):
        plan._exec_plan(plan._plan, None, dev[0].ptr)
    plan.close()
    with pytest.raises(TypeError, match="closed"):
        plan._setpts(ctypes.c_void_p(1), 11, dev[1].ptr, dev[0].ptr)


# ---- cufinufft._cufinufft: the reference's calls on a plan handle ----

def test_low_level_calls_on_a_handle(fake):
    samples_h, c, f = _problem(2)
    pts = [samples_h[:, 0], samples_h[:, 1]]
    dev = [FakeDeviceArray(fake, p) for p in pts]
    opts = _cufinufft.NufftOpts()
    _cufinufft._default_opts(opts)
    assert (opts.gpu_sort, opts.gpu_kerevalmeth, opts.upsampfac) == (1, 1, 0.0)
    opts.gpu_method = 1
    opts.modeord = 1
    handle = ctypes.c_void_p()
    n_modes = (ctypes.c_int64 * 3)(SHAPES[2][1], SHAPES[2][0], 1)  # C order: x is the last
    assert _cufinufft._make_planf(1, 2, n_modes, 1, 1, 1e-6, ctypes.byref(handle),
                                  ctypes.byref(opts)) == 0
    assert handle.value
    assert fake.last_opts["method"] == 1 and fake.last_opts["modeord"] == 1
    assert _cufinufft._set_ptsf(handle, 11, dev[1].ptr, dev[0].ptr, None, 0, None, None,
                                None) == 0
    cd = FakeDeviceArray(fake, c)
    fk = FakeDeviceArray(fake, np.zeros(SHAPES[2], np.complex64))
    assert _cufinufft._exec_planf(handle, cd.ptr, fk.ptr) == 0
    assert _close(fk.get(), exact(1, pts, c, SHAPES[2], 1, modeord=1))
    assert _cufinufft._destroy_planf(handle) == 0
    assert "warpfft_plan_destroy" in fake.names()
    with pytest.raises(TypeError, match="not the handle of a live warpfft plan"):
        _cufinufft._exec_planf(handle, cd.ptr, fk.ptr)
    assert _cufinufft._destroy_plan(ctypes.c_void_p()) == 0  # NULL: nothing to do


def test_options_struct_upsampfac_reaches_the_library(fake):
    """The reference's NufftOpts: its default upsampfac 0 ("auto") reaches the C library as 0
    (the plan chooses sigma), any value of [1.25, 3] as it is; one outside fails the plan as
    in the reference (a RuntimeError), with the library's message."""
    opts = _cufinufft.NufftOpts()
    _cufinufft._default_opts(opts)
    n_modes = (ctypes.c_int64 * 3)(16, 12, 1)
    for ups in (0.0, 1.5, 3.0):
        opts.upsampfac = ups
        h = ctypes.c_void_p()
        assert _cufinufft._make_planf(1, 2, n_modes, 1, 1, 1e-5, ctypes.byref(h),
                                      ctypes.byref(opts)) == 0
        assert fake.last_opts["upsampfac"] == ups
        info = warpfft._pointer_api.plan_of(h).info
        assert info["kernel"] == "sinh" and info["predicted_ms"] > 0
        assert info["upsampfac"] == ups if ups else 1.25 <= info["upsampfac"] <= 3
        _cufinufft._destroy_planf(h)
    opts.upsampfac = 3.5
    with pytest.raises(RuntimeError, match=r"upsampfac = 3\.5"):
        _cufinufft._make_planf(1, 2, n_modes, 1, 1, 1e-5, ctypes.byref(ctypes.c_void_p()),
                               ctypes.byref(opts))


def test_low_level_calls_on_a_plans_handle(fake):
    """A Plan's own _plan works with the module-level calls too (both are "the plan")."""
    samples_h, c, _ = _problem(2)
    dev = [FakeDeviceArray(fake, samples_h[:, i]) for i in range(2)]
    plan = Plan(1, SHAPES[2], dtype="complex128")
    assert _cufinufft._set_pts(plan._plan, 11, dev[1].ptr, dev[0].ptr, None, 0, None, None,
                               None) == 0
    assert plan.M == 11
    assert _cufinufft._destroy_plan(plan._plan) == 0 and plan._plan is None


def test_make_plan_double_and_type3(fake):
    h = ctypes.c_void_p()
    assert _cufinufft._make_plan(3, 2, None, -1, 2, 1e-9, ctypes.byref(h), None) == 0
    plan = warpfft._pointer_api.plan_of(h)
    assert (plan.type, plan.dim, plan.n_trans, plan.isign) == (3, 2, 2, -1)
    assert plan.dtype == np.complex128
    _cufinufft._destroy_plan(h)
    with pytest.raises(TypeError, match="byref"):
        _cufinufft._make_plan(1, 1, (8, 1, 1), 1, 1, 1e-6, 0, None)
