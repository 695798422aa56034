/*
 * test_fault_calls.c — what the calls made over and over ask of the driver, from the stand-in's
 * call log (standin_log): the host-side half of issue 12's contract, which no GPU timing would
 * pin to a cause if it broke.
 *
 * For every configuration of the walk (types 1 and 2, 1D to 3D, f32/f64, GM/SM/OD, batches,
 * legacy and other streams, checked and unchecked set-points, one and three scan passes,
 * deterministic or not, point sets):
 *  - a setpts after the first (same M, then fewer points) is exactly one context push, one memset
 *    and the binning's launches in order (a deterministic spreader's stable-sort passes, three
 *    launches per 8 bits of the bin index, between the scan and the scatter), then for a plan
 *    of several widths (the width the points take) a memset and the gather and choice launches,
 *    or the choice alone for point sets too small to gather: no allocation, no copy back, no
 *    wait. Checked mode adds exactly one copy of the result block and one stream
 *    synchronisation;
 *  - an execute is one memset (type 1, but OD, which writes every cell), the spread or amplify
 *    launch (the spread or interp launch of every width, narrowest first, for a plan of several
 *    widths), one cuFFT call for the whole batch, the deconvolve or interp launch, and
 *    (unchecked) the NaN-poison launch: nothing allocated, loaded or waited for;
 *  - warpfft_setpts_check is one copy and one wait (unchecked), nothing at all (checked);
 *  - a second plan of a destroyed plan's shape makes no cuFFT plan, loads and links no module
 *    and waits for nothing (the plan cache and the module table).
 */
#include "test_fault.h"

#include "api/diagnostics.h" /* warpfft_plan_points_width */
#include "plans/spreader.h"  /* wf_si_names: the kernels the launches name */

standin_log_fn call_log;

static char got[16384];

/* The calls since the last arm, one per line (standin_log). */
static const char *logged(void) {
    call_log(got, sizeof got);
    return got;
}

/* Appends line `s` to buf (cap bytes). */
static void add(char *buf, size_t cap, const char *s) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s\n", s);
}

/* The bins of one point set of a plan with this info. */
static int64_t nbins_of(const warpfft_plan_info *in) {
    int64_t n = 1;
    for (int d = 0; d < 3; d++)
        n *= (in->n_fine[d] + in->bin_size[d] - 1) / in->bin_size[d];
    return n;
}

/* The widths a plan may run with (warpfft_plan_points_width: before a setpts it waits for
 * nothing), narrowest first. */
typedef struct widths {
    int32_t w[4], n;
} widths;

static widths widths_of(warpfft_plan plan) {
    widths w = {{0, 0, 0, 0}, 0};
    int32_t in_use = -1;
    CHECK(warpfft_plan_points_width(plan, w.w, &w.n, &in_use, NULL, 0) == 0 && w.n >= 1 && w.n <= 4,
          "points_width: %s", warpfft_last_error());
    return w;
}

/* The calls a setpts after the first makes for configuration cf, whose plan has info `in` and
 * widths ws, and whose points are sorted into the bins of every point set (kernel names as the
 * plan forms them: wf_prec_name's suffix); m points per set. */
static void expect_setpts(const config *cf, const warpfft_plan_info *in, const widths *ws,
                          int64_t m, char *buf, size_t cap) {
    const char *p = wf_prec_name(cf->precision);
    char line[96];
    buf[0] = '\0';
    add(buf, cap, "cuCtxPushCurrent");
    add(buf, cap, "cuStreamGetCaptureInfo"); /* captured into a CUDA graph? (capture.c) */
    add(buf, cap, "cuMemsetD8Async");
    snprintf(line, sizeof line, "launch wf_bin_count_%s", p);
    add(buf, cap, line);
    int64_t nbins = nbins_of(in) * (cf->n_sets > 1 ? cf->n_sets : 1);
    if (nbins > WF_SCAN_BIG_BINS) { /* module scan_big */
        add(buf, cap, "launch wf_scan_big_reduce");
        add(buf, cap, "launch wf_scan_big_tiles");
        add(buf, cap, "launch wf_scan_big_down");
    } else {
        add(buf, cap, "launch wf_bin_scan");
    }
    if (cf->deterministic && cf->type == 1) { /* a radix pass per 8 bits of the bin index */
        int bits = 0;
        for (int64_t v = nbins - 1; v > 0; v >>= 1)
            bits++;
        for (int pass = 0; pass < (bits <= 8 ? 1 : (bits + 7) / 8); pass++) {
            add(buf, cap, "launch wf_stable_hist");
            add(buf, cap, "launch wf_stable_rowscan");
            add(buf, cap, "launch wf_stable_scatter");
        }
    }
    snprintf(line, sizeof line, "launch wf_bin_scatter_%s", p);
    add(buf, cap, line);
    snprintf(line, sizeof line, "launch wf_sort_unpack_%s", p);
    add(buf, cap, line);
    if (ws->n > 1) { /* the width the points take: gathered for one set or sets large enough */
        if (cf->n_sets <= 1 || m >= WF_PW_MIN_SET_POINTS) {
            add(buf, cap, "cuMemsetD8Async");
            snprintf(line, sizeof line, "launch wf_offsets_gather_%s", p);
            add(buf, cap, line);
        }
        snprintf(line, sizeof line, "launch wf_offsets_choose_%s", p);
        add(buf, cap, line);
    }
    if (cf->check_points) {
        add(buf, cap, "cuMemcpyDtoHAsync");
        add(buf, cap, "cuStreamSynchronize");
    }
}

/* The calls an execute makes for configuration cf, whose plan has info `in` and widths ws. */
static void expect_execute(const config *cf, const warpfft_plan_info *in, const widths *ws,
                           char *buf, size_t cap) {
    const char *p = wf_prec_name(cf->precision);
    const char *m = in->method == WARPFFT_METHOD_GM   ? "gm"
                    : in->method == WARPFFT_METHOD_OD ? "od"
                                                      : "sm";
    int f64 = cf->precision == WARPFFT_F64;
    const char *fft = f64 ? "cufftExecZ2Z" : "cufftExecC2C";
    if (cf->real) /* real data: R2C / D2Z before the deconvolution, C2R / Z2D after amplify */
        fft = cf->type == 1 ? (f64 ? "cufftExecD2Z" : "cufftExecR2C")
                            : (f64 ? "cufftExecZ2D" : "cufftExecC2R");
    const char *half = cf->real ? "_half" : ""; /* the half kernels of real data */
    char line[96], module[WF_SI_NAME_MAX], entry[WF_SI_NAME_MAX];
    buf[0] = '\0';
    add(buf, cap, "cuCtxPushCurrent");
    add(buf, cap, "cuStreamGetCaptureInfo");
    if (cf->type == 1) {
        if (in->method != WARPFFT_METHOD_OD) /* OD writes every cell of the grid */
            add(buf, cap, "cuMemsetD8Async");
        for (int i = 0; i < ws->n; i++) {
            wf_si_names(cf->dim, cf->precision, cf->real, ws->w[i], "spread", m, module, entry);
            snprintf(line, sizeof line, "launch %s", entry);
            add(buf, cap, line);
        }
        add(buf, cap, fft);
        snprintf(line, sizeof line, "launch wf_deconvolve%s_%s", half, p);
        add(buf, cap, line);
    } else {
        snprintf(line, sizeof line, "launch wf_amplify%s_%s", half, p);
        add(buf, cap, line);
        add(buf, cap, fft);
        for (int i = 0; i < ws->n; i++) {
            wf_si_names(cf->dim, cf->precision, cf->real, ws->w[i], "interp", m, module, entry);
            snprintf(line, sizeof line, "launch %s", entry);
            add(buf, cap, line);
        }
    }
    if (!cf->check_points)
        add(buf, cap, "launch wf_poison_u32"); /* NaN outputs if setpts saw a bad point */
}

/* What a second create of a cached shape must not call: a cuFFT plan, a module load or link
 * (a compile in a jit build), a wait. It may allocate the plan's own small arrays. */
static const char *const not_again[] = {"cufftCreate", "cufftMake",   "cuModuleLoad",
                                        "cuLink",      "Synchronize", "cuMemcpyDtoH"};

/* The first of not_again in log, or NULL. */
static const char *first_not_again(const char *log) {
    for (size_t i = 0; i < sizeof not_again / sizeof not_again[0]; i++)
        if (strstr(log, not_again[i]))
            return not_again[i];
    return NULL;
}

static int n_multi_width; /* configurations whose plans run several widths */

static void steady_calls(size_t ci) {
    const config *cf = &configs[ci];
    arrays a = arrays_make(cf);
    warpfft_opts o;
    config_opts(cf, &o);
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4,
                                 (warpfft_precision)cf->precision, &o, &plan);
    CHECK(st == 0, "config %zu: create: %s", ci, warpfft_last_error());
    if (st != 0) {
        arrays_free(&a);
        return;
    }
    warpfft_plan_info info;
    warpfft_plan_get_info(plan, &info);
    widths ws = widths_of(plan);
    n_multi_width += ws.n > 1;
    warpfft_precision prec = (warpfft_precision)cf->precision;
    int64_t sets = cf->n_sets > 1 ? cf->n_sets : 1;
    /* the method the configuration asks for (AUTO: OD for deterministic type 1, else SM) */
    int want_method = cf->method != WARPFFT_METHOD_AUTO    ? cf->method
                      : cf->deterministic && cf->type == 1 ? WARPFFT_METHOD_OD
                                                           : WARPFFT_METHOD_SM;
    CHECK(info.method == want_method && info.deterministic == cf->deterministic,
          "config %zu: method %d deterministic %d", ci, info.method, info.deterministic);
    char want[2048];
    /* the first setpts allocates the per-point arrays; those after it reuse them */
    CHECK(config_setpts(cf, plan, &a) == 0 && warpfft_execute(plan, prec, a.c, a.fk) == 0,
          "config %zu: first setpts/execute: %s", ci, warpfft_last_error());
    const int64_t ms[2] = {M, M / 2};
    for (int r = 0; r < 2; r++) {
        arm(0);
        st = sets > 1 ? warpfft_setpts_sets(plan, prec, sets, ms[r], a.x, a.y, a.z)
                      : warpfft_setpts(plan, prec, ms[r], a.x, a.y, a.z);
        expect_setpts(cf, &info, &ws, ms[r], want, sizeof want);
        CHECK(st == 0 && strcmp(logged(), want) == 0,
              "config %zu: setpts of %lld points (status %d) called\n%swhere\n%swas expected", ci,
              (long long)ms[r], st, got, want);
        arm(0);
        st = warpfft_execute(plan, prec, a.c, a.fk);
        expect_execute(cf, &info, &ws, want, sizeof want);
        CHECK(st == 0 && strcmp(logged(), want) == 0,
              "config %zu: execute (status %d) called\n%swhere\n%swas expected", ci, st, got, want);
    }
    arm(0);
    st = warpfft_setpts_check(plan);
    const char *check_want = cf->check_points ? "" /* setpts checked already */
                                              : "cuCtxPushCurrent\ncuStreamGetCaptureInfo\n"
                                                "cuMemcpyDtoHAsync\ncuStreamSynchronize\n";
    CHECK(st == 0 && strcmp(logged(), check_want) == 0,
          "config %zu: setpts_check (status %d) called\n%swhere\n%swas expected", ci, st, got,
          check_want);
    destroy_plan(plan);
    /* the same shape again: the cache's cuFFT plan and grid, the loaded modules */
    arm(0);
    plan = NULL;
    st = warpfft_plan_create(cf->type, cf->dim, n_modes, 1, cf->ntransf, 1e-4, prec, &o, &plan);
    const char *bad = first_not_again(logged());
    CHECK(st == 0 && !bad, "config %zu: second create of the shape (status %d) called %s:\n%s", ci,
          st, bad ? bad : "-", got);
    if (plan)
        destroy_plan(plan);
    warpfft_release_cached();
    arrays_free(&a);
}

/* Three radix passes (more than 2^16 bins: bins of one cell on an 80000-cell grid): the keys
 * and values ping-pong through both halves of their scratch (sort_idx, rec) and the histogram
 * lives in xs[0]; the stand-in computes the passes with every array bounds-checked, and checks
 * the OD launch against its kernel's traps. Then a setpts of fewer points reuses the arrays. */
void test_stable_passes(void) {
    const config cf = {1, 1, WARPFFT_F32, WARPFFT_METHOD_AUTO, 1, 2.0, 0, 0, 1, 0, 1, 0};
    arrays a = arrays_make(&cf);
    warpfft_opts o;
    config_opts(&cf, &o);
    const int64_t n[3] = {40000, 1, 1};
    /* the modes of this plan (the stand-in checks the deconvolution's arrays) */
    warpfft_free(0, a.fk);
    a.fk = NULL;
    if (warpfft_malloc(0, (size_t)n[0] * 8, &a.fk) != 0) {
        CHECK(0, "malloc: %s", warpfft_last_error());
        arrays_free(&a);
        return;
    }
    warpfft_plan plan = NULL;
    standin_counts s0 = counts();
    int st = warpfft_plan_create(1, 1, n, 1, 1, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == 0, "create: %s", warpfft_last_error());
    if (st != 0) {
        arrays_free(&a);
        return;
    }
    warpfft_plan_info info;
    warpfft_plan_get_info(plan, &info);
    CHECK(nbins_of(&info) == 80000 && info.method == WARPFFT_METHOD_OD, "bins %lld, method %d",
          (long long)nbins_of(&info), info.method);
    for (int64_t m = M; m >= M / 3; m -= M / 3) {
        arm(0);
        st = warpfft_setpts(plan, WARPFFT_F32, m, a.x, NULL, NULL);
        CHECK(st == 0 && count_lines(logged(), "launch wf_stable_scatter") == 3,
              "setpts of %lld points (status %d) called\n%s", (long long)m, st, got);
        st = warpfft_execute(plan, WARPFFT_F32, a.c, a.fk);
        CHECK(st == 0, "execute: %s", warpfft_last_error());
    }
    destroy_plan(plan);
    warpfft_release_cached();
    arrays_free(&a);
    CHECK(counts().violations == s0.violations, "%ld bounds or launch violations",
          counts().violations - s0.violations);
}

void test_steady_calls(void) {
    CHECK(first_not_again("cuCtxPushCurrent\ncuModuleLoadData\n") != NULL &&
              first_not_again("cuCtxPushCurrent\ncuMemAlloc\ncuModuleGetFunction\n") == NULL,
          "the filter of a second create");
    for (size_t ci = 0; ci < n_configs; ci++)
        steady_calls(ci);
    /* upsampfac 1.25 leaves width 9 a candidate 8 at these sizes (test_fault.c's configs) */
    CHECK(n_multi_width >= 4, "%d configurations run several widths", n_multi_width);
}

/* A 3D f64 type-2 plan of method AUTO without points_hint keeps SM, and setpts interpolates by
 * GM when its M gives fewer than WF_GM_DENSITY points per fine-grid cell (bins.c, wf_late_gm):
 * the launches of each execute and plan_info's method follow the points given, with no host
 * wait in setpts; with a hint the plan's choice stands whatever M. */
void test_late_gm(void) {
    const int64_t n[3] = {8, 8, 8};
    for (int hint = 0; hint <= 1; hint++) {
        warpfft_opts o;
        warpfft_opts_default(&o);
        o.upsampfac = 2.0;
        o.points_hint = hint ? 100000 : 0; /* dense: SM at creation */
        warpfft_plan plan = NULL;
        int st = warpfft_plan_create(2, 3, n, -1, 1, 1e-6, WARPFFT_F64, &o, &plan);
        CHECK(st == 0, "create: %s", warpfft_last_error());
        if (st != 0)
            return;
        warpfft_plan_info info;
        warpfft_plan_get_info(plan, &info);
        CHECK(info.method == WARPFFT_METHOD_SM, "hint %d: method %d before setpts", hint,
              info.method);
        int64_t fine = info.n_fine[0] * info.n_fine[1] * info.n_fine[2];
        int64_t ms[2] = {fine / 50, fine / 2}; /* densities 0.02 and 0.5 */
        void *x = NULL, *y = NULL, *z = NULL, *c = NULL, *fk = NULL;
        size_t pb = (size_t)ms[1] * 8;
        int ok = warpfft_malloc(0, pb, &x) == 0 && warpfft_malloc(0, pb, &y) == 0 &&
                 warpfft_malloc(0, pb, &z) == 0 && warpfft_malloc(0, 2 * pb, &c) == 0 &&
                 warpfft_malloc(0, 16 * 512, &fk) == 0;
        CHECK(ok, "malloc: %s", warpfft_last_error());
        for (int i = 0; ok && i < 2; i++) {
            char module[WF_SI_NAME_MAX], gm[WF_SI_NAME_MAX], sm[WF_SI_NAME_MAX];
            wf_si_names(3, WARPFFT_F64, 0, info.width, "interp", "gm", module, gm);
            wf_si_names(3, WARPFFT_F64, 0, info.width, "interp", "sm", module, sm);
            arm(0);
            st = warpfft_setpts(plan, WARPFFT_F64, ms[i], x, y, z);
            CHECK(st == 0 && count_lines(logged(), "cuStreamSynchronize") == 0,
                  "setpts of %lld points (status %d) waited or failed:\n%s", (long long)ms[i], st,
                  got);
            arm(0);
            st = warpfft_execute(plan, WARPFFT_F64, c, fk);
            int want_gm = !hint && i == 0;
            logged();
            CHECK(st == 0 && (strstr(got, gm) != NULL) == want_gm &&
                      (strstr(got, sm) != NULL) == !want_gm,
                  "hint %d, %lld points: execute (status %d) called\n%s", hint, (long long)ms[i],
                  st, got);
            warpfft_plan_get_info(plan, &info);
            CHECK(info.method == (want_gm ? WARPFFT_METHOD_GM : WARPFFT_METHOD_SM),
                  "hint %d, %lld points: info.method %d", hint, (long long)ms[i], info.method);
        }
        void *bufs[] = {x, y, z, c, fk};
        for (int i = 0; i < 5; i++)
            warpfft_free(0, bufs[i]);
        destroy_plan(plan);
    }
    warpfft_release_cached();
}
