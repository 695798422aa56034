"""warpfft.install_as_cufinufft(): a script written for the reference package runs unedited."""

import os
import sys

from _support import LIBRARY, PYDIR, clean_env, gpu_status, run, warpfft

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts",
                      "uses_cufinufft.py")


def test_script_using_import_cufinufft_runs():
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=PYDIR)
    r = run([sys.executable, SCRIPT], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    want = "ok" if gpu_status() is None else "no GPU"
    assert r.stdout.strip().splitlines()[-1] == want, r.stdout


def test_install_puts_the_reference_names_in_sys_modules(monkeypatch):
    monkeypatch.delitem(sys.modules, "cufinufft", raising=False)
    mod = warpfft.install_as_cufinufft()
    import cufinufft

    assert cufinufft is mod is sys.modules["cufinufft"]
    assert cufinufft.Plan is warpfft.Plan and cufinufft.nufft2d1 is warpfft.nufft2d1
    assert sorted(cufinufft.__all__) == sorted(
        ["Plan"] + [f"nufft{d}d{t}" for d in (1, 2, 3) for t in (1, 2, 3)])
    assert cufinufft.__version__ == warpfft.CUFINUFFT_VERSION
