/*
 * spreadinterp/sm_interp.cuh — SM interpolation: the points of one subproblem from the loaded
 * shared tile: wf_interp_sm_thread (thread per point, the default) and wf_interp_sm_team (team per
 * point: 3D f64, w >= 8); the entry point picks one by WF_INTERP_SM_TEAM.
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_SM_INTERP_CUH
#define WF_SI_SM_INTERP_CUH

__device__ __forceinline__ void wf_interp_sm_thread(const V *tile, const wf_tile &tl,
                                                    const wf_subprob &sp, const wf_pts &P,
                                                    V *__restrict__ cv,
                                                    const i64 *__restrict__ sort_idx) {
    const int npts = sp.npts, bd = blockDim.x;
    const i64 first = sp.first;
    int q = threadIdx.x;
    wf_raw nxt =
        q < npts ? wf_fetch(P, first + q, __ldg(sort_idx + first + q), nullptr) : wf_raw_none();
    for (; q < npts; q += bd) {
        const wf_raw pt = nxt;
        if (q + bd < npts)
            nxt = wf_fetch(P, first + q + bd, __ldg(sort_idx + first + q + bd), nullptr);
        const i64 j = pt.j;
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
        const int l1 = (int)(a1 - sp.o1);
#if WF_DIM == 1
        const V acc = wf_row_sum(k1, [&](int t) { return tile[l1 + t]; });
#else
        V acc = wf_vzero();
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
        const int l2 = (int)(a2 - sp.o2);
#if WF_DIM == 2
        const int base = l1 + tl.td1 * l2;
#pragma unroll 1
        for (int r = 0; r < W; ++r) {
            const T kr = wf_kernel_value(a2, r, u2, P);
            const V *row = tile + base + tl.td1 * r;
            wf_add_scaled(acc, kr, wf_row_sum(k1, [&](int t) { return row[t]; }));
        }
#else
        T k2[W];
        wf_kernel_values(k2, a2, u2, P);
        double u3;
        i64 a3;
        wf_locate_v(pt.z, P.nf3, u3, a3);
        const int l3 = (int)(a3 - sp.o3);
        const int plane_sz = tl.td1 * tl.td2;
        const int base = l1 + tl.td1 * l2 + plane_sz * l3;
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_kernel_value(a3, p, u3, P);
            V pacc = wf_vzero();
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_pick(k2, r);
                const V *row = tile + base + plane_sz * p + tl.td1 * r;
                wf_add_scaled(pacc, kr, wf_row_sum(k1, [&](int t) { return row[t]; }));
            }
            wf_add_scaled(acc, kp, pacc);
        }
#endif
#endif
        cv[j] = acc;
    }
}

__device__ __forceinline__ void wf_interp_sm_team(const V *tile, const wf_tile &tl,
                                                  const wf_subprob &sp, const wf_pts &P,
                                                  V *__restrict__ cv,
                                                  const i64 *__restrict__ sort_idx) {
    const wf_lane l = wf_lane_self();
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int base = warp * WF_TEAMS; base < sp.npts; base += nwarps * WF_TEAMS) {
        const int pi = base + l.g;
        const bool active = l.used && pi < sp.npts;
        const i64 j = active ? __ldg(sort_idx + sp.first + pi) : 0;
        const wf_team_pt pt = wf_team_point(active, sp.first + pi, j, sp.o1, sp.o2, sp.o3, l, P);
        const int i0 = (int)(pt.a1 - sp.o1) + l.q;
        V acc = wf_vzero();
#if WF_DIM == 1
        if (active)
            acc = tile[i0];
#else
        T k2[W];
        wf_team_row(k2, pt.k2, l);
        const int i2 = i0 + tl.td1 * (int)(pt.a2 - sp.o2);
#if WF_DIM == 2
        if (active) {
#pragma unroll
            for (int r = 0; r < W; ++r) {
                const V v = tile[i2 + tl.td1 * r];
                wf_vfma(acc, k2[r], v);
            }
        }
#else
        const int plane_sz = tl.td1 * tl.td2;
        const int i3 = i2 + plane_sz * (int)(pt.a3 - sp.o3);
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_team_get(pt.k3, l, p);
            if (active) {
                V pacc = wf_vzero();
#pragma unroll
                for (int r = 0; r < W; ++r) {
                    const V v = tile[i3 + plane_sz * p + tl.td1 * r];
                    wf_vfma(pacc, k2[r], v);
                }
                wf_add_scaled(acc, kp, pacc);
            }
        }
#endif
#endif
        acc = wf_vteam_sum(wf_vscale(pt.k1, acc), l);
        if (active && l.q == 0)
            cv[j] = acc;
    }
}

#endif /* WF_SI_SM_INTERP_CUH */
