/*
 * libcuda_standin.c — a stand-in for libcuda.so.1 with the entry points fatbuild-rt resolves,
 * for driving its loader's failure paths without a GPU (tests/standin.rs builds it with `cc`).
 * It runs no kernel and proves no result: loads "succeed" with a dummy handle or fail with the
 * code the test asks for.
 *
 * Controlled by the environment, read on every call:
 *   FBRT_STANDIN_DEVICES  GPUs it reports (default 1; 0: cuInit says CUDA_ERROR_NO_DEVICE)
 *   FBRT_STANDIN_SM       the GPU's compute capability as one number (default 90)
 *   FBRT_STANDIN_LOAD     "ok" (default): module loads succeed; otherwise a CUresult number
 *                         that every module load returns (e.g. 209, NO_BINARY_FOR_GPU)
 *   FBRT_STANDIN_LOG      a file to which each module load appends one line: its kind
 *                         ("fatbin", "elf", "ptx") as told by the image's first bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void *handle;

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : dflt;
}

static handle dummy(void) {
    static int x;
    return &x;
}

static CUresult load_result(const void *image) {
    const unsigned char *p = image;
    const char *kind = "ptx";
    if (p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba)
        kind = "fatbin";
    else if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')
        kind = "elf";
    const char *log = getenv("FBRT_STANDIN_LOG");
    if (log && log[0]) {
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "%s\n", kind);
            fclose(f);
        }
    }
    const char *v = getenv("FBRT_STANDIN_LOAD");
    return !v || !v[0] || strcmp(v, "ok") == 0 ? 0 : atoi(v);
}

CUresult cuInit(unsigned flags) {
    (void)flags;
    return env_int("FBRT_STANDIN_DEVICES", 1) == 0 ? 100 : 0;
}
CUresult cuDriverGetVersion(int *v) {
    *v = 13000;
    return 0;
}
CUresult cuDeviceGetCount(int *n) {
    *n = env_int("FBRT_STANDIN_DEVICES", 1);
    return 0;
}
CUresult cuDeviceGet(int *dev, int ordinal) {
    *dev = ordinal;
    return 0;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
    (void)dev;
    snprintf(name, (size_t)len, "fatbuild-rt stand-in GPU");
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    int sm = env_int("FBRT_STANDIN_SM", 90);
    *v = attr == 75 ? sm / 10 : attr == 76 ? sm % 10 : 0;
    return 0;
}
CUresult cuDevicePrimaryCtxRetain(handle *ctx, int dev) {
    (void)dev;
    *ctx = dummy();
    return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
    (void)dev;
    return 0;
}
CUresult cuCtxPushCurrent_v2(handle ctx) {
    (void)ctx;
    return 0;
}
CUresult cuCtxPopCurrent_v2(handle *ctx) {
    if (ctx)
        *ctx = dummy();
    return 0;
}
CUresult cuCtxSynchronize(void) {
    return 0;
}
CUresult cuModuleLoadData(handle *mod, const void *image) {
    CUresult r = load_result(image);
    *mod = r == 0 ? dummy() : NULL;
    return r;
}
CUresult cuModuleLoadDataEx(handle *mod, const void *image, unsigned n, int *opts, void **vals) {
    (void)n, (void)opts, (void)vals;
    return cuModuleLoadData(mod, image);
}
CUresult cuModuleUnload(handle mod) {
    (void)mod;
    return 0;
}
CUresult cuModuleGetFunction(handle *f, handle mod, const char *name) {
    (void)mod;
    if (strcmp(name, "missing") == 0)
        return 500; /* CUDA_ERROR_NOT_FOUND */
    *f = dummy();
    return 0;
}
CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, handle *ls) {
    (void)n, (void)opts, (void)vals;
    *ls = dummy();
    return 0;
}
CUresult cuLinkAddData_v2(handle ls, int type, void *data, size_t size, const char *name,
                          unsigned n, int *opts, void **vals) {
    (void)ls, (void)type, (void)data, (void)size, (void)name, (void)n, (void)opts, (void)vals;
    return 0;
}
CUresult cuLinkComplete(handle ls, void **cubin, size_t *size) {
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    (void)ls;
    *cubin = (void *)elf;
    *size = sizeof elf;
    return 0;
}
CUresult cuLinkDestroy(handle ls) {
    (void)ls;
    return 0;
}
CUresult cuLaunchKernel(handle f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, handle stream, void **params, void **extra) {
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)stream, (void)params, (void)extra;
    return 801; /* CUDA_ERROR_NOT_SUPPORTED: nothing runs here */
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
    (void)n;
    *p = 0x1000;
    return 0;
}
CUresult cuMemFree_v2(unsigned long long p) {
    (void)p;
    return 0;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) {
    (void)d, (void)h, (void)n;
    return 801;
}
CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) {
    (void)d, (void)h, (void)n;
    return 801;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
    *s = r == 209   ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
         : r == 100 ? "CUDA_ERROR_NO_DEVICE"
         : r == 500 ? "CUDA_ERROR_NOT_FOUND"
         : r == 801 ? "CUDA_ERROR_NOT_SUPPORTED"
                    : NULL;
    return *s ? 0 : 1;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == 209 ? "no kernel image is available for execution on the device" : NULL;
    return *s ? 0 : 1;
}
