/*
 * toeplitz.cu — module toeplitz_f32 / toeplitz_f64 (-DWF_PREC=32|64): the pointwise steps of the
 * Toeplitz normal operator T = A^H W A (kernels/ABI.md, "Module toeplitz_p";
 * c_core/src/plans/toeplitz.c runs them around cuFFT):
 * - the kernel's strengths from real weights (or ones) before its type-1 transform,
 * - the kernel's spectrum from the transformed kernel (real part or complex, scaled),
 * - zero-padding of the mode arrays into the operator's grid, the product with the spectrum
 *   (batched over the transforms), and the crop back to the modes.
 * The grid of ntransf transforms interleaves the batch just below the slowest dimension
 * (ABI.md), so that the FFTs can skip the padded half of the slowest dimension.
 */
#include "common.cuh"

#ifndef WF_PREC
#error "toeplitz.cu needs -DWF_PREC=32|64"
#endif

/* q = a / b, r = a % b for a >= 0, b > 0: 32-bit when both fit. */
__device__ __forceinline__ void wf_toep_divmod(i64 a, i64 b, i64 &q, i64 &r) {
    if (((u64)a | (u64)b) <= 0xffffffffull) {
        const unsigned qa = (unsigned)a / (unsigned)b;
        q = qa;
        r = (unsigned)a - qa * (unsigned)b;
    } else {
        q = a / b;
        r = a - q * b;
    }
}

/* Index in a mode array of N modes (modeord 0: CMCL, 1: FFT order) of grid position l < N
 * (position l holds mode k = l - N/2). */
__device__ __forceinline__ i64 wf_toep_index_of_pos(i64 l, i64 N, i32 modeord) {
    if (modeord == 0)
        return l;
    const i64 k = l - N / 2;
    return k >= 0 ? k : N + k;
}

/* A grid row (dimension-1 line of L1 elements) q -> (transform t, l2, l3) by the batch-
 * interleaved layout: dim 1: q = t; dim 2: q = l2*B + t; dim 3: q = (l3*B + t)*L2 + l2. */
__device__ __forceinline__ void wf_toep_row(i32 dim, i64 q, i64 B, i64 L2, i64 &t, i64 &l2,
                                            i64 &l3) {
    l2 = l3 = 0;
    if (dim == 1) {
        t = q;
    } else if (dim == 2) {
        wf_toep_divmod(q, B, l2, t);
    } else {
        i64 ot;
        wf_toep_divmod(q, L2, ot, l2);
        wf_toep_divmod(ot, B, l3, t);
    }
}

/* c[j] = (w[j], 0), or (1, 0) with w = NULL: the strengths of the kernel's type-1 transform for
 * real weights or none. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_weights)(i64 M, const wf_real *__restrict__ w, wf_cplx *__restrict__ c) {
    WF_GRID_STRIDE(j, M) {
        wf_cplx v;
        v.x = w ? w[j] : (wf_real)1;
        v.y = 0;
        c[j] = v;
    }
}

/* The spectrum from the FFT of the kernel: out[l] = scale * Re(in[l]) (real, a T array) or
 * scale * in[l] (complex, a cT array), l < n. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_spectrum)(i64 n, wf_real scale, i32 real, const wf_cplx *__restrict__ in,
                            void *__restrict__ out) {
    WF_GRID_STRIDE(l, n) {
        const wf_cplx v = in[l];
        if (real) {
            ((wf_real *)out)[l] = v.x * scale;
        } else {
            wf_cplx r;
            r.x = v.x * scale;
            r.y = v.y * scale;
            ((wf_cplx *)out)[l] = r;
        }
    }
}

/* Zero-padding: every element of the grid g (ntransf transforms) is written: grid position
 * (l1, l2, l3) of transform t holds fk[t][i(l)] where every l_d < N_d (i_d the mode index of
 * position l_d), else 0. Walked as (row, chunk) items, a chunk being blockDim.x consecutive
 * elements of a row, one item per block and grid-stride step: the row's logic is block-uniform
 * and the stores coalesced. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_pad)(i32 dim, i64 N1, i64 N2, i64 N3, i64 L1, i64 L2, i64 L3, i64 ntransf,
                       i32 modeord, const wf_cplx *__restrict__ fk, wf_cplx *__restrict__ g) {
    const i64 Nprod = N1 * N2 * N3;
    const i64 nchunk = (L1 + blockDim.x - 1) / blockDim.x;
    const i64 nrows = ntransf * L2 * L3;
    wf_cplx zero;
    zero.x = 0;
    zero.y = 0;
    for (i64 item = blockIdx.x; item < nrows * nchunk; item += gridDim.x) {
        i64 q, chunk, t, l2, l3;
        wf_toep_divmod(item, nchunk, q, chunk);
        wf_toep_row(dim, q, ntransf, L2, t, l2, l3);
        const bool row_in = l2 < N2 && l3 < N3;
        const i64 src = t * Nprod + N1 * (wf_toep_index_of_pos(l2, N2, modeord) +
                                          N2 * wf_toep_index_of_pos(l3, N3, modeord));
        const i64 l1 = chunk * blockDim.x + threadIdx.x;
        if (l1 >= L1)
            continue;
        g[q * L1 + l1] =
            row_in && l1 < N1 ? fk[src + wf_toep_index_of_pos(l1, N1, modeord)] : zero;
    }
}

/* The crop: fk[t][i] = g at grid position l_d = k_d + N_d/2 of the mode k of index i, for every
 * mode index and transform (one thread per output element, 32-bit index splitting where the
 * sizes fit). fk may be the array the pad read. */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_crop)(i32 dim, i64 N1, i64 N2, i64 N3, i64 L1, i64 L2, i64 L3, i64 ntransf,
                        i32 modeord, const wf_cplx *__restrict__ g, wf_cplx *__restrict__ fk) {
    (void)L3;
    const i64 Nprod = N1 * N2 * N3;
    WF_GRID_STRIDE(idx, Nprod * ntransf) {
        i64 t, i, rest, i1, i2, i3;
        wf_toep_divmod(idx, Nprod, t, i);
        wf_toep_divmod(i, N1, rest, i1);
        wf_toep_divmod(rest, N2, i3, i2);
        /* position of index i_d: the inverse of wf_toep_index_of_pos */
        const i64 p1 = modeord == 0 ? i1 : (i1 < (N1 + 1) / 2 ? i1 : i1 - N1) + N1 / 2;
        const i64 p2 = modeord == 0 ? i2 : (i2 < (N2 + 1) / 2 ? i2 : i2 - N2) + N2 / 2;
        const i64 p3 = modeord == 0 ? i3 : (i3 < (N3 + 1) / 2 ? i3 : i3 - N3) + N3 / 2;
        i64 q;
        if (dim == 1)
            q = t;
        else if (dim == 2)
            q = p2 * ntransf + t;
        else
            q = (p3 * ntransf + t) * L2 + p2;
        fk[idx] = g[q * L1 + p1];
    }
}

/* g[(o*B + t)*P + r] *= s[o*P + r] for every spectrum element o*P + r < Lo*P and transform t:
 * the spectrum is read once per element, the B transforms' elements (P apart) follow. Real
 * spectrum (weights real or none). */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_mulr)(i64 P, i64 Lo, i64 ntransf, const wf_real *__restrict__ s,
                        wf_cplx *__restrict__ g) {
    WF_GRID_STRIDE(e, P * Lo) {
        i64 o, r;
        wf_toep_divmod(e, P, o, r);
        const wf_real v = s[e];
        wf_cplx *row = g + o * ntransf * P + r;
        for (i64 t = 0; t < ntransf; ++t) {
            wf_cplx a = row[t * P];
            a.x *= v;
            a.y *= v;
            row[t * P] = a;
        }
    }
}

/* As toep_mulr with a complex spectrum, conjugated when conj != 0 (the adjoint operator). */
extern "C" __global__ void __launch_bounds__(256)
    WF_PNAME(toep_mulc)(i64 P, i64 Lo, i64 ntransf, i32 conj, const wf_cplx *__restrict__ s,
                        wf_cplx *__restrict__ g) {
    WF_GRID_STRIDE(e, P * Lo) {
        i64 o, r;
        wf_toep_divmod(e, P, o, r);
        wf_cplx v = s[e];
        if (conj)
            v.y = -v.y;
        wf_cplx *row = g + o * ntransf * P + r;
        for (i64 t = 0; t < ntransf; ++t) {
            const wf_cplx a = row[t * P];
            wf_cplx b;
            b.x = a.x * v.x - a.y * v.y;
            b.y = a.x * v.y + a.y * v.x;
            row[t * P] = b;
        }
    }
}
