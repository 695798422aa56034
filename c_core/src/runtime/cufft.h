/*
 * cufft.h — cuFFT, found and loaded at run time (cufft.c): its types and entry points, and its
 * errors as statuses.
 */
#ifndef WARPFFT_RUNTIME_CUFFT_H
#define WARPFFT_RUNTIME_CUFFT_H

#include "runtime/driver.h"

typedef int cufftHandle;
typedef int cufftResult; /* 0 = CUFFT_SUCCESS */
/* cufftType: complex-to-complex, and for real data real-to-complex (a forward transform:
 * exponent -i) and complex-to-real (an inverse one: +i), in single (C, R) and double (Z, D). */
enum {
    WF_CUFFT_R2C = 0x2a,
    WF_CUFFT_C2R = 0x2c,
    WF_CUFFT_C2C = 0x29,
    WF_CUFFT_D2Z = 0x6a,
    WF_CUFFT_Z2D = 0x6c,
    WF_CUFFT_Z2Z = 0x69
};
enum { WF_CUFFT_FORWARD = -1, WF_CUFFT_INVERSE = 1 };

typedef struct wf_cufft {
    cufftResult (*cufftCreate)(cufftHandle *);
    cufftResult (*cufftDestroy)(cufftHandle);
    cufftResult (*cufftSetAutoAllocation)(cufftHandle, int);
    cufftResult (*cufftMakePlanMany64)(cufftHandle, int, long long *, long long *, long long,
                                       long long, long long *, long long, long long, int, long long,
                                       size_t *);
    cufftResult (*cufftSetWorkArea)(cufftHandle, void *);
    cufftResult (*cufftSetStream)(cufftHandle, CUstream);
    cufftResult (*cufftExecC2C)(cufftHandle, void *, void *, int);
    cufftResult (*cufftExecZ2Z)(cufftHandle, void *, void *, int);
    cufftResult (*cufftExecR2C)(cufftHandle, void *, void *); /* real in, complex out */
    cufftResult (*cufftExecC2R)(cufftHandle, void *, void *); /* complex in, real out */
    cufftResult (*cufftExecD2Z)(cufftHandle, void *, void *);
    cufftResult (*cufftExecZ2D)(cufftHandle, void *, void *);
    cufftResult (*cufftGetVersion)(int *);
    char path[4096]; /* the file that was loaded */
    int version;     /* cufftGetVersion, e.g. 12000 */
} wf_cufft;

/* Finds and loads cuFFT once per process, in the order warpfft.h documents (thread-safe).
 * Fails with WARPFFT_ERR_NO_CUFFT, the message listing every place tried. */
warpfft_status wf_cufft_get(const wf_cufft **cufft);
/* Converts a failed cuFFT call into WARPFFT_ERR_CUFFT (or OUT_OF_MEMORY for
 * CUFFT_ALLOC_FAILED) with a message naming `what` and the cufftResult name. */
warpfft_status wf_cufft_error(cufftResult r, const char *what);

#endif /* WARPFFT_RUNTIME_CUFFT_H */
