#!/usr/bin/env bash
# Builds, on this CPU-only machine, everything the GPU machine runs (it has no cargo) into the
# git-ignored .gpu/: release test, bench and example binaries for a `jit`, an `aot`
# (WARPFFT_GPU_ARCHS, default sm_90) and an `nvrtc` build (fatbuild's example crate,
# rust-kernels, in each too), libwarpfft.so, the C example, and run.sh.
# On the GPU machine: `bash .gpu/run.sh [stage...]`; logs go to $OUT (or .gpu/logs).
set -euo pipefail
cd "$(dirname "$0")/.."
archs=${WARPFFT_GPU_ARCHS:-90}
rm -rf .gpu && mkdir -p .gpu/lib .gpu/c
collect() { # mode, then cargo args: copies every built executable to .gpu/<mode>/<name>
    local mode=$1; shift
    mkdir -p ".gpu/$mode"
    "$@" --message-format=json | python3 scripts/copy_artifacts.py ".gpu/$mode"
}
for mode in jit aot nvrtc; do
    case $mode in
    jit) feats=(--features jit) ;;
    aot) feats=(--no-default-features --features aot) ;;
    nvrtc) feats=(--no-default-features --features nvrtc) ;; # sources only: NVRTC at run time
    esac
    export CARGO_TARGET_DIR=target/gpu-$mode WARPFFT_CUDA_ARCHS=$archs
    echo "== $mode build (archs $archs)"
    collect $mode cargo test --release "${feats[@]}" --no-run --test gpu_accuracy --test gpu_api --test no_gpu --test gpu_huge --test gpu_type3 --test gpu_nvrtc --test gpu_toeplitz --test gpu_deterministic --test gpu_batched_points --test gpu_real
    collect $mode cargo build --release "${feats[@]}" --bench suite_b --bench costmodel --bench suite_b_real --example demo --example load_time
    # fatbuild's example crate (its own kernels, this mode): .gpu/<mode>/rust-kernels
    RUST_KERNELS_CUDA_ARCHS=$archs collect $mode cargo build --release -p rust-kernels "${feats[@]}"
done
# The example built for sm_80 only, as .gpu/aot/<name>: on a newer GPU, aot alone must fail
# with the wrong-arch error, aot+jit must fall back to the PTX inside the fatbin.
example_for_sm80() { # name, features
    local tmp; tmp=$(mktemp -d)
    RUST_KERNELS_CUDA_ARCHS=80 CARGO_TARGET_DIR=target/gpu-aot cargo build --release -p rust-kernels \
        --no-default-features --features "$2" --message-format=json | python3 scripts/copy_artifacts.py "$tmp"
    mv "$tmp/rust-kernels" ".gpu/aot/$1" && rm -rf "$tmp"
}
example_for_sm80 rust-kernels-sm80 aot
example_for_sm80 rust-kernels-sm80-jit aot,jit
# The library of exactly this aot build (CARGO_TARGET_DIR and the archs are still exported).
lib=$(bash scripts/libwarpfft_path.sh --release --no-default-features --features aot)
cp "$lib" .gpu/lib/libwarpfft.so
cp "$lib" .gpu/lib/libwarpfft.so.0
cc -O2 -Ic_core/include examples/c/hello.c -o .gpu/c/hello -L.gpu/lib -Wl,-rpath,'$ORIGIN/../lib' -lwarpfft
cc -O2 -Ic_core/include examples/c/type1_2d.c -o .gpu/c/type1_2d -L.gpu/lib -Wl,-rpath,'$ORIGIN/../lib' -lwarpfft -lm
cc -O2 -Ic_core/include examples/c/toeplitz.c -o .gpu/c/toeplitz -L.gpu/lib -Wl,-rpath,'$ORIGIN/../lib' -lwarpfft
cc -O2 -Ic_core/include examples/c/one_call.c -o .gpu/c/one_call -L.gpu/lib -Wl,-rpath,'$ORIGIN/../lib' -lwarpfft
# CUDA graphs: warpfft_execute captured and replayed by a C caller (gpu_run.sh's graphs stage)
cc -O2 -Ic_core/include tests/c/graph_capture.c -o .gpu/c/graph_capture -L.gpu/lib -Wl,-rpath,'$ORIGIN/../lib' -lwarpfft -ldl -lm
# the wheel (aot+jit for the same archs) for the pip-install check on the GPU machine
just wheel "$archs" >/dev/null
mkdir -p .gpu/dist && cp dist/warpfft-*.whl .gpu/dist/
# pytest is not installed on the GPU machine's python; it is pure Python, so carry it
python3 -m pip install -q --no-compile --target .gpu/pylib pytest
cp scripts/gpu_run.sh .gpu/run.sh
strip .gpu/*/* 2>/dev/null || true
# The device tool carries at most 64 MiB; the embedded kernels compress about 5x.
cp scripts/unbundle.py .gpu/unbundle.py
# xz -9: its 64 MiB dictionary folds the kernels every test binary embeds (scripts/unbundle.py)
(cd .gpu && tar cf - jit aot nvrtc lib c pylib dist | xz -9 -T2 >bundle.tar.xz && rm -rf jit aot nvrtc lib c pylib dist)
du -sh .gpu
