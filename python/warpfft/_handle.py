"""What the Python objects over a C handle share -- :class:`warpfft.Plan` (_compat.py) and
:class:`warpfft.Toeplitz` (_toeplitz.py): their shape arguments (modes, batch, tolerance, sign,
dtype) and the reference's read-only properties of them, and their device work: device arrays
checked to be on the handle's device, the handle's stream ordered after the arrays' producers,
queued work's arrays kept referenced until an event says it is done, and scratch buffers for
host arrays.
"""

import threading
import weakref

from . import _lib
from ._args import effective_eps, normalize_isign, normalize_modes
from ._arrays import empty_like, finish, wrap_made
from ._device import ClosesWhenCollected, DeviceArray, driver, record_queued, same_stream
from ._errors import invalid
from ._plan import precision_of


class DeviceHandle(ClosesWhenCollected):
    """The base of Plan and Toeplitz. A subclass calls :meth:`_init_handle`, sets ``_device``
    and ``_stream``, and says whether its C handle is gone (:meth:`_is_closed`)."""

    _noun = "handle"  # "plan", "operator": in messages

    def _init_handle(self, nufft_type, n_modes, n_trans, eps, isign, dtype, isign_type=None):
        """The shape arguments, checked as a plan of nufft_type's (the sign: as isign_type's,
        when given: a Toeplitz operator's is its type-2 transform's)."""
        self._pending = []  # (event, refs): device work queued, not yet known complete
        self._buffers = {}  # host path: the handle's own device buffers
        self._ptr_device = {}  # id(array) -> (weakref, pointer): on the handle's device
        self._lock = threading.RLock()  # one thread at a time per C handle
        self._isign = normalize_isign(isign_type or nufft_type, isign)
        self._dim, self._n_modes = normalize_modes(nufft_type, n_modes)
        self._precision, self._dtype, self._real_dtype = precision_of(dtype)
        self._n_trans = _lib.as_int("n_trans", n_trans, -_lib.INT64_MAX, _lib.INT64_MAX)
        self._eps = effective_eps(eps, self._precision)

    def _is_closed(self):
        raise NotImplementedError

    # ---- the reference's properties ----

    dtype = property(lambda self: self._dtype)
    dim = property(lambda self: self._dim)
    n_modes = property(lambda self: self._n_modes)
    n_trans = property(lambda self: self._n_trans)
    isign = property(lambda self: self._isign)
    eps = property(lambda self: self._eps)
    device = property(lambda self: self._device)
    stream = property(lambda self: self._stream)

    # ---- device work ----

    def _check_device(self, arr):
        """A device array must be on the handle's device (asked of the driver when the array
        does not say)."""
        if arr.ptr == 0:
            if arr.size:
                raise invalid(f"{arr.name}: null device pointer for {arr.size} elements")
            return
        dev = arr.device
        if dev is None:
            seen = self._ptr_device.get(id(arr.obj))
            if seen is not None and seen[1] == arr.ptr and seen[0]() is arr.obj:
                return  # this live array, this pointer: the driver said the handle's device
            dev = driver.pointer_device(arr.ptr, self._device)
            if dev is None:
                raise invalid(f"{arr.name}: pointer {arr.ptr:#x} is not device memory the CUDA "
                              "driver knows")
            if dev == self._device:
                self._remember_device(arr)
        if dev != self._device:
            raise invalid(f"{arr.name}: array is on device {dev}, the {self._noun} on device "
                          f"{self._device}")

    def _remember_device(self, arr):
        """Memoises the driver's answer for an array that does not say its device, keyed on the
        array object (alive: weakly referenced) and its pointer, so a repeated call with the
        same array skips the driver query (its memory cannot move while it is alive)."""
        try:
            ref = weakref.ref(arr.obj)
        except TypeError:
            return
        if len(self._ptr_device) >= 8:
            self._ptr_device.clear()
        self._ptr_device[id(arr.obj)] = (ref, arr.ptr)

    def _wait_for_producers(self, arrs):
        """The handle's stream waits for each producer's stream (events; no host wait)."""
        for a in arrs:
            if a.stream is not None and not same_stream(a.stream, self._stream):
                driver.order(self._device, a.stream, self._stream)

    def _device_call(self, a, o, out, shape, run, out_dtype=None):
        """A call on device arrays: input `a`, output `o` (wrapped `out`; made like `a` with
        `shape` and `out_dtype`, default the handle's dtype, when None), both checked to be on
        the handle's device, the stream ordered after their producers; run(a's pointer, o's
        pointer) enqueues the work, and the arrays stay referenced until it completes. Returns
        the output (of a's kind when made here)."""
        made = o is None
        if made:
            dt = self._dtype if out_dtype is None else out_dtype
            out = empty_like(a, shape, dt, self._device)
            o = wrap_made(a, out, self._stream, dt)
        elif not o.is_device:
            raise invalid(f"{a.name} is a device array: out must be a device array too")
        self._check_device(a)
        self._check_device(o)
        self._wait_for_producers((a, o))
        run(a.ptr, o.ptr)
        self._queued([a.obj, a.keep, o.obj, o.keep], (a, o))
        if isinstance(o.obj, DeviceArray):
            o.obj.stream = self._stream
        return finish(a, out) if made else out

    def _device_inputs(self, arrs):
        """Device pointers of input arrays for a C call: a device array's own (checked to be on
        the handle's device), a host array's copy uploaded now; the handle's stream ordered
        after the uploads and the producers. Returns (pointers, what keeps each alive, the
        uploaded copies)."""
        ptrs, keep, uploads = [], [], []
        for a in arrs:
            if a.is_device:
                self._check_device(a)
                keep.append(a.keep if a.keep is not None else a.obj)
                ptrs.append(a.ptr)
            else:
                d = DeviceArray.from_host(a.host, device=self._device)
                uploads.append(d)
                keep.append(d)
                ptrs.append(d.ptr)
        if uploads:
            self._uploaded()
        self._wait_for_producers(arrs)
        return ptrs, keep, uploads

    def _uploaded(self):
        """Host-to-device copies (warpfft_memcpy_htod) run on the legacy stream: order them
        before the handle's stream."""
        if self._stream != 0:
            driver.order(self._device, 0, self._stream)

    def _queued(self, refs, arrs=()):
        """Records that device work just queued on the handle's stream uses `refs`: they stay
        referenced until an event after it completes; producers' streams wait for it
        (record_queued: one driver round trip per call)."""
        pending = self._pending
        record_queued(self._device, self._stream, pending, refs, arrs)
        if len(pending) > 16:  # the GPU is behind: drop what completed, oldest first
            if len(pending) > 64:  # bound what is held: wait for the oldest
                driver.synchronize(self._device, pending[0][0])
            self._reap()

    def _reap(self):
        """Drops the references of device work known complete (and raises an asynchronous
        error the driver reports for it)."""
        with self._lock:
            if self._is_closed() or not self._pending:
                return
            if driver.done(self._device, self._pending[-1][0]):  # the newest: so all are
                for ev, _ in self._pending:
                    driver.release(self._device, ev)
                self._pending.clear()
                return
            while self._pending:
                ev, _ = self._pending[0]
                if not driver.done(self._device, ev):
                    break
                self._pending.pop(0)
                driver.release(self._device, ev)

    def _buffer(self, key, n, dtype):
        """The handle's device buffer `key` of n elements (reallocated when that changes; the
        old one retired: queued work may still use it)."""
        buf = self._buffers.get(key)
        if buf is None or buf.size != n or buf.dtype != dtype:
            if buf is not None:
                self._retire([buf])
            buf = self._buffers[key] = DeviceArray((n,), dtype, self._device)
        return buf

    def _retire(self, refs):
        """Arrays the handle no longer points at, but queued work may still use."""
        if refs and not self._is_closed() and self._pending is not None:
            self._queued(list(refs))

    def _drop_device_work(self):
        """At close: the events of queued work released, the scratch buffers freed."""
        for ev, _ in self._pending:
            driver.release(self._device, ev)
        self._pending = []
        for buf in self._buffers.values():
            buf.close()
        self._buffers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
