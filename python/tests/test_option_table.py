"""The C library's option table (warpfft.h: warpfft_opt_describe, warpfft_opts_set) walked
through every interface: for every option, valid values (its ends and default) and invalid ones
(past its ends, past its field's type, not an integer) set through the C setter, through Plan
(its keyword, with the reference's meanings Plan declares: _args._reference_value), through the
JAX op (the option path up to the lowering: abstract evaluation, and the record the custom call
carries) and through the torch op (finufft_type1 up to the point of needing a GPU, and the
record op_options gives the op): the same value lands in the same field, or the same message
comes back. The Rust builder's walk is tests/no_gpu/options.rs. Each interface's policies (an
option it cannot honour but at its default, one it sets per call) are declared by it and
checked here to refuse with a message naming the keyword.

Also here: the drift fixes of the one option record (one Toeplitz upsampfac default, one tol
rule), and the layer check of the Python front-ends: they restate no option's default or bound
(test_front_ends_restate_no_option_default_or_bound), importing the table instead.
No GPU needed.
"""

import ast
import ctypes
import os

import numpy as np
import pytest
from _support import REPO, warpfft  # skips the module without a library

from warpfft import _args, _lib, _options

PKG = os.path.join(REPO, "python", "warpfft")
ROWS = list(_options.TABLE.values())


def _type_range(row):
    return {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
            "uint64": (0, 2**64 - 1)}.get(row.type, (None, None))


def _values(row):
    """(valid values, invalid values) of a row, as Python numbers."""
    if row.type == "float64":
        return ([row.min, row.max, row.default],
                [row.min * (1 - 1e-9), row.max * (1 + 1e-9), float("nan"), float("inf")])
    tmin, tmax = _type_range(row)
    if row.type == "uint64":
        return [0, tmax, 12345], [-1, tmax + 1, 1.5]
    bad = [tmax + 1, 1.5]
    bad += [row.min - 1] if row.min > tmin else []
    bad += [row.max + 1] if row.max < tmax else []
    return [row.min, row.max, row.default], bad


def _c_set(name, value):
    """The C setter on a default record: (status, message, the record)."""
    o = _lib.default_opts()
    st = _lib.lib.warpfft_opts_set(ctypes.byref(o), name.encode(),
                                   _options.text(name, value).encode())
    return st, (_lib.last_error() if st else ""), o


def _spelling(row):
    """Plan's (and the reference's) keyword for a row."""
    return row.aliases[0] if row.aliases else row.name


def test_the_table_as_python_reads_it():
    assert len(ROWS) >= 21
    names = [r.name for r in ROWS]
    assert len(set(names)) == len(names)
    fields = [r for r in ROWS if r.offset >= 0]
    assert [r.name for r in fields][:3] == ["modeord", "method", "device"]
    for r in ROWS:
        if r.type != "uint64":
            assert r.min <= r.default <= r.max or (r.zero_auto and r.default == 0), r
        assert r.no_effect == (r.offset < 0), r
    assert _options.value("method", "OD") == 3 and _options.value("modeord", "FFT") == 1
    assert {"gpu_method", "gpu_binsizex", "gpu_maxsubprobsize", "gpu_sort", "gpu_upsampfac",
            "check_points", "deterministic"} <= set(_options.SPELLINGS)
    assert warpfft.option_table() == ROWS


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_c_and_plan(row, fake):
    """Plan: its keyword for the row, values with the reference's meanings Plan declares."""
    keyword = _spelling(row)
    good, bad = _values(row)
    for value in good + bad:
        mapped = _args._reference_value(1, keyword, value)
        st, msg, want = _c_set(row.name, mapped)
        if st == 0:
            warpfft.Plan(1, (16, 16), eps=1e-3, **{keyword: value}).close()
            if row.offset >= 0:
                assert fake.last_record[row.name] == _options.get(want, row.name), value
        else:
            with pytest.raises(warpfft.InvalidArgumentError) as ei:
                warpfft.Plan(1, (16, 16), eps=1e-3, **{keyword: value})
            assert ei.value.message == msg, (keyword, value)
            assert msg.startswith(f"opts.{row.name} = ")


def _jax():
    pytest.importorskip("jax", reason="JAX is not installed")
    import jax
    from warpfft.jax import _common, options
    return jax, _common, options


def _jax_spelling(row, options):
    """warpfft.jax's name for a row in a 3D transform (its map: options.resolve), or None."""
    names = set(_options.SPELLINGS) | {"gpu_binsizex", "gpu_binsizey", "gpu_binsizez"}
    for name in sorted(names - options._CPU):
        if options._table_name(name, 3) == row.name:
            return name
    return None


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_jax_op(row):
    """The JAX op's option path: abstract evaluation (which checks the record it will lower)
    refuses a bad value with C's message; a good one makes the record the custom call carries,
    the value in the row's field as C's setter puts it. Options warpfft.jax does not take
    (check_points, points_hint: set per call; gpu_np) are no name of its; those it cannot
    honour take only the table's default."""
    jax, _common, options = _jax()
    import jax.numpy as jnp
    import warpfft.jax as wj
    name = _jax_spelling(row, options)
    assert name is not None, row.name
    if row.name in options._PER_CALL:
        with pytest.raises(ValueError, match="not an option warpfft.jax knows"):
            options.resolve({name: row.default}, 3)
        return
    x = jax.ShapeDtypeStruct((10,), jnp.float32)
    c = jax.ShapeDtypeStruct((10,), jnp.complex64)

    def call(value):
        return jax.eval_shape(lambda c, x: wj.nufft1((4, 4, 4), c, x, x, x, eps=1e-3,
                                                     opts={name: value}), c, x)

    good, bad = _values(row)
    for value in good + bad:
        st, msg, want = _c_set(row.name, value)
        if name in options._MUST_BE_DEFAULT:
            if value == row.default:
                call(value)
            else:
                with pytest.raises(ValueError, match=f"opts.{name}=.* is not supported"):
                    call(value)
            continue
        if name == "gpu_maxsubprobsize" and value == row.ref_default:
            continue  # the reference's default: chosen per plan (options.resolve)
        if st == 0:
            call(value)
            rec = _common.plan_record({name: value}, 1, 3)
            if row.offset >= 0:
                assert _options.get(rec, row.name) == _options.get(want, row.name), value
        else:
            with pytest.raises(ValueError) as ei:
                call(value)
            assert ei.value.message == msg, (name, value)


def test_jax_custom_call_carries_the_record():
    """The record of plan_record is what the lowered custom call carries (attribute opts,
    hex): a non-default value of every option warpfft.jax sets reaches it."""
    import re
    jax, _common, options = _jax()
    import jax.numpy as jnp
    import warpfft.jax as wj
    x = jax.ShapeDtypeStruct((10,), jnp.float32)
    c = jax.ShapeDtypeStruct((10,), jnp.complex64)
    opts = {"modeord": True, "gpu_method": 2, "gpu_upsampfac": 1.5, "gpu_maxsubprobsize": 77,
            "gpu_binsizex": 5, "gpu_binsizey": 6, "gpu_binsizez": 7, "deterministic": False,
            "gpu_kerevalmeth": 0, "gpu_maxbatchsize": 3, "gpu_device_id": 0, "gpu_stream": 9,
            "gpu_np": 4}
    exp = jax.export.export(
        jax.jit(lambda c, x: wj.nufft1((4, 4, 4), c, x, x, x, eps=1e-3, opts=opts)),
        platforms=["cuda"],
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(wj._ops.TARGET)])(c, x)
    found = re.findall(r'opts = "([0-9a-f]+)"', exp.mlir_module())
    assert found == [_options.to_hex(_common.plan_record(opts, 1, 3))]
    rec = _options.from_hex(found[0])
    assert (rec.modeord, rec.method, rec.upsampfac, rec.max_subprob, rec.stream) == \
        (1, 2, 1.5, 77, 9)
    assert [_options.get(rec, f"bin_size[{d}]") for d in range(3)] == [7, 6, 5]  # C order


def _torch():
    pytest.importorskip("torch", reason="PyTorch is not installed")
    import torch
    import warpfft.torch as wt
    return torch, wt


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_torch_op(row):
    """The torch op's option path: finufft_type1 refuses a bad value with C's message before it
    needs a GPU (CPU tensors: it then stops at the device check), and a good one gives the op
    the record (op_options) with the value as C's setter puts it. Per-call options and the ones
    it cannot honour are its declared policies."""
    torch, wt = _torch()
    spellings = row.aliases or (row.name,)
    p = torch.zeros((3, 10), dtype=torch.float32)
    v = torch.zeros((10,), dtype=torch.complex64)
    good, bad = _values(row)
    for spelling in spellings:
        if spelling in wt._CPU:
            continue  # FINUFFT's CPU option of that name: no effect here
        target = wt._table_name(spelling, 3)  # bins in the C plan's order
        for value in good + bad:
            st, msg, want = _c_set(target, value)
            # real_data: type 1 takes real values (docs/real.md)
            vals = v.real.contiguous() if wt._real_data({row.name: value}) else v
            if spelling == "gpu_stream" or row.name in wt._PER_CALL or \
                    spelling in wt._MUST_BE_DEFAULT:
                if spelling in wt._MUST_BE_DEFAULT and value == row.default:
                    continue
                with pytest.raises(ValueError, match=spelling):
                    wt.op_options(3, **{spelling: value})
                continue
            if st == 0:
                rec = _options.from_hex(wt.op_options(3, **{spelling: value}))
                if row.offset >= 0:
                    assert _options.get(rec, target) == _options.get(want, target), value
                with pytest.raises(ValueError, match="CUDA tensors"):
                    wt.finufft_type1(p, vals, (4, 4, 4), eps=1e-3, **{spelling: value})
            else:
                with pytest.raises(ValueError) as ei:
                    wt.finufft_type1(p, vals, (4, 4, 4), eps=1e-3, **{spelling: value})
                assert ei.value.message == msg, (spelling, value)


def test_the_docs_list_every_row():
    """docs/options.md has a row per option: its name, the reference's spellings, type and
    default, as the table (a new option's row is one of the six files it touches)."""
    with open(os.path.join(REPO, "docs", "options.md")) as f:
        lines = [line for line in f if line.startswith("| `")]
    rows = {}
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    assert list(rows) == [r.name for r in ROWS]
    for r in ROWS:
        name, spellings, kind, default = rows[r.name][:4]
        assert spellings == (", ".join(f"`{a}`" for a in r.aliases) or "—"), r.name
        assert kind == r.type and default.split()[0] == f"{r.default:g}", r.name


# ---- the drift fixes --------------------------------------------------------------------------


def _toeplitz_c_default():
    """kernel_upsampfac of a 256 x 256 f32 operator at tol 1e-5 with the C library's defaults
    (NULL options)."""
    buf = (ctypes.c_char * 4096)()
    info = ctypes.cast(buf, ctypes.POINTER(_lib.ToeplitzInfo))
    _lib.check(_lib.lib.warpfft_toeplitz_params(2, _lib.n_modes_array((256, 256)), 1, 1e-5,
                                                _lib.F32, None, 0, info))
    return info.contents.kernel_upsampfac


def test_one_toeplitz_upsampfac_default_everywhere():
    """The Toeplitz operator's upsampfac is the table's 0 (chosen per plan) by default in every
    interface, as C's; it was 0 from warpfft.Toeplitz but 2.0 from torch, JAX (and Rust), and
    torch turned an explicit 0 into 2.0. The case chosen tells 0 from 2.0."""
    want = _toeplitz_c_default()
    assert want != 2.0
    assert warpfft.toeplitz_params((256, 256), eps=1e-5)["kernel_upsampfac"] == want
    torch, wt = _torch()
    from warpfft.torch import _toeplitz as tt
    for kwargs in ({}, {"upsampfac": 0}, {"gpu_upsampfac": 0.0}):
        eps, _, opts = tt._parse(dict(kwargs, eps=1e-5), 2)
        assert tt._opts(0, 0, opts).upsampfac == 0.0, kwargs
        assert tt._info((256, 256), eps, _lib.F32, opts, "none").kernel_upsampfac == want
    eps, _, opts = tt._parse({"upsampfac": 1.5}, 2)
    assert tt._opts(0, 0, opts).upsampfac == 1.5
    pytest.importorskip("jax", reason="JAX is not installed")
    from warpfft.jax import _toeplitz as jt
    from warpfft.jax import options
    kw = options.resolve(None, 2)
    assert jt._c_opts(kw).upsampfac == 0.0
    assert _options.from_hex(jt._attrs((256, 256), 1e-5, kw)["opts"]).upsampfac == 0.0
    buf = (ctypes.c_char * 4096)()
    info = ctypes.cast(buf, ctypes.POINTER(_lib.ToeplitzInfo))
    _lib.check(_lib.lib.warpfft_toeplitz_params(2, _lib.n_modes_array((256, 256)), 1, 1e-5,
                                                _lib.F32, ctypes.byref(jt._c_opts(kw)), 0, info))
    assert info.contents.kernel_upsampfac == want


def test_one_tol_rule_everywhere():
    """A tol below the supported range runs at its end, with a warning, in every interface
    (the reference raises a tol below machine precision to it); the rule and the range are the
    C library's (warpfft_tol_effective), which plan creation applies too (plan_info.tol). NaN is
    refused everywhere with C's message."""
    with pytest.warns(UserWarning, match="using 1e-06"):
        assert warpfft.plan_params(1, (32,), eps=1e-9)["tol"] == 1e-6
    info, n = _lib.new_plan_info(), _lib.n_modes_array((32,))
    _lib.call("plan_params", 1, 1, n, 1, 1e-9, _lib.F32, None, ctypes.byref(info))
    assert info.tol == 1e-6
    with pytest.warns(UserWarning, match="using 0.1"):
        assert _args.effective_eps(0.7, _lib.F32) == 0.1
    for eps in (float("nan"),):
        with pytest.raises(warpfft.InvalidArgumentError, match="tol = nan"):
            warpfft.plan_params(1, (32,), eps=eps)


# ---- the layer check: front-ends import the table, never restate it --------------------------


def _row_of(spelling):
    return _options.TABLE.get(spelling) or _options.TABLE.get(_options.spelled(spelling) or "")


def _number(node):
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool))


def _named(node):
    """The option a node names: a variable, attribute or int()/float() of one; else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args and \
            node.func.id in ("int", "float", "bool"):
        node = node.args[0]
    name = node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else None
    return _row_of(name) if name else None


def _spans(row, values):
    """Whether literal `values` restate the row's range (its ends among them)."""
    return row.type != "uint64" and row.min in values and row.max in values


# Front-end defaults that differ from the table's, declared as such (checked to differ).
DECLARED_DEFAULTS = ("OWN_DEFAULTS", "PLAN_DEFAULTS")


def restatements(source, exempt=()):
    """Where Python source restates an option's default or bound: a numeric literal given as
    the default of an option's name (a parameter, a dataclass field, a dict entry, a
    ``.get``/``.pop`` fallback), compared with an option's value as a bound (``<``, ``>``, or
    ``in`` a set holding its ends), or passed as a range next to an option's name (as_int(name,
    v, lo, hi)). `exempt`: names whose literal defaults are another library's options (jax-finufft's
    CPU ones). Returns [(line, what)]."""
    found = []
    tree = ast.parse(source)
    declared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in
                                                DECLARED_DEFAULTS for t in node.targets):
            declared.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            args = node.posonlyargs + node.args
            for a, d in zip(args[len(args) - len(node.defaults):], node.defaults):
                if _row_of(a.arg) and _number(d):
                    found.append((d.lineno, f"parameter {a.arg}={d.value}"))
            for a, d in zip(node.kwonlyargs, node.kw_defaults):
                if d is not None and _row_of(a.arg) and _number(d):
                    found.append((d.lineno, f"parameter {a.arg}={d.value}"))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _row_of(node.target.id) and node.value is not None and _number(node.value) \
                    and node.target.id not in exempt:
                found.append((node.lineno, f"field {node.target.id} = {node.value.value}"))
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and \
                        _row_of(k.value) and _number(v):
                    row = _row_of(k.value)
                    if id(node) in declared:
                        if v.value == row.default:
                            found.append((v.lineno, f"declared default {k.value}: the table's"))
                    else:
                        found.append((v.lineno, f"{k.value!r}: {v.value}"))
        elif isinstance(node, ast.Call):
            f = node.func
            args = node.args
            if isinstance(f, ast.Attribute) and f.attr in ("get", "pop", "setdefault") and \
                    len(args) == 2 and isinstance(args[0], ast.Constant) and \
                    isinstance(args[0].value, str) and _row_of(args[0].value) and _number(args[1]):
                found.append((node.lineno, f".{f.attr}({args[0].value!r}, {args[1].value})"))
            if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) and \
                    _row_of(args[0].value) and sum(_number(a) for a in args[1:]) >= 2:
                found.append((node.lineno, f"a range given with {args[0].value!r}"))
        elif isinstance(node, ast.Compare):
            row = _named(node.left)
            for op, right in zip(node.ops, node.comparators):
                if row is None:
                    continue
                if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and _number(right):
                    found.append((node.lineno, f"{row.name} compared with {right.value}"))
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.Set,
                                                                            ast.List)):
                    vals = [e.value for e in right.elts if _number(e)]
                    if _spans(row, vals):
                        found.append((node.lineno, f"{row.name} in {tuple(vals)}"))
    return found


# The modules that take options (keywords, structs, dataclasses) and hand them to C: the
# front-ends the check covers. Elsewhere a `device` or `modeord` is another call's argument
# (memory on a device, the exact sums' mode order), not a plan option.
FRONT_ENDS = ("_args.py", "_compat.py", "_nufft_opts.py", "_simple.py", "_toeplitz.py",
              "_lib.py", "_plan.py", "cufinufft/_cufinufft.py", "jax/options.py",
              "jax/_common.py", "jax/_ops.py", "jax/_type3.py", "jax/_toeplitz.py",
              "jax/distributed.py", "torch/__init__.py", "torch/_ops.py", "torch/_toeplitz.py",
              "torch/distributed.py")


def _front_end_sources():
    for rel in FRONT_ENDS:
        with open(os.path.join(PKG, rel)) as f:
            yield rel, f.read()


def _jax_cpu_names():
    """jax/options.py's _CPU: jax-finufft's CPU-library options, some spelled like the table's
    (upsampfac, debug), whose jax-finufft defaults its Opts lists."""
    tree = ast.parse(open(os.path.join(PKG, "jax", "options.py")).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "_CPU":
            return {e.value for e in node.value.elts}
    raise AssertionError("jax/options.py has no _CPU")


def test_front_ends_restate_no_option_default_or_bound():
    """The layer check, for Python: no front-end (Plan, NufftOpts, warpfft.jax, warpfft.torch,
    the Toeplitz operators) writes an option's default or bound; they read the table
    (_options). A front-end default that differs from the table's on purpose is declared in an
    OWN_DEFAULTS/PLAN_DEFAULTS dict (and must differ)."""
    bad = []
    for rel, src in _front_end_sources():
        exempt = _jax_cpu_names() if rel == "jax/options.py" else ()
        bad += [f"python/warpfft/{rel}:{line}: {what}" for line, what in
                restatements(src, exempt)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("snippet", [
    "def make_opts(modeord=0, upsampfac=2.0): pass",
    "class Opts:\n    gpu_maxsubprobsize: int = 1024",
    "x = kw.pop('upsampfac', 2.0)",
    "x = kw.get('gpu_method', 0)",
    "d = {'gpu_sort': 1, 'debug': 0}",
    "OWN_DEFAULTS = {'modeord': 0}",
    "if modeord not in (0, 1): raise ValueError",
    "if int(method) not in (0, 1, 2, 3): raise ValueError",
    "if max_subprob < 0: raise ValueError",
    "v = as_int('gpu_method', value, 0, 4)",
])
def test_the_layer_check_finds_restatements(snippet):
    """The check above can fail: each form of restatement is found."""
    assert restatements(snippet), snippet


def test_the_layer_check_leaves_what_is_no_restatement():
    for snippet in ("OWN_DEFAULTS = {'modeord': 1}", "if method in (1, 2): pass",
                    "eps = kw.pop('eps', 1e-6)", "x = {'nthreads': 0}",
                    "m = _options.value('method', 'AUTO')"):
        assert not restatements(snippet), snippet
