"""The reference library's errors on suite B's cases, per GPU method: the column the performance
table needs beside its times (peer_bench.sh times the reference with its perftest, which reports
no error).

Runs the reference's own Python package (cufinufft, from the tree peer_prep.sh exports) against
the library peer_bench.sh built, in a process of its own (warpfft's drop-in is not installed
here), on uniform random points; the error is the relative l2 against exact sums at stratified
outputs (1024, fewer for the largest cases), as suite B measures ours. The exact sums run on the
GPU in f64 with cupy, shared by the methods of a case.

    python3 python/bench/peer_errors.py --lib /tmp/peerbuild/libcufinufft.so \\
        --pkg .peer/python/cufinufft [--cases B1 B4 ...] [--json out.json]

--module finufft --cpu runs the same with the CPU finufft package and numpy (a check of this
script on a machine without GPU, at small sizes: --scale 1e-3).
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np

from _bench import write_json

# name: (precision, type, modes, M, tol, ntransf, reference methods); suite B's cases, as
# ../shared/tools/peer_bench.sh lists them
CASES = {
    "B1": ("f", 1, (1000000,), 1e7, 1e-5, 1, (1, 2, 3)),
    "B2": ("f", 1, (1024, 1024), 1e7, 1e-5, 1, (1, 2, 3)),
    "B3": ("f", 2, (1024, 1024), 1e7, 1e-5, 1, (1, 2)),
    "B4": ("f", 1, (128, 128, 128), 1e7, 1e-5, 1, (1, 2, 3)),
    "B5": ("f", 2, (128, 128, 128), 1e7, 1e-5, 1, (1, 2)),
    "B6": ("d", 1, (1024, 1024), 1e7, 1e-9, 1, (1, 2, 3)),
    "B7": ("d", 1, (128, 128, 128), 1e7, 1e-9, 1, (1, 2, 3)),
    "B8": ("d", 2, (128, 128, 128), 1e7, 1e-9, 1, (1, 2)),
    "B9": ("f", 1, (256, 256), 1e6, 1e-5, 8, (1, 2, 3)),
    "B1m": ("f", 1, (1000000,), 1e7, 1e-6, 1, (1, 2, 3)),
    "B2m": ("f", 1, (1024, 1024), 1e7, 1e-6, 1, (1, 2, 3)),
    "B3m": ("f", 2, (1024, 1024), 1e7, 1e-6, 1, (1, 2)),
    "B4m": ("f", 1, (128, 128, 128), 1e7, 1e-6, 1, (1, 2, 3)),
    "B5m": ("f", 2, (128, 128, 128), 1e7, 1e-6, 1, (1, 2)),
    "D1t1": ("d", 1, (256, 256, 256), 1.7e6, 1e-6, 1, (1, 3)),
    "D1t2": ("d", 2, (256, 256, 256), 1.7e6, 1e-6, 1, (1, 2)),
    "D2t1": ("d", 1, (256, 256, 256), 1.7e7, 1e-6, 1, (1, 3)),
    "D2t2": ("d", 2, (256, 256, 256), 1.7e7, 1e-6, 1, (1, 2)),
    "D3t1": ("d", 1, (256, 256, 256), 1.7e8, 1e-6, 1, (1, 3)),
    "D3t2": ("d", 2, (256, 256, 256), 1.7e8, 1e-6, 1, (1, 2)),
}
METHOD = {1: "GM", 2: "SM", 3: "OD", 4: "4"}


def load_reference(lib, pkg, module):
    """The reference package `module` importable from a private copy of `pkg` holding `lib`."""
    if lib:
        tmp = tempfile.mkdtemp(prefix="peer_py_")
        shutil.copytree(os.path.join(pkg, module), os.path.join(tmp, module))
        shutil.copy(lib, os.path.join(tmp, module, os.path.basename(lib)))
        sys.path.insert(0, tmp)
    elif pkg:
        sys.path.insert(0, pkg)
    return __import__(module)


def exact_sums(xp, ty, pts, data, n_modes, out_idx, budget=2**27):
    """f64 exact sums at the sampled outputs. Type 1: data (M,) strengths, out_idx (S, dim) mode
    indices (CMCL order, k = idx - N//2), sign -1. Type 2: data the mode array, out_idx (S,)
    point indices, sign +1. Chunked so that one block holds at most `budget` phases."""
    dim = len(n_modes)
    if ty == 1:
        k = xp.asarray(out_idx, dtype=xp.float64) - xp.asarray([n // 2 for n in n_modes])
        m = pts[0].shape[0]
        step = max(1, budget // max(1, k.shape[0]))
        out = xp.zeros(k.shape[0], dtype=xp.complex128)
        for a in range(0, m, step):
            ph = sum(k[:, d:d + 1] * pts[d][None, a:a + step].astype(xp.float64)
                     for d in range(dim))
            out += xp.exp(-1j * ph) @ data[a:a + step].astype(xp.complex128)
        return out
    x = [p[out_idx].astype(xp.float64) for p in pts]  # (S,) per dim
    f = data.astype(xp.complex128)
    # one mode axis at a time, the rest summed as a matrix product over the flattened slab
    ks = [xp.arange(-(n // 2), n - n // 2, dtype=xp.float64) for n in n_modes]
    e = [xp.exp(1j * kd[None, :] * xd[:, None]) for kd, xd in zip(ks, x)]  # (S, N_d)
    if dim == 1:
        return e[0] @ f
    if dim == 2:
        return xp.einsum("sa,ab,sb->s", e[0], f, e[1])
    out = xp.zeros(len(out_idx), dtype=xp.complex128)
    for s0 in range(0, len(out_idx), 64):  # 3D: (64, N1) x (N1, N2, N3) per block of outputs
        sl = slice(s0, s0 + 64)
        t = xp.einsum("sa,abc->sbc", e[0][sl], f)
        out[sl] = xp.einsum("sbc,sb,sc->s", t, e[1][sl], e[2][sl])
    return out


def run_case(ref, xp, name, case, samples, scale, seed, cpu):
    prec, ty, n_modes, m, tol, nt, methods = case
    m = max(1, int(m * scale))
    if scale != 1.0:
        n_modes = tuple(max(8, int(round(n * scale ** (1 / len(n_modes))))) for n in n_modes)
    rdt = np.float32 if prec == "f" else np.float64
    cdt = np.complex64 if prec == "f" else np.complex128
    rng = np.random.default_rng(seed)
    pts = [xp.asarray(rng.uniform(-np.pi, np.pi, m).astype(rdt)) for _ in n_modes]
    if ty == 1:
        data = (rng.standard_normal((nt, m)) + 1j * rng.standard_normal((nt, m))).astype(cdt)
        s = min(samples, int(np.prod(n_modes)))
        out_idx = np.stack([rng.integers(0, n, s) for n in n_modes], axis=1)
    else:
        shape = (nt,) + tuple(n_modes)
        data = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cdt)
        out_idx = np.sort(rng.choice(m, size=min(samples, m), replace=False))
    data = xp.asarray(data)
    exact = exact_sums(xp, ty, pts, data[0], n_modes, out_idx)
    rows = []
    for meth in methods:
        kw = {} if cpu else {"gpu_method": meth}
        try:
            # the signs exact_sums uses, given (the Python packages' defaults differ by type)
            plan = ref.Plan(ty, n_modes, nt, tol, isign=-1 if ty == 1 else 1, dtype=cdt, **kw)
            plan.setpts(*pts)
            got = plan.execute(data if nt > 1 else data[0])
            got = got.reshape((nt,) + got.shape[-(len(n_modes) if ty == 1 else 1):])[0]
            approx = got[tuple(xp.asarray(out_idx).T)] if ty == 1 else got[out_idx]
            err = float(xp.linalg.norm(approx - exact) / xp.linalg.norm(exact))
            rows.append({"case": name, "method": METHOD[meth], "rel_err": err, "tol": tol,
                         "samples": int(len(out_idx)), "M": m, "n_modes": list(n_modes)})
        except Exception as e:  # noqa: BLE001 (a method the reference refuses: its message)
            rows.append({"case": name, "method": METHOD[meth], "error": str(e)[:200]})
        if cpu:
            break
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--lib", help="the reference's libcufinufft.so (peer_bench.sh's build)")
    ap.add_argument("--pkg", help="the folder that holds the reference's Python package")
    ap.add_argument("--module", default="cufinufft")
    ap.add_argument("--cpu", action="store_true", help="numpy and a CPU package (a self-check)")
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--samples", type=int, default=1024)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies M and the mode count")
    ap.add_argument("--json")
    a = ap.parse_args()
    ref = load_reference(a.lib, a.pkg, a.module)
    if a.cpu:
        xp = np
    else:
        import cupy as xp
    rows = []
    print("| case | method | rel. error | tol | outputs |")
    print("|---|---|---|---|---|")
    for i, name in enumerate(a.cases):
        if name not in CASES:  # suite B's rows without a reference column (R*, C*, T*)
            continue
        case = CASES[name]
        # the 1.7e8-point rows: 256 outputs keep their exact sums to a few seconds
        samples = 256 if case[3] > 1e8 else a.samples
        for r in run_case(ref, xp, name, case, samples, a.scale, 100 + i, a.cpu):
            rows.append(r)
            if "error" in r:
                print(f"| {name} | {r['method']} | refused: {r['error']} | {case[4]:.0e} | |")
            else:
                print(f"| {name} | {r['method']} | {r['rel_err']:.2e} | {r['tol']:.0e} | "
                      f"{r['samples']} |", flush=True)
    write_json(a.json, rows)


if __name__ == "__main__":
    main()
