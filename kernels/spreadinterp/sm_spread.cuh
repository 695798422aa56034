/*
 * spreadinterp/sm_spread.cuh — SM spreading: the points of one subproblem into the zeroed shared
 * tile, four ways (the entry point picks one by WF_SPREAD_SM_OD2, _OD, _FIX, _TEAM):
 * wf_spread_sm_thread (thread per point: 1D; f32 in fixed point), wf_spread_sm_team (team per
 * point: 2D f32, in fixed point), wf_spread_sm_od (output-driven, one step of disjoint points at a
 * time: 3D) and wf_spread_sm_od2 (output-driven, several points per step: 2D f64).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, V, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_SM_SPREAD_CUH
#define WF_SI_SM_SPREAD_CUH

/* FIX (1D f32): add in fixed point (wf_tile_add_rows_fix), strengths times scale. */
template <bool FIX = false>
__device__ __forceinline__ void
wf_spread_sm_thread(V *tile, const wf_tile &tl, const wf_subprob &sp, const wf_pts &P,
                    const V *__restrict__ cv, const i64 *__restrict__ sort_idx, T scale = (T)1,
                    float lo_scale = 0.0f) {
    const int npts = sp.npts, bd = blockDim.x;
    const i64 first = sp.first;
    int q = threadIdx.x;
    wf_raw nxt = q < npts ? wf_fetch(P, first + q, __ldg(sort_idx + first + q), cv) : wf_raw_none();
    for (; q < npts; q += bd) {
        const wf_raw pt = nxt;
        if (q + bd < npts)
            nxt = wf_fetch(P, first + q + bd, __ldg(sort_idx + first + q + bd), cv);
        const V v = pt.v;
        double u1;
        i64 a1;
        wf_locate_v(pt.x, P.nf1, u1, a1);
        T k1[W];
        wf_kernel_values(k1, a1, u1, P);
        const int l1 = (int)(a1 - sp.o1);
#if WF_DIM == 1
#if WF_SPREAD_SM_FIX
        if (FIX)
            wf_tile_add_rows_fix(reinterpret_cast<int *>(tile), l1, 1, k1, wf_vscale(v, scale),
                                 lo_scale);
        else
#endif
            wf_tile_add_rows(tile, l1, 1, k1, v);
        (void)scale;
        (void)lo_scale;
#else
        double u2;
        i64 a2;
        wf_locate_v(pt.y, P.nf2, u2, a2);
        const int l2 = (int)(a2 - sp.o2);
#if WF_DIM == 2
        const int base = l1 + tl.td1 * l2;
#pragma unroll 1
        for (int r = 0; r < W; ++r) {
            const T kr = wf_kernel_value(a2, r, u2, P);
            wf_tile_add_rows(tile, base + tl.td1 * r, 1, k1, wf_vscale(kr, v));
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
            const V pv = wf_vscale(kp, v);
#pragma unroll 1
            for (int r = 0; r < W; ++r) {
                const T kr = wf_pick(k2, r);
                wf_tile_add_rows(tile, base + plane_sz * p + tl.td1 * r, 1, k1, wf_vscale(kr, pv));
            }
        }
#endif
#endif
    }
}

/* FIX: add in fixed point (wf_tile_add_rows_fix), strengths times scale. */
template <bool FIX = false>
__device__ __forceinline__ void wf_spread_sm_team(V *tile, const wf_tile &tl, const wf_subprob &sp,
                                                  const wf_pts &P, const V *__restrict__ cv,
                                                  const i64 *__restrict__ sort_idx, T scale = (T)1,
                                                  float lo_scale = 0.0f) {
    const wf_lane l = wf_lane_self();
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    /* warp-uniform loop: every lane runs every iteration (shuffles need the whole warp) */
    for (int base = warp * WF_TEAMS; base < sp.npts; base += nwarps * WF_TEAMS) {
        const int pi = base + l.g;
        const bool active = l.used && pi < sp.npts;
        const i64 j = active ? __ldg(sort_idx + sp.first + pi) : 0;
        V v = wf_vzero();
        if (active)
            v = wf_ldg(cv + j);
        const wf_team_pt pt = wf_team_point(active, sp.first + pi, j, sp.o1, sp.o2, sp.o3, l, P);
        const V vk = wf_vscale(pt.k1, FIX ? wf_vscale(v, scale) : v);
        const int i0 = (int)(pt.a1 - sp.o1) + l.q;
#if WF_DIM == 1
        if (active)
            wf_vtile_add(tile + i0, vk);
#else
        T k2[W];
        wf_team_row(k2, pt.k2, l);
        const int i2 = i0 + tl.td1 * (int)(pt.a2 - sp.o2);
#if WF_DIM == 2
        if (active) {
#if WF_SPREAD_SM_FIX
            if (FIX)
                wf_tile_add_rows_fix(reinterpret_cast<int *>(tile), i2, tl.td1, k2, vk, lo_scale);
            else
#endif
                wf_tile_add_rows(tile, i2, tl.td1, k2, vk);
        }
#else
        const int plane_sz = tl.td1 * tl.td2;
        const int i3 = i2 + plane_sz * (int)(pt.a3 - sp.o3);
#pragma unroll 1
        for (int p = 0; p < W; ++p) {
            const T kp = wf_team_get(pt.k3, l, p);
            if (active) {
#if WF_SPREAD_SM_FIX
                /* 3D f32 in fixed point (-DWF_SPREAD_SM_OD=0 -DWF_SPREAD_SM_FIX=1, a variant):
                 * native integer shared atomics instead of the float CAS loops */
                if (FIX)
                    wf_tile_add_rows_fix(reinterpret_cast<int *>(tile), i3 + plane_sz * p, tl.td1,
                                         k2, wf_vscale(kp, vk), lo_scale);
                else
#endif
                    wf_tile_add_rows(tile, i3 + plane_sz * p, tl.td1, k2, wf_vscale(kp, vk));
            }
        }
#endif
#endif
    }
}

/* Output-driven (cell per thread): the block takes one point at a time, each thread one or a
 * few cells of its W^d footprint, and adds with a plain load/store — no atomics. Barriers keep
 * two points from meeting on a cell: consecutive points of a quad whose footprints are
 * disjoint share a step, and a barrier closes each step (~2 points per barrier for uniform
 * points in 16x16x2 bins). Per batch of WF_OD_NB points the kernel values (dim 1
 * premultiplied by the strength), tile offsets and steps go to static shared memory first. Thread
 * tid owns footprint cells e = tid + k*blockDim.x, k < WF_OD_PASSES; their (q, r, p) and tile
 * offsets are computed once. Needs blockDim.x >= WF_OD_MIN_BLOCK (spreadinterp.cu; ABI: 256,
 * 192 for 3D f32 w7); a smaller block would leave cells out, so the kernel then traps instead. */
#define WF_CELLS        (WF_DIM == 1 ? W : WF_DIM == 2 ? W * W : W * W * W)
#ifndef WF_OD_MIN_BLOCK
#define WF_OD_MIN_BLOCK 256
#endif
#define WF_OD_PASSES    ((WF_CELLS + WF_OD_MIN_BLOCK - 1) / WF_OD_MIN_BLOCK)
#ifndef WF_OD_NB
#define WF_OD_NB (WF_PREC == 32 ? 32 : 16) /* <= 32 (one warp prepares a batch), multiple of 4 */
#endif

__device__ __forceinline__ void wf_spread_sm_od(V *tile, const wf_tile &tl, const wf_subprob &sp,
                                                const wf_pts &P, const V *__restrict__ cv,
                                                const i64 *__restrict__ sort_idx) {
    __shared__ V s_k1c[WF_OD_NB][W]; /* phi_1(q) * c */
#if WF_DIM >= 2
    __shared__ T s_k2[WF_OD_NB][W];
#endif
#if WF_DIM == 3
    __shared__ T s_k3[WF_OD_NB][W];
#endif
    __shared__ int s_base[WF_OD_NB];            /* tile index of the footprint's first cell */
    __shared__ unsigned s_qstart[WF_OD_NB / 4]; /* per quad: bit m = member m opens a step */
    const int plane_sz = tl.td1 * tl.td2;

    /* this thread's cells */
    int off[WF_OD_PASSES], qq[WF_OD_PASSES], rr[WF_OD_PASSES], pp[WF_OD_PASSES];
#pragma unroll
    for (int k = 0; k < WF_OD_PASSES; ++k) {
        const int e = threadIdx.x + k * blockDim.x;
        qq[k] = e % W;
        rr[k] = (e / W) % W;
        pp[k] = e / (W * W);
        off[k] = qq[k] + tl.td1 * (WF_DIM >= 2 ? rr[k] : 0) + plane_sz * (WF_DIM == 3 ? pp[k] : 0);
    }
    (void)rr;
    (void)pp;

    for (int b0 = 0; b0 < sp.npts; b0 += WF_OD_NB) {
        const int nb = min(WF_OD_NB, sp.npts - b0);
        if (threadIdx.x < 32) {
            /* warp 0, lane b = point b0 + b: values straight to shared memory (few registers) */
            const int b = threadIdx.x;
            int l1 = 0, l2 = 0, l3 = 0;
            if (b < nb) {
                const i64 i = sp.first + b0 + b;
                const i64 j = __ldg(sort_idx + i);
                const V v = wf_ldg(cv + j);
                double u;
                i64 a;
                wf_locate(P.x, i, P.nf1, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q) {
                    const T k = wf_kernel_value(a, q, u, P);
                    s_k1c[b][q] = wf_vscale(k, v);
                }
                l1 = (int)(a - sp.o1);
#if WF_DIM >= 2
                wf_locate(P.y, i, P.nf2, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q)
                    s_k2[b][q] = wf_kernel_value(a, q, u, P);
                l2 = (int)(a - sp.o2);
#endif
#if WF_DIM == 3
                wf_locate(P.z, i, P.nf3, u, a);
#pragma unroll 1
                for (int q = 0; q < W; ++q)
                    s_k3[b][q] = wf_kernel_value(a, q, u, P);
                l3 = (int)(a - sp.o3);
#endif
                s_base[b] = l1 + tl.td1 * l2 + plane_sz * l3;
            }
            /* Steps: the points of a quad (4 consecutive points) whose footprints are disjoint
             * share one barrier. Every lane of a quad gets the quad's coordinates by shuffles
             * and runs the same greedy split. */
            const int q0 = b & ~3;
            int x4[4], y4[4], z4[4];
#pragma unroll
            for (int m = 0; m < 4; ++m) {
                x4[m] = __shfl_sync(0xffffffffu, l1, q0 + m);
                y4[m] = __shfl_sync(0xffffffffu, l2, q0 + m);
                z4[m] = __shfl_sync(0xffffffffu, l3, q0 + m);
            }
            unsigned starts = 1u;
            int open = 0; /* first member of the current step */
#pragma unroll
            for (int m = 1; m < 4; ++m) {
                bool clash = false;
#pragma unroll
                for (int o = 0; o < m; ++o)
                    clash |= o >= open && abs(x4[o] - x4[m]) < W && abs(y4[o] - y4[m]) < W &&
                             abs(z4[o] - z4[m]) < W;
                if (clash) {
                    starts |= 1u << m;
                    open = m;
                }
            }
            if ((b & 3) == 0 && b < nb)
                s_qstart[b >> 2] = starts;
        }
        __syncthreads();
        for (int b = 0; b < nb; ++b) {
            if ((b & 3) != 0 && ((s_qstart[b >> 2] >> (b & 3)) & 1u))
                __syncthreads(); /* b overlaps an earlier point of its step */
            const int base = s_base[b];
#pragma unroll
            for (int k = 0; k < WF_OD_PASSES; ++k) {
                if (threadIdx.x + k * blockDim.x < WF_CELLS) {
                    const V kc = s_k1c[b][qq[k]];
                    T kk = (T)1;
#if WF_DIM >= 2
                    kk = s_k2[b][rr[k]];
#endif
#if WF_DIM == 3
                    kk *= s_k3[b][pp[k]];
#endif
                    V *cell = tile + base + off[k];
                    V old = *cell;
                    wf_vfma(old, kc, kk);
                    *cell = old;
                }
            }
            if ((b & 3) == 3 || b == nb - 1)
                __syncthreads(); /* end of the quad */
        }
    }
}

/* 2D output-driven, several points per step: W^2 cells per point leave most of a 256-thread
 * block idle, so the block is cut into WF_OD2_G slots of W^2 threads (thread tid: slot
 * tid / W^2, footprint cell tid % W^2, 5 slots at w7) and a step adds up to WF_OD2_G points
 * whose footprints are pairwise disjoint, one per slot, with plain loads/stores. Per batch of
 * WF_OD2_NB points the block first computes the kernel values in teams of W lanes (lane q: the
 * dim-1 value of column q times the strength, the dim-2 value of row q) into static shared
 * memory; then one lane per group of WF_OD2_G consecutive points splits the group greedily
 * into steps (a point opens a new step when its footprint meets one of the open step's). A
 * barrier closes each step. Needs blockDim.x >= WF_OD_MIN_BLOCK, like the 3D path. */
#define WF_OD2_G_RAW (WF_OD_MIN_BLOCK / (W * W))
#define WF_OD2_G     (WF_OD2_G_RAW > 8 ? 8 : WF_OD2_G_RAW)
#define WF_OD2_NBT   ((WF_OD_MIN_BLOCK / W) < 32 ? (WF_OD_MIN_BLOCK / W) : 32)
#define WF_OD2_NB    (WF_OD2_G * (WF_OD2_NBT / WF_OD2_G))
#define WF_OD2_NG    (WF_OD2_NB / WF_OD2_G)

__device__ __forceinline__ void wf_spread_sm_od2(V *tile, const wf_tile &tl, const wf_subprob &sp,
                                                 const wf_pts &P, const V *__restrict__ cv,
                                                 const i64 *__restrict__ sort_idx) {
    __shared__ V s_k1c[WF_OD2_NB][W]; /* phi_1(q) * c */
    __shared__ T s_k2[WF_OD2_NB][W];
    __shared__ int s_l1[WF_OD2_NB], s_l2[WF_OD2_NB]; /* footprint origin in the tile */
    __shared__ unsigned s_gstart[WF_OD2_NG];         /* per group: bit m = member m opens a step */
    const int tid = threadIdx.x;
    const int slot = tid / (W * W);
    const int e = tid - slot * (W * W);
    const int qq = e % W;
    const int off = qq + tl.td1 * (e / W);
    const bool has_cell = slot < WF_OD2_G;
    const int pb = tid / W, pq = tid - pb * W; /* team of the preparation */

    for (int b0 = 0; b0 < sp.npts; b0 += WF_OD2_NB) {
        const int nb = min(WF_OD2_NB, sp.npts - b0);
        if (pb < nb) {
            const i64 i = sp.first + b0 + pb;
            const i64 j = __ldg(sort_idx + i);
            const V v = wf_ldg(cv + j);
            double u;
            i64 a;
            wf_locate(P.x, i, P.nf1, u, a);
            const T k = wf_kernel_value(a, pq, u, P);
            s_k1c[pb][pq] = wf_vscale(k, v);
            const int l1 = (int)(a - sp.o1);
            wf_locate(P.y, i, P.nf2, u, a);
            s_k2[pb][pq] = wf_kernel_value(a, pq, u, P);
            if (pq == 0) {
                s_l1[pb] = l1;
                s_l2[pb] = (int)(a - sp.o2);
            }
        }
        __syncthreads();
        if (tid < WF_OD2_NG) {
            const int g0 = tid * WF_OD2_G;
            const int gn = min(WF_OD2_G, nb - g0);
            int gx[WF_OD2_G], gy[WF_OD2_G];
#pragma unroll
            for (int m = 0; m < WF_OD2_G; ++m) {
                gx[m] = m < gn ? s_l1[g0 + m] : 0;
                gy[m] = m < gn ? s_l2[g0 + m] : 0;
            }
            unsigned starts = 1u;
            int open = 0;
#pragma unroll
            for (int m = 1; m < WF_OD2_G; ++m) {
                bool clash = false;
#pragma unroll
                for (int o = 0; o < m; ++o)
                    clash |= o >= open && abs(gx[o] - gx[m]) < W && abs(gy[o] - gy[m]) < W;
                if (clash && m < gn) {
                    starts |= 1u << m;
                    open = m;
                }
            }
            s_gstart[tid] = starts;
        }
        __syncthreads();
        const int ng = (nb + WF_OD2_G - 1) / WF_OD2_G;
        for (int gi = 0; gi < ng; ++gi) {
            const unsigned starts = s_gstart[gi];
            const int gbase = gi * WF_OD2_G;
            const int gn = min(WF_OD2_G, nb - gbase);
            int st = 0;
            while (st < gn) {
                const unsigned hi = starts & ~((2u << st) - 1u);
                const int en = hi ? __ffs(hi) - 1 : gn;
                const int m = st + slot;
                if (has_cell && m < en) {
                    const int pi = gbase + m;
                    const V kc = s_k1c[pi][qq];
                    const T kk = s_k2[pi][e / W];
                    V *cell = tile + s_l1[pi] + tl.td1 * s_l2[pi] + off;
                    V old = *cell;
                    wf_vfma(old, kc, kk);
                    *cell = old;
                }
                __syncthreads();
                st = en;
            }
        }
    }
}

#endif /* WF_SI_SM_SPREAD_CUH */
