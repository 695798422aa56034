"""warpfft.torch: GPU NUFFTs as differentiable PyTorch operations, with pytorch-finufft's
functional API.

Switching from pytorch-finufft is one import::

    from warpfft.torch import finufft_type1, finufft_type2, finufft_type3
    # was: from pytorch_finufft.functional import finufft_type1, finufft_type2, finufft_type3

    f = finufft_type1(points, values, (N1, N2), eps=1e-6, isign=-1)   # (..., M) -> (..., N1, N2)
    c = finufft_type2(points, f, eps=1e-6, isign=-1)                  # (..., N1, N2) -> (..., M)
    g = finufft_type3(points, c, targets, eps=1e-6, isign=-1)         # (..., M) -> (..., K)

Conventions (as pytorch-finufft): ``points`` has shape (D, M) (or (M,) in 1D), x first; leading
axes of ``values`` / ``targets`` are batch axes sharing the points (one batched plan); defaults
``isign=-1``, ``modeord=1`` (FFT order, as torch.fft; ``modeord=0``: -N/2..N/2-1), ``eps=1e-6``.
Tensors must be CUDA tensors on one device; values complex64 with float32 points, or
complex128 with float64 points. The ops ``torch.ops.warpfft.*`` check shapes, dtypes and
devices themselves too (TypeError for a dtype, ValueError for a shape or a device), before the
C library sees a pointer, as do their fake implementations under torch.compile.

The operations are ``torch.library`` ops (``torch.ops.warpfft.nufft1`` / ``2`` / ``3``)
with fake implementations, so they work under ``torch.compile`` and with fake tensors, and
with autograd formulas for the values and the points (``torch.autograd.gradcheck`` passes in
float64). They run on torch's current CUDA stream of the tensors' device.
An eager type-1/2 call with no gradient to record (plain tensors, no mode or transform active)
runs the op's kernel directly instead of through the dispatcher (see :func:`_direct`).

**Real data** (``real_data=True``, docs/real.md; types 1 and 2): ``finufft_type1(points,
values, (N1, N2), real_data=True)`` takes real values (float32 or float64, the points' dtype)
and returns the complex half modes (..., N1, N2//2 + 1) -- the last axis halved as
torch.fft.rfftn halves it, k = 0 .. N2//2 along it whatever modeord; ``finufft_type2(points,
half, real_data=True)`` takes such half modes (..., N1, H) and returns real values (..., M),
Re(sum over the half of a_k f_k e^{..}) with a_k = 2 for k_last > 0 (planned with N = 2H - 1).
Both have autograd for the values and the points; type 3 and the Toeplitz operator refuse it.

**Determinism.** By default types 1 and 3 spread with float atomics: results (and type 2's
gradients) may differ in the last bits from run to run. Under
``torch.use_deterministic_algorithms(True)``, or with the keyword ``deterministic=True``, every
op, forward and backward, runs on the library's deterministic plans instead: the same inputs
give the same bits on every run (output-driven spreading after a stable sort; spreading is
3-4x slower, docs/spreaders.md); ``gpu_method`` 1 or 2 (GM, SM: atomics) then give way to
output-driven spreading. Type 2 sums in a fixed order either way.
Tensors with the lazy conjugate or negative bit (``x.conj()``) are read as their values.

**Batched points** (warpfft's extension, not pytorch-finufft's; docs/batched-points.md):
``points`` of shape (S, D, M) -- (S, 1, M) in 1D -- hold S point sets, S dividing the B
transforms of the (flattened) batch: set s is used by transforms s * B / S .. (S = B: a set per
transform), all in one plan. ``finufft_type1(points, values, shape)`` with points (B, D, M) and
values (B, M) returns (B, *shape), transform b on points[b]; type 3 takes targets (S, D, K).
Gradients flow to the (S, D, M) points as to (D, M) ones.

**Points are not checked for NaN or infinity.** The plans use the library's unchecked
set-points (``check_points = 0``, so setting points never waits on the host): a non-finite
coordinate gives a result that is all NaN, not an exception. Check ``torch.isfinite(points)``
yourself where the points come from outside.

The Toeplitz normal operator ``T = A^H W A`` (type 2, weights, type 1 as one convolution:
docs/toeplitz.md) is :class:`Toeplitz` (``op = Toeplitz(points, n_modes, weights=w)`` once,
``op(f)`` per iteration) and :func:`toeplitz`, with autograd for the modes and the weights.

Plans come from the C library's live-plan pool, shared with warpfft's one-call functions and
warpfft.jax (limits: ``warpfft.set_plan_cache_limits``; ``warpfft.plan_cache_info()``), per
(type, modes, batch, eps, isign, precision, options, device, stream); a plan is the call's alone
while it runs, so threads never share one.
**Points are re-sorted only when they change:** when a call passes the same points tensor as
the previous call with that plan -- same storage (data pointer), shape, strides, dtype and an
unchanged version counter (``tensor._version``, bumped by every in-place PyTorch operation) --
and the points do not require grad, and the plan still holds them (nothing else set points on
it since: the library's points id says so), the previous set-points (sorting) is reused and
only the transform runs, as in an iterative reconstruction that applies the operator many times
with one trajectory. Points that require grad (being optimised, or perturbed by gradcheck) are
set on every call, and so are inference tensors' (made under ``torch.inference_mode()``: they
have no version counter) and type 3's points and targets (its plans are pooled without M or
K). A reference to that points tensor is kept with the plan's record (so its memory cannot be
reused for another tensor; at most 64 records). Changes made behind PyTorch's back (through
``.data``, raw pointers or another library) are not seen: pass a new tensor, or call
:func:`clear_plan_cache`, after such changes.
"""

import math

import torch as _torch

from .. import _lib as _native
from .. import _options as _table
from .._args import effective_eps
from . import _ops, _real
from ._ops import clear_cache as clear_plan_cache
from ._ops import nufft1_op, nufft2_op, nufft3_op
from ._toeplitz import Toeplitz, toeplitz

__all__ = ["finufft_type1", "finufft_type2", "finufft_type3", "clear_plan_cache", "stats",
           "nufft1_op", "nufft2_op", "nufft3_op", "op_options", "toeplitz", "Toeplitz"]

# pytorch-finufft's option names onto the C library's option table: the table's spellings of
# them (cufinufft's gpu_* names, upsampfac and gpu_upsampfac alike, warpfft's deterministic) are
# set through it (its checks, its messages); the bins go in the C plan's dimension order. What
# this front-end adds: its reference's defaults where they differ from the table's (FFT mode
# order, as torch.fft), the options it cannot honour but at their default, and FINUFFT's CPU
# options, accepted without effect.
OWN_DEFAULTS = {"modeord": 1}
_CPU = {"nthreads", "fftw", "spread_sort", "spread_kerevalmeth", "spread_kerpad",
        "spread_thread", "maxbatchsize", "spread_nthr_atomic", "spread_max_sp_size", "chkbnds",
        "showwarn", "spread_debug"}
_MUST_BE_DEFAULT = {"gpu_sort", "gpu_spreadinterponly", "debug", "gpu_debug"}
_PER_CALL = {"check_points", "points_hint"}  # set by the ops (unchecked points; the call's M)


_PLAIN = frozenset((int, float, bool, str, type(None)))
_options_memo = {}


def _options(kwargs, dim, device, precision, compiling):
    """(eps the plan runs at, isign, the options record in hex) of the keywords, parsed and
    checked; memoised per (keywords, dim, device, precision) when every value is a plain Python
    scalar (an op call parses the same keywords every time). Errors are raised every time
    (never memoised). Under torch.compile the keywords are constants: parsed once at trace time
    (the C calls behind them are not traced), the result a constant of the graph."""
    if compiling:
        dim = 1 if dim == 1 else 2 if dim == 2 else 3  # a constant (guarded), not a SymInt
        return _parsed_constant(tuple(kwargs.items()), dim, device.index, precision)
    key = None
    if _PLAIN.issuperset(map(type, kwargs.values())):
        key = (tuple(kwargs.items()), dim, device, precision)
        hit = _options_memo.get(key)
        if hit is not None:
            return hit
    parsed = _parsed(tuple(kwargs.items()), dim, device.index, precision)
    if key is not None:
        if len(_options_memo) >= 256:
            _options_memo.clear()
        _options_memo[key] = parsed
    return parsed


def _parsed(items, dim, device_index, precision):
    eps, isign, opts = _parse_options(dict(items), dim, device_index)
    return effective_eps(eps, precision), isign, opts  # the C rule, warned


_parsed_constant = getattr(_torch.compiler, "assume_constant_result", lambda f: f)(_parsed)


def _table_name(name, dim):
    """The option table's name of keyword `name` for `dim`-D points, None for a bin past dim."""
    if name.startswith("gpu_binsize") and name[-1:] in ("x", "y", "z"):
        axis = "xyz".index(name[-1])
        return None if axis >= dim else f"bin_size[{dim - 1 - axis}]"
    return _table.spelled(name)


def _parse_options(kwargs, dim, device_index):
    """(eps, isign, the options record in hex): eps and isign are the transform's arguments
    (pytorch-finufft's defaults), the rest options set through the table (op_options); a
    gpu_device_id must be `device_index`, the tensors' device (None: not checked)."""
    kw = dict(kwargs)
    eps = kw.pop("eps", 1e-6)
    isign = int(kw.pop("isign", -1))
    return eps, isign, _options_hex(kw, dim, device_index)


def _options_hex(kw, dim, device_index=None):
    items = dict(OWN_DEFAULTS)
    for name, value in kw.items():
        if name in _CPU:
            if name == "spread_debug" and value:
                raise ValueError(f"{name}={value!r} is not supported by warpfft")
            continue
        if name == "gpu_stream":
            if value is not None:
                raise ValueError("gpu_stream is not supported: warpfft.torch runs on torch's "
                                 "current stream (use `with torch.cuda.stream(s):`)")
            continue
        target = _table_name(name, dim)
        if target is None and not name.startswith("gpu_binsize"):
            raise ValueError(f"unknown or unsupported option(s): {name}")
        if name in _MUST_BE_DEFAULT or target in _PER_CALL:
            if name in _MUST_BE_DEFAULT and value == _table.default(target):
                continue
            raise ValueError(f"{name}={value!r} is not supported by warpfft")
        if target is not None and value is not None:
            items[target] = value
    rec = _table.record(tuple(items.items()))
    if "device" in items and device_index is not None and rec.device != device_index:
        raise ValueError(f"gpu_device_id={rec.device} but the tensors are on cuda:"
                         f"{device_index}: warpfft.torch runs where the tensors are")
    return _table.to_hex(rec)


def op_options(dim, **kwargs):
    """The ``opts`` argument of torch.ops.warpfft.nufft1/2/3 for `dim`-D points from the
    option keywords finufft_type1 takes (eps and isign are the ops' own arguments): the
    warpfft_opts record, set through the C library's option table, in hex."""
    return _options_hex(kwargs, dim)


def _real_data(kwargs):
    """Whether the keywords ask for real_data (a value the option table refuses raises when the
    options are parsed)."""
    v = kwargs.get("real_data")
    if v is None or isinstance(v, (str, bytes, float)):
        return False
    try:
        return bool(v)  # bools, ints and numpy's, as the table reads them
    except (TypeError, ValueError):
        return False


def _check(points, data, what, real=False):
    """points as (D, M) or (S, D, M), checked against `data`: complex64 / complex128 with points
    of its real dtype; real (type 1 with real_data): real values, the points' dtype."""
    if not isinstance(points, _torch.Tensor) or not isinstance(data, _torch.Tensor):
        raise TypeError(f"points and {what} must be torch tensors")
    if real:
        if data.dtype not in _real.COMPLEX:
            raise TypeError(f"real_data=True: type 1 takes real {what} (float32 or float64), "
                            f"not {data.dtype}")
        want = data.dtype
    elif data.dtype == _torch.complex64:
        want = _torch.float32
    elif data.dtype == _torch.complex128:
        want = _torch.float64
    else:
        hint = (" (real_data=True: type 1 takes real values; type 2 takes the complex half "
                "modes and returns real values)" if data.dtype in _real.COMPLEX else "")
        raise TypeError(f"{what} must be complex64 or complex128, not {data.dtype}{hint}")
    if points.dtype != want:
        raise TypeError(f"points have dtype {points.dtype} but {what} are {data.dtype}: points "
                        f"must be {want}")
    if points.ndim < 2:  # (M,) in 1D (and a scalar as one point), as torch.atleast_2d
        points = points.reshape(1, -1)
    if points.ndim not in (2, 3) or not 1 <= points.shape[-2] <= 3:
        raise ValueError(f"points must have shape (D, M) with D = 1, 2 or 3, or (S, D, M) "
                         f"(batched points: S point sets), got {tuple(points.shape)}")
    return points


def _check_sets(points, batch, what):
    """Batched points (S, D, M): S must divide the number of transforms."""
    if _count(batch) % points.shape[0]:
        raise ValueError(f"points hold S = {points.shape[0]} point sets (shape "
                         f"{tuple(points.shape)}), which must divide the {_count(batch)} "
                         f"transforms of the {what} (set s feeds transforms s * B / S ..)")


def _check_values(values, M):
    if values.ndim < 1 or values.shape[-1] != M:
        raise ValueError(f"values have shape {tuple(values.shape)}: the last axis must have the "
                         f"points' M = {M}")


def _count(batch):
    """Transforms in a batch of shape `batch` (at least 1: the C checks take ntransf >= 1)."""
    return max(math.prod(int(n) for n in batch), 1)


def _validate(nufft_type, modes, batch, eps, dtype, opts, compiling):
    """Tolerance, sizes and options checked by the C library (no GPU needed) before the op
    runs or is traced, with the op's rules applied (its record: op_record): a tol the options
    cannot reach raises InvalidArgumentError naming eps."""
    if compiling:  # traced: the op checks the same when it runs
        return
    key = (nufft_type, tuple(modes), tuple(batch), eps, dtype, opts)
    if key in _validated:  # what passed once passes again (the C check is a pure function)
        return
    rec = _table.from_hex(_ops.op_record(opts, nufft_type))
    _native.validate(nufft_type, list(modes)[::-1], _count(batch), eps, _ops._precision(dtype),
                     rec)
    if len(_validated) >= 256:
        _validated.clear()
    _validated.add(key)


_validated = set()


def _check_device(points, data, what):
    if data.device.type != "cuda":
        raise ValueError(f"warpfft.torch runs on CUDA tensors; {what} is on {data.device} (move "
                         "the tensors with .cuda(), or use a CPU NUFFT for CPU tensors)")
    if points.device != data.device:
        raise ValueError(f"points are on {points.device} but {what} on {data.device}: both must "
                         "be on one device")


_Tensor = _torch.Tensor
_dispatch_modes = getattr(_torch._C, "_len_torch_dispatch_stack", None)
_function_mode = getattr(_torch._C, "_is_torch_function_mode_enabled", None)
_transforms = getattr(getattr(_torch._C, "_functorch", None), "peek_interpreter_stack", None)
try:
    from torch.autograd import forward_ad as _forward_ad
except ImportError:  # pragma: no cover
    _forward_ad = None
_CAN_DIRECT = None not in (_dispatch_modes, _function_mode, _transforms) and hasattr(
    _forward_ad, "_current_level")


def _direct(a, b):
    """True when an eager call may run the op's kernel itself -- exactly what the dispatcher
    would run (the Autograd kernel redispatches below autograd when no gradient flows) -- and
    save the dispatcher's two Python hops (~7 us a call): plain tensors, no gradient to record,
    and nothing that must see the op (a dispatch or function mode such as FakeTensorMode, a
    torch.func transform, forward-mode AD, tracing). Otherwise the call goes through
    torch.ops.warpfft as usual."""
    if not _CAN_DIRECT or type(a) is not _Tensor or type(b) is not _Tensor:
        return False
    if (a.requires_grad or b.requires_grad) and _torch.is_grad_enabled():
        return False
    return (_dispatch_modes() == 0 and not _function_mode() and _transforms() is None
            and _forward_ad._current_level == -1)


def finufft_type1(points, values, output_shape, **finufftkwargs):
    """Type 1 (non-uniform to uniform): f[k] = sum_j c[j] exp(isign * i * k . x_j).

    points: (D, M) (or (M,) for D = 1) real -- or (S, D, M), batched points (the module's
    doc); values: complex (..., M); output_shape: an int
    (D = 1) or a tuple of D ints. Returns (..., *output_shape). Keywords: eps (1e-6), isign
    (-1), modeord (1: FFT order), upsampfac or gpu_upsampfac (0: chosen per plan for M
    points; or any value in [1.25, 3]), deterministic (False; True: the same bits every run,
    also under torch.use_deterministic_algorithms(True)), real_data (False; True: values real,
    float32 or float64, and the result the complex half modes (..., N1, .., ND//2 + 1): the
    module's doc), and cufinufft's gpu_* option names where they apply.
    """
    real = _real_data(finufftkwargs)
    points = _check(points, values, "values", real)
    D, M = points.shape[-2:]
    if isinstance(output_shape, int):
        if D != 1:
            raise ValueError(f"output_shape must be a tuple of {D} ints for {D}D points")
        output_shape = (output_shape,)
    output_shape = tuple(map(int, output_shape))
    if len(output_shape) != D or any(n < 1 for n in output_shape):
        raise ValueError(f"output_shape {output_shape} must be {D} positive ints")
    _check_values(values, M)
    compiling = _torch.compiler.is_compiling()
    cdtype = _real.COMPLEX[values.dtype] if real else values.dtype
    eps, isign, opts = _options(finufftkwargs, D, values.device, _ops._precision(cdtype),
                                compiling)
    batch = values.shape[:-1]
    if points.ndim == 3:
        _check_sets(points, batch, "values")
    _validate(1, output_shape, batch, eps, cdtype, opts, compiling)
    _check_device(points, values, "values")
    if values.ndim != 2:  # (B, M) already: no view to make (nor to undo below)
        values = values.reshape(-1, M)
    op = _ops._nufft1_impl if not compiling and _direct(points, values) else nufft1_op
    out = op(points, values, list(output_shape), isign, eps, opts, not points.requires_grad)
    if len(batch) == 1:
        return out
    return out.reshape(batch + (_real.half(output_shape) if real else output_shape))


def finufft_type2(points, targets, **finufftkwargs):
    """Type 2 (uniform to non-uniform): c[j] = sum_k f[k] exp(isign * i * k . x_j).

    points: (D, M) (or (M,)) real; targets: complex (..., N1[, N2[, N3]]). Returns (..., M).
    Keywords as :func:`finufft_type1`; real_data=True: targets are the half modes
    (..., N1, .., H), H = N//2 + 1 along the last axis (k = 0 .. H - 1), and the result is real,
    Re(sum over the half of a_k f_k exp(..)), a_k = 2 for k_last > 0.
    """
    real = _real_data(finufftkwargs)
    points = _check(points, targets, "targets")
    D, M = points.shape[-2:]
    if targets.ndim < D:
        raise ValueError(f"targets have shape {tuple(targets.shape)}: need {D} mode axes")
    if real and targets.shape[-1] < 1:
        raise ValueError(f"real_data=True: targets {tuple(targets.shape)} are half modes; the "
                         "last axis H = N//2 + 1 must be at least 1")
    compiling = _torch.compiler.is_compiling()
    eps, isign, opts = _options(finufftkwargs, D, targets.device,
                                _ops._precision(targets.dtype), compiling)
    batch, modes = targets.shape[:targets.ndim - D], targets.shape[targets.ndim - D:]
    if points.ndim == 3:
        _check_sets(points, batch, "targets")
    _validate(2, _real.full(modes) if real else modes, batch, eps, targets.dtype, opts,
              compiling)
    _check_device(points, targets, "targets")
    if targets.ndim != D + 1:  # (B, N1, ..) already: no view to make (nor to undo below)
        targets = targets.reshape((-1,) + tuple(modes))
    op = _ops._nufft2_impl if not compiling and _direct(points, targets) else nufft2_op
    out = op(points, targets, isign, eps, opts, not points.requires_grad)
    return out if len(batch) == 1 else out.reshape(batch + (M,))


def finufft_type3(points, values, targets, **finufftkwargs):
    """Type 3 (non-uniform to non-uniform): f[k] = sum_j c[j] exp(isign * i * s_k . x_j).

    points: (D, M) (or (M,) for D = 1) real, or batched (S, D, M) with targets (S, D, K);
    values: complex (..., M); targets: (D, K) (or (K,))
    real, the frequencies s_k. Returns (..., K). Keywords as :func:`finufft_type1` (modeord
    does not apply). Differentiable with respect to the values, the points and the targets.
    """
    if _real_data(finufftkwargs):
        raise ValueError("real_data=True is for types 1 and 2 (docs/real.md): type 3 takes "
                         "complex strengths")
    points = _check(points, values, "values")
    if not isinstance(targets, _torch.Tensor):
        raise TypeError("targets must be a torch tensor")
    if targets.dtype != points.dtype:
        raise TypeError(f"targets have dtype {targets.dtype} but the points {points.dtype}: "
                        "both must be the real type of the values")
    D, M = points.shape[-2:]
    targets = _torch.atleast_2d(targets)
    want = (D,) if points.ndim == 2 else (points.shape[0], D)
    if targets.ndim != points.ndim or tuple(targets.shape[:-1]) != want:
        raise ValueError(f"targets must have shape {want + ('K',)} like the points' "
                         f"{tuple(points.shape[:-1]) + ('M',)}, got {tuple(targets.shape)}")
    _check_values(values, M)
    if points.ndim == 3:
        _check_sets(points, values.shape[:-1], "values")
    compiling = _torch.compiler.is_compiling()
    eps, isign, opts = _options(finufftkwargs, D, values.device,
                                _ops._precision(values.dtype), compiling)
    batch = values.shape[:-1]
    if not compiling:
        _native.validate3(D, _count(batch), eps, _ops._precision(values.dtype),
                          _table.from_hex(_ops.op_record(opts, 3)))
    _check_device(points, values, "values")
    if targets.device != values.device:
        raise ValueError(f"targets are on {targets.device} but values on {values.device}: all "
                         "must be on one device")
    out = nufft3_op(points, values.reshape(-1, M), targets, isign, eps, opts)
    return out.reshape(batch + (targets.shape[-1],))


def stats():
    """Counters: setpts_calls, setpts_skipped (same points tensor unmodified) of these ops;
    plans_created and cached_plans (idle now) of the live-plan pool they share with the one-call
    functions and warpfft.jax."""
    return _ops.stats()


def __getattr__(name):
    """``.distributed`` (sharded points over several GPUs / processes) is imported when first
    used, not with this package."""
    if name == "distributed":
        import importlib
        return importlib.import_module(f"{__name__}.distributed")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
