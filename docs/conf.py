# Sphinx configuration of warpfft's documentation site: Markdown pages (MyST-Parser) built with
# `just docs` (warnings are errors, so a broken internal link, a page missing from every toctree
# or an unknown cross-reference fails the build). External links are not checked: CI has no
# network (`sphinx-build -b linkcheck docs target/docs/linkcheck` checks them where there is).
# The Rust API is documented by `cargo doc`, not here.

import os
import re

_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(_root, "Cargo.toml"), encoding="utf-8") as _f:
    release = re.search(r'^version = "(.*)"', _f.read(), re.M).group(1)

project = "warpfft"
author = "the warpfft developers"
copyright = "the warpfft developers"
version = release

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# MyST: `#` anchors for headings down to ###, so [text](page.md#a-heading) is checked too;
# ::: fences for directives (pages that rustdoc also reads for their Rust doctests must use
# them: it would take a ```{directive} fence for a code block with attributes, and warn).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Every warning is an error (`-W` in the justfile); nitpicky (`-n`) makes an unresolved
# cross-reference one too. The built-in theme: no extra package to install.
nitpicky = True
html_theme = "alabaster"
html_title = f"warpfft {release}"
html_theme_options = {"description": "GPU non-uniform FFTs", "fixed_sidebar": True}
pygments_style = "sphinx"
