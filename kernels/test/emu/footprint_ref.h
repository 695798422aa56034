/*
 * footprint_ref.h — the reference both emulation tests (test_emu.cpp, test_emu_sets.cpp) check
 * the kernels against: point j's footprint on the fine grid, in double, with the kernels' own
 * fold, first index and kernel values (common.cuh and its kernel_shape.h, included by the test
 * in namespace host before this header). visit(cell, k) is called for each of the W^dim cells
 * (periodic, x fastest) with the product k of the per-dimension kernel values.
 */
#ifndef WF_EMU_FOOTPRINT_REF_H
#define WF_EMU_FOOTPRINT_REF_H

#include <cmath>
#include <vector>

template <class T, class Visit>
static void wf_ref_footprint(int dim, int W, const long long nf[3], const std::vector<T> (&x)[3],
                             long long j, T beta, Visit visit) {
    typedef long long i64;
    const auto K = host::wf_kshape_make(W, beta);
    double kv[3][16];
    i64 a[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d)
        for (int q = 0; q < W; ++q)
            kv[d][q] = d < dim ? 0.0 : (q == 0 ? 1.0 : 0.0);
    for (int d = 0; d < dim; ++d) {
        const double u = host::wf_fold((double)x[d][j], nf[d]);
        a[d] = host::wf_first_index(u, W);
        for (int q = 0; q < W; ++q)
            kv[d][q] = (double)host::wf_phi((T)(((double)a[d] + q) - u), K);
    }
    const int W2 = dim >= 2 ? W : 1, W3 = dim >= 3 ? W : 1;
    for (int pz = 0; pz < W3; ++pz)
        for (int r = 0; r < W2; ++r)
            for (int q = 0; q < W; ++q) {
                const i64 cx = ((a[0] + q) % nf[0] + nf[0]) % nf[0];
                const i64 cy = ((a[1] + r) % nf[1] + nf[1]) % nf[1];
                const i64 cz = ((a[2] + pz) % nf[2] + nf[2]) % nf[2];
                visit(cx + nf[0] * (cy + nf[1] * cz), kv[0][q] * kv[1][r] * kv[2][pz]);
            }
}

#endif /* WF_EMU_FOOTPRINT_REF_H */
