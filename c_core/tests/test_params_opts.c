/*
 * test_params_opts.c — argument validation through warpfft_plan_params and wf_params_make: type,
 * dim, precision, sizes and tol, the options struct (its size, each field's range, defaults),
 * spread/interp only and check_points; each refusal a status and a message naming the argument.
 */
#include "test_params.h"

/* Runs warpfft_plan_params and checks status and that the message contains `word`. */
static void expect(int status, const char *word, int type, int dim, const int64_t *n,
                   int64_t ntransf, double tol, int prec, const warpfft_opts *o, int line) {
    warpfft_plan_info info;
    int st = warpfft_plan_params(type, dim, n, ntransf, tol, (warpfft_precision)prec, o, &info);
    check_status_msg(__FILE__, line, st, status, word);
}

#define EXPECT(status, word, type, dim, n, nt, tol, prec, o)                                       \
    expect(status, word, type, dim, n, nt, tol, prec, o, __LINE__)

/* The default options with one field set to a value out of its range: a 2D type 1 plan of
 * modes n refuses them with INVALID_ARG and a message that contains `word`. */
#define EXPECT_BAD_OPT(n, field, value, word)                                                      \
    do {                                                                                           \
        warpfft_opts bad_ = defaults();                                                            \
        bad_.field = value;                                                                        \
        EXPECT(WARPFFT_ERR_INVALID_ARG, word, 1, 2, n, 1, 1e-6, WARPFFT_F32, &bad_);               \
    } while (0)

/* The options of a newer header: a larger struct whose tail, unknown to this library, is zero. */
typedef struct opts_newer {
    warpfft_opts o;
    unsigned char tail[24];
} opts_newer;

/* The defaults in a zeroed opts_newer whose struct_size is the larger struct's. */
static void newer_opts(opts_newer *b) {
    memset(b, 0, sizeof *b);
    b->o = defaults();
    b->o.struct_size = (uint32_t)sizeof *b;
}

void test_validation_args(void) {
    const int64_t n[3] = {64, 32, 16}, bad0[3] = {0, 8, 8}, bad2[3] = {8, 8, -1};
    EXPECT(WARPFFT_SUCCESS, "", 1, 3, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_UNSUPPORTED, "type 3", 3, 2, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_TYPE, "type = 0", 0, 2, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_TYPE, "type = 4", 4, 2, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_DIM, "dim = 0", 1, 0, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_DIM, "dim = 4", 1, 4, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_INVALID_ARG, "precision = 3", 1, 2, n, 1, 1e-6, 3, NULL);
    EXPECT(WARPFFT_ERR_INVALID_ARG, "precision = 0", 1, 2, n, 1, 1e-6, 0, NULL);
    EXPECT(WARPFFT_ERR_INVALID_ARG, "n_modes is NULL", 1, 2, NULL, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_SIZE, "n_modes[0] = 0", 1, 2, bad0, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_SIZE, "n_modes[2] = -1", 2, 3, bad2, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_SUCCESS, "", 2, 2, bad2, 1, 1e-6, WARPFFT_F32, NULL); /* n[2] unused */
    EXPECT(WARPFFT_ERR_BAD_SIZE, "ntransf = 0", 1, 2, n, 0, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_SIZE, "ntransf = -5", 1, 2, n, -5, 1e-6, WARPFFT_F32, NULL);
}

void test_validation_tol(void) {
    const int64_t n[3] = {64, 32, 16};
    EXPECT(WARPFFT_SUCCESS, "", 1, 1, n, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_SUCCESS, "", 1, 1, n, 1, 1e-1, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_SUCCESS, "", 1, 1, n, 1, 1e-13, WARPFFT_F64, NULL);
    EXPECT(WARPFFT_SUCCESS, "", 1, 1, n, 1, 1e-1, WARPFFT_F64, NULL);
    /* NaN is the one tol refused; one outside the range runs at its nearer end, as the
     * reference raises a tol below machine precision to it (plan_info.tol says which) */
    EXPECT(WARPFFT_ERR_BAD_TOL, "tol = nan; must be a number (f64 runs tol in [1e-13, 0.1]", 1, 1,
           n, 1, NAN, WARPFFT_F64, NULL);
    const struct {
        double tol;
        int prec;
        double runs_at;
    } clamp[] = {{9e-7, WARPFFT_F32, 1e-6},      {0.11, WARPFFT_F32, 0.1},
                 {1e-14, WARPFFT_F64, 1e-13},    {INFINITY, WARPFFT_F32, 0.1},
                 {-INFINITY, WARPFFT_F32, 1e-6}, {0.0, WARPFFT_F64, 1e-13},
                 {-0.01, WARPFFT_F64, 1e-13},    {1e-300, WARPFFT_F64, 1e-13},
                 {3e-6, WARPFFT_F32, 3e-6},      {1e-13, WARPFFT_F64, 1e-13}};
    for (size_t i = 0; i < sizeof clamp / sizeof clamp[0]; i++) {
        warpfft_plan_info got, want;
        double eff = -1;
        int st = warpfft_plan_params(1, 1, n, 1, clamp[i].tol, (warpfft_precision)clamp[i].prec,
                                     NULL, &got);
        CHECK(st == 0 && got.tol == clamp[i].runs_at, "tol %g: status %d, runs at %g (want %g)",
              clamp[i].tol, st, got.tol, clamp[i].runs_at);
        st = warpfft_plan_params(1, 1, n, 1, clamp[i].runs_at, (warpfft_precision)clamp[i].prec,
                                 NULL, &want);
        CHECK(st == 0 && got.width == want.width && got.upsampfac == want.upsampfac,
              "tol %g: the plan of tol %g", clamp[i].tol, clamp[i].runs_at);
        CHECK(warpfft_tol_effective(clamp[i].tol, (warpfft_precision)clamp[i].prec, &eff) == 0 &&
                  eff == clamp[i].runs_at,
              "warpfft_tol_effective(%g) = %g", clamp[i].tol, eff);
    }
    double lo = 0, hi = 0, eff = 7;
    CHECK(warpfft_tol_bounds(WARPFFT_F32, &lo, &hi) == 0 && lo == 1e-6 && hi == 0.1, "f32 range");
    CHECK(warpfft_tol_bounds(WARPFFT_F64, &lo, &hi) == 0 && lo == 1e-13 && hi == 0.1, "f64 range");
    CHECK(warpfft_tol_bounds((warpfft_precision)3, &lo, &hi) == WARPFFT_ERR_INVALID_ARG &&
              strstr(warpfft_last_error(), "precision = 3"),
          "tol_bounds precision 3");
    CHECK(warpfft_tol_effective(NAN, WARPFFT_F32, &eff) == WARPFFT_ERR_BAD_TOL && eff == 7 &&
              strstr(warpfft_last_error(), "tol = nan"),
          "tol_effective(nan): %s", warpfft_last_error());
    CHECK(warpfft_tol_effective(1e-3, WARPFFT_F32, NULL) == WARPFFT_ERR_INVALID_ARG, "NULL out");
    warpfft_opts o = defaults();
    o.upsampfac = 1.25;
    EXPECT(WARPFFT_ERR_BAD_TOL,
           "tol 1e-13 needs a kernel wider than 16 points (the maximum for f64) at upsampfac 1.25; "
           "use a larger upsampfac (up to 3) or 0 (chosen per plan)",
           1, 2, n, 1, 1e-13, WARPFFT_F64, &o);
    EXPECT(WARPFFT_ERR_BAD_TOL, "tol 1e-10 needs a kernel wider than 16", 1, 2, n, 1, 1e-10,
           WARPFFT_F64, &o);
    /* f32 at 1.25: rounding amplified by the deconvolution (wf_tol_floor_of) above tol */
    EXPECT(WARPFFT_ERR_BAD_TOL, "below what f32 reaches at upsampfac 1.25 (rounding floor", 1, 2, n,
           1, 1e-5, WARPFFT_F32, &o);
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, n, 1, 1e-3, WARPFFT_F32, &o);
    o.upsampfac = 1.6; /* any sigma in [1.25, 3] */
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, n, 1, 1e-4, WARPFFT_F32, &o);
    o.upsampfac = 3.0;
    EXPECT(WARPFFT_SUCCESS, "", 1, 3, n, 1, 1e-12, WARPFFT_F64, &o);
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, n, 1, 1e-8, WARPFFT_F64, &o);
}

void test_validation_opts(void) {
    const int64_t n[3] = {64, 32, 16};
    warpfft_opts o = defaults();
    o.struct_size = 8;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "struct_size = 8", 1, 2, n, 1, 1e-6, WARPFFT_F32, &o);
    /* a newer header's larger struct: accepted when the unknown tail is zero */
    opts_newer big;
    newer_opts(&big);
    big.o.method = WARPFFT_METHOD_GM;
    warpfft_plan_info in;
    int st = warpfft_plan_params(1, 2, n, 1, 1e-6, WARPFFT_F32, &big.o, &in);
    CHECK(st == 0 && in.method == WARPFFT_METHOD_GM, "larger opts, zero tail: %d %s", st,
          warpfft_last_error());
    big.tail[17] = 1;
    st = warpfft_plan_params(1, 2, n, 1, 1e-6, WARPFFT_F32, &big.o, &in);
    CHECK(st == WARPFFT_ERR_INVALID_ARG && strstr(warpfft_last_error(), "is not zero"),
          "larger opts, non-zero tail: %d %s", st, warpfft_last_error());
    o = defaults();
    o.struct_size = (uint32_t)sizeof o - 2; /* no header's size: fields are 4-byte aligned */
    EXPECT(WARPFFT_ERR_INVALID_ARG, "struct_size", 1, 2, n, 1, 1e-6, WARPFFT_F32, &o);
    o.struct_size = 1u << 20; /* garbage: never read that far */
    EXPECT(WARPFFT_ERR_INVALID_ARG, "struct_size = 1048576", 1, 2, n, 1, 1e-6, WARPFFT_F32, &o);
    EXPECT_BAD_OPT(n, modeord, 2, "modeord = 2");
    EXPECT_BAD_OPT(n, modeord, -1, "modeord = -1");
    EXPECT_BAD_OPT(n, method, 4, "method = 4; must be 0 (AUTO), 1 (GM), 2 (SM) or 3 (OD)");
    EXPECT_BAD_OPT(n, method, -1, "method = -1");
    EXPECT_BAD_OPT(n, upsampfac, 1.2,
                   "upsampfac = 1.2; must be 0 (chosen per plan) or in [1.25, 3]");
    EXPECT_BAD_OPT(n, upsampfac, 3.5, "upsampfac = 3.5");
    EXPECT_BAD_OPT(n, upsampfac, -2.0, "upsampfac = -2");
    EXPECT_BAD_OPT(n, upsampfac, INFINITY, "upsampfac = inf");
    EXPECT_BAD_OPT(n, points_hint, -1, "points_hint = -1");
    EXPECT_BAD_OPT(n, upsampfac, NAN, "upsampfac = nan");
    EXPECT_BAD_OPT(n, bin_size[1], -4, "bin_size[1] = -4");
    EXPECT_BAD_OPT(n, max_subprob, -1, "max_subprob = -1");
    warpfft_plan_info info;
    CHECK(warpfft_plan_params(1, 1, n, 1, 1e-6, WARPFFT_F32, NULL, NULL) == WARPFFT_ERR_INVALID_ARG,
          "info NULL");
    (void)info;
    CHECK(warpfft_opts_default(NULL) == WARPFFT_ERR_INVALID_ARG, "opts_default(NULL)");
    o = defaults();
    CHECK(o.struct_size == sizeof o && o.modeord == 0 && o.method == 0 && o.device == 0 &&
              o.upsampfac == 0.0 && o.stream == 0 && o.bin_size[0] == 0 && o.bin_size[1] == 0 &&
              o.bin_size[2] == 0 && o.max_subprob == 0 && o.points_hint == 0,
          "opts defaults");
}

/* Spread/interp only (opts.spreadinterponly): the grid is fk itself (n_fine = n_modes), method
 * GM, no fine grid or deconvolution factors in the workspace, N_d >= 2 width; the kernel is the
 * NUFFT's for this tol; an opts of the size before the field existed is still accepted. */
void test_spreadinterponly(void) {
    const int64_t n[3] = {50, 37, 1}, small[3] = {50, 9, 1};
    warpfft_opts o = defaults();
    o.spreadinterponly = 1;
    o.method = WARPFFT_METHOD_SM;
    wf_params p, q;
    CHECK(wf_params_make(1, 2, n, 3, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0,
          "spreadinterponly plan params: %s", warpfft_last_error());
    warpfft_opts s2 = defaults(); /* upsampfac 0 means 2 for spreadinterponly (the grid is fk) */
    s2.upsampfac = 2.0;
    CHECK(wf_params_make(1, 2, n, 3, 1e-5, WARPFFT_F32, &s2, WF_SHARED_OPTIN_SM90, &q) == 0,
          "the same NUFFT at upsampfac 2");
    CHECK(p.spreadinterponly == 1 && p.n_fine[0] == 50 && p.n_fine[1] == 37 && p.n_fine[2] == 1 &&
              p.fine_prod == 50 * 37 && p.method == WARPFFT_METHOD_GM,
          "grid = fk, GM: nf {%lld, %lld}, method %d", (long long)p.n_fine[0],
          (long long)p.n_fine[1], p.method);
    CHECK(p.width == q.width && p.beta == q.beta, "kernel of the NUFFT: width %d vs %d", p.width,
          q.width);
    CHECK(wf_params_fixed_bytes(&p) < wf_params_fixed_bytes(&q) &&
              wf_params_fixed_bytes(&p) == (size_t)p.nbins * 2 * sizeof(uint64_t) + 32,
          "no fine grid or factors in the workspace: %zu", wf_params_fixed_bytes(&p));
    EXPECT(WARPFFT_ERR_BAD_SIZE, "below twice the kernel width", 2, 2, small, 1, 1e-5, WARPFFT_F32,
           &o);
    o.spreadinterponly = 2;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "spreadinterponly = 2", 1, 2, n, 1, 1e-5, WARPFFT_F32, &o);
    o = s2;
    o.spreadinterponly = 1; /* ignored: an old struct_size ends before the field */
    o.struct_size = (uint32_t)offsetof(warpfft_opts, spreadinterponly);
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.spreadinterponly == 0 && p.n_fine[0] == q.n_fine[0],
          "old struct_size: %s", warpfft_last_error());
    CHECK(defaults().spreadinterponly == 0, "default 0");
}

/* opts.check_points: 0 (default) or 1, carried into the parameters; it lives in what was the
 * struct's tail padding, so the struct's size did not change and an opts of the size before
 * spreadinterponly (which ends before it) reads it as 0. */
void test_check_points(void) {
    const int64_t n[3] = {50, 37, 1};
    warpfft_opts o = defaults();
    CHECK(o.check_points == 0, "default 0");
    CHECK(offsetof(warpfft_opts, points_hint) == 56 && offsetof(warpfft_opts, check_points) == 52,
          "check_points in the old tail padding: offset %zu; points_hint after it: %zu",
          offsetof(warpfft_opts, check_points), offsetof(warpfft_opts, points_hint));
    wf_params p;
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.check_points == 0,
          "default: unchecked");
    o.check_points = 1;
    CHECK(wf_params_make(2, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.check_points == 1,
          "check_points = 1: %s", warpfft_last_error());
    o.check_points = 2;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "check_points = 2", 1, 2, n, 1, 1e-5, WARPFFT_F32, &o);
    o.check_points = -1;
    EXPECT(WARPFFT_ERR_INVALID_ARG, "check_points = -1", 1, 2, n, 1, 1e-5, WARPFFT_F32, &o);
    o = defaults();
    o.check_points = 1; /* ignored: an old struct_size ends before the field */
    o.struct_size = (uint32_t)offsetof(warpfft_opts, spreadinterponly);
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.check_points == 0,
          "old struct_size: %s", warpfft_last_error());
    /* a newer header's larger struct with check_points set and a zero tail */
    opts_newer big;
    newer_opts(&big);
    big.o.check_points = 1;
    CHECK(wf_params_make(1, 2, n, 1, 1e-5, WARPFFT_F32, &big.o, WF_SHARED_OPTIN_SM90, &p) == 0 &&
              p.check_points == 1,
          "larger opts: %s", warpfft_last_error());
}

void test_validation_size(void) {
    const int64_t huge2[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 1};
    const int64_t toobig[3] = {((int64_t)1 << 52) + 1, 1, 1};
    const int64_t big2[3] = {(int64_t)1 << 20, (int64_t)1 << 20, 1};
    const int64_t n[3] = {1024, 1024, 1};
    EXPECT(WARPFFT_ERR_BAD_SIZE, "too large to address", 1, 2, huge2, 1, 1e-6, WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_SIZE, "n_modes[0] = 4503599627370497", 1, 1, toobig, 1, 1e-6,
           WARPFFT_F32, NULL);
    EXPECT(WARPFFT_ERR_BAD_SIZE, "ntransf = 4611686018427387904", 1, 2, n, (int64_t)1 << 62, 1e-6,
           WARPFFT_F32, NULL);
    /* fine grid addressable (2^42 points), but 2^32 bins of 32x32 exceed int32 */
    warpfft_opts o = defaults();
    o.method = WARPFFT_METHOD_GM;
    EXPECT(WARPFFT_ERR_BAD_SIZE, "spreading bins", 1, 2, big2, 1, 1e-6, WARPFFT_F32, &o);
    o.bin_size[0] = o.bin_size[1] = 1 << 12; /* GM: SM would shrink bins to fit shared memory */
    EXPECT(WARPFFT_SUCCESS, "", 1, 2, big2, 1, 1e-6, WARPFFT_F32, &o);
    /* a fine-grid dimension beyond 2^32 (cuFFT's measured limit) */
    const int64_t long1[3] = {(int64_t)1 << 45, 1, 1};
    EXPECT(WARPFFT_ERR_BAD_SIZE, "2^32 per dimension", 1, 1, long1, 1, 1e-6, WARPFFT_F32, NULL);
}
