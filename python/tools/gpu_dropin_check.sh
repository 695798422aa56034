#!/usr/bin/env bash
# On the GPU machine (no network), from the repository root: the cufinufft drop-in checked with
# the test-suites of the reference and of the packages built on it, warpfft standing in for
# cufinufft through warpfft.install_as_cufinufft() (python/tools/dropin_site/sitecustomize.py on
# PYTHONPATH: every Python started, subprocesses included) and no file of the reference but its
# tests and examples. Needs .dropin/ (python/tools/dropin_prep.sh, run where PyPI is reachable)
# and libwarpfft.so: $WARPFFT_LIBRARY, else .gpu/lib/libwarpfft.so (unpacked from
# .gpu/bundle.tar.xz if need be), else target/release/libwarpfft.so.
#
#   bash python/tools/gpu_dropin_check.sh [stage...]      (default: ref mri ptf)
#
# Stages (each under `timeout $STAGE_TIMEOUT`, default 540 s, to fit one 10-minute command):
#   ref         the reference's python/cufinufft/tests (v2.5.1) with --framework cupy
#               --framework torch, and numba where `numba.cuda` works here (its examples run
#               through test_examples.py); REF_FRAMEWORKS replaces that list (the log is
#               then ref-<frameworks>.log: REF_FRAMEWORKS=cupy, then torch, splits a run that
#               would not fit one command), REF_K is a -k expression, REF_ARGS more pytest
#               arguments (words)
#   mri         mri-nufft's operator tests, --backend cufinufft --ref finufft (the CPU finufft
#               is the reference they compare with), -k "$MRI_K" (default "cufinufft": the tests
#               of that backend); MRI_FILES (default tests/operators) narrows them, e.g.
#               mri-update / mri-rest: tests/operators/test_update.py / all but it
#   ptf         pytorch-finufft's tests (its CPU tests use the carried finufft); PTF_K is a -k
#               expression (PTF_K=cuda: the tests of its cufinufft path, those with "cuda" in
#               their names; PTF_K="not cuda": the CPU finufft ones)
# DROPIN_REFERENCE=<dir> runs the stages on the reference instead (<dir>/cufinufft: its Python
# package with its libcufinufft.so beside it): failures that are the package's, not ours.
# Logs and a summary (counts, failures, skip reasons) go to $OUT (or .dropin/logs): one
# <stage>.log each and summary.txt. DROPIN_EXTRA_PATH is appended to PYTHONPATH (a dry run on a
# machine without GPU: REF_FRAMEWORKS=fake REF_ARGS="-p _fake_framework"
# DROPIN_EXTRA_PATH=$PWD/python/tests runs the ref stage over the fake library).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
D=$ROOT/.dropin
L=${OUT:-$D/logs}
mkdir -p "$L"
py=${PYTHON:-python3}
STAGE_TIMEOUT=${STAGE_TIMEOUT:-540}
stages=${*:-ref mri ptf}
summary=$L/summary.txt

[ -d "$D/ref/tests" ] || { echo "no .dropin/: run bash python/tools/dropin_prep.sh first" >&2; exit 2; }
lib=${WARPFFT_LIBRARY:-}
if [ -z "$lib" ]; then
    if [ ! -f .gpu/lib/libwarpfft.so ] && [ -f .gpu/bundle.tar.xz ]; then
        python3 .gpu/unbundle.py .gpu/bundle.tar.xz .gpu lib
    fi
    for c in .gpu/lib/libwarpfft.so target/release/libwarpfft.so; do
        [ -f "$c" ] && { lib=$c; break; }
    done
fi
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
    echo "no libwarpfft.so: set WARPFFT_LIBRARY" >&2
    exit 2
fi
WARPFFT_LIBRARY=$(realpath "$lib")
export WARPFFT_LIBRARY

# Unpack the carried wheels this Python lacks (a wheel is a zip of its site-packages files):
# a wheel is skipped when every top-level module it holds imports already.
site=$D/site
pyt=$D/site_pytest7
rm -rf "$site" "$pyt"
mkdir -p "$site" "$pyt"
env -u PYTHONPATH "$py" - "$D/whl" "$site" "$D/pytest7" "$pyt" <<'PY' | tee "$L/unpacked.txt"
import glob, importlib.util, sys, zipfile


SKIP = ("tests", "docs", "examples")  # pytorch-finufft's wheel ships these at its top level


def tops(z):
    names = set()
    for n in z.namelist():
        top = n.split("/")[0]
        if top.endswith((".dist-info", ".data", ".libs")) or top.startswith("__") or \
                top in SKIP:
            continue
        names.add(top[:-3] if top.endswith(".py") else top)
    return sorted(names)


for src, dst, force in ((sys.argv[1], sys.argv[2], False), (sys.argv[3], sys.argv[4], True)):
    for whl in sorted(glob.glob(f"{src}/*.whl")):
        with zipfile.ZipFile(whl) as z:
            mods = [m for m in tops(z) if m.isidentifier()]
            have = [m for m in mods if importlib.util.find_spec(m) is not None]
            if not force and mods and len(have) == len(mods):
                print(f"present  {whl.rsplit('/', 1)[1]} ({', '.join(mods)})")
                continue
            z.extractall(dst, [n for n in z.namelist() if n.split("/")[0] not in SKIP])
            print(f"unpacked {whl.rsplit('/', 1)[1]} ({', '.join(mods)})")
PY
# pytest 7.4 first (pytest-cases, which mri-nufft's tests need, does not import under 8+),
# then the stand-in's start-up hook, warpfft's source tree and the unpacked wheels.
export PYTHONPATH=$pyt:$ROOT/python/tools/dropin_site:$ROOT/python:$site${DROPIN_EXTRA_PATH:+:$DROPIN_EXTRA_PATH}
tag=
if [ -n "${DROPIN_REFERENCE:-}" ]; then
    # the same tests on the reference itself (its Python package with its libcufinufft.so in
    # $DROPIN_REFERENCE/cufinufft, e.g. from peer_bench.sh's build), to tell a failure of ours
    # from one of the package's: no stand-in, logs named <stage>-reference
    [ -f "$DROPIN_REFERENCE/cufinufft/__init__.py" ] ||
        { echo "DROPIN_REFERENCE=$DROPIN_REFERENCE holds no cufinufft package" >&2; exit 2; }
    export PYTHONPATH=$pyt:$DROPIN_REFERENCE:$site${DROPIN_EXTRA_PATH:+:$DROPIN_EXTRA_PATH}
    tag=-reference
fi
export MPLBACKEND=Agg XLA_PYTHON_CLIENT_PREALLOCATE=false

{
    echo "drop-in check, $(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
    "$py" - <<'PY' 2>&1
import sys
import cufinufft
try:
    import warpfft
    lib = warpfft.library_path() if cufinufft.__file__.startswith(warpfft.__path__[0]) else "its own"
except ImportError:
    lib = "its own"
print("python", sys.version.split()[0], "| cufinufft ->", cufinufft.__file__,
      cufinufft.__version__, "| library", lib)
import pytest
print("pytest", pytest.__version__, pytest.__file__)
PY
} | tee -a "$summary"

# Counts from pytest's -v lines (also when a stage was cut short by its timeout).
count() { # log name rc
    "$py" - "$1" "$2" "$3" <<'PY' | tee -a "$summary"
import re, sys
log, name, rc = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(log, errors="replace").read()
outcome = re.compile(r"^(\S+::\S+.*?) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b", re.M)
counts, failed = {}, []
for m in outcome.finditer(text):
    counts[m.group(2)] = counts.get(m.group(2), 0) + 1
    if m.group(2) in ("FAILED", "ERROR"):
        failed.append(m.group(1))
tail = [l for l in text.splitlines() if re.match(r"^=+ .* in [0-9.]+s", l)]
print(f"== {name}: exit {rc}{' (timed out)' if rc == '124' else ''}; "
      + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())))
print("   pytest:", tail[-1].strip("= ") if tail else "(no final line)")
if not counts:  # it stopped before running a test: say why
    for line in text.splitlines()[-8:]:
        print("   |", line[:200])
for f in failed[:40]:
    print("   FAILED", f)
if len(failed) > 40:
    print(f"   ... {len(failed) - 40} more")
skips = re.findall(r"^SKIPPED \[(\d+)\] (.*)$", text, re.M)
for n, why in skips[:25]:
    print(f"   skipped {n}: {why[:160]}")
PY
}

run_pytest() { # name dir args...
    local name=$1$tag dir=$2; shift 2
    echo "-- $name: (cd ${dir#"$ROOT"/} && pytest $*)" | tee -a "$summary"
    # -p no:timeout: the GPU machine's pytest-timeout plugin declares a "float" ini option,
    # which the carried pytest 7 rejects at start-up (every stage failed before collecting)
    (cd "$dir" && timeout "$STAGE_TIMEOUT" "$py" -m pytest -p no:cacheprovider -p no:timeout -v -rfEs "$@") \
        >"$L/$name.log" 2>&1
    local rc=$?
    count "$L/$name.log" "$name" "$rc"
    return $rc
}

fails=0
for s in $stages; do case $s in
ref)
    fw=()
    for f in ${REF_FRAMEWORKS:-cupy torch numba}; do fw+=(--framework "$f"); done
    if [ -z "${REF_FRAMEWORKS:-}" ] &&
        ! "$py" -c "import numba.cuda as c, sys; sys.exit(not c.is_available())" 2>/dev/null; then
        fw=(--framework cupy --framework torch)
        echo "   (numba.cuda is not usable here: no --framework numba)" | tee -a "$summary"
    fi
    [ -n "${REF_K:-}" ] && fw+=(-k "$REF_K")
    name=ref${REF_FRAMEWORKS:+-${REF_FRAMEWORKS// /-}}  # ref-cupy etc. when split up
    # shellcheck disable=SC2086
    run_pytest "$name" "$D/ref/tests" "${fw[@]}" ${REF_ARGS:-} . || fails=$((fails + 1)) ;;
mri|mri-update|mri-rest)
    case $s in
    mri) files=${MRI_FILES:-tests/operators} ;;
    mri-update) files=tests/operators/test_update.py ;;
    mri-rest) files="tests/operators --ignore=tests/operators/test_update.py" ;;
    esac
    # shellcheck disable=SC2086
    run_pytest "$s" "$D/mri_nufft" $files --backend cufinufft --ref finufft \
        -k "${MRI_K:-cufinufft}" || fails=$((fails + 1)) ;;
ptf)
    # PTF_K: a -k expression; "cuda" selects the tests of its cufinufft path (the others run
    # the CPU finufft, not the stand-in, and take most of the stage's time)
    run_pytest ptf "$D/pytorch_finufft" tests ${PTF_K:+-k "$PTF_K"} || fails=$((fails + 1)) ;;
*)
    echo "unknown stage $s (ref mri mri-update mri-rest ptf)" >&2; fails=$((fails + 1)) ;;
esac; done
echo "== stages with failures: $fails (summary: $summary)" | tee -a "$summary"
exit $((fails > 0))
