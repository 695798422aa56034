"""The direct kernel sum that spread/interp only (gpu_spreadinterponly=1) computes, in the
reference's Python conventions: the grid is the mode array (shape n_modes, axis d <-> the d-th
coordinate), grid index i_d sits at coordinate 2 pi i_d / N_d, and the kernel is warpfft's
(phi, kernel_beta: kernels/kernel_shape.h through kernels/test/kernel_shape.py, which reads it) of the
plan's width w and beta (plan.info), periodic on the grid."""

import importlib.util
import os

import numpy as np


def _kernel_shape():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "test",
                        "kernel_shape.py")
    spec = importlib.util.spec_from_file_location("kernel_shape", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_shape = _kernel_shape()
phi = _shape.phi  # phi(z, w, beta): the kernel at offsets z, 0 where |z| >= w/2
kernel_beta = _shape.beta  # kernel_beta(w, sigma): its shape parameter


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
