"""warpfft.jax.distributed: NUFFTs whose points are sharded over GPUs -- several GPUs of one
process, or one GPU per process under ``jax.distributed.initialize`` (one host or many) --
built on the public ops (:func:`warpfft.jax.nufft1` / ``nufft2`` / ``nufft3``) and JAX's own
collectives. No scheduler of ours: JAX places the shards, XLA runs the collectives (NCCL on
GPUs).

Type 1 is linear in the points, so each device transforms its own points into a full mode
array and the mode arrays are summed over the mesh (``psum``: one all-reduce of N1*N2*N3
complex values). Type 2 reads a mode array replicated on every device at that device's
points: no communication. Type 3 shards the sources (partial sums, ``psum``), the targets
(each device its own targets: the result stays sharded like them), or both on a 2D mesh.

Two levels:

* per-shard functions for your own ``jax.shard_map`` body: :func:`nufft1_sharded`,
  :func:`nufft2_sharded`, :func:`nufft3_sharded`;
* functions of global arrays that build the ``shard_map`` for you (cached per mesh, axis,
  shapes and options): :func:`nufft1`, :func:`nufft2`, :func:`nufft3`, and
  :func:`from_local_shards` to make such a global array from each process's own shard
  (points generated on each GPU, never gathered).

Derivatives: ``jax.grad`` flows through them. Under ``shard_map``'s replication checking
(``check_vma=True``, the default) the per-shard functions first cast every input to vary
over the union of the inputs' varying mesh axes (``jax.lax.pcast(..., to='varying')``): our
primitive has no rule of its own for mixed inputs, and the cast is what gives a replicated
input (type 2's modes, type 3's unsharded side) the sum over the mesh of its per-device
cotangents. ``psum``'s transpose then hands each shard the (replicated) cotangent of the mode
array. With ``check_vma=False`` nothing is cast, and JAX's older rules (``psum`` transposes to
``psum``, cotangents of replicated outputs divided by the axis size) give the same gradients.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from . import nufft1 as _nufft1
from . import nufft2 as _nufft2
from . import nufft3 as _nufft3
from ._common import freeze as _freeze

__all__ = ["nufft1_sharded", "nufft2_sharded", "nufft3_sharded", "nufft1", "nufft2", "nufft3",
           "from_local_shards"]


# ---- varying mesh axes (shard_map's replication types) --------------------------------------


def _varying(x):
    """The manual mesh axes `x` varies over inside shard_map (empty outside it, and with
    check_vma=False). JAX 0.10+ keeps them in the aval's ``mat.varying``; older ones in
    ``vma``."""
    aval = jax.typeof(x)
    mat = getattr(aval, "mat", None)
    if mat is not None:
        return frozenset(mat.varying)
    return frozenset(getattr(aval, "vma", ()) or ())


def _cast_varying(x, axes):
    if not axes:
        return x
    if hasattr(jax.lax, "pcast"):
        return jax.lax.pcast(x, axes, to="varying")
    return jax.lax.pvary(x, axes)  # JAX before 0.8


def _match_varying(arrays):
    """Each array cast to vary over the union of the arrays' varying axes (a no-op outside
    shard_map or with check_vma=False)."""
    arrays = [jnp.asarray(a) for a in arrays]
    sets = [_varying(a) for a in arrays]
    union = frozenset().union(*sets)
    return [_cast_varying(a, tuple(sorted(union - s, key=str))) for a, s in zip(arrays, sets)]


def _axes(axis_name):
    """An axis name or a tuple of them as a tuple (None: no axes)."""
    if axis_name is None:
        return ()
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


# ---- per-shard functions (inside shard_map) -------------------------------------------------


def nufft1_sharded(output_shape, source, *points, axis_name, iflag=1, eps=1e-6, opts=None):
    """Type 1 over points sharded along mesh axis `axis_name` (a name or a tuple of names), for
    a ``shard_map`` body: this shard's source (..., M_local) and points (..., M_local) give a
    full mode array, summed over the axis (``jax.lax.psum``). Returns the modes (...,
    *output_shape), replicated over `axis_name` (``out_specs`` without it)."""
    axes = _axes(axis_name)
    if not axes:
        raise ValueError("nufft1_sharded: axis_name names the mesh axis the points are "
                         "sharded over (use warpfft.jax.nufft1 for unsharded points)")
    source, *points = _match_varying((source,) + points)
    f = _nufft1(output_shape, source, *points, iflag=iflag, eps=eps, opts=opts)
    return jax.lax.psum(f, axes)


def nufft2_sharded(source, *points, iflag=-1, eps=1e-6, opts=None):
    """Type 2 of a replicated mode array `source` (..., N1[, N2[, N3]]) at this shard's points
    (..., M_local), for a ``shard_map`` body: no communication; the result (..., M_local) is
    sharded like the points. The modes' cotangent is summed over the mesh axes the points
    vary over (that is what the varying cast before the op does)."""
    source, *points = _match_varying((source,) + points)
    return _nufft2(source, *points, iflag=iflag, eps=eps, opts=opts)


def nufft3_sharded(source, *points_then_targets, axis_name=None, iflag=-1, eps=1e-6,
                   opts=None):
    """Type 3 for a ``shard_map`` body, sources and/or targets sharded. `axis_name`: the mesh
    axis (or axes) the sources (source (..., M_local) and points x[, y[, z]]) are sharded over;
    the partial sums are added over it (``psum``). None: the sources are replicated (only the
    targets are sharded). Targets s[, t[, u]] (..., K_local) may be sharded over another axis
    (a 2D mesh shards both): the result (..., K_local) is sharded like them."""
    arrays = _match_varying((source,) + points_then_targets)
    g = _nufft3(*arrays, iflag=iflag, eps=eps, opts=opts)
    axes = _axes(axis_name)
    return jax.lax.psum(g, axes) if axes else g


# ---- functions of global arrays -------------------------------------------------------------


def _last(ndim, axis):
    """A PartitionSpec sharding the last of `ndim` axes over mesh axis `axis` (None:
    replicated)."""
    if axis is None or ndim == 0:
        return P()
    return P(*([None] * (ndim - 1)), axis)


def _check_axis(mesh, axis, what):
    for a in _axes(axis):
        if a not in mesh.axis_names:
            raise ValueError(f"{what}={a!r} is not an axis of the mesh {tuple(mesh.axis_names)}")


def _mesh_devices(mesh, mine=False):
    devs = list(mesh.devices.flat)
    return [d for d in devs if d.process_index == jax.process_index()] if mine else devs


def _replicate(a, mesh):
    """A replicated input (type 2's modes, type 3's unsharded side) as a global array
    replicated over the mesh, made from this process's own copy (numpy, or a jax array on one
    device): a copy to each of this process's mesh devices, nothing sent between processes
    (every process must pass the same values). Global arrays over the mesh and traced values
    are returned as they are (jit reshards those)."""
    if isinstance(a, jax.core.Tracer):
        return a
    if isinstance(a, jax.Array) and (not a.is_fully_addressable
                                     or a.sharding.device_set == set(_mesh_devices(mesh))):
        return a
    if not isinstance(a, jax.Array):
        a = np.asarray(a)
    arrays = [jax.device_put(a, d) for d in _mesh_devices(mesh, mine=True)]
    return jax.make_array_from_single_device_arrays(a.shape, NamedSharding(mesh, P()), arrays)


def _shard_map(body, mesh, in_specs, out_specs):
    return jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


@functools.partial(jax.jit, static_argnames=("output_shape", "mesh", "axis", "iflag", "eps",
                                             "opts"))
def _global1(source, points, *, output_shape, mesh, axis, iflag, eps, opts):
    def body(c, *pts):
        return nufft1_sharded(output_shape, c, *pts, axis_name=axis, iflag=iflag, eps=eps,
                              opts=opts)

    specs = (_last(source.ndim, axis),) + tuple(_last(p.ndim, axis) for p in points)
    return _shard_map(body, mesh, specs, P())(source, *points)


@functools.partial(jax.jit, static_argnames=("mesh", "axis", "iflag", "eps", "opts"))
def _global2(source, points, *, mesh, axis, iflag, eps, opts):
    def body(f, *pts):
        return nufft2_sharded(f, *pts, iflag=iflag, eps=eps, opts=opts)

    pspecs = tuple(_last(p.ndim, axis) for p in points)
    out_ndim = max([source.ndim - len(points)] + [p.ndim - 1 for p in points]) + 1
    return _shard_map(body, mesh, (P(),) + pspecs, _last(out_ndim, axis))(source, *points)


@functools.partial(jax.jit, static_argnames=("mesh", "sources_axis", "targets_axis", "iflag",
                                             "eps", "opts"))
def _global3(source, points, targets, *, mesh, sources_axis, targets_axis, iflag, eps, opts):
    def body(c, *coords):
        return nufft3_sharded(c, *coords, axis_name=sources_axis, iflag=iflag, eps=eps,
                              opts=opts)

    specs = ((_last(source.ndim, sources_axis),)
             + tuple(_last(p.ndim, sources_axis) for p in points)
             + tuple(_last(t.ndim, targets_axis) for t in targets))
    out_ndim = max([source.ndim - 1] + [p.ndim - 1 for p in points + targets]) + 1
    return _shard_map(body, mesh, specs, _last(out_ndim, targets_axis))(source, *points,
                                                                        *targets)


def _statics(eps, iflag, opts):
    try:
        return float(eps), int(iflag), _freeze(opts)
    except TypeError:
        raise TypeError(f"eps and iflag must be Python numbers (static values), got eps={eps!r}, "
                        f"iflag={iflag!r}") from None


def nufft1(output_shape, source, *points, mesh, axis, iflag=1, eps=1e-6, opts=None):
    """Type 1 of global arrays whose last axis (the points, M) is sharded over mesh axis `axis`:
    source (..., M) and points (..., M) (``NamedSharding(mesh, P(..., axis))``; other layouts
    are resharded by XLA first). Returns the mode array (..., *output_shape), replicated on
    every device of the mesh. M must be a multiple of the axis size (pad with zero
    strengths)."""
    _check_axis(mesh, axis, "axis")
    if isinstance(output_shape, int) or getattr(output_shape, "ndim", None) == 0:
        output_shape = (output_shape,)
    output_shape = tuple(int(n) for n in output_shape)
    eps, iflag, opts = _statics(eps, iflag, opts)
    return _global1(source, tuple(points), output_shape=output_shape, mesh=mesh, axis=axis,
                    iflag=iflag, eps=eps, opts=opts)


def nufft2(source, *points, mesh, axis, iflag=-1, eps=1e-6, opts=None):
    """Type 2 of a mode array (..., N1[, N2[, N3]]) replicated over the mesh at points (..., M)
    sharded along M over mesh axis `axis`. The modes may be a global array, or this process's
    own copy (numpy, or a jax array on one device: copied to this process's mesh devices; every
    process must pass the same values). Returns (..., M), sharded like the points."""
    _check_axis(mesh, axis, "axis")
    eps, iflag, opts = _statics(eps, iflag, opts)
    return _global2(_replicate(source, mesh), tuple(points), mesh=mesh, axis=axis, iflag=iflag,
                    eps=eps, opts=opts)


def nufft3(source, *points_then_targets, mesh, sources_axis=None, targets_axis=None, iflag=-1,
           eps=1e-6, opts=None):
    """Type 3 of global arrays: source (..., M) and points x[, y[, z]] (..., M) sharded along
    M over `sources_axis` (None: replicated), targets s[, t[, u]] (..., K) sharded along K
    over `targets_axis` (None: replicated). Both set: a 2D mesh. Returns (..., K), sharded
    like the targets (the sources' partial sums added over `sources_axis`)."""
    n = len(points_then_targets)
    if n not in (2, 4, 6):
        raise ValueError(f"nufft3 takes 1, 2 or 3 point arrays followed by as many target "
                         f"arrays (2, 4 or 6 arrays), got {n}")
    if sources_axis is None and targets_axis is None:
        raise ValueError("nufft3: name the mesh axis of the sources (sources_axis) and/or of "
                         "the targets (targets_axis); with neither, use warpfft.jax.nufft3")
    _check_axis(mesh, sources_axis, "sources_axis")
    _check_axis(mesh, targets_axis, "targets_axis")
    if set(_axes(sources_axis)) & set(_axes(targets_axis)):
        raise ValueError("nufft3: sources_axis and targets_axis must be different mesh axes")
    eps, iflag, opts = _statics(eps, iflag, opts)
    dim = n // 2
    src = [source] + list(points_then_targets[:dim])
    tgt = list(points_then_targets[dim:])
    if sources_axis is None:
        src = [_replicate(a, mesh) for a in src]
    if targets_axis is None:
        tgt = [_replicate(a, mesh) for a in tgt]
    return _global3(src[0], tuple(src[1:]), tuple(tgt),
                    mesh=mesh, sources_axis=sources_axis, targets_axis=targets_axis,
                    iflag=iflag, eps=eps, opts=opts)


def from_local_shards(shards, mesh, axis):
    """A global array sharded along its last axis over the 1D `mesh` axis `axis`, made from
    this process's own shards without gathering: `shards` is one array (..., m) per device of
    this process in the mesh (in the mesh's device order; one array when the process has one
    device, as with ``jax.distributed.initialize(local_device_ids=[i])``). Every shard of the
    mesh must have the same m; the global shape is (..., m * mesh.shape[axis])."""
    _check_axis(mesh, axis, "axis")
    if len(mesh.axis_names) != 1:
        raise ValueError("from_local_shards: a 1D mesh (use jax.make_array_from_callback or "
                         "jax.make_array_from_single_device_arrays for others)")
    if not isinstance(shards, (list, tuple)):
        shards = [shards]
    mine = _mesh_devices(mesh, mine=True)
    if len(shards) != len(mine):
        raise ValueError(f"from_local_shards: {len(shards)} shard(s) for the {len(mine)} "
                         "device(s) of this process in the mesh")
    shapes = {tuple(np.shape(s)) for s in shards}
    if len(shapes) != 1 or not next(iter(shapes)):
        raise ValueError(f"from_local_shards: the shards must have one shape with at least one "
                         f"axis, got {sorted(shapes)}")
    shape = next(iter(shapes))
    global_shape = shape[:-1] + (shape[-1] * mesh.shape[axis],)
    sharding = NamedSharding(mesh, _last(len(shape), axis))
    arrays = [jax.device_put(s, d) for s, d in zip(shards, mine)]
    return jax.make_array_from_single_device_arrays(global_shape, sharding, arrays)
