"""A Plan's point arrays: the checks of setpts' coordinates in the reference's order, and
batched points (warpfft's extension, issue 32; docs/batched-points.md).

The reference takes each coordinate as a vector of M points shared by every transform of the
batch. warpfft also takes a 2-D array of shape ``(n_sets, M)``: n_sets point sets, set s feeding
the ``n_trans / n_sets`` transforms ``s * n_trans / n_sets ...`` (``n_sets == n_trans``: a set
per transform). A C-contiguous ``(n_sets, M)`` array is the C ABI's layout for
warpfft_setpts_sets as it stands (point j of set s at ``s * M + j``), so no data moves.
"""

import math

from ._arrays import wrap
from ._args import shape_of
from ._errors import invalid


def coords(values, names, dim, type_, real_dtype, stream):
    """The dim coordinate arrays of one point set (x, y, z or s, t, u), checked in the
    reference's order: dtype of the first, a vector (or, batched, an ``(n_sets, M)`` array), no
    coordinate beyond the dimension, then the others' dtype and shape (the first's). Returns
    (wrapped arrays, n_sets, points per set); n_sets is None for vectors (shared points)."""
    coords = list(values)
    for d in range(dim, 3):  # the reference allows empty arrays for unused axes
        if coords[d] is not None and len(shape_of(coords[d])) and \
                _prod(shape_of(coords[d])) == 0:
            coords[d] = None
    what = " type 3" if type_ == 3 else ""
    if coords[0] is None:
        raise invalid(f"{names[0]} is needed for a {dim}D{what} plan")
    first = wrap(coords[0], names[0], real_dtype, stream=stream)
    if len(first.shape) not in (1, 2):
        raise invalid(f"Argument `{names[0]}` must be a vector (shape {first.shape}), or an "
                      "(n_sets, M) array of batched points")
    for d in (2, 1):
        if d >= dim and coords[d] is not None:
            raise invalid(f"Plan dimension is {dim}, but `{names[d]}` was specified "
                          f"({names[d]} is not allowed for a {dim}D{what} plan)")
    arrs = [first]
    for d in range(1, dim):
        if len(first.shape) == 2 and (coords[d] is None or len(shape_of(coords[d])) != 2):
            # the reference's message (a stacked (dim, M) x is its classic mistake), with ours
            raise invalid(f"Argument `{names[0]}` must be a vector (shape {first.shape}; "
                          "batched points take every coordinate as an (n_sets, M) array)")
        if coords[d] is None:
            raise invalid(f"{names[d]} is needed for a {dim}D{what} plan")
        a = wrap(coords[d], names[d], real_dtype, stream=stream)
        if a.shape != first.shape:
            raise invalid(f"Argument `{names[d]}` must be of shape {first.shape} "
                          f"(got {a.shape})")
        arrs.append(a)
    if len(first.shape) == 2:
        n_sets, m = first.shape
        if n_sets < 1:
            raise invalid(f"Argument `{names[0]}` of shape {first.shape} holds no point set "
                          "(batched points: (n_sets, M) with n_sets >= 1)")
        return arrs, n_sets, m
    return arrs, None, first.shape[0]


def check_sets(n_sets, n_trans, what="x"):
    """Batched points must divide the batch: each set feeds n_trans / n_sets transforms (the C
    library checks this too; here the message speaks of the Python arguments)."""
    if n_sets is not None and n_trans % n_sets != 0:
        raise invalid(f"batched points: `{what}` holds {n_sets} point sets, which must divide "
                      f"n_trans = {n_trans} (each set feeds n_trans / n_sets transforms)")


def _prod(shape):
    return math.prod(int(v) for v in shape)
