"""Real-valued data in the ops ``warpfft::nufft1`` / ``nufft2`` (``real_data=True``,
docs/real.md): what the ops need beyond the complex case -- whether an op's options record asks
for real data, the half-mode shapes and dtypes, and the autograd formulas.

real_data rides in the ops' options record (``opts``, the hex of the warpfft_opts record), so
the schemas are the complex ops': ``nufft1(points, values (B, M) real, n_modes, ..)`` returns
the complex half modes (B, N1, .., ND//2 + 1) of a plan of ``n_modes``; ``nufft2(points,
targets (B, N1, .., H) complex, ..)`` returns real values (B, M), its plan's last mode count
N = 2H - 1 (any N with N//2 + 1 = H gives the same values). The halved axis is the last one,
k = 0 .. H - 1 along it whatever modeord; the other axes as for complex data.

Autograd, for the real inner product <u, v> = Re(sum conj(u) v) (torch's gradient of a complex
tensor is dL/dRe + i dL/dIm, as the complex formulas of _ops use it). With A the half's matrix
of the forward's sign s, A_kj = e^{i s k.x_j}, and T2r(s, f)_j = Re(sum_k a_k f_k e^{i s k.x_j})
the C library's real type 2 (a_k = 2 on every column k_last > 0, including an even N's N/2):
* type 1, y = A c (c real): grad_c = Re(A^H g) = T2r(-s, g / a): the C type 2 doubles the
  columns k_last > 0, which the forward does not, so they go in halved (weight 1 everywhere,
  N/2 column included); the points: dL/dx_dj = c_j T2r(-s, (-i s k_d) g / a)_j.
* type 2, y = Re(A^T (a f)): grad_f = a * (A^* g) = a * T1r(-s, g) (a real type 1 of the
  real cotangent on the same half); the points: dL/dx_dj = g_j T2r(s, (i s k_d) f)_j.
python/tests/test_torch_real.py checks both against dense matrices and gradcheck.
"""

import functools

import torch

from .. import _options
from . import _sets

COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}
REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


@functools.lru_cache(maxsize=256)
def is_real(opts_hex):
    """Whether an op's options record (hex) has real_data set (memoised: read per op call)."""
    return bool(_options.get(_options.from_hex(opts_hex), "real_data"))


def half(n_modes):
    """The half-mode shape of a plan's mode counts: the last axis N -> N//2 + 1."""
    return tuple(n_modes[:-1]) + (n_modes[-1] // 2 + 1,)


def full(half_modes):
    """The mode counts a real type 2 plans for a half-mode shape: the last axis H -> 2H - 1."""
    return tuple(half_modes[:-1]) + (2 * half_modes[-1] - 1,)


def doubled(H, device, dtype):
    """a_k along the halved axis (H,): 1 at k = 0, 2 for k > 0 -- the real type 2's weights."""
    a = torch.full((H,), 2.0, device=device, dtype=dtype)
    a[0] = 1.0
    return a


def _ramp(d, half_modes, modeord, device, dtype):
    """k_d shaped to broadcast over (B, N1, .., H): the halved last axis has k = 0 .. H - 1."""
    from ._ops import _k
    D = len(half_modes)
    shape = [1] * (1 + D)
    shape[1 + d] = half_modes[d]
    if d == D - 1:
        k = torch.arange(half_modes[d], device=device, dtype=dtype)
    else:
        k = _k(half_modes[d], modeord, device, dtype)
    return k.reshape(shape)


def backward1(ctx, grad):
    """Type 1 with real values: (grad of the points, grad of the values) (module docstring)."""
    from ._ops import _modeord, _saved, nufft2_op
    (points, values), s, eps, opts = _saved(ctx)
    need_p, need_v = ctx.needs_input_grad[:2]
    D = points.shape[-2]
    real = points.dtype
    modes = tuple(grad.shape[1:])
    g = grad / doubled(modes[-1], grad.device, real)  # the C type 2 doubles them back
    parts = [g]
    if need_p:
        modeord = _modeord(opts)
        parts += [(-1j * s) * _ramp(d, modes, modeord, grad.device, real) * g for d in range(D)]
    stacked = _sets.stack(parts, points)  # batched points: each set's transforms together
    r = nufft2_op(points, stacked.contiguous(), -s, eps, opts, not need_p)  # real (P B, M)
    r = _sets.unstack(r, len(parts), points)
    gv = r[0] if need_v else None
    gp = _sets.reduce(values.unsqueeze(0) * r[1:], points) if need_p else None
    return (gp, gv) + (None,) * (len(ctx.needs_input_grad) - 2)  # none for the options


def backward2(ctx, grad):
    """Type 2 with real values: (grad of the points, grad of the half modes)."""
    from ._ops import _modeord, _saved, nufft1_op, nufft2_op
    (points, targets), s, eps, opts = _saved(ctx)
    need_p, need_t = ctx.needs_input_grad[:2]
    D = points.shape[-2]
    real = points.dtype
    modes = tuple(targets.shape[1:])
    gt = gp = None
    if need_t:
        gt = nufft1_op(points, grad.contiguous(), list(full(modes)), -s, eps, opts, not need_p)
        gt = gt * doubled(modes[-1], grad.device, real)
    if need_p:
        modeord = _modeord(opts)
        ramped = _sets.stack([(1j * s) * _ramp(d, modes, modeord, targets.device, real)
                              * targets for d in range(D)], points)
        r = nufft2_op(points, ramped.contiguous(), s, eps, opts, False)  # real (D B, M)
        gp = _sets.reduce(grad.unsqueeze(0) * _sets.unstack(r, D, points), points)
    return (gp, gt) + (None,) * (len(ctx.needs_input_grad) - 2)
