"""Exceptions: one base class carrying the C status, a few subclasses worth catching."""

# Status codes of warpfft.h (warpfft_status).
SUCCESS = 0
ERR_INVALID_ARG = 1
ERR_BAD_TYPE = 2
ERR_BAD_DIM = 3
ERR_BAD_SIZE = 4
ERR_BAD_TOL = 5
ERR_BAD_NPOINTS = 6
ERR_BAD_POINTS = 7
ERR_PRECISION = 8
ERR_NO_POINTS = 9
ERR_NO_DRIVER = 10
ERR_NO_DEVICE = 11
ERR_DRIVER_TOO_OLD = 12
ERR_NO_KERNEL = 13
ERR_NO_CUFFT = 14
ERR_CUFFT = 15
ERR_OUT_OF_MEMORY = 16
ERR_CUDA = 17
ERR_UNSUPPORTED = 18
ERR_INTERNAL = 19
ERR_NO_NVRTC = 20


class WarpfftError(RuntimeError):
    """A warpfft call failed. A ``RuntimeError``, as the reference package raises for a failed
    library call, so code written for it catches ours.

    Attributes: ``status`` (the C ``warpfft_status`` value, ``None`` where no C call was made),
    ``name`` (e.g. ``"WARPFFT_ERR_NO_DEVICE"``) and ``message`` (``warpfft_last_error()`` read
    right after the failing call).
    """

    def __init__(self, message, status=None, name=None):
        self.status = status
        self.name = name
        self.message = message
        super().__init__(f"{name}: {message}" if name else message)


class LibraryNotFoundError(WarpfftError, ImportError):
    """libwarpfft.so could not be loaded; the message lists every place tried."""


class NoGpuError(WarpfftError):
    """No CUDA driver (libcuda.so.1) or no CUDA device (WARPFFT_ERR_NO_DRIVER / NO_DEVICE)."""


class NoCufftError(WarpfftError):
    """cuFFT was not found (WARPFFT_ERR_NO_CUFFT); the message lists every place tried."""


class NoNvrtcError(WarpfftError):
    """NVRTC was not found (WARPFFT_ERR_NO_NVRTC) where a build with the ``nvrtc`` feature must
    compile a kernel at run time; the message lists every place tried."""


class InvalidArgumentError(WarpfftError, ValueError, TypeError):
    """A bad argument: INVALID_ARG, BAD_TYPE, BAD_DIM, BAD_SIZE, BAD_TOL, BAD_NPOINTS,
    BAD_POINTS or PRECISION (also raised by the Python layer's own checks: dtype, shape,
    contiguity, option names, integer ranges). Also a ``ValueError`` and a ``TypeError``: the
    reference package raises ``TypeError`` for a wrong dtype, shape or option name."""


class UnsupportedError(WarpfftError, NotImplementedError):
    """A valid request this build does not do (WARPFFT_ERR_UNSUPPORTED), e.g. type 3."""


class OutOfMemoryError(WarpfftError, MemoryError):
    """Device (or host) memory exhausted (WARPFFT_ERR_OUT_OF_MEMORY)."""


_CLASS_BY_STATUS = {
    ERR_NO_DRIVER: NoGpuError,
    ERR_NO_DEVICE: NoGpuError,
    ERR_NO_CUFFT: NoCufftError,
    ERR_NO_NVRTC: NoNvrtcError,
    ERR_OUT_OF_MEMORY: OutOfMemoryError,
    ERR_UNSUPPORTED: UnsupportedError,
}
for _s in range(ERR_INVALID_ARG, ERR_PRECISION + 1):
    _CLASS_BY_STATUS[_s] = InvalidArgumentError


def error_class(status):
    """The exception class raised for a C status."""
    return _CLASS_BY_STATUS.get(status, WarpfftError)


_NAMES = {
    ERR_INVALID_ARG: "WARPFFT_ERR_INVALID_ARG",
    ERR_BAD_TYPE: "WARPFFT_ERR_BAD_TYPE",
    ERR_BAD_DIM: "WARPFFT_ERR_BAD_DIM",
    ERR_BAD_SIZE: "WARPFFT_ERR_BAD_SIZE",
    ERR_BAD_NPOINTS: "WARPFFT_ERR_BAD_NPOINTS",
    ERR_PRECISION: "WARPFFT_ERR_PRECISION",
    ERR_NO_POINTS: "WARPFFT_ERR_NO_POINTS",
    ERR_UNSUPPORTED: "WARPFFT_ERR_UNSUPPORTED",
    ERR_CUDA: "WARPFFT_ERR_CUDA",
}


def invalid(message, status=ERR_INVALID_ARG):
    """An InvalidArgumentError raised by the Python layer's own checks (no C call made)."""
    return InvalidArgumentError(message, status, _NAMES[status])


def live(handle, what):
    """A C handle, unless it is gone (None): then the InvalidArgumentError "<what> is closed"
    (what: "the plan", "the Toeplitz operator")."""
    if handle is None:
        raise invalid(f"{what} is closed")
    return handle


def unsupported(message):
    """An UnsupportedError raised by the Python layer (no C call made)."""
    return UnsupportedError(message, ERR_UNSUPPORTED, _NAMES[ERR_UNSUPPORTED])


def python_error(message, status):
    """The error class of `status`, raised by the Python layer (e.g. a CUDA driver call made
    from Python for pointer and stream checks)."""
    return error_class(status)(message, status, _NAMES.get(status))
