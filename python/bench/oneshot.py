"""One-shot and plan.execute timings of the Python package (issue 16's speed case).

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python3 python/bench/oneshot.py [--M 1000] [--N 32] [--reps 2000] [--json out.json]

Case (issue 16): nufft2d1 on M = 1000 points, 32 x 32 modes, f32, device arrays (cupy if
installed, else torch, else warpfft.DeviceArray). Reports, in ms per call (median of 5 runs of
`reps` calls each, the GPU synchronised at the end of each run):

  oneshot_cached    warpfft.nufft2d1 (the plan cache on: setpts + execute per call)
  oneshot_uncached  the same with the cache off (plan create + destroy per call)
  oneshot_sync      oneshot_cached with a stream sync after every call (latency)
  execute           plan.execute alone (points set once)
  setpts_execute    plan.setpts + plan.execute
  reference_*       the same calls on the reference package, where `cufinufft` imports
                    (and is the reference, not warpfft's stand-in)

Target: oneshot_cached <= 0.3 ms on the H100.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import warpfft


def _arrays(M, N, seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-np.pi, np.pi, (2, M)).astype(np.float32)
    c = (rng.standard_normal(M) + 1j * rng.standard_normal(M)).astype(np.complex64)
    try:
        import cupy as cp

        return "cupy", [cp.asarray(a) for a in (x, y, c)], cp.cuda.runtime.deviceSynchronize
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            return ("torch", [torch.from_numpy(a).cuda() for a in (x, y, c)],
                    torch.cuda.synchronize)
    except ImportError:
        pass
    d = [warpfft.DeviceArray.from_host(a) for a in (x, y, c)]
    return "warpfft.DeviceArray", d, lambda: warpfft._lib.call("stream_sync", 0, 0)


def _time(fn, sync, reps, runs=5):
    fn()
    sync()
    per = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        per.append((time.perf_counter() - t0) / reps * 1e3)
    return statistics.median(per)


def _reference():
    try:
        import cufinufft
    except ImportError:
        return None
    return None if getattr(cufinufft, "__warpfft_version__", None) else cufinufft


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--M", type=int, default=1000)
    ap.add_argument("--N", type=int, default=32)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--json")
    a = ap.parse_args()
    kind, (x, y, c), sync = _arrays(a.M, a.N)
    n = (a.N, a.N)
    res = {"case": f"nufft2d1 M={a.M} {a.N}x{a.N} f32 eps=1e-6", "arrays": kind,
           "device": warpfft.runtime_info().get("device", {})}
    res["oneshot_cached"] = _time(lambda: warpfft.nufft2d1(x, y, c, n), sync, a.reps)
    res["oneshot_sync"] = _time(lambda: (warpfft.nufft2d1(x, y, c, n), sync()), sync, a.reps)
    warpfft.set_plan_cache_limits(plans=0)
    res["oneshot_uncached"] = _time(lambda: warpfft.nufft2d1(x, y, c, n), sync,
                                    max(20, a.reps // 20))
    warpfft.set_plan_cache_limits(plans=16)
    with warpfft.Plan(1, n) as plan:
        plan.setpts(x, y)
        out = plan.execute(c)
        res["execute"] = _time(lambda: plan.execute(c, out=out), sync, a.reps)
        res["setpts_execute"] = _time(lambda: (plan.setpts(x, y), plan.execute(c, out=out)),
                                      sync, a.reps)
    ref = _reference()
    if ref is not None:
        res["reference_oneshot"] = _time(lambda: ref.nufft2d1(x, y, c, n), sync,
                                         max(20, a.reps // 10))
        rp = ref.Plan(1, n)
        rp.setpts(x, y)
        res["reference_execute"] = _time(lambda: rp.execute(c), sync, a.reps)
    for k, v in res.items():
        print(f"{k:20s} {v:.4f} ms" if isinstance(v, float) else f"{k:20s} {v}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if res["oneshot_cached"] <= 0.3 else 1


if __name__ == "__main__":
    sys.exit(main())
