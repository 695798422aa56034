#!/usr/bin/env python3
"""kernels/test/emu/dryrun.py — the GPU harness (kernels/test/gpu_*.py) run on a CPU, with the
kernels emulated (cuda_emu.h) behind a numpy stand-in for cupy (cupy_stub/), at reduced sizes:
catches a harness or launch mistake (argument lists, shared-memory sizes, the traps of the
kernels' launch checks) before a GPU run, and checks the OD results against the direct sums
for real. Slow: minutes; modules compile on first use into kernels/test/emu/build/so.

    python3 kernels/test/emu/dryrun.py unit-od     # gpu_unit_od at 2% of the point counts
    python3 kernels/test/emu/dryrun.py bench       # suite B rows at a small size, od and sm
    python3 kernels/test/emu/dryrun.py sweep [GROUP..]  # kernels/test/sweep_wave4.sh's runs,
                                                   # small, from kernels/build_sweep's folders
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "cupy_stub"))
sys.path.insert(0, os.path.join(HERE, ".."))

import gpu_bench  # noqa: E402
import gpu_unit_od  # noqa: E402


def main(what):
    if what == "unit-od":
        gpu_unit_od.SCALE = 0.02
        bad = gpu_unit_od.od_unit()
        print(f"dry run unit-od: {bad} failures")
        return 1 if bad else 0
    if what == "bench":
        small = {"B1": ([4000], 20000), "B2": ([48, 40], 20000), "B4": ([16, 14, 12], 8000),
                 "B6": ([40, 32], 8000), "B7": ([12, 12, 10], 3000), "B9": ([32, 24], 3000)}
        gpu_bench.SUITE = [(n, t, d, small[n][0], small[n][1], tol, p, nt)
                           for n, t, d, N, M, tol, p, nt in gpu_bench.SUITE if n in small]
        rows = gpu_bench.bench(methods=("sm", "od"), reps=1, wexts=(0, 1), nsamp=40,
                               od=dict(tiles=[[8, 8, 4], [16]], nws=[2, None], pads=["auto", 0]))
        bad = sum(r[9] > r[10] for r in rows)
        print(f"dry run bench: {len(rows)} rows, {bad} over tolerance")
        return 1 if bad or not rows else 0
    if what == "sweep":
        return sweep(sys.argv[2:] or ["B4", "B6", "B7", "D2t1", "D2t2", "D3t1"])
    print(__doc__)
    return 2


def sweep(groups):
    """gpu_sweep.py's groups at small sizes (every variant, bins and launch shape as on the GPU),
    the variant modules emulated from their .defs; fails on a failed run or an error above 1e-2
    (small grids at the sweep's widths stay far below)."""
    import tempfile

    import gpu_sweep

    small = {"B4": ([16, 14, 12], 3000), "B6": ([40, 32], 3000), "B7": ([12, 12, 10], 1500),
             "D2t1": ([20, 18, 16], 2000), "D2t2": ([20, 18, 16], 1500),
             "D3t1": ([20, 18, 16], 4000)}
    for g in groups:
        gpu_sweep.GROUPS[g] = [(n, t, d, small[g][0], small[g][1], tol, p, wx, sg, 1, runs)
                               for n, t, d, N, M, tol, p, wx, sg, reps, runs in
                               gpu_sweep.GROUPS[g]]
    sweep_dir = os.path.join(HERE, "..", "..", "build_sweep")
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        results = f.name
    for g in groups:
        gpu_sweep.run_group(g, results, os.path.abspath(sweep_dir))
    gpu_sweep.table(results)
    import json
    recs = [json.loads(line) for line in open(results)]
    bad = [r for r in recs if not r.get("ok") or r["err"] > 1e-2]
    print(f"dry run sweep: {len(recs)} runs, {len(bad)} failed or inaccurate")
    return 1 if bad or not recs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
