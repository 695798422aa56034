#!/bin/sh
# Builds and runs the C examples against an installed warpfft (`just install PREFIX=...`):
#     examples/c/run.sh PREFIX
# Exit 0 on success, or when no GPU is present (type1_2d then exits 2 after printing why).
set -eu
prefix=$(cd "${1:?usage: examples/c/run.sh PREFIX}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
for ex in info hello type1_2d toeplitz one_call; do
    # shellcheck disable=SC2046  # word splitting of pkg-config's flags is intended
    ${CC:-cc} -Wall -Wextra "$here/$ex.c" $(pkg-config --cflags --libs warpfft) -o "$out/$ex"
done
# every public header is installed: the XLA handlers' exports too
printf '#include <warpfft_xla.h>\nint main(void) { return warpfft_xla_nufft == 0; }\n' >"$out/xla.c"
# shellcheck disable=SC2046
${CC:-cc} -Wall -Wextra "$out/xla.c" $(pkg-config --cflags --libs warpfft) -o "$out/xla"
"$out/info"
for ex in hello type1_2d toeplitz one_call; do
    rc=0
    "$out/$ex" || rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "run.sh: no GPU here ($ex exit 2): built and failed cleanly"
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
done
