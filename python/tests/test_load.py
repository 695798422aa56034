"""Loading, version, manifest, header coverage, error mapping, and the clean no-GPU path."""

import glob
import os
import re

import pytest
from _support import LIBRARY, REPO, clean_env, require_no_gpu, run_python, warpfft
from warpfft import _errors, _lib

INCLUDE = os.path.join(REPO, "c_core", "include")
# The public headers: warpfft.h, its parts by topic, and the XLA handlers' warpfft_xla.h.
HEADERS = sorted(glob.glob(os.path.join(INCLUDE, "*.h")) +
                 glob.glob(os.path.join(INCLUDE, "warpfft", "*.h")))


def _headers_text():
    text = ""
    for path in HEADERS:
        with open(path) as f:
            text += f.read()
    return text


def test_loaded_from_warpfft_library():
    assert os.path.samefile(warpfft.library_path(), LIBRARY)


def test_version():
    v = warpfft.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", v), v
    h = _headers_text()
    parts = [re.search(rf"#define WARPFFT_VERSION_{p} (\d+)", h).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    assert v == ".".join(parts)
    assert warpfft.__version__ == v


MODES = ("jit", "aot", "aot+jit", "nvrtc", "jit+nvrtc", "aot+nvrtc", "aot+jit+nvrtc")


def test_build_manifest():
    m = warpfft.build_manifest()
    assert m["mode"] in MODES, m
    parts = set(m["mode"].split("+"))
    assert "archs" in m and isinstance(m["archs"], list)
    assert m["modules"], "the manifest lists no kernel modules"
    if "aot" in parts:
        assert m["archs"], "an aot build must list its real archs"
    # nvrtc builds embed the kernel sources (listed with their digest); others none.
    assert bool(m["files"]) == bool(m["sources_digest"]) == ("nvrtc" in parts), m["files"]


def test_embedded_modules():
    mods = warpfft.embedded_modules()
    manifest = warpfft.build_manifest()
    parts = set(manifest["mode"].split("+"))
    images = bool(parts & {"jit", "aot"})
    assert mods and all(m["name"] and bool(m["blobs"]) == images for m in mods)
    kinds = {b["kind"] for m in mods for b in m["blobs"]}
    assert kinds <= {"ptx", "fatbin"}
    assert all(b["size"] > 0 for m in mods for b in m["blobs"])
    assert [m["name"] for m in mods] == [m["name"] for m in manifest["modules"]]
    if "aot" in parts:
        assert "fatbin" in kinds
    elif "jit" in parts:
        assert kinds == {"ptx"}


def _header_functions():
    """name -> number of parameters, for every WARPFFT_API function of the public headers
    (warpfft.h's parts and warpfft_xla.h, whose handlers Python registers with JAX)."""
    text = re.sub(r"/\*.*?\*/", "", _headers_text(), flags=re.S)
    out = {}
    for m in re.finditer(r"WARPFFT_API\s[^;{]*?\b(warpfft_\w+)\s*\(([^)]*)\)\s*;", text):
        params = m.group(2).strip()
        out[m.group(1)] = 0 if params in ("", "void") else params.count(",") + 1
    return out


def test_every_header_function_is_declared():
    """One module (_lib) declares every function Python may call, the framework ops' too."""
    funcs = _header_functions()
    assert len(funcs) >= 20, funcs
    assert set(funcs) == set(_lib.SIGNATURES), set(funcs) ^ set(_lib.SIGNATURES)
    for name, nparams in funcs.items():
        assert len(_lib.SIGNATURES[name][1]) == nparams, name


def test_status_names_and_classes():
    statuses = [v for k, v in vars(_errors).items() if k.startswith("ERR_")]
    assert sorted(statuses) == list(range(1, 21))
    assert warpfft.status_name(0) == "WARPFFT_SUCCESS"
    for k, v in vars(_errors).items():
        if k.startswith("ERR_"):
            assert warpfft.status_name(v) == "WARPFFT_" + k
    assert _errors.error_class(_errors.ERR_NO_DRIVER) is warpfft.NoGpuError
    assert _errors.error_class(_errors.ERR_NO_DEVICE) is warpfft.NoGpuError
    assert _errors.error_class(_errors.ERR_NO_CUFFT) is warpfft.NoCufftError
    assert _errors.error_class(_errors.ERR_NO_NVRTC) is warpfft.NoNvrtcError
    assert _errors.error_class(_errors.ERR_BAD_DIM) is warpfft.InvalidArgumentError
    assert issubclass(warpfft.InvalidArgumentError, ValueError)
    assert issubclass(warpfft.LibraryNotFoundError, ImportError)


def test_missing_library_is_an_import_error(tmp_path):
    env = clean_env(WARPFFT_LIBRARY=str(tmp_path / "nope" / "libwarpfft.so"),
                    PYTHONPATH=os.path.join(REPO, "python"))
    r = run_python("import warpfft", env, cwd=str(tmp_path))
    assert r.returncode != 0
    assert "LibraryNotFoundError" in r.stderr and "nope/libwarpfft.so" in r.stderr, r.stderr


def test_no_gpu_plan_raises_no_gpu_error():
    require_no_gpu()
    with pytest.raises(warpfft.NoGpuError) as ei:
        warpfft.Plan(1, (16, 16))
    e = ei.value
    assert e.status in (_errors.ERR_NO_DRIVER, _errors.ERR_NO_DEVICE)
    assert e.name == warpfft.status_name(e.status)
    assert e.message and e.message in str(e)
    if e.status == _errors.ERR_NO_DRIVER:
        assert "libcuda" in e.message


def test_no_gpu_runtime_info_attaches_json():
    require_no_gpu()
    with pytest.raises(warpfft.NoGpuError) as ei:
        warpfft.runtime_info()
    e = ei.value
    assert isinstance(e.info, dict), e.json
    assert "gpu_error" in e.info
    assert e.json.startswith("{")


def test_no_gpu_helpers_fail_cleanly():
    require_no_gpu()
    with pytest.raises(warpfft.NoGpuError):
        warpfft.DeviceArray((4,), "f4")
    with pytest.raises(warpfft.NoGpuError):
        warpfft.nufft1d1([0.0, 1.0], [1 + 0j, 2 + 0j], 8)
