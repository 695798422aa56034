# shellcheck shell=sh disable=SC2034 # the variables are the sourcing script's
# Sourced by run_test_params.sh and run_test_type3.sh (not run on its own): what both builds of
# the plan parameter code share. Sets root (the repository), src (c_core/src/params), rt
# (c_core/src/runtime), flags (ASan + UBSan) and params_files (the parameter stages both link).
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/c_core/src/params"
rt="$root/c_core/src/runtime"
flags="-std=c11 -D_GNU_SOURCE -DWARPFFT_BUILDING -pthread -Wall -Wextra -Werror -O1 -g
       -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -I $root/c_core/include -I $root/c_core/src -I $root/kernels"
params_files="$src/params.c $src/options.c $src/kernel.c $src/width.c $src/offsets.c $src/memo.c
              $src/grid.c $src/bins.c $src/cost.c"
