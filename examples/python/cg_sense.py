"""CG-SENSE on multi-coil 2D radial data: the normal operator E^H W E applied by a Toeplitz
embedding (warpfft.Toeplitz: one FFT pair per iteration) and by the NUFFT pair (type 2,
density weights, type 1 per iteration), the same conjugate gradients on both; time per
iteration and the residual of each. torch CUDA tensors; made-up coil sensitivities."""
import time

import numpy as np
import warpfft

N, COILS, SPOKES, READOUT, ITERS, EPS = 256, 8, 402, 512, 15, 1e-5
try:
    import torch

    warpfft.init(0)
except (ImportError, warpfft.NoGpuError) as e:
    print(f"no GPU, nothing to run: {e}")
    raise SystemExit(0) from None
if not torch.cuda.is_available():
    print("no GPU, nothing to run: torch has no CUDA device")
    raise SystemExit(0)
dev = "cuda"

# ---- the operator against a direct sum on a small problem ---------------------------------
rng = np.random.default_rng(0)
x, y = rng.uniform(-np.pi, np.pi, (2, 300))
w = rng.uniform(0.5, 1.5, 300)
f = rng.standard_normal((16, 16)) + 1j * rng.standard_normal((16, 16))
k = np.arange(-8, 8)
A = np.exp(-1j * (k[:, None, None] * x + k[None, :, None] * y)).reshape(256, 300).T  # isign -1
direct = (np.conj(A).T @ (w * (A @ f.ravel()))).reshape(16, 16)  # A^H W A f, exactly
small = warpfft.Toeplitz((16, 16), x, y, weights=w, eps=1e-9, dtype="complex128")
err = np.linalg.norm(small(f) - direct) / np.linalg.norm(direct)
print(f"Toeplitz operator vs the direct sum A^H W A f (16x16, M = 300): rel err {err:.1e}")
assert err < 1e-8

# ---- the scan: radial trajectory, density compensation, coils, phantom, data ---------------
ang = np.arange(SPOKES) * np.pi / SPOKES
r = np.linspace(-np.pi, np.pi, READOUT, endpoint=False)
kx = torch.tensor((np.cos(ang)[:, None] * r).ravel(), dtype=torch.float32, device=dev)
ky = torch.tensor((np.sin(ang)[:, None] * r).ravel(), dtype=torch.float32, device=dev)
dcf = torch.tensor(np.tile(np.maximum(np.abs(r), np.pi / READOUT) / np.pi, SPOKES),
                   dtype=torch.float32, device=dev)
g = np.linspace(-1, 1, N)
X, Y = np.meshgrid(g, g, indexing="ij")
phantom = ((X / 0.7) ** 2 + (Y / 0.9) ** 2 < 1) * 1.0 - 0.6 * ((X / 0.3) ** 2 + (Y / 0.5) ** 2 < 1)
coil_ang = 2 * np.pi * np.arange(COILS) / COILS
maps = np.stack([np.exp(-((X - 1.2 * np.cos(a)) ** 2 + (Y - 1.2 * np.sin(a)) ** 2))
                 * np.exp(1j * (a + 2 * X * np.sin(a))) for a in coil_ang])
maps /= np.sqrt(np.sum(np.abs(maps) ** 2, axis=0))
S = torch.tensor(maps, dtype=torch.complex64, device=dev)
x_true = torch.tensor(phantom, dtype=torch.complex64, device=dev)
A2 = warpfft.Plan(2, (N, N), n_trans=COILS, eps=EPS, isign=-1)  # E: coils, then type 2
A1 = warpfft.Plan(1, (N, N), n_trans=COILS, eps=EPS, isign=+1)  # E^H: type 1, then coils
A2.setpts(kx, ky)
A1.setpts(kx, ky)
data = A2.execute(S * x_true)
data += 1e-3 * torch.randn_like(data) * data.abs().max()
b = torch.sum(S.conj() * A1.execute(dcf * data), dim=0)  # E^H W y


def normal_pair(v, u=torch.empty((COILS, SPOKES * READOUT), dtype=torch.complex64, device=dev),
                img=torch.empty((COILS, N, N), dtype=torch.complex64, device=dev)):
    A2.execute(S * v, out=u)
    A1.execute(u.mul_(dcf), out=img)
    return torch.sum(S.conj() * img, dim=0)


T = warpfft.Toeplitz((N, N), kx, ky, weights=dcf, n_trans=COILS, eps=EPS, isign=-1)


def normal_toeplitz(v):
    return torch.sum(S.conj() * T(S * v), dim=0)


def cg(normal, iters):
    """Conjugate gradients on (E^H W E) x = E^H W y, no host sync inside the loop."""
    x = torch.zeros_like(b)
    r, p = b.clone(), b.clone()
    rr = torch.vdot(r.ravel(), r.ravel()).real
    for _ in range(iters):
        q = normal(p)
        alpha = rr / torch.vdot(p.ravel(), q.ravel()).real
        x += alpha * p
        r -= alpha * q
        rr_new = torch.vdot(r.ravel(), r.ravel()).real
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


results = {}
for name, normal in (("NUFFT pair", normal_pair), ("Toeplitz", normal_toeplitz)):
    cg(normal, 2)  # warm up
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    sol = cg(normal, ITERS)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / ITERS
    res = (torch.linalg.norm(b - normal_pair(sol)) / torch.linalg.norm(b)).item()
    results[name] = (ms, res, sol)
    print(f"{name:10}: {ms:7.3f} ms per iteration, residual after {ITERS} iterations {res:.3e}")
(mp, rp, xp), (mt, rt, xt) = results["NUFFT pair"], results["Toeplitz"]
diff = (torch.linalg.norm(xt - xp) / torch.linalg.norm(xp)).item()
print(f"Toeplitz is {mp / mt:.1f}x faster per iteration; the two images differ by {diff:.1e} "
      f"(relative); operator memory {T.info['workspace_bytes'] / 2**20:.0f} MiB, built in "
      f"{T.info['build_ms']:.1f} ms")
assert abs(rt - rp) <= 0.1 * rp + 1e-4, (rp, rt)
