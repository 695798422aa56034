"""The reference's (cufinufft's) Python conventions over the C ABI plan.

Shapes: a mode array has shape ``n_modes = (N1, N2, N3)`` in numpy C order, ``x`` pairs with
axis 0 (``N1``), ``y`` with axis 1, ``z`` with axis 2; a batch axis comes first:
``(n_trans, N1, N2, N3)`` and ``(n_trans, M)``. The C ABI keeps dimension 1 fastest, so the
mode counts and the coordinates are handed to it reversed -- ``(N3, N2, N1)`` and
``(z, y, x)`` -- which is the same memory with no copy or transpose of any data.

Type 3 (as the reference): ``Plan(3, dim, ...)`` -- ``n_modes`` is the dimension, an integer;
``setpts(x, y, z, s, t, u)`` gives M sources and K targets; ``execute(c)`` maps ``([n_trans,] M)``
strengths to ``([n_trans,] K)`` values f[k] = sum_j c[j] exp(isign i s_k . x_j). There is no mode
array, so the axis order changes no result; sources and targets are handed to the C ABI
reversed all the same (``(z, y, x)`` and ``(u, t, s)``), so that ``plan.info``'s per-dimension
tuples (``x_center``, ``s_half``, ``gamma``, ...) come back in the same Python order (x first)
as for types 1 and 2.

Options (the reference's names, as keyword arguments of Plan and of the one-call functions):

==========================  ==================================================================
``modeord``                 honoured: 0 CMCL order (default), 1 FFT order
``upsampfac``               honoured: 0 (default; the reference's "auto") -- the plan
                            chooses sigma in [1.25, 3] with the kernel width, by predicted
                            time (``plan.info``: upsampfac, width, predicted_ms); or any value
                            in [1.25, 3]. Others (NaN too) raise InvalidArgumentError (a
                            RuntimeError, as the reference's failed plan) with the C message.
``gpu_method``              honoured: 0 auto, 1 GM, 2 SM, 3 OD (output-driven spreading: no
                            atomics; types 1 and 3); 4 (block gather, an output-driven
                            shared-memory method): SM. For type 2 (where the reference says
                            they have no effect) 2-4 mean auto.
``gpu_binsizex/y/z``        honoured: spreading bin edge of the C ABI's dimension 1/2/3
                            (x/y/z in the reference's C order, as there); <= 0 automatic
``gpu_maxsubprobsize``      honoured: points per SM subproblem (0 automatic)
``gpu_device_id``           honoured: the device ordinal
``gpu_stream``              honoured: a CUDA stream (int handle, ctypes pointer, cupy/torch
                            stream object or anything with ``.ptr``/``.cuda_stream``)
``gpu_sort``                accepted (any int), ignored: points are always sorted into bins;
                            the result does not depend on it
``gpu_kerevalmeth``         accepted (0/1), ignored: one kernel evaluation; same result
``gpu_maxbatchsize``        accepted (>= 0), ignored: the batch is done at once; same result
``gpu_obinsizex/y/z``       accepted, ignored (block-gather method tuning); same result
``gpu_np``                  accepted, ignored (OD method tuning); same result
``debug``                   accepted, ignored (nothing is printed)
``gpu_spreadinterponly``    honoured: 1 spreads (type 1) or interpolates (type 2) only, as the
                            reference defines it: no FFT, no deconvolution; the grid is the
                            mode array itself (N_d >= 2 kernel widths; index i at coordinate
                            2 pi i / N, modeord has no effect), the kernel the one eps and
                            upsampfac choose for a NUFFT (upsampfac 0: sigma 2's;
                            ``plan.info``: width, beta); GM
``check_points``            warpfft's own (not the reference's): True (default) -- setpts
                            waits for the binning and raises InvalidPointsError
                            (WARPFFT_ERR_BAD_POINTS) for a NaN or infinite coordinate, as the
                            reference does; False -- setpts does not wait (no host
                            synchronisation: faster when points change every call); a bad
                            coordinate then makes every output of execute NaN, and
                            ``plan.setpts_check()`` raises the error when called. Type 3
                            always checks.
``points_hint``             warpfft's own (not the reference's): the expected number of points
                            per setpts (types 1 and 2), which the choice of upsampfac and
                            width (upsampfac 0) weighs spreading against the FFT with; 0
                            (default): one point per mode. A hint: any M may be set. The
                            one-call functions pass M rounded to a power of two.
``deterministic``           warpfft's own (not the reference's): True -- bitwise-reproducible
                            results: the same inputs give the same bits on every execute, of
                            every plan made with the same options, on any stream (types 1, 2,
                            3). Types 1 and 3 then spread output-driven (method OD; gpu_method
                            must be 0 or 3) after a stable sort of the points; 3-4x slower
                            spreading on an H100 (docs/spreaders.md). Default False.
``real_data``               warpfft's own (not the reference's; docs/real.md): True -- real
                            strengths (float32 for complex64, float64 for complex128) and the
                            half modes: the last axis (the C ABI's dimension 1, paired with
                            the last coordinate) N//2 + 1 long, k = 0 .. N//2, as
                            numpy.fft.rfftn halves it; type 1 real data -> complex half
                            modes, type 2 complex half modes -> real values. Types 1 and 2
                            only (type 3 and gpu_spreadinterponly raise UnsupportedError).
                            Default False.
==========================  ==================================================================

Any other name raises InvalidArgumentError (also a TypeError, as in the reference). Values are
taken as the reference's option table (a ctypes struct) takes them: integers, bools (False is
0), numpy scalars; a float upsampfac. Each is set through the C library's option table
(warpfft._options; ``warpfft.option_table()``), whose defaults and bounds these are: a value
out of range (or past its field's type: nothing wraps) raises its message, the same message C,
Rust, JAX and PyTorch give.

The reference's private names that packages built on it use are here too: ``Plan._plan``,
``_setpts``, ``_exec_plan``, ``_destroy_plan`` (raw pointers: _pointer_api.py), ``_opts`` (a
NufftOpts: _nufft_opts.py), ``_references``, ``_nj``, ``_nk``, ``_type``, ``_dim``, ``_dtype``,
``_real_dtype``, ``_n_modes``, ``_n_trans``, ``_eps``, ``_isign``; and the reference's
``cufinufft._compat`` array helpers (``get_array_ptr``, ``array_empty_like``, ...: see
_array_helpers.py) are importable from this module, so ``import warpfft as cufinufft`` finds
them as ``cufinufft._compat.*``. ``warpfft.install_as_cufinufft()`` installs the package
``warpfft.cufinufft`` as ``cufinufft`` with the reference's submodules.

This module is the Plan class; the checks and conversions of its arguments are in _args.py,
plan_params and plan_params3 (what a plan would choose, no GPU) in _info.py. Their public names
are importable from here too.
"""

import math

import numpy as np

from . import _cache, _lib
from ._array_helpers import *  # noqa: F401,F403  (the reference's _compat helpers: their __all__)
from ._args import (  # noqa: F401  (OPTION_NAMES, stream_value: importable from here, as before)
    OPTION_NAMES,
    normalize_options,
    real_data_of,
    shape_of,
    stream_value,
)
from ._arrays import empty_like, finish, wrap
from ._errors import ERR_NO_POINTS, WarpfftError, invalid
from ._handle import DeviceHandle
from ._info import plan_params, plan_params3  # noqa: F401  (importable from here, as before)
from ._plan import CPlan
from ._points import check_sets, coords
from ._pointer_api import PointerCalls


class Plan(DeviceHandle, PointerCalls):
    """A NUFFT plan, with the reference's (cufinufft's) interface:

    ``Plan(nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", **kwargs)``

    * ``nufft_type``: 1 (points -> modes), 2 (modes -> points) or 3 (points -> points).
    * ``n_modes``: ``N1``, ``(N1, N2)`` or ``(N1, N2, N3)``: the mode array's shape; ``N1``
      goes with ``x``. Type 3: the dimension (1, 2 or 3), an integer.
    * ``isign``: sign of the exponent; default +1 for types 1 and 3, -1 for type 2.
    * ``dtype``: "complex64" (points float32) or "complex128" (points float64).
    * ``**kwargs``: the reference's option names (see ``warpfft._compat``'s table): honoured,
      or accepted and ignored where they change no result; unknown names raise. Four are
      warpfft's own: ``check_points``, ``points_hint`` (the M you will set, for the
      plan's choice of upsampfac and kernel width; default: one point per mode),
      ``deterministic`` (bitwise-reproducible results) and ``real_data`` (real strengths and
      the half modes, the last axis N//2 + 1: docs/real.md).

    ``setpts(x, y=None, z=None)`` then ``execute(data, out=None)``. Arrays: numpy (copied to the
    device; ``execute`` returns numpy and waits), or device arrays -- cupy, torch, jax, numba,
    anything with ``__cuda_array_interface__`` or ``__dlpack__`` -- used in place (zero-copy);
    ``execute`` then returns an array of the input's kind without waiting, its work queued on
    the plan's stream (``gpu_stream``) after the producers' streams (event waits, no host
    wait), and the producers' streams wait for it in turn. Arrays the queued work reads or
    writes are kept referenced by the plan until an event shows the work is done.
    Shapes: data ``(M,)``/``(n_trans, M)`` and modes ``n_modes``/``(n_trans, *n_modes)``.

    Type 3: ``setpts(x[, y[, z]], s=s[, t=t[, u=u]])`` (M sources, K targets; K may differ
    from M; the C library copies them, the plan keeps no reference) and ``execute(c)``:
    ``([n_trans,] M)`` -> ``([n_trans,] K)``, f[k] = sum_j c[j] exp(isign i s_k . x_j).

    Batched points (warpfft's extension): ``setpts`` also takes ``(n_sets, M)`` coordinates,
    a point set per transform or group of transforms (``plan.n_sets``; docs/batched-points.md).

    One thread at a time per plan is what the C library allows: calls on one Plan are
    serialised by a lock, so sharing one between threads is safe (not concurrent).

    The reference's private ``_plan``, ``_setpts``, ``_exec_plan``, ``_destroy_plan`` (raw
    device pointers, as mri-nufft uses them) and ``_opts`` are here too (``warpfft._compat``).
    """

    _noun = "plan"
    _pooled = False  # True for Plan._from_pool's: the C plan comes from (and goes back to) the pool

    @classmethod
    def _from_pool(cls, *args, **kwargs):
        """A Plan (same arguments) whose C plan is an idle one of the C library's live-plan pool
        (or a new one) and goes back to it at close(), for the one-call functions (_simple.py):
        no wait there, the arrays its queued work reads are kept alive by _cache until done."""
        plan = cls.__new__(cls)
        plan._pooled = True
        plan.__init__(*args, **kwargs)
        return plan

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64",
                 **kwargs):
        self._c = None
        self._points = []  # arrays the C plan points at now
        # the reference's private attributes that packages built on it read or set
        self._references = []  # theirs to fill (this plan keeps its own references)
        self._nj = self._nk = None  # M and type 3's K of the last setpts
        self._kwargs = kwargs  # the options as given (for _opts)
        nufft_type = _lib.as_int("nufft_type", nufft_type, -_lib.INT32_MAX, _lib.INT32_MAX)
        self._init_handle(nufft_type, n_modes, n_trans, eps, isign, dtype)
        self._type = nufft_type
        opts, self._key = normalize_options(nufft_type, kwargs)
        self._device, self._stream, self._modeord = opts.device, opts.stream, opts.modeord
        # real_data (docs/real.md): real strengths, the half modes along the last axis (the C
        # ABI's dimension 1); type 3 and spread/interp only are refused by the C library
        self._real = bool(real_data_of(opts))
        self._c = CPlan(nufft_type, self._n_modes[::-1], self._isign, self._n_trans, self._eps,
                        self._precision, opts, pooled=self._pooled)
        self._register()  # for the reference's module-level calls on a handle

    # ---- the reference's properties ----

    type = property(lambda self: self._type)  # the others: DeviceHandle's

    @property
    def _opts(self):
        """The reference's options struct (a NufftOpts) with this plan's options: what was
        asked for, for code that reads it; changing it changes nothing (as in the reference)."""
        from ._nufft_opts import opts_struct

        return opts_struct(self._kwargs)

    @property
    def M(self):
        """Number of points set by the last successful setpts (None before, or after one that
        failed)."""
        return None if self._c is None else self._c.M

    @property
    def n_sets(self):
        """Point sets of the last successful setpts: 1 for vectors (every transform takes the
        same points), n_sets for ``(n_sets, M)`` batched points; None before (warpfft's)."""
        return None if self._c is None else self._c.n_sets

    @property
    def K(self):
        """Type 3: number of targets set by the last successful setpts (None before, after
        one that failed, and for types 1 and 2)."""
        return None if self._c is None else self._c.K

    @property
    def real_data(self):
        """Whether the plan is on real-valued data (option real_data; docs/real.md): real
        strengths, and the half modes (the last axis N//2 + 1) as the mode array."""
        return self._real

    @property
    def _modes_core(self):
        """The mode array's shape without the batch axis: n_modes, or with real_data the half
        modes -- the last axis (the C ABI's dimension 1, the fastest) N//2 + 1, as
        numpy.fft.rfftn halves it."""
        if not self._real:
            return self._n_modes
        return self._n_modes[:-1] + (self._n_modes[-1] // 2 + 1,)

    @property
    def fk_shape(self):
        """Shape of the mode array: ([n_trans,] N1[, N2[, N3]]); with real_data the half
        modes, the last axis N//2 + 1; type 3: of the values at the targets, ([n_trans,] K)."""
        b = (self._n_trans,) if self._n_trans > 1 else ()
        if self._type == 3:
            if self.K is None:
                raise WarpfftError("setpts has not been called", ERR_NO_POINTS,
                                   "WARPFFT_ERR_NO_POINTS")
            return b + (self.K,)
        return b + self._modes_core

    @property
    def c_shape(self):
        """Shape of the strengths/values: ([n_trans,] M)."""
        if self.M is None:
            raise WarpfftError("setpts has not been called", ERR_NO_POINTS, "WARPFFT_ERR_NO_POINTS")
        return ((self._n_trans,) if self._n_trans > 1 else ()) + (self.M,)

    # ---- device bookkeeping ----

    def _is_closed(self):
        return self._c is None or self._c.closed

    def _live(self):
        if self._c is None or self._c.closed:
            raise invalid("the plan is closed")
        return self._c

    # ---- the verbs ----

    def setpts(self, x, y=None, z=None, s=None, t=None, u=None):
        """Sets the M non-uniform points: x (and y for 2D, z for 3D), 1-D arrays of the plan's
        real dtype (float32 for complex64). numpy arrays are copied to the device; device
        arrays are used in place and must stay unchanged until the next setpts or close (the
        plan keeps a reference). Type 3: x, y, z are the M sources and ``s, t, u`` the K
        target frequencies (as many as the dimension needs); the C library copies both, so
        the plan keeps no reference to them once their upload is done.

        A NaN or infinite coordinate raises InvalidArgumentError (WARPFFT_ERR_BAD_POINTS)
        here, by default; with ``check_points=False`` setpts does not wait for the GPU, and
        such a point set makes execute's outputs NaN and ``setpts_check()`` raise instead
        (type 3 always raises here).

        Batched points (warpfft's extension, not the reference's; docs/batched-points.md):
        each coordinate may be an ``(n_sets, M)`` array instead, n_sets point sets of M points
        (n_sets dividing n_trans), set s used by transforms ``s * n_trans / n_sets`` up to the
        next set's; ``n_sets == n_trans`` gives every transform its own points. Type 3: the
        targets then have shape ``(n_sets, K)``. ``execute`` takes and returns the usual
        ``(n_trans, M)`` / ``(n_trans, *n_modes)`` arrays; ``plan.n_sets`` says how many sets
        are set (1 for vectors)."""
        with self._lock:
            c = self._live()
            if self._type != 3 and any(v is not None for v in (s, t, u)):
                raise invalid("s, t, u are the target frequencies of a type 3 plan; this is a "
                              f"type {self._type} plan")
            arrs, n_sets, M = coords((x, y, z), "xyz", self._dim, self._type,
                                     self._real_dtype, self._stream)
            check_sets(n_sets, self._n_trans)
            targets, K = [], None
            if self._type == 3:
                targets, t_sets, K = coords((s, t, u), "stu", self._dim, 3, self._real_dtype,
                                            self._stream)
                if t_sets != n_sets:
                    raise invalid("batched points: the sources hold "
                                  f"{'one shared set' if n_sets is None else n_sets} and the "
                                  f"targets {'one shared set' if t_sets is None else t_sets}; "
                                  "type 3 takes (n_sets, M) sources with (n_sets, K) targets")
            n_sets = n_sets or 1
            ptrs, keep, _ = self._device_inputs(arrs + targets)
            old, self._points = self._points, []
            self._retire(old)
            if self._type == 3:
                # The C library copies sources and targets before it returns: nothing to pin
                # beyond the work queued so far (retired: released once an event says done).
                # Reversed as for types 1 and 2 (the result does not depend on it).
                d = self._dim
                try:
                    c.setpts3(M, ptrs[:d][::-1], K, ptrs[d:][::-1], n_sets)
                finally:
                    self._retire(keep)
                self._nj, self._nk = M, K
                return self
            try:
                # Reversed: the C ABI's dimension 1 is the last Python axis.
                c.setpts(M, *ptrs[::-1], n_sets=n_sets)
            finally:
                self._points = keep  # the C plan may point at these now, even on failure
            self._nj = M
            return self

    def setpts_check(self):
        """Waits for the plan's stream and raises InvalidArgumentError (WARPFFT_ERR_BAD_POINTS)
        if the last setpts held a NaN or infinite coordinate. Only a ``check_points=False``
        plan can get that far with one (its executes write NaN); for the others, and when
        every coordinate was finite, it returns None. Before a successful setpts: the
        NO_POINTS error."""
        with self._lock:
            c = self._live()
            if c.M is None:
                raise WarpfftError("setpts_check before a successful setpts", ERR_NO_POINTS,
                                   "WARPFFT_ERR_NO_POINTS")
            c.setpts_check()

    def _shapes(self, data_shape):
        """(batch shape, required output core shape) for an input of `data_shape`."""
        if self._type == 1:
            core_in, core_out = (self.M,), self._modes_core
        elif self._type == 3:
            core_in, core_out = (self.M,), (self.K,)
        else:
            core_in, core_out = self._modes_core, (self.M,)
        k = len(core_in)
        batch = tuple(data_shape[:-k]) if len(data_shape) >= k else None
        if (batch is None or tuple(data_shape[-k:]) != core_in
                or math.prod(batch) != self._n_trans):
            want = core_in if self._n_trans == 1 else (self._n_trans,) + core_in
            half = " (real_data: the half modes, last axis N//2 + 1)" if (
                self._real and self._type == 2) else ""
            raise invalid(f"Argument `data` must be of shape {want}{half} (got "
                          f"{tuple(data_shape)})")
        return batch, core_out

    def _io_dtypes(self):
        """The dtypes of (data, out): the plan's complex dtype, or with real_data its real dtype
        on the strengths' side (type 1's data, type 2's out)."""
        if not self._real:
            return self._dtype, self._dtype
        if self._type == 1:
            return self._real_dtype, self._dtype
        return self._dtype, self._real_dtype

    def execute(self, data, out=None):
        """Runs the transform(s): type 1 data = strengths ``([n_trans,] M)`` -> modes
        ``([n_trans,] *n_modes)``; type 2 the reverse; type 3 strengths ``([n_trans,] M)``
        -> values at the targets ``([n_trans,] K)``. Returns ``out`` if given (which must have
        exactly that shape), else a new array of data's kind.

        With ``real_data=True`` (docs/real.md) the strengths are real (float32 for a complex64
        plan, float64 for complex128) and the modes are the half ``fk_shape``: type 1 real
        data -> complex half modes, type 2 complex half modes -> real values."""
        with self._lock:
            c = self._live()
            if c.M is None:
                raise WarpfftError("execute before setpts", ERR_NO_POINTS,
                                   "WARPFFT_ERR_NO_POINTS")
            din, dout = self._io_dtypes()
            d = wrap(data, "data", din, stream=self._stream)
            o = wrap(out, "out", dout, output=True, stream=self._stream)
            batch, core_out = self._shapes(d.shape)
            out_shape = batch + core_out
            if o is not None and o.shape != out_shape:
                raise invalid(f"Argument `out` must be of shape {out_shape} (got {o.shape})")
            if d.is_device:
                return self._execute_device(c, d, o, out, out_shape)
            if o is not None and o.is_device:
                raise invalid("data is a host array: out must be a host (numpy) array or None")
            return self._execute_host(c, d, o, out, out_shape)

    def _execute_device(self, c, d, o, out, out_shape):
        def run(pin, pout):
            c.execute(*((pin, pout) if self._type != 2 else (pout, pin)))

        return self._device_call(d, o, out, out_shape, run, self._io_dtypes()[1])

    def _execute_host(self, c, d, o, out, out_shape):
        in_dt, out_dt = self._io_dtypes()
        made = o is None
        if made:
            out = empty_like(d, out_shape, out_dt, self._device)
            o = wrap(out, "out", out_dt, output=True)
        din = self._buffer("in", d.size, in_dt)
        dout = self._buffer("out", o.size, out_dt)
        din.copy_from_host(d.host)
        self._uploaded()
        cp, fp = (din.ptr, dout.ptr) if self._type != 2 else (dout.ptr, din.ptr)
        c.execute(cp, fp)
        c.sync()
        dout.get(o.host.reshape(-1))
        return finish(d, out) if made else out

    # ---- introspection ----

    @property
    def info(self):
        """What the plan chose (warpfft_plan_get_info) as a dict; per-dimension tuples in the
        Python order (axis 0 first)."""
        return self._live().info()

    @property
    def workspace_bytes(self):
        """Device bytes the plan holds now."""
        return self._live().workspace_bytes()

    # ---- lifetime ----

    def release_points(self):
        """Forget the points (the cache calls this so that a cached plan pins no user array):
        the arrays stay referenced only until the queued work that uses them is done."""
        with self._lock:
            if self._c is not None and not self._c.closed:
                old, self._points = self._points, []
                self._retire(old)
                self._c.M = self._c.K = self._c.n_sets = None

    def close(self):
        """Waits for the plan's stream, destroys the plan and frees what it allocated
        (idempotent). Raises the status of failed asynchronous work or of the destroy.
        A pooled plan (_from_pool) goes back to the pool instead, without waiting: the arrays
        its queued work reads stay referenced (by _cache) until that work is done."""
        with self._lock:
            c = self._c
            try:
                if c is not None and self._pooled and not c.closed:
                    old, self._points = self._points, []
                    try:
                        self._retire(old)  # the plan's points: queued work may still read them
                    finally:
                        c.destroy()
                elif c is not None:
                    c.destroy(sync=True)
            finally:
                if self._pooled:
                    _cache.retire(self._device, self._pending)
                    self._pending = []
                self._drop_device_work()
                self._points = []

    def __repr__(self):
        state = "closed" if self._c is None or self._c.closed else f"M={self.M}"
        if self._type == 3 and state != "closed":
            state += f", K={self.K}"
        modes = self._dim if self._type == 3 else self._n_modes
        real = ", real_data=True" if self._real else ""
        return (f"Plan(nufft_type={self._type}, n_modes={modes}{real}, "
                f"n_trans={self._n_trans}, eps={self._eps:g}, isign={self._isign:+d}, "
                f"dtype={self._dtype.name!r}, {state})")
