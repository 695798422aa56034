/*
 * fuzz_opts.c — libFuzzer target: the option table's setter (params/options.c,
 * warpfft_opts_set) on text it parses. The input is a sequence of settings, each an option name
 * (a row's name or alias picked by index, or any bytes) and a value (any bytes, often a number
 * near a row's ends), applied to one record in turn. Every setting must return WARPFFT_SUCCESS
 * or WARPFFT_ERR_INVALID_ARG, with a message exactly when it fails; a refused one must leave the
 * record byte for byte as it was; an accepted one must leave a record plan creation's checks
 * take (warpfft_plan_params refuses no field of it as the table would: its checks and the
 * setter's are one table),
 * and a name must find the row it set (warpfft_opt_find). Any other outcome aborts, as do the
 * sanitizers. c_core/fuzz/run.sh builds it with the params stage; corpus/fuzz_opts holds the
 * seeds (make_seeds.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"
#include "warpfft.h"

static void bug(const char *what, const char *name, const char *value) {
    fprintf(stderr, "fuzz_opts: %s (name \"%s\", value \"%s\": %s)\n", what, name, value,
            warpfft_last_error());
    abort();
}

/* Up to len - 1 bytes of text from the input (NUL-terminated; a NUL ends it early). */
static void take_text(reader *r, char *buf, size_t len) {
    size_t n = take(r, 1) % len;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)take(r, 1);
    buf[n] = '\0';
}

/* v in decimal (past int64 at the ends of an int64 row). */
static void i128_text(__int128 v, char *buf, size_t len) {
    char digits[48];
    int n = 0, neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    do
        digits[n++] = (char)('0' + (int)(u % 10));
    while ((u /= 10) != 0);
    size_t k = 0;
    if (neg && k + 1 < len)
        buf[k++] = '-';
    while (n > 0 && k + 1 < len)
        buf[k++] = digits[--n];
    buf[k] = '\0';
}

/* A value: a number near a row's ends (as text), else any bytes. */
static void take_value(reader *r, const warpfft_opt_desc *d, char *buf, size_t len) {
    uint8_t how = (uint8_t)take(r, 1);
    long long delta = (long long)(how % 5) - 2; /* -2..2 */
    if (how < 80 && d->type == WARPFFT_OPT_FLOAT64)
        snprintf(buf, len, "%.17g", (how & 1 ? d->float_max : d->float_min) + delta * 1e-12);
    else if (how < 80 && d->type != WARPFFT_OPT_UINT64)
        i128_text((__int128)(how & 1 ? d->int_max : d->int_min) + delta, buf, len);
    else if (how < 120)
        snprintf(buf, len, "%lld", (long long)take(r, 8));
    else
        take_text(r, buf, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    warpfft_opts o;
    warpfft_opts_default(&o);
    size_t rows = warpfft_opt_count();
    for (int step = 0; step < 16 && r.n; step++) {
        char name[48], value[96];
        warpfft_opt_desc d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        uint8_t which = (uint8_t)take(&r, 1);
        if (which < 240) {
            if (warpfft_opt_describe(which % rows, &d) != WARPFFT_SUCCESS)
                bug("describe failed", "", "");
            const char *alias = d.aliases[0] && (which & 1) ? d.aliases : d.name;
            snprintf(name, sizeof name, "%.*s", (int)strcspn(alias, " "), alias);
        } else {
            take_text(&r, name, sizeof name);
        }
        take_value(&r, &d, value, sizeof value);
        warpfft_opts before = o;
        warpfft_status st = warpfft_opts_set(&o, name, value);
        const char *msg = warpfft_last_error();
        if (st != WARPFFT_SUCCESS && st != WARPFFT_ERR_INVALID_ARG)
            bug("a status other than SUCCESS or INVALID_ARG", name, value);
        if ((st != WARPFFT_SUCCESS) != (msg[0] != '\0'))
            bug("a message without a failure, or a failure without one", name, value);
        if (st != WARPFFT_SUCCESS) {
            if (memcmp(&before, &o, sizeof o) != 0)
                bug("a refused setting changed the record", name, value);
            continue;
        }
        size_t at;
        if (warpfft_opt_find(name, &at) != WARPFFT_SUCCESS)
            bug("a setting accepted for a name warpfft_opt_find does not know", name, value);
        const int64_t n[3] = {64, 1, 1};
        warpfft_plan_info info;
        st = warpfft_plan_params(1, 1, n, 1, 1e-3, WARPFFT_F64, &o, &info);
        /* the table's refusals read "opts.<name> = <value>; must be ..." (combinations of
         * fields, such as deterministic with GM, are refused in other words) */
        const char *pm = warpfft_last_error();
        if (st == WARPFFT_ERR_INVALID_ARG && strncmp(pm, "opts.", 5) == 0 &&
            strstr(pm, "; must be ") && !strstr(pm, " with "))
            bug("plan creation refused a field the setter accepted", name, value);
    }
    return 0;
}
