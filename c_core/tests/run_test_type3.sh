#!/bin/sh
# Builds c_core/tests/test_type3.c with the type-3 parameter code and the plan parameter stages
# it builds on (ASan + UBSan) and runs it. No GPU.
set -e
# shellcheck source=c_core/tests/params_build.sh
. "$(dirname "$0")/params_build.sh"
out="${TMPDIR:-/tmp}/warpfft_test_type3"
files="$root/c_core/tests/test_type3.c $src/type3_params.c $params_files $rt/error.c"
# shellcheck disable=SC2086
gcc $flags $files -lm -o "$out"
exec "$out"
