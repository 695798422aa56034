/*
 * test_params_bins.c — bins and method (bins.c, params.c): shared-memory tiles and their
 * shrinking, the method and bin sizes chosen per shape, the bin scan's tile sums, the fallback
 * to GM, the per-dimension fine-grid limits, and the reference cases' width, beta and grid.
 */
#include "test_params.h"

/* Bins, methods and grid sizes of upsampfac 2 (the default before it was chosen per plan):
 * what these checks were written for. */
static const warpfft_opts S2 = {.struct_size = sizeof(warpfft_opts), .upsampfac = 2.0};

void test_bins(void) {
    int32_t bs[3] = {16, 16, 2};
    /* f64 w 16: 32*32*18*16 = 294912 > 227 KiB -> the largest edge halves once */
    CHECK(wf_tile_bytes(3, bs, 16, 16) == 294912, "tile bytes %zu", wf_tile_bytes(3, bs, 16, 16));
    CHECK(wf_fit_sm_bins(3, bs, 16, 16, WF_SHARED_OPTIN_SM90) && bs[0] == 8 && bs[1] == 16 &&
              bs[2] == 2,
          "shrunk to {%d, %d, %d}", (int)bs[0], (int)bs[1], (int)bs[2]);
    int32_t b2[3] = {32, 32, 1};
    CHECK(wf_fit_sm_bins(2, b2, 7, 8, 3000) && b2[0] == 8 && b2[1] == 8,
          "2D shrink to {%d, %d}: %zu bytes", (int)b2[0], (int)b2[1], wf_tile_bytes(2, b2, 7, 8));
    int32_t b3[3] = {32, 32, 1};
    CHECK(!wf_fit_sm_bins(2, b3, 16, 16, 1000) && b3[0] == 2 && b3[1] == 2, "cannot fit");
    int32_t b1[3] = {1024, 1, 1};
    CHECK(wf_tile_bytes(1, b1, 7, 8) == (1024 + 8) * 8, "1D tile, pad (w+1)/2");

    const int64_t n2[3] = {1024, 1024, 1}, n3[3] = {128, 128, 128}, n1[3] = {1000000, 1, 1};
    warpfft_plan_info in;
    warpfft_plan_params(1, 2, n2, 1, 1e-5, WARPFFT_F32, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 32 && in.bin_size[1] == 32 &&
              in.bin_size[2] == 1 && in.width == 7 && in.n_fine[0] == 2048 && in.n_fine[2] == 1,
          "2D t1 f32: method %d bins %d %d %d", in.method, in.bin_size[0], in.bin_size[1],
          in.bin_size[2]);
    warpfft_plan_params(2, 2, n2, 1, 1e-5, WARPFFT_F32, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 32, "2D t2: SM");
    /* 2D f32 spreading keeps a fixed-point tile: 16 bytes per cell; interpolation 8 */
    wf_params p;
    CHECK(wf_params_make(1, 2, n2, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tile_bytes == 40 * 40 * 16,
          "2D t1 f32 tile %zu bytes", p.tile_bytes);
    CHECK(wf_params_make(2, 2, n2, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tile_bytes == 40 * 40 * 8,
          "2D t2 f32 tile %zu bytes", p.tile_bytes);
    /* 2D f64 w12 spreads with the tile in registers: bins (128 - 12) x (14 - 12), the point
     * batches in shared memory (test_smr_plans) */
    CHECK(wf_params_make(1, 2, n2, 1, 1e-9, WARPFFT_F64, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.width == 12 && p.bin_size[0] == 116 && p.bin_size[1] == 2 &&
              p.tile_bytes == wf_smr_batch_bytes(2, WARPFFT_F64, 0, 12),
          "2D t1 f64: w %d bins %d x %d, %zu bytes", p.width, (int)p.bin_size[0],
          (int)p.bin_size[1], p.tile_bytes);
    CHECK(wf_params_make(2, 2, n2, 1, 1e-9, WARPFFT_F64, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tile_bytes == 44 * 44 * 16,
          "2D t2 f64 tile %zu bytes", p.tile_bytes);
    warpfft_plan_params(1, 1, n1, 1, 1e-5, WARPFFT_F32, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 1024 && in.n_fine[0] == 2000000,
          "1D t1: SM, nf %lld", (long long)in.n_fine[0]);
    /* 1D f32 spreading too (fixed point, 16 bytes per cell; pad (w+1)/2 = 4 each side);
     * interpolation and f64 keep 8 / 16 */
    CHECK(wf_params_make(1, 1, n1, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tile_bytes == (1024 + 8) * 16,
          "1D t1 f32 tile %zu bytes", p.tile_bytes);
    CHECK(wf_params_make(2, 1, n1, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.tile_bytes == (1024 + 8) * 8,
          "1D t2 f32 tile %zu bytes", p.tile_bytes);
    warpfft_plan_params(1, 3, n3, 1, 1e-9, WARPFFT_F64, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 8 && in.bin_size[1] == 8 &&
              in.bin_size[2] == 4 && in.width == 12,
          "3D t1 f64 1e-9: SM 8x8x4 (w %d)", in.width);
    warpfft_plan_params(1, 3, n3, 1, 1e-13, WARPFFT_F64, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 8 && in.bin_size[1] == 8 &&
              in.bin_size[2] == 4 && in.width == 16,
          "3D t1 f64 1e-13: w 16, 8x8x4 tile fits: %d %d %d", in.bin_size[0], in.bin_size[1],
          in.bin_size[2]);
    warpfft_plan_params(2, 3, n3, 1, 1e-5, WARPFFT_F32, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 16 && in.bin_size[1] == 16 &&
              in.bin_size[2] == 4,
          "3D t2 f32: SM 16x16x4: %d %d %d", in.bin_size[0], in.bin_size[1], in.bin_size[2]);
    warpfft_plan_params(1, 3, n3, 1, 1e-5, WARPFFT_F32, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 16 && in.bin_size[1] == 8 &&
              in.bin_size[2] == 4,
          "3D t1 f32: SM 16x8x4: %d %d %d", in.bin_size[0], in.bin_size[1], in.bin_size[2]);
    warpfft_plan_params(2, 3, n3, 1, 1e-9, WARPFFT_F64, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 8 && in.bin_size[1] == 8 &&
              in.bin_size[2] == 4 && in.width == 12,
          "3D t2 f64 w%d: SM 8x8x4: %d %d %d", in.width, in.bin_size[0], in.bin_size[1],
          in.bin_size[2]);
    /* up to w10 8x8x8 (bins.c, wf_sm_bins: D2t2) */
    warpfft_plan_params(2, 3, n3, 1, 1e-6, WARPFFT_F64, &S2, &in);
    CHECK(in.method == WARPFFT_METHOD_SM && in.bin_size[0] == 8 && in.bin_size[1] == 8 &&
              in.bin_size[2] == 8 && in.width <= 10,
          "3D t2 f64 w%d: SM 8x8x8: %d %d %d", in.width, in.bin_size[0], in.bin_size[1],
          in.bin_size[2]);
    int32_t t2[3];
    wf_sm_bins(2, 3, WARPFFT_F64, 10, t2);
    CHECK(t2[2] == 8, "3D t2 f64 w10: depth %d", (int)t2[2]);
    wf_sm_bins(2, 3, WARPFFT_F64, 11, t2);
    CHECK(t2[2] == 4, "3D t2 f64 w11: depth %d", (int)t2[2]);
    wf_sm_bins(2, 3, WARPFFT_F32, 7, t2);
    CHECK(t2[0] == 16 && t2[1] == 16 && t2[2] == 4, "3D t2 f32 keeps 16x16x4");
}

/* SM launch blocks: the kernels' WF_OD_MIN_BLOCK table (kernels/spreadinterp.cu) for 3D
 * spreading with the tile in shared memory, 32 x the warps of the tile in registers (3D f64
 * w7-14, 2D f64 w10-16), 128 for 2D f32 interpolation at widths 7 and 8, else 256. */
void test_sm_blocks(void) {
    const int32_t b3[3] = {16, 8, 4}, f3[3] = {8, 8, 4}, b2[3] = {32, 32, 1};
    CHECK(wf_sm_spread_block(3, WARPFFT_F32, 7, b3) == 192, "3D f32 w7 spread block");
    CHECK(wf_sm_spread_block(3, WARPFFT_F32, 8, b3) == 256 &&
              wf_sm_spread_block(3, WARPFFT_F64, 6, f3) == 256 &&
              wf_sm_spread_block(3, WARPFFT_F64, 11, f3) == 256 &&
              wf_sm_spread_block(3, WARPFFT_F64, 15, f3) == 256 &&
              wf_sm_spread_block(2, WARPFFT_F32, 7, b2) == 256 &&
              wf_sm_spread_block(2, WARPFFT_F64, 9, b2) == 256,
          "other shared-tile spread blocks 256");
    /* the tile in registers: tile columns (8 + 2 pad)^2 in 3D, 128 in 2D, over 32 */
    const int32_t r2[3] = {118, 2, 1};
    CHECK(wf_sm_spread_block(3, WARPFFT_F64, 8, f3) == 256 &&
              wf_sm_spread_block(3, WARPFFT_F64, 10, f3) == 352 &&
              wf_sm_spread_block(2, WARPFFT_F64, 10, r2) == 128,
          "register-tile spread blocks: %d %d %d", wf_sm_spread_block(3, WARPFFT_F64, 8, f3),
          wf_sm_spread_block(3, WARPFFT_F64, 10, f3), wf_sm_spread_block(2, WARPFFT_F64, 10, r2));
    CHECK(wf_sm_interp_block(2, WARPFFT_F32, 7) == 128 &&
              wf_sm_interp_block(2, WARPFFT_F32, 8) == 128,
          "2D f32 w7/w8 interp block");
    CHECK(wf_sm_interp_block(2, WARPFFT_F32, 6) == 256 &&
              wf_sm_interp_block(2, WARPFFT_F64, 7) == 256 &&
              wf_sm_interp_block(3, WARPFFT_F32, 7) == 256,
          "other interp blocks 256");
}

/* The register tile's table (kernels/smr_shape.h) as the host reads it, and for every width the
 * launch of its default bins: the tile's last extent fits NR, the block fits the register file
 * at the kernel's cap and 1024 threads. */
void test_smr_table(void) {
    int bad = 0;
    for (int dim = 1; dim <= 3; dim++)
        for (int prec = 0; prec < 2; prec++)
            for (int w = 2; w <= 16; w++) {
                int f64 = prec == 1, pad2 = 2 * ((w + 1) / 2);
                int want = f64 && dim == 3 && w >= 7 && w <= 10    ? 4 + pad2
                           : f64 && dim == 2 && w >= 10 && w <= 16 ? 2 + pad2
                                                                   : 0;
                int precision = f64 ? WARPFFT_F64 : WARPFFT_F32, nr = wf_smr_nr(dim, precision, w);
                if (nr != want) {
                    printf("  %dD %s w%d: NR %d, want %d\n", dim, f64 ? "f64" : "f32", w, nr, want);
                    bad++;
                }
                if (nr == 0)
                    continue;
                int32_t bs[3];
                wf_smr_default_bins(dim, precision, w, bs);
                int block = wf_sm_spread_block(dim, precision, w, bs);
                int max = 32 * wf_smr_max_warps(precision, nr);
                if (bs[dim - 1] + pad2 != nr || block > max || block > 1024 || block % 32 ||
                    (dim == 2 && (bs[0] + pad2 != 128 || block != 128)) ||
                    (dim == 3 && (bs[0] != 8 || bs[1] != 8 || bs[2] != 4))) {
                    printf("  %dD f64 w%d: bins %d %d %d, block %d (at most %d)\n", dim, w,
                           (int)bs[0], (int)bs[1], (int)bs[2], block, max);
                    bad++;
                }
            }
    CHECK(bad == 0, "register-tile table: %d wrong", bad);
    /* caps 112 (NR <= 14) and 128 would allow 18 and 16 warps; the host stops at the 11 the H100
     * ran (an 18-warp block failed to launch there) */
    CHECK(wf_smr_max_warps(WARPFFT_F64, 14) == 11 && wf_smr_max_warps(WARPFFT_F64, 18) == 11,
          "max warps %d %d", wf_smr_max_warps(WARPFFT_F64, 14), wf_smr_max_warps(WARPFFT_F64, 18));
    /* the batch bytes of the launches the H100 sweep measured (kernels/test/gpu_pipeline.py's
     * smr_launch, benches/kernels-sweep-h100-2026-12-06.log: smem=) */
    CHECK(wf_smr_batch_bytes(3, WARPFFT_F64, 0, 10) == 14848 &&
              wf_smr_batch_bytes(3, WARPFFT_F64, 0, 8) == 12800 &&
              wf_smr_batch_bytes(2, WARPFFT_F64, 0, 10) == 22528,
          "batch bytes %zu %zu %zu", wf_smr_batch_bytes(3, WARPFFT_F64, 0, 10),
          wf_smr_batch_bytes(3, WARPFFT_F64, 0, 8), wf_smr_batch_bytes(2, WARPFFT_F64, 0, 10));
    /* fitting: the last extent to NR - 2 pad, the others halved until the warps fit */
    int32_t b3[3] = {32, 32, 16};
    CHECK(wf_fit_smr_bins(3, b3, 12, 16, 16) && b3[0] == 8 && b3[1] == 8 && b3[2] == 4,
          "3D w12 {32, 32, 16} -> {%d, %d, %d}", (int)b3[0], (int)b3[1], (int)b3[2]);
    int32_t b2[3] = {1000, 50, 1};
    CHECK(wf_fit_smr_bins(2, b2, 16, 18, 16) && b2[0] == 250 && b2[1] == 2,
          "2D w16 {1000, 50} -> {%d, %d}", (int)b2[0], (int)b2[1]);
    int32_t b4[3] = {3, 5, 1};
    CHECK(wf_fit_smr_bins(3, b4, 12, 16, 16) && b4[0] == 3 && b4[1] == 5 && b4[2] == 1,
          "small bins stay {%d, %d, %d}", (int)b4[0], (int)b4[1], (int)b4[2]);
    int32_t b5[3] = {8, 8, 4};
    CHECK(wf_fit_smr_bins(3, b5, 12, 16, 8) && b5[0] == 4 && b5[1] == 4, "8 warps: {%d, %d, %d}",
          (int)b5[0], (int)b5[1], (int)b5[2]);
    int32_t b6[3] = {8, 8, 4}; /* the smallest w12 tile has 13 x 13 columns: 6 warps */
    CHECK(!wf_fit_smr_bins(3, b6, 12, 16, 5) && b6[0] == 1 && b6[1] == 1, "5 warps: {%d, %d, %d}",
          (int)b6[0], (int)b6[1], (int)b6[2]);
}

/* Plans that spread with the tile in registers: bins, dynamic shared memory and block; user
 * bins fitted; type 2, deterministic plans and the shared-tile widths keep theirs; a device
 * too small for the point batches. */
void test_smr_plans(void) {
    const int64_t n3[3] = {128, 128, 128}, n2[3] = {1024, 1024, 1};
    warpfft_opts o = S2;
    wf_params p;
    /* a tol at which 3D f64 takes width 10 at upsampfac 2 (the register tile's widest, B7's) */
    double tol10 = 0.0;
    for (int k = 16; k <= 48 && tol10 == 0.0; k++)
        if (wf_params_make(1, 3, n3, 1, pow(10.0, -k / 4.0), WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90,
                           &p) == 0 &&
            p.width == 10)
            tol10 = pow(10.0, -k / 4.0);
    CHECK(tol10 > 0.0 &&
              wf_params_make(1, 3, n3, 1, tol10, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM && p.width == 10 && wf_params_smr_nr(&p) == 14 &&
              p.bin_size[0] == 8 && p.bin_size[1] == 8 && p.bin_size[2] == 4 &&
              p.tile_bytes == wf_smr_batch_bytes(3, WARPFFT_F64, 0, 10) &&
              wf_sm_spread_block(3, WARPFFT_F64, 10, p.bin_size) == 352,
          "3D t1 f64 w%d: NR %d bins %d %d %d, %zu bytes", p.width, wf_params_smr_nr(&p),
          (int)p.bin_size[0], (int)p.bin_size[1], (int)p.bin_size[2], p.tile_bytes);
    /* a narrower width the points choose (plans/spreader_width.c) launches with its own kind of
     * tile on the plan's bins: w9 the register tile's batches, w6 the tile in shared memory */
    CHECK(wf_sm_launch_bytes(&p, 1, 10) == p.tile_bytes &&
              wf_sm_launch_bytes(&p, 1, 9) == wf_smr_batch_bytes(3, WARPFFT_F64, 0, 9) &&
              wf_sm_launch_bytes(&p, 1, 6) == wf_tile_bytes(3, p.bin_size, 6, 16) &&
              wf_sm_launch_bytes(&p, 1, 6) + WF_SM_STATIC_RESERVE <= WF_SHARED_OPTIN_SM90,
          "launch bytes at w10/9/6: %zu %zu %zu", wf_sm_launch_bytes(&p, 1, 10),
          wf_sm_launch_bytes(&p, 1, 9), wf_sm_launch_bytes(&p, 1, 6));
    /* at the plan's own width, the launch takes p.tile_bytes: every dim, precision and type */
    for (int dim = 1; dim <= 3; dim++)
        for (int prec = WARPFFT_F32; prec <= WARPFFT_F64; prec++)
            for (int type = 1; type <= 2; type++) {
                const int64_t nd[3] = {dim == 1 ? 4096 : 96, dim >= 2 ? 96 : 1, dim == 3 ? 96 : 1};
                wf_params q;
                double tol = prec == WARPFFT_F32 ? 1e-5 : 1e-9;
                if (CHECK(wf_params_make(type, dim, nd, 1, tol, prec, &S2, WF_SHARED_OPTIN_SM90,
                                         &q) == 0) &&
                    q.method == WARPFFT_METHOD_SM)
                    CHECK(wf_sm_launch_bytes(&q, type == 1, q.width) == q.tile_bytes,
                          "%dD type %d prec %d w%d: %zu against %zu", dim, type, prec, q.width,
                          wf_sm_launch_bytes(&q, type == 1, q.width), q.tile_bytes);
            }
    o.bin_size[0] = o.bin_size[1] = 32;
    o.bin_size[2] = 16;
    CHECK(wf_params_make(1, 3, n3, 1, tol10, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.bin_size[0] == 8 && p.bin_size[1] == 8 && p.bin_size[2] == 4 &&
              wf_sm_spread_block(3, WARPFFT_F64, 10, p.bin_size) <= 352,
          "user bins {32, 32, 16} fitted to {%d, %d, %d}", (int)p.bin_size[0], (int)p.bin_size[1],
          (int)p.bin_size[2]);
    /* 2D w12: NR 14, at most the 11 warps the H100 ran: a tile row of 1012 columns halves twice */
    o.bin_size[0] = 1000;
    o.bin_size[1] = 50;
    o.bin_size[2] = 0;
    CHECK(wf_params_make(1, 2, n2, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.width == 12 && p.bin_size[0] == 250 && p.bin_size[1] == 2 &&
              wf_sm_spread_block(2, WARPFFT_F64, 12, p.bin_size) == 288,
          "2D user bins {1000, 50} fitted to {%d, %d}", (int)p.bin_size[0], (int)p.bin_size[1]);
    o = S2;
    /* type 2 and the shared-tile widths (3D f64 w11 on: never launched as a register tile on a
     * GPU): the tile in shared memory */
    CHECK(wf_params_make(2, 3, n3, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              wf_params_smr_nr(&p) == 0 && p.tile_bytes == wf_tile_bytes(3, p.bin_size, 12, 16),
          "3D t2 f64: shared tile (%zu bytes)", p.tile_bytes);
    CHECK(wf_params_make(1, 3, n3, 1, 1e-13, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.width == 16 && wf_params_smr_nr(&p) == 0 &&
              p.tile_bytes == wf_tile_bytes(3, p.bin_size, 16, 16),
          "3D t1 f64 w%d: shared tile", p.width);
    CHECK(wf_params_make(1, 3, n3, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.width == 12 && wf_params_smr_nr(&p) == 0 &&
              p.tile_bytes == wf_tile_bytes(3, p.bin_size, 12, 16),
          "3D t1 f64 w%d: shared tile", p.width);
    o.deterministic = 1;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_OD,
          "deterministic: OD (method %d)", p.method);
    o = S2;
    /* a device whose shared memory cannot hold the point batches: AUTO takes GM, SM refuses */
    size_t small = wf_smr_batch_bytes(3, WARPFFT_F64, 0, 10) - 1;
    CHECK(wf_params_make(1, 3, n3, 1, tol10, WARPFFT_F64, &o, small, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM,
          "AUTO, %zu bytes: method %d", small, p.method);
    o.method = WARPFFT_METHOD_SM;
    CHECK(wf_params_make(1, 3, n3, 1, tol10, WARPFFT_F64, &o, small, &p) ==
                  WARPFFT_ERR_UNSUPPORTED &&
              strstr(warpfft_last_error(), "tile in registers"),
          "SM, %zu bytes: %s", small, warpfft_last_error());
}

/* The bin scan (setpts): tile sums only for plans with more than WF_SCAN_BIG_BINS bins, one
 * pair of u64 per tile of WF_SCAN_BIG_TILE bins, counted in the fixed workspace. */
void test_scan_tiles(void) {
    warpfft_opts o = S2;
    o.spreadinterponly = 1; /* the grid is fk: nbins = N with bins of 1 */
    o.bin_size[0] = 1;
    wf_params p;
    const int64_t at[3] = {WF_SCAN_BIG_BINS, 1, 1}, above[3] = {WF_SCAN_BIG_BINS + 1, 1, 1};
    CHECK(wf_params_make(1, 1, at, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins == WF_SCAN_BIG_BINS && wf_params_scan_tiles(&p) == 0 &&
              wf_params_fixed_bytes(&p) == (size_t)p.nbins * 16 + 32,
          "%lld bins: %lld tiles, %zu fixed bytes", (long long)p.nbins,
          (long long)wf_params_scan_tiles(&p), wf_params_fixed_bytes(&p));
    int64_t tiles = (WF_SCAN_BIG_BINS + WF_SCAN_BIG_TILE) / WF_SCAN_BIG_TILE; /* one partial */
    CHECK(wf_params_make(1, 1, above, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins == WF_SCAN_BIG_BINS + 1 && wf_params_scan_tiles(&p) == tiles &&
              wf_params_fixed_bytes(&p) == (size_t)p.nbins * 16 + (size_t)tiles * 16 + 32,
          "%lld bins: %lld tiles (%lld expected), %zu fixed bytes", (long long)p.nbins,
          (long long)wf_params_scan_tiles(&p), (long long)tiles, wf_params_fixed_bytes(&p));
    /* suite B's shapes: 2D 1024^2 (4096 bins of 32^2) keeps wf_bin_scan; 3D 128^3 t1 f32
     * (32768 bins of 16x8x4) and f64 (65536 of 8x8x4) take scan_big */
    const int64_t n2[3] = {1024, 1024, 1}, n3[3] = {128, 128, 128};
    CHECK(wf_params_make(1, 2, n2, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins == 4096 && wf_params_scan_tiles(&p) == 0,
          "2D 1024^2: %lld bins, %lld tiles", (long long)p.nbins,
          (long long)wf_params_scan_tiles(&p));
    CHECK(wf_params_make(1, 3, n3, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins == 32768 && wf_params_scan_tiles(&p) == 32,
          "3D 128^3 f32: %lld bins, %lld tiles", (long long)p.nbins,
          (long long)wf_params_scan_tiles(&p));
    CHECK(wf_params_make(1, 3, n3, 1, 1e-9, WARPFFT_F64, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.nbins == 65536 && wf_params_scan_tiles(&p) == 64,
          "3D 128^3 f64: %lld bins, %lld tiles", (long long)p.nbins,
          (long long)wf_params_scan_tiles(&p));
}

void test_method_fallback(void) {
    const int64_t n3[3] = {128, 128, 128}, small[3] = {5, 3, 1};
    warpfft_opts o = S2;
    wf_params p;
    /* AUTO on a grid whose SM bins would outnumber int32 (8192^3 fine, 8x8x4 bins): GM */
    const int64_t n4k[3] = {4096, 4096, 4096};
    CHECK(wf_params_make(1, 3, n4k, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM && p.nbins <= INT32_MAX,
          "AUTO -> GM for too many SM bins: %s", warpfft_last_error());
    /* a device with little shared memory: AUTO falls back to GM, explicit SM fails */
    CHECK(wf_params_make(1, 3, n3, 1, 1e-9, WARPFFT_F64, &o, 4096, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM && p.bin_size[2] == 16 && p.tile_bytes == 0,
          "AUTO -> GM");
    o.method = WARPFFT_METHOD_SM;
    CHECK(wf_params_make(1, 3, n3, 1, 1e-9, WARPFFT_F64, &o, 4096, &p) == WARPFFT_ERR_UNSUPPORTED &&
              strstr(warpfft_last_error(), "method = SM"),
          "explicit SM: %s", warpfft_last_error());
    CHECK(wf_params_make(2, 3, n3, 1, 1e-9, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM && p.maxsub == 1024 &&
              p.tile_bytes == wf_tile_bytes(3, p.bin_size, 11, 16),
          "explicit SM for type 2");
    o.method = WARPFFT_METHOD_GM;
    o.bin_size[0] = 64;
    o.max_subprob = 77;
    CHECK(wf_params_make(1, 3, n3, 2, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM && p.bin_size[0] == 64 && p.bin_size[1] == 16 &&
              p.maxsub == 77 && p.n_bins[0] == 4 && p.nbins == 4 * 16 * 16,
          "overrides: bins %d, nbins %lld", (int)p.bin_size[0], (long long)p.nbins);
    /* bins never exceed the fine grid; unused dims are 1 */
    CHECK(wf_params_make(1, 2, small, 1, 1e-5, WARPFFT_F32, &S2, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.n_fine[0] == 14 && p.bin_size[0] == 14 && p.bin_size[2] == 1 && p.n_bins[2] == 1 &&
              p.mode_prod == 15 && p.fine_prod == 196 && p.width == 7,
          "small grid: nf %lld bins %d", (long long)p.n_fine[0], (int)p.bin_size[0]);
}

/* AUTO's density rule (bins.c, wf_auto_method): 3D f64 type 2 with a points_hint below 0.2
 * points per fine-grid cell interpolates with GM; without a hint, above it, in f32, in type 1
 * or with an explicit method it does not change */
void test_method_density(void) {
    const int64_t n[3] = {256, 256, 256};
    warpfft_opts o = {.struct_size = sizeof(warpfft_opts)}; /* upsampfac 0: chosen per plan */
    wf_params p;
    o.points_hint = 1700000; /* suite B's D1t2: density 0.03 at sigma 1.449 */
    CHECK(wf_params_make(2, 3, n, 1, 1e-6, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_GM && p.tile_bytes == 0,
          "D1t2: GM (method %d, sigma %g)", p.method, p.upsampfac);
    CHECK(wf_params_make(1, 3, n, 1, 1e-6, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM,
          "type 1 keeps SM (method %d)", p.method);
    CHECK(wf_params_make(2, 3, n, 1, 1e-6, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM,
          "f32 keeps SM (method %d)", p.method);
    o.method = WARPFFT_METHOD_SM;
    CHECK(wf_params_make(2, 3, n, 1, 1e-6, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM,
          "explicit SM is kept (method %d)", p.method);
    o.method = WARPFFT_METHOD_AUTO;
    /* the density on the plan's own grid decides: D2t2 (1.7e7 points) takes type 1's sigma
     * since the choice is per problem (cost.c), 0.11 points per cell there; 1e8 points 0.49 */
    static const int64_t hints[2] = {17000000, 100000000};
    static const int want[2] = {WARPFFT_METHOD_GM, WARPFFT_METHOD_SM};
    for (int i = 0; i < 2; i++) {
        o.points_hint = hints[i];
        CHECK(wf_params_make(2, 3, n, 1, 1e-6, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0,
              "%s", warpfft_last_error());
        double density = (double)hints[i] / (double)p.fine_prod;
        CHECK(p.method == (density < 0.2 ? WARPFFT_METHOD_GM : WARPFFT_METHOD_SM) &&
                  p.method == want[i],
              "%lld points: method %d at density %.3f (sigma %g)", (long long)hints[i], p.method,
              density, p.upsampfac);
    }
    o.points_hint = 0;
    CHECK(wf_params_make(2, 3, n, 1, 1e-6, WARPFFT_F64, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.method == WARPFFT_METHOD_SM,
          "no hint: SM (method %d)", p.method);
    CHECK(wf_auto_method(2, 3, WARPFFT_F64, 10, 1, 0, 0.199) == WARPFFT_METHOD_GM &&
              wf_auto_method(2, 3, WARPFFT_F64, 10, 1, 0, 0.2) == WARPFFT_METHOD_SM &&
              wf_auto_method(2, 2, WARPFFT_F64, 10, 1, 0, 0.01) == WARPFFT_METHOD_SM &&
              wf_auto_method(1, 3, WARPFFT_F64, 10, 1, 1, 0.01) == WARPFFT_METHOD_OD,
          "the rule's edges");
}

/* cuFFT's limit: a fine-grid dimension of at most 2^32 points (params/base.h, WF_MAX_FINE_DIM) */
void test_fine_dim_limit(void) {
    warpfft_plan_info in;
    const int64_t ok[3] = {((int64_t)1 << 31) - 2, 1, 1}, big[3] = {((int64_t)1 << 31) + 2, 1, 1};
    CHECK(warpfft_plan_params(2, 1, ok, 1, 1e-5, WARPFFT_F32, &S2, &in) == 0 &&
              in.n_fine[0] == ((int64_t)1 << 32),
          "N = 2^31 - 2: fine grid %lld", (long long)in.n_fine[0]);
    int st = warpfft_plan_params(2, 1, big, 1, 1e-5, WARPFFT_F64, &S2, &in);
    CHECK(st == WARPFFT_ERR_BAD_SIZE && strstr(warpfft_last_error(), "2^32"),
          "N = 2^31 + 2: status %d, %s", st, warpfft_last_error());
}

/* dim >= 2: the kernels' 32-bit per-dimension indices need every fine dimension below 2^31
 * (2D {1080000000, 1} at tol 0.1 gave fine {2160000000, 4}: invalid accesses on the GPU) */
void test_fine_dim_limit_nd(void) {
    warpfft_plan_info in;
    const int64_t issue[3] = {1080000000, 1, 1};
    int st = warpfft_plan_params(1, 2, issue, 1, 0.1, WARPFFT_F32, &S2, &in);
    CHECK(st == WARPFFT_ERR_BAD_SIZE && strstr(warpfft_last_error(), "below 2^31"),
          "2D {1080000000, 1}: status %d, %s", st, warpfft_last_error());
    /* 2143750000 = 2^4 5^8 7^3: the largest 2,3,5,7-smooth even size below 2^31 */
    const int64_t ok[3] = {1071875000, 1, 1}, over[3] = {1071875001, 1, 1};
    const int64_t ok3[3] = {4, 4, 1071875000}, over3[3] = {4, 4, 1071875001};
    for (int dim = 2; dim <= 3; dim++) {
        const int64_t *a = dim == 2 ? ok : ok3, *b = dim == 2 ? over : over3;
        st = warpfft_plan_params(1, dim, a, 1, 1e-2, WARPFFT_F32, &S2, &in);
        CHECK(st == 0 && in.n_fine[dim == 2 ? 0 : 2] == 2143750000,
              "%dD N = 1071875000: status %d (%s), fine %lld", dim, st, warpfft_last_error(),
              (long long)in.n_fine[dim == 2 ? 0 : 2]);
        st = warpfft_plan_params(2, dim, b, 1, 1e-2, WARPFFT_F64, &S2, &in);
        CHECK(st == WARPFFT_ERR_BAD_SIZE && strstr(warpfft_last_error(), "2147483648"),
              "%dD N = 1071875001 (fine 2^31): status %d, %s", dim, st, warpfft_last_error());
    }
    /* 1D keeps the 2^32 limit */
    const int64_t one[3] = {1080000000, 1, 1};
    CHECK(warpfft_plan_params(1, 1, one, 1, 0.1, WARPFFT_F32, &S2, &in) == 0 &&
              in.n_fine[0] == 2160000000,
          "1D N = 1080000000: %s", warpfft_last_error());
}

void test_reference_cases(void) {
    /* the width is the rule's (wf_kernel_width: test_params_width.c pins suite B's), beta
     * kernel_shape.h's at that width and sigma 2 */
    static const struct {
        int64_t N;
        double tol;
        int prec;
        int64_t nf;
    } t[] = {{1024, 1e-5, WARPFFT_F32, 2048},
             {128, 1e-5, WARPFFT_F32, 256},
             {1024, 1e-9, WARPFFT_F64, 2048},
             {128, 1e-9, WARPFFT_F64, 256}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int64_t n[3] = {t[i].N, t[i].N, t[i].N};
        int w = wf_kernel_width(3, n, t[i].tol, 2.0, wf_max_width(t[i].prec));
        warpfft_plan_info in;
        int st = warpfft_plan_params(1, 3, n, 1, t[i].tol, (warpfft_precision)t[i].prec, &S2, &in);
        CHECK(st == 0 && in.width == w && in.beta == wf_kernel_beta(w, 2.0) &&
                  in.n_fine[0] == t[i].nf && in.n_points == -1,
              "N %lld tol %g: w %d (rule %d) beta %g nf %lld", (long long)t[i].N, t[i].tol,
              in.width, w, in.beta, (long long)in.n_fine[0]);
        printf("N=%lld tol=%g %s: width %d beta %.4g nf %lld\n", (long long)t[i].N, t[i].tol,
               t[i].prec == WARPFFT_F32 ? "f32" : "f64", in.width, in.beta,
               (long long)in.n_fine[0]);
    }
}
