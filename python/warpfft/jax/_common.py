"""What the type 1/2 primitive (:mod:`._ops`) and the type 3 primitive (:mod:`._type3`) share:
the XLA FFI target, options, shape and dtype checks, the call to the handler, the eager
implementation, and jax-finufft's broadcasting of leading axes down to the canonical
(G, T, ...) form both primitives bind: G point sets, T transforms sharing each.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import mlir

from .. import _lib as native
from .. import _options as _table
from . import options as _options

TARGET = "warpfft_nufft"

jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(native.lib.warpfft_xla_nufft),
                            platform="CUDA", api_version=1)


# ---- options and validation -------------------------------------------------------------


class _Options(tuple):
    """Options given as a dict with a name of the option table that the Opts dataclass does not
    list (a warpfft option added later, by its name): hashable, read by name (options._fields)."""

    def __init__(self, items):
        self.__dict__.update(items)


def freeze(opts):
    """A hashable options object (dicts become Opts / NestedOpts); ValueError for unknown names."""
    if opts is None:
        return None
    if isinstance(opts, dict):
        if opts and set(opts) <= set(_options._NESTED):
            return _options.NestedOpts(**{k: freeze(v) for k, v in opts.items()})
        known = {f.name for f in _options.dataclasses.fields(_options.Opts)}
        unknown = sorted(set(opts) - known - set(_table.SPELLINGS))
        if unknown:
            raise ValueError(f"opts: unknown option(s) {', '.join(unknown)}")
        if set(opts) <= known:
            return _options.Opts(**opts)
        return _Options(sorted(opts.items()))  # an option of the table that Opts does not list
    try:
        hash(opts)
    except TypeError:
        return freeze(_options._fields(opts))
    return opts


def plan_record(opts, nufft_type, dim, real=False):
    """The options record (_options.record: checked by the option table, shared, read-only) of
    a transform of `nufft_type`. gpu_method 3 (OD, a spreading method) has no effect on type 2,
    as in the reference; a deterministic type 1 or 3 spreads output-driven, so GM and SM (1, 2:
    atomics) give way to AUTO there, as in warpfft.torch (they stay for type 2, where they are
    deterministic); type 3 has no mode order. real: real_data set (the real primitive, ._real;
    the user's options never set it, options.resolve refuses it there)."""
    kw = dict(_options.resolve(_options.unpack(opts, nufft_type, True), dim))
    method = kw.get("method")
    atomics = (_table.value("method", "GM"), _table.value("method", "SM"))
    if (nufft_type == 2 and method == _table.value("method", "OD")) or (
            nufft_type != 2 and kw.get("deterministic") and method in atomics):
        del kw["method"]
    if nufft_type == 3:
        kw.pop("modeord", None)
    if real:
        kw["real_data"] = 1
    return _table.record(tuple(sorted(kw.items())))


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


# ---- eager implementation and lowering ------------------------------------------------------


def def_jitted_impl(prim):
    """Eager calls of `prim` run one cached jitted executable per set of parameters."""

    @functools.lru_cache(maxsize=None)
    def jitted_bind(params):
        return jax.jit(functools.partial(prim.bind, **dict(params)))

    def impl(*args, **params):
        return jitted_bind(tuple(sorted(params.items())))(*args)

    prim.def_impl(impl)


def _not_on_gpu(ctx, *args, **params):
    platforms = ", ".join(ctx.module_context.platforms)
    raise NotImplementedError(
        f"warpfft.jax runs on CUDA GPUs only; this computation is lowered for {platforms}. "
        "Put the arrays on a GPU (jax.device_put(x, jax.devices('gpu')[0])) or use a CPU NUFFT "
        "(e.g. jax-finufft's CPU build) for CPU arrays.")


def register_lowerings(prim, lowering):
    """`lowering` for CUDA; every other platform raises NotImplementedError saying so."""
    mlir.register_lowering(prim, _not_on_gpu)
    mlir.register_lowering(prim, lowering, platform="cuda")


def call_handler(ctx, source, coords, order, *, nufft_type, iflag, eps, opts, nc):
    """The custom call of the handler: `source`, then coords[i] for i in `order` (the C plan's
    order: its dimension 1 is the last axis); `opts` the options record (plan_record), passed
    as one attribute (its bytes in hex: the handler reads them, xla_ffi.h), `nc` the C plan's
    three mode counts. The handler sets the plan's points_hint itself, from the points
    buffers' M (types 1 and 2; rounded to a power of two, as _lib.points_hint_for)."""
    rule = jax.ffi.ffi_lowering(TARGET)
    cctx = ctx.replace(avals_in=[ctx.avals_in[0]] + [ctx.avals_in[1 + i] for i in order])
    return rule(cctx, source, *[coords[i] for i in order],
                nufft_type=np.int32(nufft_type), iflag=np.int32(1 if iflag >= 0 else -1),
                eps=np.float64(eps), opts=_table.to_hex(opts),
                n1=np.int64(nc[0]), n2=np.int64(nc[1]), n3=np.int64(nc[2]))


# ---- user-level broadcasting ----------------------------------------------------------------


def as_arrays(source, named):
    """`source` as a complex jax array and each ("what", arrays) of `named` as jax arrays of its
    real type (TypeError naming the array otherwise). Returns (source, [arrays, ...])."""
    source = jnp.asarray(source)
    named = [(what, [jnp.asarray(p) for p in arrs]) for what, arrs in named]
    if not jnp.iscomplexobj(source):
        source = source.astype(jnp.result_type(source.dtype, jnp.complex64))
    real = jnp.finfo(source.dtype).dtype
    for what, arrs in named:
        for i, p in enumerate(arrs):
            if jnp.iscomplexobj(p) or p.dtype != real:
                raise TypeError(f"{what} {'xyz'[i]} have dtype {p.dtype} but source is "
                                f"{source.dtype}: {what} must be {real}")
    return source, [arrs for _, arrs in named]


def canonical(source, core, coords, lead):
    """jax-finufft's broadcasting, shared by both primitives: `source` (..., *core axes),
    `coords` arrays of shape (*lead, L) (L may differ between arrays). The leading axes of the
    source and `lead` broadcast; axes where the coordinates have length 1 (and, when the source
    has one more leading axis than `lead`, that axis) are stacked into T transforms sharing one
    point set. Returns (source (G, T, *core), coords each (G, L), restore), where restore maps a
    result (G, T, *out core) back to (*broadcast leading axes, *out core)."""
    sshape = _concrete(source.shape, "source")
    sbatch, score = list(sshape[:len(sshape) - core]), sshape[len(sshape) - core:]
    pshape = list(lead)
    if len(sbatch) == len(pshape) + 1:  # the stacked-transforms axis of jax-finufft
        pshape.append(1)
        coords = [p[..., None, :] for p in coords]
    n = max(len(sbatch), len(pshape))
    sbatch = [1] * (n - len(sbatch)) + sbatch
    coords = [p.reshape((1,) * (n - len(pshape)) + p.shape) for p in coords]
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
    coords = [jnp.broadcast_to(p, tuple(target[i] if i in kept else 1 for i in range(n))
                               + p.shape[-1:]).transpose(perm + [n]).reshape(G, p.shape[-1])
              for p in coords]

    def restore(out):
        out_core = tuple(out.shape[2:])
        out = out.reshape(tuple(target[i] for i in perm) + out_core)
        return out.transpose(list(np.argsort(perm)) + list(range(n, n + len(out_core))))

    return source, coords, restore


# ---- batching -------------------------------------------------------------------------------


def unbatched(args, dims):
    """A batching rule's (source, *coordinates) with the batch axis first on the source (and
    broadcast to it when unbatched) and on every coordinate array (length 1 when unbatched):
    apply()/apply3() then stack the batch into the transforms sharing those points (one plan
    with a larger ntransf, not a loop). Returns (source, coords)."""
    source, *coords = args
    bs, *bcs = dims
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    source = jnp.moveaxis(source, bs, 0) if bs is not None else source[None]
    coords = [jnp.moveaxis(p, d, 0) if d is not None else p[None] for p, d in zip(coords, bcs)]
    if bs is None:
        source = jnp.broadcast_to(source, (size,) + source.shape[1:])
    return source, coords
