"""``cufinufft._simple`` of the stand-in: the nine one-call functions (warpfft's,
``warpfft._simple``), with the reference's signatures."""

from .._simple import (  # noqa: F401
    nufft1d1,
    nufft1d2,
    nufft1d3,
    nufft2d1,
    nufft2d2,
    nufft2d3,
    nufft3d1,
    nufft3d2,
    nufft3d3,
)
from . import _compat  # noqa: F401  (the reference's _simple imports these two)
from ._plan import Plan  # noqa: F401

__all__ = ["nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3",
           "nufft3d1", "nufft3d2", "nufft3d3"]
