/*
 * width.c — the kernel width rule: the predicted aliasing error of a plan, the search for the
 * smallest width that meets tol, and the plan stage that sets width and beta (refusing a tol
 * that needs a wider kernel than the precision embeds). No GPU; see params.h.
 *
 * Width: the smallest w whose predicted error bound, times WF_ALIAS_SAFETY, is <= tol. The
 * bound holds for ANY point set (random strengths or mode coefficients): the error factor
 * E_k(delta) of mode k for a point at fine-grid offset delta is computed from the footprint sums
 * the spreader forms (wf_alias_dim_stats), and the rule takes the worst offset (all points at
 * one offset, e.g. on grid nodes, see that offset's error instead of the mean over offsets), with
 * the coherence that grid-aligned points add across dims, or the band edge (all energy in one
 * mode), whichever is larger (wf_alias_combine); and never less than the band edge on grid nodes,
 * sum over dims of the worst factor (wf_alias_passes). Random points see the mean over offsets
 * (wf_alias_mean, the rule before issue 14): 2-5x below the bound. Cost: one point of width in
 * about half the cases (suite B f32 at 1e-5: 6 -> 7; 2D f64 at 1e-9: 10 -> 11), one more at sigma 2
 * from the band edge on nodes in 2D/3D f64 at 1e-9 (docs/accuracy.md). The
 * safety factor covers what the bound leaves out: products of two aliasing terms (~tol^2), the
 * sampling of offsets and modes (test_params checks it against dense sampling) and rounding, which
 * adds in quadrature (tol_floor, grid.c).
 */
#include "params/width.h"

#include <math.h>

#include "params/grid.h"
#include "params/kernel.h"
#include "runtime/error.h"

#define WF_ALIAS_MMAX   4  /* aliases m = +-1..+-4 by quadrature; beyond, the kink asymptote */
#define WF_ALIAS_SAMPLE 32 /* |k| samples per dim when N/2 is larger */

/* sum_{m != 0} phihat(xi + m)^2 / phihat(xi)^2 for |xi| <= 1/2, from a half rule (t, g) and
 * (cb, sb) = (cos, sin)(2 pi t): the phases of xi + m are rotations of xi's by m steps. */
static double alias_ratio(int h, const double *t, const double *g, const double *cb,
                          const double *sb, double xi, double kink2, int width) {
    double main = 0.0, p[WF_ALIAS_MMAX] = {0}, q[WF_ALIAS_MMAX] = {0};
    for (int j = 0; j < h; j++) {
        double s0, c0;
        sincos(2.0 * WF_PI * xi * t[j], &s0, &c0);
        double cp = c0, sp = s0, cq = c0, sq = s0;
        main += g[j] * c0;
        for (int m = 0; m < WF_ALIAS_MMAX; m++) {
            double cn = cp * cb[j] - sp * sb[j]; /* phase + 2 pi t */
            sp = sp * cb[j] + cp * sb[j];
            cp = cn;
            cn = cq * cb[j] + sq * sb[j]; /* phase - 2 pi t */
            sq = sq * cb[j] - cq * sb[j];
            cq = cn;
            p[m] += g[j] * cp;
            q[m] += g[j] * cq;
        }
    }
    double al = 0.0;
    for (int m = 0; m < WF_ALIAS_MMAX; m++)
        al += p[m] * p[m] + q[m] * q[m];
    /* |m| > MMAX: phi is continuous with kinks of slope J at +-w/2 (wf_kernel_kink), whose
     * jumps of phi' give phihat(xi) ~ -J cos(pi w xi) / (2 pi^2 xi^2); sum 1/(m + xi)^4 over
     * m >= MMAX+1 ~ 1/(3 (MMAX + 1/2 + xi)^3) */
    double cn = cos(WF_PI * width * xi), mm = WF_ALIAS_MMAX + 0.5, a = mm + xi, b = mm - xi;
    al += kink2 * cn * cn / (4.0 * WF_PI * WF_PI * WF_PI * WF_PI) *
          (1.0 / (3.0 * a * a * a) + 1.0 / (3.0 * b * b * b));
    return al / (main * main);
}

double wf_alias_mean(int64_t n_modes, int64_t nf, int width, double beta) {
    double t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2];
    /* the aliases reach |xi| ~ MMAX + 1/2: phase 2 pi xi t up to pi w (MMAX + 1/2) */
    int n_quad = (int)ceil(WF_PI * width * (WF_ALIAS_MMAX + 0.5)) + 40;
    double cb[WF_MAX_QUAD / 2], sb[WF_MAX_QUAD / 2];
    int h = wf_phi_rule(width, beta, n_quad, t, g);
    for (int j = 0; j < h; j++) {
        cb[j] = cos(2.0 * WF_PI * t[j]);
        sb[j] = sin(2.0 * WF_PI * t[j]);
    }
    double kink = wf_kernel_kink(width, beta), kink2 = kink * kink, sum = 0.0;
    /* modes -(N/2) .. (N-1)/2; a(k) = a(-k) */
    if (n_modes <= WF_ALIAS_SAMPLE) {
        for (int64_t k = -(n_modes / 2); k <= (n_modes - 1) / 2; k++)
            sum += alias_ratio(h, t, g, cb, sb, (double)k / (double)nf, kink2, width);
        return sum / (double)n_modes;
    }
    /* sum_k a(k) = a(0) + 2 sum_{k=1..K} a(k) (+ a(N/2), N even), K = (N-1)/2, and the sum
     * over k = -K..K ~ 2 int_0^{K+1/2} a: Gauss-Legendre in |k| (a(k) rises steeply towards
     * the band edge, ~1e4x at upsampfac 1.25, where a midpoint rule read 12% low) */
    double x[WF_ALIAS_SAMPLE], wt[WF_ALIAS_SAMPLE], kk = (double)((n_modes - 1) / 2) + 0.5;
    wf_gauss_legendre(WF_ALIAS_SAMPLE, x, wt);
    for (int i = 0; i < WF_ALIAS_SAMPLE; i++) {
        double k = 0.5 * kk * (x[i] + 1.0);
        sum += wt[i] * 0.5 * kk * alias_ratio(h, t, g, cb, sb, k / (double)nf, kink2, width);
    }
    sum *= 2.0;
    if (n_modes % 2 == 0)
        sum += alias_ratio(h, t, g, cb, sb, 0.5 * (double)n_modes / (double)nf, kink2, width);
    return sum / (double)n_modes;
}

/* The error factor of one mode and offset, from the footprint sums themselves: a point at
 * fine-grid offset delta (u = integer + delta) reaches mode k through
 *   P_k(delta) = sum_t phi(z_t) e^{-2 pi i (k/nf) z_t},  z_t = i0 + t - delta, i0 = ceil(delta -
 * w/2), the w kernel values the spreader uses (a node at -w/2 gets 0, as on the device), and
 * deconvolution divides by phihat(k): E_k(delta) = P_k(delta) / phihat(k) - 1 (Poisson: the sum
 * over m != 0 of phihat(k + m nf) / phihat(k) e^{2 pi i m delta}, coherent in m). Evaluated
 * directly with the kernels' own double form (wf_kshape_phi_f64, kernels/kernel_shape.h), so
 * the kernel's kink at +-w/2 is taken exactly as the spreader takes it. */

/* Offsets: Gauss-Legendre on (0, 1/2) and (1/2, 1), whose nodes crowd towards the kinks at 0
 * and 1/2 (with the jump the kernel had before, a midpoint rule read the means over offsets
 * 5-13% low), plus 0 and 1/2 exactly. */
#define WF_ALIAS_NDELTA 32
#define WF_ALIAS_EXACT  64 /* up to this many modes, every mode; beyond, Gauss-Legendre in k */
/* ... and, for the maxima over modes, 48 evenly spaced ones: the band-edge error oscillates in
 * k with period ~nf/w and peaked up to 8% above the edge modes between Gauss-Legendre nodes */
#define WF_ALIAS_NEVEN 48
#define WF_ALIAS_NK    (WF_ALIAS_EXACT + WF_ALIAS_NEVEN + 3)

void wf_alias_dim_stats(int64_t n_modes, int64_t nf, int width, double beta, wf_alias_dim *st) {
    /* modes and their weights (sum N); weight-0 extras only enter the maxima */
    double kk[WF_ALIAS_NK], kw[WF_ALIAS_NK];
    int nk = 0;
    if (n_modes <= WF_ALIAS_EXACT) {
        for (int64_t k = -(n_modes / 2); k <= (n_modes - 1) / 2; k++) {
            kk[nk] = (double)k;
            kw[nk++] = 1.0;
        }
    } else {
        double x[WF_ALIAS_SAMPLE], wt[WF_ALIAS_SAMPLE], kmax = (double)((n_modes - 1) / 2);
        wf_gauss_legendre(WF_ALIAS_SAMPLE, x, wt);
        for (int i = 0; i < WF_ALIAS_SAMPLE; i++) { /* k = -K - 1/2 .. K + 1/2: 2K + 1 modes */
            kk[nk] = (kmax + 0.5) * x[i];
            kw[nk++] = (kmax + 0.5) * wt[i];
        }
        double kmin = -(double)(n_modes / 2); /* the band edges and an even grid, for maxima */
        for (int i = 0; i <= WF_ALIAS_NEVEN; i++) {
            kk[nk] = round(kmin + (kmax - kmin) * i / WF_ALIAS_NEVEN);
            kw[nk++] = 0.0;
        }
        if (n_modes % 2 == 0) /* the mode -N/2 (already sampled): its weight */
            kw[nk - WF_ALIAS_NEVEN - 1] = 1.0;
    }
    double t[WF_MAX_QUAD / 2], g[WF_MAX_QUAD / 2], ph[WF_ALIAS_NK];
    int h = wf_phi_rule(width, beta, wf_quad_nodes(width), t, g);
    for (int i = 0; i < nk; i++) {
        double s = 0.0;
        for (int j = 0; j < h; j++)
            s += g[j] * cos(2.0 * WF_PI * kk[i] / (double)nf * t[j]);
        ph[i] = s;
    }
    double rot_c[WF_ALIAS_NK], rot_s[WF_ALIAS_NK];
    for (int i = 0; i < nk; i++)
        sincos(2.0 * WF_PI * kk[i] / (double)nf, &rot_s[i], &rot_c[i]);
    double inv_n = 1.0 / (double)n_modes;
    wf_kshape_f64 kshape = wf_kshape_make_f64(width, beta);
    double edge2[WF_ALIAS_NK] = {0}, dx[WF_ALIAS_NDELTA / 2], dw[WF_ALIAS_NDELTA / 2];
    wf_gauss_legendre(WF_ALIAS_NDELTA / 2, dx, dw);
    *st = (wf_alias_dim){0};
    double worst2 = 0.0;
    for (int id = 0; id < WF_ALIAS_NDELTA + 2; id++) {
        int mid = id < WF_ALIAS_NDELTA; /* interior nodes enter the means over offsets */
        int ig = id % (WF_ALIAS_NDELTA / 2), half = id / (WF_ALIAS_NDELTA / 2);
        double delta = mid ? 0.25 * (dx[ig] + 1.0) + 0.5 * half : 0.5 * (id - WF_ALIAS_NDELTA);
        double dwt = mid ? 0.25 * dw[ig] : 0.0; /* weights sum to 1 */
        double i0 = ceil(delta - 0.5 * width), phv[WF_MAX_WIDTH_F64], z[WF_MAX_WIDTH_F64];
        for (int q = 0; q < width; q++) {
            z[q] = (i0 + q) - delta;
            phv[q] = wf_kshape_phi_f64(z[q], kshape);
        }
        double q2 = 0.0, er = 0.0, ei = 0.0;
        for (int i = 0; i < nk; i++) {
            /* e^{i xi z_q}, z_q = z_0 + q: one sincos, then rotations by e^{i xi} (~w ulps) */
            double pr = 0.0, pi = 0.0, sn, cs, xi = 2.0 * WF_PI * kk[i] / (double)nf;
            sincos(xi * z[0], &sn, &cs);
            for (int q = 0; q < width; q++) {
                pr += phv[q] * cs;
                pi -= phv[q] * sn;
                double cn = cs * rot_c[i] - sn * rot_s[i];
                sn = sn * rot_c[i] + cs * rot_s[i];
                cs = cn;
            }
            double re = pr / ph[i] - 1.0, im = pi / ph[i], a2 = re * re + im * im;
            q2 += kw[i] * a2;
            er += kw[i] * re;
            ei += kw[i] * im;
            edge2[i] += dwt * a2;
            worst2 = a2 > worst2 ? a2 : worst2; /* sqrt once, below: the same maximum */
        }
        st->offset2 = fmax(st->offset2, q2 * inv_n);
        /* sqrt, not hypot: hypot@GLIBC_2.35 would raise the wheel's manylinux baseline (2_34) */
        st->coherent = fmax(st->coherent, sqrt(er * er + ei * ei) * inv_n);
        st->mean2 += dwt * q2 * inv_n;
    }
    for (int i = 0; i < nk; i++)
        st->edge2 = fmax(st->edge2, edge2[i]);
    st->worst = sqrt(worst2);
}

/* The same footprint sums at the offsets s / ns, s = 0..ns-1, for the bounds from the points
 * given (offsets.c): E_k(s / ns) for modes kk[0..nk-1] with ph[i] = phihat(kk[i]) into re[i *
 * stride + s], im[i * stride + s]. The footprint's start phase e^{i xi (i0 - delta)} is
 * e^{i xi i0} (i0 takes two values over [0, 1)) times e^{-i xi delta}, rotated from offset to
 * offset and exact every WF_ALIAS_RESEED offsets (~8 ulps of drift at most, ~1e-15 in E), then
 * rotations along the footprint as wf_alias_dim_stats: one sincos per mode and 8 offsets. */
#define WF_ALIAS_RESEED 8
#define WF_ALIAS_CHUNK  128 /* modes per pass (the phase state's arrays) */
void wf_alias_factors(int64_t nf, int width, double beta, int ns, int nk, const double *kk,
                      const double *ph, int stride, double *re, double *im) {
    wf_kshape_f64 kshape = wf_kshape_make_f64(width, beta);
    double ia = ceil(-0.5 * width); /* i0 at delta = 0; i0 + 1 beyond the first step */
    for (int k0 = 0; k0 < nk; k0 += WF_ALIAS_CHUNK) {
        int n = nk - k0 < WF_ALIAS_CHUNK ? nk - k0 : WF_ALIAS_CHUNK;
        double rc[WF_ALIAS_CHUNK], rs[WF_ALIAS_CHUNK], dc[WF_ALIAS_CHUNK], ds[WF_ALIAS_CHUNK];
        double ac[WF_ALIAS_CHUNK], as[WF_ALIAS_CHUNK], pc[WF_ALIAS_CHUNK], ps[WF_ALIAS_CHUNK];
        for (int i = 0; i < n; i++) {
            double xi = 2.0 * WF_PI * kk[k0 + i] / (double)nf;
            sincos(xi, &rs[i], &rc[i]);              /* along the footprint */
            sincos(xi / (double)ns, &ds[i], &dc[i]); /* from offset to offset */
            sincos(xi * ia, &as[i], &ac[i]);         /* e^{i xi ia} */
        }
        for (int s = 0; s < ns; s++) {
            double delta = (double)s / (double)ns, i0 = ceil(delta - 0.5 * width);
            double phv[WF_MAX_WIDTH_F64];
            for (int q = 0; q < width; q++)
                phv[q] = wf_kshape_phi_f64((i0 + q) - delta, kshape);
            for (int i = 0; i < n; i++) {
                if (s % WF_ALIAS_RESEED == 0) {
                    sincos(2.0 * WF_PI * kk[k0 + i] / (double)nf * delta, &ps[i], &pc[i]);
                } else {
                    double cn = pc[i] * dc[i] - ps[i] * ds[i];
                    ps[i] = ps[i] * dc[i] + pc[i] * ds[i];
                    pc[i] = cn;
                }
                /* e^{i xi z_0} = e^{i xi i0} e^{-i xi delta}, i0 = ia or ia + 1 */
                double bc = ac[i], bs = as[i];
                if (i0 != ia) {
                    double cn = bc * rc[i] - bs * rs[i];
                    bs = bs * rc[i] + bc * rs[i];
                    bc = cn;
                }
                double cs = bc * pc[i] + bs * ps[i], sn = bs * pc[i] - bc * ps[i];
                double pr = 0.0, pi = 0.0; /* cs, sn: cos, sin of xi z */
                for (int q = 0; q < width; q++) {
                    pr += phv[q] * cs;
                    pi -= phv[q] * sn;
                    double cn = cs * rc[i] - sn * rs[i];
                    sn = sn * rc[i] + cs * rs[i];
                    cs = cn;
                }
                re[(size_t)(k0 + i) * stride + s] = pr / ph[k0 + i] - 1.0;
                im[(size_t)(k0 + i) * stride + s] = pi / ph[k0 + i];
            }
        }
    }
}

/* The plan's error bound from the per-dim statistics. A mode k = (k_1..k_d) and a point at
 * offsets (delta_1..delta_d) see prod_d (1 + E_d) - 1 ~ sum_d E_d (products of two E are
 * ~tol^2). For random strengths (or mode coefficients) the relative l2 error^2 is the mean
 * over points of F(delta_j), F = mean over modes |sum_d E_d|^2
 *   = sum_d mean|E_d|^2 + 2 sum_{d<d'} Re(mean E_d conj(mean E_d')),
 * so max over delta of F bounds EVERY point set: sum_d offset2_d + (sum_d c_d)^2 - sum_d c_d^2
 * (c = coherent; random offsets average E_d to 0, grid-aligned ones do not, which is why 2D/3D
 * on-node errors grew faster than 1D). The band edge: all energy in one mode, random points:
 * sum_d edge2_d. The prediction is the larger of the two. */
double wf_alias_combine(int dim, const wf_alias_dim s[3]) {
    double off = 0.0, coh = 0.0, coh2 = 0.0, edge = 0.0;
    for (int d = 0; d < dim; d++) {
        off += s[d].offset2;
        coh += s[d].coherent;
        coh2 += s[d].coherent * s[d].coherent;
        edge += s[d].edge2;
    }
    off += coh * coh - coh2;
    return sqrt(fmax(off, edge));
}

/* Each dim's statistics on its own fine grid at (sigma, width); a cube's dims share one. */
static void alias_stats(int dim, const int64_t n_modes[3], double sigma, int width,
                        wf_alias_dim s[3]) {
    double beta = wf_kernel_beta(width, sigma);
    for (int d = 0; d < dim; d++) {
        if (d > 0 && n_modes[d] == n_modes[d - 1]) /* cubes: one evaluation */
            s[d] = s[d - 1];
        else
            wf_alias_dim_stats(n_modes[d], wf_fine_size(n_modes[d], sigma, width), width, beta,
                               &s[d]);
    }
}

/* Both bounds from one evaluation of each dim's statistics: the model (wf_alias_combine) and the
 * band edge on grid nodes, sum_d worst_d. */
static void alias_bounds(int dim, const int64_t n_modes[3], double sigma, int width, double *model,
                         double *worst) {
    wf_alias_dim s[3];
    alias_stats(dim, n_modes, sigma, width, s);
    *worst = 0.0;
    for (int d = 0; d < dim; d++)
        *worst += s[d].worst;
    *model = wf_alias_combine(dim, s);
}

double wf_alias_random(int dim, const int64_t n_modes[3], double sigma, int width) {
    wf_alias_dim s[3];
    alias_stats(dim, n_modes, sigma, width, s);
    double edge = 0.0;
    for (int d = 0; d < dim; d++)
        edge += s[d].edge2;
    return sqrt(edge);
}

double wf_alias_error(int dim, const int64_t n_modes[3], double sigma, int width) {
    double model, worst;
    alias_bounds(dim, n_modes, sigma, width, &model, &worst);
    return model;
}

double wf_alias_worst(int dim, const int64_t n_modes[3], double sigma, int width) {
    double model, worst;
    alias_bounds(dim, n_modes, sigma, width, &model, &worst);
    return worst;
}

/* Whether width w meets tol: its predicted error, with the safety factor. */
/* Below tol 1e-9 in 2D/3D the bound misses one case the GPU found: points on grid nodes with
 * all energy in the band-edge modes, type 2 f64 at tol 1e-12 measured 1.26x (2D, w 14) and
 * 1.81x (3D) tol on the H100 (band_edge in tests/gpu_accuracy/), while every case at tol >= 1e-9
 * stayed <= 0.69 tol. That was with the kernel's edge value 2 beta e^-beta (~tol there: points a
 * rounding off a node saw its one-sided limits), which the kernel no longer has. With the
 * continuous kernel the band edge on nodes (wf_alias_passes' worst-sum term, no factor) binds
 * there instead: a build with -DWF_ALIAS_SAFETY_HIGH=1.1 chose the same width in every
 * gpu_accuracy case (H100, worst 0.22 tol in 2D/3D below 1e-9) and in all but 2 of 504 cells
 * of a tol/N/sigma grid (2D N 2), so the factor stays: it costs nearly nothing. */
#ifndef WF_ALIAS_SAFETY_HIGH /* a -D override measures the rule without it */
#define WF_ALIAS_SAFETY_HIGH 2.5
#endif
double wf_alias_safety(int dim, double tol) {
    return dim >= 2 && tol < 1e-9 ? WF_ALIAS_SAFETY_HIGH : WF_ALIAS_SAFETY;
}

/* The band edge on grid nodes: all energy in the mode whose error factor is largest, every point
 * at that mode's worst offset (a node, for even w), so the dims' factors add with one phase:
 * sum_d worst_d, attained by such a point set, which the model's band-edge term (random offsets)
 * and worst-offset term (energy over all modes) both average away. The GPU found it at
 * upsampling factors other than 2 (H200, gpu_accuracy band_edge, type 2 on nodes, energy at the
 * band edge): 3D f32 sigma 3 w 6 measured 1.28e-5 (this bound 1.29e-5, the model 5.5e-6), 1D f64
 * sigma 3 w 12 1.34e-12 (1.37e-12 / 8.0e-13), 3D f32 sigma 1.62 w 6 2.40e-4 (2.95e-4 /
 * 8.8e-5). It is the error itself at the sampled modes and offsets (0 and 1/2 exactly), not a
 * model: no safety factor. */
int wf_alias_check(int dim, const int64_t n_modes[3], double tol, double sigma, int w,
                   double *excess) {
    double model, worst;
    alias_bounds(dim, n_modes, sigma, w, &model, &worst);
    double safe = wf_alias_safety(dim, tol) * model;
    *excess = (safe > worst ? safe : worst) / tol;
    return safe <= tol && worst <= tol;
}

int wf_alias_passes(int dim, const int64_t n_modes[3], double tol, double sigma, int w) {
    double excess;
    return wf_alias_check(dim, n_modes, tol, sigma, w, &excess);
}

int wf_kernel_width_from(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width,
                         int start) {
    for (int w = start < 2 ? 2 : start; w <= max_width; w++)
        if (wf_alias_passes(dim, n_modes, tol, sigma, w))
            return w;
    return max_width + 1;
}

/* The predicted error falls strictly with the width: walk from FINUFFT's estimate
 * ceil(-ln(tol) / (pi sqrt(1 - 1/sigma))), usually right or one off, to the smallest width that
 * passes (2-3 evaluations of ~0.2 ms; test_params compares with the search from 2). A plan
 * runs it once (params.c, wf_params_resolve), or cost.c's search a few times. */
int wf_kernel_width(int dim, const int64_t n_modes[3], double tol, double sigma, int max_width) {
    int64_t n[3] = {n_modes[0], dim >= 2 ? n_modes[1] : 1, dim >= 3 ? n_modes[2] : 1};
    double x = ceil(-log(tol) / (WF_PI * sqrt(1.0 - 1.0 / sigma)));
    int w = x < 2.0 ? 2 : x > (double)max_width ? max_width : (int)x;
    if (!wf_alias_passes(dim, n, tol, sigma, w))
        return wf_kernel_width_from(dim, n, tol, sigma, max_width, w + 1);
    while (w > 2 && wf_alias_passes(dim, n, tol, sigma, w - 1))
        w--;
    return w;
}

warpfft_status wf_params_set_kernel(wf_params *p) {
    if (p->upsampfac == 0.0)
        p->upsampfac = 2.0; /* spreadinterponly (params.c chooses for NUFFTs): the grid is fk
                             * itself, sigma only shapes the kernel */
    int wmax = wf_max_width(p->precision);
    int w = wf_kernel_width(p->dim, p->n_modes, p->tol, p->upsampfac, wmax);
    if (w > wmax)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g needs a kernel wider than %d points (the maximum for %s) at "
                        "upsampfac %g; use a larger upsampfac (up to %g) or 0 (chosen per plan)",
                        p->tol, wmax, wf_prec_name(p->precision), p->upsampfac, WF_SIGMA_MAX);
    p->width = p->width_random = w;
    p->beta = wf_kernel_beta(w, p->upsampfac);
    if (p->spreadinterponly)
        return WARPFFT_SUCCESS;
    /* A small sigma amplifies rounding at the band edge (the deconvolution's factors grow by
     * ~1000x at 1.25 in 3D): refuse a tol the rounding floor alone would miss, where sigma 2
     * would not (that floor is the promise of every plan: max(tol, tol_floor)). */
    int64_t nf[3] = {1, 1, 1}, nf2[3] = {1, 1, 1}, fine2 = 1;
    for (int d = 0; d < p->dim; d++) {
        nf[d] = wf_fine_size(p->n_modes[d], p->upsampfac, w);
        nf2[d] = wf_fine_size(p->n_modes[d], 2.0, w);
        fine2 = nf2[d] > INT64_MAX / fine2 ? INT64_MAX : fine2 * nf2[d];
    }
    /* Refused only where sigma 2 would meet tol: where it would not either (the phase term of a
     * large N, say), the plan keeps its floor like any other (max(tol, tol_floor)). */
    double fl = wf_tol_floor_of(p->precision, p->dim, p->n_modes, nf, w, p->beta);
    if (fl > p->tol && wf_tol_floor(p->precision, p->dim, p->n_modes, fine2) <= p->tol)
        return wf_error(WARPFFT_ERR_BAD_TOL,
                        "tol %g is below what %s reaches at upsampfac %g (rounding floor %.2g: "
                        "the deconvolution amplifies rounding at small upsampling factors); use "
                        "upsampfac 2, 0 (chosen per plan)%s",
                        p->tol, wf_prec_name(p->precision), p->upsampfac, fl,
                        p->precision == WARPFFT_F64 ? "" : " or f64");
    return WARPFFT_SUCCESS;
}
