"""Exact NUFFT sums in numpy (f64) for the framework tests; modes with x along the first mode
axis (jax-finufft / pytorch-finufft layout)."""

import numpy as np


def _k(n, modeord=0):
    return np.fft.fftfreq(n) * n if modeord else np.arange(-(n // 2), n - n // 2)


def direct1(c, pts, n_modes, iflag, modeord=0):
    """f[k] = sum_j c[j] e^{i iflag k.x_j}; c (..., M), pts list of (M,), -> (..., *n_modes)."""
    grids = np.meshgrid(*[_k(n, modeord) for n in n_modes], indexing="ij")
    phase = sum(g[..., None] * np.asarray(p, np.float64) for g, p in zip(grids, pts))
    e = np.exp(1j * np.sign(iflag) * phase)  # (*n_modes, M)
    return np.tensordot(np.asarray(c, np.complex128), e, axes=([-1], [-1]))


def direct2(f, pts, iflag, modeord=0):
    dim = len(pts)
    n_modes = f.shape[-dim:]
    grids = np.meshgrid(*[_k(n, modeord) for n in n_modes], indexing="ij")
    phase = sum(g[..., None] * np.asarray(p, np.float64) for g, p in zip(grids, pts))
    e = np.exp(1j * np.sign(iflag) * phase)
    fl = np.asarray(f, np.complex128).reshape(f.shape[:-dim] + (-1,))
    return fl @ e.reshape(-1, e.shape[-1])


def direct3(c, pts, targets, iflag):
    """f[k] = sum_j c[j] e^{i iflag s_k.x_j}; c (..., M), pts and targets lists of (M,) / (K,)."""
    phase = sum(np.asarray(t, np.float64)[:, None] * np.asarray(p, np.float64)[None, :]
                for p, t in zip(pts, targets))  # (K, M)
    return np.asarray(c, np.complex128) @ np.exp(1j * np.sign(iflag) * phase).T


def relerr(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel())

