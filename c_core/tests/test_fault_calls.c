/*
 * test_fault_calls.c — what the calls made over and over ask of the driver, from the stand-in's
 * call log (standin_log): the host-side half of issue 12's contract, which no GPU timing would
 * pin to a cause if it broke.
 *
 * For every configuration of the walk (types 1 and 2, 1D to 3D, f32/f64, GM/SM, batches, legacy
 * and other streams, checked and unchecked set-points, one and three scan passes, point sets):
 *  - a setpts after the first (same M, then fewer points) is exactly one context push, one memset
 *    and the binning's launches in order: no allocation, no copy back, no wait. Checked mode adds
 *    exactly one copy of the result block and one stream synchronisation;
 *  - an execute is one memset (type 1), the spread or amplify launch, one cuFFT call for the whole
 *    batch, the deconvolve or interp launch, and (unchecked) the NaN-poison launch: nothing
 *    allocated, loaded or waited for;
 *  - warpfft_setpts_check is one copy and one wait (unchecked), nothing at all (checked);
 *  - a second plan of a destroyed plan's shape makes no cuFFT plan, loads and links no module
 *    and waits for nothing (the plan cache and the module table).
 */
#include "test_fault.h"

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

/* The calls a setpts after the first makes for configuration cf, whose points are sorted into
 * `bins` bins (every point set's; kernel names as the plan forms them: wf_prec_name's suffix). */
static void expect_setpts(const config *cf, int64_t bins, char *buf, size_t cap) {
    const char *p = wf_prec_name(cf->precision);
    char line[96];
    buf[0] = '\0';
    add(buf, cap, "cuCtxPushCurrent");
    add(buf, cap, "cuMemsetD8Async");
    snprintf(line, sizeof line, "launch wf_bin_count_%s", p);
    add(buf, cap, line);
    if (bins > WF_SCAN_BIG_BINS) { /* module scan_big */
        add(buf, cap, "launch wf_scan_big_reduce");
        add(buf, cap, "launch wf_scan_big_tiles");
        add(buf, cap, "launch wf_scan_big_down");
    } else {
        add(buf, cap, "launch wf_bin_scan");
    }
    snprintf(line, sizeof line, "launch wf_bin_scatter_%s", p);
    add(buf, cap, line);
    snprintf(line, sizeof line, "launch wf_sort_unpack_%s", p);
    add(buf, cap, line);
    if (cf->check_points) {
        add(buf, cap, "cuMemcpyDtoHAsync");
        add(buf, cap, "cuStreamSynchronize");
    }
}

/* The calls an execute makes for configuration cf with kernel width w. */
static void expect_execute(const config *cf, int w, char *buf, size_t cap) {
    const char *p = wf_prec_name(cf->precision);
    const char *m = cf->method == WARPFFT_METHOD_GM ? "gm" : "sm";
    const char *fft = cf->precision == WARPFFT_F64 ? "cufftExecZ2Z" : "cufftExecC2C";
    char line[96];
    buf[0] = '\0';
    add(buf, cap, "cuCtxPushCurrent");
    if (cf->type == 1) {
        add(buf, cap, "cuMemsetD8Async");
        snprintf(line, sizeof line, "launch wf_spread_%s_%dd_%s_w%d", m, cf->dim, p, w);
        add(buf, cap, line);
        add(buf, cap, fft);
        snprintf(line, sizeof line, "launch wf_deconvolve_%s", p);
        add(buf, cap, line);
    } else {
        snprintf(line, sizeof line, "launch wf_amplify_%s", p);
        add(buf, cap, line);
        add(buf, cap, fft);
        snprintf(line, sizeof line, "launch wf_interp_%s_%dd_%s_w%d", m, cf->dim, p, w);
        add(buf, cap, line);
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
    warpfft_precision prec = (warpfft_precision)cf->precision;
    int64_t sets = cf->n_sets > 1 ? cf->n_sets : 1, bins = sets;
    for (int d = 0; d < cf->dim; d++)
        bins *= (info.n_fine[d] + info.bin_size[d] - 1) / info.bin_size[d];
    char want[2048];
    /* the first setpts allocates the per-point arrays; those after it reuse them */
    CHECK(config_setpts(cf, plan, &a) == 0 && warpfft_execute(plan, prec, a.c, a.fk) == 0,
          "config %zu: first setpts/execute: %s", ci, warpfft_last_error());
    const int64_t ms[2] = {M, M / 2};
    for (int r = 0; r < 2; r++) {
        arm(0);
        st = sets > 1 ? warpfft_setpts_sets(plan, prec, sets, ms[r], a.x, a.y, a.z)
                      : warpfft_setpts(plan, prec, ms[r], a.x, a.y, a.z);
        expect_setpts(cf, bins, want, sizeof want);
        CHECK(st == 0 && strcmp(logged(), want) == 0,
              "config %zu: setpts of %lld points (status %d) called\n%swhere\n%swas expected", ci,
              (long long)ms[r], st, got, want);
        arm(0);
        st = warpfft_execute(plan, prec, a.c, a.fk);
        expect_execute(cf, info.width, want, sizeof want);
        CHECK(st == 0 && strcmp(logged(), want) == 0,
              "config %zu: execute (status %d) called\n%swhere\n%swas expected", ci, st, got, want);
    }
    arm(0);
    st = warpfft_setpts_check(plan);
    const char *check_want = cf->check_points ? "" /* setpts checked already */
                                              : "cuCtxPushCurrent\ncuMemcpyDtoHAsync\n"
                                                "cuStreamSynchronize\n";
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

void test_steady_calls(void) {
    CHECK(first_not_again("cuCtxPushCurrent\ncuModuleLoadData\n") != NULL &&
              first_not_again("cuCtxPushCurrent\ncuMemAlloc\ncuModuleGetFunction\n") == NULL,
          "the filter of a second create");
    for (size_t ci = 0; ci < n_configs; ci++)
        steady_calls(ci);
}
