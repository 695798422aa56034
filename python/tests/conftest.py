"""Test setup: import warpfft from the source tree (python/), with the library from
$WARPFFT_LIBRARY or, if unset, target/release or target/debug of this checkout.

Run from the repository root:
    WARPFFT_LIBRARY=target/release/libwarpfft.so python -m pytest python/tests -q -rs
"""

import gc
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYDIR)

# jax would otherwise take 75% of the GPU's memory at its first use, starving the cupy/torch
# tests that run after it in the same process.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

if not os.environ.get("WARPFFT_LIBRARY"):
    for profile in ("release", "debug"):
        candidate = os.path.join(REPO, "target", profile, "libwarpfft.so")
        if os.path.exists(candidate):
            os.environ["WARPFFT_LIBRARY"] = candidate
            break
elif not os.path.isabs(os.environ["WARPFFT_LIBRARY"]):
    # Subprocesses run in other directories: make the path absolute once, here.
    os.environ["WARPFFT_LIBRARY"] = os.path.abspath(os.environ["WARPFFT_LIBRARY"])


def pytest_configure(config):
    config.addinivalue_line("markers", "network: needs PyPI (skip: WARPFFT_SKIP_NETWORK_TESTS=1)")
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skips with 'no GPU: ...')")


def pytest_report_header(config):
    return f"warpfft library: {os.environ.get('WARPFFT_LIBRARY') or '(not found: tests skip)'}"


@pytest.fixture
def fake(monkeypatch):
    """The fake C library and CUDA driver of _fake.py in place of the real ones (the fake
    library, its driver as ``.driver``); the plan cache emptied afterwards. Imported here, not
    at the top: warpfft cannot be imported without a library (the tests then skip)."""
    from _fake import install
    from _support import warpfft

    f, drv = install(monkeypatch)
    f.driver = drv
    yield f
    warpfft.clear_plan_cache()
    gc.collect()


@pytest.fixture
def fake_c(monkeypatch):
    """warpfft.torch's ops over _fake.FakeLib, the fake C library (exact sums on host memory:
    CPU tensors' data pointers stand in for device pointers, so CPU tensors are accepted where
    the ops take CUDA tensors); only torch's CUDA stream and device queries are stood in. The
    fake library (its call log ``.calls``) is yielded; the plan cache emptied around the test."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    import _fake
    import warpfft.torch as wt
    from warpfft import _framework_native as native
    from warpfft.torch import _checks, _ops

    # plans an earlier (GPU) test cached belong to the real library: destroy them with it
    wt.clear_plan_cache()
    fake = _fake.FakeLib(native.lib)
    monkeypatch.setattr(native, "lib", fake)
    monkeypatch.setattr(_ops, "_stream_of", lambda device: 0)
    monkeypatch.setattr(_ops, "_device_of", lambda t: 0)
    monkeypatch.setattr(wt, "_check_device", lambda *a: None)
    monkeypatch.setattr(_checks, "FIRST_DEVICE", -1)  # CPU tensors too
    fake.calls.clear()
    yield fake
    wt.clear_plan_cache()
