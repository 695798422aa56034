"""Bitwise reproducibility on a GPU (issue 29): the deterministic option through every Python
interface. The same inputs, run twice (and through a second plan), must give the same bits:

* warpfft.Plan(..., deterministic=True), types 1, 2 and 3, f32 and f64, 1D to 3D, a batch of 2,
  on points half in a small cluster (many points per cell: where atomics race), plus the
  accuracy against the exact sums;
* warpfft.jax with Opts(deterministic=True): the transforms and their gradients with respect
  to the strengths/modes and the points;
* warpfft.torch under torch.use_deterministic_algorithms(True) (its ops used to raise there)
  and with deterministic=True: outputs and gradients.

The default plans are run the same way and how often their bits differed is printed, not
asserted (a run may happen to agree). Skips with "no GPU: ..." without a GPU; the framework
parts skip when the framework (or its CUDA) is missing."""

import numpy as np
import pytest
from _support import exact, exact3, rel_err, require_gpu, warpfft

pytestmark = pytest.mark.gpu

SHAPES = {1: (400,), 2: (40, 36), 3: (16, 14, 12)}
EPS = {np.complex64: 1e-5, np.complex128: 1e-10}


@pytest.fixture(autouse=True)
def _gpu():
    require_gpu()


def clustered(rng, dim, M, real):
    """Half uniform in [-pi, pi), half in a box of 0.05 per side."""
    pts = []
    for d in range(dim):
        x = rng.uniform(-np.pi, np.pi, M)
        x[1::2] = 0.3 + 0.1 * d + 0.05 * rng.random(M // 2)
        pts.append(x.astype(real))
    return pts


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def runs(make, setpts, data, count=2):
    """Outputs of `count` executes of one plan, and one of a second plan."""
    outs = []
    with make() as plan:
        setpts(plan)
        for _ in range(count):
            outs.append(plan.execute(data))
        info = plan.info
    with make() as plan:
        setpts(plan)
        outs.append(plan.execute(data))
    return outs, info


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
def test_plan_types_1_2(type_, dim, dtype):
    rng = np.random.default_rng(10 * type_ + dim)
    real = np.float32 if dtype == np.complex64 else np.float64
    n, M, eps = SHAPES[dim], 40000, EPS[dtype]
    pts = clustered(rng, dim, M, real)
    shape = (2, M) if type_ == 1 else (2,) + n
    data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    outs, info = runs(lambda: warpfft.Plan(type_, n, 2, eps=eps, dtype=dtype,
                                           deterministic=True),
                      lambda p: p.setpts(*pts), data)
    assert info["deterministic"] is True
    assert (info["method"] == "od") == (type_ == 1), info["method"]
    for o in outs[1:]:
        assert same_bits(outs[0], o)
    isign = 1 if type_ == 1 else -1
    assert rel_err(outs[0], exact(type_, pts, data, n, isign)) <= eps
    plain, _ = runs(lambda: warpfft.Plan(type_, n, 2, eps=eps, dtype=dtype),
                    lambda p: p.setpts(*pts), data, count=3)
    print(f"type {type_} {dim}D {np.dtype(dtype)}: default plans' reruns differing: "
          f"{sum(not same_bits(plain[0], o) for o in plain[1:])} of 3")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_plan_type3(dim, dtype):
    rng = np.random.default_rng(30 + dim)
    real = np.float32 if dtype == np.complex64 else np.float64
    M, K, eps = 20000, 500, EPS[dtype]
    x = clustered(rng, dim, M, real)
    s = [rng.uniform(-30, 30, K).astype(real) for _ in range(dim)]
    c = (rng.standard_normal((2, M)) + 1j * rng.standard_normal((2, M))).astype(dtype)
    xyz = dict(zip("xyz", x))
    stu = dict(zip("stu", s))
    outs, info = runs(lambda: warpfft.Plan(3, dim, 2, eps=eps, dtype=dtype, deterministic=True),
                      lambda p: p.setpts(**xyz, **stu), c)
    assert info["deterministic"] is True and info["method"] == "od"
    for o in outs[1:]:
        assert same_bits(outs[0], o)
    assert rel_err(outs[0], exact3(x, s, c, 1)) <= eps


def test_jax_forward_and_gradients():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import warpfft.jax as wj
    from warpfft.jax import options

    rng = np.random.default_rng(40)
    opts = options.Opts(deterministic=True)
    for real, cplx in ((np.float32, np.complex64), (np.float64, np.complex128)):
        x, y = (jnp.asarray(p) for p in clustered(rng, 2, 30000, real))
        c = jnp.asarray((rng.standard_normal(30000) + 1j * rng.standard_normal(30000))
                        .astype(cplx))
        f = jnp.asarray((rng.standard_normal((40, 36)) + 1j * rng.standard_normal((40, 36)))
                        .astype(cplx))
        t = jnp.asarray(rng.uniform(-20, 20, (2, 400)).astype(real))

        def loss(c, x, y, f):
            a = wj.nufft1((40, 36), c, x, y, opts=opts, eps=1e-5)
            b = wj.nufft2(f, x, y, opts=opts, eps=1e-5)
            g = wj.nufft3(c, x, y, t[0], t[1], opts=opts, eps=1e-5)
            return (jnp.sum(jnp.abs(a) ** 2) + jnp.sum(jnp.abs(b) ** 2)
                    + jnp.sum(jnp.abs(g) ** 2))

        grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3)))
        first = jax.tree_util.tree_map(np.asarray, grad(c, x, y, f))
        second = jax.tree_util.tree_map(np.asarray, grad(c, x, y, f))
        for a, b in zip(jax.tree_util.tree_leaves(first), jax.tree_util.tree_leaves(second)):
            assert same_bits(a, b)


def _torch_run(torch, wt, p, v, fk, p3, t3, **kw):
    """Outputs and gradients of one type-1, type-2 and type-3 call with everything requiring
    grad."""
    p, v, fk, p3, t3 = (a.detach().clone().requires_grad_(True) for a in (p, v, fk, p3, t3))
    a = wt.finufft_type1(p, v, (40, 36), eps=1e-5, **kw)
    b = wt.finufft_type2(p, fk, eps=1e-5, **kw)
    g = wt.finufft_type3(p3, v, t3, eps=1e-5, **kw)
    loss = a.abs().square().sum() + b.abs().square().sum() + g.abs().square().sum()
    loss.backward()
    return [t.detach().cpu().numpy() for t in (a, b, g, p.grad, v.grad, fk.grad, p3.grad,
                                               t3.grad)]


def test_torch_forward_and_gradients():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    import warpfft.torch as wt

    rng = np.random.default_rng(50)
    for real, cplx in ((torch.float32, torch.complex64), (torch.float64, torch.complex128)):
        npr = np.float32 if real == torch.float32 else np.float64
        p = torch.tensor(np.stack(clustered(rng, 2, 30000, npr)), device="cuda")
        v = torch.tensor(rng.standard_normal((2, 30000)) + 1j * rng.standard_normal((2, 30000)),
                         dtype=cplx, device="cuda")
        fk = torch.tensor(rng.standard_normal((2, 40, 36)) + 1j * rng.standard_normal((2, 40, 36)),
                          dtype=cplx, device="cuda")
        t3 = torch.tensor(rng.uniform(-20, 20, (2, 300)), dtype=real, device="cuda")
        was = torch.are_deterministic_algorithms_enabled()
        try:
            torch.use_deterministic_algorithms(True)
            first = _torch_run(torch, wt, p, v, fk, p, t3)
            second = _torch_run(torch, wt, p, v, fk, p, t3)
        finally:
            torch.use_deterministic_algorithms(was)
        for a, b in zip(first, second):
            assert same_bits(a, b)
        kw_first = _torch_run(torch, wt, p, v, fk, p, t3, deterministic=True)
        kw_second = _torch_run(torch, wt, p, v, fk, p, t3, deterministic=True)
        for a, b, c in zip(kw_first, kw_second, first):
            assert same_bits(a, b) and same_bits(a, c)  # the same plans as under the flag
