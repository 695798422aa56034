/*
 * fuzz_xla_frame.c — the input side of the XLA targets (fuzz_xla, fuzz_xla_toeplitz): reads the
 * fuzzer's bytes as a stream of choices and builds from them a call frame as XLA could hand it
 * over (make_frame), and reads the options record back as the handler must (opts_attr); and
 * what both targets' oracles share (XLA's side of a call, bug, trace, check_extent). Kept apart
 * from fuzz_xla.c and fuzz_xla_toeplitz.c, which hold the checking stand-ins of the C ABI and
 * the entry points, so that the decoding (which the seeds of make_seeds.py encode) and the
 * oracles read on their own. The encoding is the corpus's: change it only with make_seeds.py.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_xla_frame.h"

/* ---- the input, read as a stream of choices (fuzz_reader.h) ---- */

/* An integer: mostly small, else one of the edges, else any 64 bits. */
static int64_t pick_int(reader *r) {
    static const int64_t edge[] = {-1,
                                   -2,
                                   16,
                                   INT32_MAX,
                                   (int64_t)INT32_MAX + 1,
                                   INT32_MIN,
                                   (int64_t)INT32_MIN - 1,
                                   UINT32_MAX,
                                   (int64_t)1 << 32 | 2,
                                   (int64_t)1 << 40,
                                   INT64_MAX,
                                   INT64_MIN};
    return take_int(r, 160, 10, edge, sizeof edge / sizeof edge[0]);
}

/* A dimension: XLA's are >= 0; mostly small, some large (a zero elsewhere keeps it empty). */
static int64_t pick_dim(reader *r) {
    static const int64_t big[] = {1000, 1 << 20, (int64_t)1 << 31, (int64_t)1 << 40};
    uint8_t b = (uint8_t)take(r, 1);
    return b < 240 ? b % 9 : big[b % 4];
}

static double pick_double(reader *r) {
    static const double v[] = {1e-5, 1e-6, 1e-9, 1e-1, 2.0, 1.25, 0.0, -1.0, 1e300};
    return take_double(r, v, sizeof v / sizeof v[0]);
}

/* ---- the frame ---- */

static const int dtypes[] = {WF_XLA_C64, WF_XLA_C128, WF_XLA_F32, WF_XLA_F64,   WF_XLA_S32,
                             WF_XLA_S64, WF_XLA_U32,  WF_XLA_U64, 1 /* PRED */, 16 /* BF16 */};
/* The handlers' attribute names (xla_ffi.h, xla_toeplitz.h); new ones go at the end (the seeds
 * index this table). */
static const char *const names[] = {"nufft_type", "iflag", "eps", "n1",      "n2",
                                    "n3",         "opts",  "dim", "weights", "adjoint"};
enum { N_NAMES = sizeof names / sizeof names[0] };

frame_t fr; /* the current input's (fuzz_xla_frame.h) */

static uintptr_t base(int i) { /* buffer i's fake device address: never dereferenced */
    return (uintptr_t)(i + 1) << 41;
}

static size_t elem_bytes(int dtype) {
    switch (dtype) {
    case WF_XLA_C128:
        return 16;
    case WF_XLA_C64:
    case WF_XLA_F64:
    case WF_XLA_S64:
    case WF_XLA_U64:
        return 8;
    case WF_XLA_F32:
    case WF_XLA_S32:
    case WF_XLA_U32:
        return 4;
    case 16:
        return 2;
    default:
        return 1;
    }
}

/* A buffer as XLA allows: dims >= 0 whose running product fits in int64, and data that exist
 * (at most 2^40 bytes). 0 when the input asks for one XLA would not make. */
static int make_buffer(reader *r, int i) {
    XLA_FFI_Buffer *b = &fr.buf[i];
    int dtype = dtypes[take(r, 1) % (sizeof dtypes / sizeof dtypes[0])];
    int rank = (int)(take(r, 1) % MAX_RANK);
    unsigned __int128 count = 1;
    for (int d = 0; d < rank; d++) {
        fr.dims[i][d] = pick_dim(r);
        count *= (uint64_t)fr.dims[i][d];
        if (count > INT64_MAX)
            return 0;
    }
    count *= elem_bytes(dtype);
    if (count > (uint64_t)1 << 40)
        return 0;
    fr.bytes[i] = (uint64_t)count;
    *b = (XLA_FFI_Buffer){sizeof *b, NULL, dtype, (void *)base(i), rank, fr.dims[i]};
    if (count == 0 && take(r, 1) % 4 == 0)
        b->data = NULL; /* an empty array may have no data */
    return 1;
}

static void set_value(reader *r, int i, int dtype) {
    uint64_t *v = &fr.values[i];
    *v = 0;
    if (dtype == WF_XLA_F64) {
        double d = pick_double(r);
        memcpy(v, &d, sizeof d);
    } else if (dtype == WF_XLA_F32) {
        float f = (float)pick_double(r);
        memcpy(v, &f, sizeof f);
    } else if (dtype == WF_XLA_S32 || dtype == WF_XLA_U32) {
        uint32_t u = (uint32_t)pick_int(r);
        memcpy(v, &u, sizeof u);
    } else {
        *v = (uint64_t)pick_int(r);
    }
}

/* A string attribute's bytes into fr.text[i]: mostly a warpfft_opts record in hex (of this
 * header's size or an older or newer one's, or a size that disagrees with its struct_size; the
 * fields any values, a newer record's tail maybe set), else any bytes. Returns the length. */
static size_t make_text(reader *r, int i) {
    char *t = fr.text[i];
    if ((uint8_t)take(r, 1) >= 200) { /* any bytes */
        size_t len = take(r, 1) % MAX_TEXT;
        for (size_t k = 0; k < len; k++)
            t[k] = (char)take(r, 1);
        return len;
    }
    static const uint32_t sizes[] = {sizeof(warpfft_opts), 48, 56, 64, 80, 3, 8};
    unsigned char rec[96];
    memset(rec, 0, sizeof rec);
    size_t n = sizes[take(r, 1) % (sizeof sizes / sizeof sizes[0])];
    uint32_t said = take(r, 1) % 8 == 0 ? (uint32_t)pick_int(r) : (uint32_t)n;
    warpfft_opts o;
    memset(&o, 0, sizeof o);
    o.struct_size = said;
    o.modeord = (int32_t)pick_int(r);
    o.method = (int32_t)pick_int(r);
    o.device = (int32_t)pick_int(r);
    o.upsampfac = pick_double(r);
    o.stream = (uint64_t)pick_int(r);
    for (int d = 0; d < 3; d++)
        o.bin_size[d] = (int32_t)pick_int(r);
    o.max_subprob = (int32_t)pick_int(r);
    o.spreadinterponly = (int32_t)pick_int(r);
    o.check_points = (int32_t)pick_int(r);
    o.points_hint = pick_int(r);
    o.deterministic = (int32_t)pick_int(r);
    memcpy(rec, &o, sizeof o < n ? sizeof o : n);
    if (n > sizeof o)
        rec[sizeof o + take(r, 1) % (n - sizeof o)] = (unsigned char)take(r, 1);
    /* the last choice: bits 0-1 the case of the digits, bits 2-3 real_data (0: as the record
     * says, 0; 1: set; else any value), so the seeds made before real_data (last choice 1) read
     * as they did */
    uint8_t last = (uint8_t)take(r, 1);
    int upper = last % 4 == 0;
    if (last / 4 % 4 && n >= offsetof(warpfft_opts, real_data) + sizeof o.real_data) {
        o.real_data = last / 4 % 4 == 1 ? 1 : (int32_t)pick_int(r);
        memcpy(rec + offsetof(warpfft_opts, real_data), &o.real_data, sizeof o.real_data);
    }
    for (size_t k = 0; k < n; k++)
        snprintf(t + 2 * k, 3, upper ? "%02X" : "%02x", rec[k]);
    return 2 * n;
}

/* Builds the frame; 0 when the input asks for something XLA would not hand over. */
int make_frame(reader *r) {
    memset(&fr, 0, sizeof fr);
    fr.n_args = (int)(take(r, 1) % 9);
    fr.n_rets = take(r, 1) % 8 == 0 ? (int)(take(r, 1) % 3) : 1;
    for (int i = 0; i < fr.n_args + fr.n_rets; i++) {
        int other = take(r, 1) % 16 == 0; /* a token or other non-buffer kind */
        int *type = i < fr.n_args ? &fr.arg_types[i] : &fr.ret_types[i - fr.n_args];
        void **slot = i < fr.n_args ? &fr.args[i] : &fr.rets[i - fr.n_args];
        *type = other ? 2 : WF_XLA_ARG_BUFFER;
        if (!make_buffer(r, i))
            return 0;
        *slot = &fr.buf[i];
    }
    int n_attrs = (int)(take(r, 1) % MAX_ATTR);
    for (int i = 0; i < n_attrs; i++) {
        uint8_t which = (uint8_t)take(r, 1);
        char *text = fr.name_text[i];
        size_t len;
        if (which < 240) {
            len = strlen(names[which % N_NAMES]);
            memcpy(text, names[which % N_NAMES], len);
        } else { /* another name: any bytes */
            len = take(r, 1) % sizeof fr.name_text[i];
            for (size_t k = 0; k < len; k++)
                text[k] = (char)take(r, 1);
        }
        fr.names[i] = (XLA_FFI_ByteSpan){text, len};
        fr.name_ptrs[i] = &fr.names[i];
        int dtype = dtypes[take(r, 1) % (sizeof dtypes / sizeof dtypes[0])];
        uint8_t kind = (uint8_t)take(r, 1);
        fr.attr_types[i] = kind % 16 == 0 ? 1 + kind / 16 % 4 : WF_XLA_ATTR_SCALAR;
        set_value(r, i, dtype);
        fr.scalars[i] = (XLA_FFI_Scalar){dtype, &fr.values[i]};
        fr.attr_ptrs[i] = &fr.scalars[i]; /* arrays and dictionaries are not read */
        if (fr.attr_types[i] == WF_XLA_ATTR_STRING) {
            fr.spans[i] = (XLA_FFI_ByteSpan){fr.text[i], make_text(r, i)};
            fr.attr_ptrs[i] = &fr.spans[i];
        }
    }
    uint8_t flags = (uint8_t)take(r, 1);
    fr.api.struct_size = flags & 1 ? offsetof(XLA_FFI_Api, XLA_FFI_Stream_Get) : sizeof fr.api;
    fr.f.struct_size = sizeof fr.f;
    fr.f.api = &fr.api;
    fr.f.stage = flags & 2 ? (int)(take(r, 1) % 5) : WF_XLA_STAGE_EXECUTE;
    if (flags & 4) {
        fr.meta_ext.extension_base =
            (XLA_FFI_Extension_Base){sizeof fr.meta_ext, WF_XLA_EXTENSION_METADATA, NULL};
        fr.meta_ext.metadata = &fr.metadata;
        fr.f.extension_start = &fr.meta_ext.extension_base;
    }
    fr.f.args = (XLA_FFI_Args){sizeof(XLA_FFI_Args), NULL, fr.n_args, fr.arg_types, fr.args};
    fr.f.rets = (XLA_FFI_Rets){sizeof(XLA_FFI_Rets), NULL, fr.n_rets, fr.ret_types, fr.rets};
    fr.f.attrs = (XLA_FFI_Attrs){sizeof(XLA_FFI_Attrs), NULL,         n_attrs,
                                 fr.attr_types,         fr.name_ptrs, fr.attr_ptrs};
    return 1;
}

static int hex_value(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int opts_attr(const warpfft_opts *defaults, warpfft_opts *o) {
    *o = *defaults;
    for (int64_t i = 0; i < fr.f.attrs.size; i++) {
        if (fr.names[i].len != 4 || memcmp(fr.names[i].ptr, "opts", 4) != 0)
            continue;
        if (fr.attr_types[i] != WF_XLA_ATTR_STRING)
            return 0;
        const XLA_FFI_ByteSpan *s = &fr.spans[i];
        size_t n = s->len / 2;
        if (s->len % 2 || n < 4)
            return 0;
        unsigned char rec[MAX_TEXT / 2];
        for (size_t k = 0; k < n; k++) {
            int hi = hex_value(s->ptr[2 * k]), lo = hex_value(s->ptr[2 * k + 1]);
            if (hi < 0 || lo < 0)
                return 0;
            rec[k] = (unsigned char)(hi << 4 | lo);
        }
        uint32_t size;
        memcpy(&size, rec, 4);
        if (size != n)
            return 0;
        for (size_t k = sizeof *o; k < n; k++)
            if (rec[k])
                return 0;
        memcpy((unsigned char *)o + 4, rec + 4, (n < sizeof *o ? n : sizeof *o) - 4);
        return 1;
    }
    return -1;
}

/* ---- what both targets' oracles share ---- */

void bug(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", fuzz_target);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

void trace(const char *fmt, ...) {
    static int on = -1;
    if (on < 0)
        on = getenv("WF_FUZZ_TRACE") != NULL;
    if (!on)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void check_extent(const char *what, const void *p, uint64_t bytes, int dtype, int out) {
    uintptr_t a = (uintptr_t)p;
    int lo = out ? fr.n_args : 0, hi = out ? fr.n_args + fr.n_rets : fr.n_args;
    for (int i = lo; i < hi; i++) {
        const XLA_FFI_Buffer *b = &fr.buf[i];
        if (b->dtype != dtype || !b->data)
            continue;
        uintptr_t s = (uintptr_t)b->data;
        if (a >= s && a - s <= fr.bytes[i] && bytes <= fr.bytes[i] - (a - s))
            return;
    }
    if (bytes == 0 && p == NULL)
        return; /* nothing to read or write: any pointer */
    bug("%s: %p + %llu bytes of type %d is outside every %s buffer of that type", what, p,
        (unsigned long long)bytes, dtype, out ? "result" : "argument");
}

uint64_t mul(uint64_t a, uint64_t b) {
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

int stream_fails;
static int errors_made;
static char error_token;

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a) {
    if (!a || a->struct_size < sizeof *a || !a->message || !a->message[0])
        bug("XLA_FFI_Error_Create without a message");
    errors_made++;
    return (XLA_FFI_Error *)&error_token;
}

static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *a) {
    if (stream_fails)
        return (XLA_FFI_Error *)&error_token; /* XLA's own error, passed on */
    a->stream = (void *)(uintptr_t)0x5150;
    return NULL;
}

void xla_side(void) {
    errors_made = 0;
    fr.api.XLA_FFI_Error_Create = error_create;
    fr.api.XLA_FFI_Stream_Get = stream_get;
}

void check_error(XLA_FFI_Error *e) {
    if (e && e != (XLA_FFI_Error *)&error_token)
        bug("an error that is not XLA's");
    if (e && !errors_made && !stream_fails)
        bug("an error not made through XLA_FFI_Error_Create");
    if (!e && errors_made)
        bug("an error was made but not returned");
}

/* The stand-ins' messages. */
const char *warpfft_status_name(int status) {
    static char name[32];
    snprintf(name, sizeof name, "STATUS_%d", status);
    return name;
}

const char *warpfft_last_error(void) {
    return "stand-in: injected failure";
}
