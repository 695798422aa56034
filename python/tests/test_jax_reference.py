"""warpfft.jax's Python half checked without a GPU: in a subprocess, the primitive is lowered for
XLA:CPU to an exact sum written in jax.numpy (the same canonical contract the C handler
implements), so broadcasting, dimension order, signs, mode order, jvp/transpose rules for the
source and the points, and vmap are checked against numpy's exact sums and finite
differences (f64). The GPU tests in test_jax.py check the C handler itself."""

import os
import subprocess
import sys
import textwrap

import pytest
from _support import LIBRARY, REPO, clean_env

pytest.importorskip("jax", reason="JAX is not installed: warpfft.jax tests skipped")

SCRIPT = textwrap.dedent(r"""
    import sys
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jax.interpreters import mlir
    from jax.test_util import check_grads
    sys.path.insert(0, sys.argv[1])
    from _nufft_ref import direct1, direct2, direct3, relerr
    import warpfft.jax as wj
    from warpfft.jax import _common, _ops, options

    def k_of(n, modeord):
        return jnp.asarray(np.fft.fftfreq(n) * n if modeord else
                           np.arange(-(n // 2), n - n // 2), jnp.float64)

    def reference(source, *points, nufft_type, n_modes, iflag, eps, opts):
        # the canonical contract: source (G, T, M | modes), points (G, M)
        dim = len(points)
        modeord = _common.plan_record(opts, nufft_type, dim).modeord
        modes = tuple(n_modes) if nufft_type == 1 else tuple(source.shape[2:])
        grids = jnp.meshgrid(*[k_of(n, modeord) for n in modes], indexing="ij")
        ph = sum(g[None, ..., None] * p[:, *([None] * dim), :]
                 for g, p in zip(grids, points))  # (G, *modes, M)
        e = jnp.exp(1j * (1 if iflag >= 0 else -1) * ph).astype(source.dtype)
        G = source.shape[0]
        e = e.reshape(G, -1, e.shape[-1])
        if nufft_type == 1:
            out = jnp.einsum("gtm,gkm->gtk", source, e)
            return out.reshape(source.shape[:2] + modes)
        fl = source.reshape(source.shape[:2] + (-1,))
        return jnp.einsum("gtk,gkm->gtm", fl, e)

    mlir.register_lowering(_ops.nufft_p, mlir.lower_fun(reference, multiple_results=False),
                           platform="cpu")

    def reference3(source, *coords, iflag, eps, opts):
        # type 3's canonical contract: source (G, T, M), points (G, M) x dim, targets (G, K) x dim
        dim = len(coords) // 2
        ph = sum(coords[dim + d][:, :, None] * coords[d][:, None, :] for d in range(dim))
        e = jnp.exp(1j * (1 if iflag >= 0 else -1) * ph).astype(source.dtype)  # (G, K, M)
        return jnp.einsum("gtm,gkm->gtk", source, e)

    mlir.register_lowering(_ops.nufft3_p, mlir.lower_fun(reference3, multiple_results=False),
                           platform="cpu")
    rng = np.random.default_rng(0)

    def pts(dim, shape):
        return [rng.uniform(-np.pi, np.pi, shape) for _ in range(dim)]

    def cplx(shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    for dim in (1, 2, 3):
        n = (7, 6, 5)[:dim]
        for iflag in (1, -1):
            for modeord in (0, 1):
                o = options.Opts(modeord=bool(modeord))
                p = pts(dim, (30,))
                c = cplx((2, 30))
                f = wj.nufft1(n, c, *p, iflag=iflag, eps=1e-12, opts=o)
                assert relerr(f, direct1(c, p, n, iflag, modeord)) < 1e-12, (dim, iflag)
                fk = cplx((2,) + n)
                c2 = wj.nufft2(fk, *p, iflag=iflag, eps=1e-12, opts=o)
                assert relerr(c2, direct2(fk, p, iflag, modeord)) < 1e-12, (dim, iflag)
        # derivatives: source and points, forward and reverse mode, against finite differences
        p = pts(dim, (9,))
        check_grads(lambda s, *q: wj.nufft1(n, s, *q, eps=1e-12), [cplx((9,))] + p, order=1,
                    modes=("fwd", "rev"), eps=1e-6, atol=1e-6, rtol=1e-6)
        check_grads(lambda s, *q: wj.nufft2(s, *q, eps=1e-12), [cplx(n)] + p, order=1,
                    modes=("fwd", "rev"), eps=1e-6, atol=1e-6, rtol=1e-6)
        # second order through the points (grad of grad), type 1
        check_grads(lambda q: jnp.sum(jnp.abs(wj.nufft1(n, jnp.ones(9, jnp.complex128), q,
                                                         *p[1:], eps=1e-12)) ** 2),
                    [p[0]], order=2, modes=("rev",), eps=1e-5, atol=1e-4, rtol=1e-4)

    # type 3: values, then derivatives w.r.t. source, points and targets (fwd and rev)
    for dim in (1, 2, 3):
        p = pts(dim, (11,))
        t = [rng.uniform(-6, 6, 7) for _ in range(dim)]
        c = cplx((2, 11))
        for iflag in (1, -1):
            f = wj.nufft3(c, *p, *t, iflag=iflag, eps=1e-12)
            assert f.shape == (2, 7) and relerr(f, direct3(c, p, t, iflag)) < 1e-12, dim
        check_grads(lambda s: wj.nufft3(s, *p, *t, eps=1e-12), [c], order=1,
                    modes=("fwd", "rev"), eps=1e-6, atol=1e-6, rtol=1e-6)
        check_grads(lambda s, *q: wj.nufft3(s, *q, eps=1e-12), [c[0]] + p + t, order=1,
                    modes=("fwd", "rev"), eps=1e-6, atol=1e-6, rtol=1e-6)
    # type 3 broadcasting: per-group points and targets with stacked transforms; vmap
    xp = rng.uniform(-np.pi, np.pi, (3, 1, 12))
    sp = rng.uniform(-6, 6, (3, 1, 5))
    c = cplx((3, 4, 12))
    f = wj.nufft3(c, xp, sp, eps=1e-12)
    assert f.shape == (3, 4, 5)
    for g in range(3):
        assert relerr(f[g], direct3(c[g], [xp[g, 0]], [sp[g, 0]], -1)) < 1e-12
    sv = rng.uniform(-6, 6, (4, 5))
    fv = jax.vmap(lambda s: wj.nufft3(c[0], xp[0, 0], s, eps=1e-12))(sv)
    for b in range(4):
        assert relerr(fv[b], direct3(c[0], [xp[0, 0]], [sv[b]], -1)) < 1e-12
    gv = jax.grad(lambda s: jnp.sum(jnp.abs(jax.vmap(
        lambda s: wj.nufft3(c[0], xp[0, 0], s, eps=1e-12))(s)) ** 2))(sv)
    assert gv.shape == sv.shape and np.all(np.isfinite(gv))

    # broadcasting: P point sets with S stacked transforms, and per-transform points
    P, S, M = 3, 4, 25
    xp = rng.uniform(-np.pi, np.pi, (P, 1, M))
    yp = rng.uniform(-np.pi, np.pi, (P, 1, M))
    c = cplx((P, S, M))
    f = wj.nufft1((6, 5), c, xp, yp, eps=1e-12)
    assert f.shape == (P, S, 6, 5)
    for g in range(P):
        assert relerr(f[g], direct1(c[g], [xp[g, 0], yp[g, 0]], (6, 5), 1)) < 1e-12
    x1 = rng.uniform(-np.pi, np.pi, M)
    f = wj.nufft1(8, cplx((S, M)), x1, eps=1e-12)
    assert f.shape == (S, 8)
    xs = rng.uniform(-np.pi, np.pi, (S, M))
    cs = cplx((S, M))
    f = wj.nufft1(8, cs, xs, eps=1e-12)
    for s in range(S):
        assert relerr(f[s], direct1(cs[s], [xs[s]], (8,), 1)) < 1e-12

    # vmap over the source (shared points) and over the points, against loops
    cv = cplx((5, 2, M))
    fv = jax.vmap(lambda c: wj.nufft1((6, 5), c, x1, x1[::-1], eps=1e-12))(cv)
    for b in range(5):
        assert relerr(fv[b], direct1(cv[b], [x1, x1[::-1]], (6, 5), 1)) < 1e-12
    xv = rng.uniform(-np.pi, np.pi, (5, M))
    fk = cplx((6,))
    cv2 = jax.vmap(lambda x: wj.nufft2(fk, x, eps=1e-12))(xv)
    for b in range(5):
        assert relerr(cv2[b], direct2(fk, [xv[b]], -1)) < 1e-12
    # gradient of a vmapped, jitted loss with respect to batched points
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.abs(jax.vmap(
        lambda x: wj.nufft2(fk, x, eps=1e-12))(x)) ** 2)))(xv)
    assert g.shape == xv.shape and np.all(np.isfinite(g))
    # a batch sharded over two (CPU) devices with shard_map equals the one-device result
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as PS
    try:
        from jax import shard_map
    except ImportError:
        from jax.experimental.shard_map import shard_map
    devs = jax.devices("cpu")[:2]
    assert len(devs) == 2, devs
    mesh = Mesh(np.array(devs), ("b",))
    op = lambda c, x, y: wj.nufft1((6, 5), c, x, y, eps=1e-12)
    sm = jax.jit(shard_map(op, mesh=mesh, in_specs=(PS("b"), PS(), PS()), out_specs=PS("b")))
    cb = cplx((8, M))
    out = sm(jax.device_put(cb, NamedSharding(mesh, PS("b"))), x1, x1[::-1])
    assert {d.id for d in out.devices()} == {d.id for d in devs}
    assert relerr(out, op(cb, x1, x1[::-1])) < 1e-13
    print("REFERENCE CHECKS OK")
""")


def test_python_half_against_exact_sums_on_cpu(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(SCRIPT)
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=os.path.join(REPO, "python"),
                    JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    r = subprocess.run([sys.executable, str(script), os.path.dirname(os.path.abspath(__file__))],
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "REFERENCE CHECKS OK" in r.stdout


def test_framework_bench_script_runs_without_a_gpu():
    """python/bench/frameworks.py parses its arguments and skips what it cannot run."""
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=os.path.join(REPO, "python"),
                    JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    bench = os.path.join(REPO, "python", "bench", "frameworks.py")
    r = subprocess.run([sys.executable, bench, "tiny", "--reps", "1", "--markdown"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| tiny type 1 |" in r.stdout
    r = subprocess.run([sys.executable, bench, "bogus"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0 and "unknown case" in r.stderr
    for only in ("jax", "torch"):  # one framework per process
        r = subprocess.run([sys.executable, bench, "tiny", "--reps", "1", "--only", only], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, bench, "tiny", "--only", "cupy"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "invalid choice" in r.stderr
