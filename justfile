# warpfft tasks. `just` lists them. scripts/setup.sh installs what they need.
set shell := ["bash", "-euo", "pipefail", "-c"]

# Architectures the CI's AOT builds embed (the default list is much longer; see docs/build.md).
ci_archs := "80;90"

default:
    @just --list

# Build and run the main demo (a 2D type-1 NUFFT checked against the exact sum)
demo:
    cargo run --release --example demo

# Release build of the crate and libwarpfft.so
build:
    cargo build --release

# Everything that runs without a GPU, plus the GPU tests (which skip visibly without one)
test: lint docs
    @echo "== fatbuild: toolchain unit tests"
    cargo test -p fatbuild
    @echo "== C core: host-side unit tests and the fault-injection suite (ASan + UBSan)"
    bash c_core/tests/run_tests.sh
    bash c_core/tests/run_test_params.sh
    bash c_core/tests/run_test_type3.sh
    @echo "== kernels on the CPU (kernels/test/emu, g++): the OD spreading, stable-sort, binning and batched GM/SM kernels against direct sums"
    bash kernels/test/emu/run.sh quick
    @echo "== fuzzing (libFuzzer, ASan+UBSan): C ABI, XLA handler decoding, kernel cache reader, 20 s each"
    bash c_core/fuzz/run.sh 20
    @echo "== nvrtc build: the embedded kernel sources compile with NVRTC (sm_90 CUBINs, no GPU)"
    bash scripts/check_nvrtc_modules.sh
    @echo "== jit build: Rust tests, doc tests, GPU tests (skip without a GPU)"
    cargo test -- --nocapture
    @echo "== aot build (sm {{ci_archs}}): embedded fatbins hold exactly those ELF images"
    WARPFFT_CUDA_ARCHS="{{ci_archs}}" WARPFFT_EXPECT_ARCHS="{{ci_archs}}" cargo test --no-default-features --features aot --test manifest --test no_gpu --test build_script -- --nocapture
    @echo "== aot+jit build: ELF images plus one PTX fallback per single-source module"
    WARPFFT_CUDA_ARCHS="{{ci_archs}}" WARPFFT_EXPECT_ARCHS="{{ci_archs}}" cargo test --features aot --test manifest -- --nocapture
    @echo "== the library path recipes use is the one the asked-for build produced"
    bash scripts/check_libpath.sh
    @echo "== missing toolkit: the build fails with one clear message"
    bash scripts/check_missing_toolkit.sh
    @echo "== nvrtc alone: build, host tests and docs with the CUDA toolkit hidden"
    bash scripts/check_no_toolkit_nvrtc.sh
    @echo "== jit+nvrtc build: the PTX and the kernel sources both embedded"
    cargo test --features nvrtc --test manifest -- --nocapture
    @echo "== committed bindings equal bindgen's output"
    cargo test --features bindgen --test bindings
    @echo "== consumer crate (path dependency, aot only)"
    WARPFFT_CUDA_ARCHS="{{ci_archs}}" cargo run -q --manifest-path tests/consumer/Cargo.toml
    @echo "== fatbuild for other crates: the runtime's failure paths, both crates' docs, the example in every mode"
    cargo test -p fatbuild-rt
    RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps -p fatbuild -p fatbuild-rt
    just rust-kernels
    @echo "== the crates as published: package tarballs verify and build"
    just package
    @echo "== C ABI from C: install to a prefix, build the example with pkg-config, run it"
    just install target/prefix
    bash examples/c/run.sh target/prefix
    @echo "== C ABI from Python (ctypes), wheel, cuFFT wheel discovery"
    just wheel "{{ci_archs}}"
    WARPFFT_LIBRARY="$(bash scripts/libwarpfft_path.sh --release)" python3 -m pytest python/tests -q -rs

# fatbuild's example crate (examples/rust-kernels: a saxpy and a reduction in CUDA C, launched
# from Rust through fatbuild-rt) built in each mode, its embedded module checked
# (tests/embedded.rs), its sizes printed, and run: exit 0 (results correct on a GPU) or 2 (no
# GPU here, said so) pass, anything else fails. The nvrtc build without a toolkit is in
# scripts/check_no_toolkit_nvrtc.sh.
rust-kernels archs=ci_archs:
    #!/usr/bin/env bash
    set -euo pipefail
    export RUST_KERNELS_CUDA_ARCHS="{{archs}}" RUST_KERNELS_EXPECT_ARCHS="{{archs}}"
    for feats in jit aot nvrtc aot,jit,nvrtc; do
        echo "== rust-kernels --features $feats"
        args=(-p rust-kernels --no-default-features --features "$feats")
        cargo test -q "${args[@]}"
        cargo run -q "${args[@]}" -- --sizes
        rc=0; cargo run -q "${args[@]}" || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 2 ] || { echo "rust-kernels ($feats) failed: exit $rc"; exit 1; }
    done

# The crates as they would be published (no registry is reachable here): fatbuild's and
# fatbuild-rt's packages verify (each built from its own tarball); warpfft's package is built
# from its own tarball, with fatbuild's tarball patched in for the registry dependency, in a
# directory outside the workspace, in the default (jit) and the nvrtc build. The jit build
# compiles every kernel again (cache keys hold the source's path): ~7 minutes on 2 cores.
package:
    #!/usr/bin/env bash
    set -euo pipefail
    cargo package -q -p fatbuild -p fatbuild-rt --allow-dirty
    # no lockfile, no verify: both would resolve fatbuild from the registry; the build below
    # resolves it from fatbuild's own tarball instead
    cargo package -q -p warpfft --allow-dirty --no-verify --exclude-lockfile
    v=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
    fv=$(sed -n 's/^version = "\(.*\)"/\1/p' crates/fatbuild/Cargo.toml | head -1)
    root=$PWD pkg=$PWD/target/package
    dir=$(mktemp -d "${TMPDIR:-/tmp}/warpfft-package.XXXXXX")
    trap 'rm -rf "$dir"' EXIT
    tar -xzf "$pkg/warpfft-$v.crate" -C "$dir"
    tar -xzf "$pkg/fatbuild-$fv.crate" -C "$dir"
    # the checkout's registry setup (Debian's crates here), and fatbuild from its tarball
    mkdir -p "$dir/.cargo"
    if [ -f .cargo/config.toml ]; then cp .cargo/config.toml "$dir/.cargo/config.toml"; fi
    printf '\n[patch.crates-io]\nfatbuild = { path = "%s" }\n' "$dir/fatbuild-$fv" >> "$dir/.cargo/config.toml"
    echo "== warpfft-$v from its tarball (jit), fatbuild-$fv from its tarball"
    (cd "$dir/warpfft-$v" && CARGO_TARGET_DIR="$dir/target" FATBUILD_CACHE_DIR="${FATBUILD_CACHE_DIR:-$root/target/fatbuild-cache}" cargo build -q)
    echo "== warpfft-$v from its tarball (nvrtc)"
    (cd "$dir/warpfft-$v" && CARGO_TARGET_DIR="$dir/target" cargo build -q --no-default-features --features nvrtc)
    ls "$dir"/target/debug/build/warpfft-*/out/lib/libwarpfft.so >/dev/null
    echo "ok: fatbuild and fatbuild-rt packages verify; warpfft builds from its package"

# Coverage-guided fuzzing of the C ABI's argument checks, the XLA handler's decoding and the
# kernel cache's entry reader (c_core/fuzz: libFuzzer with ASan+UBSan), `seconds` per target, two
# targets at a time; `just fuzz 3600 fuzz_xla` for one target. New inputs stay in target/fuzz.
fuzz seconds="600" *targets:
    WF_FUZZ_JOBS=2 bash c_core/fuzz/run.sh {{seconds}} {{targets}}

# The documentation site (docs/, Sphinx + MyST; tools from scripts/setup.sh in .venv-docs) into
# target/docs/html. Warnings are errors (-W, and -n: nitpicky cross-references), so a broken
# internal link, a page in no toctree or a missing anchor fails it; --keep-going lists them all.
# External links are not checked (CI has no network); the examples the pages show run in
# python/tests/test_docs.py and the doctests.
docs:
    test -x .venv-docs/bin/python || { echo "docs: no .venv-docs: run scripts/setup.sh" >&2; exit 1; }
    rm -rf target/docs
    .venv-docs/bin/python -m sphinx -W --keep-going -n -q -b html docs target/docs/html
    @echo "docs: target/docs/html/index.html"

# GPU tests only (on a machine with a GPU)
test-gpu:
    cargo test --release --test gpu_accuracy --test gpu_api --test gpu_type3 -- --nocapture --test-threads=1

# Build release test/bench binaries here into .gpu/ with a run.sh for a GPU machine
gpu-bundle:
    bash scripts/gpu_bundle.sh

# Benchmark suite B (DESIGN.md) on the GPU; `just bench B2 B3` for some cases
bench *cases:
    cargo bench --bench suite_b -- {{cases}}

fmt:
    cargo fmt --all
    clang-format -i c_core/include/*.h c_core/include/warpfft/*.h c_core/src/*/*.[ch] c_core/tests/*.[ch] c_core/fuzz/*.[ch] examples/c/*.c

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    clang-format --dry-run --Werror c_core/include/*.h c_core/include/warpfft/*.h c_core/src/*/*.[ch] c_core/tests/*.[ch] c_core/fuzz/*.[ch] examples/c/*.c

# Install libwarpfft.so, the public headers (warpfft.h, its parts in warpfft/, warpfft_xla.h)
# and warpfft.pc under PREFIX
install PREFIX="/usr/local":
    lib=$(bash scripts/libwarpfft_path.sh --release); \
    v=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1); \
    p=$(realpath -m "{{PREFIX}}"); \
    install -d "$p/lib/pkgconfig" "$p/include/warpfft"; \
    install -m 755 "$lib" "$p/lib/libwarpfft.so.$v"; \
    ln -sf "libwarpfft.so.$v" "$p/lib/libwarpfft.so.0"; \
    ln -sf "libwarpfft.so.0" "$p/lib/libwarpfft.so"; \
    install -m 644 c_core/include/*.h "$p/include/"; \
    install -m 644 c_core/include/warpfft/*.h "$p/include/warpfft/"; \
    sed -e "s|@PREFIX@|$p|" -e "s|@VERSION@|$v|" c_core/warpfft.pc.in > "$p/lib/pkgconfig/warpfft.pc"; \
    echo "installed warpfft $v under $p"

# The wheel into dist/: libwarpfft.so built aot+jit (SASS for `archs`, default the full list
# WARPFFT_CUDA_ARCHS or fatbuild's default, plus one PTX fallback) in target/wheel (the path is
# the one cargo reports for this very build), packed by python/tools/build_wheel.py, tagged
# manylinux by auditwheel, then checked (tag, deps, extras, size).
# Release wheels use the default list; CI (`just test`) passes the short ci_archs list.
wheel archs="":
    python3 -c "import auditwheel" 2>/dev/null || python3 -m pip install -q auditwheel
    if [ -n "{{archs}}" ]; then export WARPFFT_CUDA_ARCHS="{{archs}}"; fi; \
    lib="$(CARGO_TARGET_DIR=target/wheel FATBUILD_CACHE_DIR="${FATBUILD_CACHE_DIR:-$PWD/target/fatbuild-cache}" bash scripts/libwarpfft_path.sh --release --features aot)"; \
    rm -f dist/warpfft-*.whl; \
    python3 python/tools/build_wheel.py build "$lib" -o dist
    python3 python/tools/build_wheel.py check dist/warpfft-*.whl

# What CI runs
ci:
    bash .ci/run
