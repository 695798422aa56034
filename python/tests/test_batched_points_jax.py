"""warpfft.jax with batched points (issue 32): a vmap over the points (or leading point axes that
do not broadcast) reaches the XLA handler as G groups with their own (G, M) point arrays, which
it runs as one plan of G * T transforms with batched points (warpfft_setpts_sets; the handler's
trace is checked on a stand-in in c_core/tests/test_xla_ffi.c). Here, on a GPU (skips with
"no GPU: ..." without one): the batched results and jax.grad through vmap against the same
transforms run set by set, types 1-3, and the deterministic option (whose types 1 and 3 run the
groups one after the other: OD takes one set) giving the same values."""

import numpy as np
import pytest
from _support import gpu_status

jax = pytest.importorskip("jax", reason="JAX is not installed")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import warpfft.jax as wj  # noqa: E402
from warpfft.jax import options  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu():
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("no GPU: JAX sees no CUDA device")


def data(G, dim, M, seed=0, half=np.pi):
    rng = np.random.default_rng(seed)
    scale = np.linspace(0.4, 1.0, G)[:, None]
    pts = [jnp.asarray(rng.uniform(-half, half, (G, M)) * scale) for _ in range(dim)]
    c = jnp.asarray(rng.standard_normal((G, M)) + 1j * rng.standard_normal((G, M)))
    return pts, c


def rel(a, b):
    return float(jnp.linalg.norm((a - b).ravel()) / jnp.linalg.norm(b.ravel()))


MODES = {1: (40,), 2: (24, 20), 3: (12, 10, 8)}


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_vmap_over_points_types_1_2(dim):
    G, M, modes = 5, 2000, MODES[dim]
    pts, c = data(G, dim, M, seed=dim)
    f = jax.vmap(lambda c, *p: wj.nufft1(modes, c, *p, eps=1e-10))(c, *pts)
    ref = jnp.stack([wj.nufft1(modes, c[g], *[p[g] for p in pts], eps=1e-10) for g in range(G)])
    # one batched plan against G single-set plans: each within eps of the exact sums, but the
    # batched plan's sigma and width are chosen for G times the points (H200, 2D: 8e-12), so
    # not bit-close; a set paired with another set's values would be off by O(1)
    assert f.shape == (G,) + modes and rel(f, ref) < 1e-9
    # leading point axes that do not broadcast: the same, without vmap
    assert rel(wj.nufft1(modes, c, *pts, eps=1e-10), ref) < 1e-9
    back = jax.vmap(lambda f, *p: wj.nufft2(f, *p, eps=1e-10))(f, *pts)
    ref2 = jnp.stack([wj.nufft2(f[g], *[p[g] for p in pts], eps=1e-10) for g in range(G)])
    assert rel(back, ref2) < 1e-9


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_vmap_over_points_type3(dim):
    G, M, K = 3, 1500, 300
    pts, c = data(G, dim, M, seed=10 + dim)
    tgt, _ = data(G, dim, K, seed=20 + dim, half=25.0)
    f = jax.vmap(lambda c, *a: wj.nufft3(c, *a, eps=1e-10))(c, *pts, *tgt)
    ref = jnp.stack([wj.nufft3(c[g], *[p[g] for p in pts], *[t[g] for t in tgt], eps=1e-10)
                     for g in range(G)])
    assert rel(f, ref) < 1e-8  # one geometry for every set: within the tolerance


def test_grad_through_vmap():
    G, M, modes = 4, 1000, (16, 14)
    (x, y), c = data(G, 2, M, seed=3)

    def loss_one(x, y, c):
        return jnp.sum(jnp.abs(wj.nufft1(modes, c, x, y, eps=1e-12)) ** 2)

    def loss(x, y, c):
        return jnp.sum(jax.vmap(loss_one)(x, y, c))

    gx, gy, gc = jax.grad(loss, argnums=(0, 1, 2))(x, y, c)
    for g in range(G):
        rx, ry, rc = jax.grad(loss_one, argnums=(0, 1, 2))(x[g], y[g], c[g])
        assert rel(gx[g], rx) < 1e-9 and rel(gy[g], ry) < 1e-9 and rel(gc[g], rc) < 1e-9


def test_deterministic_vmap_same_values():
    G, M, modes = 3, 1500, (20, 18)
    (x, y), c = data(G, 2, M, seed=5)
    # one upsampfac for both: with 0 the plan may pick another sigma (and width) for the
    # deterministic method's cost, and the two would then differ by ~tol, not by rounding
    det = options.Opts(deterministic=True, gpu_upsampfac=2.0)
    same = options.Opts(gpu_upsampfac=2.0)
    f = jax.vmap(lambda c, x, y: wj.nufft1(modes, c, x, y, eps=1e-10, opts=det))(c, x, y)
    plain = jax.vmap(lambda c, x, y: wj.nufft1(modes, c, x, y, eps=1e-10, opts=same))(c, x, y)
    assert rel(f, plain) < 1e-11
    again = jax.vmap(lambda c, x, y: wj.nufft1(modes, c, x, y, eps=1e-10, opts=det))(c, x, y)
    assert np.array_equal(np.asarray(f), np.asarray(again))
