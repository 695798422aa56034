/*
 * test_nvrtc_modules.c — compiles the kernel modules embedded as sources (a build with the
 * `nvrtc` feature) with a real NVRTC, as module.c does on a GPU without a fitting image, but
 * with no GPU: every source of every module (or a sample, see below) with its options and the
 * files table as headers, for each arch given. Catches a source, header or option NVRTC cannot
 * take before anything runs on a GPU. Built and run by scripts/check_nvrtc_modules.sh:
 *   test_nvrtc_modules [--all] SM...        e.g. 90 80 120
 * Without --all: sort, scan_big, sort_stable, prep, direct and type3 (both precisions) and the
 * spreadinterp modules of one width per dimension and precision, complex and real (see
 * sampled()).
 * The spreading modules' names: every one that kernels/module_names.h's rule names for the
 * embedded widths (params/base.h) is in the table and no other, and each compiled one holds the
 * entry point the rule names (what the C core's wf_si_names looks up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "module_names.h"
#include "params/base.h"
#include "runtime/error.h"
#include "runtime/nvrtc.h"
#include "warpfft_kernels.h"

#ifndef FATBUILD_HAS_SOURCES
int main(void) {
    printf("SKIP: the generated warpfft_kernels.h has no embedded sources (no "
           "FATBUILD_HAS_SOURCES)\n");
    return 0;
}
#else
static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The sample: every module that is not a spreadinterp one, and every method and direction of
 * these (small, middle and largest widths; 3D at the largest is the heaviest compile), and the
 * SM spreading with the tile in registers at its narrowest and widest (kernels/smr_shape.h).
 * The stems are prefixes: si modules are per direction and method (si_2d_f32_w7_spread_od,
 * ...). */
static int sampled(const char *name) {
    static const char *const si[] = {
        "si_1d_f32_w2_",           "si_1d_f64_w2_",           "si_2d_f32_w7_",
        "si_2d_f64_w7_",           "si_3d_f32_w12_",          "si_3d_f64_w16_",
        "si_3d_f64_w7_spread_sm",  "si_3d_f64_w14_spread_sm", "si_2d_f64_w10_spread_sm",
        "si_2d_f64_w16_spread_sm", "si_1d_f32r_w2_",          "si_2d_f64r_w7_",
        "si_3d_f32r_w12_",         "si_3d_f64r_w16_",         "si_3d_f64r_w10_spread_sm",
        "si_2d_f64r_w16_spread_sm"};
    if (strncmp(name, "si_", 3) != 0)
        return 1;
    for (size_t i = 0; i < sizeof si / sizeof si[0]; i++)
        if (strncmp(name, si[i], strlen(si[i])) == 0)
            return 1;
    return 0;
}

/* The spreading modules by module_names.h's rule: calls f(module, entry) for each (dim,
 * precision (f32, f64, and the real-valued f32r, f64r), embedded width, direction, method; od
 * spreads only) until f returns nonzero; returns that, or 0. */
static int each_si_module(int (*f)(const char *module, const char *entry, void *ctx), void *ctx) {
    static const char *const dirs[2] = {"spread", "interp"}, *const methods[3] = {"gm", "sm", "od"};
    static const char *const precs[4] = {"f32", "f64", "f32r", "f64r"};
    char module[64], entry[64];
    for (int p = 0; p < 4; p++)
        for (int dim = 1; dim <= 3; dim++)
            for (int w = 2; w <= (p % 2 == 0 ? WF_MAX_WIDTH_F32 : WF_MAX_WIDTH_F64); w++)
                for (int d = 0; d < 2; d++)
                    for (int m = 0; m < 3 - d; m++) {
                        const char *ps = precs[p];
                        snprintf(module, sizeof module, WF_SI_MODULE_FMT, dim, ps, w, dirs[d],
                                 methods[m]);
                        snprintf(entry, sizeof entry, WF_SI_ENTRY_FMT, dirs[d], methods[m], dim, ps,
                                 w);
                        int r = f(module, entry, ctx);
                        if (r)
                            return r;
                    }
    return 0;
}

static int is_embedded(const char *module, const char *entry, void *ctx) {
    (void)entry;
    int *missing = ctx;
    for (size_t k = 0; k < warpfft_kernels_n_modules; k++)
        if (strcmp(warpfft_kernels_modules[k].name, module) == 0)
            return 0;
    printf("FAIL %s: named by module_names.h, not embedded\n", module);
    ++*missing;
    return 0;
}

/* The rule's names against the table: each is embedded, and the table has no other si_ module
 * (count). Returns the failures. */
static int check_si_names(void) {
    int missing = 0, named = 0, embedded = 0;
    each_si_module(is_embedded, &missing);
    for (size_t k = 0; k < warpfft_kernels_n_modules; k++)
        embedded += strncmp(warpfft_kernels_modules[k].name, "si_", 3) == 0;
    for (int p = 0; p < 4; p++) /* dims x widths x (3 spread + 2 interp methods), complex, real */
        named += 3 * ((p % 2 == 0 ? WF_MAX_WIDTH_F32 : WF_MAX_WIDTH_F64) - 1) * 5;
    if (embedded != named) {
        printf("FAIL: %d si_ modules embedded, module_names.h names %d\n", embedded, named);
        missing++;
    }
    printf("module names: %d spreading modules, each named by module_names.h\n", named);
    return missing;
}

typedef struct entry_of {
    const char *module;
    char entry[64];
} entry_of;
static int find_entry(const char *module, const char *entry, void *ctx) {
    entry_of *e = ctx;
    if (strcmp(module, e->module) != 0)
        return 0;
    snprintf(e->entry, sizeof e->entry, "%s", entry);
    return 1;
}

static const char *file_text(const char *name) {
    for (size_t i = 0; i < warpfft_kernels_n_files; i++)
        if (strcmp(warpfft_kernels_files[i].name, name) == 0)
            return warpfft_kernels_files[i].text;
    return NULL;
}

int main(int argc, char **argv) {
    int all = argc > 1 && strcmp(argv[1], "--all") == 0;
    if (argc < 2 + all) {
        fprintf(stderr, "usage: test_nvrtc_modules [--all] SM...\n");
        return 2;
    }
    const wf_nvrtc *nv = NULL;
    if (wf_nvrtc_get(&nv) != WARPFFT_SUCCESS) {
        printf("FAIL: %s\n", warpfft_last_error());
        return 1;
    }
    size_t nf = warpfft_kernels_n_files;
    const char **names = calloc(nf + 1, sizeof *names), **texts = calloc(nf + 1, sizeof *texts);
    for (size_t i = 0; i < nf; i++) {
        names[i] = warpfft_kernels_files[i].name;
        texts[i] = warpfft_kernels_files[i].text;
    }
    printf("NVRTC %d.%d (%s); mode %s, %zu modules, %zu files, sources digest %.12s\n", nv->major,
           nv->minor, nv->path, warpfft_kernels_mode, warpfft_kernels_n_modules, nf,
           warpfft_kernels_sources_digest);
    int fails = check_si_names(), done = 0;
    double total = 0;
    for (int a = 1 + all; a < argc; a++) {
        wf_nvrtc_target_t t;
        if (wf_nvrtc_target(nv, atoi(argv[a]), &t) != WARPFFT_SUCCESS) {
            printf("FAIL sm_%s: %s\n", argv[a], warpfft_last_error());
            fails++;
            continue;
        }
        for (size_t k = 0; k < warpfft_kernels_n_modules; k++) {
            const fatbuild_module *m = &warpfft_kernels_modules[k];
            if (!all && !sampled(m->name))
                continue;
            if (m->n_sources == 0) {
                printf("FAIL %s: no sources embedded\n", m->name);
                fails++;
                continue;
            }
            for (size_t s = 0; s < m->n_sources; s++) {
                const char *text = file_text(m->sources[s]);
                if (!text) {
                    printf("FAIL %s: source %s is not in the files table\n", m->name,
                           m->sources[s]);
                    fails++;
                    continue;
                }
                wf_nvrtc_job job = {m->name, m->sources[s], text,         nf, names,
                                    texts,   m->options,    m->n_options, &t, m->n_sources > 1};
                wf_kimage img;
                double t0 = now_ms();
                warpfft_status st = wf_nvrtc_compile(nv, &job, &img);
                double ms = now_ms() - t0;
                total += ms;
                done++;
                if (st != WARPFFT_SUCCESS) {
                    printf("FAIL %s/%s (%s): %s\n", m->name, m->sources[s], t.option,
                           warpfft_last_error());
                    fails++;
                } else {
                    printf("  %-16s %-18s %-18s %s %7zu bytes %6.0f ms\n", m->name, m->sources[s],
                           t.option, img.kind == WF_KIMAGE_CUBIN ? "CUBIN" : "PTX  ", img.size, ms);
                    /* the entry point the rule names is in it (a PTX .entry or a CUBIN symbol) */
                    entry_of e = {m->name, ""};
                    if (each_si_module(find_entry, &e) &&
                        !memmem(img.data, img.size, e.entry, strlen(e.entry))) {
                        printf("FAIL %s: no entry point %s (module_names.h)\n", m->name, e.entry);
                        fails++;
                    }
                }
                wf_kimage_free(&img);
            }
        }
    }
    printf("test_nvrtc_modules: %d compiles, %d failed, %.1f s\n", done, fails, total / 1e3);
    free(names);
    free(texts);
    return fails != 0 || done == 0;
}
#endif
