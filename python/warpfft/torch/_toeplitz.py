"""The Toeplitz normal operator T = A^H W A for PyTorch (docs/toeplitz.md): :class:`Toeplitz`
(the kernel's spectrum computed once, a tensor; then ``op(f)`` per iteration) and
:func:`toeplitz` (one call), with autograd for the modes and the weights.

Conventions as warpfft.torch's NUFFT functions (pytorch-finufft's): points (D, M) (or (M,) in
1D), x first; modes (..., N1[, N2[, N3]]) with FFT order by default (``modeord=1``; 0: CMCL
-N/2..N/2-1); A is the type-2 transform of sign ``isign`` (default -1), A^H the type-1
transform of sign ``-isign``; W the weights: None, (M,) real (density compensation) or (M,)
complex. CUDA tensors on one device; the work runs on torch's current stream of that device.

Autograd (PyTorch's convention: grad = conjugate Wirtinger derivative, so for y = T f,
f.grad = T^H y.grad):
* modes: f.grad = T^H g (T with real weights or none: T^H = T);
* weights: d(T f)_k / dw_j = conj(A_jk) (A f)_j, so w.grad_j = sum_t conj((A f_t)_j) (A g_t)_j
  (two type-2 transforms at the points), its real part for real weights, its conjugate for T^H
  with complex weights (which reads conj(w));
* points: not differentiable (passing points that require grad raises ValueError).

The application runs warpfft_toeplitz_apply_spectrum with a zero operator (grid and FFT plans
only) of the shape that each call takes from the C library's live-plan pool
(warpfft_pool_acquire_toeplitz, keyed by modes, batch, eps, precision, mode order, device and
stream) and gives back once the application is enqueued: no handle outlives the call, so no
other thread's clear or eviction can free it under the call, and two threads applying operators
of one shape at once (torch's default stream is every thread's) get two operators. The pool
fences an operator at its release: evicting it waits for that fence, never for a stream.
"""

import ctypes

import torch

from .. import _lib
from .. import _options as _table
from .._args import effective_eps

_PRECISION = {torch.complex64: _lib.PRECISION_F32, torch.complex128: _lib.PRECISION_F64}
_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}
_WEIGHTS = {"none": 0, "real": 1, "complex": 2}


def _L():
    return _lib.lib  # looked up per call (the tests stand a fake library in)


def _device(t):
    index = t.get_device()
    return index if index >= 0 else torch.cuda.current_device()


def _stream(device):
    return torch.cuda.current_stream(device).cuda_stream


def _check(status, what):
    if status != 0:
        raise _lib.make_error(status) if what is None else _error(status, what)


def _error(status, what):
    e = _lib.make_error(status)
    e.args = (f"{what}: {e.args[0]}",) + e.args[1:]
    return e


def _opts(device, stream, opts_hex):
    """The operator's warpfft_opts: the record of `opts_hex` (the options set through the option
    table, the mode order included) on `device` and `stream`. Deterministic (the option, or
    torch.use_deterministic_algorithms(True) now): the kernel's type-1 transform spreads
    output-driven (GM and SM have no deterministic variant; the ops' rule), so the spectrum has
    the same bits every run; the application is FFTs and pointwise products, deterministic
    either way."""
    from ._ops import _op_opts

    o = _table.copy(_table.from_hex(_op_opts(opts_hex, 1)))
    _table.set_option(o, "device", int(device))
    _table.set_option(o, "stream", int(stream))
    return o


def _info(n_modes, eps, prec, opts_hex, kind):
    buf = (ctypes.c_char * 4096)()
    info = ctypes.cast(buf, ctypes.POINTER(_lib.ToeplitzInfo))
    o = _opts(0, 0, opts_hex)
    _check(_L().warpfft_toeplitz_params(len(n_modes), _lib.n_modes_array(list(n_modes)[::-1]), 1,
                                        float(eps), int(prec), ctypes.byref(o), _WEIGHTS[kind],
                                        info), "warpfft_toeplitz_params")
    return info.contents


def _parse(kwargs, dim):
    """eps, isign and the options record in hex (the mode order and the kernel's type-1
    transform's options), from warpfft.torch's option names (the ones finufft_type1/2 take, with
    their defaults: op_options)."""
    from . import _parse_options

    eps, isign, opts = _parse_options(kwargs, dim, None)
    return eps, 1 if isign >= 0 else -1, opts


def _points(points, cdtype):
    if not isinstance(points, torch.Tensor):
        raise TypeError("points must be a torch tensor")
    if points.dtype != _REAL[cdtype]:
        raise TypeError(f"points have dtype {points.dtype}; modes {cdtype} need "
                        f"{_REAL[cdtype]}")
    if points.ndim < 2:
        points = points.reshape(1, -1)
    if points.ndim != 2 or not 1 <= points.shape[0] <= 3:
        raise ValueError(f"points must have shape (D, M) with D = 1, 2 or 3, got "
                         f"{tuple(points.shape)}")
    if points.requires_grad:
        raise ValueError("the Toeplitz operator is not differentiable with respect to the points "
                         "(only the modes and the weights): pass points.detach()")
    return points


def _weights(weights, M, cdtype, device):
    if weights is None:
        return "none", None
    if not isinstance(weights, torch.Tensor):
        raise TypeError("weights must be a torch tensor or None")
    if weights.dtype == cdtype:
        kind = "complex"
    elif weights.dtype == _REAL[cdtype]:
        kind = "real"
    else:
        raise TypeError(f"weights have dtype {weights.dtype}; they must be {_REAL[cdtype]} "
                        f"(real) or {cdtype} (complex)")
    if tuple(weights.shape) != (M,):
        raise ValueError(f"weights must have shape ({M},) like the points, got "
                         f"{tuple(weights.shape)}")
    if weights.device != device:
        raise ValueError(f"weights are on {weights.device} but the points on {device}")
    return kind, weights


def _problem(points, n_modes, weights, dtype, kwargs):
    """The checked arguments of an operator: points (D, M), n_modes, the weights' kind and
    tensor, eps (the C rule, warned), isign and the options record in hex."""
    from . import _real_data

    if _real_data(kwargs):  # (the C library refuses it too, less plainly)
        raise ValueError("real_data=True is for the type 1 and 2 NUFFTs (docs/real.md): the "
                         "Toeplitz operator takes complex modes")
    n_modes = tuple(int(n) for n in n_modes)
    points = _points(points, dtype)
    D, M = points.shape
    if len(n_modes) != D:
        raise ValueError(f"n_modes {n_modes} has {len(n_modes)} entries for {D}D points")
    _on_cuda(points, "points")
    kind, w = _weights(weights, M, dtype, points.device)
    eps, isign, opts = _parse(kwargs, D)
    eps = effective_eps(eps, _PRECISION[dtype])  # the C rule, warned
    return points, n_modes, kind, w, eps, isign, opts


def spectrum(points, n_modes, weights=None, dtype=torch.complex64, **kwargs):
    """The kernel's spectrum (a tensor of the grid's shape, L_d >= 2 N_d - 1 per axis; real
    unless the weights are complex) for points (D, M) and n_modes (D ints)."""
    return _spectrum(dtype, *_problem(points, n_modes, weights, dtype, kwargs))


def _spectrum(dtype, points, n_modes, kind, w, eps, isign, opts):
    D, M = points.shape
    prec = _PRECISION[dtype]
    info = _info(n_modes, eps, prec, opts, kind)
    grid = tuple(int(v) for v in info.n_grid[:D])[::-1]
    out = torch.empty(grid, dtype=dtype if kind == "complex" else _REAL[dtype],
                      device=points.device)
    device = _device(points)
    stream = _stream(device)
    p = points.detach().resolve_conj().resolve_neg().contiguous()
    row = M * p.element_size()
    ptrs = [p.data_ptr() + d * row for d in range(D)][::-1] + [None] * (3 - D)
    wp = None
    if w is not None:
        w = w.detach().resolve_conj().resolve_neg().contiguous()
        wp = w.data_ptr()
    o = _opts(device, stream, opts)
    _check(_L().warpfft_toeplitz_spectrum(D, _lib.n_modes_array(list(n_modes)[::-1]), isign, eps,
                                          prec, ctypes.byref(o), M, ptrs[0] or None,
                                          ptrs[1] or None, ptrs[2] or None, _WEIGHTS[kind], wp,
                                          out.data_ptr()), "warpfft_toeplitz_spectrum")
    return out


def clear_cache():
    """Destroys the pool's idle plans and operators (warpfft.torch.clear_plan_cache); one that a
    call is applying now goes when that call gives it back."""
    _check(_L().warpfft_pool_clear(), "warpfft_pool_clear")


def _apply(static, spec, f, adjoint):
    n_modes, isign, eps, modeord, opts, kind, points = static
    prec = _PRECISION[f.dtype]
    lead = f.shape[:f.ndim - len(n_modes)]
    T = 1
    for n in lead:
        T *= int(n)
    out = torch.empty(f.shape, dtype=f.dtype, device=f.device)
    if T == 0:
        return out
    device = _device(f)
    stream = _stream(device)
    src = f.detach().resolve_conj().resolve_neg().contiguous()
    real = not spec.is_complex()
    lib = _L()
    o = _opts(device, stream, _table.to_hex(_table.record((("modeord", modeord),))))
    op = ctypes.c_void_p()
    _check(lib.warpfft_pool_acquire_toeplitz(len(n_modes),
                                             _lib.n_modes_array(list(n_modes)[::-1]), T, eps,
                                             prec, ctypes.byref(o), ctypes.byref(op)),
           "warpfft_pool_acquire_toeplitz")
    op, err = op.value, None  # this call's alone until released below
    try:
        st = lib.warpfft_toeplitz_apply_spectrum(op, prec, int(real), spec.data_ptr(),
                                                 int(bool(adjoint)), src.data_ptr(),
                                                 out.data_ptr())
        if st:
            err = _error(st, "warpfft_toeplitz_apply_spectrum")  # before the release's call
    finally:
        rst = lib.warpfft_pool_release_toeplitz(op, 0)  # the operator is the pool's again
    if err is not None:
        raise err
    _check(rst, "warpfft_pool_release_toeplitz")
    return out


class _Normal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, f, weights, spec, static, adjoint):
        ctx.static, ctx.adjoint = static, adjoint
        ctx.save_for_backward(f, weights, spec)
        return _apply(static, spec, f, adjoint)

    @staticmethod
    def backward(ctx, g):
        f, weights, spec = ctx.saved_tensors
        static, adjoint = ctx.static, ctx.adjoint
        n_modes, isign, eps, modeord, opts, kind, points = static
        grad_f = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_f = _apply(static, spec, g, not adjoint)
        if weights is not None and ctx.needs_input_grad[1]:
            from . import finufft_type2

            M = points.shape[1]
            both = torch.stack([f.detach(), g]).reshape((-1,) + tuple(n_modes))
            uv = finufft_type2(points, both, eps=eps, isign=isign, modeord=modeord)
            u, v = uv.reshape(2, -1, M)
            h = torch.sum(torch.conj(u) * v, dim=0)
            if kind == "real":
                grad_w = h.real.to(weights.dtype)
            else:
                grad_w = (torch.conj(h) if adjoint else h).to(weights.dtype)
        return grad_f, grad_w, None, None, None


def _on_cuda(t, what):
    if t.device.type != "cuda" and not _CPU_OK[0]:
        raise ValueError(f"warpfft.torch runs on CUDA tensors; {what} is on {t.device}")


_CPU_OK = [False]  # the tests run the operator on CPU tensors over a fake C library


class Toeplitz:
    """``T = A^H W A`` of M points with its kernel's spectrum computed once:

    ``Toeplitz(points, n_modes, weights=None, eps=1e-6, isign=-1, modeord=1, **opts)``

    points (D, M) float32 (modes complex64) or float64 (complex128). ``op(f)`` applies T to
    modes f (..., *n_modes) (leading axes: one batched application), ``op(f, adjoint=True)``
    T^H; differentiable with respect to f and (when they require grad) the weights.
    ``op.spectrum``: the spectrum tensor (grid shape). The spectrum is computed from the
    weights given here: after changing them in place, make a new operator.
    """

    def __init__(self, points, n_modes, weights=None, **kwargs):
        if not isinstance(points, torch.Tensor):
            raise TypeError("points must be a torch tensor")
        if points.dtype not in (torch.float32, torch.float64):
            raise TypeError(f"points must be float32 or float64, not {points.dtype}")
        dtype = torch.complex64 if points.dtype == torch.float32 else torch.complex128
        if isinstance(n_modes, int):
            n_modes = (n_modes,)
        points, n_modes, kind, w, eps, isign, opts = _problem(points, n_modes, weights, dtype,
                                                              kwargs)
        self.dtype, self.n_modes, self.weights = dtype, n_modes, w
        self.points = points.detach().contiguous()
        self.spectrum = _spectrum(dtype, self.points, n_modes, kind, w, eps, isign, opts)
        modeord = _table.get(_table.from_hex(opts), "modeord")
        self._static = (n_modes, isign, eps, modeord, opts, kind, self.points)

    def __call__(self, f, adjoint=False):
        if not isinstance(f, torch.Tensor):
            raise TypeError("modes must be a torch tensor")
        if f.dtype != self.dtype:
            raise TypeError(f"modes must be {self.dtype} like the operator, not {f.dtype}")
        k = len(self.n_modes)
        if f.ndim < k or tuple(f.shape[f.ndim - k:]) != self.n_modes:
            raise ValueError(f"modes have shape {tuple(f.shape)}: the last axes must be "
                             f"{self.n_modes}")
        if f.device != self.points.device:
            raise ValueError(f"modes are on {f.device} but the operator on {self.points.device}")
        return _Normal.apply(f, self.weights, self.spectrum, self._static, bool(adjoint))


def toeplitz(points, f, weights=None, adjoint=False, **kwargs):
    """``T f = A^H (W (A f))`` in one call: points (D, M) (or (M,) in 1D), modes f
    (..., N1[, N2[, N3]]) whose last D axes are the modes. For repeated applications make a
    :class:`Toeplitz` once."""
    if not isinstance(points, torch.Tensor) or not isinstance(f, torch.Tensor):
        raise TypeError("points and modes must be torch tensors")
    D = points.shape[0] if points.ndim >= 2 else 1
    if f.ndim < D:
        raise ValueError(f"modes have shape {tuple(f.shape)}: need {D} mode axes")
    op = Toeplitz(points, tuple(f.shape[f.ndim - D:]), weights=weights, **kwargs)
    return op(f, adjoint=adjoint)
