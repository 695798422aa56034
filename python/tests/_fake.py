"""A fake C library and CUDA driver for GPU-free tests of the Python layer.

``FakeLib`` stands in for ``warpfft._lib.lib``: "device memory" is host memory (ctypes
buffers), and ``warpfft_execute`` computes the exact non-uniform DFT with the C ABI's
conventions as warpfft.h states them (dimension 1 fastest, k per modeord, iflag sign), so the
Python layer's conventions (axis reversal, shapes, batch, defaults) are checked end to end
against a numpy direct sum with no GPU. A plan of type 1 or 2 takes its parameters
(upsampfac, width, beta, kernel, predicted_ms, fine grid) from the real library's
``warpfft_plan_params`` (no GPU), which also refuses what the real plan creation would (a bad
option: the real message). ``opts_seen`` holds the options of every plan creation and pool
acquire, as dicts. Every call is logged in ``calls``; ``fail`` maps a function name to a
status it returns (message "fake failure"); ``delay`` makes execute sleep (thread tests).
``FakeDriver`` stands in for ``warpfft._device.driver`` (events, stream waits, pointer
devices) and logs the same way; ``FakeDeviceArray`` is a "device" array over FakeLib's memory;
``install`` puts a FakeLib and a FakeDriver in place.

This file holds the library's memory, plans and call log; FakeLib's other parts are mixins,
one responsibility each:
  _fake_transforms.py  the exact sums ``warpfft_execute`` computes (types 1, 2, 3, and
                       spread/interp only with the plan's kernel)
  _fake_pool.py        the live-plan pool (``warpfft_pool_*``) as warpfft.h defines it
  _fake_toeplitz.py    the Toeplitz normal operator (``warpfft_toeplitz_*``), exact
Import the fake from here (``from _fake import FakeLib, FakeDeviceArray, install``).
"""

import ctypes
import itertools
import threading
import time

import numpy as np
from _fake_opts import FieldView, opts_fields
from _fake_pool import LivePlanPool
from _fake_toeplitz import FakeToeplitz
from _fake_transforms import ExactTransforms
from warpfft import _device, _lib


class FakeLib(ExactTransforms, LivePlanPool, FakeToeplitz):
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
        self._init_pool()
        self._points_ids = itertools.count(1)
        self.opts_seen = []  # every plan_create's and pool_acquire's options, as dicts
        self.message = b"fake failure"
        self.toep_in_use = set()  # operators being applied now (_fake_toeplitz.py)
        self.violations = []  # misuses of operators the fake saw: none in a correct caller

    def __getattr__(self, name):
        """Everything not faked: the real library (no GPU needed), whose failure's message is
        the one warpfft_last_error gives (a status function: restype c_int)."""
        real = getattr(self._real, name)
        if _lib.SIGNATURES.get(name, (None,))[0] is not ctypes.c_int:  # not a status function
            return real

        def call(*args):
            st = real(*args)
            if st:
                self.message = self._real.warpfft_last_error()
            return st
        return call

    def _log(self, name, *args):
        self.calls.append((name,) + args)
        st = self.fail.get(name, 0)
        if st:
            self.message = b"fake failure"
        return st

    @staticmethod
    def _opts_dict(opts):
        """The fields of a warpfft_opts by their option-table names (bin sizes left out)."""
        return {k: v for k, v in opts_fields(opts).items() if not k.startswith("bin_size")}

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

    def _real_data_refused(self, type_, opts):
        """real_data's refusals as warpfft.h states them: type 3 and spread/interp only
        (WARPFFT_ERR_UNSUPPORTED)."""
        if type_ == 3 or opts.spreadinterponly:
            self.message = (b"opts.real_data = 1 is for the NUFFT of types 1 and 2 only (fake)")
            return 18
        return 0

    @staticmethod
    def _complex_opts(popts):
        """The record with real_data 0, for the real library's warpfft_plan_params: the fake
        takes a real plan's kernel and grid from the complex plan's (the same choice), so it
        does not depend on whether the real library does real data yet."""
        from warpfft import _options

        rec = _options.copy(popts._obj)
        _options.set_option(rec, "real_data", 0)
        return ctypes.byref(rec)

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
        opts = FieldView(popts._obj)
        n = (1, 1, 1) if n is None else tuple(n[:3])  # type 3 passes NULL
        st = self._log("warpfft_plan_create", type_, dim, n, iflag, ntransf, tol,
                       precision, opts.modeord, opts.device, opts.stream)
        self.last_opts = self._opts_dict(popts._obj)
        self.last_record = opts_fields(popts._obj)  # every field, the bins too
        self.opts_seen.append(self.last_opts)
        real = getattr(opts, "real_data", 0)
        if st == 0 and real:
            st = self._real_data_refused(type_, opts)
        if st == 0 and type_ != 3:
            st, params = self._params(type_, dim, _lib.n_modes_array(n), ntransf, tol,
                                      precision, self._complex_opts(popts) if real else popts)
        elif st == 0:  # type 3: the kernel of its spreading step (sigma 2 for upsampfac 0)
            params = dict(width=self.WIDTH, beta=self.BETA,
                          upsampfac=opts.upsampfac or 2.0, kernel=1, predicted_ms=0.0,
                          n_fine=(1, 1, 1), bin_size=(1, 1, 1))
        if st == 0:
            h = next(self._ids)
            self.plans[h] = dict(type=type_, dim=dim, n=tuple(n[:dim]), iflag=iflag,
                                 ntransf=ntransf, precision=precision, modeord=opts.modeord,
                                 sio=opts.spreadinterponly, real=real, M=None, pts=None,
                                 K=None,
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

    def warpfft_plan_destroy(self, h):
        st = self._log("warpfft_plan_destroy", h)
        if st == 0:
            self.plans.pop(h, None)
        return st

    def warpfft_plan_points_id(self, h, pid):
        pid._obj.value = self.plans[h].get("points_id", 0)
        return self._log("warpfft_plan_points_id", h)

    def warpfft_plan_workspace_bytes(self, h, pn):
        pn._obj.value = 1000
        return self._log("warpfft_plan_workspace_bytes", h)

    def warpfft_last_error(self):
        return self.message


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
