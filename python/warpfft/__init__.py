"""warpfft: GPU non-uniform FFT (NUFFT) -- Python bindings (ctypes over libwarpfft.so), a
drop-in for the reference GPU NUFFT package's (cufinufft's) Python interface:

    import warpfft as cufinufft            # or: warpfft.install_as_cufinufft(); import cufinufft
    f = cufinufft.nufft2d1(x, y, c, (N1, N2), eps=1e-6)     # f.shape == (N1, N2), x <-> axis 0
    plan = cufinufft.Plan(1, (N1, N2), n_trans=1, eps=1e-6, dtype="complex64")
    plan.setpts(x, y); f = plan.execute(c)
    g = cufinufft.nufft2d3(x, y, c, s, t)     # type 3: M sources -> K targets, g.shape == (K,)

Shapes: modes ``(N1[, N2[, N3]])`` with x along axis 0, a batch axis first when
n_trans > 1; strengths/values ``([n_trans,] M)``. Arrays: numpy, cupy, torch, jax, numba and
anything with ``__cuda_array_interface__`` or ``__dlpack__`` (device arrays zero-copy).

The library is found through $WARPFFT_LIBRARY (a path), else libwarpfft.so next to this file
(the wheel), else the system loader (libwarpfft.so.0). cuFFT is found by the C library at run
time (NVIDIA's pip wheels ``pip install warpfft[cuda13]``, $CUDA_PATH, /usr/local/cuda, ...).
"""

__version__ = "0.1.0"

import sys as _sys  # noqa: E402

from ._cache import clear as clear_plan_cache  # noqa: E402
from ._cache import info as plan_cache_info  # noqa: E402
from ._cache import set_limits as set_plan_cache_limits  # noqa: E402
from ._compat import Plan  # noqa: E402
from ._device import DeviceArray  # noqa: E402
from ._errors import (  # noqa: E402
    InvalidArgumentError,
    LibraryNotFoundError,
    NoCufftError,
    NoGpuError,
    NoNvrtcError,
    OutOfMemoryError,
    UnsupportedError,
    WarpfftError,
)
from ._info import (  # noqa: E402
    build_manifest,
    cufft_probe,
    direct_sample,
    embedded_modules,
    init,
    library_path,
    plan_params,
    plan_params3,
    release_cached,
    runtime_info,
    version,
)
from ._lib import last_error, status_name  # noqa: E402
from ._options import describe as option_table  # noqa: E402
from ._toeplitz import Toeplitz, toeplitz_params  # noqa: E402
from ._simple import *  # noqa: E402,F401,F403  (the nine one-call functions: _simple.__all__)
from . import _simple  # noqa: E402

#: The reference package's version this module stands in for, in its format ("2.6.0").
CUFINUFFT_VERSION = "2.6.0"


def install_as_cufinufft():
    """Makes ``import cufinufft`` give warpfft, for code and packages written for the reference
    (cuFINUFFT's Python package): puts the package ``warpfft.cufinufft`` into
    ``sys.modules["cufinufft"]`` and its submodules ``_compat``, ``_plan``, ``_simple`` and
    ``_cufinufft`` into ``sys.modules["cufinufft.<name>"]``, so ``import cufinufft``,
    ``from cufinufft import Plan``, ``from cufinufft._compat import get_array_ptr`` and
    ``import cufinufft._plan`` all work (``cufinufft.Plan is warpfft.Plan``; ``__version__`` in
    the reference's format). Call it before those packages import cufinufft (e.g. in
    ``sitecustomize``); if the real cufinufft was imported already, it is replaced for later
    imports only. Idempotent. Returns the package. docs/dropin.md lists what it covers."""
    import importlib

    pkg = importlib.import_module(__name__ + ".cufinufft")
    for name in pkg.SUBMODULES:
        _sys.modules["cufinufft." + name] = getattr(pkg, name)
    _sys.modules["cufinufft"] = pkg
    pkg.warpfft = _sys.modules[__name__]
    return pkg


__all__ = [
    "Plan", "DeviceArray", "Toeplitz", "toeplitz_params", "install_as_cufinufft",
    "clear_plan_cache", "plan_cache_info", "set_plan_cache_limits",
    "version", "library_path", "build_manifest", "embedded_modules", "init", "runtime_info",
    "release_cached",
    "cufft_probe", "plan_params", "plan_params3", "direct_sample", "status_name", "last_error",
    "option_table", "WarpfftError", "LibraryNotFoundError", "NoGpuError", "NoCufftError", "NoNvrtcError",
    "InvalidArgumentError", "OutOfMemoryError", "UnsupportedError",
] + _simple.__all__
