"""The reference's own test-suite (cufinufft v2.5.1's python/cufinufft/tests, exported into
.dropin/ref/tests by python/tools/dropin_prep.sh) against warpfft installed as cufinufft,
without a GPU: over the fake C library, with _fake_framework's FakeGpuArray as the "framework"
(what cupy is on the GPU). A subset (M = 256, tol 1e-3, complex64, the 1D-3D shapes of 16;
every error, option and array-ordering test) keeps it to seconds; the GPU machine runs all of
it with cupy, torch and numba (python/tools/gpu_dropin_check.sh)."""

import os
import re
import sys

import pytest
from _support import LIBRARY, PYDIR, REPO, clean_env, run

REF_TESTS = os.path.join(REPO, ".dropin", "ref", "tests")
SUBSET = ("not 1024 and not 4096 and not 1e-06 and not complex128 and not shape3 "
          "and not shape4 and not shape5")


def test_reference_suite_subset_passes_on_the_fake_library():
    if not os.path.isfile(os.path.join(REF_TESTS, "test_basic.py")):
        pytest.skip("the reference's tests are not exported: run bash python/tools/dropin_prep.sh")
    env = clean_env(WARPFFT_LIBRARY=LIBRARY,
                    PYTHONPATH=os.pathsep.join([os.path.join(PYDIR, "tests"), PYDIR]))
    r = run([sys.executable, "-m", "pytest", "-p", "_fake_framework", "-p", "no:cacheprovider",
             "-q", "--framework", "fake", "-k", SUBSET, "."], env=env, cwd=REF_TESTS)
    tail = r.stdout[-3000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    passed = re.search(r"(\d+) passed", r.stdout)
    assert passed and int(passed.group(1)) >= 100, tail
    assert "failed" not in r.stdout.splitlines()[-1], tail
