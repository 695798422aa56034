"""The JAX primitive behind nufft1/nufft2 with ``real_data=True`` (docs/real.md): shapes,
lowering to warpfft's XLA FFI handler (the options record carries real_data), derivatives
(source and points) and batching. The complex primitive is :mod:`._ops`; this one mirrors it.

Canonical form (what ``nufft_real_p`` binds), as :mod:`._ops`'s with real strengths and half
modes: type 1 takes a real ``source`` (G, T, M) to the complex half modes (G, T, N1[, N2[,
N3//2 + 1]]) -- the LAST axis halved, k = 0 .. N//2 along it whatever modeord -- for the full
``n_modes`` given; type 2 takes the half modes (G, T, *half) to real values (G, T, M), its plan's
last mode count N = 2H - 1 (any N with N//2 + 1 = H gives the same values). Points (G, M) each.

Derivatives, for JAX's pairing <u, v> = Re(sum u v) (the transpose of a linear map, no
conjugation, as the complex op's transpose is a type 2 of the same sign):
- type 1, y_k = sum_j c_j e^{s i k.x_j} on the half: the transpose is
  c_j = Re(sum_{half} ct_k e^{s i k.x_j}), weight 1 on every column; the real type 2 doubles the
  columns k_last > 0 (its a_k), so they go in halved -- the column k_last = N/2 of an even N too,
  an ordinary output of the type 1.
- type 2, y_j = Re(sum_{half} a_k f_k e^{s i k.x_j}): the transpose is
  f_k = a_k sum_j ct_j e^{s i k.x_j}, a real type 1 (N = 2H - 1: H columns) times a_k.
- points: dy/dx_d = (i s k_d) times the type 1 of c dx_d (type 1); the type 2 of (i s k_d f)
  times dx_d (type 2), k_last = 0 .. H - 1 on the halved axis.
python/tests/test_jax_real.py checks these against dense matrices and JAX's own derivatives.
"""

import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching

from .. import _lib as native
from .. import _options as _table
from .._args import effective_eps
from ._common import (_backward, _concrete, _precision, call_handler, canonical,
                      def_jitted_impl, plan_record, register_lowerings, unbatched)
from ._ops import _k

nufft_real_p = Primitive("warpfft_nufft_real")

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def half_modes(n_modes):
    """The half-mode shape of full mode counts: the last axis N//2 + 1."""
    return tuple(n_modes[:-1]) + (n_modes[-1] // 2 + 1,)


def full_modes(half):
    """The mode counts a real type 2 plans for a half-mode shape: the last axis 2H - 1."""
    return tuple(half[:-1]) + (2 * half[-1] - 1,)


def _real_precision(nufft_type, source_dtype, point_dtypes):
    """The precision of a real op: type 1's source real, type 2's complex (TypeError naming
    what is expected otherwise), points of its real type."""
    if nufft_type == 1:
        if source_dtype not in _COMPLEX_OF:
            raise TypeError(f"real_data=True: type 1 takes a real source (float32 or float64), "
                            f"not {source_dtype}")
        return _precision(_COMPLEX_OF[source_dtype], point_dtypes)
    if source_dtype not in (np.complex64, np.complex128):
        raise TypeError(f"real_data=True: type 2 takes the complex half modes (complex64 or "
                        f"complex128, last axis N//2 + 1), not {source_dtype}")
    return _precision(source_dtype, point_dtypes)


# ---- abstract evaluation and lowering -------------------------------------------------------


def _abstract_eval(source, *points, nufft_type, n_modes, iflag, eps, opts):
    dim = len(points)
    sshape = _concrete(source.shape, "source")
    pshapes = [_concrete(p.shape, f"points {'xyz'[i]}") for i, p in enumerate(points)]
    sdt = np.dtype(source.dtype)
    prec = _real_precision(nufft_type, sdt, [np.dtype(p.dtype) for p in points])
    G, M = pshapes[0][0], pshapes[0][-1]
    for i, ps in enumerate(pshapes):
        if len(ps) != 2 or ps != pshapes[0]:
            raise ValueError(f"points {'xyz'[i]} have shape {ps}, expected {pshapes[0]}")
    if nufft_type == 1:
        if len(sshape) != 3 or sshape[0] != G or sshape[2] != M:
            raise ValueError(f"source has shape {sshape}, expected ({G}, T, {M})")
        modes = tuple(n_modes)
        out_shape, out_dtype = sshape[:2] + half_modes(modes), _COMPLEX_OF[sdt]
    else:
        if len(sshape) != 2 + dim or sshape[0] != G:
            raise ValueError(f"source has shape {sshape}, expected ({G}, T, {dim} mode axes)")
        modes = full_modes(sshape[2:])
        out_shape, out_dtype = sshape[:2] + (M,), np.finfo(sdt).dtype
    native.validate(nufft_type, modes[::-1], sshape[1], eps, prec,
                    plan_record(opts, nufft_type, dim, real=True))
    return source.update(shape=out_shape, dtype=out_dtype)


nufft_real_p.def_abstract_eval(_abstract_eval)
def_jitted_impl(nufft_real_p)


def _lowering(ctx, source, *points, nufft_type, n_modes, iflag, eps, opts):
    dim = len(points)
    modes = tuple(n_modes) if nufft_type == 1 else full_modes(ctx.avals_in[0].shape[2:])
    nc = list(modes[::-1]) + [1] * (3 - dim)  # the C plan's order: the last axis is fastest
    return call_handler(ctx, source, points, list(range(dim))[::-1], nufft_type=nufft_type,
                        iflag=iflag, eps=eps, opts=plan_record(opts, nufft_type, dim, real=True),
                        nc=nc)


register_lowerings(nufft_real_p, _lowering)


# ---- user-level broadcasting ----------------------------------------------------------------


def _as_arrays(nufft_type, source, points):
    """`source` as a jax array (type 1: real, promoted with float32 as the complex op promotes
    with complex64; type 2: complex) and the points, which must be of its real type."""
    source = jnp.asarray(source)
    points = [jnp.asarray(p) for p in points]
    if nufft_type == 1:
        if jnp.iscomplexobj(source):
            raise TypeError(f"real_data=True: type 1 takes a real source (float32 or float64), "
                            f"not {source.dtype}; drop real_data for complex strengths")
        if np.dtype(source.dtype) not in _COMPLEX_OF:  # as the complex op promotes
            source = source.astype(jnp.result_type(source.dtype, jnp.float32))
        real = source.dtype
    else:
        if not jnp.iscomplexobj(source):
            raise TypeError(f"real_data=True: type 2 takes the complex half modes (last axis "
                            f"N//2 + 1), not {source.dtype} values")
        real = jnp.finfo(source.dtype).dtype
    for i, p in enumerate(points):
        if jnp.iscomplexobj(p) or p.dtype != real:
            raise TypeError(f"points {'xyz'[i]} have dtype {p.dtype} but source is "
                            f"{source.dtype}: points must be {real}")
    return source, points


def apply(nufft_type, source, points, n_modes, iflag, eps, opts):
    """:func:`._ops.apply` for real data: the same broadcasting of leading axes; type 1 returns
    (..., *half modes), type 2 (..., M) real."""
    dim = len(points)
    if not 1 <= dim <= 3:
        raise ValueError(f"1, 2 or 3 point arrays (x[, y[, z]]), got {dim}")
    source, points = _as_arrays(nufft_type, source, points)
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
    cdt = _COMPLEX_OF[np.dtype(source.dtype)] if nufft_type == 1 else np.dtype(source.dtype)
    eps = effective_eps(eps, _precision(cdt, ()))  # the C rule, warned
    out = nufft_real_p.bind(source, *pts, nufft_type=nufft_type,
                            n_modes=tuple(n_modes) if nufft_type == 1 else (),
                            iflag=int(iflag), eps=eps, opts=opts)
    return restore(out)


# ---- derivatives ----------------------------------------------------------------------------


def _last_axis(values, half, dtype):
    """`values` (one per column of the halved last axis), shaped to broadcast over (G, T,
    *half)."""
    shape = [1] * (2 + len(half))
    shape[-1] = half[-1]
    return jnp.asarray(np.asarray(values).reshape(shape), dtype=dtype)


def _column_weights(half, value, dtype):
    """1 on the column k_last = 0 of the half, `value` on the others."""
    w = np.full(half[-1], value, np.float64)
    w[0] = 1.0
    return _last_axis(w, half, dtype)


def _mode_factor(d, half, iflag, modeord, dtype):
    """i * iflag * k_d over the half modes (G, T, *half): k_last = 0 .. H - 1 on the last axis,
    the mode order's k on the others."""
    dim = len(half)
    if d == dim - 1:
        k = np.arange(half[-1], dtype=np.float64)
    else:
        k = _k(half[d], modeord, np.float64)
    shape = [1, 1] + [1] * dim
    shape[2 + d] = half[d]
    return jnp.asarray(1j * (1 if iflag >= 0 else -1) * k.reshape(shape), dtype=dtype)


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
        # f_k = sum_j c_j e^{i s k.x_j}: df = NUFFT1(dc) + sum_d (i s k_d) NUFFT1(c dx_d), c real
        out = nufft_real_p.bind(source, *points, **params)
        if not has_ds and not dp:
            return out, jnp.zeros_like(out)
        half = tuple(out.shape[2:])
        args = ([dsource] if has_ds else []) + [dx[:, None, :] * source for _, dx in dp]
        P = len(args)
        stacked = nufft_real_p.bind(jnp.concatenate(args, axis=1), *points, **params)
        stacked = stacked.reshape((G, P, T) + half)
        tangent = stacked[:, 0] if has_ds else None
        for j, (d, _) in enumerate(dp):
            term = stacked[:, j + int(has_ds)] * _mode_factor(d, half, iflag, modeord, out.dtype)
            tangent = term if tangent is None else tangent + term
        return out, tangent
    # type 2: c_j = Re sum_k a_k f_k e^{i s k.x_j}: dc = NUFFT2(df) + sum_d dx_d NUFFT2(i s k_d f)
    half = tuple(source.shape[2:])
    prim_args = [source] + [_mode_factor(d, half, iflag, modeord, source.dtype) * source
                            for d, _ in dp]
    P = len(prim_args)
    both = nufft_real_p.bind(jnp.concatenate(prim_args, axis=1) if P > 1 else source, *points,
                             **params)
    both = both.reshape((G, P, T, both.shape[-1]))
    out = both[:, 0]
    tangent = nufft_real_p.bind(dsource, *points, **params) if has_ds else None
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
        # c_j = Re(sum_half ct_k e^{i s k.x_j}), weight 1 on every column: a real type 2 (same
        # sign) of ct with the columns it doubles (k_last > 0, N/2 of an even N too) halved
        half = tuple(ct.shape[2:])
        res = nufft_real_p.bind(ct * _column_weights(half, 0.5, ct.dtype), *points,
                                nufft_type=2, n_modes=(), iflag=iflag, eps=eps, opts=bwd)
    else:
        # f_k = a_k sum_j ct_j e^{i s k.x_j}: a real type 1 (N = 2H - 1: the H columns) times a_k
        half = tuple(source.aval.shape[2:])
        res = nufft_real_p.bind(ct, *points, nufft_type=1, n_modes=full_modes(half),
                                iflag=iflag, eps=eps, opts=bwd)
        res = res * _column_weights(half, 2.0, res.dtype)
    return (res,) + (None,) * dim


ad.primitive_jvps[nufft_real_p] = _jvp
ad.primitive_transposes[nufft_real_p] = _transpose


# ---- batching -------------------------------------------------------------------------------


def _batch(args, dims, *, nufft_type, n_modes, iflag, eps, opts):
    source, points = unbatched(args, dims)
    return apply(nufft_type, source, points, n_modes, iflag, eps, opts), 0


batching.primitive_batchers[nufft_real_p] = _batch
