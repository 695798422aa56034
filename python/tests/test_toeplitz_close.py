"""warpfft.Toeplitz.close() when the C library fails (issue 40): over the fake C library
(_fake.py), whose calls fail on request. A failed warpfft_toeplitz_destroy leaves the operator
allocated (warpfft.h: "the operator stays valid and may be destroyed again"): close() must
report it -- also when the wait for the stream failed first, whose error used to be the only
one raised -- and must keep the handle, so that the next close() destroys it instead of losing
it (a leak nobody is told of).

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \\
        python -m pytest python/tests/test_toeplitz_close.py -q
"""

import numpy as np
import pytest
from _support import warpfft


def _operator():
    rng = np.random.default_rng(3)
    pts = [rng.uniform(-np.pi, np.pi, 30).astype(np.float32) for _ in range(2)]
    w = rng.uniform(0.5, 2.0, 30).astype(np.float32)
    return warpfft.Toeplitz((12, 7), *pts, weights=w)


def _destroys(fake):
    return [c for c in fake.calls if c[0] == "warpfft_toeplitz_destroy"]


def test_failed_destroy_is_raised_and_retried(fake):
    op = _operator()
    handle = op._handle
    fake.fail["warpfft_toeplitz_destroy"] = 15  # WARPFFT_ERR_CUFFT: cufftDestroy failed
    with pytest.raises(warpfft.WarpfftError, match="fake failure") as e:
        op.close()
    assert e.value.status == 15
    assert handle in fake.plans  # still allocated in the C library
    with pytest.raises(warpfft.InvalidArgumentError, match="closed"):
        op(np.zeros((12, 7), np.complex64))  # no longer applied
    del fake.fail["warpfft_toeplitz_destroy"]
    op.close()  # the retry destroys it
    assert handle not in fake.plans
    assert [c[1] for c in _destroys(fake)] == [handle, handle]
    op.close()  # idempotent once destroyed
    assert len(_destroys(fake)) == 2


def test_failed_wait_and_destroy_are_both_reported(fake):
    op = _operator()
    fake.fail["warpfft_stream_sync"] = 17  # WARPFFT_ERR_CUDA: an asynchronous error
    fake.fail["warpfft_toeplitz_destroy"] = 15
    with pytest.raises(warpfft.WarpfftError) as e:
        op.close()
    assert e.value.status == 17  # the wait's, first, as Plan.destroy raises
    assert "warpfft_toeplitz_destroy failed too" in str(e.value)
    assert "WARPFFT_ERR_CUFFT" in str(e.value)
    fake.fail.clear()
    op.close()
    assert len(_destroys(fake)) == 2 and not any(h == op._handle for h in fake.plans)


def test_failed_wait_alone(fake):
    op = _operator()
    fake.fail["warpfft_stream_sync"] = 17
    with pytest.raises(warpfft.WarpfftError) as e:
        op.close()
    assert e.value.status == 17 and "destroy" not in str(e.value)
    fake.fail.clear()
    op.close()  # destroyed by the first close: nothing left to do
    assert len(_destroys(fake)) == 1
