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
env -u WARPFFT_LIBRARY -u CUDA_PATH -u CUDA_HOME -u LD_LIBRARY_PATH WARPFFT_CUFFT_DEFAULT_PATHS=0 \
    PYTHONPATH="$site" $py - <<'PY'
import warpfft
print("library:", warpfft.library_path())
print("cufft:", warpfft.cufft_probe())
print("manifest:", warpfft.build_manifest()["mode"], warpfft.build_manifest()["archs"])
PY
env -u WARPFFT_LIBRARY -u CUDA_PATH -u CUDA_HOME -u LD_LIBRARY_PATH WARPFFT_CUFFT_DEFAULT_PATHS=0 \
    PYTHONPATH="$site" $py examples/python/type1_2d.py
# The framework ops from the installed wheel (the machine's python has jax and torch): the
# README's JAX and PyTorch examples, with warpfft only from the wheel's site-packages.
for fw in jax torch; do
    ex=$(mktemp --suffix=.py)
    $py - "$fw" >"$ex" <<'PY'
import re, sys
text = open("README.md").read()
m = re.search(r"<!-- example: " + sys.argv[1] + r" -->\s*```python\n(.*?)```", text, re.S)
if not m:
    sys.exit(f"README.md has no {sys.argv[1]} example")
print(m.group(1))
PY
    echo "README $fw example from the wheel:"
    (cd "$(dirname "$ex")" && env -u WARPFFT_LIBRARY -u CUDA_PATH -u CUDA_HOME -u LD_LIBRARY_PATH \
        WARPFFT_CUFFT_DEFAULT_PATHS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH="$site" \
        $py -c "import warpfft.$fw as m; print('  warpfft.$fw from', m.__file__)" &&
        env -u WARPFFT_LIBRARY -u CUDA_PATH -u CUDA_HOME -u LD_LIBRARY_PATH \
        WARPFFT_CUFFT_DEFAULT_PATHS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH="$site" \
        $py "$ex")
done
