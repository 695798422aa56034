"""The JAX primitive behind nufft1/nufft2: shapes, lowering to warpfft's XLA FFI handler,
derivatives (source and points) and batching.

Canonical form of the primitive (what ``nufft_p`` binds): ``source`` of shape (G, T, M) for
type 1 or (G, T, N1[, N2[, N3]]) for type 2, and ``dim`` point arrays (x, y, z order) of shape
(G, M): G point sets, T transforms sharing each. The handler runs one cached plan with ntransf
= T, calling setpts once per point set. User-facing broadcasting is reduced to this form by
:func:`apply`.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from .. import _framework_native as native
from . import options as _options

TARGET = "warpfft_nufft"

jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(native.lib.warpfft_xla_nufft),
                            platform="CUDA", api_version=1)

nufft_p = Primitive("warpfft_nufft")


# ---- options and validation -------------------------------------------------------------


def freeze(opts):
    """A hashable options object (dicts become Opts / NestedOpts); ValueError for unknown names."""
    if opts is None:
        return None
    if isinstance(opts, dict):
        if opts and set(opts) <= set(_options._NESTED):
            return _options.NestedOpts(**{k: freeze(v) for k, v in opts.items()})
        known = {f.name for f in _options.dataclasses.fields(_options.Opts)}
        unknown = sorted(set(opts) - known)
        if unknown:
            raise ValueError(f"opts: unknown option(s) {', '.join(unknown)}")
        return _options.Opts(**opts)
    try:
        hash(opts)
    except TypeError:
        return freeze(_options._fields(opts))
    return opts


def _plan_kw(opts, nufft_type, dim):
    return _options.resolve(_options.unpack(opts, nufft_type, True), dim)


def _backward(opts, nufft_type):
    return _options.unpack(opts, nufft_type, False)


def _concrete(shape, what):
    try:
        return tuple(int(s) for s in shape)
    except Exception:  # symbolic dimensions (jax.export) refuse int() in several ways
        raise ValueError(f"warpfft.jax needs concrete shapes; {what} has shape {shape}") from None


def _precision(source_dtype, point_dtypes):
    if source_dtype == np.complex64:
        prec, real = native.F32, np.float32
    elif source_dtype == np.complex128:
        prec, real = native.F64, np.float64
    else:
        raise TypeError(f"source must be complex64 or complex128, not {source_dtype}")
    for name, dt in zip("xyz", point_dtypes):
        if dt != real:
            raise TypeError(f"points {name} have dtype {dt} but source is {source_dtype}: "
                            f"points must be {np.dtype(real).name}")
    return prec


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
                    _plan_kw(opts, nufft_type, dim))
    return source.update(shape=out_shape, dtype=source.dtype)


nufft_p.def_abstract_eval(_abstract_eval)


@functools.lru_cache(maxsize=None)
def _jitted_bind(params):
    return jax.jit(functools.partial(nufft_p.bind, **dict(params)))


def _impl(*args, **params):
    return _jitted_bind(tuple(sorted(params.items())))(*args)


nufft_p.def_impl(_impl)


# ---- lowering -----------------------------------------------------------------------------


def _lowering(ctx, source, *points, nufft_type, n_modes, iflag, eps, opts):
    dim = len(points)
    if nufft_type == 1:
        modes = tuple(n_modes)
    else:
        modes = tuple(ctx.avals_in[0].shape[2:])
    kw = dict(_plan_kw(opts, nufft_type, dim))
    nc = list(modes[::-1]) + [1] * (3 - dim)  # the C plan's order: the last axis is fastest
    bins = list(kw.get("bin_size", (0, 0, 0)))
    rule = jax.ffi.ffi_lowering(TARGET)
    # The C plan's dimension 1 is the last mode axis: pass the points in reverse order.
    cctx = ctx.replace(avals_in=[ctx.avals_in[0]] + list(ctx.avals_in[1:])[::-1])
    return rule(cctx, source, *points[::-1],
                nufft_type=np.int32(nufft_type), iflag=np.int32(1 if iflag >= 0 else -1),
                eps=np.float64(eps), modeord=np.int32(kw.get("modeord", 0)),
                method=np.int32(kw.get("method", 0)),
                upsampfac=np.float64(kw.get("upsampfac", 2.0)),
                max_subprob=np.int32(kw.get("max_subprob", 0)),
                bin1=np.int32(bins[0]), bin2=np.int32(bins[1]), bin3=np.int32(bins[2]),
                n1=np.int64(nc[0]), n2=np.int64(nc[1]), n3=np.int64(nc[2]))


def _not_on_gpu(ctx, *args, **params):
    platforms = ", ".join(ctx.module_context.platforms)
    raise NotImplementedError(
        f"warpfft.jax runs on CUDA GPUs only; this computation is lowered for {platforms}. "
        "Put the arrays on a GPU (jax.device_put(x, jax.devices('gpu')[0])) or use a CPU NUFFT "
        "(e.g. jax-finufft's CPU build) for CPU arrays.")


mlir.register_lowering(nufft_p, _not_on_gpu)
mlir.register_lowering(nufft_p, _lowering, platform="cuda")


# ---- user-level broadcasting ----------------------------------------------------------------


def apply(nufft_type, source, points, n_modes, iflag, eps, opts):
    """jax-finufft's broadcasting: leading axes of `source` and of the points broadcast; axes
    where the points have length 1 (and, when `source` has one more leading axis than the
    points, that axis) are stacked into one batched transform sharing the points. Returns the
    result with the broadcast leading axes followed by the modes (type 1) or M (type 2)."""
    dim = len(points)
    if not 1 <= dim <= 3:
        raise ValueError(f"1, 2 or 3 point arrays (x[, y[, z]]), got {dim}")
    source = jnp.asarray(source)
    points = [jnp.asarray(p) for p in points]
    if not jnp.iscomplexobj(source):
        source = source.astype(jnp.result_type(source.dtype, jnp.complex64))
    real = jnp.finfo(source.dtype).dtype
    for i, p in enumerate(points):
        if jnp.iscomplexobj(p) or p.dtype != real:
            raise TypeError(f"points {'xyz'[i]} have dtype {p.dtype} but source is "
                            f"{source.dtype}: points must be {real}")
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
    sbatch, score = list(sshape[:len(sshape) - core]), sshape[len(sshape) - core:]
    if nufft_type == 1 and score[0] != M:
        raise ValueError(f"source has {score[0]} values on its last axis but the points have "
                         f"{M}")
    if len(sbatch) == len(pshape) + 1:  # the stacked-transforms axis of jax-finufft
        pshape.append(1)
        points = [p[..., None, :] for p in points]
    n = max(len(sbatch), len(pshape))
    sbatch = [1] * (n - len(sbatch)) + sbatch
    points = [p.reshape((1,) * (n - len(pshape)) + p.shape) for p in points]
    pshape = [1] * (n - len(pshape)) + pshape
    source = source.reshape(tuple(sbatch) + score)
    try:
        target = list(np.broadcast_shapes(tuple(sbatch), tuple(pshape)))
    except ValueError:
        raise ValueError(f"source's leading axes {tuple(sbatch)} do not broadcast with the "
                         f"points' {tuple(pshape)}") from None
    stacked = [i for i in range(n) if pshape[i] == 1 and target[i] != 1]
    kept = [i for i in range(n) if i not in stacked]
    source = jnp.broadcast_to(source, tuple(target) + score)
    perm = kept + stacked
    source = source.transpose(perm + list(range(n, n + core)))
    G = int(np.prod([target[i] for i in kept], dtype=np.int64))
    T = int(np.prod([target[i] for i in stacked], dtype=np.int64))
    source = source.reshape((G, T) + score)
    pts = [jnp.broadcast_to(p, tuple(target[i] if i in kept else 1 for i in range(n)) + (M,))
           .transpose(perm + [n]).reshape(G, M) for p in points]
    out = nufft_p.bind(source, *pts, nufft_type=nufft_type,
                       n_modes=tuple(n_modes) if nufft_type == 1 else (),
                       iflag=int(iflag), eps=float(eps), opts=opts)
    out_core = tuple(out.shape[2:])
    out = out.reshape(tuple(target[i] for i in perm) + out_core)
    inv = list(np.argsort(perm)) + list(range(n, n + len(out_core)))
    return out.transpose(inv)


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
    modeord = dict(_plan_kw(opts, nufft_type, dim)).get("modeord", 0)
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
    source, *points = args
    bs, *bps = dims
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    source = jnp.moveaxis(source, bs, 0) if bs is not None else source[None]
    # Unbatched points get a length-1 axis: apply() stacks the batch into the transforms
    # sharing those points (one plan with a larger ntransf, not a loop).
    points = [jnp.moveaxis(p, d, 0) if d is not None else p[None] for p, d in zip(points, bps)]
    if bs is None:
        source = jnp.broadcast_to(source, (size,) + source.shape[1:])
    out = apply(nufft_type, source, points, n_modes, iflag, eps, opts)
    return out, 0


batching.primitive_batchers[nufft_p] = _batch


# ---- type 3 ---------------------------------------------------------------------------------
#
# Canonical form of nufft3_p: source (G, T, M) complex, `dim` source coordinate arrays (G, M)
# then `dim` target coordinate arrays (G, K) (x, y, z order each); result (G, T, K):
# f[g, t, k] = sum_j source[g, t, j] exp(i iflag (s_k . x_j)). The handler calls setpts3 for
# each group (once when G = 1) on a plan cached without M or K.

nufft3_p = Primitive("warpfft_nufft3")


def _plan_kw3(opts, dim):
    return tuple((k, v) for k, v in _plan_kw(opts, 3, dim) if k != "modeord")


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
    native.validate3(dim, T, eps, prec, _plan_kw3(opts, dim))
    return source.update(shape=(G, T, K), dtype=source.dtype)


nufft3_p.def_abstract_eval(_abstract_eval3)


def _impl3(*args, **params):
    return _jitted_bind3(tuple(sorted(params.items())))(*args)


@functools.lru_cache(maxsize=None)
def _jitted_bind3(params):
    return jax.jit(functools.partial(nufft3_p.bind, **dict(params)))


nufft3_p.def_impl(_impl3)


def _lowering3(ctx, source, *coords, iflag, eps, opts):
    dim = len(coords) // 2
    kw = dict(_plan_kw3(opts, dim))
    bins = list(kw.get("bin_size", (0, 0, 0)))
    rule = jax.ffi.ffi_lowering(TARGET)
    # The C plan's dimension 1 is the last axis: sources and targets each in reverse order.
    order = list(range(dim))[::-1] + [dim + d for d in range(dim)][::-1]
    cctx = ctx.replace(avals_in=[ctx.avals_in[0]] + [ctx.avals_in[1 + i] for i in order])
    return rule(cctx, source, *[coords[i] for i in order],
                nufft_type=np.int32(3), iflag=np.int32(1 if iflag >= 0 else -1),
                eps=np.float64(eps), modeord=np.int32(0), method=np.int32(kw.get("method", 0)),
                upsampfac=np.float64(kw.get("upsampfac", 2.0)),
                max_subprob=np.int32(kw.get("max_subprob", 0)),
                bin1=np.int32(bins[0]), bin2=np.int32(bins[1]), bin3=np.int32(bins[2]),
                n1=np.int64(1), n2=np.int64(1), n3=np.int64(1))


mlir.register_lowering(nufft3_p, _not_on_gpu)
mlir.register_lowering(nufft3_p, _lowering3, platform="cuda")


def apply3(source, points, targets, iflag, eps, opts):
    """jax-finufft's type-3 broadcasting: source (..., M), points (..., M), targets (..., K);
    the leading axes of the points and the targets broadcast together (one point set per
    combination), and with the source's as in :func:`apply` (axes where the coordinates have
    length 1 run as one batched transform). Returns (..., K)."""
    dim = len(points)
    if not 1 <= dim <= 3 or len(targets) != dim:
        raise ValueError(f"nufft3 takes 1, 2 or 3 point arrays followed by as many target "
                         f"arrays, got {dim + len(targets)} arrays")
    source = jnp.asarray(source)
    points = [jnp.asarray(p) for p in points]
    targets = [jnp.asarray(p) for p in targets]
    if not jnp.iscomplexobj(source):
        source = source.astype(jnp.result_type(source.dtype, jnp.complex64))
    real = jnp.finfo(source.dtype).dtype
    for what, arrs in (("points", points), ("targets", targets)):
        for i, p in enumerate(arrs):
            if jnp.iscomplexobj(p) or p.dtype != real:
                raise TypeError(f"{what} {'xyz'[i]} have dtype {p.dtype} but source is "
                                f"{source.dtype}: {what} must be {real}")
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
    sbatch, pshape = list(sshape[:-1]), list(lead)
    if len(sbatch) == len(pshape) + 1:  # the stacked-transforms axis of jax-finufft
        pshape.append(1)
        points = [p[..., None, :] for p in points]
        targets = [t[..., None, :] for t in targets]
    n = max(len(sbatch), len(pshape))
    sbatch = [1] * (n - len(sbatch)) + sbatch
    points = [p.reshape((1,) * (n - len(pshape)) + p.shape) for p in points]
    targets = [t.reshape((1,) * (n - len(pshape)) + t.shape) for t in targets]
    pshape = [1] * (n - len(pshape)) + pshape
    source = source.reshape(tuple(sbatch) + (M,))
    try:
        target = list(np.broadcast_shapes(tuple(sbatch), tuple(pshape)))
    except ValueError:
        raise ValueError(f"source's leading axes {tuple(sbatch)} do not broadcast with the "
                         f"points' {tuple(pshape)}") from None
    stacked = [i for i in range(n) if pshape[i] == 1 and target[i] != 1]
    kept = [i for i in range(n) if i not in stacked]
    perm = kept + stacked
    source = jnp.broadcast_to(source, tuple(target) + (M,)).transpose(perm + [n])
    G = int(np.prod([target[i] for i in kept], dtype=np.int64))
    T = int(np.prod([target[i] for i in stacked], dtype=np.int64))
    source = source.reshape((G, T, M))

    def canon(a, L):
        return (jnp.broadcast_to(a, tuple(target[i] if i in kept else 1 for i in range(n)) + (L,))
                .transpose(perm + [n]).reshape(G, L))

    coords = [canon(p, M) for p in points] + [canon(t, K) for t in targets]
    out = nufft3_p.bind(source, *coords, iflag=int(iflag), eps=float(eps), opts=opts)
    out = out.reshape(tuple(target[i] for i in perm) + (K,))
    return out.transpose(list(np.argsort(perm)) + [n])


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
    source, *coords = args
    bs, *bcs = dims
    dim = len(coords) // 2
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    source = jnp.moveaxis(source, bs, 0) if bs is not None else source[None]
    coords = [jnp.moveaxis(p, d, 0) if d is not None else p[None] for p, d in zip(coords, bcs)]
    if bs is None:
        source = jnp.broadcast_to(source, (size,) + source.shape[1:])
    return apply3(source, coords[:dim], coords[dim:], iflag, eps, opts), 0


batching.primitive_batchers[nufft3_p] = _batch3
