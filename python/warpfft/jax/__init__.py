"""warpfft.jax: GPU NUFFTs as JAX operations, with jax-finufft's API.

Switching from jax-finufft is one import::

    from warpfft.jax import nufft1, nufft2, nufft3   # was: from jax_finufft import ...

    f = nufft1((Nx, Ny), c, x, y, eps=1e-6, iflag=1)   # type 1: (..., M) -> (..., Nx, Ny)
    c = nufft2(f, x, y, eps=1e-6, iflag=-1)            # type 2: (..., Nx, Ny) -> (..., M)
    g = nufft3(c, x, y, s, t, eps=1e-6, iflag=-1)      # type 3: (..., M) -> (..., K)

Real-valued data (warpfft's extension, docs/real.md): ``real_data=True`` makes type 1 take real
strengths (float32/float64, (..., M)) to the complex half modes, the last mode axis N//2 + 1
(numpy.fft.rfftn's halving; k = 0 .. N//2 along it whatever modeord), and type 2 take the half
modes to real values, Re(sum of a_k f_k e^{i k.x}) with a_k = 2 for the last axis' k > 0. The
same broadcasting, jit, vmap and derivatives (source and points) as complex data.

Conventions (as jax-finufft): mode arrays have x along the first mode axis, modes run
-N/2..N/2-1 (``opts=Opts(modeord=True)``: FFT order), points are 2*pi periodic. Leading axes
of the source and of the points broadcast; axes where the points have length 1 (and the extra
leading axis of a source with one more leading axis than the points) run as one batched
transform sharing one set of points. Point axes that do not broadcast -- a ``jax.vmap`` over
the points, or points with their own leading axes -- give each group its own point set, and the
handler runs all the groups as one plan with batched points (warpfft's extension, one sort and
one execute for every set; docs/batched-points.md); a deterministic type 1 or 3 runs them one
after the other instead (its output-driven spreading takes one set).

The operations are JAX primitives lowered to an XLA FFI custom call whose handler lives in
libwarpfft.so; it runs on XLA's CUDA stream, works under ``jax.jit``, ``jax.vmap`` (a batched
source over shared points becomes one batched plan), ``jax.grad`` / ``jvp`` / ``vjp`` with
respect to the source and the points, and ``shard_map``. Plans (cuFFT plan, kernels,
workspace) come from the C library's live-plan pool (shared with the one-call functions and
warpfft.torch; ``warpfft.set_plan_cache_limits``) per (type, modes, batch, eps, sign, precision,
options, device, stream), so a jitted loop creates them once; points are set on every call
(type 3: sources and targets, whose counts M and K are not part of the plan's key).

The Toeplitz normal operator ``T = A^H W A`` (type 2 then weights then type 1, as one
convolution: docs/toeplitz.md) is :func:`toeplitz` / :class:`Toeplitz` (``op = Toeplitz(n_modes,
x, y, weights=w)`` once, then ``op(f)`` in the loop), differentiable with respect to the modes
and the weights.

Arrays must be on a CUDA device: lowering for the CPU raises NotImplementedError saying so.

Points are not checked for NaN or infinity: the handler's plans use the library's unchecked
set-points (``check_points = 0``: no host wait per call), so a non-finite coordinate gives a
result that is all NaN, not an exception. Check ``jnp.isfinite`` yourself where the points come
from outside.
"""

import jax as _jax
import numpy as _np

from . import options
from ._common import freeze as _freeze
from ._ops import apply as _apply_traced
from ._real import apply as _apply_real_traced
from ._type3 import apply3 as _apply3_traced
from ._toeplitz import Toeplitz, toeplitz
from .. import _lib as _native

__all__ = ["nufft1", "nufft2", "nufft3", "options", "plans_created", "cached_plans",
           "clear_plan_cache", "toeplitz", "Toeplitz"]


# One cached executable per (type, shapes, static arguments): eager calls dispatch once.
_apply = _jax.jit(_apply_traced, static_argnums=(0, 3, 4, 5, 6))
_apply_real = _jax.jit(_apply_real_traced, static_argnums=(0, 3, 4, 5, 6))
_apply3 = _jax.jit(_apply3_traced, static_argnums=(3, 4, 5))


def _static(convert, value, name):
    try:
        return convert(value)
    except TypeError:
        raise TypeError(f"{name} must be a Python {convert.__name__} (a static value), got "
                        f"{value!r}") from None


def _check_eps_iflag(eps, iflag):
    return _static(float, eps, "eps"), _static(int, iflag, "iflag")


def _real_flag(real_data):
    if isinstance(real_data, (bool, int, _np.bool_, _np.integer)):
        return bool(real_data)
    raise TypeError(f"real_data must be True or False (a static value), got {real_data!r}")


def _no_real_data(real_data, what):
    if _real_flag(real_data):
        raise ValueError(f"real_data=True is for types 1 and 2 (nufft1, nufft2); {what} does not "
                         "take it (docs/real.md)")


def nufft1(output_shape, source, *points, iflag=1, eps=1e-6, opts=None, real_data=False):
    """Type 1 (non-uniform to uniform): f[k] = sum_j c[j] exp(iflag * i * k . x_j).

    output_shape: N or (N1[, N2[, N3]]), one entry per point array. source: complex (..., M).
    points: x[, y[, z]], real (..., M) of source's precision. Returns (..., N1[, N2[, N3]]).
    real_data=True (docs/real.md): source real (float32/float64, (..., M)); returns the complex
    half modes (..., N1[, N2[, N3//2 + 1]]) (the last axis halved, k = 0 .. N//2 along it).
    """
    eps, iflag = _check_eps_iflag(eps, iflag)
    real = _real_flag(real_data)
    dim = len(points)
    if not 1 <= dim <= 3:
        raise ValueError(f"1, 2 or 3 point arrays (x[, y[, z]]), got {dim}")
    if isinstance(output_shape, (int,)) or getattr(output_shape, "ndim", None) == 0:
        output_shape = (output_shape,)
    try:
        output_shape = tuple(int(n) for n in output_shape)
    except TypeError:
        raise TypeError(f"output_shape must be an int or a tuple of ints, got {output_shape!r}") \
            from None
    if len(output_shape) != dim:
        raise ValueError(f"output_shape {output_shape} has {len(output_shape)} entries for "
                         f"{dim} point arrays")
    if any(n < 1 for n in output_shape):
        raise ValueError(f"output_shape {output_shape}: every entry must be >= 1")
    apply = _apply_real if real else _apply
    return apply(1, source, tuple(points), output_shape, iflag, eps, _freeze(opts))


def nufft2(source, *points, iflag=-1, eps=1e-6, opts=None, real_data=False):
    """Type 2 (uniform to non-uniform): c[j] = sum_k f[k] exp(iflag * i * k . x_j).

    source: complex (..., N1[, N2[, N3]]). points: x[, y[, z]], real (..., M). Returns (..., M).
    real_data=True (docs/real.md): source the complex half modes (..., N1[, N2[, H]]), k = 0 ..
    H - 1 along the last axis; returns the real values (..., M),
    c[j] = Re(sum_k a_k f[k] exp(iflag * i * k . x_j)), a_k = 2 where the last axis' k > 0.
    """
    eps, iflag = _check_eps_iflag(eps, iflag)
    apply = _apply_real if _real_flag(real_data) else _apply
    return apply(2, source, tuple(points), None, iflag, eps, _freeze(opts))


def nufft3(source, *points_then_targets, iflag=-1, eps=1e-6, opts=None, real_data=False):
    """Type 3 (non-uniform to non-uniform): f[k] = sum_j c[j] exp(iflag * i * s_k . x_j).

    source: complex (..., M). points_then_targets: x[, y[, z]] real (..., M), then s[, t[, u]]
    real (..., K), of source's precision (jax-finufft's order: all source coordinates first).
    Returns (..., K). Derivatives with respect to the source, the points and the targets.
    real_data=True raises ValueError: type 3 has no real-data form (docs/real.md).
    """
    eps, iflag = _check_eps_iflag(eps, iflag)
    _no_real_data(real_data, "type 3 (nufft3)")
    n = len(points_then_targets)
    if n not in (2, 4, 6):
        raise ValueError(f"nufft3 takes 1, 2 or 3 point arrays followed by as many target "
                         f"arrays (2, 4 or 6 arrays), got {n}")
    dim = n // 2
    return _apply3(source, tuple(points_then_targets[:dim]), tuple(points_then_targets[dim:]),
                   iflag, eps, _freeze(opts))


def plans_created():
    """Plans the custom-call handler has created in this process (a jitted loop must not add
    any after its first call)."""
    return int(_native.lib.warpfft_xla_plans_created())


def cached_plans():
    """Plans and Toeplitz operators in the C library's live-plan pool now, idle and in use: the
    handlers share it with the one-call functions and warpfft.torch
    (``warpfft.plan_cache_info()`` has the details and limits)."""
    from .._cache import info

    i = info()
    return i["plans"] + i["busy"]


def clear_plan_cache():
    """Frees the pool's idle plans and operators (their GPU memory) now; one a running
    computation uses goes when that call ends."""
    _native.check(_native.lib.warpfft_pool_clear(), "warpfft_pool_clear")


def __getattr__(name):
    """``.distributed`` (sharded points over several GPUs / processes) is imported when first
    used, not with this package."""
    if name == "distributed":
        import importlib
        return importlib.import_module(f"{__name__}.distributed")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
