/*
 * test_fault_sets.c — batched points (warpfft_setpts_sets, warpfft_setpts3_sets) on the stand-in
 * driver, beside the walks of test_fault_walk.c and test_fault_type3.c, which run
 * configurations with point sets through every failing call:
 *  - test_sets_switching: one plan taking one point set, then several, then one again: the
 *    sets' per-bin arrays are made by the first setpts that needs them and kept (later ones
 *    allocate nothing), module scan_big loads when the sets' bins first need it, a failed
 *    growth is freed again and leaves the plan without points until the next setpts, and
 *    plan_info / the workspace say what the plan holds;
 *  - test_sets_arguments: the argument checks of both calls (the statuses warpfft.h lists, the
 *    previous points kept; method OD, the deterministic types 1 and 3, takes one set), and the
 * limits of wf_spreader_sets_ok on parameters too large to make a plan of here.
 */
#include "plans/spreader.h"
#include "test_fault.h"

enum { SETS = 40, NT = 40 }; /* 40 sets of 240 bins: 9600, more than WF_SCAN_BIG_BINS */

static char log_buf[16384];

static int lines(const char *prefix) {
    call_log(log_buf, sizeof log_buf);
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *l = log_buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        n += strncmp(l, prefix, len) == 0;
    return n;
}

/* A 2D f32 SM plan of NT transforms with bins of 2 x 2 (240 per set on the 48 x 20 grid). */
static warpfft_plan sets_plan(int type, int check_points) {
    warpfft_opts o;
    warpfft_opts_default(&o);
    o.method = WARPFFT_METHOD_SM;
    o.upsampfac = 2.0; /* the fine grid 48 x 20 */
    o.check_points = check_points;
    o.bin_size[0] = o.bin_size[1] = 2;
    warpfft_plan plan = NULL;
    int st = warpfft_plan_create(type, 2, n_modes, 1, NT, 1e-4, WARPFFT_F32, &o, &plan);
    CHECK(st == 0, "create (sets plan): %s", warpfft_last_error());
    return st == 0 ? plan : NULL;
}

static int64_t info_sets(warpfft_plan plan, int64_t *n_points) {
    warpfft_plan_info info;
    if (warpfft_plan_get_info(plan, &info) != 0)
        return -2;
    *n_points = info.n_points;
    return info.n_sets;
}

void test_sets_switching(void) {
    config cf = {1, 2, WARPFFT_F32, WARPFFT_METHOD_SM, NT, 2.0, 0, 1, 2, SETS, 0, 0};
    arrays a = arrays_make(&cf);
    for (int type = 1; type <= 2; type++) {
        warpfft_plan plan = sets_plan(type, type == 1);
        if (!plan)
            continue;
        int64_t np = 0;
        CHECK(info_sets(plan, &np) == -1 && np == -1, "type %d: n_sets before setpts: %lld", type,
              (long long)info_sets(plan, &np));
        size_t ws0 = 0, ws1 = 0, ws2 = 0;
        warpfft_plan_workspace_bytes(plan, &ws0);
        /* one set: the creation's bins, the one-block scan */
        int st = warpfft_setpts(plan, WARPFFT_F32, M, a.x, a.y, a.z);
        CHECK(st == 0 && info_sets(plan, &np) == 1 && np == M, "type %d: setpts: %s", type,
              warpfft_last_error());
        CHECK(warpfft_execute(plan, WARPFFT_F32, a.c, a.fk) == 0, "type %d: execute: %s", type,
              warpfft_last_error());
        warpfft_plan_workspace_bytes(plan, &ws1);
        /* SETS sets: per-point arrays for SETS * M points, the sets' bins (count, start,
         * subproblem starts, tile sums), the kernels of module scan_big resolved now (the
         * module itself may be loaded already: the process's module table) */
        arm(0);
        st = warpfft_setpts_sets(plan, WARPFFT_F32, SETS, M, a.x, a.y, a.z);
        int allocs = lines("cuMemAlloc"), loads = lines("cuModuleGetFunction");
        CHECK(st == 0 && info_sets(plan, &np) == SETS && np == M && allocs >= 4 && loads == 3,
              "type %d: first setpts_sets (status %d, %d allocations, %d kernels resolved): %s",
              type, st, allocs, loads, warpfft_last_error());
        CHECK(lines("launch wf_scan_big_down") == 1 && lines("launch wf_bin_scan") == 0,
              "type %d: the sets' 9600 bins are scanned by module scan_big:\n%s", type, log_buf);
        warpfft_plan_workspace_bytes(plan, &ws2);
        CHECK(ws2 > ws1 && ws1 >= ws0, "type %d: workspace %zu -> %zu -> %zu bytes", type, ws0, ws1,
              ws2);
        CHECK(warpfft_execute(plan, WARPFFT_F32, a.c, a.fk) == 0, "type %d: execute (sets): %s",
              type, warpfft_last_error());
        CHECK(warpfft_setpts_check(plan) == 0, "type %d: setpts_check (sets): %s", type,
              warpfft_last_error());
        /* back to one set, then sets again, then fewer sets: nothing allocated or loaded */
        const int64_t seq[3] = {1, SETS, SETS / 2};
        for (int i = 0; i < 3; i++) {
            arm(0);
            st = seq[i] == 1 ? warpfft_setpts(plan, WARPFFT_F32, M, a.x, a.y, a.z)
                             : warpfft_setpts_sets(plan, WARPFFT_F32, seq[i], M, a.x, a.y, a.z);
            allocs = lines("cuMemAlloc");
            loads = lines("cuModuleGetFunction") + lines("cuModuleLoad");
            int big = lines("launch wf_scan_big_down");
            int want_big = seq[i] * 240 > WF_SCAN_BIG_BINS; /* 240 bins per set */
            CHECK(st == 0 && allocs == 0 && loads == 0 && big == want_big &&
                      info_sets(plan, &np) == seq[i],
                  "type %d: setpts with %lld sets (status %d, %d allocations, %d loads, %d big "
                  "scans): %s",
                  type, (long long)seq[i], st, allocs, loads, big, warpfft_last_error());
            CHECK(warpfft_execute(plan, WARPFFT_F32, a.c, a.fk) == 0, "type %d: execute: %s", type,
                  warpfft_last_error());
        }
        destroy_plan(plan);
    }
    /* A failed growth of the sets' bins: nothing of it kept, no points, the next setpts fine */
    warpfft_plan plan = sets_plan(1, 0);
    if (plan) {
        int st = warpfft_setpts(plan, WARPFFT_F32, M, a.x, a.y, a.z);
        CHECK(st == 0, "setpts: %s", warpfft_last_error());
        warpfft_release_cached();
        standin_counts s0 = counts();
        /* every call of a first setpts_sets failing in turn (the per-point arrays' growth, the
         * sets' bins, the kernels, the launches) on a fresh plan that had one set */
        int ran_through = 0;
        for (long k = 1; k < 60 && !ran_through; k++) {
            warpfft_plan fresh = sets_plan(1, 0);
            if (!fresh)
                break;
            CHECK(warpfft_setpts(fresh, WARPFFT_F32, M, a.x, a.y, a.z) == 0, "setpts: %s",
                  warpfft_last_error());
            standin_counts before = counts();
            arm(k);
            st = warpfft_setpts_sets(fresh, WARPFFT_F32, SETS, M, a.x, a.y, a.z);
            standin_counts s;
            get(&s);
            if (st != 0) {
                check_status("setpts_sets", st, k);
                arm(0);
                CHECK(s.live_allocs <= before.live_allocs,
                      "k %ld: failed setpts_sets (%s) kept %ld allocations", k, s.failed_fn,
                      s.live_allocs - before.live_allocs);
                /* a failed context push or capture query (capture.c) changes nothing (the one
                 * set stays); later ones leave no points */
                int push = strcmp(s.failed_fn, "cuCtxPushCurrent") == 0 ||
                           strcmp(s.failed_fn, "cuStreamGetCaptureInfo") == 0;
                st = warpfft_execute(fresh, WARPFFT_F32, a.c, a.fk);
                CHECK(st == (push ? WARPFFT_SUCCESS : WARPFFT_ERR_NO_POINTS),
                      "k %ld (%s): execute after a failed setpts_sets: %s", k, s.failed_fn,
                      warpfft_last_error());
                st = warpfft_setpts_sets(fresh, WARPFFT_F32, SETS, M, a.x, a.y, a.z);
                CHECK(st == 0 && warpfft_execute(fresh, WARPFFT_F32, a.c, a.fk) == 0,
                      "k %ld: setpts_sets after a failed one: %s", k, warpfft_last_error());
            } else {
                arm(0);
                ran_through = 1; /* the whole call ran without reaching call k */
            }
            destroy_plan(fresh);
        }
        CHECK(ran_through, "setpts_sets failed at every call index up to 60");
        warpfft_release_cached(); /* the fresh plans' cuFFT plans and grids */
        standin_counts s1 = counts();
        CHECK(s1.live_allocs == s0.live_allocs, "the failed growths leaked %ld allocations",
              s1.live_allocs - s0.live_allocs);
        destroy_plan(plan);
    }
    warpfft_release_cached();
    arrays_free(&a);
}

void test_sets_arguments(void) {
    config cf = {1, 2, WARPFFT_F32, WARPFFT_METHOD_SM, 6, 2.0, 0, 0, 0, 6, 0, 0};
    arrays a = arrays_make(&cf);
    warpfft_opts o;
    warpfft_opts_default(&o);
    warpfft_plan plan = NULL, p3 = NULL;
    int st = warpfft_plan_create(1, 2, n_modes, 1, 6, 1e-4, WARPFFT_F32, &o, &plan);
    if (st == 0)
        st = warpfft_plan_create(3, 2, NULL, 1, 6, 1e-4, WARPFFT_F32, &o, &p3);
    CHECK(st == 0, "create: %s", warpfft_last_error());
    if (st != 0) {
        warpfft_plan_destroy(plan);
        arrays_free(&a);
        return;
    }
    CHECK(warpfft_setpts_sets(plan, WARPFFT_F32, 3, M, a.x, a.y, a.z) == 0, "setpts_sets: %s",
          warpfft_last_error());
    struct {
        warpfft_plan plan;
        int prec;
        int64_t n_sets, M;
        int null_y, want;
        const char *says;
    } cases[] = {
        {NULL, WARPFFT_F32, 2, M, 0, WARPFFT_ERR_INVALID_ARG, "plan is NULL"},
        {plan, WARPFFT_F64, 2, M, 0, WARPFFT_ERR_PRECISION, "precision"},
        {plan, WARPFFT_F32, 0, M, 0, WARPFFT_ERR_INVALID_ARG, "n_sets = 0"},
        {plan, WARPFFT_F32, -3, M, 0, WARPFFT_ERR_INVALID_ARG, "n_sets = -3"},
        {plan, WARPFFT_F32, 4, M, 0, WARPFFT_ERR_INVALID_ARG, "divide ntransf = 6"},
        {plan, WARPFFT_F32, 7, M, 0, WARPFFT_ERR_INVALID_ARG, "divide ntransf = 6"},
        {plan, WARPFFT_F32, 2, -1, 0, WARPFFT_ERR_BAD_NPOINTS, "M = -1"},
        {plan, WARPFFT_F32, 2, (int64_t)1 << 56, 0, WARPFFT_ERR_BAD_NPOINTS, "too large"},
        {plan, WARPFFT_F32, 2, M, 1, WARPFFT_ERR_INVALID_ARG, "y is NULL"},
        {p3, WARPFFT_F32, 2, M, 0, WARPFFT_ERR_BAD_TYPE, "warpfft_setpts3_sets"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st = warpfft_setpts_sets(cases[i].plan, (warpfft_precision)cases[i].prec, cases[i].n_sets,
                                 cases[i].M, a.x, cases[i].null_y ? NULL : a.y, a.z);
        CHECK(st == cases[i].want && strstr(warpfft_last_error(), cases[i].says) &&
                  strstr(warpfft_last_error(), "warpfft_setpts_sets"),
              "setpts_sets case %zu: status %s, message '%s'", i, warpfft_status_name(st),
              warpfft_last_error());
    }
    /* argument errors change nothing: the three sets stay */
    int64_t np = 0;
    CHECK(info_sets(plan, &np) == 3 && np == M &&
              warpfft_execute(plan, WARPFFT_F32, a.c, a.fk) == 0,
          "the points after the argument errors: %s", warpfft_last_error());
    /* M = 0: nothing to bin; type 1 writes zeros */
    CHECK(warpfft_setpts_sets(plan, WARPFFT_F32, 6, 0, NULL, NULL, NULL) == 0 &&
              info_sets(plan, &np) == 6 && np == 0 &&
              warpfft_execute(plan, WARPFFT_F32, NULL, a.fk) == 0,
          "six empty sets: %s", warpfft_last_error());
    /* type 3 */
    st = warpfft_setpts3_sets(plan, WARPFFT_F32, 2, M, a.x, a.y, NULL, M, a.x, a.y, NULL);
    CHECK(st == WARPFFT_ERR_BAD_TYPE && strstr(warpfft_last_error(), "use warpfft_setpts_sets"),
          "setpts3_sets on a type-1 plan: %s", warpfft_last_error());
    st = warpfft_setpts3_sets(p3, WARPFFT_F32, 4, M, a.x, a.y, NULL, M, a.x, a.y, NULL);
    CHECK(st == WARPFFT_ERR_INVALID_ARG && strstr(warpfft_last_error(), "divide ntransf = 6") &&
              strstr(warpfft_last_error(), "warpfft_setpts3_sets"),
          "setpts3_sets with 4 sets of 6 transforms: %s", warpfft_last_error());
    st = warpfft_setpts3_sets(p3, WARPFFT_F32, 3, M, a.x, a.y, NULL, M, a.x, NULL, NULL);
    CHECK(st == WARPFFT_ERR_INVALID_ARG && strstr(warpfft_last_error(), "target array t"),
          "setpts3_sets without t: %s", warpfft_last_error());
    /* coordinates 0.. M*n_sets (the arrays are 6 * M long): sources and targets set after set */
    st = warpfft_setpts3_sets(p3, WARPFFT_F32, 3, M, a.x, a.y, NULL, M / 2, a.x, a.y, NULL);
    CHECK(st == 0 && info_sets(p3, &np) == 3 && np == M &&
              warpfft_execute(p3, WARPFFT_F32, a.c, a.fk) == 0,
          "setpts3_sets with 3 sets: %s", warpfft_last_error());
    warpfft_plan_info info;
    CHECK(warpfft_plan_get_info(p3, &info) == 0 && info.n_targets == M / 2 && info.n_sets == 3,
          "type-3 info: n_targets %lld, n_sets %lld", (long long)info.n_targets,
          (long long)info.n_sets);
    CHECK(warpfft_setpts3(p3, WARPFFT_F32, M, a.x, a.y, NULL, M, a.x, a.y, NULL) == 0 &&
              info_sets(p3, &np) == 1,
          "setpts3 after sets: %s", warpfft_last_error());
    /* plan_params reports no point sets */
    CHECK(warpfft_plan_params(1, 2, n_modes, 6, 1e-4, WARPFFT_F32, NULL, &info) == 0 &&
              info.n_sets == -1,
          "plan_params: n_sets %lld", (long long)info.n_sets);
    /* deterministic types 1 and 3 spread by OD, whose kernels take one set: UNSUPPORTED, the
     * previous points kept; a deterministic type 2 interpolates by SM, which takes sets */
    o.deterministic = 1;
    for (int type = 1; type <= 3; type++) {
        warpfft_plan dp = NULL;
        st = warpfft_plan_create(type, 2, type == 3 ? NULL : n_modes, 1, 6, 1e-4, WARPFFT_F32, &o,
                                 &dp);
        CHECK(st == 0, "deterministic type %d: create: %s", type, warpfft_last_error());
        if (st != 0)
            continue;
        st = type == 3 ? warpfft_setpts3(dp, WARPFFT_F32, M, a.x, a.y, NULL, M, a.x, a.y, NULL)
                       : warpfft_setpts(dp, WARPFFT_F32, M, a.x, a.y, NULL);
        CHECK(st == 0, "deterministic type %d: one set: %s", type, warpfft_last_error());
        st = type == 3
                 ? warpfft_setpts3_sets(dp, WARPFFT_F32, 3, M, a.x, a.y, NULL, M, a.x, a.y, NULL)
                 : warpfft_setpts_sets(dp, WARPFFT_F32, 3, M, a.x, a.y, NULL);
        if (type == 2)
            CHECK(st == 0 && info_sets(dp, &np) == 3, "deterministic type 2: three sets: %s",
                  warpfft_last_error());
        else
            CHECK(st == WARPFFT_ERR_UNSUPPORTED && strstr(warpfft_last_error(), "method OD") &&
                      info_sets(dp, &np) == 1 && np == M,
                  "deterministic type %d: three sets: status %s, '%s'", type,
                  warpfft_status_name(st), warpfft_last_error());
        destroy_plan(dp);
    }
    /* the limits, on parameters no plan here could have */
    wf_params p;
    memset(&p, 0, sizeof p);
    p.ntransf = (int64_t)1 << 20;
    p.nbins = 1 << 20;
    st = wf_spreader_sets_ok(&p, 65536, "sets_ok");
    CHECK(st == WARPFFT_ERR_UNSUPPORTED && strstr(warpfft_last_error(), "at most 65535"),
          "65536 sets: %s", warpfft_last_error());
    st = wf_spreader_sets_ok(&p, 4096, "sets_ok");
    CHECK(st == WARPFFT_ERR_BAD_SIZE && strstr(warpfft_last_error(), "2^31"),
          "4096 sets of 2^20 bins: %s", warpfft_last_error());
    p.nbins = (1 << 19) - 1;
    CHECK(wf_spreader_sets_ok(&p, 4096, "sets_ok") == 0, "4096 sets of 2^19 - 1 bins: %s",
          warpfft_last_error());
    destroy_plan(plan);
    destroy_plan(p3);
    warpfft_release_cached();
    arrays_free(&a);
}
