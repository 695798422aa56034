"""Toeplitz normal operator benchmark (issue 33): one application of T = A^H W A by
warpfft.Toeplitz against type 2 + weights + type 1 with warpfft's plans (the NUFFT pair), GPU
time per application (CUDA events around `--reps` back-to-back calls, median of 3 rounds), the
relative l2 error of T f against the pair at tol/100 (f64 plans), the kernel's build time
against one type 1 (set-points + execute, warm plan cache) with where the build spent it
(warpfft_runtime_info's "toeplitz_build"), and the memory.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \\
        python python/bench/toeplitz.py [E1 E2 D3 D3x16] [--reps 50] [--json out.json]

Cases (f32, tol 1e-5): E1 2D radial 256^2, 402 spokes x 512 samples (M = 205,824) with a ramp
density compensation; E2 = E1 batched over 16 coils; D3 3D 128^3, M = 2e6 uniform, no
weights; D3x16 = D3 batched over 16. The calls go to the C ABI directly (ctypes, torch CUDA
tensors on the legacy stream), so the times are the library's, not Python's. Targets
(issue 33, H100): T >= 4x faster than the pair on E1, E2 and D3; build <= 2x one type 1.
The application is timed with each FFT variant (WARPFFT_TOEPLITZ_FFT=full: one cuFFT plan of
the grid; pruned: two steps that skip the padding): "T ms" is the library's default choice
(`steps` says which), "full"/"pruned" both, so the size threshold can be checked.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

EPS = 1e-5


def cases():
    rng = np.random.default_rng(0)
    nspk, nrd = 402, 512
    ang = np.arange(nspk) * np.pi / nspk
    r = np.linspace(-np.pi, np.pi, nrd, endpoint=False)
    kx = (np.cos(ang)[:, None] * r[None, :]).ravel().astype(np.float32)
    ky = (np.sin(ang)[:, None] * r[None, :]).ravel().astype(np.float32)
    dcf = np.tile(np.maximum(np.abs(r), np.pi / nrd) / np.pi, nspk).astype(np.float32)
    M3 = 2_000_000
    p3 = [rng.uniform(-np.pi, np.pi, M3).astype(np.float32) for _ in range(3)]
    return {
        "E1": dict(modes=(256, 256), pts=[kx, ky], w=dcf, batch=1),
        "E2": dict(modes=(256, 256), pts=[kx, ky], w=dcf, batch=16),
        "D3": dict(modes=(128, 128, 128), pts=p3, w=None, batch=1),
        "D3x16": dict(modes=(128, 128, 128), pts=p3, w=None, batch=16),
    }


def gpu_time(torch, fn, reps):
    """Median over 3 rounds of the GPU time per call of `reps` back-to-back calls (ms)."""
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / reps)
    return statistics.median(out)


def wall(torch, fn, n=5):
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def run_case(name, c, reps, torch, warpfft, lib):
    modes, B = c["modes"], c["batch"]
    dev = "cuda"
    pts = [torch.tensor(p, device=dev) for p in c["pts"]]
    M = pts[0].numel()
    w = None if c["w"] is None else torch.tensor(c["w"], device=dev)
    rng = np.random.default_rng(1)
    shape = (B,) + modes if B > 1 else modes
    f = torch.tensor((rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                     .astype(np.complex64), device=dev)
    out = torch.empty_like(f)
    # the NUFFT pair: type 2 (isign -1), weights, type 1 (+1), sharing the points
    p2 = warpfft.Plan(2, modes, n_trans=B, eps=EPS, isign=-1, dtype="complex64")
    p1 = warpfft.Plan(1, modes, n_trans=B, eps=EPS, isign=1, dtype="complex64")
    p2.setpts(*pts)
    p1.setpts(*pts)
    u = torch.empty((B, M) if B > 1 else (M,), dtype=torch.complex64, device=dev)

    def pair():
        p2._c.execute(u.data_ptr(), f.data_ptr())
        if w is not None:
            u.mul_(w)
        p1._c.execute(u.data_ptr(), out.data_ptr())

    t_pair = gpu_time(torch, pair, reps)
    pair_out = out.clone()
    # the operator; its build (warm: the second creation of the shape), then one application
    # with the default FFT, then with each variant
    builds = []
    for _ in range(3):
        op = warpfft.Toeplitz(modes, *pts, weights=w, n_trans=B, eps=EPS, isign=-1)
        builds.append(op.info["build_ms"])
        if len(builds) < 3:
            op.close()
    t_build = statistics.median(builds[1:])
    # where the last (warm) build spent its time (warpfft_runtime_info's "toeplitz_build")
    build_parts = warpfft.runtime_info().get("toeplitz_build", {}).get("last", {})

    def timed(op):
        h = op._handle

        def toep():
            st = lib.warpfft_toeplitz_apply(h, 1, 0, f.data_ptr(), out.data_ptr())
            if st:
                raise RuntimeError(warpfft.last_error())

        return gpu_time(torch, toep, reps)

    t_toep = timed(op)
    toep_out = out.clone()
    info = op.info
    variants = {}
    for v in ("full", "pruned"):
        os.environ["WARPFFT_TOEPLITZ_FFT"] = v
        try:
            with warpfft.Toeplitz(modes, *pts, weights=w, n_trans=B, eps=EPS, isign=-1) as o:
                variants[v] = timed(o)
        finally:
            del os.environ["WARPFFT_TOEPLITZ_FFT"]
    # one type 1 of the same points and modes (set-points + execute, warm plan), wall time
    one = warpfft.Plan(1, modes, n_trans=1, eps=EPS, isign=1, dtype="complex64")
    cw = (w if w is not None else torch.ones(M, device=dev)).to(torch.complex64)
    fk1 = torch.empty(modes, dtype=torch.complex64, device=dev)

    def type1():
        one.setpts(*pts)
        one._c.execute(cw.data_ptr(), fk1.data_ptr())

    t_type1 = wall(torch, type1)
    # the error against the pair at tol/100, in f64 (the pair above at tol is shown too)
    p64 = [p.double() for p in pts]
    f64 = f.to(torch.complex128)
    r2 = warpfft.Plan(2, modes, n_trans=B, eps=EPS / 100, isign=-1, dtype="complex128")
    r1 = warpfft.Plan(1, modes, n_trans=B, eps=EPS / 100, isign=1, dtype="complex128")
    r2.setpts(*p64)
    r1.setpts(*p64)
    ref = r1.execute(r2.execute(f64) * (1 if w is None else w.double()))
    err = float(torch.linalg.norm(toep_out.to(torch.complex128) - ref) / torch.linalg.norm(ref))
    err_pair = float(torch.linalg.norm(pair_out.to(torch.complex128) - ref)
                     / torch.linalg.norm(ref))
    for p in (p2, p1, one, r2, r1):
        p.close()
    op.close()
    return dict(case=name, modes=list(modes), M=M, batch=B, pair_ms=t_pair, toeplitz_ms=t_toep,
                speedup=t_pair / t_toep, fft_steps=info["fft_steps"],
                full_ms=variants["full"], pruned_ms=variants["pruned"], build_ms=t_build,
                type1_ms=t_type1, build_over_type1=t_build / t_type1, build_parts=build_parts,
                rel_err=err,
                pair_rel_err=err_pair,
                n_grid=list(info["n_grid"]), spectrum_mb=info["spectrum_bytes"] / 2**20,
                grid_mb=info["grid_bytes"] / 2**20,
                workspace_mb=info["workspace_bytes"] / 2**20, kernel_tol=info["kernel_tol"],
                kernel_width=info["kernel_width"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", default=["E1", "E2", "D3", "D3x16"])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--cache-mb", type=int, default=4096,
                    help="WARPFFT_PLAN_CACHE_MB for this run (default 4096: the 3D kernel's "
                         "type-1 plan and fine grid, 1 GiB and more, stay cached between "
                         "builds, as they would in an application with that setting; the "
                         "library's default, 1024, rebuilds them for every operator)")
    args = ap.parse_args()
    os.environ["WARPFFT_PLAN_CACHE_MB"] = str(args.cache_mb)  # read at the first plan
    try:
        import torch
    except ImportError:
        print("no torch: this benchmark uses torch CUDA tensors and events")
        return 2
    import warpfft
    from warpfft import _lib

    if not torch.cuda.is_available():
        print("no GPU: torch has no CUDA device")
        return 2
    all_cases = cases()
    rows = []
    print(f"{'case':6} {'modes':>13} {'M':>9} {'B':>3} {'pair ms':>9} {'T ms':>8} {'x':>6} "
          f"{'steps':>5} {'full':>8} {'pruned':>8} {'build ms':>9} {'type1 ms':>9} {'ratio':>6} "
          f"{'rel err':>9} {'pair err':>9} {'spec MB':>8} {'grid MB':>8}")
    for name in args.cases:
        r = run_case(name, all_cases[name], args.reps, torch, warpfft, _lib.lib)
        rows.append(r)
        print(f"{name:6} {'x'.join(map(str, r['modes'])):>13} {r['M']:>9} {r['batch']:>3} "
              f"{r['pair_ms']:9.4f} {r['toeplitz_ms']:8.4f} {r['speedup']:6.2f} "
              f"{r['fft_steps']:5d} {r['full_ms']:8.4f} {r['pruned_ms']:8.4f} "
              f"{r['build_ms']:9.3f} {r['type1_ms']:9.3f} {r['build_over_type1']:6.2f} "
              f"{r['rel_err']:9.2e} {r['pair_rel_err']:9.2e} {r['spectrum_mb']:8.1f} "
              f"{r['grid_mb']:8.1f}", flush=True)
    print("the last build's parts (ms): " + "; ".join(
        f"{r['case']} " + ", ".join(f"{k[:-3]} {v:.3f}" for k, v in r["build_parts"].items())
        for r in rows))
    print(f"device: {torch.cuda.get_device_name(0)}; f32, tol {EPS:g}; x = pair / T per "
          "application (GPU time); ratio = build / one type 1 (set-points + execute, wall); "
          f"WARPFFT_PLAN_CACHE_MB={args.cache_mb}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(device=torch.cuda.get_device_name(0), rows=rows), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
