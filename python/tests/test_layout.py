"""The ctypes structures match warpfft.h (its parts under warpfft/) exactly: sizeof and every offsetof, as the C compiler
sees them; warpfft_opts is read through the option table instead (each row's offset, checked
against the compiler's here), so Python declares none of its fields."""

import ctypes
import os
import shutil

import pytest
from _support import REPO, run
from warpfft import _lib, _options

STRUCTS = {"warpfft_plan_info": _lib.PlanInfo, "warpfft_toeplitz_info": _lib.ToeplitzInfo,
           "warpfft_opt_desc": _lib.OptDesc, "warpfft_pool_info": _lib.PoolInfo}


def _c_layout(tmp_path):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler (cc) to compare the struct layout with")
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "warpfft.h"',
             "int main(void) {"]
    for cname, py in STRUCTS.items():
        lines.append(f'printf("{cname} sizeof %zu\\n", sizeof({cname}));')
        for field, _ in py._fields_:
            lines.append(f'printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    lines.append('printf("warpfft_opts sizeof %zu\\n", sizeof(warpfft_opts));')
    for name, row in _options.TABLE.items():
        if row.offset >= 0:  # "bin_size[1]" is a C expression offsetof takes
            lines.append(f'printf("warpfft_opts {name} %zu\\n", offsetof(warpfft_opts, {name}));')
    lines += ["return 0;", "}"]
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines) + "\n")
    r = run([cc, "-Wall", "-I", os.path.join(REPO, "c_core", "include"), str(src), "-o", str(exe)])
    assert r.returncode == 0, r.stderr
    r = run([str(exe)])
    assert r.returncode == 0
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in r.stdout.splitlines()}


def test_struct_layout_matches_c(tmp_path):
    c = _c_layout(tmp_path)
    for cname, py in STRUCTS.items():
        assert ctypes.sizeof(py) == c[(cname, "sizeof")], cname
        for field, _ in py._fields_:
            assert getattr(py, field).offset == c[(cname, field)], f"{cname}.{field}"
    # the option table's offsets are the compiler's, and its rows cover every field
    rows = {n: r for n, r in _options.TABLE.items() if r.offset >= 0}
    for name, row in rows.items():
        assert row.offset == c[("warpfft_opts", name)], name
    assert _lib.default_opts().struct_size == c[("warpfft_opts", "sizeof")]


def _members(cname):
    """The members warpfft.h (its parts, warpfft/*.h) declares for struct `cname`, as (name,
    array length or None)."""
    import glob
    import re

    text = ""
    for h in sorted(glob.glob(os.path.join(REPO, "c_core", "include", "warpfft", "*.h"))):
        with open(h) as f:
            text += re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    body = re.search(r"typedef struct " + cname + r"\s*\{(.*?)\}\s*" + cname + ";", text, re.S)
    assert body, cname
    out = []
    for decl in body.group(1).split(";"):
        decl = decl.strip()
        if not decl:
            continue
        # "int32_t type, dim, precision, method" / "int64_t n_modes[3]" / "const char *name"
        first, *rest = decl.split(",")
        for d in [first.split()[-1]] + [r.strip() for r in rest]:
            n = re.search(r"\[(\d+)\]", d)
            out.append((re.sub(r"\[.*\]", "", d).lstrip("*"), int(n.group(1)) if n else None))
    return out


def test_struct_fields_cover_header():
    """Every member declared in the header has a ctypes field (and no extra ones); every field
    of warpfft_opts but struct_size a row of the option table (an array one per element)."""
    for cname, py in STRUCTS.items():
        assert [n for n, _ in _members(cname)] == [f for f, _ in py._fields_], cname
    fields = [name for n, k in _members("warpfft_opts") if n != "struct_size"
              for name in ([n] if k is None else [f"{n}[{i}]" for i in range(k)])]
    assert fields == [n for n, r in _options.TABLE.items() if r.offset >= 0]


def test_opts_default_sets_struct_size():
    """The record has room for any version of the struct; warpfft_opts_default writes its own
    size and every row's default."""
    opts = _lib.default_opts()
    assert opts.struct_size < ctypes.sizeof(_lib.Opts)
    for name, row in _options.TABLE.items():
        assert _options.get(opts, name) == row.default, name


def _guarded_info():
    """A PlanInfo inside a larger buffer whose tail is a canary: a C library whose
    warpfft_plan_info is larger than the ctypes one would overwrite it."""
    size = ctypes.sizeof(_lib.PlanInfo)
    buf = ctypes.create_string_buffer(b"\xa5" * (size + 256), size + 256)
    return buf, _lib.PlanInfo.from_buffer(buf), size


def test_plan_params_writes_within_plan_info():
    buf, info, size = _guarded_info()
    opts = _lib.default_opts()
    _lib.call("plan_params", 1, 2, _lib.n_modes_array((32, 16)), 1, 1e-6, _lib.PRECISION_F32,
              ctypes.byref(opts), ctypes.byref(info))
    assert buf.raw[size:] == b"\xa5" * 256
    assert info.n_modes[0] == 32 and info.n_modes[1] == 16 and info.width > 0
    assert info.n_targets == -1 and info.inner_width == 0 and tuple(info.gamma) == (0, 0, 0)
    assert info.kernel == 1 and info.predicted_ms > 0 and 1.25 <= info.upsampfac <= 3


def test_plan_params3_writes_within_plan_info():
    buf, info, size = _guarded_info()
    opts = _lib.default_opts()
    lo = (ctypes.c_double * 3)(-1.0, -2.0, 0.0)
    hi = (ctypes.c_double * 3)(1.0, 2.0, 0.0)
    slo = (ctypes.c_double * 3)(-10.0, -5.0, 0.0)
    shi = (ctypes.c_double * 3)(10.0, 5.0, 0.0)
    _lib.call("plan_params3", 2, 1, 1e-6, _lib.PRECISION_F64, ctypes.byref(opts), lo, hi, slo,
              shi, ctypes.byref(info))
    assert buf.raw[size:] == b"\xa5" * 256
    assert info.type == 3 and info.dim == 2
    assert info.n_points == -1 and info.n_targets == -1
    assert info.inner_width > 0 and info.inner_beta > 0
    assert tuple(info.x_center[:2]) == (0.0, 0.0) and tuple(info.x_half[:2]) == (1.0, 2.0)
    assert tuple(info.s_center[:2]) == (0.0, 0.0) and tuple(info.s_half[:2]) == (10.0, 5.0)
    assert all(g > 0 for g in info.gamma[:2])
    assert info.kernel == 1 and info.upsampfac == 2.0  # type 3: sigma 2 for upsampfac 0


# The folders whose every module docs/design.md names with its job (issue 41), and what is not
# a module there (data, build glue, generated files).
MODULE_FOLDERS = ("c_core/src", "kernels", "python/warpfft", "src", "crates")
NOT_MODULES = (".md", ".toml", ".gitignore", ".txt", ".json", ".sh", ".in", ".py.typed")


def _modules():
    r = run(["git", "-C", REPO, "ls-files", *MODULE_FOLDERS])
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    out = []
    for path in r.stdout.split():
        if path.endswith(NOT_MODULES) or "/test/" in path or "/tests/" in path:
            continue  # tests are named by their own folders' READMEs and docs/testing.md
        out.append(path)
    return out


def test_design_names_every_module():
    """docs/design.md names every source file of the library (by its path below its folder,
    e.g. `api/pool.c`, `jax/_toeplitz.py`, `fatbuild/src/plan.rs`) with its job."""
    with open(os.path.join(REPO, "docs", "design.md")) as f:
        text = f.read()
    missing = []
    for path in _modules():
        parts = path.split("/")
        # the shortest tail of the path that the page may use: folder/file below the top folder
        top = 2 if path.startswith(("c_core/src/", "python/warpfft/")) else 1
        tail = "/".join(parts[top:])
        if f"`{tail}`" not in text and f"`{path}`" not in text:
            missing.append(path)
    assert not missing, f"docs/design.md does not name: {missing}"
