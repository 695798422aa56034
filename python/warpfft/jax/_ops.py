"""The JAX primitive behind nufft1/nufft2: shapes, lowering to warpfft's XLA FFI handler,
derivatives (source and points) and batching. Type 3 is :mod:`._type3`; what both share is
:mod:`._common`.

Canonical form of the primitive (what ``nufft_p`` binds): ``source`` of shape (G, T, M) for
type 1 or (G, T, N1[, N2[, N3]]) for type 2, and ``dim`` point arrays (x, y, z order) of shape
(G, M): G point sets, T transforms sharing each. The handler runs one cached plan: with G
point sets of their own, one of ntransf = G * T with batched points (one setpts_sets, one
execute), else (shared points, or OD spreading, which takes one set) ntransf = T with setpts per
point set. User-facing broadcasting is reduced to this form by :func:`apply`.
"""

import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching

from .. import _lib as native
from .. import _options as _table
from .._args import effective_eps
from . import _common, _type3
from ._common import (_backward, _concrete, _precision, as_arrays, call_handler, canonical,
                      def_jitted_impl, plan_record, register_lowerings, unbatched)

nufft_p = Primitive("warpfft_nufft")
# Reached through warpfft.jax._ops by the tests (test_jax.py, test_jax_reference.py).
TARGET = _common.TARGET
nufft3_p = _type3.nufft3_p


# ---- abstract evaluation ------------------------------------------------------------------


def _abstract_eval(source, *points, nufft_type, n_modes, iflag, eps, opts):
    dim = len(points)
    sshape = _concrete(source.shape, "source")
    pshapes = [_concrete(p.shape, f"points {'xyz'[i]}") for i, p in enumerate(points)]
    prec = _precision(np.dtype(source.dtype), [np.dtype(p.dtype) for p in points])
    G, M = pshapes[0][0], pshapes[0][-1]
    for i, ps in enumerate(pshapes):
        if len(ps) != 2 or ps != pshapes[0]:
            raise ValueError(f"points {'xyz'[i]} have shape {ps}, expected {pshapes[0]}")
    if nufft_type == 1:
        if len(sshape) != 3 or sshape[0] != G or sshape[2] != M:
            raise ValueError(f"source has shape {sshape}, expected ({G}, T, {M})")
        out_shape = sshape[:2] + tuple(n_modes)
        modes = tuple(n_modes)
    else:
        if len(sshape) != 2 + dim or sshape[0] != G:
            raise ValueError(f"source has shape {sshape}, expected ({G}, T, {dim} mode axes)")
        out_shape = sshape[:2] + (M,)
        modes = sshape[2:]
    native.validate(nufft_type, modes[::-1], sshape[1], eps, prec,
                    plan_record(opts, nufft_type, dim))
    return source.update(shape=out_shape, dtype=source.dtype)


nufft_p.def_abstract_eval(_abstract_eval)
def_jitted_impl(nufft_p)


# ---- lowering -----------------------------------------------------------------------------


def _lowering(ctx, source, *points, nufft_type, n_modes, iflag, eps, opts):
    dim = len(points)
    if nufft_type == 1:
        modes = tuple(n_modes)
    else:
        modes = tuple(ctx.avals_in[0].shape[2:])
    nc = list(modes[::-1]) + [1] * (3 - dim)  # the C plan's order: the last axis is fastest
    # The C plan's dimension 1 is the last mode axis: pass the points in reverse order.
    return call_handler(ctx, source, points, list(range(dim))[::-1], nufft_type=nufft_type,
                        iflag=iflag, eps=eps, opts=plan_record(opts, nufft_type, dim), nc=nc)


register_lowerings(nufft_p, _lowering)


# ---- user-level broadcasting ----------------------------------------------------------------


def apply(nufft_type, source, points, n_modes, iflag, eps, opts):
    """jax-finufft's broadcasting: leading axes of `source` and of the points broadcast; axes
    where the points have length 1 (and, when `source` has one more leading axis than the
    points, that axis) are stacked into one batched transform sharing the points. Returns the
    result with the broadcast leading axes followed by the modes (type 1) or M (type 2)."""
    dim = len(points)
    if not 1 <= dim <= 3:
        raise ValueError(f"1, 2 or 3 point arrays (x[, y[, z]]), got {dim}")
    source, (points,) = as_arrays(source, [("points", points)])
    try:
        points = jnp.broadcast_arrays(*points)
    except ValueError as e:
        raise ValueError(f"the point arrays do not broadcast together: {e}") from None
    pshape = list(_concrete(points[0].shape, "points"))
    if not pshape:
        raise ValueError("points must have at least one axis (M,)")
    M = pshape.pop()
    core = 1 if nufft_type == 1 else dim
    sshape = _concrete(source.shape, "source")
    if len(sshape) < core:
        raise ValueError(f"source has shape {sshape}: needs at least {core} axes")
    if nufft_type == 1 and sshape[-1] != M:
        raise ValueError(f"source has {sshape[-1]} values on its last axis but the points have "
                         f"{M}")
    source, pts, restore = canonical(source, core, points, pshape)
    eps = effective_eps(eps, _precision(np.dtype(source.dtype), ()))  # the C rule, warned
    out = nufft_p.bind(source, *pts, nufft_type=nufft_type,
                       n_modes=tuple(n_modes) if nufft_type == 1 else (),
                       iflag=int(iflag), eps=eps, opts=opts)
    return restore(out)


# ---- derivatives ----------------------------------------------------------------------------


def _k(n, modeord, dtype):
    if modeord:
        return (np.fft.fftfreq(n) * n).astype(dtype)
    return np.arange(-(n // 2), n - n // 2, dtype=dtype)


def _mode_factor(d, modes, iflag, modeord, dtype):
    """i * iflag * k_d, shaped to broadcast over (G, T, N1, .., Nd)."""
    dim = len(modes)
    shape = [1, 1] + [1] * dim
    shape[2 + d] = modes[d]
    k = _k(modes[d], modeord, np.float64).reshape(shape)
    return jnp.asarray(1j * (1 if iflag >= 0 else -1) * k, dtype=dtype)


def _jvp(primals, tangents, *, nufft_type, n_modes, iflag, eps, opts):
    source, *points = primals
    dsource, *dpoints = tangents
    dim = len(points)
    params = dict(nufft_type=nufft_type, n_modes=n_modes, iflag=iflag, eps=eps, opts=opts)
    modeord = _table.get(plan_record(opts, nufft_type, dim), "modeord")
    dp = [(d, dx) for d, dx in enumerate(dpoints) if type(dx) is not ad.Zero]
    has_ds = type(dsource) is not ad.Zero
    G, T = source.shape[0], source.shape[1]
    if nufft_type == 1:
        # f_k = sum_j c_j e^{i s k.x_j}: df = NUFFT1(dc) + sum_d (i s k_d) NUFFT1(c dx_d)
        out = nufft_p.bind(source, *points, **params)
        if not has_ds and not dp:
            return out, jnp.zeros_like(out)
        args = ([dsource] if has_ds else []) + [dx[:, None, :] * source for _, dx in dp]
        P = len(args)
        stacked = nufft_p.bind(jnp.concatenate(args, axis=1), *points, **params)
        stacked = stacked.reshape((G, P, T) + tuple(n_modes))
        tangent = stacked[:, 0] if has_ds else None
        for j, (d, _) in enumerate(dp):
            term = stacked[:, j + int(has_ds)] * _mode_factor(d, n_modes, iflag, modeord,
                                                                source.dtype)
            tangent = term if tangent is None else tangent + term
        return out, tangent
    # type 2: c_j = sum_k f_k e^{i s k.x_j}: dc = NUFFT2(df) + sum_d dx_d NUFFT2(i s k_d f)
    modes = tuple(source.shape[2:])
    prim_args = [source] + [_mode_factor(d, modes, iflag, modeord, source.dtype) * source
                            for d, _ in dp]
    P = len(prim_args)
    both = nufft_p.bind(jnp.concatenate(prim_args, axis=1) if P > 1 else source, *points,
                        **params)
    both = both.reshape((G, P, T, both.shape[-1]))
    out = both[:, 0]
    tangent = nufft_p.bind(dsource, *points, **params) if has_ds else None
    for j, (_, dx) in enumerate(dp):
        term = both[:, 1 + j] * dx[:, None, :]
        tangent = term if tangent is None else tangent + term
    if tangent is None:
        return out, jnp.zeros_like(out)
    return out, tangent


def _transpose(ct, source, *points, nufft_type, n_modes, iflag, eps, opts):
    if any(ad.is_undefined_primal(p) for p in points):
        raise NotImplementedError("warpfft.jax: transposing with respect to the points")
    dim = len(points)
    bwd = _backward(opts, nufft_type)
    if type(ct) is ad.Zero:
        return (ad.Zero(source.aval),) + (None,) * dim
    if nufft_type == 1:
        # f = A c with A_kj = e^{i s k.x_j}; A^T ct: a type 2 with the same sign
        res = nufft_p.bind(ct, *points, nufft_type=2, n_modes=(), iflag=iflag, eps=eps,
                           opts=bwd)
    else:
        modes = tuple(source.aval.shape[2:])
        res = nufft_p.bind(ct, *points, nufft_type=1, n_modes=modes, iflag=iflag, eps=eps,
                           opts=bwd)
    return (res,) + (None,) * dim


ad.primitive_jvps[nufft_p] = _jvp
ad.primitive_transposes[nufft_p] = _transpose


# ---- batching -------------------------------------------------------------------------------


def _batch(args, dims, *, nufft_type, n_modes, iflag, eps, opts):
    source, points = unbatched(args, dims)
    return apply(nufft_type, source, points, n_modes, iflag, eps, opts), 0


batching.primitive_batchers[nufft_p] = _batch
