"""Batched points (issue 32, warpfft's extension): ``Plan.setpts`` with ``(n_sets, M)``
coordinates and the one-call functions with ``x`` of shape ``(B, M)``, each transform (or group
of n_trans / n_sets transforms) on its own point set.

Without a GPU (the ``fake`` fixture: _fake.FakeLib computes the exact sums of the C ABI's
batched layout) the Python layer's side is checked end to end against numpy direct sums per
set: shapes, axis order, which C call is made with which n_sets, info and ``plan.n_sets``, and
the argument errors. On a GPU (marked ``gpu``, skipping with "no GPU: ...") the real library's
batched plans are compared with separate single-set plans and the exact sums, types 1-3,
1D-3D, f32 and f64."""

import numpy as np
import pytest
from _support import exact, exact3, rel_err, require_gpu, warpfft

SHAPES = {1: (30,), 2: (12, 10), 3: (6, 5, 4)}


def point_sets(rng, dim, n_sets, M, real, half=np.pi):
    """dim arrays of shape (n_sets, M); set s spread over a different range."""
    return [np.stack([rng.uniform(-half, half, M) * (0.4 + 0.6 * (s + 1) / n_sets)
                      for s in range(n_sets)]).astype(real) for _ in range(dim)]


def cplx(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def exact_sets(type_, pts, data, n_modes, isign, n_sets):
    """The exact sums set by set: set s's points for its n_trans / n_sets transforms."""
    tps = data.shape[0] // n_sets
    outs = []
    for s in range(n_sets):
        p = [v[s] for v in pts]
        outs.append(exact(type_, p, data[s * tps:(s + 1) * tps], n_modes, isign))
    return np.concatenate(outs)


def exact3_sets(pts, targets, data, n_sets):
    """The exact type 3 sums (isign +1) set by set, as exact_sets."""
    tps = data.shape[0] // n_sets
    return np.concatenate([exact3([v[q] for v in pts], [v[q] for v in targets],
                                  data[q * tps:(q + 1) * tps], 1) for q in range(n_sets)])


def one_call_2d1(rng, B, M, real, n_modes, eps, tol):
    """warpfft.nufft2d1 on B sets of M points drawn from rng, its shape and its values against
    the exact sums set by set (within tol); the points, strengths and result."""
    x, y = point_sets(rng, 2, B, M, real)
    c = cplx(rng, (B, M), np.complex64 if real == np.float32 else np.complex128)
    f = warpfft.nufft2d1(x, y, c, n_modes, eps=eps)
    assert f.shape == (B,) + n_modes
    assert rel_err(f, exact_sets(1, [x, y], c, n_modes, 1, B)) < tol
    return x, y, c, f


# ---- without a GPU: the fake library ----

@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
@pytest.mark.parametrize("n_sets", [4, 2])
def test_plan_batched_points_fake(fake, type_, dim, n_sets):
    rng = np.random.default_rng(10 * dim + type_)
    n_modes, M, n_trans = SHAPES[dim], 7, 4
    pts = point_sets(rng, dim, n_sets, M, np.float64)
    shape = (n_trans, M) if type_ == 1 else (n_trans,) + n_modes
    data = cplx(rng, shape, np.complex128)
    with warpfft.Plan(type_, n_modes, n_trans, 1e-9, dtype="complex128") as plan:
        plan.setpts(*pts)
        assert (plan.M, plan.n_sets) == (M, n_sets)
        assert plan.info["n_sets"] == n_sets and plan.info["n_points"] == M
        assert plan.c_shape == (n_trans, M)
        out = plan.execute(data)
    isign = 1 if type_ == 1 else -1
    want = exact_sets(type_, pts, data, n_modes, isign, n_sets)
    assert out.shape == want.shape
    assert rel_err(out, want) < 1e-12
    call = [c for c in fake.calls if c[0] == "warpfft_setpts_sets"][-1]
    assert call[3:5] == (n_sets, M)


def test_vectors_are_one_set_fake(fake):
    rng = np.random.default_rng(1)
    x = rng.uniform(-np.pi, np.pi, 9)
    with warpfft.Plan(1, (8,), 2, 1e-6, dtype="complex128") as plan:
        plan.setpts(x)
        assert plan.n_sets == 1 and plan.info["n_sets"] == 1
        assert "warpfft_setpts_sets" not in fake.names()
        # (1, M): one set through the batched form is the shared-points call
        plan.setpts(x[None, :])
        assert plan.n_sets == 1 and plan.M == 9
        assert "warpfft_setpts_sets" not in fake.names()
        plan.release_points()
        assert plan.n_sets is None


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_type3_batched_points_fake(fake, dim):
    rng = np.random.default_rng(dim)
    n_sets, n_trans, M, K = 3, 6, 5, 4
    x = point_sets(rng, dim, n_sets, M, np.float32)
    s = point_sets(rng, dim, n_sets, K, np.float32, half=20.0)
    c = cplx(rng, (n_trans, M), np.complex64)
    with warpfft.Plan(3, dim, n_trans, 1e-5, dtype="complex64") as plan:
        plan.setpts(*x, *[None] * (3 - dim), *s)
        assert (plan.M, plan.K, plan.n_sets) == (M, K, n_sets)
        assert plan.fk_shape == (n_trans, K)
        f = plan.execute(c)
    assert rel_err(f, exact3_sets(x, s, c, n_sets)) < 1e-5
    assert [c for c in fake.calls if c[0] == "warpfft_setpts3_sets"][-1][3:5] == (n_sets, M)


def test_one_call_functions_fake(fake):
    rng = np.random.default_rng(3)
    B, M = 3, 8
    x, y, c, f = one_call_2d1(rng, B, M, np.float64, (6, 5), 1e-9, 1e-12)
    back = warpfft.nufft2d2(x, y, f, eps=1e-9)
    assert back.shape == (B, M)
    assert rel_err(back, exact_sets(2, [x, y], f, (6, 5), -1, B)) < 1e-12
    # points_hint: M per set, not B * M
    assert fake.opts_seen[-1]["points_hint"] == 8
    (x1,) = point_sets(rng, 1, B, M, np.float64)
    (s1,) = point_sets(rng, 1, B, 4, np.float64, half=10.0)
    f3 = warpfft.nufft1d3(x1, c, s1, eps=1e-9)
    assert f3.shape == (B, 4) and rel_err(f3, exact3_sets([x1], [s1], c, B)) < 1e-12


def test_argument_errors_fake(fake):
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, (4, 10))
    with warpfft.Plan(1, (8, 8), 6, 1e-6, dtype="complex128") as plan:
        with pytest.raises(warpfft.InvalidArgumentError, match="must divide n_trans = 6"):
            plan.setpts(x, x)
        with pytest.raises(warpfft.InvalidArgumentError, match="must be of shape"):
            plan.setpts(x[:3], x[:2])
        # a batched x with a vector y (or none): the reference's "not a vector"
        with pytest.raises(warpfft.InvalidArgumentError, match="`x` must be a vector"):
            plan.setpts(x[:3], x[0])
        with pytest.raises(warpfft.InvalidArgumentError, match="`x` must be a vector"):
            plan.setpts(x[:3])
        with pytest.raises(warpfft.InvalidArgumentError, match=r"\(n_sets, M\) array"):
            plan.setpts(x[None], x[None])
        with pytest.raises(warpfft.InvalidArgumentError, match="holds no point set"):
            plan.setpts(x[:0], x[:0])
        assert "warpfft_setpts_sets" not in fake.names()  # caught before the C library
        plan.setpts(x[:3], x[:3])
        assert plan.n_sets == 3
        with pytest.raises(warpfft.InvalidArgumentError, match="data"):
            plan.execute(np.zeros((3, 10), np.complex128))  # n_trans = 6 transforms
    with warpfft.Plan(3, 1, 4, 1e-6, dtype="complex128") as p3:
        with pytest.raises(warpfft.InvalidArgumentError, match="targets one shared set"):
            p3.setpts(x, s=np.linspace(-1, 1, 5))
        with pytest.raises(warpfft.InvalidArgumentError, match="sources hold one shared set"):
            p3.setpts(x[0], s=x)
    # the one-call functions: B sets need n_trans = B strengths
    with pytest.raises(warpfft.InvalidArgumentError, match="must divide n_trans = 1"):
        warpfft.nufft1d1(x, np.zeros(10, np.complex128), 8)


def test_c_errors_reach_python_fake(fake):
    """What the C library refuses (here the fake, with the real statuses) comes back as the
    status's exception, and the plan has no points after it."""
    x = np.zeros((2, 5))
    with warpfft.Plan(2, (8,), 2, 1e-6, dtype="complex128") as plan:
        fake.fail["warpfft_setpts_sets"] = 18  # UNSUPPORTED: e.g. a deterministic type 1
        with pytest.raises(warpfft.WarpfftError):
            plan.setpts(x)
        assert plan.M is None and plan.n_sets is None


# ---- on a GPU: the real library ----

EPS = {np.complex64: 1e-5, np.complex128: 1e-10}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["f32", "f64"])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2, 3])
def test_batched_vs_separate_gpu(type_, dim, dtype):
    require_gpu()
    rng = np.random.default_rng(100 * type_ + 10 * dim)
    real = np.float32 if dtype == np.complex64 else np.float64
    eps, n_sets, n_trans = EPS[dtype], 3, 6
    tps = n_trans // n_sets
    M, K = 4000, 500
    x = point_sets(rng, dim, n_sets, M, real)
    n_modes = {1: (300,), 2: (40, 36), 3: (16, 14, 12)}[dim]
    kw = dict(upsampfac=2.0)  # one sigma for every plan: differences are then rounding only
    if type_ == 3:
        s = point_sets(rng, dim, n_sets, K, real, half=30.0)
        targets = [*[None] * (3 - dim), *s]
        data = cplx(rng, (n_trans, M), dtype)
        plan = warpfft.Plan(3, dim, n_trans, eps, dtype=dtype, **kw)
    else:
        targets = []
        data = cplx(rng, (n_trans, M) if type_ == 1 else (n_trans,) + n_modes, dtype)
        plan = warpfft.Plan(type_, n_modes, n_trans, eps, dtype=dtype, **kw)
    with plan:
        plan.setpts(*x, *targets)
        assert plan.n_sets == n_sets and plan.info["n_sets"] == n_sets
        out = plan.execute(data)
    sep = []
    for q in range(n_sets):
        rows = data[q * tps:(q + 1) * tps]
        if type_ == 3:
            with warpfft.Plan(3, dim, tps, eps, dtype=dtype, **kw) as p:
                p.setpts(*[v[q] for v in x], *[None] * (3 - dim), *[v[q] for v in s])
                sep.append(p.execute(rows))
        else:
            with warpfft.Plan(type_, n_modes, tps, eps, dtype=dtype, **kw) as p:
                p.setpts(*[v[q] for v in x])
                sep.append(p.execute(rows))
    sep = np.concatenate(sep)
    if type_ == 3:
        want = exact3_sets(x, s, data, n_sets)
        bound = 10 * eps
        assert rel_err(out, want) < bound
    else:
        bound = 1e-5 if dtype == np.complex64 else 1e-12
        want = exact_sets(type_, x, data, n_modes, 1 if type_ == 1 else -1, n_sets)
        assert rel_err(out, want) < 10 * eps
    assert rel_err(out, sep) < bound, (rel_err(out, sep), bound)


@pytest.mark.gpu
def test_one_call_batched_gpu():
    require_gpu()
    x, y, c, f = one_call_2d1(np.random.default_rng(7), 4, 3000, np.float32, (32, 30), 1e-5, 1e-4)
    # device arrays in place, if cupy is there
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    fd = warpfft.nufft2d1(cp.asarray(x), cp.asarray(y), cp.asarray(c), (32, 30), eps=1e-5)
    assert rel_err(cp.asnumpy(fd), f) < 1e-6
