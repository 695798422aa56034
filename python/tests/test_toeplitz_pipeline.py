"""The Toeplitz operator's GPU pipeline, run on the CPU: kernels/toeplitz.cu compiled as host C++
(a thin shim for the CUDA built-ins: its kernels have no barriers, shared memory or warp
operations, so running every thread of every block in turn is exact), and cuFFT's plans
emulated with numpy from the exact advanced-layout parameters c_core/src/plans/toeplitz.c
gives cufftMakePlanMany64 (step plans over the batch-interleaved grid). The application --
pad, forward steps, product, inverse steps, crop -- and the spectrum's extraction are checked
against a dense A^H W A, for dims 1-3, batches, both mode orders, real and complex spectra,
T and T^H, and grids with odd N. A layout, stride or scaling mistake gives O(1) errors here,
before any GPU time is spent. Needs g++ (skips without it).
"""

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SHIM = r"""
#include <cmath>
#include <cstdint>
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct float2 { float x, y; };
struct double2 { double x, y; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
template <class T> static T __ldg(const T *p) { return *p; }
static double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
static float __fdividef(float a, float b) { return a / b; }
static float atomicAdd(float *p, float v) { float o = *p; *p += v; return o; }
static double atomicAdd(double *p, double v) { double o = *p; *p += v; return o; }
static void atomicAdd(float2 *p, float2 v) { p->x += v.x; p->y += v.y; }
static inline float2 make_float2(float x, float y) { return {x, y}; }
"""

HARNESS = r"""
#include "toeplitz.cu"
template <class F> static void run(unsigned grid, F f) {
    blockDim.x = 256; gridDim.x = grid;
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < 256; t++) { blockIdx.x = b; threadIdx.x = t; f(); }
}
#define EDGE(name, prec)                                                                      \
    extern "C" void host_##name##_##prec(unsigned grid, int dim, long long N1, long long N2,   \
                                         long long N3, long long L1, long long L2,             \
                                         long long L3, long long B, int modeord,               \
                                         const void *from, void *to) {                         \
        run(grid, [&] { wf_toep_##name##_##prec(dim, N1, N2, N3, L1, L2, L3, B, modeord,       \
                                                (const wf_cplx *)from, (wf_cplx *)to); });     \
    }
EDGE(pad, PSUF)
EDGE(crop, PSUF)
extern "C" void host_mulr(unsigned grid, long long P, long long Lo, long long B, const void *s,
                          void *g) {
    run(grid, [&] { WF_PNAME(toep_mulr)(P, Lo, B, (const wf_real *)s, (wf_cplx *)g); });
}
extern "C" void host_mulc(unsigned grid, long long P, long long Lo, long long B, int conj,
                          const void *s, void *g) {
    run(grid, [&] { WF_PNAME(toep_mulc)(P, Lo, B, conj, (const wf_cplx *)s, (wf_cplx *)g); });
}
extern "C" void host_spectrum(unsigned grid, long long n, double scale, int real,
                              const void *in, void *out) {
    run(grid, [&] { WF_PNAME(toep_spectrum)(n, (wf_real)scale, real, (const wf_cplx *)in, out); });
}
extern "C" void host_weights(unsigned grid, long long M, const void *w, void *c) {
    run(grid, [&] { WF_PNAME(toep_weights)(M, (const wf_real *)w, (wf_cplx *)c); });
}
"""


def _build(tmp, prec):
    gxx = shutil.which("g++")
    if not gxx:
        pytest.skip("g++ not found")
    d = tmp / f"p{prec}"
    d.mkdir()
    (d / "cuda_shim.h").write_text(SHIM)
    src = d / "harness.cpp"
    # PSUF expands inside EDGE's token pasting only through one more macro level
    text = HARNESS.replace("EDGE(pad, PSUF)", f"EDGE(pad, f{prec})")
    text = text.replace("EDGE(crop, PSUF)", f"EDGE(crop, f{prec})")
    src.write_text('#include "cuda_shim.h"\n' + text)
    so = d / "libtoep.so"
    r = subprocess.run([gxx, "-std=c++17", "-O1", "-shared", "-fPIC", f"-DWF_PREC={prec}",
                        "-I", str(d), "-I", os.path.join(REPO, "kernels"), str(src), "-o",
                        str(so)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return ctypes.CDLL(str(so))


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("toeplitz_host")
    return {32: _build(tmp, 32), 64: _build(tmp, 64)}


def _smooth_even(n):
    n = max(n, 2)
    while True:
        m = n
        for p in (2, 3, 5, 7):
            while m % p == 0:
                m //= p
        if m == 1 and n % 2 == 0:
            return n
        n += 1


def _cufft(data, rank, n, embed, stride, dist, batch, direction):
    """cufftExecC2C/Z2Z in place on the flat array `data` for a plan made by
    cufftMakePlanMany64(rank, n (slowest first), inembed = embed, istride = stride,
    idist = dist, batch): element x of transform b at
    b*dist + stride*sum_d x_d prod_{d'>d} embed[d']. Forward: e^-; inverse: e^+,
    unnormalised."""
    n = list(n)
    offs = np.zeros(n, np.int64)
    inner = 1
    for d in range(rank - 1, -1, -1):
        shape = [1] * rank
        shape[d] = n[d]
        offs = offs + np.arange(n[d]).reshape(shape) * inner
        inner *= embed[d]
    idx = np.arange(batch).reshape((batch,) + (1,) * rank) * dist + stride * offs[None]
    assert len(np.unique(idx)) == idx.size, "a plan whose transforms overlap"
    x = data[idx]
    axes = tuple(range(1, 1 + rank))
    y = np.fft.fftn(x, axes=axes) if direction < 0 else np.fft.ifftn(x, axes=axes) * np.prod(n)
    data[idx] = y


def _steps(dim, N, L, B, steps):
    """make_ffts' plans (c_core/src/plans/toeplitz.c), transcribed: (rank, n, embed, stride,
    dist, batch) of each step: one plan of the grid, or (dim >= 2, steps 2) the pruned pair."""
    if dim == 1:
        return [(1, [L[0]], [L[0]], 1, L[0], B)]
    if steps == 1 and dim == 2:
        return [(2, [L[1], L[0]], [L[1], B * L[0]], 1, L[0], B)]
    if steps == 1:
        return [(3, [L[2], L[1], L[0]], [L[2], B * L[1], L[0]], 1, L[0] * L[1], B)]
    if dim == 2:
        return [(1, [L[0]], [L[0]], 1, L[0], N[1] * B),
                (1, [L[1]], [L[1]], B * L[0], 1, B * L[0])]
    return [(2, [L[1], L[0]], [L[1], L[0]], 1, L[0] * L[1], N[2] * B),
            (1, [L[2]], [L[2]], B * L[0] * L[1], 1, B * L[0] * L[1])]


def _blocks(n):
    return max(1, min(-(-n // 256), 132 * 32))


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def pipeline(lib, prec, dim, N, B, modeord, spectrum, real, adjoint, f, fft_steps):
    """warpfft_toeplitz_apply_spectrum's steps (wf_toeplitz_apply) on the host. N, the
    spectrum and f in the C order (dimension 1 fastest; numpy shapes reversed)."""
    cdt = np.complex64 if prec == 32 else np.complex128
    L = [_smooth_even(2 * n - 1) for n in N] + [1] * (3 - dim)
    N = list(N) + [1] * (3 - dim)
    Lp, Np = int(np.prod(L)), int(np.prod(N))
    g = np.full(B * Lp, np.nan + 1j * np.nan, cdt)  # pad must write every element
    fin = np.ascontiguousarray(f, cdt).ravel()
    out = np.zeros(B * Np, cdt)
    ll = ctypes.c_longlong
    edge = [ctypes.c_int(dim)] + [ll(v) for v in N + L] + [ll(B), ctypes.c_int(modeord)]
    chunks = -(-L[0] // 256)
    getattr(lib, f"host_pad_f{prec}")(_blocks(B * L[1] * L[2] * chunks * 256), *edge, _ptr(fin),
                                      _ptr(g))
    assert not np.isnan(g).any(), "pad left grid elements unwritten"
    steps = _steps(dim, N, L, B, fft_steps)
    for st in steps:
        _cufft(g, *st, -1)
    P = L[0] if dim <= 2 else L[0] * L[1]
    Lo = 1 if dim == 1 else (L[1] if dim == 2 else L[2])
    s = np.ascontiguousarray(spectrum).ravel()
    if real:
        lib.host_mulr(_blocks(Lp), ll(P), ll(Lo), ll(B), _ptr(s), _ptr(g))
    else:
        lib.host_mulc(_blocks(Lp), ll(P), ll(Lo), ll(B), ctypes.c_int(int(adjoint)), _ptr(s),
                      _ptr(g))
    for st in reversed(steps):
        _cufft(g, *st, +1)
    getattr(lib, f"host_crop_f{prec}")(_blocks(B * Np), *edge, _ptr(g), _ptr(out))
    return out.reshape((B,) + tuple(N[:dim][::-1]))


def _k(n, modeord):
    return (np.fft.fftfreq(n) * n).astype(int) if modeord else np.arange(-(n // 2), n - n // 2)


def kernel_spectrum(lib, prec, dim, N, pts, w, iflag, real):
    """The spectrum as toeplitz_kernel.c makes it: K on the L grid in FFT order (what the
    kernel's type-1 transform writes; exact here), a forward FFT of the whole grid, then the
    spectrum kernel (scaled real part or copy). C order throughout."""
    cdt = np.complex64 if prec == 32 else np.complex128
    L = [_smooth_even(2 * n - 1) for n in N]
    s = -1 if iflag >= 0 else 1
    K = np.zeros(L[::-1], np.complex128)
    for j in range(len(pts[0])):
        e = 1.0
        for d in range(dim):
            m = np.fft.fftfreq(L[d]) * L[d]
            e = np.multiply.outer(np.exp(1j * s * m * pts[d][j]), e)
        K += w[j] * e
    grid = K.astype(cdt).ravel()
    _cufft(grid, dim, L[::-1], L[::-1], 1, int(np.prod(L)), 1, -1)
    out = np.zeros(grid.size, (np.float32 if prec == 32 else np.float64) if real else cdt)
    lib.host_spectrum(_blocks(grid.size), ctypes.c_longlong(grid.size),
                      ctypes.c_double(1.0 / grid.size), ctypes.c_int(int(real)), _ptr(grid),
                      _ptr(out))
    return out.reshape(L[::-1])


def dense(f, pts, w, iflag, modeord, adjoint):
    """A^H W A on C-order mode arrays f (B, N_dim, .., N_1), pts in the C order."""
    N = f.shape[1:][::-1]
    grids = np.meshgrid(*[_k(n, modeord) for n in N[::-1]], indexing="ij")  # numpy axes
    ph = sum(g.ravel()[None, :] * np.asarray(p)[:, None]
             for g, p in zip(grids, pts[::-1]))  # numpy axis i <-> C dim dim-1-i
    A = np.exp(1j * (1 if iflag >= 0 else -1) * ph)
    ww = np.conj(w) if adjoint else w
    fl = f.reshape(f.shape[0], -1).astype(np.complex128)
    return (((fl @ A.T) * ww) @ np.conj(A)).reshape(f.shape)


CASES = [(1, (19,), 2), (1, (16,), 1), (2, (12, 7), 3), (2, (5, 8), 1), (3, (6, 5, 4), 2),
         (3, (3, 4, 5), 1)]


@pytest.mark.parametrize("dim,N,B", CASES)
@pytest.mark.parametrize("prec", [32, 64])
@pytest.mark.parametrize("weights", ["real", "complex"])
@pytest.mark.parametrize("fft_steps", [1, 2], ids=["full", "pruned"])
def test_pipeline_against_dense(libs, dim, N, B, prec, weights, fft_steps):
    if dim == 1 and fft_steps == 2:
        pytest.skip("1D has one plan")
    rng = np.random.default_rng(dim * 10 + B)
    M = 23
    pts = [rng.uniform(-np.pi, np.pi, M) for _ in range(dim)]
    if weights == "real":
        w = rng.uniform(0.2, 2.0, M)
    else:
        w = rng.uniform(0.2, 2.0, M) * np.exp(1j * rng.uniform(0, 6, M))
    f = rng.standard_normal((B,) + N[::-1]) + 1j * rng.standard_normal((B,) + N[::-1])
    tol = 2e-5 if prec == 32 else 1e-12
    for iflag, modeord, adjoint in ((-1, 0, False), (1, 1, True), (1, 0, True), (-1, 1, False)):
        S = kernel_spectrum(libs[prec], prec, dim, list(N), pts, w, iflag, weights == "real")
        got = pipeline(libs[prec], prec, dim, list(N), B, modeord, S, weights == "real",
                       adjoint, f, fft_steps)
        want = dense(f, pts, w, iflag, modeord, adjoint)
        err = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert err < tol, (iflag, modeord, adjoint, err)


def test_weights_kernel(libs):
    w = np.array([0.5, 2.0, -1.0])
    c = np.zeros(3, np.complex128)
    libs[64].host_weights(1, ctypes.c_longlong(3), _ptr(w), _ptr(c))
    assert np.array_equal(c, w.astype(np.complex128))
    libs[64].host_weights(1, ctypes.c_longlong(3), None, _ptr(c))
    assert np.array_equal(c, np.ones(3))
