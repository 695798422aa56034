#!/usr/bin/env bash
# check_nvrtc_modules.sh — the kernel sources an `nvrtc` build embeds compile with NVRTC, with
# the options and headers the build recorded, for the archs given (no GPU needed: CUBINs and
# PTX are only produced, not run). Builds the nvrtc-only crate (no toolkit used), then
# c_core/tests/test_nvrtc_modules.c against its generated kernels table, and runs it with the
# NVRTC found like at run time (WARPFFT_NVRTC_LIB, wheels, CUDA_PATH, /usr/local/cuda, ...).
#   bash scripts/check_nvrtc_modules.sh            # a sample of modules for sm_90
#   bash scripts/check_nvrtc_modules.sh 80 120     # the sample for other archs (120: newer than
#                                                  # NVRTC 12.x knows, PTX then)
#   bash scripts/check_nvrtc_modules.sh --all 90   # every module (about 2 minutes per arch)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -q '^nvrtc *=' Cargo.toml; then
    echo "SKIP: this checkout has no \`nvrtc\` feature"
    exit 0
fi
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(90)
lib=$(bash scripts/libwarpfft_path.sh --no-default-features --features nvrtc)
out=$(dirname "$(dirname "$lib")")
bin=target/c_core_tests/test_nvrtc_modules
mkdir -p "$(dirname "$bin")"
gcc -std=c11 -D_GNU_SOURCE -DWARPFFT_BUILDING -O1 -g -pthread -Wall -Wextra -Werror \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Ic_core/include -Ic_core/src -Ikernels -I"$out" c_core/tests/test_nvrtc_modules.c \
    c_core/src/runtime/error.c c_core/src/runtime/libfind.c c_core/src/runtime/nvrtc.c \
    "$out/warpfft_kernels.c" \
    -o "$bin" -ldl
ASAN_OPTIONS=detect_leaks=1 "$bin" "${args[@]}"
