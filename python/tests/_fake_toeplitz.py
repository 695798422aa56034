"""The Toeplitz normal operator of _fake.FakeLib (a mixin; warpfft.h's last block), exact.

The spectrum is the exact DFT of K(m) = sum_j w_j exp(-iflag i m.x_j) on the grid the real
library chooses (warpfft_toeplitz_params, no GPU), scaled by 1 / prod(L); an application pads,
multiplies in Fourier space and crops exactly as the C ABI defines it, so T f equals A^H W A f
to rounding, whatever the spectrum's source. Split from _fake.py (the NUFFT plans' calls).
"""

import ctypes
import time

import numpy as np
from _fake_opts import FieldView
from _fake_transforms import _k
from warpfft import _lib


class FakeToeplitz:
    """The ``warpfft_toeplitz_*`` calls. Uses FakeLib's ``_log``, ``view``, ``plans``, ``_ids``,
    ``_lock``, ``delay``, ``toep_in_use``, ``violations`` and ``_real`` (the real library, for
    the grid it would choose)."""

    def _toep_grid(self, dim, n, tol, precision, popts, weights):
        info = (ctypes.c_char * 4096)()
        pinfo = ctypes.cast(info, ctypes.POINTER(_lib.ToeplitzInfo))
        st = self._real.warpfft_toeplitz_params(dim, n, 1, tol, precision, popts, weights, pinfo)
        if st:
            return st, None
        return 0, tuple(pinfo.contents.n_grid[:dim])  # C order

    def _toep_spectrum(self, dim, L, iflag, precision, M, pts, weights, w):
        real = np.float32 if precision == 1 else np.float64
        cplx = np.complex64 if precision == 1 else np.complex128
        x = [self.view(q, real, M).astype(np.float64) for q in pts[:dim]]
        if weights == 0:
            wv = np.ones(M)
        elif weights == 1:
            wv = self.view(w, real, M).astype(np.float64)
        else:
            wv = self.view(w, cplx, M).astype(np.complex128)
        s = -1 if iflag >= 0 else 1  # the kernel's type 1 has sign -iflag
        K = np.zeros(tuple(L[::-1]), np.complex128)  # numpy axes: C dim 1 last
        for j in range(M):
            e = 1.0
            for d in range(dim):
                m = np.fft.fftfreq(L[d]) * L[d]
                e = np.multiply.outer(np.exp(1j * s * m * x[d][j]), e)
            K += wv[j] * e
        S = np.fft.fftn(K) / K.size
        return S.real if weights != 2 else S

    def _toep_positions(self, N, modeord):
        """Grid position of each mode index i (C ABI: position k + N/2 of mode k)."""
        k = _k(N, modeord)
        return k + N // 2

    def _toep_apply(self, t, S, adjoint, pin, pout):
        cplx = np.complex64 if t["precision"] == 1 else np.complex128
        n, L, nt = t["n"], t["L"], t["ntransf"]
        N = int(np.prod(n))
        f = self.view(pin, cplx, nt * N).reshape((nt,) + tuple(n[::-1])).astype(np.complex128)
        g = np.zeros((nt,) + tuple(L[::-1]), np.complex128)
        idx = np.ix_(*[self._toep_positions(v, t["modeord"]) for v in n[::-1]])
        for b in range(nt):
            g[b][idx] = f[b]
        axes = tuple(range(1, 1 + len(n)))
        spec = np.conj(S) if adjoint else S
        g = np.fft.ifftn(np.fft.fftn(g, axes=axes) * spec, axes=axes) * np.prod(L)
        out = np.stack([g[b][idx] for b in range(nt)])
        self.view(pout, cplx, nt * N)[:] = out.ravel().astype(cplx)

    def warpfft_toeplitz_create(self, dim, n, iflag, ntransf, tol, precision, popts, M, x, y, z,
                                weights, w, phandle):
        opts = FieldView(popts._obj)
        n = tuple(n[:dim])
        st = self._log("warpfft_toeplitz_create", dim, n, iflag, ntransf, tol, precision, M,
                       weights, opts.modeord, opts.device, opts.stream)
        if st:
            return st
        st, L = self._toep_grid(dim, _lib.n_modes_array(n), tol, precision, popts, weights)
        if st:
            return st
        h = next(self._ids)
        spec = None if M == 0 else self._toep_spectrum(dim, L, iflag, precision, M, (x, y, z),
                                                       weights, w)
        self.plans[h] = dict(kind="toeplitz", n=n, L=L, iflag=iflag, ntransf=ntransf,
                             precision=precision, modeord=opts.modeord, weights=weights, M=M,
                             spectrum=spec, tol=tol)
        phandle._obj.value = h
        return 0

    def _toep_call(self, name, h, precision, args, apply):
        """An application through the fake's checks (_toep_enter): the logged status, then the
        precision's, then apply(t) on the operator."""
        st = self._log(name, h, precision, *args)
        t = self._toep_enter(h, name)
        if t is None:
            return 19  # WARPFFT_ERR_INTERNAL: the test sees the violation
        try:
            if st == 0 and precision != t["precision"]:
                st = 8
            if st == 0:
                apply(t)
            return st
        finally:
            self._toep_leave(h)

    def warpfft_toeplitz_apply(self, h, precision, adjoint, pin, pout):
        def apply(t):
            if t["spectrum"] is None:  # the zero operator
                cplx = np.complex64 if precision == 1 else np.complex128
                self.view(pout, cplx, t["ntransf"] * int(np.prod(t["n"])))[:] = 0
            else:
                self._toep_apply(t, t["spectrum"], adjoint, pin, pout)

        return self._toep_call("warpfft_toeplitz_apply", h, precision, (adjoint, pin, pout), apply)

    def warpfft_toeplitz_apply_spectrum(self, h, precision, real, pspec, adjoint, pin, pout):
        def apply(t):
            rdt = (np.float32 if precision == 1 else np.float64) if real else \
                (np.complex64 if precision == 1 else np.complex128)
            S = self.view(pspec, rdt, int(np.prod(t["L"]))).reshape(t["L"][::-1])
            self._toep_apply(t, S.astype(np.complex128), adjoint, pin, pout)

        return self._toep_call("warpfft_toeplitz_apply_spectrum", h, precision,
                               (real, pspec, adjoint, pin, pout), apply)

    def warpfft_toeplitz_spectrum(self, dim, n, iflag, tol, precision, popts, M, x, y, z, weights,
                                  w, pspec):
        st = self._log("warpfft_toeplitz_spectrum", dim, tuple(n[:dim]), iflag, tol, precision, M,
                       weights, FieldView(popts._obj).stream)
        if st:
            return st
        st, L = self._toep_grid(dim, n, tol, precision, popts, weights)
        if st:
            return st
        rdt = (np.float32 if precision == 1 else np.float64) if weights != 2 else \
            (np.complex64 if precision == 1 else np.complex128)
        S = np.zeros(int(np.prod(L))) if M == 0 else \
            self._toep_spectrum(dim, L, iflag, precision, M, (x, y, z), weights, w).ravel()
        self.view(pspec, rdt, int(np.prod(L)))[:] = S.astype(rdt)
        return 0

    def warpfft_toeplitz_get_info(self, h, pinfo):
        t, info = self.plans[h], pinfo._obj if hasattr(pinfo, "_obj") else pinfo.contents
        dim = len(t["n"])
        info.dim, info.precision, info.weights = dim, t["precision"], t["weights"]
        info.modeord, info.iflag = t["modeord"], 1 if t["iflag"] >= 0 else -1
        info.spectrum_real = int(t["weights"] != 2)
        info.fft_steps = 1
        for d in range(3):
            info.n_modes[d] = t["n"][d] if d < dim else 1
            info.n_grid[d] = t["L"][d] if d < dim else 1
        info.ntransf, info.n_points, info.tol = t["ntransf"], t["M"], t["tol"]
        rb = 4 if t["precision"] == 1 else 8
        Lp = int(np.prod(t["L"]))
        info.spectrum_bytes = 0 if t["spectrum"] is None else Lp * rb * (1 if t["weights"] != 2
                                                                         else 2)
        info.grid_bytes = t["ntransf"] * Lp * 2 * rb
        info.workspace_bytes = info.spectrum_bytes + info.grid_bytes
        return self._log("warpfft_toeplitz_get_info", h)

    def warpfft_toeplitz_workspace_bytes(self, h, pn):
        pn._obj.value = 2000
        return self._log("warpfft_toeplitz_workspace_bytes", h)

    def warpfft_toeplitz_destroy(self, h):
        st = self._log("warpfft_toeplitz_destroy", h)
        if st == 0 and (h in self.pool_busy or h in self.pool_idle):
            return 1  # the pool's: WARPFFT_ERR_INVALID_ARG, as the C library
        return st or self._toep_destroy(h)

    def _toep_destroy(self, h):
        """Frees the operator; a thread applying it now is a violation (a use after free)."""
        with self._lock:
            if h in self.toep_in_use:
                self.violations.append(f"operator {h} destroyed while applied")
            self.plans.pop(h, None)
        return 0

    def _toep_enter(self, h, who):
        """The operator a call applies, checked: one that does not exist (destroyed: a use after
        free in the C library) or that another thread is applying (one work grid, one cuFFT
        plan driven twice) is recorded in ``violations``; None then."""
        with self._lock:
            if h not in self.plans:
                self.violations.append(f"{who} of operator {h}, destroyed or never made")
                return None
            if h in self.toep_in_use:
                self.violations.append(f"{who}: operator {h} applied by two threads at once")
                return None
            self.toep_in_use.add(h)
            return self.plans[h]

    def _toep_leave(self, h):
        if self.delay:
            time.sleep(self.delay)  # the application "runs" while the operator is held
        with self._lock:
            self.toep_in_use.discard(h)
