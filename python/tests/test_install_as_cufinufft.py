"""warpfft.install_as_cufinufft(): a script written for the reference package runs unedited,
and the stand-in is a package with the reference's submodules (cufinufft._compat, _plan,
_simple, _cufinufft), as packages built on the reference import them."""

import ctypes
import os
import sys
import types

import pytest
from _support import LIBRARY, PYDIR, clean_env, gpu_status, run, warpfft

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts",
                      "uses_cufinufft.py")
REFERENCE_SUBMODULES = ("_compat", "_plan", "_simple", "_cufinufft")


@pytest.fixture
def clean_cufinufft(monkeypatch):
    """No cufinufft module (nor submodule) in sys.modules during the test; afterwards the
    test's are removed and the earlier ones restored (by monkeypatch)."""
    def ours():
        return [n for n in sys.modules if n == "cufinufft" or n.startswith("cufinufft.")]

    for name in ours():
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in ours():
        del sys.modules[name]


def test_script_using_import_cufinufft_runs():
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=PYDIR)
    r = run([sys.executable, SCRIPT], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    want = "ok" if gpu_status() is None else "no GPU"
    assert r.stdout.strip().splitlines()[-1] == want, r.stdout


def test_install_puts_the_reference_names_in_sys_modules(clean_cufinufft):
    mod = warpfft.install_as_cufinufft()
    import cufinufft

    assert cufinufft is mod is sys.modules["cufinufft"]
    assert cufinufft.Plan is warpfft.Plan and cufinufft.nufft2d1 is warpfft.nufft2d1
    assert sorted(cufinufft.__all__) == sorted(
        ["Plan"] + [f"nufft{d}d{t}" for d in (1, 2, 3) for t in (1, 2, 3)])
    assert cufinufft.__version__ == warpfft.CUFINUFFT_VERSION


def test_install_makes_a_package_with_the_reference_submodules(clean_cufinufft):
    """mri-nufft does `from cufinufft._compat import get_array_ptr`: a module (not a package)
    in sys.modules made that import fail, and mri-nufft called its cufinufft backend
    unavailable."""
    pkg = warpfft.install_as_cufinufft()
    import cufinufft
    import cufinufft._cufinufft
    import cufinufft._plan
    import cufinufft._simple
    from cufinufft import _compat
    from cufinufft._compat import array_can_contiguous, array_empty_like, get_array_ptr
    from cufinufft._cufinufft import NufftOpts, _default_opts
    from cufinufft._plan import Plan

    assert cufinufft is pkg is sys.modules["cufinufft"] is warpfft.cufinufft
    assert hasattr(cufinufft, "__path__")  # a package
    for name in REFERENCE_SUBMODULES:
        assert sys.modules["cufinufft." + name] is getattr(cufinufft, name)
    assert Plan is cufinufft._plan.Plan is warpfft.Plan
    assert get_array_ptr is _compat.get_array_ptr is warpfft._compat.get_array_ptr
    assert callable(array_can_contiguous) and callable(array_empty_like)
    assert cufinufft._simple.nufft3d3 is warpfft.nufft3d3
    assert callable(_default_opts) and issubclass(NufftOpts, ctypes.Structure)
    assert cufinufft.warpfft is warpfft and cufinufft.__warpfft_version__ == warpfft.__version__
    # idempotent
    assert warpfft.install_as_cufinufft() is pkg


def test_install_replaces_an_earlier_cufinufft_for_later_imports(clean_cufinufft):
    sys.modules["cufinufft"] = types.ModuleType("cufinufft")
    sys.modules["cufinufft._compat"] = types.ModuleType("cufinufft._compat")
    warpfft.install_as_cufinufft()
    from cufinufft._compat import get_array_ptr

    assert get_array_ptr is warpfft._compat.get_array_ptr
    assert sys.modules["cufinufft"] is warpfft.cufinufft


def test_import_warpfft_as_cufinufft_finds_the_compat_helpers():
    """`import warpfft as cufinufft` (no install): the reference's tests and users reach the
    helpers as cufinufft._compat.*, which is warpfft._compat."""
    import warpfft as cufinufft

    for name in ("get_array_ptr", "get_array_module", "get_array_size", "get_array_dtype",
                 "is_array_contiguous", "array_can_contiguous", "array_contiguous",
                 "array_empty_like"):
        assert callable(getattr(cufinufft._compat, name)), name
        assert getattr(cufinufft._compat, name) is getattr(warpfft.cufinufft._compat, name)


def test_the_package_exports_the_reference_names_only():
    import warpfft.cufinufft as pkg

    assert sorted(pkg.__all__) == sorted(
        ["Plan"] + [f"nufft{d}d{t}" for d in (1, 2, 3) for t in (1, 2, 3)])
    assert pkg.__version__ == warpfft.CUFINUFFT_VERSION
    assert not pkg.__version__.startswith("1.")  # pytorch-finufft refuses cufinufft 1.x
