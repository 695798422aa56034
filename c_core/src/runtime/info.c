/*
 * info.c — warpfft_runtime_info: one JSON document saying what this process found and did
 * (build, driver, device, which image each module used and how long its load/JIT took, cuFFT).
 *
 * It is what a user pastes into a bug report, so it reports everything it can even when the
 * driver, device or cuFFT is missing: those failures become "gpu_error" / "cufft_error".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cache.h"
#include "runtime/cufft.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/fatbin.h"
#include "runtime/kcache.h"
#include "runtime/module.h"
#include "runtime/nvrtc.h"
#include "warpfft_kernels.h"

/* Output that counts what it would write even when `buf` is full, like snprintf. */
typedef struct jbuf {
    char *buf;
    size_t len; /* capacity of buf, NUL included */
    size_t n;   /* length of the full document so far */
} jbuf;

static void jraw(jbuf *j, const char *s, size_t k) {
    if (j->len > 0 && j->n < j->len - 1) {
        size_t room = j->len - 1 - j->n;
        memcpy(j->buf + j->n, s, k < room ? k : room);
    }
    j->n += k;
}

static void jputs(jbuf *j, const char *s) {
    jraw(j, s, strlen(s));
}

static void jprintf(jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jprintf(jbuf *j, const char *fmt, ...) {
    char tmp[128]; /* numbers and short keys only; strings go through jstr */
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        jraw(j, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* A JSON string, escaped; NULL becomes null. Bytes >= 0x80 pass through (UTF-8). */
static void jstr(jbuf *j, const char *s) {
    if (!s) {
        jputs(j, "null");
        return;
    }
    jputs(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            jraw(j, e, 2);
        } else if (c == '\n') {
            jputs(j, "\\n");
        } else if (c == '\t') {
            jputs(j, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            jprintf(j, "\\u%04x", c);
        } else {
            jraw(j, (const char *)&c, 1);
        }
    }
    jputs(j, "\"");
}

/* The manifest is JSON already: nest it as an object, or as a string if it does not look like
 * one (a build bug must not make the whole report unparsable). */
static void jmanifest(jbuf *j) {
    const char *m = warpfft_kernels_manifest;
    while (*m == ' ' || *m == '\n' || *m == '\t' || *m == '\r')
        m++;
    size_t k = strlen(m);
    while (k > 0 && (m[k - 1] == ' ' || m[k - 1] == '\n' || m[k - 1] == '\r'))
        k--;
    if (k >= 2 && m[0] == '{' && m[k - 1] == '}')
        jraw(j, m, k);
    else
        jstr(j, warpfft_kernels_manifest);
}

static void jbuild(jbuf *j) {
    jputs(j, "\"build\":{\"mode\":");
    jstr(j, warpfft_kernels_mode);
    jprintf(j, ",\"kernels_cuda_version\":%d,\"embedded_modules\":%zu,\"manifest\":",
            warpfft_kernels_cuda_version, warpfft_kernels_n_modules);
    jmanifest(j);
    jputs(j, "}");
}

static void jdevice(jbuf *j, const wf_device *dev) {
    const wf_driver *d = NULL;
    size_t total = 0;
    if (!dev) {
        jputs(j, ",\"device\":null");
        return;
    }
    if (wf_driver_get(&d) == WARPFFT_SUCCESS && d->cuDeviceTotalMem(&total, dev->dev) != 0)
        total = 0;
    jprintf(j, ",\"device\":{\"ordinal\":%d,\"name\":", dev->ordinal);
    jstr(j, dev->name);
    jprintf(j, ",\"sm\":%d,\"multiprocessors\":%d,\"memory_bytes\":%zu", dev->sm, dev->n_sm, total);
    jprintf(j, ",\"max_shared_per_block_optin\":%d}", dev->max_shared_optin);
}

static void jmodules(jbuf *j) {
    size_t n = wf_module_records(NULL, 0);
    wf_module_record *r = n ? malloc(n * sizeof *r) : NULL;
    size_t got = r ? wf_module_records(r, n) : 0;
    if (got > n)
        got = n; /* loaded meanwhile; report the ones we have room for */
    jputs(j, ",\"modules\":[");
    for (size_t i = 0; i < got; i++) {
        jprintf(j, "%s{\"device\":%d,\"name\":", i ? "," : "", r[i].device);
        jstr(j, r[i].name);
        jputs(j, ",\"image\":");
        jstr(j, r[i].image);
        jprintf(j, ",\"load_ms\":%.3f}", r[i].load_ms);
    }
    jputs(j, "]");
    free(r);
}

static void jtimes(jbuf *j, const char *name, const wf_create_times *t) {
    jprintf(j, ",\"%s\":{\"modules_ms\":%.3f,\"cufft_ms\":%.3f,\"alloc_ms\":%.3f", name,
            t->modules_ms, t->cufft_ms, t->alloc_ms);
    jprintf(j, ",\"factors_ms\":%.3f,\"total_ms\":%.3f}", t->factors_ms, t->total_ms);
}

/* The plan cache and the split of plan-creation time (cache.c). */
static void jcache(jbuf *j) {
    wf_cache_stats s;
    wf_cache_get_stats(&s);
    jprintf(j, ",\"plan_cache\":{\"items\":%zu,\"bytes\":%zu,\"max_items\":%zu", s.items, s.bytes,
            s.max_items);
    jprintf(j, ",\"max_bytes\":%zu,\"fft_hits\":%llu,\"fft_misses\":%llu", s.max_bytes,
            (unsigned long long)s.fft_hits, (unsigned long long)s.fft_misses);
    jprintf(j, ",\"factor_hits\":%llu,\"factor_misses\":%llu,\"evicted\":%llu",
            (unsigned long long)s.other_hits, (unsigned long long)s.other_misses,
            (unsigned long long)s.evicted);
    jprintf(j, ",\"toeplitz_hits\":%llu,\"toeplitz_misses\":%llu",
            (unsigned long long)s.toeplitz_hits, (unsigned long long)s.toeplitz_misses);
    jprintf(j, ",\"released\":%llu,\"oom_retries\":%llu}", (unsigned long long)s.released,
            (unsigned long long)s.oom_retries);
    jprintf(j, ",\"plan_create\":{\"plans\":%llu", (unsigned long long)s.plans);
    jtimes(j, "total", &s.total);
    jtimes(j, "last", &s.last);
    jputs(j, "}");
    const wf_toep_build_times *b = &s.toeplitz_last;
    jprintf(j, ",\"toeplitz_build\":{\"builds\":%llu,\"last\":{\"kernels_ms\":%.3f",
            (unsigned long long)s.toeplitz_builds, b->kernels_ms);
    jprintf(j, ",\"buffers_ms\":%.3f,\"fft_plans_ms\":%.3f,\"kernel_plan_ms\":%.3f", b->buffers_ms,
            b->fft_plans_ms, b->kernel_plan_ms);
    jprintf(j, ",\"run_ms\":%.3f,\"release_ms\":%.3f,\"total_ms\":%.3f}}", b->run_ms, b->release_ms,
            b->total_ms);
}

static void jcufft(jbuf *j, const wf_cufft *c, const char *err) {
    if (!c) {
        jputs(j, ",\"cufft\":null,\"cufft_error\":");
        jstr(j, err);
        return;
    }
    jputs(j, ",\"cufft\":{\"path\":");
    jstr(j, c->path);
    jprintf(j, ",\"version\":%d}", c->version);
}

/* NVRTC: probed (loaded if found) in a build that compiles kernels from embedded sources;
 * otherwise reported only if something already loaded it. */
static int has_sources(void) {
#ifdef FATBUILD_HAS_SOURCES
    return warpfft_kernels_n_files > 0;
#else
    return 0;
#endif
}

static void jnvrtc(jbuf *j) {
    char err[4096] = "", path[4096] = "", dir[4096] = "", note[512] = "";
    int major = 0, minor = 0;
    if (has_sources()) {
        const wf_nvrtc *nv = NULL;
        if (wf_nvrtc_get(&nv) != WARPFFT_SUCCESS)
            snprintf(err, sizeof err, "%s", wf_last_error());
    }
    if (wf_nvrtc_loaded_info(path, sizeof path, &major, &minor)) {
        jputs(j, ",\"nvrtc\":{\"path\":");
        jstr(j, path);
        jprintf(j, ",\"version\":\"%d.%d\"}", major, minor);
    } else {
        jputs(j, ",\"nvrtc\":null");
        if (err[0]) {
            jputs(j, ",\"nvrtc_error\":");
            jstr(j, err);
        }
    }
    /* The kernel cache: its directory (null when off), and why it is off or its last problem. */
    wf_kcache_state(dir, sizeof dir, note, sizeof note);
    jputs(j, ",\"kernel_cache\":{\"dir\":");
    jstr(j, dir[0] ? dir : NULL);
    jputs(j, ",\"note\":");
    jstr(j, note);
    jputs(j, "}");
}

/* Driver version, or -1 when the driver did not load. */
static int driver_version(void) {
    const wf_driver *d = NULL;
    int v = -1;
    if (wf_driver_get(&d) != WARPFFT_SUCCESS || d->cuDriverGetVersion(&v) != 0)
        return -1;
    return v;
}

WARPFFT_API warpfft_status warpfft_runtime_info(int device, char *buf, size_t len, size_t *needed) {
    wf_clear_error();
    if (!buf && len > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG, "warpfft_runtime_info: buf is NULL but len is %zu",
                        len);
    /* Messages are copied out: each step below overwrites this thread's error. */
    char cufft_err[4096] = "", gpu_err[4096] = "";
    const wf_cufft *c = NULL;
    if (wf_cufft_get(&c) != WARPFFT_SUCCESS)
        snprintf(cufft_err, sizeof cufft_err, "%s", wf_last_error());
    const wf_device *dev = NULL;
    warpfft_status st = wf_device_get(device, &dev);
    if (st != WARPFFT_SUCCESS)
        snprintf(gpu_err, sizeof gpu_err, "%s", wf_last_error());
    int drv = driver_version();

    jbuf j = {buf, len, 0};
    jputs(&j, "{\"version\":");
    jstr(&j, wf_version());
    jputs(&j, ",");
    jbuild(&j);
    if (drv >= 0)
        jprintf(&j, ",\"driver_version\":%d", drv);
    else
        jputs(&j, ",\"driver_version\":null");
    jprintf(&j, ",\"device_requested\":%d", device);
    jdevice(&j, st == WARPFFT_SUCCESS ? dev : NULL);
    jmodules(&j);
    jcache(&j);
    jcufft(&j, c, cufft_err);
    jnvrtc(&j);
    if (st != WARPFFT_SUCCESS) {
        jputs(&j, ",\"gpu_error\":");
        jstr(&j, gpu_err);
    }
    jputs(&j, "}");
    if (len > 0)
        buf[j.n < len ? j.n : len - 1] = '\0';
    if (needed)
        *needed = j.n + 1;
    if (st != WARPFFT_SUCCESS)
        return wf_error(st, "%s", gpu_err);
    wf_clear_error();
    return WARPFFT_SUCCESS;
}
