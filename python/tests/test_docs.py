"""Every code block that README.md and docs/**/*.md show is checked or run (python/tests/
_docblocks.py says how a block is marked): Python blocks run under the fake C library without a
GPU (exact sums, so their own asserts hold) and for real with one; C blocks are example files the
tests build; Rust blocks are doctests; an included file is an example the tests run.

Without a library (WARPFFT_LIBRARY unset and nothing built) the running tests skip; the static
checks here need none."""

import json
import os
import re
import subprocess
import sys

import pytest
from _docblocks import all_blocks, pages

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BLOCKS = all_blocks(REPO)
PY = [b for b in BLOCKS if b.lang == "python" and b.directive != "literalinclude"]


def _ids(blocks):
    return [b.where for b in blocks]


# ---- static checks: every block is accounted for ---------------------------------------------


def test_every_page_is_scanned_and_has_blocks():
    assert "docs/index.md" in pages(REPO)
    assert len(PY) >= 10, "the collector found too few Python blocks: is the parser broken?"


@pytest.mark.parametrize("block", PY, ids=_ids(PY))
def test_python_block_compiles(block):
    compile(block.code, block.where, "exec")
    if block.marker == "not run":
        assert len(block.reason) > 5, f"{block.where}: say why the block is not run"


def test_example_names_are_unique():
    names = [b.name for b in BLOCKS if b.marker == "example"]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_c_blocks_are_example_files():
    """A C block is a file under examples/c/ byte for byte (examples/c/run.sh builds and runs
    each), or marked not run."""
    files = {}
    for name in os.listdir(os.path.join(REPO, "examples", "c")):
        if name.endswith(".c"):
            with open(os.path.join(REPO, "examples", "c", name)) as f:
                files[f.read().rstrip()] = name
    with open(os.path.join(REPO, "examples", "c", "run.sh")) as f:
        run_sh = f.read()
    for b in BLOCKS:
        if b.lang != "c" or b.directive == "literalinclude" or b.marker == "not run":
            continue
        name = files.get(b.code.rstrip())
        assert name, f"{b.where}: a C block that is no file under examples/c/ (or mark it not run)"
        assert name[:-2] in run_sh, f"{b.where}: examples/c/run.sh does not build {name}"


def test_rust_blocks_are_doctests():
    """Each page with a Rust block is included under cfg(doctest) by src/lib.rs, so rustdoc
    compiles and runs its blocks (`cargo test --doc`). rustdoc would run a block marked not run
    as well, so such a block must be ```text instead; and it would warn about a directive in a
    backtick fence, so those pages use ::: fences for directives."""
    with open(os.path.join(REPO, "src", "lib.rs")) as f:
        lib = f.read()
    included = set(re.findall(r'include_str!\("\.\./([^"]+\.md)"\)', lib))
    for b in BLOCKS:
        if b.lang != "rust" or b.directive == "literalinclude":
            continue
        assert b.marker != "not run", f"{b.where}: rustdoc runs every rust block: use ```text"
        assert b.directive == "", f"{b.where}: rustdoc reads only plain ```rust fences"
        assert b.path in included, f"{b.where}: src/lib.rs does not include {b.path} as doctests"
    for path in included:  # rustdoc parses ```{name} as a code attribute and warns
        with open(os.path.join(REPO, path)) as f:
            bad = [i + 1 for i, line in enumerate(f) if re.match(r"\s*(`{3,}|~{3,})\s*\{", line)]
        assert not bad, f"{path}:{bad}: use a ::: fence for directives in a page rustdoc reads"


def test_included_files_are_tested_examples():
    """literalinclude shows files the tests run: examples/python/*.py (test_examples.py runs
    each) and examples/c/*.c (examples/c/run.sh builds and runs each)."""
    with open(os.path.join(REPO, "examples", "c", "run.sh")) as f:
        run_sh = f.read()
    for b in BLOCKS:
        if b.directive != "literalinclude":
            continue
        path = os.path.relpath(os.path.normpath(os.path.join(REPO, os.path.dirname(b.path),
                                                             b.arg)), REPO)
        assert os.path.isfile(os.path.join(REPO, path)), f"{b.where}: no file {path}"
        ok = (re.fullmatch(r"examples/python/\w+\.py", path)
              or (re.fullmatch(r"examples/c/\w+\.c", path)
                  and os.path.basename(path)[:-2] in run_sh))
        assert ok, f"{b.where}: {path} is not an example the tests run"


# ---- running the Python blocks ---------------------------------------------------------------

# One page's blocks in a shared namespace, in a fresh interpreter (the real library).
_RUNNER = """
import json, sys
ns = {"__name__": "__main__"}
for where, code in json.load(sys.stdin):
    print(f"== {where}", flush=True)
    try:
        exec(compile(code, where, "exec"), ns)
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
"""

_CHAINS = {}
for _b in PY:
    if _b.marker == "":
        _CHAINS.setdefault(_b.path, []).append(_b)
_EXAMPLES = [b for b in PY if b.marker == "example"]


def _support():
    """_support (which skips the test when no library can be loaded), imported on use."""
    import _support as s
    return s


def _run_real(blocks):
    s = _support()
    env = s.clean_env(WARPFFT_LIBRARY=s.LIBRARY, PYTHONPATH=os.path.join(REPO, "python"),
                      XLA_PYTHON_CLIENT_PREALLOCATE="false")
    r = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(
        [(b.where, b.code) for b in blocks]), env=env, capture_output=True, text=True,
        timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]


def _run_fake(blocks, request):
    """In this process, with the fake library and driver of _fake.py installed (the `fake`
    fixture): plans compute exact sums on the host, so no GPU is needed."""
    request.getfixturevalue("fake")
    saved = sys.modules.get("cufinufft")  # install_as_cufinufft() puts one there
    ns = {"__name__": "__main__"}
    try:
        for b in blocks:
            try:
                exec(compile(b.code, b.where, "exec"), ns)
            except SystemExit as e:
                assert e.code in (None, 0), f"{b.where}: exit {e.code}"
    finally:
        if saved is None:
            sys.modules.pop("cufinufft", None)
        else:
            sys.modules["cufinufft"] = saved


def _needs_framework(code):
    """Skips unless the framework a GPU block imports is installed and sees a CUDA device."""
    if re.search(r"^\s*(import|from)\s.*\bjax\b", code, re.M):
        jax = pytest.importorskip("jax", reason="jax not installed")
        try:
            n = len(jax.devices("cuda"))
        except RuntimeError:
            n = 0
        if not n:
            pytest.skip("no GPU: JAX sees no CUDA device")
    if re.search(r"^\s*(import|from)\s.*\btorch\b", code, re.M):
        torch = pytest.importorskip("torch", reason="torch not installed")
        if not torch.cuda.is_available():
            pytest.skip("no GPU: torch has no CUDA")


@pytest.mark.parametrize("path", sorted(_CHAINS))
def test_page_python_blocks_run(path, request):
    """A page's unmarked Python blocks, in order, in one namespace."""
    if _support().gpu_status() is None:
        _run_real(_CHAINS[path])
    else:
        _run_fake(_CHAINS[path], request)


@pytest.mark.parametrize("block", _EXAMPLES, ids=[b.name for b in _EXAMPLES])
def test_named_python_example_runs(block, request):
    reason = _support().gpu_status()
    if block.gpu:
        if reason is not None:
            pytest.skip(f"no GPU: {reason} ({block.where} needs one; it compiles)")
        _needs_framework(block.code)
        _run_real([block])
    elif reason is None:
        _run_real([block])
    else:
        _run_fake([block], request)
