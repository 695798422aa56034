/*
 * test_emu_sets.cpp — CPU tests of batched point sets (kernels/ABI.md, "Point sets"): n_sets
 * sets of set_M points, each feeding tps = ntransf / n_sets transforms, binned and sorted in one
 * pass and spread or interpolated in one launch. Run through the CUDA emulation of cuda_emu.h
 * (run.sh builds and runs it), the kernels as the C core launches them:
 *  - setpts: wf_bin_count_p with n_sets (bin = set * nbins + the bin of the coordinates),
 *    wf_bin_scan over the n_sets * nbins bins, wf_bin_scatter_p, wf_sort_unpack_p; checked:
 *    every point counted, each set's points at sorted positions [s*set_M, (s+1)*set_M), the bins
 *    in order, the subproblem list;
 *  - GM and SM spreading and interpolation with n_sets, against a direct sum in double of the
 *    same kernel values, each transform over its own set's points only: 1D/2D/3D, f32/f64, the
 *    kernels' variants (thread / team per point, fixed point, output-driven SM), sets whose
 *    sizes split warps and subproblems, clustered sets, a grid.y smaller than the transforms
 *    per set, and one set (the plain batch) against the same reference.
 * Exit status 0 when everything passes.
 */
#include "cuda_emu.h"
#include "emu_registry.h"
#include "emu_test.h"
#include "../../module_names.h"
#include "../../smr_shape.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace host {
#include "../../common.cuh"
}
#include "footprint_ref.h"

template <class T> struct K {
    typedef void (*bin_count)(i64, int, const T *, const T *, const T *, i64, i64, i64, int, int,
                              int, i64, i64, i64, int *, void *, int, u64 *, i64);
    typedef void (*scatter)(i64, int, const T *, const T *, const T *, const int *, const void *,
                            int, const u64 *, int, unsigned *, int *);
    typedef void (*unpack)(i64, int, const unsigned *, int, int, i64 *, T *, T *, T *, i64,
                           const u64 *, const u64 *, i64, int *, i64);
};
typedef void (*scan_fn)(i64, const u64 *, u64 *, i64, u64 *, i64, u64 *);
template <class T, class Cx> struct SI {
    typedef void (*gm)(i64, const T *, const T *, const T *, Cx *, i64, i64, i64, i64, const i64 *,
                       T, Cx *, i64, i64, const int *, int);
    typedef void (*sm)(i64, const T *, const T *, const T *, Cx *, i64, i64, i64, i64, const i64 *,
                       T, int, int, int, i64, i64, i64, const u64 *, const u64 *, const u64 *,
                       const int *, const u64 *, i64, Cx *, i64, i64, const int *, int);
};

enum Method { GM, SM };
enum Dir { SPREAD, INTERP };
enum Dist { UNIFORM, CLUSTER };

struct Case {
    int dim, prec, W;
    Method method;
    Dir dir;
    i64 nf[3];
    int bs[3];
    i64 set_M;
    int n_sets, tps, maxsub, gridx, gridy;
    Dist dist;
    /* an SM spreading variant (run.sh builds it, its entry renamed entry + "_" var): "smr" the
     * register tile (nr, px, nbw as its WF_SMR_* macros), "fix3" the 3D f32 fixed-point team */
    const char *var = "";
    int nr = 0, px = 0, nbw = 1;
};

template <class T, class Cx> static void run(const Case &k) {
    const int dim = k.dim, W = k.W;
    const char *p = k.prec == 32 ? "f32" : "f64";
    const std::string ds = std::to_string(dim) + "d_" + p;
    std::mt19937_64 rng(77 + dim * 1000 + W * 10 + k.n_sets + (int)k.method + 2 * (int)k.dir);
    std::uniform_real_distribution<double> U(-M_PI, M_PI);
    const i64 n_sets = k.n_sets, set_M = k.set_M, M = n_sets * set_M;
    const i64 ntransf = n_sets * k.tps;
    i64 nf[3] = {1, 1, 1}, nb[3] = {1, 1, 1};
    int bs[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) {
        nf[d] = k.nf[d];
        bs[d] = k.bs[d];
        nb[d] = (nf[d] + bs[d] - 1) / bs[d];
    }
    const i64 nbins = nb[0] * nb[1] * nb[2], total_bins = nbins * n_sets;
    const i64 nfprod = nf[0] * nf[1] * nf[2];

    /* the points, set after set; CLUSTER puts each set in its own corner */
    std::vector<T> x[3];
    for (int d = 0; d < 3; ++d)
        x[d].assign(std::max<i64>(M, 1), (T)0);
    for (i64 j = 0; j < M; ++j)
        for (int d = 0; d < dim; ++d) {
            double v = U(rng);
            if (k.dist == CLUSTER)
                v = -M_PI +
                    2 * M_PI * ((double)((j / set_M) % 3) + 0.9 * (v + M_PI) / (2 * M_PI)) / 3.0;
            x[d][j] = (T)v;
        }

    /* setpts: count, scan, scatter, unpack (block 256, the scan one block of 512) */
    const std::string bm = "bin_" + ds + "/";
    std::vector<int> bin_of(std::max<i64>(M, 1));
    std::vector<unsigned> pos(std::max<i64>(M, 1));
    std::vector<u64> count(total_bins, 0), start(total_bins), nsub(total_bins), result(3, 0);
    const i64 maxsub = k.method == SM ? k.maxsub : 0;
    const i64 cap = k.method == SM ? total_bins + (M + maxsub - 1) / maxsub : 0;
    const int gx = (int)std::min<i64>((M + 255) / 256, 3);
    wf_emu::launch(d3((unsigned)std::max(gx, 1)), d3(256), 0, [&] {
        ((typename K<T>::bin_count)wf_emu_kernel(bm + "bin_count"))(
            M, dim, x[0].data(), dim >= 2 ? x[1].data() : nullptr, dim >= 3 ? x[2].data() : nullptr,
            nf[0], nf[1], nf[2], bs[0], bs[1], bs[2], nb[0], nb[1], nb[2], bin_of.data(),
            pos.data(), 0, count.data(), n_sets);
    });
    wf_emu::launch(d3(1), d3(512), 0, [&] {
        ((scan_fn)wf_emu_kernel("wf_bin_scan"))(total_bins, count.data(), start.data(), maxsub,
                                                maxsub ? nsub.data() : nullptr, cap, result.data());
    });
    const int cw = (int)sizeof(T) / 4, nw = dim * cw + 1;
    const int rw = nw <= 2 ? 2 : nw <= 4 ? 4 : 8;
    std::vector<unsigned> rec(std::max<i64>(M, 1) * rw);
    int bad = 0;
    wf_emu::launch(d3((unsigned)std::max(gx, 1)), d3(256), 0, [&] {
        ((typename K<T>::scatter)wf_emu_kernel(bm + "bin_scatter"))(
            M, dim, x[0].data(), dim >= 2 ? x[1].data() : nullptr, dim >= 3 ? x[2].data() : nullptr,
            bin_of.data(), pos.data(), 0, start.data(), rw, rec.data(), &bad);
    });
    std::vector<T> xs[3];
    for (int d = 0; d < 3; ++d)
        xs[d].assign(std::max<i64>(M, 1), (T)0);
    std::vector<i64> sort_idx(std::max<i64>(M, 1));
    std::vector<int> subprob_bin(std::max<i64>(cap, 1));
    wf_emu::launch(d3(2), d3(256), 0, [&] {
        ((typename K<T>::unpack)wf_emu_kernel(bm + "sort_unpack"))(
            M, dim, rec.data(), rw, 0, sort_idx.data(), xs[0].data(),
            dim >= 2 ? xs[1].data() : nullptr, dim >= 3 ? xs[2].data() : nullptr, total_bins,
            maxsub ? nsub.data() : nullptr, maxsub ? &result[1] : nullptr, cap,
            maxsub ? subprob_bin.data() : nullptr, set_M);
    });
    /* the sort: every point once, each set's points in its range, bins in order */
    i64 misplaced = 0, unordered = 0;
    std::vector<char> seen(std::max<i64>(M, 1), 0);
    for (i64 i = 0; i < M; ++i) {
        const i64 j = sort_idx[i] + i / set_M * set_M; /* sort_idx: the index within the set */
        if (sort_idx[i] < 0 || sort_idx[i] >= set_M || seen[j]) {
            ++misplaced;
            continue;
        }
        seen[j] = 1;
        misplaced += j / set_M != i / set_M;
        if (i > 0)
            unordered += bin_of[sort_idx[i - 1]] > bin_of[j];
        misplaced += bin_of[j] / nbins != j / set_M;
    }
    i64 bad_sub = 0;
    if (maxsub) {
        u64 want = 0;
        for (i64 b = 0; b < total_bins; ++b) {
            const u64 ns = (count[b] + maxsub - 1) / maxsub;
            for (u64 q = 0; q < ns; ++q)
                bad_sub += subprob_bin[want + q] != (int)b;
            want += ns;
        }
        bad_sub += result[1] != want;
    }
    const bool sort_ok =
        result[0] == (u64)M && misplaced == 0 && unordered == 0 && bad == 0 && bad_sub == 0;

    /* strengths or the fine grids */
    std::normal_distribution<double> N01;
    std::vector<Cx> c(std::max<i64>(ntransf * set_M, 1)), fw(std::max<i64>(nfprod * ntransf, 1));
    for (auto &v : (k.dir == SPREAD ? c : fw)) {
        v.x = (T)N01(rng);
        v.y = (T)N01(rng);
    }
    for (auto &v : (k.dir == SPREAD ? fw : c))
        v.x = v.y = (T)0;
    const double beta_d = 2.30 * W;
    const T beta = (T)beta_d;
    char name[64]; /* the entry point's name by the rule the host looks it up with, a variant's
                    * with its suffix; looked up here, on the calling thread's stack: a lookup
                    * that fails exits, and exit from a fiber frees the stack it runs on */
    std::snprintf(name, sizeof name, WF_SI_ENTRY_FMT, k.dir == SPREAD ? "spread" : "interp",
                  k.method == GM ? "gm" : "sm", dim, p, W);
    const std::string var = k.var;
    if (!var.empty())
        std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), "_%s",
                      var.c_str());
    void *const fn = wf_emu_kernel(name);
    /* the widths' selection (ABI.md, "Widths from the points"): the kernel runs as width index
     * w_idx of a plan whose points took index w_sel = 0; launched first as index 1 (it must
     * return at once, writing nothing), then as 0 */
    const int w_sel = 0;
    auto launch = [&](int w_idx) {
        if (k.method == GM) {
            wf_emu::launch(d3((unsigned)k.gridx), d3(256), 0, [&] {
                ((typename SI<T, Cx>::gm)fn)(M, xs[0].data(), dim >= 2 ? xs[1].data() : nullptr,
                                             dim >= 3 ? xs[2].data() : nullptr, c.data(), nf[0],
                                             nf[1], nf[2], ntransf, sort_idx.data(), beta,
                                             fw.data(), set_M, (i64)k.tps, &w_sel, w_idx);
            });
            return;
        }
        const int pad = (W + 1) / 2;
        size_t cells = 1;
        for (int d = 0; d < dim; ++d)
            cells *= (size_t)(bs[d] + 2 * pad);
        const size_t cell =
            k.dir == SPREAD && k.prec == 32 && (dim <= 2 || var == "fix3") ? 16 : sizeof(Cx);
        size_t smem = cells * cell;
        unsigned block = 256;
        /* the tile in registers: a variant's shape (k.nr, k.px, k.nbw), or a default module's
         * from kernels/smr_shape.h, as the host launches it (c_core/src/params/bins.c): the
         * kind of tile, its bytes and block those of the kernel's own width W, whatever width
         * the plan's bins were chosen for (wf_sm_launch_bytes, wf_sm_spread_block) */
        int nr = k.nr, px = k.px, nbw = k.nbw;
        if (var.empty() && k.dir == SPREAD && k.method == SM && WF_SMR_NR_OF(dim, k.prec, W) > 0) {
            nr = WF_SMR_NR_OF(dim, k.prec, W);
            px = 0;
            nbw = WF_SMR_NBW_OF(dim, k.prec, W);
        }
        if (var == "smr" || (var.empty() && nr > 0)) { /* smr_spread.cuh: batches and warps */
            const int td1 = bs[0] + 2 * pad, td2 = bs[1] + 2 * pad, st = (int)sizeof(T);
            const int vec = 16 / st, nrp = (nr + vec - 1) / vec * vec, nb = 32 * nbw;
            smem = (size_t)nb * (nrp * st + 32 + 2 * sizeof(Cx) + W * sizeof(Cx) + 16 * dim +
                                 (dim == 3 ? W * st : 0));
            const int py = px > 0 ? 32 / px : 1;
            const int warps = dim == 2 ? (td1 + 31) / 32
                              : px > 0 ? ((td1 + px - 1) / px) * ((td2 + py - 1) / py)
                                       : (td1 * td2 + 31) / 32;
            block = 32u * (unsigned)warps;
        }
        dim3 g = d3((unsigned)k.gridx, (unsigned)k.gridy);
        g.z = (unsigned)n_sets; /* block z runs set z */
        wf_emu::launch(g, d3(block), smem, [&] {
            ((typename SI<T, Cx>::sm)fn)(M, xs[0].data(), dim >= 2 ? xs[1].data() : nullptr,
                                         dim >= 3 ? xs[2].data() : nullptr, c.data(), nf[0], nf[1],
                                         nf[2], ntransf, sort_idx.data(), beta, bs[0], bs[1], bs[2],
                                         nb[0], nb[1], nb[2], start.data(), count.data(),
                                         nsub.data(), subprob_bin.data(), &result[1], maxsub,
                                         fw.data(), set_M, (i64)k.tps, &w_sel, w_idx);
        });
    };
    const std::vector<Cx> fw_before = fw, c_before = c;
    launch(1);
    const bool skipped_ok = std::memcmp(fw.data(), fw_before.data(), fw.size() * sizeof(Cx)) == 0 &&
                            std::memcmp(c.data(), c_before.data(), c.size() * sizeof(Cx)) == 0;
    launch(0);

    /* reference in double: each transform over its own set's points */
    std::vector<double> ref(2 * (k.dir == SPREAD ? nfprod * ntransf : ntransf * set_M), 0.0);
    for (i64 j = 0; j < M; ++j) {
        const i64 s = j / set_M, jl = j - s * set_M;
        wf_ref_footprint(dim, W, nf, x, j, beta, [&](i64 cell, double kk) {
            for (int tt = 0; tt < k.tps; ++tt) {
                const i64 t = s * k.tps + tt;
                if (k.dir == SPREAD) {
                    ref[2 * (t * nfprod + cell)] += kk * (double)c[t * set_M + jl].x;
                    ref[2 * (t * nfprod + cell) + 1] += kk * (double)c[t * set_M + jl].y;
                } else {
                    ref[2 * (t * set_M + jl)] += kk * (double)fw[t * nfprod + cell].x;
                    ref[2 * (t * set_M + jl) + 1] += kk * (double)fw[t * nfprod + cell].y;
                }
            }
        });
    }
    const std::vector<Cx> &got = k.dir == SPREAD ? fw : c;
    const i64 n = k.dir == SPREAD ? nfprod * ntransf : ntransf * set_M;
    double maxref = 0, maxerr = 0;
    for (i64 i = 0; i < n; ++i) {
        maxref = std::max({maxref, std::fabs(ref[2 * i]), std::fabs(ref[2 * i + 1])});
        const double e = std::max(std::fabs((double)got[i].x - ref[2 * i]),
                                  std::fabs((double)got[i].y - ref[2 * i + 1]));
        maxerr = std::isfinite(e) ? std::max(maxerr, e) : INFINITY;
    }
    const double rel = maxref > 0 ? maxerr / maxref : maxerr;
    const double tol = k.prec == 32 ? 3e-6 : 1e-13;
    const bool ok = sort_ok && skipped_ok && rel <= tol && (M == 0 || maxref > 0);
    if (!ok)
        ++g_fail;
    std::printf("%s %s nf=%lldx%lldx%lld bs=%dx%dx%d sets=%lld x %lld pts tps=%d maxsub=%d "
                "grid=%dx%d dist=%d: sort %s (counted %llu, misplaced %lld, unordered %lld, "
                "subproblems %lld wrong), other width %s, rel err %.2e\n",
                ok ? "ok  " : "FAIL", name, nf[0], nf[1], nf[2], bs[0], bs[1], bs[2], n_sets, set_M,
                k.tps, k.maxsub, k.gridx, k.gridy, (int)k.dist, sort_ok ? "ok" : "BAD",
                (unsigned long long)result[0], misplaced, unordered, bad_sub,
                skipped_ok ? "skipped" : "WROTE", rel);
}

static void run_case(const Case &k) {
    wf_emu_by_prec(k.prec, [&]<class T, class Cx>() { run<T, Cx>(k); });
}

int main(int argc, char **argv) {
    const bool quick = wf_emu_quick(argc, argv);
    /* dim prec W method dir nf bs set_M n_sets tps maxsub gridx gridy dist */
    std::vector<Case> cases = {
        /* 1D: f64 GM spread (team), f32 SM spread (fixed point), f64 SM interp */
        {1, 64, 5, GM, SPREAD, {200}, {32}, 75, 4, 2, 0, 3, 1, UNIFORM},
        {1, 32, 4, SM, SPREAD, {256}, {64}, 300, 3, 1, 64, 5, 1, CLUSTER},
        {1, 64, 5, SM, INTERP, {200}, {32}, 75, 4, 2, 16, 4, 1, UNIFORM},
        /* 2D: f32 SM spread (team, fixed point), f32 GM interp (thread), f64 SM spread (OD2),
         * f64 SM interp; a grid.y below the transforms per set */
        {2, 32, 6, SM, SPREAD, {32, 24}, {8, 8}, 130, 3, 2, 32, 7, 1, UNIFORM},
        {2, 32, 6, GM, INTERP, {32, 24}, {8, 8}, 130, 3, 2, 0, 2, 1, CLUSTER},
        {2, 64, 7, SM, SPREAD, {28, 30}, {8, 8}, 90, 2, 3, 40, 6, 2, UNIFORM},
        {2, 64, 7, SM, INTERP, {28, 30}, {8, 8}, 90, 2, 3, 40, 6, 2, CLUSTER},
        /* 3D: f32 SM spread (output-driven), f32 GM spread (team: shuffles inside the transform
         * loop), f32 SM interp, f64 SM interp (team), f64 GM interp; one set */
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 70, 3, 1, 32, 9, 1, UNIFORM},
        {3, 32, 5, GM, SPREAD, {16, 14, 12}, {8, 8, 8}, 70, 3, 2, 0, 2, 1, UNIFORM},
        {3, 32, 5, SM, INTERP, {16, 14, 12}, {8, 8, 4}, 70, 3, 2, 32, 9, 1, CLUSTER},
        {3, 64, 8, SM, INTERP, {20, 18, 16}, {8, 8, 4}, 45, 2, 2, 25, 5, 1, UNIFORM},
        {3, 64, 8, GM, INTERP, {20, 18, 16}, {8, 8, 8}, 45, 2, 2, 0, 1, 1, UNIFORM},
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 150, 1, 3, 32, 9, 2, UNIFORM},
        {2, 32, 6, GM, INTERP, {32, 24}, {8, 8}, 200, 1, 4, 0, 2, 1, UNIFORM},
        /* the default modules with the tile in registers (kernels/smr_shape.h), at the host's
         * bins (bins.c, wf_smr_default_bins, clamped to the grid): 3D f64 w10 (18 x 18
         * columns, 11 warps) and w13 (22 x 22, 16 warps: tiles wider than the grid in x and y),
         * 2D f64 w12 (bins 40 x 2 on a grid of 40: a tile row wider than the grid; 116 x 2 on
         * 240: three bins in x, a row of four warps); clustered sets, a grid.y below the
         * transforms per set */
        {3, 64, 10, SM, SPREAD, {24, 22, 20}, {8, 8, 4}, 80, 2, 2, 30, 6, 1, UNIFORM},
        {3, 64, 10, SM, SPREAD, {24, 22, 20}, {8, 8, 4}, 150, 3, 2, 60, 5, 1, CLUSTER},
        {3, 64, 13, SM, SPREAD, {20, 18, 26}, {8, 8, 4}, 70, 2, 3, 40, 4, 2, UNIFORM},
        {3, 64, 13, SM, SPREAD, {20, 18, 26}, {8, 8, 4}, 90, 1, 1, 90, 3, 1, CLUSTER},
        {2, 64, 12, SM, SPREAD, {40, 30}, {40, 2}, 200, 2, 3, 100, 6, 2, CLUSTER},
        {2, 64, 12, SM, SPREAD, {240, 30}, {116, 2}, 300, 2, 2, 64, 7, 1, UNIFORM},
        /* a narrower width the points take may keep the shared tile under a plan whose width
         * keeps it in registers: launched at the plan's bins with its own width's tile bytes
         * and block (bins.c, wf_sm_launch_bytes): 3D f64 w6 at w7's bins 8x8x4, 2D f64 w9 at
         * w10's 118x2 */
        {3, 64, 6, SM, SPREAD, {20, 18, 16}, {8, 8, 4}, 120, 2, 2, 40, 5, 1, CLUSTER},
        {2, 64, 9, SM, SPREAD, {240, 30}, {118, 2}, 300, 2, 2, 64, 7, 1, UNIFORM},
        /* SM spreading variants (kernels/test/sweep_wave4.sh): the register tile in 3D f32
         * (patches 8x4: tiles 14x14x10; batches over several subproblems; clustered), 3D f64
         * flat (16x16x12), 2D f64 (tile rows of 38 > 32 columns: two warps; a tile wider than
         * the grid; batches of 64), 3D f32 w7 in patches of 16x2 (tile 24x16x12, today's bins,
         * wider than the grid in y), and the 3D f32 fixed-point team */
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 150, 2, 2, 40, 7, 1, CLUSTER, "smr", 10, 8},
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 90, 1, 1, 512, 3, 1, UNIFORM, "smr", 10, 8},
        {3, 64, 8, SM, SPREAD, {20, 18, 16}, {8, 8, 4}, 60, 2, 2, 25, 5, 1, UNIFORM, "smr", 12, 0},
        {3, 64, 8, SM, SPREAD, {20, 18, 16}, {8, 8, 4}, 200, 1, 1, 70, 4, 1, CLUSTER, "smr", 12, 0},
        {2, 64, 7, SM, SPREAD, {28, 30}, {30, 6}, 150, 2, 3, 90, 6, 2, UNIFORM, "smr", 14, 0, 2},
        {2, 64, 7, SM, SPREAD, {40, 30}, {30, 6}, 300, 1, 1, 1024, 6, 1, CLUSTER, "smr", 14, 0, 2},
        {3, 32, 7, SM, SPREAD, {32, 14, 14}, {16, 8, 4}, 99, 2, 2, 9, 5, 1, CLUSTER, "smr", 12, 16},
        {3, 32, 7, SM, SPREAD, {32, 20, 18}, {16, 8, 4}, 160, 2, 2, 64, 9, 1, UNIFORM, "fix3"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        if (quick && i % 2 != 0)
            continue;
        run_case(cases[i]);
    }
    return wf_emu_summary("emu sets tests");
}
