"""One-call transforms in the style of finufft: nufft{1,2,3}d{1,2}."""

import math

import numpy as np

from ._device import is_device
from ._errors import invalid
from ._plan import Plan, normalize_modes


def _dtype_of(data):
    """complex64/complex128 for the data (real or integer input -> the matching complex)."""
    if is_device(data):
        dt = np.dtype(data.__cuda_array_interface__["typestr"])
    else:
        dt = np.asarray(data).dtype
    if dt in (np.complex64, np.float32):
        return np.dtype(np.complex64)
    return np.dtype(np.complex128)


def _shape(a):
    return tuple(a.__cuda_array_interface__["shape"]) if is_device(a) else np.shape(a)


def _type1(dim, pts, c, n_modes, out, eps, isign, kwargs):
    M = math.prod(_shape(pts[0]))
    shape = _shape(c)
    n_trans = shape[0] if len(shape) >= 2 else 1
    if math.prod(shape) != n_trans * M:
        raise invalid(f"c has shape {shape}: expected ({M},) or (n_trans, {M})")
    if n_modes is None:
        if out is None:
            raise invalid("give n_modes (or out, whose shape gives it)")
        n_modes = _shape(out)[-dim:][::-1]
    n = normalize_modes(n_modes)
    if len(n) == 1 and dim > 1:
        n = n * dim
    if len(n) != dim:
        raise invalid(f"n_modes {n} has {len(n)} entries for a {dim}D transform")
    return _run(1, n, pts, c, out, eps, isign, n_trans, _dtype_of(c), kwargs)


def _type2(dim, pts, f, out, eps, isign, kwargs):
    shape = _shape(f)
    if len(shape) not in (dim, dim + 1):
        raise invalid(f"f has shape {shape}: expected {dim} axes ([N3,] [N2,] N1), "
                      f"or {dim + 1} with a leading batch axis")
    n_trans = shape[0] if len(shape) == dim + 1 else 1
    return _run(2, shape[-dim:][::-1], pts, f, out, eps, isign, n_trans, _dtype_of(f), kwargs)


def _run(type_, n_modes, pts, data, out, eps, isign, n_trans, dtype, kwargs):
    with Plan(type_, n_modes, dtype=dtype, eps=eps, isign=isign, n_trans=n_trans,
              **kwargs) as plan:
        plan.setpts(*pts)
        return plan.execute(data, out)


def nufft1d1(x, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """Type 1 in 1D: f[k] = sum_j c[j] exp(isign i k x[j]); returns shape ([n_trans,] N1).
    kwargs: Plan options (modeord, method, upsampfac, device, stream, ...)."""
    return _type1(1, (x,), c, n_modes, out, eps, isign, kwargs)


def nufft2d1(x, y, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """Type 1 in 2D; n_modes = (N1, N2) (or one int for both); returns shape
    ([n_trans,] N2, N1): f[i2, i1] is mode (k1, k2), k1 paired with x."""
    return _type1(2, (x, y), c, n_modes, out, eps, isign, kwargs)


def nufft3d1(x, y, z, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """Type 1 in 3D; n_modes = (N1, N2, N3); returns shape ([n_trans,] N3, N2, N1)."""
    return _type1(3, (x, y, z), c, n_modes, out, eps, isign, kwargs)


def nufft1d2(x, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """Type 2 in 1D: c[j] = sum_k f[k] exp(isign i k x[j]); f shape ([n_trans,] N1)."""
    return _type2(1, (x,), f, out, eps, isign, kwargs)


def nufft2d2(x, y, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """Type 2 in 2D; f shape ([n_trans,] N2, N1); returns shape ([n_trans,] M)."""
    return _type2(2, (x, y), f, out, eps, isign, kwargs)


def nufft3d2(x, y, z, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """Type 2 in 3D; f shape ([n_trans,] N3, N2, N1); returns shape ([n_trans,] M)."""
    return _type2(3, (x, y, z), f, out, eps, isign, kwargs)
