#!/usr/bin/env bash
# The library path recipes get (scripts/libwarpfft_path.sh) belongs to the build they asked
# for: an aot build followed by a jit build (Fresh: its build script does not run) used to
# leave the aot library in target/<profile>, which `just install`, `just wheel` and the Python
# tests then shipped. Uses the debug builds `just test` made before (both Fresh here).
set -euo pipefail
cd "$(dirname "$0")/.."
archs="80;90"
aot=$(WARPFFT_CUDA_ARCHS="$archs" bash scripts/libwarpfft_path.sh --no-default-features --features aot)
jit=$(bash scripts/libwarpfft_path.sh)
if [ "$aot" = "$jit" ]; then
    echo "check_libpath: the aot and the jit build report the same library $aot" >&2
    exit 1
fi
python3 scripts/libwarpfft_info.py "$aot" aot "${archs/;/,}"
python3 scripts/libwarpfft_info.py "$jit" jit
# Asking again, in the other order, gives the same answers (nothing is copied around).
[ "$(WARPFFT_CUDA_ARCHS="$archs" bash scripts/libwarpfft_path.sh --no-default-features --features aot)" = "$aot" ]
echo "check_libpath: ok"
