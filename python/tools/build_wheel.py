"""Builds and checks the warpfft wheel (what `just wheel` runs; python/tests/test_wheel.py runs
the same functions in CI).

    python3 python/tools/build_wheel.py build LIB [-o dist] [--plat auto|TAG]
    python3 python/tools/build_wheel.py check WHEEL [--max-mb N]

build: a py3-none-<plat> wheel of the packages pyproject.toml lists (warpfft,
warpfft.cufinufft, warpfft.jax, warpfft.torch: their *.py) plus LIB as warpfft/libwarpfft.so,
written directly (zip + METADATA + WHEEL + RECORD, from python/pyproject.toml): no setuptools,
pip or network involved, the same bytes everywhere. ``--plat auto`` (default) asks
``auditwheel show`` which manylinux tag the library is consistent with (the newest glibc symbol
version it references decides: built on glibc 2.36 it is manylinux_2_34) and tags the wheel
with it.

check: every module of those packages must be in the wheel; ``auditwheel show`` must report
the wheel consistent with its own manylinux tag and no external library but the manylinux
policy's (libc, libm, ld-linux); the library's DT_NEEDED must
name no CUDA library (libcuda and cuFFT are dlopen'ed at run time: the [cuda12]/[cuda13] extras
bring cuFFT); METADATA must declare those extras with NVIDIA's cuFFT wheels and no CUDA
dependency otherwise; the wheel must be at most --max-mb (default 40) MB.

No sdist: the package is ctypes over libwarpfft.so, whose build needs cargo, the CUDA toolkit
(nvcc, ptxas, fatbinary) and minutes of compilation per GPU architecture; an sdist would fail
to install (or silently build for no GPU) on nearly every machine. Build from the repository
instead (`just wheel`).
"""

import argparse
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
CUDA_LIB = re.compile(r"cuda|cufft|nvrtc|nvjitlink|cublas|cudart", re.I)
POLICY_LIBS = {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libpthread.so.0",
               "libdl.so.2", "librt.so.1", "libgcc_s.so.1"}


def _pyproject():
    import tomllib

    with open(os.path.join(PYDIR, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _project():
    return _pyproject()["project"]


def package_files():
    """(name in the wheel, path) of every module of the packages pyproject.toml lists
    ([tool.setuptools] packages: warpfft and its framework subpackages). A package directory
    under python/warpfft that the list leaves out is an error, not a silent omission."""
    packages = _pyproject()["tool"]["setuptools"]["packages"]
    found = sorted(os.path.relpath(d, PYDIR).replace(os.sep, ".")
                   for d, _, names in os.walk(os.path.join(PYDIR, "warpfft"))
                   if "__init__.py" in names)
    unlisted = sorted(set(found) - set(packages))
    if unlisted:
        raise SystemExit(f"python/pyproject.toml does not list the package(s) {unlisted}")
    files = []
    for pkg in packages:
        d = os.path.join(PYDIR, *pkg.split("."))
        for name in sorted(os.listdir(d)):
            if name.endswith(".py"):
                files.append((f"{pkg.replace('.', '/')}/{name}", os.path.join(d, name)))
    return files


def _metadata(p):
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    if "license" in p:
        lines.append(f"License: {p['license'].get('text', '')}")
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(PYDIR, p.get("readme", "README.md")), encoding="utf-8") as f:
        body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def auditwheel_show(path):
    r = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"auditwheel show failed (pip install auditwheel):\n{r.stderr[-2000:]}")
    return " ".join(r.stdout.split())


def consistent_tag(show):
    m = re.search(r'following platform tag: "([^"]+)"', show)
    if not m:
        raise SystemExit(f"auditwheel show names no platform tag:\n{show}")
    return m.group(1)


def build(lib, out_dir, plat="auto"):
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    files = []
    for arc, path in package_files():
        with open(path, "rb") as f:
            files.append((arc, f.read(), 0o644))
    with open(lib, "rb") as f:
        files.append(("warpfft/libwarpfft.so", f.read(), 0o755))
    os.makedirs(out_dir, exist_ok=True)

    def write(tag):
        path = os.path.join(out_dir, f"{dist}-py3-none-{tag}.whl")
        meta = [(f"{dist}.dist-info/METADATA", _metadata(p).encode()),
                (f"{dist}.dist-info/WHEEL",
                 ("Wheel-Version: 1.0\nGenerator: warpfft python/tools/build_wheel.py\n"
                  f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n").encode())]
        record = [_record_line(n, d) for n, d, _ in files] + [_record_line(n, d) for n, d in meta]
        record.append(f"{dist}.dist-info/RECORD,,")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            for name, data, mode in files + [(n, d, 0o644) for n, d in meta] + [
                    (f"{dist}.dist-info/RECORD", ("\n".join(record) + "\n").encode(), 0o644)]:
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
        return path

    if plat != "auto":
        return write(plat)
    probe = write("linux_x86_64")
    tag = consistent_tag(auditwheel_show(probe))
    os.remove(probe)
    return write(tag)


def check(path, max_mb=40.0):
    """Raises SystemExit with every problem found; returns a summary dict."""
    from _elf import dt_needed  # noqa: E402  (python/tools/_elf.py)

    problems = []
    name = os.path.basename(path)
    m = re.fullmatch(r"warpfft-[\d.]+-py3-none-(manylinux_2_(\d+)_x86_64)\.whl", name)
    if not m:
        problems.append(f"{name}: not a py3-none-manylinux_2_NN_x86_64 wheel")
    show = auditwheel_show(path)
    tag = consistent_tag(show)
    if m and tag != m.group(1):
        problems.append(f"auditwheel: consistent with {tag}, the wheel says {m.group(1)}")
    ext = re.search(r"external shared libraries are required by the wheel: (\{.*?\})", show)
    if ext and CUDA_LIB.search(ext.group(1)):
        problems.append(f"auditwheel lists a CUDA library as a dependency: {ext.group(1)}")
    with zipfile.ZipFile(path) as z:
        missing = sorted({arc for arc, _ in package_files()} - set(z.namelist()))
        if missing:
            problems.append(f"modules of the package missing from the wheel: {missing}")
        lib = z.read("warpfft/libwarpfft.so")
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA")))
        wheel = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL")))
    needed = dt_needed(io.BytesIO(lib))
    if [n for n in needed if CUDA_LIB.search(n)] or set(needed) - POLICY_LIBS:
        problems.append(f"libwarpfft.so DT_NEEDED {needed}: only {sorted(POLICY_LIBS)} allowed")
    if b"Root-Is-Purelib: false" not in wheel:
        problems.append("WHEEL: Root-Is-Purelib must be false (a platform wheel)")
    reqs = re.findall(r"^Requires-Dist: (.*)$", meta.decode(), re.M)
    plain = [r for r in reqs if "extra ==" not in r]
    if [r for r in plain if CUDA_LIB.search(r) or r.startswith("nvidia")]:
        problems.append(f"a CUDA package is a plain dependency: {plain}")
    for extra, pkg in (("cuda12", "nvidia-cufft-cu12"), ("cuda13", "nvidia-cufft")):
        if not any(r.startswith(pkg) and f'extra == "{extra}"' in r for r in reqs):
            problems.append(f"extra [{extra}] does not pull {pkg}: {reqs}")
    mb = os.path.getsize(path) / 1e6
    if mb > max_mb:
        problems.append(f"wheel is {mb:.1f} MB, more than {max_mb} MB")
    if problems:
        raise SystemExit("wheel check failed:\n  " + "\n  ".join(problems))
    return {"wheel": name, "tag": tag, "mb": round(mb, 2), "library_mb": round(len(lib) / 1e6, 2),
            "needed": needed, "requires": reqs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("lib")
    b.add_argument("-o", "--out", default="dist")
    b.add_argument("--plat", default="auto")
    c = sub.add_parser("check")
    c.add_argument("wheel")
    c.add_argument("--max-mb", type=float, default=40.0)
    a = ap.parse_args()
    if a.cmd == "build":
        print(build(a.lib, a.out, a.plat))
    else:
        for k, v in check(a.wheel, a.max_mb).items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
