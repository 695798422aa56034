#!/usr/bin/env bash
# kernels/test/build_wave4.sh — builds the cubins of kernels/test/sweep_wave4.sh (wave 4's kernel
# variants against today's defaults) on a machine with the CUDA toolkit, no GPU needed:
# kernels/build_sweep/<variant>/<module>.sm_90.cubin, each variant folder holding only the modules
# it changes (base/ holds today's defaults and every other module the sweep loads), a
# <module>.defs beside each variant module (its WF_EXTRA_DEFS: the CPU dry run builds the same
# variant from it) and BUILD.txt (registers, spills, shared memory per kernel, from check.sh).
# Every module must pass kernels/check.sh (no spill, no stack). Intermediate files are removed:
# the folder travels to the GPU machine (a few MB).
#   bash kernels/test/build_wave4.sh            # ~2 min on 2 cores
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/kernels/build_sweep"
rm -rf "$out"
mkdir -p "$out"
log="$out/BUILD.txt"
: >"$log"

# build <variant> "<defs>" <module>...: check.sh per module into kernels/build_sweep/<variant>
build() {
    local v="$1" defs="$2"
    shift 2
    mkdir -p "$out/$v"
    for m in "$@"; do
        echo "== $v: $m ${defs:-(defaults)}" >>"$log"
        if ! WF_EXTRA_DEFS="$defs" nice bash "$root/kernels/check.sh" -j 2 -o "$out/$v" "$m" \
            >>"$log" 2>&1; then
            echo "build_wave4.sh: $v $m failed (see $log)" >&2
            tail -20 "$log" >&2
            exit 1
        fi
        if [[ -n "$defs" ]]; then echo "$defs" >"$out/$v/$m.defs"; fi
    done
}

# today's defaults: setpts, FFT-side and reference modules of the rows, and the spread/interp
# modules the rows run at their baseline
build base "" sort scan_big bin_2d_f64 bin_3d_f32 bin_3d_f64 deconvolve_2d_f64 \
    deconvolve_3d_f32 deconvolve_3d_f64 amplify_3d_f64 direct_f32 direct_f64 \
    si_3d_f32_w6_spread_sm si_3d_f32_w7_spread_sm si_2d_f64_w10_spread_sm \
    si_3d_f64_w8_spread_sm si_3d_f64_w10_spread_sm si_3d_f64_w11_spread_sm \
    si_3d_f64_w10_interp_sm si_3d_f64_w10_interp_gm
# the tile in shared memory for the modules that now keep it in registers by default
# (kernels/smr_shape.h): the baseline the register tile was measured against
build shared "-DWF_SPREAD_SM_REG=0" si_2d_f64_w10_spread_sm si_3d_f64_w8_spread_sm \
    si_3d_f64_w10_spread_sm si_3d_f64_w11_spread_sm
# the tile in registers (smr_spread.cuh) as first measured: 3D f32 patches 8x4, f64 flat, NB 32,
# 2D f64 with 16 register rows (the default since is smr_b's 12 rows and NB 64)
build smr "-DWF_SPREAD_SM_REG=1" si_3d_f32_w6_spread_sm si_3d_f32_w7_spread_sm \
    si_3d_f64_w8_spread_sm si_3d_f64_w10_spread_sm
build smr "-DWF_SPREAD_SM_REG=1 -DWF_SMR_NR=16 -DWF_SMR_NBW=1" si_2d_f64_w10_spread_sm
# its alternatives: 64-point batches; 3D f32 in flat rows; 2D f64 with 12 register rows
build smr_b "-DWF_SPREAD_SM_REG=1 -DWF_SMR_PX=0 -DWF_SMR_NBW=2" si_3d_f32_w6_spread_sm \
    si_3d_f32_w7_spread_sm
build smr_b "-DWF_SPREAD_SM_REG=1 -DWF_SMR_NBW=2" si_3d_f64_w10_spread_sm
build smr_b "-DWF_SPREAD_SM_REG=1 -DWF_SMR_NR=16 -DWF_SMR_NBW=2" si_3d_f64_w8_spread_sm # 8x8x8 bins
build smr_b "-DWF_SPREAD_SM_REG=1 -DWF_SMR_NR=12 -DWF_SMR_NBW=2" si_2d_f64_w10_spread_sm
# the register tile from sm_90 PTX (as NVRTC builds compile): its flush adds a complex f32 with
# one vector atomic (common.cuh, wf_atomic_add) instead of two
WF_PTX_ARCH=compute_90 build smr90 "-DWF_SPREAD_SM_REG=1" si_3d_f32_w6_spread_sm \
    si_3d_f32_w7_spread_sm
# 3D f32 SM spreading as the team in fixed point (native integer shared atomics)
build fix3 "-DWF_SPREAD_SM_OD=0 -DWF_SPREAD_SM_TEAM=1 -DWF_SPREAD_SM_FIX=1" \
    si_3d_f32_w6_spread_sm si_3d_f32_w7_spread_sm
# 2D f64 output-driven steps in 128-thread blocks (one point per step, as the reference)
build od2b128 "-DWF_SPREAD_SM_REG=0 -DWF_OD_MIN_BLOCK=128" si_2d_f64_w10_spread_sm
# GM interpolation, team per point
build gmteam "-DWF_INTERP_GM_TEAM=1" si_3d_f64_w10_interp_gm

find "$out" -type f ! -name '*.sm_90.cubin' ! -name '*.defs' ! -name BUILD.txt -delete
echo "build_wave4.sh: $(find "$out" -name '*.cubin' | wc -l) cubins, $(du -sh "$out" | cut -f1)"
grep -E "^== |regs" "$log" | sed 's/^  */  /'
