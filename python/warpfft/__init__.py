"""warpfft: GPU non-uniform FFT (NUFFT) -- Python bindings (ctypes over libwarpfft.so).

    import numpy as np, warpfft
    x, y = np.random.uniform(-np.pi, np.pi, (2, 10000)).astype(np.float32)
    c = (np.random.randn(10000) + 1j * np.random.randn(10000)).astype(np.complex64)
    f = warpfft.nufft2d1(x, y, c, (64, 32), eps=1e-5)   # f.shape == (32, 64): (N2, N1)

Shape convention: numpy C order with the C ABI's memory layout (dimension 1 fastest), so a
mode array has shape (N1,), (N2, N1) or (N3, N2, N1) -- the reverse of ``n_modes`` -- and a
batch axis first when n_trans > 1: (n_trans, N3, N2, N1); strengths/values: ([n_trans,] M).

The library is found through $WARPFFT_LIBRARY (a path), else libwarpfft.so next to this file
(the wheel), else the system loader (libwarpfft.so.0). cuFFT is found by the C library at run
time (NVIDIA's pip wheels ``pip install warpfft[cuda13]``, $CUDA_PATH, /usr/local/cuda, ...).
"""

__version__ = "0.1.0"

from ._device import DeviceArray  # noqa: E402
from ._errors import (  # noqa: E402
    InvalidArgumentError,
    LibraryNotFoundError,
    NoCufftError,
    NoGpuError,
    OutOfMemoryError,
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
    runtime_info,
    version,
)
from ._lib import last_error, status_name  # noqa: E402
from ._plan import Plan  # noqa: E402
from ._simple import nufft1d1, nufft1d2, nufft2d1, nufft2d2, nufft3d1, nufft3d2  # noqa: E402

__all__ = [
    "Plan", "DeviceArray",
    "nufft1d1", "nufft2d1", "nufft3d1", "nufft1d2", "nufft2d2", "nufft3d2",
    "version", "library_path", "build_manifest", "embedded_modules", "init", "runtime_info",
    "cufft_probe", "plan_params", "direct_sample", "status_name", "last_error",
    "WarpfftError", "LibraryNotFoundError", "NoGpuError", "NoCufftError",
    "InvalidArgumentError", "OutOfMemoryError",
]
