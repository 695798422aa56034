/*
 * direct.cu — module direct_f32 / direct_f64 (-DWF_PREC=32|64): the exact sums the tests and the
 * accuracy checks compare against (kernels/ABI.md, "Module direct_p"). Slow by design
 * (O(M) or O(N) work per output) and as accurate as double allows:
 * - one block per output (grid-stride over outputs), threads stride over the terms and
 *   accumulate in double, then a block reduction (warp shuffles, then one value per warp);
 * - the phase k.x is formed with its rounding error kept: every product k_d*x_d is split
 *   exactly with an FMA and the sum with TwoSum, then reduced mod 2pi in extended precision,
 *   so exp(i k.x) is accurate to ~1e-15 even where |k.x| ~ 1e7 (where the plain double
 *   product would already be off by ~1e-9).
 */
#include "common.cuh"

#ifndef WF_PREC
#error "direct.cu needs -DWF_PREC=32|64"
#endif

/* (hi, lo) += a*b, exactly up to the final rounding of lo */
__device__ __forceinline__ void wf_acc_product(double a, double b, double &hi, double &lo) {
    /* explicit _rn intrinsics: FMA contraction would break the error-free transformations */
    const double p = __dmul_rn(a, b);
    const double pe = fma(a, b, -p);   /* exact: a*b = p + pe */
    const double s = __dadd_rn(hi, p); /* TwoSum(hi, p) */
    const double bp = __dsub_rn(s, hi);
    const double se = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bp)), __dsub_rn(p, bp));
    hi = s;
    lo += se + pe;
}

/* exp(i*sgn*(hi + lo)) as (cos, sin). The phase is reduced mod 2pi here (Cody-Waite with a
 * two-part 2pi, FMA), accurate to ~1e-15 absolute for |phase| < 2^40, and the reduced angle
 * goes to sincospi, whose argument reduction is exact: plain sincos would pull in the
 * library's Payne-Hanek slow path (a local-memory stack frame) for huge arguments. */
__device__ __forceinline__ void wf_cis(double sgn, double hi, double lo, double &cs, double &sn) {
    const double two_pi_hi = 6.283185307179586232;   /* 2pi rounded to double */
    const double two_pi_lo = 2.4492935982947064e-16; /* 2pi - two_pi_hi */
    const double n = rint(hi * WF_INV_2PI);
    double r = fma(-n, two_pi_hi, hi);
    r = fma(-n, two_pi_lo, r);
    r += lo;
    sincospi(sgn * r * 0.31830988618379067154, &sn, &cs); /* r/pi in [-1, 1] */
}

/* Sum of (re, im) over the block, returned to thread 0 (blockDim.x a multiple of 32). Ends
 * with a barrier, so it can be called again right away. */
__device__ __forceinline__ void wf_block_sum(double &re, double &im) {
    __shared__ double s_re[32], s_im[32];
    const unsigned full = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        re += __shfl_down_sync(full, re, o);
        im += __shfl_down_sync(full, im, o);
    }
    if (lane == 0) {
        s_re[warp] = re;
        s_im[warp] = im;
    }
    __syncthreads();
    if (warp == 0) {
        re = lane < nwarps ? s_re[lane] : 0.0;
        im = lane < nwarps ? s_im[lane] : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            re += __shfl_down_sync(full, re, o);
            im += __shfl_down_sync(full, im, o);
        }
    }
    __syncthreads();
}

/* re + i im += *v exp(i sgn (hi + lo)): one term of a direct sum, its phase from wf_cis. */
__device__ __forceinline__ void wf_add_term(double sgn, double hi, double lo,
                                            const wf_cplx *__restrict__ v, double &re, double &im) {
    double cs, sn;
    wf_cis(sgn, hi, lo, cs, sn);
    const wf_cplx w = wf_ldg(v);
    const double vr = (double)w.x, vi = (double)w.y;
    re += vr * cs - vi * sn;
    im += vr * sn + vi * cs;
}

/* type 1: out[s] = Σ_j c[j] exp(i sgn k_s.x_j) */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(direct_t1)(i32 dim, i64 M, const wf_real *__restrict__ x,
                        const wf_real *__restrict__ y, const wf_real *__restrict__ z,
                        const wf_cplx *__restrict__ c, i64 n_out, const i64 *__restrict__ k_list,
                        i32 iflag, double2 *__restrict__ out) {
    const double sgn = iflag >= 0 ? 1.0 : -1.0;
    for (i64 s = blockIdx.x; s < n_out; s += gridDim.x) {
        const double k1 = (double)__ldg(k_list + 3 * s);
        const double k2 = (double)__ldg(k_list + 3 * s + 1);
        const double k3 = (double)__ldg(k_list + 3 * s + 2);
        double re = 0.0, im = 0.0;
        for (i64 j = threadIdx.x; j < M; j += blockDim.x) {
            double hi = 0.0, lo = 0.0;
            wf_acc_product(k1, (double)__ldg(x + j), hi, lo);
            if (dim >= 2)
                wf_acc_product(k2, (double)__ldg(y + j), hi, lo);
            if (dim >= 3)
                wf_acc_product(k3, (double)__ldg(z + j), hi, lo);
            wf_add_term(sgn, hi, lo, c + j, re, im);
        }
        wf_block_sum(re, im);
        if (threadIdx.x == 0)
            out[s] = make_double2(re, im);
    }
}

/* Mode k of index i along a dimension of N modes (modeord 0: CMCL, 1: FFT order). */
__device__ __forceinline__ i64 wf_direct_mode(i64 i, i64 N, i32 modeord) {
    if (modeord == 0)
        return i - N / 2;
    return i < (N + 1) / 2 ? i : i - N;
}

/* type 2: out[s] = Σ_k fk[i(k)] exp(i sgn k.x_{j_list[s]}) */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(direct_t2)(i32 dim, i64 n_out, const i64 *__restrict__ j_list,
                        const wf_real *__restrict__ x, const wf_real *__restrict__ y,
                        const wf_real *__restrict__ z, const wf_cplx *__restrict__ fk, i64 N1,
                        i64 N2, i64 N3, i32 modeord, i32 iflag, double2 *__restrict__ out) {
    const double sgn = iflag >= 0 ? 1.0 : -1.0;
    const i64 Nprod = N1 * N2 * N3;
    for (i64 s = blockIdx.x; s < n_out; s += gridDim.x) {
        const i64 j = __ldg(j_list + s);
        const double xj = (double)__ldg(x + j);
        const double yj = dim >= 2 ? (double)__ldg(y + j) : 0.0;
        const double zj = dim >= 3 ? (double)__ldg(z + j) : 0.0;
        double re = 0.0, im = 0.0;
        for (i64 idx = threadIdx.x; idx < Nprod; idx += blockDim.x) {
            i64 i1, i2, i3;
            if (Nprod <= 0xffffffffll) { /* 32-bit division when it fits */
                const unsigned r = (unsigned)idx / (unsigned)N1;
                i1 = (unsigned)idx - r * (unsigned)N1;
                i2 = r % (unsigned)N2;
                i3 = r / (unsigned)N2;
            } else {
                const i64 r = idx / N1;
                i1 = idx - r * N1;
                i2 = r % N2;
                i3 = r / N2;
            }
            double hi = 0.0, lo = 0.0;
            wf_acc_product((double)wf_direct_mode(i1, N1, modeord), xj, hi, lo);
            if (dim >= 2)
                wf_acc_product((double)wf_direct_mode(i2, N2, modeord), yj, hi, lo);
            if (dim >= 3)
                wf_acc_product((double)wf_direct_mode(i3, N3, modeord), zj, hi, lo);
            wf_add_term(sgn, hi, lo, fk + idx, re, im);
        }
        wf_block_sum(re, im);
        if (threadIdx.x == 0)
            out[s] = make_double2(re, im);
    }
}

/* type 3: out[i] = Σ_j c[j] exp(i sgn s_k.x_j), k = k_list[i], targets (s, t, u) */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(direct_t3)(i32 dim, i64 M, const wf_real *__restrict__ x,
                        const wf_real *__restrict__ y, const wf_real *__restrict__ z,
                        const wf_cplx *__restrict__ c, i64 n_out, const i64 *__restrict__ k_list,
                        const wf_real *__restrict__ s, const wf_real *__restrict__ t,
                        const wf_real *__restrict__ u, i32 iflag, double2 *__restrict__ out) {
    const double sgn = iflag >= 0 ? 1.0 : -1.0;
    for (i64 o = blockIdx.x; o < n_out; o += gridDim.x) {
        const i64 k = __ldg(k_list + o);
        const double k1 = (double)__ldg(s + k);
        const double k2 = dim >= 2 ? (double)__ldg(t + k) : 0.0;
        const double k3 = dim >= 3 ? (double)__ldg(u + k) : 0.0;
        double re = 0.0, im = 0.0;
        for (i64 j = threadIdx.x; j < M; j += blockDim.x) {
            double hi = 0.0, lo = 0.0;
            wf_acc_product(k1, (double)__ldg(x + j), hi, lo);
            if (dim >= 2)
                wf_acc_product(k2, (double)__ldg(y + j), hi, lo);
            if (dim >= 3)
                wf_acc_product(k3, (double)__ldg(z + j), hi, lo);
            wf_add_term(sgn, hi, lo, c + j, re, im);
        }
        wf_block_sum(re, im);
        if (threadIdx.x == 0)
            out[o] = make_double2(re, im);
    }
}
