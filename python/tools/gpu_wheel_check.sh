#!/usr/bin/env bash
# On the GPU machine (no network): installs dist/warpfft-*.whl as pip would with the [cuda13]
# extra -- the wheel and NVIDIA's cuFFT wheel side by side in one site-packages -- and runs the
# README's Python example with cuFFT only from there (WARPFFT_CUFFT_DEFAULT_PATHS=0: no
# toolkit, no system paths, no WARPFFT_LIBRARY). NVIDIA's cuFFT wheel is taken from the
# machine's Python (torch cu13 depends on it), linked into the fresh site-packages, since the
# machine cannot download it. Then the README's JAX and PyTorch examples run from that
# site-packages too (warpfft.jax and warpfft.torch ship in the wheel).
#   bash python/tools/gpu_wheel_check.sh [dist/warpfft-...whl]
set -euo pipefail
cd "$(dirname "$0")/../.."
whl=${1:-$(ls dist/warpfft-*.whl | head -1)}
py=${PYTHON:-python3}
site=$(mktemp -d)/site-packages
$py -m pip install -q --no-deps --no-index --target "$site" "$whl"
nv=$($py - <<'PY'
import importlib.util, os, sys
for p in sys.path:
    for sub in ("nvidia/cu13/lib", "nvidia/cufft/lib"):
        if os.path.exists(os.path.join(p, sub, "libcufft.so.12")):
            print(os.path.join(p, "nvidia")); sys.exit(0)
sys.exit("no NVIDIA cuFFT wheel (nvidia-cufft) in this Python's site-packages")
PY
)
ln -s "$nv" "$site/nvidia"
echo "wheel: $whl"
echo "site-packages: $site (nvidia -> $nv)"
# Python with warpfft only from the wheel's site-packages: no toolkit, system paths or
# WARPFFT_LIBRARY.
from_wheel=(env -u WARPFFT_LIBRARY -u CUDA_PATH -u CUDA_HOME -u LD_LIBRARY_PATH
    WARPFFT_CUFFT_DEFAULT_PATHS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH="$site" $py)
"${from_wheel[@]}" - <<'PY'
import warpfft
print("library:", warpfft.library_path())
print("cufft:", warpfft.cufft_probe())
print("manifest:", warpfft.build_manifest()["mode"], warpfft.build_manifest()["archs"])
PY
"${from_wheel[@]}" examples/python/type1_2d.py
# The framework ops from the installed wheel (the machine's python has jax and torch): the
# README's JAX and PyTorch examples (taken out as the tests take them, _docblocks), each after a
# line naming the module it imported.
for fw in jax torch; do
    ex=$(mktemp --suffix=.py)
    { echo "import warpfft.$fw as _m; print('  warpfft.$fw from', _m.__file__)"
      $py -c "import sys; sys.path.insert(0, 'python/tests'); from _docblocks import example
print(example('.', sys.argv[1]))" "$fw"; } >"$ex"
    echo "README $fw example from the wheel:"
    (cd "$(dirname "$ex")" && "${from_wheel[@]}" "$ex")
done
