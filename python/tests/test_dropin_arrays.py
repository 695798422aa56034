"""The drop-in's array behaviour, as the reference's (cufinufft v2.5.1) tests and the packages
built on it expect, checked on the fake library (no GPU):

* a non-C-contiguous input is copied to a C-contiguous array of its own library with a
  UserWarning containing "requirement: C. Copying" (test_type2 with contiguous=False); an
  output, or an input no copy can be made of (pycuda), raises TypeError containing "following
  requirement: C" (test_array_ordering);
* the reference's ``cufinufft._compat`` helpers (array_empty_like, array_can_contiguous,
  get_array_ptr, ...) on numpy arrays, warpfft.DeviceArray and generic device arrays.
"""

import warnings

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import exact, warpfft

from warpfft import _compat as helpers  # the reference's cufinufft._compat names live here

SHAPE = (6, 5)


def _problem(M=13, seed=0):
    rng = np.random.default_rng(seed)
    pts = [rng.uniform(-np.pi, np.pi, M) for _ in range(2)]
    f = rng.standard_normal(SHAPE) + 1j * rng.standard_normal(SHAPE)
    return pts, f


def _close(a, b, tol=1e-9):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) <= tol * np.linalg.norm(np.ravel(b))


class StridedDeviceArray:
    """A strided "device" array over fake device memory (a generic __cuda_array_interface__
    producer, as cupy's F-ordered arrays are) with ``copy(order="C")``, as cupy has."""

    def __init__(self, fake, host):
        self._fake = fake
        self.shape, self.dtype = host.shape, host.dtype
        base = np.asfortranarray(host)
        self._mem = FakeDeviceArray(fake, base.T)  # base's bytes (F order), as device memory
        self.ptr = self._mem.ptr
        self.strides = base.strides
        self.copies = 0

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": self.strides, "version": 3, "stream": None}

    def get(self):
        n = int(np.prod(self.shape))
        flat = self._fake.view(self.ptr, self.dtype, n)
        return np.lib.stride_tricks.as_strided(flat, self.shape, self.strides).copy()

    def copy(self, order="K"):
        assert order == "C"
        self.copies += 1
        return FakeDeviceArray(self._fake, self.get())


class PycudaLike(StridedDeviceArray):
    """Stands for pycuda's GPUArray: the reference makes no C-contiguous copy of those."""


PycudaLike.__module__ = "pycuda.gpuarray"


class NoCopy:
    """A strided device array with no way to copy it."""

    def __init__(self, inner):
        self._inner = inner

    @property
    def __cuda_array_interface__(self):
        return self._inner.__cuda_array_interface__


def test_host_input_not_c_contiguous_is_copied_with_the_references_warning(fake):
    pts, f = _problem()
    with warpfft.Plan(2, SHAPE, dtype="complex128") as plan:
        plan.setpts(*pts)
        with pytest.warns(UserWarning, match="requirement: C. Copying") as rec:
            c = plan.execute(np.asfortranarray(f))
        assert "Argument `data` does not satisfy the following requirement: C" in \
            str(rec[0].message)
        assert rec[0].filename == __file__  # points at the caller's line
    assert _close(c, exact(2, pts, f, SHAPE, -1))


def test_device_input_not_c_contiguous_is_copied_with_the_references_warning(fake):
    """test_type2(contiguous=False) of the reference: F-ordered modes on the device."""
    pts, f = _problem()
    dev = StridedDeviceArray(fake, f)
    assert not helpers.is_array_contiguous(dev) and helpers.array_can_contiguous(dev)
    with warpfft.Plan(2, SHAPE, dtype="complex128") as plan:
        plan.setpts(*[FakeDeviceArray(fake, p) for p in pts])
        with pytest.warns(UserWarning, match="requirement: C. Copying"):
            out = plan.execute(dev)
        assert dev.copies == 1
        assert _close(fake.view(out.ptr, np.complex128, out.size), exact(2, pts, f, SHAPE, -1))
        # the copy is what the C library read, not the strided original
        ex = [x for x in fake.calls if x[0] == "warpfft_execute"][-1]
        assert ex[4] != dev.ptr


def test_strided_points_are_copied_too(fake):
    pts, f = _problem()
    both = np.stack(pts, axis=1)  # (M, 2): each column strided, as mri-nufft's F-order input
    with warpfft.Plan(2, SHAPE, dtype="complex128") as plan:
        with pytest.warns(UserWarning, match="Argument `x` does not satisfy the following "
                                             "requirement: C. Copying"):
            plan.setpts(both[:, 0], np.ascontiguousarray(both[:, 1]))
        assert _close(plan.execute(f), exact(2, pts, f, SHAPE, -1))


@pytest.mark.parametrize("where", ["host", "device"])
def test_output_not_c_contiguous_raises_the_references_type_error(fake, where):
    """test_array_ordering of the reference: an F-ordered out= raises TypeError."""
    pts, f = _problem()
    c = (np.ones(13) * (1 + 1j))
    with warpfft.Plan(1, SHAPE, dtype="complex128") as plan:
        plan.setpts(*pts)
        out = np.empty(SHAPE, np.complex128, order="F")
        if where == "device":
            plan.setpts(*[FakeDeviceArray(fake, p) for p in pts])
            c, out = FakeDeviceArray(fake, c), StridedDeviceArray(fake, out)
        with pytest.raises(TypeError, match="following requirement: C") as e:
            plan.execute(c, out=out)
        assert isinstance(e.value, warpfft.InvalidArgumentError)
    assert "warpfft_execute" not in fake.names()


@pytest.mark.parametrize("cls", [PycudaLike, "nocopy"])
def test_device_input_that_cannot_be_copied_raises_the_references_type_error(fake, cls):
    """The reference refuses a non-contiguous pycuda array (array_can_contiguous is False):
    so does the stand-in, and array_can_contiguous says so."""
    pts, f = _problem()
    dev = NoCopy(StridedDeviceArray(fake, f)) if cls == "nocopy" else cls(fake, f)
    assert not helpers.array_can_contiguous(dev)
    with warpfft.Plan(2, SHAPE, dtype="complex128") as plan:
        plan.setpts(*[FakeDeviceArray(fake, p) for p in pts])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # refused, not copied with a warning
            with pytest.raises(TypeError, match="following requirement: C"):
                plan.execute(dev)


def test_contiguous_inputs_warn_nothing(fake):
    pts, f = _problem()
    with warpfft.Plan(2, SHAPE, dtype="complex128") as plan, warnings.catch_warnings():
        warnings.simplefilter("error")
        plan.setpts(*[FakeDeviceArray(fake, p) for p in pts])
        plan.execute(FakeDeviceArray(fake, f))
        # a strided view whose strides still describe C order (extent-1 axis) is contiguous
        plan.execute(f[None][:, :, :])


# ---- the reference's cufinufft._compat helpers ----

def test_get_array_ptr(fake):
    d = FakeDeviceArray(fake, np.arange(4.0))
    assert helpers.get_array_ptr(d) == d.ptr
    with pytest.raises(TypeError, match="Invalid GPU array implementation"):
        helpers.get_array_ptr(np.arange(4.0))  # host memory has no device pointer
    with pytest.raises(TypeError, match="Invalid GPU array implementation"):
        helpers.get_array_ptr([1, 2])

    class Grad:  # torch raises from __cuda_array_interface__ for tensors that need grad
        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires "
                               "grad")

        def data_ptr(self):
            return 1234

    assert helpers.get_array_ptr(Grad()) == 1234


def test_get_array_module_size_dtype_contiguity(fake):
    a = np.zeros((3, 4), np.complex64)
    d = FakeDeviceArray(fake, a)
    s = StridedDeviceArray(fake, a)
    assert helpers.get_array_module(a) == "generic"
    assert helpers.get_array_module(d) == "generic"
    assert helpers.get_array_module(PycudaLike(fake, a)) == "pycuda"
    assert helpers.get_array_size(a) == helpers.get_array_size(d) == 12
    assert helpers.get_array_size(s) == 12
    assert helpers.get_array_dtype(a) == helpers.get_array_dtype(d) == np.complex64
    assert helpers.is_array_contiguous(a) and helpers.is_array_contiguous(d)
    assert not helpers.is_array_contiguous(a.T) and not helpers.is_array_contiguous(s)
    assert helpers.array_can_contiguous(a) and helpers.array_can_contiguous(s)
    c = helpers.array_contiguous(a.T)
    assert c.flags.c_contiguous and np.array_equal(c, a.T)
    cs = helpers.array_contiguous(s)
    assert helpers.is_array_contiguous(cs) and np.array_equal(cs.get(), a)


def test_array_empty_like(fake):
    a = np.zeros(3, np.complex64)
    e = helpers.array_empty_like(a, (2, 5), dtype=np.complex128)
    assert isinstance(e, np.ndarray) and e.shape == (2, 5) and e.dtype == np.complex128
    e = helpers.array_empty_like(a, 7, dtype=np.complex64)  # an int shape, as test_type3
    assert e.shape == (7,)

    class Generic:  # the reference calls type(obj)(*args, **kwargs) for other types
        def __init__(self, shape=None, dtype=None):
            self.shape, self.dtype = shape, dtype

    g = helpers.array_empty_like(Generic(), (4,), dtype=np.complex64)
    assert isinstance(g, Generic) and g.shape == (4,) and g.dtype == np.complex64


def test_array_empty_like_device_array(fake):
    d = warpfft.DeviceArray((3,), np.complex64)  # fake memory (warpfft_malloc is faked)
    e = helpers.array_empty_like(d, (2, 3), dtype=np.complex128)
    assert isinstance(e, warpfft.DeviceArray) and e.shape == (2, 3)
    assert e.dtype == np.complex128 and e.device == d.device


def test_one_call_functions_copy_a_non_contiguous_input_once(fake):
    """nufft2d2 on F-ordered modes: one copy, one warning (the dtype and shape are read
    without converting the input first)."""
    pts, f = _problem()
    dev = StridedDeviceArray(fake, f)
    with pytest.warns(UserWarning, match="requirement: C. Copying") as rec:
        out = warpfft.nufft2d2(*[FakeDeviceArray(fake, p) for p in pts], dev)
    assert len([w for w in rec if "requirement: C" in str(w.message)]) == 1
    assert dev.copies == 1
    assert _close(fake.view(out.ptr, np.complex128, out.size), exact(2, pts, f, SHAPE, -1))
    with pytest.warns(UserWarning, match="requirement: C. Copying") as rec:
        c = warpfft.nufft2d2(*pts, np.asfortranarray(f))
    assert len([w for w in rec if "requirement: C" in str(w.message)]) == 1
    assert _close(c, exact(2, pts, f, SHAPE, -1))
