"""Options with jax-finufft's names (``Opts``, ``NestedOpts``), mapped onto warpfft's plan options.

``opts=`` of :func:`warpfft.jax.nufft1` / ``nufft2`` accepts ``None``, an :class:`Opts` or
:class:`NestedOpts` of this module, jax-finufft's own ``options.Opts`` / ``NestedOpts`` objects
(read by field name), or a plain ``dict`` of field names.

What each name does here:

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
* ``gpu_maxsubprobsize`` -> points per subproblem (SM).
* ``gpu_binsizex/y/z`` -> bin edge per dimension in fine-grid points (0 = automatic).
* ``gpu_kerevalmeth``, ``gpu_maxbatchsize``: accepted, no effect (warpfft evaluates its kernel
  one way and runs a whole batch in one pass).
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


@dataclass(frozen=True)
class Opts:
    """jax-finufft's option names and defaults (see the module docstring for their effect)."""

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

    gpu_upsampfac: float = 0.0  # jax-finufft's is 2.0; 0: chosen per plan (warpfft's default)
    gpu_method: int = 0
    gpu_sort: bool = True
    gpu_binsizex: int = 0
    gpu_binsizey: int = 0
    gpu_binsizez: int = 0
    gpu_obinsizex: int = 0
    gpu_obinsizey: int = 0
    gpu_obinsizez: int = 0
    gpu_maxsubprobsize: int = 1024
    gpu_kerevalmeth: bool = True
    gpu_spreadinterponly: bool = False
    gpu_maxbatchsize: int = 0
    gpu_debug: int = 0

    deterministic: bool = False  # warpfft's own: bitwise-reproducible results


@dataclass(frozen=True)
class NestedOpts:
    """Separate options for the forward transform and for the ones its derivatives run."""

    type1: Optional[Opts] = None
    type2: Optional[Opts] = None
    type3: Optional[Opts] = None
    forward: Optional[Opts] = None
    backward: Optional[Union[Opts, "NestedOpts"]] = None


_IGNORED = {"debug", "spread_debug", "showwarn", "nthreads", "fftw", "spread_sort",
            "spread_kerevalmeth", "spread_kerpad", "upsampfac", "spread_thread", "maxbatchsize",
            "spread_nthr_atomic", "spread_max_sp_size", "chkbnds", "gpu_kerevalmeth",
            "gpu_maxbatchsize", "gpu_device_id", "gpu_stream"}
_USED = {"modeord", "gpu_method", "gpu_upsampfac", "gpu_maxsubprobsize", "gpu_binsizex",
         "gpu_binsizey", "gpu_binsizez", "deterministic"}
_MUST_BE = {"gpu_sort": (True, "warpfft always sorts points into bins"),
            "gpu_spreadinterponly": (False, "warpfft has no spread/interpolate-only mode"),
            "gpu_obinsizex": (0, "warpfft sizes type-3 output bins itself"),
            "gpu_obinsizey": (0, "warpfft sizes type-3 output bins itself"),
            "gpu_obinsizez": (0, "warpfft sizes type-3 output bins itself"),
            "gpu_debug": (0, "warpfft prints nothing; use warpfft.runtime_info()")}
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


def resolve(opts, dim):
    """One (non-nested) options object -> a hashable tuple of warpfft plan keywords (bins in the
    C plan's dimension order). Raises ValueError naming an unsupported option."""
    if opts is None:
        return ()
    fields = _fields(opts)
    out = {}
    for name, value in sorted(fields.items()):
        if name in _IGNORED:
            continue
        if name in _MUST_BE:
            want, why = _MUST_BE[name]
            if value is not None and value != want:
                raise ValueError(f"opts.{name}={value!r} is not supported: {why}")
            continue
        if name not in _USED:
            raise ValueError(f"opts.{name} is not an option warpfft.jax knows "
                             f"(known: {', '.join(sorted(_USED | set(_MUST_BE) | _IGNORED))})")
    modeord = int(bool(fields.get("modeord", False)))
    if modeord:
        out["modeord"] = 1
    method = int(fields.get("gpu_method", 0) or 0)
    if method not in (0, 1, 2, 3):
        raise ValueError(f"opts.gpu_method={method!r}: 0 (auto), 1 (GM), 2 (SM) or 3 (OD)")
    if method:
        out["method"] = method
    det = fields.get("deterministic", False)
    if det not in (False, True, 0, 1, None):
        raise ValueError(f"opts.deterministic={det!r}: True or False")
    if det:
        out["deterministic"] = 1
    ups = fields.get("gpu_upsampfac", 0.0)
    try:
        ups = 0.0 if ups is None else float(ups)
    except (TypeError, ValueError):
        raise ValueError(f"opts.gpu_upsampfac={ups!r} must be a real number") from None
    if ups != 0.0:  # NaN too: the C library refuses it (and any value outside [1.25, 3])
        out["upsampfac"] = ups
    maxsub = int(fields.get("gpu_maxsubprobsize", 1024) or 0)
    if maxsub < 0:
        raise ValueError(f"opts.gpu_maxsubprobsize={maxsub!r} must be >= 0")
    if maxsub and maxsub != 1024:
        out["max_subprob"] = maxsub
    bins = [int(fields.get(n, 0) or 0) for n in ("gpu_binsizex", "gpu_binsizey", "gpu_binsizez")]
    if any(b < 0 for b in bins):
        raise ValueError(f"opts.gpu_binsize* must be >= 0, got {bins}")
    bins = bins[:dim][::-1] + [0] * (3 - dim)
    if any(bins):
        out["bin_size"] = tuple(bins)
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
