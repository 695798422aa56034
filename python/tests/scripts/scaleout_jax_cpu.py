"""warpfft.jax.distributed on 4 CPU devices of one process, the transform replaced by exact sums
(_exact_jax): results and gradients of the sharded functions against the unsharded op, with
shard_map's replication checking on (the global functions) and off (a hand-written body).
Run by test_scaleout.py in a subprocess (the device count is fixed at JAX's start); prints
"PASS <check>" per check, "FAIL <check>: <why>" and exit status 1 otherwise.
"""

import os
import sys
import traceback

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import _exact_jax  # noqa: E402
import warpfft.jax as wj  # noqa: E402
from warpfft.jax import distributed as wd  # noqa: E402
from warpfft.jax.options import Opts  # noqa: E402

_exact_jax.install()
TOL = 1e-11
MESH = Mesh(np.array(jax.devices()), ("p",))
MESH2 = Mesh(np.array(jax.devices()).reshape(2, 2), ("src", "tgt"))
rng = np.random.default_rng(5)


def relerr(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel())


def close(a, b, what):
    e = relerr(a, b)
    assert e < TOL, f"{what}: relative error {e:.3g}"


def sharded(a, mesh=MESH, axis="p"):
    return jax.device_put(a, NamedSharding(mesh, P(*([None] * (a.ndim - 1)), axis)))


def pts(dim, M, lead=()):
    return [jnp.asarray(rng.uniform(-np.pi, np.pi, lead + (M,))) for _ in range(dim)]


def cplx(shape):
    return jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def check_type1_values():
    x = pts(3, 64)
    c = cplx((2, 64))  # a batch of 2 sharing the points
    f = wd.nufft1((6, 5, 4), sharded(c), *map(sharded, x), mesh=MESH, axis="p", eps=1e-9)
    close(f, wj.nufft1((6, 5, 4), c, *x, eps=1e-9), "type 1")
    assert f.shape == (2, 6, 5, 4) and f.sharding.is_fully_replicated
    f = wd.nufft1(7, sharded(c[0]), sharded(x[0]), mesh=MESH, axis="p", iflag=-1,
                  opts=Opts(modeord=True))
    close(f, wj.nufft1(7, c[0], x[0], iflag=-1, opts=Opts(modeord=True)), "type 1 1D modeord")


def check_type2_values():
    x = pts(2, 48)
    f = cplx((3, 8, 6))
    c = wd.nufft2(f, *map(sharded, x), mesh=MESH, axis="p", eps=1e-9)
    close(c, wj.nufft2(f, *x, eps=1e-9), "type 2")
    assert c.shape == (3, 48)
    assert c.sharding.is_equivalent_to(NamedSharding(MESH, P(None, "p")), 2)


def check_type3_values():
    x, s = pts(2, 40), [t * 3 for t in pts(2, 12)]
    c = cplx((40,))
    ref = wj.nufft3(c, *x, *s)
    g = wd.nufft3(sharded(c), *map(sharded, x), *s, mesh=MESH, sources_axis="p")
    close(g, ref, "type 3 by sources")
    g = wd.nufft3(c, *x, *map(sharded, s), mesh=MESH, targets_axis="p")
    close(g, ref, "type 3 by targets")
    assert g.sharding.is_equivalent_to(NamedSharding(MESH, P("p")), 1)
    g = wd.nufft3(sharded(c, MESH2, "src"), *(sharded(a, MESH2, "src") for a in x),
                  *(sharded(a, MESH2, "tgt") for a in s), mesh=MESH2, sources_axis="src",
                  targets_axis="tgt")
    close(g, ref, "type 3 on a 2D mesh")


def _grads(fun, args):
    return jax.grad(lambda *a: jnp.sum(jnp.abs(fun(*a)) ** 2), argnums=tuple(range(len(args))))(
        *args)


def _close_all(got, want, what):
    for i, (a, b) in enumerate(zip(got, want)):
        close(a, b, f"{what}, argument {i}")


def check_type1_grads():
    x = pts(2, 32)
    c = cplx((32,))
    got = _grads(lambda c, x, y: wd.nufft1((5, 4), c, x, y, mesh=MESH, axis="p"),
                 [sharded(c)] + list(map(sharded, x)))
    want = _grads(lambda c, x, y: wj.nufft1((5, 4), c, x, y), [c] + x)
    _close_all(got, want, "type 1 gradient")


def check_type2_grads():
    x = pts(2, 32)
    f = cplx((5, 4))
    got = _grads(lambda f, x, y: wd.nufft2(f, x, y, mesh=MESH, axis="p"),
                 [f] + list(map(sharded, x)))
    want = _grads(lambda f, x, y: wj.nufft2(f, x, y), [f] + x)
    _close_all(got, want, "type 2 gradient (the modes' gradient summed over the shards)")


def check_normal_operator_grads():
    """c -> A^H-like type 1 (psum) -> type 2 at the same sharded points: the modes in the
    middle are replicated, the loss sums every shard's outputs."""
    x = pts(3, 40)
    c = cplx((40,))

    def normal(nufft1, nufft2, c, *x):
        return nufft2(nufft1((4, 3, 5), c, *x) * 0.5, *x)

    d1 = lambda *a: wd.nufft1(*a, mesh=MESH, axis="p")  # noqa: E731
    d2 = lambda *a: wd.nufft2(*a, mesh=MESH, axis="p")  # noqa: E731
    got = _grads(lambda c, *x: normal(d1, d2, c, *x), [sharded(c)] + list(map(sharded, x)))
    want = _grads(lambda c, *x: normal(wj.nufft1, wj.nufft2, c, *x), [c] + x)
    _close_all(got, want, "normal operator gradient")


def check_type3_grads():
    x, s = pts(1, 24), [pts(1, 8)[0] * 4]
    c = cplx((24,))
    want = _grads(lambda c, x, s: wj.nufft3(c, x, s), [c, x[0], s[0]])
    got = _grads(lambda c, x, s: wd.nufft3(c, x, s, mesh=MESH, sources_axis="p"),
                 [sharded(c), sharded(x[0]), s[0]])
    _close_all(got, want, "type 3 by sources gradient")
    got = _grads(lambda c, x, s: wd.nufft3(c, x, s, mesh=MESH, targets_axis="p"),
                 [c, x[0], sharded(s[0])])
    _close_all(got, want, "type 3 by targets gradient")


def check_unchecked_shard_map():
    """The per-shard functions in a body written by hand with check_vma=False: same values
    and gradients (JAX's older transpose rules, no varying casts)."""
    x = pts(2, 32)
    c = cplx((32,))
    f0 = cplx((6, 5))

    def body(c, x, y, f):
        modes = wd.nufft1_sharded((6, 5), c, x, y, axis_name="p")
        return modes, wd.nufft2_sharded(f + modes, x, y)

    fun = jax.jit(jax.shard_map(body, mesh=MESH, in_specs=(P("p"), P("p"), P("p"), P()),
                                out_specs=(P(), P("p")), check_vma=False))
    loss = lambda fun, *a: sum(jnp.sum(jnp.abs(o) ** 2) for o in fun(*a))  # noqa: E731
    ref = lambda c, x, y, f: (wj.nufft1((6, 5), c, x, y),  # noqa: E731
                              wj.nufft2(f + wj.nufft1((6, 5), c, x, y), x, y))
    args = [c] + x + [f0]
    for a, b in zip(fun(*args), ref(*args)):
        close(a, b, "unchecked shard_map values")
    got = jax.grad(lambda *a: loss(fun, *a), argnums=(0, 1, 2, 3))(*args)
    want = jax.grad(lambda *a: loss(ref, *a), argnums=(0, 1, 2, 3))(*args)
    _close_all(got, want, "unchecked shard_map gradient")


def check_from_local_shards():
    x = np.asarray(rng.uniform(-np.pi, np.pi, 40))
    g = wd.from_local_shards([x[i * 10:(i + 1) * 10] for i in range(4)], MESH, "p")
    assert g.shape == (40,) and np.array_equal(np.asarray(g), x)
    assert g.sharding.is_equivalent_to(NamedSharding(MESH, P("p")), 1)
    for bad, match in (([x[:10]] * 3, "3 shard"), ([x[:10]] * 3 + [x[:9]], "one shape")):
        try:
            wd.from_local_shards(bad, MESH, "p")
        except ValueError as e:
            assert match in str(e), e
        else:
            raise AssertionError(f"no ValueError for {match}")


def check_argument_errors():
    x = pts(1, 8)
    for call, match in (
            (lambda: wd.nufft1(4, cplx((8,)), *x, mesh=MESH, axis="q"), "not an axis"),
            (lambda: wd.nufft3(cplx((8,)), x[0], x[0], mesh=MESH), "sources_axis"),
            (lambda: wd.nufft3(cplx((8,)), x[0], x[0], mesh=MESH, sources_axis="p",
                               targets_axis="p"), "different mesh axes"),
            (lambda: wd.nufft1_sharded(4, cplx((8,)), *x, axis_name=None), "axis_name")):
        try:
            call()
        except ValueError as e:
            assert match in str(e), e
        else:
            raise AssertionError(f"no ValueError for {match}")


def main():
    names = sys.argv[1:] or [n for n in globals() if n.startswith("check_")]
    failed = 0
    for name in names:
        try:
            globals()[name]()
            print(f"PASS {name}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {name}: {traceback.format_exc()}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
