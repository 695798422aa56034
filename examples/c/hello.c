/* README's C example: 2D type-1 NUFFT of 3 points, f32. Exit 2 without a GPU. */
#include <stdio.h>
#include <warpfft.h>

int main(void) {
    float x[3] = {0.1f, -1.0f, 3.0f}, y[3] = {2.0f, 0.5f, -3.1f}, c[6] = {1, 0, 1, 0, 1, 0};
    float f[2 * 16 * 16];
    int64_t n[3] = {16, 16, 1};
    void *dx, *dy, *dc, *df;
    warpfft_plan plan;
    if (warpfft_plan_create(1, 2, n, +1, 1, 1e-5, WARPFFT_F32, NULL, &plan) != WARPFFT_SUCCESS) {
        fprintf(stderr, "warpfft: %s\n", warpfft_last_error());
        return 2;
    }
    warpfft_malloc(0, sizeof x, &dx), warpfft_malloc(0, sizeof y, &dy);
    warpfft_malloc(0, sizeof c, &dc), warpfft_malloc(0, sizeof f, &df);
    warpfft_memcpy_htod(0, dx, x, sizeof x), warpfft_memcpy_htod(0, dy, y, sizeof y);
    warpfft_memcpy_htod(0, dc, c, sizeof c);
    warpfft_setpts(plan, WARPFFT_F32, 3, dx, dy, NULL);
    warpfft_execute(plan, WARPFFT_F32, dc, df);
    warpfft_memcpy_dtoh(0, f, df, sizeof f); /* synchronous: waits for execute */
    printf("f(0,0) = %.5f%+.5fi (exact: 3)\n", f[2 * (8 * 16 + 8)], f[2 * (8 * 16 + 8) + 1]);
    warpfft_plan_destroy(plan);
    warpfft_free(0, dx), warpfft_free(0, dy), warpfft_free(0, dc), warpfft_free(0, df);
    return f[2 * (8 * 16 + 8)] > 2.9999f && f[2 * (8 * 16 + 8)] < 3.0001f ? 0 : 1;
}
