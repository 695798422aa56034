#!/usr/bin/env bash
# check_layers.sh — the C core's layering (docs/layout.md), checked on the sources and objects:
#   1. a folder of c_core/src includes headers of its own folder and of the folders below it
#      only: runtime/ < params/ < plans/ < api/; framework/ is a client of the public ABI and
#      includes only its own headers (and warpfft.h, warpfft_xla.h); the plain C headers of
#      kernels/ (the kernel's definition, the module names) sit below every layer;
#   2. nothing below api/ calls a public warpfft_* function: the objects of runtime/, params/
#      and plans/ leave no warpfft_* symbol undefined (they may define the leaf public calls
#      they own, e.g. warpfft_malloc, but never go through the public ABI themselves).
#   3. the public headers (c_core/include: warpfft.h, its parts under warpfft/, warpfft_xla.h)
#      include standard C headers and one another only (no CUDA, no internal header), and each
#      compiles alone, as C and as C++.
# Run by run_tests.sh; on its own: c_core/tests/check_layers.sh [BUILD_DIR]. Needs gcc and nm.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=$ROOT/c_core/src
OUT=${1:-$ROOT/target/c_core_tests}/layers
mkdir -p "$OUT/gen"
echo '#include "fake_kernels.h"' >"$OUT/gen/warpfft_kernels.h" # the kernels table's declarations
status=0

# ---- 1. includes go down only ----
layers=(runtime params plans api)
allowed() { # allowed FOLDER INCLUDED_FOLDER: 0 when FOLDER may include INCLUDED_FOLDER
    local from=$1 to=$2 i_from=-1 i_to=-1
    [ "$from" = "$to" ] && return 0
    [ "$from" = framework ] && return 1
    for i in "${!layers[@]}"; do
        [ "${layers[$i]}" = "$from" ] && i_from=$i
        [ "${layers[$i]}" = "$to" ] && i_to=$i
    done
    [ "$i_from" -ge 0 ] && [ "$i_to" -ge 0 ] && [ "$i_to" -lt "$i_from" ]
}
for dir in "$SRC"/*/; do
    from=$(basename "$dir")
    case " ${layers[*]} framework " in
    *" $from "*) ;;
    *) echo "FAIL: c_core/src/$from/ is no layer of check_layers.sh (add it)"; status=1 ;;
    esac
    while IFS=: read -r file line inc; do
        to=$(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' <<<"$inc")
        if [ -z "$to" ]; then
            case "$inc" in
            '#include "warpfft.h"' | '#include "warpfft_kernels.h"') continue ;;
            '#include "warpfft_xla.h"') # the public header of the framework handlers' exports
                [ "$from" = framework ] && continue ;;
            esac
            # the plain C headers the kernels share with the host (kernels/kernel_shape.h,
            # module_names.h): below every layer, as the kernels know nothing of the host
            h=$(sed -n 's/^#include "\([a-z_]*\.h\)"$/\1/p' <<<"$inc")
            [ -n "$h" ] && [ -f "$ROOT/kernels/$h" ] && [ "$from" != framework ] && continue
            echo "FAIL: ${file#"$ROOT"/}:$line: $inc (name headers with their folder)"
            status=1
        elif ! allowed "$from" "$to"; then
            echo "FAIL: ${file#"$ROOT"/}:$line: $from/ includes $to/ ($inc): an include going up"
            status=1
        fi
    done < <(grep -n '^#include "' "$dir"*.[ch])
done

# ---- 2. no public call below api/ ----
# The public functions: those the public headers declare (warpfft.h's parts, warpfft_xla.h).
mapfile -t public < <(grep -ho 'warpfft_[a-z0-9_]*(' "$ROOT"/c_core/include/*.h \
    "$ROOT"/c_core/include/warpfft/*.h | tr -d '(' | sort -u)
[ ${#public[@]} -gt 20 ] || { echo "FAIL: found only ${#public[@]} public functions"; exit 1; }
for dir in runtime params plans; do
    for f in "$SRC/$dir"/*.c; do
        o=$OUT/$dir.$(basename "$f" .c).o
        gcc -std=c11 -D_GNU_SOURCE -DWARPFFT_BUILDING -fPIC -fvisibility=hidden -pthread \
            -I"$ROOT/c_core/include" -I"$SRC" -I"$ROOT/kernels" -I"$OUT/gen" -I"$HERE" \
            -c "$f" -o "$o"
        calls=$(nm -u "$o" | awk '{print $2}' | grep -Fx "${public[@]/#/-e}" || true)
        if [ -n "$calls" ]; then
            echo "FAIL: c_core/src/$dir/$(basename "$f") calls the public ABI:" $calls
            status=1
        fi
    done
done
# ---- 3. the public headers: standard headers and one another only; each one stands alone ----
INC=$ROOT/c_core/include
for h in "$INC"/*.h "$INC"/warpfft/*.h; do
    rel=${h#"$INC"/}
    while IFS= read -r inc; do
        case "$inc" in
        '#include <std'*'.h>') ;;
        '#include "warpfft.h"' | '#include "warpfft/'*'.h"') ;;
        '#include "'*'.h"') # a sibling part, by its bare name
            [ -f "$(dirname "$h")/$(sed 's/#include "\(.*\)"/\1/' <<<"$inc")" ] ||
                { echo "FAIL: $rel: $inc is no public header"; status=1; } ;;
        *) echo "FAIL: $rel: $inc (public headers include standard C headers and each other)"
            status=1 ;;
        esac
    done < <(grep '^#include' "$h" | sed 's/ *\/\*.*//')
    for lang in c c++; do
        echo "#include \"$rel\"" | gcc -x "$lang" -fsyntax-only -Wall -Wextra -Werror -I"$INC" - ||
            { echo "FAIL: $rel does not compile alone as $lang"; status=1; }
    done
done
[ $status = 0 ] && echo "layers: includes go down only; nothing below api/ calls a warpfft_* function;" \
    "the public headers stand alone"
exit $status
