/*
 * test_runtime.h — what the runtime tests share beyond check.h (test_runtime.c: CHECK_ST and a
 * JSON validator) and the test groups main runs, one file per stage:
 *   test_rt_errors.c  error codes and messages, embedded blobs, the fatbin parser;
 *   test_rt_cufft.c   the cuFFT search, one forked scenario per environment;
 *   test_rt_driver.c  no driver or the stub driver; with a GPU: devices, memory, modules, info;
 *   test_rt_nvrtc.c   modules compiled with NVRTC and the disk cache (stand-in driver, or GPU).
 */
#ifndef WARPFFT_TEST_RUNTIME_H
#define WARPFFT_TEST_RUNTIME_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fake_kernels.h"
#include "runtime/cache.h"
#include "runtime/cufft.h"
#include "runtime/driver.h"
#include "runtime/error.h"
#include "runtime/fatbin.h"
#include "runtime/kcache.h"
#include "runtime/libfind.h"
#include "runtime/memory.h"
#include "runtime/module.h"
#include "runtime/nvrtc.h"

/* CHECK, CHECK_MSG and run_isolated: check.h. CHECK_ST: call returns status want. */
int check_status_(int got, int want, const char *expr, const char *file, int line);
#define CHECK_ST(call, want) check_status_((call), (want), #call, __FILE__, __LINE__)

/* Whether s is one JSON value (RFC 8259 grammar, no semantics). */
int json_valid(const char *s);

/* ---- test_rt_errors.c ---- */
void test_errors(void); /* status names, the error buffer, thread-local messages */
void test_fatbin(void); /* embedded blobs and the fatbin parser */
/* Driver and cuFFT result codes -> status and message; names: 1 where the driver names its
 * errors (a GPU), 0 without a driver. */
void test_error_maps(int names);
/* A fake module's first blob in an exact-size heap block (ASan and valgrind see any read past
 * its end); *size its bytes. The caller frees it. */
unsigned char *blob_copy(int module, size_t *size);

/* ---- test_rt_cufft.c ---- */
/* The cuFFT search scenarios, each in its own process (before this process touches the driver:
 * CUDA does not survive fork). */
void test_cufft_search(void);

/* ---- test_rt_driver.c ---- */
/* mode "gpu": the GPU tests; "stub" or "nodriver": the clean failures without a usable driver. */
void test_driver(const char *mode);

/* Runs kernel `kernel` of `module` (args n, x, arg) over n floats at dx; checks x == want. */
void gpu_run(const wf_device *dev, const char *module, const char *kernel, float arg,
             CUdeviceptr dx, long long n, float want);

/* ---- test_rt_nvrtc.c ---- */
/* mode "standin": the NVRTC path on the stand-in driver and NVRTC, cold/warm/corrupt cache. */
void test_nvrtc_standin(void);
/* mode "gpu": modules compiled with the real NVRTC ($WF_TEST_NVRTC cold or warm). */
void gpu_nvrtc(const wf_device *dev);

#endif /* WARPFFT_TEST_RUNTIME_H */
