#!/usr/bin/env bash
# Scale-out on a machine with several GPUs (issue 32), from the repository root, in one device
# command of at most 10 minutes (nvidia-h100-x4):
#
#   bash python/tools/gpu_scaleout.sh [stage...]      (default: info bench tests)
#
#   info   nvidia-smi: the GPUs and how they are linked
#   bench  python/bench/scaleout.py: 3D type 1 and 2, 128^3 modes, f32, tol 1e-5, M = 1e9
#          points in all (SCALEOUT_M), on 1, 2 and 4 GPUs (those present), JAX then PyTorch,
#          one process per GPU; then the markdown table
#   tests  python/tests/test_scaleout.py's multi-process GPU tests (2 and 4 GPUs)
#
# Needs libwarpfft.so: $WARPFFT_LIBRARY, else .gpu/lib/libwarpfft.so (unpacked from
# .gpu/bundle.tar.xz, `just gpu-bundle`, if need be). Every launch runs under a timeout cut to
# what is left of SCALEOUT_BUDGET seconds (default 560), so the command ends inside its limit
# and a hung collective costs one launch, not the call. Back in $OUT (or .gpu/scaleout): run.log
# (everything), summary.md (the table), summary.json (every run's numbers), tests.log.
# SCALEOUT_ARGS: more arguments for scaleout.py run (e.g. "--reps 5"; a dry run of this script
# without GPUs: SCALEOUT_ARGS="--cpu-smoke --M 4096 --modes 8 8 8" SCALEOUT_GPUS=2).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
L=${OUT:-.gpu/scaleout}; mkdir -p "$L"
W=$(mktemp -d /tmp/wf_scaleout.XXXXXX)  # the runs' JSON and reference samples (not sent back)
if [ -z "${WARPFFT_LIBRARY:-}" ]; then
    [ -f .gpu/lib/libwarpfft.so ] || python3 .gpu/unbundle.py .gpu/bundle.tar.xz .gpu lib
    export WARPFFT_LIBRARY=$PWD/.gpu/lib/libwarpfft.so
fi
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
# NVLink multicast stays off (the machines' rule; KINDS.md), also in the processes we start
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
unset CUDA_VISIBLE_DEVICES  # one process per GPU picks its GPU itself (LOCAL_RANK)
BUDGET=${SCALEOUT_BUDGET:-560}
M=${SCALEOUT_M:-1e9}
log=$L/run.log
ngpu=${SCALEOUT_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
say() { echo "== $* ($SECONDS s)" | tee -a "$log"; }
left() { echo $((BUDGET - SECONDS)); }
fails=0
for s in ${*:-info bench tests}; do case $s in
info)
    say info
    { nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
      nvidia-smi topo -m; } 2>&1 | tee -a "$log" ;;
bench)
    for fw in jax torch; do
        for g in 1 2 4; do
            [ "$g" -le "$ngpu" ] || { say "bench $fw on $g GPUs: skipped, $ngpu GPU(s)"; continue; }
            t=$(left); [ "$t" -gt 40 ] || { say "bench $fw $g: skipped, budget spent"; continue; }
            [ "$t" -gt 170 ] && t=170
            say "bench $fw on $g GPU(s), M = $M, timeout ${t}s"
            python3 python/tools/launch_local.py --nproc "$g" --timeout "$t" -- \
                python3 python/bench/scaleout.py run --framework "$fw" --out "$W" --M "$M" \
                ${SCALEOUT_ARGS:-} 2>&1 | tee -a "$log"
            rc=${PIPESTATUS[0]}; say "exit $rc"; [ "$rc" = 0 ] || fails=$((fails+1))
        done
    done
    python3 python/bench/scaleout.py summary "$W" 2>&1 | tee -a "$log"
    cp "$W"/summary.md "$W"/summary.json "$L"/ 2>/dev/null ;;
tests)
    t=$(left)
    if [ "$t" -gt 60 ]; then
        say "tests (multi-process, GPUs), timeout ${t}s"
        timeout "$t" python3 -m pytest python/tests/test_scaleout.py -k gpus -v -rs 2>&1 \
            | tee "$L/tests.log" | tee -a "$log"
        rc=${PIPESTATUS[0]}; say "exit $rc"; [ "$rc" = 0 ] || fails=$((fails+1))
    else
        say "tests: skipped, budget spent"
    fi ;;
*) say "unknown stage $s"; fails=$((fails+1)) ;;
esac; done
say "done: $fails failed step(s)"
rm -rf "$W"
exit $((fails > 0))
