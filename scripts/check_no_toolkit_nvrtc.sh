#!/usr/bin/env bash
# An `nvrtc`-only build needs no CUDA toolkit: with the toolkit hidden, `cargo build` of it, its
# host tests (tests/manifest.rs checks the embedded sources, tests/no_gpu/ the C ABI,
# tests/build_script.rs that no toolkit is watched) and `cargo doc` must succeed; and so must
# the nvrtc build of fatbuild's example crate (examples/rust-kernels) and its tests/embedded.rs.
#
# Hiding: PATH keeps no directory that holds an `nvcc` (wrappers in /usr/local/bin included),
# NVCC, CUDA_PATH and CUDA_HOME point at nothing (so any toolkit lookup would fail the build),
# and, where the kernel lets this script make a private mount namespace (`unshare -m` as root,
# else `unshare -rm` in a user namespace), an empty read-only tmpfs is mounted over every
# toolkit root (what /usr/local/cuda and each `nvcc` found resolve to) for the whole run. If
# neither unshare works, it says so and relies on the environment alone.
#
# The build runs in its own target directory (target/no-toolkit, warpfft cleaned first), so the
# build script really runs with the toolkit hidden instead of reusing an earlier result.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=$root/target/no-toolkit

if [ "${WF_NO_TOOLKIT_INNER:-}" != 1 ]; then
    # The toolkit roots to hide: /usr/local/cuda and wherever each nvcc on PATH leads (a
    # wrapper script such as /usr/local/bin/nvcc names its target on its exec line).
    roots=()
    add_root() { # $1: a bin/nvcc path
        local r
        r=$(dirname "$(dirname "$(realpath -m "$1")")")
        [ -d "$r" ] && [ "$r" != / ] && [ "$r" != /usr ] && [ "$r" != /usr/local ] && roots+=("$r")
        return 0
    }
    [ -e /usr/local/cuda/bin/nvcc ] && add_root /usr/local/cuda/bin/nvcc
    while read -r nvcc; do
        add_root "$nvcc"
        target_nvcc=$(sed -n 's/^exec \([^ ]*nvcc\) .*/\1/p' "$nvcc" 2>/dev/null | head -1)
        [ -n "$target_nvcc" ] && add_root "$target_nvcc"
    done < <(which -a nvcc 2>/dev/null || true)
    mapfile -t roots < <(printf '%s\n' "${roots[@]}" | sort -u)
    export WF_NO_TOOLKIT_INNER=1 WF_NO_TOOLKIT_ROOTS="${roots[*]}"
    for how in "-m" "-rm"; do
        if unshare "$how" --propagation private true 2>/dev/null; then
            export WF_NO_TOOLKIT_NS="unshare $how"
            exec unshare "$how" --propagation private bash "$0" "$@"
        fi
    done
    export WF_NO_TOOLKIT_NS=""
    exec bash "$0" "$@"
fi

if [ -n "$WF_NO_TOOLKIT_NS" ]; then
    for r in $WF_NO_TOOLKIT_ROOTS; do
        mount -t tmpfs -o ro,size=4k,mode=755 tmpfs "$r"
    done
    echo "hidden: empty tmpfs over ${WF_NO_TOOLKIT_ROOTS:-nothing (no toolkit found)} ($WF_NO_TOOLKIT_NS)"
else
    echo "NOTE: no private mount namespace (unshare -m / -rm failed): the toolkit directories" \
        "stay on disk; hiding it through PATH, NVCC, CUDA_PATH and CUDA_HOME only"
fi
clean=()
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    if [ -z "$d" ] || [ -e "$d/nvcc" ] || [[ "$d" == *cuda* ]]; then
        echo "hidden: $d dropped from PATH"
    else
        clean+=("$d")
    fi
done
PATH=$(IFS=:; echo "${clean[*]}")
export PATH NVCC=/nonexistent/bin/nvcc CUDA_PATH=/nonexistent CUDA_HOME=/nonexistent
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS NVCC_CCBIN

# The toolkit really is out of reach.
if command -v nvcc >/dev/null || command -v ptxas >/dev/null; then
    echo "FAIL: nvcc/ptxas still found: $(command -v nvcc ptxas)"
    exit 1
fi
for r in $WF_NO_TOOLKIT_ROOTS; do
    if [ -n "$WF_NO_TOOLKIT_NS" ] && [ -n "$(ls -A "$r")" ]; then
        echo "FAIL: $r is not hidden"
        exit 1
    fi
done

features=(--no-default-features --features nvrtc)
cargo clean -q -p warpfft --target-dir "$target" 2>/dev/null || true
echo "== cargo build ${features[*]} (no toolkit)"
CARGO_TARGET_DIR=$target cargo build -q "${features[@]}"
echo "== cargo test ${features[*]} --test manifest --test no_gpu --test build_script (no toolkit)"
CARGO_TARGET_DIR=$target cargo test -q "${features[@]}" --test manifest --test no_gpu \
    --test build_script
echo "== cargo doc ${features[*]} (no toolkit)"
CARGO_TARGET_DIR=$target cargo doc -q "${features[@]}" --no-deps -p warpfft
# The embedded kernels say no toolkit built them.
gen=$(ls -td "$target"/debug/build/warpfft-*/out | head -1)/warpfft_kernels.c
grep -q 'const int warpfft_kernels_cuda_version = 0;' "$gen" || {
    echo "FAIL: $gen was built by a toolkit"
    exit 1
}
# fatbuild's example crate the same way: its own kernels embedded as sources, no toolkit.
cargo clean -q -p rust-kernels --target-dir "$target" 2>/dev/null || true
echo "== rust-kernels ${features[*]}: build, embedded-module test, sizes (no toolkit)"
CARGO_TARGET_DIR=$target cargo test -q -p rust-kernels "${features[@]}" --test embedded
CARGO_TARGET_DIR=$target cargo run -q -p rust-kernels "${features[@]}" -- --sizes
echo "ok: the nvrtc-only builds (warpfft, examples/rust-kernels), their host tests and docs need no CUDA toolkit"
