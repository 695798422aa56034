"""Test aid: CPU lowerings of warpfft.jax's primitives as exact sums in jax.numpy, so the
sharding, collectives and derivative rules around them (warpfft.jax.distributed) run on CPU
devices (XLA_FLAGS=--xla_force_host_platform_device_count=N, or CPU processes under
jax.distributed). The real op is a CUDA custom call; without this, lowering for the CPU
raises NotImplementedError. Only the transform's arithmetic is replaced: shapes, broadcasting,
jvp, transpose and batching rules are the real primitives'.

    import _exact_jax; _exact_jax.install()   # before the first call of a warpfft.jax op
"""

import jax
import jax.numpy as jnp
from jax.interpreters import mlir

from warpfft.jax import _ops, _type3


def _modeord(opts):
    """The mode order the tests pass: None or Opts(modeord=...)."""
    return int(bool(getattr(opts, "modeord", 0))) if opts is not None else 0


def _k(n, modeord, dtype):
    k = jnp.arange(n, dtype=dtype)
    if modeord:
        return jnp.where(k < n - n // 2, k, k - n)
    return k - n // 2


def _exact12(source, *points, nufft_type, n_modes, iflag, eps, opts):
    """nufft_p's canonical form: source (G, T, M) -> (G, T, *modes) (type 1), or (G, T,
    *modes) -> (G, T, M) (type 2); points (G, M) each."""
    del eps
    modes = tuple(n_modes) if nufft_type == 1 else tuple(source.shape[2:])
    real = points[0].dtype
    grids = jnp.meshgrid(*[_k(n, _modeord(opts), real) for n in modes], indexing="ij")
    K = grids[0].size
    phase = sum(g.reshape(1, K, 1) * p[:, None, :] for g, p in zip(grids, points))  # (G, K, M)
    e = jnp.exp((1j if iflag >= 0 else -1j) * phase).astype(source.dtype)
    if nufft_type == 1:
        return jnp.einsum("gtm,gkm->gtk", source, e).reshape(source.shape[:2] + modes)
    flat = source.reshape(source.shape[:2] + (K,))
    return jnp.einsum("gtk,gkm->gtm", flat, e)


def _exact3(source, *coords, iflag, eps, opts):
    """nufft3_p's canonical form: source (G, T, M), dim point arrays (G, M), dim target arrays
    (G, K) -> (G, T, K)."""
    del eps, opts
    dim = len(coords) // 2
    phase = sum(t[:, :, None] * x[:, None, :] for x, t in zip(coords[:dim], coords[dim:]))
    e = jnp.exp((1j if iflag >= 0 else -1j) * phase).astype(source.dtype)  # (G, K, M)
    return jnp.einsum("gtm,gkm->gtk", source, e)


def install():
    """Registers the exact sums as the primitives' CPU lowerings (for this process)."""
    mlir.register_lowering(_ops.nufft_p, mlir.lower_fun(_exact12, multiple_results=False),
                           platform="cpu")
    mlir.register_lowering(_type3.nufft3_p, mlir.lower_fun(_exact3, multiple_results=False),
                           platform="cpu")
    jax.config.update("jax_enable_x64", True)
