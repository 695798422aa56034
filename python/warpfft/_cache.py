"""A bounded, thread-safe LRU of idle plans for the one-call functions (nufft2d1, ...).

Creating a plan costs far more than running it (cuFFT plan, kernel modules, fine grid and
workspace allocation): a repeated one-call transform of the same shape, dtype, eps, isign,
n_trans and options takes a plan from here instead of making one. A plan is checked out while a
call uses it (two threads never share one: the second makes its own) and checked back in
afterwards, with its points forgotten so that it pins no user array once its queued work is
done.

Limit: at most ``WARPFFT_PLAN_CACHE_SIZE`` idle plans (default 16; 0 turns the cache off) and
at most ``WARPFFT_PLAN_CACHE_BYTES`` of their device workspace (default 1 GiB); the least
recently used plans are destroyed first. ``warpfft.clear_plan_cache()`` destroys them all
(raising the first error of asynchronous work they report); ``set_plan_cache_limits`` changes
the limits.
"""

import collections
import os
import threading

from . import _lib

_lock = threading.Lock()
_idle = collections.OrderedDict()  # (key, serial) -> (plan, bytes)
_serial = 0


def _env_int(name, default):
    try:
        return max(0, int(os.environ.get(name, default)))
    except ValueError:
        return default


max_plans = _env_int("WARPFFT_PLAN_CACHE_SIZE", 16)
max_bytes = _env_int("WARPFFT_PLAN_CACHE_BYTES", 1 << 30)


def acquire(key):
    """An idle plan for `key` (removed from the cache), or None. Also lets every idle plan
    drop the arrays of its last call whose work has completed (so that an idle plan pins no
    user memory for longer than its queued work needs)."""
    found = None
    with _lock:
        for k in reversed(_idle):
            if k[0] == key:
                found, _ = _idle.pop(k)
                break
        idle = [p for p, _ in _idle.values() if p._pending]
    for p in idle:
        try:
            p._reap()
        except Exception:  # an asynchronous error: raised when that plan is used or cleared
            pass
    return found


def release(key, plan):
    """Returns a plan to the cache (or destroys it if the cache is off / it does not fit)."""
    global _serial
    try:
        nbytes = plan.workspace_bytes
    except Exception:
        nbytes = 0
    evicted = []
    with _lock:
        if max_plans > 0 and nbytes <= max_bytes:
            _serial += 1
            _idle[(key, _serial)] = (plan, nbytes)
            plan = None
        total = sum(b for _, b in _idle.values())
        while _idle and (len(_idle) > max_plans or total > max_bytes):
            _, (p, b) = _idle.popitem(last=False)
            total -= b
            evicted.append(p)
    if plan is not None:
        evicted.append(plan)
    _close_all(evicted)


def _close_all(plans):
    err = None
    for p in plans:
        try:
            p.close()
        except Exception as e:  # close every plan, raise the first failure
            err = err or e
    if err is not None:
        raise err


def clear():
    """Destroys every idle plan, then empties the C library's cache of what destroyed plans
    keep (warpfft_release_cached); raises the first error a plan reports (after closing all)."""
    with _lock:
        plans = [p for p, _ in _idle.values()]
        _idle.clear()
    try:
        _close_all(plans)
    finally:
        _lib.call("release_cached")


def set_limits(plans=None, nbytes=None):
    """Changes the limits (None: unchanged) and evicts what no longer fits."""
    global max_plans, max_bytes
    with _lock:
        if plans is not None:
            max_plans = max(0, int(plans))
        if nbytes is not None:
            max_bytes = max(0, int(nbytes))
        evicted = []
        total = sum(b for _, b in _idle.values())
        while _idle and (len(_idle) > max_plans or total > max_bytes):
            _, (p, b) = _idle.popitem(last=False)
            total -= b
            evicted.append(p)
    _close_all(evicted)


def info():
    """{"plans": idle plans, "bytes": their workspace, "max_plans", "max_bytes"}."""
    with _lock:
        return {"plans": len(_idle), "bytes": sum(b for _, b in _idle.values()),
                "max_plans": max_plans, "max_bytes": max_bytes}
