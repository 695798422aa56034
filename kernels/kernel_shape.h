/*
 * kernel_shape.h — the spreading kernel, defined once: its formula, shape parameter beta (the
 * rule per width and upsampling factor), half-width, edge value and kink, and the forms in which
 * the device, the host and the tests evaluate it. Plain C, static inline: the kernels include it
 * (common.cuh, under nvcc and NVRTC), the C core (params/kernel.h), the CPU emulator
 * (kernels/test/emu) and the C tests; the Python and Rust tests read its one-expression
 * functions (WF_KERNEL_EXPR below: kernels/test/kernel_shape.py, tests/common/kernel_shape.rs).
 * No other file states the kernel, so another kernel shape is a change of this file, plus what
 * follows from it: the widths the tests pin (c_core/tests/test_params_width.c) and the pages
 * that describe it (docs/accuracy.md; the kernel enum's comments in warpfft.h and src/info.rs);
 * the two readers only if its definition calls a function besides exp, sinh and sqrt.
 *
 * The kernel is the sinh type (Potts & Tasche, "Continuous window functions for NFFT", 2021) less
 * its value at the edge, so it is continuous (0 at z = +-w/2, a kink there):
 *   phi(z) = 2 e^-beta (sinh(beta s) / s - beta),  s = sqrt(1 - a^2),  a = z / (w/2),  |a| < 1,
 *   phi(z) = 0 for |a| >= 1,
 *   beta = 0.995 pi (1 - 1/(2 sigma)) w  (w the width in fine-grid points, sigma the upsampling).
 * The 0.995 is Potts & Tasche's choice scaled by a least-squares fit of beta/w per width at sigma
 * 2 (2.341-2.353 against 2.356); with the edge value removed the best scale per (w, sigma)
 * stayed within 0.94-1.00 of it and 0.99-1.00 in 19 of 24 cells. At the same width its aliasing
 * error is 2-3x below the exponential of semicircle's, which lets tol 1e-5 run at width 6 in
 * 1D/2D. Continuity makes the transforms continuous in the points: with the edge value kept, an
 * even-width footprint switched at grid nodes and the outputs stepped by ~that value there (a
 * finite-difference derivative across a node was off by 13x; docs/accuracy.md).
 *
 * Three parts:
 *  - the definition (host only), one `return EXPR;` per function, each EXPR valid C and valid
 *    Python/numpy (no casts, no ?:, only exp, sinh, sqrt and the WF_KERNEL_* numbers): the
 *    formula by its definition, beta, the edge value and the kink slope;
 *  - the evaluated forms (device, emulator, host): the constants a footprint shares
 *    (wf_kshape_f32/f64: 2/w, beta, e^-beta) and phi from them, in float and double, exactly
 *    what the spreading kernels compute;
 *  - the quadrature form (host only): phi((w/2) sin(theta)) cos(theta), the integrand of
 *    phihat and of the width rule after the substitution t = (w/2) sin(theta).
 * The C tests check the parts against each other (c_core/tests/test_params_kernel.c).
 */
#ifndef WF_KERNEL_SHAPE_H
#define WF_KERNEL_SHAPE_H

/* Device code (nvcc, NVRTC: both define __CUDACC__) gets the evaluated forms only; C and C++
 * get them as plain inline functions, the float ones in C++ only (the CPU stand-ins for device
 * code, kernels/test/emu/cuda_emu.h and the test shims, provide __fdividef). The math
 * functions: C includes <math.h> here; C++ (the emulator includes this inside a namespace)
 * brings <cmath> first; device code has them built in. */
#if defined(__CUDACC__)
#define WF_KERNEL_DEV static __device__ __forceinline__
#else
#define WF_KERNEL_DEV static inline
#if !defined(__cplusplus)
#include <math.h>
#endif
#endif

#define WF_KERNEL_PI         3.14159265358979323846
#define WF_KERNEL_BETA_SCALE 0.995

/* ---- the definition (host only) ---------------------------------------------------------- */
#if !defined(__CUDACC__)
#define WF_KERNEL_EXPR static inline /* marks the one-expression functions other languages read */

/* beta for width w and upsampling factor sigma. */
WF_KERNEL_EXPR double wf_kernel_beta(int width, double sigma) {
    return WF_KERNEL_BETA_SCALE * WF_KERNEL_PI * (1.0 - 1.0 / (2.0 * sigma)) * width;
}

/* phi by its defining formula at a = z / (w/2), |a| < 1 (0 outside, which the caller applies):
 * the reference the tests hold the evaluated forms to. */
WF_KERNEL_EXPR double wf_kernel_def(double a, double beta) {
    return 2.0 * exp(-beta) * (sinh(beta * sqrt(1.0 - a * a)) / sqrt(1.0 - a * a) - beta);
}

/* The sinh form's value at |a| = 1, 2 beta e^-beta, which phi subtracts. */
WF_KERNEL_EXPR double wf_kernel_edge(double beta) {
    return 2.0 * beta * exp(-beta);
}

/* phi's slope at z -> -w/2 from inside (minus it at +w/2): near the edge sinh(beta s)/s - beta
 * ~ beta^3 s^2 / 6 and s^2 ~ 2 (1 - |a|), so 4 beta^3 e^-beta / (3 w). The jumps of phi' there
 * set phihat's tail (the width rule's aliases beyond |m| = 4, params/width.c). */
WF_KERNEL_EXPR double wf_kernel_kink(int width, double beta) {
    return 4.0 * beta * beta * beta * exp(-beta) / (3.0 * width);
}
#endif

/* ---- the evaluated forms (device, emulator, host) ---------------------------------------- */

/* What a footprint's evaluations share: inv_hw = 2/w, beta, eb = e^-beta (eb^2 and 2 beta eb
 * are the sinh form's terms at the edge). Made once per launch in the kernels (f32: 2/w and
 * e^-beta in double, then rounded). */
typedef struct wf_kshape_f32 {
    float inv_hw, beta, eb;
} wf_kshape_f32;
typedef struct wf_kshape_f64 {
    double inv_hw, beta, eb;
} wf_kshape_f64;

WF_KERNEL_DEV wf_kshape_f32 wf_kshape_make_f32(int width, float beta) {
    wf_kshape_f32 k;
    k.inv_hw = (float)(2.0 / width);
    k.beta = beta;
    k.eb = (float)exp(-(double)beta);
    return k;
}

WF_KERNEL_DEV wf_kshape_f64 wf_kshape_make_f64(int width, double beta) {
    wf_kshape_f64 k;
    k.inv_hw = 2.0 / width;
    k.beta = beta;
    k.eb = exp(-beta);
    return k;
}

/* The sinh form's value at the edge, 2 beta eb (wf_kernel_edge), which phi subtracts. */
#if defined(__CUDACC__) || defined(__cplusplus) /* float: __fdividef */
WF_KERNEL_DEV float wf_kshape_edge_f32(wf_kshape_f32 k) {
    return 2.0f * k.beta * k.eb;
}
#endif
WF_KERNEL_DEV double wf_kshape_edge_f64(wf_kshape_f64 k) {
    return 2.0 * k.beta * k.eb;
}

/* phi(z), evaluated as (E^2 - eb^2) / (E s) - 2 beta eb with E = e^(beta (s - 1)): one exp, one
 * division. E^2 - eb^2 cancels near the edge (s -> 0), but there the value is ~2 beta e^-beta of
 * the peak, so the absolute error stays ~eps e^-beta / s, far below any tolerance. In float the
 * exponent beta (s - 1) is -beta a^2 / (1 + s), which avoids the cancellation in s - 1, and the
 * divisions are the device's fast ones (__fdividef; the C++ stand-ins' own). Where s^2 <= 0 --
 * the first node exactly at -w/2 (a point on a grid node for even w, half-way for odd w) or
 * rounding at the edge -- phi is 0, its limit. */
#if defined(__CUDACC__) || defined(__cplusplus) /* float: __fdividef */
WF_KERNEL_DEV float wf_kshape_phi_f32(float z, wf_kshape_f32 k) {
    float a = z * k.inv_hw;
    float a2 = a * a;
    float s2 = 1.0f - a2;
    if (!(s2 > 0.0f))
        return 0.0f;
    float s = sqrtf(s2);
    float e = expf(-k.beta * __fdividef(a2, 1.0f + s));
    return __fdividef(e * e - k.eb * k.eb, e * s) - wf_kshape_edge_f32(k);
}
#endif

WF_KERNEL_DEV double wf_kshape_phi_f64(double z, wf_kshape_f64 k) {
    double a = z * k.inv_hw;
    double s2 = 1.0 - a * a;
    if (!(s2 > 0.0))
        return 0.0;
    double s = sqrt(s2);
    double e = exp(k.beta * (s - 1.0));
    return (e * e - k.eb * k.eb) / (e * s) - wf_kshape_edge_f64(k);
}

/* ---- the quadrature form (host only) ----------------------------------------------------- */
#if !defined(__CUDACC__)
/* phi((w/2) sin(th)) cos(th) for th in [-pi/2, pi/2]: with t = (w/2) sin(th), phi(t) dt =
 * (w/2) of this dth, and the 1/s of phi cancels against the Jacobian:
 *   e^(-2 beta sin^2(th/2)) - e^(-2 beta cos^2(th/2)) - edge cos(th)
 * (sinh(beta cos th) e^-beta written without cancellation in cos(th) -+ 1, which beta up to ~38
 * would amplify; the last term is the edge value removed, times the Jacobian). Analytic in th,
 * the kink at the edge included, so Gauss-Legendre in th converges fast (params/kernel.c). */
static inline double wf_kshape_theta(double th, wf_kshape_f64 k) {
    double sh = sin(0.5 * th), ch = cos(0.5 * th);
    return exp(-2.0 * k.beta * sh * sh) - exp(-2.0 * k.beta * ch * ch) -
           wf_kshape_edge_f64(k) * cos(th);
}
#endif

#endif /* WF_KERNEL_SHAPE_H */
