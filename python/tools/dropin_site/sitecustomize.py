"""Run by Python at start-up when this directory is on PYTHONPATH (python/tools/
gpu_dropin_check.sh puts it there): warpfft stands in for cufinufft in this interpreter and
in every Python it starts (the reference's test_examples runs its examples as subprocesses),
as ``warpfft.install_as_cufinufft()`` does; then the next sitecustomize on sys.path, if any,
runs too (this one shadows it). A failure to import warpfft is printed by Python's site
module and the interpreter goes on without the stand-in (imports of cufinufft then fail
loudly)."""

import os
import runpy
import sys

import warpfft

warpfft.install_as_cufinufft()

_here = os.path.dirname(os.path.abspath(__file__))
for _d in sys.path:
    _d = os.path.abspath(_d or ".")
    _p = os.path.join(_d, "sitecustomize.py")
    if _d != _here and os.path.isfile(_p):
        runpy.run_path(_p, run_name="sitecustomize")
        break
