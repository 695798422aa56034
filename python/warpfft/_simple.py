"""One-call transforms with the reference's (cufinufft's) signatures:
nufft{1,2,3}d{1,2} and nufft{1,2,3}d3.

``nufft2d3(x, y, data, s, t, out=None, eps=1e-6, isign=1, **kwargs)`` (type 3) maps strengths
``([n_trans,] M)`` at the sources (x, y) to values ``([n_trans,] K)`` at the targets (s, t).

``nufft2d1(x, y, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs)`` returns modes of
shape ``([n_trans,] N1, N2)`` (x with axis 0); ``nufft2d2(x, y, data, out=None, eps=1e-6,
isign=-1, **kwargs)`` takes ``data`` of shape ``([n_trans,] N1, N2)``. The dtype comes from
``data`` (complex64 or complex128; points of the matching real dtype: no silent casts);
``n_trans`` from a leading batch axis; for type 1 with ``out`` given, ``n_modes`` from
``out.shape`` (as in the reference). ``**kwargs``: Plan options (see ``warpfft.Plan``).

Batched points (warpfft's extension, not the reference's; docs/batched-points.md): points of
shape ``(B, M)`` (type 3: targets ``(B, K)`` too) give each of the B point sets its own
``n_trans / B`` transforms: ``nufft2d1(x, y, c, n_modes)`` with x, y, c of shape ``(B, M)``
returns ``(B, N1, N2)``, transform b on the points ``(x[b], y[b])``, in one batched plan.

Real-valued data (``real_data=True``, docs/real.md): type 1 takes real ``data`` (float32 or
float64) and returns the half modes, complex, the last axis ``N//2 + 1`` (numpy.fft.rfftn's
halving); type 2 takes the half modes and returns real values. Type 2 (and type 1 given ``out``
without ``n_modes``) plans ``N = 2H - 1`` for a last axis of ``H``: any ``N`` with
``N//2 + 1 = H`` gives the same values.

Plans come from the C library's live-plan pool (``warpfft._cache``; shared with warpfft.torch
and warpfft.jax): a repeated call of the same shape, options and stream costs setpts + execute
only. Types 1 and 2 pass the plan ``points_hint`` = M rounded to a power of two (unless the
call gives one), for its choice of upsampfac and kernel width. Host (numpy) arrays: the call waits and raises any error. Device arrays: the call returns
without waiting (as the reference's), its work ordered after and before the producers' streams;
an asynchronous failure is raised by ``clear_plan_cache()`` (or, with the pool off, by this
call's destroy of its plan), and makes later CUDA calls fail as CUDA's errors do.
"""

__all__ = ["nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3", "nufft3d1",
           "nufft3d2", "nufft3d3"]  # the nine, exported by warpfft and its cufinufft stand-in

import math

import numpy as np

from . import _cache, _lib
from ._args import shape_of
from ._arrays import describe, wrap
from ._compat import Plan
from ._errors import invalid
from ._plan import precision_of


def _points_per_set(x):
    """M of a coordinate array: its length, or (batched points) its last axis's."""
    shape = shape_of(x)
    return shape[-1] if len(shape) else math.prod(shape)


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def _full_modes(half):
    """The mode counts of a half-mode shape (real_data: the last axis H = N//2 + 1): N = 2H - 1.
    Every N with N//2 + 1 = H gives the same values (the half holds k = 0 .. H-1 either way)."""
    return tuple(half[:-1]) + (2 * half[-1] - 1,)


def _invoke(dim, nufft_type, pts, data, out, eps, isign, n_modes, kwargs, targets=()):
    shape, dt = describe(data, "data")  # no copy: execute copies a non-contiguous input once
    real = nufft_type != 3 and _real_data(kwargs)
    if real and nufft_type == 1:
        # real_data (docs/real.md): type 1 takes real strengths, the plan's dtype is complex
        if np.dtype(dt) not in _COMPLEX_OF:
            raise invalid(f"real_data=True: type 1 takes real data (float32 or float64), not "
                          f"{np.dtype(dt)}")
        dt = _COMPLEX_OF[np.dtype(dt)]
    _, dtype, _ = precision_of(dt)
    core = dim if nufft_type == 2 else 1
    if len(shape) < core:
        raise invalid(f"Argument `data` has shape {shape}: expected {core} axes or "
                      f"{core + 1} with a leading batch axis")
    n_trans = 1 if len(shape) == core else shape[0]
    if nufft_type == 1 and out is not None:
        o = wrap(out, "out", dtype, output=True)
        if not real:
            n_modes = o.shape[-dim:]
        elif n_modes is None:  # real_data: out holds the half modes (n_modes, if given, wins)
            n_modes = _full_modes(o.shape[-dim:])
    elif nufft_type == 2:
        n_modes = _full_modes(shape[-dim:]) if real else shape[-dim:]
    elif nufft_type == 3:
        n_modes = dim  # the reference's Plan(3, dim, ...); M and K come at setpts
    if n_modes is None:
        raise invalid("n_modes is needed (or out, whose shape gives it)")
    if isign is None:
        isign = -1 if nufft_type == 2 else 1
    if nufft_type != 3:
        got = (n_modes,) if np.ndim(n_modes) == 0 else tuple(n_modes)
        if len(got) != dim:
            raise invalid(f"n_modes {got} has {len(got)} entries for a {dim}D transform")
        n_modes = got
        if "points_hint" not in kwargs:
            # The M this call sets, for the plan's choice of upsampfac and width (by predicted
            # time), rounded to the nearest power of two: pooled plans are keyed on every
            # option, so an exact M would make a new plan for each distinct M, and the choice
            # changes slowly with M. (Bad points still raise at setpts, as before.)
            # Batched points ((B, M) coordinates, warpfft's extension): M of each set.
            kwargs["points_hint"] = _lib.points_hint_for(_points_per_set(pts[0]))
    _cache.reap()  # earlier calls' arrays whose work is done
    # A plan of the pool (any stream: the pool never waits for a stream its user may destroy).
    plan = Plan._from_pool(nufft_type, n_modes, n_trans, eps, isign, dtype, **kwargs)
    try:
        plan.setpts(*pts, *[None] * (3 - dim), *targets)  # targets: type 3's s, t, u
        result = plan.execute(data, out)
    except BaseException:
        try:
            plan.close()
        except Exception:
            pass  # the first error is the one to report
        raise
    plan.close()  # back to the pool (raises a failure to destroy it where the pool did not keep it)
    return result


def _real_data(kwargs):
    """Whether the call's options ask for real_data (a value the option table refuses raises
    there, at the plan)."""
    v = kwargs.get("real_data")
    try:
        return v is not None and bool(v)
    except (TypeError, ValueError):  # not a truth value: the table refuses it at the plan
        return False


def nufft1d1(x, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1: f[k1] = sum_j c[j] exp(+/-i k1 x[j]), -N1/2 <= k1 <= (N1-1)/2.
    data: complex[M] or complex[n_tr, M]; returns complex[N1] or complex[n_tr, N1]."""
    return _invoke(1, 1, (x,), data, out, eps, isign, n_modes, kwargs)


def nufft1d2(x, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2: c[j] = sum_k1 f[k1] exp(+/-i k1 x[j]). data: complex[N1] or
    complex[n_tr, N1]; returns complex[M] or complex[n_tr, M]."""
    return _invoke(1, 2, (x,), data, out, eps, isign, None, kwargs)


def nufft2d1(x, y, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1: f[k1, k2] = sum_j c[j] exp(+/-i (k1 x[j] + k2 y[j])).
    data: complex[M] or complex[n_tr, M]; returns complex[N1, N2] or complex[n_tr, N1, N2]."""
    return _invoke(2, 1, (x, y), data, out, eps, isign, n_modes, kwargs)


def nufft2d2(x, y, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2: c[j] = sum_{k1,k2} f[k1, k2] exp(+/-i (k1 x[j] + k2 y[j])).
    data: complex[N1, N2] or complex[n_tr, N1, N2]; returns complex[M] or complex[n_tr, M]."""
    return _invoke(2, 2, (x, y), data, out, eps, isign, None, kwargs)


def nufft3d1(x, y, z, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1; returns complex[N1, N2, N3] or complex[n_tr, N1, N2, N3]."""
    return _invoke(3, 1, (x, y, z), data, out, eps, isign, n_modes, kwargs)


def nufft3d2(x, y, z, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2; data: complex[N1, N2, N3] or complex[n_tr, N1, N2, N3]."""
    return _invoke(3, 2, (x, y, z), data, out, eps, isign, None, kwargs)


def nufft1d3(x, data, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3: f[k] = sum_j c[j] exp(+/-i s[k] x[j]) for M sources x and K targets s (any
    finite reals). data: complex[M] or complex[n_tr, M]; returns complex[K] or
    complex[n_tr, K]."""
    return _invoke(1, 3, (x,), data, out, eps, isign, None, kwargs, (s,))


def nufft2d3(x, y, data, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j])). data: complex[M] or
    complex[n_tr, M]; returns complex[K] or complex[n_tr, K]."""
    return _invoke(2, 3, (x, y), data, out, eps, isign, None, kwargs, (s, t))


def nufft3d3(x, y, z, data, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j] + u[k] z[j])).
    data: complex[M] or complex[n_tr, M]; returns complex[K] or complex[n_tr, K]."""
    return _invoke(3, 3, (x, y, z), data, out, eps, isign, None, kwargs, (s, t, u))
