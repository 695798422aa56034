/*
 * kimage.h — a compiled kernel image (CUBIN or PTX), as NVRTC produces it (nvrtc.c), the
 * kernel cache stores it (kcache.c) and the module loaders load it.
 */
#ifndef WARPFFT_RUNTIME_KIMAGE_H
#define WARPFFT_RUNTIME_KIMAGE_H

#include <stdlib.h>
#include <string.h>

/* A compiled image, malloc'ed; always followed by a NUL byte (not counted in size). */
enum { WF_KIMAGE_CUBIN = 1, WF_KIMAGE_PTX = 2 };
typedef struct wf_kimage {
    int kind; /* WF_KIMAGE_* */
    unsigned char *data;
    size_t size;
} wf_kimage;
/* Frees and zeroes; a zeroed image is a no-op. */
static inline void wf_kimage_free(wf_kimage *img) {
    free(img->data);
    memset(img, 0, sizeof *img);
}

#endif /* WARPFFT_RUNTIME_KIMAGE_H */
