"""Test aid: exact sums in torch with pytorch-finufft's conventions standing in for
warpfft.torch's finufft_type1/2/3 on the CPU (differentiable by autograd), so the
torch.distributed plumbing around them (warpfft.torch.distributed) runs without a GPU.

    import _exact_torch; _exact_torch.install()   # replaces warpfft.torch's three functions
"""

import numpy as np
import torch


def _k(n, modeord):
    k = torch.arange(n, dtype=torch.float64)
    return torch.where(k < n - n // 2, k, k - n) if modeord else k - n // 2


def _phase(points, modes, modeord):
    grids = torch.meshgrid(*[_k(n, modeord) for n in modes], indexing="ij")
    return sum(g.reshape(-1, 1) * p.reshape(1, -1).double() for g, p in zip(grids, points))


def exact_type1(points, values, output_shape, eps=1e-6, isign=-1, modeord=1):
    modes = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
    e = torch.exp(1j * np.sign(isign) * _phase(torch.atleast_2d(points), modes, modeord))
    return (values @ e.T.to(values.dtype)).reshape(values.shape[:-1] + modes)


def exact_type2(points, targets, eps=1e-6, isign=-1, modeord=1):
    points = torch.atleast_2d(points)
    modes = tuple(targets.shape[targets.ndim - points.shape[0]:])
    e = torch.exp(1j * np.sign(isign) * _phase(points, modes, modeord)).to(targets.dtype)
    return targets.reshape(targets.shape[:targets.ndim - len(modes)] + (-1,)) @ e


def exact_type3(points, values, targets, eps=1e-6, isign=-1):
    phase = torch.atleast_2d(targets).T.double() @ torch.atleast_2d(points).double()  # (K, M)
    return values @ torch.exp(1j * np.sign(isign) * phase).T.to(values.dtype)


def install():
    import warpfft.torch as wt
    wt.finufft_type1, wt.finufft_type2, wt.finufft_type3 = exact_type1, exact_type2, exact_type3
