"""The Toeplitz normal operator T = A^H W A as JAX operations (docs/toeplitz.md):
:func:`toeplitz` (one call) and :class:`Toeplitz` (the kernel's spectrum computed once, then
applied many times, e.g. in a jitted CG loop).

A is the type-2 transform of sign ``iflag`` (jax-finufft's ``nufft2`` default, -1), A^H the
type-1 transform of sign ``-iflag``, W the weights (None, real or complex). Two primitives, both
lowered to XLA FFI handlers in libwarpfft.so (c_core/src/framework/xla_toeplitz.c):

* ``warpfft_toeplitz_spectrum`` (points, weights) -> the kernel's spectrum, an array of the
  grid's shape (L_d >= 2 N_d - 1 per axis), real unless the weights are complex;
* ``warpfft_toeplitz_apply`` (spectrum, modes (T, *n_modes)) -> T modes, or T^H with
  ``adjoint``: pad, FFT, product, inverse FFT, crop, with a zero operator of the C library's
  live-plan pool (shared with every other caller in the process, under its limits).

Derivatives (custom VJP, :func:`_normal`; JAX's cotangent convention is the transpose):
* modes: T is linear, so f_bar = T^T ct = conj(T^H conj(ct)) -- one application of the adjoint
  (for real weights or none, T^H = T);
* weights: d(T f)_k / dw_j = conj(A_jk) (A f)_j, so w_bar_j = sum_t (A f_t)_j conj((A conj(ct_t))_j)
  (two type-2 transforms at the points: warpfft.jax's nufft2), its real part for real weights;
  for T^H with complex weights (which reads conj(w)), the conjugate of that;
* points: not differentiable (a clear error when asked for; see :func:`_not_differentiable`).
The spectrum passed around inside is a cache of (points, weights): its own cotangent is zero
and it is never differentiated.
"""

import ctypes
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import batching

from .. import _lib
from .. import _options as _table
from .._args import effective_eps
from . import _common, _ops
from . import options as _options
from ._common import _concrete, register_lowerings

SPECTRUM_TARGET = "warpfft_toeplitz_spectrum"
APPLY_TARGET = "warpfft_toeplitz_apply"


# The handlers' exports (warpfft_xla.h) are declared with the rest of the ABI in _lib's one table.
jax.ffi.register_ffi_target(SPECTRUM_TARGET,
                            jax.ffi.pycapsule(_lib.lib.warpfft_xla_toeplitz_spectrum),
                            platform="CUDA", api_version=1)
jax.ffi.register_ffi_target(APPLY_TARGET, jax.ffi.pycapsule(_lib.lib.warpfft_xla_toeplitz_apply),
                            platform="CUDA", api_version=1)

spectrum_p = Primitive("warpfft_toeplitz_spectrum")
apply_p = Primitive("warpfft_toeplitz_apply")

_WEIGHTS = {"none": 0, "real": 1, "complex": 2}


# ---- the C library's choice (no GPU) --------------------------------------------------------


def _c_opts(kw):
    """The options record of resolved options `kw` (options.resolve: (table name, value)
    pairs, checked by the option table): the table's defaults for the rest."""
    return _table.record(kw)


@functools.lru_cache(maxsize=256)
def grid(n_modes, eps, precision, kw, weights):
    """The operator's grid (Python order) for n_modes (Python order): warpfft_toeplitz_params,
    which also checks eps, the sizes and the options (raising warpfft's error)."""
    buf = (ctypes.c_char * 4096)()
    info = ctypes.cast(buf, ctypes.POINTER(_lib.ToeplitzInfo))
    o = _c_opts(kw)
    _lib.check(_lib.lib.warpfft_toeplitz_params(
        len(n_modes), _lib.n_modes_array(list(n_modes)[::-1]), 1, float(eps), int(precision),
        ctypes.byref(o), _WEIGHTS[weights], info))
    d = len(n_modes)
    return tuple(int(v) for v in info.contents.n_grid[:d])[::-1]


def _precision(cdtype):
    if cdtype == np.complex64:
        return _lib.PRECISION_F32
    if cdtype == np.complex128:
        return _lib.PRECISION_F64
    raise TypeError(f"modes must be complex64 or complex128, not {cdtype}")


def _attrs(n_modes, eps, kw, **extra):
    """The handlers' attributes: the shape, eps, and the options record as one (its bytes in
    hex, xla_toeplitz.h)."""
    nc = list(n_modes)[::-1] + [1] * (3 - len(n_modes))
    out = dict(dim=np.int32(len(n_modes)), n1=np.int64(nc[0]), n2=np.int64(nc[1]),
               n3=np.int64(nc[2]), eps=np.float64(eps), opts=_table.to_hex(_c_opts(kw)))
    out.update({k: np.int32(v) for k, v in extra.items()})
    return out


# ---- the spectrum ---------------------------------------------------------------------------


def _spectrum_abstract(*args, n_modes, iflag, eps, kw, weights):
    dim = len(n_modes)
    points = args[:dim]
    real = np.dtype(points[0].dtype)
    if real not in (np.float32, np.float64):
        raise TypeError(f"points must be float32 or float64, not {real}")
    cdt = np.complex64 if real == np.float32 else np.complex128
    M = _concrete(points[0].shape, "points")
    for i, p in enumerate(points):
        if _concrete(p.shape, "points") != M or len(M) != 1 or np.dtype(p.dtype) != real:
            raise ValueError(f"points {'xyz'[i]} must be ({M[-1] if M else '?'},) {real}")
    if weights != "none":
        w = args[dim]
        want = real if weights == "real" else cdt
        if _concrete(w.shape, "weights") != M or np.dtype(w.dtype) != want:
            raise ValueError(f"weights must be {M} of {np.dtype(want).name}, got "
                             f"{tuple(w.shape)} {np.dtype(w.dtype).name}")
    L = grid(tuple(n_modes), eps, _precision(np.dtype(cdt)), kw, weights)
    return points[0].update(shape=L, dtype=cdt if weights == "complex" else real)


spectrum_p.def_abstract_eval(_spectrum_abstract)
_common.def_jitted_impl(spectrum_p)


def _spectrum_lowering(ctx, *args, n_modes, iflag, eps, kw, weights):
    dim = len(n_modes)
    order = list(range(dim))[::-1] + list(range(dim, len(args)))  # C order: x is the last axis
    rule = jax.ffi.ffi_lowering(SPECTRUM_TARGET)
    cctx = ctx.replace(avals_in=[ctx.avals_in[i] for i in order])
    return rule(cctx, *[args[i] for i in order],
                **_attrs(n_modes, eps, kw, iflag=1 if iflag >= 0 else -1,
                         weights=_WEIGHTS[weights]))


register_lowerings(spectrum_p, _spectrum_lowering)


def _spectrum_batch(args, dims, **params):
    """A batch of point sets (or weights): one spectrum each, in a loop (computed once per
    operator, outside the iterations)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    args = [jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size,) + a.shape)
            for a, d in zip(args, dims)]
    return jax.lax.map(lambda xs: spectrum_p.bind(*xs, **params), args), 0


batching.primitive_batchers[spectrum_p] = _spectrum_batch


# ---- the application ------------------------------------------------------------------------


def _apply_abstract(spectrum, f, *, n_modes, eps, kw, adjoint):
    cdt = np.dtype(f.dtype)
    prec = _precision(cdt)
    fshape = _concrete(f.shape, "modes")
    if fshape[1:] != tuple(n_modes):
        raise ValueError(f"modes have shape {fshape}, expected (T, *{tuple(n_modes)})")
    sdt = np.dtype(spectrum.dtype)
    real = np.float32 if cdt == np.complex64 else np.float64
    if sdt not in (np.dtype(real), cdt):
        raise TypeError(f"the spectrum has dtype {sdt}; modes {cdt} need {np.dtype(real).name} "
                        f"or {cdt.name}")
    L = grid(tuple(n_modes), eps, prec, kw, "real")
    if _concrete(spectrum.shape, "spectrum") != L:
        raise ValueError(f"the spectrum has shape {tuple(spectrum.shape)}, expected {L}")
    return f.update(shape=fshape, dtype=cdt)


apply_p.def_abstract_eval(_apply_abstract)
_common.def_jitted_impl(apply_p)


def _apply_lowering(ctx, spectrum, f, *, n_modes, eps, kw, adjoint):
    rule = jax.ffi.ffi_lowering(APPLY_TARGET)
    return rule(ctx, spectrum, f, **_attrs(n_modes, eps, kw, adjoint=int(bool(adjoint))))


register_lowerings(apply_p, _apply_lowering)


def _apply_batch(args, dims, *, n_modes, eps, kw, adjoint):
    spectrum, f = args
    ds, df = dims
    params = dict(n_modes=n_modes, eps=eps, kw=kw, adjoint=adjoint)
    if ds is None:  # a batch of modes over one spectrum: one batched application
        f = jnp.moveaxis(f, df, 0)
        B, T = f.shape[0], f.shape[1]
        out = apply_p.bind(spectrum, f.reshape((B * T,) + tuple(n_modes)), **params)
        return out.reshape((B, T) + tuple(n_modes)), 0
    spectrum = jnp.moveaxis(spectrum, ds, 0)
    size = spectrum.shape[0]
    f = jnp.moveaxis(f, df, 0) if df is not None else jnp.broadcast_to(f, (size,) + f.shape)
    return jax.lax.map(lambda sf: apply_p.bind(sf[0], sf[1], **params), (spectrum, f)), 0


batching.primitive_batchers[apply_p] = _apply_batch


# ---- derivatives ----------------------------------------------------------------------------


@jax.custom_jvp
def _not_differentiable(points):
    """The points, as they are; differentiating through them raises (the operator has no
    derivative with respect to the points)."""
    return points


def _points_jvp(primals, tangents):
    if any(type(t) is not jax.custom_derivatives.SymbolicZero for t in tangents[0]):
        raise NotImplementedError("warpfft.jax.toeplitz is not differentiable with respect to "
                                  "the points (only the modes and the weights)")
    return primals[0], tuple(jnp.zeros_like(p) for p in primals[0])


_not_differentiable.defjvp(_points_jvp, symbolic_zeros=True)


def _apply(static, spectrum, f, adjoint):
    n_modes, iflag, eps, kw, opts, weights = static
    lead = f.shape[:f.ndim - len(n_modes)]
    T = int(np.prod(lead, dtype=np.int64))
    out = apply_p.bind(spectrum, f.reshape((T,) + tuple(n_modes)), n_modes=tuple(n_modes),
                       eps=eps, kw=kw, adjoint=bool(adjoint))
    return out.reshape(f.shape)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _normal(static, adjoint, f, weights, spectrum, points):
    return _apply(static, spectrum, f, adjoint)


def _normal_fwd(static, adjoint, f, weights, spectrum, points):
    return _apply(static, spectrum, f, adjoint), (f, weights, spectrum, points)


def _normal_bwd(static, adjoint, res, ct):
    f, weights, spectrum, points = res
    n_modes, iflag, eps, kw, opts, kind = static
    f_bar = jnp.conj(_apply(static, spectrum, jnp.conj(ct), not adjoint))
    w_bar = None
    if weights is not None:
        # u = A f, v = A conj(ct) at the points, per transform: one nufft2 over both stacks
        both = jnp.stack([f, jnp.conj(ct)]).astype(f.dtype)
        uv = _ops.apply(2, both, tuple(points), None, iflag, eps, opts)
        u, v = uv[0], uv[1]
        g = jnp.sum((u * jnp.conj(v)).reshape((-1, u.shape[-1])), axis=0)
        if kind == "real":
            w_bar = jnp.real(g).astype(weights.dtype)
        else:
            w_bar = (jnp.conj(g) if adjoint else g).astype(weights.dtype)
    return f_bar, w_bar, jnp.zeros_like(spectrum), tuple(jnp.zeros_like(p) for p in points)


_normal.defvjp(_normal_fwd, _normal_bwd)


# ---- user level -----------------------------------------------------------------------------


def _weights_kind(weights, real_dtype):
    if weights is None:
        return "none", None
    w = jnp.asarray(weights)
    if jnp.iscomplexobj(w):
        cdt = jnp.complex64 if real_dtype == np.float32 else jnp.complex128
        if w.dtype != cdt:
            raise TypeError(f"complex weights must be {np.dtype(cdt).name} like the modes, not "
                            f"{w.dtype}")
        return "complex", w
    if w.dtype != real_dtype:
        raise TypeError(f"real weights must be {np.dtype(real_dtype).name} like the points, not "
                        f"{w.dtype}")
    return "real", w


def _setup(n_modes, points, weights, iflag, eps, opts):
    dim = len(points)
    if not 1 <= dim <= 3:
        raise ValueError(f"1, 2 or 3 point arrays (x[, y[, z]]), got {dim}")
    n_modes = (n_modes,) if isinstance(n_modes, (int, np.integer)) else tuple(n_modes)
    try:
        n_modes = tuple(int(n) for n in n_modes)
    except TypeError:
        raise TypeError(f"n_modes must be an int or a tuple of ints, got {n_modes!r}") from None
    if len(n_modes) != dim:
        raise ValueError(f"n_modes {n_modes} has {len(n_modes)} entries for {dim} point arrays")
    points = tuple(jnp.asarray(p) for p in points)
    real = np.dtype(points[0].dtype)
    if real not in (np.float32, np.float64):
        raise TypeError(f"points must be float32 or float64, not {real}")
    kind, w = _weights_kind(weights, real)
    frozen = _common.freeze(opts)
    kw = _options.resolve(_options.unpack(frozen, 2, True), dim)
    iflag = 1 if int(iflag) >= 0 else -1
    cdt = np.complex64 if real == np.float32 else np.complex128
    eps = effective_eps(eps, _precision(np.dtype(cdt)))  # the C rule, warned
    grid(n_modes, eps, _precision(np.dtype(cdt)), kw, kind)  # checks, before anything runs
    static = (n_modes, iflag, eps, kw, frozen, kind)
    return static, points, w, cdt


def _spectrum(static, points, w):
    n_modes, iflag, eps, kw, opts, kind = static
    args = [jax.lax.stop_gradient(p) for p in points]
    if w is not None:
        args.append(jax.lax.stop_gradient(w))
    return spectrum_p.bind(*args, n_modes=tuple(n_modes), iflag=iflag, eps=eps, kw=kw,
                           weights=kind)


def _no_real_data(real_data):
    if bool(real_data):
        raise ValueError("real_data=True: the Toeplitz operator works on complex modes only; "
                         "real data is for nufft1 / nufft2 (docs/real.md)")


class Toeplitz:
    """``T = A^H W A`` of M points, its kernel's spectrum computed once (when made; under jit,
    where it is traced):

    ``Toeplitz(n_modes, x[, y[, z]], weights=None, iflag=-1, eps=1e-6, opts=None)``

    ``op(f)`` applies T to modes ``f`` of shape (..., *n_modes) (leading axes: one batched
    application); ``op(f, adjoint=True)`` applies T^H. Differentiable with respect to ``f``
    and ``weights`` (jax.grad/vjp; jit; vmap). A pytree: pass it into jitted functions.
    ``op.spectrum`` is the spectrum (grid shape, Python order).
    """

    def __init__(self, n_modes, *points, weights=None, iflag=-1, eps=1e-6, opts=None,
                 real_data=False, _state=None):
        if _state is not None:  # unflatten
            self._static, self.points, self.weights, self.spectrum = _state
            return
        _no_real_data(real_data)
        static, pts, w, _ = _setup(n_modes, points, weights, iflag, eps, opts)
        self._static, self.points, self.weights = static, pts, w
        self.spectrum = _spectrum(static, pts, w)

    n_modes = property(lambda self: self._static[0])

    def __call__(self, f, adjoint=False):
        f = jnp.asarray(f)
        n_modes = self._static[0]
        if f.ndim < len(n_modes) or tuple(f.shape[f.ndim - len(n_modes):]) != n_modes:
            raise ValueError(f"modes have shape {tuple(f.shape)}: the last axes must be "
                             f"{n_modes}")
        want = np.complex64 if np.dtype(self.points[0].dtype) == np.float32 else np.complex128
        if f.dtype != want:
            raise TypeError(f"modes must be {np.dtype(want).name} like the points, not {f.dtype}")
        pts = _not_differentiable(tuple(self.points))
        return _normal(self._static, bool(adjoint), f, self.weights, self.spectrum, pts)

    def tree_flatten(self):
        return (self.points, self.weights, self.spectrum), self._static

    @classmethod
    def tree_unflatten(cls, static, children):
        points, weights, spectrum = children
        return cls(None, _state=(static, tuple(points), weights, spectrum))


jax.tree_util.register_pytree_node_class(Toeplitz)


def toeplitz(f, *points, weights=None, iflag=-1, eps=1e-6, opts=None, adjoint=False,
             real_data=False):
    """``T f = A^H (W (A f))`` in one call (the kernel's spectrum computed here): f complex
    (..., *n_modes) with n_modes its last len(points) axes; points x[, y[, z]] (M,) of f's real
    type; weights None, (M,) real or (M,) complex. For repeated applications make a
    :class:`Toeplitz` once. real_data=True raises ValueError (docs/real.md)."""
    _no_real_data(real_data)
    f = jnp.asarray(f)
    dim = len(points)
    if f.ndim < dim:
        raise ValueError(f"modes have shape {tuple(f.shape)}: need {dim} mode axes")
    op = Toeplitz(tuple(f.shape[f.ndim - dim:]), *points, weights=weights, iflag=iflag, eps=eps,
                  opts=opts)
    return op(f, adjoint=adjoint)


def operators_created():
    """Zero operators (grid and FFT plans) the live-plan pool has created in this process: the
    apply handler takes its operators from it (so does warpfft.torch's Toeplitz operator)."""
    from .._cache import info

    return int(info()["operators_created"])


def clear_cache():
    """Frees the pool's idle plans and operators (warpfft.jax.clear_plan_cache): an operator a
    running computation uses goes when that call ends."""
    _lib.check(_lib.lib.warpfft_pool_clear(), "warpfft_pool_clear")
