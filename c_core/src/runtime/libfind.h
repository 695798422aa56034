/*
 * libfind.h — finding a CUDA library at run time (libfind.c): the environment read safely, and
 * the search order cuFFT and NVRTC share (warpfft.h's warpfft_cufft_probe documents it).
 */
#ifndef WARPFFT_RUNTIME_LIBFIND_H
#define WARPFFT_RUNTIME_LIBFIND_H

#include <stddef.h>

/* getenv, or secure_getenv where glibc has it: the environment chooses files to dlopen, and is
 * ignored in setuid/setgid processes. Every lookup of the runtime goes through it. */
const char *wf_getenv(const char *name);

/* What to look for. The order is warpfft.h's (warpfft_cufft_probe): $lib_env, pip wheels beside
 * libwarpfft ({..,.}/<wheel dir>), $VIRTUAL_ENV/lib/python3.<x>/site-packages/<wheel dir>,
 * $CUDA_PATH/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64, the system loader (those two
 * skipped when $defaults_env is "0"); in each directory every soname of `names`, in order. */
typedef struct wf_lib_spec {
    const char *const *names; /* sonames, preferred first */
    size_t n_names;
    const char *names_desc; /* for messages, e.g. "libcufft.so.{12,11}" */
    const char *const *wheel_dirs;
    size_t n_wheel_dirs;
    const char *wheel_desc;   /* e.g. "nvidia/{cufft,cu13,cu12}/lib" */
    const char *lib_env;      /* e.g. "WARPFFT_CUFFT_LIB" */
    const char *defaults_env; /* e.g. "WARPFFT_CUFFT_DEFAULT_PATHS" */
    /* Takes a library just opened (resolves its symbols): 1 to keep it, or 0 with `why`
     * ("it has no symbol X") and the library is closed. */
    int (*accept)(void *handle, void *ctx, char *why, size_t why_len);
    void *ctx;
} wf_lib_spec;

typedef struct wf_lib_found {
    void *handle;    /* dlopen handle, never closed */
    char path[4096]; /* the file, symlinks resolved */
} wf_lib_found;

/* 1 when a library was found and accepted (*out filled); 0 with `tried` listing every place
 * tried ("; "-separated, cut with "..." when it does not fit). */
int wf_lib_search(const wf_lib_spec *spec, wf_lib_found *out, char *tried, size_t tried_len);

#endif /* WARPFFT_RUNTIME_LIBFIND_H */
