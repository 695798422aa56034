#!/usr/bin/env bash
# kernels/test/emu/run.sh — builds the CPU emulation of the output-driven spreading kernels and
# of module sort_stable (cuda_emu.h) and runs test_emu.cpp: no GPU, no CUDA toolkit, g++ only.
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
for p in "${pids[@]}"; do
    wait "$p" || { echo "run.sh: a compile failed" >&2; exit 1; }
done
"$CXX" "${objs[@]}" -o "$out/test_emu"
"$out/test_emu" "$@"
