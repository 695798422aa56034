"""Device memory and the few CUDA driver calls the C ABI does not expose.

* :class:`DeviceArray`: warpfft_malloc'd memory exposing ``__cuda_array_interface__``.
* :data:`driver`: ``libcuda.so.1`` through ctypes (loaded on first use), for what the Python
  layer must do itself around the C calls: ask which device a pointer belongs to
  (``cuPointerGetAttribute``), and order work between streams with events
  (``cuEventRecord`` + ``cuStreamWaitEvent``) instead of host waits.

Streams are integers: 0 is the legacy default stream (the C ABI's convention). The
``__cuda_array_interface__`` / DLPack values 1 (legacy) and 2 (per-thread default) are the
driver's ``CU_STREAM_LEGACY`` / ``CU_STREAM_PER_THREAD`` handles and are passed as they are.
"""

import atexit
import ctypes
import math
import threading

import numpy as np

from . import _lib
from ._errors import ERR_CUDA, ERR_NO_DRIVER, invalid, python_error

# At interpreter exit, objects still alive are not freed one by one (the CUDA driver and cuFFT
# may already be shutting down; the process's exit frees everything): __del__ does nothing.
exiting = False


def _at_exit():
    global exiting
    exiting = True


atexit.register(_at_exit)


class ClosesWhenCollected:
    """Base of the objects that own device memory (DeviceArray, Plan): garbage collection calls
    their ``close()``, except at interpreter exit, and drops what it raises (nowhere to raise
    it)."""

    def __del__(self):
        if exiting:
            return
        try:
            self.close()
        except Exception:  # garbage collection: nowhere to raise
            pass


CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
CU_EVENT_DISABLE_TIMING = 0x2
CUDA_ERROR_NOT_READY = 600


def same_stream(a, b):
    """True if two stream values name the same stream (0 and 1 are both the legacy stream)."""
    return (1 if a == 0 else a) == (1 if b == 0 else b)


class _Driver:
    """libcuda.so.1 through ctypes: pointer attributes and events, each call made with the
    device's primary context current (the context the C library, cupy and torch use)."""

    def __init__(self, path="libcuda.so.1"):
        self._path = path  # tests load a stub here
        self._lock = threading.Lock()
        self._cu = None
        self._error = None
        self._ctx = {}
        self._free_events = {}

    def _load(self):
        if self._cu is not None:
            return self._cu
        with self._lock:
            if self._cu is None:
                try:
                    cu = ctypes.CDLL(self._path)
                except OSError as e:
                    raise python_error(f"cannot load {self._path} ({e})", ERR_NO_DRIVER) from None
                vp, u, i = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int
                sig = {
                    "cuInit": [u],
                    "cuDeviceGet": [ctypes.POINTER(i), i],
                    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), i],
                    "cuCtxPushCurrent_v2": [vp],
                    "cuCtxPopCurrent_v2": [ctypes.POINTER(vp)],
                    "cuPointerGetAttribute": [vp, i, ctypes.c_uint64],
                    "cuEventCreate": [ctypes.POINTER(vp), u],
                    "cuEventRecord": [vp, vp],
                    "cuEventQuery": [vp],
                    "cuEventSynchronize": [vp],
                    "cuEventDestroy_v2": [vp],
                    "cuStreamWaitEvent": [vp, vp, u],
                }
                for name, args in sig.items():
                    f = getattr(cu, name)
                    f.argtypes, f.restype = args, i
                self._check(cu.cuInit(0), "cuInit")
                self._cu = cu
        return self._cu

    @staticmethod
    def _check(status, what):
        if status != 0:
            raise python_error(f"{what} failed: CUDA driver error {status}", ERR_CUDA)

    def _context(self, device):
        ctx = self._ctx.get(device)
        if ctx is None:
            cu = self._load()
            dev, c = ctypes.c_int(), ctypes.c_void_p()
            self._check(cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
            self._check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), dev),
                        "cuDevicePrimaryCtxRetain")
            ctx = self._ctx.setdefault(device, c.value)  # retained for the process's life
        return ctx

    def _call(self, device, fn):
        cu = self._load()
        self._check(cu.cuCtxPushCurrent_v2(self._context(device)), "cuCtxPushCurrent")
        try:
            return fn(cu)
        finally:
            cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))

    def pointer_device(self, ptr, device):
        """The device ordinal `ptr` belongs to, or None if the driver does not know the pointer
        (host memory, or a bogus value)."""
        out = ctypes.c_int(-1)

        def q(cu):
            return cu.cuPointerGetAttribute(ctypes.byref(out), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                            ctypes.c_uint64(ptr))

        return out.value if self._call(device, q) == 0 else None

    def _record_current(self, cu, device, stream):
        """With `device`'s context current: a new event recorded on `stream`, taken from the
        device's pool of destroyed events when it has one."""
        pool = self._free_events.setdefault(device, [])
        ev = pool.pop() if pool else None
        if ev is None:
            e = ctypes.c_void_p()
            self._check(cu.cuEventCreate(ctypes.byref(e), CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate")
            ev = e.value
        st = cu.cuEventRecord(ev, stream or None)
        if st != 0:
            pool.append(ev)
            self._check(st, "cuEventRecord")
        return ev

    def record(self, device, stream):
        """A new event recorded on `stream` (reuses destroyed events of this device)."""
        return self._call(device, lambda cu: self._record_current(cu, device, stream))

    def cycle(self, device, stream, last):
        """The per-call bookkeeping of a plan under one context push: a new event recorded on
        `stream` (from the pool), then the state of event `last` (None: none). Returns
        (new_event, last_status): last_status is None when `last` completed, False while it
        is pending, else the CUDA error status of the work before it (for `check_status`)."""

        def c(cu):
            ev = self._record_current(cu, device, stream)
            if last is None:
                return ev, None
            st = cu.cuEventQuery(last)
            return ev, (False if st == CUDA_ERROR_NOT_READY else None if st == 0 else st)

        return self._call(device, c)

    def check_status(self, status, what="cuEventQuery"):
        """Raises for a CUDA error status (as the other calls do); None and False pass."""
        if status:
            self._check(status, what)

    def wait(self, device, stream, event):
        """Work queued on `stream` from now on waits for `event`."""
        self._call(device, lambda cu: self._check(cu.cuStreamWaitEvent(stream or None, event, 0),
                                                  "cuStreamWaitEvent"))

    def order(self, device, before, after):
        """Work queued on stream `after` from now on runs after the work queued on `before`
        so far (no host wait). No-op when they are the same stream."""
        if same_stream(before, after):
            return
        ev = self.record(device, before)
        try:
            self.wait(device, after, ev)
        finally:
            self.release(device, ev)

    def done(self, device, event):
        """True if the work before `event` has finished (cuEventQuery); raises on an error."""
        st = self._call(device, lambda cu: cu.cuEventQuery(event))
        if st == CUDA_ERROR_NOT_READY:
            return False
        self._check(st, "cuEventQuery")
        return True

    def synchronize(self, device, event):
        self._call(device, lambda cu: self._check(cu.cuEventSynchronize(event),
                                                  "cuEventSynchronize"))

    def release(self, device, event):
        """Returns an event to the pool (recording it again later is fine)."""
        self._free_events.setdefault(device, []).append(event)


driver = _Driver()


def record_queued(device, stream, pending, refs, arrs=()):
    """Records that device work just queued on `stream` uses `refs`: they stay referenced (in
    `pending`, a list of ``(event, refs)``) until an event after the work completes, and the
    streams of `arrs` (their producers) wait for that event. The bookkeeping of Plan and
    ToeplitzOperator; each keeps its own bound on ``len(pending)``.

    One driver round trip per call (``driver.cycle``): the new event is recorded and the
    previous call's event queried; events on one stream complete in order, so when the previous
    one has completed, every earlier call's references go at once. Raises an asynchronous error
    of earlier work the driver reports."""
    last = pending[-1][0] if pending else None
    ev, last_state = driver.cycle(device, stream, last)
    for a in arrs:
        if a.stream is not None and not same_stream(a.stream, stream):
            driver.wait(device, a.stream, ev)
    if last is not None and last_state is None:
        for old, _ in pending:
            driver.release(device, old)
        pending.clear()
    pending.append((ev, refs))
    driver.check_status(last_state)


def _cai_stream(stream):
    """A plan stream (0 = legacy default) as a __cuda_array_interface__ v3 stream value."""
    return 1 if stream == 0 else int(stream)


class DeviceArray(ClosesWhenCollected):
    """A C-contiguous array in device memory, allocated with warpfft_malloc and freed with
    warpfft_free (on close() or garbage collection). Exposes ``__cuda_array_interface__`` so
    cupy/torch/numba can wrap it without a copy; ``get()`` copies it to a numpy array.

    ``stream``: the CUDA stream (as an integer) on which pending work writes this array, or
    None; consumers reading ``__cuda_array_interface__`` synchronise with it.
    """

    def __init__(self, shape, dtype, device=0):
        shape = tuple(shape) if np.iterable(shape) else (shape,)
        self.shape = tuple(_lib.as_int("shape", s, 0, _lib.INT64_MAX) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = _lib.as_int("device", device, 0, _lib.INT32_MAX)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize
        if self.nbytes > _lib.INT64_MAX:
            raise invalid(f"DeviceArray{self.shape} of {self.dtype} needs {self.nbytes} bytes: "
                          "more than any device can hold (and more than size_t)")
        self.stream = None
        self.ptr = 0
        self._L = _lib.lib  # the library that allocated it frees it
        if self.nbytes > 0:
            p = ctypes.c_void_p()
            _lib.check(self._L.warpfft_malloc(self.device, self.nbytes, ctypes.byref(p)))
            self.ptr = p.value or 0

    @classmethod
    def from_host(cls, a, dtype=None, device=0):
        """Copies a host array (anything numpy.asarray accepts) to a new DeviceArray. The copy
        is complete on the legacy default stream when this returns; work on another stream
        must be ordered after it (Plan does this)."""
        a = np.ascontiguousarray(a, dtype=dtype)
        d = cls(a.shape, a.dtype, device)
        d.copy_from_host(a)
        return d

    def copy_from_host(self, a):
        """Host-to-device copy of a numpy array of the same size and dtype, on the legacy
        default stream (synchronous for the host buffer)."""
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.size != self.size:
            raise invalid(f"size mismatch: host array has {a.size} elements, "
                          f"device array {self.size}")
        if self.nbytes:
            _lib.check(self._L.warpfft_memcpy_htod(self.device, self.ptr, a.ctypes.data,
                                                   self.nbytes))

    def get(self, out=None):
        """Waits for ``stream`` (if set) and copies the array to host memory (a numpy array of
        this shape, or ``out``: C-contiguous, same dtype and size)."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif (not isinstance(out, np.ndarray) or out.dtype != self.dtype or out.size != self.size
              or not out.flags.c_contiguous or not out.flags.writeable):
            raise invalid("out must be a writeable C-contiguous numpy array of the same dtype "
                          "and size")
        if self.stream is not None:
            _lib.check(self._L.warpfft_stream_sync(self.device, self.stream))
        if self.nbytes:
            _lib.check(self._L.warpfft_memcpy_dtoh(self.device, out.ctypes.data, self.ptr,
                                                   self.nbytes))
        return out

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
            "stream": None if self.stream is None else _cai_stream(self.stream),
        }

    def __dlpack_device__(self):
        return (_DL_CUDA, self.device)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule (unversioned "dltensor") viewing this array, zero-copy; the array
        stays allocated until the consumer releases it. ``stream``: the consumer's stream
        (None or 1: legacy default, 2: per-thread default, -1: no ordering); pending work on
        ``self.stream`` is ordered before it with an event."""
        if copy:
            raise BufferError("DeviceArray.__dlpack__: copy=True is not supported")
        if dl_device is not None and tuple(dl_device) != (_DL_CUDA, self.device):
            raise BufferError(f"DeviceArray.__dlpack__: lives on CUDA device {self.device}")
        if stream != -1 and self.stream is not None:
            consumer = 0 if stream in (None, 1) else int(stream)
            driver.order(self.device, self.stream, consumer)
        return _dlpack_export(self)

    def close(self):
        """Frees the device memory now (idempotent)."""
        ptr, self.ptr = self.ptr, 0
        if ptr and getattr(self, "_L", None) is not None:
            self._L.warpfft_free(self.device, ptr)

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"


# ---- DLPack export (so jax and other DLPack consumers can take a DeviceArray zero-copy) ----

_DL_CUDA = 2
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


_exports = {}  # address of a _DLManaged -> (struct, shape array, owner)
_exports_lock = threading.Lock()
_CAPSULE_NAME = b"dltensor"


@_DELETER
def _dl_deleter(addr):
    with _exports_lock:
        _exports.pop(addr, None)


# Own function objects (ctypes.pythonapi.X is shared: setting its argtypes would change it for
# every other user in the process).
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_ptr = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_DESTRUCTOR
def _capsule_destructor(capsule):
    # An unconsumed capsule ("dltensor", not renamed "used_dltensor") owns the tensor.
    if _capsule_valid(capsule, _CAPSULE_NAME):
        _dl_deleter(_capsule_ptr(capsule, _CAPSULE_NAME))


def _dlpack_export(arr):
    shape = (ctypes.c_int64 * max(1, len(arr.shape)))(*arr.shape)
    m = _DLManaged()
    t = m.dl_tensor
    t.data, t.device_type, t.device_id = arr.ptr or None, _DL_CUDA, arr.device
    t.ndim = len(arr.shape)
    t.code, t.bits, t.lanes = _DL_CODES[arr.dtype.kind], arr.dtype.itemsize * 8, 1
    t.shape, t.strides, t.byte_offset = shape, None, 0
    m.deleter = _dl_deleter
    addr = ctypes.addressof(m)
    with _exports_lock:
        _exports[addr] = (m, shape, arr)
    return _capsule_new(addr, _CAPSULE_NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))
