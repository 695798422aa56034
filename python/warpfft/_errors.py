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


class WarpfftError(Exception):
    """A warpfft call failed.

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


class InvalidArgumentError(WarpfftError, ValueError):
    """A bad argument: INVALID_ARG, BAD_TYPE, BAD_DIM, BAD_SIZE, BAD_TOL, BAD_NPOINTS,
    BAD_POINTS or PRECISION (also raised by the Python layer's own checks)."""


class OutOfMemoryError(WarpfftError, MemoryError):
    """Device (or host) memory exhausted (WARPFFT_ERR_OUT_OF_MEMORY)."""


_CLASS_BY_STATUS = {
    ERR_NO_DRIVER: NoGpuError,
    ERR_NO_DEVICE: NoGpuError,
    ERR_NO_CUFFT: NoCufftError,
    ERR_OUT_OF_MEMORY: OutOfMemoryError,
}
for _s in range(ERR_INVALID_ARG, ERR_PRECISION + 1):
    _CLASS_BY_STATUS[_s] = InvalidArgumentError


def error_class(status):
    """The exception class raised for a C status."""
    return _CLASS_BY_STATUS.get(status, WarpfftError)


_NAMES = {ERR_INVALID_ARG: "WARPFFT_ERR_INVALID_ARG", ERR_BAD_DIM: "WARPFFT_ERR_BAD_DIM"}


def invalid(message, status=ERR_INVALID_ARG):
    """An InvalidArgumentError raised by the Python layer's own checks (no C call made)."""
    return InvalidArgumentError(message, status, _NAMES[status])
