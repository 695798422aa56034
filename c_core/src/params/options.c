/*
 * options.c — the option table (options.h): every option's name, type, default, bounds, the
 * reference's spellings and a line of doc, written once. The defaults of warpfft_opts_default,
 * the checks of plan creation (wf_opts_resolve) and of warpfft_opts_set, their messages, and
 * what every front-end reads through warpfft_opt_describe all come from these rows. A new
 * option is a field at the end of warpfft_opts (warpfft.h) and a row here. No GPU.
 */
#include "params/options.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/base.h"
#include "params/params.h"
#include "runtime/error.h"

/* Largest opts struct accepted from a newer header (a guard against an uninitialised size). */
#define WF_MAX_OPTS_SIZE 4096

#define FIELD(f) ((int)offsetof(warpfft_opts, f))

/* Rows by kind: an int32 field in [lo, hi] (default 0); a 0/1 switch; the reference's int32
 * options that change nothing here (no field; their default the reference's). Strings left out
 * are "" (text()). */
#define INT32_ROW(n, al, f, lo, hi, doc_)                                                          \
    {                                                                                              \
        .name = n, .aliases = al, .doc = doc_, .type = WARPFFT_OPT_INT32, .offset = FIELD(f),      \
        .imin = lo, .imax = hi                                                                     \
    }
#define SWITCH_ROW(n, al, f, app, doc_)                                                            \
    {                                                                                              \
        .name = n, .aliases = al, .doc = doc_, .type = WARPFFT_OPT_INT32, .offset = FIELD(f),      \
        .appended = app, .imax = 1                                                                 \
    }
#define REF_ROW(n, lo, hi, ref, doc_)                                                              \
    {                                                                                              \
        .name = n, .aliases = n, .doc = doc_, .type = WARPFFT_OPT_INT32,                           \
        .flags = WARPFFT_OPT_FLAG_NO_EFFECT, .offset = -1, .idef = ref, .imin = lo, .imax = hi,    \
        .iref = ref                                                                                \
    }

static const wf_opt wf_opts_table[] = {
    {.name = "modeord",
     .aliases = "modeord",
     .values = "CMCL FFT",
     .doc = "mode order: 0 CMCL (-N/2..N/2-1), 1 FFT (0..N/2-1, then -N/2..-1)",
     .type = WARPFFT_OPT_INT32,
     .offset = FIELD(modeord),
     .imax = 1},
    {.name = "method",
     .aliases = "gpu_method",
     .values = "AUTO GM SM OD",
     .doc = "how points meet the fine grid (warpfft_method); AUTO picks by measured rules",
     .type = WARPFFT_OPT_INT32,
     .offset = FIELD(method),
     .imax = WARPFFT_METHOD_OD},
    INT32_ROW("device", "gpu_device_id", device, 0, INT32_MAX, "CUDA device ordinal"),
    {.name = "upsampfac",
     .aliases = "upsampfac gpu_upsampfac",
     .doc = "fine grid / modes (sigma): 0 chooses it per plan with the kernel width, by "
            "predicted time",
     .type = WARPFFT_OPT_FLOAT64,
     .flags = WARPFFT_OPT_FLAG_ZERO_AUTO,
     .offset = FIELD(upsampfac),
     .fmin = WF_SIGMA_MIN,
     .fmax = WF_SIGMA_MAX},
    {.name = "stream",
     .aliases = "gpu_stream",
     .doc = "CUstream as an integer; 0: the legacy default stream",
     .type = WARPFFT_OPT_UINT64,
     .offset = FIELD(stream)},
    INT32_ROW("bin_size[0]", "gpu_binsizex", bin_size[0], 0, INT32_MAX,
              "spreading bin edge along dimension 1 (fine-grid points); 0 chooses"),
    INT32_ROW("bin_size[1]", "gpu_binsizey", bin_size[1], 0, INT32_MAX,
              "spreading bin edge along dimension 2 (fine-grid points); 0 chooses"),
    INT32_ROW("bin_size[2]", "gpu_binsizez", bin_size[2], 0, INT32_MAX,
              "spreading bin edge along dimension 3 (fine-grid points); 0 chooses"),
    {.name = "max_subprob",
     .aliases = "gpu_maxsubprobsize",
     .doc = "points per shared-memory subproblem; 0 chooses",
     .type = WARPFFT_OPT_INT32,
     .offset = FIELD(max_subprob),
     .imax = INT32_MAX,
     .iref = 1024},
    SWITCH_ROW("spreadinterponly", "gpu_spreadinterponly", spreadinterponly, 1,
               "1: spread (type 1) or interpolate (type 2) only, on fk itself: no FFT"),
    SWITCH_ROW("check_points", "", check_points, 0,
               "1: setpts waits and refuses a NaN/inf coordinate; 0: no wait, outputs NaN"),
    {.name = "points_hint",
     .doc = "expected points per setpts, for the choice of sigma; 0: one per mode",
     .type = WARPFFT_OPT_INT64,
     .offset = FIELD(points_hint),
     .appended = 1,
     .imax = INT64_MAX},
    SWITCH_ROW("deterministic", "", deterministic, 1,
               "1: bitwise-reproducible results (OD spreading after a stable sort)"),
    /* in the struct's tail padding (no new size): not `appended` (options.h) */
    {.name = "points_width",
     .doc = "1: the kernel width from the points given, and sigma for random points; 0: the "
            "width every point set needs (the rule before)",
     .type = WARPFFT_OPT_INT32,
     .offset = FIELD(points_width),
     .idef = 1,
     .imax = 1,
     .iref = 1},
    SWITCH_ROW("real_data", "", real_data, 1,
               "1: real strengths (type 1 input, type 2 output) and the half modes N1/2+1 "
               "along dimension 1"),
    /* the reference's options that change no result here: checked as it takes them */
    REF_ROW("gpu_sort", INT32_MIN, INT32_MAX, 1,
            "the reference's GM sort switch: points are always sorted into bins here"),
    REF_ROW("gpu_kerevalmeth", 0, 1, 1,
            "the reference's kernel evaluation method: one method here, same result"),
    REF_ROW("gpu_maxbatchsize", 0, INT32_MAX, 0,
            "the reference's batch size: the whole batch runs at once here"),
    REF_ROW("gpu_obinsizex", INT32_MIN, INT32_MAX, 0, "the reference's block-gather bins"),
    REF_ROW("gpu_obinsizey", INT32_MIN, INT32_MAX, 0, "the reference's block-gather bins"),
    REF_ROW("gpu_obinsizez", INT32_MIN, INT32_MAX, 0, "the reference's block-gather bins"),
    REF_ROW("gpu_np", INT32_MIN, INT32_MAX, 0, "the reference's output-driven batch size"),
    {.name = "debug",
     .aliases = "debug gpu_debug",
     .doc = "the reference's debug printing: warpfft prints nothing",
     .type = WARPFFT_OPT_INT32,
     .flags = WARPFFT_OPT_FLAG_NO_EFFECT,
     .offset = -1,
     .imin = INT32_MIN,
     .imax = INT32_MAX},
};

/* A row's optional string: "" where the row leaves it out. */
static const char *text(const char *s) {
    return s ? s : "";
}

#define WF_NOPTS (sizeof wf_opts_table / sizeof wf_opts_table[0])

size_t wf_opt_count(void) {
    return WF_NOPTS;
}

const wf_opt *wf_opt_at(size_t i) {
    return i < WF_NOPTS ? &wf_opts_table[i] : NULL;
}

/* Whether `name` is one of the space-separated words of `list`. */
static int in_list(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && len > 0 && memcmp(p, name, len) == 0)
            return 1;
        p += n;
        p += *p == ' ';
    }
    return 0;
}

const wf_opt *wf_opt_find(const char *name) {
    if (!name)
        return NULL;
    for (size_t i = 0; i < WF_NOPTS; i++)
        if (strcmp(wf_opts_table[i].name, name) == 0 ||
            in_list(text(wf_opts_table[i].aliases), name))
            return &wf_opts_table[i];
    return NULL;
}

/* ---------------------------------------------------------------- values and their checks */

static size_t type_size(int type) {
    return type == WARPFFT_OPT_INT32 ? 4 : 8;
}

/* Reads a row's field as an integer (INT32, INT64, UINT64 as its bits) or a double. */
static int64_t read_int(const warpfft_opts *o, const wf_opt *r) {
    const unsigned char *at = (const unsigned char *)o + r->offset;
    if (r->type == WARPFFT_OPT_INT32) {
        int32_t v;
        memcpy(&v, at, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, at, 8);
    return v;
}

static double read_float(const warpfft_opts *o, const wf_opt *r) {
    double v;
    memcpy(&v, (const unsigned char *)o + r->offset, 8);
    return v;
}

static void write_int(warpfft_opts *o, const wf_opt *r, int64_t v) {
    unsigned char *at = (unsigned char *)o + r->offset;
    if (r->type == WARPFFT_OPT_INT32) {
        int32_t w = (int32_t)v;
        memcpy(at, &w, 4);
    } else {
        memcpy(at, &v, 8);
    }
}

static void write_float(warpfft_opts *o, const wf_opt *r, double v) {
    memcpy((unsigned char *)o + r->offset, &v, 8);
}

/* What a row accepts, as the messages say it: "0 (CMCL) or 1 (FFT)", "0 or 1", ">= 0",
 * "in [0, 3]", "0 (chosen per plan) or in [1.25, 3]", "a 32-bit integer". */
static void allowed_text(const wf_opt *r, char *buf, size_t len) {
    if (r->type == WARPFFT_OPT_FLOAT64) {
        snprintf(buf, len, "%sin [%g, %g]",
                 r->flags & WARPFFT_OPT_FLAG_ZERO_AUTO ? "0 (chosen per plan) or " : "", r->fmin,
                 r->fmax);
        return;
    }
    if (text(r->values)[0]) { /* "0 (A), 1 (B) or 2 (C)" */
        size_t used = 0;
        int64_t v = r->imin;
        for (const char *p = r->values; *p && used < len; v++) {
            size_t n = strcspn(p, " ");
            const char *sep = v == r->imin ? "" : v == r->imax ? " or " : ", ";
            int k = snprintf(buf + used, len - used, "%s%" PRId64 " (%.*s)", sep, v, (int)n, p);
            used += k > 0 ? (size_t)k : 0;
            p += n;
            p += *p == ' ';
        }
        return;
    }
    int64_t tmin = r->type == WARPFFT_OPT_INT32 ? INT32_MIN : INT64_MIN;
    int64_t tmax = r->type == WARPFFT_OPT_INT32 ? INT32_MAX : INT64_MAX;
    if (r->type == WARPFFT_OPT_UINT64)
        snprintf(buf, len, "in [0, %" PRIu64 "]", UINT64_MAX);
    else if (r->imin == 0 && r->imax == 1)
        snprintf(buf, len, "0 or 1");
    else if (r->imin == tmin && r->imax == tmax)
        snprintf(buf, len, "a %d-bit integer", r->type == WARPFFT_OPT_INT32 ? 32 : 64);
    else if (r->imax == tmax)
        snprintf(buf, len, ">= %" PRId64 " (a %d-bit integer)", r->imin,
                 r->type == WARPFFT_OPT_INT32 ? 32 : 64);
    else
        snprintf(buf, len, "in [%" PRId64 ", %" PRId64 "]", r->imin, r->imax);
}

/* The one refusal message of a bad value, `shown` as the value's text. */
static warpfft_status refuse(const wf_opt *r, const char *shown) {
    char allowed[160];
    allowed_text(r, allowed, sizeof allowed);
    return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.%s = %s; must be %s", r->name, shown, allowed);
}

static warpfft_status check_int(const wf_opt *r, int64_t v) {
    if (r->type == WARPFFT_OPT_UINT64 || (v >= r->imin && v <= r->imax))
        return WARPFFT_SUCCESS;
    char shown[32];
    snprintf(shown, sizeof shown, "%" PRId64, v);
    return refuse(r, shown);
}

/* v in the fewest digits that read back as v ("1.2", not 1.19999999999999996): as Python's
 * repr and Rust's Display show it, so a message names the value the caller wrote. */
static void shortest(double v, char *buf, size_t len) {
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v || isnan(v))
            return;
    }
}

static warpfft_status check_float(const wf_opt *r, double v) {
    int zero = v == 0.0 && (r->flags & WARPFFT_OPT_FLAG_ZERO_AUTO);
    if (zero || (v >= r->fmin && v <= r->fmax)) /* also refuses NaN */
        return WARPFFT_SUCCESS;
    char shown[32];
    shortest(v, shown, sizeof shown);
    return refuse(r, shown);
}

/* ---------------------------------------------------------------- the struct as a whole */

void wf_opts_defaults(warpfft_opts *o) {
    memset(o, 0, sizeof *o);
    o->struct_size = (uint32_t)sizeof *o;
    for (size_t i = 0; i < WF_NOPTS; i++) {
        const wf_opt *r = &wf_opts_table[i];
        if (r->offset < 0)
            continue;
        if (r->type == WARPFFT_OPT_FLOAT64)
            write_float(o, r, r->fdef);
        else
            write_int(o, r, r->idef);
    }
}

WARPFFT_API warpfft_status warpfft_opts_default(warpfft_opts *opts) {
    wf_clear_error();
    if (!opts)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts is NULL");
    wf_opts_defaults(opts);
    return WARPFFT_SUCCESS;
}

/* Whether `size` is a struct_size plan creation takes: an older header's (the offset of a field
 * appended later: the struct ended there), this one's, or a newer header's (larger, bounded). */
static int size_accepted(uint32_t size) {
    if (size >= sizeof(warpfft_opts) && size <= WF_MAX_OPTS_SIZE)
        return 1;
    for (size_t i = 0; i < WF_NOPTS; i++)
        if (wf_opts_table[i].appended && size == (uint32_t)wf_opts_table[i].offset)
            return 1;
    return 0;
}

/* The accepted sizes for the message: "48, 56, 64, or 72..4096". */
static void sizes_text(char *buf, size_t len) {
    size_t used = 0;
    for (size_t i = 0; i < WF_NOPTS && used < len; i++)
        if (wf_opts_table[i].appended) {
            int k = snprintf(buf + used, len - used, "%d, ", wf_opts_table[i].offset);
            used += k > 0 ? (size_t)k : 0;
        }
    if (used < len)
        snprintf(buf + used, len - used, "or %zu..%d", sizeof(warpfft_opts), WF_MAX_OPTS_SIZE);
}

warpfft_status wf_opts_resolve(const warpfft_opts *opts, warpfft_opts *out) {
    if (!opts) {
        wf_opts_defaults(out);
        return WARPFFT_SUCCESS;
    }
    /* An older header's struct has its own fields, the rest default; a newer one's must have
     * every byte this build does not know zero (its default), as warpfft.h promises.
     * check_points took the tail padding of the struct before it (the size did not change),
     * which warpfft_opts_default has always zeroed, so an opts from that header reads 0 there. */
    if (!size_accepted(opts->struct_size)) {
        char sizes[96];
        sizes_text(sizes, sizeof sizes);
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "opts.struct_size = %u; expected %s (initialise opts with "
                        "warpfft_opts_default)",
                        (unsigned)opts->struct_size, sizes);
    }
    const unsigned char *extra = (const unsigned char *)opts + sizeof(warpfft_opts);
    for (size_t i = 0;
         opts->struct_size > sizeof(warpfft_opts) && i < opts->struct_size - sizeof(warpfft_opts);
         i++)
        if (extra[i] != 0)
            return wf_error(WARPFFT_ERR_INVALID_ARG,
                            "opts.struct_size = %u: byte %zu is not zero, but this warpfft "
                            "(%zu-byte opts) knows no option there; update warpfft or leave the "
                            "newer options at their defaults",
                            (unsigned)opts->struct_size, sizeof(warpfft_opts) + i,
                            sizeof(warpfft_opts));
    warpfft_opts full;
    wf_opts_defaults(&full);
    memcpy(&full, opts, opts->struct_size < sizeof full ? opts->struct_size : sizeof full);
    full.struct_size = (uint32_t)sizeof full; /* holds only the fields this build knows */
    for (size_t i = 0; i < WF_NOPTS; i++) {
        const wf_opt *r = &wf_opts_table[i];
        if (r->offset < 0)
            continue;
        warpfft_status st = r->type == WARPFFT_OPT_FLOAT64 ? check_float(r, read_float(&full, r))
                                                           : check_int(r, read_int(&full, r));
        if (st != WARPFFT_SUCCESS)
            return st;
    }
    *out = full;
    return WARPFFT_SUCCESS;
}

/* ---------------------------------------------------------------- the public table */

WARPFFT_API size_t warpfft_opt_count(void) {
    return WF_NOPTS;
}

WARPFFT_API warpfft_status warpfft_opt_describe(size_t i, warpfft_opt_desc *desc) {
    wf_clear_error();
    if (!desc)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "desc is NULL");
    if (desc->struct_size < offsetof(warpfft_opt_desc, type))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "desc->struct_size = %u; set it to sizeof(warpfft_opt_desc) (%zu)",
                        (unsigned)desc->struct_size, sizeof(warpfft_opt_desc));
    if (i >= WF_NOPTS)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "option %zu; the table has %zu (0..%zu)", i,
                        (size_t)WF_NOPTS, (size_t)WF_NOPTS - 1);
    const wf_opt *r = &wf_opts_table[i];
    warpfft_opt_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = (uint32_t)sizeof d;
    d.type = r->type;
    d.flags = r->flags;
    d.offset = r->offset;
    d.name = r->name;
    d.aliases = text(r->aliases);
    d.values = text(r->values);
    d.doc = r->doc;
    if (r->type == WARPFFT_OPT_FLOAT64) {
        d.float_default = r->fdef;
        d.float_min = r->fmin;
        d.float_max = r->fmax;
        d.float_ref_default = r->fref;
    } else if (r->type != WARPFFT_OPT_UINT64) {
        d.int_default = r->idef;
        d.int_min = r->imin;
        d.int_max = r->imax;
        d.int_ref_default = r->iref;
    }
    uint32_t want = desc->struct_size < sizeof d ? desc->struct_size : (uint32_t)sizeof d;
    memcpy((unsigned char *)desc + sizeof d.struct_size, (unsigned char *)&d + sizeof d.struct_size,
           want - sizeof d.struct_size);
    return WARPFFT_SUCCESS;
}

/* "modeord, method, ..." into buf (for the unknown-option message). */
static void names_text(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < WF_NOPTS && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", wf_opts_table[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
}

static warpfft_status unknown(const char *name) {
    char names[512];
    names_text(names, sizeof names);
    return wf_error(WARPFFT_ERR_INVALID_ARG, "unknown option \"%s\" (options: %s)", name, names);
}

WARPFFT_API warpfft_status warpfft_opt_find(const char *name, size_t *index) {
    wf_clear_error();
    if (!name || !index)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL", name ? "index" : "name");
    const wf_opt *r = wf_opt_find(name);
    if (!r)
        return unknown(name);
    *index = (size_t)(r - wf_opts_table);
    return WARPFFT_SUCCESS;
}

/* A decimal integer filling all of `text` into *v (0), else -1 (not one) or 1 (out of range). */
static int parse_int(const char *text, int unsigned_type, int64_t *v) {
    if (!text[0] || !(text[0] == '-' || text[0] == '+' || (text[0] >= '0' && text[0] <= '9')))
        return -1;
    char *end = NULL;
    errno = 0;
    if (unsigned_type) {
        if (text[0] == '-')
            return strspn(text + 1, "0123456789") == strlen(text + 1) && text[1] ? 1 : -1;
        unsigned long long u = strtoull(text, &end, 10);
        if (*end)
            return -1;
        if (errno == ERANGE)
            return 1;
        uint64_t w = (uint64_t)u;
        memcpy(v, &w, 8);
        return 0;
    }
    long long s = strtoll(text, &end, 10);
    if (*end)
        return -1;
    *v = (int64_t)s;
    return errno == ERANGE ? 1 : 0;
}

WARPFFT_API warpfft_status warpfft_opts_set(warpfft_opts *opts, const char *name,
                                            const char *value) {
    wf_clear_error();
    if (!opts || !name || !value)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL",
                        !opts   ? "opts"
                        : !name ? "name"
                                : "value");
    const wf_opt *r = wf_opt_find(name);
    if (!r)
        return unknown(name);
    if (r->offset >= 0 && (opts->struct_size < (uint32_t)r->offset + type_size(r->type) ||
                           opts->struct_size > WF_MAX_OPTS_SIZE))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "opts.struct_size = %u has no field %s (initialise opts with "
                        "warpfft_opts_default)",
                        (unsigned)opts->struct_size, r->name);
    if (r->type == WARPFFT_OPT_FLOAT64) {
        char *end = NULL;
        double v = value[0] ? strtod(value, &end) : 0.0;
        if (!value[0] || *end || value[0] == ' ')
            return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.%s = \"%s\"; must be a number", r->name,
                            value);
        warpfft_status st = check_float(r, v);
        if (st == WARPFFT_SUCCESS && r->offset >= 0)
            write_float(opts, r, v);
        return st;
    }
    int64_t v = 0;
    int p = parse_int(value, r->type == WARPFFT_OPT_UINT64, &v);
    if (p < 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "opts.%s = \"%s\"; must be an integer", r->name,
                        value);
    int64_t tmin = r->type == WARPFFT_OPT_INT32 ? INT32_MIN : INT64_MIN;
    int64_t tmax = r->type == WARPFFT_OPT_INT32 ? INT32_MAX : INT64_MAX;
    if (p > 0 || (r->type != WARPFFT_OPT_UINT64 && (v < tmin || v > tmax)))
        return refuse(r, value); /* beyond the field's type: shown as given */
    warpfft_status st = check_int(r, v);
    if (st == WARPFFT_SUCCESS && r->offset >= 0)
        write_int(opts, r, v);
    return st;
}

/* ---------------------------------------------------------------- the tolerance */

void wf_tol_bounds(int precision, double *lo, double *hi) {
    *lo = precision == WARPFFT_F64 ? 1e-13 : 1e-6;
    *hi = 1e-1;
}

warpfft_status wf_check_tol(double *tol, int precision) {
    double lo, hi;
    wf_tol_bounds(precision, &lo, &hi);
    if (isnan(*tol))
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol = nan; must be a number (%s runs tol in [%g, %g], one outside at "
                        "the nearer end)",
                        wf_prec_name(precision), lo, hi);
    *tol = *tol < lo ? lo : *tol > hi ? hi : *tol;
    return WARPFFT_SUCCESS;
}

WARPFFT_API warpfft_status warpfft_tol_bounds(warpfft_precision precision, double *lo, double *hi) {
    wf_clear_error();
    if (!lo || !hi)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "%s is NULL", lo ? "hi" : "lo");
    warpfft_status st = wf_check_precision((int)precision);
    if (st == WARPFFT_SUCCESS)
        wf_tol_bounds((int)precision, lo, hi);
    return st;
}

WARPFFT_API warpfft_status warpfft_tol_effective(double tol, warpfft_precision precision,
                                                 double *effective) {
    wf_clear_error();
    if (!effective)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "effective is NULL");
    warpfft_status st = wf_check_precision((int)precision);
    if (st == WARPFFT_SUCCESS)
        st = wf_check_tol(&tol, (int)precision);
    if (st == WARPFFT_SUCCESS)
        *effective = tol;
    return st;
}
