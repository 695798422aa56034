/*
 * test_emu.cpp — CPU tests of the output-driven spreading kernels (module si_..._spread_od) and
 * of module sort_stable, run through the CUDA emulation of cuda_emu.h (no GPU needed; run.sh
 * builds and runs it). What the GPU harness (kernels/test/gpu_test.py) checks on the device,
 * checked here on every machine:
 *  - sort_stable: the rank it writes for each point equals the number of earlier points in the
 *    same bin (one, two and three radix passes; sizes around the tile size; pos_wide).
 *  - OD spreading against a direct sum in double of the same kernel values over every cell of
 *    the fine grid (fw starts as NaN, so a cell the kernel never writes fails): 1D/2D/3D, f32 and
 *    f64, several widths, odd nf, nf = 2w, tiles wider than the grid or not dividing it, bins
 *    finer or coarser than tiles, clustered points (all in one bin), points on tile boundaries
 *    and at +-pi, several transforms with a grid smaller than the work (the grid-stride loops).
 *  - a rerun on the same sorted input gives the same bits (the emulator's schedule is fixed,
 *    so this checks the kernel has no order dependence of its own, e.g. uninitialised state).
 * Exit status 0 when everything passes.
 */
#include "cuda_emu.h"
#include "emu_registry.h"
#include "emu_test.h"
#include "../../module_names.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace host {
#include "../../common.cuh"
}
#include "footprint_ref.h"

/* ---------------------------------------------------------------- module sort_stable */
typedef void (*hist_fn)(i64, const int *, int, i64, u64 *);
typedef void (*rowscan_fn)(i64, u64 *, u64 *);
typedef void (*scatter_fn)(i64, const int *, const void *, int, i64, const u64 *, const u64 *,
                           int *, void *, int, const u64 *, void *);

#define ST_TILE 2048

/* pos_in_bin by the three kernels of sort_stable, as the host runs them (ABI.md) */
static std::vector<u64> stable_ranks(const std::vector<int> &bin_of, i64 nbins,
                                     const std::vector<u64> &bin_start, int pos_wide, int grid) {
    const i64 M = (i64)bin_of.size();
    const i64 ntiles = (M + ST_TILE - 1) / ST_TILE;
    int bits = 0;
    while (bits < 31 && (1ll << bits) < nbins)
        ++bits;
    const int passes = std::max(1, (bits + 7) / 8);
    std::vector<int> keys[2] = {bin_of, std::vector<int>(M + 1)};
    std::vector<u64> vals64[2] = {std::vector<u64>(M + 1), std::vector<u64>(M + 1)};
    std::vector<unsigned> vals32[2] = {std::vector<unsigned>(M + 1), std::vector<unsigned>(M + 1)};
    std::vector<u64> hist(256 * std::max<i64>(ntiles, 1)), dtot(256);
    std::vector<u64> pos64(M + 1, ~0ull);
    std::vector<unsigned> pos32(M + 1, ~0u);
    dim3 blk;
    blk.x = 256;
    dim3 g;
    g.x = (unsigned)grid;
    int in = 0;
    for (int p = 0; p < passes; ++p) {
        const int shift = 8 * p;
        const bool last = p == passes - 1;
        const void *vin =
            p == 0 ? nullptr
                   : (pos_wide ? (const void *)vals64[in].data() : (const void *)vals32[in].data());
        void *vout = pos_wide ? (void *)vals64[1 - in].data() : (void *)vals32[1 - in].data();
        wf_emu::launch(g, blk, 0, [&] {
            ((hist_fn)wf_emu_kernel("wf_stable_hist"))(M, keys[in].data(), shift, ntiles,
                                                       hist.data());
        });
        wf_emu::launch(g, blk, 0, [&] {
            ((rowscan_fn)wf_emu_kernel("wf_stable_rowscan"))(ntiles, hist.data(), dtot.data());
        });
        wf_emu::launch(g, blk, 0, [&] {
            ((scatter_fn)wf_emu_kernel("wf_stable_scatter"))(
                M, keys[in].data(), vin, shift, ntiles, hist.data(), dtot.data(),
                last ? nullptr : keys[1 - in].data(), last ? nullptr : vout, pos_wide,
                last ? bin_start.data() : nullptr,
                pos_wide ? (void *)pos64.data() : (void *)pos32.data());
        });
        in = 1 - in;
    }
    std::vector<u64> r(M);
    for (i64 j = 0; j < M; ++j)
        r[j] = pos_wide ? pos64[j] : (u64)pos32[j];
    return r;
}

static void test_sort_stable() {
    std::mt19937_64 rng(7);
    struct C {
        i64 M, nbins;
        int pos_wide, grid;
        bool clustered;
    } cases[] = {
        {0, 5, 0, 1, false},        {1, 1, 0, 1, false},        {2047, 1, 0, 2, false},
        {2048, 300, 0, 1, false},   {2049, 300, 1, 3, false},   {5000, 256, 0, 2, false},
        {5000, 257, 0, 4, false},   {9000, 70000, 0, 3, false}, {9000, 70000, 1, 2, true},
        {4097, 65536, 0, 1, false}, {6000, 3, 0, 5, true},
    };
    for (const C &c : cases) {
        std::vector<int> bin_of(c.M);
        for (i64 j = 0; j < c.M; ++j)
            bin_of[j] = c.clustered ? (int)(c.nbins / 2) : (int)(rng() % (u64)c.nbins);
        std::vector<u64> count(c.nbins), start(c.nbins), want(c.M);
        for (i64 j = 0; j < c.M; ++j)
            want[j] = count[bin_of[j]]++;
        u64 s = 0;
        for (i64 b = 0; b < c.nbins; ++b) {
            start[b] = s;
            s += count[b];
        }
        const std::vector<u64> got = stable_ranks(bin_of, c.nbins, start, c.pos_wide, c.grid);
        i64 bad = 0;
        for (i64 j = 0; j < c.M; ++j)
            bad += got[j] != want[j];
        EXPECT(bad == 0, "sort_stable M=%lld nbins=%lld pos_wide=%d grid=%d: %lld wrong ranks", c.M,
               c.nbins, c.pos_wide, c.grid, bad);
    }
    std::printf("sort_stable: %s\n", g_fail ? "FAIL" : "ok");
}

/* ---------------------------------------------------------------- OD spreading */
template <class T, class Cx>
using od_fn = void (*)(i64, const T *, const T *, const T *, const Cx *, i64, i64, i64, i64,
                       const i64 *, T, int, int, int, i64, i64, i64, const u64 *, const u64 *, int,
                       int, int, int, Cx *, const int *, int);

enum Dist { UNIFORM, CLUSTER, BOUNDARY, EDGE };

struct OdCase {
    int dim, prec, W;
    i64 nf[3];
    int bs[3], tl[3], pitch_pad, nwarps;
    i64 M;
    int ntransf, gridx, gridy;
    Dist dist;
};

static i64 stage_bytes(int dim, int prec, int W) { /* ABI.md, WF_OD_STAGE_BYTES */
    const i64 cs = prec == 32 ? 8 : 16, ts = prec == 32 ? 4 : 8;
    return 32 * (cs + 16 + dim * W * ts) + 672;
}

template <class T, class Cx> static void run_od(const OdCase &k) {
    const int dim = k.dim, W = k.W;
    const char *p = k.prec == 32 ? "f32" : "f64";
    char name[64]; /* the entry point's name by the rule the host looks it up with */
    std::snprintf(name, sizeof name, WF_SI_ENTRY_FMT, "spread", "od", dim, p, W);
    const od_fn<T, Cx> fn = (od_fn<T, Cx>)wf_emu_kernel(name);
    std::mt19937_64 rng(1000 + dim * 100 + W + k.dist);
    std::uniform_real_distribution<double> U(-M_PI, M_PI);
    const i64 M = k.M;
    i64 nf[3] = {1, 1, 1}, nb[3] = {1, 1, 1};
    int bs[3] = {1, 1, 1}, tl[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) {
        nf[d] = k.nf[d];
        bs[d] = k.bs[d];
        tl[d] = k.tl[d];
        nb[d] = (nf[d] + bs[d] - 1) / bs[d];
    }
    /* points (input order), in the working precision */
    std::vector<T> x[3];
    for (int d = 0; d < 3; ++d)
        x[d].assign(M, (T)0);
    for (i64 j = 0; j < M; ++j)
        for (int d = 0; d < dim; ++d) {
            double v = U(rng);
            if (k.dist == CLUSTER) /* all in one bin: the cell range [1, 2) of every dimension */
                v = 2 * M_PI * (1.0 + 0.999 * (double)(rng() % 1000) / 1000.0) / (double)nf[d];
            if (k.dist == BOUNDARY) { /* on (or next to) tile and bin boundaries */
                const i64 c = (i64)(rng() % (u64)nf[d]) / tl[d] * tl[d];
                const double off = (double)(int)(rng() % 5) - 2.0 + (rng() % 2 ? 0.5 : 0.0);
                v = 2 * M_PI * ((double)c + off) / (double)nf[d] - M_PI;
            }
            if (k.dist == EDGE && j < 16) {
                const double e[] = {-M_PI,    M_PI,        0.0,  -1e-300,
                                    3 * M_PI, -7.5 * M_PI, 20.0, std::nextafter(M_PI, 0.0)};
                v = e[(j + d) % 8];
            }
            x[d][j] = (T)v;
        }
    /* setpts on the host, with the kernels' fold: bins, counts, starts; stable order */
    std::vector<int> bin_of(M);
    for (i64 j = 0; j < M; ++j) {
        i64 b = 0, mul = 1;
        for (int d = 0; d < dim; ++d) {
            const double u = host::wf_fold((double)x[d][j], nf[d]);
            const i64 bd = std::min((i64)std::floor(u) / bs[d], nb[d] - 1);
            b += mul * bd;
            mul *= nb[d];
        }
        bin_of[j] = (int)b;
    }
    const i64 nbins = nb[0] * nb[1] * nb[2];
    std::vector<u64> count(nbins), start(nbins), rank(M);
    for (i64 j = 0; j < M; ++j)
        rank[j] = count[bin_of[j]]++;
    u64 s = 0;
    for (i64 b = 0; b < nbins; ++b) {
        start[b] = s;
        s += count[b];
    }
    std::vector<T> xs[3];
    for (int d = 0; d < 3; ++d)
        xs[d].assign(std::max<i64>(M, 1), (T)0);
    std::vector<i64> sort_idx(std::max<i64>(M, 1));
    for (i64 j = 0; j < M; ++j) {
        const u64 dst = start[bin_of[j]] + rank[j];
        sort_idx[dst] = j;
        for (int d = 0; d < dim; ++d)
            xs[d][dst] = x[d][j];
    }
    /* strengths */
    std::normal_distribution<double> N01;
    std::vector<Cx> c(std::max<i64>(M * k.ntransf, 1));
    for (auto &v : c) {
        v.x = (T)N01(rng);
        v.y = (T)N01(rng);
    }
    const double beta_d = 2.30 * W;
    const T beta = (T)beta_d;
    /* the kernel */
    const i64 nfprod = nf[0] * nf[1] * nf[2];
    std::vector<Cx> fw(nfprod * k.ntransf);
    auto run = [&] {
        for (auto &v : fw)
            v.x = v.y = (T)NAN;
        const int pitch = tl[0] + k.pitch_pad;
        const i64 tile_bytes = (i64)pitch * tl[1] * tl[2] * (i64)sizeof(Cx);
        const i64 warp_bytes = ((tile_bytes + 15) & ~15ll) + stage_bytes(dim, k.prec, W);
        dim3 g, b;
        g.x = (unsigned)k.gridx;
        g.y = (unsigned)k.gridy;
        b.x = 32u * (unsigned)k.nwarps;
        wf_emu::launch(g, b, (size_t)(warp_bytes * k.nwarps), [&] {
            fn(M, xs[0].data(), dim >= 2 ? xs[1].data() : nullptr,
               dim >= 3 ? xs[2].data() : nullptr, c.data(), nf[0], nf[1], nf[2], k.ntransf,
               sort_idx.data(), beta, bs[0], bs[1], bs[2], nb[0], nb[1], nb[2], start.data(),
               count.data(), k.tl[0], dim >= 2 ? k.tl[1] : 7, dim >= 3 ? k.tl[2] : 5, pitch,
               fw.data(), nullptr, 0);
        });
    };
    run();
    /* direct spread in double of the same kernel values */
    std::vector<double> ref(2 * nfprod * k.ntransf, 0.0);
    for (i64 j = 0; j < M; ++j)
        wf_ref_footprint(dim, W, nf, x, j, beta, [&](i64 cell, double kk) {
            for (int t = 0; t < k.ntransf; ++t) {
                ref[2 * (t * nfprod + cell)] += kk * (double)c[t * M + j].x;
                ref[2 * (t * nfprod + cell) + 1] += kk * (double)c[t * M + j].y;
            }
        });
    double maxref = 0, maxerr = 0;
    i64 nan_cells = 0;
    for (i64 i = 0; i < nfprod * k.ntransf; ++i) {
        maxref = std::max({maxref, std::fabs(ref[2 * i]), std::fabs(ref[2 * i + 1])});
        if (!(std::isfinite((double)fw[i].x) && std::isfinite((double)fw[i].y))) {
            ++nan_cells;
            continue;
        }
        maxerr = std::max({maxerr, std::fabs((double)fw[i].x - ref[2 * i]),
                           std::fabs((double)fw[i].y - ref[2 * i + 1])});
    }
    const double rel = maxref > 0 ? maxerr / maxref : maxerr;
    const double tol = k.prec == 32 ? 2e-6 : 1e-13;
    /* rerun: the same bits */
    const std::vector<Cx> first = fw;
    run();
    const bool same = std::memcmp(first.data(), fw.data(), fw.size() * sizeof(Cx)) == 0;
    const bool ok = nan_cells == 0 && rel <= tol && same && (M == 0 || maxref > 0);
    if (!ok)
        ++g_fail;
    std::printf("%s %s nf=%lldx%lldx%lld bs=%dx%dx%d tl=%dx%dx%d pad=%d nw=%d M=%lld nt=%d "
                "grid=%dx%d dist=%d: rel err %.2e, unwritten cells %lld, rerun %s\n",
                ok ? "ok  " : "FAIL", name, nf[0], nf[1], nf[2], bs[0], bs[1], bs[2], tl[0], tl[1],
                tl[2], k.pitch_pad, k.nwarps, M, k.ntransf, k.gridx, k.gridy, (int)k.dist, rel,
                nan_cells, same ? "same bits" : "DIFFERS");
}

static void run_case(const OdCase &k) {
    wf_emu_by_prec(k.prec, [&]<class T, class Cx>() { run_od<T, Cx>(k); });
}

int main(int argc, char **argv) {
    const bool quick = wf_emu_quick(argc, argv);
    test_sort_stable();
    /* dim prec W nf bs tl pad nwarps M ntransf gridx gridy dist */
    std::vector<OdCase> cases = {
        {3, 32, 7, {24, 20, 17}, {4, 4, 2}, {8, 8, 4}, 7, 2, 1500, 2, 5, 1, UNIFORM},
        {3, 64, 5, {10, 10, 10}, {3, 5, 10}, {16, 8, 4}, 0, 2, 800, 1, 3, 1, CLUSTER},
        {3, 32, 7, {14, 14, 14}, {7, 7, 7}, {8, 8, 4}, 0, 1, 600, 1, 2, 1, BOUNDARY},
        {3, 64, 11, {22, 23, 24}, {8, 8, 8}, {16, 16, 4}, 3, 2, 400, 2, 4, 2, EDGE},
        {2, 32, 7, {40, 33}, {8, 4}, {16, 8}, 7, 2, 3000, 3, 4, 2, BOUNDARY},
        {2, 64, 11, {22, 22}, {22, 1}, {64, 8}, 0, 2, 2000, 1, 1, 1, UNIFORM},
        {2, 32, 2, {8, 9}, {2, 3}, {3, 2}, 1, 3, 500, 2, 2, 1, EDGE},
        {2, 64, 16, {37, 32}, {5, 16}, {12, 6}, 4, 1, 700, 1, 3, 1, CLUSTER},
        {1, 32, 7, {1000}, {32}, {128}, 0, 2, 5000, 2, 2, 2, UNIFORM},
        {1, 64, 16, {32}, {5}, {20}, 0, 2, 900, 1, 1, 1, EDGE},
        {1, 32, 3, {7}, {1}, {64}, 0, 1, 300, 1, 1, 1, CLUSTER},
        {1, 64, 11, {3000001}, {512}, {2048}, 0, 4, 2000, 1, 64, 1, UNIFORM},
        {3, 32, 12, {24, 24, 24}, {8, 8, 8}, {8, 8, 8}, 4, 2, 200, 1, 8, 1, UNIFORM},
        {3, 64, 16, {32, 32, 32}, {16, 16, 16}, {32, 16, 2}, 0, 1, 60, 1, 16, 1, BOUNDARY},
        {3, 32, 2, {4, 4, 5}, {1, 1, 1}, {3, 2, 2}, 0, 2, 100, 2, 4, 2, EDGE},
        {3, 32, 7, {24, 20, 17}, {4, 4, 2}, {8, 8, 4}, 0, 2, 0, 1, 3, 1, UNIFORM}, /* no points */
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        if (quick && i % 3 != 0)
            continue;
        run_case(cases[i]);
    }
    return wf_emu_summary("emu tests");
}
