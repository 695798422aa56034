"""torch.library ops ``warpfft::nufft1`` / ``nufft2`` / ``nufft3`` over the C ABI, their fake
(meta) implementations for torch.compile, and their autograd formulas.

Canonical form: points (D, M) real, x first; type 1 values (B, M) -> (B, N1[, N2[, N3]]); type 2
targets (B, N1[, ...]) -> (B, M); type 3 values (B, M) and targets (D, K) -> (B, K). B
transforms share the points (one plan with ntransf = B). Batched points (warpfft's extension):
points (S, D, M) (type 3: targets (S, D, K) too), S dividing B, give set s to transforms
s * B / S .. (one plan, warpfft_setpts_sets; _sets.py).
The C plan has dimension 1 fastest, so modes and coordinates are passed in reverse order
(zero-copy: a mode array (B, N1, N2) is the C plan's (N2 fastest) layout). The kernels and
the fake implementations check their arguments first (_checks.py).

The plan options cross as one argument, ``opts``: the warpfft_opts record the caller resolved
through the C library's option table, its bytes in hex (``_options.to_hex``; ``op_options``
makes one from keywords), so a new option changes no schema here. The ops read from it what
their rules need (mode order, method, deterministic) and set the per-call fields (device,
stream, points_hint) through the table. Real data (the record's real_data; _real.py): nufft1
takes real values (B, M) and returns the complex half modes (B, N1, .., ND//2 + 1) of a plan of
n_modes; nufft2 takes the half modes (B, N1, .., H) and returns real values (B, M) (a plan of
N = 2H - 1 along the last axis); their outputs, fake shapes, checks and formulas follow it.

Registration style (chosen for per-call cost; python/bench/dispatch.py measures it): the ops
are defined with ``torch.library.Library`` -- schema, a kernel for the CPU and CUDA keys, a fake
implementation (``register_fake``) and one Python kernel at the Autograd key that takes the
``torch.autograd.Function`` only when an input requires grad and otherwise redispatches below
autograd. ``torch.library.custom_op`` + ``register_autograd`` give the same behaviour
(torch.compile, fake tensors, autograd) through several more Python layers: about 3x the
dispatch cost of this form on torch 2.5.
"""


import ctypes
import functools
import threading
from collections import OrderedDict

import torch

from .. import _errors
from .. import _lib as native
from .. import _options
from . import _checks, _real, _sets

# Plans come from the C library's live-plan pool (warpfft_pool_acquire / _release: shared with
# the one-call functions and the JAX handler; its limits, clears and eviction are the pool's).
# What this layer keeps on top is its points reuse: for a pooled plan (its handle) on which it
# set points and gave the plan back keeping them, the points id warpfft_plan_points_id then
# had, the signature of the points tensor and the tensors the plan reads. A later call with
# that plan, the same id (nobody set or dropped points since: ids are never reused) and an
# equal signature skips setpts. Bounded: least recently used first out; dropping one only
# costs a setpts (the plan's id no longer matches nothing here).
_POINTS_MAX = 64
_lock = threading.Lock()
_points = OrderedDict()  # plan handle -> _Points
_stats = {"setpts_calls": 0, "setpts_skipped": 0}


class _Points:
    __slots__ = ("id", "sig", "src", "used")

    def __init__(self, id_, sig, src, used):
        self.id = id_
        self.sig = sig
        self.src = src  # the caller's points tensor (a detached alias: same storage, version)
        self.used = used  # the contiguous tensor the plan reads (kept alive with it)


def _plain(t):
    """t with torch's lazy conjugate and negative bits resolved (a copy only where one is set):
    a view such as x.conj() keeps the unconjugated numbers in memory, and the C library reads
    memory. The dispatcher resolves them for the op's inputs; the direct eager path of
    finufft_type1/2 and the backward's own calls come here without it."""
    return t.resolve_conj().resolve_neg()


def _points_sig(p):
    """What identifies an unchanged points tensor, or None for one never to reuse: an inference
    tensor (made under torch.inference_mode) has no version counter to see changes by."""
    if p.is_inference():
        return None
    return (p.data_ptr(), p.shape, p.stride(), p.dtype, p.device, p._version)


_PRECISION = {torch.complex64: native.F32, torch.complex128: native.F64}
# _run's: a real-data op's real tensor (type 1's values, type 2's output) has its plan's precision
_RUN_PRECISION = {**_PRECISION, torch.float32: native.F32, torch.float64: native.F64}


def _precision(dtype):
    prec = _PRECISION.get(dtype)
    if prec is None:
        raise TypeError(f"values must be complex64 or complex128, not {dtype}")
    return prec


def _raw_stream_fallback(device):
    return torch.cuda.current_stream(device).cuda_stream


# torch's current CUDA stream of a device as an integer. The raw getter (what torch.compile's
# generated code calls) skips building a torch.cuda.Stream object per call.
_stream_of = getattr(torch._C, "_cuda_getCurrentRawStream", None) or _raw_stream_fallback


def _device_of(t):
    index = t.get_device()
    return index if index >= 0 else torch.cuda.current_device()


# ---- CUDA graphs (torch.cuda.graph, torch.compile(mode="reduce-overhead")) ------------------
# A graph replays the GPU work it captured, with whatever its input tensors hold then, and owns
# the pooled plan it captured until the graph is freed (the C library's hold: docs/cuda-graphs.md).
# So during a capture the ops set their points on every call (a replay sorts the points tensor's
# contents of that moment, never a set-points skipped at capture time) and remember nothing to
# reuse; type 3 (whose set-points wait for the stream) refuses, and is tagged cudagraph_unsafe
# so that torch.compile's CUDA graphs run it outside their graphs.
_is_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)


def _capturing(t):
    """Whether the current CUDA stream is being captured into a CUDA graph (t: the call's
    tensor; a CPU tensor never is, and asks no CUDA query). Callers skip it for the legacy
    stream, which cannot be captured."""
    return t.is_cuda and _is_capturing is not None and _is_capturing()


def _acquire_captured(*args):
    """_acquire during a capture: a plan can only come from the pool's idle plans then (making
    one allocates, which a capture forbids), so a refusal says how to have one there."""
    try:
        return _acquire(*args)
    except _errors.UnsupportedError as e:
        raise _errors.unsupported(
            f"{e.message} -- warpfft.torch under a CUDA graph capture: run the same call once "
            "on the capturing stream before the capture (torch.cuda.graph(g, stream=s) after a "
            "warm-up under torch.cuda.stream(s); torch.compile(mode='reduce-overhead') does "
            "this itself)") from None


@functools.lru_cache(maxsize=256)
def _plan_args(nufft_type, modes_c, ntransf, eps, isign, prec, opts_hex, device, stream, hint):
    """The C arguments of warpfft_pool_acquire for a plan's key, checked by the library's
    plan_params first (a tolerance the options cannot reach raises naming eps): built once per
    key, since an op call needs them every time. Type 3 passes no mode counts. `opts_hex`: the
    op's record (op_record's); `hint`: the plan's points_hint (native.points_hint_for(M); 0 for
    type 3, whose choice ignores it), set with the device and stream through the table."""
    rec = _options.from_hex(opts_hex)
    if nufft_type == 3:
        native.validate3(modes_c[0], ntransf, eps, prec, rec)
    else:
        native.validate(nufft_type, list(modes_c), ntransf, eps, prec, rec)
    n = None if nufft_type == 3 else native.modes3(modes_c)
    dim = modes_c[0] if nufft_type == 3 else len(modes_c)
    opts = _options.copy(rec)
    for name, value in (("device", device), ("stream", stream), ("points_hint", hint)):
        _options.set_option(opts, name, value)
    return (int(nufft_type), int(dim), n, int(isign), int(ntransf), float(eps), int(prec),
            ctypes.byref(opts), opts, n)


def _acquire(nufft_type, modes_c, ntransf, eps, isign, prec, opts_hex, device, stream, hint=0):
    """A plan (handle) of the pool for this key, the caller's until _release. Type 3: modes_c is
    (D,)."""
    a = _plan_args(nufft_type, modes_c, ntransf, eps, isign, prec, opts_hex, device, stream,
                   hint)
    handle = ctypes.c_void_p()
    st = native.lib.warpfft_pool_acquire(*a[:8], ctypes.byref(handle))
    if st:
        native.check(st, "warpfft_pool_acquire")
    return handle.value


def _release(plan, keep_points):
    """Gives the plan back to the pool (keeping its points when this layer may reuse them)."""
    st = native.lib.warpfft_pool_release(plan, native.POOL_KEEP_POINTS if keep_points else 0)
    if st:
        native.check(st, "warpfft_pool_release")


def _points_id(plan, pid):
    """warpfft_plan_points_id into the c_uint64 pid; its value."""
    st = native.lib.warpfft_plan_points_id(plan, ctypes.byref(pid))
    if st:
        native.check(st, "warpfft_plan_points_id")
    return pid.value


def _remember(plan, rec):
    with _lock:
        _points[plan] = rec
        _points.move_to_end(plan)
        while len(_points) > _POINTS_MAX:
            _points.popitem(last=False)


def _forget(plan):
    with _lock:
        _points.pop(plan, None)


@functools.lru_cache(maxsize=256)
def op_record(opts_hex, nufft_type, det_global=False):
    """The record a plan of an op of `nufft_type` is made with, from the op's `opts` (hex) and
    its rules, in hex (memoised: called per op call): a deterministic spreading op (the option,
    or torch.use_deterministic_algorithms(True): `det_global`) spreads output-driven, so GM and SM
    (1, 2: atomics) give way to AUTO; a type-2 op interpolates, so OD (3, a spreading method)
    is AUTO there, and its plan is the plain kind (its interpolation sums in a fixed order
    either way; the option reaches its backward's type 1); type 3 has no mode order."""
    rec = _options.from_hex(opts_hex)
    method = _options.get(rec, "method")
    det = bool(_options.get(rec, "deterministic")) or det_global
    auto = _options.value("method", "AUTO")
    atomics = (_options.value("method", "GM"), _options.value("method", "SM"))
    changes = []
    if nufft_type == 2:
        changes += [("method", auto)] if method == _options.value("method", "OD") else []
        changes += [("deterministic", False)]
    else:
        changes += [("method", auto)] if det and method in atomics else []
        changes += [("deterministic", det)]
    if nufft_type == 3:
        changes += [("modeord", _options.value("modeord", "CMCL"))]
    out = _options.copy(rec)
    for name, value in changes:
        _options.set_option(out, name, value)
    return _options.to_hex(out)


def _op_opts(opts_hex, nufft_type):
    """op_record with torch's global determinism read now (as torch's own ops read it)."""
    return op_record(opts_hex, nufft_type, torch.are_deterministic_algorithms_enabled())


def _modeord(opts_hex):
    return _options.get(_options.from_hex(opts_hex), "modeord")


def _run(nufft_type, points, src, out, modes, isign, eps, opts, reuse_points=True):
    """setpts (skipped when the same, unmodified points tensor comes back to a pooled plan that
    still holds its points) + execute, on torch's current stream of the tensors' device."""
    device = _device_of(src)
    stream = _stream_of(device)
    prec = _RUN_PRECISION.get(src.dtype) or _precision(src.dtype)  # (F32, F64: 1, 2)
    if points.ndim == 2:  # (inline: this runs on every call)
        S, (D, M) = 1, points.shape
    else:  # S point sets (batched points)
        S, D, M = points.shape
    B = src.shape[0]
    if B == 0:
        return out
    modes_c = tuple(modes)[::-1]
    src = _plain(src).contiguous()
    points = _plain(points)  # a negative view of a points tensor has its own signature
    # a CUDA graph capture (never of the legacy stream, 0: no query on torch's default stream):
    # points set on every call, none remembered
    capturing = stream != 0 and _capturing(src)
    sig = None if capturing else _points_sig(points)  # None: never to reuse
    # points_hint: the M set now, for the plan's choice of upsampfac and width, rounded to the
    # nearest power of two (pooled plans are keyed on every option: an exact M would make a
    # plan per distinct M, and the choice changes slowly with M)
    plan = (_acquire_captured if capturing else _acquire)(
        nufft_type, modes_c, B, eps, 1 if isign >= 0 else -1, prec, opts, device, stream,
        native.points_hint_for(M))
    try:
        # (inline, not helpers: this runs on every call and its Python work is measured)
        pid = ctypes.c_uint64()
        with _lock:
            rec = _points.get(plan) if reuse_points and sig is not None else None
            if rec is not None and rec.sig == sig:
                _points.move_to_end(plan)
        if (rec is not None and rec.sig == sig and
                not native.lib.warpfft_plan_points_id(plan, ctypes.byref(pid)) and
                pid.value == rec.id):  # the plan still holds the points this layer set
            _stats["setpts_skipped"] += 1
        else:
            _forget(plan)  # a failed setpts leaves no points to reuse
            # detached aliases: same storage and version counter, no autograd graph kept alive
            src_alias = points.detach()
            used = _sets.c_layout(src_alias)  # (D, S * M) contiguous
            base, row = used.data_ptr(), S * M * used.element_size()
            ptrs = [base + d * row for d in range(D)][::-1]  # the C plan's x is the last axis
            ptrs += [None] * (3 - D)
            if points.ndim == 2:
                native.check(native.lib.warpfft_setpts(plan, prec, M, *ptrs), "warpfft_setpts")
            else:
                native.check(native.lib.warpfft_setpts_sets(plan, prec, S, M, *ptrs),
                             "warpfft_setpts_sets")
            _stats["setpts_calls"] += 1
            if sig is not None:
                _remember(plan, _Points(_points_id(plan, pid), sig, src_alias, used))
        if nufft_type == 1:
            c, fk = src, out
        else:
            c, fk = out, src
        st = native.lib.warpfft_execute(plan, prec, c.data_ptr(), fk.data_ptr())
        if st:
            native.check(st, "warpfft_execute")
    except BaseException:
        native.lib.warpfft_pool_release(plan, 0)  # the call's own error is the one to report
        raise
    st = native.lib.warpfft_pool_release(plan, native.POOL_KEEP_POINTS)
    if st:
        native.check(st, "warpfft_pool_release")
    return out


# ---- the ops -------------------------------------------------------------------------------

_LIB = torch.library.Library("warpfft", "DEF")  # kept alive: the registrations live with it
# The tags torch.library.custom_op gives its ops: usable by torch.compile as they are (opcheck
# passes: python/tests/test_torch_autograd.py), inputs in eager's strides under Inductor.
_TAGS = tuple(getattr(torch.Tag, t) for t in ("pt2_compliant_tag", "needs_fixed_stride_order")
              if hasattr(torch.Tag, t))
# type 3 cannot run in a CUDA graph (CUDA graphs, above): torch.compile's graphs go around it
_TAGS3 = _TAGS + tuple(getattr(torch.Tag, t) for t in ("cudagraph_unsafe",)
                       if hasattr(torch.Tag, t))
# opts: the options record in hex (op_options; the module docstring)
_LIB.define("nufft1(Tensor points, Tensor values, int[] n_modes, int isign, float eps, "
            "str opts, bool reuse_points=True) -> Tensor", tags=_TAGS)
_LIB.define("nufft2(Tensor points, Tensor targets, int isign, float eps, str opts, "
            "bool reuse_points=True) -> Tensor", tags=_TAGS)
_LIB.define("nufft3(Tensor points, Tensor values, Tensor targets, int isign, float eps, "
            "str opts) -> Tensor", tags=_TAGS3)
# The callables (OpOverloads): positional arguments as the schemas list them.
nufft1_op = torch.ops.warpfft.nufft1.default
nufft2_op = torch.ops.warpfft.nufft2.default
nufft3_op = torch.ops.warpfft.nufft3.default
# CPU too: CPU tensors get _checks' clear error (not the dispatcher's "no kernel" one), and the
# tests run the kernels on host memory with a fake C library.
_BACKENDS = ("CUDA", "CPU")


# Determinism. By default spreading (types 1 and 3, and so type 2's backward) adds into the
# fine grid with float atomics in whatever order the GPU runs them: results may differ in the
# last bits from run to run. The deterministic option, or torch.use_deterministic_algorithms(True)
# (read when the op runs: its backward's ops too), makes the spreading ops use the library's
# deterministic plans instead (output-driven spreading after a stable sort: the same bits every
# run; docs/spreaders.md; op_record). Interpolation (type 2) sums each point's footprint in a
# fixed order with every method.


def _nufft1_impl(points, values, n_modes, isign, eps, opts, reuse_points=True):
    if _real.is_real(opts):
        _checks.nufft1(points, values, n_modes, real=True)
        out = torch.empty((values.shape[0], *_real.half(n_modes)),
                          dtype=_real.COMPLEX[values.dtype], device=values.device)
    else:
        _checks.nufft1(points, values, n_modes)
        out = torch.empty((values.shape[0], *n_modes), dtype=values.dtype, device=values.device)
    if values.shape[-1] == 0:
        return out.zero_()
    return _run(1, points, values, out, n_modes, isign, eps, _op_opts(opts, 1), reuse_points)


def _nufft1_fake(points, values, n_modes, isign, eps, opts, reuse_points=True):
    if _real.is_real(opts):
        _checks.nufft1(points, values, n_modes, fake=True, real=True)
        return values.new_empty((values.shape[0],) + _real.half(n_modes),
                                dtype=_real.COMPLEX[values.dtype])
    _checks.nufft1(points, values, n_modes, fake=True)
    return values.new_empty((values.shape[0],) + tuple(n_modes))


def _nufft2_impl(points, targets, isign, eps, opts, reuse_points=True):
    real = _real.is_real(opts)
    _checks.nufft2(points, targets, real=real)
    M = points.shape[-1]
    dtype, modes = targets.dtype, targets.shape[1:]
    if real:
        dtype, modes = _real.REAL[dtype], _real.full(modes)
    out = torch.empty((targets.shape[0], M), dtype=dtype, device=targets.device)
    if M == 0:
        return out
    return _run(2, points, targets, out, modes, isign, eps, _op_opts(opts, 2), reuse_points)


def _nufft2_fake(points, targets, isign, eps, opts, reuse_points=True):
    real = _real.is_real(opts)
    _checks.nufft2(points, targets, fake=True, real=real)
    dtype = _real.REAL[targets.dtype] if real else targets.dtype
    return targets.new_empty((targets.shape[0], points.shape[-1]), dtype=dtype)


# ---- autograd ------------------------------------------------------------------------------


def _k(n, modeord, device, dtype):
    if modeord:
        return torch.fft.fftfreq(n, d=1.0 / n, device=device, dtype=dtype)
    return torch.arange(-(n // 2), n - n // 2, device=device, dtype=dtype)


def _ramp(d, modes, modeord, device, dtype):
    """k_d shaped to broadcast over (B, N1, .., ND)."""
    shape = [1] * (1 + len(modes))
    shape[1 + d] = modes[d]
    return _k(modes[d], modeord, device, dtype).reshape(shape)


def _saved(ctx):
    """What a setup above saved for the backward: its tensors, the sign s (+-1) of isign, eps
    and opts."""
    isign, eps, opts = ctx.rest
    return ctx.saved_tensors, 1 if isign >= 0 else -1, eps, opts


def _setup1(ctx, inputs, output):
    points, values, n_modes, *rest = inputs
    ctx.save_for_backward(points, values)
    ctx.n_modes = list(n_modes)
    ctx.rest = rest[:3]  # isign, eps, opts (rest[3]: reuse_points)


def _backward1(ctx, grad):
    if _real.is_real(ctx.rest[2]):
        return _real.backward1(ctx, grad)
    # f_k = sum_j c_j e^{i s k.x_j}. grad_c = A^H g: a type 2 with sign -s. For the points,
    # dL/dx_dj = Re(conj(c_j) * sum_k (-i s k_d) g_k e^{-i s k.x_j}): type 2 of the ramped g.
    (points, values), s, eps, opts = _saved(ctx)
    modeord = _modeord(opts)
    need_p, need_v = ctx.needs_input_grad[:2]
    D = points.shape[-2]
    real = points.dtype
    parts = [grad]
    if need_p:
        parts += [(-1j * s) * _ramp(d, ctx.n_modes, modeord, grad.device, real) * grad
                  for d in range(D)]
    stacked = _sets.stack(parts, points)  # batched points: each set's transforms together
    r = nufft2_op(points, stacked.contiguous(), -s, eps, opts, not need_p)
    r = _sets.unstack(r, len(parts), points)
    gv = r[0] if need_v else None
    gp = None
    if need_p:
        gp = _sets.reduce((values.conj().unsqueeze(0) * r[1:]).real, points)
    return (gp, gv) + (None,) * (len(ctx.needs_input_grad) - 2)  # none for the options


def _setup2(ctx, inputs, output):
    points, targets, *rest = inputs
    ctx.save_for_backward(points, targets)
    ctx.rest = rest[:3]  # isign, eps, opts


def _backward2(ctx, grad):
    if _real.is_real(ctx.rest[2]):
        return _real.backward2(ctx, grad)
    # c_j = sum_k f_k e^{i s k.x_j}. grad_f = A^H g: a type 1 with sign -s. For the points,
    # dL/dx_dj = Re(conj(g_j) * sum_k (i s k_d) f_k e^{i s k.x_j}): type 2 of the ramped f.
    (points, targets), s, eps, opts = _saved(ctx)
    modeord = _modeord(opts)
    need_p, need_t = ctx.needs_input_grad[:2]
    D = points.shape[-2]
    modes = list(targets.shape[1:])
    gt = gp = None
    if need_t:
        gt = nufft1_op(points, grad.contiguous(), modes, -s, eps, opts, not need_p)
    if need_p:
        ramped = _sets.stack([(1j * s) * _ramp(d, modes, modeord, targets.device, points.dtype)
                              * targets for d in range(D)], points)
        r = nufft2_op(points, ramped.contiguous(), s, eps, opts, False)
        gp = _sets.reduce((grad.conj().unsqueeze(0) * _sets.unstack(r, D, points)).real, points)
    return (gp, gt) + (None,) * (len(ctx.needs_input_grad) - 2)


def _run3(points, values, targets, out, isign, eps, opts):
    """setpts3 (every call: sources and targets) + execute, on torch's current stream."""
    device = _device_of(values)
    stream = _stream_of(device)
    prec = _precision(values.dtype)
    S, D, M = _sets.split(points)  # S point sets (batched points), else 1
    K = targets.shape[-1]
    B = values.shape[0]
    if B == 0 or K == 0:
        return out
    if M == 0:
        return out.zero_()
    if stream != 0 and _capturing(values):  # (the legacy stream, 0, is never captured)
        raise _errors.unsupported(
            "warpfft.torch nufft3 (type 3) cannot be captured into a CUDA graph: its set-points "
            "wait for the stream (the points' extent chooses the grids). torch.compile(mode="
            "'reduce-overhead') runs it outside its graphs (the op is tagged cudagraph_unsafe); "
            "with torch.cuda.graph, call it outside the captured region")
    values = _plain(values).contiguous()
    pc, tc = _sets.c_layout(_plain(points.detach())), _sets.c_layout(_plain(targets.detach()))
    plan = _acquire(3, (D,), B, eps, 1 if isign >= 0 else -1, prec, opts, device, stream)
    try:
        # rows of the contiguous (D, S * M) / (D, S * K) arrays, reversed: the C plan's x is
        # last
        pb, tb, size = pc.data_ptr(), tc.data_ptr(), pc.element_size()
        ptr = ([pb + d * S * M * size for d in range(D)][::-1] + [None] * (3 - D)
               + [tb + d * S * K * size for d in range(D)][::-1] + [None] * (3 - D))
        if points.ndim == 2:
            native.check(native.lib.warpfft_setpts3(plan, prec, M, *ptr[:3], K, *ptr[3:]),
                         "warpfft_setpts3")
        else:
            native.check(native.lib.warpfft_setpts3_sets(plan, prec, S, M, *ptr[:3], K,
                                                         *ptr[3:]), "warpfft_setpts3_sets")
        _stats["setpts_calls"] += 1
        native.check(native.lib.warpfft_execute(plan, prec, values.data_ptr(),
                                                out.data_ptr()), "warpfft_execute")
    except BaseException:
        native.lib.warpfft_pool_release(plan, 0)  # the call's own error is the one to report
        raise
    _release(plan, False)  # setpts3 copied the points: nothing to reuse
    return out


def _nufft3_impl(points, values, targets, isign, eps, opts):
    """f[b, k] = sum_j values[b, j] exp(i isign (targets[:, k] . points[:, j])); points (D, M),
    values (B, M), targets (D, K) -> (B, K)."""
    _checks.nufft3(points, values, targets, real=_real.is_real(opts))
    out = torch.empty((values.shape[0], targets.shape[-1]), dtype=values.dtype,
                      device=values.device)
    return _run3(points, values, targets, out, isign, eps, _op_opts(opts, 3))


def _nufft3_fake(points, values, targets, isign, eps, opts):
    _checks.nufft3(points, values, targets, fake=True, real=_real.is_real(opts))
    return values.new_empty((values.shape[0], targets.shape[-1]))


def _setup3(ctx, inputs, output):
    points, values, targets, *rest = inputs
    ctx.save_for_backward(points, values, targets)
    ctx.rest = rest[:3]  # isign, eps, opts


def _backward3(ctx, grad):
    # f_k = sum_j c_j e^{i s s_k.x_j} (A_kj). grad_c = A^H g: a type 3 from the targets to the
    # points with sign -s. dL/dx_dj = Re(conj(c_j) sum_k (-i s s_dk g_k) e^{-i s s_k.x_j}) (the
    # same adjoint of the ramped g); dL/ds_dk = Re(conj(g_k) sum_j (i s x_dj c_j) e^{i s s_k.x_j})
    # (a forward type 3 of the ramped c).
    (points, values, targets), s, eps, opts = _saved(ctx)
    need_p, need_v, need_t = ctx.needs_input_grad[:3]
    D = points.shape[-2]
    B = grad.shape[0]
    gp = gv = gt = None
    if need_p or need_v:
        parts = [grad] + ([(-1j * s) * _sets.coord(targets, d, B) * grad for d in range(D)]
                          if need_p else [])
        stacked = _sets.stack(parts, points)  # batched points: each set's transforms together
        r = nufft3_op(targets, stacked.contiguous(), points, -s, eps, opts)
        r = _sets.unstack(r, len(parts), points)
        gv = r[0] if need_v else None
        if need_p:
            gp = _sets.reduce((values.conj().unsqueeze(0) * r[1:]).real, points)
    if need_t:
        ramped = _sets.stack([(1j * s) * _sets.coord(points, d, B) * values for d in range(D)],
                             points)
        r = nufft3_op(points, ramped.contiguous(), targets, s, eps, opts)
        gt = _sets.reduce((grad.conj().unsqueeze(0) * _sets.unstack(r, D, points)).real, targets)
    return (gp, gv, gt) + (None,) * (len(ctx.needs_input_grad) - 3)


# ---- registration ----------------------------------------------------------------------------

_AFTER_AUTOGRAD = torch._C._after_autograd_keyset


def _function(name, op, setup, backward):
    """An autograd.Function running `op` below autograd, with the formulas above."""

    def forward(*args):
        with torch._C._AutoDispatchBelowAutograd():
            return op(*args)

    return type(f"_Nufft{name[-1]}Function", (torch.autograd.Function,), {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup),
        "backward": staticmethod(backward),
    })


def _register(name, impl, fake, setup, backward, n_tensors):
    for key in _BACKENDS:
        _LIB.impl(name, impl, key)
    torch.library.register_fake(f"warpfft::{name}", fake, lib=_LIB)
    op = getattr(torch.ops.warpfft, name).default
    fn = _function(name, op, setup, backward)
    # OpOverload.redispatch is a Python wrapper around its handle's method: call that directly
    # where this torch has it.
    redispatch = getattr(getattr(op, "_handle", None), "redispatch_boxed", None) or op.redispatch

    def autograd_kernel(keyset, *args):
        # The Function (graph node, saved tensors) only when a gradient can flow; otherwise
        # straight to the kernel below autograd (what torch's register_autograd does, without
        # its pytree walks over every argument).
        if torch.is_grad_enabled() and (args[0].requires_grad or args[1].requires_grad or
                                        (n_tensors == 3 and args[2].requires_grad)):
            return fn.apply(*args)
        return redispatch(keyset & _AFTER_AUTOGRAD, *args)

    _LIB.impl(name, autograd_kernel, "Autograd", with_keyset=True)
    return fn


_Nufft1Function = _register("nufft1", _nufft1_impl, _nufft1_fake, _setup1, _backward1, 2)
_Nufft2Function = _register("nufft2", _nufft2_impl, _nufft2_fake, _setup2, _backward2, 2)
_Nufft3Function = _register("nufft3", _nufft3_impl, _nufft3_fake, _setup3, _backward3, 3)


def clear_cache():
    """Destroys the pool's idle plans (plans in use go when their call ends) and forgets this
    layer's points records; the pool is shared with the one-call functions and warpfft.jax."""
    with _lock:
        _points.clear()
    native.check(native.lib.warpfft_pool_clear(), "warpfft_pool_clear")


def stats():
    """This layer's setpts_calls and setpts_skipped, and the pool's plans_created (plans the
    pool made, for every user in the process) and cached_plans (idle in the pool now)."""
    info = native.PoolInfo()
    info.struct_size = ctypes.sizeof(info)
    native.check(native.lib.warpfft_pool_get_info(ctypes.byref(info)), "warpfft_pool_get_info")
    return dict(_stats, plans_created=info.created, cached_plans=info.idle)
