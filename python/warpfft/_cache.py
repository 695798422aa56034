"""The plan cache of the one-call functions (nufft2d1, ...): the C library's live-plan pool
(warpfft.h, ``warpfft_pool_*``), which the PyTorch ops and the JAX handler share.

Creating a plan costs far more than running it (cuFFT plan, kernel modules, fine grid and
workspace allocation): a repeated one-call transform of the same shape, dtype, eps, isign,
n_trans, options, device and stream takes an idle plan from the pool instead of making one. A
plan is the caller's alone while a call uses it (a second thread gets another) and goes back
to the pool afterwards with its points forgotten.

Limits (the pool's): at most ``WARPFFT_POOL_SIZE`` idle plans and Toeplitz operators (default
16; 0 turns the pool off) holding at most ``WARPFFT_POOL_BYTES`` of device workspace (default
1 GiB), read by the C library at its first pool call (the deprecated ``WARPFFT_PLAN_CACHE_SIZE``
and ``_BYTES`` when those are unset); the least recently used idle plans are destroyed
first. ``clear_plan_cache()`` destroys the idle plans (plans in use go when their call ends)
and empties the C library's cache of destroyed plans' resources; ``set_plan_cache_limits``
changes the limits; ``plan_cache_info`` reports them.

The pool waits for a plan's queued work (an event its release recorded) before destroying it,
never for the caller's stream, which may be gone by then. What Python must still do is keep the
arrays that queued work reads alive until it completes: a released one-call plan's references
(with their events) wait here, and are dropped by the next one-call function or by
``clear_plan_cache()`` once their events say the work is done.
"""

import ctypes
import threading

from . import _lib
from ._device import driver

_lock = threading.Lock()
_draining = []  # [device, [(event, refs), ...]]: a released plan's queued work, oldest first


def retire(device, pending):
    """Takes over `pending` ((event, refs) of work queued on one stream, oldest first) from a
    plan that went back to the pool: the refs stay alive until their event completes."""
    if pending:
        with _lock:
            _draining.append([device, list(pending)])


def _drop_done(device, pending):
    """Releases the events (and refs) of completed work, oldest first; True when none is left.
    Events on one stream complete in order: when the newest is done, all are."""
    if driver.done(device, pending[-1][0]):
        for ev, _ in pending:
            driver.release(device, ev)
        pending.clear()
        return True
    while pending and driver.done(device, pending[0][0]):
        driver.release(device, pending.pop(0)[0])
    return not pending


def reap(raise_errors=False):
    """Drops the arrays of retired work that has completed. An asynchronous error that an
    event reports drops that work's arrays too (it will not run further); it is raised (the
    first, after reaping everything) only with `raise_errors`."""
    with _lock:  # taken out while examined: two threads never release one event twice
        items = _draining[:]
        _draining.clear()
    err, keep = None, []
    for device, pending in items:
        try:
            if not _drop_done(device, pending):
                keep.append([device, pending])
        except Exception as e:
            for ev, _ in pending:
                driver.release(device, ev)
            err = err or e
    if keep:
        with _lock:
            _draining[:0] = keep
    if err is not None and raise_errors:
        raise err


def clear():
    """Destroys every idle plan of the pool (and each plan in use when its call ends), then
    empties the C library's cache of what destroyed plans keep (warpfft_release_cached); raises
    the first error of a destroy or of the asynchronous work it waited for, after doing all."""
    try:
        reap(raise_errors=True)
    finally:
        try:
            _lib.check(_lib.lib.warpfft_pool_clear(), "warpfft_pool_clear")
        finally:
            _lib.call("release_cached")


def set_limits(plans=None, nbytes=None):
    """Changes the pool's limits (None: unchanged) and destroys the idle plans beyond them."""
    p = -1 if plans is None else max(0, _lib.as_int("plans", plans, -_lib.INT64_MAX,
                                                    _lib.INT64_MAX))
    b = -1 if nbytes is None else max(0, _lib.as_int("nbytes", nbytes, -_lib.INT64_MAX,
                                                     _lib.INT64_MAX))
    _lib.check(_lib.lib.warpfft_pool_set_limits(p, b), "warpfft_pool_set_limits")


def info():
    """{"plans": idle handles (plans and Toeplitz operators), "bytes": their workspace,
    "max_plans", "max_bytes", "busy": handles in use now, "created", "hits", "destroyed": since
    the process started; "operators", "operators_busy", "operators_created": the Toeplitz
    operators among them} -- of the pool the one-call functions share with warpfft.torch and
    warpfft.jax."""
    i = _lib.PoolInfo()
    i.struct_size = ctypes.sizeof(i)
    _lib.check(_lib.lib.warpfft_pool_get_info(ctypes.byref(i)), "warpfft_pool_get_info")
    return {"plans": i.idle, "bytes": i.idle_bytes, "max_plans": i.max_plans,
            "max_bytes": i.max_bytes, "busy": i.busy, "created": i.created, "hits": i.hits,
            "destroyed": i.destroyed, "operators": i.operators_idle,
            "operators_busy": i.operators_busy, "operators_created": i.operators_created}
