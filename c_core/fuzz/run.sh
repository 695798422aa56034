#!/usr/bin/env bash
# run.sh — builds the coverage-guided fuzz targets of c_core/fuzz (libFuzzer, with ASan and
# UBSan) and runs each for a bounded time, printing per target the time, the executions and
# what coverage it reached. A crash, a sanitizer report, a timeout or an oracle's abort fails
# the run and leaves the input under target/fuzz/artifacts (add it to the target's corpus once
# the bug is fixed: it is the regression test).
#
#   c_core/fuzz/run.sh [SECONDS] [TARGET...]   # default 20 s each; all targets
#   c_core/fuzz/run.sh 0                       # build, then run only the corpora once
#   WF_FUZZ_JOBS=2 c_core/fuzz/run.sh 600      # two targets at a time (just fuzz)
#
# Targets (one file each, its opening comment says what it drives and what it checks):
#   fuzz_abi     the C ABI's argument checking, the C core on the stand-in driver and cuFFT
#                (plans, batched points, the live-plan pool, the Toeplitz operator, CUDA graph
#                capture)
#   fuzz_xla     the XLA FFI handler's decoding of attributes and buffers (with
#                fuzz_xla_frame.c: the input read into a call frame)
#   fuzz_xla_toeplitz  the same for the Toeplitz operator's two XLA handlers
#   fuzz_kcache  the kernel disk cache's entry reader (and WARPFFT_CACHE_MAX_SIZE)
#   fuzz_opts    the option table's setter (warpfft_opts_set) on any names and values
# After each target: its executions and coverage, its calls per entry point (the target prints
# them at exit) and the edges libFuzzer covered in each of the entry points added since the
# first corpus (-print_coverage); one of those left uncovered fails the run.
# Seeds: c_core/fuzz/corpus/<target>/ (committed, small; read only here). Inputs found while
# running go to target/fuzz/corpus/<target>/ and are kept between runs.
# Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev; scripts/setup.sh installs them),
# python3, and the stand-ins' sources in c_core/tests.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SECONDS_EACH=${1:-20}
shift || true
case $SECONDS_EACH in '' | *[!0-9]*)
    echo "usage: run.sh [SECONDS] [TARGET...]"
    exit 2
    ;;
esac
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_abi fuzz_xla fuzz_xla_toeplitz fuzz_kcache fuzz_opts)
WORK=${WF_FUZZ_BUILD:-$ROOT/target/fuzz}
CC=${WF_FUZZ_CC:-clang}
SRC=$ROOT/c_core/src
TESTS=$ROOT/c_core/tests
mkdir -p "$WORK/bin" "$WORK/gen" "$WORK/standin" "$WORK/artifacts" "$WORK/logs"

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return d && n ? 0 : 0; }' |
    "$CC" -x c -fsanitize=fuzzer - -o "$WORK/bin/probe" 2>/dev/null; then
    echo "FAIL: $CC cannot build libFuzzer targets (-fsanitize=fuzzer); install clang and" \
        "libclang-rt-14-dev (scripts/setup.sh)"
    exit 1
fi

# ---- build ----
# The C core's sources wherever they sit under c_core/src; headers are named by their folder
# ("runtime/kcache.h"), so c_core/src is the include path.
mapfile -t CORE < <(find "$SRC" -name '*.c' | sort)
CFLAGS=(-std=c11 -D_GNU_SOURCE -DWARPFFT_BUILDING -pthread -g -O1 -fno-omit-frame-pointer
    -Wall -Wextra -Werror -I"$ROOT/c_core/include" -I"$SRC" -I"$ROOT/kernels" -I"$TESTS"
    -I"$WORK/gen")
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
FUZZ=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
LIBS=(-ldl -lpthread -lm)
echo '#include "fake_kernels.h"' >"$WORK/gen/warpfft_kernels.h"
python3 "$TESTS/fault_kernels.py" "$WORK/gen/fault_kernels.c"
# The stand-in libcuda.so.1 and libcufft.so.12 (sanitized; the target's runtime serves them).
"$CC" "${CFLAGS[@]}" -fPIC "${SAN[@]}" -shared "$TESTS/standin_cuda.c" \
    "$TESTS/standin_cuda_memory.c" "$TESTS/standin_cuda_modules.c" \
    "$TESTS/standin_cuda_kernels.c" "$TESTS/standin_cuda_graphs.c" "$TESTS/standin_cuda_width.c" \
    -o "$WORK/standin/libcuda.so.1" -lm
"$CC" "${CFLAGS[@]}" -fPIC "${SAN[@]}" -shared "$TESTS/standin_cufft.c" \
    -o "$WORK/standin/libcufft.so.12" -L"$WORK/standin" -l:libcuda.so.1
build() { # build NAME SOURCES...: the target with the C core sources it needs
    local name=$1
    shift
    "$CC" "${CFLAGS[@]}" "${FUZZ[@]}" "$HERE/$name.c" "$@" -o "$WORK/bin/$name" "${LIBS[@]}"
}
t0=$(date +%s)
for t in "${TARGETS[@]}"; do
    case $t in
    fuzz_abi) build fuzz_abi "${CORE[@]}" "$WORK/gen/fault_kernels.c" ;;
    fuzz_xla)
        build fuzz_xla "$HERE/fuzz_xla_frame.c" "$(find "$SRC" -name xla_ffi.c)" \
            "$(find "$SRC" -name xla_common.c)"
        ;;
    fuzz_xla_toeplitz)
        build fuzz_xla_toeplitz "$HERE/fuzz_xla_frame.c" "$(find "$SRC" -name xla_toeplitz.c)" \
            "$(find "$SRC" -name xla_common.c)"
        ;;
    fuzz_opts)
        build fuzz_opts "$SRC"/params/*.c "$(find "$SRC" -name error.c)"
        ;;
    fuzz_kcache)
        build fuzz_kcache "$(find "$SRC" -name kcache.c)" "$(find "$SRC" -name sha256.c)" \
            "$(find "$SRC" -name libfind.c)" "$(find "$SRC" -name nvrtc.c)" \
            "$(find "$SRC" -name error.c)"
        ;;
    *)
        echo "FAIL: no fuzz target $t"
        exit 1
        ;;
    esac
done
echo "fuzz: built ${TARGETS[*]} in $(($(date +%s) - t0)) s"
# Scratch files (fuzz_kcache writes an entry per input): in memory where there is a tmpfs.
TMPROOT=$WORK/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && TMPROOT=/dev/shm
mkdir -p "$TMPROOT"
SCRATCH=$(mktemp -d "$TMPROOT/wf_fuzz.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# ---- run ----
run_one() { # run_one NAME: runs it for SECONDS_EACH, writes its log; the status is libFuzzer's
    local t=$1 log=$WORK/logs/$1.log
    mkdir -p "$WORK/corpus/$t" "$SCRATCH/$t"
    local env=(TMPDIR="$SCRATCH/$t"
        ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:protect_shadow_gap=0
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
    if [ "$t" = fuzz_abi ]; then
        env+=(LD_LIBRARY_PATH="$WORK/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            WARPFFT_CUFFT_LIB="$WORK/standin/libcufft.so.12" WARPFFT_CUFFT_DEFAULT_PATHS=0
            WARPFFT_CACHE_DIR=)
    fi
    local limit=(-max_total_time="$SECONDS_EACH") # (0 would be no limit for libFuzzer)
    [ "$SECONDS_EACH" -gt 0 ] || limit=(-runs=0)
    env "${env[@]}" "$WORK/bin/$t" "${limit[@]}" -print_final_stats=1 -print_coverage=1 \
        -timeout=25 -rss_limit_mb=2560 -max_len=4096 -artifact_prefix="$WORK/artifacts/$t-" \
        "$WORK/corpus/$t" "$HERE/corpus/$t" >"$log" 2>&1
}
# The entry points each target must reach (regular expressions on function names): those added
# since the first corpus. fuzz_abi: the pool, the Toeplitz operator, batched points, points ids,
# one-call transforms, CUDA graph capture; fuzz_xla: the handler; fuzz_xla_toeplitz: its two handlers.
entry_points() {
    case $1 in
    fuzz_abi) echo '^(warpfft_pool_(acquire|release|acquire_toeplitz|release_toeplitz|clear|set_limits|get_info)|warpfft_toeplitz_(create|apply|apply_spectrum|spectrum|params|get_info|workspace_bytes|destroy)|warpfft_setpts3?_sets|warpfft_plan_points_id|warpfft_nufft[123]|wf_live_join_graph|wf_stream_capture)$' ;;
    fuzz_xla) echo '^warpfft_xla_nufft$' ;;
    fuzz_xla_toeplitz) echo '^warpfft_xla_toeplitz_(spectrum|apply)$' ;;
    *) echo '^$' ;;
    esac
}
# coverage NAME: "name edges covered/all" of the target's entry points from -print_coverage's
# COVERED_FUNC / UNCOVERED_FUNC lines; status 1 when one of them was not reached.
coverage() {
    awk -v pat="$(entry_points "$1")" '
        ($1 == "COVERED_FUNC:" || $1 == "UNCOVERED_FUNC:") && $6 ~ pat {
            split($5, e, "/"); name = $6
            if (!(name in seen) || e[1] > best[name]) { best[name] = e[1]; all[name] = e[2] }
            seen[name] = 1
        }
        END {
            line = ""; missing = 0
            for (n in seen) { line = line sprintf(" %s %d/%d", n, best[n], all[n]); if (best[n] == 0) missing++ }
            if (line != "") print "    edges covered:" line
            exit missing > 0 }' "$WORK/logs/$1.log" | fold -s -w 100 | sed '2,$s/^/      /'
    return "${PIPESTATUS[0]}"
}
summary() { # summary NAME STATUS SECONDS: one line from the log's final statistics
    local t=$1 st=$2 secs=$3 log=$WORK/logs/$1.log
    local execs rate cov corp rss
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -1)
    corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -1)
    if [ "$st" = 0 ]; then
        printf '  %-12s ok: %s s, %s executions (%s/s), coverage %s edges, corpus %s inputs, ' \
            "$t" "$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${corp:-?}"
        printf 'peak RSS %s MB\n' "${rss:-?}"
        grep -E "^$t calls:" "$log" | sed 's/^/    /'
        if ! coverage "$t"; then
            echo "  $t FAILED: an entry point above was never reached (add a seed: make_seeds.py)"
            return 1
        fi
    else
        echo "  $t FAILED after $secs s, ${execs:-?} executions (status $st); the end of its log:"
        grep -v '^#[0-9]' "$log" | tail -40 | sed 's/^/    /'
        ls -1 "$WORK/artifacts/$t-"* 2>/dev/null | sed 's/^/    input: /' || true
    fi
}

echo "fuzz: ${SECONDS_EACH} s per target, ${WF_FUZZ_JOBS:-1} at a time (logs: $WORK/logs)"
status=0
jobs=${WF_FUZZ_JOBS:-1}
pending=("${TARGETS[@]}")
while [ ${#pending[@]} -gt 0 ]; do
    batch=("${pending[@]:0:$jobs}")
    pending=("${pending[@]:$jobs}")
    declare -A pid=() start=()
    for t in "${batch[@]}"; do
        start[$t]=$(date +%s)
        run_one "$t" &
        pid[$t]=$!
    done
    for t in "${batch[@]}"; do
        st=0
        wait "${pid[$t]}" || st=$?
        summary "$t" "$st" "$(($(date +%s) - ${start[$t]}))" || st=1
        [ "$st" = 0 ] || status=1
    done
    unset pid start
done
[ $status = 0 ] && echo "fuzz: no crash" || echo "FAIL: a fuzz target found a bug"
exit $status
