#!/usr/bin/env python3
"""make_seeds.py — writes the seed corpora of the fuzz targets (c_core/fuzz/corpus/<target>/
seed-*): inputs that reach deep into each target (whole plan lifecycles, valid XLA call frames
of every transform type, valid and damaged cache entries), encoded as each target's reader
takes its choices (see the pick_* functions of fuzz_abi.c and fuzz_xla_frame.c). Run it
after changing a reader; inputs the fuzzers found (crash regressions) live beside the seeds
under other names and are kept.

    python3 c_core/fuzz/make_seeds.py
"""
import hashlib
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(bytes(data))


# ---- fuzz_kcache: entry files (and "MAXSIZE:" strings) ----

def entry(payload, kind=1, magic=b"WFKCACHE", fmt=1, size=None, digest=None):
    size = len(payload) if size is None else size
    digest = hashlib.sha256(payload).digest() if digest is None else digest
    return (magic + struct.pack("<IIQ", fmt, kind, size) + digest + bytes(8) + payload)


def kcache_seeds():
    cubin = bytes((7 * i + 3) % 256 for i in range(200))
    ptx = b".version 8.0\n.target sm_90\n.address_size 64\n"
    write("fuzz_kcache", "cubin", entry(cubin))
    write("fuzz_kcache", "ptx", entry(ptx, kind=2))
    write("fuzz_kcache", "flipped", entry(cubin)[:100] + b"\x00" + entry(cubin)[101:])
    write("fuzz_kcache", "truncated", entry(cubin)[:-10])
    write("fuzz_kcache", "header-only", entry(cubin)[:64])
    write("fuzz_kcache", "magic", entry(cubin, magic=b"ELFCACHE"))
    write("fuzz_kcache", "format", entry(cubin, fmt=2))
    write("fuzz_kcache", "kind", entry(cubin, kind=9))
    write("fuzz_kcache", "size", entry(cubin, size=1 << 40))
    write("fuzz_kcache", "empty", b"")
    for name, s in (("minus-one", b" -1"), ("999", b"999"), ("1000", b"1000"),
                    ("overflow", b"18446744073709551616"), ("plus", b"+5000")):
        write("fuzz_kcache", "maxsize-" + name, b"MAXSIZE:" + s)


# ---- fuzz_xla: call frames (fuzz_xla.c: LLVMFuzzerTestOneInput, fuzz_xla_frame.c: make_frame)

DT = {"c64": 0, "c128": 1, "f32": 2, "f64": 3, "s32": 4, "s64": 5, "u32": 6, "u64": 7}
NAMES = ["nufft_type", "iflag", "eps", "n1", "n2", "n3", "opts", "dim", "weights", "adjoint"]
DOUBLES = [1e-5, 1e-6, 1e-9, 1e-1, 2.0, 1.25, 0.0, -1.0, 1e300]


def xla_int(v):  # pick_int: a byte < 160 is v % 10; 168 is edge[0] = -1
    return [v] if 0 <= v < 10 else [168] if v == -1 else [250] + list(struct.pack("<q", v))


def xla_buffer(dtype, dims):
    out = [1, DT[dtype], len(dims)]  # not "other" (1 % 16 != 0), dtype, rank
    for d in dims:
        assert 0 <= d <= 8
        out.append(d)
    if 0 in dims:
        out.append(1)  # data present
    return out


# the options record (make_text): warpfft_opts's fields in order, each a pick_int or pick_double
OPTS_FIELDS = ["modeord", "method", "device", "upsampfac", "stream", "bin1", "bin2", "bin3",
               "max_subprob", "spreadinterponly", "check_points", "points_hint", "deterministic"]


def xla_opts(real_data=0, **fields):
    """A string attribute's choices: a record of this header's size (sizes[0]) whose struct_size
    says so, the fields given (others 0), lowercase hex; real_data 1 sets that field."""
    out = [0, 0, 1]  # a record (0 < 200), sizes[0], struct_size as the size (1 % 8 != 0)
    for f in OPTS_FIELDS:
        v = fields.get(f, 0)
        out += [DOUBLES.index(v)] if f == "upsampfac" else xla_int(v)
    # the last choice: lowercase (1 % 4 != 0); real_data 1 when 1 / 4 % 4 == 1 (5)
    return out + [5 if real_data else 1]


def xla_frame(args, ret, attrs, fail=0, flags=0):
    out = [fail, len(args), 1]  # fail choice, arguments, one result (1 % 8 != 0)
    for dtype, dims in args + [ret]:
        out += xla_buffer(dtype, dims)
    out.append(len(attrs))
    for name, dtype, value in attrs:
        if name == "opts":  # a string (kind 48: 48 % 16 == 0, 1 + 48 / 16 % 4 == 4)
            out += [NAMES.index(name), DT["s64"], 48, 0] + value
            continue
        out += [NAMES.index(name), DT[dtype], 1]  # scalar (1 % 16 != 0)
        out += [DOUBLES.index(value)] if dtype in ("f32", "f64") else xla_int(value)
    out.append(flags)
    return out


def xla_attrs(type_, n, eps=1e-5, modeord=1, real_data=0):
    a = [("nufft_type", "s64", type_), ("iflag", "s64", -1), ("eps", "f64", eps),
         ("n1", "s64", n[0]), ("n2", "s64", n[1]), ("n3", "s64", n[2]),
         ("opts", None, xla_opts(modeord=modeord, method=2, bin1=4, bin2=5, bin3=6,
                                 max_subprob=7, upsampfac=1.25, real_data=real_data))]
    return a


def xla_seeds():
    # type 1, 2D f32: strengths (G, T, M), points (G, M) x 2, modes (G, T, N2, N1)
    G, T, M = 3, 2, 5
    write("fuzz_xla", "type1-2d-f32",
          xla_frame([("c64", [G, T, M]), ("f32", [G, M]), ("f32", [G, M])],
                    ("c64", [G, T, 6, 8]), xla_attrs(1, (8, 6, 1))))
    # type 1, 1D f64, shared points (Gp = 1)
    write("fuzz_xla", "type1-1d-f64-shared",
          xla_frame([("c128", [2, 1, 7]), ("f64", [1, 7])], ("c128", [2, 1, 8]),
                    xla_attrs(1, (8, 1, 1))))
    # type 2, 3D f64: modes (G, T, N3, N2, N1) -> strengths (G, T, M)
    write("fuzz_xla", "type2-3d-f64",
          xla_frame([("c128", [2, 3, 2, 3, 4]), ("f64", [1, 4]), ("f64", [1, 4]),
                     ("f64", [1, 4])], ("c128", [2, 3, 4]), xla_attrs(2, (4, 3, 2))))
    # type 2 with M = 0
    write("fuzz_xla", "type2-2d-f32-empty",
          xla_frame([("c64", [2, 1, 3, 5]), ("f32", [2, 0]), ("f32", [2, 0])],
                    ("c64", [2, 1, 0]), xla_attrs(2, (5, 3, 1))))
    # type 3, 2D f32: source (G, T, M), sources (Gp, M) x 2, targets (Gp, K) x 2, (G, T, K)
    # real_data (docs/real.md): real strengths, the half modes (n1 = 8 or 7: 5 or 4 columns)
    write("fuzz_xla", "type1-2d-f32-real",
          xla_frame([("f32", [G, T, M]), ("f32", [G, M]), ("f32", [G, M])],
                    ("c64", [G, T, 6, 5]), xla_attrs(1, (8, 6, 1), real_data=1)))
    write("fuzz_xla", "type2-1d-f64-real",
          xla_frame([("c128", [2, 3, 4]), ("f64", [1, 7])], ("f64", [2, 3, 7]),
                    xla_attrs(2, (7, 1, 1), real_data=1)))
    write("fuzz_xla", "type3-2d-f32",
          xla_frame([("c64", [3, 2, 5]), ("f32", [3, 5]), ("f32", [3, 5]), ("f32", [3, 4]),
                     ("f32", [3, 4])], ("c64", [3, 2, 4]), xla_attrs(3, (1, 1, 1), modeord=0)))
    write("fuzz_xla", "type3-3d-f64-shared",
          xla_frame([("c128", [2, 1, 3]), ("f64", [1, 3]), ("f64", [1, 3]), ("f64", [1, 3]),
                     ("f64", [1, 6]), ("f64", [1, 6]), ("f64", [1, 6])], ("c128", [2, 1, 6]),
                    xla_attrs(3, (1, 1, 1), modeord=0)))
    # failures: plan_create, setpts, execute, the stream; metadata; no Stream_Get
    base = ([("c64", [3, 2, 5]), ("f32", [3, 5]), ("f32", [3, 5])], ("c64", [3, 2, 6, 8]),
            xla_attrs(1, (8, 6, 1)))
    for fail, name in ((1 + 4 * 15, "create-fails"), (2 + 4 * 6, "setpts-fails"),
                       (3 + 4 * 16, "execute-fails"), (128, "stream-fails")):
        write("fuzz_xla", name, xla_frame(*base, fail=fail))
    write("fuzz_xla", "metadata", xla_frame(*base, flags=4))
    write("fuzz_xla", "no-stream-get", xla_frame(*base, flags=1))


# ---- fuzz_xla_toeplitz: the Toeplitz handlers' frames (its first byte: bit 0 apply, then the
# failing call: (byte // 2) % 6 = 1 params, 2 spectrum, 3 create, 4 apply, 5 destroy)

def toep_attrs(dim, n, weights=None, adjoint=None, eps=1e-5):
    a = [("dim", "s64", dim), ("n1", "s64", n[0]), ("n2", "s64", n[1]), ("n3", "s64", n[2]),
         ("eps", "f64", eps), ("iflag", "s32", -1), ("opts", None, xla_opts(modeord=0))]
    if weights is not None:
        a.append(("weights", "s64", weights))
    if adjoint is not None:
        a.append(("adjoint", "s32", adjoint))
    return a


def xla_toeplitz_seeds():
    t = "fuzz_xla_toeplitz"
    # the spectrum: 2D, real weights; n (3, 2) -> grid (6, 4), Python order (4, 6)
    M = 5
    write(t, "spectrum-2d-real",
          xla_frame([("f32", [M]), ("f32", [M]), ("f32", [M])], ("f32", [4, 6]),
                    toep_attrs(2, (3, 2, 1), weights=1)))
    # 1D f64, complex weights: n 4 -> grid 8, a complex spectrum
    write(t, "spectrum-1d-complex",
          xla_frame([("f64", [7]), ("c128", [7])], ("c128", [8]),
                    toep_attrs(1, (4, 1, 1), weights=2, eps=1e-9)))
    # 3D, no weights: n (2, 2, 1) -> grid (4, 4, 2), Python order (2, 4, 4)
    write(t, "spectrum-3d-none",
          xla_frame([("f32", [3])] * 3, ("f32", [2, 4, 4]), toep_attrs(3, (2, 2, 1))))
    # the application: spectrum (4, 6) real, modes (T, 2, 3) -> the same
    apply2 = ([("f32", [4, 6]), ("c64", [2, 2, 3])], ("c64", [2, 2, 3]),
              toep_attrs(2, (3, 2, 1), adjoint=1))
    write(t, "apply-2d", xla_frame(*apply2, fail=1))
    write(t, "apply-1d-complex",
          xla_frame([("c128", [8]), ("c128", [3, 4])], ("c128", [3, 4]),
                    toep_attrs(1, (4, 1, 1), eps=1e-9), fail=1))
    write(t, "apply-empty-batch",
          xla_frame([("f32", [4, 6]), ("c64", [0, 2, 3])], ("c64", [0, 2, 3]),
                    toep_attrs(2, (3, 2, 1)), fail=1))
    for code, name in ((1, "params"), (3, "create"), (4, "apply"), (5, "destroy")):
        write(t, "apply-2d-%s-fails" % name, xla_frame(*apply2, fail=1 + 2 * code + 12 * 6))
    write(t, "spectrum-fails",
          xla_frame([("f32", [M]), ("f32", [M]), ("f32", [M])], ("f32", [4, 6]),
                    toep_attrs(2, (3, 2, 1), weights=1), fail=2 * 2 + 12 * 15))
    write(t, "apply-clear", xla_frame(*apply2, fail=0xff))
# ---- fuzz_opts: settings (fuzz_opts.c: a row's index or a name, then a value) ----

def opts_seeds():
    # rows by index (even: the name, odd: the first alias), values at the ends (+-2)
    write("fuzz_opts", "ends", [0, 2, 1, 3, 2, 0, 3, 1, 5, 4, 9, 2, 12, 1])
    write("fuzz_opts", "text", [1, 200, 3] + list(b"1.5") + [240, 8] + list(b"gpu_sort")
          + [200, 2] + list(b"-7") + [7, 200, 4] + list(b"nan!"))


# ---- fuzz_abi: call sequences (fuzz_abi.c: the pick_* readers and call_*) ----

TOLS = [1e-1, 1e-2, 1e-3, 1e-5, 1e-6, 1e-7, 1e-9, 1e-12, 1e-13]


def small(v, lo):  # pick_small: a byte < 224 is lo + b % (hi - lo + 1)
    return [v - lo]


def cnt(v):  # pick_int: a byte < 192 is b % 40
    assert 0 <= v < 40
    return [v]


def tol(t):
    return [TOLS.index(t)]


def opts(kind="null", **fields):
    if kind == "null":
        return [0]
    order = ["modeord", "method", "device", "upsampfac", "stream", "bins", "sio", "check"]
    # field 6 sets three options: spreadinterponly (sio), deterministic (det), real_data (real)
    bit6 = {f: fields.pop(f) for f in ("det", "real") if f in fields}
    if bit6 and "sio" not in fields:
        fields["sio"] = 0
    mask = sum(1 << order.index(f) for f in fields)
    out = [1 if kind == "fields" else 5, mask]
    for f in order:
        if f not in fields:
            continue
        v = fields[f]
        if f == "sio":
            out += [v, bit6.get("det", 0), bit6.get("real", 0)]
        elif f == "upsampfac":
            out += [12 if v == 2.0 else 13]
        elif f == "stream":
            out += [1 if v else 0]
        elif f == "bins":
            out += [v, v, v, 0]  # bin_size x 3, max_subprob
        else:
            out += [v]
    if kind == "old-size":
        out += [0]  # offsetof(spreadinterponly)
    return out


def create(slot, type_, dim, prec, n, ntransf, t, o=None, nulls=0):
    return ([3, slot] + small(type_, 1) + small(dim, 1) + small(prec, 1) + cnt(n[0]) + cnt(n[1])
            + cnt(n[2]) + cnt(ntransf) + cnt(1) + tol(t) + (o or opts()) + [nulls])


def setpts(slot, M, nulls=0):
    return [5, slot, 1] + cnt(M) + [nulls]  # slot, own precision (1 % 8 != 0), M, NULLs


def setpts3(slot, M, K, nulls=0, fill=None):
    """fill: (scale index in the doubles of pick_double, shift) for the coordinates of every
    dimension not in nulls (sources, then targets); None: zeros."""
    if fill is None:
        return [6, slot, 1] + cnt(M) + cnt(K) + [nulls, nulls]
    n_arrays = 3 - bin(nulls & 7).count("1")
    one = [nulls | 0x80] + [fill[0], fill[1] & 0xFF] * n_arrays
    return [6, slot, 1] + cnt(M) + cnt(K) + one + one


def execute(slot, nulls=0):
    return [7, slot, 1, nulls]


def destroy(slot):
    return [11, slot]


def params(type_, dim, prec, n, ntransf, t, o=None, three=False, bounds=None):
    out = [2 if three else 0] + small(dim, 1) + small(prec, 1) + cnt(n[0]) + cnt(n[1]) + \
        cnt(n[2]) + cnt(ntransf) + tol(t) + (o or opts())
    if three:
        for v in bounds:  # 12 values, each a signed byte
            out += [1, v & 0xFF]
        out += [0]
    else:
        out += small(type_, 1) + [0]
    return out


def abi_seeds():
    write("fuzz_abi", "type1-2d-f32",
          create(0, 1, 2, 1, (16, 12, 1), 2, 1e-5) + setpts(0, 30) + execute(0) + execute(0)
          + destroy(0))
    write("fuzz_abi", "type2-3d-f64-sm",
          create(1, 2, 3, 2, (8, 8, 8), 1, 1e-9, opts("fields", method=2, bins=4))
          + setpts(1, 20) + execute(1) + setpts(1, 0) + execute(1) + destroy(1))
    write("fuzz_abi", "type1-1d-checked",
          create(0, 1, 1, 1, (32, 1, 1), 1, 1e-3, opts("fields", check=1, upsampfac=1.25))
          + setpts(0, 10) + [9, 0, 2] + execute(0) + destroy(0))
    write("fuzz_abi", "type3-1d",
          create(2, 3, 1, 1, (1, 1, 1), 1, 1e-5) + setpts3(2, 12, 7, nulls=6, fill=(12, 3))
          + execute(2) + setpts3(2, 5, 9, nulls=6, fill=(0, -2)) + execute(2) + destroy(2))
    write("fuzz_abi", "type3-2d-f64",
          create(1, 3, 2, 2, (1, 1, 1), 2, 1e-9) + setpts3(1, 20, 11, nulls=4, fill=(13, 1))
          + execute(1) + [9, 1, 0] + destroy(1))
    write("fuzz_abi", "spreadinterponly",
          create(0, 1, 2, 1, (16, 16, 1), 1, 1e-5, opts("fields", sio=1)) + setpts(0, 8)
          + execute(0) + create(1, 3, 2, 1, (1, 1, 1), 1, 1e-5, opts("fields", sio=1)))
    write("fuzz_abi", "real-data",
          create(0, 1, 2, 1, (16, 12, 1), 2, 1e-5, opts("fields", real=1)) + setpts(0, 30)
          + execute(0) + create(1, 2, 3, 2, (9, 8, 6), 1, 1e-9, opts("fields", real=1, method=2))
          + setpts(1, 20) + execute(1) + destroy(0) + destroy(1)
          + create(2, 3, 2, 1, (1, 1, 1), 1, 1e-5, opts("fields", real=1))
          + params(1, 2, 1, (30, 20, 1), 1, 1e-6, opts("fields", sio=1, real=1)))
    write("fuzz_abi", "params-old-opts",
          params(1, 2, 1, (30, 20, 1), 1, 1e-6, opts("old-size", sio=1))
          + params(2, 3, 2, (9, 9, 9), 3, 1e-12, opts("fields", modeord=1, stream=1)))
    write("fuzz_abi", "params3",
          params(3, 2, 2, (1, 1, 1), 1, 1e-9, three=True,
                 bounds=[-3, -1, 0, 3, 1, 0, -20, -5, 0, 20, 5, 0])
          + params(3, 1, 1, (1, 1, 1), 1, 1e-5, opts("fields", sio=1), three=True,
                   bounds=[-1] * 3 + [1] * 3 + [-9] * 3 + [9] * 3))
    write("fuzz_abi", "wrong-calls",
          create(0, 3, 2, 1, (1, 1, 1), 1, 1e-5) + setpts(0, 5) + execute(0) + setpts3(0, 5, 0)
          + create(1, 1, 1, 2, (8, 1, 1), 1, 1e-9) + setpts3(1, 3, 3) + execute(1)
          + setpts(1, 4, nulls=1) + [9, 1, 1] + destroy(0) + destroy(1))
    write("fuzz_abi", "direct",
          [10, 0] + small(2, 1) + small(1, 1) + small(1, 1) + cnt(6) + small(4, 1) + small(4, 1)
          + small(1, 1) + small(3, 0) + [0, 5, 15, 0, 0, 0, 0, 0] + [0, 0, 0])


# The calls fuzz_abi reads from an op byte >= 192 (op % 8): batched points, the pool, the
# Toeplitz operator, stream capture.
POOLED = 24  # pick_plan's byte for pooled slot 0 (b & 8, b % 3 = 0, b % 8 != 7)


def coords_zero():
    return [0]  # three arrays of zeros


def coords_fill(fill, nulls=0):
    n_arrays = 3 - bin(nulls & 7).count("1")
    return [nulls | 0x80] + [fill[0], fill[1] & 0xFF] * n_arrays


def setpts_sets(plan_byte, n_sets, M, nulls=0):
    return [192, plan_byte, 1] + small(n_sets, 1) + cnt(M) + [nulls]


def setpts3_sets(plan_byte, n_sets, M, K, fill):
    return [193, plan_byte, 1] + small(n_sets, 1) + cnt(M) + cnt(K) + coords_fill(fill, 6) \
        + coords_fill(fill, 6)


def pool_acquire(slot, type_, dim, prec, n, ntransf, t, o=None, nulls=0):
    return ([194, slot * 8] + small(type_, 1) + small(dim, 1) + small(prec, 1) + cnt(n[0])
            + cnt(n[1]) + cnt(n[2]) + cnt(ntransf) + cnt(1) + tol(t) + (o or opts()) + [nulls])


def pool_release(slot, flags):
    return [194, slot * 8 + 2, flags]


def pool_clear():
    return [194, 3]


def pool_limits(plans):  # bytes left as they are
    return [194, 4] + small(plans, -1) + [0]


def pool_info(size_byte=0):  # 0: sizeof; 1 + 4k: k bytes; 2 + 4k: larger
    return [194, 5, size_byte]


def points_id(plan_byte):
    return [194, 6, plan_byte, 1]


def toep_args(dim, n, M, weights, prec=1, t=1e-5, o=None, fill=None):
    out = small(dim, 1)
    for v in (tuple(n) + (1, 1, 1))[:3]:  # three mode counts, whatever dim
        out += [1] + small(v, 1)
    out += cnt(1) + tol(t) + small(prec, 1) + (o or opts()) + cnt(M)
    out += coords_fill(fill) if fill else coords_zero()
    return out + small(weights, 0) + [1]


def toep_create(slot, dim, n, M, weights, ntransf=1, **kw):
    return [196, slot * 8] + toep_args(dim, n, M, weights, **kw) + [1] + small(ntransf, 1) + [0]


def toep_pooled(slot, dim, n, ntransf=1, **kw):  # a zero operator of the pool
    return [196, slot * 8 + 1] + toep_args(dim, n, 0, 0, **kw) + [1] + small(ntransf, 1) + [0]


def toep_release(slot, flags):  # a pooled slot's drop reads its release flags
    return [196, slot * 8 + 7, flags]


def toep_apply(slot, adjoint=0, in_place=False):
    return [196, slot * 8 + 2, slot, 1, 4 if in_place else 0, adjoint]


def toep_apply_spectrum(slot, real, adjoint=0):
    return [196, slot * 8 + 3, slot, 1, 0, adjoint, real]


def toep_spectrum(dim, n, M, weights, **kw):
    return [196, 4] + toep_args(dim, n, M, weights, **kw) + [0]


def toep_info(slot):
    return [196, 6, slot, 1] + [196, 6, slot, 0, 1]  # get_info, then workspace_bytes


def toep_destroy(slot):
    return [196, slot * 8 + 7]


def one_call(type_, dim, prec, n, ntransf, t, M, K=0, o=None, nulls=0):
    """warpfft_nufft1/2/3: plan_create's arguments, M (and K), coordinates of zeros."""
    return ([199] + small(type_, 1) + small(dim, 1) + small(prec, 1) + cnt(n[0]) + cnt(n[1])
            + cnt(n[2]) + cnt(ntransf) + cnt(1) + tol(t) + (o or opts()) + [nulls] + cnt(M)
            + (cnt(K) if type_ == 3 else []) + [0, 0])


def capture(what):  # begin, end, drop graph 0, late destructors
    return [198, {"begin": 0, "end": 1, "drop": 2, "late": 3}[what]]


def abi_seeds_new_calls():
    write("fuzz_abi", "sets",
          create(0, 1, 2, 1, (16, 12, 1), 4, 1e-5) + setpts_sets(0, 2, 10) + execute(0)
          + setpts_sets(0, 4, 6) + execute(0) + setpts_sets(0, 3, 5)
          + create(1, 3, 1, 1, (1, 1, 1), 2, 1e-5) + setpts3_sets(1, 2, 6, 5, (12, 3))
          + execute(1) + destroy(0) + destroy(1))
    stream = opts("fields", stream=1)
    write("fuzz_abi", "pool",
          pool_acquire(0, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + setpts(POOLED, 20)
          + execute(POOLED) + points_id(POOLED) + pool_release(0, 1)
          + pool_acquire(0, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + points_id(POOLED)
          + execute(POOLED) + [11, POOLED] + pool_release(0, 2) + pool_info()
          + pool_acquire(1, 2, 1, 2, (20, 1, 1), 2, 1e-9) + pool_limits(1) + pool_release(1, 0)
          + pool_acquire(0, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + pool_release(0, 5)
          + pool_release(0, 3) + pool_clear() + pool_info(1 + 4 * 8) + pool_info(2 + 4 * 3)
          + pool_acquire(2, 3, 2, 1, (1, 1, 1), 1, 1e-5) + pool_clear() + pool_release(2, 0))
    write("fuzz_abi", "capture-pool",
          pool_acquire(0, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + setpts(POOLED, 20)
          + execute(POOLED) + pool_release(0, 1) + capture("begin")
          + pool_acquire(0, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + setpts(POOLED, 20)
          + execute(POOLED) + pool_release(0, 1)
          + pool_acquire(1, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream)  # no idle plan: refused
          + pool_clear() + pool_info() + capture("end") + capture("late") + capture("drop")
          + capture("late") + pool_info() + pool_clear())
    write("fuzz_abi", "capture-own",
          create(0, 2, 2, 1, (16, 12, 1), 1, 1e-5, stream) + setpts(0, 20) + capture("begin")
          + setpts(0, 20) + execute(0) + setpts(0, 39) + [9, 0, 2] + destroy(0)
          + create(1, 1, 2, 1, (16, 12, 1), 1, 1e-5, stream) + capture("end") + destroy(0)
          + capture("drop") + destroy(0))
    write("fuzz_abi", "toeplitz",
          toep_create(0, 2, (12, 7), 20, 1) + toep_apply(0) + toep_apply(0, 1, in_place=True)
          + toep_apply_spectrum(0, 1) + toep_apply_spectrum(0, 0, 1) + toep_info(0)
          + toep_spectrum(2, (12, 7), 20, 1)
          + [196, 5] + small(2, 1) + small(1, 1) + cnt(12) + cnt(7) + cnt(1) + cnt(2)
          + tol(1e-5) + opts() + small(2, 0) + [0]
          + toep_create(1, 1, (19, 1, 1), 15, 2, ntransf=2, prec=2, t=1e-9, fill=(12, 0))
          + toep_apply(1) + toep_destroy(0) + toep_destroy(1))
    write("fuzz_abi", "toeplitz-pool",
          toep_pooled(0, 2, (12, 7), ntransf=2, o=stream) + toep_apply_spectrum(0, 1)
          + toep_apply_spectrum(0, 0, 1) + toep_info(0) + toep_release(0, 0)
          + toep_pooled(0, 2, (12, 7), ntransf=2, o=stream) + toep_apply(0) + toep_release(0, 4)
          + toep_release(0, 0) + capture("begin")
          + toep_pooled(1, 2, (12, 7), ntransf=2, o=stream) + toep_apply_spectrum(1, 1)
          + toep_release(1, 0) + toep_pooled(0, 1, (9, 1, 1), o=stream)  # none idle: refused
          + capture("end") + pool_info() + pool_clear() + capture("drop") + capture("late")
          + pool_info() + toep_pooled(0, 1, (9, 1, 1)) + toep_release(0, 2) + pool_clear())
    write("fuzz_abi", "one-call",
          one_call(1, 2, 1, (16, 12, 1), 2, 1e-5, 20) + one_call(1, 2, 1, (16, 12, 1), 2, 1e-5, 20)
          + one_call(2, 1, 2, (20, 1, 1), 1, 1e-9, 30) + one_call(3, 2, 1, (1, 1, 1), 2, 1e-5, 9, 7)
          + one_call(1, 2, 1, (16, 12, 1), 1, 1e-5, 20, stream, nulls=4) + pool_info()
          + capture("begin") + one_call(1, 2, 1, (16, 12, 1), 1, 1e-5, 20, stream)
          + capture("end") + capture("drop") + pool_clear())
    write("fuzz_abi", "toeplitz-zero",
          toep_create(0, 3, (6, 5, 4), 0, 0, ntransf=2) + toep_apply(0)
          + toep_apply_spectrum(0, 1) + toep_info(0) + toep_destroy(0))


if __name__ == "__main__":
    kcache_seeds()
    xla_seeds()
    xla_toeplitz_seeds()
    abi_seeds()
    abi_seeds_new_calls()
    opts_seeds()
