/*
 * warpfft/options.h — plan options: the methods, the kernel, warpfft_opts, and the option table
 * every interface sets them through (no GPU). Part of warpfft's public C ABI: include
 * <warpfft.h>, which includes every part (each part includes the parts it needs and may be
 * included alone; warpfft.h's opening comment states the conventions all of them share).
 */
#ifndef WARPFFT_OPTIONS_H
#define WARPFFT_OPTIONS_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How points meet the fine grid (spreading for type 1, interpolation for type 2). */
typedef enum warpfft_method {
    WARPFFT_METHOD_AUTO = 0, /* pick by measured rules per (type, dim, precision, width, density) */
    WARPFFT_METHOD_GM = 1,   /* points-driven over bin-sorted points, global-memory atomics */
    WARPFFT_METHOD_SM = 2,   /* subproblems: per-bin tiles in shared memory */
    /* output-driven: each warp owns a tile of the fine grid, gathers the points that reach it
     * and writes every cell once (no atomics; bitwise reproducible with opts.deterministic).
     * Spreading only: type 1 and type 3's spreading step (type 3's inner type-2 step then
     * interpolates by AUTO's choice); a type-2 plan refuses it (WARPFFT_ERR_UNSUPPORTED).
     * 3-4x slower than SM on an H100, so AUTO picks it only for opts.deterministic. */
    WARPFFT_METHOD_OD = 3
} warpfft_method;

/* The spreading kernel a plan uses (warpfft_plan_info.kernel). */
typedef enum warpfft_kernel {
    WARPFFT_KERNEL_SINH = 1 /* 2 e^-beta (sinh(beta s) / s - beta), s = sqrt(1 - (2t/w)^2)
                               (Potts-Tasche, less the edge value: continuous, 0 at |t| = w/2) */
} warpfft_kernel;

/* Options. Always initialise with warpfft_opts_default, then change fields (or set them by
 * name, checked: warpfft_opts_set). The option table below describes every field. */
typedef struct warpfft_opts {
    uint32_t struct_size; /* set by warpfft_opts_default; lets the ABI grow: a larger struct
                           * (from a newer header) is accepted when the bytes this build does
                           * not know are all zero, else WARPFFT_ERR_INVALID_ARG */
    int32_t modeord;      /* 0: CMCL order (default), 1: FFT order */
    int32_t method;       /* a warpfft_method; default AUTO */
    int32_t device;       /* CUDA device ordinal; default 0 */
    double upsampfac;     /* fine grid / modes: 0 (default) chooses it per plan with the kernel
                           * width (the least predicted time that meets tol; plan_info says
                           * what was chosen), or any value in [1.25, 3] */
    uint64_t stream;      /* CUstream as an integer; 0 = legacy default stream */
    int32_t bin_size[3];  /* spreading bin edge per dim in fine-grid points; 0 = automatic */
    int32_t max_subprob;  /* points per shared-memory subproblem; 0 = automatic */
    /* 1: spread (type 1) or interpolate (type 2) only, as the reference's gpu_spreadinterponly:
     * no FFT and no deconvolution; the grid is fk itself (N1 x N2 x N3, each N_d >= 2 width,
     * index i_d at coordinate 2 pi i_d / N_d, no mode order), the kernel the one tol and
     * upsampfac choose for a NUFFT (warpfft_plan_info: width, beta), method GM, no cuFFT
     * needed. 0 (default): the NUFFT. Types 1 and 2 only: a type-3 plan (and
     * warpfft_plan_params3) refuses 1 with WARPFFT_ERR_INVALID_ARG. Added after max_subprob: an
     * opts with the older struct_size (offsetof this field) is still accepted, with this field
     * 0. */
    int32_t spreadinterponly;
    /* Checking of the points' coordinates at warpfft_setpts (types 1 and 2):
     * 0 (default): setpts is asynchronous (no host synchronisation). A NaN or infinite
     *   coordinate never causes an out-of-bounds access (the point is binned at coordinate 0);
     *   it sets a flag on the device, and every later execute with that point set writes NaN
     *   to every output (type 1: all modes of all transforms; type 2: all strengths), so a bad
     *   point set never looks like a valid result. warpfft_setpts_check reports it as
     *   WARPFFT_ERR_BAD_POINTS when the caller wants to know.
     * 1: setpts waits for its own work and returns WARPFFT_ERR_BAD_POINTS for such a point set
     *   (which then leaves the plan without points), as before this option existed.
     * Type 3 checks at warpfft_setpts3 in either mode (it waits for the bounds anyway).
     * Added in what was the struct's tail padding (its size stays 56 bytes), which
     * warpfft_opts_default always zeroed: an opts from an older header reads as 0. */
    int32_t check_points;
    /* Expected number of points per warpfft_setpts (types 1 and 2): what the choice of
     * upsampfac and width (upsampfac 0) weighs spreading against the FFT with. 0 (default):
     * one point per mode. A hint only: any M may be set. Added after check_points: an opts
     * with the older struct_size (offsetof this field, 56 bytes) is still accepted. */
    int64_t points_hint;
    /* 1: bitwise-reproducible results: the same inputs on the same GPU (and the same warpfft,
     * driver and cuFFT) give the same bits on every execute, of every plan made with the same
     * arguments, on any stream (types 1, 2 and 3; docs/spreaders.md). Type 1 and type 3's
     * spreading step then spread with method OD (output-driven, a fixed order of additions;
     * opts.method must be AUTO or OD there, else WARPFFT_ERR_INVALID_ARG), and setpts ranks
     * the points inside their bins by input order (a stable sort, ~0.1 ns per point more)
     * instead of by atomics. Type 2 interpolation sums each point's footprint in a fixed order
     * with any method, so a type-2 plan is unchanged. The cost: OD spreading is 3-4x slower
     * than SM (H100, docs/spreaders.md). 0 (default): the fastest methods, whose spreading
     * adds with atomics (results may differ in the last bits from run to run). Added after
     * points_hint: an opts with the older struct_size (offsetof this field, 64 bytes) is still
     * accepted, with this field 0. */
    int32_t deterministic;
    /* The kernel width from the points given (types 1 and 2; docs/accuracy.md, "The width the
     * points need"): 1 (default): setpts may take a narrower width than the one every point
     * set needs where the points' fine-grid offsets allow it (random points do, points on or
     * near grid nodes keep that width), with the same promise (error <= tol), and upsampfac 0
     * chooses sigma for points_hint random points. 0: the width every point set needs, and
     * sigma for it (the rule before this option). Added in what was the struct's tail padding
     * (its size stays 72 bytes), which warpfft_opts_default always zeroed: an opts from an
     * older header reads as 0, the rule that header's warpfft had. */
    int32_t points_width;
    /* Real-valued data (types 1 and 2; docs/c.md, "Real-valued data"): 1: type 1 takes REAL
     * strengths c (T c[ntransf][M], T float for WARPFFT_F32, double for F64) and writes the
     * non-redundant half of the Hermitian-symmetric modes, fk[ntransf][N3][N2][N1/2 + 1]
     * complex (dimension 1 halved: k1 = 0 .. N1/2 in that order whatever modeord; dimensions 2
     * and 3 full, in modeord); type 2 takes those half modes and writes real c:
     * u_j = Re(sum over the half of a_k1 f_k e^{+-i k.x_j}), a_0 = 1, a_k1>0 = 2 (for
     * Hermitian-symmetric full modes, the complex type 2 of the full array). The fine grid is
     * real and its FFT real-to-complex (type 1) or complex-to-real (type 2). 0 (default):
     * complex data. Type 3, spread/interp-only plans (opts.spreadinterponly) and the Toeplitz
     * operator refuse 1 (WARPFFT_ERR_UNSUPPORTED). Added after points_width: an opts with the
     * older struct_size (offsetof this field, 72 bytes) is still accepted, with this field 0. */
    int32_t real_data;
} warpfft_opts;

/* ---- options: the table every interface sets them through (no GPU) ---- */

/* Every field of warpfft_opts is one row of a table the library owns -- its name, type,
 * default, bounds (or allowed values), the reference's spellings (cuFINUFFT's opts field names)
 * and a line of doc -- and so is each option of the reference that warpfft accepts and ignores
 * (it changes no result here). Front-ends (Rust, Python, JAX, PyTorch) set options through it
 * by name, so a default or a bound is written once (c_core/src/params/options.c) and a bad value
 * gets the same message from every interface; plan creation checks a filled-in struct against
 * the same rows. Shaped like zstd's ZSTD_cParameter + ZSTD_cParam_getBounds. */

typedef enum warpfft_opt_type {
    WARPFFT_OPT_INT32 = 1,  /* int32_t field */
    WARPFFT_OPT_INT64 = 2,  /* int64_t field */
    WARPFFT_OPT_UINT64 = 3, /* uint64_t field: any value (no bounds) */
    WARPFFT_OPT_FLOAT64 = 4 /* double field */
} warpfft_opt_type;

/* warpfft_opt_desc.flags */
#define WARPFFT_OPT_FLAG_ZERO_AUTO 1u /* 0 is valid besides [min, max]: chosen per plan */
#define WARPFFT_OPT_FLAG_NO_EFFECT 2u /* the reference's option: checked, ignored (no field) */

/* One row of the table (warpfft_opt_describe). Strings are static. Integer types use the int_*
 * members (UINT64: none apply), FLOAT64 the float_* ones; the others are 0. */
typedef struct warpfft_opt_desc {
    uint32_t struct_size; /* set by the caller to sizeof(warpfft_opt_desc): the struct only grows
                           * at its end, and the library fills what fits in struct_size */
    int32_t type;         /* a warpfft_opt_type */
    uint32_t flags;       /* WARPFFT_OPT_FLAG_* */
    int32_t offset;       /* of the field in warpfft_opts; -1 for NO_EFFECT rows */
    const char *name;     /* the field's C name: "upsampfac", "bin_size[0]", ... */
    const char *aliases;  /* the reference's spellings (cuFINUFFT's opts fields; jax-finufft's
                           * gpu_upsampfac), space-separated ("gpu_binsizex"); "" for warpfft's
                           * own options */
    const char *values;   /* an enumeration's value names from min up, space-separated ("AUTO GM
                           * SM OD"), or "" */
    const char *doc;      /* one line */
    int64_t int_default, int_min, int_max; /* bounds inclusive */
    double float_default, float_min, float_max;
    /* The reference's default where it has the option (cufinufft_default_opts, v2.5.1), e.g.
     * gpu_maxsubprobsize 1024 where warpfft's 0 chooses per plan; else warpfft's default. */
    int64_t int_ref_default;
    double float_ref_default;
} warpfft_opt_desc;

/* Every field at its default (the table's), struct_size = sizeof(warpfft_opts). */
WARPFFT_API warpfft_status warpfft_opts_default(warpfft_opts *opts);
/* Rows of the table: 0..warpfft_opt_count()-1. Never fails. */
WARPFFT_API size_t warpfft_opt_count(void);
/* Row i into *desc (desc->struct_size set first); WARPFFT_ERR_INVALID_ARG for i out of range. */
WARPFFT_API warpfft_status warpfft_opt_describe(size_t i, warpfft_opt_desc *desc);
/* The row of an option by its name or one of its aliases into *index;
 * WARPFFT_ERR_INVALID_ARG ("unknown option ...", listing the names) when none has it. */
WARPFFT_API warpfft_status warpfft_opt_find(const char *name, size_t *index);
/* Sets an option by name or alias from its value as text: a decimal integer for the integer
 * types, any strtod number for FLOAT64 ("1.25", "2e0", "nan"). The value is checked against the
 * row first: a bad one leaves opts unchanged and returns WARPFFT_ERR_INVALID_ARG with the
 * message plan creation gives for that value in the struct ("opts.upsampfac = 1.2; must be 0
 * (chosen per plan) or in [1.25, 3]"). NO_EFFECT rows are checked and change nothing. opts must
 * come from warpfft_opts_default (the field must lie within its struct_size). */
WARPFFT_API warpfft_status warpfft_opts_set(warpfft_opts *opts, const char *name,
                                            const char *value);

/* The tolerance range of a precision: f32 [1e-6, 1e-1], f64 [1e-13, 1e-1] (docs/accuracy.md). */
WARPFFT_API warpfft_status warpfft_tol_bounds(warpfft_precision precision, double *lo, double *hi);
/* The tolerance a plan of `precision` runs at for a requested tol: tol itself within the
 * range, else its nearer end (a tol below the range, 0 and negative ones included, runs at the
 * smallest: as the reference raises a tol below machine precision to it; +inf at the largest).
 * Plans, plan_params and the Toeplitz operator apply this rule (warpfft_plan_info.tol says what
 * they ran at); NaN is the one tol refused here (WARPFFT_ERR_BAD_TOL). */
WARPFFT_API warpfft_status warpfft_tol_effective(double tol, warpfft_precision precision,
                                                 double *effective);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_OPTIONS_H */
