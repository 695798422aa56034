/*
 * test_params_det.c — the deterministic option and the OD method (bins.c, params.c): the field
 * (default, range, the struct sizes accepted around it), AUTO's choice with and without it
 * (OD for deterministic type-1 spreading only, never otherwise), the OD launch shape per
 * (dim, precision) and its shared memory, the refusals (OD for type 2, GM/SM for deterministic
 * type 1), bins from opts or coarsened to stay addressable, spread/interp only, plan_info.
 */
#include "test_params.h"

static const warpfft_opts S2 = {.struct_size = sizeof(warpfft_opts), .upsampfac = 2.0};

/* Runs warpfft_plan_params and checks status and that the message contains `word`. */
static void expect(int status, const char *word, int type, int dim, const int64_t *n, double tol,
                   int prec, const warpfft_opts *o, int line) {
    warpfft_plan_info info;
    int st = warpfft_plan_params(type, dim, n, 1, tol, (warpfft_precision)prec, o, &info);
    check_status_msg(__FILE__, line, st, status, word);
}
#define EXPECT(status, word, type, dim, n, tol, prec, o)                                           \
    expect(status, word, type, dim, n, tol, prec, o, __LINE__)

/* The field: default 0, 0 or 1 only, appended after points_hint (opts of the size before it
 * still accepted, reading 0), a newer header's larger struct with it set. */
void test_deterministic_field(void) {
    const int64_t n[3] = {64, 48, 1};
    warpfft_opts o = defaults();
    CHECK(o.deterministic == 0, "default 0");
    CHECK(offsetof(warpfft_opts, deterministic) == 64 && offsetof(warpfft_opts, real_data) == 72,
          "deterministic at %zu, the next appended field at %zu",
          offsetof(warpfft_opts, deterministic), offsetof(warpfft_opts, real_data));
    o.deterministic = 2;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "opts.deterministic = 2; must be 0 or 1", 1, 2, n, 1e-5,
           WARPFFT_F32, &o);
    o.deterministic = -1;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "deterministic = -1", 2, 2, n, 1e-5, WARPFFT_F32, &o);
    wf_params p;
    o = defaults();
    o.deterministic = 1; /* ignored: the header before it ends at points_hint */
    o.struct_size = (uint32_t)offsetof(warpfft_opts, deterministic);
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.deterministic == 0 && p.method == WARPFFT_METHOD_SM,
          "the previous header's opts: %s", warpfft_last_error());
    o.struct_size = (uint32_t)offsetof(warpfft_opts, deterministic) + 2; /* no such header */
    EXPECT(WARPFFT_ERR_INVALID_ARG, "struct_size = 66", 1, 2, n, 1e-5, WARPFFT_F32, &o);
    struct {
        warpfft_opts o;
        unsigned char tail[16];
    } big;
    memset(&big, 0, sizeof big);
    big.o = defaults();
    big.o.struct_size = (uint32_t)sizeof big;
    big.o.deterministic = 1;
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &big.o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.deterministic == 1 && p.method == WARPFFT_METHOD_OD,
          "a newer header's opts: %s", warpfft_last_error());
}

/* Every (type, dim, precision, tol) without the option: AUTO never picks OD (3-4x slower than
 * SM on the H100); with it, type 1 always spreads with OD, type 2 keeps its method, bins and
 * kernel (its interpolation is deterministic already). */
void test_deterministic_auto(void) {
    const int64_t ns[3][3] = {{100000, 1, 1}, {512, 384, 1}, {64, 48, 40}};
    const double tols[2][3] = {{1e-2, 1e-4, 1e-6}, {1e-3, 1e-9, 1e-13}};
    for (int dim = 1; dim <= 3; dim++)
        for (int f64 = 0; f64 < 2; f64++)
            for (int i = 0; i < 3; i++)
                for (int type = 1; type <= 2; type++) {
                    int prec = f64 ? WARPFFT_F64 : WARPFFT_F32;
                    double tol = tols[f64][i];
                    warpfft_opts o = defaults();
                    wf_params a, d;
                    int sa = wf_params_make(type, dim, ns[dim - 1], 2, tol, prec, &o,
                                            WF_SHARED_OPTIN_SM90, &a);
                    o.deterministic = 1;
                    int sd = wf_params_make(type, dim, ns[dim - 1], 2, tol, prec, &o,
                                            WF_SHARED_OPTIN_SM90, &d);
                    if (!CHECK(sa == 0 && sd == 0, "type %d %dD f%d tol %g: %s", type, dim,
                               f64 ? 64 : 32, tol, warpfft_last_error()))
                        continue;
                    CHECK(a.method != WARPFFT_METHOD_OD && a.deterministic == 0,
                          "type %d %dD tol %g: AUTO picked %d without the option", type, dim, tol,
                          a.method);
                    CHECK(d.deterministic == 1 && a.width == d.width &&
                              a.upsampfac == d.upsampfac && a.n_fine[0] == d.n_fine[0],
                          "type %d %dD tol %g: the option changed the kernel or the grid", type,
                          dim, tol);
                    if (type == 1)
                        CHECK(d.method == WARPFFT_METHOD_OD && d.od_nwarps >= 1 &&
                                  d.od_pitch >= d.od_tile[0] && d.tile_bytes > 0,
                              "type 1 %dD f%d tol %g deterministic: method %d", dim, f64 ? 64 : 32,
                              tol, d.method);
                    else
                        CHECK(d.method == a.method && d.bin_size[0] == a.bin_size[0] &&
                                  d.bin_size[1] == a.bin_size[1] && d.tile_bytes == a.tile_bytes,
                              "type 2 %dD tol %g: deterministic changed method %d -> %d", dim, tol,
                              a.method, d.method);
                }
}

/* The OD shape of each (dim, precision) at the suite-B widths (bins.c's table), its pitch rule,
 * the warp's shared memory (ABI.md's WF_OD_STAGE_BYTES) and the block's. */
void test_od_shapes(void) {
    struct {
        int dim, prec;
        int64_t n[3];
        double tol;
        int32_t tile[3], bins[3], nw, pitch;
    } cases[] = {
        /* B2 2D f32 1024^2 1e-5 at sigma 2: w 7, pitch 64 + (7 - 64) mod 16 = 71 */
        {2, WARPFFT_F32, {1024, 1024, 1}, 1e-5, {64, 16, 1}, {32, 8, 1}, 1, 71},
        /* B6 2D f64 1e-9: w 12, pitch 32 + 4 = 36 */
        {2, WARPFFT_F64, {1024, 1024, 1}, 1e-9, {32, 16, 1}, {16, 8, 1}, 2, 36},
        /* B4 3D f32 128^3 1e-5: 8x8x8 unpadded, 8 warps */
        {3, WARPFFT_F32, {128, 128, 128}, 1e-5, {8, 8, 8}, {4, 4, 4}, 8, 8},
        /* B7 3D f64 1e-9: 8x8x8, 1 warp */
        {3, WARPFFT_F64, {128, 128, 128}, 1e-9, {8, 8, 8}, {4, 4, 4}, 1, 8},
        {1, WARPFFT_F32, {1000000, 1, 1}, 1e-5, {1024, 1, 1}, {256, 1, 1}, 1, 1024},
        {1, WARPFFT_F64, {1000000, 1, 1}, 1e-9, {512, 1, 1}, {128, 1, 1}, 8, 512},
    };
    warpfft_opts o = S2;
    o.deterministic = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wf_params p;
        int st = wf_params_make(1, cases[i].dim, cases[i].n, 1, cases[i].tol, cases[i].prec, &o,
                                WF_SHARED_OPTIN_SM90, &p);
        if (!CHECK(st == 0, "case %zu: %s", i, warpfft_last_error()))
            continue;
        int same = p.method == WARPFFT_METHOD_OD && p.od_nwarps == cases[i].nw &&
                   p.od_pitch == cases[i].pitch;
        for (int d = 0; d < 3; d++)
            same &= p.od_tile[d] == cases[i].tile[d] && p.bin_size[d] == cases[i].bins[d];
        CHECK(same, "case %zu (%dD, w %d): tile {%d, %d, %d} bins {%d, %d, %d} warps %d pitch %d",
              i, cases[i].dim, p.width, (int)p.od_tile[0], (int)p.od_tile[1], (int)p.od_tile[2],
              (int)p.bin_size[0], (int)p.bin_size[1], (int)p.bin_size[2], (int)p.od_nwarps,
              (int)p.od_pitch);
        size_t warp = wf_od_warp_bytes(p.dim, p.precision, 0, p.width, p.od_tile, p.od_pitch);
        CHECK(p.tile_bytes == (size_t)p.od_nwarps * warp, "case %zu: block %zu bytes", i,
              p.tile_bytes);
        CHECK(p.n_bins[0] == (p.n_fine[0] + p.bin_size[0] - 1) / p.bin_size[0],
              "case %zu: bins cover the grid", i);
    }
    /* the formula by hand: 3D f32 w7, 8x8x8 tile, pitch 8: 512 cells x 8 bytes, staging
     * 32 (8 + 16 + 3 * 7 * 4) + 672 */
    const int32_t t3[3] = {8, 8, 8}, t2[3] = {64, 16, 1}, t1[3] = {1000, 1, 1};
    CHECK(wf_od_warp_bytes(3, WARPFFT_F32, 0, 7, t3, 8) == 4096 + 32 * 108 + 672, "3D f32 w7: %zu",
          wf_od_warp_bytes(3, WARPFFT_F32, 0, 7, t3, 8));
    /* 2D f64 w16, pitch 71: 71 x 16 x 16 bytes, staging 32 (16 + 16 + 2 * 16 * 8) + 672 */
    CHECK(wf_od_warp_bytes(2, WARPFFT_F64, 0, 16, t2, 71) == 71 * 16 * 16 + 32 * 288 + 672,
          "2D f64 w16");
    /* 1D f32, 1000 cells: 8000 bytes rounded to 16 */
    CHECK(wf_od_warp_bytes(1, WARPFFT_F32, 0, 3, t1, 1000) == 8000 + 32 * 36 + 672, "1D f32 w3");
    /* the pitch at every width of 2D: = w mod 16 (f32) / 8 (f64), never below the tile */
    for (int w = 2; w <= 16; w++) {
        int32_t tile[3], bins[3], nw, pitch;
        wf_od_shape(2, w <= 12 ? WARPFFT_F32 : WARPFFT_F64, 0, w, tile, bins, &nw, &pitch);
        int m = w <= 12 ? 16 : 8;
        CHECK(pitch >= tile[0] && pitch < tile[0] + m && (pitch - w) % m == 0, "w %d: pitch %d", w,
              (int)pitch);
    }
}

/* The requests no method serves, OD asked for explicitly, and a device with less shared
 * memory: fewer warps per block, then a refusal naming what a warp needs. */
void test_od_requests(void) {
    const int64_t n2[3] = {200, 160, 1}, n1[3] = {5000, 1, 1}, n3[3] = {20, 20, 20};
    warpfft_opts o = defaults();
    o.method = WARPFFT_METHOD_OD;
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "opts.method = 3 (OD): output-driven is a spreading method", 2,
           2, n2, 1e-5, WARPFFT_F32, &o);
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "type-2 plan", 2, 1, n1, 1e-9, WARPFFT_F64, &o);
    wf_params p;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_OD && p.deterministic == 0,
          "OD without the option: %s", warpfft_last_error());
    o = defaults();
    o.deterministic = 1;
    o.method = WARPFFT_METHOD_GM;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "opts.deterministic = 1 with opts.method = 1 (GM)", 1, 2, n2,
           1e-5, WARPFFT_F32, &o);
    o.method = WARPFFT_METHOD_SM;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "method = 2 (SM): that method spreads with atomics", 1, 3, n3,
           1e-5, WARPFFT_F32, &o);
    /* type 2 interpolates deterministically with either */
    EXPECT(WARPFFT_SUCCESS, "", 2, 3, n3, 1e-5, WARPFFT_F32, &o);
    o.method = WARPFFT_METHOD_GM;
    EXPECT(WARPFFT_SUCCESS, "", 2, 2, n2, 1e-5, WARPFFT_F32, &o);
    /* 48 KiB of shared memory (the default without opt-in): 1D f64 keeps 2 of its 8 warps */
    o = defaults();
    o.deterministic = 1;
    CHECK(wf_params_make(1, 1, n1, 1, 1e-9, WARPFFT_F64, &o, 48 * 1024, &p) == 0 &&
              p.od_nwarps == 2 && p.tile_bytes <= 48 * 1024 - WF_SM_STATIC_RESERVE,
          "48 KiB: %d warps, %zu bytes: %s", (int)p.od_nwarps, p.tile_bytes, warpfft_last_error());
    wf_params_make(1, 1, n1, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p);
    CHECK(p.od_nwarps == 8, "the H100's: 8 warps");
    wf_params q;
    int st = wf_params_make(1, 1, n1, 1, 1e-9, WARPFFT_F64, &o, WF_SM_STATIC_RESERVE + 4096, &q);
    CHECK(st == WARPFFT_ERR_UNSUPPORTED && strstr(warpfft_last_error(), "method OD: a warp's tile"),
          "a warp that cannot fit: %d %s", st, warpfft_last_error());
}

/* Bins: opts.bin_size overrides the shape's (the kernel gathers from bins of any shape); the
 * default ones coarsen until they number at most INT32_MAX (where GM's 32x32 refuses). */
void test_od_bins(void) {
    const int64_t n3[3] = {40, 40, 40}, big2[3] = {(int64_t)1 << 20, (int64_t)1 << 20, 1};
    warpfft_opts o = S2;
    o.deterministic = 1;
    o.bin_size[0] = 16;
    o.bin_size[1] = 2;
    wf_params p;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.bin_size[0] == 16 && p.bin_size[1] == 2 && p.bin_size[2] == 4 && p.od_tile[0] == 8,
          "opts.bin_size: {%d, %d, %d}", (int)p.bin_size[0], (int)p.bin_size[1],
          (int)p.bin_size[2]);
    o = S2;
    o.deterministic = 1;
    CHECK(wf_params_make(1, 2, big2, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins <= INT32_MAX && p.bin_size[0] == 128 && p.bin_size[1] == 32,
          "2^42 cells: bins {%d, %d}, %lld of them: %s", (int)p.bin_size[0], (int)p.bin_size[1],
          (long long)p.nbins, warpfft_last_error());
    o.bin_size[0] = o.bin_size[1] = 8; /* the user's: kept, and refused as too many */
    EXPECT(WARPFFT_ERR_BAD_SIZE, "spreading bins", 1, 2, big2, 1e-5, WARPFFT_F32, &o);
    /* per-bin arrays: bin counts and starts only (no subproblems) */
    o = S2;
    o.deterministic = 1;
    wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p);
    size_t grid = (size_t)p.fine_prod * 8, fac = 0;
    for (int d = 0; d < 3; d++)
        fac += (size_t)(p.n_modes[d] / 2 + 1) * 4;
    CHECK(wf_params_fixed_bytes(&p) ==
              grid + fac + (size_t)p.nbins * 2 * 8 + (size_t)wf_params_scan_tiles(&p) * 16 + 32,
          "fixed bytes %zu", wf_params_fixed_bytes(&p));
}

/* Spread/interp only: deterministic (or OD) spreading runs OD on fk, interpolation GM; and
 * plan_info reports the option and the method. */
void test_deterministic_info(void) {
    const int64_t n[3] = {50, 37, 1};
    warpfft_opts o = defaults();
    o.spreadinterponly = 1;
    o.deterministic = 1;
    wf_params p;
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_OD && p.n_fine[0] == 50,
          "spreadinterponly type 1: method %d: %s", p.method, warpfft_last_error());
    CHECK(wf_params_make(2, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM && p.deterministic == 1,
          "spreadinterponly type 2: method %d", p.method);
    o.deterministic = 0;
    o.method = WARPFFT_METHOD_OD;
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_OD,
          "spreadinterponly with method OD");
    warpfft_plan_info info;
    o = defaults();
    o.deterministic = 1;
    CHECK(warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, &info) == 0 &&
              info.deterministic == 1 && info.method == WARPFFT_METHOD_OD &&
              info.bin_size[0] == 32 && info.bin_size[1] == 8,
          "plan_info: deterministic %d method %d", info.deterministic, info.method);
    CHECK(warpfft_plan_params(1, 2, n, 1, 1e-5, WARPFFT_F32, NULL, &info) == 0 &&
              info.deterministic == 0 && info.method == WARPFFT_METHOD_SM,
          "plan_info default");
}
