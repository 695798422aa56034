"""What the scale-out workers (scripts/scaleout_jax_worker.py, scripts/scaleout_torch_worker.py)
share: this process's rank and the world size (torchrun's variables RANK and WORLD_SIZE), the
comparison with the one-device run, the global data every process draws from one seed, this
process's shard of it, and the loop that runs the worker's checks."""

import os
import sys
import traceback

import numpy as np

RANK, N = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def _host(a):
    """a (a torch tensor, a jax or numpy array) as a numpy array on the host."""
    if hasattr(a, "detach"):
        a = a.detach().cpu()
    return np.asarray(a)


def relerr(a, b):
    a, b = _host(a), _host(b)
    return np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel())


def close(a, b, tol, what):
    e = relerr(a, b)
    assert e < tol, f"{what}: relative difference {e:.3g} to the one-device run (tol {tol})"


def draw(M, dim, lead=(), seed=0):
    """The global points (dim, M), uniform on [-pi, pi), and complex strengths (*lead, M), in
    double (every process draws the same from the seed)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-np.pi, np.pi, (dim, M))
    c = rng.standard_normal(lead + (M,)) + 1j * rng.standard_normal(lead + (M,))
    return x, c


def mine(a):
    """This process's shard of the last axis."""
    m = a.shape[-1] // N
    return a[..., RANK * m:(RANK + 1) * m]


def run_checks(names):
    """Runs each check_* function of the worker's globals `names`, printing
    "PASS <check> (rank <r>)" or "FAIL <check> (rank <r>): <traceback>"; the count failed."""
    failed = 0
    for name in [n for n in names if n.startswith("check_")]:
        try:
            names[name]()
            sys.stdout.write(f"PASS {name} (rank {RANK})\n")  # one write: ranks interleave
            sys.stdout.flush()
        except Exception:
            failed += 1
            sys.stdout.write(f"FAIL {name} (rank {RANK}): {traceback.format_exc()}\n")
            sys.stdout.flush()
    return failed
