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

/* Spread/interp only has no FFT, so no half spectrum: refused, whatever the type; types 1
 * and 2 of the NUFFT take it. */
void test_real_refusals(void) {
    const int64_t n[3] = {64, 48, 1};
    warpfft_opts o = defaults();
    o.real_data = 1;
    o.spreadinterponly = 1;
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "opts.spreadinterponly = 1", 1, 2, n, &o);
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "real_data = 1", 2, 1, n, &o);
    o.spreadinterponly = 0;
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, n, &o);
    EXPECT(WARPFFT_SUCCESS, "", 2, 3, n, &o);
    warpfft_plan_info info;
    CHECK(warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, &info) == 0 && info.real_data == 1,
          "info.real_data %d", info.real_data);
    o.real_data = 0;
    CHECK(warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, &info) == 0 && info.real_data == 0,
          "complex: info.real_data %d", info.real_data);
}

static wf_params make(int type, int dim, const int64_t n[3], int64_t ntransf, double tol, int prec,
                      int method, int real) {
    warpfft_opts o = defaults();
    o.upsampfac = 2.0;
    o.method = method;
    o.real_data = real;
    wf_params p;
    memset(&p, 0, sizeof p);
    int st = wf_params_make(type, dim, n, ntransf, tol, prec, &o, WF_SHARED_OPTIN_SM90, &p);
    CHECK(st == 0, "type %d %dD real %d: %s", type, dim, real, warpfft_last_error());
    return p;
}

/* A real plan's sizes: the same grid, kernel and method as the complex plan of its request;
 * the real grid (reals, its end at 256 bytes) and the half spectrum in one buffer; the half
 * modes; the value size in every shared-memory size (kernels/ABI.md's real modules). */
void test_real_sizes(void) {
    const int64_t n2[3] = {64, 48, 1}, n3[3] = {24, 17, 10};
    for (int prec = WARPFFT_F32; prec <= WARPFFT_F64; prec++)
        for (int type = 1; type <= 2; type++) {
            wf_params c = make(type, 2, n2, 3, 1e-4, prec, WARPFFT_METHOD_AUTO, 0);
            wf_params r = make(type, 2, n2, 3, 1e-4, prec, WARPFFT_METHOD_AUTO, 1);
            size_t rb = prec == WARPFFT_F64 ? 8 : 4;
            CHECK(r.real_data == 1 && c.real_data == 0 && r.width == c.width &&
                      r.n_fine[0] == c.n_fine[0] && r.n_fine[1] == c.n_fine[1] &&
                      r.method == c.method && r.bin_size[0] == c.bin_size[0],
                  "type %d %s: real and complex choose alike (width %d %d, method %d %d)", type,
                  wf_prec_name(prec), r.width, c.width, r.method, c.method);
            CHECK(wf_value_bytes(&r) == rb && wf_value_bytes(&c) == 2 * rb, "value bytes");
            CHECK(wf_fk_prod(&r) == 33 * 48 && wf_fk_prod(&c) == 64 * 48, "fk %lld",
                  (long long)wf_fk_prod(&r));
            int64_t half = (r.n_fine[0] / 2 + 1) * r.n_fine[1];
            size_t real_end = ((size_t)r.fine_prod * 3 * rb + 255) / 256 * 256;
            CHECK(wf_half_prod(&r) == half && wf_half_prod(&c) == 0 &&
                      wf_params_half_offset(&r) == real_end &&
                      wf_params_grid_bytes(&r) == real_end + (size_t)half * 3 * 2 * rb &&
                      wf_params_grid_bytes(&c) == (size_t)c.fine_prod * 3 * 2 * rb,
                  "grid bytes %zu (half at %zu)", wf_params_grid_bytes(&r),
                  wf_params_half_offset(&r));
            CHECK(wf_params_fixed_bytes(&c) - wf_params_fixed_bytes(&r) ==
                      wf_params_grid_bytes(&c) - wf_params_grid_bytes(&r),
                  "fixed bytes differ by the grids' only");
            /* SM's tile: values, or the fixed-point words of 1D/2D f32 spreading (8 per real) */
            if (r.method == WARPFFT_METHOD_SM && wf_params_smr_nr(&r) == 0)
                CHECK(r.tile_bytes * 2 == c.tile_bytes &&
                          wf_sm_cell_bytes(&r) * 2 == wf_sm_cell_bytes(&c),
                      "type %d %s: SM tile %zu, complex %zu", type, wf_prec_name(prec),
                      r.tile_bytes, c.tile_bytes);
        }
    /* the tile in registers (3D f64 spreading at w 7..10): its point batches with sizeof(T) */
    wf_params r = make(1, 3, n3, 1, 1e-6, WARPFFT_F64, WARPFFT_METHOD_SM, 1);
    int nr = wf_params_smr_nr(&r);
    CHECK(nr > 0 && r.tile_bytes == wf_smr_batch_bytes(3, WARPFFT_F64, 1, r.width) &&
              r.tile_bytes < wf_smr_batch_bytes(3, WARPFFT_F64, 0, r.width),
          "register tile: nr %d, %zu bytes", nr, r.tile_bytes);
    /* ABI.md: NB (NRP 8 + 32 + 2 8 + W 8 + 16 d + W 8); at w 10 NB = 32, NRP = 14 (the
     * complex module's 14848 bytes: test_params_bins.c): 32 (112 + 32 + 16 + 80 + 48 + 80) */
    CHECK(wf_smr_batch_bytes(3, WARPFFT_F64, 1, 10) == 11776 &&
              wf_smr_batch_bytes(3, WARPFFT_F64, 0, 10) == 14848,
          "register tile w 10: %zu bytes real", wf_smr_batch_bytes(3, WARPFFT_F64, 1, 10));
    /* OD: a warp's tile of reals and the stage with sizeof(T): 3D f32 w7 tile 8^3 pitch 8 */
    const int32_t t3[3] = {8, 8, 8}, t2[3] = {32, 16, 1};
    CHECK(wf_od_warp_bytes(3, WARPFFT_F32, 1, 7, t3, 8) == 2048 + 32 * (4 + 16 + 3 * 7 * 4) + 672,
          "OD 3D f32r w7: %zu", wf_od_warp_bytes(3, WARPFFT_F32, 1, 7, t3, 8));
    CHECK(wf_od_warp_bytes(2, WARPFFT_F64, 1, 16, t2, 48) ==
              (size_t)48 * 16 * 8 + 32 * (8 + 16 + 2 * 16 * 8) + 672,
          "OD 2D f64r w16");
    /* the row pitch counts values of 128-byte wavefronts: 32 reals f32, 16 f64 */
    int32_t tile[3], bins[3], nw, pitch;
    wf_od_shape(2, WARPFFT_F32, 1, 7, tile, bins, &nw, &pitch);
    CHECK(pitch >= tile[0] && (pitch - 7) % 32 == 0, "2D f32r w7 pitch %d (tile %d)", pitch,
          tile[0]);
    wf_od_shape(2, WARPFFT_F64, 1, 11, tile, bins, &nw, &pitch);
    CHECK(pitch >= tile[0] && (pitch - 11) % 16 == 0, "2D f64r w11 pitch %d (tile %d)", pitch,
          tile[0]);
    wf_params od = make(1, 3, n3, 2, 1e-5, WARPFFT_F32, WARPFFT_METHOD_OD, 1);
    CHECK(od.method == WARPFFT_METHOD_OD &&
              od.tile_bytes == (size_t)od.od_nwarps * wf_od_warp_bytes(3, WARPFFT_F32, 1, od.width,
                                                                       od.od_tile, od.od_pitch),
          "OD plan: %zu bytes, %d warps", od.tile_bytes, od.od_nwarps);
}
