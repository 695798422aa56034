/*
 * spreadinterp/point.cuh — per-point helpers: the point set and kernel shape as the kernels
 * receive them (wf_pts), one coordinate's fold and first footprint index (wf_locate, wf_locate_v),
 * the kernel values over the footprint (wf_kernel_values, wf_kernel_value), the interpolation's
 * row sums (wf_row_sum, wf_add_scaled), and a point's raw data loaded one loop iteration ahead by
 * the thread-per-point loops (wf_raw, wf_fetch).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_POINT_CUH
#define WF_SI_POINT_CUH

/* The point set and kernel shape, as the kernels receive them. */
struct wf_pts {
    const T *__restrict__ x;
    const T *__restrict__ y;
    const T *__restrict__ z;
    i64 nf1, nf2, nf3;
    wf_kshape K; /* the kernel's constants (kernel_shape.h): 2/W, beta, e^-beta */
};

/* Point sets (kernels/ABI.md, "Point sets"): sets of set_M points each, one after the other in
 * sorted (and input) order; set s feeds the tps transforms s*tps .. s*tps+tps-1, whose values
 * are c[t*set_M + sort_idx[i]] for the point at sorted position i (sort_idx holds the index
 * within the set). One set (set_M = M, tps = ntransf) is the shared point set of a plain
 * batch. */
struct wf_sets {
    i64 set_M, tps;
    bool multi; /* more than one set */
};
__device__ __forceinline__ wf_sets wf_sets_of(i64 M, i64 set_M, i64 tps) {
    wf_sets S;
    S.multi = set_M > 0 && set_M < M;
    S.set_M = S.multi ? set_M : M;
    S.tps = tps;
    return S;
}
/* The transforms of the point at sorted position i: the first, t0, and the offset coff of its
 * values: transform t0 + tt reads c[coff + tt*set_M + j] (j = sort_idx[i]). */
__device__ __forceinline__ void wf_set_span(const wf_sets &S, i64 i, i64 &t0, i64 &coff) {
    const i64 s = S.multi ? wf_div(i, S.set_M) : 0;
    t0 = s * S.tps;
    coff = t0 * S.set_M;
}

/* One coordinate of point j: u in [0, nf) and the footprint's first index a = ceil(u - W/2). */
__device__ __forceinline__ void wf_locate(const T *__restrict__ x, i64 j, i64 nf, double &u,
                                          i64 &a) {
    u = wf_fold((double)__ldg(x + j), nf);
    a = wf_first_index(u, W);
}

/* phi((a + t) - u) for t = 0..W-1; (double)a + t is exact, so this is ABI.md's
 * (T)((double)(i0 + t) - u). */
__device__ __forceinline__ void wf_kernel_values(T (&k)[W], i64 a, double u, const wf_pts &P) {
    const double da = (double)a;
#pragma unroll
    for (int t = 0; t < W; ++t)
        k[t] = wf_phi((T)((da + (double)t) - u), P.K);
}

/* one value, for a run-time t */
__device__ __forceinline__ T wf_kernel_value(i64 a, int t, double u, const wf_pts &P) {
    return wf_phi((T)(((double)a + (double)t) - u), P.K);
}

/* The interpolation's inner sum over one row of the footprint: sum_t k[t] * v(t), t = 0..W-1 in
 * order, where v(t) loads the row's cell t (from the fine grid or a shared tile). */
template <typename Cell> __device__ __forceinline__ V wf_row_sum(const T (&k)[W], Cell v) {
    V s = wf_vzero();
#pragma unroll
    for (int t = 0; t < W; ++t) {
        const V c = v(t);
        wf_vfma(s, k[t], c);
    }
    return s;
}

/* acc += k * s */
__device__ __forceinline__ void wf_add_scaled(V &acc, T k, const V &s) {
    wf_vfma(acc, k, s);
}

/* A point's raw data, loaded one loop iteration ahead (software pipelining) so that the
 * latency of these random gathers overlaps the current point's work: on H100 the thread-per-
 * point interpolation waited on them most of its time. */
struct wf_raw {
    i64 j;
    T x, y, z;
    V v; /* strength (spreading) */
};
/* i = sorted position (the coordinates are stored in sorted order, ABI.md), j = the point's
 * input index (strengths). */
__device__ __forceinline__ wf_raw wf_fetch(const wf_pts &P, i64 i, i64 j,
                                           const V *__restrict__ cv) {
    wf_raw r;
    r.j = j;
    r.x = __ldg(P.x + i);
    r.y = WF_DIM >= 2 ? __ldg(P.y + i) : (T)0;
    r.z = WF_DIM >= 3 ? __ldg(P.z + i) : (T)0;
    r.v = wf_vzero();
    if (cv)
        r.v = wf_ldg(cv + j);
    return r;
}
__device__ __forceinline__ wf_raw wf_raw_none() {
    wf_raw r;
    r.j = 0;
    r.x = r.y = r.z = (T)0;
    r.v = wf_vzero();
    return r;
}
/* wf_locate for an already loaded coordinate */
__device__ __forceinline__ void wf_locate_v(T xv, i64 nf, double &u, i64 &a) {
    u = wf_fold((double)xv, nf);
    a = wf_first_index(u, W);
}

#endif /* WF_SI_POINT_CUH */
