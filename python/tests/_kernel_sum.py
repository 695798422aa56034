"""The direct kernel sum that spread/interp only (gpu_spreadinterponly=1) computes, in the
reference's Python conventions: the grid is the mode array (shape n_modes, axis d <-> the d-th
coordinate), grid index i_d sits at coordinate 2 pi i_d / N_d, and the kernel is warpfft's sinh
kernel (phi, below) of the plan's width w and beta (plan.info), periodic on the grid."""

import numpy as np


def phi(z, w, beta):
    """warpfft's kernel at offsets z: 2 e^-beta (sinh(beta s) / s - beta), s = sqrt(1 - (2z/w)^2),
    0 where |z| >= w/2 (kernels/common.cuh)."""
    a2 = (2 * np.asarray(z, np.float64) / w) ** 2
    ok = a2 < 1
    s = np.sqrt(np.where(ok, 1 - a2, 1.0))
    return np.where(ok, 2 * np.exp(-beta) * (np.sinh(beta * s) / s - beta), 0.0)


def _weights(x, N, w, beta):
    """W[j, i] = sum over periodic images of phi(i - u_j), u_j = frac(x_j / 2pi) N."""
    x = np.asarray(x, np.float64)
    u = x / (2 * np.pi)
    u = (u - np.floor(u)) * N
    u = np.where(u >= N, u - N, u)
    i = np.arange(N)
    W = np.zeros((x.size, N))
    for m in (-1, 0, 1):
        W += phi(i[None, :] + m * N - u[:, None], w, beta)
    return W


def spread(pts, c, n_modes, w, beta):
    """Type 1: f[..., i1, i2, i3] = sum_j c[..., j] prod_d W_d[j, i_d]."""
    Ws = [_weights(x, N, w, beta) for x, N in zip(pts, n_modes)]
    letters = "abc"[:len(n_modes)]
    spec = "...j," + ",".join("j" + L for L in letters) + "->..." + letters
    return np.einsum(spec, np.asarray(c, np.complex128), *Ws)


def interp(pts, f, n_modes, w, beta):
    """Type 2: c[..., j] = sum_i f[..., i1, i2, i3] prod_d W_d[j, i_d]."""
    Ws = [_weights(x, N, w, beta) for x, N in zip(pts, n_modes)]
    letters = "abc"[:len(n_modes)]
    spec = "..." + letters + "," + ",".join("j" + L for L in letters) + "->...j"
    return np.einsum(spec, np.asarray(f, np.complex128), *Ws)
