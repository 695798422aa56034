"""warpfft standing in for the reference GPU NUFFT package, cufinufft, as a package with the
reference's layout: ``warpfft.install_as_cufinufft()`` puts this package into
``sys.modules["cufinufft"]`` and its submodules under the reference's names, so that code
written for the reference imports warpfft unedited:

    import cufinufft                              # Plan, nufft{1,2,3}d{1,2,3}, __version__
    from cufinufft._compat import get_array_ptr   # the array helpers (mri-nufft uses this one)
    from cufinufft._plan import Plan
    from cufinufft._cufinufft import NufftOpts    # the options struct; raw-handle calls

Submodules: ``_compat`` (array helpers), ``_plan`` (Plan), ``_simple`` (the one-call
functions), ``_cufinufft`` (the options struct and the reference's calls on a plan handle).
Everything here is warpfft's own (``cufinufft.Plan is warpfft.Plan``); docs/dropin.md says what
the stand-in covers and what it does not.
"""

from .. import CUFINUFFT_VERSION
from .. import __version__ as __warpfft_version__  # noqa: F401
from . import _compat, _cufinufft, _plan, _simple  # noqa: F401  (the reference's submodules)
from ._plan import Plan
from ._simple import *  # noqa: F401,F403  (the nine one-call functions)

#: The reference's version this package stands in for, in its format (pytorch-finufft refuses
#: "1.x").
__version__ = CUFINUFFT_VERSION

#: The submodules ``install_as_cufinufft`` registers as ``cufinufft.<name>``.
SUBMODULES = ("_compat", "_plan", "_simple", "_cufinufft")

__all__ = _simple.__all__ + ["Plan"]
