/*
 * bins.c — spreading bins and the method: default bin edges per type, method, dim and precision,
 * shared-memory tile sizes and fitting, the OD method's warp tiles, the AUTO rule, and the plan
 * stage that chooses the method, bins and subproblem size (refusing more bins than the kernels
 * can index). No GPU; see params.h.
 */
#include "params/bins.h"

#include <string.h>

#include "runtime/error.h"
#include "smr_shape.h"

void wf_default_bins(int type, int method, int dim, int precision, int32_t bs[3]) {
    if (method == WARPFFT_METHOD_OD) {
        int32_t tile[3], nw, pitch;
        wf_od_shape(dim, precision, 0, 2, tile, bs, &nw, &pitch);
        return;
    }
    static const int32_t gm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 16}};
    static const int32_t sm[3][3] = {{1024, 1, 1}, {32, 32, 1}, {16, 16, 2}};
    /* 3D SM, measured on the H100 (kernels alone, M = 1e7, 128^3 modes; smaller tiles keep
     * more blocks resident, thicker ones waste less on the halo):
     *  - f64 type 1: 8x8x2 2.2x faster than 16x16x2 (w10: 35 vs 76 ms; 8x8x4 below);
     *  - f64 type 2: 8x8x4 (w11 interp 17.1 ms; 8x8x2 19.4, 16x8x4 25.9, 16x16x2 27.2);
     *  - f32 type 1: 16x8x4 (w7 spread 7.7 ms; 16x4x8 7.7, 16x16x2 8.8, 8x8x8 8.7,
     *    8x8x4 8.9, 16x8x6 8.6, 24x8x4 9.5, 16x16x4 10.4, 32x8x4 10.4, 32x16x2 14.5);
     *  - f32 type 2: 16x16x4 (w7 interp 2.8 ms; 16x16x6 2.8, 16x8x4 3.4, 16x16x2 3.5,
     *    16x16x8 3.3, 32x16x4 3.8, 8x8x8 4.2). */
    /* f64 type 1 again in the C core (suite_b, same H100 call, WARPFFT_BENCH_BINS): 8x8x4
     * against 8x8x2 B7 (w10, sigma 2.73) 55.5 vs 63.6 ms, D1t1 (w10, sigma 1.45, 0.03 points
     * per cell) 23.7 vs 37.1, D2t1 (w8) 57.0 vs 68.8, D3t1 298.8 vs 310.7 -- the thicker tile
     * wastes less on the halo, most at low density. */
    static const int32_t sm_3d_f64_t1[3] = {8, 8, 4}, sm_3d_f64_t2[3] = {8, 8, 4};
    static const int32_t sm_3d_f32_t1[3] = {16, 8, 4}, sm_3d_f32_t2[3] = {16, 16, 4};
    const int32_t *src = method == WARPFFT_METHOD_SM ? sm[dim - 1] : gm[dim - 1];
    if (method == WARPFFT_METHOD_SM && dim == 3) {
        if (precision == WARPFFT_F64)
            src = type == 1 ? sm_3d_f64_t1 : sm_3d_f64_t2;
        else
            src = type == 1 ? sm_3d_f32_t1 : sm_3d_f32_t2;
    }
    for (int d = 0; d < 3; d++)
        bs[d] = src[d];
}

int wf_sm_spread_block(int dim, int precision, int width, const int32_t bs[3]) {
    /* the tile in registers: a warp per 32 tile columns */
    if (wf_smr_nr(dim, precision, width) > 0)
        return 32 * wf_smr_warps(dim, bs, width);
    /* kernels/spreadinterp.cu, WF_OD_MIN_BLOCK: the same table, and the measurements */
    if (dim == 3 && precision == WARPFFT_F32 && width == 7)
        return 192;
    return 256;
}

int wf_sm_interp_block(int dim, int precision, int width) {
    /* 2D f32 thread-per-point interpolation, kernels alone on the H100 (gpu_test.py bench
     * siblock=, B3 1024^2 M = 1e7, w 7, 32x32 bins): 128 threads 0.758 ms interp against 256
     * 0.848 (more blocks resident while each loads its tile); 3D f32 and f64 were slower at 128
     * (B5 w7 3.37 against 2.78, B8 w11 29.6 against 18.5), so only 2D f32 at the widths measured
     * in the pipeline (docs/spreaders.md) */
    if (dim == 2 && precision == WARPFFT_F32 && (width == 7 || width == 8))
        return 128;
    return 256;
}

size_t wf_tile_bytes(int dim, const int32_t bs[3], int width, size_t complex_bytes) {
    size_t pad = (size_t)(width + 1) / 2, bytes = complex_bytes;
    for (int d = 0; d < dim; d++)
        if (__builtin_mul_overflow(bytes, (size_t)bs[d] + 2 * pad, &bytes))
            return SIZE_MAX;
    return bytes;
}

/* The first of dims 0..n-1 whose bin is the largest. */
static int largest_bin(const int32_t bs[3], int n) {
    int big = 0;
    for (int d = 1; d < n; d++)
        if (bs[d] > bs[big])
            big = d;
    return big;
}

int wf_fit_sm_bins(int dim, int32_t bs[3], int width, size_t complex_bytes, size_t limit) {
    while (wf_tile_bytes(dim, bs, width, complex_bytes) > limit) {
        int big = largest_bin(bs, dim);
        if (bs[big] <= 2)
            return 0;
        bs[big] = bs[big] / 2 < 2 ? 2 : bs[big] / 2;
    }
    return 1;
}

/* ---------------------------------------------------------------- the tile in registers */

int wf_smr_nr(int dim, int precision, int width) {
    return WF_SMR_NR_OF(dim, precision == WARPFFT_F64 ? 64 : 32, width);
}

/* The first extents of the register tile's bins (the last is NR - 2 pad), measured on the H100
 * (benches/kernels-sweep-h100-2026-12-06.log, kernels alone):
 *  - 3D f64 8 x 8, the shared tile's: w10 B7 26.1 ms against 6 x 8 26.4; w8 D2t1 30.6 against
 *    6 x 8 40.3 (tile rows of 14 columns: warps straddle rows);
 *  - 2D 128 - 2 pad, a tile row of four warps: w10 B6 (bins 118 x 2) 4.55 ms; a row of 64
 *    (54 x 6, NR 16) 5.04 against 5.58 with 118 x 6. */
void wf_smr_default_bins(int dim, int precision, int width, int32_t bs[3]) {
    int32_t pad2 = 2 * ((width + 1) / 2), nr = wf_smr_nr(dim, precision, width);
    int32_t last = nr > pad2 ? nr - pad2 : 1;
    bs[0] = bs[1] = bs[2] = 1;
    if (dim == 3) {
        bs[0] = bs[1] = 8;
        bs[2] = last;
    } else if (dim == 2) {
        bs[0] = 128 - pad2;
        bs[1] = last;
    }
}

int wf_smr_warps(int dim, const int32_t bs[3], int width) {
    int64_t pad2 = 2 * ((width + 1) / 2), td1 = (int64_t)bs[0] + pad2;
    int64_t cols = dim == 3 ? td1 * ((int64_t)bs[1] + pad2) : td1;
    int64_t warps = (cols + 31) / 32;
    return warps < INT32_MAX ? (int)warps : INT32_MAX;
}

/* The register file bounds a block at 65536 / (32 cap) warps, but on the H100 a 3D f64 w7 block
 * of 18 warps at the cap of 112 failed to launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
 * gpu_accuracy sm_spread_register_tile, 2026-12-06) while 11-warp blocks (B7, 352 threads) ran:
 * the host sizes no block past the largest launch measured. The spreader also checks each
 * kernel's own limit at load (plans/spreader.c). */
#define WF_SMR_WARPS_MEASURED 11
int wf_smr_max_warps(int precision, int nr) {
    int cap = WF_SMR_MAXREG_OF(precision == WARPFFT_F64 ? 64 : 32, nr);
    int warps = 65536 / (32 * cap);
    return warps < WF_SMR_WARPS_MEASURED ? warps : WF_SMR_WARPS_MEASURED;
}

int wf_sm_spread_runs(const wf_params *p, int width) {
    int nr =
        p->type == 1 && p->method == WARPFFT_METHOD_SM ? wf_smr_nr(p->dim, p->precision, width) : 0;
    if (nr <= 0)
        return 1;
    int32_t pad2 = 2 * ((width + 1) / 2);
    return p->bin_size[p->dim - 1] + pad2 <= nr &&
           wf_smr_warps(p->dim, p->bin_size, width) <= wf_smr_max_warps(p->precision, nr);
}

size_t wf_smr_batch_bytes(int dim, int precision, int real, int width) {
    int nr = wf_smr_nr(dim, precision, width);
    size_t t = precision == WARPFFT_F64 ? 8 : 4, c = real ? t : 2 * t, vec = 16 / t;
    size_t nrp = ((size_t)nr + vec - 1) / vec * vec;
    size_t nb = 32 * (size_t)WF_SMR_NBW_OF(dim, precision == WARPFFT_F64 ? 64 : 32, width);
    size_t w = (size_t)width;
    return nb * (nrp * t + 32 + 2 * c + w * c + 16 * (size_t)dim + (dim == 3 ? w * t : 0));
}

int wf_fit_smr_bins(int dim, int32_t bs[3], int width, int nr, int max_warps) {
    int32_t pad2 = 2 * ((width + 1) / 2), last = dim - 1;
    if (nr - pad2 < 1)
        return 0;
    if (bs[last] > nr - pad2)
        bs[last] = nr - pad2;
    while (wf_smr_warps(dim, bs, width) > max_warps) {
        int big = largest_bin(bs, last);
        if (bs[big] <= 1)
            return 0;
        bs[big] /= 2;
    }
    return 1;
}

/* Measured on the H100 (suite B, benches/suite_b.rs with WARPFFT_BENCH_METHODS=all): SM was
 * faster than or equal to GM in every case, types 1 and 2, 1-3 D, f32 and f64 (e.g. 1D type 1
 * 0.69 vs 2.35 ms, 3D type 2 f32 4.46 vs 5.70 ms, 2D type 2 1.35 vs 1.40 ms). GM remains for
 * tiles that do not fit in shared memory. OD (output-driven) spreading was 3-4x slower than SM
 * in every type-1 case measured (kernel harness, spreading alone, M = 1e7, best OD shape each:
 * B2 2D f32 1024^2 w6 SM 1.58 vs OD 5.40 ms, B9 1.21 vs 4.18, B4 3D f32 128^3 w6 5.5 vs 17.5,
 * B6 2D f64 w10 5.40 vs 15.3, B7 3D f64 w10 37.4 vs 97.4), so it is never picked for speed:
 * only for deterministic type-1 spreading, where it is the one method without atomics (type 2
 * interpolation is deterministic with GM and SM).
 *
 * One exception, 3D f64 type 2 at low density (points per fine-grid cell, known only from
 * opts.points_hint): SM loads a padded tile per bin whatever its points, GM reads only around
 * the points. H100, interpolation alone (benches/costmodel-h100.jsonl), GM/SM at density 0.141:
 * 0.44 (w7), 0.93 (w10), 0.63 (w13); at 0.244: 1.14, 1.18, 0.94; from 0.477 up 1.10-1.65 (SM
 * wins). Suite B's D1t2 (256^3, M = 1.7e6, sigma 1.449 w10, density 0.031) executes in
 * 6.64 ms with GM against 15.67 with SM; D2t2 (density 0.31) 35.1 against 30.4. Hence GM below
 * WF_GM_DENSITY. f32 stays SM (0.81-1.27 at 0.141: no clear winner); without a hint the density
 * is unknown and SM stays. */
#define WF_GM_DENSITY 0.2

/* The problems the GM rule is about; its density test is gm_sparse. */
static int gm_rule_applies(int type, int dim, int precision) {
    return type == 2 && dim == 3 && precision == WARPFFT_F64;
}

static int gm_sparse(double density) {
    return density > 0.0 && density < WF_GM_DENSITY;
}

int wf_auto_method(int type, int dim, int precision, int width, int sm_fits, int deterministic,
                   double density) {
    (void)width;
    if (deterministic && type == 1)
        return WARPFFT_METHOD_OD;
    if (gm_rule_applies(type, dim, precision) && gm_sparse(density))
        return WARPFFT_METHOD_GM;
    return sm_fits ? WARPFFT_METHOD_SM : WARPFFT_METHOD_GM;
}

/* Without a hint the density is known at setpts, from M: the N1t2 row of docs/performance.md's
 * density table (256^3 f64, M = 1.7e6 normal points, sigma 1.76 w9, density 0.018) executed in
 * 14.1 ms with SM and 8.4 with GM (H100, 2026-12-07, one call), where a plan made without
 * points_hint had kept SM; at density 0.18 (N3t2, U3t2) the two were within 2%. */
int wf_late_gm(const wf_params *p, int64_t M) {
    return p->interp_gm_late && M > 0 && gm_sparse((double)M / (double)p->fine_prod);
}

/* ---------------------------------------------------------------- OD (output-driven) */

/* The OD launch shapes, per [dim - 1][f32, f64], measured on the H100 with the kernel harness
 * (kernels/test/gpu_test.py bench, spreading alone, M = 1e7 uniform points, suite B sizes; the
 * full table is in docs/spreaders.md). Each is the best of the shapes tried at that case's
 * width (f32 w 6-7, f64 w 10-11) and is used for every width of its (dim, precision):
 *  - 2D f32: tile 64x16, bins 32x8, 1 warp per block (B2 w6 5.40 ms; 128x8 5.52, 32x16 5.75,
 *    64x8 5.84; B9 64x16 4.18);
 *  - 2D f64: tile 32x16, bins 16x8, 2 warps (B6 w10 15.3 ms; 64x8 17.3, 64x16 18.5);
 *  - 3D f32: tile 8x8x8, bins 4x4x4, 8 warps, pitch 8 (B4 w6 17.5 ms; 16x16x4 18.4, 16x8x4
 *    19.8, 16x16x8 21.9, 32x16x4 25.9);
 *  - 3D f64: tile 8x8x8, bins 4x4x4, 1 warp, pitch 8 (B7 w10 97.4 ms; 16x8x4 100.7, 16x16x4
 *    111.8, 16x16x8 123.1, 32x16x4 152.5);
 *  - 1D (not measured yet; suite B's B1 with WARPFFT_BENCH_METHODS=all times it): the kernel
 *    harness's defaults, tiles of 1024 (f32) / 512 (f64) cells with bins of a quarter tile, 1 / 8
 *    warps (what the harness's residency rule chose on the H100).
 * Bins of half the tile per dimension (a quarter in 1D) keep the points a warp reads and
 * rejects low; finer bins cost setpts more bins. */
typedef struct od_shape {
    int32_t tile[3], bins[3], nwarps;
} od_shape;
static const od_shape od_shapes[3][2] = {
    {{{1024, 1, 1}, {256, 1, 1}, 1}, {{512, 1, 1}, {128, 1, 1}, 8}},
    {{{64, 16, 1}, {32, 8, 1}, 1}, {{32, 16, 1}, {16, 8, 1}, 2}},
    {{{8, 8, 8}, {4, 4, 4}, 8}, {{8, 8, 8}, {4, 4, 4}, 1}},
};

/* The row pitch: lanes add footprint cells q + w r of a row, so in 2D a pitch = w modulo the
 * values per 128-byte wavefront (complex: 16 in f32, 8 in f64; real: 32, 16) puts consecutive
 * lanes on distinct banks (B2 and B6's best shapes used it); in 3D the unpadded pitch was
 * faster (B4 w6 17.5 vs 18.8 ms, B7 w10 97.4 vs 104.2) and in 1D only tile[0] cells are
 * used. */
static int32_t od_pitch(int dim, int precision, int real, int width, int32_t tl1) {
    if (dim != 2)
        return tl1;
    int32_t m = (precision == WARPFFT_F64 ? 8 : 16) * (real ? 2 : 1);
    return tl1 + (((width - tl1) % m) + m) % m;
}

void wf_od_shape(int dim, int precision, int real, int width, int32_t tile[3], int32_t bins[3],
                 int32_t *nwarps, int32_t *pitch) {
    const od_shape *s = &od_shapes[dim - 1][precision == WARPFFT_F64];
    for (int d = 0; d < 3; d++) {
        tile[d] = d < dim ? s->tile[d] : 1;
        bins[d] = d < dim ? s->bins[d] : 1;
    }
    *nwarps = s->nwarps;
    *pitch = od_pitch(dim, precision, real, width, tile[0]);
}

/* kernels/spreadinterp/od_spread.cuh: WF_OD_STAGE_BYTES = 32 (sizeof(V) + 16 + d w sizeof(T))
 * + 672 (strengths, footprint offsets, kernel values, bin prefix sums and starts, the tile's
 * geometry, rounded to 16 bytes); V = cT, or T for real data (ABI.md). */
size_t wf_od_warp_bytes(int dim, int precision, int real, int width, const int32_t tile[3],
                        int32_t pitch) {
    size_t rb = precision == WARPFFT_F64 ? 8 : 4, cb = real ? rb : 2 * rb;
    size_t cells =
        (size_t)pitch * (size_t)(dim >= 2 ? tile[1] : 1) * (size_t)(dim >= 3 ? tile[2] : 1);
    size_t stage = 32 * (cb + 16 + (size_t)dim * (size_t)width * rb) + 672;
    return (cells * cb + 15) / 16 * 16 + stage;
}

/* 3D f64 type 2 (interpolation) at w <= 10: 8x8x8 rather than 8x8x4, measured on the H100
 * (benches/kernels-sweep-h100-2026-12-06.log, kernels alone, D2t2: 256^3, M 1.7e7, w10, sigma
 * 1.477, 0.31 points per cell): 8x8x8 23.5 ms, 16x8x4 24.1, 8x8x4 27.4 -- a thicker tile loads
 * less halo per point (18^3 / 512 = 11 cells against 18 x 18 x 14 / 256 = 18) and its 93 KB
 * still leave two blocks per SM. From w11 an 8x8x8 tile (20^3 x 16 = 128 KB) leaves one, as
 * 16x8x4 does, which measured 25.9 ms against 8x8x4's 17.1 at w11 (B8, above): 8x8x4 there. */
void wf_sm_bins(int type, int dim, int precision, int width, int32_t bs[3]) {
    if (type == 1 && wf_smr_nr(dim, precision, width) > 0) {
        wf_smr_default_bins(dim, precision, width, bs);
        return;
    }
    wf_default_bins(type, WARPFFT_METHOD_SM, dim, precision, bs);
    if (type == 2 && dim == 3 && precision == WARPFFT_F64 && width <= 10)
        bs[2] = 8;
}

/* Defaults for `method` (SM: wf_sm_bins, by the width too), then opts.bin_size overrides,
 * clamped to [1, nf_d]; unused dims 1. */
static void initial_bins(const wf_params *p, int method, const warpfft_opts *o, int32_t bs[3]) {
    if (method == WARPFFT_METHOD_SM)
        wf_sm_bins(p->type, p->dim, p->precision, p->width, bs);
    else
        wf_default_bins(p->type, method, p->dim, p->precision, bs);
    for (int d = 0; d < 3; d++) {
        if (d >= p->dim) {
            bs[d] = 1;
            continue;
        }
        if (o->bin_size[d] > 0)
            bs[d] = o->bin_size[d];
        if ((int64_t)bs[d] > p->n_fine[d])
            bs[d] = (int32_t)p->n_fine[d];
    }
}

static warpfft_status set_bin_counts(wf_params *p) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++) {
        p->n_bins[d] = (p->n_fine[d] + p->bin_size[d] - 1) / p->bin_size[d];
        if (__builtin_mul_overflow(nbins, p->n_bins[d], &nbins) || nbins > INT32_MAX)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "more than 2^31 - 1 spreading bins (bin_size {%d, %d, %d} on a fine "
                            "grid of {%lld, %lld, %lld}); use larger opts.bin_size",
                            (int)p->bin_size[0], (int)p->bin_size[1], (int)p->bin_size[2],
                            (long long)p->n_fine[0], (long long)p->n_fine[1],
                            (long long)p->n_fine[2]);
    }
    p->nbins = nbins;
    return WARPFFT_SUCCESS;
}

size_t wf_sm_cell_bytes(const wf_params *p) {
    /* 1D and 2D f32 spreading add in fixed point: two int32 words per real (kernels,
     * WF_SPREAD_SM_FIX): 16 bytes per complex cell, 8 per real one */
    if (p->type == 1 && p->dim <= 2 && p->precision == WARPFFT_F32)
        return p->real_data ? 8 : 16;
    return wf_value_bytes(p);
}

int wf_params_smr_nr(const wf_params *p) {
    return p->type == 1 ? wf_smr_nr(p->dim, p->precision, p->width) : 0;
}

size_t wf_sm_launch_bytes(const wf_params *p, int spread, int width) {
    if (p->method != WARPFFT_METHOD_SM)
        return p->tile_bytes;
    if (spread && p->type == 1 && wf_smr_nr(p->dim, p->precision, width) > 0)
        return wf_smr_batch_bytes(p->dim, p->precision, p->real_data, width);
    return wf_tile_bytes(p->dim, p->bin_size, width, wf_sm_cell_bytes(p));
}

/* SM bins for p from the initial ones in bs, fitted (the tile in shared memory within limit, or
 * the register tile's last extent and block); *bytes the dynamic shared memory of a launch. 1
 * if SM fits. */
static int fit_sm(const wf_params *p, int32_t bs[3], size_t limit, size_t *bytes) {
    int nr = wf_params_smr_nr(p);
    if (nr > 0) {
        *bytes = wf_smr_batch_bytes(p->dim, p->precision, p->real_data, p->width);
        return *bytes <= limit &&
               wf_fit_smr_bins(p->dim, bs, p->width, nr, wf_smr_max_warps(p->precision, nr));
    }
    int fits = wf_fit_sm_bins(p->dim, bs, p->width, wf_sm_cell_bytes(p), limit);
    *bytes = wf_tile_bytes(p->dim, bs, p->width, wf_sm_cell_bytes(p));
    return fits;
}

static warpfft_status sm_unfit(const wf_params *p, const int32_t bs[3], size_t bytes,
                               size_t limit) {
    if (wf_params_smr_nr(p) > 0)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "opts.method = SM: spreading with the tile in registers (width %d, %s) "
                        "needs %zu bytes of shared memory for its point batches; the device "
                        "allows %zu; use method GM or AUTO",
                        p->width, wf_prec_name(p->precision), bytes, limit);
    return wf_error(WARPFFT_ERR_UNSUPPORTED,
                    "opts.method = SM: the smallest shared-memory tile (bins {%d, %d, %d}, width "
                    "%d, %s) needs %zu bytes; the device allows %zu; use method GM or AUTO",
                    (int)bs[0], (int)bs[1], (int)bs[2], p->width, wf_prec_name(p->precision), bytes,
                    limit);
}

/* Whether bins of size bs on the fine grid number at most INT32_MAX (the kernels' bin index). */
static int bins_addressable(const wf_params *p, const int32_t bs[3]) {
    int64_t nbins = 1;
    for (int d = 0; d < 3; d++)
        if (__builtin_mul_overflow(nbins, (p->n_fine[d] + bs[d] - 1) / bs[d], &nbins))
            return 0;
    return nbins <= INT32_MAX;
}

/* OD: the shape of wf_od_shape for p, bins from opts.bin_size or the shape's, coarsened while
 * they outnumber int32 (the kernel gathers from bins of any shape); warps per block halved
 * until the block's shared memory fits in limit. */
static warpfft_status set_od(wf_params *p, const warpfft_opts *o, size_t limit) {
    int32_t tile[3], bins[3], nw, pitch;
    wf_od_shape(p->dim, p->precision, p->real_data, p->width, tile, bins, &nw, &pitch);
    int user_bins = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= p->dim) {
            bins[d] = 1;
            continue;
        }
        if (o->bin_size[d] > 0) {
            bins[d] = o->bin_size[d];
            user_bins = 1;
        }
        if ((int64_t)bins[d] > p->n_fine[d])
            bins[d] = (int32_t)p->n_fine[d];
    }
    for (int grow = 0; !user_bins && !bins_addressable(p, bins) && grow < 32; grow++)
        for (int d = 0; d < p->dim; d++)
            if ((int64_t)bins[d] < p->n_fine[d] && bins[d] <= INT32_MAX / 2)
                bins[d] *= 2;
    size_t warp = wf_od_warp_bytes(p->dim, p->precision, p->real_data, p->width, tile, pitch);
    while (nw > 1 && (size_t)nw * warp > limit)
        nw /= 2;
    if (warp > limit)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "method OD: a warp's tile of {%d, %d, %d} cells (width %d, %s) needs %zu "
                        "bytes of shared memory; the device allows %zu",
                        (int)tile[0], (int)tile[1], (int)tile[2], p->width,
                        wf_prec_name(p->precision), warp, limit);
    p->method = WARPFFT_METHOD_OD;
    memcpy(p->bin_size, bins, sizeof bins);
    memcpy(p->od_tile, tile, sizeof tile);
    p->od_nwarps = nw;
    p->od_pitch = pitch;
    p->tile_bytes = (size_t)nw * warp;
    return set_bin_counts(p);
}

/* Points per fine-grid cell that opts.points_hint announces (0: no hint); after the grid stage
 * (fine_prod). */
static double wf_hint_density(const wf_params *p) {
    return p->points_hint > 0 ? (double)p->points_hint / (double)p->fine_prod : 0.0;
}

/* The option combinations no method serves. */
static warpfft_status check_method_request(const wf_params *p, int method) {
    if (method == WARPFFT_METHOD_OD && p->type != 1)
        return wf_error(WARPFFT_ERR_UNSUPPORTED,
                        "opts.method = 3 (OD): output-driven is a spreading method (type 1, and "
                        "type 3's spreading step); a type-2 plan interpolates with GM or SM (0, "
                        "1 or 2), which are deterministic there");
    if (p->deterministic && p->type == 1 &&
        (method == WARPFFT_METHOD_GM || method == WARPFFT_METHOD_SM))
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "opts.deterministic = 1 with opts.method = %d (%s): that method spreads "
                        "with atomics, whose order changes from run to run; use method 0 (AUTO) "
                        "or 3 (OD)",
                        method, method == WARPFFT_METHOD_GM ? "GM" : "SM");
    return WARPFFT_SUCCESS;
}

warpfft_status wf_params_set_method(wf_params *p, const warpfft_opts *o, size_t limit) {
    p->deterministic = o->deterministic;
    p->maxsub = o->max_subprob > 0 ? o->max_subprob : WF_DEFAULT_MAXSUB;
    p->od_tile[0] = p->od_tile[1] = p->od_tile[2] = 0;
    p->od_nwarps = p->od_pitch = 0;
    p->interp_gm_late = 0;
    warpfft_status st = check_method_request(p, o->method);
    if (st != WARPFFT_SUCCESS)
        return st;
    int32_t sm[3];
    size_t sm_bytes = 0;
    initial_bins(p, WARPFFT_METHOD_SM, o, sm);
    int fits = fit_sm(p, sm, limit, &sm_bytes);
    /* AUTO: small SM bins on a huge grid can outnumber int32; GM's larger bins may not */
    if (o->method == WARPFFT_METHOD_AUTO && fits && !bins_addressable(p, sm))
        fits = 0;
    int m = o->method;
    if (m == WARPFFT_METHOD_AUTO)
        m = wf_auto_method(p->type, p->dim, p->precision, p->width, fits, p->deterministic,
                           wf_hint_density(p));
    if (m == WARPFFT_METHOD_OD)
        return set_od(p, o, limit);
    if (m == WARPFFT_METHOD_SM && !fits)
        return sm_unfit(p, sm, sm_bytes, limit);
    p->method = m;
    p->interp_gm_late = o->method == WARPFFT_METHOD_AUTO && m == WARPFFT_METHOD_SM &&
                        p->points_hint <= 0 && gm_rule_applies(p->type, p->dim, p->precision);
    if (m == WARPFFT_METHOD_SM) {
        memcpy(p->bin_size, sm, sizeof sm);
        p->tile_bytes = sm_bytes;
    } else {
        initial_bins(p, WARPFFT_METHOD_GM, o, p->bin_size);
        p->tile_bytes = 0;
    }
    return set_bin_counts(p);
}
