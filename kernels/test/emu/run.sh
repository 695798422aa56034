#!/usr/bin/env bash
# kernels/test/emu/run.sh — builds the CPU emulation of the output-driven spreading kernels and
# of module sort_stable (cuda_emu.h) and runs test_emu.cpp, then that of setpts' binning and
# the GM/SM kernels with batched point sets and runs test_emu_sets.cpp, then that of the
# real-valued spreading/interpolation kernels and the half spectrum's deconvolve/amplify and
# runs test_emu_real.cpp, then that of module
# offsets_{d}d_p (the width the points take) against the host's rule and runs
# test_emu_offsets.cpp: no GPU, no CUDA toolkit, g++ and gcc only.
#   bash kernels/test/emu/run.sh [quick]        # objects in kernels/test/emu/build (ignored)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
mkdir -p "$out"
CXX="${CXX:-g++}"
flags=(-std=c++20 -O2 -g -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unused-function
       -ffp-contract=off -I"$here/../..")
objs=()
pids=()
build() { # build <object> <source> [defines...]: in the background, when out of date
    local o="$out/$1" src="$here/$2"
    shift 2
    objs+=("$o")
    if [[ -f "$o" && -z "$(find "$here/../.." -maxdepth 3 \( -name '*.cu' -o -name '*.cuh' \
        -o -name '*.h' -o -name '*.cpp' \) -newer "$o" -print -quit)" ]]; then
        return
    fi
    while [[ ${#pids[@]} -ge 2 ]]; do # two compilers at a time
        wait "${pids[0]}" || { echo "run.sh: a compile failed" >&2; exit 1; }
        pids=("${pids[@]:1}")
    done
    rm -f "$o"
    "$CXX" "${flags[@]}" "$@" -c "$src" -o "$o" &
    pids+=($!)
}
build cuda_emu.o cuda_emu.cpp
build sort_stable.o sort_stable_module.cpp
build test_emu.o test_emu.cpp
# the (dim, precision, width) modules test_emu.cpp runs
for m in 3:32:7 3:64:5 3:64:11 2:32:7 2:64:11 2:32:2 2:64:16 1:32:7 1:64:16 1:32:3 1:64:11 \
         3:32:12 3:64:16 3:32:2; do
    IFS=: read -r d p w <<<"$m"
    build "od_${d}d_f${p}_w${w}.o" si_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" -DWF_W="$w" \
        -DWF_SI_PART=WF_SI_SPREAD -DWF_SI_METHOD=WF_SI_OD -DWF_EMU_NS="od_${d}d_f${p}_w${w}"
done
od_objs=("${objs[@]}")
# batched point sets (test_emu_sets.cpp): setpts' modules, and the GM/SM modules it runs
objs=("$out/cuda_emu.o")
build sort.o sort_module.cpp
for b in 1:32 1:64 2:32 2:64 3:32 3:64; do
    IFS=: read -r d p <<<"$b"
    build "bin_${d}d_f${p}.o" bin_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" \
        -DWF_EMU_NS="bin_${d}d_f${p}"
done
# (3D f64 w10 and w13, 2D f64 w12: SM spreading with the tile in registers by default,
# kernels/smr_shape.h; 2D f64 w7 and w9 and 3D f64 w6 keep the shared tile)
for m in 1:64:5:SPREAD:GM 1:32:4:SPREAD:SM 1:64:5:INTERP:SM 2:32:6:SPREAD:SM 2:32:6:INTERP:GM \
         2:64:7:SPREAD:SM 2:64:7:INTERP:SM 3:32:5:SPREAD:SM 3:32:5:SPREAD:GM 3:32:5:INTERP:SM \
         3:64:8:INTERP:SM 3:64:8:INTERP:GM 3:64:10:SPREAD:SM 3:64:13:SPREAD:SM 2:64:12:SPREAD:SM \
         3:64:6:SPREAD:SM 2:64:9:SPREAD:SM; do
    IFS=: read -r d p w part meth <<<"$m"
    ns="si_${d}d_f${p}_w${w}_${part,,}_${meth,,}"
    # (1D code paths leave some tile parameters unused; nvcc does not warn, g++ does; the
    # register tile's extern "C" mark renamed so that several such modules link together)
    build "$ns.o" si_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" -DWF_W="$w" \
        -DWF_SI_PART="WF_SI_$part" -DWF_SI_METHOD="WF_SI_$meth" -DWF_EMU_NS="$ns" \
        -Dwf_smr_info="wf_smr_info_$ns" -Wno-unused-parameter
done
# variants of the SM spreading, their extern "C" names renamed (entry + "_variant", which the
# registry and test_emu_sets.cpp use) so they link beside the default modules: the register
# tile (WF_SPREAD_SM_REG; 3D f32 in patches, 3D f64 flat (w8: the default's shape, built as a
# variant), 2D f64 w7 with 6-row bins) and the 3D f32 fixed-point team
for m in 3:32:5:smr:-DWF_SMR_PX=8 3:64:8:smr:-DWF_SMR_PX=0 2:64:7:smr:-DWF_SMR_NBW=2 \
         3:32:7:smr:-DWF_SMR_PX=16 3:32:7:fix3:-DWF_SPREAD_SM_OD=0; do
    IFS=: read -r d p w v extra <<<"$m"
    ns="si_${d}d_f${p}_w${w}_spread_sm_$v"
    defs=(-DWF_SPREAD_SM_REG=1 "$extra")
    [[ $v == fix3 ]] && defs=(-DWF_SPREAD_SM_OD=0 -DWF_SPREAD_SM_TEAM=1 -DWF_SPREAD_SM_FIX=1)
    entry="wf_spread_sm_${d}d_f${p}_w${w}"
    build "$ns.o" si_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" -DWF_W="$w" \
        -DWF_SI_PART=WF_SI_SPREAD -DWF_SI_METHOD=WF_SI_SM -DWF_EMU_NS="$ns" \
        -D"$entry=${entry}_$v" -Dwf_smr_info="wf_smr_info_$ns" "${defs[@]}" -Wno-unused-parameter
done
build test_emu_sets.o test_emu_sets.cpp
sets_objs=("${objs[@]}")
# the real-valued kernels (-DWF_REAL=1, test_emu_real.cpp), each against the complex module of the
# same (dim, precision, width, direction, method): those built above, and the ones built here
objs=("$out/cuda_emu.o")
for m in 1:64:5:SPREAD:GM 3:32:5:SPREAD:GM 1:32:4:SPREAD:SM 2:32:6:SPREAD:SM 2:64:7:SPREAD:SM \
         2:64:12:SPREAD:SM 3:32:5:SPREAD:SM 3:64:10:SPREAD:SM 3:64:13:SPREAD:SM 1:64:5:INTERP:SM \
         2:64:7:INTERP:SM 3:32:5:INTERP:SM 3:64:8:INTERP:SM 2:32:6:INTERP:GM 3:64:8:INTERP:GM; do
    IFS=: read -r d p w part meth <<<"$m"
    objs+=("$out/si_${d}d_f${p}_w${w}_${part,,}_${meth,,}.o") # the complex module (above)
done
for m in 1:32:7 2:64:11 3:32:7 3:64:5; do
    IFS=: read -r d p w <<<"$m"
    objs+=("$out/od_${d}d_f${p}_w${w}.o")
done
objs+=("$out/si_3d_f32_w7_spread_sm_fix3.o" "$out/si_3d_f32_w5_spread_sm_smr.o")
# (real (r) and complex (c) modules; :v a variant, its entry renamed entry + "_v")
for m in 1:64:5:SPREAD:GM:r 3:32:5:SPREAD:GM:r 1:32:4:SPREAD:SM:r 1:64:5:SPREAD:SM:r \
         1:64:5:SPREAD:SM:c 2:32:6:SPREAD:SM:r 2:64:7:SPREAD:SM:r 2:64:12:SPREAD:SM:r \
         3:32:5:SPREAD:SM:r 3:64:10:SPREAD:SM:r 3:64:13:SPREAD:SM:r 1:64:5:INTERP:SM:r \
         2:64:7:INTERP:SM:r 3:32:5:INTERP:SM:r 3:64:8:INTERP:SM:r 2:32:6:INTERP:GM:r \
         3:64:8:INTERP:GM:r 1:32:7:SPREAD:OD:r 2:64:11:SPREAD:OD:r 3:32:7:SPREAD:OD:r \
         3:64:5:SPREAD:OD:r 2:32:6:SPREAD:GM:r:thr 2:32:6:SPREAD:GM:c:thr \
         2:32:6:INTERP:GM:r:team 2:32:6:INTERP:GM:c:team 3:32:7:SPREAD:SM:r:fix3 \
         3:32:5:SPREAD:SM:r:smr; do
    IFS=: read -r d p w part meth kind v <<<"$m"
    ps="f$p"
    defs=()
    [[ $kind == r ]] && ps="f${p}r" && defs+=(-DWF_REAL=1)
    ns="si_${d}d_${ps}_w${w}_${part,,}_${meth,,}${v:+_$v}"
    entry="wf_${part,,}_${meth,,}_${d}d_${ps}_w${w}"
    case "$v" in
    thr) defs+=(-DWF_SPREAD_GM_TEAM=0 -D"$entry=${entry}_$v") ;;
    team) defs+=(-DWF_INTERP_GM_TEAM=1 -D"$entry=${entry}_$v") ;;
    fix3) defs+=(-DWF_SPREAD_SM_OD=0 -DWF_SPREAD_SM_TEAM=1 -DWF_SPREAD_SM_FIX=1
                 -D"$entry=${entry}_$v") ;;
    smr) defs+=(-DWF_SPREAD_SM_REG=1 -DWF_SMR_PX=8 -D"$entry=${entry}_$v") ;;
    esac
    build "$ns.o" si_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" -DWF_W="$w" \
        -DWF_SI_PART="WF_SI_$part" -DWF_SI_METHOD="WF_SI_$meth" -DWF_EMU_NS="$ns" \
        -Dwf_smr_info="wf_smr_info_$ns" -Dwf_sm_fix3="wf_sm_fix3_$ns" "${defs[@]}" \
        -Wno-unused-parameter
done
# the half spectrum's deconvolve / amplify (module deconvolve_{d}d_p, amplify_{d}d_p)
for b in 1:64 2:32 3:64; do
    IFS=: read -r d p <<<"$b"
    build "deconvolve_${d}d_f${p}.o" prep_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" \
        -DWF_PREP_PART=2 -DWF_EMU_NS="deconvolve_${d}d_f${p}"
    build "amplify_${d}d_f${p}.o" prep_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" \
        -DWF_PREP_PART=3 -DWF_EMU_NS="amplify_${d}d_f${p}"
done
build test_emu_real.o test_emu_real.cpp
real_objs=("${objs[@]}")
# module offsets_{d}d_p (test_emu_offsets.cpp; a small WF_OFF_ROUND, so that blocks flush their
# counters inside the loop too), against the host's params/offsets.c and what it needs (C)
objs=("$out/cuda_emu.o")
for b in 1:32 1:64 2:32 2:64 3:32 3:64; do
    IFS=: read -r d p <<<"$b"
    build "offsets_${d}d_f${p}.o" offsets_module.cpp -DWF_DIM="$d" -DWF_PREC="$p" \
        -DWF_EMU_NS="offsets_${d}d_f${p}" -DWF_OFF_ROUND=2
done
root="$here/../../.."
build test_emu_offsets.o test_emu_offsets.cpp -I"$root/c_core/src" -I"$root/c_core/include"
for p in "${pids[@]}"; do
    wait "$p" || { echo "run.sh: a compile failed" >&2; exit 1; }
done
for f in params/offsets params/memo params/grid params/width params/kernel runtime/error; do
    o="$out/host_${f//\//_}.o"
    gcc -std=c11 -O2 -D_GNU_SOURCE -DWARPFFT_BUILDING -Wall -Wextra -Werror -I"$root/c_core/src" \
        -I"$root/c_core/include" -I"$here/../.." -c "$root/c_core/src/$f.c" -o "$o"
    objs+=("$o")
done
"$CXX" "${od_objs[@]}" -o "$out/test_emu"
"$CXX" "${sets_objs[@]}" -o "$out/test_emu_sets"
"$CXX" "${real_objs[@]}" -o "$out/test_emu_real"
"$CXX" "${objs[@]}" -o "$out/test_emu_offsets" -lpthread
status=0
"$out/test_emu" "$@" || status=1
"$out/test_emu_sets" "$@" || status=1
"$out/test_emu_real" "$@" || status=1
"$out/test_emu_offsets" "$@" || status=1
exit $status
