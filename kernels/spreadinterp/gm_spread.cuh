/*
 * spreadinterp/gm_spread.cuh — GM spreading (points-driven, global atomics into fw):
 * wf_spread_gm_thread (thread per point) and wf_spread_gm_team (team per point, the default); the
 * entry point picks one by WF_SPREAD_GM_TEAM.
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_GM_SPREAD_CUH
#define WF_SI_GM_SPREAD_CUH

/* thread per point: global atomics over the footprint */
__device__ __forceinline__ void wf_spread_gm_thread(i64 M, const wf_pts &P, const V *__restrict__ c,
                                                    const wf_sets &S,
                                                    const i64 *__restrict__ sort_idx,
                                                    V *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    WF_GRID_STRIDE(i, M) {
        const i64 j = sort_idx ? __ldg(sort_idx + i) : i;
        i64 t0, coff;
        wf_set_span(S, i, t0, coff);
        double u1;
        i64 a1;
        wf_locate(P.x, i, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
#if WF_DIM == 1
        for (i64 tt = 0; tt < S.tps; ++tt) {
            const V v = wf_ldg(c + coff + tt * S.set_M + j);
            V *f = fw + (t0 + tt) * nfprod;
#pragma unroll
            for (int q = 0; q < W; ++q)
                wf_vatomic_add(f + wf_wrap1(a1 + q, P.nf1), wf_vscale(k1[q], v));
        }
#else
        int col[W]; /* wrapped dim-1 indices (nf1 < 2^31 for dim >= 2) */
#pragma unroll
        for (int q = 0; q < W; ++q)
            col[q] = (int)wf_wrap1(a1 + q, P.nf1);
        double u2;
        i64 a2;
        wf_locate(P.y, i, P.nf2, u2, a2);
#if WF_DIM == 3
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate(P.z, i, P.nf3, u3, a3);
#endif
        for (i64 tt = 0; tt < S.tps; ++tt) {
            const V v = wf_ldg(c + coff + tt * S.set_M + j);
            V *f = fw + (t0 + tt) * nfprod;
#if WF_DIM == 2
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_kernel_value(a2, r, u2, P);
                V *row = f + P.nf1 * wf_wrap1(a2 + r, P.nf2);
#pragma unroll
                for (int q = 0; q < W; ++q)
                    wf_vatomic_add(row + col[q], wf_vscale(k1[q] * kr, v));
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_kernel_value(a3, p, u3, P);
                V *plane = f + P.nf1 * P.nf2 * wf_wrap1(a3 + p, P.nf3);
#pragma unroll 1
                for (int r = 0; r < W; ++r) {
                    const T kr = kp * wf_pick(k2, r);
                    V *row = plane + P.nf1 * wf_wrap1(a2 + r, P.nf2);
#pragma unroll
                    for (int q = 0; q < W; ++q)
                        wf_vatomic_add(row + col[q], wf_vscale(k1[q] * kr, v));
                }
            }
#endif
        }
#endif
    }
}

/* team per point: each team row is W consecutive cells (1-2 cache lines per atomic) */
__device__ __forceinline__ void wf_spread_gm_team(i64 M, const wf_pts &P, const V *__restrict__ c,
                                                  const wf_sets &S,
                                                  const i64 *__restrict__ sort_idx,
                                                  V *__restrict__ fw) {
    const i64 nfprod = P.nf1 * P.nf2 * P.nf3;
    const wf_lane l = wf_lane_self();
    WF_GM_TEAM_LOOP(base, M) {
        const wf_gm_team g = wf_gm_team_at(base, M, sort_idx, l, P);
        i64 t0, coff; /* per team: a warp's teams may belong to different sets */
        wf_set_span(S, base + l.g, t0, coff);
        for (i64 tt = 0; tt < S.tps; ++tt) { /* the same count for every team: warp-uniform */
            V v = wf_vzero();
            if (g.active)
                v = wf_ldg(c + coff + tt * S.set_M + g.j);
            const V vk = wf_vscale(g.pt.k1, v);
            V *f = fw + (t0 + tt) * nfprod + g.col;
#if WF_DIM == 1
            if (g.active)
                wf_vatomic_add(f, vk);
#elif WF_DIM == 2
            if (g.active) {
#pragma unroll
                for (int r = 0; r < W; ++r)
                    wf_vatomic_add(f + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2),
                                   wf_vscale(g.k2[r], vk));
            }
#else
#pragma unroll 1
            for (int p = 0; p < W; ++p) {
                const T kp = wf_team_get(g.pt.k3, l, p);
                if (g.active) {
                    V *plane = f + P.nf1 * P.nf2 * wf_wrap1(g.pt.a3 + p, P.nf3);
                    const V pv = wf_vscale(kp, vk);
#pragma unroll
                    for (int r = 0; r < W; ++r)
                        wf_vatomic_add(plane + P.nf1 * wf_wrap1(g.pt.a2 + r, P.nf2),
                                       wf_vscale(g.k2[r], pv));
                }
            }
#endif
        }
    }
}

#endif /* WF_SI_GM_SPREAD_CUH */
