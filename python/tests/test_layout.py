"""The ctypes structures match warpfft.h exactly: sizeof and every offsetof, as the C compiler
sees them."""

import ctypes
import os
import shutil

import pytest
from _support import REPO, run
from warpfft import _lib

STRUCTS = {"warpfft_opts": _lib.Opts, "warpfft_plan_info": _lib.PlanInfo}


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


def test_struct_fields_cover_header():
    """Every member declared in the header has a ctypes field (and no extra ones)."""
    import re

    with open(os.path.join(REPO, "c_core", "include", "warpfft.h")) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    for cname, py in STRUCTS.items():
        body = re.search(r"typedef struct " + cname + r"\s*\{(.*?)\}\s*" + cname + ";", text, re.S)
        assert body, cname
        names = []
        for decl in body.group(1).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            # "int32_t type, dim, precision, method" / "int64_t n_modes[3]"
            first, *rest = decl.split(",")
            names.append(re.sub(r"\[.*\]", "", first.split()[-1]))
            names += [re.sub(r"\[.*\]", "", r.strip()) for r in rest]
        assert names == [f for f, _ in py._fields_], cname


def test_opts_default_sets_struct_size():
    opts = _lib.default_opts()
    assert opts.struct_size == ctypes.sizeof(_lib.Opts)
    assert opts.upsampfac == 2.0 and opts.modeord == 0 and opts.method == 0 and opts.stream == 0
