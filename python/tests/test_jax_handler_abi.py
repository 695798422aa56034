"""The XLA FFI handler in libwarpfft.so (warpfft_xla_nufft) called through a call frame built
here with ctypes, as XLA's FFI C ABI lays it out: the registration handshake, stages other than
execute, and every bad-input branch answer through XLA_FFI_Error_Create with a message, never
a crash. Needs neither JAX nor a GPU (without a driver the valid call ends in plan creation's
NO_DRIVER error, after the stream request)."""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_void_p)

import pytest
from _support import gpu_status
from warpfft import _lib as native


class ExtBase(Structure):
    pass


ExtBase._fields_ = [("struct_size", c_size_t), ("type", c_int), ("next", POINTER(ExtBase))]


class ApiVersion(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("major_version", c_int), ("minor_version", c_int)]


class ErrorCreateArgs(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("message", c_char_p), ("errc", c_int)]


class StreamGetArgs(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("ctx", c_void_p), ("stream", c_void_p)]


ERROR_CREATE = CFUNCTYPE(c_void_p, POINTER(ErrorCreateArgs))
STREAM_GET = CFUNCTYPE(c_void_p, POINTER(StreamGetArgs))


class Api(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("api_version", ApiVersion), ("internal_api", c_void_p),
                ("error_create", ERROR_CREATE), ("error_get_message", c_void_p),
                ("error_destroy", c_void_p), ("handler_register", c_void_p),
                ("stream_get", STREAM_GET)]


class Buffer(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("dtype", c_int), ("data", c_void_p), ("rank", c_int64),
                ("dims", POINTER(c_int64))]


class ByteSpan(Structure):
    _fields_ = [("ptr", c_char_p), ("len", c_size_t)]


class Scalar(Structure):
    _fields_ = [("dtype", c_int), ("value", c_void_p)]


class List(Structure):  # XLA_FFI_Args and XLA_FFI_Rets
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("size", c_int64), ("types", POINTER(c_int)), ("items", POINTER(c_void_p))]


class Attrs(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("size", c_int64), ("types", POINTER(c_int)),
                ("names", POINTER(POINTER(ByteSpan))), ("attrs", POINTER(c_void_p))]


class CallFrame(Structure):
    _fields_ = [("struct_size", c_size_t), ("extension_start", POINTER(ExtBase)),
                ("api", POINTER(Api)), ("ctx", c_void_p), ("stage", c_int), ("args", List),
                ("rets", List), ("attrs", Attrs), ("future", c_void_p)]


class Metadata(Structure):
    _fields_ = [("struct_size", c_size_t), ("api_version", ApiVersion), ("traits", c_uint32)]


class MetadataExt(Structure):
    _fields_ = [("base", ExtBase), ("metadata", POINTER(Metadata))]


F32, F64, C64, C128, S32, S64 = 11, 12, 15, 18, 4, 5

handler = native.lib.warpfft_xla_nufft
handler.restype = c_void_p
handler.argtypes = [POINTER(CallFrame)]


class Harness:
    """Builds frames; records the errors the handler creates."""

    def __init__(self):
        self.errors = []
        self.stream_requests = 0
        self.keep = []

        def error_create(args):
            self.errors.append((args.contents.errc, args.contents.message.decode()))
            return 0x1234  # an opaque non-null XLA_FFI_Error*

        def stream_get(args):
            self.stream_requests += 1
            args.contents.stream = None  # the legacy default stream
            return None

        self.api = Api(struct_size=ctypes.sizeof(Api), error_create=ERROR_CREATE(error_create),
                       stream_get=STREAM_GET(stream_get))

    def buffer(self, dtype, dims):
        d = (c_int64 * max(len(dims), 1))(*dims)
        b = Buffer(struct_size=ctypes.sizeof(Buffer), dtype=dtype, data=0x10000, rank=len(dims),
                   dims=d)
        self.keep += [d, b]
        return ctypes.cast(ctypes.pointer(b), c_void_p)

    def frame(self, args, rets, attrs, stage=3):
        def lst(items):
            types = (c_int * max(len(items), 1))(*([1] * len(items)))
            ptrs = (c_void_p * max(len(items), 1))(*items)
            self.keep += [types, ptrs]
            return List(struct_size=ctypes.sizeof(List), size=len(items), types=types,
                        items=ptrs)

        names, values, types = [], [], []
        for name, (dtype, value) in sorted(attrs.items()):
            ctype = {S32: c_int32, S64: c_int64, F64: c_double}[dtype]
            v = ctype(value)
            span = ByteSpan(name.encode(), len(name))
            sc = Scalar(dtype, ctypes.cast(ctypes.pointer(v), c_void_p))
            self.keep += [v, span, sc]
            names.append(ctypes.pointer(span))
            values.append(ctypes.cast(ctypes.pointer(sc), c_void_p))
            types.append(3)
        n = len(names)
        at = Attrs(struct_size=ctypes.sizeof(Attrs), size=n,
                   types=(c_int * max(n, 1))(*types),
                   names=(POINTER(ByteSpan) * max(n, 1))(*names),
                   attrs=(c_void_p * max(n, 1))(*values))
        f = CallFrame(struct_size=ctypes.sizeof(CallFrame), api=ctypes.pointer(self.api),
                      stage=stage, args=lst(args), rets=lst(rets), attrs=at)
        self.keep += [at, f]
        return f


def _attrs(**over):
    a = dict(nufft_type=(S32, 1), iflag=(S32, 1), eps=(F64, 1e-6), n1=(S64, 8), n2=(S64, 6),
             n3=(S64, 1), modeord=(S32, 0), method=(S32, 0), upsampfac=(F64, 2.0),
             max_subprob=(S32, 0), bin1=(S32, 0), bin2=(S32, 0), bin3=(S32, 0))
    a.update(over)
    return {k: v for k, v in a.items() if v is not None}


def _type1_2d(h, G=2, T=3, M=50, src=C64, pt=F32, out_dims=None, **attrs):
    args = [h.buffer(src, [G, T, M]), h.buffer(pt, [G, M]), h.buffer(pt, [G, M])]
    rets = [h.buffer(src, out_dims or [G, T, 6, 8])]  # (G, T, N2, N1): C dimension 1 last
    return h.frame(args, rets, _attrs(**attrs))


def test_registration_handshake_reports_api_version_and_no_graph_capture():
    h = Harness()
    md = Metadata(struct_size=ctypes.sizeof(Metadata), traits=0xFFFF)
    ext = MetadataExt(base=ExtBase(ctypes.sizeof(MetadataExt), 1, None),
                      metadata=ctypes.pointer(md))
    f = _type1_2d(h)
    f.extension_start = ctypes.cast(ctypes.pointer(ext), POINTER(ExtBase))
    assert handler(ctypes.byref(f)) is None
    assert (md.api_version.major_version, md.api_version.minor_version) == (0, 1)
    assert md.traits == 0  # setpts waits on the host: not CUDA-graph capturable
    assert h.errors == [] and h.stream_requests == 0


@pytest.mark.parametrize("stage", [0, 1, 2])
def test_stages_other_than_execute_do_nothing(stage):
    h = Harness()
    f = _type1_2d(h)
    f.stage = stage
    assert handler(ctypes.byref(f)) is None
    assert h.errors == [] and h.stream_requests == 0


def _type3_2d(h, G=2, T=3, M=50, K=40, src=C64, pt=F32, out_dims=None, tgt_dims=None, Gp=None,
              nargs=None):
    Gp = G if Gp is None else Gp
    args = [h.buffer(src, [G, T, M]), h.buffer(pt, [Gp, M]), h.buffer(pt, [Gp, M]),
            h.buffer(pt, tgt_dims or [Gp, K]), h.buffer(pt, [Gp, K])][:nargs]
    rets = [h.buffer(src, out_dims or [G, T, K])]
    return h.frame(args, rets, _attrs(nufft_type=(S32, 3), n1=(S64, 1), n2=(S64, 1)))


TYPE3_BAD = [
    (lambda h: _type3_2d(h, nargs=4), "type-3 custom call takes"),
    (lambda h: _type3_2d(h, pt=F64), "float32"),
    (lambda h: _type3_2d(h, src=C128), "float64"),
    (lambda h: _type3_2d(h, tgt_dims=[2, 39]), "target coordinate array"),
    (lambda h: _type3_2d(h, out_dims=[2, 3, 41]), "result has shape"),
    (lambda h: _type3_2d(h, Gp=3), "point sets"),
    (lambda h: _type3_2d(h, out_dims=[2, 3, 40, 1]), "rank 3"),
]


@pytest.mark.parametrize("build,match", TYPE3_BAD)
def test_type3_bad_calls_return_an_error_with_a_message(build, match):
    h = Harness()
    err = handler(ctypes.byref(build(h)))
    assert err == 0x1234
    assert len(h.errors) == 1 and match in h.errors[0][1], h.errors
    assert h.errors[0][0] == 3 and h.stream_requests == 0


def test_type3_valid_call_asks_for_the_stream_then_creates_a_plan():
    if gpu_status() is None:  # the fake device pointers must never reach a real GPU
        pytest.skip("a GPU is present: fake buffers cannot be run there; test_jax.py covers it")
    h = Harness()
    before = native.lib.warpfft_xla_plans_created()
    err = handler(ctypes.byref(_type3_2d(h, Gp=1)))
    assert h.stream_requests == 1
    assert err == 0x1234 and "warpfft_plan_create" in h.errors[0][1], h.errors
    assert "WARPFFT_ERR_NO_DRIVER" in h.errors[0][1] and h.errors[0][0] == 14
    assert native.lib.warpfft_xla_plans_created() == before
    h = Harness()  # no targets: nothing to do, no stream asked for
    assert handler(ctypes.byref(_type3_2d(h, K=0))) is None
    assert h.errors == [] and h.stream_requests == 0


def _not_a_buffer(frame, i):
    frame.args.types[i] = 0  # an argument XLA would pass as something other than a buffer
    return frame


@pytest.mark.parametrize("build,match", [
    (lambda h: _type1_2d(h, nufft_type=None), "attributes"),
    (lambda h: _not_a_buffer(_type1_2d(h), 0), "must be buffers"),
    (lambda h: _not_a_buffer(_type1_2d(h), 1), "must be buffers"),  # was a NULL dereference
    (lambda h: _not_a_buffer(_type1_2d(h), 2), "must be buffers"),
    (lambda h: _not_a_buffer(_type3_2d(h), 3), "must be buffers"),
    (lambda h: _type1_2d(h, nufft_type=(S32, 4)), "not 1, 2 or 3"),
    (lambda h: _type1_2d(h, src=C128), "float64"),
    (lambda h: _type1_2d(h, pt=F64), "float32"),
    (lambda h: _type1_2d(h, out_dims=[2, 3, 8, 6]), "shapes do not match"),
    (lambda h: _type1_2d(h, n1=(S64, 0)), "mode count"),
    (lambda h: h.frame([h.buffer(C64, [2, 3, 50])], [h.buffer(C64, [2, 3, 8])], _attrs()),
     "1..3 point arrays"),
    (lambda h: h.frame([h.buffer(C64, [2, 3, 50]), h.buffer(F32, [3, 50])],
                       [h.buffer(C64, [2, 3, 8])], _attrs(n2=(S64, 1))), "point sets"),
    (lambda h: h.frame([h.buffer(C64, [2, 3, 50]), h.buffer(F32, [2, 50])],
                       [h.buffer(C128, [2, 3, 8])], _attrs(n2=(S64, 1))), "complex64"),
    (lambda h: h.frame([h.buffer(C64, [2, 3, 8, 6]), h.buffer(F32, [2, 50])],
                       [h.buffer(C64, [2, 3, 50])], _attrs(nufft_type=(S32, 2))), "rank"),
])
def test_bad_calls_return_an_error_with_a_message(build, match):
    h = Harness()
    f = build(h)
    err = handler(ctypes.byref(f))
    assert err == 0x1234
    assert len(h.errors) == 1 and match in h.errors[0][1], h.errors
    assert h.errors[0][0] == 3  # INVALID_ARGUMENT
    assert h.stream_requests == 0


def test_valid_call_asks_for_the_stream_then_creates_a_plan():
    if gpu_status() is None:  # the fake device pointers must never reach a real GPU
        pytest.skip("a GPU is present: fake buffers cannot be run there; test_jax.py covers it")
    h = Harness()
    f = _type1_2d(h)
    before = native.lib.warpfft_xla_plans_created()
    err = handler(ctypes.byref(f))
    assert h.stream_requests == 1
    assert err == 0x1234 and "warpfft_plan_create" in h.errors[0][1], h.errors
    assert "WARPFFT_ERR_NO_DRIVER" in h.errors[0][1]
    assert h.errors[0][0] == 14  # UNAVAILABLE
    assert native.lib.warpfft_xla_plans_created() == before


def test_empty_batch_is_a_no_op():
    h = Harness()
    f = _type1_2d(h, G=0, out_dims=[0, 3, 6, 8])
    assert handler(ctypes.byref(f)) is None
    assert h.errors == [] and h.stream_requests == 0
