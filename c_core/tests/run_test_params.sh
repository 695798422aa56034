#!/bin/sh
# Builds c_core/tests/test_params.c and its groups test_params_*.c (test_params.h) with the
# params code (ASan + UBSan) and runs it: the plan parameter stages of c_core/src/params/params.h
# (params.c, options.c, kernel.c, width.c, offsets.c, memo.c, grid.c, bins.c, cost.c).
# Links c_core/src/runtime/error.c when it is there and links on its own; else a stub in the test.
set -e
# shellcheck source=c_core/tests/params_build.sh
. "$(dirname "$0")/params_build.sh"
out="${TMPDIR:-/tmp}/warpfft_test_params"
flags="$flags -DWF_SOURCE_ROOT=\"$root\""
t="$root/c_core/tests"
files="$t/test_params.c $t/test_params_kernel.c $t/test_params_width.c $t/test_params_emulate.c
       $t/test_params_grid.c $t/test_params_opts.c $t/test_params_bins.c $t/test_params_cost.c
       $t/test_params_det.c $t/test_params_offsets.c $t/test_params_points.c $t/test_params_table.c
       $t/test_params_real.c
       $params_files"
# shellcheck disable=SC2086
if [ -f "$rt/error.c" ] && gcc $flags $files "$rt/error.c" -lm -o "$out" 2>/dev/null; then
    echo "test_params: with c_core/src/runtime/error.c"
else
    echo "test_params: with the stub error functions"
    gcc $flags -DWF_TEST_STUB_ERROR $files -lm -o "$out"
fi
exec "$out"
