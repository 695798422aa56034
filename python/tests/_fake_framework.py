"""A fake GPU array framework and a pytest plugin, so the reference's own test-suite
(cufinufft v2.5.1's python/cufinufft/tests, exported by python/tools/dropin_prep.sh) runs here,
without a GPU, against warpfft standing in for cufinufft over the fake C library (_fake.py):

    python -m pytest -p _fake_framework .dropin/ref_tests --framework fake

(python/tests on sys.path; test_reference_suite.py does this). ``FakeGpuArray`` is what cupy
is to those tests: a numpy view over "device" memory (host memory here, which the fake library
computes on) with ``__cuda_array_interface__`` (strides included: F-ordered arrays stay
F-ordered, as ``cupy.array`` keeps them), row indexing and slicing, ``copy(order="C")``,
``get()``, and a ``FakeGpuArray(shape, dtype=...)`` constructor (the reference's
``array_empty_like`` calls ``type(a)(shape, dtype=...)`` for such arrays).
"""

import ctypes

import numpy as np


class FakeGpuArray:
    def __init__(self, shape=None, dtype=np.float64, *, _view=None, _base=None):
        if _view is None:
            shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
            dtype = np.dtype(dtype)
            nbytes = int(np.prod(shape)) * dtype.itemsize
            self._buf = ctypes.create_string_buffer(max(1, nbytes))
            _view = np.frombuffer(self._buf, np.uint8, nbytes).view(dtype).reshape(shape)
        self._a = _view
        self._base = _base  # a view keeps its allocation alive

    @classmethod
    def from_host(cls, a):
        a = np.asarray(a)
        out = cls(a.shape, a.dtype)
        if a.flags.f_contiguous and not a.flags.c_contiguous:  # keep the order (cupy.array)
            out._a = np.lib.stride_tricks.as_strided(out._a, a.shape,
                                                     np.asfortranarray(a).strides)
        out._a[...] = a
        return out

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)

    @property
    def __cuda_array_interface__(self):
        c = self._a.flags.c_contiguous
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self._a.__array_interface__["data"][0], False),
                "strides": None if c else self.strides, "version": 3, "stream": None}

    def __getitem__(self, key):
        return FakeGpuArray(_view=self._a[key], _base=self._base or self)

    def __iter__(self):
        return (self[i] for i in range(self.shape[0]))

    def __len__(self):
        return self.shape[0]

    def reshape(self, *shape):
        return FakeGpuArray(_view=self._a.reshape(*shape), _base=self._base or self)

    def copy(self, order="C"):
        out = FakeGpuArray(self.shape, self.dtype)
        if order != "C":
            raise NotImplementedError(order)
        out._a[...] = self._a
        return out

    def get(self):
        return self._a.copy()


def to_gpu(a):
    return FakeGpuArray.from_host(a)


def to_cpu(a):
    return a.get()


# ---- pytest plugin ----

def pytest_configure(config):
    """warpfft over the fake library, installed as cufinufft, for the whole session."""
    import pytest
    from _fake import install

    import warpfft

    config._fake_framework_mp = mp = pytest.MonkeyPatch()
    install(mp)
    warpfft.install_as_cufinufft()


def pytest_unconfigure(config):
    mp = getattr(config, "_fake_framework_mp", None)
    if mp is not None:
        mp.undo()


def pytest_collection_modifyitems(session, config, items):
    """The reference's utils.transfer_funcs learns the "fake" framework (its conftest has
    imported utils by now)."""
    import sys

    utils = sys.modules.get("utils")
    if utils is None or getattr(utils.transfer_funcs, "_fake", False):
        return
    original = utils.transfer_funcs

    def transfer_funcs(name):
        if name == "fake":
            return to_gpu, to_cpu
        return original(name)

    transfer_funcs._fake = True
    utils.transfer_funcs = transfer_funcs
