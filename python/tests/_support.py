"""Shared test helpers: import warpfft (skip the module visibly if no library was found),
GPU detection, the exact sums in the reference's shapes and a relative error, an ELF DT_NEEDED
reader, subprocess helpers."""

import functools
import os
import subprocess
import sys

import numpy as np
import pytest
from _nufft_ref import direct1, direct2, direct3

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYDIR)

LIBRARY = os.environ.get("WARPFFT_LIBRARY")
if not LIBRARY:
    pytest.skip("no libwarpfft.so: set WARPFFT_LIBRARY or run `cargo build` "
                "(looked in target/release and target/debug)", allow_module_level=True)

import warpfft  # noqa: E402  (fails loudly if WARPFFT_LIBRARY is set but unusable)


@functools.lru_cache(maxsize=None)
def gpu_status():
    """None if device 0 initialises, else the reason (the library's message)."""
    try:
        warpfft.init(0)
        return None
    except warpfft.WarpfftError as e:
        return str(e)


def require_gpu():
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")


def require_no_gpu():
    if gpu_status() is None:
        pytest.skip("a GPU is present: the no-device path cannot be exercised here")


def torch_cuda():
    """torch, or skip the test: torch not installed, or without CUDA."""
    torch = pytest.importorskip("torch", reason="torch not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


def exact(type_, pts, data, n_modes, isign, modeord=0):
    """The reference's sums in its own shapes, in float64 (_nufft_ref's): type 1 maps strengths
    ``([batch,] M)`` to modes ``([batch,] *n_modes)`` (axis 0 <-> x), type 2 the reverse."""
    if type_ == 1:
        return direct1(data, pts, n_modes, isign, modeord)
    data = np.asarray(data)
    assert data.shape[data.ndim - len(n_modes):] == tuple(n_modes), (data.shape, n_modes)
    return direct2(data, pts, isign, modeord)


def exact3(x, s, c, isign):
    """Type 3: f[..., k] = sum_j c[..., j] exp(isign i sum_d s_d[k] x_d[j]), in float64."""
    return direct3(c, x, s, isign)


def rel_err(a, b):
    a = np.asarray(a, np.complex128).ravel()
    b = np.asarray(b, np.complex128).ravel()
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def dt_needed(path):
    """The DT_NEEDED entries of an ELF64 little-endian shared object (python/tools/_elf.py)."""
    sys.path.insert(0, os.path.join(PYDIR, "tools"))
    try:
        from _elf import dt_needed as needed
    finally:
        sys.path.pop(0)
    return needed(path)


def clean_env(**extra):
    """os.environ without the variables that steer library/cuFFT discovery, plus `extra`."""
    env = dict(os.environ)
    for k in ("WARPFFT_LIBRARY", "WARPFFT_CUFFT_LIB", "WARPFFT_CUFFT_DEFAULT_PATHS", "CUDA_PATH",
              "CUDA_HOME", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH"):
        env.pop(k, None)
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


def run(cmd, env=None, cwd=None, timeout=600):
    """Runs a command, returning CompletedProcess (text); never raises on a non-zero exit."""
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_python(code, env, python=sys.executable, cwd=None):
    return run([python, "-c", code], env=env, cwd=cwd)
