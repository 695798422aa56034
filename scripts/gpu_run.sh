#!/usr/bin/env bash
# Runs on the GPU machine from the repository root: bash .gpu/run.sh [stage...]
# Stages: info tests demo load rust-kernels c python sanitize bench (default: all; rust-kernels is
# fatbuild's example crate in each mode: results, first-launch latency cold and warm, sizes),
# sanitize-builds (memcheck of the jit and nvrtc builds), sanitize-kernels (memcheck and
# racecheck of module offsets and the register-tile spreading), bench-peer (suite B beside the reference, .peer/ carried), density (non-uniform points beside the reference), bench-jit, bench-nvrtc, python-gpu, frameworks, toeplitz (the
# normal operator: tests, example, benchmark, memcheck), batched (batched points: tests, benchmark,
# memcheck), real (real-valued data: the Rust, Python, JAX and PyTorch tests, jit and nvrtc too, real vs complex timings, memcheck),
# graphs (CUDA graphs: C capture and replay, its memcheck, the PyTorch ops under
# torch.cuda.graph and torch.compile), and huge (64-bit sizes:
# needs ~95 GB of device memory, e.g. nvidia-h200; not in the default list). Logs: $OUT or .gpu/logs,
# few files (the device tool returns at most 8).
set -uo pipefail
BENCH_CASES=${BENCH_CASES:-}
L=${OUT:-.gpu/logs}; mkdir -p "$L"
G=.gpu
[ -d $G/aot ] || python3 $G/unbundle.py $G/bundle.tar.xz $G
stages=${*:-info tests demo load rust-kernels c python sanitize bench}
log=$L/run.log
say() { echo "== $*" | tee -a "$log"; }
run() { "$@" 2>&1 | tee -a "$log"; local rc=${PIPESTATUS[0]}; echo "-- exit $rc: $*" | tee -a "$log"; return $rc; }
fails=0
for s in $stages; do case $s in
info)
    say info
    run nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv ;;
tests)
    # nvrtc: kernels compiled by NVRTC at run time into a fresh kernel cache
    export WARPFFT_CACHE_DIR=${WARPFFT_CACHE_DIR:-$(mktemp -d)}
    for m in aot jit nvrtc; do
        for t in no_gpu gpu_api gpu_accuracy gpu_type3 gpu_toeplitz gpu_deterministic gpu_batched_points gpu_real $([ $m = nvrtc ] && echo gpu_nvrtc); do
            say "$m $t"; run $G/$m/$t --test-threads=1 --nocapture || fails=$((fails+1))
        done
    done ;;
demo)
    for m in aot jit; do say "$m demo"; run $G/$m/demo || fails=$((fails+1)); done ;;
load)
    # module load time: AOT vs JIT; caches off, cold (empty) and warm. A jit build keeps its
    # linked modules in warpfft's kernel cache (WARPFFT_CACHE_DIR), not the driver's.
    for m in aot jit; do
        export CUDA_CACHE_PATH=$(mktemp -d) WARPFFT_CACHE_DIR=$(mktemp -d)
        say "$m load, caches off"
        CUDA_CACHE_DISABLE=1 WARPFFT_CACHE_DIR= run $G/$m/load_time || fails=$((fails+1))
        say "$m load, cold caches"; run $G/$m/load_time
        say "$m load, warm caches"; run $G/$m/load_time
    done
    # nvrtc: an empty kernel cache (compiled now: "nvrtc"), then the same cache ("nvrtc-cache")
    export WARPFFT_CACHE_DIR=$(mktemp -d)
    say "nvrtc load, empty kernel cache"; run $G/nvrtc/load_time || fails=$((fails+1))
    say "nvrtc load, warm kernel cache"; run $G/nvrtc/load_time || fails=$((fails+1)) ;;
rust-kernels)
    # fatbuild's example crate (examples/rust-kernels: a saxpy and a reduction, its own CUDA C
    # kernels, loaded by fatbuild-rt) in each mode: the results checked on the GPU, and the
    # first-launch latency (both modules loaded, each kernel launched once and waited for; and
    # process start to first results) with the caches off, cold (a fresh driver JIT cache,
    # CUDA_CACHE_PATH, and a fresh fatbuild-rt kernel cache, FATBUILD_RT_CACHE_DIR) and warm
    # (the same two again). RESULT lines: mode, image used, init/load/first-launch/total ms;
    # SIZE lines: embedded bytes per mode.
    for m in jit aot nvrtc; do
        say "rust-kernels $m: embedded size"; run $G/$m/rust-kernels --sizes || fails=$((fails+1))
    done
    for m in jit aot nvrtc; do
        cc=$(mktemp -d) kc=$(mktemp -d)
        say "rust-kernels $m: caches off (CUDA_CACHE_DISABLE=1, FATBUILD_RT_CACHE_DIR=)"
        CUDA_CACHE_DISABLE=1 FATBUILD_RT_CACHE_DIR= run $G/$m/rust-kernels || fails=$((fails+1))
        say "rust-kernels $m: cold (empty CUDA_CACHE_PATH and kernel cache)"
        CUDA_CACHE_PATH=$cc FATBUILD_RT_CACHE_DIR=$kc run $G/$m/rust-kernels || fails=$((fails+1))
        say "rust-kernels $m: warm (the same caches again)"
        CUDA_CACHE_PATH=$cc FATBUILD_RT_CACHE_DIR=$kc run $G/$m/rust-kernels || fails=$((fails+1))
    done
    say "rust-kernels aot for sm_80 only: the wrong-arch error expected (exit 1, 'no image for this GPU')"
    out=$($G/aot/rust-kernels-sm80 2>&1); rc=$?
    echo "$out" | tee -a "$log"
    if [ $rc = 1 ] && grep -q "has no image for this GPU" <<<"$out"; then
        echo "-- ok: refused with the wrong-arch error" | tee -a "$log"
    else
        echo "-- FAIL: exit $rc without the wrong-arch error" | tee -a "$log"; fails=$((fails+1))
    fi
    say "rust-kernels aot+jit for sm_80 only: the PTX inside the fatbin, JIT-compiled (exit 0)"
    CUDA_CACHE_DISABLE=1 run $G/aot/rust-kernels-sm80-jit || fails=$((fails+1))
    say "rust-kernels summary"
    grep -h '^RESULT\|^SIZE' "$log" ;;
c)
    say "C examples"; run $G/c/hello || fails=$((fails+1)); run $G/c/type1_2d || fails=$((fails+1))
    run $G/c/toeplitz || fails=$((fails+1)); run $G/c/one_call || fails=$((fails+1)) ;;
python)
    say python
    # nothing outside the GPU machine is reachable: no PyPI downloads there
    WARPFFT_SKIP_NETWORK_TESTS=1 WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib run python3 -m pytest python/tests -q -rs -p no:cacheprovider || fails=$((fails+1))
    for ex in examples/python/*.py; do
        WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 $ex || fails=$((fails+1))
    done ;;
python-gpu)
    # the Python package's device paths: memcheck, the one-shot benchmark, the wheel from pip
    # API errors are off: torch, cupy and jax probe the driver (cuGetProcAddress) and count as such
    say "python device paths under compute-sanitizer memcheck"
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib run compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 python3 -m pytest python/tests/test_gpu.py python/tests/test_gpu_memory_safety.py python/tests/test_torch_checks.py -q -rs -p no:cacheprovider -k "device_array or cupy or torch or numba or dlpack or temporaries or threads or spreadinterponly" > "$L/sanitize_py.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize_py.log" | tee -a "$log"
    say "python one-shot benchmark"
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 python/bench/oneshot.py --json $L/oneshot.json || fails=$((fails+1))
    say "wheel: pip install beside NVIDIA's cuFFT wheel, README example"
    run bash python/tools/gpu_wheel_check.sh $G/dist/warpfft-*.whl || fails=$((fails+1)) ;;
frameworks)
    # warpfft.jax / warpfft.torch on the GPU (issue 17): their tests and the live-plan pool's
    # (the one-call, torch and JAX paths under clears and limit changes), the side-by-side
    # benchmark (peers where installed) and, with two GPUs, 1 vs 2 GPUs
    say "framework ops: tests"
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib XLA_PYTHON_CLIENT_PREALLOCATE=false run python3 -m pytest python/tests/test_jax.py python/tests/test_jax_reference.py python/tests/test_jax_handler_abi.py python/tests/test_torch.py python/tests/test_torch_autograd.py python/tests/test_torch_op_path.py python/tests/test_torch_checks.py python/tests/test_plan_pool.py python/tests/test_deterministic.py -q -rs -p no:cacheprovider || fails=$((fails+1))
    say "framework ops: benchmark"
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 python/bench/frameworks.py --markdown || fails=$((fails+1))
    # the JAX rows again in a process without torch (torch beside JAX slowed batched JAX calls)
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 python/bench/frameworks.py --only jax --markdown || fails=$((fails+1))
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 python/bench/frameworks.py --multi-gpu || fails=$((fails+1)) ;;
sanitize)
    say "compute-sanitizer memcheck (aot gpu_api)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_api --test-threads=1 --skip out_of_device_memory --skip failed_set_points_frees_what_it_allocated > "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    # those two tests make cuMemAlloc fail on purpose: memcheck would count those API returns
    run compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 9 $G/aot/gpu_api --test-threads=1 out_of_device_memory failed_set_points_frees_what_it_allocated >> "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize.log" | tee -a "$log"
    say "compute-sanitizer memcheck (aot gpu_type3, without the 1e6-point case)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_type3 --test-threads=1 --skip large_spread_f32 >> "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize.log" | tee -a "$log"
    say "compute-sanitizer racecheck (aot gpu_api, shared-memory kernels)"
    # The multi-threaded test is skipped: under racecheck, launches from several host threads
    # at once gave "Internal Sanitizer Error: failure to track a kernel launch" once and a hang
    # once (H100, 2026-11-22); memcheck above runs it.
    run compute-sanitizer --tool racecheck --error-exitcode 9 $G/aot/gpu_api --test-threads=1 --skip plans_move_between_threads >> "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize.log" | tee -a "$log"
    say "compute-sanitizer memcheck + racecheck (aot gpu_deterministic: OD spreading, the stable sort)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_deterministic --test-threads=1 >> "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    run compute-sanitizer --tool racecheck --error-exitcode 9 $G/aot/gpu_deterministic --test-threads=1 deterministic_spread_only >> "$L/sanitize.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize.log" | tee -a "$log" ;;
sanitize-kernels)
    # the kernels wave 4 changed: the width from the points (module offsets: gather, choose with
    # the bins' occupancy) and the register-tile spreading, memcheck and racecheck (aot)
    for tool in memcheck racecheck; do
        say "compute-sanitizer $tool (aot gpu_accuracy: points_width, sm_spread_register_tile)"
        # racecheck runs a kernel hundreds of times slower: the register-tile test's large point
        # sets 20x smaller there (WARPFFT_TEST_POINTS_DIV, tests/common's scaled_points)
        div=1; [ $tool = racecheck ] && div=20
        run env WARPFFT_TEST_POINTS_DIV=$div compute-sanitizer --tool $tool --error-exitcode 9 $G/aot/gpu_accuracy --test-threads=1 --nocapture points_width:: sm_spread_register_tile >> "$L/sanitize_kernels.log" 2>&1 || fails=$((fails+1))
        grep -E "ERROR SUMMARY|test result|RACECHECK SUMMARY" "$L/sanitize_kernels.log" | tail -3 | tee -a "$log"
    done ;;
sanitize-builds)
    # memcheck of the plan paths in the jit and nvrtc builds too (sanitize: aot); nvrtc compiles
    # into a fresh kernel cache first
    export WARPFFT_CACHE_DIR=${WARPFFT_CACHE_DIR:-$(mktemp -d)}
    for m in jit nvrtc; do
        say "compute-sanitizer memcheck ($m gpu_api, gpu_type3)"
        run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/$m/gpu_api --test-threads=1 --skip out_of_device_memory --skip failed_set_points_frees_what_it_allocated >> "$L/sanitize_$m.log" 2>&1 || fails=$((fails+1))
        run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/$m/gpu_type3 --test-threads=1 --skip large_spread_f32 >> "$L/sanitize_$m.log" 2>&1 || fails=$((fails+1))
        tail -5 "$L/sanitize_$m.log" | tee -a "$log"
    done ;;
toeplitz)
    # the Toeplitz normal operator (docs/toeplitz.md): its Python/JAX/torch tests, the CG-SENSE
    # example, the benchmark of the issue's targets, and memcheck of its C and Python paths
    P="WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib XLA_PYTHON_CLIENT_PREALLOCATE=false"
    say "toeplitz: tests"
    run env $P python3 -m pytest python/tests/test_toeplitz.py python/tests/test_toeplitz_pipeline.py python/tests/test_toeplitz_threads.py -q -rs -p no:cacheprovider || fails=$((fails+1))
    say "toeplitz: CG-SENSE example"
    run env $P python3 examples/python/cg_sense.py || fails=$((fails+1))
    say "toeplitz: benchmark"
    run env $P python3 python/bench/toeplitz.py --json $L/toeplitz.json || fails=$((fails+1))
    say "toeplitz: compute-sanitizer memcheck (aot gpu_toeplitz, the Python tests)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_toeplitz --test-threads=1 > "$L/sanitize_toeplitz.log" 2>&1 || fails=$((fails+1))
    run env $P compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 python3 -m pytest python/tests/test_toeplitz.py python/tests/test_toeplitz_threads.py -q -rs -p no:cacheprovider -k gpu >> "$L/sanitize_toeplitz.log" 2>&1 || fails=$((fails+1))
    tail -8 "$L/sanitize_toeplitz.log" | tee -a "$log" ;;
batched)
    # batched points (docs/batched-points.md): the Rust, Python, PyTorch and JAX tests, the
    # benchmark of the issue's targets, and memcheck of the C path
    P="WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib XLA_PYTHON_CLIENT_PREALLOCATE=false"
    say "batched points: tests"
    run $G/aot/gpu_batched_points --test-threads=1 --nocapture || fails=$((fails+1))
    run env $P python3 -m pytest python/tests/test_batched_points.py python/tests/test_batched_points_torch.py python/tests/test_batched_points_jax.py -q -rs -p no:cacheprovider || fails=$((fails+1))
    say "batched points: benchmark"
    run env $P python3 python/bench/batched_points.py || fails=$((fails+1))
    say "batched points: compute-sanitizer memcheck (aot gpu_batched_points)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_batched_points --test-threads=1 > "$L/sanitize_batched.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize_batched.log" | tee -a "$log" ;;
real)
    # real-valued data (docs/real.md): the Rust tests (values against exact sums and the complex
    # transforms), the Python tests, real vs complex execute on suite B's cases (the target
    # "real <= 0.6x complex"), and memcheck of the Rust tests
    P="WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib"
    say "real: tests"
    run $G/aot/gpu_real --test-threads=1 --nocapture || fails=$((fails+1))
    run env $P python3 -m pytest python/tests/test_real.py -q -rs -p no:cacheprovider || fails=$((fails+1))
    say "real: the JAX and PyTorch ops (values, gradients) and the docs' examples"
    run env $P XLA_PYTHON_CLIENT_PREALLOCATE=false python3 -m pytest python/tests/test_torch_real.py python/tests/test_jax_real.py -q -rs -p no:cacheprovider || fails=$((fails+1))
    run env $P XLA_PYTHON_CLIENT_PREALLOCATE=false python3 -m pytest python/tests/test_docs.py -q -rs -p no:cacheprovider -k real || fails=$((fails+1))
    for m in jit nvrtc; do
        say "real: $m build (gpu_real)"
        WARPFFT_CACHE_DIR=${WARPFFT_CACHE_DIR:-$(mktemp -d)} run $G/$m/gpu_real --test-threads=1 || fails=$((fails+1))
    done
    say "real: benchmark (real vs complex, aot)"
    WARPFFT_BENCH_JSON=$L/suite_b_real.json run $G/aot/suite_b_real $BENCH_CASES || fails=$((fails+1))
    say "real: compute-sanitizer memcheck (aot gpu_real)"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/aot/gpu_real --test-threads=1 > "$L/sanitize_real.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize_real.log" | tee -a "$log" ;;
graphs)
    # CUDA graphs (docs/cuda-graphs.md): warpfft's calls captured by a C caller and replayed
    # against eager runs (own plans, a pooled plan, type 3), the same under memcheck, and the
    # PyTorch ops under torch.cuda.graph and torch.compile(mode="reduce-overhead")
    P="WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python:$PWD/$G/pylib"
    say "graphs: C capture and replay"
    run $G/c/graph_capture || fails=$((fails+1))
    say "graphs: compute-sanitizer memcheck of the C capture and replay"
    run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $G/c/graph_capture > "$L/sanitize_graphs.log" 2>&1 || fails=$((fails+1))
    tail -5 "$L/sanitize_graphs.log" | tee -a "$log"
    say "graphs: PyTorch (torch.cuda.graph, torch.compile reduce-overhead)"
    run env $P python3 -m pytest python/tests/test_torch_graphs.py -q -rs -p no:cacheprovider || fails=$((fails+1)) ;;
huge)
    say "huge (aot gpu_huge: > 2^31 points, > 2^31 modes)"
    WARPFFT_HUGE_TESTS=1 run $G/aot/gpu_huge --test-threads=1 --nocapture || fails=$((fails+1)) ;;
bench)
    # BENCH_METHODS=all: GM, SM (and OD for types 1 and 3) forced too; BENCH_DETERMINISTIC=1:
    # deterministic plans too (their cost per case: the summary table, docs/spreaders.md)
    say "bench (aot)"; WARPFFT_BENCH_JSON=$L/suite_b.json WARPFFT_BENCH_METHODS=${BENCH_METHODS:-auto} WARPFFT_BENCH_DETERMINISTIC=${BENCH_DETERMINISTIC:-0} run $G/aot/suite_b $BENCH_CASES || fails=$((fails+1))
    say "bench: real vs complex (aot)"; WARPFFT_BENCH_JSON=$L/suite_b_real.json run $G/aot/suite_b_real $BENCH_CASES || fails=$((fails+1)) ;;
bench-peer)
    # suite B beside the reference library, in one call on one card (the only ratios that
    # count): .peer/ is the tree peer_prep.sh exports (../shared/tools; git-ignored, carried),
    # built here by its peer_bench.sh, which times every GPU method of it per case; suite_b
    # then takes each case's best as its reference column (WARPFFT_BENCH_PEER)
    [ -f .peer/peer_bench.sh ] || { say "bench-peer: no .peer/ (run ../shared/tools/peer_prep.sh)"; fails=$((fails+1)); continue; }
    say "reference: every method per case"
    PEER_RUNS=${PEER_RUNS:-10} run bash .peer/peer_bench.sh $BENCH_CASES > "$L/peer.txt" 2>&1 || fails=$((fails+1))
    grep -E '^\| ' "$L/peer.txt" | tee -a "$log"
    # its errors per method (its perftest reports none): its own Python package on the library
    # just built, against exact sums (python/bench/peer_errors.py)
    peerlib=$(find "${PEER_BUILD:-/tmp/peerbuild}" -name 'libcufinufft.so' 2>/dev/null | head -1)
    say "reference: errors per method"
    run python3 python/bench/peer_errors.py --lib "$peerlib" --pkg .peer/python/cufinufft \
        --json "$L/peer_errors.json" ${BENCH_CASES:+--cases $BENCH_CASES} || fails=$((fails+1))
    say "bench (aot) beside the reference"
    WARPFFT_BENCH_PEER=$L/peer.txt WARPFFT_BENCH_JSON=$L/suite_b.json WARPFFT_BENCH_REPS=${BENCH_REPS:-10} WARPFFT_BENCH_METHODS=${BENCH_METHODS:-auto} WARPFFT_BENCH_DETERMINISTIC=${BENCH_DETERMINISTIC:-0} run $G/aot/suite_b $BENCH_CASES || fails=$((fails+1)) ;;
density)
    # non-uniform point sets beside the reference (its perftest draws uniform points only):
    # normal points at NonuniformFFTs.jl's published setup, MRI trajectories; both libraries on
    # the same points in one process (python/bench/density.py), the reference built by
    # peer_bench.sh (a case name it does not know builds it and times nothing)
    [ -f .peer/peer_bench.sh ] || { say "density: no .peer/ (run ../shared/tools/peer_prep.sh)"; fails=$((fails+1)); continue; }
    bash .peer/peer_bench.sh NONE > "$L/peer_build.txt" 2>&1 || fails=$((fails+1))
    peerlib=$(find "${PEER_BUILD:-/tmp/peerbuild}" -name 'libcufinufft.so' 2>/dev/null | head -1)
    say "density: warpfft and the reference on non-uniform points"
    WARPFFT_LIBRARY=$PWD/$G/lib/libwarpfft.so PYTHONPATH=$PWD/python run python3 python/bench/density.py \
        --lib "$peerlib" --pkg .peer/python/cufinufft --json "$L/density.json" ${DENSITY_CASES:+--cases $DENSITY_CASES} || fails=$((fails+1)) ;;
bench-nvrtc)
    # the kernel cache warmed by one untimed pass, so the timings are the kernels' alone
    export WARPFFT_CACHE_DIR=${WARPFFT_CACHE_DIR:-$(mktemp -d)}
    say "bench (nvrtc)"; WARPFFT_BENCH_JSON=$L/suite_b_nvrtc.json WARPFFT_BENCH_METHODS=${BENCH_METHODS:-auto} run $G/nvrtc/suite_b $BENCH_CASES || fails=$((fails+1)) ;;
bench-jit)
    say "bench (jit)"; WARPFFT_BENCH_JSON=$L/suite_b_jit.json WARPFFT_BENCH_METHODS=${BENCH_METHODS:-auto} run $G/jit/suite_b $BENCH_CASES || fails=$((fails+1)) ;;
esac; done
say "stages with failures: $fails"
exit $fails
