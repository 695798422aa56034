/*
 * test_params_table.c — the option table (params/options.c) walked row by row through the
 * public calls: every row describes itself consistently (name, type, default within its bounds,
 * an offset inside warpfft_opts, unique names and aliases), warpfft_opts_default writes every
 * default, warpfft_opt_find finds names and aliases, and for every row a valid value set by
 * name lands in the field while an invalid one (below, above, not a number) is refused with
 * exactly the message plan creation gives for that value written into the struct. The growth
 * rule of the struct (older sizes accepted) comes from the rows marked as appended.
 */
#include "test_params.h"

#include <inttypes.h>

/* The field of row d in o, as text ("%lld", "%llu" or "%.17g"), to compare settings. */
static void field_text(const warpfft_opts *o, const warpfft_opt_desc *d, char *buf, size_t len) {
    const unsigned char *at = (const unsigned char *)o + d->offset;
    if (d->type == WARPFFT_OPT_INT32) {
        int32_t v;
        memcpy(&v, at, 4);
        snprintf(buf, len, "%" PRId32, v);
    } else if (d->type == WARPFFT_OPT_INT64) {
        int64_t v;
        memcpy(&v, at, 8);
        snprintf(buf, len, "%" PRId64, v);
    } else if (d->type == WARPFFT_OPT_UINT64) {
        uint64_t v;
        memcpy(&v, at, 8);
        snprintf(buf, len, "%" PRIu64, v);
    } else {
        double v;
        memcpy(&v, at, 8);
        snprintf(buf, len, "%.17g", v);
    }
}

/* Writes `text` (a number of the row's type) straight into the field of o. */
static void poke(warpfft_opts *o, const warpfft_opt_desc *d, const char *text) {
    unsigned char *at = (unsigned char *)o + d->offset;
    if (d->type == WARPFFT_OPT_INT32) {
        int32_t v = (int32_t)strtoll(text, NULL, 10);
        memcpy(at, &v, 4);
    } else if (d->type == WARPFFT_OPT_INT64) {
        int64_t v = strtoll(text, NULL, 10);
        memcpy(at, &v, 8);
    } else if (d->type == WARPFFT_OPT_UINT64) {
        uint64_t v = strtoull(text, NULL, 10);
        memcpy(at, &v, 8);
    } else {
        double v = strtod(text, NULL);
        memcpy(at, &v, 8);
    }
}

static void describe(size_t i, warpfft_opt_desc *d) {
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    CHECK(warpfft_opt_describe(i, d) == WARPFFT_SUCCESS, "describe %zu: %s", i,
          warpfft_last_error());
}

void test_table_rows(void) {
    size_t n = warpfft_opt_count();
    CHECK(n >= 13, "%zu rows", n);
    warpfft_opts o = defaults();
    for (size_t i = 0; i < n; i++) {
        warpfft_opt_desc d;
        describe(i, &d);
        CHECK(d.name && d.name[0] && d.doc && d.doc[0] && d.aliases && d.values, "row %zu text", i);
        int no_field = (d.flags & WARPFFT_OPT_FLAG_NO_EFFECT) != 0;
        size_t size = d.type == WARPFFT_OPT_INT32 ? 4 : 8;
        CHECK(no_field ? d.offset == -1
                       : d.offset >= 4 && (size_t)d.offset + size <= sizeof(warpfft_opts),
              "%s: offset %d", d.name, d.offset);
        CHECK(d.type >= WARPFFT_OPT_INT32 && d.type <= WARPFFT_OPT_FLOAT64, "%s: type", d.name);
        if (d.type == WARPFFT_OPT_FLOAT64)
            CHECK(d.float_min <= d.float_max &&
                      ((d.float_default >= d.float_min && d.float_default <= d.float_max) ||
                       (d.float_default == 0.0 && (d.flags & WARPFFT_OPT_FLAG_ZERO_AUTO))),
                  "%s: default %g in [%g, %g]", d.name, d.float_default, d.float_min, d.float_max);
        else if (d.type != WARPFFT_OPT_UINT64)
            CHECK(d.int_min <= d.int_default && d.int_default <= d.int_max &&
                      d.int_min <= d.int_ref_default && d.int_ref_default <= d.int_max,
                  "%s: default %" PRId64 " in [%" PRId64 ", %" PRId64 "]", d.name, d.int_default,
                  d.int_min, d.int_max);
        if (!no_field) { /* warpfft_opts_default wrote the table's default */
            char got[48], want[48];
            field_text(&o, &d, got, sizeof got);
            if (d.type == WARPFFT_OPT_FLOAT64)
                snprintf(want, sizeof want, "%.17g", d.float_default);
            else
                snprintf(want, sizeof want, "%" PRId64, d.int_default);
            CHECK(strcmp(got, want) == 0, "%s: default field %s, table %s", d.name, got, want);
        }
        /* the name and every alias find this row, and no other row has them */
        size_t at = 99;
        CHECK(warpfft_opt_find(d.name, &at) == 0 && at == i, "find %s", d.name);
        char words[128];
        snprintf(words, sizeof words, "%s", d.aliases);
        for (char *w = strtok(words, " "); w; w = strtok(NULL, " ")) {
            at = 99;
            CHECK(warpfft_opt_find(w, &at) == 0 && at == i, "%s: alias %s", d.name, w);
        }
        for (size_t j = 0; j < i; j++) {
            warpfft_opt_desc e;
            describe(j, &e);
            CHECK(strcmp(e.name, d.name) != 0, "%s twice", d.name);
        }
    }
    warpfft_opt_desc d;
    d.struct_size = sizeof d;
    CHECK(warpfft_opt_describe(n, &d) == WARPFFT_ERR_INVALID_ARG, "row n");
    CHECK(warpfft_opt_describe(0, NULL) == WARPFFT_ERR_INVALID_ARG, "NULL desc");
    size_t at;
    CHECK(warpfft_opt_find("no_such_option", &at) == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "unknown option \"no_such_option\"") &&
              strstr(warpfft_last_error(), "upsampfac"),
          "unknown: %s", warpfft_last_error());
    /* the reference's spellings reach warpfft's fields */
    const char *pairs[][2] = {{"gpu_method", "method"},
                              {"gpu_device_id", "device"},
                              {"gpu_stream", "stream"},
                              {"gpu_binsizex", "bin_size[0]"},
                              {"gpu_binsizez", "bin_size[2]"},
                              {"gpu_maxsubprobsize", "max_subprob"},
                              {"gpu_spreadinterponly", "spreadinterponly"},
                              {"gpu_upsampfac", "upsampfac"}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        size_t a = 0, b = 1;
        CHECK(warpfft_opt_find(pairs[k][0], &a) == 0 && warpfft_opt_find(pairs[k][1], &b) == 0 &&
                  a == b,
              "%s is %s", pairs[k][0], pairs[k][1]);
    }
    /* a desc of an older, shorter size is filled only as far as it reaches */
    unsigned char small[sizeof(warpfft_opt_desc)];
    memset(small, 0xAB, sizeof small);
    warpfft_opt_desc *s = (warpfft_opt_desc *)small;
    s->struct_size = (uint32_t)offsetof(warpfft_opt_desc, doc);
    CHECK(warpfft_opt_describe(0, s) == 0 && s->name &&
              small[offsetof(warpfft_opt_desc, doc)] == 0xAB,
          "short desc");
}

/* Values of a row as text: valid ones (its ends, its default) and invalid ones (just past the
 * ends, past the field's type, not a number). */
typedef struct values {
    const char *good[4];
    const char *bad[5];
} values;

static void values_of(const warpfft_opt_desc *d, char buf[9][48], values *v) {
    memset(v, 0, sizeof *v);
    int k = 0;
    if (d->type == WARPFFT_OPT_FLOAT64) {
        snprintf(buf[k], 48, "%.17g", d->float_min), v->good[0] = buf[k++];
        snprintf(buf[k], 48, "%.17g", d->float_max), v->good[1] = buf[k++];
        snprintf(buf[k], 48, "%.17g", d->float_default), v->good[2] = buf[k++];
        snprintf(buf[k], 48, "%.17g", d->float_min * (1 - 1e-9)), v->bad[0] = buf[k++];
        snprintf(buf[k], 48, "%.17g", d->float_max * (1 + 1e-9)), v->bad[1] = buf[k++];
        v->bad[2] = "nan";
        v->bad[3] = "1.5x";
        return;
    }
    if (d->type == WARPFFT_OPT_UINT64) {
        v->good[0] = "0", v->good[1] = "18446744073709551615", v->good[2] = "12345";
        v->bad[0] = "-1", v->bad[1] = "18446744073709551616", v->bad[2] = "1.0";
        return;
    }
    int64_t tmin = d->type == WARPFFT_OPT_INT32 ? INT32_MIN : INT64_MIN;
    int64_t tmax = d->type == WARPFFT_OPT_INT32 ? INT32_MAX : INT64_MAX;
    snprintf(buf[k], 48, "%" PRId64, d->int_min), v->good[0] = buf[k++];
    snprintf(buf[k], 48, "%" PRId64, d->int_max), v->good[1] = buf[k++];
    snprintf(buf[k], 48, "%" PRId64, d->int_default), v->good[2] = buf[k++];
    int b = 0;
    if (d->int_min > tmin)
        snprintf(buf[k], 48, "%" PRId64, d->int_min - 1), v->bad[b++] = buf[k++];
    if (d->int_max < tmax)
        snprintf(buf[k], 48, "%" PRId64, d->int_max + 1), v->bad[b++] = buf[k++];
    v->bad[b++] = d->type == WARPFFT_OPT_INT32 ? "2147483648" : "9223372036854775808";
    v->bad[b++] = "1.0";
    v->bad[b++] = "";
}

void test_table_set(void) {
    const int64_t n[3] = {32, 16, 8};
    for (size_t i = 0; i < warpfft_opt_count(); i++) {
        warpfft_opt_desc d;
        describe(i, &d);
        char buf[9][48];
        values v;
        values_of(&d, buf, &v);
        for (int k = 0; k < 4 && v.good[k]; k++) {
            warpfft_opts o = defaults(), before = o;
            CHECK(warpfft_opts_set(&o, d.name, v.good[k]) == WARPFFT_SUCCESS, "%s = %s: %s", d.name,
                  v.good[k], warpfft_last_error());
            if (d.offset < 0) {
                CHECK(memcmp(&o, &before, sizeof o) == 0, "%s changes nothing", d.name);
                continue;
            }
            char got[48];
            field_text(&o, &d, got, sizeof got);
            CHECK(strcmp(got, v.good[k]) == 0, "%s = %s: the field reads %s", d.name, v.good[k],
                  got);
        }
        for (int k = 0; k < 5 && v.bad[k]; k++) {
            warpfft_opts o = defaults(), before = o;
            int st = warpfft_opts_set(&o, d.name, v.bad[k]);
            char msg[512];
            snprintf(msg, sizeof msg, "%s", warpfft_last_error());
            CHECK(st == WARPFFT_ERR_INVALID_ARG && memcmp(&o, &before, sizeof o) == 0 &&
                      strncmp(msg, "opts.", 5) == 0 && strstr(msg, d.name),
                  "%s = \"%s\" refused: %d %s", d.name, v.bad[k], st, msg);
            /* the same value written into the struct: plan creation's message is the same
             * (values the field can hold, and numbers only) */
            int numeric = v.bad[k][0] && strcmp(v.bad[k], "1.0") && strcmp(v.bad[k], "1.5x");
            int fits = !strstr(v.bad[k], "2147483648") &&
                       !strstr(v.bad[k], "9223372036854775808") &&
                       !strstr(v.bad[k], "18446744073709551616") &&
                       !(d.type == WARPFFT_OPT_UINT64 && v.bad[k][0] == '-');
            if (d.offset < 0 || !numeric || !fits)
                continue;
            warpfft_opts in = defaults();
            poke(&in, &d, v.bad[k]);
            warpfft_plan_info info;
            st = warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &in, &info);
            CHECK(st == WARPFFT_ERR_INVALID_ARG && strcmp(warpfft_last_error(), msg) == 0,
                  "%s = %s: plan_params says \"%s\", the setter \"%s\"", d.name, v.bad[k],
                  warpfft_last_error(), msg);
        }
    }
    /* messages as the docs show them */
    warpfft_opts o = defaults();
    CHECK(warpfft_opts_set(&o, "upsampfac", "1.2") == WARPFFT_ERR_INVALID_ARG &&
              strcmp(warpfft_last_error(),
                     "opts.upsampfac = 1.2; must be 0 (chosen per plan) or in [1.25, 3]") == 0,
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(&o, "gpu_method", "7") == WARPFFT_ERR_INVALID_ARG &&
              strcmp(warpfft_last_error(),
                     "opts.method = 7; must be 0 (AUTO), 1 (GM), 2 (SM) or 3 (OD)") == 0,
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(&o, "modeord", "abc") == WARPFFT_ERR_INVALID_ARG &&
              strcmp(warpfft_last_error(), "opts.modeord = \"abc\"; must be an integer") == 0,
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(&o, "gpu_kerevalmeth", "2") == WARPFFT_ERR_INVALID_ARG &&
              strcmp(warpfft_last_error(), "opts.gpu_kerevalmeth = 2; must be 0 or 1") == 0,
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(&o, "nope", "1") == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "unknown option \"nope\""),
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(NULL, "modeord", "1") == WARPFFT_ERR_INVALID_ARG, "NULL opts");
    CHECK(warpfft_opts_set(&o, NULL, "1") == WARPFFT_ERR_INVALID_ARG, "NULL name");
    CHECK(warpfft_opts_set(&o, "modeord", NULL) == WARPFFT_ERR_INVALID_ARG, "NULL value");
    o.struct_size = (uint32_t)offsetof(warpfft_opts, deterministic); /* an older header's */
    CHECK(warpfft_opts_set(&o, "deterministic", "1") == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "has no field deterministic"),
          "%s", warpfft_last_error());
    CHECK(warpfft_opts_set(&o, "modeord", "1") == 0 && o.modeord == 1, "older struct, old field");
}

/* The sizes plan creation takes are the offsets of the appended rows and this header's size
 * up: an opts of any of those sizes is accepted, with the fields past it at their default. */
void test_table_sizes(void) {
    const int64_t n[3] = {32, 16, 8};
    int appended = 0, history = 0;
    for (size_t i = 0; i < warpfft_opt_count(); i++) {
        warpfft_opt_desc d;
        describe(i, &d);
        if (d.offset < 0)
            continue;
        warpfft_opts o = defaults();
        o.struct_size = (uint32_t)d.offset;
        warpfft_plan_info info;
        int st = warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, &info);
        if (st == 0) {
            appended++;
            /* the headers that had them: before spreadinterponly, points_hint, deterministic */
            history += d.offset == 48 || d.offset == 56 || d.offset == 64;
        } else {
            CHECK(st == WARPFFT_ERR_INVALID_ARG && strstr(warpfft_last_error(), "struct_size"),
                  "size %d: %s", d.offset, warpfft_last_error());
        }
    }
    CHECK(history == 3 && appended >= 3,
          "the older sizes accepted (spreadinterponly, points_hint, deterministic began "
          "versions, and any option since): %d of them, %d in all",
          history, appended);
    warpfft_opts o = defaults();
    o.struct_size = 8;
    warpfft_plan_info info;
    CHECK(warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, &info) ==
                  WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "expected 48, 56, 64, ") &&
              strstr(warpfft_last_error(), "..4096 (initialise opts with warpfft_opts_default)"),
          "%s", warpfft_last_error());
}
