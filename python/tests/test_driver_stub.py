"""warpfft._device's CUDA driver calls (pointer device, events, stream waits) against a stub
libcuda built here with cc: the ctypes declarations, the context push/pop around every call and
the order of calls, without a GPU."""

import ctypes
import os
import shutil

import pytest
from _support import run
from warpfft import _device

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs", "cuda_stub.c")


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler (cc) to build the libcuda stub")
    so = tmp_path_factory.mktemp("stub") / "libcuda_stub.so"
    r = run([cc, "-shared", "-fPIC", "-Wall", "-Wextra", "-o", str(so), STUB])
    assert r.returncode == 0, r.stderr
    lib = ctypes.CDLL(str(so))
    lib.stub_log.restype = ctypes.c_char_p
    return str(so), lib


def _log(lib):
    return [s for s in lib.stub_log().decode().split(";") if s]


def test_pointer_device(stub):
    path, lib = stub
    drv = _device._Driver(path)
    assert drv.pointer_device(0x5010, 0) == 0
    assert drv.pointer_device(0x7010, 0) == 1
    assert drv.pointer_device(0x9999, 0) is None  # host memory / unknown
    assert lib.stub_ctx_depth() == 0  # every push popped
    assert all(s == "push 1000" for s in _log(lib))  # device 0's primary context


def test_order_records_on_producer_and_waits_on_consumer(stub):
    path, lib = stub
    drv = _device._Driver(path)
    lib.stub_clear()
    drv.order(0, 0xAA, 0xBB)
    calls = [s for s in _log(lib) if not s.startswith("push")]
    assert calls[0].startswith("record ") and calls[0].endswith(" saa")
    ev = calls[0].split()[1]
    assert calls[1] == f"wait sbb {ev}"
    lib.stub_clear()
    drv.order(0, 1, 0)  # the legacy stream both ways (CAI 1 == plan 0): nothing to do
    drv.order(0, 0x55, 0x55)
    assert _log(lib) == []
    assert lib.stub_ctx_depth() == 0


def test_events_are_pooled_and_queried(stub):
    path, lib = stub
    drv = _device._Driver(path)
    ev = drv.record(1, 0x10)
    lib.stub_events_done(0)
    assert drv.done(1, ev) is False
    lib.stub_events_done(1)
    assert drv.done(1, ev) is True
    drv.release(1, ev)
    assert drv.record(1, 0x10) == ev  # reused, not created again
    assert "push 1001" in _log(lib)  # device 1's primary context
    with pytest.raises(Exception, match="cuDeviceGet"):
        drv.record(5, 0)  # no such device in the stub
    assert lib.stub_ctx_depth() == 0


def test_cycle_records_then_queries_under_one_push(stub):
    """Plan.execute's per-call bookkeeping: a new event recorded on the plan's stream and the
    previous call's event queried, in one context push; a failed query's status comes back
    (raised by check_status after the new event is kept)."""
    path, lib = stub
    drv = _device._Driver(path)
    ev1, st = drv.cycle(0, 0x10, None)
    assert st is None
    lib.stub_clear()
    lib.stub_events_done(0)
    ev2, st = drv.cycle(0, 0x10, ev1)
    assert st is False  # pending
    assert _log(lib) == ["push 1000", f"record e{ev2} s10", f"query e{ev1}"]
    lib.stub_events_done(1)
    _, st = drv.cycle(0, 0x10, ev2)
    assert st is None  # complete
    lib.stub_events_done(2)
    _, st = drv.cycle(0, 0x10, ev2)
    assert st == 719
    with pytest.raises(Exception, match="719"):
        drv.check_status(st)
    drv.check_status(None)
    drv.check_status(False)
    lib.stub_events_done(1)
    assert lib.stub_ctx_depth() == 0
