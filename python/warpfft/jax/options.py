"""Options with jax-finufft's names (``Opts``, ``NestedOpts``), mapped onto warpfft's plan options.

``opts=`` of :func:`warpfft.jax.nufft1` / ``nufft2`` accepts ``None``, an :class:`Opts` or
:class:`NestedOpts` of this module, jax-finufft's own ``options.Opts`` / ``NestedOpts`` objects
(read by field name), or a plain ``dict`` of field names.

Every GPU name is a spelling of an option of the C library's option table (warpfft.h,
``warpfft_opt_describe``; ``warpfft.option_table()``), set through it: its defaults and bounds
are the table's, and a bad value raises ValueError (an InvalidArgumentError) with the table's
message when the call is traced, as in every other interface. What each name does here:

* ``modeord`` -> mode order (False/0: CMCL, -N/2..N/2-1; True/1: FFT order).
* ``gpu_method`` -> 0 auto, 1 points-driven (GM), 2 shared-memory subproblems (SM), 3
  output-driven spreading (OD; types 1 and 3: for type 2, as in the reference, it has no effect).
* ``deterministic`` (warpfft's own, not jax-finufft's; in this module's ``Opts``, or a dict) ->
  True: bitwise-reproducible results, forward and derivatives: the same inputs give the same
  bits on every call (types 1 and 3 spread output-driven after a stable sort, 3-4x slower
  spreading; docs/spreaders.md); ``gpu_method`` 1 or 2 (GM, SM: atomics) then give way to
  output-driven spreading for types 1 and 3 (and the type-1 derivatives of type 2).
* ``gpu_upsampfac`` -> 0 (this module's default; the reference's "auto"): the plan chooses
  sigma in [1.25, 3] with the kernel width, by predicted time for the call's M points; or any
  value in [1.25, 3]. Others (NaN too) raise ValueError (an InvalidArgumentError, also a
  RuntimeError) with the C library's message when the call is traced. jax-finufft's own
  ``Opts`` default to 2.0, which fixes sigma at 2.
* ``gpu_maxsubprobsize`` -> points per subproblem (SM); the reference's default (1024) means
  chosen per plan here.
* ``gpu_binsizex/y/z`` -> bin edge per dimension in fine-grid points (0 = automatic).
* ``gpu_kerevalmeth``, ``gpu_maxbatchsize``: accepted (checked as the reference takes them), no
  effect (warpfft evaluates its kernel one way and runs a whole batch in one pass).
* ``gpu_device_id``, ``gpu_stream``: accepted (checked), no effect: the call runs on its arrays'
  device and XLA's stream.
* CPU-library names (``nthreads``, ``fftw``, ``spread_*``, ``upsampfac``, ``debug``,
  ``showwarn``, ``chkbnds``, ``maxbatchsize``): accepted, no effect -- they configure
  jax-finufft's CPU library, which warpfft does not run (its GPU transforms read
  ``gpu_upsampfac``, not ``upsampfac``, as here).
* ``gpu_sort=False``, ``gpu_spreadinterponly=True``, non-zero ``gpu_obinsize*``, non-zero
  ``gpu_debug``, any other value warpfft cannot honour, and any unknown name raise ValueError.
"""

import dataclasses
from dataclasses import dataclass
from typing import Optional, Union

from .. import _options as _table


def _ref(spelling, kind):
    """The reference's default of a GPU option (the C library's option table), as `kind`."""
    return kind(_table.ref_default(_table.spelled(spelling)))


@dataclass(frozen=True)
class Opts:
    """jax-finufft's option names and defaults (see the module docstring for their effect): its
    CPU library's own, and the GPU ones with the reference's defaults from the option table
    (gpu_upsampfac: cuFINUFFT's 0, chosen per plan, where jax-finufft writes 2.0)."""

    modeord: bool = False
    debug: int = 0
    spread_debug: int = 0
    showwarn: bool = False
    nthreads: int = 0
    fftw: int = 64
    spread_sort: int = 2
    spread_kerevalmeth: bool = True
    spread_kerpad: bool = True
    upsampfac: float = 0.0
    spread_thread: int = 0
    maxbatchsize: int = 0
    spread_nthr_atomic: int = -1
    spread_max_sp_size: int = 0
    chkbnds: bool = True

    gpu_upsampfac: float = _ref("gpu_upsampfac", float)
    gpu_method: int = _ref("gpu_method", int)
    gpu_sort: bool = _ref("gpu_sort", bool)
    gpu_binsizex: int = _ref("gpu_binsizex", int)
    gpu_binsizey: int = _ref("gpu_binsizey", int)
    gpu_binsizez: int = _ref("gpu_binsizez", int)
    gpu_obinsizex: int = _ref("gpu_obinsizex", int)
    gpu_obinsizey: int = _ref("gpu_obinsizey", int)
    gpu_obinsizez: int = _ref("gpu_obinsizez", int)
    gpu_maxsubprobsize: int = _ref("gpu_maxsubprobsize", int)
    gpu_kerevalmeth: bool = _ref("gpu_kerevalmeth", bool)
    gpu_spreadinterponly: bool = _ref("gpu_spreadinterponly", bool)
    gpu_maxbatchsize: int = _ref("gpu_maxbatchsize", int)
    gpu_debug: int = _ref("gpu_debug", int)
    gpu_device_id: int = _ref("gpu_device_id", int)
    gpu_stream: int = _ref("gpu_stream", int)

    deterministic: bool = _ref("deterministic", bool)  # warpfft's own: bitwise-reproducible


@dataclass(frozen=True)
class NestedOpts:
    """Separate options for the forward transform and for the ones its derivatives run."""

    type1: Optional[Opts] = None
    type2: Optional[Opts] = None
    type3: Optional[Opts] = None
    forward: Optional[Opts] = None
    backward: Optional[Union[Opts, "NestedOpts"]] = None


# jax-finufft's CPU-library options: accepted, no effect (warpfft does not run that library).
_CPU = {"debug", "spread_debug", "showwarn", "nthreads", "fftw", "spread_sort",
        "spread_kerevalmeth", "spread_kerpad", "upsampfac", "spread_thread", "maxbatchsize",
        "spread_nthr_atomic", "spread_max_sp_size", "chkbnds"}
# GPU options warpfft.jax cannot honour but at their default (the option table's).
_MUST_BE_DEFAULT = {"gpu_sort": "warpfft always sorts points into bins",
                    "gpu_spreadinterponly": "warpfft.jax has no spread/interpolate-only mode",
                    "gpu_obinsizex": "warpfft sizes type-3 output bins itself",
                    "gpu_obinsizey": "warpfft sizes type-3 output bins itself",
                    "gpu_obinsizez": "warpfft sizes type-3 output bins itself",
                    "gpu_debug": "warpfft prints nothing; use warpfft.runtime_info()",
                    "real_data": "pass real_data=True to nufft1 / nufft2 (a keyword of "
                                 "theirs, not an option); type 3 and the Toeplitz operator do "
                                 "not take it (docs/real.md)"}
# Options the handler sets per call (unchecked points; the call's M): not taken here.
_PER_CALL = {"check_points", "points_hint"}
# Every other spelling of the option table (jax-finufft's gpu_* names; warpfft's own, such as
# deterministic) is set through it.
_NESTED = ("type1", "type2", "type3", "forward", "backward")


def _fields(opts):
    if isinstance(opts, dict):
        return dict(opts)
    if dataclasses.is_dataclass(opts):
        return {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}
    if hasattr(opts, "__dict__"):
        return {k: v for k, v in vars(opts).items() if not k.startswith("_")}
    raise TypeError(f"opts must be None, a dict or an Opts object, not {type(opts).__name__}")


def _is_nested(opts):
    f = _fields(opts)
    return bool(f) and set(f) <= set(_NESTED)


def _table_name(name, dim):
    """The option table's name for jax-finufft's `name` in a `dim`-D transform, or None: the
    bins go in the C plan's dimension order (x is its last dimension), those past `dim` unused."""
    if name.startswith("gpu_binsize"):
        axis = "xyz".index(name[-1])
        return None if axis >= dim else f"bin_size[{dim - 1 - axis}]"
    return _table.spelled(name)


def resolve(opts, dim):
    """One (non-nested) options object -> a hashable tuple of (option table name, value), the
    options a record is made of (_options.record, which checks each value against the table).
    None means the default; gpu_maxsubprobsize at the reference's default means chosen per plan.
    Raises ValueError naming an option warpfft.jax does not know or cannot honour."""
    if opts is None:
        return ()
    fields = _fields(opts)
    out = {}
    for name, value in sorted(fields.items()):
        if name in _CPU or value is None:
            continue
        if name in _MUST_BE_DEFAULT:
            row = _table.TABLE[_table.spelled(name)]
            if value != row.default:
                raise ValueError(f"opts.{name}={value!r} is not supported: "
                                 f"{_MUST_BE_DEFAULT[name]}")
            continue
        target = _table_name(name, dim)
        if (target is None and not name.startswith("gpu_binsize")) or target in _PER_CALL:
            known = sorted((set(_table.SPELLINGS) - _PER_CALL) | _CPU)
            raise ValueError(f"opts.{name} is not an option warpfft.jax knows (known: "
                             f"{', '.join(known)}; check_points and points_hint are set per "
                             "call)")
        if name == "gpu_maxsubprobsize" and value == _table.ref_default("max_subprob"):
            continue
        if target is not None:
            out[target] = value
    return tuple(sorted(out.items()))


def unpack(opts, nufft_type, forward):
    """The options object for the forward transform of `nufft_type` (forward=True) or for the
    transforms its derivatives run (forward=False), from a plain or nested options object."""
    if opts is None or not _is_nested(opts):
        return opts
    f = _fields(opts)
    if forward:
        if f.get("forward") is not None:
            return f["forward"]
        return f.get(f"type{nufft_type}")
    if f.get("backward") is not None:
        return f["backward"]
    return opts
