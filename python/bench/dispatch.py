"""Per-call Python cost of warpfft's framework ops and of Plan.execute, without a GPU: what is
left when the C library and the CUDA driver answer at once (a null library and driver stand
in; no transform runs). Also the cost of torch.library registration styles with a trivial op,
which is how warpfft.torch's style was chosen. Run it next to a change of the per-call path:

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python python/bench/dispatch.py [--reps 20000]

Prints microseconds per call (best of 5 rounds) and Python-level function calls per call
(warpfft's own / torch's). On a GPU machine the real numbers are frameworks.py's "tiny" case.
"""

import argparse
import os
import sys
import time
from typing import List

import numpy as np


def best_us(fn, reps):
    for _ in range(min(200, reps)):
        fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def python_calls(fn):
    """(warpfft's, torch's) Python function calls during one fn()."""
    import warpfft
    own = os.path.dirname(warpfft.__file__)
    try:
        import torch
        theirs = os.path.dirname(torch.__file__)
    except ImportError:
        theirs = "\0"
    fn()
    n = [0, 0]

    def prof(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(own):
                n[0] += 1
            elif name.startswith(theirs):
                n[1] += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return tuple(n)


class NullLib:
    """The C calls of a transform answering at once (plans are integers)."""

    def __init__(self, real):
        self._real, self._next = real, 1

    def __getattr__(self, name):
        return getattr(self._real, name)

    def warpfft_plan_create(self, *args):
        args[-1]._obj.value, self._next = self._next, self._next + 1
        return 0

    def _success(self, *args):
        """A call with nothing to write back: status 0."""
        return 0

    warpfft_setpts = warpfft_execute = warpfft_stream_sync = warpfft_plan_destroy = _success

    def warpfft_plan_workspace_bytes(self, h, pn):
        pn._obj.value = 0
        return 0

    # the live-plan pool: one plan, whose points stay the caller's (the torch ops' reuse path)
    def warpfft_pool_acquire(self, *args):
        args[-1]._obj.value = 1
        return 0

    warpfft_pool_release = _success

    def warpfft_plan_points_id(self, h, pid):
        pid._obj.value = 7
        return 0


class NullDriver:
    """The CUDA driver calls of Plan's bookkeeping answering at once (every pointer on device
    0, every event complete)."""

    def pointer_device(self, ptr, device):
        return 0

    def cycle(self, device, stream, last):
        return 1, None

    def check_status(self, status, what=""):
        pass

    def order(self, device, before, after):
        pass

    def done(self, device, event):
        return True

    def release(self, device, event):
        pass


class CAI:
    def __init__(self, ptr, shape, dtype):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": np.dtype(dtype).str,
                                         "data": (ptr, False), "strides": None, "version": 3,
                                         "stream": None}


def bench_plan(reps):
    import warpfft
    from warpfft import _device, _handle, _lib
    _lib.lib = NullLib(_lib.lib)
    drv = NullDriver()
    _device.driver = _handle.driver = drv
    M = 1000
    plan = warpfft.Plan(1, (32, 32), eps=1e-5, dtype="complex64")
    plan.setpts(CAI(0x1000, (M,), np.float32), CAI(0x2000, (M,), np.float32))
    c, out = CAI(0x3000, (M,), np.complex64), CAI(0x4000, (32, 32), np.complex64)
    fn = lambda: plan.execute(c, out=out)  # noqa: E731
    own, _ = python_calls(fn)
    print(f"Plan.execute (CAI arrays, out given)      {best_us(fn, reps):7.2f} us   "
          f"{own} Python calls")


def bench_torch(reps):
    try:
        import torch
    except ImportError:
        print("torch not installed: torch rows skipped")
        return
    import warpfft.torch as wt
    from warpfft import _lib as native
    from warpfft.torch import _ops
    native.lib = NullLib(native.lib)
    _ops._stream_of = lambda device: 0
    _ops._device_of = lambda t: 0
    wt._check_device = lambda *a: None
    M = 1000
    p = torch.rand(2, M) * 6 - 3
    v = torch.zeros(1, M, dtype=torch.complex64)
    f = torch.zeros(1, 32, 32, dtype=torch.complex64)
    kw = dict(eps=1e-5, isign=-1, modeord=0)
    calls = (("finufft_type1 (same points)", lambda: wt.finufft_type1(p, v, (32, 32), **kw)),
             ("finufft_type2 (same points)", lambda: wt.finufft_type2(p, f, **kw)))
    for name, fn in calls:
        own, theirs = python_calls(fn)
        print(f"torch {name:34s} {best_us(fn, reps):7.2f} us   {own} warpfft / {theirs} torch "
              "Python calls")
    styles(reps)


def styles(reps):
    """A trivial op (returns a preallocated tensor) registered three ways."""
    import torch
    out = torch.zeros(1, 4, 4, dtype=torch.complex64)
    schema = ("(Tensor p, Tensor v, int[] n, int isign, float eps, int modeord, int method, "
              "float ups, int ms, int[] bins, bool reuse=True) -> Tensor")

    def impl(p, v, n, isign, eps, modeord, method, ups, ms, bins, reuse=True):
        return out

    def fake(p, v, n, *rest):
        return v.new_empty((1, 4, 4))

    def backward(ctx, g):
        return (None,) * 11

    def setup(ctx, inputs, output):
        pass

    @torch.library.custom_op("warpfft_bench::custom", mutates_args=())
    def custom(p: torch.Tensor, v: torch.Tensor, n: List[int], isign: int, eps: float,
               modeord: int, method: int, ups: float, ms: int, bins: List[int],
               reuse: bool = True) -> torch.Tensor:
        return out

    custom.register_fake(fake)
    custom.register_autograd(backward, setup_context=setup)
    lib = torch.library.Library("warpfft_bench", "FRAGMENT")
    lib.define("lib_reg" + schema)
    lib.impl("lib_reg", impl, "CPU")
    torch.library.register_fake("warpfft_bench::lib_reg", fake, lib=lib)
    torch.library.register_autograd("warpfft_bench::lib_reg", backward, setup_context=setup,
                                    lib=lib)
    from warpfft.torch._ops import _AFTER_AUTOGRAD
    lib.define("lib_kernel" + schema)
    lib.impl("lib_kernel", impl, "CPU")
    torch.library.register_fake("warpfft_bench::lib_kernel", fake, lib=lib)
    op = torch.ops.warpfft_bench.lib_kernel.default

    def kernel(keyset, *args):
        if torch.is_grad_enabled() and (args[0].requires_grad or args[1].requires_grad):
            raise AssertionError("not timed")
        return op.redispatch(keyset & _AFTER_AUTOGRAD, *args)

    lib.impl("lib_kernel", kernel, "Autograd", with_keyset=True)
    args = (torch.zeros(2, 10), torch.zeros(1, 10, dtype=torch.complex64), [4, 4], -1, 1e-6, 1,
            0, 2.0, 0, [0, 0, 0], True)
    for name, fn in (
            ("custom_op + register_autograd", lambda: custom(*args)),
            ("Library + register_autograd", lambda: torch.ops.warpfft_bench.lib_reg.default(*args)),
            ("Library + Autograd kernel (warpfft's)", lambda: op(*args))):
        print(f"trivial op, {name:37s} {best_us(fn, reps):7.2f} us")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20000)
    args = ap.parse_args(argv)
    bench_plan(args.reps)
    bench_torch(args.reps)


if __name__ == "__main__":
    main()
