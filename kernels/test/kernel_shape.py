"""The spreading kernel of kernels/kernel_shape.h for the Python tests and tools, read from the
header so that no Python file restates it. The header marks its one-expression functions
WF_KERNEL_EXPR (wf_kernel_beta, wf_kernel_def, wf_kernel_edge, wf_kernel_kink); each body is
`return EXPR;` with EXPR valid C and valid Python, so it is parsed here (only arithmetic, the
function's parameters, the header's WF_KERNEL_* numbers and exp, sinh, sqrt are accepted) and
evaluated with numpy: the same operations in the same order as the C host, bit for bit.

    beta(w, sigma)     the shape parameter of width w at upsampling factor sigma
    phi(z, w, beta)    the kernel at offsets z (fine-grid points): 0 where |z| >= w/2
    edge(beta), kink(w, beta)

Imported by kernels/test/gpu_pipeline.py, python/tests/_kernel_sum.py (by path) and the
scripts under scripts/ (kernels/test on sys.path).
"""
import ast
import os
import re

import numpy as np

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel_shape.h")
_FUNCS = {"exp": np.exp, "sinh": np.sinh, "sqrt": np.sqrt}
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load, ast.Constant,
          ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd)


def _read(path=HEADER):
    """(numbers, functions) of the header: WF_KERNEL_* -> float, name -> (params, code)."""
    with open(path) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    numbers = {m[1]: float(m[2]) for m in
               re.finditer(r"^#define\s+(WF_KERNEL_\w+)\s+([-+.0-9eE]+)\s*$", text, re.M)}
    funcs = {}
    for m in re.finditer(r"WF_KERNEL_EXPR\s+double\s+(\w+)\s*\(([^)]*)\)\s*\{\s*return\s+([^;]+);"
                         r"\s*\}", text):
        params = [p.split()[-1] for p in m[2].split(",")]
        tree = ast.parse(" ".join(m[3].split()), mode="eval")
        bad = sorted({type(n).__name__ for n in ast.walk(tree) if not isinstance(n, _NODES)})
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        unknown = names - set(params) - set(numbers) - set(_FUNCS)
        if bad or unknown:
            raise ValueError(f"{path}: {m[1]} is not a plain expression (uses {bad or unknown})")
        funcs[m[1]] = (params, compile(tree, f"{path}:{m[1]}", "eval"))
    for want in ("wf_kernel_beta", "wf_kernel_def", "wf_kernel_edge", "wf_kernel_kink"):
        if want not in funcs:
            raise ValueError(f"{path}: no WF_KERNEL_EXPR function {want}")
    return numbers, funcs


_NUMBERS, _DEFS = _read()


def _call(name, *args):
    params, code = _DEFS[name]
    env = dict(_NUMBERS, **_FUNCS, **dict(zip(params, args)))
    return eval(code, {"__builtins__": {}}, env)  # noqa: S307 -- checked above: arithmetic only


def beta(width, sigma):
    """wf_kernel_beta: the kernel's shape parameter for width w and upsampling factor sigma."""
    return _call("wf_kernel_beta", width, sigma)


def edge(beta_):
    """wf_kernel_edge: the sinh form's value at the edge, which the kernel subtracts."""
    return _call("wf_kernel_edge", beta_)


def kink(width, beta_):
    """wf_kernel_kink: the kernel's slope just inside -w/2."""
    return _call("wf_kernel_kink", width, beta_)


def phi(z, w, beta_):
    """The kernel at offsets z (fine-grid points) for width w: wf_kernel_def at a = z / (w/2),
    0 where |a| >= 1."""
    a = 2 * np.asarray(z, np.float64) / w
    ok = np.abs(a) < 1
    return np.where(ok, _call("wf_kernel_def", np.where(ok, a, 0.0), beta_), 0.0)

