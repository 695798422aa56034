/*
 * libfind.c — the search for a CUDA library loaded with dlopen (cuFFT in cufft.c, NVRTC in
 * nvrtc.c), in the order warpfft.h documents for warpfft_cufft_probe:
 *   $<lib_env> (a file), NVIDIA pip wheels beside libwarpfft, wheels in $VIRTUAL_ENV,
 *   $CUDA_PATH/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64, the system loader (the last two
 *   skipped when $<defaults_env> is "0").
 * Every place tried is recorded, so that a failure can name them all in one message.
 */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/error.h"
#include "runtime/libfind.h"

/* The environment decides which file gets dlopen'ed: in a setuid/setgid (AT_SECURE) process it
 * is ignored, as the dynamic loader ignores LD_LIBRARY_PATH there. */
const char *wf_getenv(const char *name) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return secure_getenv(name);
#else
    return getenv(name);
#endif
}

/* Any object in this library: dladdr on it names the file libwarpfft was loaded from. */
static const char wf_lib_anchor = 0;

/* ---- one search: the places tried, kept for the error message ---- */

typedef struct search {
    const wf_lib_spec *spec;
    wf_lib_found *out;
    char *tried;
    size_t cap, len;
    int full;
} search;

static void tried(search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tried(search *s, const char *fmt, ...) {
    if (s->full || s->cap < 8)
        return;
    size_t room = s->cap - s->len;
    int n = snprintf(s->tried + s->len, room, "%s", s->len ? "; " : "");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(s->tried + s->len + n, room - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)(n + m) >= room - 4) { /* keep room for the cut mark */
        s->full = 1;
        memcpy(s->tried + s->cap - 4, "...", 4);
        s->len = s->cap - 1;
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
    char why[512] = "";
    if (!s->spec->accept(h, s->spec->ctx, why, sizeof why)) {
        tried(s, "%s: loaded, but %s", path, why[0] ? why : "it was refused");
        dlclose(h);
        return 0;
    }
    s->out->handle = h;
    record_path(h, path, s->out->path, sizeof s->out->path);
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
    for (size_t i = 0; i < s->spec->n_names; i++) {
        if (!path_fmt(path, sizeof path, "%s/%s", dir, s->spec->names[i]) || !is_file(path))
            continue;
        any = 1;
        if (try_load(s, path))
            return 1;
    }
    if (!any)
        tried(s, "%s/%s (%s): not found", dir, s->spec->names_desc, origin);
    return 0;
}

/* ---- the places, in order ---- */

/* NVIDIA wheels beside libwarpfft: site-packages/<pkg>/libwarpfft.so finds
 * site-packages/nvidia/...; a library directly in site-packages finds ./nvidia/.... */
static int try_wheels_beside_us(search *s) {
    Dl_info info;
    char self[PATH_MAX], dir[PATH_MAX];
    if (!dladdr(&wf_lib_anchor, &info) || !info.dli_fname || !realpath(info.dli_fname, self)) {
        tried(s, "pip wheels beside libwarpfft: its own path is unknown");
        return 0;
    }
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    static const char *const up[] = {"..", "."};
    int present = 0;
    for (size_t u = 0; u < sizeof up / sizeof up[0]; u++) {
        for (size_t w = 0; w < s->spec->n_wheel_dirs; w++) {
            if (!path_fmt(dir, sizeof dir, "%s/%s/%s", self, up[u], s->spec->wheel_dirs[w]) ||
                !is_dir(dir))
                continue;
            present = 1;
            if (try_dir(s, dir, "pip wheel beside libwarpfft"))
                return 1;
        }
    }
    if (!present)
        tried(s, "pip wheels beside libwarpfft: no {..,.}/%s in %s", s->spec->wheel_desc, self);
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
    for (size_t w = 0; w < s->spec->n_wheel_dirs; w++) {
        glob_t g;
        memset(&g, 0, sizeof g);
        int found = 0;
        if (path_fmt(pattern, sizeof pattern, "%s/lib/python3*/site-packages/%s", venv,
                     s->spec->wheel_dirs[w]) &&
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
        tried(s, "$VIRTUAL_ENV=%s: no lib/python3*/site-packages/%s", venv, s->spec->wheel_desc);
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
    const char *flag = wf_getenv(s->spec->defaults_env);
    if (flag && strcmp(flag, "0") == 0) {
        tried(s, "/usr/local/cuda/lib64 and the system loader: skipped (%s=0)",
              s->spec->defaults_env);
        return 0;
    }
    if (try_dir(s, "/usr/local/cuda/lib64", "default toolkit"))
        return 1;
    for (size_t i = 0; i < s->spec->n_names; i++)
        if (try_load(s, s->spec->names[i]))
            return 1;
    return 0;
}

int wf_lib_search(const wf_lib_spec *spec, wf_lib_found *out, char *tried_buf, size_t tried_len) {
    search s;
    memset(&s, 0, sizeof s);
    memset(out, 0, sizeof *out);
    s.spec = spec;
    s.out = out;
    s.tried = tried_buf;
    s.cap = tried_len;
    if (tried_len > 0)
        tried_buf[0] = '\0';
    const char *lib = wf_getenv(spec->lib_env);
    char origin[64];
    snprintf(origin, sizeof origin, "$%s", spec->lib_env);
    if (lib && lib[0]) {
        if (try_file(&s, lib, origin))
            return 1;
    } else {
        tried(&s, "%s: not set", origin);
    }
    return try_wheels_beside_us(&s) || try_virtual_env(&s) || try_env_toolkit(&s, "CUDA_PATH") ||
           try_env_toolkit(&s, "CUDA_HOME") || try_defaults(&s);
}
