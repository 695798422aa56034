"""``cufinufft._simple`` of the stand-in: the nine one-call functions (warpfft's,
``warpfft._simple``), with the reference's signatures."""

from .. import _simple as _warpfft_simple
from .._simple import *  # noqa: F401,F403  (the nine: warpfft._simple.__all__)
from . import _compat  # noqa: F401  (the reference's _simple imports these two)
from ._plan import Plan  # noqa: F401

__all__ = list(_warpfft_simple.__all__)
