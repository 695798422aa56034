/*
 * nvrtc.h — NVRTC, the CUDA run-time compiler, found and loaded at run time (nvrtc.c): which
 * arch to compile for, and compiling one kernel source to a CUBIN or PTX image.
 */
#ifndef WARPFFT_RUNTIME_NVRTC_H
#define WARPFFT_RUNTIME_NVRTC_H

#include <stddef.h>

#include "runtime/kimage.h"
#include "warpfft.h"

typedef int nvrtcResult; /* 0 = NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

typedef struct wf_nvrtc {
    const char *(*nvrtcGetErrorString)(nvrtcResult);
    nvrtcResult (*nvrtcVersion)(int *, int *);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                      const char *const *, const char *const *);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
    /* NULL when this NVRTC lacks them (CUBIN output: CUDA 11.1+; arch list: 11.2+) */
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetNumSupportedArchs)(int *);
    nvrtcResult (*nvrtcGetSupportedArchs)(int *);
    char path[4096];  /* the file that was loaded */
    int major, minor; /* nvrtcVersion */
    int archs[64];    /* nvrtcGetSupportedArchs, ascending; n_archs 0 when unknown */
    int n_archs;
} wf_nvrtc;

/* Finds and loads NVRTC once per process (thread-safe; same places as cuFFT, with
 * $WARPFFT_NVRTC_LIB and $WARPFFT_NVRTC_DEFAULT_PATHS). Fails with WARPFFT_ERR_NO_NVRTC, the
 * message listing every place tried; a failure is not kept (the next call searches again). */
warpfft_status wf_nvrtc_get(const wf_nvrtc **nv);
/* Without loading anything: 1 and NVRTC's path and version when it is loaded, else 0. */
int wf_nvrtc_loaded_info(char *path, size_t path_len, int *major, int *minor);

/* What to compile for on a GPU of compute capability `sm` (major*10 + minor). */
typedef struct wf_nvrtc_target_t {
    int arch;        /* e.g. 90 */
    int cubin;       /* 1: -arch=sm_XX and a CUBIN; 0: -arch=compute_XX and PTX */
    char option[32]; /* "-arch=sm_90" or "-arch=compute_90" */
} wf_nvrtc_target_t;
/* The GPU's own arch as a CUBIN when this NVRTC lists it and can write CUBINs, else PTX for
 * the newest listed arch below it; WARPFFT_ERR_NO_KERNEL when every listed arch is newer. */
warpfft_status wf_nvrtc_target(const wf_nvrtc *nv, int sm, wf_nvrtc_target_t *t);

/* One translation unit to compile. */
typedef struct wf_nvrtc_job {
    const char *module;      /* for messages */
    const char *source_name; /* e.g. "spreadinterp.cu" */
    const char *source;      /* its text, NUL-terminated */
    size_t n_headers;        /* every file it may include, by include name */
    const char *const *header_names;
    const char *const *header_texts;
    const char *const *options; /* besides the arch, e.g. "-DWF_W=7" */
    size_t n_options;
    const wf_nvrtc_target_t *target;
    int rdc; /* 1: -rdc=true and PTX output (for cuLink), whatever target->cubin says */
} wf_nvrtc_job;

/* Compiles one source; *out gets a CUBIN (target->cubin and not rdc) or PTX. On failure
 * WARPFFT_ERR_NO_KERNEL (OUT_OF_MEMORY for allocations) with NVRTC's error and the start of
 * its log on one line, and *out zeroed. */
warpfft_status wf_nvrtc_compile(const wf_nvrtc *nv, const wf_nvrtc_job *job, wf_kimage *out);

#endif /* WARPFFT_RUNTIME_NVRTC_H */
