"""Packaging: the library links no CUDA library; python/tools/build_wheel.py (what `just wheel`
runs) gives one manylinux wheel holding libwarpfft.so, checked with auditwheel (tag, dependencies,
extras, size); it installs into a clean venv and loads from there; cuFFT is found in
NVIDIA's pip wheel (network: skip with WARPFFT_SKIP_NETWORK_TESTS=1) and, without one, the
NoCufftError lists the places tried."""

import importlib.util
import json
import os
import pathlib
import re
import sys
import zipfile

import numpy as np
import pytest
from _support import LIBRARY, PYDIR, REPO, clean_env, dt_needed, run, run_python

CUDA_LIB = re.compile(r"cuda|cufft|nvrtc|nvjitlink|cublas", re.I)
NETWORK = os.environ.get("WARPFFT_SKIP_NETWORK_TESTS", "") not in ("1", "true", "yes")


def test_library_links_no_cuda_library():
    needed = dt_needed(os.path.realpath(LIBRARY))
    assert not [n for n in needed if CUDA_LIB.search(n)], needed


sys.path.insert(0, os.path.join(PYDIR, "tools"))
import build_wheel as wheeltool  # noqa: E402  (python/tools/build_wheel.py: `just wheel`)

HAVE_AUDITWHEEL = importlib.util.find_spec("auditwheel") is not None


def _need_auditwheel():
    # CI installs it (`just wheel` does, before pytest runs); skipping is for bare checkouts.
    if not HAVE_AUDITWHEEL:
        pytest.skip("auditwheel not installed (pip install auditwheel): the manylinux tag "
                    "cannot be checked")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Builds the wheel as `just wheel` does (python/tools/build_wheel.py, manylinux tag from
    auditwheel), with the library under test."""
    _need_auditwheel()
    tmp = tmp_path_factory.mktemp("wheel")
    return pathlib.Path(wheeltool.build(os.path.realpath(LIBRARY), str(tmp / "dist")))


def test_wheel_is_one_manylinux_wheel_with_the_library(wheel, tmp_path):
    assert re.fullmatch(r"warpfft-0\.1\.0-py3-none-manylinux_2_\d+_x86_64\.whl", wheel.name), \
        wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        z.extract("warpfft/libwarpfft.so", tmp_path)
    assert "Root-Is-Purelib: false" in meta
    assert "warpfft/__init__.py" in names and "warpfft/libwarpfft.so" in names
    # the framework ops and the cufinufft stand-in ship in the same wheel (the framework ops
    # were once left out: only warpfft/*.py)
    for sub in ("jax", "torch", "cufinufft"):
        src = sorted(p.name for p in pathlib.Path(PYDIR, "warpfft", sub).glob("*.py"))
        assert src and all(f"warpfft/{sub}/{n}" in names for n in src), (sub, src, names)
    assert not [n for n in names if "tests" in n], names
    needed = dt_needed(tmp_path / "warpfft" / "libwarpfft.so")
    assert not [n for n in needed if CUDA_LIB.search(n)], needed


def test_wheel_check_tag_deps_extras_size(wheel):
    """What CI checks: auditwheel agrees with the manylinux tag, no CUDA library is a dependency
    (DT_NEEDED or auditwheel's external libraries), extras [cuda12]/[cuda13] pull NVIDIA's
    cuFFT wheels, the size is bounded."""
    info = wheeltool.check(str(wheel), max_mb=40)
    assert info["tag"].startswith("manylinux_2_")
    assert any('extra == "cuda12"' in r for r in info["requires"])


def test_wheel_check_refuses_a_cuda_dependency(wheel, tmp_path):
    bad = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename.endswith("METADATA"):
                data = data.replace(b"Requires-Dist: numpy", b"Requires-Dist: numpy\n"
                                    b"Requires-Dist: nvidia-cufft")
            zout.writestr(item, data)
    with pytest.raises(SystemExit, match="CUDA package is a plain dependency"):
        wheeltool.check(str(bad))
    with pytest.raises(SystemExit, match="MB"):
        wheeltool.check(str(wheel), max_mb=0.1)


def test_wheel_check_refuses_a_wheel_without_the_framework_ops(wheel, tmp_path):
    bad = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            if not item.filename.startswith("warpfft/torch/"):
                zout.writestr(item, zin.read(item))
    with pytest.raises(SystemExit, match=r"missing from the wheel: \['warpfft/torch/"):
        wheeltool.check(str(bad))


def test_release_wheel_in_dist_passes_the_check():
    """The wheel `just wheel` left in dist/ (aot+jit: CI builds it with a short arch list;
    release wheels with the default list) passes the same check."""
    _need_auditwheel()
    found = sorted(pathlib.Path(REPO, "dist").glob("warpfft-*.whl"))
    if not found:
        pytest.skip("no dist/warpfft-*.whl: run `just wheel` first")
    info = wheeltool.check(str(found[-1]), max_mb=40)
    assert info["tag"].startswith("manylinux_2_")


def _venv(path):
    """A clean venv (no system site-packages) that sees this interpreter's numpy through a
    .pth file (so no network is needed); returns (python, site-packages)."""
    r = run([sys.executable, "-m", "venv", str(path)])
    assert r.returncode == 0, r.stderr
    py = str(path / "bin" / "python")
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = run([py, "-c", purelib]).stdout.strip()
    with open(os.path.join(site, "_numpy_from_host.pth"), "w") as f:
        f.write(os.path.dirname(os.path.dirname(np.__file__)) + "\n")
    return py, site


def _pip(py, *args, timeout=1800):
    r = run([py, "-m", "pip", "--disable-pip-version-check", *args], env=clean_env(),
            timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.fixture(scope="module")
def venv_with_wheel(wheel, tmp_path_factory):
    py, site = _venv(tmp_path_factory.mktemp("venv") / "v")
    _pip(py, "install", "--no-index", "--no-deps", str(wheel))
    return py, site


PROBE = """
import json, warpfft
try:
    path, version = warpfft.cufft_probe()
    out = {"path": path, "version": version}
except warpfft.NoCufftError as e:
    out = {"error": e.name, "message": e.message}
out["library"] = warpfft.library_path()
out["warpfft"] = warpfft.version()
print(json.dumps(out))
"""


def _probe(py, cwd, **env):
    r = run_python(PROBE, clean_env(**env), python=py, cwd=str(cwd))
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_wheel_installs_and_loads_its_library(venv_with_wheel, tmp_path):
    py, site = venv_with_wheel
    out = _probe(py, tmp_path)
    assert out["warpfft"] == "0.1.0"
    assert os.path.samefile(out["library"], os.path.join(site, "warpfft", "libwarpfft.so"))
    # the framework subpackages are installed beside it (importing them needs jax / torch,
    # which this venv lacks: finding them is what the wheel owes)
    find = ("import importlib.util as u, json; print(json.dumps([getattr(u.find_spec(m), "
            "'origin', None) for m in ('warpfft.jax', 'warpfft.torch')]))")
    r = run_python(find, clean_env(), python=py, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    origins = json.loads(r.stdout.strip().splitlines()[-1])
    for sub, origin in zip(("jax", "torch"), origins):
        assert origin and os.path.samefile(origin, os.path.join(site, "warpfft", sub,
                                                                 "__init__.py")), origins


@pytest.mark.parametrize("framework, names", [("jax", "nufft1 nufft2 nufft3"),
                                              ("torch", "finufft_type1 finufft_type2")])
def test_wheel_framework_ops_import_from_the_wheel(venv_with_wheel, tmp_path, framework, names):
    """`import warpfft.<framework>` from the installed wheel registers its ops (the venv sees
    this interpreter's site-packages, so the framework is there when the tests have it)."""
    py, site = venv_with_wheel
    code = (f"import importlib.util, json, sys\n"
            f"if importlib.util.find_spec('{framework}') is None:\n"
            f"    print('NOFRAMEWORK'); sys.exit()\n"
            f"import warpfft.{framework} as m\n"
            f"ok = [callable(getattr(m, n)) for n in '{names}'.split()]\n"
            f"print(json.dumps([m.__file__] + ok))")
    r = run_python(code, clean_env(), python=py, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    if last == "NOFRAMEWORK":
        pytest.skip(f"{framework} is not installed: its op's import from the wheel is not run")
    out = json.loads(last)
    assert os.path.samefile(out[0], os.path.join(site, "warpfft", framework, "__init__.py"))
    assert all(out[1:]), out


def test_no_cufft_wheel_and_no_default_paths_lists_places(venv_with_wheel, tmp_path):
    py, _ = venv_with_wheel
    out = _probe(py, tmp_path, WARPFFT_CUFFT_DEFAULT_PATHS="0")
    assert out.get("error") == "WARPFFT_ERR_NO_CUFFT", out
    assert "nvidia" in out["message"], out["message"]  # the wheel locations were searched


@pytest.mark.network
@pytest.mark.skipif(not NETWORK, reason="WARPFFT_SKIP_NETWORK_TESTS=1: no PyPI download")
def test_cufft_found_in_nvidia_wheel(wheel, tmp_path_factory):
    """pip install nvidia-cufft (downloaded once into $WARPFFT_WHEELHOUSE, default
    ~/.cache/warpfft/wheelhouse) + our wheel: cuFFT is found inside that venv's
    site-packages/nvidia with no system paths and no CUDA_PATH/CUDA_HOME."""
    house = os.environ.get("WARPFFT_WHEELHOUSE") or os.path.join(
        os.path.expanduser("~"), ".cache", "warpfft", "wheelhouse")
    py, site = _venv(tmp_path_factory.mktemp("cufft") / "v")
    _pip(py, "download", "--only-binary=:all:", "-d", house, "nvidia-cufft")  # kept: a cache
    _pip(py, "install", "--no-index", "--find-links", house, "nvidia-cufft")
    _pip(py, "install", "--no-index", "--no-deps", str(wheel))
    nvidia = os.path.realpath(os.path.join(site, "nvidia"))
    cwd = tmp_path_factory.mktemp("run")
    # 1. beside libwarpfft: <site>/warpfft/libwarpfft.so -> <site>/nvidia/...
    out = _probe(py, cwd, WARPFFT_CUFFT_DEFAULT_PATHS="0")
    assert "path" in out, out
    assert os.path.realpath(out["path"]).startswith(nvidia + os.sep), out
    assert out["version"] > 0
    # 2. through $VIRTUAL_ENV, with the library from elsewhere (the source tree's)
    out = _probe(sys.executable, cwd, WARPFFT_CUFFT_DEFAULT_PATHS="0",
                 VIRTUAL_ENV=os.path.dirname(os.path.dirname(py)), WARPFFT_LIBRARY=LIBRARY,
                 PYTHONPATH=PYDIR)
    assert "path" in out, out
    assert os.path.realpath(out["path"]).startswith(nvidia + os.sep), out
