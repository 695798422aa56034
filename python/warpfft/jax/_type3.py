"""The JAX primitive behind nufft3: shapes, lowering to warpfft's XLA FFI handler, derivatives
(source, points and targets) and batching. What it shares with types 1/2 is :mod:`._common`.

Canonical form of nufft3_p: source (G, T, M) complex, `dim` source coordinate arrays (G, M)
then `dim` target coordinate arrays (G, K) (x, y, z order each); result (G, T, K):
f[g, t, k] = sum_j source[g, t, j] exp(i iflag (s_k . x_j)). The handler calls setpts3 for
each group (once when G = 1) on a plan cached without M or K. User-facing broadcasting is
reduced to this form by :func:`apply3`.
"""

import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching

from .. import _lib as native
from .._args import effective_eps
from ._common import (_backward, _concrete, _precision, as_arrays, call_handler, canonical,
                      def_jitted_impl, plan_record, register_lowerings, unbatched)

nufft3_p = Primitive("warpfft_nufft3")


def _abstract_eval3(source, *coords, iflag, eps, opts):
    dim = len(coords) // 2
    if len(coords) != 2 * dim or not 1 <= dim <= 3:
        raise ValueError(f"type 3 takes 1..3 source and as many target coordinate arrays, got "
                         f"{len(coords)} arrays")
    sshape = _concrete(source.shape, "source")
    cshapes = [_concrete(p.shape, f"coordinates {i}") for i, p in enumerate(coords)]
    prec = _precision(np.dtype(source.dtype), [np.dtype(p.dtype) for p in coords])
    if len(sshape) != 3:
        raise ValueError(f"source has shape {sshape}, expected (G, T, M)")
    G, T, M = sshape
    K = cshapes[dim][-1] if len(cshapes[dim]) == 2 else -1
    for i, cs in enumerate(cshapes):
        want = (G, M) if i < dim else (G, K)
        if cs != want:
            what = "points" if i < dim else "targets"
            raise ValueError(f"{what} {'xyz'[i % dim]} have shape {cs}, expected {want}")
    native.validate3(dim, T, eps, prec, plan_record(opts, 3, dim))
    return source.update(shape=(G, T, K), dtype=source.dtype)


nufft3_p.def_abstract_eval(_abstract_eval3)
def_jitted_impl(nufft3_p)


def _lowering3(ctx, source, *coords, iflag, eps, opts):
    dim = len(coords) // 2
    # The C plan's dimension 1 is the last axis: sources and targets each in reverse order.
    order = list(range(dim))[::-1] + [dim + d for d in range(dim)][::-1]
    return call_handler(ctx, source, coords, order, nufft_type=3, iflag=iflag, eps=eps,
                        opts=plan_record(opts, 3, dim), nc=(1, 1, 1))


register_lowerings(nufft3_p, _lowering3)


def apply3(source, points, targets, iflag, eps, opts):
    """jax-finufft's type-3 broadcasting: source (..., M), points (..., M), targets (..., K);
    the leading axes of the points and the targets broadcast together (one point set per
    combination), and with the source's as in :func:`._ops.apply` (axes where the coordinates
    have length 1 run as one batched transform). Returns (..., K)."""
    dim = len(points)
    if not 1 <= dim <= 3 or len(targets) != dim:
        raise ValueError(f"nufft3 takes 1, 2 or 3 point arrays followed by as many target "
                         f"arrays, got {dim + len(targets)} arrays")
    source, (points, targets) = as_arrays(source, [("points", points), ("targets", targets)])
    try:
        points = jnp.broadcast_arrays(*points)
        targets = jnp.broadcast_arrays(*targets)
    except ValueError as e:
        raise ValueError(f"the point (or target) arrays do not broadcast together: {e}") from None
    ps = _concrete(points[0].shape, "points")
    ts = _concrete(targets[0].shape, "targets")
    if not ps or not ts:
        raise ValueError("points and targets must have at least one axis ((M,) and (K,))")
    M, K = ps[-1], ts[-1]
    try:
        lead = list(np.broadcast_shapes(ps[:-1], ts[:-1]))
    except ValueError:
        raise ValueError(f"the points' leading axes {ps[:-1]} do not broadcast with the "
                         f"targets' {ts[:-1]}") from None
    points = [jnp.broadcast_to(p, tuple(lead) + (M,)) for p in points]
    targets = [jnp.broadcast_to(t, tuple(lead) + (K,)) for t in targets]
    sshape = _concrete(source.shape, "source")
    if not sshape:
        raise ValueError("source must have at least one axis (M,)")
    if sshape[-1] != M:
        raise ValueError(f"source has {sshape[-1]} values on its last axis but the points have "
                         f"{M}")
    source, coords, restore = canonical(source, 1, points + targets, lead)
    eps = effective_eps(eps, _precision(np.dtype(source.dtype), ()))  # the C rule, warned
    return restore(nufft3_p.bind(source, *coords, iflag=int(iflag), eps=eps, opts=opts))


def _jvp3(primals, tangents, *, iflag, eps, opts):
    # f_k = sum_j c_j e^{i s (s_k . x_j)}:
    # df_k = T3(dc)_k + sum_d (i s) s_dk T3(c dx_d)_k + sum_d (i s) ds_dk T3(x_d c)_k
    source, *coords = primals
    dsource, *dcoords = tangents
    dim = len(coords) // 2
    params = dict(iflag=iflag, eps=eps, opts=opts)
    G, T = source.shape[0], source.shape[1]
    isg = 1j * (1 if iflag >= 0 else -1)
    has_ds = type(dsource) is not ad.Zero
    dx = [(d, t) for d, t in enumerate(dcoords[:dim]) if type(t) is not ad.Zero]
    dt = [(d, t) for d, t in enumerate(dcoords[dim:]) if type(t) is not ad.Zero]
    args = [source] + [coords[d][:, None, :] * source for d, _ in dt]
    P = len(args)
    both = nufft3_p.bind(jnp.concatenate(args, axis=1) if P > 1 else source, *coords, **params)
    both = both.reshape((G, P, T, both.shape[-1]))
    out = both[:, 0]
    targs = [dsource] if has_ds else []
    targs += [t[:, None, :] * source for _, t in dx]
    tangent = None
    if targs:
        Q = len(targs)
        r = nufft3_p.bind(jnp.concatenate(targs, axis=1) if Q > 1 else targs[0], *coords,
                          **params).reshape((G, Q, T, out.shape[-1]))
        if has_ds:
            tangent = r[:, 0]
        for j, (d, _) in enumerate(dx):
            term = r[:, j + int(has_ds)] * (isg * coords[dim + d][:, None, :]).astype(out.dtype)
            tangent = term if tangent is None else tangent + term
    for j, (d, t) in enumerate(dt):
        term = both[:, 1 + j] * (isg * t[:, None, :]).astype(out.dtype)
        tangent = term if tangent is None else tangent + term
    if tangent is None:
        return out, jnp.zeros_like(out)
    return out, tangent


def _transpose3(ct, source, *coords, iflag, eps, opts):
    if any(ad.is_undefined_primal(p) for p in coords):
        raise NotImplementedError("warpfft.jax: transposing type 3 with respect to the points "
                                  "or targets (their derivatives go through the jvp)")
    dim = len(coords) // 2
    if type(ct) is ad.Zero:
        return (ad.Zero(source.aval),) + (None,) * (2 * dim)
    # f = A c with A_kj = e^{i s s_k.x_j}; A^T ct: a type 3 from the targets to the sources
    res = nufft3_p.bind(ct, *coords[dim:], *coords[:dim], iflag=iflag, eps=eps,
                        opts=_backward(opts, 3))
    return (res,) + (None,) * (2 * dim)


ad.primitive_jvps[nufft3_p] = _jvp3
ad.primitive_transposes[nufft3_p] = _transpose3


def _batch3(args, dims, *, iflag, eps, opts):
    source, coords = unbatched(args, dims)
    dim = len(coords) // 2
    return apply3(source, coords[:dim], coords[dim:], iflag, eps, opts), 0


batching.primitive_batchers[nufft3_p] = _batch3
