#!/usr/bin/env python3
"""kernels/test/emu/dryrun.py — the GPU harness (kernels/test/gpu_*.py) run on a CPU, with the
kernels emulated (cuda_emu.h) behind a numpy stand-in for cupy (cupy_stub/), at reduced sizes:
catches a harness or launch mistake (argument lists, shared-memory sizes, the traps of the
kernels' launch checks) before a GPU run, and checks the OD results against the direct sums
for real. Slow: minutes; modules compile on first use into kernels/test/emu/build/so.

    python3 kernels/test/emu/dryrun.py unit-od     # gpu_unit_od at 2% of the point counts
    python3 kernels/test/emu/dryrun.py bench       # suite B rows at a small size, od and sm
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
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
