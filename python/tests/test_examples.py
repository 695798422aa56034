"""The examples run: Python (exit 0, or 0 with a "no GPU" note) and C through an installed
prefix + pkg-config (examples/c/run.sh: exit 0; type1_2d alone exits 2 without a GPU)."""

import os
import shutil
import sys

import pytest
from _support import LIBRARY, REPO, clean_env, gpu_status, run, warpfft

EXAMPLES = os.path.join(REPO, "examples")


PY_EXAMPLES = sorted(n for n in os.listdir(os.path.join(EXAMPLES, "python")) if n.endswith(".py"))


@pytest.mark.parametrize("name", PY_EXAMPLES)
def test_python_example(name):
    """Every examples/python/*.py (the docs include them: test_docs.py checks that they are
    these files)."""
    env = clean_env(WARPFFT_LIBRARY=LIBRARY, PYTHONPATH=os.path.join(REPO, "python"))
    r = run([sys.executable, os.path.join(EXAMPLES, "python", name)], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    if gpu_status() is None:
        assert "direct sum" in r.stdout
    else:
        assert "no GPU" in r.stdout


def _install_prefix(prefix):
    """What `just install PREFIX` lays out: lib/libwarpfft.so{.V,.0,}, the public headers
    (include/warpfft.h, include/warpfft/*.h, include/warpfft_xla.h), lib/pkgconfig/warpfft.pc
    (from c_core/warpfft.pc.in when present)."""
    v = warpfft.version()
    lib, inc, pc = prefix / "lib", prefix / "include", prefix / "lib" / "pkgconfig"
    for d in (lib, inc, pc):
        d.mkdir(parents=True, exist_ok=True)
    shutil.copy(LIBRARY, lib / f"libwarpfft.so.{v}")
    os.symlink(f"libwarpfft.so.{v}", lib / "libwarpfft.so.0")
    os.symlink("libwarpfft.so.0", lib / "libwarpfft.so")
    shutil.copytree(os.path.join(REPO, "c_core", "include"), inc, dirs_exist_ok=True)
    template = os.path.join(REPO, "c_core", "warpfft.pc.in")
    if os.path.exists(template):
        with open(template) as f:
            text = f.read().replace("@PREFIX@", str(prefix)).replace("@VERSION@", v)
    else:
        text = (f"prefix={prefix}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\n"
                f"Name: warpfft\nDescription: GPU NUFFT\nVersion: {v}\n"
                "Libs: -L${libdir} -Wl,-rpath,${libdir} -lwarpfft\nCflags: -I${includedir}\n")
    (pc / "warpfft.pc").write_text(text)


def _need_tools():
    for tool in ("cc", "pkg-config"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not found")


def test_c_examples_run_sh(tmp_path):
    _need_tools()
    prefix = tmp_path / "prefix"
    _install_prefix(prefix)
    r = run(["sh", os.path.join(EXAMPLES, "c", "run.sh"), str(prefix)],
            env=clean_env(), cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"version: {warpfft.version()}" in r.stdout
    assert "manifest: {" in r.stdout and "runtime: {" in r.stdout
    if gpu_status() is None:
        assert "ok" in r.stdout.splitlines()
    else:
        assert "no GPU" in r.stdout


def test_c_example_no_gpu_exit_code(tmp_path):
    if gpu_status() is None:
        pytest.skip("a GPU is present: the no-GPU exit code cannot be exercised here")
    _need_tools()
    prefix = tmp_path / "prefix"
    _install_prefix(prefix)
    env = clean_env(PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "warpfft"], env=env).stdout.split()
    exe = tmp_path / "type1_2d"
    r = run(["cc", os.path.join(EXAMPLES, "c", "type1_2d.c"), *flags, "-o", str(exe)], env=env)
    assert r.returncode == 0, r.stderr
    r = run([str(exe)], env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "WARPFFT_ERR_NO_" in r.stderr and len(r.stderr.strip()) > 30
