#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test warpfft; idempotent and
# quiet when everything is there. Needs the CUDA toolkit already installed (nvcc, ptxas,
# nvlink, fatbinary): the build says where it looked if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. Debian packages: the Rust crates we build with (when crates.io is not used), libclang for
#    the optional bindgen check, pkg-config for the C example, clang-format for the lint, clang
#    with its libFuzzer runtime for the fuzz targets (c_core/fuzz/run.sh).
pkgs=(librust-cc-dev librust-num-complex-dev librust-sha2-dev librust-tempfile-dev
      librust-bindgen-dev libclang-dev pkg-config clang-format clang)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: apt-get install ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# libFuzzer's runtime has its own package from LLVM 14 on (libclang-rt-<version>-dev).
fuzz_probe='int LLVMFuzzerTestOneInput(const char *d, long n) { return d && n ? 0 : 0; }'
if command -v clang >/dev/null && command -v apt-get >/dev/null &&
   ! echo "$fuzz_probe" | clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: apt-get install libclang-rt-$v-dev"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "libclang-rt-$v-dev" >/dev/null
fi

# 2. Cargo source: with Debian's crates present and no explicit choice, resolve crates from
#    them (offline) through a checkout-local, git-ignored .cargo/config.toml. Set
#    WARPFFT_CARGO_SOURCE=crates-io to keep cargo's default registry.
if [ "${WARPFFT_CARGO_SOURCE:-debian}" = debian ] && [ -d /usr/share/cargo/registry ] \
   && ! grep -qs replace-with .cargo/config.toml; then
    mkdir -p .cargo
    cat > .cargo/config.toml <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
    echo "setup: cargo resolves crates from /usr/share/cargo/registry (.cargo/config.toml)"
fi

# 3. Python tools: just (the task runner), pytest, numpy and jax (Python tests).
py=python3
need_py=()
command -v just >/dev/null || need_py+=(rust-just)
$py -c "import pytest" 2>/dev/null || need_py+=(pytest)
$py -c "import numpy" 2>/dev/null || need_py+=(numpy)
# JAX's CPU build (~100 MB) so warpfft.jax's registration, shapes, derivative rules and error
# paths are tested without a GPU. PyTorch is not installed here: PyPI's Linux wheel pulls
# ~3 GB of NVIDIA wheels; python/tests/test_torch.py skips visibly without it.
$py -c "import jax" 2>/dev/null || need_py+=("jax>=0.4.36")
if [ ${#need_py[@]} -gt 0 ]; then
    echo "setup: pip install ${need_py[*]}"
    $py -m pip install -q "${need_py[@]}"
    hash -r
fi
command -v rustfmt >/dev/null && command -v cargo-clippy >/dev/null || \
    { command -v rustup >/dev/null && rustup component add rustfmt clippy; } || true
