"""The exact transforms of _fake.FakeLib (a mixin): ``warpfft_execute``'s arithmetic as
warpfft.h states it (dimension 1 fastest, k per modeord, iflag sign, batched points set after
set) by direct numpy sums, type 3's, and ``gpu_spreadinterponly``'s spreading / interpolation
with the plan's kernel. Split from _fake.py (the library's calls and bookkeeping) so that file
reads as the C ABI's bookkeeping and this one as the mathematics the tests compare against.

The mixin reads ``self.view`` (host memory standing in for device pointers) and a plan's dict
as ``warpfft_plan_create`` / ``warpfft_setpts*`` in _fake.py fill it.
"""

import numpy as np
from _kernel_sum import kernel_beta, phi


def _k(n, modeord):
    """Mode indices of an axis of n modes in warpfft.h's order for modeord (0: -n/2 .. ,
    1: FFT order)."""
    i = np.arange(n)
    return i - n // 2 if modeord == 0 else np.where(i < (n + 1) // 2, i, i - n)


class ExactTransforms:
    """FakeLib's transforms: ``_nudft`` dispatches on the plan (type 3, spread/interp only, or
    the direct sum of types 1/2)."""

    WIDTH, BETA = 4, kernel_beta(4, 2.0)  # type 3's kernel here (sigma 2)

    def _spreadinterp(self, p, c, fk):
        """gpu_spreadinterponly in the C ABI's order: grid = fk (n[0] fastest), with the
        plan's kernel (the real library's choice)."""
        real = np.float32 if p["precision"] == 1 else np.float64
        cplx = np.complex64 if p["precision"] == 1 else np.complex128
        M, nt, n, w, beta = p["M"], p["ntransf"], p["n"], p["width"], p["beta"]
        N = int(np.prod(n))
        cv, fv = self.view(c, cplx, nt * M), self.view(fk, cplx, nt * N)
        grid = np.zeros((nt,) + tuple(n[::-1]), np.complex128)  # numpy view: (.., N2, N1)
        fgrid = fv.reshape((nt,) + tuple(n[::-1])).astype(np.complex128)
        out_c = np.zeros((nt, M), np.complex128)
        for j in range(M):
            ws, idx = [], []
            for d in range(p["dim"]):
                x = float(self.view(p["pts"][d], real, M)[j])
                u = (x / (2 * np.pi) - np.floor(x / (2 * np.pi))) * n[d]
                i0 = int(np.ceil(u - w / 2))
                ii = np.arange(i0, i0 + w)
                ws.append(phi(ii - u, w, beta))
                idx.append(ii % n[d])
            wt = ws[0]
            for d in range(1, p["dim"]):
                wt = np.multiply.outer(ws[d], wt)  # C order: last C dim slowest
            ix = np.ix_(*idx[::-1])
            for t in range(nt):
                if p["type"] == 1:
                    grid[t][ix] += cv.reshape(nt, M)[t, j] * wt
                else:
                    out_c[t, j] = np.sum(fgrid[t][ix] * wt)
        if p["type"] == 1:
            fv[:] = grid.ravel().astype(cplx)
        else:
            cv[:] = out_c.ravel().astype(cplx)

    def _nudft3(self, p, c, fk):
        cplx = np.complex64 if p["precision"] == 1 else np.complex128
        M, K, nt, ns = p["M"], p["K"], p["ntransf"], p.get("n_sets") or 1
        tps = nt // ns
        cv = self.view(c, cplx, nt * M).reshape(nt, M)
        fv = self.view(fk, cplx, nt * K).reshape(nt, K)
        for q in range(ns):  # set q: its sources and targets, transforms q*tps ..
            src = [v[q * M:(q + 1) * M] for v in p["src"]]
            tgt = [v[q * K:(q + 1) * K] for v in p["tgt"]]
            phase = sum(np.outer(s, x) for s, x in zip(tgt, src))  # (K, M)
            A = np.exp(p["iflag"] * 1j * phase.reshape(K, M))
            rows = slice(q * tps, (q + 1) * tps)
            fv[rows] = (cv[rows].astype(np.complex128) @ A.T).astype(cplx)

    def _nudft_real(self, p, c, fk):
        """real_data (warpfft.h): type 1 real c -> the half modes (dimension 1 holds
        k1 = 0 .. N1/2, dimensions 2 and 3 by modeord); type 2 the half modes -> real
        c = Re(sum over the half of a_k1 f_k e^{..}), a_0 = 1, a_k1>0 = 2."""
        real = np.float32 if p["precision"] == 1 else np.float64
        cplx = np.complex64 if p["precision"] == 1 else np.complex128
        M, nt, n, ns = p["M"], p["ntransf"], p["n"], p.get("n_sets") or 1
        tps = nt // ns
        allpts = [self.view(q, real, ns * M).astype(np.float64) for q in p["pts"][:p["dim"]]]
        axes = [np.arange(n[0] // 2 + 1)] + [_k(v, p["modeord"]) for v in n[1:]]
        grids = np.meshgrid(*axes[::-1], indexing="ij")  # numpy shape (N3, N2, H1)
        ks = [g.ravel() for g in grids[::-1]]
        H = ks[0].size
        a = np.where(ks[0] > 0, 2.0, 1.0)
        cv = self.view(c, real, nt * M).reshape(nt, M) if M else np.zeros((nt, 0), real)
        fv = self.view(fk, cplx, nt * H).reshape(nt, H)
        for q in range(ns):
            pts = [v[q * M:(q + 1) * M] for v in allpts]
            A = np.exp(p["iflag"] * 1j * sum(np.outer(x, k) for x, k in zip(pts, ks)))  # (M, H)
            rows = slice(q * tps, (q + 1) * tps)
            if p["type"] == 1:
                fv[rows] = (cv[rows].astype(np.float64) @ A).astype(cplx)
            else:
                cv[rows] = ((fv[rows].astype(np.complex128) * a) @ A.T).real.astype(real)

    def _nudft(self, p, c, fk):
        if p["type"] == 3:
            return self._nudft3(p, c, fk)
        if p["sio"]:
            return self._spreadinterp(p, c, fk)
        if p.get("real"):
            return self._nudft_real(p, c, fk)
        real = np.float32 if p["precision"] == 1 else np.float64
        cplx = np.complex64 if p["precision"] == 1 else np.complex128
        M, nt, n, ns = p["M"], p["ntransf"], p["n"], p.get("n_sets") or 1
        tps = nt // ns
        allpts = [self.view(q, real, ns * M).astype(np.float64) for q in p["pts"][:p["dim"]]]
        # flat index i1 + N1 (i2 + N2 i3): numpy shape (N3, N2, N1) in C order
        grids = np.meshgrid(*[_k(v, p["modeord"]) for v in n[::-1]], indexing="ij")
        ks = [g.ravel() for g in grids[::-1]]
        N = ks[0].size
        cv = self.view(c, cplx, nt * M).reshape(nt, M) if M else np.zeros((nt, 0), cplx)
        fv = self.view(fk, cplx, nt * N).reshape(nt, N)
        for q in range(ns):  # set q (batched points: set after set), transforms q*tps ..
            pts = [v[q * M:(q + 1) * M] for v in allpts]
            A = np.exp(p["iflag"] * 1j * sum(np.outer(x, k) for x, k in zip(pts, ks)))  # (M, N)
            rows = slice(q * tps, (q + 1) * tps)
            if p["type"] == 1:
                fv[rows] = (cv[rows].astype(np.complex128) @ A).astype(cplx)
            else:
                cv[rows] = (fv[rows].astype(np.complex128) @ A.T).astype(cplx)
