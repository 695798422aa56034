/*
 * fake_kernels.h — stand-in for the generated warpfft_kernels.h (crates/fatbuild writes the real
 * one into $OUT_DIR). Same declarations, so the runtime compiles against either; the test build
 * puts a warpfft_kernels.h that includes this file on its include path.
 */
#ifndef WARPFFT_FAKE_KERNELS_H
#define WARPFFT_FAKE_KERNELS_H

#include <stddef.h>
#ifndef FATBUILD_TYPES_DEFINED
#define FATBUILD_TYPES_DEFINED
enum { FATBUILD_BLOB_PTX = 1, FATBUILD_BLOB_FATBIN = 2 };
typedef struct fatbuild_blob {
    int kind;
    const char *label;
    const unsigned char *data;
    size_t size;
} fatbuild_blob;
/* The embedded-sources part of crates/fatbuild's interface (feature nvrtc). */
#define FATBUILD_HAS_SOURCES 1
typedef struct fatbuild_file {
    const char *name;
    const char *text;
    size_t size;
} fatbuild_file;
typedef struct fatbuild_module {
    const char *name;
    const fatbuild_blob *blobs;
    size_t n_blobs;
    const char *const *sources;
    size_t n_sources;
    const char *const *options;
    size_t n_options;
} fatbuild_module;
#endif
extern const fatbuild_module warpfft_kernels_modules[];
extern const size_t warpfft_kernels_n_modules;
extern const char warpfft_kernels_manifest[]; /* JSON */
extern const char warpfft_kernels_mode[];     /* "jit", "aot" or "aot+jit" */
extern const int warpfft_kernels_cuda_version;
extern const fatbuild_file warpfft_kernels_files[];
extern const size_t warpfft_kernels_n_files;
extern const char warpfft_kernels_sources_digest[];

/* Test-only: the module indices of fake_kernels.c, in table order. */
enum {
    FAKE_FILL_JIT,       /* one PTX blob: driver JIT */
    FAKE_SCALE_LINK,     /* two PTX blobs (-rdc): cuLink */
    FAKE_FILL_AOT,       /* fatbin: sm_80, sm_90, sm_100, sm_120 SASS + compute_75 PTX */
    FAKE_FILL_FALLBACK,  /* fatbin with sm_80 SASS only, then a PTX blob to fall back to */
    FAKE_FILL_NOIMAGE,   /* fatbin with sm_80 SASS only: nothing for other majors */
    FAKE_FILL_PTXFAT,    /* fatbin holding only compute_75 PTX */
    FAKE_VARIANTS,       /* parser test: sm_90a, sm_100f SASS + compute_90a PTX; never loaded */
    FAKE_TOO_NEW,        /* PTX claiming ISA 99.9: the driver is "too old" */
    FAKE_BAD_PTX,        /* PTX with an unknown instruction: JIT error with a log */
    FAKE_BAD_FALLBACK,   /* fatbin with sm_80 SASS only, then the bad PTX */
    FAKE_FILL_NVRTC,     /* sources only: fill.cu (+ wf_test.cuh), compiled with NVRTC */
    FAKE_SCALE_NVRTC,    /* sources only: scale.cu + helper.cu, -rdc=true and cuLink */
    FAKE_NVRTC_FALLBACK, /* fatbin with sm_80 SASS only, then fill.cu's source */
    FAKE_NVRTC_BROKEN,   /* source with a compile error */
    FAKE_N_MODULES
};
#define FAKE_MANIFEST "{\"mode\":\"aot+jit\",\"note\":\"fake \\\"kernels\\\" for tests\"}"

#endif
