#!/usr/bin/env python3
"""Fits the cost model of c_core/src/params/cost.c to the measurements of benches/costmodel.rs
and prints the coefficient table for cost.c, the fit's error per group and what the choice it
makes would have cost on the measured configurations.

    python3 scripts/fit_costmodel.py benches/costmodel-h100.jsonl [--c-table] [--method 2]

The model, per (dim, precision, type), for the method AUTO uses (SM; GM where --method 1):
    T = M (a w^d + b) + F tile (h + h2 big) + F g + c F log2 F + f0      (milliseconds)
F: fine-grid cells; tile = prod_d (1 + 2 ceil(w/2) / bin_d), the shared-memory tile's cells per
bin cell (the SM method reads or flushes a tile with its halo per bin); big = 1 when the grid
does not fit in L2 (F * complex bytes > 40 MB). The FFT terms (c, f0) are fitted per (dim,
precision) to the cuFFT times measured alone. Non-negative least squares on relative errors.
"""
import argparse
import collections
import json
import math

import numpy as np
from scipy.optimize import nnls

L2_BYTES = 40e6  # a grid above this does not stay in the H100's 50 MB L2


def sm_bins(dim, f64, ty):
    """c_core/src/params/bins.c, wf_default_bins for the SM method."""
    if dim == 1:
        return [1024, 1, 1]
    if dim == 2:
        return [32, 32, 1]
    if f64:
        return [8, 8, 2] if ty == 1 else [8, 8, 4]
    return [16, 8, 4] if ty == 1 else [16, 16, 4]


def features(r):
    d, w = r["dim"], r["width"]
    F = float(np.prod(r["nf"][:d]))
    bs = sm_bins(d, r["f64"], r["type"])
    pad = (w + 1) // 2
    tile = float(np.prod([1 + 2 * pad / bs[i] for i in range(d)]))
    big = float(F * (16 if r["f64"] else 8) > L2_BYTES)
    M = float(r["M"])
    return np.array([M * w**d, M, F * tile, F * tile * big, F]) * 1e-6, F


def fit(rows, method):
    sel = [r for r in rows if r["method"] == method]
    groups = collections.defaultdict(list)
    for r in sel:
        groups[(r["dim"], r["f64"], r["type"])].append(r)
    coefs, fft, report = {}, {}, []
    for key in sorted(groups):
        g = groups[key]
        A = np.array([features(r)[0] for r in g])
        t = np.array([r["exec_ms"] for r in g])
        ff = np.array([r["fft_ms"] for r in g])
        x, _ = nnls(A / t[:, None], (t - ff) / t)
        coefs[key] = x
        err = (A @ x + ff) / t - 1
        report.append((key, len(g), math.sqrt(np.mean(err**2)), np.abs(err).max()))
    fgroups = collections.defaultdict(dict)
    for r in rows:
        F = float(np.prod(r["nf"][: r["dim"]]))
        fgroups[(r["dim"], r["f64"])][F] = r["fft_ms"]
    for key, d in fgroups.items():
        F = np.array(list(d.keys()))
        t = np.array(list(d.values()))
        B = np.stack([F * np.log2(F) * 1e-6, np.ones_like(F)], 1)
        x, _ = nnls(B / t[:, None], np.ones_like(t))
        fft[key] = x
    return coefs, fft, report, sel


def predict(r, coefs, fft):
    key = (r["dim"], r["f64"], r["type"])
    f, F = features(r)
    c, f0 = fft[(r["dim"], r["f64"])]
    return float(f @ coefs[key]) + c * F * math.log2(F) * 1e-6 + f0


def regret(sel, coefs, fft, hyst):
    """Per measured (case, precision, type, tol): the model's pick among the measured sigmas
    (sigma 2 unless another is predicted faster by 1 - hyst) against the fastest and sigma 2."""
    cfg = collections.defaultdict(list)
    for r in sel:
        cfg[(r["case"], r["f64"], r["type"], r["tol"])].append(r)
    best, vs2 = [], []
    for g in cfg.values():
        pick = min(g, key=lambda r: predict(r, coefs, fft))
        s2 = [r for r in g if r["sigma"] == 2]
        if s2 and predict(pick, coefs, fft) > hyst * predict(s2[0], coefs, fft):
            pick = s2[0]
        best.append(pick["exec_ms"] / min(r["exec_ms"] for r in g))
        if s2:
            vs2.append(pick["exec_ms"] / s2[0]["exec_ms"])
    return np.array(best), np.array(vs2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--method", type=int, default=2)
    ap.add_argument("--hyst", type=float, default=0.95)
    ap.add_argument("--c-table", action="store_true")
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.data)]
    coefs, fft, report, sel = fit(rows, a.method)
    print("| dim | precision | type | rows | rms rel. error | max rel. error |")
    print("|---|---|---|---|---|---|")
    for (d, f64, ty), n, rms, mx in report:
        print(f"| {d} | {'f64' if f64 else 'f32'} | {ty} | {n} | {rms:.2f} | {mx:.2f} |")
    best, vs2 = regret(sel, coefs, fft, a.hyst)
    print(f"\nchoice over {len(best)} measured groups: time / fastest measured: mean "
          f"{best.mean():.3f}, max {best.max():.3f}; time / sigma 2: mean {vs2.mean():.3f}, "
          f"min {vs2.min():.3f}, max {vs2.max():.3f}")
    if a.c_table:
        print("\n/* [dim - 1][f32, f64][type 1, 2]: a, b, h, h2, g; fitted by "
              "scripts/fit_costmodel.py */")
        for d in (1, 2, 3):
            for f64 in (False, True):
                for ty in (1, 2):
                    x = coefs.get((d, f64, ty), np.zeros(5))
                    print("    {" + ", ".join(f"{v:.6g}" for v in x) + "},"
                          f" /* {d}D {'f64' if f64 else 'f32'} type {ty} */")
        print("/* FFT [dim - 1][f32, f64]: c, f0 */")
        for d in (1, 2, 3):
            for f64 in (False, True):
                c, f0 = fft.get((d, f64), (0, 0))
                print(f"    {{{c:.6g}, {f0:.6g}}}, /* {d}D {'f64' if f64 else 'f32'} */")


if __name__ == "__main__":
    main()
