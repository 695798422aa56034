"""A script written for the reference package (cufinufft), run unedited on warpfft after
warpfft.install_as_cufinufft(): the imports and calls of the reference's documentation.
Prints "ok" (or "no GPU" where no device can run it)."""
import sys

import numpy as np

import warpfft

warpfft.install_as_cufinufft()

import cufinufft  # noqa: E402
from cufinufft import Plan  # noqa: E402  (what MRI / PyTorch packages do)

assert cufinufft.Plan is Plan is warpfft.Plan
assert cufinufft.__version__.count(".") == 2, cufinufft.__version__
for name in ("nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3",
             "nufft3d1", "nufft3d2", "nufft3d3"):
    assert callable(getattr(cufinufft, name)), name

# The reference's getting-started example (with numpy, or cupy where installed).
try:
    import cupy as xp
except ImportError:
    xp = np
M, N = 1000, 200
x = 2 * np.pi * np.random.uniform(size=M)
c = np.random.standard_normal(size=M) + 1j * np.random.standard_normal(size=M)
try:
    f = cufinufft.nufft1d1(xp.asarray(x), xp.asarray(c), (N,))
except warpfft.NoGpuError:
    print("no GPU")
    sys.exit(0)
f = f.get() if hasattr(f, "get") and xp is not np else np.asarray(f)
k = np.arange(-N // 2, (N - 1) // 2 + 1)
exact = np.exp(1j * np.outer(k, x)) @ c
assert np.linalg.norm(f - exact) <= 1e-5 * np.linalg.norm(exact), "type 1 wrong"

# The reference's plan interface: Plan(nufft_type, n_modes, n_trans, eps, isign, dtype).
N1, N2 = 24, 16
y = 2 * np.pi * np.random.uniform(size=M)
fk = (np.random.standard_normal((2, N1, N2))
      + 1j * np.random.standard_normal((2, N1, N2))).astype(np.complex64)
plan = Plan(2, (N1, N2), 2, 1e-5, dtype="complex64")
plan.setpts(xp.asarray(x.astype(np.float32)), xp.asarray(y.astype(np.float32)))
cj = plan.execute(xp.asarray(fk))
cj = cj.get() if xp is not np else cj
assert cj.shape == (2, M)
k1 = np.arange(-N1 // 2, (N1 - 1) // 2 + 1)
k2 = np.arange(-N2 // 2, (N2 - 1) // 2 + 1)
E = np.exp(-1j * (np.multiply.outer(x, k1)[:, :, None] + np.multiply.outer(y, k2)[:, None, :]))
exact = np.einsum("mab,tab->tm", E, fk.astype(np.complex128))
assert np.linalg.norm(cj - exact) <= 1e-4 * np.linalg.norm(exact), "type 2 wrong"
print("ok")
