#!/usr/bin/env bash
# Runs HERE (PyPI and a git copy of finufft reachable), before python/tools/gpu_dropin_check.sh
# runs on the GPU machine (no network there). Fills the git-ignored .dropin/ with:
#   ref/tests, ref/examples  the reference's own Python tests and examples (cufinufft
#                            v2.5.1: python/cufinufft/{tests,examples} of finufft's tag), in
#                            the layout its test_examples.py expects (examples beside tests)
#   mri_nufft/tests          mri-nufft's tests, from its sdist (the version of the wheel)
#   pytorch_finufft/tests    pytorch-finufft's tests, from its wheel
#   whl/                     wheels for CPython 3.12 manylinux x86_64, no dependencies resolved
#                            (listed below): mri-nufft, pytorch-finufft, finufft (CPU:
#                            mri-nufft's reference backend, pytorch-finufft's CPU tests),
#                            what they import that the GPU
#                            machine's Python may lack (matplotlib and its dependencies, tqdm,
#                            pytest-cases ...); the GPU script unpacks only those missing there
#   pytest7/                 pytest 7.4 (+pluggy, iniconfig) wheels, for all three suites:
#                            pytest-cases (mri-nufft's tests) does not import under pytest 8+
#   MANIFEST                 what was fetched, from where, and the sizes
# Options (environment): FINUFFT_GIT (a clone or bare mirror of flatironinstitute/finufft;
# default: the mirror at /work/.mirror/...), REF_TAG (v2.5.1), MRI_NUFFT (1.5.1),
# PYTORCH_FINUFFT (0.1.0), FINUFFT (2.5.1), DROPIN_NUMBA=1 to add numba, numba-cuda and
# llvmlite (~65 MB: over the device tool's 64 MiB; only if the GPU machine lacks numba and the
# numba framework must run).
#   bash python/tools/dropin_prep.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
FINUFFT_GIT=${FINUFFT_GIT:-/work/.mirror/flatironinstitute+finufft/repo}
REF_TAG=${REF_TAG:-v2.5.1}
MRI_NUFFT=${MRI_NUFFT:-1.5.1}
PYTORCH_FINUFFT=${PYTORCH_FINUFFT:-0.1.0}
FINUFFT=${FINUFFT:-2.5.1}
D=.dropin
py=${PYTHON:-python3}
pipdl=("$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12
       --implementation cp --abi cp312 --platform manylinux2014_x86_64
       --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)

gitdir=$FINUFFT_GIT
[ -d "$gitdir/.git" ] && gitdir=$gitdir/.git
if ! git --git-dir="$gitdir" rev-parse -q --verify "$REF_TAG^{commit}" >/dev/null 2>&1; then
    echo "dropin_prep: no git copy of finufft with tag $REF_TAG at FINUFFT_GIT=$FINUFFT_GIT" >&2
    echo "  (git clone https://github.com/flatironinstitute/finufft and set FINUFFT_GIT)" >&2
    exit 1
fi
rm -rf $D
mkdir -p $D/ref $D/whl $D/pytest7 $D/mri_nufft $D/pytorch_finufft

# 1. the reference's tests and examples, as files of the tag (nothing else of the reference)
for sub in tests examples; do
    mkdir -p $D/ref/$sub
    for f in $(git --git-dir="$gitdir" ls-tree --name-only "$REF_TAG" "python/cufinufft/$sub/"); do
        git --git-dir="$gitdir" show "$REF_TAG:$f" >"$D/ref/$sub/$(basename "$f")"
    done
done

# 2. wheels (no dependency resolution: the list is what the GPU machine may lack)
"${pipdl[@]}" -d $D/whl "mri-nufft==$MRI_NUFFT" "pytorch-finufft==$PYTORCH_FINUFFT" \
    "finufft==$FINUFFT" matplotlib contourpy cycler fonttools kiwisolver pillow pyparsing \
    python-dateutil six tzdata tqdm pytest-cases makefun decopatch packaging
# mri-nufft's autodiff module imports deepinv (its test_autodiff errored at every fixture
# without it); deepinv's other needs (torchvision, torchmetrics, einops, h5py, requests) are
# on the GPU machine already
"${pipdl[@]}" -d $D/whl "deepinv==${DEEPINV:-0.5.0}" natsort
if [ "${DROPIN_NUMBA:-0}" = 1 ]; then
    "${pipdl[@]}" -d $D/whl numba llvmlite numba-cuda
fi
"${pipdl[@]}" -d $D/pytest7 "pytest==7.4.4" "pluggy>=1,<2" iniconfig

# 3. mri-nufft's tests from its sdist (the wheel has none); pytorch-finufft's from its wheel
tmp=$(mktemp -d)
"$py" -m pip download -q --no-deps --no-binary=:all: "mri-nufft==$MRI_NUFFT" -d "$tmp"
tar xzf "$tmp"/mri_nufft-*.tar.gz -C "$tmp"
cp -r "$tmp"/mri_nufft-*/tests $D/mri_nufft/
"$py" - "$D" <<'PY'
import glob, sys, zipfile
d = sys.argv[1]
whl = glob.glob(f"{d}/whl/pytorch_finufft-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith("tests/"):
            z.extract(n, f"{d}/pytorch_finufft")
PY
rm -rf "$tmp"

{
    echo "reference tests/examples: $REF_TAG of $FINUFFT_GIT ($(git --git-dir="$gitdir" rev-parse "$REF_TAG^{commit}"))"
    echo "mri-nufft tests: sdist $MRI_NUFFT (PyPI); pytorch-finufft tests: wheel $PYTORCH_FINUFFT"
    echo "wheels:"
    for w in "$D"/whl/*.whl "$D"/pytest7/*.whl; do echo "  $w"; done
    for p in "$D/whl" "$D/pytest7" "$D"; do du -sh "$p"; done | sed "s/^/  /"
} >$D/MANIFEST
cat $D/MANIFEST
mb=$(du -sm $D | cut -f1)
if [ "$mb" -gt 40 ]; then
    echo "dropin_prep: .dropin is $mb MB: the device tool carries 64 MiB in all (with .gpu)" >&2
fi
