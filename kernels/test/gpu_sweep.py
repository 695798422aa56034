#!/usr/bin/env python3
"""Wave 4's kernel variants against today's defaults on the rows where the reference wins
(issue 39, "kernels at parity"), kernels alone through cupy (the harness of gpu_test.py):
one group of rows per call, each row's data made once and every variant run on it, one JSON
line per run appended to a results file; `table` prints them as one table. Driven by
kernels/test/sweep_wave4.sh, which builds nothing: the cubins come from kernels/build_sweep/
(kernels/test/build_wave4.sh builds them on a machine with the CUDA toolkit).

    python3 kernels/test/gpu_sweep.py run GROUP RESULTS.jsonl [SWEEP_DIR]
    python3 kernels/test/gpu_sweep.py table RESULTS.jsonl

Variants (folders of SWEEP_DIR; each holds only the modules it changes, the rest come from
base/): base (today's defaults: since the sweep of 2026-12-06 the tile in registers for 3D f64
w7-14 and 2D f64 w10-16, kernels/smr_shape.h), shared (the tile in shared memory for those
modules: the f64 rows' baseline), smr (SM spreading with the tile in registers,
spreadinterp/smr_spread.cuh: 3D f32 in warp patches of 8x4 columns, 3D/2D f64 flat), smr_b
(the same with 64-point batches, 3D f32 in flat rows, 2D f64 with 12 register rows, 3D f64
w 8 with 16 register planes and 8x8x8 bins), smr90 (smr from compute_90 PTX: one vector
atomic per complex f32 in the flush), fix3 (3D f32 SM spreading as the fixed-point team), od2b128 (2D f64 SM
spreading's output-driven steps with 128-thread blocks, one point per step, as the reference's
output-driven method), gmteam (GM interpolation, team per point).
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# group -> rows; row = (name, type, dim, N, M, tol, prec, wext, sigma, reps, runs); a run is
# (variant, method, bins or None, block or None); the first run of a row is its baseline.
B4_RUNS = [("base", "sm", None, None), ("smr", "sm", None, None),
           ("smr", "sm", [8, 8, None], None), ("smr_b", "sm", None, None),
           ("smr90", "sm", None, None), ("fix3", "sm", None, None)]
GROUPS = {
    "B4": [("B4", 1, 3, [128] * 3, 10_000_000, 1e-5, 32, 0, None, 10, B4_RUNS),
           ("B4", 1, 3, [128] * 3, 10_000_000, 1e-5, 32, 1, None, 10, B4_RUNS)],
    "B6": [("B6", 1, 2, [1024] * 2, 10_000_000, 1e-9, 64, 0, None, 10,
            [("shared", "sm", None, None), ("base", "sm", None, None), ("smr", "sm", None, None),
             ("smr", "sm", [54, None], None), ("smr_b", "sm", None, None),
             ("od2b128", "sm", None, 128), ("od2b128", "sm", [16, 16], 128)])],
    "B7": [("B7", 1, 3, [128] * 3, 10_000_000, 1e-9, 64, 0, None, 10,
            [("shared", "sm", None, None), ("base", "sm", None, None), ("smr", "sm", None, None),
             ("smr", "sm", [6, 8, None], None), ("smr_b", "sm", None, None)]),
           ("B7", 1, 3, [128] * 3, 10_000_000, 1e-9, 64, 1, None, 5,
            [("shared", "sm", None, None), ("base", "sm", None, None)])],
    "D2t1": [("D2t1", 1, 3, [256] * 3, 17_000_000, 1e-6, 64, 1, None, 5,
              [("shared", "sm", None, None), ("base", "sm", None, None), ("smr", "sm", None, None),
               ("smr", "sm", [6, 8, None], None), ("smr_b", "sm", None, None)])],
    "D2t2": [("D2t2", 2, 3, [256] * 3, 17_000_000, 1e-6, 64, 3, 1.477, 5,
              [("base", "sm", None, None), ("base", "gm", None, None),
               ("gmteam", "gm", None, None), ("base", "sm", [16, 8, 4], None),
               ("base", "sm", [8, 8, 8], None)])],
    # a few seconds: the script's plumbing (SWEEP_GROUPS=smoke; also on the CPU with
    # PYTHONPATH=kernels/test/emu/cupy_stub)
    "smoke": [("B4", 1, 3, [16, 14, 12], 2000, 1e-5, 32, 1, None, 1,
               [("base", "sm", None, None), ("smr", "sm", None, None)]),
              ("B6", 1, 2, [40, 32], 2000, 1e-9, 64, 0, None, 1,
               [("base", "sm", None, None), ("smr", "sm", None, None)])],
    # M = 1.7e8: ~20 GB of device memory and ~15 s of host time
    "D3t1": [("D3t1", 1, 3, [256] * 3, 170_000_000, 1e-6, 64, 1, None, 3,
              [("shared", "sm", None, None), ("base", "sm", None, None)])],
}


def _bins(bs, plan_smr_default):
    """bs with None entries taken from the plan's default (the register tile's last dimension
    follows its NR)."""
    if bs is None or plan_smr_default is None:
        return bs
    return [plan_smr_default[d] if v is None else v for d, v in enumerate(bs)]


def run_group(group, results, sweep_dir):
    import cupy as cp
    import gpu_pipeline as gp
    from gpu_reference import rand_points, random_io, sample_error

    gp.BUILD = os.path.join(sweep_dir, "base")
    for name, typ, dim, N, M, tol, prec, wext, sigma, reps, runs in GROUPS[group]:
        rng = np.random.default_rng(3)
        t0 = time.perf_counter()
        coords = rand_points(dim, M, prec, rng, edge=False)
        base_ms = base_err = None
        data = None
        for variant, method, bs, block in runs:
            rec = dict(row=name, w_ext=wext, sigma=sigma, variant=variant, method=method)
            try:
                gp.set_variant([] if variant == "base" else [os.path.join(sweep_dir, variant)])
                gp.SM_SPREAD_BLOCK = block
                smr = gp.smr_info(dim, prec, gp.width_beta(tol, wext)[0]) if (
                    typ == 1 and method == "sm") else None
                if variant.startswith("smr") and smr is None:  # never launch it as a shared tile
                    raise RuntimeError("the module has no wf_smr_info (not a register-tile build)")
                bins = bs
                if bs is not None and any(v is None for v in bs):
                    w = gp.width_beta(tol, wext)[0]
                    bins = _bins(bs, gp.smr_default_bins(dim, prec, w, smr[0]) if smr else None)
                plan = gp.Plan(typ, dim, N, tol, prec, method, 1, bs=bins, w_extra=wext,
                               sigma=sigma)
                if data is None:
                    data = random_io(plan, M, rng)
                c, fk = data
                plan.setpts(coords)
                plan.execute(c, fk)  # warm-up (module load, FFT plan)
                tim = []
                for _ in range(reps):
                    plan.execute(c, fk, tim)
                tim = np.median(np.array(tim), axis=0)
                err = sample_error(plan, coords, c, fk, 0, 500, np.random.default_rng(11))
                si_ms = float(tim[0] if typ == 1 else tim[2])
                total = float(tim.sum())
                label = f"bs={'x'.join(map(str, plan.bs[:dim]))}"
                if plan.smr:
                    blk, sm = gp.smr_launch(dim, prec, plan.w, plan.bs, plan.smr)
                    label += f" NR={plan.smr[0]} PX={plan.smr[1]} NB={32 * plan.smr[2]} " \
                             f"block={blk} smem={sm}"
                elif block:
                    label += f" block={block}"
                try:
                    op = "spread" if typ == 1 else "interp"
                    regs = gp.fn(*gp.si_name(op, method, dim, prec, plan.w)).num_regs
                    label += f" regs={regs}"
                except Exception:  # noqa: BLE001 - informational only
                    pass
                if base_ms is None:
                    base_ms, base_err = total, err
                rec.update(w=plan.w, nf=plan.nf[:dim], si_ms=si_ms, total_ms=total, err=err,
                           tol=tol, ratio=total / base_ms, err_ratio=err / base_err if base_err
                           else None, label=label, ok=True)
                del plan
            except Exception as e:  # noqa: BLE001 - one run's failure is a row of the table
                rec.update(ok=False, error=f"{type(e).__name__}: {e}")
                if base_ms is None:
                    rec["error"] += " (baseline failed: the row's ratios are missing)"
            if rec["ok"]:
                print(f"{name} w{rec['w']} {variant} {method}: {rec['si_ms']:.3f} / "
                      f"{rec['total_ms']:.3f} ms ({rec['ratio']:.3f}x) err {rec['err']:.2e} "
                      f"{rec['label']}", flush=True)
            else:
                print(f"{name} {variant} {method}: FAILED {rec['error']}", flush=True)
            with open(results, "a") as f:
                f.write(json.dumps(rec) + "\n")
            cp.get_default_memory_pool().free_all_blocks()
        print(f"# {name}: {time.perf_counter() - t0:.1f} s", flush=True)


def table(results):
    rows = [json.loads(line) for line in open(results) if line.strip()]
    print("row  w  sigma variant  method   si_ms   total_ms  err       vs_base  err/base  "
          "note")
    for r in rows:
        sig = f"{r['sigma']:.3f}" if r.get("sigma") else "2    "
        if not r.get("ok"):
            print(f"{r['row']:4} {'?':>2} {sig} {r['variant']:8} {r['method']:5}  FAILED: "
                  f"{r.get('error')}")
            continue
        flag = ""
        if r.get("err_ratio") and r["err_ratio"] > 1.5:
            flag = "ERROR ABOVE BASELINE'S "
        print(f"{r['row']:4} {r['w']:2} {sig} {r['variant']:8} {r['method']:5} {r['si_ms']:8.3f} "
              f"{r['total_ms']:9.3f}  {r['err']:.2e}  {r['ratio']:6.3f}   "
              f"{(r.get('err_ratio') or 0):6.2f}   {flag}{r['label']}")


def main(argv):
    if len(argv) >= 4 and argv[1] == "run":
        sweep_dir = argv[4] if len(argv) > 4 else os.path.join(HERE, "..", "build_sweep")
        run_group(argv[2], argv[3], os.path.abspath(sweep_dir))
        return 0
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main(sys.argv))
