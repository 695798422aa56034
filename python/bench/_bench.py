"""What the bench scripts share: the median time of a call with the device synchronised around
it, and the --json output of their rows."""

import json
import statistics
import time


def timed(fn, sync, reps):
    """Median ms of reps calls of fn(), each followed by sync() (the device's work inside the
    time); one call first, untimed (module loads, plan caches)."""
    fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def cupy_sync(cp):
    """sync for timed: waits for cupy's current device."""
    return lambda: cp.cuda.Device().synchronize()


def write_json(path, obj):
    """obj to the file path (--json), indented; nothing without a path."""
    if path:
        with open(path, "w") as f:
            json.dump(obj, f, indent=1)
