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
# paths are tested without a GPU.
$py -c "import jax" 2>/dev/null || need_py+=("jax>=0.4.36")
if [ ${#need_py[@]} -gt 0 ]; then
    echo "setup: pip install ${need_py[*]}"
    $py -m pip install -q "${need_py[@]}"
    hash -r
fi
# 4. The documentation site's tools (`just docs`: Sphinx + MyST-Parser, pinned) in their own
#    venv, .venv-docs: Sphinx needs a newer docutils than some system tools (awscli) accept, so
#    it stays out of the system Python. ~95 MB, ~10 s from PyPI, pure Python wheels.
docs_pins=("sphinx==9.0.4" "myst-parser==5.2.0")
if ! .venv-docs/bin/python - "${docs_pins[@]}" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
then
    echo "setup: pip install ${docs_pins[*]} into .venv-docs"
    [ -x .venv-docs/bin/python ] || $py -m venv .venv-docs
    .venv-docs/bin/python -m pip install -q --disable-pip-version-check "${docs_pins[@]}"
fi
command -v rustfmt >/dev/null && command -v cargo-clippy >/dev/null || \
    { command -v rustup >/dev/null && rustup component add rustfmt clippy; } || true

# 4. PyTorch, so warpfft.torch's registration, argument checks, fake tensors, opcheck, autograd
#    formulas and error paths (python/tests/test_torch*.py) run without a GPU. PyPI's Linux wheel
#    is the CUDA build, and its dependencies pull ~3 GB of NVIDIA wheels; its CPU-only wheels
#    are on another index, which this machine does not reach. So: the wheel alone (--no-deps),
#    its pure-Python dependencies, and the three NVIDIA wheels whose libraries the CUDA
#    toolkit here lacks (cuFile, cuSPARSELt, NVSHMEM); cuBLAS, cuDNN, NCCL and the rest of what
#    libtorch_cuda.so links come from the toolkit (/usr/local/cuda/lib, in ld.so's cache).
#    Without all three, `import torch` fails (empty stand-ins for them fail too: versioned
#    symbols). torch 2.11 (CUDA 13.0 build, as on the GPU machine) matches the toolkit 13.0.
#    Measured on this 2-core machine, shared and busy (fresh venv, --no-cache-dir): 762 MB
#    downloaded (torch 531, cuSPARSELt 170, NVSHMEM 60, cuFile 1), 55-75 s to download and
#    install; 1.5 GB on disk (torch 1.2 GB, nvidia/ 0.3 GB), none left in pip's cache; filelock
#    and fsspec are the only Python dependencies this image lacks (seconds). `import torch`
#    takes ~3 s; test_torch.py (since split into test_torch{,_autograd,_op_path}.py) +
#    test_torch_checks.py (148 tests without a GPU then) ~11 s of CPU, 23-29 s of wall time.
#    WARPFFT_SKIP_TORCH=1 skips this step (the torch tests then skip visibly).
torch_pkgs=(torch==2.11.0 nvidia-cufile==1.15.1.6 nvidia-cusparselt-cu13==0.8.0
            nvidia-nvshmem-cu13==3.4.5)
if [ "${WARPFFT_SKIP_TORCH:-0}" != 1 ] && ! $py -c "import torch" 2>/dev/null; then
    echo "setup: pip install --no-deps ${torch_pkgs[*]} (CPU-side torch tests; ~760 MB)"
    $py -m pip install -q filelock "fsspec>=0.8.5" "typing-extensions>=4.10" "sympy>=1.13.3" \
        "networkx>=2.5.1" jinja2
    $py -m pip install -q --no-cache-dir --no-deps "${torch_pkgs[@]}"
    if ! err=$($py -c "import torch" 2>&1); then
        echo "setup: torch was installed but does not import (the torch tests would skip):" >&2
        echo "$err" | tail -3 >&2
        echo "setup: set WARPFFT_SKIP_TORCH=1 to go on without it" >&2
        exit 1
    fi
fi
