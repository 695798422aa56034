/*
 * test_fault_real.c — real-valued data (opts.real_data) on the stand-in driver and cuFFT, beside
 * the walks of test_fault.c's real configurations (every driver/cuFFT call of their lifecycles
 * failed in turn) and their exact call sequences (test_fault_calls.c):
 *  - a real plan of each type and precision makes a cuFFT plan of its kind (R2C/D2Z for type 1,
 *    C2R/Z2D for type 2), loads the real spreading modules (precision f32r/f64r) and reports
 *    real_data in its info, with a smaller workspace than the complex plan of its shape;
 *  - the plan cache never hands a cuFFT plan of one kind to a plan of another (complex, type 1
 *    real, type 2 real of one shape), and hands each its own again;
 *  - the live-plan pool never gives a real plan for a complex request or back;
 *  - the requests that refuse real data: type 3, spread/interp only, the Toeplitz operator.
 */
#include "test_fault.h"

#include "plans/spreader.h" /* wf_si_names */
#include "runtime/module.h" /* wf_module_records: the modules loaded */

/* standin_fft_made_of_type of the stand-in libcufft.so.12 (standin_cufft.c). */
typedef long (*made_of_type_fn)(int type);
static made_of_type_fn made_of_type;

static int module_loaded(const char *name) {
    wf_module_record r[256];
    size_t n = wf_module_records(r, 256);
    for (size_t i = 0; i < n && i < 256; i++)
        if (strcmp(r[i].name, name) == 0)
            return 1;
    return 0;
}

static const int64_t nm[3] = {24, 10, 6};

static warpfft_plan real_plan(int type, int dim, int precision, int real, int64_t ntransf) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.real_data = real;
    o.upsampfac = 2.0;
    o.method = WARPFFT_METHOD_GM;
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(type, dim, nm, type == 1 ? 1 : -1, ntransf, 1e-4,
                                 (warpfft_precision)precision, &o, &plan);
    CHECK(st == 0, "create type %d %dD real %d: %s", type, dim, real, warpfft_last_error());
    return st == 0 ? plan : NULL;
}

/* The cuFFT type a real plan of (type, precision) must make. */
static int want_fft(int type, int precision) {
    if (precision == WARPFFT_F64)
        return type == 1 ? WF_CUFFT_D2Z : WF_CUFFT_Z2D;
    return type == 1 ? WF_CUFFT_R2C : WF_CUFFT_C2R;
}

static void test_real_kinds(void) {
    for (int precision = WARPFFT_F32; precision <= WARPFFT_F64; precision++)
        for (int type = 1; type <= 2; type++) {
            warpfft_release_cached(); /* a cold cache: the plan is made */
            int kind = want_fft(type, precision);
            long before = made_of_type(kind);
            long c2c = made_of_type(WF_CUFFT_C2C) + made_of_type(WF_CUFFT_Z2Z);
            warpfft_plan plan = real_plan(type, 2, precision, 1, 2);
            if (!plan)
                continue;
            CHECK(made_of_type(kind) == before + 1 &&
                      made_of_type(WF_CUFFT_C2C) + made_of_type(WF_CUFFT_Z2Z) == c2c,
                  "type %d %s: cuFFT plans of type %#x made %ld (want 1), complex %ld", type,
                  wf_prec_name(precision), kind, made_of_type(kind) - before,
                  made_of_type(WF_CUFFT_C2C) + made_of_type(WF_CUFFT_Z2Z) - c2c);
            warpfft_plan_info info;
            CHECK(warpfft_plan_get_info(plan, &info) == 0 && info.real_data == 1,
                  "info.real_data %d", info.real_data);
            char module[WF_SI_NAME_MAX], entry[WF_SI_NAME_MAX];
            wf_si_names(2, precision, 1, info.width, type == 1 ? "spread" : "interp", "gm", module,
                        entry);
            CHECK(module_loaded(module) &&
                      strstr(module, precision == WARPFFT_F64 ? "f64r" : "f32r"),
                  "module %s not loaded", module);
            /* the workspace: a real grid and the half spectrum (a little more than the complex
             * grid: nf2 nf3 complex more per transform, and the real grid's end rounded up) in
             * place of the complex grid */
            warpfft_plan_info cinfo;
            warpfft_opts o;
            warpfft_opts_default(&o);
            o.upsampfac = 2.0;
            o.method = WARPFFT_METHOD_GM;
            CHECK(warpfft_plan_params(type, 2, nm, 2, 1e-4, (warpfft_precision)precision, &o,
                                      &cinfo) == 0,
                  "params: %s", warpfft_last_error());
            o.real_data = 1;
            warpfft_plan_info rinfo;
            size_t rb = precision == WARPFFT_F64 ? 8 : 4;
            size_t fine = (size_t)(cinfo.n_fine[0] * cinfo.n_fine[1]);
            size_t half = (size_t)((cinfo.n_fine[0] / 2 + 1) * cinfo.n_fine[1]);
            size_t real_grid = (fine * 2 * rb + 255) / 256 * 256 + half * 2 * 2 * rb;
            CHECK(warpfft_plan_params(type, 2, nm, 2, 1e-4, (warpfft_precision)precision, &o,
                                      &rinfo) == 0 &&
                      rinfo.real_data == 1 && rinfo.n_fine[0] == cinfo.n_fine[0] &&
                      rinfo.workspace_bytes ==
                          cinfo.workspace_bytes - fine * 2 * 2 * rb + real_grid,
                  "workspace real %zu, complex %zu (grids %zu, %zu)", rinfo.workspace_bytes,
                  cinfo.workspace_bytes, real_grid, fine * 2 * 2 * rb);
            destroy_plan(plan);
        }
    warpfft_release_cached();
}

/* One plan of each kind of one shape, destroyed into the cache, then each again: each takes
 * its own kind's cuFFT plan back (nothing made), and none took another kind's. */
static void test_real_cache(void) {
    warpfft_release_cached();
    const int kinds[3][2] = {{1, 0}, {1, 1}, {2, 1}}; /* complex (types 1, 2 alike), real 1, 2 */
    long made0 = counts().fft_makes;
    for (int i = 0; i < 3; i++) {
        warpfft_plan plan = real_plan(kinds[i][0], 3, WARPFFT_F32, kinds[i][1], 1);
        if (plan)
            destroy_plan(plan);
    }
    CHECK(counts().fft_makes == made0 + 3, "three kinds: %ld cuFFT plans made",
          counts().fft_makes - made0);
    long made1 = counts().fft_makes;
    const int again[4][2] = {{2, 1}, {1, 1}, {2, 0}, {1, 0}};
    for (int i = 0; i < 4; i++) {
        warpfft_plan plan = real_plan(again[i][0], 3, WARPFFT_F32, again[i][1], 1);
        if (plan)
            destroy_plan(plan);
    }
    CHECK(counts().fft_makes == made1, "each kind from the cache: %ld cuFFT plans made",
          counts().fft_makes - made1);
    warpfft_release_cached();
    CHECK(counts().live_fft_plans == 0, "%ld cuFFT plans left", counts().live_fft_plans);
}

/* The pool keys on every option: a complex request never gets a real plan, nor back. */
static void test_real_pool(void) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.upsampfac = 2.0;
    warpfft_plan a = NULL, b = NULL, c = NULL;
    int st = warpfft_pool_acquire(1, 2, nm, 1, 1, 1e-4, WARPFFT_F32, &o, &a);
    CHECK(st == 0, "acquire complex: %s", warpfft_last_error());
    if (st == 0)
        warpfft_pool_release(a, 0);
    o.real_data = 1;
    st = warpfft_pool_acquire(1, 2, nm, 1, 1, 1e-4, WARPFFT_F32, &o, &b);
    warpfft_plan_info info;
    CHECK(st == 0 && b != a && warpfft_plan_get_info(b, &info) == 0 && info.real_data == 1,
          "acquire real: %s (the complex plan back: %d)", warpfft_last_error(), b == a);
    if (st == 0)
        warpfft_pool_release(b, 0);
    o.real_data = 0;
    st = warpfft_pool_acquire(1, 2, nm, 1, 1, 1e-4, WARPFFT_F32, &o, &c);
    CHECK(st == 0 && c == a && c != b && warpfft_plan_get_info(c, &info) == 0 &&
              info.real_data == 0,
          "acquire complex again: %s (its own plan %d, the real one %d)", warpfft_last_error(),
          c == a, c == b);
    if (st == 0)
        warpfft_pool_release(c, 0);
    warpfft_pool_clear();
    warpfft_release_cached();
}

/* The requests that refuse real data, each with a clear status and message. */
static void test_real_refusals(void) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.real_data = 1;
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(3, 2, NULL, 1, 1, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == WARPFFT_ERR_UNSUPPORTED && !plan && strstr(warpfft_last_error(), "real_data"),
          "type 3: %d %s", st, warpfft_last_error());
    o.spreadinterponly = 1;
    st = warpfft_plan_create(1, 2, nm, 1, 1, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == WARPFFT_ERR_UNSUPPORTED && !plan &&
              strstr(warpfft_last_error(), "spreadinterponly"),
          "spread/interp only: %d %s", st, warpfft_last_error());
    o.spreadinterponly = 0;
    warpfft_toeplitz_info tinfo;
    st = warpfft_toeplitz_params(2, nm, 1, 1e-4, WARPFFT_F32, &o, WARPFFT_WEIGHTS_NONE, &tinfo);
    CHECK(st == WARPFFT_ERR_UNSUPPORTED && strstr(warpfft_last_error(), "real_data"),
          "Toeplitz: %d %s", st, warpfft_last_error());
    o.real_data = 2;
    st = warpfft_plan_create(1, 2, nm, 1, 1, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == WARPFFT_ERR_INVALID_ARG && !plan &&
              strstr(warpfft_last_error(), "opts.real_data = 2; must be 0 or 1"),
          "real_data 2: %d %s", st, warpfft_last_error());
    CHECK(counts().live_fft_plans == 0, "a refused plan left a cuFFT plan");
}

void test_real_data(void) {
    void *h = dlopen(getenv("WARPFFT_CUFFT_LIB"), RTLD_NOW | RTLD_NOLOAD);
    made_of_type = h ? (made_of_type_fn)dlsym(h, "standin_fft_made_of_type") : NULL;
    CHECK(made_of_type != NULL, "the stand-in cuFFT's standin_fft_made_of_type");
    if (!made_of_type)
        return;
    long base = counts().live_allocs;
    test_real_kinds();
    test_real_cache();
    test_real_pool();
    test_real_refusals();
    standin_counts s = counts();
    CHECK(s.live_allocs == base && s.live_fft_plans == 0 && s.violations == 0 && s.ctx_depth == 0,
          "real data: %ld allocations, %ld cuFFT plans left, %ld violations, depth %ld",
          s.live_allocs - base, s.live_fft_plans, s.violations, s.ctx_depth);
    dlclose(h);
}
