"""Argument checks of the ops ``warpfft::nufft1`` / ``nufft2`` / ``nufft3``, run by their
kernels (through the dispatcher and on the wrappers' direct eager path alike) and by their fake
implementations (torch.compile, FakeTensorMode, meta tensors), before any pointer reaches the C
library.

The C library reads raw device pointers with the sizes the plan was made for: values shorter
than the points, float32 points with complex128 values or a tensor on another GPU would be read
out of bounds, and host pointers handed to the kernels give an illegal-address error that
breaks the process's CUDA context for good. So the shapes, the dtypes and the device (one CUDA
device for all tensors) are checked from the tensors' metadata, which fake and meta tensors
have too. Layout is not required: the kernels copy what is not contiguous.

Exceptions as warpfft.torch's functions raise them: TypeError for a dtype, ValueError for a
shape or a device.

Real data (``real``: the options record's real_data; _real.py): type 1's values are real
(float32 or float64, the points' dtype) and its output the half modes; type 2's targets are the
complex half modes (a last axis H >= 1) and its output real; type 3 refuses it.
"""

import torch

# The kernels take tensors on one CUDA device: device indices (tensor.get_device()) from
# FIRST_DEVICE = 0 on; CPU tensors have -1. Tests that stand a fake C library in for the real
# one, with host memory for device memory, set -1: CPU tensors too. The fake implementations
# also take meta tensors: shapes are all they compute.
FIRST_DEVICE = 0

_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}
_FLOAT = (torch.float32, torch.float64)


def _devices(op, fake, named):
    """The one device of the (name, tensor) pairs `named`, checked to be a kernel device."""
    device = named[0][1].device
    for name, t in named[1:]:
        if t.device != device:
            raise ValueError(f"{op}: {named[0][0]} are on {device} but {name} on {t.device}: all "
                             "tensors must be on one device")
    kind = device.type
    if not (kind == "cuda" or (kind == "cpu" and FIRST_DEVICE < 0) or (fake and kind == "meta")):
        raise ValueError(f"{op} runs on CUDA tensors; the tensors are on {device} (move them "
                         "with .cuda(), or use a CPU NUFFT for CPU tensors)")


def _points(op, points, data, what, real_data=False):
    """(D, M) of points (D, M) -- or (S, D, M), S point sets (batched points), S dividing the
    batch of `data` -- of the real dtype of `data` (complex64 or complex128; real_data: type 1's
    real values, float32 or float64, are that dtype themselves)."""
    if real_data:
        real = data.dtype if data.dtype in _FLOAT else None
        if real is None:
            raise TypeError(f"{op}: real_data: {what} must be real, float32 or float64 (real "
                            f"strengths in, complex half modes out), not {data.dtype}")
    else:
        real = _REAL.get(data.dtype)
    if real is None:
        hint = (" (real_data: type 2 takes the complex half modes and returns real values)"
                if data.dtype in _FLOAT else "")
        raise TypeError(f"{op}: {what} must be complex64 or complex128, not {data.dtype}{hint}")
    if points.dtype != real:
        raise TypeError(f"{op}: points have dtype {points.dtype} but {what} are {data.dtype}: "
                        f"points must be {real}")
    if points.ndim not in (2, 3) or not 1 <= points.shape[-2] <= 3:
        raise ValueError(f"{op}: points must have shape (D, M) with D = 1, 2 or 3 (or (S, D, M): "
                         f"S point sets), got {tuple(points.shape)}")
    if points.ndim == 3:
        S = points.shape[0]
        if S < 1 or data.ndim < 1 or data.shape[0] % S:
            raise ValueError(f"{op}: points hold S = {S} point sets (shape "
                             f"{tuple(points.shape)}), which must divide the batch of the "
                             f"{what}, {data.shape[0] if data.ndim else 0}")
    return points.shape[-2:]


def _values(op, values, M):
    if values.ndim != 2 or values.shape[1] != M:
        raise ValueError(f"{op}: values have shape {tuple(values.shape)}, not (B, M) with the "
                         f"points' M = {M}")


# Each op's check: a fast path for well-formed tensors on one CUDA device (what every eager call
# pays: ~1 us, no further Python call; the kernels only ever see CPU and CUDA tensors, the
# dispatch keys they are registered for), else the full check, which raises with a message or,
# for fake and meta tensors, passes.


def nufft1(points, values, n_modes, fake=False, real=False):
    """points (D, M) (or (S, D, M)), values (B, M), n_modes D positive ints, all on one CUDA device.
    real: values real (real_data), of the points' dtype."""
    if not fake and points.ndim == 2 and values.ndim == 2:  # (batched points: the full check)
        D, M = points.shape
        want = (values.dtype if values.dtype in _FLOAT else None) if real else _REAL.get(
            values.dtype)
        if (want is points.dtype and values.shape[1] == M
                and 0 < len(n_modes) == D <= 3 and min(n_modes) > 0
                and points.get_device() == values.get_device() >= FIRST_DEVICE):
            return
    op = "warpfft.nufft1"
    D, M = _points(op, points, values, "values", real)
    _values(op, values, M)
    if len(n_modes) != D or min(n_modes) < 1:
        raise ValueError(f"{op}: n_modes {list(n_modes)} must be {D} positive ints for "
                         f"{D}D points")
    _devices(op, fake, (("points", points), ("values", values)))


def nufft2(points, targets, fake=False, real=False):
    """points (D, M), targets (B, N1[, N2[, N3]]) with D mode axes, on one CUDA device. real:
    targets are the half modes, the last axis H >= 1 (a plan of N = 2H - 1)."""
    if (not fake and points.ndim == 2 and _REAL.get(targets.dtype) is points.dtype
            and 0 < points.shape[0] <= 3 and targets.ndim == points.shape[0] + 1
            and (not real or targets.shape[-1] > 0)
            and points.get_device() == targets.get_device() >= FIRST_DEVICE):
        return
    op = "warpfft.nufft2"
    D, _ = _points(op, points, targets, "targets")
    if targets.ndim != D + 1:
        raise ValueError(f"{op}: targets have shape {tuple(targets.shape)}, not (B, N1, ..) with "
                         f"the {D} mode axes of {D}D points")
    if real and targets.shape[-1] < 1:
        raise ValueError(f"{op}: real_data: targets {tuple(targets.shape)} are half modes, the "
                         "last axis H = N//2 + 1 >= 1")
    _devices(op, fake, (("points", points), ("targets", targets)))


def nufft3(points, values, targets, fake=False, real=False):
    """points (D, M), values (B, M), targets (D, K) of the points' dtype, on one CUDA device.
    (Type 3 sets points on every call: no fast path, its own cost dwarfs this one's.) real: the
    options ask for real_data, which type 3 does not take."""
    op = "warpfft.nufft3"
    if real:
        raise ValueError(f"{op}: real_data is for types 1 and 2 only (docs/real.md); type 3 "
                         "takes complex strengths")
    D, M = _points(op, points, values, "values")
    _values(op, values, M)
    if targets.dtype != points.dtype:
        raise TypeError(f"{op}: targets have dtype {targets.dtype} but the points "
                        f"{points.dtype}: both must be the real type of the values")
    want = (D,) if points.ndim == 2 else (points.shape[0], D)
    if targets.ndim != points.ndim or tuple(targets.shape[:-1]) != want:
        raise ValueError(f"{op}: targets must have shape {want + ('K',)} like the points' "
                         f"{tuple(points.shape[:-1]) + ('M',)}, got {tuple(targets.shape)}")
    _devices(op, fake, (("points", points), ("values", values), ("targets", targets)))
