/*
 * test_xla_ffi.c — the XLA FFI handler (c_core/src/framework/xla_ffi.c) with the live-plan pool
 * it takes plans from (api/pool.c), linked with a recording stand-in of the public C ABI and of
 * the plan hooks the pool calls (test_xla_ffi_standin.c; no driver, no GPU); built and run by
 * run_tests.sh. python/tests/test_jax_handler_abi.py covers the argument errors.
 *
 * What one call does, for types 1, 2 and 3, one and several groups, shared and per-group points:
 * it asks XLA for the stream, takes a plan from the pool (made with the call's key and
 * check_points 0: unchecked set-points), sets the points once per point group (once when one set
 * serves every group) and executes once per batch group on that group's slices, in that order,
 * then gives the plan back (the pool fences its work and forgets its points); a second call
 * reuses the plan. With the k-th call (stream request or ABI) failing, for k = 1, 2, ...: the
 * handler returns XLA's own error or one naming the failed function with its status's error
 * code, calls nothing after it but the release, and leaves the plan idle in the pool. A call
 * with nothing to compute asks for nothing. test_xla_ffi_pool.c: the handler's use of the pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_xla_ffi.h"

int n_pass, n_fail;

/* ---- what the handler must do, written out independently ---- */

/* The points_hint the handler must pass for M points (types 1 and 2): the power of two nearest
 * to M, a tie going up; 0 for no points. */
static int64_t want_hint(int64_t M) {
    if (M <= 0)
        return 0;
    int64_t p = 1;
    while (p * 2 <= M)
        p *= 2;
    return M - p < 2 * p - M ? p : 2 * p;
}

/* Whether the handler runs cf's groups as one plan with batched points (xla_ffi.c: groups with
 * their own points, and no OD spreading: the frames ask for SM, deterministic as frame_det). */
static int sets_of(const config *cf) {
    return cf->Gp > 1 && cf->G > 1 && !(frame_det && cf->type != 2);
}

/* The trace of a whole call of `cf` that succeeds: with a new plan (id `plan`) or a pooled one. */
static void expected(const config *cf, int plan, int create, char *s, size_t len) {
    int dim = cf->dim, f64 = cf->precision == WARPFFT_F64;
    size_t real = f64 ? 8 : 4, cplx = 2 * real;
    int64_t nprod = 1, n[3] = {1, 1, 1};
    for (int d = 0; cf->type != 3 && d < dim; d++)
        nprod *= n[d] = cf->n[d];
    size_t out = 0;
    out += (size_t)snprintf(s + out, len - out, "stream\n");
    if (create)
        out += (size_t)snprintf(s + out, len - out,
                                "create %d %dd n %lld %lld %lld iflag -1 T %lld eps 1e-05 prec %d "
                                "modeord %d method 2 device 0 upsampfac 1.25 stream 0x5150 "
                                "max_subprob 7 bins 4 5 6 check 0 hint %lld det %d\n",
                                cf->type, dim, (long long)n[0], (long long)n[1], (long long)n[2],
                                (long long)(cf->T * (sets_of(cf) ? cf->G : 1)), (int)cf->precision,
                                cf->type == 3 ? 0 : 1,
                                (long long)(cf->type == 3 ? 0 : want_hint(cf->M)), frame_det);
    if (sets_of(cf)) { /* every group's points at once, one execute of G * T transforms */
        const char *p3 = dim >= 2 ? "y+0" : "-", *p4 = dim >= 3 ? "z+0" : "-";
        if (cf->type == 3)
            out += (size_t)snprintf(
                s + out, len - out,
                "setpts3_sets P%d prec %d sets %lld M %lld x+0 %s %s K %lld s+0 %s %s\n", plan,
                (int)cf->precision, (long long)cf->G, (long long)cf->M, p3, p4, (long long)cf->K,
                dim >= 2 ? "t+0" : "-", dim >= 3 ? "u+0" : "-");
        else
            out += (size_t)snprintf(s + out, len - out,
                                    "setpts_sets P%d prec %d sets %lld M %lld x+0 %s %s\n", plan,
                                    (int)cf->precision, (long long)cf->G, (long long)cf->M, p3, p4);
        out += (size_t)snprintf(s + out, len - out, "execute P%d prec %d %s+0 %s+0\n", plan,
                                (int)cf->precision, cf->type == 2 ? "out" : "src",
                                cf->type == 2 ? "src" : "out");
    }
    for (int64_t g = 0; g < cf->G && !sets_of(cf); g++) {
        size_t pg = cf->Gp > 1 ? (size_t)g : 0;
        char p[6][32];
        static const char *const coord[6] = {"x", "y", "z", "s", "t", "u"};
        for (int d = 0; d < 6; d++) {
            int64_t len_d = d < 3 ? cf->M : cf->K;
            if (d % 3 < dim && (d < 3 || cf->type == 3))
                snprintf(p[d], sizeof p[d], "%s+%zu", coord[d], pg * (size_t)len_d * real);
            else
                snprintf(p[d], sizeof p[d], "-");
        }
        if (g == 0 || cf->Gp > 1) {
            if (cf->type == 3)
                out += (size_t)snprintf(s + out, len - out,
                                        "setpts3 P%d prec %d M %lld %s %s %s K %lld %s %s %s\n",
                                        plan, (int)cf->precision, (long long)cf->M, p[0], p[1],
                                        p[2], (long long)cf->K, p[3], p[4], p[5]);
            else
                out +=
                    (size_t)snprintf(s + out, len - out, "setpts P%d prec %d M %lld %s %s %s\n",
                                     plan, (int)cf->precision, (long long)cf->M, p[0], p[1], p[2]);
        }
        size_t per_c = (size_t)(cf->T * cf->M) * cplx;
        size_t per_fk = (size_t)(cf->T * (cf->type == 3 ? cf->K : nprod)) * cplx;
        out +=
            (size_t)snprintf(s + out, len - out, "execute P%d prec %d %s+%zu %s+%zu\n", plan,
                             (int)cf->precision, cf->type == 2 ? "out" : "src", (size_t)g * per_c,
                             cf->type == 2 ? "src" : "out", (size_t)g * per_fk);
    }
    snprintf(s + out, len - out, "fence P%d\nforget P%d\n", plan, plan); /* the release */
}

static int errc_of(warpfft_status st) {
    switch (st) {
    case WARPFFT_ERR_OUT_OF_MEMORY:
        return WF_XLA_ERR_RESOURCE_EXHAUSTED;
    case WARPFFT_ERR_NO_DRIVER:
        return WF_XLA_ERR_UNAVAILABLE;
    case WARPFFT_ERR_UNSUPPORTED:
        return WF_XLA_ERR_UNIMPLEMENTED;
    case WARPFFT_ERR_CUDA:
        return WF_XLA_ERR_INTERNAL;
    default:
        return WF_XLA_ERR_INVALID_ARGUMENT;
    }
}

static const config configs[] = {
    /* type, dim, precision, G, Gp, T, M, K, n */
    {1, 2, WARPFFT_F32, 3, 3, 2, 5, 0, {8, 6, 1}},
    {1, 1, WARPFFT_F64, 1, 1, 1, 7, 0, {10, 1, 1}},
    {2, 3, WARPFFT_F64, 2, 1, 3, 4, 0, {4, 3, 2}},
    {2, 2, WARPFFT_F32, 2, 2, 1, 0, 0, {5, 3, 1}}, /* M = 0 still runs */
    {3, 2, WARPFFT_F32, 3, 3, 2, 5, 4, {1, 1, 1}},
    {3, 3, WARPFFT_F64, 2, 1, 1, 3, 6, {1, 1, 1}},
    {3, 1, WARPFFT_F32, 2, 2, 2, 0, 3, {1, 1, 1}}, /* no sources: still runs */
};
enum { N_CONFIGS = sizeof configs / sizeof configs[0] };

static void test_calls(void) {
    static char want[8192];
    for (int i = 0; i < N_CONFIGS; i++) {
        const config *cf = &configs[i];
        char name[128];
        describe(cf, name, sizeof name);
        warpfft_pool_clear();
        int64_t created = warpfft_xla_plans_created();
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(cf));
        expected(cf, plan_ids, 1, want, sizeof want);
        CHECK(err == NULL && strcmp(trace, want) == 0, "%s: %s\n-- made --\n%s-- expected --\n%s",
              name, err ? xla_msg : "no error", trace, want);
        CHECK(warpfft_xla_plans_created() == created + 1 && pool_size() == 1,
              "%s: %lld plans created, %lld cached", name,
              (long long)(warpfft_xla_plans_created() - created), (long long)pool_size());
        /* again: the pooled plan, no new one */
        arm(0, WARPFFT_SUCCESS);
        err = warpfft_xla_nufft(frame(cf));
        expected(cf, plan_ids, 0, want, sizeof want);
        CHECK(err == NULL && strcmp(trace, want) == 0,
              "%s, second call: %s\n-- made --\n%s-- expected --\n%s", name,
              err ? xla_msg : "no error", trace, want);
        CHECK(warpfft_xla_plans_created() == created + 1, "%s: a second call made a plan", name);
    }
}

/* Nothing to compute (G, T or type 3's K is 0): no stream request, no plan. */
static void test_empty(void) {
    static const config empty[] = {
        {1, 2, WARPFFT_F32, 0, 1, 2, 5, 0, {8, 6, 1}},
        {2, 1, WARPFFT_F64, 2, 2, 0, 5, 0, {8, 1, 1}},
        {3, 2, WARPFFT_F32, 2, 2, 2, 5, 0, {1, 1, 1}},
        {3, 1, WARPFFT_F64, 0, 1, 2, 5, 4, {1, 1, 1}},
    };
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        char name[128];
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&empty[i]));
        CHECK(err == NULL && trace[0] == '\0', "%s: %s, calls:\n%s",
              describe(&empty[i], name, sizeof name), err ? xla_msg : "no error", trace);
    }
}

/* Decoding edges: the options record (attribute opts, hex) refused when it is not a string, has
 * an odd or non-hex digit, disagrees with its own struct_size, or sets a byte past this build's
 * struct (a newer warpfft made it); an older, shorter record reaches the plan over the defaults.
 * A call with no groups whose mode counts multiply past 2^63 (a valid empty shape; the fuzzer,
 * c_core/fuzz/fuzz_xla.c, found it) asks for nothing (the product overflowed, undefined
 * behaviour, before the emptiness was seen). */
static void test_decoding_edges(void) {
    const config cf = {1, 2, WARPFFT_F32, 2, 2, 1, 3, 0, {4, 4, 1}};
    static frame_store fs;
    static char hex[2 * 4096 + 8];
    /* the messages name this build's struct size S (its appended options make it grow): a
     * record of S bytes has 2 S hex digits; "size" says S + 16; "newer" is S + 8 bytes with
     * byte S + 3 set */
    const size_t S = sizeof(warpfft_opts);
    char want_odd[128], want_size[128], want_newer[160];
    snprintf(want_odd, sizeof want_odd,
             "warpfft: attribute opts has %zu hex digits; a warpfft_opts record is 4..4096",
             2 * S - 1);
    snprintf(want_size, sizeof want_size,
             "warpfft: attribute opts holds %zu bytes but its struct_size says %zu", S, S + 16);
    snprintf(want_newer, sizeof want_newer,
             "warpfft: attribute opts sets byte %zu, past the %zu-byte warpfft_opts of this "
             "warpfft (a newer one made it): update warpfft",
             S + 3, S);
    const struct {
        const char *what, *want;
    } bad[] = {
        {"odd", want_odd},
        {"nothex", "warpfft: attribute opts: \"zz\" at byte 8 is not hex"},
        {"size", want_size},
        {"newer", want_newer},
        {"scalar", "warpfft: attribute opts must be a string (the warpfft_opts record in hex)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        XLA_FFI_CallFrame *f = frame_at(&fs, &cf);
        memcpy(hex, fs.opts_hex, 2 * sizeof fs.opts + 1);
        size_t len = 2 * sizeof fs.opts;
        char digits[3];
        if (!strcmp(bad[i].what, "odd")) {
            len--;
        } else if (!strcmp(bad[i].what, "nothex")) {
            hex[16] = hex[17] = 'z';
        } else if (!strcmp(bad[i].what, "size")) { /* struct_size S + 16 (its low byte) */
            snprintf(digits, sizeof digits, "%02x", (unsigned)((S + 16) & 0xff));
            hex[0] = digits[0], hex[1] = digits[1];
        } else if (!strcmp(bad[i].what, "newer")) { /* S + 8 bytes, byte S + 3 set */
            memset(hex + len, '0', 16);
            snprintf(digits, sizeof digits, "%02x", (unsigned)((S + 8) & 0xff));
            hex[0] = digits[0], hex[1] = digits[1], hex[2 * (S + 3) + 1] = '1';
            len += 16;
        } else {
            fs.attr_types[6] = WF_XLA_ATTR_SCALAR;
        }
        fs.opts_span = (XLA_FFI_ByteSpan){hex, len};
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(f);
        CHECK(err == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, bad[i].want) &&
                  xla_errc == WF_XLA_ERR_INVALID_ARGUMENT && trace[0] == '\0',
              "opts %s: %s, calls:\n%s", bad[i].what, err ? xla_msg : "no error", trace);
    }
    /* an older header's record (56 bytes: before points_hint): its fields, the rest default */
    XLA_FFI_CallFrame *f = frame_at(&fs, &cf);
    fs.opts.struct_size = 56;
    frame_opts(&fs);
    fs.opts_span.len = 2 * 56;
    warpfft_pool_clear();
    arm(0, WARPFFT_SUCCESS);
    XLA_FFI_Error *err = warpfft_xla_nufft(f);
    CHECK(err == NULL && strstr(trace, "modeord 1 method 2 device 0 upsampfac 1.25") &&
              strstr(trace, "max_subprob 7 bins 4 5 6 check 0 hint 4 det 0"),
          "a 56-byte record: %s, calls:\n%s", err ? xla_msg : "no error", trace);
    const config empty = {
        2, 2, WARPFFT_F64, 0, 1, 1, 5, 0, {(int64_t)1 << 40, (int64_t)1 << 40, 1}};
    arm(0, WARPFFT_SUCCESS);
    err = warpfft_xla_nufft(frame(&empty));
    CHECK(err == NULL && trace[0] == '\0', "G = 0, modes 2^40 x 2^40: %s, calls:\n%s",
          err ? xla_msg : "no error", trace);
}

/* real_data (docs/real.md) in the options record: type 1 takes real strengths (float32 or
 * float64) to the half modes, the last axis H = N1/2 + 1 (N1 the attribute n1, even or odd),
 * type 2 the half modes to real values; each group's slice of the strengths is T M reals. A
 * complex source of type 1, a real source of type 2, the full mode shape and type 3 are refused
 * before anything is asked for. */
static void test_real_data(void) {
    static frame_store fs;
    static const struct {
        config cf;
        int64_t H;
        const char *want; /* the executes of the two groups (deterministic: one after the other) */
    } ok[] = {
        {{1, 2, WARPFFT_F32, 2, 2, 3, 5, 0, {7, 4, 1}},
         4,
         "execute P%d prec 1 src+0 out+0\n"
         "setpts P%d prec 1 M 5 x+20 y+20 -\nexecute P%d prec 1 src+60 out+384\n"},
        {{2, 1, WARPFFT_F64, 2, 1, 3, 5, 0, {6, 1, 1}},
         4,
         "execute P%d prec 2 out+0 src+0\nexecute P%d prec 2 out+120 src+192\n"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const config *cf = &ok[i].cf;
        XLA_FFI_CallFrame *f = frame_at(&fs, cf);
        int f64 = cf->precision == WARPFFT_F64;
        XLA_FFI_Buffer *strengths = &fs.buf[cf->type == 1 ? 0 : cf->dim + 1];
        XLA_FFI_Buffer *modes = &fs.buf[cf->type == 1 ? cf->dim + 1 : 0];
        strengths->dtype = f64 ? WF_XLA_F64 : WF_XLA_F32;
        modes->dims[modes->rank - 1] = ok[i].H;
        fs.opts.real_data = 1;
        frame_opts(&fs);
        warpfft_pool_clear();
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(f);
        char want[512];
        int id = plan_ids;
        snprintf(want, sizeof want, ok[i].want, id, id, id, id);
        CHECK(err == NULL && strstr(trace, want),
              "real_data type %d: %s\n-- made --\n%s-- "
              "wanted in it --\n%s",
              cf->type, err ? xla_msg : "no error", trace, want);
        /* the same frame with the complex source of a complex plan, or the full modes */
        for (int bad = 0; bad < 2; bad++) {
            f = frame_at(&fs, cf);
            if (bad == 0) {
                fs.buf[0].dtype = cf->type == 1 ? (f64 ? WF_XLA_C128 : WF_XLA_C64)
                                                : (f64 ? WF_XLA_F64 : WF_XLA_F32);
            } else {
                strengths->dtype = f64 ? WF_XLA_F64 : WF_XLA_F32;
                modes->dims[modes->rank - 1] = cf->n[0];
            }
            fs.opts.real_data = 1;
            frame_opts(&fs);
            arm(0, WARPFFT_SUCCESS);
            err = warpfft_xla_nufft(f);
            const char *msg = bad == 0 ? "real_data type" : "real_data: the last axis halved";
            CHECK(err == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, msg) &&
                      xla_errc == WF_XLA_ERR_INVALID_ARGUMENT && trace[0] == '\0',
                  "real_data type %d, bad %d: %s, calls:\n%s", cf->type, bad,
                  err ? xla_msg : "no error", trace);
        }
    }
    const config t3 = {3, 2, WARPFFT_F32, 2, 2, 2, 5, 4, {1, 1, 1}};
    XLA_FFI_CallFrame *f = frame_at(&fs, &t3);
    fs.opts.real_data = 1;
    frame_opts(&fs);
    arm(0, WARPFFT_SUCCESS);
    XLA_FFI_Error *err = warpfft_xla_nufft(f);
    CHECK(err == (XLA_FFI_Error *)&xla_error_token && strstr(xla_msg, "types 1 and 2 only") &&
              xla_errc == WF_XLA_ERR_UNIMPLEMENTED && trace[0] == '\0',
          "real_data type 3: %s, calls:\n%s", err ? xla_msg : "no error", trace);
    warpfft_pool_clear();
}

/* The created plan's "upsampfac U" and "hint H" from the trace; 0 when there is no create. */
static int created_with(double *ups, long long *hint) {
    const char *c = strstr(trace, "create "), *u = c ? strstr(c, "upsampfac ") : NULL;
    const char *h = c ? strstr(c, " hint ") : NULL;
    return u && h && sscanf(u, "upsampfac %lf", ups) == 1 && sscanf(h, " hint %lld", hint) == 1;
}

/* A frame without the opts attribute reaches the plan with the defaults: upsampfac 0 (chosen
 * per plan; it was 2.0). points_hint is the power of two nearest to the call's M (types 1 and 2;
 * type 3: 0, whatever M): calls whose M round alike share one pooled plan, others make their
 * own. */
static void test_upsampfac_default_and_points_hint(void) {
    static const struct {
        int64_t M, hint;
    } cases[] = {{1, 1}, {2, 2},       {3, 4},       {5, 4},       {6, 8},
                 {7, 8}, {1000, 1024}, {1535, 1024}, {1536, 2048}, {1537, 2048}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int type = 1; type <= 3; type += 2) {
            config cf = {type, 1, WARPFFT_F32, 1, 1, 1, cases[i].M, 3, {16, 1, 1}};
            if (type == 3)
                cf.n[0] = 1;
            static frame_store fs;
            XLA_FFI_CallFrame *f = frame_at(&fs, &cf);
            f->attrs.size = 6; /* opts is the last attribute: gone */
            warpfft_pool_clear();
            arm(0, WARPFFT_SUCCESS);
            XLA_FFI_Error *err = warpfft_xla_nufft(f);
            double ups = -1;
            long long hint = -1, want = type == 3 ? 0 : cases[i].hint;
            CHECK(err == NULL && created_with(&ups, &hint) && ups == 0.0 && hint == want,
                  "type %d M %lld without opts: %s; upsampfac %g hint %lld (want 0, %lld)\n%s",
                  type, (long long)cases[i].M, err ? xla_msg : "no error", ups, hint, want, trace);
        }
    /* M 5 after M 4 (hint 4 both): the same plan; M 7 (hint 8): another */
    static const int64_t Ms[] = {4, 5, 7};
    static const int creates[] = {1, 0, 1};
    warpfft_pool_clear();
    for (int i = 0; i < 3; i++) {
        config cf = {1, 2, WARPFFT_F64, 1, 1, 2, Ms[i], 0, {8, 6, 1}};
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&cf));
        CHECK(err == NULL && (strstr(trace, "create ") != NULL) == creates[i],
              "M %lld: %s; %s a plan:\n%s", (long long)Ms[i], err ? xla_msg : "no error",
              creates[i] ? "expected" : "did not expect", trace);
    }
}

/* The k-th call fails, for every k that a whole call reaches. */
static void test_failures(void) {
    static const warpfft_status statuses[] = {WARPFFT_ERR_OUT_OF_MEMORY, WARPFFT_ERR_NO_DRIVER,
                                              WARPFFT_ERR_UNSUPPORTED, WARPFFT_ERR_CUDA,
                                              WARPFFT_ERR_BAD_POINTS};
    for (int i = 0; i < N_CONFIGS; i++) {
        const config *cf = &configs[i];
        char name[128];
        describe(cf, name, sizeof name);
        long k = 1;
        for (;; k++) {
            warpfft_status st = statuses[k % 5];
            warpfft_pool_clear();
            arm(k, st);
            XLA_FFI_Error *err = warpfft_xla_nufft(frame(cf));
            if (calls < k) {
                CHECK(err == NULL, "%s: no failure injected, but: %s", name, xla_msg);
                break;
            }
            int create_failed = strcmp(failed_fn, "warpfft_plan_create") == 0;
            int had_plan = strstr(trace, "create") && !create_failed;
            /* nothing after the failed call but the plan's release */
            char tail[64] = "  FAILED\n";
            if (had_plan)
                snprintf(tail, sizeof tail, "  FAILED\nfence P%d\nforget P%d\n", plan_ids,
                         plan_ids);
            size_t len = strlen(trace), tl = strlen(tail);
            CHECK(len >= tl && strcmp(trace + len - tl, tail) == 0,
                  "%s: calls after the failed %s (k = %ld) other than the release:\n%s", name,
                  failed_fn, k, trace);
            if (strcmp(failed_fn, "XLA_FFI_Stream_Get") == 0) {
                CHECK(err == (XLA_FFI_Error *)&stream_error_token,
                      "%s: the stream request's error was not passed on", name);
            } else {
                char want[256];
                snprintf(want, sizeof want, "warpfft: %s failed (STATUS_%d): stand-in: %s failed",
                         failed_fn, (int)st, failed_fn);
                CHECK(err == (XLA_FFI_Error *)&xla_error_token && strcmp(xla_msg, want) == 0 &&
                          xla_errc == errc_of(st),
                      "%s, %s failed with %d: error %d '%s', expected %d '%s'", name, failed_fn,
                      (int)st, xla_errc, xla_msg, errc_of(st), want);
            }
            CHECK(pool_size() == had_plan, "%s, %s failed: %lld plans cached", name, failed_fn,
                  (long long)pool_size());
            /* the plan is idle again: the next call takes it */
            arm(0, WARPFFT_SUCCESS);
            err = warpfft_xla_nufft(frame(cf));
            CHECK(err == NULL && (strstr(trace, "create") == NULL) == had_plan,
                  "%s, after %s failed: %s, calls:\n%s", name, failed_fn,
                  err ? xla_msg : "no error", trace);
        }
        /* stream, create, the set-points, the executes */
        long whole = sets_of(cf) ? 4 : 2 + (cf->Gp > 1 ? cf->G : 1) + cf->G;
        CHECK(k - 1 == whole, "%s: a whole call made %ld calls, not %ld", name, k - 1, whole);
        printf("  %s%s: %ld failure points walked\n", name, frame_det ? "" : " (not deterministic)",
               k - 1);
    }
}

/* Groups with their own points on a plan that cannot take their sets (BAD_SIZE: too many bins)
 * or that cannot be made (OUT_OF_MEMORY) run one after the other on a plan of T transforms,
 * and the call succeeds; a deterministic type 1 (OD spreading) does so without trying. */
static void test_sets_fallback(void) {
    const config cf = {1, 2, WARPFFT_F32, 3, 3, 2, 5, 0, {8, 6, 1}};
    int steps[2] = {0, 0}; /* setpts, execute */
    warpfft_pool_clear();
    frame_det = 0;
    sets_refuse = 1;
    arm(0, WARPFFT_SUCCESS);
    XLA_FFI_Error *err = warpfft_xla_nufft(frame(&cf));
    sets_refuse = 0;
    for (const char *l = strstr(trace, "T 2 "); l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
        steps[0] += strncmp(l, "setpts P", 8) == 0, steps[1] += strncmp(l, "execute", 7) == 0;
    CHECK(err == NULL && strstr(trace, "T 6 ") && strstr(trace, "setpts_sets P") && steps[0] == 3 &&
              steps[1] == 3,
          "refused sets: %s, calls:\n%s", err ? xla_msg : "no error", trace);
    /* the batched plan's creation runs out of memory (its G * T grids): a plan of T */
    warpfft_pool_clear();
    arm(2, WARPFFT_ERR_OUT_OF_MEMORY); /* call 1: the stream; 2: the plan of G * T */
    err = warpfft_xla_nufft(frame(&cf));
    const char *second = strstr(trace, "T 6 ") ? strstr(strstr(trace, "T 6 "), "create") : NULL;
    CHECK(err == NULL && second && strstr(second, "T 2 ") && !strstr(trace, "_sets"),
          "out of memory for the batched plan: %s, calls:\n%s", err ? xla_msg : "no error", trace);
    frame_det = 1;
    arm(0, WARPFFT_SUCCESS);
    err = warpfft_xla_nufft(frame(&cf));
    CHECK(err == NULL && !strstr(trace, "_sets"), "deterministic type 1: %s, calls:\n%s",
          err ? xla_msg : "no error", trace);
    warpfft_pool_clear();
}

/* The batched plan is made (its G * T grids fit) but its sets run out of memory: it must be
 * destroyed before the fallback's plan of T is made, not given back idle (then the fallback ran
 * out of memory too, beside its G * T grids, and so did every later call of the shape, which
 * took the idle batched plan again). Memory: the batched plan's 6000 bytes fit a budget of 7000,
 * its sets' 1500 more do not, nor does the plan of T's 2000 beside the batched plan. */
static void test_sets_out_of_memory(void) {
    const config cf = {1, 2, WARPFFT_F32, 3, 3, 2, 5, 0, {8, 6, 1}};
    warpfft_pool_clear();
    frame_det = 0;
    mem_budget = 6 * PLAN_BYTES_PER_TRANSFORM + SETS_BYTES_PER_SET;
    for (int call = 0; call < 3; call++) {
        arm(0, WARPFFT_SUCCESS);
        XLA_FFI_Error *err = warpfft_xla_nufft(frame(&cf));
        const char *sets = strstr(trace, "setpts_sets P");
        const char *gone = sets ? strstr(sets, "destroy P") : NULL;
        const char *fallback = strstr(trace, "create 1 2d n 8 6 1 iflag -1 T 2 ");
        CHECK(err == NULL, "call %d: %s, calls:\n%s", call, err ? xla_msg : "no error", trace);
        if (call == 0) /* the batched plan made, its sets out of memory: destroyed, then T */
            CHECK(sets && gone && fallback && gone < fallback,
                  "call 0: the batched plan not destroyed before the fallback's, calls:\n%s",
                  trace);
        else /* the batched plan cannot be made beside the idle plan of T: that plan again */
            CHECK(!sets && !fallback && strstr(trace, "execute P"),
                  "call %d: not the idle plan of T transforms, calls:\n%s", call, trace);
        int steps = 0;
        for (const char *l = strstr(trace, "execute P"); l; l = strstr(l + 1, "execute P"))
            steps++;
        CHECK(steps == 3, "call %d: %d executes, not one per group", call, steps);
    }
    mem_budget = 0;
    frame_det = 1;
    warpfft_pool_clear();
    CHECK(mem_live == 0, "%lld bytes of the stand-in GPU left", (long long)mem_live);
}

int main(void) {
    warpfft_pool_set_limits(16, (int64_t)1 << 30); /* whatever the environment says */
    /* deterministic (the groups of types 1 and 3 one after the other: OD), then not (batched
     * points where the groups have their own) */
    for (frame_det = 1; frame_det >= 0; frame_det--) {
        test_calls();
        test_failures();
    }
    frame_det = 1;
    test_sets_fallback();
    test_sets_out_of_memory();
    test_empty();
    test_decoding_edges();
    test_real_data();
    test_upsampfac_default_and_points_hint();
    test_clear_during_call();
    test_no_waiting_behind_create();
    test_no_waiting_behind_destroy();
    test_eviction_syncs_no_stream();
    run_isolated("empty, huge", test_empty_huge); /* UBSan aborts on a signed overflow */
    test_toeplitz_spectrum();
    test_toeplitz_apply();
    test_toeplitz_pool();
    warpfft_pool_clear();
    CHECK(plans_live == 0 && ops_live == 0 && pool_size() == 0, "%d plans, %d operators left",
          plans_live, ops_live);
    return check_summary("XLA FFI handlers on the recording stand-in: ");
}
