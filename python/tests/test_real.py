"""Real-valued data (``real_data=True``; docs/real.md) in warpfft.Plan, the cufinufft stand-in and
the one-call functions: type 1 takes real strengths (float32 for a complex64 plan, float64 for
complex128) and returns the half modes, the LAST Python axis (the one paired with the last
coordinate; the C ABI's dimension 1, the fastest in memory) N//2 + 1 long with k = 0 .. N//2,
the other axes full in modeord; type 2 takes those half modes and returns real values
c_j = Re(sum over the half of a_k f_k e^{isign i k.x_j}), a = 1 at k_last = 0 and 2 above.

Without a GPU (the ``fake`` fixture: _fake.FakeLib computes the exact sums of the C ABI's
conventions) the shapes, dtypes, axis order and argument errors are checked against numpy sums
written here in the Python order; with one, the values against the same sums within the plan's
tolerance. The GPU tests skip visibly without a GPU.
"""

import numpy as np
import pytest
from _support import rel_err, require_gpu, warpfft

SHAPES = {1: [(12,), (13,)], 2: [(6, 10), (7, 9)], 3: [(4, 6, 8), (5, 4, 7)]}
REAL_OF = {np.complex64: np.float32, np.complex128: np.float64}


def half_shape(n_modes):
    return tuple(n_modes[:-1]) + (n_modes[-1] // 2 + 1,)


def _ks(n_modes, modeord):
    """The wave numbers of the half-mode array per Python axis: the last axis k = 0 .. N//2,
    the others by modeord (0: -N//2 .., 1: FFT order)."""
    ks = []
    for n in n_modes[:-1]:
        i = np.arange(n)
        ks.append(i - n // 2 if modeord == 0 else np.where(i < (n + 1) // 2, i, i - n))
    ks.append(np.arange(n_modes[-1] // 2 + 1))
    grids = np.meshgrid(*ks, indexing="ij")
    return [g.ravel() for g in grids]


def _phases(pts, n_modes, isign, modeord):
    ks = _ks(n_modes, modeord)
    return np.exp(isign * 1j * sum(np.outer(np.asarray(x, np.float64), k)
                                   for x, k in zip(pts, ks)))  # (M, H)


def exact_real1(pts, c, n_modes, isign=1, modeord=0):
    """Type 1 on real strengths ``([n_trans,] M)`` -> the half modes ``([n_trans,] *half)``."""
    c = np.asarray(c, np.float64)
    A = _phases(pts, n_modes, isign, modeord)
    return (c @ A).reshape(c.shape[:-1] + half_shape(n_modes))


def exact_real2(pts, fk, n_modes, isign=-1, modeord=0):
    """Type 2 of the half modes ``([n_trans,] *half)`` -> real ``([n_trans,] M)``."""
    h = half_shape(n_modes)
    fk = np.asarray(fk, np.complex128)
    batch = fk.shape[:fk.ndim - len(h)]
    a = np.where(_ks(n_modes, modeord)[-1] > 0, 2.0, 1.0)
    A = _phases(pts, n_modes, isign, modeord)
    return ((fk.reshape(batch + (-1,)) * a) @ A.T).real


def _points(rng, dim, M, dtype):
    return [rng.uniform(-np.pi, np.pi, M).astype(dtype) for _ in range(dim)]


def _data(rng, type_, n_modes, M, n_trans, dtype):
    real = REAL_OF[dtype]
    b = (n_trans,) if n_trans > 1 else ()
    if type_ == 1:
        return rng.uniform(-1, 1, b + (M,)).astype(real)
    h = b + half_shape(n_modes)
    return (rng.uniform(-1, 1, h) + 1j * rng.uniform(-1, 1, h)).astype(dtype)


def _run(type_, n_modes, M, n_trans, dtype, eps, modeord, rng, **kw):
    pts = _points(rng, len(n_modes), M, REAL_OF[dtype])
    data = _data(rng, type_, n_modes, M, n_trans, dtype)
    with warpfft.Plan(type_, n_modes, n_trans, eps, dtype=dtype, modeord=modeord,
                      real_data=True, **kw) as plan:
        assert plan.real_data
        plan.setpts(*pts)
        out = plan.execute(data)
        info = plan.info
    if type_ == 1:
        want = exact_real1(pts, data, n_modes, 1, modeord)
    else:
        want = exact_real2(pts, data, n_modes, -1, modeord)
    return out, want, info


# ---- without a GPU: the fake library ----

def test_real_data_is_an_option():
    from warpfft import _options
    from warpfft._args import OPTION_NAMES

    assert "real_data" in OPTION_NAMES  # a keyword of Plan and the one-call functions

    row = _options.TABLE["real_data"]
    assert (row.default, row.min, row.max) == (0, 0, 1)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("modeord", [0, 1])
@pytest.mark.parametrize("parity", [0, 1])
def test_values_and_layout_fake(fake, dim, type_, dtype, modeord, parity):
    """The fake sums in the C ABI's order; the numpy sums here in the Python order: they agree
    only if the last Python axis is the halved one and dtypes and batches reach C right."""
    rng = np.random.default_rng(100 * dim + 10 * type_ + parity)
    n_modes, M, n_trans = SHAPES[dim][parity], 9, 2
    out, want, _ = _run(type_, n_modes, M, n_trans, dtype, 1e-5, modeord, rng)
    if type_ == 1:
        assert out.dtype == dtype and out.shape == (n_trans,) + half_shape(n_modes)
    else:
        assert out.dtype == REAL_OF[dtype] and out.shape == (n_trans, M)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    assert rel_err(out, want) < tol
    assert fake.opts_seen[-1]["real_data"] == 1


def test_half_of_the_complex_transform_fake(fake):
    """Real type 1 is the complex type 1 of the same strengths at k_last >= 0 (the complex
    array's upper half of its last axis, modeord 0), as numpy.fft.rfftn's half of fftn."""
    rng = np.random.default_rng(7)
    n_modes, M = (6, 9), 11
    x, y = _points(rng, 2, M, np.float64)
    c = rng.uniform(-1, 1, M)
    with warpfft.Plan(1, n_modes, eps=1e-9, dtype="complex128", real_data=True) as p:
        p.setpts(x, y)
        half = p.execute(c)
    with warpfft.Plan(1, n_modes, eps=1e-9, dtype="complex128") as p:
        p.setpts(x, y)
        full = p.execute(c.astype(np.complex128))
    n = n_modes[-1]
    np.testing.assert_allclose(half, full[:, n // 2:], rtol=0, atol=1e-12)


def test_shapes_and_properties_fake(fake):
    with warpfft.Plan(1, (8, 6, 7), 3, 1e-6, real_data=True) as plan:
        assert plan.fk_shape == (3, 8, 6, 4)
        plan.setpts(*_points(np.random.default_rng(1), 3, 5, np.float32))
        assert plan.c_shape == (3, 5)
        assert "real_data=True" in repr(plan)
        out = np.empty((3, 8, 6, 4), np.complex64)
        assert plan.execute(np.ones((3, 5), np.float32), out=out) is out
    with warpfft.Plan(2, 10, dtype="complex128", real_data=1) as plan:
        assert plan.fk_shape == (6,)
        assert plan.real_data
    with warpfft.Plan(2, 10, dtype="complex128") as plan:
        assert plan.fk_shape == (10,) and not plan.real_data


def test_dtype_and_shape_errors_fake(fake):
    rng = np.random.default_rng(2)
    x, y = _points(rng, 2, 5, np.float32)
    with warpfft.Plan(1, (8, 6), eps=1e-5, real_data=True) as plan:
        plan.setpts(x, y)
        with pytest.raises(TypeError, match="float32 was expected"):
            plan.execute(np.ones(5, np.complex64))  # complex strengths on a real plan
        with pytest.raises(TypeError, match="float32 was expected"):
            plan.execute(np.ones(5, np.float64))  # float64 strengths on a complex64 plan
        with pytest.raises(ValueError, match=r"must be of shape \(5,\)"):
            plan.execute(np.ones(6, np.float32))
        with pytest.raises(TypeError, match="complex64 was expected"):
            plan.execute(np.ones(5, np.float32), out=np.empty((8, 4), np.float32))
        with pytest.raises(ValueError, match=r"shape \(8, 4\)"):
            plan.execute(np.ones(5, np.float32), out=np.empty((8, 6), np.complex64))
    with warpfft.Plan(2, (8, 6), eps=1e-5, real_data=True) as plan:
        plan.setpts(x, y)
        with pytest.raises(ValueError, match=r"\(8, 4\) \(real_data: the half modes"):
            plan.execute(np.ones((8, 6), np.complex64))  # the full modes
        with pytest.raises(TypeError, match="complex64 was expected"):
            plan.execute(np.ones((8, 4), np.float32))
        with pytest.raises(TypeError, match="float32 was expected"):
            plan.execute(np.ones((8, 4), np.complex64), out=np.empty(5, np.complex64))
        assert plan.execute(np.ones((8, 4), np.complex64)).dtype == np.float32


def test_refused_with_type3_and_spreadinterponly_fake(fake):
    with pytest.raises(warpfft.UnsupportedError):
        warpfft.Plan(3, 2, real_data=True)
    with pytest.raises(warpfft.UnsupportedError):
        warpfft.Plan(1, (16, 16), real_data=True, gpu_spreadinterponly=1)
    with pytest.raises(ValueError):
        warpfft.Plan(1, 16, real_data=2)  # the option table's bounds


def test_one_call_functions_fake(fake):
    rng = np.random.default_rng(3)
    M = 7
    x, y = _points(rng, 2, M, np.float64)
    c = rng.uniform(-1, 1, (2, M))
    f = warpfft.nufft2d1(x, y, c, (6, 9), eps=1e-9, real_data=True)
    assert f.shape == (2, 6, 5) and f.dtype == np.complex128
    assert rel_err(f, exact_real1((x, y), c, (6, 9))) < 1e-12
    # type 2 from the half modes: N = 2H - 1 planned, the same values as any N with N//2+1 = H
    u = warpfft.nufft2d2(x, y, f, eps=1e-9, real_data=True)
    assert u.shape == (2, M) and u.dtype == np.float64
    assert fake.opts_seen[-1]["real_data"] == 1
    assert rel_err(u, exact_real2((x, y), f, (6, 9))) < 1e-12
    assert rel_err(u, exact_real2((x, y), f, (6, 8))) < 1e-12
    # type 1 with out: n_modes from out's half shape, or as given
    out = np.empty((2, 6, 5), np.complex128)
    assert warpfft.nufft2d1(x, y, c, out=out, eps=1e-9, real_data=True) is out
    assert rel_err(out, exact_real1((x, y), c, (6, 8))) < 1e-12
    x1 = x.astype(np.float32)
    f1 = warpfft.nufft1d1(x1, c[0].astype(np.float32), 10, real_data=True)
    assert f1.shape == (6,) and f1.dtype == np.complex64
    with pytest.raises(TypeError, match="real_data=True: type 1 takes real data"):
        warpfft.nufft1d1(x, c[0].astype(np.complex128), 10, real_data=True)
    with pytest.raises(TypeError, match="dtype"):
        warpfft.nufft1d1(x1, c[0].astype(np.float64), 10, real_data=True)  # float32 points


def test_cufinufft_stand_in_fake(fake):
    from warpfft import cufinufft

    rng = np.random.default_rng(4)
    x, y, z = _points(rng, 3, 6, np.float32)
    c = rng.uniform(-1, 1, 6).astype(np.float32)
    plan = cufinufft.Plan(1, (4, 5, 6), eps=1e-6, dtype="complex64", real_data=True)
    plan.setpts(x, y, z)
    f = plan.execute(c)
    assert f.shape == (4, 5, 4)
    assert rel_err(f, exact_real1((x, y, z), c, (4, 5, 6))) < 1e-5
    f3 = cufinufft.nufft3d1(x, y, z, c, (4, 5, 6), real_data=True)
    assert rel_err(f3, f) < 1e-6


def test_frameworks_refuse_real_data():
    """warpfft.jax and warpfft.torch do not take real data yet: a clear error, never complex
    buffers read as real ones."""
    try:
        from warpfft.jax import options
    except ImportError:
        pytest.skip("jax is not installed")
    with pytest.raises(ValueError, match="real_data=1 is not supported"):
        options.resolve({"real_data": 1}, 2)


# ---- on a GPU ----

@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("type_", [1, 2])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_gpu(dim, type_, dtype):
    require_gpu()
    rng = np.random.default_rng(dim + 10 * type_)
    eps = 1e-5 if dtype == np.complex64 else 1e-10
    big = {1: [(64,), (65,)], 2: [(24, 32), (25, 31)], 3: [(10, 12, 16), (11, 12, 15)]}
    for n_modes in big[dim]:
        for modeord in (0, 1):
            for method in ((1, 2, 3) if type_ == 1 else (1, 2)):
                out, want, info = _run(type_, n_modes, 500, 2, dtype, eps, modeord, rng,
                                       gpu_method=method)
                bound = max(info["tol"], info["tol_floor"])
                err = rel_err(out, want)
                assert err <= bound, (n_modes, modeord, method, err, bound)


def test_one_call_and_device_arrays_gpu():
    require_gpu()
    rng = np.random.default_rng(5)
    x, y = _points(rng, 2, 400, np.float64)
    c = rng.uniform(-1, 1, 400)
    f = warpfft.nufft2d1(x, y, c, (20, 17), eps=1e-10, real_data=True)
    assert f.shape == (20, 9)
    assert rel_err(f, exact_real1((x, y), c, (20, 17))) <= 1e-10
    u = warpfft.nufft2d2(x, y, f, eps=1e-10, real_data=True)
    assert rel_err(u, exact_real2((x, y), f, (20, 17))) <= 1e-10
    cp = pytest.importorskip("cupy", reason="cupy not installed")
    with warpfft.Plan(2, (20, 17), eps=1e-10, dtype="complex128", real_data=True) as plan:
        plan.setpts(cp.asarray(x), cp.asarray(y))
        ud = plan.execute(cp.asarray(f))
        assert ud.dtype == np.float64
        assert rel_err(cp.asnumpy(ud), u) <= 1e-9
