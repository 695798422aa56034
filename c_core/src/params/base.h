/*
 * base.h — what every plan-parameter stage shares: the parameters a plan chose (wf_params), the
 * size limits, and the precision's name. The stages (kernel.h, width.h, grid.h, bins.h) build on
 * it alone; params.h runs them in order. Pure data: no GPU.
 */
#ifndef WARPFFT_PARAMS_BASE_H
#define WARPFFT_PARAMS_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "warpfft.h"

#define WF_MAX_WIDTH_F32 12 /* widths embedded for f32 kernels: 2..12 */
#define WF_MAX_WIDTH_F64 16 /* widths embedded for f64 kernels: 2..16 */
/* Longest fine-grid dimension: cuFFT 12.0 gave wrong 1D transforms above 2^32 points (H200:
 * errors 5e-3 to 0.8 at 4299816960 points, C2C and Z2Z; 2^32 itself exact to rounding). */
#define WF_MAX_FINE_DIM ((int64_t)1 << 32)
/* For dim >= 2 a fine-grid dimension must be below this: the kernels' per-dimension index math
 * is 32-bit (kernels/ABI.md; 2D {2160000000, 4} gave invalid global accesses on an H100). */
#define WF_MAX_FINE_DIM_ND   ((int64_t)1 << 31)
#define WF_SHARED_OPTIN_SM90 ((size_t)227 * 1024) /* opt-in shared memory per block, sm_90 */
#define WF_SHARED_STATIC_MAX ((size_t)48 * 1024)  /* dynamic shared memory without opt-in */
/* Static shared memory an SM kernel declares on top of its dynamic tile (kernels/ABI.md: at
 * most 8.3 KiB, in 3D spread SM f64 w16); tiles are fitted to the opt-in limit minus this. */
#define WF_SM_STATIC_RESERVE ((size_t)9 * 1024)
#define WF_DEFAULT_MAXSUB    1024               /* points per shared-memory subproblem */
#define WF_MAX_MODES_PER_DIM ((int64_t)1 << 52) /* keeps upsampfac * N exact in double */
#define WF_SIGMA_MIN         1.25 /* upsampling factors accepted: 0 (chosen per plan) or [MIN, MAX] */
#define WF_SIGMA_MAX         3.0

/* Everything a plan chose. Unused dimensions have n_modes = n_fine = bin_size = n_bins = 1. */
typedef struct wf_params {
    int type, dim, precision; /* precision: WARPFFT_F32 / WARPFFT_F64 */
    int method;               /* WARPFFT_METHOD_GM, _SM or _OD (never AUTO) */
    int interp_gm_late;       /* AUTO chose SM for a type 2 that the GM rule may serve but had
                               * no points_hint: setpts takes GM for interpolation when its M
                               * gives a density below WF_GM_DENSITY (bins.c, wf_late_gm) */
    int deterministic;        /* opts.deterministic: OD spreading and the stable sort (bins.c) */
    int modeord;
    int spreadinterponly;  /* 1: spread/interp only on fk itself (n_fine = n_modes; nufft12_exec.c)
                            */
    int check_points;      /* 1: setpts waits and returns BAD_POINTS (spreader_points.c) */
    int points_width;      /* 1: the width may follow the points (plans/spreader_width.c): on
                            * for the NUFFT plans of types 1 and 2, off for spread/interp-only
                            * plans and the transforms inside type 3 and the Toeplitz kernel */
    int real_data;         /* opts.real_data: real grid, half spectrum (R2C / C2R FFT) */
    int64_t points_hint;   /* opts.points_hint: the M the cost model assumes (0: one per mode) */
    double predicted_ms;   /* the cost model's execute time (cost.c) */
    double tol, upsampfac; /* upsampfac: the sigma used (the choice, when opts said 0) */
    double tol_floor;      /* rounding floor of the error (grid.c, wf_tol_floor) */
    int width;             /* kernel width w in fine-grid points: the one every point set meets */
    int width_random;      /* the width points_hint random points are expected to take when the
                            * width follows the points: below `width` where cost.c chose sigma
                            * for them, else `width`; predicted_ms is its time */
    double beta;           /* kernel shape parameter (sinh type, kernel.c) */
    int64_t n_modes[3], n_fine[3];
    int64_t mode_prod, fine_prod; /* N1*N2*N3, nf1*nf2*nf3 */
    int64_t ntransf;
    int32_t bin_size[3];
    int64_t n_bins[3], nbins; /* bins per dim, and their product (fits in int32) */
    int64_t maxsub;           /* points per subproblem (SM) */
    size_t tile_bytes;        /* SM, OD: dynamic shared memory per block; GM: 0 */
    int32_t od_tile[3];       /* OD: a warp's tile of the fine grid (unused dims 1) */
    int32_t od_nwarps;        /* OD: warps per block (1..8) */
    int32_t od_pitch;         /* OD: row pitch of a warp's tile, >= od_tile[0] */
    size_t real_bytes;        /* sizeof(T): 4 or 8 */
    size_t complex_bytes;     /* sizeof(cT): 8 or 16 */
} wf_params;

/* The value at the points and on the fine grid: sizeof(cT), or sizeof(T) with real_data (real
 * strengths, a real fine grid: the real modules' sizeof(V), kernels/ABI.md). */
static inline size_t wf_value_bytes(const wf_params *p) {
    return p->real_data ? p->real_bytes : p->complex_bytes;
}
/* Complex elements of one transform's fk: N1*N2*N3, or with real_data the half modes
 * (N1/2 + 1)*N2*N3. */
static inline int64_t wf_fk_prod(const wf_params *p) {
    return p->real_data ? (p->n_modes[0] / 2 + 1) * p->n_modes[1] * p->n_modes[2] : p->mode_prod;
}
/* real_data: complex elements of one transform's half spectrum, (nf1/2 + 1)*nf2*nf3 (the R2C
 * output, the C2R input); else 0. */
static inline int64_t wf_half_prod(const wf_params *p) {
    return p->real_data ? (p->n_fine[0] / 2 + 1) * p->n_fine[1] * p->n_fine[2] : 0;
}

/* "f32" or "f64": the kernel-name suffix of a precision. */
static inline const char *wf_prec_name(int precision) {
    return precision == WARPFFT_F64 ? "f64" : "f32";
}

/* The precision string of the spreading/interpolation modules (kernels/module_names.h): "f32",
 * "f64", or for real-valued data "f32r", "f64r". */
static inline const char *wf_si_prec_name(int precision, int real) {
    if (real)
        return precision == WARPFFT_F64 ? "f64r" : "f32r";
    return wf_prec_name(precision);
}

#endif /* WARPFFT_PARAMS_BASE_H */
