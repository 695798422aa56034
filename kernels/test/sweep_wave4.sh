#!/usr/bin/env bash
# kernels/test/sweep_wave4.sh — wave 4's kernel variants against today's defaults on the GPU
# machine, kernels alone through cupy (python3 with cupy; no build there): the cubins of
# kernels/build_sweep/ (kernels/test/build_wave4.sh makes them; ignored by git, so the run
# carries the folder). Rows: B4 (3D f32 t1, w 6 and 7), B6 (2D f64 t1 w 10), B7 (3D f64 t1
# w 10, and w 11 at baseline), D2t1 and D3t1 (3D f64 t1 256^3, M 1.7e7 and 1.7e8, w 8), D2t2
# (3D f64 t2, w 10 at sigma 1.477); widths and sigma 2 as gpu_test.py bench (FINUFFT's rule + wext). Each group of
# rows runs in its own process (a trapped kernel loses its group only) with a time limit;
# one table at the end: row, width, variant, method, spread/interp ms, total ms (spread or
# interp + FFT + deconvolve or amplify), error (500 sampled outputs against direct sums), ratio
# to the row's baseline (the first line of the row), error ratio to the baseline's.
#   bash kernels/test/sweep_wave4.sh            # from the repo root; ~2-3 min on an H100
# Env: OUT (the log and results go there too), SWEEP_GROUPS (default "B4 B6 B7 D2t1 D2t2 D3t1";
# D3t1, M = 1.7e8, ~20 GB and ~20 s of host time, last; "smoke": tiny sizes, the plumbing only),
# SWEEP_GROUP_TIMEOUT (s, default 100).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
sweep="$root/kernels/build_sweep"
dest="${OUT:-$root/kernels/build_sweep}"
mkdir -p "$dest"
results="$dest/sweep_wave4.jsonl"
log="$dest/sweep_wave4.log"
: >"$results"
if [[ ! -f "$sweep/base/sort.sm_90.cubin" ]]; then
    echo "sweep_wave4.sh: no cubins in $sweep (run kernels/test/build_wave4.sh where the CUDA" \
        "toolkit is, and carry kernels/build_sweep)" | tee "$log"
    exit 2
fi
{
    echo "# sweep_wave4 $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version \
        --format=csv,noheader 2>/dev/null | head -1)"
    grep -E "^== |regs" "$sweep/BUILD.txt" 2>/dev/null | sed 's/^/# /'
    t0=$(date +%s)
    for g in ${SWEEP_GROUPS:-B4 B6 B7 D2t1 D2t2 D3t1}; do
        echo "# group $g ($(($(date +%s) - t0)) s)"
        timeout "${SWEEP_GROUP_TIMEOUT:-100}" python3 "$root/kernels/test/gpu_sweep.py" run "$g" \
            "$results" "$sweep"
        rc=$?
        [[ $rc == 0 ]] || echo "# group $g exited $rc (124: its time limit)"
    done
    echo "# total $(($(date +%s) - t0)) s"
    echo
    python3 "$root/kernels/test/gpu_sweep.py" table "$results"
} 2>&1 | tee "$log"
