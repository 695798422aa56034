#!/bin/sh
# Builds c_core/tests/test_type3.c with the type-3 parameter code and the plan parameter stages
# it builds on (ASan + UBSan) and runs it. No GPU.
set -e
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${TMPDIR:-/tmp}/warpfft_test_type3"
src="$root/c_core/src/params"
rt="$root/c_core/src/runtime"
flags="-std=c11 -D_GNU_SOURCE -DWARPFFT_BUILDING -pthread -Wall -Wextra -Werror -O1 -g
       -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -I $root/c_core/include -I $root/c_core/src -I $root/kernels"
files="$root/c_core/tests/test_type3.c $src/type3_params.c $src/params.c $src/options.c $src/kernel.c
       $src/width.c $src/grid.c $src/bins.c $src/cost.c $src/offsets.c $src/memo.c $rt/error.c"
# shellcheck disable=SC2086
gcc $flags $files -lm -o "$out"
exec "$out"
