/*
 * spreadinterp/team.cuh — teams of W lanes per point (the team-per-point variant of GM and SM
 * kernels): a lane's place in its team (wf_lane), shuffles within a team (wf_team_get,
 * wf_team_sum, wf_team_row), a team's point and this lane's kernel values (wf_team_point), and the
 * GM batch loop with its per-team point (WF_GM_TEAM_LOOP, wf_gm_team_at).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_TEAM_CUH
#define WF_SI_TEAM_CUH

struct wf_lane {
    int q;     /* column in the team, 0..W-1 */
    int g;     /* team in the warp */
    int src0;  /* lane of the team's column 0 */
    bool used; /* g < WF_TEAMS (the last 32 % W lanes of a warp have no team) */
};

__device__ __forceinline__ wf_lane wf_lane_self() {
    wf_lane l;
    const int lane = threadIdx.x & 31;
    l.g = lane / W;
    l.q = lane - l.g * W;
    l.used = l.g < WF_TEAMS;
    l.src0 = l.used ? l.g * W : 0;
    return l;
}

/* team mate r's value of v (all 32 lanes must call) */
__device__ __forceinline__ T wf_team_get(T v, const wf_lane &l, int r) {
    return __shfl_sync(0xffffffffu, v, l.src0 + r);
}

/* sum over the team, valid in its column-0 lane (all 32 lanes must call) */
__device__ __forceinline__ T wf_team_sum(T s, const wf_lane &l) {
#pragma unroll
    for (int o = 1; o < W; o <<= 1) {
        const T y = __shfl_down_sync(0xffffffffu, s, o);
        if ((l.q & (2 * o - 1)) == 0 && l.q + o < W)
            s += y;
    }
    return s;
}

/* the same for a value, component by component */
__device__ __forceinline__ V wf_vteam_sum(V s, const wf_lane &l) {
#if WF_REAL
    return wf_team_sum(s, l);
#else
    s.x = wf_team_sum(s.x, l);
    s.y = wf_team_sum(s.y, l);
    return s;
#endif
}

/* A team's point: coordinates and this lane's kernel values (k1 at column q; k2, k3 at index
 * q, which team mates fetch). Inactive lanes get harmless values (a = o, u = 0). */
struct wf_team_pt {
    i64 j;
    i64 a1, a2, a3;
    T k1, k2, k3;
};
__device__ __forceinline__ wf_team_pt wf_team_point(bool active, i64 i, i64 j, i64 o1, i64 o2,
                                                    i64 o3, const wf_lane &l, const wf_pts &P) {
    wf_team_pt t;
    double u1 = 0.0;
    t.j = j;
    t.a1 = o1;
    t.a2 = o2;
    t.a3 = o3;
    if (active)
        wf_locate(P.x, i, P.nf1, u1, t.a1);
    t.k1 = wf_kernel_value(t.a1, l.q, u1, P);
    t.k2 = t.k3 = (T)0;
#if WF_DIM >= 2
    double u2 = 0.0;
    if (active)
        wf_locate(P.y, i, P.nf2, u2, t.a2);
    t.k2 = wf_kernel_value(t.a2, l.q, u2, P);
#endif
#if WF_DIM == 3
    double u3 = 0.0;
    if (active)
        wf_locate(P.z, i, P.nf3, u3, t.a3);
    t.k3 = wf_kernel_value(t.a3, l.q, u3, P);
#endif
    return t;
}

/* the team's W values of v (team mate r's in row[r]; all 32 lanes must call) */
__device__ __forceinline__ void wf_team_row(T (&row)[W], T v, const wf_lane &l) {
#pragma unroll
    for (int r = 0; r < W; ++r)
        row[r] = wf_team_get(v, l, r);
}

/* grid-stride loop over batches of WF_TEAMS points per warp (warp-uniform: shuffles need every
 * lane) */
#define WF_GM_TEAM_LOOP(base, M)                                                                   \
    for (i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * WF_TEAMS; base < (M);    \
         base += (((i64)gridDim.x * blockDim.x) >> 5) * WF_TEAMS)

/* GM teams: the point of this lane's team in the warp's batch starting at sorted position
 * base, its grid column for lane q, and the team's dim-2 kernel values */
struct wf_gm_team {
    bool active;
    i64 j, col;
    wf_team_pt pt;
    T k2[W];
};
__device__ __forceinline__ wf_gm_team wf_gm_team_at(i64 base, i64 M,
                                                    const i64 *__restrict__ sort_idx,
                                                    const wf_lane &l, const wf_pts &P) {
    wf_gm_team g;
    const i64 i = base + l.g;
    g.active = l.used && i < M;
    g.j = g.active ? (sort_idx ? __ldg(sort_idx + i) : i) : 0;
    g.pt = wf_team_point(g.active, i, g.j, 0, 0, 0, l, P);
    g.col = wf_wrap1(g.pt.a1 + l.q, P.nf1);
#if WF_DIM >= 2
    wf_team_row(g.k2, g.pt.k2, l);
#endif
    return g;
}

#endif /* WF_SI_TEAM_CUH */
