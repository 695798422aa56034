"""warpfft.jax's Toeplitz operator on XLA:CPU, with exact stand-ins of its primitives (run by
test_toeplitz.py in a subprocess: the registrations below change this process's JAX).

The spectrum, apply and NUFFT primitives get CPU lowerings that compute in jnp exactly what the
C handlers define (the spectrum as the exact DFT of K on warpfft_toeplitz_params' grid; the
application by padding, FFT, product, inverse FFT and crop; type 2 as the exact sum), so that
everything warpfft.jax layers on them -- shapes, the custom VJP's formulas for the modes and
the weights, batching, jit, the refusal to differentiate the points -- is checked here against
dense A^H W A and central differences. Prints "toeplitz jax cpu: all checks passed".
"""

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.interpreters import mlir  # noqa: E402

import warpfft.jax as wj  # noqa: E402
from warpfft.jax import _common, _ops  # noqa: E402
from warpfft.jax import _toeplitz as jt  # noqa: E402


def _k(n, modeord):
    return (np.fft.fftfreq(n) * n).astype(int) if modeord else np.arange(-(n // 2), n - n // 2)


def spectrum_impl(*args, n_modes, iflag, eps, kw, weights):
    dim = len(n_modes)
    pts = args[:dim]
    cdt = jnp.complex64 if pts[0].dtype == jnp.float32 else jnp.complex128
    w = args[dim].astype(cdt) if weights != "none" else jnp.ones(pts[0].shape, cdt)
    L = jt.grid(tuple(n_modes), eps, 1 if cdt == jnp.complex64 else 2, kw, weights)
    s = -1 if iflag >= 0 else 1  # the kernel: sign -iflag
    K = None
    for d in range(dim):  # K[m_1, .., m_dim] = sum_j w_j prod_d e^{i s m_d x_dj}
        m = jnp.asarray(np.fft.fftfreq(L[d]) * L[d])
        e = jnp.exp(1j * s * m[:, None] * pts[d][None, :])  # (L_d, M)
        K = e * w[None, :] if K is None else K[..., None, :] * e.reshape((1,) * d + e.shape)
    K = jnp.sum(K, axis=-1)
    S = jnp.fft.fftn(K) / K.size
    return S.real.astype(pts[0].dtype) if weights != "complex" else S.astype(cdt)


def apply_impl(spectrum, f, *, n_modes, eps, kw, adjoint):
    modeord = dict(kw).get("modeord", 0)
    L = spectrum.shape
    pos = [_k(n, modeord) + n // 2 for n in n_modes]
    ix = (slice(None),) + tuple(np.ix_(*pos))
    g = jnp.zeros((f.shape[0],) + tuple(L), f.dtype).at[ix].set(f)
    axes = tuple(range(1, 1 + len(n_modes)))
    S = jnp.conj(spectrum) if adjoint else spectrum
    g = jnp.fft.ifftn(jnp.fft.fftn(g, axes=axes) * S, axes=axes) * np.prod(L)
    return g[ix].astype(f.dtype)


def nufft_impl(source, *points, nufft_type, n_modes, iflag, eps, opts):
    assert nufft_type == 2, "the operator's derivatives use type 2 only"
    dim = len(points)
    modeord = _common.plan_record(opts, 2, dim).modeord
    modes = source.shape[2:]
    grids = np.meshgrid(*[_k(n, modeord) for n in modes], indexing="ij")
    s = 1 if iflag >= 0 else -1
    ph = sum(jnp.asarray(g.ravel())[None, :, None] * p[:, None, :]
             for g, p in zip(grids, points))  # (G, N, M)
    e = jnp.exp(1j * s * ph)
    fl = source.reshape(source.shape[:2] + (-1,))
    return jnp.einsum("gtn,gnm->gtm", fl, e).astype(source.dtype)


for prim, impl in ((jt.spectrum_p, spectrum_impl), (jt.apply_p, apply_impl),
                   (_ops.nufft_p, nufft_impl)):
    mlir.register_lowering(prim, mlir.lower_fun(impl, multiple_results=False), platform="cpu")


def dense(f, pts, w, isign, modeord=0, adjoint=False):
    dim = len(pts)
    n_modes = f.shape[f.ndim - dim:]
    grids = np.meshgrid(*[_k(n, modeord) for n in n_modes], indexing="ij")
    ph = sum(g.ravel()[None, :] * np.asarray(p)[:, None] for g, p in zip(grids, pts))
    A = np.exp(1j * (1 if isign >= 0 else -1) * ph)
    ww = np.ones(A.shape[0]) if w is None else np.asarray(w, np.complex128)
    ww = np.conj(ww) if adjoint else ww
    fl = np.asarray(f).reshape(f.shape[:f.ndim - dim] + (-1,))
    return (((fl @ A.T) * ww) @ np.conj(A)).reshape(f.shape)


def rel(a, b):
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    return np.linalg.norm(a - b) / np.linalg.norm(b)


rng = np.random.default_rng(0)
SHAPES = {1: (9,), 2: (6, 5), 3: (4, 3, 4)}
checks = 0
for dim in (1, 2, 3):
    n = SHAPES[dim]
    M = 11
    pts = [jnp.asarray(rng.uniform(-np.pi, np.pi, M)) for _ in range(dim)]
    for kind in ("none", "real", "complex"):
        if kind == "real":
            w = jnp.asarray(rng.uniform(0.2, 2.0, M))
        elif kind == "complex":
            w = jnp.asarray(rng.uniform(0.2, 2, M) * np.exp(1j * rng.uniform(0, 6, M)))
        else:
            w = None
        f = jnp.asarray(rng.standard_normal((2,) + n) + 1j * rng.standard_normal((2,) + n))
        for isign, modeord, adjoint in ((-1, 0, False), (1, 1, True), (-1, 1, True)):
            opts = {"modeord": bool(modeord)}
            op = wj.Toeplitz(n, *pts, weights=w, iflag=isign, eps=1e-12, opts=opts)
            got = op(f, adjoint=adjoint)
            assert rel(got, dense(np.asarray(f), [np.asarray(p) for p in pts], w, isign,
                                  modeord, adjoint)) < 1e-11, (dim, kind, isign, adjoint)
            one = wj.toeplitz(f, *pts, weights=w, iflag=isign, eps=1e-12, opts=opts,
                              adjoint=adjoint)
            assert rel(one, got) < 1e-12

            # derivatives of a real loss against central differences
            def loss(f, w):
                o = wj.Toeplitz(n, *pts, weights=w, iflag=isign, eps=1e-12, opts=opts)
                y = o(f, adjoint=adjoint)
                return jnp.sum(jnp.abs(y) ** 2 + jnp.real(y * jnp.conj(f)))

            h = 1e-6
            df = jnp.asarray(rng.standard_normal(f.shape) + 1j * rng.standard_normal(f.shape))
            gf, gw = jax.grad(loss, (0, 1))(f, w)
            num = (loss(f + h * df, w) - loss(f - h * df, w)) / (2 * h)
            ana = jnp.sum(jnp.real(gf * df))
            assert abs(num - ana) <= 1e-6 * abs(num), ("modes", dim, kind, adjoint, num, ana)
            if w is not None:
                dw = rng.standard_normal(M) + (1j * rng.standard_normal(M) if kind == "complex"
                                               else 0)
                dw = jnp.asarray(dw)
                num = (loss(f, w + h * dw) - loss(f, w - h * dw)) / (2 * h)
                ana = jnp.sum(jnp.real(gw * dw))
                assert gw.dtype == w.dtype
                assert abs(num - ana) <= 1e-6 * abs(num), ("weights", dim, kind, adjoint, num,
                                                           ana)
            checks += 1

# vmap over the modes (one batched application) and over the weights (a spectrum each); jit
pts = [jnp.asarray(rng.uniform(-np.pi, np.pi, 13)) for _ in range(2)]
ws = jnp.asarray(rng.uniform(0.5, 1.5, (3, 13)))
f = jnp.asarray(rng.standard_normal((3, 6, 5)) + 1j * rng.standard_normal((3, 6, 5)))
op = wj.Toeplitz((6, 5), *pts, weights=ws[0], eps=1e-12)
assert rel(jax.vmap(op)(f), op(f)) < 1e-13
per_w = jax.vmap(lambda w, x: wj.toeplitz(x, *pts, weights=w, eps=1e-12))(ws, f)
for i in range(3):
    assert rel(per_w[i], dense(np.asarray(f[i]), [np.asarray(p) for p in pts], ws[i], -1)) < 1e-11
jitted = jax.jit(lambda op, x: op(x))
assert rel(jitted(op, f), op(f)) < 1e-13
assert rel(jax.jit(lambda x, w: wj.toeplitz(x, *pts, weights=w, eps=1e-12))(f, ws[0]),
           op(f)) < 1e-12
# a CG-style loop under jit: the operator (a pytree) passed in, the spectrum computed once
def cg_steps(op, b):
    def body(i, x):
        return x + 0.01 * (b - op(x))
    return jax.lax.fori_loop(0, 5, body, b)


assert jnp.all(jnp.isfinite(jax.jit(cg_steps)(op, f)))
checks += 5

# the points are not differentiable: a clear error
try:
    jax.grad(lambda x: jnp.sum(jnp.abs(wj.toeplitz(f, x, pts[1], eps=1e-12))))(pts[0])
    raise AssertionError("differentiating the points did not raise")
except NotImplementedError as e:
    assert "points" in str(e)
checks += 1
print(f"toeplitz jax cpu: all checks passed ({checks})")
