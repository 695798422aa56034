/*
 * grid.c — the fine grid and the index maps onto it: 2,3,5,7-smooth sizes, the fine size of each
 * dimension, the plan stage that sets them (refusing grids too large to address or transform),
 * mode order <-> array index, and point folding. No GPU; see params.h.
 */
#include "params/grid.h"

#include <math.h>

#include "params/kernel.h"
#include "runtime/error.h"

/* The same literals as kernels/common.cuh: 1/(2 pi), and 2 pi as hi + lo (Cody-Waite). */
#define WF_INV_2PI      0.15915494309189533576888376337251436
#define WF_2PI_HI       6.283185307179586232
#define WF_2PI_LO       2.4492935982947064e-16
#define WF_MUL_RN(a, b) ((a) * (b)) /* host twin for the tests; x86-64 builds contract nothing */

int wf_is_smooth(int64_t n) {
    if (n < 1)
        return 0;
    static const int primes[4] = {2, 3, 5, 7};
    for (int i = 0; i < 4; i++)
        while (n % primes[i] == 0)
            n /= primes[i];
    return n == 1;
}

int64_t wf_next_smooth_even(int64_t n) {
    if (n < 2)
        n = 2;
    int64_t best = 2;
    while (best < n)
        best *= 2; /* a power of two: smooth, even, < 2n */
    /* every candidate is 2^a * 3^b * 5^c * 7^d with a >= 1: odd part p, doubled until >= n */
    for (int64_t p7 = 1; p7 < best; p7 *= 7)
        for (int64_t p5 = p7; p5 < best; p5 *= 5)
            for (int64_t p3 = p5; p3 < best; p3 *= 3) {
                int64_t m = 2 * p3;
                while (m < n)
                    m *= 2;
                if (m < best)
                    best = m;
            }
    return best;
}

int64_t wf_fine_size(int64_t n_modes, double sigma, int width) {
    int64_t n = (int64_t)ceil(sigma * (double)n_modes);
    if (n < 2 * (int64_t)width)
        n = 2 * (int64_t)width;
    return wf_next_smooth_even(n);
}

warpfft_status wf_params_set_grid(wf_params *p) {
    int64_t fine = 1, modes = 1, bytes;
    for (int d = 0; d < p->dim; d++)
        if (p->spreadinterponly && p->n_modes[d] < 2 * (int64_t)p->width)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "spreadinterponly: n_modes[%d] = %lld is below twice the kernel "
                            "width %d (the grid is fk itself and must hold a footprint twice)",
                            d, (long long)p->n_modes[d], p->width);
    for (int d = 0; d < 3 && fine > 0; d++) {
        if (p->spreadinterponly)
            p->n_fine[d] = d < p->dim ? p->n_modes[d] : 1;
        else
            p->n_fine[d] = d < p->dim ? wf_fine_size(p->n_modes[d], p->upsampfac, p->width) : 1;
        if (__builtin_mul_overflow(fine, p->n_fine[d], &fine))
            fine = -1;
        else
            modes *= p->n_modes[d]; /* N_d <= nf_d, so modes <= fine */
    }
    /* real data: the half spectrum beside the real grid ((nf1/2 + 1) nf2 nf3 complex per
     * transform: a little more than the complex grid's bytes in all), and the grid's end
     * rounded up (wf_params_grid_bytes) */
    int64_t half = 0;
    if (fine > 0 && p->real_data)
        half = (p->n_fine[0] / 2 + 1) * (fine / p->n_fine[0]);
    if (fine < 0 || __builtin_mul_overflow(fine + half, p->ntransf, &bytes) ||
        __builtin_mul_overflow(bytes, (int64_t)p->complex_bytes, &bytes) || bytes > INT64_MAX - 256)
        return wf_error(WARPFFT_ERR_BAD_SIZE,
                        "the fine grid of n_modes = {%lld, %lld, %lld} (upsampfac %g) times "
                        "ntransf = %lld is too large to address",
                        (long long)p->n_modes[0], (long long)p->n_modes[1],
                        (long long)p->n_modes[2], p->upsampfac, (long long)p->ntransf);
    for (int d = 0; d < p->dim; d++)
        if (p->n_fine[d] > WF_MAX_FINE_DIM)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "n_modes[%d] = %lld needs a fine grid of %lld points (upsampfac %g); "
                            "cuFFT transforms longer than 2^32 points were measured wrong (H200, "
                            "cuFFT 12.0, f32 and f64 alike: errors up to 0.8 at 4299816960 "
                            "points), so warpfft stops at 2^32 per dimension (N up to ~2^31)",
                            d, (long long)p->n_modes[d], (long long)p->n_fine[d], p->upsampfac);
    /* The spreading/interpolation kernels index each dimension with 32-bit ints for dim >= 2
     * (kernels/ABI.md): a longer dimension would address outside the fine grid. */
    for (int d = 0; p->dim >= 2 && d < p->dim; d++)
        if (p->n_fine[d] >= WF_MAX_FINE_DIM_ND)
            return wf_error(WARPFFT_ERR_BAD_SIZE,
                            "n_modes[%d] = %lld needs a fine grid of %lld points (upsampfac %g); "
                            "in %dD the kernels index each dimension with 32-bit integers, so a "
                            "fine-grid dimension must stay below 2^31 = 2147483648 points "
                            "(N up to ~2^30 per dimension; 1D allows 2^32)",
                            d, (long long)p->n_modes[d], (long long)p->n_fine[d], p->upsampfac,
                            p->dim);
    p->fine_prod = fine;
    p->mode_prod = modes;
    p->tol_floor = p->spreadinterponly ? wf_tol_floor(p->precision, p->dim, p->n_modes, fine)
                                       : wf_tol_floor_of(p->precision, p->dim, p->n_modes,
                                                         p->n_fine, p->width, p->beta);
    return WARPFFT_SUCCESS;
}

double wf_tol_floor(int precision, int dim, const int64_t n_modes[3], int64_t fine_prod) {
    double n2 = 0.0, eps = precision == WARPFFT_F64 ? 0x1p-53 : 0x1p-24;
    for (int d = 0; d < dim; d++)
        n2 += (double)n_modes[d] * (double)n_modes[d];
    double phase = sqrt(n2) * 0x1p-52;
    double arith = eps * (4.0 + 2.0 * sqrt(log2((double)(fine_prod > 2 ? fine_prod : 2))));
    return sqrt(phase * phase + arith * arith);
}

/* How much the deconvolution amplifies rounding on grid nf: sqrt(rms * max) over the modes
 * 0..N/2 of phihat(0) / phihat(k) (rms: random mode data; max: all of it at the band edge; their
 * geometric mean matched the f32 errors measured at sigma 1.25 on the H100, 1.3e-5 in 2D and
 * 9.1e-5 in 3D, where rms alone read 2.5x low and max 6x high). The rms over 16 Gauss-Legendre
 * samples in k (phihat is smooth in k). */
static double amplification(int64_t n_modes, int64_t nf, int width, double beta) {
    enum { NS = 16 };
    double x[NS], wt[NS], kmax = (double)(n_modes / 2), q = wf_quad_nodes(width);
    wf_gauss_legendre(NS, x, wt);
    double p0 = wf_phihat(0.0, nf, width, beta, (int)q), m2 = 0.0;
    for (int i = 0; i < NS; i++) {
        double r = p0 / wf_phihat(0.5 * kmax * (x[i] + 1.0), nf, width, beta, (int)q);
        m2 += 0.5 * wt[i] * r * r;
    }
    double mx = p0 / wf_phihat(kmax, nf, width, beta, (int)q);
    return sqrt(sqrt(m2) * mx);
}

double wf_tol_floor_of(int precision, int dim, const int64_t n_modes[3], const int64_t nf[3],
                       int width, double beta) {
    double n2 = 0.0, eps = precision == WARPFFT_F64 ? 0x1p-53 : 0x1p-24, fine = 1.0, amp = 1.0;
    double beta2 = wf_kernel_beta(width, 2.0);
    for (int d = 0; d < dim; d++) {
        n2 += (double)n_modes[d] * (double)n_modes[d];
        fine *= (double)nf[d];
        double r = amplification(n_modes[d], nf[d], width, beta);
        double r2 = amplification(n_modes[d], wf_fine_size(n_modes[d], 2.0, width), width, beta2);
        amp *= r > r2 ? r / r2 : 1.0;
    }
    double phase = sqrt(n2) * 0x1p-52;
    double arith = amp * eps * (4.0 + 2.0 * sqrt(log2(fine > 2.0 ? fine : 2.0)));
    return sqrt(phase * phase + arith * arith);
}

/* ---------------------------------------------------------------- mode order and folding */

int64_t wf_mode_of_index(int64_t i, int64_t n, int modeord) {
    if (modeord == 0)
        return i - n / 2;
    return i < (n + 1) / 2 ? i : i - n;
}

int64_t wf_index_of_mode(int64_t k, int64_t n, int modeord) {
    if (modeord == 0)
        return k + n / 2;
    return k >= 0 ? k : n + k;
}

/* The host twin of kernels/common.cuh's wf_fold (see there): the body is the same text,
 * character for character (test_params_grid.c compares them). */
double wf_fold(double x, int64_t nf) {
    const double n = rint(WF_MUL_RN(x, WF_INV_2PI));
    double r = fma(-n, WF_2PI_HI, x);
    r = fma(-n, WF_2PI_LO, r);
    double u = WF_MUL_RN(r, WF_INV_2PI);
    u = u - floor(u);
    u = WF_MUL_RN(u, (double)nf);
    if (u >= (double)nf)
        u -= (double)nf;
    return u;
}
