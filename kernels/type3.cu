/*
 * type3.cu — module type3_f32 / type3_f64 (-DWF_PREC=32|64): the steps of a type-3 transform
 * around the spreading and the inner type-2 step (kernels/ABI.md, "Module type3_p"):
 * - bounds of the sources and targets (min/max per dim, non-finite check),
 * - rescaling of sources and targets in double, with their phase and deconvolution factors,
 * - the per-execute pre-phase of the strengths and post-factor of the outputs.
 * `p` is the user's precision (WF_PREC); `q` the precision of the internal pipeline (f32 plans
 * may run the inner steps in f64 so that rescaled coordinates keep enough bits). Names:
 * wf_t3_<op>_<p>_<q>, e.g. wf_t3_sources_f32_f64; the minmax kernel only has <p>.
 */
#include "common.cuh"

#ifndef WF_PREC
#error "type3.cu needs -DWF_PREC=32|64"
#endif

/* Geometry block (doubles), written by the host at setpts3 (c_core/src/params/type3_params.h
 * mirrors it). */
#define WF_T3_G_C     0  /* source centres C_d */
#define WF_T3_G_XS    3  /* 1 / gamma_d: x' = (x - C) / gamma */
#define WF_T3_G_D     6  /* target centres D_d */
#define WF_T3_G_SS    9  /* h_d gamma_d: s' = h gamma (s - D) */
#define WF_T3_G_GAM   12 /* gamma_d: xi = gamma (s - D) */
#define WF_T3_G_QUAD  16 /* per dim d: a[NQ] then g[NQ] at 16 + 2*NQ*d (a in units of pi) */
#define WF_T3_NQ      64 /* quadrature nodes per dim, at most */

/* Orders doubles as unsigned integers (non-NaN): key(a) < key(b) iff a < b. */
__device__ __forceinline__ u64 wf_t3_key(double v) {
    const u64 b = (u64)__double_as_longlong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

/* min/max over points of (x, y, z): keys[d] = min key, keys[3 + d] = max key (d < dim),
 * atomically combined with what keys holds (host initialises mins to ~0, maxes to 0).
 * A NaN/inf coordinate sets *bad_flag and is left out. blockDim.x = 256. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(t3_minmax)(i64 n, i32 dim, const wf_real *__restrict__ x,
                        const wf_real *__restrict__ y, const wf_real *__restrict__ z,
                        u64 *__restrict__ keys, i32 *bad_flag) {
    __shared__ double s_lo[3][8], s_hi[3][8];
    double lo[3], hi[3];
    const wf_real *arr[3] = {x, y, z};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        lo[d] = __longlong_as_double(0x7ff0000000000000ll); /* +inf */
        hi[d] = -lo[d];
    }
    bool bad = false;
    WF_GRID_STRIDE(j, n) {
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (d >= dim)
                break;
            const double v = (double)__ldg(arr[d] + j);
            if (!isfinite(v)) {
                bad = true;
                continue;
            }
            lo[d] = fmin(lo[d], v);
            hi[d] = fmax(hi[d], v);
        }
    }
    if (bad)
        *bad_flag = 1;
    const unsigned full = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            lo[d] = fmin(lo[d], __shfl_down_sync(full, lo[d], o));
            hi[d] = fmax(hi[d], __shfl_down_sync(full, hi[d], o));
        }
        if (lane == 0) {
            s_lo[d][warp] = lo[d];
            s_hi[d][warp] = hi[d];
        }
    }
    __syncthreads();
    if (threadIdx.x < 3 && (int)threadIdx.x < dim) {
        const int d = threadIdx.x;
        double l = s_lo[d][0], h = s_hi[d][0];
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
            l = fmin(l, s_lo[d][w]);
            h = fmax(h, s_hi[d][w]);
        }
        if (l <= h) { /* this block saw a finite value */
            atomicMin(keys + d, wf_t3_key(l));
            atomicMax(keys + 3 + d, wf_t3_key(h));
        }
    }
}

/* (hi, lo) += a*b exactly up to the final rounding of lo, and exp(i sgn (hi + lo)) with a
 * Cody-Waite reduction mod 2pi and sincospi: the same error-free steps as kernels/direct.cu
 * (copied: direct.cu keeps its own), so phases like s.C ~ 1e7 stay accurate to ~1e-15 and no
 * Payne-Hanek slow path (a stack frame) is pulled in. */
__device__ __forceinline__ void wf_t3_acc(double a, double b, double &hi, double &lo) {
    const double p = __dmul_rn(a, b);
    const double pe = fma(a, b, -p);
    const double s = __dadd_rn(hi, p);
    const double bp = __dsub_rn(s, hi);
    const double se = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bp)), __dsub_rn(p, bp));
    hi = s;
    lo += se + pe;
}
__device__ __forceinline__ void wf_t3_cis(double sgn, double hi, double lo, double &cs,
                                          double &sn) {
    const double two_pi_hi = 6.283185307179586232;
    const double two_pi_lo = 2.4492935982947064e-16;
    const double n = rint(hi * WF_INV_2PI);
    double r = fma(-n, two_pi_hi, hi);
    r = fma(-n, two_pi_lo, r);
    r += lo;
    sincospi(sgn * r * 0.31830988618379067154, &sn, &cs);
}

template <typename Q> struct wf_t3_cplx;
template <> struct wf_t3_cplx<float> {
    typedef float2 type;
};
template <> struct wf_t3_cplx<double> {
    typedef double2 type;
};

/* Sources: x'_d = (Q)((x_d - C_d) / gamma_d) in double; with `phase`, also the pre-phase
 * pre[j] = exp(i sgn sum_d D_d (x_d - C_d)). Unused dims' arrays are ignored (may be NULL). */
template <typename Q>
__device__ __forceinline__ void
wf_t3_sources(i64 M, i32 dim, const wf_real *__restrict__ x, const wf_real *__restrict__ y,
              const wf_real *__restrict__ z, const double *__restrict__ geom, i32 iflag, i32 phase,
              Q *__restrict__ xp, Q *__restrict__ yp, Q *__restrict__ zp,
              typename wf_t3_cplx<Q>::type *__restrict__ pre) {
    const double sgn = iflag >= 0 ? 1.0 : -1.0;
    const wf_real *in[3] = {x, y, z};
    Q *out[3] = {xp, yp, zp};
    WF_GRID_STRIDE(j, M) {
        double ph = 0.0, pl = 0.0;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (d >= dim)
                break;
            const double v = (double)__ldg(in[d] + j) - geom[WF_T3_G_C + d];
            out[d][j] = (Q)(v * geom[WF_T3_G_XS + d]);
            wf_t3_acc(geom[WF_T3_G_D + d], v, ph, pl);
        }
        if (phase) {
            double sn, cs;
            wf_t3_cis(sgn, ph, pl, cs, sn);
            typename wf_t3_cplx<Q>::type r;
            r.x = (Q)cs;
            r.y = (Q)sn;
            pre[j] = r;
        }
    }
}

/* Targets: s'_d = (Q)(h_d gamma_d (s_d - D_d)) in double, and the post-factor
 * post[k] = exp(i sgn sum_d C_d s_d) (with `phase`; else 1) / prod_d phihat_d(xi_d),
 * xi_d = gamma_d (s_d - D_d), phihat_d(xi) = sum_q g[q] cos(pi xi a[q]) (the spreading kernel's
 * Fourier transform on the outer grid, c_core/src/params/kernel.c's half rule, nq nodes per
 * dim). */
template <typename Q>
__device__ __forceinline__ void
wf_t3_targets(i64 K, i32 dim, const wf_real *__restrict__ s, const wf_real *__restrict__ t,
              const wf_real *__restrict__ u, const double *__restrict__ geom, i32 nq, i32 iflag,
              i32 phase, Q *__restrict__ sp, Q *__restrict__ tp, Q *__restrict__ up,
              typename wf_t3_cplx<Q>::type *__restrict__ post) {
    const double sgn = iflag >= 0 ? 1.0 : -1.0;
    const wf_real *in[3] = {s, t, u};
    Q *out[3] = {sp, tp, up};
    WF_GRID_STRIDE(k, K) {
        double ph = 0.0, pl = 0.0, ker = 1.0;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (d >= dim)
                break;
            const double sv = (double)__ldg(in[d] + k);
            const double v = sv - geom[WF_T3_G_D + d];
            out[d][k] = (Q)(v * geom[WF_T3_G_SS + d]);
            const double xi = v * geom[WF_T3_G_GAM + d];
            const double *a = geom + WF_T3_G_QUAD + 2 * WF_T3_NQ * d, *g = a + WF_T3_NQ;
            double acc = 0.0;
            for (int q = 0; q < nq; ++q)
                acc += g[q] * cospi(xi * a[q]);
            ker *= acc;
            wf_t3_acc(geom[WF_T3_G_C + d], sv, ph, pl);
        }
        const double f = 1.0 / ker;
        double sn = 0.0, cs = 1.0;
        if (phase)
            wf_t3_cis(sgn, ph, pl, cs, sn);
        typename wf_t3_cplx<Q>::type r;
        r.x = (Q)(f * cs);
        r.y = (Q)(f * sn);
        post[k] = r;
    }
}

/* c'[t*M + j] = c[t*M + j] * pre[s*M + j] (pre NULL: 1), converted to Q, for the n_sets point
 * sets of M sources (ABI.md, "Point sets": set s feeds the tps = ntransf / n_sets transforms
 * t = s*tps ..), one item per source of every set (n_sets = 1: pre[j] for every transform). */
template <typename Q>
__device__ __forceinline__ void wf_t3_prephase(i64 M, i64 ntransf, const wf_cplx *__restrict__ c,
                                               const typename wf_t3_cplx<Q>::type *__restrict__ pre,
                                               typename wf_t3_cplx<Q>::type *__restrict__ out,
                                               i64 n_sets) {
    if (n_sets < 1)
        n_sets = 1;
    const i64 tps = n_sets > 1 ? wf_div(ntransf, n_sets) : ntransf;
    WF_GRID_STRIDE(sj, n_sets * M) {
        const i64 s = wf_set_of(sj, M, n_sets), j = sj - s * M;
        double pr = 1.0, pi = 0.0;
        if (pre) {
            const typename wf_t3_cplx<Q>::type p = pre[sj];
            pr = (double)p.x;
            pi = (double)p.y;
        }
        for (i64 t = s * tps; t < (s + 1) * tps; ++t) {
            const wf_cplx v = wf_ldg(c + t * M + j);
            const Q vr = (Q)v.x, vi = (Q)v.y;
            typename wf_t3_cplx<Q>::type r;
            r.x = vr * (Q)pr - vi * (Q)pi;
            r.y = vr * (Q)pi + vi * (Q)pr;
            out[t * M + j] = r;
        }
    }
}

/* out[t*K + k] = in[t*K + k] * fac[s*K + k], converted to the user's precision, for the n_sets
 * target sets of K targets (set s: transforms t = s*tps .., as wf_t3_prephase). in and out may
 * be the same array (Q = the user's precision): each element is read, then written, by one
 * thread. */
template <typename Q>
__device__ __forceinline__ void wf_t3_post(i64 K, i64 ntransf,
                                           const typename wf_t3_cplx<Q>::type *in,
                                           const typename wf_t3_cplx<Q>::type *__restrict__ fac,
                                           wf_cplx *out, i64 n_sets) {
    if (n_sets < 1)
        n_sets = 1;
    const i64 tps = n_sets > 1 ? wf_div(ntransf, n_sets) : ntransf;
    WF_GRID_STRIDE(sk, n_sets * K) {
        const i64 s = wf_set_of(sk, K, n_sets), k = sk - s * K;
        const typename wf_t3_cplx<Q>::type f = fac[sk];
        for (i64 t = s * tps; t < (s + 1) * tps; ++t) {
            const typename wf_t3_cplx<Q>::type v = in[t * K + k];
            wf_cplx r;
            r.x = (wf_real)(v.x * f.x - v.y * f.y);
            r.y = (wf_real)(v.x * f.y + v.y * f.x);
            out[t * K + k] = r;
        }
    }
}

/* extern "C" entry points for one inner precision Q with suffix QS (f32 / f64) */
#define WF_T3NAME(op, qs) WF_PASTE8(wf_t3_, op, _, WF_PSUF, _, qs, , )
#define WF_T3_ENTRIES(Q, QC, qs)                                                                   \
    extern "C" __global__ void __launch_bounds__(256) WF_T3NAME(sources, qs)(                      \
        i64 M, i32 dim, const wf_real *__restrict__ x, const wf_real *__restrict__ y,              \
        const wf_real *__restrict__ z, const double *__restrict__ geom, i32 iflag, i32 phase,      \
        Q *__restrict__ xp, Q *__restrict__ yp, Q *__restrict__ zp, QC *__restrict__ pre) {       \
        wf_t3_sources<Q>(M, dim, x, y, z, geom, iflag, phase, xp, yp, zp, pre);                    \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) WF_T3NAME(targets, qs)(                      \
        i64 K, i32 dim, const wf_real *__restrict__ s, const wf_real *__restrict__ t,              \
        const wf_real *__restrict__ u, const double *__restrict__ geom, i32 nq, i32 iflag,         \
        i32 phase, Q *__restrict__ sp, Q *__restrict__ tp, Q *__restrict__ up,                     \
        QC *__restrict__ post) {                                                                   \
        wf_t3_targets<Q>(K, dim, s, t, u, geom, nq, iflag, phase, sp, tp, up, post);               \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                              \
        WF_T3NAME(prephase, qs)(i64 M, i64 ntransf, const wf_cplx *__restrict__ c,                 \
                                const QC *__restrict__ pre, QC *__restrict__ out, i64 n_sets) {    \
        wf_t3_prephase<Q>(M, ntransf, c, pre, out, n_sets);                                        \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                              \
        WF_T3NAME(post, qs)(i64 K, i64 ntransf, const QC *in, const QC *__restrict__ fac,          \
                            wf_cplx *out, i64 n_sets) {                                            \
        wf_t3_post<Q>(K, ntransf, in, fac, out, n_sets);                                           \
    }

WF_T3_ENTRIES(double, double2, f64)
#if WF_PREC == 32
WF_T3_ENTRIES(float, float2, f32)
#endif
