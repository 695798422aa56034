#!/usr/bin/env python3
"""End-to-end numpy emulation of warpfft's types 1 and 2 (1D and 2D, double precision), without
a GPU, for the point sets of issue 14: the plan's own width, beta and fine grid
(warpfft.plan_params), the device's fold (Cody-Waite, kernels/common.cuh), footprint and kernel
(kernels/kernel_shape.h, read by kernels/test/kernel_shape.py), an FFT, the deconvolution by
phihat; against the exact sum with phases
reduced in extended precision. Prints error/tol per case; exits 1 if any is above
max(tol, tol_floor).

    WARPFFT_LIBRARY=target/release/libwarpfft.so python3 scripts/emulate_accuracy.py
"""
import os
import sys

import numpy as np
from numpy.polynomial.legendre import leggauss

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels", "test"))
import warpfft  # noqa: E402
from kernel_shape import phi  # noqa: E402

TWO_PI_HI, TWO_PI_LO, INV_2PI = 6.283185307179586232, 2.4492935982947064e-16, 1 / (2 * np.pi)


def fold(x, nf):
    """kernels/common.cuh wf_fold (numpy has no fma: the products are split exactly instead)."""
    n = np.rint(x * INV_2PI)
    r = (np.longdouble(x) - np.longdouble(n) * np.longdouble(TWO_PI_HI)) - np.longdouble(n) * TWO_PI_LO
    u = np.asarray(r, dtype=np.float64) * INV_2PI
    u = u - np.floor(u)
    u = u * nf
    return np.where(u >= nf, u - nf, u)


def phihat(k, nf, w, beta):
    """Gauss-Legendre in theta after t = (w/2) sin(theta), as kernel.c (phi(t) cos(theta) has no
    square-root endpoint there)."""
    x, wt = leggauss(4 * w + 32)
    th = 0.5 * np.pi * x
    hw = 0.5 * w
    g = 0.5 * np.pi * wt * hw * phi(hw * np.sin(th), w, beta) * np.cos(th)
    return (g[None, :] * np.cos(2 * np.pi * np.outer(k, hw * np.sin(th)) / nf)).sum(1)


def footprint(x, nf, w, beta):
    u = fold(x, nf)
    i0 = np.ceil(u - 0.5 * w)
    t = np.arange(w)
    idx = (i0[:, None] + t[None, :]).astype(np.int64) % nf
    return idx, phi((i0[:, None] + t[None, :]) - u[:, None], w, beta)


def modes(n):
    return np.arange(-(n // 2), (n - 1) // 2 + 1)


def exact_phase(k, x):
    """k*x mod 2pi in extended precision (k integer, x double)."""
    p = np.multiply.outer(np.asarray(k, np.longdouble), np.asarray(x, np.longdouble))
    two_pi = np.longdouble(TWO_PI_HI) + np.longdouble(TWO_PI_LO)
    return np.asarray(p - np.round(p / two_pi) * two_pi, dtype=np.float64)


def run(ty, n, pts, tol, rng):
    dim = len(n)
    p = warpfft.plan_params(ty, n, dtype=np.complex128, eps=tol)
    w, beta, nf = p["width"], p["beta"], p["n_fine"]
    m = len(pts[0])
    fp = [footprint(pts[d], nf[d], w, beta) for d in range(dim)]
    ks = [modes(n[d]) for d in range(dim)]
    fac = [1 / phihat(ks[d], nf[d], w, beta) for d in range(dim)]
    ph = [exact_phase(ks[d], pts[d]) for d in range(dim)]  # (N_d, M)
    if ty == 1:
        c = rng.standard_normal(m) + 1j * rng.standard_normal(m)
        grid = np.zeros(nf[::-1], complex)
        if dim == 1:
            np.add.at(grid, fp[0][0], fp[0][1] * c[:, None])
        else:
            (i1, v1), (i2, v2) = fp
            np.add.at(grid, (i2[:, None, :], i1[:, :, None]), (v1[:, :, None] * v2[:, None, :]) * c[:, None, None])
        g = np.fft.ifft2(grid) * grid.size if dim == 2 else np.fft.ifft(grid) * grid.size
        if dim == 1:
            approx = g[ks[0] % nf[0]] * fac[0]
            exact = np.exp(1j * ph[0]) @ c
        else:
            approx = g[np.ix_(ks[1] % nf[1], ks[0] % nf[0])] * np.outer(fac[1], fac[0])
            exact = np.einsum("bj,aj,j->ba", np.exp(1j * ph[1]), np.exp(1j * ph[0]), c)
    else:
        shape = tuple(len(k) for k in ks[::-1])
        f = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        big = np.zeros(nf[::-1], complex)
        if dim == 1:
            big[ks[0] % nf[0]] = f * fac[0]
            g = np.fft.ifft(big) * big.size
            approx = (g[fp[0][0]] * fp[0][1]).sum(1)
            exact = f @ np.exp(1j * ph[0])
        else:
            big[np.ix_(ks[1] % nf[1], ks[0] % nf[0])] = f * np.outer(fac[1], fac[0])
            g = np.fft.ifft2(big) * big.size
            (i1, v1), (i2, v2) = fp
            approx = (g[i2[:, None, :], i1[:, :, None]] * v1[:, :, None] * v2[:, None, :]).sum((1, 2))
            exact = np.einsum("ba,bj,aj->j", f, np.exp(1j * ph[1]), np.exp(1j * ph[0]))
    err = np.linalg.norm(approx - exact) / np.linalg.norm(exact)
    return err, w, p["tol_floor"]


def point_sets(n, m, rng, nf):
    pi = np.pi
    specials = np.array([-pi, pi, np.nextafter(pi, 4), np.nextafter(pi, 0), np.nextafter(-pi, -4),
                         np.nextafter(-pi, 0), 0.0])

    def node(d, half):
        return -pi + 2 * pi * ((rng.integers(0, nf[d], m) + half) / nf[d])

    sets = {}
    dims = range(len(n))
    sets["uniform"] = [rng.uniform(-pi, pi, m) for _ in dims]
    sets["nodes"] = [node(d, 0.0) for d in dims]
    sets["half"] = [node(d, 0.5) for d in dims]
    sets["near_pi"] = [np.where(np.arange(m) % 3 == 0, rng.choice(specials, m), node(d, 0.0)) for d in dims]
    sets["tight"] = [0.7 - 0.4 * d + 1e-3 * rng.standard_normal(m) for d in dims]
    sets["far"] = [rng.uniform(-1e4, 1e4, m) for _ in dims]
    return sets


def main():
    rng = np.random.default_rng(14)
    bad = 0
    for n in [(200,), (201,), (24, 26)]:
        for ty in (1, 2):
            for tol in (1e-5, 1e-9, 1e-12):
                p = warpfft.plan_params(ty, n, dtype=np.complex128, eps=tol)
                for name, pts in point_sets(n, 3000, rng, p["n_fine"]).items():
                    err, w, floor = run(ty, n, pts, tol, rng)
                    ok = err <= max(tol, floor)
                    bad += not ok
                    print(f"N {str(n):10} type {ty} tol {tol:7.0e} w {w:2} {name:8} err {err:9.2e} "
                          f"err/tol {err / tol:5.2f} {'ok' if ok else 'ABOVE'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
