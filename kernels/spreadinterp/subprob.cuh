/*
 * spreadinterp/subprob.cuh — SM subproblem geometry: which sorted points a subproblem holds and
 * where its tile sits on the fine grid (wf_subprob_get, from the bin arrays in wf_bins), the tile
 * extents (wf_tile_of) and the fine-grid offset of a tile cell, periodically wrapped
 * (wf_tile_cell_to_grid).
 *
 * Part of the spreadinterp.cu translation unit: included there, in order, after its
 * configuration macros (T, C, W, PAD, WF_TEAMS, WF_*), which it relies on.
 */
#ifndef WF_SI_SUBPROB_CUH
#define WF_SI_SUBPROB_CUH

/* Geometry of one subproblem (uniform over the block). */
struct wf_subprob {
    i64 first;      /* position of its first point in sort_idx */
    int npts;       /* number of points */
    i64 o1, o2, o3; /* tile origin on the (unwrapped) fine grid: b_d*bs_d - PAD; 0 unused */
    i64 g1, g2, g3; /* the same origin wrapped into [0, nf_d) */
};

struct wf_bins {
    i32 bs1, bs2, bs3;
    i64 nb1, nb2, nb3; /* bins per dimension of one point set */
    const u64 *__restrict__ bin_start;
    const u64 *__restrict__ bin_count;
    const u64 *__restrict__ nsub_start;
    const i32 *__restrict__ subprob_bin;
    i64 maxsub;
};

__device__ __forceinline__ wf_subprob wf_subprob_get(i64 s, const wf_bins &B, const wf_pts &P) {
    wf_subprob sp;
    const i64 b = __ldg(B.subprob_bin + s);
    const i64 k = s - (i64)__ldg(B.nsub_start + b);
    sp.first = (i64)__ldg(B.bin_start + b) + k * B.maxsub;
    const i64 left = (i64)__ldg(B.bin_count + b) - k * B.maxsub;
    sp.npts = (int)(left < B.maxsub ? left : B.maxsub);
    /* 32-bit divisions: bin indices are < 2^31 (subprob_bin is i32); a 64-bit division is a
     * subroutine call whose register saves spill under tight launch bounds. With several point
     * sets b = set * nb1*nb2*nb3 + the bin in the set: the set drops out of b1 and b2 by the
     * remainders, and out of b3 by the one modulo nb3 (a no-op for one set). */
    const unsigned ub = (unsigned)b, n1 = (unsigned)B.nb1, n2 = (unsigned)B.nb2;
    const unsigned b1 = ub % n1, rest = ub / n1;
    sp.o1 = (i64)b1 * B.bs1 - PAD;
    sp.o2 = WF_DIM >= 2 ? (i64)(rest % n2) * B.bs2 - PAD : 0;
    sp.o3 = WF_DIM >= 3 ? (i64)((rest / n2) % (unsigned)B.nb3) * B.bs3 - PAD : 0;
    /* -PAD <= o_d < nf_d (bins cover [0, nf_d) with nb_d = ceil(nf_d / bs_d)) */
    sp.g1 = sp.o1 < 0 ? sp.o1 + P.nf1 : sp.o1;
    sp.g2 = sp.o2 < 0 ? sp.o2 + P.nf2 : sp.o2;
    sp.g3 = sp.o3 < 0 ? sp.o3 + P.nf3 : sp.o3;
    return sp;
}

/* Tile extents: td_d = bs_d + 2*PAD for used dims, 1 otherwise. */
struct wf_tile {
    int td1, td2, td3, n;
};
__device__ __forceinline__ wf_tile wf_tile_of(const wf_bins &B) {
    wf_tile t;
    t.td1 = B.bs1 + 2 * PAD;
    t.td2 = WF_DIM >= 2 ? B.bs2 + 2 * PAD : 1;
    t.td3 = WF_DIM >= 3 ? B.bs3 + 2 * PAD : 1;
    t.n = t.td1 * t.td2 * t.td3;
    return t;
}

/* Fine-grid offset (within one transform) of tile cell e. The tile may be wider than the grid
 * (tiny grids, big bins), hence wf_wrap_up rather than one subtraction. */
__device__ __forceinline__ i64 wf_tile_cell_to_grid(int e, const wf_tile &tl, const wf_subprob &sp,
                                                    const wf_pts &P) {
#if WF_DIM == 1
    (void)tl;
    return wf_wrap_up(sp.g1 + e, P.nf1);
#elif WF_DIM == 2
    /* 32-bit per-dimension indices: nf_d < 2^31 for dim >= 2 */
    const int r = (int)((unsigned)e / (unsigned)tl.td1);
    int g1 = (int)sp.g1 + (e - r * tl.td1), g2 = (int)sp.g2 + r;
    const int n1 = (int)P.nf1, n2 = (int)P.nf2;
    while (g1 >= n1)
        g1 -= n1;
    while (g2 >= n2)
        g2 -= n2;
    return g1 + P.nf1 * g2;
#else
    const int r = (int)((unsigned)e / (unsigned)tl.td1);
    const int e3 = (int)((unsigned)r / (unsigned)tl.td2);
    int g1 = (int)sp.g1 + (e - r * tl.td1), g2 = (int)sp.g2 + (r - e3 * tl.td2);
    int g3 = (int)sp.g3 + e3;
    const int n1 = (int)P.nf1, n2 = (int)P.nf2, n3 = (int)P.nf3;
    while (g1 >= n1)
        g1 -= n1;
    while (g2 >= n2)
        g2 -= n2;
    while (g3 >= n3)
        g3 -= n3;
    return g1 + P.nf1 * (g2 + P.nf2 * (i64)g3);
#endif
}

/* A point's tile coordinates: first footprint cell's index in the tile. The point's bin is
 * the subproblem's bin (the same wf_fold as binning), so 0 <= a_d - o_d <= td_d - W. */

#endif /* WF_SI_SUBPROB_CUH */
