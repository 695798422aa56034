/*
 * cufft.c — finds and loads cuFFT at run time, in the order warpfft.h documents for
 * warpfft_cufft_probe.
 *
 * cuFFT is opened with dlopen, never linked, because it ships in several places (NVIDIA pip
 * wheels, a toolkit, the system) and users should not need LD_LIBRARY_PATH.
 *
 * Caching: a successful load is kept for the process (cuFFT plans hold pointers into it). A
 * failed search is not cached: the next call searches again, so a program (or test) can fix the
 * environment, e.g. set WARPFFT_CUFFT_LIB, and retry without restarting.
 */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime.h"

#define WF_CUFFT_SYM(field)                                                                        \
    { #field, offsetof(wf_cufft, field) }
static const struct {
    const char *name;
    size_t offset;
} wf_cufft_syms[] = {
    WF_CUFFT_SYM(cufftCreate),
    WF_CUFFT_SYM(cufftDestroy),
    WF_CUFFT_SYM(cufftSetAutoAllocation),
    WF_CUFFT_SYM(cufftMakePlanMany64),
    WF_CUFFT_SYM(cufftSetWorkArea),
    WF_CUFFT_SYM(cufftSetStream),
    WF_CUFFT_SYM(cufftExecC2C),
    WF_CUFFT_SYM(cufftExecZ2Z),
    WF_CUFFT_SYM(cufftGetVersion),
};
#undef WF_CUFFT_SYM

/* Sonames tried in each directory: CUDA 13's cuFFT 12, then CUDA 12's cuFFT 11. */
static const char *const wf_cufft_names[] = {"libcufft.so.12", "libcufft.so.11"};
/* Wheel layouts: nvidia-cufft-cu12 (nvidia/cufft), CUDA 13 wheels (nvidia/cu13), cu12 bundles. */
static const char *const wf_wheel_dirs[] = {"nvidia/cufft/lib", "nvidia/cu13/lib",
                                            "nvidia/cu12/lib"};
#define WF_N(a) (sizeof(a) / sizeof((a)[0]))

static pthread_mutex_t wf_cufft_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_cufft wf_cufft_tab; /* valid once wf_cufft_loaded; never unloaded */
static int wf_cufft_loaded;   /* guarded by wf_cufft_lock */

void wf_cufft_atfork_child(void) {
    pthread_mutex_init(&wf_cufft_lock, NULL);
}

/* The environment decides which file gets dlopen'ed: in a setuid/setgid (AT_SECURE) process it
 * is ignored, as the dynamic loader ignores LD_LIBRARY_PATH there. */
static const char *wf_getenv(const char *name) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return secure_getenv(name);
#else
    return getenv(name);
#endif
}

/* Any object in this library: dladdr on it names the file libwarpfft was loaded from. */
static const char wf_cufft_anchor = 0;

/* ---- one search: the places tried, kept for the error message ---- */

typedef struct search {
    char tried[3072];
    size_t len;
    int full;
    wf_cufft *out;
} search;

static void tried(search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tried(search *s, const char *fmt, ...) {
    if (s->full)
        return;
    size_t room = sizeof s->tried - s->len;
    int n = snprintf(s->tried + s->len, room, "%s", s->len ? "; " : "");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(s->tried + s->len + n, room - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)(n + m) >= room - 4) { /* keep room for the cut mark */
        s->full = 1;
        memcpy(s->tried + sizeof s->tried - 4, "...", 4);
        s->len = sizeof s->tried - 1;
        return;
    }
    s->len += (size_t)(n + m);
}

/* snprintf for paths: 0 when the result would not fit (that place is then skipped). */
static int path_fmt(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int path_fmt(char *out, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, len, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < len;
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The file a handle came from, symlinks resolved, for warpfft_runtime_info. */
static void record_path(void *h, const char *opened, char *out, size_t len) {
    struct link_map *lm = NULL;
    const char *name = opened;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
        name = lm->l_name;
    char real[PATH_MAX];
    snprintf(out, len, "%s", realpath(name, real) ? real : name);
}

/* Loads `path` (a file path or, for the system loader, a soname); 1 on success. */
static int try_load(search *s, const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        tried(s, "%s", why ? why : path);
        return 0;
    }
    wf_cufft t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < WF_N(wf_cufft_syms); i++) {
        void *p = dlsym(h, wf_cufft_syms[i].name);
        if (!p) {
            tried(s, "%s: loaded, but it has no symbol %s", path, wf_cufft_syms[i].name);
            dlclose(h);
            return 0;
        }
        memcpy((char *)&t + wf_cufft_syms[i].offset, &p, sizeof p);
    }
    cufftResult r = t.cufftGetVersion(&t.version);
    if (r != 0) {
        tried(s, "%s: cufftGetVersion failed (cufftResult %d)", path, r);
        dlclose(h);
        return 0;
    }
    record_path(h, path, t.path, sizeof t.path);
    *s->out = t;
    return 1;
}

static int try_file(search *s, const char *path, const char *origin) {
    if (!is_file(path)) {
        tried(s, "%s (%s): no such file", path, origin);
        return 0;
    }
    return try_load(s, path);
}

/* Tries each soname in `dir`; if none is there, one entry says so. */
static int try_dir(search *s, const char *dir, const char *origin) {
    int any = 0;
    char path[PATH_MAX];
    for (size_t i = 0; i < WF_N(wf_cufft_names); i++) {
        if (!path_fmt(path, sizeof path, "%s/%s", dir, wf_cufft_names[i]) || !is_file(path))
            continue;
        any = 1;
        if (try_load(s, path))
            return 1;
    }
    if (!any)
        tried(s, "%s/libcufft.so.{12,11} (%s): not found", dir, origin);
    return 0;
}

/* ---- the places, in order ---- */

/* NVIDIA wheels beside libwarpfft: site-packages/<pkg>/libwarpfft.so finds
 * site-packages/nvidia/...; a library directly in site-packages finds ./nvidia/.... */
static int try_wheels_beside_us(search *s) {
    Dl_info info;
    char self[PATH_MAX], dir[PATH_MAX];
    if (!dladdr(&wf_cufft_anchor, &info) || !info.dli_fname || !realpath(info.dli_fname, self)) {
        tried(s, "pip wheels beside libwarpfft: its own path is unknown");
        return 0;
    }
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    static const char *const up[] = {"..", "."};
    int present = 0;
    for (size_t u = 0; u < WF_N(up); u++) {
        for (size_t w = 0; w < WF_N(wf_wheel_dirs); w++) {
            if (!path_fmt(dir, sizeof dir, "%s/%s/%s", self, up[u], wf_wheel_dirs[w]) ||
                !is_dir(dir))
                continue;
            present = 1;
            if (try_dir(s, dir, "pip wheel beside libwarpfft"))
                return 1;
        }
    }
    if (!present)
        tried(s, "pip wheels beside libwarpfft: no {..,.}/nvidia/{cufft,cu13,cu12}/lib in %s",
              self);
    return 0;
}

static int try_virtual_env(search *s) {
    const char *venv = wf_getenv("VIRTUAL_ENV");
    if (!venv || !venv[0]) {
        tried(s, "$VIRTUAL_ENV: not set");
        return 0;
    }
    int present = 0;
    char pattern[PATH_MAX];
    for (size_t w = 0; w < WF_N(wf_wheel_dirs); w++) {
        glob_t g;
        memset(&g, 0, sizeof g);
        int found = 0;
        if (path_fmt(pattern, sizeof pattern, "%s/lib/python3*/site-packages/%s", venv,
                     wf_wheel_dirs[w]) &&
            glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc && !found; i++) {
                present = 1;
                found = try_dir(s, g.gl_pathv[i], "$VIRTUAL_ENV");
            }
        }
        globfree(&g);
        if (found)
            return 1;
    }
    if (!present)
        tried(s, "$VIRTUAL_ENV=%s: no lib/python3*/site-packages/nvidia/{cufft,cu13,cu12}/lib",
              venv);
    return 0;
}

static int try_env_toolkit(search *s, const char *var) {
    const char *root = wf_getenv(var);
    char dir[PATH_MAX], origin[32];
    if (!root || !root[0]) {
        tried(s, "$%s: not set", var);
        return 0;
    }
    snprintf(origin, sizeof origin, "$%s", var);
    if (!path_fmt(dir, sizeof dir, "%s/lib64", root)) {
        tried(s, "%s: path too long", origin);
        return 0;
    }
    return try_dir(s, dir, origin);
}

static int try_defaults(search *s) {
    const char *flag = wf_getenv("WARPFFT_CUFFT_DEFAULT_PATHS");
    if (flag && strcmp(flag, "0") == 0) {
        tried(s, "/usr/local/cuda/lib64 and the system loader: skipped "
                 "(WARPFFT_CUFFT_DEFAULT_PATHS=0)");
        return 0;
    }
    if (try_dir(s, "/usr/local/cuda/lib64", "default toolkit"))
        return 1;
    for (size_t i = 0; i < WF_N(wf_cufft_names); i++)
        if (try_load(s, wf_cufft_names[i]))
            return 1;
    return 0;
}

static warpfft_status cufft_search(wf_cufft *out) {
    search s;
    memset(&s, 0, sizeof s);
    s.out = out;
    const char *lib = wf_getenv("WARPFFT_CUFFT_LIB");
    if (lib && lib[0]) {
        if (try_file(&s, lib, "$WARPFFT_CUFFT_LIB"))
            return WARPFFT_SUCCESS;
    } else {
        tried(&s, "$WARPFFT_CUFFT_LIB: not set");
    }
    if (try_wheels_beside_us(&s) || try_virtual_env(&s) || try_env_toolkit(&s, "CUDA_PATH") ||
        try_env_toolkit(&s, "CUDA_HOME") || try_defaults(&s))
        return WARPFFT_SUCCESS;
    return wf_error(WARPFFT_ERR_NO_CUFFT,
                    "cuFFT not found; tried: %s; install it with `pip install nvidia-cufft` "
                    "(CUDA 13) or set WARPFFT_CUFFT_LIB to the path of libcufft.so",
                    s.tried);
}

warpfft_status wf_cufft_get(const wf_cufft **cufft) {
    warpfft_status st = WARPFFT_SUCCESS;
    pthread_mutex_lock(&wf_cufft_lock);
    if (!wf_cufft_loaded) {
        st = cufft_search(&wf_cufft_tab);
        wf_cufft_loaded = st == WARPFFT_SUCCESS;
    }
    pthread_mutex_unlock(&wf_cufft_lock);
    if (st == WARPFFT_SUCCESS && cufft)
        *cufft = &wf_cufft_tab;
    return st;
}

WARPFFT_API warpfft_status warpfft_cufft_probe(char *path, size_t path_len, int *version) {
    wf_clear_error();
    if (!path && path_len > 0)
        return wf_error(WARPFFT_ERR_INVALID_ARG,
                        "warpfft_cufft_probe: path is NULL but "
                        "path_len is %zu",
                        path_len);
    const wf_cufft *c = NULL;
    warpfft_status st = wf_cufft_get(&c);
    if (st != WARPFFT_SUCCESS)
        return st;
    if (path && path_len > 0)
        snprintf(path, path_len, "%s", c->path);
    if (version)
        *version = c->version;
    return WARPFFT_SUCCESS;
}

warpfft_status wf_cufft_error(cufftResult r, const char *what) {
    static const char *const names[] = {
        "CUFFT_SUCCESS",
        "CUFFT_INVALID_PLAN",
        "CUFFT_ALLOC_FAILED",
        "CUFFT_INVALID_TYPE",
        "CUFFT_INVALID_VALUE",
        "CUFFT_INTERNAL_ERROR",
        "CUFFT_EXEC_FAILED",
        "CUFFT_SETUP_FAILED",
        "CUFFT_INVALID_SIZE",
        "CUFFT_UNALIGNED_DATA",
        "CUFFT_INCOMPLETE_PARAMETER_LIST",
        "CUFFT_INVALID_DEVICE",
        "CUFFT_PARSE_ERROR",
        "CUFFT_NO_WORKSPACE",
        "CUFFT_NOT_IMPLEMENTED",
        "CUFFT_LICENSE_ERROR",
        "CUFFT_NOT_SUPPORTED",
        "CUFFT_MISSING_DEPENDENCY",
        "CUFFT_NVRTC_FAILURE",
        "CUFFT_NVJITLINK_FAILURE",
        "CUFFT_NVSHMEM_FAILURE",
    };
    enum { CUFFT_ALLOC_FAILED = 2 };
    warpfft_status st = r == CUFFT_ALLOC_FAILED ? WARPFFT_ERR_OUT_OF_MEMORY : WARPFFT_ERR_CUFFT;
    if (!what)
        what = "cuFFT call";
    if (r >= 0 && (size_t)r < WF_N(names))
        return wf_error(st, "%s: %s", what, names[r]);
    return wf_error(st, "%s: cufftResult %d", what, r);
}
