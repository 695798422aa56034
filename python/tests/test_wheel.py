"""Packaging: the library links no CUDA library; `pip wheel python/` gives one platform wheel
holding libwarpfft.so; it installs into a clean venv and loads from there; cuFFT is found in
NVIDIA's pip wheel (network: skip with WARPFFT_SKIP_NETWORK_TESTS=1) and, without one, the
NoCufftError lists the places tried."""

import importlib.util
import json
import os
import re
import shutil
import sys
import zipfile

import numpy as np
import pytest
from _support import LIBRARY, PYDIR, clean_env, dt_needed, run, run_python

CUDA_LIB = re.compile(r"cuda|cufft|nvrtc|nvjitlink|cublas", re.I)
NETWORK = os.environ.get("WARPFFT_SKIP_NETWORK_TESTS", "") not in ("1", "true", "yes")


def test_library_links_no_cuda_library():
    needed = dt_needed(os.path.realpath(LIBRARY))
    assert not [n for n in needed if CUDA_LIB.search(n)], needed


def _offline_build_possible():
    if importlib.util.find_spec("setuptools") is None:
        return False
    try:
        import setuptools.command.bdist_wheel  # noqa: F401  (setuptools >= 70.1)
        return True
    except ImportError:
        return importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Builds the wheel as `just wheel` does, from a copy of python/ with the library in it."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(PYDIR, src, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__", "libwarpfft.so*"))
    shutil.copy(os.path.realpath(LIBRARY), src / "warpfft" / "libwarpfft.so")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", str(src), "-w", str(tmp / "dist")]
    if _offline_build_possible():
        cmd.insert(5, "--no-build-isolation")
    elif not NETWORK:
        pytest.skip("no setuptools+wheel here and WARPFFT_SKIP_NETWORK_TESTS=1: cannot build")
    r = run(cmd, env=clean_env(), cwd=str(tmp))
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = sorted((tmp / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_is_one_platform_wheel_with_the_library(wheel, tmp_path):
    assert re.fullmatch(r"warpfft-0\.1\.0-py3-none-(many)?linux_\w+\.whl", wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        z.extract("warpfft/libwarpfft.so", tmp_path)
    assert "Root-Is-Purelib: false" in meta
    assert "warpfft/__init__.py" in names and "warpfft/libwarpfft.so" in names
    assert not [n for n in names if "tests" in n], names
    needed = dt_needed(tmp_path / "warpfft" / "libwarpfft.so")
    assert not [n for n in needed if CUDA_LIB.search(n)], needed


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
