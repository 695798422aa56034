"""Test aid shared by the warpfft.torch test files (test_torch.py, test_torch_autograd.py,
test_torch_op_path.py): the module-level skips (no library: _support's; no PyTorch), torch set
to one intra-op thread, the skip for a missing GPU, and random points and strengths as tensors
with their numpy twins for the exact sums. Import it before warpfft: without a library,
warpfft cannot be imported, and the importing test file is skipped here instead.
"""

import numpy as np
import pytest
from _support import gpu_status

torch = pytest.importorskip("torch", reason="PyTorch is not installed: warpfft.torch tests "
                            "skipped")

# The tensors here are tiny: torch's intra-op threads only spin, and on 2 busy cores made the CPU
# gradchecks ~8x slower (110 s against 14 s).
torch.set_num_threads(1)


def require_cuda(n=1):
    reason = gpu_status()
    if reason is not None:
        pytest.skip(f"no GPU: {reason}")
    if not torch.cuda.is_available() or torch.cuda.device_count() < n:
        pytest.skip(f"no GPU: torch sees {torch.cuda.device_count()} CUDA device(s), this test "
                    f"needs {n}")


def data(rng, dim, M, batch=(), real=torch.float64, device="cuda"):
    """(points (dim, M), strengths batch + (M,), their numpy twins): uniform points in
    [-pi, pi), complex normal strengths."""
    pts = rng.uniform(-np.pi, np.pi, (dim, M))
    c = rng.standard_normal(batch + (M,)) + 1j * rng.standard_normal(batch + (M,))
    cplx = torch.complex64 if real == torch.float32 else torch.complex128
    tp = torch.tensor(pts, dtype=real, device=device)
    tc = torch.tensor(c, dtype=cplx, device=device)
    return tp, tc, tp.cpu().double().numpy(), c


def data3(rng, dim, M, K, batch=(), real=torch.float64, device="cuda"):
    """data's points and strengths, then type 3's targets (dim, K) in [-8, 8); each with its
    numpy twin."""
    p, v, pn, vn = data(rng, dim, M, batch, real, device)
    tn = rng.uniform(-8, 8, (dim, K))
    return p, v, torch.tensor(tn, dtype=real, device=device), pn, vn, tn
