"""warpfft beside the reference (cuFINUFFT, every GPU method) on non-uniform point sets: the
rows the reference's perftest cannot draw (it draws uniform points only). Both libraries get
the same points and data in one process on one card; the times are set-points + execute and
execute alone (median of --reps, host clock around the calls and a device sync); the errors
are relative l2 against exact f64 sums at sampled outputs (peer_errors.exact_sums).

Cases (benches/suite_b/cases.rs draws the same distributions for suite_b's own rows):
  N1..N5  3D 256^3 f64 tol 1e-6, NonuniformFFTs.jl's published GPU setup: `randn` coordinates
          (std 1 rad) folded into the box, M = 1.7e6, 5.3e6, 1.7e7, 5.3e7, 1.7e8, with its
          published H100 times (set-points + execute) beside ours;
  M2R     2D 256^2 f32 1e-5 radial, 402 spokes x 512 samples, 16 coils (ntransf 16);
  M2S     2D 256^2 f32 1e-5 spiral, 16 arms x 12800 samples, 16 coils;
  M3R     3D 256^3 f32 1e-5 radial (kooshball), 32768 spokes x 512 samples;
  U3      3D 256^3 f64 1e-6 uniform, M = 1.7e7 (the D2 rows, for a same-script baseline).
Each case runs type 1 and type 2 (t1, t2: `--cases N1t1 M2R` selects one or both).

    WARPFFT_LIBRARY=... PYTHONPATH=python python3 python/bench/density.py \\
        --lib /tmp/peerbuild/libcufinufft.so --pkg .peer/python/cufinufft [--cases ...] [--json f]
Without --lib, only warpfft runs.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bench import cupy_sync, timed, write_json  # noqa: E402
from peer_errors import exact_sums, load_reference  # noqa: E402

# NonuniformFFTs.jl's published H100 times (benchmark/CPU+CUDA/results.H100_jean-zay, set-points
# + execute, seconds): the best of its global- and shared-memory methods per M and type
PUBLISHED = {
    1677722: (0.015657806, 0.0061596485),
    5305422: (0.022273601, 0.01194764),
    16777216: (0.041535934, 0.029518569),
    53054215: (0.103066733, 0.07472854),
    167772160: (0.299811088, 0.2165908755),
}
# name: (dist, precision, modes, M, tol, ntransf)
CASES = {
    "N1": ("normal", "d", (256, 256, 256), 1677722, 1e-6, 1),
    "N2": ("normal", "d", (256, 256, 256), 5305422, 1e-6, 1),
    "N3": ("normal", "d", (256, 256, 256), 16777216, 1e-6, 1),
    "N4": ("normal", "d", (256, 256, 256), 53054215, 1e-6, 1),
    "N5": ("normal", "d", (256, 256, 256), 167772160, 1e-6, 1),
    "M2R": ("radial:402:512", "f", (256, 256), 402 * 512, 1e-5, 16),
    "M2S": ("spiral:16:12800", "f", (256, 256), 16 * 12800, 1e-5, 16),
    "M3R": ("radial:32768:512", "f", (256, 256, 256), 32768 * 512, 1e-5, 1),
    "U3": ("uniform", "d", (256, 256, 256), 17000000, 1e-6, 1),
}
REF_METHODS = {1: (1, 2, 3), 2: (1, 2)}
METHOD = {1: "GM", 2: "SM", 3: "OD"}


def wrap(xp, x):
    return (x + math.pi) % (2 * math.pi) - math.pi


def points(xp, dist, dim, m, seed):
    """The case's coordinates as f64 arrays on the device (as benches/suite_b/model.rs)."""
    kind, *arg = dist.split(":")
    if kind == "uniform":
        rng = xp.random.default_rng(seed)
        return [rng.uniform(-math.pi, math.pi, m) for _ in range(dim)]
    if kind == "normal":
        rng = xp.random.default_rng(seed)
        return [wrap(xp, rng.standard_normal(m)) for _ in range(dim)]
    a, s = int(arg[0]), int(arg[1])
    assert a * s == m, (dist, m)
    j = xp.arange(s, dtype=xp.float64)
    if kind == "radial":
        r = -math.pi + 2 * math.pi * j / s
        i = xp.arange(a, dtype=xp.float64)[:, None]
        if dim == 2:
            th = math.pi * i / a
            u = [xp.cos(th), xp.sin(th)]
        else:
            z = (i + 0.5) / a
            rr = xp.sqrt(1 - z * z)
            ph = i * math.pi * (3 - math.sqrt(5))
            u = [rr * xp.cos(ph), rr * xp.sin(ph), z]
        return [wrap(xp, (r[None, :] * ud).ravel()) for ud in u]
    if kind == "spiral":
        t = j / s
        arm = xp.arange(a, dtype=xp.float64)[:, None]
        th = 2 * math.pi * (arm / a + 8.0 * t[None, :])
        r = math.pi * t[None, :]
        return [wrap(xp, (r * xp.cos(th)).ravel()), wrap(xp, (r * xp.sin(th)).ravel())]
    raise ValueError(dist)


def run_lib(xp, make_plan, ty, pts, data, exact, out_idx, nt, dim, reps):
    plan = make_plan()
    out = {}

    def setpts_exec():
        plan.setpts(*pts)
        return plan.execute(data)

    out["total_ms"] = timed(setpts_exec, cupy_sync(xp), reps)
    plan.setpts(*pts)
    out["exec_ms"] = timed(lambda: plan.execute(data), cupy_sync(xp), reps)
    got = plan.execute(data)
    got = got.reshape((nt,) + got.shape[-(dim if ty == 1 else 1):])[0]
    approx = got[tuple(xp.asarray(out_idx).T)] if ty == 1 else got[out_idx]
    out["rel_err"] = float(xp.linalg.norm(approx - exact) / xp.linalg.norm(exact))
    info = getattr(plan, "info", None)  # warpfft's: what the plan chose for these points
    if isinstance(info, dict):
        out.update({k: info.get(k) for k in ("width", "upsampfac", "method")})
    del plan
    return out


def run_case(xp, wf, ref, name, ty, reps, samples, seed, our_methods=()):
    dist, prec, modes, m, tol, nt = CASES[name]
    dim = len(modes)
    rdt = np.float32 if prec == "f" else np.float64
    cdt = np.complex64 if prec == "f" else np.complex128
    pts = [p.astype(rdt) for p in points(xp, dist, dim, m, seed)]
    rng = np.random.default_rng(seed + 1)
    if ty == 1:
        data = xp.asarray((rng.standard_normal((nt, m)) + 1j * rng.standard_normal((nt, m)))
                          .astype(cdt))
        s = min(samples, int(np.prod(modes)))
        out_idx = np.stack([rng.integers(0, n, s) for n in modes], axis=1)
    else:
        shape = (nt,) + tuple(modes)
        data = xp.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                          .astype(cdt))
        out_idx = np.sort(rng.choice(m, size=min(samples, m), replace=False))
    if nt == 1:
        data = data[0]
    exact = exact_sums(xp, ty, pts, data if nt == 1 else data[0], modes, out_idx)
    isign = -1 if ty == 1 else 1
    row = {"case": f"{name}t{ty}", "dist": dist, "M": m, "modes": list(modes), "tol": tol,
           "ntransf": nt, "ref": {}}
    if ref is not None:
        for meth in REF_METHODS[ty]:
            try:
                row["ref"][METHOD[meth]] = run_lib(
                    xp, lambda: ref.Plan(ty, modes, nt, tol, isign=isign, dtype=cdt,
                                         gpu_method=meth),
                    ty, pts, data, exact, out_idx, nt, dim, reps)
            except Exception as e:  # noqa: BLE001 (a method it refuses or cannot fit)
                row["ref"][METHOD[meth]] = {"error": str(e)[:160]}
            xp.get_default_memory_pool().free_all_blocks()
    # ours: the drop-in Plan with its defaults, except check_points=False (set-points waits on
    # nothing, as the framework ops and the C ABI's default)
    row["ours"] = run_lib(
        xp, lambda: wf.Plan(ty, modes, nt, tol, isign=isign, dtype=cdt, check_points=False),
        ty, pts, data, exact, out_idx, nt, dim, reps)
    # --our-methods: ours with each method forced too (the forced-method table of
    # docs/spreaders.md: which of our methods is fastest on these points, and against which of
    # the reference's)
    row["ours_forced"] = {}
    for meth in our_methods:
        code = {v: k for k, v in METHOD.items()}[meth]
        if ty == 2 and meth == "OD":
            continue
        try:
            row["ours_forced"][meth] = run_lib(
                xp, lambda: wf.Plan(ty, modes, nt, tol, isign=isign, dtype=cdt,
                                    check_points=False, gpu_method=code),
                ty, pts, data, exact, out_idx, nt, dim, reps)
        except Exception as e:  # noqa: BLE001 (a method it refuses or cannot fit)
            row["ours_forced"][meth] = {"error": str(e)[:160]}
        xp.get_default_memory_pool().free_all_blocks()
    if m in PUBLISHED and dist == "normal":
        row["published_ms"] = PUBLISHED[m][ty - 1] * 1e3
    xp.get_default_memory_pool().free_all_blocks()
    return row


def best_ref(row):
    ok = {k: v for k, v in row["ref"].items() if "total_ms" in v}
    if not ok:
        return None, None
    k = min(ok, key=lambda k: ok[k]["total_ms"])
    return k, ok[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--lib", help="the reference's libcufinufft.so (peer_bench.sh's build)")
    ap.add_argument("--pkg", help="the folder holding the reference's Python package")
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--samples", type=int, default=512)
    ap.add_argument("--json")
    ap.add_argument("--our-methods", nargs="*", default=[], choices=["GM", "SM", "OD"],
                    help="also time ours with each of these methods forced (a second table)")
    a = ap.parse_args()
    import cupy as xp

    import warpfft as wf
    ref = load_reference(a.lib, a.pkg, "cufinufft") if a.lib else None
    rows = []
    print("| case | dist | M | ours total / exec ms | w | ref best total / exec ms (method) | "
          "total ratio | exec ratio | our err | ref err | published ms | ours / published |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, sel in enumerate(a.cases):
        name, tys = (sel[:-2], (int(sel[-1]),)) if sel[-2:] in ("t1", "t2") else (sel, (1, 2))
        for ty in tys:
            samples = 256 if CASES[name][3] > 1e8 else a.samples
            r = run_case(xp, wf, ref, name, ty, a.reps, samples, 1000 + 17 * i,
                         a.our_methods)
            rows.append(r)
            o = r["ours"]
            k, b = best_ref(r)
            refcol = (f"{b['total_ms']:.2f} / {b['exec_ms']:.2f} ({k})" if b else "–")
            ratio = f"{o['total_ms'] / b['total_ms']:.2f}" if b else "–"
            eratio = f"{o['exec_ms'] / b['exec_ms']:.2f}" if b else "–"
            referr = f"{b['rel_err']:.1e}" if b else "–"
            pub = r.get("published_ms")
            print(f"| {r['case']} | {r['dist']} | {r['M']:.3g} | {o['total_ms']:.2f} / "
                  f"{o['exec_ms']:.2f} | {o.get('width', '')} | {refcol} | {ratio} | {eratio} | "
                  f"{o['rel_err']:.1e} | {referr} | {pub:.1f} | {o['total_ms'] / pub:.2f} |"
                  if pub else
                  f"| {r['case']} | {r['dist']} | {r['M']:.3g} | {o['total_ms']:.2f} / "
                  f"{o['exec_ms']:.2f} | {o.get('width', '')} | {refcol} | {ratio} | {eratio} | "
                  f"{o['rel_err']:.1e} | {referr} | – | – |", flush=True)
    if a.our_methods:
        print("\n| case | method | ours total / exec ms | our err | ref total / exec ms | ref err "
              "| exec ratio |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            for meth, o in r["ours_forced"].items():
                p = r["ref"].get(meth, {})
                if "exec_ms" not in o:
                    print(f"| {r['case']} | {meth} | {o.get('error', '')} | | | | |")
                    continue
                refs = (f"{p['total_ms']:.2f} / {p['exec_ms']:.2f} | {p['rel_err']:.1e} | "
                        f"{o['exec_ms'] / p['exec_ms']:.2f}" if "exec_ms" in p else "– | – | –")
                print(f"| {r['case']} | {meth} | {o['total_ms']:.2f} / {o['exec_ms']:.2f} | "
                      f"{o['rel_err']:.1e} | {refs} |", flush=True)
    write_json(a.json, rows)


if __name__ == "__main__":
    main()
