"""2D type-1 NUFFT of random points, checked against a direct sum at a few modes."""
import numpy as np
import warpfft as cufinufft  # the reference's Python API: same calls, shapes and defaults

M, N1, N2 = 100_000, 128, 64
rng = np.random.default_rng(0)
x, y = rng.uniform(-np.pi, np.pi, (2, M))
c = rng.standard_normal(M) + 1j * rng.standard_normal(M)
try:
    f = cufinufft.nufft2d1(x, y, c, (N1, N2), eps=1e-9)  # f.shape == (N1, N2); x <-> axis 0
except cufinufft.NoGpuError as e:
    print(f"no GPU, nothing to run: {e}")
    raise SystemExit(0) from None
for k1, k2 in [(0, 0), (5, -3), (-N1 // 2, N2 // 2 - 1)]:
    exact = np.sum(c * np.exp(1j * (k1 * x + k2 * y)))
    got = f[k1 + N1 // 2, k2 + N2 // 2]
    print(f"f({k1}, {k2}) = {got:.6f}   direct sum {exact:.6f}")
    assert abs(got - exact) < 1e-7 * np.linalg.norm(c)
plan = cufinufft.Plan(2, (N1, N2), eps=1e-9, dtype="complex128")  # type 2: isign -1
plan.setpts(x, y)
c2 = plan.execute(f)  # numpy in -> numpy out; cupy/torch/jax in -> the same kind out
print(f"type 2 of the result at point 0: {c2[0]:.6f}")
