/* Prints warpfft's version, build manifest, cuFFT probe and runtime report (JSON).
 * Build: cc info.c $(pkg-config --cflags --libs warpfft) -o info
 * Exit: 0 (a missing GPU or cuFFT is reported, not an error). */
#include <stdio.h>
#include <stdlib.h>
#include <warpfft.h>

int main(int argc, char **argv) {
    int device = argc > 1 ? atoi(argv[1]) : 0;
    printf("version: %s\n", warpfft_version());
    printf("manifest: %s\n", warpfft_build_manifest());

    char path[4096];
    int version = 0;
    warpfft_status s = warpfft_cufft_probe(path, sizeof path, &version);
    if (s == WARPFFT_SUCCESS)
        printf("cufft: %s (version %d)\n", path, version);
    else
        printf("cufft: %s: %s\n", warpfft_status_name(s), warpfft_last_error());

    size_t len = 4096, needed = 0;
    char *buf = malloc(len);
    s = buf ? warpfft_runtime_info(device, buf, len, &needed) : WARPFFT_ERR_OUT_OF_MEMORY;
    if (buf && needed > len && (buf = realloc(buf, len = needed)) != NULL)
        s = warpfft_runtime_info(device, buf, len, NULL); /* the report outgrew 4 KiB */
    if (!buf)
        return 1;
    if (s != WARPFFT_SUCCESS)
        printf("device %d: %s: %s\n", device, warpfft_status_name(s), warpfft_last_error());
    printf("runtime: %s\n", buf);
    free(buf);
    return 0;
}
