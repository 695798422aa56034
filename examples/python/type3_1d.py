"""1D type-3 NUFFT (M sources -> K arbitrary frequencies), checked against a direct sum."""
import numpy as np
import warpfft as cufinufft  # the reference's Python API: same calls, shapes and defaults

M, K = 20_000, 500
rng = np.random.default_rng(0)
x = rng.uniform(-10.0, 30.0, M)  # sources: any finite reals, not periodic
s = rng.uniform(-200.0, 50.0, K)  # target frequencies
c = rng.standard_normal(M) + 1j * rng.standard_normal(M)
try:
    f = cufinufft.nufft1d3(x, c, s, eps=1e-9)  # f[k] = sum_j c[j] exp(+i s[k] x[j]); shape (K,)
except cufinufft.NoGpuError as e:
    print(f"no GPU, nothing to run: {e}")
    raise SystemExit(0) from None
exact = np.exp(1j * np.outer(s, x)) @ c
err = np.linalg.norm(f - exact) / np.linalg.norm(exact)
print(f"f[0] = {f[0]:.6f}   direct sum {exact[0]:.6f}   relative l2 error {err:.1e}")
assert err < 1e-8
plan = cufinufft.Plan(3, 1, n_trans=2, eps=1e-6, dtype="complex128")  # type 3: n_modes = dim
plan.setpts(x, s=s)  # sources, then targets; another M or K later needs no new plan
f2 = plan.execute(np.stack([c, 2 * c]))  # (n_trans, M) -> (n_trans, K)
print(f"batch of 2: shape {f2.shape}, grid {plan.info['n_fine']}")
