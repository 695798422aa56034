"""A fake C library and CUDA driver for GPU-free tests of the Python layer.

``FakeLib`` stands in for ``warpfft._lib.lib``: "device memory" is host memory (ctypes
buffers), and ``warpfft_execute`` computes the exact non-uniform DFT with the C ABI's
conventions as warpfft.h states them (dimension 1 fastest, k per modeord, iflag sign), so the
Python layer's conventions (axis reversal, shapes, batch, defaults) are checked end to end
against a numpy direct sum with no GPU. It keeps a live-plan pool as warpfft.h defines one
(``warpfft_pool_*``: idle plans by key, busy ones the caller's, limits on the idle ones, a clear
dooming busy plans, points forgotten at release unless kept, points ids), creating and
destroying through its own ``warpfft_plan_create`` / ``warpfft_plan_destroy`` so that those
show in the log. A plan of type 1 or 2 takes its parameters (upsampfac, width, beta, kernel,
predicted_ms, fine grid) from the real library's ``warpfft_plan_params`` (no GPU), which also
refuses what the real plan creation would (a bad option: the real message). ``opts_seen``
holds the options of every plan creation and pool acquire, as dicts. Every call is logged in
``calls``; ``fail`` maps a function name to a status it returns (message "fake failure");
``delay`` makes execute sleep (thread tests).
``FakeDriver`` stands in for ``warpfft._device.driver`` (events, stream waits, pointer
devices) and logs the same way.
"""

import collections
import ctypes
import itertools
import threading
import time

import numpy as np
from warpfft import _device, _lib


def _k(n, modeord):
    i = np.arange(n)
    return i - n // 2 if modeord == 0 else np.where(i < (n + 1) // 2, i, i - n)


class FakeLib:
    def __init__(self, real):
        self._real = real
        self.calls = []
        self.fail = {}
        self.delay = 0.0
        self.buffers = {}
        self.plans = {}
        self._ids = itertools.count(1)
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()
        self._pool_lock = threading.RLock()
        self.pool_idle = collections.OrderedDict()  # handle -> key, least recently released first
        self.pool_busy = {}  # handle -> key
        self.pool_doomed = set()
        self.pool_limits = [16, 1 << 30]
        self.pool_counts = {"created": 0, "hits": 0, "destroyed": 0}
        self._points_ids = itertools.count(1)
        self.opts_seen = []  # every plan_create's and pool_acquire's options, as dicts
        self.message = b"fake failure"

    def __getattr__(self, name):  # everything not faked: the real library (no GPU needed)
        return getattr(self._real, name)

    def _log(self, name, *args):
        self.calls.append((name,) + args)
        st = self.fail.get(name, 0)
        if st:
            self.message = b"fake failure"
        return st

    @staticmethod
    def _opts_dict(opts):
        """The fields of a warpfft_opts as the declaration has them (bin sizes left out)."""
        return {f: getattr(opts, f) for f, _ in type(opts)._fields_ if f != "bin_size"}

    def _params(self, type_, dim, n, ntransf, tol, precision, popts):
        """(status, parameters) of a plan of type 1 or 2 from the real library's
        warpfft_plan_params (no GPU); a failure keeps the real message for warpfft_last_error."""
        info = _lib.new_plan_info()
        st = self._real.warpfft_plan_params(type_, dim, n, ntransf, tol, precision, popts,
                                            ctypes.byref(info))
        if st:
            self.message = self._real.warpfft_last_error()
            return st, None
        return 0, dict(width=info.width, beta=info.beta, upsampfac=info.upsampfac,
                       kernel=info.kernel, predicted_ms=info.predicted_ms,
                       n_fine=tuple(info.n_fine), bin_size=tuple(info.bin_size))

    def names(self):
        return [c[0] for c in self.calls]

    # memory
    def alloc(self, nbytes):
        buf = ctypes.create_string_buffer(max(1, nbytes))
        ptr = ctypes.addressof(buf)
        self.buffers[ptr] = buf
        return ptr

    def view(self, ptr, dtype, n):
        if not n:
            return np.zeros(0, dtype)
        return np.frombuffer((ctypes.c_char * (n * np.dtype(dtype).itemsize)).from_address(ptr),
                             dtype)

    def warpfft_malloc(self, device, nbytes, pptr):
        st = self._log("warpfft_malloc", device, nbytes)
        if st == 0:
            pptr._obj.value = self.alloc(nbytes)
        return st

    def warpfft_free(self, device, ptr):
        self._log("warpfft_free", device, ptr)
        self.buffers.pop(ptr if isinstance(ptr, int) else getattr(ptr, "value", ptr), None)
        return 0

    def warpfft_memcpy_htod(self, device, dst, src, nbytes):
        st = self._log("warpfft_memcpy_htod", device, dst, nbytes)
        ctypes.memmove(dst, src, nbytes)
        return st

    def warpfft_memcpy_dtoh(self, device, dst, src, nbytes):
        st = self._log("warpfft_memcpy_dtoh", device, src, nbytes)
        ctypes.memmove(dst, src, nbytes)
        return st

    def warpfft_stream_sync(self, device, stream):
        return self._log("warpfft_stream_sync", device, stream)

    # plans
    def warpfft_plan_create(self, type_, dim, n, iflag, ntransf, tol, precision, popts, phandle):
        opts = popts._obj
        n = (1, 1, 1) if n is None else tuple(n[:3])  # type 3 passes NULL
        st = self._log("warpfft_plan_create", type_, dim, n, iflag, ntransf, tol,
                       precision, opts.modeord, opts.device, opts.stream)
        self.last_opts = self._opts_dict(opts)
        self.opts_seen.append(self.last_opts)
        if st == 0 and type_ != 3:
            st, params = self._params(type_, dim, _lib.n_modes_array(n), ntransf, tol,
                                      precision, popts)
        elif st == 0:  # type 3: the kernel of its spreading step (sigma 2 for upsampfac 0)
            params = dict(width=self.WIDTH, beta=self.BETA,
                          upsampfac=opts.upsampfac or 2.0, kernel=1, predicted_ms=0.0,
                          n_fine=(1, 1, 1), bin_size=(1, 1, 1))
        if st == 0:
            h = next(self._ids)
            self.plans[h] = dict(type=type_, dim=dim, n=tuple(n[:dim]), iflag=iflag,
                                 ntransf=ntransf, precision=precision, modeord=opts.modeord,
                                 sio=opts.spreadinterponly, M=None, pts=None, K=None,
                                 src=None, tgt=None, **params)
            phandle._obj.value = h
        return st

    def warpfft_setpts(self, h, precision, M, x, y, z):
        st = self._log("warpfft_setpts", h, precision, M, x, y, z)
        self.plans[h]["points_id"] = next(self._points_ids)
        if st == 0:
            self.plans[h].update(M=M, pts=(x, y, z), n_sets=1)
        else:
            self.plans[h].update(M=None, pts=None, n_sets=None)
        return st

    def _sets_ok(self, p, n_sets, who):
        """warpfft.h's checks of n_sets (the real messages' gist): INVALID_ARG unless it
        divides ntransf; UNSUPPORTED past 65535."""
        if n_sets < 1 or p["ntransf"] % n_sets:
            self.message = (f"{who}: n_sets = {n_sets}; must be >= 1 and divide ntransf = "
                            f"{p['ntransf']}").encode()
            return 1
        if n_sets > 65535:
            self.message = f"{who}: n_sets = {n_sets} point sets; at most 65535".encode()
            return 18
        return 0

    def warpfft_setpts_sets(self, h, precision, n_sets, M, x, y, z):
        """Batched points: n_sets sets of M points at each pointer, set after set (the C
        library keeps the pointers, as for warpfft_setpts)."""
        st = self._log("warpfft_setpts_sets", h, precision, n_sets, M, x, y, z)
        p = self.plans[h]
        if st == 0 and p["type"] == 3:
            self.message = b"warpfft_setpts_sets: the plan is type 3; use warpfft_setpts3_sets"
            return 2  # before anything changes, as the C library
        if st == 0:
            st = self._sets_ok(p, n_sets, "warpfft_setpts_sets")
            if st:
                return st
        p["points_id"] = next(self._points_ids)
        if st == 0:
            p.update(M=M, pts=(x, y, z), n_sets=n_sets)
        else:
            p.update(M=None, pts=None, n_sets=None)
        return st

    def warpfft_setpts_check(self, h):
        return self._log("warpfft_setpts_check", h)

    def warpfft_setpts3(self, h, precision, M, x, y, z, K, s, t, u):
        """As the C library: refuses types 1/2, and copies sources and targets (the caller may
        free them once the call returns), in the C ABI's dimension order."""
        st = self._log("warpfft_setpts3", h, precision, M, x, y, z, K, s, t, u)
        return self._setpts3(st, h, precision, 1, M, (x, y, z), K, (s, t, u))

    def warpfft_setpts3_sets(self, h, precision, n_sets, M, x, y, z, K, s, t, u):
        st = self._log("warpfft_setpts3_sets", h, precision, n_sets, M, x, y, z, K, s, t, u)
        if st == 0 and self.plans[h]["type"] != 3:
            self.message = b"warpfft_setpts3_sets: use warpfft_setpts_sets"
            return 2
        if st == 0:
            st = self._sets_ok(self.plans[h], n_sets, "warpfft_setpts3_sets")
            if st:
                return st
        return self._setpts3(st, h, precision, n_sets, M, (x, y, z), K, (s, t, u))

    def _setpts3(self, st, h, precision, n_sets, M, xyz, K, stu):
        p = self.plans[h]
        p["points_id"] = next(self._points_ids)
        if st == 0 and p["type"] != 3:
            st = 18
        if st == 0:
            real = np.float32 if precision == 1 else np.float64
            src = [self.view(q, real, n_sets * M).astype(np.float64) for q in xyz[:p["dim"]]]
            tgt = [self.view(q, real, n_sets * K).astype(np.float64) for q in stu[:p["dim"]]]
            p.update(M=M, K=K, src=src, tgt=tgt, n_sets=n_sets)
        else:
            p.update(M=None, K=None, src=None, tgt=None, n_sets=None)
        return st

    def warpfft_execute(self, h, precision, c, fk):
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            st = self._log("warpfft_execute", h, precision, c, fk)
            if self.delay:
                time.sleep(self.delay)
            if st == 0:
                p = self.plans[h]
                if p["M"] is None:
                    return 9  # WARPFFT_ERR_NO_POINTS
                self._nudft(p, c, fk)
            return st
        finally:
            with self._lock:
                self.active -= 1

    WIDTH, BETA = 4, 0.995 * np.pi * 0.75 * 4  # type 3's kernel here (sinh type, sigma 2)

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
                a = 2 * (ii - u) / w
                s = np.sqrt(np.maximum(1 - a * a, 1e-300))
                ws.append(np.where(1 - a * a > 0, 2 * np.exp(-beta) * np.sinh(beta * s) / s, 0))
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

    def warpfft_plan_get_info(self, h, pinfo):
        p, info = self.plans[h], pinfo._obj
        info.type, info.dim, info.precision = p["type"], p["dim"], p["precision"]
        info.width, info.beta, info.upsampfac = p["width"], p["beta"], p["upsampfac"]
        info.kernel, info.predicted_ms = p["kernel"], p["predicted_ms"]
        for d in range(3):
            info.n_modes[d] = p["n"][d] if d < p["dim"] else 1
            info.n_fine[d] = p["n_fine"][d]
            info.bin_size[d] = p["bin_size"][d]
        info.ntransf = p["ntransf"]
        info.n_points = -1 if p["M"] is None else p["M"]
        info.n_targets = -1 if p["K"] is None else p["K"]
        info.n_sets = -1 if p["M"] is None else p.get("n_sets") or 1
        if p["K"] is not None:  # the centres and half-widths of the point sets, per C dim
            info.inner_precision, info.inner_width, info.inner_beta = p["precision"], 5, 11.5
            for d, (x, s) in enumerate(zip(p["src"], p["tgt"])):
                x, s = (x, s) if len(x) and len(s) else (np.zeros(1), np.zeros(1))
                info.x_center[d], info.x_half[d] = (x.max() + x.min()) / 2, np.ptp(x) / 2
                info.s_center[d], info.s_half[d] = (s.max() + s.min()) / 2, np.ptp(s) / 2
                info.gamma[d], info.inner_fine[d] = 1.0 + d, 16 * (d + 1)
        return self._log("warpfft_plan_get_info", h)

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

    def _nudft(self, p, c, fk):
        if p["type"] == 3:
            return self._nudft3(p, c, fk)
        if p["sio"]:
            return self._spreadinterp(p, c, fk)
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

    def warpfft_plan_destroy(self, h):
        st = self._log("warpfft_plan_destroy", h)
        if st == 0:
            self.plans.pop(h, None)
        return st

    # the live-plan pool (warpfft.h), kept as the C library keeps it

    def warpfft_pool_acquire(self, type_, dim, n, iflag, ntransf, tol, precision, popts,
                             phandle):
        opts = popts._obj
        raw = ctypes.string_at(ctypes.addressof(opts), ctypes.sizeof(opts))
        key = (type_, dim, None if n is None or type_ == 3 else tuple(n[:3]), iflag >= 0,
               ntransf, tol, precision, raw)
        self.opts_seen.append(self._opts_dict(opts))
        st = self._log("warpfft_pool_acquire", type_, dim, key[2], iflag, ntransf, tol,
                       precision, opts.stream)
        if st:
            return st
        with self._pool_lock:
            for h in reversed(self.pool_idle):
                if self.pool_idle[h] == key and h not in self.pool_doomed:
                    del self.pool_idle[h]
                    self.pool_busy[h] = key
                    self.pool_counts["hits"] += 1
                    phandle._obj.value = h
                    return 0
        st = self.warpfft_plan_create(type_, dim, n, iflag, ntransf, tol, precision, popts,
                                      phandle)
        if st == 0:
            with self._pool_lock:
                self.pool_busy[phandle._obj.value] = key
                self.pool_counts["created"] += 1
        return st

    def _pool_destroy(self, handles):
        """Destroys plans taken out of the pool; a failed one stays, idle and doomed. Returns
        {handle: status} of the failures."""
        failed = {}
        for h in handles:
            st = self.warpfft_plan_destroy(h)
            with self._pool_lock:
                if st == 0:
                    self.pool_counts["destroyed"] += 1
                else:
                    failed[h] = st
                    self.pool_doomed.add(h)
                    self.pool_idle[h] = None
                    self.pool_idle.move_to_end(h, last=False)
        return failed

    def _pool_evict(self):
        """Idle plans beyond the limits, least recently released first (the lock held)."""
        out = []
        while self.pool_idle and (len(self.pool_idle) > self.pool_limits[0] or
                                  1000 * len(self.pool_idle) > self.pool_limits[1]):
            out.append(self.pool_idle.popitem(last=False)[0])
        return out

    def warpfft_pool_release(self, h, flags):
        st = self._log("warpfft_pool_release", h, flags)
        with self._pool_lock:
            if h not in self.pool_busy:
                return 1  # WARPFFT_ERR_INVALID_ARG
            key = self.pool_busy.pop(h)
            # a plan that never had points takes an id too: id 0 means one the pool just made
            if not flags & 1 or not self.plans[h].get("points_id", 0):
                self.plans[h].update(M=None, pts=None, K=None, src=None, tgt=None,
                                     points_id=next(self._points_ids))
            self.pool_idle[h] = key
            mine = (st != 0 or h in self.pool_doomed or self.pool_limits[0] == 0 or
                    1000 > self.pool_limits[1])
            if mine:
                del self.pool_idle[h]
            victims = ([h] if mine else []) + self._pool_evict()
        failed = self._pool_destroy(victims)
        return st or failed.get(h, 0)

    def warpfft_pool_clear(self):
        self._log("warpfft_pool_clear")
        with self._pool_lock:
            victims = list(self.pool_idle)
            self.pool_idle.clear()
            self.pool_doomed.update(self.pool_busy)
        failed = self._pool_destroy(victims)
        return next(iter(failed.values()), 0)

    def warpfft_pool_set_limits(self, plans, nbytes):
        self._log("warpfft_pool_set_limits", plans, nbytes)
        with self._pool_lock:
            if plans >= 0:
                self.pool_limits[0] = plans
            if nbytes >= 0:
                self.pool_limits[1] = nbytes
            victims = self._pool_evict()
        failed = self._pool_destroy(victims)
        return next(iter(failed.values()), 0)

    def warpfft_pool_get_info(self, pinfo):
        info = pinfo._obj
        with self._pool_lock:
            info.idle, info.busy = len(self.pool_idle), len(self.pool_busy)
            info.idle_bytes = 1000 * len(self.pool_idle)
            info.max_plans, info.max_bytes = self.pool_limits
            info.created = self.pool_counts["created"]
            info.hits = self.pool_counts["hits"]
            info.destroyed = self.pool_counts["destroyed"]
        return 0

    def warpfft_plan_points_id(self, h, pid):
        pid._obj.value = self.plans[h].get("points_id", 0)
        return self._log("warpfft_plan_points_id", h)

    def warpfft_plan_workspace_bytes(self, h, pn):
        pn._obj.value = 1000
        return self._log("warpfft_plan_workspace_bytes", h)

    def warpfft_last_error(self):
        return self.message

    # ---- the Toeplitz normal operator (warpfft.h's last block), exact --------------------
    # The spectrum is the exact DFT of K(m) = sum_j w_j exp(-iflag i m.x_j) on the grid the
    # real library chooses (warpfft_toeplitz_params, no GPU), scaled by 1 / prod(L); an
    # application pads, multiplies in Fourier space and crops exactly as the C ABI defines it,
    # so T f equals A^H W A f to rounding, whatever the spectrum's source.

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
        opts = popts._obj
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

    def warpfft_toeplitz_apply(self, h, precision, adjoint, pin, pout):
        st = self._log("warpfft_toeplitz_apply", h, precision, adjoint, pin, pout)
        t = self.plans[h]
        if st == 0 and precision != t["precision"]:
            st = 8
        if st:
            return st
        if t["spectrum"] is None:  # the zero operator
            cplx = np.complex64 if precision == 1 else np.complex128
            self.view(pout, cplx, t["ntransf"] * int(np.prod(t["n"])))[:] = 0
            return 0
        self._toep_apply(t, t["spectrum"], adjoint, pin, pout)
        return 0

    def warpfft_toeplitz_apply_spectrum(self, h, precision, real, pspec, adjoint, pin, pout):
        st = self._log("warpfft_toeplitz_apply_spectrum", h, precision, real, pspec, adjoint,
                       pin, pout)
        t = self.plans[h]
        if st == 0 and precision != t["precision"]:
            st = 8
        if st:
            return st
        rdt = (np.float32 if precision == 1 else np.float64) if real else \
            (np.complex64 if precision == 1 else np.complex128)
        S = self.view(pspec, rdt, int(np.prod(t["L"]))).reshape(t["L"][::-1])
        self._toep_apply(t, S.astype(np.complex128), adjoint, pin, pout)
        return 0

    def warpfft_toeplitz_spectrum(self, dim, n, iflag, tol, precision, popts, M, x, y, z, weights,
                                  w, pspec):
        st = self._log("warpfft_toeplitz_spectrum", dim, tuple(n[:dim]), iflag, tol, precision, M,
                       weights, popts._obj.stream)
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
        if st == 0:
            self.plans.pop(h, None)
        return st


class FakeDriver:
    def __init__(self):
        self.calls = []
        self.complete = True
        self.synced = 0  # events up to this one were waited for (complete)
        self.devices = {}  # ptr -> device ordinal (default 0); None: unknown pointer
        self._ids = itertools.count(1000)

    def pointer_device(self, ptr, device):
        self.calls.append(("pointer_device", ptr))
        return self.devices.get(ptr, 0)

    def record(self, device, stream):
        ev = next(self._ids)
        self.calls.append(("record", stream, ev))
        return ev

    def cycle(self, device, stream, last):
        ev = self.record(device, stream)
        return ev, (None if last is None or self.done(device, last) else False)

    def check_status(self, status, what="cuEventQuery"):
        pass

    def wait(self, device, stream, event):
        self.calls.append(("wait", stream, event))

    def order(self, device, before, after):
        if not _device.same_stream(before, after):
            self.calls.append(("order", before, after))

    def done(self, device, event):
        return self.complete or event <= self.synced

    def synchronize(self, device, event):
        """Waits for `event`: it and every event recorded before it are complete (one stream
        per plan: events complete in order)."""
        self.calls.append(("synchronize", event))
        self.synced = max(self.synced, event)

    def release(self, device, event):
        pass


class FakeDeviceArray:
    """A "device" array (host memory of the fake library) exposing __cuda_array_interface__."""

    def __init__(self, fake, host, stream=None, readonly=False):
        host = np.ascontiguousarray(host)
        self.shape, self.dtype = host.shape, host.dtype
        self.ptr = fake.alloc(host.nbytes)
        fake.view(self.ptr, host.dtype, host.size)[:] = host.ravel()
        self._fake, self.stream, self.readonly = fake, stream, readonly

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, self.readonly),
                "strides": None, "version": 3, "stream": self.stream}

    def get(self):
        return self._fake.view(self.ptr, self.dtype, int(np.prod(self.shape))).reshape(self.shape)


def install(monkeypatch):
    """Installs a FakeLib and a FakeDriver; returns (fake lib, fake driver)."""
    fake, drv = FakeLib(_lib.lib), FakeDriver()
    monkeypatch.setattr(_lib, "lib", fake)
    for name in ("pointer_device", "record", "cycle", "check_status", "wait", "order", "done",
                 "synchronize", "release"):
        monkeypatch.setattr(_device.driver, name, getattr(drv, name))
    return fake, drv
