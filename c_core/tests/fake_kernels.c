/*
 * fake_kernels.c — a tiny embedding in the shape crates/fatbuild generates, for the runtime
 * tests. The blob bytes (real PTX and fatbins of two trivial kernels, compiled by nvcc in
 * run_tests.sh) come from the generated fake_blobs.inc.
 *
 * Modules too_new, bad_ptx and bad_fallback are broken on purpose (error paths).
 *
 * Kernels: wf_test_fill(long long n, float *x, float v): x[i] = v;
 *          wf_test_scale(long long n, float *x, float s): x[i] = wf_test_helper(x[i]) * s, with
 *          wf_test_helper(v) = v + 1 in a second file (relocatable device code).
 */
#include "fake_kernels.h"

#include "fake_blobs.inc" /* fake_<name>[] byte arrays and fake_<name>_size */

#define BLOB(kind, label, name)                                                                    \
    { kind, label, name, name##_size }

static const fatbuild_blob fill_jit[] = {BLOB(FATBUILD_BLOB_PTX, "fill.ptx", fake_fill_ptx)};
static const fatbuild_blob scale_link[] = {
    BLOB(FATBUILD_BLOB_PTX, "scale.ptx", fake_scale_ptx),
    BLOB(FATBUILD_BLOB_PTX, "helper.ptx", fake_helper_ptx),
};
static const fatbuild_blob fill_aot[] = {BLOB(FATBUILD_BLOB_FATBIN, "fill.fatbin", fake_fill_all)};
static const fatbuild_blob fill_fallback[] = {
    BLOB(FATBUILD_BLOB_FATBIN, "fill_sm80.fatbin", fake_fill_sm80),
    BLOB(FATBUILD_BLOB_PTX, "fill.ptx", fake_fill_ptx),
};
static const fatbuild_blob fill_noimage[] = {
    BLOB(FATBUILD_BLOB_FATBIN, "fill_sm80.fatbin", fake_fill_sm80)};
static const fatbuild_blob fill_ptxfat[] = {
    BLOB(FATBUILD_BLOB_FATBIN, "fill_ptx.fatbin", fake_fill_ptxfat)};
static const fatbuild_blob variants[] = {
    BLOB(FATBUILD_BLOB_FATBIN, "variants.fatbin", fake_variants)};

static const fatbuild_blob too_new[] = {BLOB(FATBUILD_BLOB_PTX, "too_new.ptx", fake_too_new_ptx)};
static const fatbuild_blob bad_ptx[] = {BLOB(FATBUILD_BLOB_PTX, "bad.ptx", fake_bad_ptx)};
static const fatbuild_blob bad_fallback[] = {
    BLOB(FATBUILD_BLOB_FATBIN, "fill_sm80.fatbin", fake_fill_sm80),
    BLOB(FATBUILD_BLOB_PTX, "bad.ptx", fake_bad_ptx),
};

/* Sources for the NVRTC path: fill.cu needs its header and the option -DWF_TEST_SCALE. */
#define FILE(name, text)                                                                           \
    { name, text, sizeof text - 1 }
const fatbuild_file warpfft_kernels_files[] = {
    FILE("broken.cu", "extern \"C\" __global__ void wf_test_broken() { wf_no_such_thing(); }\n"),
    FILE("fill.cu", "#include \"test/wf_test.cuh\"\n"
                    "extern \"C\" __global__ void wf_test_fill(long long n, float *x, float v)\n"
                    "{\n"
                    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                    "         i < n; i += (long long)gridDim.x * blockDim.x)\n"
                    "        x[i] = WF_TEST_VALUE(v);\n"
                    "}\n"),
    FILE("helper.cu",
         "extern \"C\" __device__ float wf_test_helper(float v) { return v + 1.0f; }\n"),
    FILE("scale.cu", "extern \"C\" __device__ float wf_test_helper(float v);\n"
                     "extern \"C\" __global__ void wf_test_scale(long long n, float *x, float s)\n"
                     "{\n"
                     "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                     "         i < n; i += (long long)gridDim.x * blockDim.x)\n"
                     "        x[i] = wf_test_helper(x[i]) * s;\n"
                     "}\n"),
    FILE("test/wf_test.cuh", "#define WF_TEST_VALUE(v) ((v) * WF_TEST_SCALE)\n"),
};
const size_t warpfft_kernels_n_files =
    sizeof warpfft_kernels_files / sizeof warpfft_kernels_files[0];
const char warpfft_kernels_sources_digest[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static const char *const fill_src[] = {"fill.cu"};
static const char *const fill_opts[] = {"-DWF_TEST_SCALE=1", "--std=c++17"};
static const char *const scale_src[] = {"scale.cu", "helper.cu"};
static const char *const broken_src[] = {"broken.cu"};

#define MODULE(name, blobs)                                                                        \
    { name, blobs, sizeof blobs / sizeof blobs[0], NULL, 0, NULL, 0 }
#define SOURCES(name, blobs, n_blobs, src, opts, n_opts)                                           \
    { name, blobs, n_blobs, src, sizeof src / sizeof src[0], opts, n_opts }

const fatbuild_module warpfft_kernels_modules[] = {
    MODULE("fill_jit", fill_jit),
    MODULE("scale_link", scale_link),
    MODULE("fill_aot", fill_aot),
    MODULE("fill_fallback", fill_fallback),
    MODULE("fill_noimage", fill_noimage),
    MODULE("fill_ptxfat", fill_ptxfat),
    MODULE("variants", variants),
    MODULE("too_new", too_new),
    MODULE("bad_ptx", bad_ptx),
    MODULE("bad_fallback", bad_fallback),
    SOURCES("fill_nvrtc", NULL, 0, fill_src, fill_opts, 2),
    SOURCES("scale_nvrtc", NULL, 0, scale_src, NULL, 0),
    SOURCES("nvrtc_fallback", fill_noimage, 1, fill_src, fill_opts, 2),
    SOURCES("nvrtc_broken", NULL, 0, broken_src, NULL, 0),
};
const size_t warpfft_kernels_n_modules =
    sizeof warpfft_kernels_modules / sizeof warpfft_kernels_modules[0];
const char warpfft_kernels_manifest[] = FAKE_MANIFEST;
const char warpfft_kernels_mode[] = "aot+jit";
const int warpfft_kernels_cuda_version = 13000;
