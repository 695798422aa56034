/*
 * test_emu_offsets.cpp — CPU tests of module offsets_{d}d_p (kernels/offsets.cu; ABI.md,
 * "Module offsets_{d}d_p"), run through the CUDA emulation of cuda_emu.h (run.sh builds it with
 * the host's c_core/src/params/offsets.c and what it needs):
 *  - wf_offsets_gather_p against the host's wf_offsets_gather, bit for bit (integer counts), in
 *    1D/2D/3D, f32/f64, uniform, clustered, on-node and edge points (NaN, inf, |x| up to 1e4,
 *    +-pi and their neighbours), warps of one key, of two, of one but a lane, and all distinct
 *    (kind WARPS, whose one- and two-key warps are counted: the gather's groups of lanes of one
 *    key and its per-lane atomics; nodes give 2 keys per dim, 4 per pair), a grid of 1e8
 *    (u * 256 past 2^31), one set and two (grid.y = the sets), grids of one block and of
 *    several, with blocks flushing their counters inside the loop (the module is built with a
 *    small WF_OFF_ROUND) and at its end; the word w_sel cleared;
 *  - wf_offsets_choose_p against the host's wf_offsets_bound / wf_offsets_choose on plans with
 *    one and three candidates: every candidate's bound within 1e-12 relative of the host's, the
 *    index chosen (the widest over two sets, by atomicMax), a grid smaller than the sets, and
 *    n_sets = 0 (the plan's width without statistics).
 * Exit status 0 when everything passes.
 */
#include "cuda_emu.h"
#include "emu_registry.h"
#include "emu_test.h"

extern "C" {
#include "params/grid.h"
#include "params/offsets.h"
#include "params/width.h"
}

#include <algorithm>
#include <random>
#include <string>
#include <vector>

template <class T>
using gather_fn = void (*)(i64, int, const T *, const T *, const T *, i64, i64, i64, i64, u64 *,
                           int *);
using choose_fn = void (*)(i64, const u64 *, const void *, int *, double *, const u64 *, i64, i64);

enum Kind { UNIFORM, CLUSTER, NODES, EDGE, WARPS };
static const char *const kind_name[] = {"uniform", "cluster", "nodes", "edge", "warps"};

/* WARPS: the points of each aligned run of 32 (a warp-step of the gather: its blocks start at
 * multiples of 256 of the set) follow, per dim, one pattern of the run's: (run + dim) % 6 is
 * 0: all one value; 1: one value but lane 0's; 2: two values, alternating; 3: one value plus a
 * jitter of under 1/1024 of the grid spacing (cells of one or two neighbours, mostly one bin);
 * 4: uniform; 5: all 0 (cell 0). In some runs one lane's first coordinate is NaN, in others
 * every lane's second (those points count at 0 in every dim): keys all equal in a warp, for
 * some dims or pairs and not others, equal but for one lane, two keys, all distinct. */
template <class T>
static T warp_pattern(int dim, const i64 nf[3], i64 j, int d, double a[3], double b[3],
                      std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> U(-M_PI, M_PI), J(0.0, 1.0);
    const i64 run = j / 32;
    const int lane = (int)(j % 32);
    if (lane == 0) {
        a[d] = U(rng);
        b[d] = U(rng);
    }
    double v = a[d];
    switch ((run + d) % 6) {
    case 1:
        v = lane == 0 ? b[d] : a[d];
        break;
    case 2:
        v = lane % 2 ? b[d] : a[d];
        break;
    case 3:
        v = a[d] + J(rng) * 2 * M_PI / (double)nf[d] / 1024;
        break;
    case 4:
        v = U(rng);
        break;
    case 5:
        v = 0.0;
        break;
    default:
        break;
    }
    if (d == 0 && run % 7 == 3 && lane == (int)(run % 32))
        v = NAN;
    if (d == 1 && dim >= 2 && run % 11 == 5)
        v = NAN;
    return (T)v;
}

/* n points of kind k on the grid nf (dims < dim) into x[d][off ..], in T. */
template <class T>
static void make_points(Kind k, int dim, const i64 nf[3], i64 n, i64 off, std::vector<T> x[3],
                        std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> U(-M_PI, M_PI), C(0.3, 0.3 + 0.05);
    const double edge[] = {-M_PI,
                           M_PI,
                           0.0,
                           -1e-300,
                           3 * M_PI,
                           -7.5 * M_PI,
                           1e4,
                           -9999.5,
                           std::nextafter(M_PI, 0.0),
                           std::nextafter(-M_PI, 0.0),
                           NAN,
                           INFINITY};
    double a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
    for (i64 j = 0; j < n; ++j)
        for (int d = 0; d < dim; ++d) {
            if (k == WARPS) {
                x[d][off + j] = warp_pattern<T>(dim, nf, j, d, a, b, rng);
                continue;
            }
            double v = U(rng);
            if (k == CLUSTER)
                v = C(rng);
            if (k == NODES)
                v = 2 * M_PI * (double)(i64)(rng() % (u64)nf[d]) / (double)nf[d] - M_PI;
            if (k == EDGE && j % 3 == 0)
                v = edge[(j / 3 + d) % 12];
            x[d][off + j] = (T)v;
        }
}

struct GCase {
    int dim, prec;
    i64 nf[3];
    i64 set_M;
    int n_sets, gx;
    Kind kind[2];
};

template <class T> static void run_gather(const GCase &k) {
    const int dim = k.dim;
    const char *p = k.prec == 32 ? "f32" : "f64";
    char name[64];
    std::snprintf(name, sizeof name, "offsets_%dd_%s/gather", dim, p);
    const gather_fn<T> fn = (gather_fn<T>)wf_emu_kernel(name);
    const i64 M = k.set_M * k.n_sets;
    std::vector<T> x[3];
    for (int d = 0; d < 3; ++d)
        x[d].assign((size_t)M, (T)0);
    std::mt19937_64 rng(77 + dim * 10 + k.prec);
    for (int s = 0; s < k.n_sets; ++s)
        make_points<T>(k.kind[s], dim, k.nf, k.set_M, s * k.set_M, x, rng);
    std::vector<u64> stats((size_t)k.n_sets * WF_OFF_STATS_WORDS, 0);
    int w_sel = 77;
    const int pairs = dim == 3 ? 3 : dim - 1;
    const size_t smem = (size_t)(dim * WF_OFF_CELLS + pairs * WF_OFF_BINS * WF_OFF_BINS) * 4;
    wf_emu::launch(d3((unsigned)k.gx, (unsigned)k.n_sets), d3(256), smem, [&] {
        fn(M, dim, x[0].data(), dim >= 2 ? x[1].data() : nullptr, dim >= 3 ? x[2].data() : nullptr,
           k.nf[0], k.nf[1], k.nf[2], k.set_M, stats.data(), &w_sel);
    });
    /* the host's, per set, of the same (rounded) coordinates */
    bool same = w_sel == 0;
    int64_t nf[3] = {k.nf[0], k.nf[1], k.nf[2]};
    for (int s = 0; s < k.n_sets; ++s) {
        std::vector<double> xd[3];
        const double *xp[3] = {nullptr, nullptr, nullptr};
        for (int d = 0; d < dim; ++d) {
            xd[d].assign(x[d].begin() + s * k.set_M, x[d].begin() + (s + 1) * k.set_M);
            xp[d] = xd[d].data();
        }
        wf_offset_stats ref;
        wf_offsets_stats_init(&ref);
        wf_offsets_gather(dim, nf, k.set_M, xp, &ref);
        /* the warps of the set whose keys (cells of dim 0; bins of pair 0) are all equal, and
         * those of two keys: the kinds are to cover them */
        int one[2] = {0, 0}, two[2] = {0, 0};
        for (i64 r = 0; r + 32 <= k.set_M; r += 32) {
            for (int q = 0; q < (dim >= 2 ? 2 : 1); ++q) {
                std::vector<int> keys;
                for (i64 j = r; j < r + 32; ++j) {
                    int c[2];
                    bool finite = true;
                    for (int d = 0; d < dim; ++d)
                        finite = finite && std::isfinite(xp[d][j]);
                    for (int d = 0; d < std::min(dim, 2); ++d) {
                        const double u = wf_fold(finite ? xp[d][j] : 0.0, nf[d]);
                        c[d] = wf_offsets_cell(u - std::floor(u));
                    }
                    const int key =
                        q == 0 ? c[0] : c[0] / WF_OFF_CPB * WF_OFF_BINS + c[1] / WF_OFF_CPB;
                    if (std::find(keys.begin(), keys.end(), key) == keys.end())
                        keys.push_back(key);
                }
                one[q] += keys.size() == 1;
                two[q] += keys.size() == 2;
            }
        }
        std::printf("  set %d: warps of one key %d (dim 0), %d (pair 0); of two keys %d, %d\n", s,
                    one[0], one[1], two[0], two[1]);
        if (k.kind[s] == WARPS && (one[0] == 0 || two[0] == 0 || (dim >= 2 && one[1] == 0))) {
            std::printf("FAIL the warps pattern gave no such warps\n");
            same = false;
        }
        same = same &&
               std::memcmp(&ref, stats.data() + (size_t)s * WF_OFF_STATS_WORDS, sizeof ref) == 0;
    }
    if (!same)
        ++g_fail;
    std::printf("%s gather %dD %s nf=%lldx%lldx%lld sets=%d x %lld (%s, %s) grid=%dx%d: "
                "statistics %s the host's\n",
                same ? "ok  " : "FAIL", dim, p, k.nf[0], k.nf[1], k.nf[2], k.n_sets, k.set_M,
                kind_name[k.kind[0]], kind_name[k.kind[1]], k.gx, k.n_sets,
                same ? "equal" : "DIFFER FROM");
}

struct CCase {
    int dim, prec;
    i64 N[3];
    double sigma, tol;
    int w_hi;     /* 0: the width rule's at (N, tol, sigma) */
    i64 M;        /* points per set */
    Kind kind[2]; /* the two sets' */
    int grid;     /* blocks (<= 2) */
};

static void run_choose(const CCase &k) {
    const int dim = k.dim;
    int64_t N[3] = {k.N[0], k.N[1], k.N[2]}, nf[3] = {1, 1, 1};
    const int w_hi = k.w_hi ? k.w_hi : wf_kernel_width(dim, N, k.tol, k.sigma, 16);
    for (int d = 0; d < dim; ++d)
        nf[d] = wf_fine_size(N[d], k.sigma, w_hi);
    wf_offset_plan *op = nullptr;
    if (wf_offsets_plan_make(dim, N, nf, k.sigma, k.prec == 32 ? WARPFFT_F32 : WARPFFT_F64, k.tol,
                             w_hi, &op) != 0 ||
        op->n_cand < 1) {
        std::printf("FAIL choose %dD: no candidates below %d\n", dim, w_hi);
        ++g_fail;
        std::free(op);
        return;
    }
    /* the statistics of the two sets, on the host */
    std::vector<u64> stats(2 * WF_OFF_STATS_WORDS, 0);
    std::mt19937_64 rng(5 + dim);
    i64 nfl[3] = {nf[0], nf[1], nf[2]};
    for (int s = 0; s < 2; ++s) {
        std::vector<double> x[3];
        for (int d = 0; d < 3; ++d)
            x[d].assign((size_t)k.M, 0.0);
        make_points<double>(k.kind[s], dim, nfl, k.M, 0, x, rng);
        const double *xp[3] = {x[0].data(), x[1].data(), x[2].data()};
        wf_offsets_gather(
            dim, nf, k.M, xp,
            reinterpret_cast<wf_offset_stats *>(stats.data() + s * WF_OFF_STATS_WORDS));
    }
    const wf_offset_stats *st = reinterpret_cast<const wf_offset_stats *>(stats.data());
    std::vector<u64> plan_words((wf_offsets_plan_bytes(op) + 7) / 8);
    std::memcpy(plan_words.data(), op, wf_offsets_plan_bytes(op));
    char name[64];
    std::snprintf(name, sizeof name, "offsets_%dd_%s/choose", dim, k.prec == 32 ? "f32" : "f64");
    const choose_fn fn = (choose_fn)wf_emu_kernel(name);
    bool ok = true;
    double worst = 0.0;
    for (int n_sets = 0; n_sets <= 2; ++n_sets) {
        std::vector<double> bounds(2 * WF_OFF_MAX_CAND, NAN);
        int w_sel = 0; /* as the gather leaves it */
        const unsigned grid = n_sets == 0 ? 1u : (unsigned)std::min(k.grid, n_sets);
        wf_emu::launch(d3(grid), d3(256), 0, [&] {
            fn(n_sets, stats.data(), plan_words.data(), &w_sel, bounds.data(), nullptr, 0, 0);
        });
        int want = n_sets == 0 ? op->n_cand : 0;
        bool near = false; /* a bound within rounding of the limit: either choice is right */
        for (int s = 0; s < n_sets; ++s) {
            int c_host = op->n_cand;
            for (int c = 0; c < op->n_cand; ++c) {
                const double h = wf_offsets_bound(op, c, &st[s]), g = bounds[s * 3 + c];
                const double rel = std::fabs(g - h) / std::max(h, 1e-300);
                worst = std::max(worst, rel);
                ok = ok && rel <= 1e-12;
                near = near || std::fabs(h / op->limit2 - 1) < 1e-11;
                if (h <= op->limit2 && c_host == op->n_cand)
                    c_host = c;
            }
            want = std::max(want, c_host);
        }
        ok = ok && (w_sel == want || near);
        std::printf("  choose %dD n_sets %d: index %d (host %d) of %d candidates\n", dim, n_sets,
                    w_sel, want, op->n_cand);
        if (n_sets != 2)
            continue;
        /* the binning's counts: a set in min_bins - 1 bins keeps w_hi; in min_bins, the
         * choice above */
        for (int short_set = 0; short_set < 2; ++short_set) {
            const i64 min_bins = 37, nbins = min_bins + 40;
            std::vector<u64> counts(2 * nbins, 0);
            for (int s = 0; s < 2; ++s)
                for (i64 b = 0; b < min_bins - (s == 0 && short_set); ++b)
                    counts[s * nbins + 3 + b] = 1 + (u64)b % 5;
            int w2 = 0;
            wf_emu::launch(d3(grid), d3(256), 0, [&] {
                fn(n_sets, stats.data(), plan_words.data(), &w2, nullptr, counts.data(), nbins,
                   min_bins);
            });
            const int want2 = short_set ? op->n_cand : w_sel;
            ok = ok && w2 == want2;
            std::printf("  choose %dD, set 0 in %d bins: index %d (want %d)\n", dim,
                        (int)(min_bins - short_set), w2, want2);
        }
    }
    if (!ok)
        ++g_fail;
    std::printf("%s choose %dD %s N=%lld sigma %g tol %g w_hi %d candidates %d..%d (%s, %s): "
                "bounds within %.1e of the host's\n",
                ok ? "ok  " : "FAIL", dim, k.prec == 32 ? "f32" : "f64", k.N[0], k.sigma, k.tol,
                w_hi, op->width[0], op->width[op->n_cand - 1], kind_name[k.kind[0]],
                kind_name[k.kind[1]], worst);
    std::free(op);
}

int main(int argc, char **argv) {
    const bool quick = wf_emu_quick(argc, argv);
    /* dim prec nf set_M n_sets gx kinds */
    const std::vector<GCase> gcases = {
        {1, 32, {48, 1, 1}, 3000, 1, 3, {UNIFORM, UNIFORM}},
        {1, 64, {1000, 1, 1}, 2000, 2, 2, {EDGE, NODES}},
        {2, 32, {40, 36, 1}, 2500, 2, 1, {UNIFORM, CLUSTER}},
        {2, 64, {50, 48, 1}, 1500, 1, 2, {EDGE, EDGE}},
        {3, 32, {20, 24, 16}, 1200, 1, 2, {NODES, NODES}},
        {3, 64, {20, 20, 20}, 1000, 2, 2, {UNIFORM, EDGE}},
        /* warps of one key, two keys, one lane apart (run in quick too: even or 3D) */
        {1, 64, {100000007, 1, 1}, 2000, 2, 2, {WARPS, UNIFORM}},
        {3, 32, {20, 24, 16}, 3001, 2, 2, {WARPS, WARPS}},
        {2, 32, {40, 36, 1}, 2531, 1, 3, {WARPS, WARPS}},
        {3, 64, {48, 20, 64}, 1500, 1, 1, {WARPS, WARPS}},
    };
    for (size_t i = 0; i < gcases.size(); ++i) {
        if (quick && i % 2 == 1 && gcases[i].dim != 3)
            continue;
        wf_emu_by_prec(gcases[i].prec, [&]<class T, class>() { run_gather<T>(gcases[i]); });
    }
    /* dim prec N sigma tol w_hi M kinds grid */
    const std::vector<CCase> ccases = {
        {2, 32, {64, 64, 1}, 2.5, 1e-5, 0, 5000, {UNIFORM, NODES}, 2},
        {3, 32, {16, 16, 16}, 2.5, 1e-5, 0, 20000, {UNIFORM, CLUSTER}, 1},
        {1, 32, {24, 1, 1}, 1.25, 1e-4, 0, 3000, {UNIFORM, EDGE}, 2},
        /* tol 0.5: every width passes, candidates w_hi - 3 .. w_hi - 1 (all three bounds) */
        {3, 64, {10, 12, 8}, 2.0, 0.5, 8, 3000, {NODES, UNIFORM}, 2},
    };
    for (size_t i = 0; i < ccases.size(); ++i) {
        if (quick && i == 1)
            continue;
        run_choose(ccases[i]);
    }
    return wf_emu_summary("emu offsets tests");
}
