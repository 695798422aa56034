#!/usr/bin/env python3
"""GPU check of the kernels alone (no C core): cupy loads the cubins kernels/check.sh built,
runs the whole NUFFT pipeline (bin sort, spread/interp, cuFFT through cupy, deconvolve/amplify)
and compares against the direct-sum kernels, then times suite B.

    kernels/check.sh                       # here: builds kernels/build/*.sm_90.cubin
    python3 kernels/test/gpu_test.py unit   # on the GPU machine
    python3 kernels/test/gpu_test.py bench  [B1,B2,..|all] [methods=gm,sm] [bs=16x16x4;8x8x8]
                                            [maxsub=N] [wext=N] [betaf=F] [nosort=1]
    python3 kernels/test/gpu_test.py profile B3 sm [bs=16x16]   # for ncu
    python3 kernels/test/gpu_test.py all    # unit, then the whole bench

The command line of the harness; the rest lives beside it: gpu_pipeline.py (kernel loading, the
host's parameter choices, the pipeline; env WF_BUILD, WF_ARCH, WF_OLDABI), gpu_reference.py
(direct sums, random inputs, sampled accuracy), gpu_unit.py (the unit tests), gpu_bench.py
(suite B and profile).
"""
import sys

import gpu_pipeline
from gpu_bench import bench, profile
from gpu_unit import unit


def main(argv):
    what = argv[1] if len(argv) > 1 else "unit"
    if what == "unit":
        return 1 if unit() else 0
    if what == "bench":
        # bench [B1,B2,..] [methods=sm,gm] [bs=16x16x4;8x8x8] [maxsub=N]
        kw = dict(a.split("=", 1) for a in argv[3:])
        methods = tuple(kw.get("methods", "gm,sm").split(","))
        gpu_pipeline.NOSORT = kw.get("nosort", "0") == "1"
        w_extra = int(kw.get("wext", 0))
        gpu_pipeline.BETA_FACTOR = float(kw["betaf"]) if "betaf" in kw else None
        extra = None
        if "bs" in kw:
            extra = [[int(v) for v in b.split("x")] for b in kw["bs"].split(";")]
        bench(only=argv[2].split(",") if len(argv) > 2 and argv[2] != "all" else None,
              methods=methods, bss=extra, maxsub=int(kw.get("maxsub", 1024)), w_extra=w_extra)
    elif what == "profile":
        # profile B3 sm [bs=..]: one setup and two executes of a suite case (for ncu)
        name, method = argv[2], argv[3]
        kw = dict(a.split("=", 1) for a in argv[4:])
        profile(name, method, [int(v) for v in kw["bs"].split("x")] if "bs" in kw else None)
    elif what == "all":
        bad = unit()
        bench()
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
