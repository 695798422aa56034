#!/usr/bin/env python3
"""The width rule's worst-case aliasing bound (c_core/src/params/width.c: worst offset with the
cross-dimension coherence, or the band edge) for any kernel phi on [-w/2, w/2], to compare the
sinh kernel warpfft uses with a prolate spheroidal one (psi_0 from the Legendre expansion, its
bandwidth scanned per width) on the same footprint sums (docs/accuracy.md).

    python3 scripts/kernel_bound_compare.py DIM N      # e.g. 3 128: sigma 1.5, 2, 2.5; w 4..12
"""
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels", "test"))
import kernel_shape  # warpfft's kernel: kernels/kernel_shape.h, read

def sinh_kernel(w, beta):
    return lambda z: kernel_shape.phi(z, w, beta)

def es_kernel(w, beta):
    def phi(z):
        a = 2*np.asarray(z)/w; s2 = 1-a*a
        return np.where(s2 >= 0, np.exp(beta*(np.sqrt(np.maximum(s2,0))-1)), 0.0)
    return phi

def pswf_coeffs(c, n=60):
    # psi_0(c, x) = sum_k b_k Pbar_{2k}(x): lowest eigvec of the even tridiagonal (Bouwkamp)
    K = n
    A = np.zeros((K, K))
    for k in range(K):
        m = 2*k
        A[k, k] = m*(m+1) + c*c*(2*m*(m+1)-1)/((2*m+3)*(2*m-1))
        if k+1 < K:
            A[k, k+1] = A[k+1, k] = c*c*(m+2)*(m+1)/((2*m+3)*np.sqrt((2*m+1)*(2*m+5)))
    ev, V = np.linalg.eigh(A)
    b = V[:, 0]
    return b if b[0] > 0 else -b

def pswf_kernel(w, c):
    b = pswf_coeffs(c)
    from numpy.polynomial import legendre as L
    coef = np.zeros(2*len(b))
    for k, bk in enumerate(b):
        coef[2*k] = bk*np.sqrt((4*k+1)/2)  # normalized Legendre
    p0 = L.legval(0.0, coef)
    def phi(z):
        a = 2*np.asarray(z, dtype=float)/w
        return np.where(np.abs(a) <= 1, L.legval(np.clip(a,-1,1), coef)/p0, 0.0)
    return phi

def phihat(phi, w, xi):
    x, wt = np.polynomial.legendre.leggauss(200)
    z = x*w/2; g = wt*w/2*phi(z)
    return (g[None,:]*np.cos(2*np.pi*np.outer(xi, z))).sum(1)

def dim_stats(phi, w, N, nf):
    K = np.arange(-(N//2), (N-1)//2+1) if N <= 64 else None
    if K is None:
        x, wt = np.polynomial.legendre.leggauss(32)
        kmax = (N-1)//2
        kk = (kmax+0.5)*x; kw = (kmax+0.5)*wt
        extra = np.round(np.linspace(-(N//2), kmax, 49)); ew = np.zeros(49)
        kk = np.concatenate([kk, extra]); kw = np.concatenate([kw, ew])
        if N % 2 == 0: kw[len(kk)-49] = 1.0
    else:
        kk = K.astype(float); kw = np.ones(len(K))
    ph = phihat(phi, w, kk/nf)
    xg, wg = np.polynomial.legendre.leggauss(16)
    deltas = np.concatenate([0.25*(xg+1), 0.25*(xg+1)+0.5, [0.0, 0.5]])
    dws = np.concatenate([0.25*wg, 0.25*wg, [0, 0]])
    off2 = coh = worst = 0.0; edge2 = np.zeros(len(kk))
    for d, dw in zip(deltas, dws):
        i0 = np.ceil(d - 0.5*w)
        z = i0 + np.arange(w) - d
        pv = phi(z)
        P = (pv[None,:]*np.exp(-2j*np.pi*np.outer(kk/nf, z))).sum(1)
        E = P/ph - 1
        a2 = np.abs(E)**2
        off2 = max(off2, (kw*a2).sum()/N)
        coh = max(coh, abs((kw*E).sum())/N)
        edge2 += dw*a2
        worst = max(worst, np.sqrt(a2.max()))
    return off2, coh, edge2.max()

def bound(phi, w, N, nf, dim):
    o, c, e = dim_stats(phi, w, N, nf)
    off = dim*o + (dim*c)**2 - dim*c*c
    return np.sqrt(max(off, dim*e))

def smooth_even(n):
    n = max(n, 2)
    while True:
        if n % 2 == 0:
            m = n
            for p in (2,3,5,7):
                while m % p == 0: m //= p
            if m == 1: return n
        n += 1

if __name__ == "__main__":
    dim = int(sys.argv[1]); N = int(sys.argv[2])
    for sigma in (1.5, 2.0, 2.5):
        for w in range(4, 13):
            nf = smooth_even(int(np.ceil(sigma*N)))
            b_sinh = bound(sinh_kernel(w, kernel_shape.beta(w, sigma)), w, N, nf, dim)
            # PSWF: best c over a small scan
            best = (np.inf, 0)
            for f in np.linspace(0.80, 1.05, 11):
                c = f*np.pi*(1-1/(2*sigma))*w
                b = bound(pswf_kernel(w, c), w, N, nf, dim)
                if b < best[0]: best = (b, f)
            print(f"sigma {sigma} w {w:2d}: sinh {b_sinh:.2e}  pswf {best[0]:.2e} (c/ref {best[1]:.3f})  gain {b_sinh/best[0]:.2f}x", flush=True)
