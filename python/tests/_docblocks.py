"""The fenced code blocks of README.md, python/README.md and docs/**/*.md, with the marker that
says how the tests run each one. No warpfft import: python/tools/gpu_wheel_check.sh uses it on
the GPU machine.

A marker is an HTML comment (invisible on GitHub and in the Sphinx site) on the last non-blank
line before a block's opening fence:

- none: the block runs after the page's earlier unmarked blocks, in one namespace per page
  (so a page can build an example step by step): under the fake C library without a GPU
  (python/tests/_fake.py computes exact sums), for real with one;
- ``<!-- example: NAME -->``: the block runs alone, as above; NAME is unique across the pages
  and other tests and scripts fetch the block by it (``example(repo, NAME)``);
- ``<!-- example: NAME gpu -->``: the block runs alone and only on a GPU (the JAX and PyTorch
  ops have no fake); without one it is only compiled and the test skips visibly;
- ``<!-- not run: REASON -->``: only compiled (Python) or not checked (other languages);
  REASON is required.

Python blocks are run by python/tests/test_docs.py; C blocks must be a file under examples/c/
byte for byte (examples/c/run.sh builds and runs them) unless marked not run; Rust blocks are
doctests (src/lib.rs includes each page that has one under cfg(doctest)). An
included file (``:::{literalinclude} PATH``: a colon fence, which rustdoc, reading the pages
that have Rust blocks, takes for text; a backtick fence it would parse as a code attribute and
warn) must be an example under examples/ that the tests already run.
"""

import glob
import os
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^( *)(`{3,}|~{3,}|:{3,}(?=\{(?:literalinclude|code-block|code)\}))\s*(.*?)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(example|not run):\s*(.*?)\s*-->\s*$")
_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")


_CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "literalinclude")


@dataclass
class Block:
    path: str  # relative to the repository, e.g. "docs/python.md"
    line: int  # 1-based line of the opening fence
    lang: str  # "python", "c", "rust", "sh", ... ("" when none)
    directive: str  # "" for a plain fence, else the MyST directive ("code-block", "literalinclude")
    arg: str  # the directive's argument (literalinclude: the file, relative to the page)
    options: dict  # the directive's ``:name: value`` options
    code: str
    marker: str = ""  # "", "example" or "not run"
    name: str = ""  # example name
    gpu: bool = False  # example that needs a GPU
    reason: str = ""  # why a block is not run

    @property
    def where(self):
        return f"{self.path}:{self.line}"


def pages(repo):
    """README.md, python/README.md (the wheel's description) and every Markdown page under
    docs/, relative to the repository."""
    docs = sorted(os.path.relpath(p, repo)
                  for p in glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))
    return ["README.md", "python/README.md"] + docs


def _options(lines):
    """A directive body's leading ``:name: value`` lines (MyST syntax) and the rest."""
    opts, i = {}, 0
    while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
        key, _, value = lines[i][1:].partition(":")
        opts[key] = value.strip()
        i += 1
    if i < len(lines) and not lines[i].strip():
        i += 1
    return opts, lines[i:]


def _closes(line, fence):
    s = line.strip()
    return s.startswith(fence) and not s.strip(fence[0])


def blocks(repo, path):
    """The fenced code blocks of one page, in order (also those nested in other directives,
    such as a note; a directive that is not code, such as a toctree, is not a block)."""
    with open(os.path.join(repo, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, open_dirs, i = [], [], 0
    while i < len(lines):
        if open_dirs and _closes(lines[i], open_dirs[-1]):
            open_dirs.pop()
            i += 1
            continue
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        d = _DIRECTIVE.match(info)
        directive, arg = (d.group(1), d.group(2)) if d else ("", "")
        if directive and directive not in _CODE_DIRECTIVES:
            open_dirs.append(fence)  # its body is Markdown: scan it
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not _closes(lines[i], fence):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(' '))):])  # the fence's indent
            i += 1
        i += 1  # the closing fence
        opts = {}
        if directive:
            opts, body = _options(body)
        if directive == "literalinclude":
            lang = opts.get("language", os.path.splitext(arg)[1].lstrip("."))
        else:
            lang = (arg if directive else info).split()[0] if (arg if directive else info) else ""
        b = Block(path, start + 1, lang, directive, arg, opts, "\n".join(body) + "\n")
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        mk = _MARKER.match(lines[prev]) if prev >= 0 else None
        if mk and mk.group(1) == "example":
            words = mk.group(2).split()
            assert words and words[1:] in ([], ["gpu"]), f"{b.where}: bad marker {lines[prev]!r}"
            b.marker, b.name, b.gpu = "example", words[0], words[1:] == ["gpu"]
        elif mk:
            b.marker, b.reason = "not run", mk.group(2)
        out.append(b)
    return out


def all_blocks(repo):
    return [b for p in pages(repo) for b in blocks(repo, p)]


def example(repo, name):
    """The code of the block marked ``<!-- example: NAME ... -->`` in README.md or docs/."""
    found = [b for b in all_blocks(repo) if b.marker == "example" and b.name == name]
    assert len(found) == 1, f"{len(found)} blocks named {name!r} (want exactly one)"
    return found[0].code
