#!/usr/bin/env python3
"""GPU check of the kernels alone (no C core): cupy loads the cubins kernels/check.sh built,
runs the whole NUFFT pipeline (bin sort, spread/interp, cuFFT through cupy, deconvolve/amplify)
and compares against the direct-sum kernels, then times suite B.

    kernels/check.sh                       # here: builds kernels/build/*.sm_90.cubin
    python3 kernels/test/gpu_test.py unit [od]  # on the GPU machine (od: only the OD and
                                                # sort_stable tests)
    python3 kernels/test/gpu_test.py bench  [B1,B2,..|all] [methods=gm,sm,od] [bs=16x16x4;8x8x8]
                                            [maxsub=N] [wext=N | wexts=0,1] [betaf=F] [nosort=1]
                                            [tile=16x16x4;32x16x4] [obs=8x8x2;16x16x4]
                                            [nw=2,4,8] [pad=auto,0] [stable=1] [nsamp=N]
                                            [smblock=256,352,512] [siblock=128,256]
    python3 kernels/test/gpu_test.py profile B3 sm [bs=16x16] [tile=..] [nw=N] [wext=N]  # ncu
    python3 kernels/test/gpu_test.py all    # unit, then the whole bench

bench options: bs = SM bin shapes; tile/obs/nw/pad = OD warp tiles, OD bin shapes (default
half a tile), OD warps per block (default: most resident), OD row pitch ("auto": padded so
lanes hit distinct banks; or extra cells); wexts = widths relative to the formula width (0,1:
today's C-core widths minus one and today's: f32 1e-5 -> 6,7; f64 1e-9 -> 10,11); stable =
setpts with module sort_stable; smblock / siblock = threads per block of SM spreading /
interpolation instead of the host's (gpu_pipeline.sm_block; each value runs the bench again;
3D spreading below the module's WF_OD_MIN_BLOCK needs a module built with
WF_EXTRA_DEFS=-DWF_OD_MIN_BLOCK=N); nsamp = modes/points sampled for the error (default 1000).

The command line of the harness; the rest lives beside it: gpu_pipeline.py (kernel loading, the
host's parameter choices, the pipeline; env WF_BUILD, WF_ARCH, WF_OLDABI), gpu_reference.py
(direct sums, random inputs, sampled accuracy), gpu_unit.py (the unit tests), gpu_unit_od.py
(the OD spreader and the stable ranks), gpu_bench.py (suite B and profile).
"""
import itertools
import sys

import gpu_pipeline
from gpu_bench import bench, profile
from gpu_unit import unit
from gpu_unit_od import od_unit


def shapes(v):
    return [[int(x) for x in b.split("x")] for b in v.split(";")]


def main(argv):
    what = argv[1] if len(argv) > 1 else "unit"
    if what == "unit":
        if len(argv) > 2 and argv[2] == "od":
            return 1 if od_unit() else 0
        return 1 if unit() else 0
    if what == "bench":
        kw = dict(a.split("=", 1) for a in argv[3:])
        methods = tuple(kw.get("methods", "gm,sm").split(","))
        gpu_pipeline.NOSORT = kw.get("nosort", "0") == "1"
        wexts = [int(v) for v in kw.get("wexts", kw.get("wext", "0")).split(",")]
        gpu_pipeline.BETA_FACTOR = float(kw["betaf"]) if "betaf" in kw else None
        od = dict(tiles=shapes(kw["tile"]) if "tile" in kw else None,
                  obss=shapes(kw["obs"]) if "obs" in kw else None,
                  nws=[int(v) for v in kw["nw"].split(",")] if "nw" in kw else None,
                  pads=[p if p == "auto" else int(p) for p in kw.get("pad", "auto").split(",")])
        blocks = [[int(v) for v in kw[k].split(",")] if k in kw else [None]
                  for k in ("smblock", "siblock")]
        for block, iblock in itertools.product(*blocks):
            gpu_pipeline.SM_SPREAD_BLOCK = block
            gpu_pipeline.SM_INTERP_BLOCK = iblock
            print(f"SM spread block {block or 'host'}, interp block {iblock or 'host'}",
                  flush=True)
            bench(only=argv[2].split(",") if len(argv) > 2 and argv[2] != "all" else None,
                  methods=methods, bss=shapes(kw["bs"]) if "bs" in kw else None,
                  maxsub=int(kw.get("maxsub", 1024)), wexts=wexts, od=od,
                  stable=kw.get("stable", "0") == "1", nsamp=int(kw.get("nsamp", 1000)))
    elif what == "profile":
        # profile B3 sm [bs=..] [tile=..] [nw=..] [wext=..]: one setup, two executes (for ncu)
        name, method = argv[2], argv[3]
        kw = dict(a.split("=", 1) for a in argv[4:])
        profile(name, method, shapes(kw["bs"])[0] if "bs" in kw else None,
                shapes(kw["tile"])[0] if "tile" in kw else None,
                int(kw["nw"]) if "nw" in kw else None, int(kw.get("wext", 0)))
    elif what == "all":
        bad = unit()
        bench()
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
