/*
 * spreadinterp/gm_interp.cuh — GM interpolation (points-driven, reads fw, one write per point and
 * transform): wf_interp_gm_thread (thread per point, the default; point data loaded one iteration
 * ahead) and wf_interp_gm_team (team per point); the entry point picks one by WF_INTERP_GM_TEAM.
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_GM_INTERP_CUH
#define WF_SI_GM_INTERP_CUH

/* thread per point: register sums, one write per point and transform */
__device__ __forceinline__ void wf_interp_gm_thread(i64 M, const wf_pts &P, V *__restrict__ c,
                                                    const wf_sets &S,
                                                    const i64 *__restrict__ sort_idx,
                                                    const V *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    wf_raw nxt =
        i < M ? wf_fetch(P, i, sort_idx ? __ldg(sort_idx + i) : i, nullptr) : wf_raw_none();
    for (; i < M; i += stride) {
        const wf_raw pt = nxt;
        if (i + stride < M)
            nxt = wf_fetch(P, i + stride, sort_idx ? __ldg(sort_idx + i + stride) : i + stride,
                           nullptr);
        const i64 j = pt.j;
        i64 t0, coff;
        wf_set_span(S, i, t0, coff);
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
#if WF_DIM == 1
        for (i64 tt = 0; tt < S.tps; ++tt) {
            const V *f = fw + (t0 + tt) * nfprod;
            c[coff + tt * S.set_M + j] =
                wf_row_sum(k1, [&](int q) { return wf_ldg(f + wf_wrap1(a1 + q, P.nf1)); });
        }
#else
        int col[W];
#pragma unroll
        for (int q = 0; q < W; ++q)
            col[q] = (int)wf_wrap1(a1 + q, P.nf1);
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
#if WF_DIM == 3
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate_v(pt.z, P.nf3, u3, a3);
#endif
        for (i64 tt = 0; tt < S.tps; ++tt) {
            const V *f = fw + (t0 + tt) * nfprod;
            V acc = wf_vzero();
#if WF_DIM == 2
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_kernel_value(a2, r, u2, P);
                const V *row = f + P.nf1 * wf_wrap1(a2 + r, P.nf2);
                wf_add_scaled(acc, kr, wf_row_sum(k1, [&](int q) { return wf_ldg(row + col[q]); }));
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_kernel_value(a3, p, u3, P);
                const V *plane = f + P.nf1 * P.nf2 * wf_wrap1(a3 + p, P.nf3);
                V pacc = wf_vzero();
#pragma unroll 1
                for (int r = 0; r < W; ++r) {
                    const T kr = wf_pick(k2, r);
                    const V *row = plane + P.nf1 * wf_wrap1(a2 + r, P.nf2);
                    wf_add_scaled(pacc, kr,
                                  wf_row_sum(k1, [&](int q) { return wf_ldg(row + col[q]); }));
                }
                wf_add_scaled(acc, kp, pacc);
            }
#endif
            c[coff + tt * S.set_M + j] = acc;
        }
#endif
    }
}

/* team per point: lane q sums its column, the team adds the columns up */
__device__ __forceinline__ void wf_interp_gm_team(i64 M, const wf_pts &P, V *__restrict__ c,
                                                  const wf_sets &S,
                                                  const i64 *__restrict__ sort_idx,
                                                  const V *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const wf_lane l = wf_lane_self();
    WF_GM_TEAM_LOOP(base, M) {
        const wf_gm_team g = wf_gm_team_at(base, M, sort_idx, l, P);
        i64 t0, coff; /* per team: a warp's teams may belong to different sets */
        wf_set_span(S, base + l.g, t0, coff);
        for (i64 tt = 0; tt < S.tps; ++tt) { /* the same count for every team: warp-uniform */
            const V *f = fw + (t0 + tt) * nfprod + g.col;
            V acc = wf_vzero();
#if WF_DIM == 1
            if (g.active)
                acc = wf_ldg(f);
#elif WF_DIM == 2
            if (g.active) {
#pragma unroll
                for (int r = 0; r < W; ++r) {
                    const V v = wf_ldg(f + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2));
                    wf_vfma(acc, g.k2[r], v);
                }
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_team_get(g.pt.k3, l, p);
                if (g.active) {
                    const V *plane = f + P.nf1 * P.nf2 * wf_wrap1(g.pt.a3 + p, P.nf3);
                    V pacc = wf_vzero();
#pragma unroll
                    for (int r = 0; r < W; ++r) {
                        const V v = wf_ldg(plane + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2));
                        wf_vfma(pacc, g.k2[r], v);
                    }
                    wf_add_scaled(acc, kp, pacc);
                }
            }
#endif
            acc = wf_vteam_sum(wf_vscale(g.pt.k1, acc), l);
            if (g.active && l.q == 0)
                c[coff + tt * S.set_M + g.j] = acc;
        }
    }
}

#endif /* WF_SI_GM_INTERP_CUH */
