"""The live-plan pool of _fake.FakeLib (a mixin), kept as warpfft/pool.h defines the C
library's (``warpfft_pool_*``): idle handles by key, least recently released first; busy ones
the caller's; limits on the idle ones (handles and bytes, 1000 bytes a handle here); a clear
dooming busy handles; a plan's points forgotten at release unless kept (a new points id). Plans
and zero Toeplitz operators alike (``warpfft_pool_acquire_toeplitz``), made and destroyed
through FakeLib's own ``warpfft_plan_create`` / ``warpfft_toeplitz_create`` and their destroys
so that those show in the call log. Split from _fake.py, which holds the plans themselves and
the library's other calls.
"""

import collections
import ctypes
import threading

from _fake_opts import FieldView


class LivePlanPool:
    """The ``warpfft_pool_*`` calls. Uses FakeLib's ``_log``, ``_opts_dict``, ``plans``,
    ``_points_ids``, ``warpfft_plan_create`` and ``warpfft_plan_destroy``."""

    def _init_pool(self):
        self._pool_lock = threading.RLock()
        self.pool_idle = collections.OrderedDict()  # handle -> key, least recently released first
        self.pool_busy = {}  # handle -> key
        self.pool_doomed = set()
        self.pool_limits = [16, 1 << 30]
        self.pool_counts = {"created": 0, "hits": 0, "destroyed": 0, "operators_created": 0}

    def _pool_take(self, key, phandle, create):
        """An idle handle of `key`, or a new one from create() (its status)."""
        with self._pool_lock:
            for h in reversed(self.pool_idle):
                if self.pool_idle[h] == key and h not in self.pool_doomed:
                    del self.pool_idle[h]
                    self.pool_busy[h] = key
                    self.pool_counts["hits"] += 1
                    phandle._obj.value = h
                    return 0
        st = create()
        if st == 0:
            with self._pool_lock:
                self.pool_busy[phandle._obj.value] = key
                self.pool_counts["created"] += 1
                if key[0] == "toeplitz":
                    self.pool_counts["operators_created"] += 1
        return st

    def warpfft_pool_acquire(self, type_, dim, n, iflag, ntransf, tol, precision, popts,
                             phandle):
        rec = popts._obj
        opts = FieldView(rec)
        raw = bytes(rec)[:rec.struct_size]
        key = (type_, dim, None if n is None or type_ == 3 else tuple(n[:3]), iflag >= 0,
               ntransf, tol, precision, raw)
        self.opts_seen.append(self._opts_dict(rec))
        st = self._log("warpfft_pool_acquire", type_, dim, key[2], iflag, ntransf, tol,
                       precision, opts.stream)
        if st:
            return st
        return self._pool_take(key, phandle, lambda: self.warpfft_plan_create(
            type_, dim, n, iflag, ntransf, tol, precision, popts, phandle))

    def warpfft_pool_acquire_toeplitz(self, dim, n, ntransf, tol, precision, popts, phandle):
        rec = popts._obj
        key = ("toeplitz", dim, tuple(n[:dim]), ntransf, tol, precision,
               bytes(rec)[:rec.struct_size])
        st = self._log("warpfft_pool_acquire_toeplitz", dim, key[2], ntransf, tol, precision,
                       FieldView(rec).stream)
        if st:
            return st
        return self._pool_take(key, phandle, lambda: self.warpfft_toeplitz_create(
            dim, n, 1, ntransf, tol, precision, popts, 0, None, None, None, 0, None, phandle))

    def _destroy_handle(self, h):
        """The pool's destroy of a plan or an operator (the public destroys refuse pooled
        ones in the C library; the fake's toeplitz destroy checks that)."""
        if self.plans.get(h, {}).get("kind") == "toeplitz":
            return self._toep_destroy(h)
        return self.warpfft_plan_destroy(h)

    def _pool_destroy(self, handles):
        """Destroys handles taken out of the pool; a failed one stays, idle and doomed. Returns
        {handle: status} of the failures."""
        failed = {}
        for h in handles:
            st = self._destroy_handle(h)
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

    def warpfft_pool_release_toeplitz(self, h, flags):
        return self.warpfft_pool_release(h, flags, "warpfft_pool_release_toeplitz")

    def warpfft_pool_release(self, h, flags, who="warpfft_pool_release"):
        st = self._log(who, h, flags)
        with self._pool_lock:
            if h not in self.pool_busy or (self.pool_busy[h][0] == "toeplitz") != (
                    who != "warpfft_pool_release"):
                return 1  # WARPFFT_ERR_INVALID_ARG
            key = self.pool_busy.pop(h)
            # a plan that never had points takes an id too: id 0 means one the pool just made
            if key[0] == "toeplitz":
                pass
            elif not flags & 1 or not self.plans[h].get("points_id", 0):
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
            ops = [k for k in self.pool_idle.values() if k and k[0] == "toeplitz"]
            info.operators_idle = len(ops)
            info.operators_busy = sum(k[0] == "toeplitz" for k in self.pool_busy.values())
            info.operators_created = self.pool_counts["operators_created"]
        return 0
