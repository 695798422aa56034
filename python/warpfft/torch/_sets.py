"""Batched points in the ops (issue 32, warpfft's extension; docs/batched-points.md): points
of shape (S, D, M) instead of (D, M) give each of S point sets its own B / S transforms of the
batch (set s: transforms s * B / S ..), one plan with the C library's warpfft_setpts_sets.

What the ops and their autograd formulas need for that: the points in the C ABI's layout (per
dimension the S sets one after the other), the stacking of several right-hand sides into one
batch so that every set's transforms stay contiguous (the backward passes stack the gradient
with its ramped copies), and the reduction of per-transform products to a gradient of the
points' shape. With (D, M) points every helper is what the ops did before (S = 1).
"""

import torch


def split(points):
    """(S, D, M) of points (D, M) (S = 1) or (S, D, M)."""
    if points.ndim == 3:
        return tuple(points.shape)
    return (1,) + tuple(points.shape)


def c_layout(points):
    """The points as the C library reads them: a contiguous (D, S * M) tensor (row d: the S sets
    of coordinate d, set after set). A (D, M) tensor is its own layout."""
    if points.ndim == 2:
        return points.contiguous()
    return points.transpose(0, 1).contiguous()


def stack(parts, points):
    """Right-hand sides `parts` (P tensors of shape (B, ...)) as one batch of P * B transforms
    for a plan on `points`: concatenated for shared points; for S sets, set-major (the P * B / S
    transforms of set s contiguous: (S, P, B / S, ...) flattened)."""
    if len(parts) == 1:
        return parts[0]
    if points.ndim == 2:
        return torch.cat(parts, dim=0)
    S, B = points.shape[0], parts[0].shape[0]
    s = torch.stack(parts, dim=0)  # (P, B, ...)
    s = s.reshape((len(parts), S, B // S) + tuple(s.shape[2:])).transpose(0, 1)
    return s.reshape((-1,) + tuple(s.shape[3:]))


def unstack(r, n_parts, points):
    """The inverse of :func:`stack` for a result r of P * B rows: (P, B, ...)."""
    if points.ndim == 2 or n_parts == 1:
        return r.reshape((n_parts, -1) + tuple(r.shape[1:]))
    S = points.shape[0]
    r = r.reshape((S, n_parts, -1) + tuple(r.shape[1:])).transpose(0, 1)
    return r.reshape((n_parts, -1) + tuple(r.shape[3:]))


def reduce(prod, points):
    """A gradient of the points' shape from per-transform products prod (D, B, M): summed over
    the transforms (shared points: (D, M)), or over each set's transforms ((S, D, M))."""
    if points.ndim == 2:
        return prod.sum(dim=1)
    D, B, M = prod.shape
    S = points.shape[0]
    return prod.reshape(D, S, B // S, M).sum(dim=2).transpose(0, 1)


def coord(points, d, B):
    """Coordinate d of the points, broadcastable against (B, M): (1, M), or (B, M) with each
    set's row repeated for its B / S transforms."""
    if points.ndim == 2:
        return points[d].unsqueeze(0)
    return points[:, d].repeat_interleave(B // points.shape[0], dim=0)
