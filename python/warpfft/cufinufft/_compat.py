"""``cufinufft._compat`` of the stand-in: the reference's array helpers (get_array_ptr,
get_array_module, get_array_size, get_array_dtype, is_array_contiguous, array_can_contiguous,
array_contiguous, array_empty_like), implemented in ``warpfft._array_helpers``."""

from .._array_helpers import *  # noqa: F401,F403
from .._array_helpers import __all__  # noqa: F401
