/*
 * test_params_real.c — opts.real_data (real strengths, half modes): the field (default 0, 0 or 1,
 * appended after points_width), and the requests that refuse it.
 */
#include "test_params.h"

static void expect(int status, const char *word, int type, int dim, const int64_t *n,
                   const warpfft_opts *o, int line) {
    warpfft_plan_info info;
    int st = warpfft_plan_params(type, dim, n, 1, 1e-5, WARPFFT_F32, o, &info);
    check_status_msg(__FILE__, line, st, status, word);
}

#define EXPECT(status, word, type, dim, n, o) expect(status, word, type, dim, n, o, __LINE__)

/* The field: default 0, 0 or 1 only, appended after points_width (an opts of the size before
 * it still accepted, reading 0), a newer header's larger struct with it set. */
void test_real_field(void) {
    const int64_t n[3] = {64, 48, 1};
    warpfft_opts o = defaults();
    CHECK(o.real_data == 0, "default 0");
    CHECK(offsetof(warpfft_opts, real_data) == 72 && sizeof(warpfft_opts) == 80,
          "real_data at %zu, struct %zu bytes", offsetof(warpfft_opts, real_data),
          sizeof(warpfft_opts));
    o.real_data = 2;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "opts.real_data = 2; must be 0 or 1", 1, 2, n, &o);
    o.real_data = -1;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "opts.real_data = -1", 2, 2, n, &o);
    CHECK(warpfft_opts_set(&o, "real_data", "3") == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "opts.real_data = 3; must be 0 or 1"),
          "set by name: %s", warpfft_last_error());
    o = defaults();
    o.real_data = 1; /* ignored: the header before it ends at points_width */
    o.struct_size = (uint32_t)offsetof(warpfft_opts, real_data);
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, n, &o);
    o.struct_size = (uint32_t)offsetof(warpfft_opts, real_data) + 4; /* no such header */
    EXPECT(WARPFFT_ERR_INVALID_ARG, "struct_size = 76", 1, 2, n, &o);
}

/* Spread/interp only has no FFT, so no half spectrum: refused, whatever the type. */
void test_real_refusals(void) {
    const int64_t n[3] = {64, 48, 1};
    warpfft_opts o = defaults();
    o.real_data = 1;
    o.spreadinterponly = 1;
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "opts.spreadinterponly = 1", 1, 2, n, &o);
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "real_data = 1", 2, 1, n, &o);
    o.spreadinterponly = 0;
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "not yet implemented", 1, 2, n, &o);
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "not yet implemented", 2, 3, n, &o);
}
