/*
 * kernel.h — the spreading kernel on the host (kernel.c): the embedded widths, Gauss-Legendre
 * quadrature, phihat and the deconvolution factors. The kernel itself -- its formula, beta
 * (wf_kernel_beta), edge value, kink and evaluated forms -- is kernels/kernel_shape.h, the one
 * definition the device code shares; included here (the kernels folder is on the C core's
 * include path: build.rs and the scripts under c_core/tests).
 */
#ifndef WARPFFT_PARAMS_KERNEL_H
#define WARPFFT_PARAMS_KERNEL_H

#include <stdint.h>

#include "kernel_shape.h"

#define WF_PI       WF_KERNEL_PI
#define WF_MAX_QUAD 512 /* Gauss-Legendre nodes over the full interval, at most */

int wf_max_width(int precision);
/* Gauss-Legendre nodes x[0..n-1] (ascending) and weights on [-1, 1], by Newton's method. */
void wf_gauss_legendre(int n, double *x, double *w);
/* Nodes over the full interval that wf_deconv_factors uses for width w (even). */
int wf_quad_nodes(int width);
/* The kernel's half rule from n_quad Gauss-Legendre nodes (at most WF_MAX_QUAD, rounded up to
 * even) after t = (w/2) sin(theta): nodes t[j] >= 0 and weights g[j] with
 * int_{-w/2}^{w/2} phi(t) f(t) dt ~ sum_j g[j] f(t[j]) for even f. t and g hold WF_MAX_QUAD / 2;
 * returns the count (n_quad / 2). Shared by phihat (kernel.c) and the width rule (width.c). */
int wf_phi_rule(int width, double beta, int n_quad, double *t, double *g);
/* phihat(k) = int_{-w/2}^{w/2} phi(t) cos(2 pi k t / nf) dt with n_quad Gauss-Legendre nodes
 * after t = (w/2) sin(theta) (which removes the square-root endpoint behaviour of phi). */
double wf_phihat(double k, int64_t nf, int width, double beta, int n_quad);
/* fac[k] = 1 / phihat(k) for k = 0..N/2 (N/2 + 1 entries). */
void wf_deconv_factors(int64_t n_modes, int64_t nf, int width, double beta, double *fac);

#endif /* WARPFFT_PARAMS_KERNEL_H */
