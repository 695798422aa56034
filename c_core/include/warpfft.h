/*
 * warpfft.h — the whole public C ABI of warpfft, a GPU non-uniform FFT library.
 *
 * Include only this header; it needs no CUDA headers. Device pointers cross the ABI as
 * `void *`, CUDA streams as `uint64_t` (the CUstream / cudaStream_t value cast to an integer).
 *
 * Lifecycle (four verbs over an opaque plan):
 *
 *     warpfft_opts opts;
 *     warpfft_opts_default(&opts);
 *     warpfft_plan plan;
 *     int64_t n[3] = {256, 256, 1};
 *     if (warpfft_plan_create(1, 2, n, +1, 1, 1e-6, WARPFFT_F32, &opts, &plan) != WARPFFT_SUCCESS)
 *         fprintf(stderr, "%s\n", warpfft_last_error());
 *     warpfft_setpts(plan, WARPFFT_F32, M, d_x, d_y, NULL);   // device arrays of M floats
 *     warpfft_execute(plan, WARPFFT_F32, d_c, d_fk);          // complex float, interleaved
 *     warpfft_plan_destroy(plan);
 *
 * Definitions (as FINUFFT):
 *   type 1:  f[k] = sum_j c[j] exp(iflag * i * k . x_j)        for modes k, points x_j
 *   type 2:  c[j] = sum_k f[k] exp(iflag * i * k . x_j)
 *   type 3:  f[k] = sum_j c[j] exp(iflag * i * s_k . x_j)    for targets s_k, sources x_j
 *   (type 3: any finite real sources and targets, not periodic; see "type 3" below.)
 *   Points are 2*pi periodic: any finite real coordinate is folded into [-pi, pi).
 *   Mode k_d runs over -floor(N_d/2) .. ceil(N_d/2)-1. Mode arrays are stored with dimension 1
 *   fastest: f[i1 + N1*(i2 + N2*i3)], and transform t of a batch at offset t*N1*N2*N3
 *   (strengths: c[t*M + j]). Index i_d -> k_d depends on opts.modeord:
 *   0 (CMCL): k = i - floor(N/2);  1 (FFT order): k = i for i < ceil(N/2), else i - N.
 *   Complex data are interleaved (re, im) pairs of the plan's precision.
 *
 * Errors: every function returns a warpfft_status. On failure, warpfft_last_error() returns a
 * message for the calling thread (valid until that thread's next warpfft call). No function
 * prints, aborts or exits.
 *
 * Threads: the library's global state (driver and cuFFT loading, module cache) is initialised
 * once, on first use, thread-safely. A plan may be used by one thread at a time; different
 * plans may be used from different threads concurrently.
 *
 * fork(): as with CUDA itself, the child of a fork() made after the parent's first GPU call
 * cannot use the GPU: there every warpfft call that needs it (including on plans and pointers
 * inherited from the parent) returns WARPFFT_ERR_CUDA saying so, without hanging, even if
 * another thread of the parent was inside warpfft at the time of the fork. Calls that need no
 * GPU (warpfft_plan_params, the manifest, warpfft_cufft_probe) work. Fork before the first
 * GPU call, or start workers with exec (Python multiprocessing: 'spawn' or 'forkserver').
 *
 * Streams: setpts and execute enqueue their work on opts.stream (0 = the legacy default stream)
 * and return without waiting for the GPU, except where noted below. Input arrays must stay
 * valid and unchanged until the work on that stream has finished.
 *
 * CUDA graphs (docs/cuda-graphs.md): setpts and execute may be captured into a graph
 * (cuStreamBeginCapture on opts.stream). A replay then reads and writes the plan's buffers, so
 * the graph holds the plan until it and every executable graph made from it are destroyed and
 * CUDA has run the destructor of the user object warpfft gave it: meanwhile
 * warpfft_plan_destroy refuses the plan (WARPFFT_ERR_INVALID_ARG, the plan stays valid), no
 * setpts may grow its per-point arrays, no setpts3 runs, and the live-plan pool neither hands
 * it out nor destroys it. During a capture, what would wait for the stream or allocate refuses
 * with WARPFFT_ERR_UNSUPPORTED, changing nothing and leaving the capture intact: plan creation
 * (so a pool acquire that finds no idle plan: make or warm up plans before capturing), a setpts
 * of a plan with opts.check_points = 1 or of more points than its arrays hold, setpts3,
 * setpts_check, destroy, and the pool release of a plan that ran work outside the capture.
 * Plans on the legacy stream refuse while a blocking stream of their context captures.
 *
 * Memory: all arrays passed to setpts/execute are device pointers (cuMemAlloc, cudaMalloc,
 * cupy, torch, warpfft_malloc, ...) on the plan's device. The plan owns its workspace
 * (warpfft_plan_workspace_bytes) and frees it in warpfft_plan_destroy; execute never allocates.
 */
#ifndef WARPFFT_H
#define WARPFFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WARPFFT_BUILDING) && defined(__GNUC__)
#define WARPFFT_API __attribute__((visibility("default")))
#else
#define WARPFFT_API
#endif

#define WARPFFT_VERSION_MAJOR 0
#define WARPFFT_VERSION_MINOR 1
#define WARPFFT_VERSION_PATCH 0

/* Status codes. 0 is success; every other value names one kind of failure. */
typedef enum warpfft_status {
    WARPFFT_SUCCESS = 0,
    WARPFFT_ERR_INVALID_ARG = 1,     /* null pointer, bad enum or option value */
    WARPFFT_ERR_BAD_TYPE = 2,        /* transform type not 1, 2 or 3 */
    WARPFFT_ERR_BAD_DIM = 3,         /* dim not 1, 2 or 3 */
    WARPFFT_ERR_BAD_SIZE = 4,        /* a mode count < 1, ntransf < 1, or sizes too large
                                        (type 3: a grid the spreads of points need) */
    WARPFFT_ERR_BAD_TOL = 5,         /* tol NaN, or one the options cannot reach (an explicit
                                        upsampfac); others run at warpfft_tol_effective */
    WARPFFT_ERR_BAD_NPOINTS = 6,     /* M < 0 */
    WARPFFT_ERR_BAD_POINTS = 7,      /* a NaN or infinite coordinate */
    WARPFFT_ERR_PRECISION = 8,       /* arrays' precision differs from the plan's */
    WARPFFT_ERR_NO_POINTS = 9,       /* execute before setpts */
    WARPFFT_ERR_NO_DRIVER = 10,      /* libcuda.so.1 missing, or a symbol missing in it */
    WARPFFT_ERR_NO_DEVICE = 11,      /* no CUDA device, or the device ordinal is out of range */
    WARPFFT_ERR_DRIVER_TOO_OLD = 12, /* driver older than the embedded kernels need */
    WARPFFT_ERR_NO_KERNEL = 13,      /* no embedded image runs on this GPU, or a kernel missing */
    WARPFFT_ERR_NO_CUFFT = 14,       /* cuFFT library not found or a symbol missing */
    WARPFFT_ERR_CUFFT = 15,          /* a cuFFT call failed */
    WARPFFT_ERR_OUT_OF_MEMORY = 16,  /* device (or host) memory exhausted */
    WARPFFT_ERR_CUDA = 17,           /* any other CUDA driver error */
    WARPFFT_ERR_UNSUPPORTED = 18,    /* valid request this call does not do */
    WARPFFT_ERR_INTERNAL = 19,       /* a bug in warpfft: please report it */
    WARPFFT_ERR_NO_NVRTC = 20        /* NVRTC (run-time compiler) not found, in a build that
                                      * compiles its kernels at run time (feature nvrtc) */
} warpfft_status;

typedef enum warpfft_precision { WARPFFT_F32 = 1, WARPFFT_F64 = 2 } warpfft_precision;

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
} warpfft_opts;

/* A plan handle: valid from a successful warpfft_plan_create until a successful
 * warpfft_plan_destroy (see there), like a pointer from malloc until free. */
typedef struct warpfft_plan_s *warpfft_plan;

/* What a plan chose; filled by warpfft_plan_get_info. */
typedef struct warpfft_plan_info {
    int32_t type, dim, precision, method; /* method: the one actually used (never AUTO) */
    int32_t width;                        /* kernel width in fine-grid points */
    double beta;                          /* kernel shape parameter (sinh type, docs/accuracy.md) */
    double upsampfac;
    int64_t n_modes[3]; /* N1, N2, N3 (1 for unused dims) */
    int64_t n_fine[3];  /* fine-grid size per dim (1 for unused dims) */
    int32_t bin_size[3];
    int64_t ntransf;
    int64_t n_points;       /* M of the last setpts, -1 before */
    size_t workspace_bytes; /* device memory the plan holds now */
    /* type 3 (after a setpts3 with M, K > 0; before, and for types 1 and 2: n_targets -1 and
     * the rest 0). Sources x_d = C_d + X_d*[-1, 1], targets s_d = D_d + S_d*[-1, 1];
     * spreading grid n_fine (== n_modes: the modes of the inner type-2 step) with kernel
     * width/beta; rescaled x' = (x - C)/gamma on it, inner targets s' = (2 pi/n_fine) gamma
     * (s - D); the inner type-2 step's own kernel and fine grid below. */
    int64_t n_targets;       /* K of the last setpts3, -1 before */
    int32_t inner_precision; /* precision the inner steps run in (an f32 plan may use f64) */
    int32_t inner_width;     /* kernel width of the inner type-2 step */
    double inner_beta;
    int64_t inner_fine[3];         /* fine grid of the inner type-2 step */
    double x_center[3], x_half[3]; /* C_d, X_d */
    double s_center[3], s_half[3]; /* D_d, S_d */
    double gamma[3];
    /* Rounding floor of the relative l2 error for points in [-pi, pi): the plan promises
     * max(tol, tol_floor) (docs/accuracy.md). Appended: the struct only grows at its end. */
    double tol_floor;
    /* The cost model's predicted execute time in ms (one call, on an H100) at the options'
     * points_hint points (or one per mode), and the spreading kernel (warpfft_kernel).
     * Appended. */
    double predicted_ms;
    int32_t kernel;
    /* opts.deterministic of the plan (1: bitwise-reproducible executes; method then says OD
     * for types 1 and 3). Appended. */
    int32_t deterministic;
    /* The point sets of the last setpts: 1 for warpfft_setpts / warpfft_setpts3 (every
     * transform takes the same points), n_sets for warpfft_setpts_sets / warpfft_setpts3_sets
     * (n_points, n_targets: per set); -1 before a setpts (and from warpfft_plan_params).
     * Appended. */
    int64_t n_sets;
    /* The tolerance the plan was made for: tol as given, or the nearer end of the precision's
     * range when it was outside (warpfft_tol_effective). Appended. */
    double tol;
} warpfft_plan_info;

/* ---- library, build and runtime information (no GPU needed unless stated) ---- */

/* "0.1.0". */
WARPFFT_API const char *warpfft_version(void);
/* Message for the last failure on this thread ("" if none). */
WARPFFT_API const char *warpfft_last_error(void);
/* Short fixed name of a status, e.g. "WARPFFT_ERR_NO_DEVICE". */
WARPFFT_API const char *warpfft_status_name(int status);
/* JSON describing the embedded kernels: mode ("jit", "aot" or "aot+jit"), real archs, PTX arch,
 * toolkit version, content hash, modules and their kernel names. Static; never fails. */
WARPFFT_API const char *warpfft_build_manifest(void);

/* Embedded kernel blobs, for inspection (e.g. to list a fatbin's images). Modules are numbered
 * 0..warpfft_embedded_module_count()-1, blobs within a module 0..n-1. kind: 1 = PTX text,
 * 2 = fatbin. Any output pointer may be NULL. */
WARPFFT_API size_t warpfft_embedded_module_count(void);
WARPFFT_API warpfft_status warpfft_embedded_module(size_t module, const char **name,
                                                   size_t *n_blobs);
WARPFFT_API warpfft_status warpfft_embedded_blob(size_t module, size_t blob, int *kind,
                                                 const char **label, const void **data,
                                                 size_t *size);

/* Finds and loads cuFFT (no GPU needed). Search order: $WARPFFT_CUFFT_LIB; NVIDIA pip wheels
 * beside libwarpfft (../nvidia/cufft/lib, ../nvidia/cu13/lib, ../nvidia/cu12/lib) and in
 * $VIRTUAL_ENV's site-packages; $CUDA_PATH/lib64 and $CUDA_HOME/lib64; /usr/local/cuda/lib64;
 * then the system loader by SONAME (libcufft.so.12, libcufft.so.11). Setting
 * WARPFFT_CUFFT_DEFAULT_PATHS=0 skips the last two (for hermetic deployments and tests).
 * In a setuid/setgid process these environment variables are ignored (secure_getenv).
 * On success writes the loaded file's path (NUL-terminated, truncated to path_len) and
 * cufftGetVersion's value. On failure WARPFFT_ERR_NO_CUFFT; the message lists every place tried. */
WARPFFT_API warpfft_status warpfft_cufft_probe(char *path, size_t path_len, int *version);

/* Initialises the driver and the device in opts-less form (device ordinal), retaining its
 * primary context. Called implicitly by plan creation; explicit calls are optional. */
WARPFFT_API warpfft_status warpfft_init(int device);

/* Runtime report as JSON into buf (NUL-terminated, truncated to len; *needed, if not NULL,
 * receives the full length + 1): build manifest summary, driver version, device name, sm,
 * per loaded module the image used ("sass", "ptx-jit", "ptx-link"; "nvrtc" when compiled by
 * NVRTC now, "nvrtc-cache" when read from the kernel cache) and JIT/load time in ms, cuFFT path
 * and version, "nvrtc" (path and version; null when not loaded, with "nvrtc_error" in builds
 * with embedded sources) and "kernel_cache" ("dir", null when off; "note": why it is off, or
 * the last problem met, e.g. an unwritable directory or a corrupt entry removed). Always fills
 * buf with what is known (with "gpu_error" and "cufft_error" fields for what failed); returns
 * the status of driver/device initialisation for `device`. */
WARPFFT_API warpfft_status warpfft_runtime_info(int device, char *buf, size_t len, size_t *needed);

/* ---- device memory helpers, for callers without CUDA bindings ---- */

/* All operate on `device` (its primary context). Copies and memset are synchronous: they
 * return once the data are in place, so work enqueued afterwards on any stream (a non-blocking
 * one included) sees them. Like cuMemcpy, they are ordered after earlier work on the legacy
 * default stream only: wait for other streams first (warpfft_stream_sync). */
WARPFFT_API warpfft_status warpfft_malloc(int device, size_t bytes, void **dptr);
WARPFFT_API warpfft_status warpfft_free(int device, void *dptr); /* NULL is a no-op */
WARPFFT_API warpfft_status warpfft_memcpy_htod(int device, void *dst, const void *src,
                                               size_t bytes);
WARPFFT_API warpfft_status warpfft_memcpy_dtoh(int device, void *dst, const void *src,
                                               size_t bytes);
/* Sets `bytes` bytes at dptr to (unsigned char)value. */
WARPFFT_API warpfft_status warpfft_memset(int device, void *dptr, int value, size_t bytes);
/* Waits for all work on a stream (0 = legacy default stream) of the device. */
WARPFFT_API warpfft_status warpfft_stream_sync(int device, uint64_t stream);

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

/* ---- plans ---- */

/* Creates a plan. type 1, 2 or 3 (type 3: n_modes is ignored and may be NULL; the grids are
 * chosen at warpfft_setpts3, when the points' spreads are known); dim 1..3; n_modes[0..dim-1] >= 1
 * (entries past dim ignored); iflag: sign of the exponent (>= 0 means +1, < 0 means -1); ntransf >=
 * 1 transforms share one point set; tol: requested relative l2 accuracy, f32 1e-6..1e-1, f64
 * 1e-13..1e-1 (docs/accuracy.md: floors; one outside runs at the nearer end,
 * warpfft_tol_effective); opts may be NULL for defaults. Loads the kernels the
 * plan needs (JIT builds compile them now, each module once per process, several at a time),
 * creates the cuFFT plan and allocates the fine grid, or takes those from the plan cache when a
 * plan of the same shape was destroyed before (see warpfft_release_cached). */
WARPFFT_API warpfft_status warpfft_plan_create(int type, int dim, const int64_t n_modes[3],
                                               int iflag, int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan *plan);

/* Sets the M non-uniform points (device arrays of M reals of the plan's precision; y needed
 * for dim >= 2, z for dim 3; unused ones may be NULL). Sorts points into bins. The plan keeps
 * the pointers: the arrays must stay valid and unchanged until the next setpts or destroy.
 * Host sync: none with opts.check_points = 0 (the default): the binning is enqueued on the
 * stream and sized on the device; a NaN or infinite coordinate is reported through the plan's
 * outputs (NaN) and warpfft_setpts_check. With opts.check_points = 1 it waits once for its own
 * work on the stream and returns WARPFFT_ERR_BAD_POINTS for a non-finite coordinate.
 * On failure: argument errors and a failure to make the device's context current change
 * nothing (the previous points stay in use); any later failure leaves the plan without points
 * (execute returns WARPFFT_ERR_NO_POINTS until a setpts succeeds) and frees the per-point
 * arrays the failed call allocated. */
WARPFFT_API warpfft_status warpfft_setpts(warpfft_plan plan, warpfft_precision precision, int64_t M,
                                          const void *x, const void *y, const void *z);

/* Batched points: each transform (or each group of transforms) of the plan takes its own point
 * set. Sets n_sets sets of M points each: x, y, z are device arrays of n_sets * M reals of the
 * plan's precision, set after set (point j of set s at index s * M + j; y for dim >= 2, z for
 * dim 3). n_sets divides ntransf: set s feeds the tps = ntransf / n_sets transforms
 * s * tps .. s * tps + tps - 1 (n_sets = ntransf: one set per transform; n_sets = 1 is
 * warpfft_setpts). Execute's arrays keep their layout: c holds ntransf * M values,
 * transform t's at t * M (its points those of set t / tps), fk ntransf mode arrays. All the
 * sets are sorted in one pass and every later execute runs them in one launch per stage (types
 * 1 and 2: 1-3D, f32 and f64, methods GM and SM, spread/interp-only plans too; not method OD,
 * so not a deterministic type 1 or 3, which take one set). M is the same
 * for every set: pad a shorter set with points of strength 0 (type 1) or ignore the values
 * execute writes at the padding (type 2) -- docs/batched-points.md. Everything else as
 * warpfft_setpts (pointers kept, asynchronous, check_points, warpfft_setpts_check: a NaN or
 * infinite coordinate in any set makes every output of the plan NaN or fails a checked setpts).
 * WARPFFT_ERR_INVALID_ARG when n_sets < 1 or does not divide ntransf; WARPFFT_ERR_UNSUPPORTED
 * for more than 65535 sets or (n_sets > 1) a plan spreading by method OD; WARPFFT_ERR_BAD_SIZE when
 * n_sets times the plan's spreading bins reaches 2^31; WARPFFT_ERR_BAD_NPOINTS when n_sets * M
 * exceeds 2^56. Type 3: warpfft_setpts3_sets. warpfft_plan_info.n_sets reports the sets. (A warpfft
 * extension: the reference library has no such call.) */
WARPFFT_API warpfft_status warpfft_setpts_sets(warpfft_plan plan, warpfft_precision precision,
                                               int64_t n_sets, int64_t M, const void *x,
                                               const void *y, const void *z);

/* Waits for the plan's stream (so for its last setpts, and whatever was enqueued after it) and
 * returns WARPFFT_ERR_BAD_POINTS if the last setpts' points held a NaN or infinite coordinate
 * (the plan keeps them: its executes write NaN), WARPFFT_SUCCESS if they were all finite (or
 * M = 0, or opts.check_points = 1, where setpts has checked already), WARPFFT_ERR_NO_POINTS
 * without a successful setpts. Type 3: setpts3 checks itself; this returns its result too. */
WARPFFT_API warpfft_status warpfft_setpts_check(warpfft_plan plan);

/* Runs ntransf transforms. type 1: reads c (ntransf*M complex), writes fk (ntransf*N1*N2*N3
 * complex); type 2: reads fk, writes c; type 3: reads c (ntransf*M), writes fk (ntransf*K
 * complex, in the order of the targets). Asynchronous on the plan's stream; no allocation. */
WARPFFT_API warpfft_status warpfft_execute(warpfft_plan plan, warpfft_precision precision, void *c,
                                           void *fk);

/* Frees everything the plan holds, except what goes to the plan cache (warpfft_release_cached:
 * the cuFFT plan, its work area, the fine grid and the deconvolution factors, cached after
 * waiting for the plan's stream, as freeing them would). NULL is a no-op. Like free(): after a
 * successful destroy the handle is dangling, and passing it to any warpfft function
 * again (a second destroy included) is undefined behaviour that warpfft does not detect; set it
 * to NULL.
 * On failure (the device's context cannot be made current, or cufftDestroy fails) the plan is
 * not freed: it stays valid, holding only what could not be released, and
 * warpfft_plan_destroy may be called on it again. */
WARPFFT_API warpfft_status warpfft_plan_destroy(warpfft_plan plan);

/* The plan cache. Making a cuFFT plan takes milliseconds and the deconvolution factors ~20 ms
 * at N = 1e6, so warpfft_plan_destroy keeps a plan's cuFFT plan with its work area and fine
 * grid (keyed by device, fine grid, ntransf, precision) and its factors (keyed by precision,
 * N_d, fine size, width, beta) in a process-wide cache, and warpfft_plan_create takes them for
 * the next plan of that shape: re-creating a plan costs well under a millisecond. Idle items
 * are bounded: at most 32, and at most WARPFFT_PLAN_CACHE_MB MiB of device memory (default
 * 1024; 0 turns the cache off; read once), the least recently cached going first. A warpfft
 * device allocation or cuFFT plan that runs out of memory empties the cache and tries again,
 * so the cache never makes warpfft itself run out; other allocators do not see it, so call
 * this function to hand the memory back (e.g. before a large allocation elsewhere). It
 * destroys every idle item now; plans in use are untouched. The cache is emptied at exit and
 * forgotten in the child of a fork(). warpfft_runtime_info reports it ("plan_cache") and where
 * plan creation spent its time ("plan_create"). Thread-safe; always WARPFFT_SUCCESS. */
WARPFFT_API warpfft_status warpfft_release_cached(void);

/* ---- the live-plan pool ----
 *
 * Plans ready to run, shared by everything in the process that runs transforms one call at a
 * time: the Python package's one-call functions, its JAX handler and PyTorch ops, and any C
 * caller. warpfft_pool_acquire hands out an idle plan made with exactly the same arguments
 * (every argument of warpfft_plan_create, every field of opts, the stream and the device
 * included), or creates one; the plan is the caller's alone until warpfft_pool_release gives
 * it back. Limits apply to the idle plans: at most max_plans of them holding at most max_bytes
 * of device workspace (their warpfft_plan_workspace_bytes at release; defaults 16 plans and
 * 1 GiB, from $WARPFFT_PLAN_CACHE_SIZE and $WARPFFT_PLAN_CACHE_BYTES read at the first pool
 * call, or warpfft_pool_set_limits); beyond them the least recently released go first. Plans
 * in use are never destroyed under their user: a clear or a limit that wants one destroys it
 * when it is released.
 *
 * Streams: release records an event on the plan's stream (opts.stream) after the caller's
 * work, and a pooled plan is destroyed only after waiting for that event, never for the stream:
 * a caller may destroy its stream once it has released the plan. Release before destroying the
 * stream. The pool's lock is never held while a plan is created or destroyed or an event is
 * waited for.
 *
 * Points: release forgets the plan's points (the next acquirer must set its own; executing
 * without gives WARPFFT_ERR_NO_POINTS) unless flags has WARPFFT_POOL_KEEP_POINTS. A caller that
 * keeps points and wants them back later compares warpfft_plan_points_id after acquiring with
 * the id it read after its setpts: any setpts or setpts3 since (by whoever acquired the plan
 * meanwhile) changes it, and ids are never reused in the process, so equal ids mean the same
 * point set (whose arrays the caller must keep valid, as for any setpts).
 *
 * CUDA graphs: a plan whose work was captured into a graph (see "CUDA graphs" above) is the
 * graph's until it is destroyed: released, it counts as busy, and a clear or limit that wants
 * it (or WARPFFT_POOL_DISCARD) destroys it at the first pool call that destroys plans after
 * that; otherwise it is idle again. During a capture a release records no fence: it refuses
 * (WARPFFT_ERR_UNSUPPORTED, nothing changed) a plan that ran work outside the capture since it
 * was acquired.
 *
 * Thread-safe. A pooled plan must not be passed to warpfft_plan_destroy (it refuses with
 * WARPFFT_ERR_INVALID_ARG). Like the cache of plan resources, the pool is forgotten in the
 * child of a fork(); at exit its idle plans are not destroyed (the process's memory goes with
 * it; call warpfft_pool_clear first where that matters, e.g. under a leak checker). */

/* warpfft_pool_release flag: the plan keeps its points for a later acquirer. */
#define WARPFFT_POOL_KEEP_POINTS 1u
/* warpfft_pool_release flag: destroy the plan now instead of keeping it idle, e.g. one that ran
 * out of memory, so that its device memory is free before the caller tries a smaller plan
 * (its cuFFT plan, fine grid and factors go to the cache of plan resources, which a later
 * allocation that runs out of memory empties first). */
#define WARPFFT_POOL_DISCARD 2u

/* Filled by warpfft_pool_get_info. Counts since the process started, except where "now". */
typedef struct warpfft_pool_info {
    uint32_t struct_size; /* set by the caller to sizeof(warpfft_pool_info): the struct only grows
                           * at its end, and the library fills what fits in struct_size */
    uint32_t reserved;
    int64_t idle;       /* idle plans now */
    int64_t busy;       /* acquired and not yet released, or held by a CUDA graph, now */
    int64_t idle_bytes; /* device workspace of the idle plans now */
    int64_t max_plans, max_bytes;
    int64_t created;   /* plans the pool created (acquires that found no idle plan) */
    int64_t hits;      /* acquires served by an idle plan */
    int64_t destroyed; /* plans destroyed by limits, clears and releases into a full pool */
} warpfft_pool_info;

/* An idle plan of these arguments (same meaning and checks as warpfft_plan_create), or a new
 * one. *plan is valid until warpfft_pool_release. Argument errors as plan_create's. */
WARPFFT_API warpfft_status warpfft_pool_acquire(int type, int dim, const int64_t n_modes[3],
                                                int iflag, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, warpfft_plan *plan);
/* Gives back a plan from warpfft_pool_acquire (flags: 0, WARPFFT_POOL_KEEP_POINTS and/or
 * WARPFFT_POOL_DISCARD). It returns to the pool, or is destroyed now when asked to (DISCARD), a
 * clear came while it was in use, the pool is full or off (max_plans 0), or it alone exceeds
 * max_bytes: then a failure of that destroy or
 * of the wait for its work (an asynchronous error) is returned, after destroying. Either way
 * the handle is the caller's no more. WARPFFT_ERR_INVALID_ARG for NULL, a plan the pool did not
 * hand out, or one released already (nothing changes then). */
WARPFFT_API warpfft_status warpfft_pool_release(warpfft_plan plan, uint32_t flags);
/* Destroys every idle plan now and every plan in use at its release. Returns the first failure
 * of a destroy (or of the wait for a plan's work), after trying all. Does not empty the cache of
 * plan resources (warpfft_release_cached does). */
WARPFFT_API warpfft_status warpfft_pool_clear(void);
/* Changes the limits (a negative value leaves that one unchanged) and destroys the idle plans
 * beyond them; max_plans 0 turns pooling off. Returns as warpfft_pool_clear. */
WARPFFT_API warpfft_status warpfft_pool_set_limits(int64_t max_plans, int64_t max_bytes);
/* Counts and limits (info->struct_size set first; WARPFFT_ERR_INVALID_ARG when too small). */
WARPFFT_API warpfft_status warpfft_pool_get_info(warpfft_pool_info *info);

/* An id of the plan's current point set, unique in the process: 0 before the first setpts; a
 * new one whenever the points are replaced or lost (every warpfft_setpts/warpfft_setpts3 that
 * gets past its argument checks, failed ones included, and every warpfft_pool_release without
 * WARPFFT_POOL_KEEP_POINTS), and at any release of a plan whose id is still 0 (so a pooled plan
 * with id 0 is one warpfft_pool_acquire has just made). For callers that reuse a pooled plan's
 * points. */
WARPFFT_API warpfft_status warpfft_plan_points_id(warpfft_plan plan, uint64_t *id);

/* plan_info.width and beta: the kernel the plan runs with. A type 1 or 2 plan may run a
 * narrower kernel than the width every point set meets tol with when the points allow it
 * (docs/accuracy.md, "The width the points need"); its setpts chooses on the device, without a
 * host sync. info then reports the width the current points took once a wait has read it back
 * (a setpts with opts.check_points, warpfft_setpts_check), and the plan's every-point-set width
 * (the widest it runs) otherwise, and before any setpts. */
WARPFFT_API warpfft_status warpfft_plan_get_info(warpfft_plan plan, warpfft_plan_info *info);

/* Device bytes the plan holds now (fine grid, cuFFT work area, sort and bin arrays). */
WARPFFT_API warpfft_status warpfft_plan_workspace_bytes(warpfft_plan plan, size_t *bytes);

/* Computes what warpfft_plan_create would choose (width, beta, fine grid, bins, method where
 * it does not depend on the GPU) without a GPU. Same argument checks as plan_create. */
WARPFFT_API warpfft_status warpfft_plan_params(int type, int dim, const int64_t n_modes[3],
                                               int64_t ntransf, double tol,
                                               warpfft_precision precision,
                                               const warpfft_opts *opts, warpfft_plan_info *info);

/* ---- type 3 (non-uniform to non-uniform) ----
 *
 * f[k] = sum_j c[j] exp(iflag * i * (s_k . x_j)), k < K, j < M, as FINUFFT. The algorithm:
 * centre and rescale sources and targets (in double), pre-phase the strengths, spread them
 * onto a fine grid sized from the spreads X_d*S_d, evaluate that grid's Fourier series at the
 * rescaled targets with an inner type-2 step (FFT + interpolation), and divide by the
 * spreading kernel's Fourier transform at each target, times a phase. Width, grids and the
 * inner tolerance are chosen from tol with the same error prediction as types 1 and 2; f32
 * plans whose rescaled coordinates would lose too many bits in f32 run the inner steps in f64
 * (plan_info.inner_precision says which). */

/* Sets the M sources (x, y, z: device arrays of the plan's precision; y for dim >= 2, z for
 * dim 3) and the K targets (s, t, u likewise) of a type-3 plan, and chooses the grids (which
 * are reallocated when they change). M = 0: execute writes zeros; K = 0: execute does nothing
 * (as FINUFFT). The plan does not keep the pointers: the arrays may be freed or changed once
 * the call returns. Host syncs: one to read the bounds (a NaN or infinite coordinate gives
 * WARPFFT_ERR_BAD_POINTS, whatever opts.check_points says), and one at the end (the binnings
 * of sources and targets are enqueued without waiting; the wait is what lets the caller free
 * the arrays). WARPFFT_ERR_BAD_SIZE
 * names the grid a too large X_d*S_d would need. Type 1/2 plans refuse it (and type-3 plans
 * refuse warpfft_setpts). */
WARPFFT_API warpfft_status warpfft_setpts3(warpfft_plan plan, warpfft_precision precision,
                                           int64_t M, const void *x, const void *y, const void *z,
                                           int64_t K, const void *s, const void *t, const void *u);

/* Batched points for type 3: n_sets sets of M sources (x, y, z: n_sets * M reals each, set after
 * set) and of K targets (s, t, u: n_sets * K reals each); n_sets divides ntransf and transform
 * t uses set t / (ntransf / n_sets), its sources and its targets (as warpfft_setpts_sets). c
 * holds ntransf * M strengths, fk ntransf * K values. One choice of grids serves every set: that
 * of the bounds of all the sources and all the targets (plan_info reports it), so sets of very
 * different extents cost the grid of the widest. Checks, syncs and errors as warpfft_setpts3,
 * plus those of warpfft_setpts_sets for n_sets. */
WARPFFT_API warpfft_status warpfft_setpts3_sets(warpfft_plan plan, warpfft_precision precision,
                                                int64_t n_sets, int64_t M, const void *x,
                                                const void *y, const void *z, int64_t K,
                                                const void *s, const void *t, const void *u);

/* What warpfft_setpts3 would choose for sources in [x_lo[d], x_hi[d]] and targets in
 * [s_lo[d], s_hi[d]] (d < dim; finite, lo <= hi), without a GPU: the same checks as
 * plan_create(3, ...). Fills the type-3 fields of info; n_points and n_targets are -1;
 * workspace_bytes counts the grids only (no cuFFT work area, no per-point arrays). */
WARPFFT_API warpfft_status warpfft_plan_params3(int dim, int64_t ntransf, double tol,
                                                warpfft_precision precision,
                                                const warpfft_opts *opts, const double x_lo[3],
                                                const double x_hi[3], const double s_lo[3],
                                                const double s_hi[3], warpfft_plan_info *info);

/* ---- reference ---- */

/* Exact non-uniform DFT in double precision on the GPU, at a sample of outputs, for checking
 * accuracy. Arguments as the plan's (x, y, z, c, fk device arrays of `precision`, transform 0 of
 * a batch). type 1: out[s] = f[k(sample[s])] for mode-array indices sample[s] (0 <= sample <
 * N1*N2*N3, index ordering per modeord); type 2: out[s] = c[sample[s]] for point indices.
 * sample: host array of n_sample indices; out: host array of 2*n_sample doubles (re, im).
 * Synchronous. */
WARPFFT_API warpfft_status warpfft_direct_sample(int type, int dim, const int64_t n_modes[3],
                                                 int iflag, int modeord,
                                                 warpfft_precision precision, int device, int64_t M,
                                                 const void *x, const void *y, const void *z,
                                                 const void *c, const void *fk, int64_t n_sample,
                                                 const int64_t *sample, double *out);

/* Type 3: out[i] = f[sample[i]] = sum_j c[j] exp(iflag * i * s_k . x_j), k = sample[i] (a
 * target index, 0 <= k < K), exactly in double on the GPU, for M sources (x, y, z), K targets
 * (s, t, u) and strengths c (device arrays of `precision`; transform 0). out: host array of
 * 2*n_sample doubles. Synchronous. */
WARPFFT_API warpfft_status warpfft_direct_sample3(int dim, int iflag, warpfft_precision precision,
                                                  int device, int64_t M, const void *x,
                                                  const void *y, const void *z, const void *c,
                                                  int64_t K, const void *s, const void *t,
                                                  const void *u, int64_t n_sample,
                                                  const int64_t *sample, double *out);

/* ---- tuning aids ---- */

/* Times the FFT step of execute alone: a cuFFT plan made as a NUFFT plan's (in-place batched
 * C2C for WARPFFT_F32, Z2Z for WARPFFT_F64, forward, over `batch` grids of n_fine[0..dim-1]
 * points, dimension 1 fastest; e.g. warpfft_plan_info's n_fine and the plan's ntransf), on the
 * legacy default stream of `device`, through the cuFFT warpfft loads (warpfft_cufft_probe).
 * Runs one warm-up transform, then `reps` (1..100000) between two CUDA events; *ms receives
 * their elapsed time divided by reps (0 on failure). Allocates the grid (zeroed) and cuFFT's
 * work area itself and frees everything, cuFFT plan and events included, before it returns.
 * Statuses: BAD_DIM, BAD_SIZE (an n_fine[d] < 1, batch < 1, or a grid too large for memory),
 * INVALID_ARG (NULL pointer, bad precision or reps), OUT_OF_MEMORY, NO_DRIVER (also when the
 * driver lacks the event functions), NO_DEVICE, NO_CUFFT, CUFFT, CUDA. Synchronous. */
WARPFFT_API warpfft_status warpfft_bench_fft(int dim, const int64_t n_fine[3],
                                             warpfft_precision precision, int64_t batch, int device,
                                             int reps, double *ms);

/* ---- the Toeplitz normal operator (docs/toeplitz.md) ----
 *
 * T = A^H W A for M points x_j, where A is the type-2 transform of sign iflag,
 * (A f)_j = sum_k f[k] exp(iflag * i * k . x_j), A^H the type-1 transform of sign -iflag (its
 * adjoint), and W = diag(w_j) the weights: real (e.g. density compensation), complex, or none
 * (all ones). T is a convolution of the modes with one fixed kernel,
 *     (T f)[k] = sum_k' K(k - k') f[k'],   K(m) = sum_j w_j exp(-iflag * i * m . x_j),
 * so the operator holds the kernel's spectrum -- the DFT of K on a grid of
 * L_d = the smallest even 2,3,5,7-smooth integer >= 2 N_d - 1 points per dimension, computed at
 * creation with one type-1 transform of L_1 x L_2 x L_3 modes and one FFT -- and applies T as:
 * zero-pad the modes to the L grid, FFT, multiply by the spectrum, inverse FFT, crop. No
 * spreading, no sorting, no interpolation per application.
 *
 * The adjoint T^H = A^H conj(W) A is the same with the spectrum conjugated; with real weights
 * (or none) T is Hermitian and its spectrum real. Accuracy: the kernel's type-1 transform runs
 * at tol/2 (at least the precision's smallest tol), so that T f has a relative l2 error <= tol
 * against type 2 + weights + type 1 for generic modes f (docs/toeplitz.md: the argument and the
 * measurements).
 *
 * Mode arrays: ntransf arrays of N1*N2*N3 complex values each, as plans (dimension 1 fastest,
 * index <-> mode per opts.modeord). The spectrum (warpfft_toeplitz_spectrum): L1*L2*L3 values,
 * dimension 1 fastest, index l_d <-> frequency l_d of the FFT (an FFT of size L_d), scaled by
 * 1/(L1 L2 L3); reals (weights none or real) or complexes (weights complex).
 * Options: modeord (the mode arrays), device, stream; upsampfac, method, bin_size,
 * max_subprob and deterministic apply to the kernel's type-1 transform (the application is
 * FFTs and pointwise products: the same bits every run either way); spreadinterponly must be
 * 0; check_points is ignored (the points are always checked: BAD_POINTS).
 */

typedef enum warpfft_weights {
    WARPFFT_WEIGHTS_NONE = 0,   /* W = identity: w may be NULL */
    WARPFFT_WEIGHTS_REAL = 1,   /* w: M reals of the precision */
    WARPFFT_WEIGHTS_COMPLEX = 2 /* w: M complexes of the precision (interleaved) */
} warpfft_weights;

/* An operator handle: valid from a successful warpfft_toeplitz_create until a successful
 * warpfft_toeplitz_destroy. One thread at a time per operator, as plans. */
typedef struct warpfft_toeplitz_s *warpfft_toeplitz;

/* What an operator holds (warpfft_toeplitz_get_info) or would hold (warpfft_toeplitz_params). */
typedef struct warpfft_toeplitz_info {
    int32_t dim, precision, weights, modeord;
    int32_t iflag;          /* the sign of A (+1 or -1); 0 from warpfft_toeplitz_params */
    int32_t spectrum_real;  /* 1: the spectrum is real (weights none or real) */
    int32_t kernel_width;   /* the kernel's type-1 transform: its spreading kernel width */
    int32_t fft_steps;      /* the application's FFT: 1 cuFFT plan of the grid, or 2 steps that
                               skip the padding (larger grids; docs/toeplitz.md) */
    int64_t n_modes[3];     /* N_d (1 for unused dims) */
    int64_t n_grid[3];      /* L_d (1 for unused dims) */
    int64_t kernel_fine[3]; /* the fine grid of the kernel's type-1 transform */
    int64_t ntransf;
    int64_t n_points; /* M (0: the zero operator); -1 from warpfft_toeplitz_params */
    double tol;
    double kernel_tol;       /* the kernel's type-1 tolerance */
    double kernel_upsampfac; /* and its upsampling factor */
    double build_ms;         /* wall time of warpfft_toeplitz_create; 0 from _params */
    size_t spectrum_bytes;   /* the spectrum: L1 L2 L3 reals or complexes; 0 for M = 0 */
    size_t grid_bytes;       /* the work grid: ntransf L1 L2 L3 complexes */
    size_t workspace_bytes;  /* device bytes the operator holds: spectrum, grid and cuFFT's work
                                area (warpfft_toeplitz_params: spectrum and grid only) */
} warpfft_toeplitz_info;

/* Creates the operator for M points (x, y, z: device arrays of M reals of `precision`; y for
 * dim >= 2, z for dim 3) and weights of kind `weights` (w: device array, NULL for
 * WARPFFT_WEIGHTS_NONE), for ntransf mode arrays at a time, n_modes[0..dim-1] modes. iflag: the
 * sign of A (>= 0: +1). tol as plans (f32 1e-6..1e-1, f64 1e-13..1e-1). Computes the kernel's
 * spectrum now (a type-1 transform and an FFT on opts.stream, through the plan cache) and
 * waits for it: the points and weights may be freed once it returns. M = 0 makes the zero
 * operator, with no spectrum of its own (x, y, z, w ignored): what
 * warpfft_toeplitz_apply_spectrum needs. Holds the work grid (ntransf L1 L2 L3 complexes) and
 * the FFT plans of the application. BAD_POINTS for a NaN or infinite coordinate. */
WARPFFT_API warpfft_status warpfft_toeplitz_create(
    int dim, const int64_t n_modes[3], int iflag, int64_t ntransf, double tol,
    warpfft_precision precision, const warpfft_opts *opts, int64_t M, const void *x, const void *y,
    const void *z, int weights, const void *w, warpfft_toeplitz *op);

/* out = T in (adjoint != 0: T^H in) for the ntransf mode arrays in `in` (ntransf*N1*N2*N3
 * complexes); out may equal in. Asynchronous on opts.stream; no allocation. The zero operator
 * (M = 0) writes zeros. */
WARPFFT_API warpfft_status warpfft_toeplitz_apply(warpfft_toeplitz op, warpfft_precision precision,
                                                  int adjoint, const void *in, void *out);

/* As warpfft_toeplitz_apply, with the caller's spectrum (device array of L1 L2 L3 reals when
 * spectrum_real != 0, else complexes, the layout of warpfft_toeplitz_spectrum) instead of the
 * operator's own: for frameworks that hold the spectrum as an array (any operator of the
 * shape, e.g. a zero operator, applies it). */
WARPFFT_API warpfft_status warpfft_toeplitz_apply_spectrum(warpfft_toeplitz op,
                                                           warpfft_precision precision,
                                                           int spectrum_real, const void *spectrum,
                                                           int adjoint, const void *in, void *out);

/* Computes the kernel's spectrum for M >= 1 points and weights into the device array
 * `spectrum` (L1 L2 L3 reals for weights none or real, else complexes), without an operator:
 * the arguments as warpfft_toeplitz_create's (no ntransf). Runs on opts.stream and waits for
 * it. */
WARPFFT_API warpfft_status warpfft_toeplitz_spectrum(int dim, const int64_t n_modes[3], int iflag,
                                                     double tol, warpfft_precision precision,
                                                     const warpfft_opts *opts, int64_t M,
                                                     const void *x, const void *y, const void *z,
                                                     int weights, const void *w, void *spectrum);

/* What an operator of these arguments would hold and choose (grid, spectrum and grid bytes,
 * the kernel's tolerance, width and fine grid), without a GPU; the checks of create. */
WARPFFT_API warpfft_status warpfft_toeplitz_params(int dim, const int64_t n_modes[3],
                                                   int64_t ntransf, double tol,
                                                   warpfft_precision precision,
                                                   const warpfft_opts *opts, int weights,
                                                   warpfft_toeplitz_info *info);

WARPFFT_API warpfft_status warpfft_toeplitz_get_info(warpfft_toeplitz op,
                                                     warpfft_toeplitz_info *info);

/* Device bytes the operator holds: spectrum, work grid and cuFFT's work area. */
WARPFFT_API warpfft_status warpfft_toeplitz_workspace_bytes(warpfft_toeplitz op, size_t *bytes);

/* Frees everything the operator holds. NULL is a no-op. As warpfft_plan_destroy: afterwards the
 * handle is dangling; on failure (the context cannot be made current, or cufftDestroy fails)
 * the operator stays valid and may be destroyed again. */
WARPFFT_API warpfft_status warpfft_toeplitz_destroy(warpfft_toeplitz op);

#ifdef __cplusplus
}
#endif

#endif /* WARPFFT_H */
