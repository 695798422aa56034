"""warpfft.jax with real_data=True (docs/real.md): type 1 real strengths -> the complex half
modes (last axis N//2 + 1), type 2 back to real values.

Without a GPU (CPU jaxlib): registration, shapes under jax.eval_shape, argument errors, the
transpose formulas against dense matrices (even and odd N: the k = N/2 column), the primitive's
own jvp/transpose/batching rules over an exact CPU lowering (check_grads, and jax.grad against a
dense jnp function's), and the XLA handler's buffer checks through test_jax_handler_abi's ctypes
call frames. On a GPU: values against dense float64 sums, f32 and f64, 1-3 D, even and odd last
N, a batch of 2; check_grads on tiny f64 problems, values and points, both types.

    WARPFFT_LIBRARY=target/debug/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_jax_real.py -q -rs
"""

import contextlib
import ctypes

import numpy as np
import pytest
from _nufft_ref import relerr
from _support import gpu_status

jax = pytest.importorskip("jax", reason="JAX is not installed: warpfft.jax tests skipped")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.interpreters import mlir  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import warpfft.jax as wj  # noqa: E402
from warpfft import _options as _table  # noqa: E402
from warpfft.jax import _common, _real  # noqa: E402
from warpfft.jax import options  # noqa: E402


def _k(n, modeord):
    """The mode numbers of an axis of n modes (CMCL order, or FFT order)."""
    if modeord:
        return np.fft.fftfreq(n) * n
    return np.arange(-(n // 2), n - n // 2, dtype=np.float64)


def _half_grid(half, modeord):
    """k vectors of the half modes (*half, dim): the last axis k = 0 .. H-1."""
    axes = [_k(n, modeord) for n in half[:-1]] + [np.arange(half[-1], dtype=np.float64)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1)


def dense(pts, half, iflag, modeord=False):
    """E[k, j] = e^{iflag i k.x_j} over the half modes (K = prod(half), M), complex128."""
    k = _half_grid(half, modeord).reshape(-1, len(half))
    x = np.stack([np.asarray(p, np.float64) for p in pts], 0)
    return np.exp(1j * np.sign(iflag) * (k @ x))


def col_weights(half, value):
    """1 on the column k_last = 0 of the half, `value` on the others, flattened like dense()."""
    w = np.full(half, value, np.float64)
    w[..., 0] = 1.0
    return w.reshape(-1)


def t1r(c, pts, n_modes, iflag=1, modeord=False):
    """Real type 1, exact: c real (..., M) -> the half modes (..., *half)."""
    half = tuple(n_modes[:-1]) + (n_modes[-1] // 2 + 1,)
    E = dense(pts, half, iflag, modeord)
    return (np.asarray(c, np.float64) @ E.T).reshape(np.shape(c)[:-1] + half)


def t2r(f, pts, iflag=-1, modeord=False):
    """Real type 2, exact: the half modes (..., *half) -> Re(sum a_k f_k e^{...}) (..., M)."""
    dim = len(pts)
    half = tuple(np.shape(f)[-dim:])
    E = dense(pts, half, iflag, modeord)
    flat = np.asarray(f).reshape(np.shape(f)[:-dim] + (-1,)) * col_weights(half, 2.0)
    return (flat @ E).real


def _data(rng, dim, M, lead=(), dtype=np.float64):
    pts = [rng.uniform(-np.pi, np.pi, lead + (M,)).astype(dtype) for _ in range(dim)]
    c = rng.standard_normal(lead + (M,)).astype(dtype)
    return pts, c


def _half_data(rng, half, lead=(), dtype=np.complex128):
    return (rng.standard_normal(lead + half) + 1j * rng.standard_normal(lead + half)).astype(dtype)


# ---- without a GPU: registration, shapes, errors --------------------------------------------


def test_registered():
    from warpfft import _lib as native
    assert native.lib.warpfft_xla_nufft  # the handler the real primitive lowers to
    assert _real.nufft_real_p.name == "warpfft_nufft_real"
    rec = _common.plan_record(None, 1, 2, real=True)
    assert _table.get(rec, "real_data") == 1
    assert _table.get(_common.plan_record(None, 1, 2), "real_data") == 0


@pytest.mark.parametrize("n_modes", [(6,), (7,), (6, 5), (4, 6, 8), (3, 5, 7)])
@pytest.mark.parametrize("prec", ["f32", "f64"])
def test_shapes(n_modes, prec):
    real, cplx = (jnp.float32, jnp.complex64) if prec == "f32" else (jnp.float64, jnp.complex128)
    dim = len(n_modes)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    pts = [jax.ShapeDtypeStruct((2, 50), real) for _ in range(dim)]
    c = jax.ShapeDtypeStruct((2, 50), real)
    f = jax.eval_shape(lambda c, *p: wj.nufft1(n_modes, c, *p, real_data=True), c, *pts)
    assert f.shape == (2,) + half and f.dtype == cplx
    fk = jax.ShapeDtypeStruct((2,) + half, cplx)
    v = jax.eval_shape(lambda f, *p: wj.nufft2(f, *p, real_data=True), fk, *pts)
    assert v.shape == (2, 50) and v.dtype == real
    # derivatives keep the arguments' shapes and dtypes
    g = jax.eval_shape(jax.grad(lambda c, x: jnp.sum(jnp.abs(
        wj.nufft1(n_modes, c, x, *pts[1:], real_data=True)) ** 2), argnums=(0, 1)), c, pts[0])
    assert [(a.shape, a.dtype) for a in g] == [((2, 50), real)] * 2
    g = jax.eval_shape(jax.grad(lambda f, x: jnp.sum(
        wj.nufft2(f, x, *pts[1:], real_data=True) ** 2), argnums=(0, 1)), fk, pts[0])
    assert (g[0].shape, g[0].dtype, g[1].shape) == ((2,) + half, cplx, (2, 50))


def test_shapes_broadcasting_and_vmap():
    c = jax.ShapeDtypeStruct((3, 4, 7), jnp.float64)
    x = jax.ShapeDtypeStruct((3, 1, 7), jnp.float64)
    f = jax.eval_shape(lambda c, x: wj.nufft1(8, c, x, real_data=True), c, x)
    assert f.shape == (3, 4, 5)
    v = jax.eval_shape(jax.vmap(lambda c, x: wj.nufft1((8, 6), c, x, x, real_data=True)),
                       jax.ShapeDtypeStruct((5, 7), jnp.float32),
                       jax.ShapeDtypeStruct((5, 7), jnp.float32))
    assert v.shape == (5, 8, 4) and v.dtype == jnp.complex64
    v = jax.eval_shape(jax.vmap(lambda f, x: wj.nufft2(f, x, real_data=True), in_axes=(0, None)),
                       jax.ShapeDtypeStruct((5, 4), jnp.complex64),
                       jax.ShapeDtypeStruct((7,), jnp.float32))
    assert v.shape == (5, 7) and v.dtype == jnp.float32


@pytest.mark.parametrize("call,exc,match", [
    (lambda x, c, f: wj.nufft1(4, c.astype(jnp.complex64), x, real_data=True), TypeError,
     "real_data=True: type 1 takes a real source"),
    (lambda x, c, f: wj.nufft2(f.real, x, real_data=True), TypeError,
     "real_data=True: type 2 takes the complex half modes"),
    (lambda x, c, f: wj.nufft1(4, c.astype(jnp.float64), x, real_data=True), TypeError,
     "points x"),
    (lambda x, c, f: wj.nufft1(4, c[:5], x, real_data=True), ValueError, "last axis"),
    (lambda x, c, f: wj.nufft1(4, c, x, real_data="yes"), TypeError, "real_data must be"),
    (lambda x, c, f: wj.nufft3(c.astype(jnp.complex64), x, x, real_data=True), ValueError,
     "real_data=True is for types 1 and 2"),
    (lambda x, c, f: wj.toeplitz(f, x, real_data=True), ValueError, "Toeplitz"),
    (lambda x, c, f: wj.Toeplitz(4, x, real_data=True), ValueError, "Toeplitz"),
    (lambda x, c, f: wj.nufft1(4, c, x, opts={"real_data": True}), ValueError,
     "pass real_data=True to nufft1"),
    (lambda x, c, f: wj.nufft1(4, c, x, real_data=True, eps=float("nan")), ValueError, "tol"),
])
def test_bad_input_raises(call, exc, match):
    x = jax.ShapeDtypeStruct((10,), jnp.float32)
    c = jax.ShapeDtypeStruct((10,), jnp.float32)
    f = jax.ShapeDtypeStruct((3,), jnp.complex64)
    with pytest.raises(exc, match=match):
        jax.eval_shape(call, x, c, f)


def test_cpu_arrays_raise_clearly():
    cpu = jax.devices("cpu")[0]
    x = jax.device_put(jnp.zeros((11,), jnp.float32), cpu)
    with jax.default_device(cpu), _exact_lowering(False):
        with pytest.raises(NotImplementedError, match="CUDA GPUs only"):
            wj.nufft1(3, x, x, real_data=True)


# ---- the transpose formulas against dense matrices (no GPU) ---------------------------------
#
# JAX transposes a linear map for the pairing <u, v> = Re(sum u v) (no conjugation; the complex
# op's transpose is a type 2 of the same sign). The real primitive's rules (_real._transpose):
# type 1^T ct = T2r(ct with the columns k_last > 0 halved), type 2^T ct = a_k T1r(ct), a_k = 2
# for k_last > 0. Even N: the column k_last = N/2 is an ordinary type-1 output, and the real
# type 2 of the transpose doubles it like the others.


def _pair(u, v):
    return np.real(np.sum(np.asarray(u) * np.asarray(v)))


@pytest.mark.parametrize("n_modes", [(6,), (7,), (5, 8), (4, 3, 6), (2, 3, 5)])
@pytest.mark.parametrize("iflag", [1, -1])
@pytest.mark.parametrize("modeord", [False, True])
def test_transposes_against_dense_matrices(n_modes, iflag, modeord):
    rng = np.random.default_rng(sum(n_modes) + 8 + 7 * iflag)
    dim, M = len(n_modes), 9
    pts, c = _data(rng, dim, M)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    g = _half_data(rng, half)
    # type 1: <T1r c, g> = <c, T1r^T g>, T1r^T g = T2r(g halved at k_last > 0), same sign
    y = t1r(c, pts, n_modes, iflag, modeord)
    gh = g * col_weights(half, 0.5).reshape(half)
    assert np.isclose(_pair(y, g), _pair(c, t2r(gh, pts, iflag, modeord)), rtol=1e-12)
    # the same with the dense matrix: T1r^T = Re(E^T .) on every column (weight 1)
    E = dense(pts, half, iflag, modeord)
    assert np.allclose(t2r(gh, pts, iflag, modeord), (g.reshape(-1) @ E).real, atol=1e-12)
    # halving only k_last in 1..ceil(N/2)-1 (i.e. not the N/2 column) is wrong for even N
    if n_modes[-1] % 2 == 0:
        wrong = gh.copy()
        wrong[..., -1] *= 2
        assert not np.isclose(_pair(y, g), _pair(c, t2r(wrong, pts, iflag, modeord)))
    # type 2: <T2r f, ct> = <f, T2r^T ct>, T2r^T ct = a_k T1r(ct), N = 2H - 1
    f = _half_data(rng, half)
    ct = rng.standard_normal(M)
    full = n_modes[:-1] + (2 * half[-1] - 1,)
    back = t1r(ct, pts, full, iflag, modeord) * col_weights(half, 2.0).reshape(half)
    assert np.isclose(_pair(t2r(f, pts, iflag, modeord), ct), _pair(f, back), rtol=1e-12)


@pytest.mark.parametrize("n_modes", [(6,), (7,), (4, 6)])
def test_transposes_match_jax_autodiff_of_dense(n_modes):
    """JAX's own vjp of dense jnp functions (its conjugation convention) gives the formulas."""
    rng = np.random.default_rng(3)
    dim, M = len(n_modes), 8
    pts, c = _data(rng, dim, M)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    E = jnp.asarray(dense(pts, half, 1))
    a = jnp.asarray(col_weights(half, 2.0))
    g = _half_data(rng, half)
    _, vjp1 = jax.vjp(lambda c: (E @ c.astype(E.dtype)).reshape(half), jnp.asarray(c))
    gh = g * col_weights(half, 0.5).reshape(half)
    np.testing.assert_allclose(vjp1(jnp.asarray(g))[0], t2r(gh, pts, 1), atol=1e-12)
    f = _half_data(rng, half)
    ct = rng.standard_normal(M)
    _, vjp2 = jax.vjp(lambda f: jnp.real((f.reshape(-1) * a) @ E), jnp.asarray(f))
    full = n_modes[:-1] + (2 * half[-1] - 1,)
    back = t1r(ct, pts, full, 1) * col_weights(half, 2.0).reshape(half)
    np.testing.assert_allclose(vjp2(jnp.asarray(ct))[0], back, atol=1e-12)


# ---- the primitive's rules over an exact CPU lowering (no GPU) -----------------------------

_EXACT = {"on": False}


def _exact_real(source, *points, nufft_type, n_modes, iflag, eps, opts):
    """nufft_real_p's canonical form as exact sums in jax.numpy (the CPU stand-in of the CUDA
    custom call): source (G, T, M) real -> (G, T, *half), or (G, T, *half) -> (G, T, M) real."""
    del eps
    dim = len(points)
    modeord = _table.get(_common.plan_record(opts, nufft_type, dim), "modeord")
    half = (tuple(n_modes[:-1]) + (n_modes[-1] // 2 + 1,)) if nufft_type == 1 else \
        tuple(source.shape[2:])
    real = points[0].dtype
    k = jnp.asarray(_half_grid(half, modeord).reshape(-1, dim), real)  # (K, dim)
    phase = sum(k[None, :, d, None] * points[d][:, None, :] for d in range(dim))  # (G, K, M)
    cdt = jnp.result_type(real, jnp.complex64)
    e = jnp.exp((1j if iflag >= 0 else -1j) * phase).astype(cdt)
    if nufft_type == 1:
        out = jnp.einsum("gtm,gkm->gtk", source.astype(cdt), e)
        return out.reshape(source.shape[:2] + half)
    a = jnp.asarray(col_weights(half, 2.0), real)
    flat = source.reshape(source.shape[:2] + (-1,)) * a
    return jnp.real(jnp.einsum("gtk,gkm->gtm", flat, e))


def _cpu_rule(ctx, *args, **params):
    if not _EXACT["on"]:
        return _common._not_on_gpu(ctx, *args, **params)
    return mlir.lower_fun(_exact_real, multiple_results=False)(ctx, *args, **params)


mlir.register_lowering(_real.nufft_real_p, _cpu_rule, platform="cpu")


@contextlib.contextmanager
def _exact_lowering(on=True):
    """While on, the real primitive lowers for the CPU to exact sums (only its arithmetic is
    replaced: shapes, broadcasting, jvp, transpose and batching are the real primitive's)."""
    old, _EXACT["on"] = _EXACT["on"], on
    try:
        yield
    finally:
        _EXACT["on"] = old


def _on_cpu(*arrays):
    cpu = jax.devices("cpu")[0]
    return [jax.device_put(jnp.asarray(a), cpu) for a in arrays]


@pytest.mark.parametrize("n_modes", [(6,), (7,), (4, 5), (3, 4, 4)])
def test_rules_check_grads_over_exact_cpu_sums(n_modes):
    rng = np.random.default_rng(11)
    dim, M = len(n_modes), 6
    pts, c = _data(rng, dim, M, lead=(2,))
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    f = _half_data(rng, half, lead=(2,))
    with jax.default_device(jax.devices("cpu")[0]), _exact_lowering():
        args = _on_cpu(c, *pts)
        y = wj.nufft1(n_modes, *args, real_data=True, eps=1e-12)
        for b in range(2):
            np.testing.assert_allclose(y[b], t1r(c[b], [p[b] for p in pts], n_modes, 1),
                                       atol=1e-10)
        check_grads(lambda c, *p: wj.nufft1(n_modes, c, *p, real_data=True, eps=1e-12), args,
                    order=1, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5)
        args2 = _on_cpu(f, *pts)
        v = wj.nufft2(*args2, real_data=True, eps=1e-12)
        for b in range(2):
            np.testing.assert_allclose(v[b], t2r(f[b], [p[b] for p in pts], -1), atol=1e-10)
        check_grads(lambda f, *p: wj.nufft2(f, *p, real_data=True, eps=1e-12), args2,
                    order=1, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("n_modes", [(8,), (5, 6)])
@pytest.mark.parametrize("modeord", [False, True])
def test_rules_grad_matches_dense_jnp(n_modes, modeord):
    """jax.grad of a real loss through the primitive equals jax.grad of the same dense jnp
    function, for source and points (points enter the phases: no finite differences)."""
    rng = np.random.default_rng(5)
    dim, M = len(n_modes), 7
    pts, c = _data(rng, dim, M)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    w = jnp.asarray(_half_data(rng, half))
    k = jnp.asarray(_half_grid(half, modeord).reshape(-1, dim))
    a = jnp.asarray(col_weights(half, 2.0))
    opts = options.Opts(modeord=modeord)

    def dense1(c, *p):
        e = jnp.exp(1j * (k @ jnp.stack(p)))
        return (e @ c.astype(e.dtype)).reshape(half)

    def dense2(f, *p):
        e = jnp.exp(-1j * (k @ jnp.stack(p)))
        return jnp.real((f.reshape(-1) * a) @ e)

    def loss1(fn):
        return lambda c, *p: jnp.sum(jnp.abs(fn(c, *p) - w) ** 2)

    def loss2(fn):
        return lambda f, *p: jnp.sum(jnp.sin(fn(f, *p)))

    f = jnp.asarray(_half_data(rng, half))
    with jax.default_device(jax.devices("cpu")[0]), _exact_lowering():
        args = _on_cpu(c, *pts)
        ours = jax.grad(loss1(lambda c, *p: wj.nufft1(n_modes, c, *p, real_data=True,
                                                      eps=1e-12, opts=opts)),
                        argnums=tuple(range(1 + dim)))(*args)
        ref = jax.grad(loss1(dense1), argnums=tuple(range(1 + dim)))(*args)
        for o, r in zip(ours, ref):
            np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-9)
        args = _on_cpu(f, *pts)
        ours = jax.grad(loss2(lambda f, *p: wj.nufft2(f, *p, real_data=True, eps=1e-12,
                                                      opts=opts)),
                        argnums=tuple(range(1 + dim)))(*args)
        ref = jax.grad(loss2(dense2), argnums=tuple(range(1 + dim)))(*args)
        for o, r in zip(ours, ref):
            np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-9)


def test_rules_vmap_matches_loop_over_exact_cpu_sums():
    rng = np.random.default_rng(2)
    pts, c = _data(rng, 2, 6, lead=(3,))
    with jax.default_device(jax.devices("cpu")[0]), _exact_lowering():
        c_, x_, y_ = _on_cpu(c, *pts)
        fn = jax.vmap(lambda c, x, y: wj.nufft1((4, 6), c, x, y, real_data=True, eps=1e-12))
        got = fn(c_, x_, y_)
        for b in range(3):
            np.testing.assert_allclose(got[b], t1r(c[b], [p[b] for p in pts], (4, 6)),
                                       atol=1e-10)
        f = jnp.asarray(_half_data(rng, (4, 4), lead=(3,)))
        got = jax.vmap(lambda f: wj.nufft2(f, x_[0], y_[0], real_data=True, eps=1e-12))(f)
        np.testing.assert_allclose(got, t2r(np.asarray(f), [p[0] for p in pts]), atol=1e-10)


# ---- the XLA handler's buffer checks (ctypes call frames; no GPU, no JAX call) ------------


def _abi():
    import test_jax_handler_abi as abi
    return abi


def _real_frame(h, nufft_type, src, out, src_dims, out_dims, G=2, M=50, real=True,
                n=(8, 6)):
    """A 2-D call frame with the options record (attribute opts, hex) of a real plan."""
    abi = _abi()
    pt = abi.F32 if src in (abi.F32, abi.C64) else abi.F64
    args = [h.buffer(src, src_dims), h.buffer(pt, [G, M]), h.buffer(pt, [G, M])]
    f = h.frame(args, [h.buffer(out, out_dims)],
                abi._attrs(nufft_type=(abi.S32, nufft_type), n1=(abi.S64, n[0]),
                           n2=(abi.S64, n[1])))
    rec = _common.plan_record(None, nufft_type, 2, real=real)
    hexs = _table.to_hex(rec).encode()
    span = abi.ByteSpan(hexs, len(hexs))
    name = abi.ByteSpan(b"opts", 4)
    size = f.attrs.size
    types = (ctypes.c_int * (size + 1))(*[f.attrs.types[i] for i in range(size)], 4)
    names = (ctypes.POINTER(abi.ByteSpan) * (size + 1))(
        *[f.attrs.names[i] for i in range(size)], ctypes.pointer(name))
    values = (ctypes.c_void_p * (size + 1))(*[f.attrs.attrs[i] for i in range(size)],
                                            ctypes.cast(ctypes.pointer(span), ctypes.c_void_p))
    h.keep += [hexs, span, name, types, names, values]
    f.attrs.size, f.attrs.types, f.attrs.names, f.attrs.attrs = size + 1, types, names, values
    return f


def _frames():
    abi = _abi()
    F32, F64, C64, C128 = abi.F32, abi.F64, abi.C64, abi.C128
    ok = [  # (G, T, N2, N1//2 + 1) half modes: n1 = 8 -> 5, n1 = 9 -> 5
        lambda h: _real_frame(h, 1, F32, C64, [2, 3, 50], [2, 3, 6, 5]),
        lambda h: _real_frame(h, 1, F64, C128, [2, 3, 50], [2, 3, 6, 5], n=(9, 6)),
        lambda h: _real_frame(h, 2, C64, F32, [2, 3, 6, 5], [2, 3, 50]),
        lambda h: _real_frame(h, 2, C128, F64, [2, 3, 6, 5], [2, 3, 50], n=(9, 6)),
    ]
    bad = [
        (lambda h: _real_frame(h, 1, C64, C64, [2, 3, 50], [2, 3, 6, 5]), "real_data type 1"),
        (lambda h: _real_frame(h, 1, F32, F32, [2, 3, 50], [2, 3, 6, 5]), "real_data type 1"),
        (lambda h: _real_frame(h, 1, F32, C128, [2, 3, 50], [2, 3, 6, 5]), "real_data type 1"),
        (lambda h: _real_frame(h, 2, C64, C64, [2, 3, 6, 5], [2, 3, 50]), "real_data type 2"),
        (lambda h: _real_frame(h, 2, F32, F32, [2, 3, 6, 5], [2, 3, 50]), "real_data type 2"),
        (lambda h: _real_frame(h, 1, F32, C64, [2, 3, 50], [2, 3, 6, 8]), "last axis halved"),
        (lambda h: _real_frame(h, 2, C64, F32, [2, 3, 6, 4], [2, 3, 50]), "last axis halved"),
        (lambda h: _real_frame(h, 2, C64, F32, [2, 3, 6, 5], [2, 3, 49]), "shapes do not match"),
        # without real_data, a real source is refused as before
        (lambda h: _real_frame(h, 1, F32, C64, [2, 3, 50], [2, 3, 6, 8], real=False),
         "complex64 or complex128"),
    ]
    return ok, bad


@pytest.mark.parametrize("i", range(9))
def test_handler_refuses_wrong_real_buffers(i):
    build, match = _frames()[1][i]
    h = _abi().Harness()
    err = _abi().handler(ctypes.byref(build(h)))
    assert err == 0x1234
    assert len(h.errors) == 1 and match in h.errors[0][1], h.errors
    assert h.errors[0][0] == 3 and h.stream_requests == 0  # INVALID_ARGUMENT, nothing asked


def test_handler_refuses_real_type3():
    abi = _abi()
    h = abi.Harness()
    f = abi._type3_2d(h)
    rec = _table.to_hex(_common.plan_record(None, 1, 2, real=True)).encode()
    span, name = abi.ByteSpan(rec, len(rec)), abi.ByteSpan(b"opts", 4)
    size = f.attrs.size
    types = (ctypes.c_int * (size + 1))(*[f.attrs.types[i] for i in range(size)], 4)
    names = (ctypes.POINTER(abi.ByteSpan) * (size + 1))(
        *[f.attrs.names[i] for i in range(size)], ctypes.pointer(name))
    values = (ctypes.c_void_p * (size + 1))(*[f.attrs.attrs[i] for i in range(size)],
                                            ctypes.cast(ctypes.pointer(span), ctypes.c_void_p))
    f.attrs.size, f.attrs.types, f.attrs.names, f.attrs.attrs = size + 1, types, names, values
    assert abi.handler(ctypes.byref(f)) == 0x1234
    assert h.errors[0][0] == 12 and "types 1 and 2 only" in h.errors[0][1], h.errors
    assert h.stream_requests == 0


@pytest.mark.parametrize("i", range(4))
def test_handler_takes_real_buffers_then_creates_a_plan(i):
    if gpu_status() is None:  # the fake device pointers must never reach a real GPU
        pytest.skip("a GPU is present: fake buffers cannot be run there; the GPU tests cover it")
    build = _frames()[0][i]
    h = _abi().Harness()
    err = _abi().handler(ctypes.byref(build(h)))
    assert h.stream_requests == 1  # decoding passed
    assert err == 0x1234 and "warpfft_plan_create" in h.errors[0][1], h.errors
    assert "WARPFFT_ERR_NO_DRIVER" in h.errors[0][1]


# ---- on a GPU ---------------------------------------------------------------------------------


def _jax_gpu():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def require_jax_gpu():
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    if not _jax_gpu():
        pytest.skip("no GPU: JAX sees no CUDA device")


@pytest.mark.gpu
@pytest.mark.parametrize("n_modes", [(16,), (17,), (12, 10), (12, 9), (6, 8, 10), (6, 7, 9)])
@pytest.mark.parametrize("prec", ["f32", "f64"])
@pytest.mark.parametrize("modeord", [False, True])
def test_values_against_dense_sums(n_modes, prec, modeord):
    require_jax_gpu()
    rng = np.random.default_rng(len(n_modes) * 100 + n_modes[-1])
    dim, M = len(n_modes), 300
    dt = np.float32 if prec == "f32" else np.float64
    cdt = np.complex64 if prec == "f32" else np.complex128
    eps, tol = (1e-5, 1e-4) if prec == "f32" else (1e-11, 1e-9)
    opts = options.Opts(modeord=modeord)
    pts, c = _data(rng, dim, M, lead=(2,), dtype=dt)  # a batch of 2, one point set each
    y = wj.nufft1(n_modes, c, *pts, eps=eps, opts=opts, real_data=True)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    assert y.shape == (2,) + half and y.dtype == cdt
    for b in range(2):
        want = t1r(c[b], [p[b] for p in pts], n_modes, 1, modeord)
        assert relerr(np.asarray(y[b]), want) < tol
    f = _half_data(rng, half, lead=(2,), dtype=cdt)
    v = wj.nufft2(f, *pts, eps=eps, opts=opts, real_data=True)
    assert v.shape == (2, M) and v.dtype == dt
    for b in range(2):
        want = t2r(f[b], [p[b] for p in pts], -1, modeord)
        assert relerr(np.asarray(v[b]), want) < tol
    # shared points, a stacked batch of 2 (one plan of ntransf 2), and jit
    y2 = jax.jit(lambda c, *p: wj.nufft1(n_modes, c, *p, eps=eps, opts=opts,
                                         real_data=True))(c, *[p[0] for p in pts])
    for b in range(2):
        want = t1r(c[b], [p[0] for p in pts], n_modes, 1, modeord)
        assert relerr(np.asarray(y2[b]), want) < tol


@pytest.mark.gpu
@pytest.mark.parametrize("n_modes", [(6,), (7,), (4, 6), (4, 5), (4, 3, 6)])
def test_gradients_check_grads_f64(n_modes):
    require_jax_gpu()
    rng = np.random.default_rng(21)
    dim, M = len(n_modes), 12
    pts, c = _data(rng, dim, M, lead=(2,))
    args = [jnp.asarray(a) for a in (c, *pts)]
    check_grads(lambda c, *p: wj.nufft1(n_modes, c, *p, real_data=True, eps=1e-12), args,
                order=1, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5)
    half = n_modes[:-1] + (n_modes[-1] // 2 + 1,)
    args = [jnp.asarray(_half_data(rng, half, lead=(2,)))] + args[1:]
    check_grads(lambda f, *p: wj.nufft2(f, *p, real_data=True, eps=1e-12), args,
                order=1, modes=("fwd", "rev"), eps=1e-6, atol=1e-5, rtol=1e-5)


@pytest.mark.gpu
def test_vmap_and_jit_do_not_replan():
    require_jax_gpu()
    rng = np.random.default_rng(4)
    pts, c = _data(rng, 2, 200, lead=(3,))
    fn = jax.jit(jax.vmap(lambda c, x, y: wj.nufft1((10, 8), c, x, y, real_data=True,
                                                    eps=1e-10)))
    got = fn(c, *pts)
    before = wj.plans_created()
    got = fn(c, *pts)
    assert wj.plans_created() == before
    for b in range(3):
        assert relerr(np.asarray(got[b]), t1r(c[b], [p[b] for p in pts], (10, 8))) < 1e-8
