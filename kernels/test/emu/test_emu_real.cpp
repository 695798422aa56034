/*
 * test_emu_real.cpp — CPU tests of the real-valued kernels (kernels/ABI.md, "Real-valued
 * modules"), run through the CUDA emulation of cuda_emu.h (run.sh builds and runs it):
 *  - spreading, every path the emulator reaches (GM team and thread per point; SM thread per
 *    point in fixed point (1D f32) and with float atomics (1D f64), team in fixed point (2D f32,
 *    and the 3D f32 variant), output-driven (3D; 2D f64 several points per step), the tile in
 *    registers (2D and 3D f64 defaults, 3D f32 in patches); OD): the real module's fine grid
 *    against the complex module's on the same points with the strengths' imaginary parts zero —
 *    the real grid must equal the complex grid's real part BIT FOR BIT (the emulator runs both
 *    in the same order and the real kernel adds the same products), and both within 2e-6 (f32) /
 *    1e-13 (f64) of a direct sum in double;
 *  - interpolation (GM thread and team, SM thread and team): the real output from a real grid
 *    against Re of the complex output from the same grid with zero imaginary parts, bit for bit,
 *    and against the direct sum;
 *  - wf_deconvolve_half_p and wf_amplify_half_p against a host computation of the same products
 *    in the same order (bit for bit): even and odd N1 (k1 = N1/2 included for even N1), both
 *    modeords, ntransf 2, 1D/2D/3D, fac_tab with w_sel; amplify_half's every output element
 *    written (the half spectrum starts as NaN).
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

enum Method { GM, SM, OD };
enum Dir { SPREAD, INTERP };

struct Case {
    int dim, prec, W;
    Method method;
    Dir dir;
    i64 nf[3];
    int bs[3];
    i64 M;
    int ntransf, maxsub, gridx, gridy;
    bool cluster;
    /* a variant module (run.sh builds it with its entry renamed entry + "_" var): "smr" the
     * register tile (nr, px, nbw as its WF_SMR_* macros), "fix3" the 3D f32 fixed-point team,
     * "thr" GM spreading thread per point, "team" GM interpolation team per point */
    const char *var = "";
    int nr = 0, px = 0, nbw = 1;
    int tl[3] = {8, 8, 4}; /* OD: warp tile, pitch pad, warps */
    int pitch_pad = 0, nwarps = 2;
};

/* The kernel's types with the value Vx (Cx complex, T real). */
template <class T, class Vx> struct SI {
    typedef void (*gm)(i64, const T *, const T *, const T *, Vx *, i64, i64, i64, i64, const i64 *,
                       T, Vx *, i64, i64, const int *, int);
    typedef void (*sm)(i64, const T *, const T *, const T *, Vx *, i64, i64, i64, i64, const i64 *,
                       T, int, int, int, i64, i64, i64, const u64 *, const u64 *, const u64 *,
                       const int *, const u64 *, i64, Vx *, i64, i64, const int *, int);
    typedef void (*od)(i64, const T *, const T *, const T *, const Vx *, i64, i64, i64, i64,
                       const i64 *, T, int, int, int, i64, i64, i64, const u64 *, const u64 *, int,
                       int, int, int, Vx *, const int *, int);
};

/* setpts on the host (the kernels' fold): sorted coordinates, sort_idx, bins, subproblems */
template <class T> struct Sorted {
    std::vector<T> xs[3];
    std::vector<i64> sort_idx;
    std::vector<u64> count, start, nsub;
    std::vector<int> subprob_bin;
    u64 n_subprob = 0;
    i64 nb[3] = {1, 1, 1};
};

template <class T>
static Sorted<T> host_setpts(const Case &k, const std::vector<T> (&x)[3], const i64 nf[3],
                             const int bs[3]) {
    Sorted<T> S;
    const i64 M = k.M;
    for (int d = 0; d < k.dim; ++d)
        S.nb[d] = (nf[d] + bs[d] - 1) / bs[d];
    const i64 nbins = S.nb[0] * S.nb[1] * S.nb[2];
    std::vector<i64> bin_of(M);
    for (i64 j = 0; j < M; ++j) {
        i64 b = 0, mul = 1;
        for (int d = 0; d < k.dim; ++d) {
            const double u = host::wf_fold((double)x[d][j], nf[d]);
            b += mul * std::min((i64)std::floor(u) / bs[d], S.nb[d] - 1);
            mul *= S.nb[d];
        }
        bin_of[j] = b;
    }
    S.count.assign(nbins, 0);
    S.start.assign(nbins, 0);
    S.nsub.assign(nbins, 0);
    std::vector<u64> rank(M);
    for (i64 j = 0; j < M; ++j)
        rank[j] = S.count[bin_of[j]]++;
    u64 s = 0, ns = 0;
    for (i64 b = 0; b < nbins; ++b) {
        S.start[b] = s;
        s += S.count[b];
        if (k.maxsub > 0) {
            S.nsub[b] = ns;
            const u64 n = (S.count[b] + k.maxsub - 1) / k.maxsub;
            for (u64 q = 0; q < n; ++q)
                S.subprob_bin.push_back((int)b);
            ns += n;
        }
    }
    S.n_subprob = ns;
    S.subprob_bin.push_back(0);
    for (int d = 0; d < 3; ++d)
        S.xs[d].assign(std::max<i64>(M, 1), (T)0);
    S.sort_idx.assign(std::max<i64>(M, 1), 0);
    for (i64 j = 0; j < M; ++j) {
        const u64 dst = S.start[bin_of[j]] + rank[j];
        S.sort_idx[dst] = j;
        for (int d = 0; d < k.dim; ++d)
            S.xs[d][dst] = x[d][j];
    }
    return S;
}

/* One launch of the case's kernel with values Vx (strengths c and grid fw of that type). */
template <class T, class Vx>
static void launch(const Case &k, bool real, const Sorted<T> &S, const i64 nf[3], const int bs[3],
                   T beta, Vx *c, Vx *fw) {
    const int dim = k.dim, W = k.W;
    const char *p = k.prec == 32 ? (real ? "f32r" : "f32") : (real ? "f64r" : "f64");
    const char *meth = k.method == GM ? "gm" : k.method == SM ? "sm" : "od";
    char name[80];
    std::snprintf(name, sizeof name, WF_SI_ENTRY_FMT, k.dir == SPREAD ? "spread" : "interp", meth,
                  dim, p, W);
    const std::string var = k.var;
    if (!var.empty())
        std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), "_%s",
                      var.c_str());
    void *const fn = wf_emu_kernel(name); /* here, not in a fiber: a failed lookup exits */
    const T *x = S.xs[0].data(), *y = dim >= 2 ? S.xs[1].data() : nullptr,
            *z = dim >= 3 ? S.xs[2].data() : nullptr;
    const i64 M = k.M, nt = k.ntransf;
    const size_t vs = sizeof(Vx), ts = sizeof(T);
    if (k.method == GM) {
        wf_emu::launch(d3((unsigned)k.gridx), d3(256), 0, [&] {
            ((typename SI<T, Vx>::gm)fn)(M, x, y, z, c, nf[0], nf[1], nf[2], nt, S.sort_idx.data(),
                                         beta, fw, M, nt, nullptr, 0);
        });
        return;
    }
    if (k.method == OD) {
        const int tl1 = k.tl[0], tl2 = dim >= 2 ? k.tl[1] : 1, tl3 = dim >= 3 ? k.tl[2] : 1;
        const int pitch = tl1 + k.pitch_pad;
        const i64 tile = ((i64)pitch * tl2 * tl3 * (i64)vs + 15) & ~15ll;
        const i64 stage = 32 * ((i64)vs + 16 + dim * W * (i64)ts) + 672; /* WF_OD_STAGE_BYTES */
        wf_emu::launch(d3((unsigned)k.gridx, (unsigned)k.gridy), d3(32u * (unsigned)k.nwarps),
                       (size_t)((tile + stage) * k.nwarps), [&] {
                           ((typename SI<T, Vx>::od)fn)(
                               M, x, y, z, c, nf[0], nf[1], nf[2], nt, S.sort_idx.data(), beta,
                               bs[0], bs[1], bs[2], S.nb[0], S.nb[1], S.nb[2], S.start.data(),
                               S.count.data(), k.tl[0], k.tl[1], k.tl[2], pitch, fw, nullptr, 0);
                       });
        return;
    }
    /* SM: the tile (ABI.md: td cells of sizeof(V), 2 * 4 * WF_NV bytes in fixed point) or the
     * register tile's batches and warps */
    const int pad = (W + 1) / 2;
    size_t cells = 1;
    for (int d = 0; d < dim; ++d)
        cells *= (size_t)(bs[d] + 2 * pad);
    const bool fix = k.dir == SPREAD && k.prec == 32 && (dim <= 2 || var == "fix3");
    size_t smem = cells * (fix ? 2 * vs : vs);
    unsigned block = 256;
    int nr = k.nr, px = k.px, nbw = k.nbw;
    if (var.empty() && k.dir == SPREAD && WF_SMR_NR_OF(dim, k.prec, W) > 0) {
        nr = WF_SMR_NR_OF(dim, k.prec, W);
        px = 0;
        nbw = WF_SMR_NBW_OF(dim, k.prec, W);
    }
    if (nr > 0) {
        const int td1 = bs[0] + 2 * pad, td2 = bs[1] + 2 * pad;
        const int vec = 16 / (int)ts, nrp = (nr + vec - 1) / vec * vec, nb = 32 * nbw;
        smem = (size_t)nb * (nrp * ts + 32 + 2 * vs + W * vs + 16 * dim + (dim == 3 ? W * ts : 0));
        const int py = px > 0 ? 32 / px : 1;
        const int warps = dim == 2 ? (td1 + 31) / 32
                          : px > 0 ? ((td1 + px - 1) / px) * ((td2 + py - 1) / py)
                                   : (td1 * td2 + 31) / 32;
        block = 32u * (unsigned)warps;
    }
    wf_emu::launch(d3((unsigned)k.gridx, (unsigned)k.gridy), d3(block), smem, [&] {
        ((typename SI<T, Vx>::sm)fn)(
            M, x, y, z, c, nf[0], nf[1], nf[2], nt, S.sort_idx.data(), beta, bs[0], bs[1], bs[2],
            S.nb[0], S.nb[1], S.nb[2], S.start.data(), S.count.data(), S.nsub.data(),
            S.subprob_bin.data(), &S.n_subprob, (i64)k.maxsub, fw, M, nt, nullptr, 0);
    });
}

template <class T, class Cx> static void run_si(const Case &k) {
    const int dim = k.dim, W = k.W;
    std::mt19937_64 rng(500 + dim * 100 + W * 7 + (int)k.method * 3 + (int)k.dir);
    std::uniform_real_distribution<double> U(-M_PI, M_PI);
    i64 nf[3] = {1, 1, 1};
    int bs[3] = {1, 1, 1};
    for (int d = 0; d < dim; ++d) {
        nf[d] = k.nf[d];
        bs[d] = k.bs[d];
    }
    const i64 M = k.M, nt = k.ntransf, nfprod = nf[0] * nf[1] * nf[2];
    std::vector<T> x[3];
    for (int d = 0; d < 3; ++d)
        x[d].assign(std::max<i64>(M, 1), (T)0);
    for (i64 j = 0; j < M; ++j)
        for (int d = 0; d < dim; ++d) {
            double v = U(rng);
            if (k.cluster) /* a quarter of each dimension */
                v = -M_PI + 0.25 * (v + M_PI);
            x[d][j] = (T)v;
        }
    const Sorted<T> S = host_setpts(k, x, nf, bs);
    const T beta = (T)(2.30 * W);
    std::normal_distribution<double> N01;
    /* the real data and the same as complex with zero imaginary parts */
    const i64 nin = k.dir == SPREAD ? M * nt : nfprod * nt;
    const i64 nout = k.dir == SPREAD ? nfprod * nt : M * nt;
    std::vector<T> in_r(std::max<i64>(nin, 1));
    std::vector<Cx> in_c(std::max<i64>(nin, 1));
    for (i64 i = 0; i < nin; ++i) {
        in_r[i] = (T)N01(rng);
        in_c[i].x = in_r[i];
        in_c[i].y = (T)0;
    }
    std::vector<T> out_r(std::max<i64>(nout, 1), (T)0);
    std::vector<Cx> out_c(std::max<i64>(nout, 1));
    for (auto &v : out_c)
        v.x = v.y = (T)0;
    if (k.method == OD) { /* OD writes every cell: NaN catches one it leaves */
        std::fill(out_r.begin(), out_r.end(), (T)NAN);
        for (auto &v : out_c)
            v.x = v.y = (T)NAN;
    }
    if (k.dir == SPREAD) {
        launch<T, Cx>(k, false, S, nf, bs, beta, in_c.data(), out_c.data());
        launch<T, T>(k, true, S, nf, bs, beta, in_r.data(), out_r.data());
    } else {
        launch<T, Cx>(k, false, S, nf, bs, beta, out_c.data(), in_c.data());
        launch<T, T>(k, true, S, nf, bs, beta, out_r.data(), in_r.data());
    }
    /* real == Re(complex), bit for bit; and the direct sum in double */
    i64 differ = 0;
    double maxdiff = 0;
    for (i64 i = 0; i < nout; ++i)
        if (std::memcmp(&out_r[i], &out_c[i].x, sizeof(T)) != 0) {
            ++differ;
            maxdiff = std::max(maxdiff, std::fabs((double)out_r[i] - (double)out_c[i].x));
        }
    std::vector<double> ref(nout, 0.0);
    for (i64 j = 0; j < M; ++j)
        wf_ref_footprint(dim, W, nf, x, j, beta, [&](i64 cell, double kk) {
            for (i64 t = 0; t < nt; ++t) {
                if (k.dir == SPREAD)
                    ref[t * nfprod + cell] += kk * (double)in_r[t * M + j];
                else
                    ref[t * M + j] += kk * (double)in_r[t * nfprod + cell];
            }
        });
    double maxref = 0, maxerr = 0;
    for (i64 i = 0; i < nout; ++i) {
        maxref = std::max(maxref, std::fabs(ref[i]));
        const double e = std::fabs((double)out_r[i] - ref[i]);
        maxerr = std::isfinite(e) ? std::max(maxerr, e) : INFINITY;
    }
    const double rel = maxref > 0 ? maxerr / maxref : maxerr;
    const double tol = k.prec == 32 ? 2e-6 : 1e-13;
    const bool ok = differ == 0 && rel <= tol && (M == 0 || maxref > 0);
    if (!ok)
        ++g_fail;
    const char *meth = k.method == GM ? "gm" : k.method == SM ? "sm" : "od";
    std::printf("%s %s %dd f%d%s w%d %s%s%s nf=%lldx%lldx%lld bs=%dx%dx%d M=%lld nt=%lld: real vs "
                "Re(complex) %lld of %lld differ (max %.2e), rel err %.2e\n",
                ok ? "ok  " : "FAIL", k.dir == SPREAD ? "spread" : "interp", dim, k.prec, "r", W,
                meth, *k.var ? "_" : "", k.var, nf[0], nf[1], nf[2], bs[0], bs[1], bs[2], M, nt,
                differ, nout, maxdiff, rel);
}

/* ---------------------------------------------------------------- half deconvolve / amplify */
template <class T, class Cx> struct Prep {
    typedef void (*fn)(int, i64, i64, i64, i64, i64, i64, i64, const T *, const T *, const T *, int,
                       const Cx *, Cx *, const int *, const u64 *);
};

static i64 index_of_mode(i64 k, i64 N, int modeord) {
    return modeord == 0 ? k + N / 2 : (k >= 0 ? k : N + k);
}

template <class T, class Cx>
static void run_prep(int dim, int prec, i64 N1, i64 N2, i64 N3, i64 nf1, i64 nf2, i64 nf3,
                     int modeord, bool use_tab) {
    const i64 N[3] = {N1, dim >= 2 ? N2 : 1, dim >= 3 ? N3 : 1};
    const i64 nf[3] = {nf1, dim >= 2 ? nf2 : 1, dim >= 3 ? nf3 : 1};
    const i64 H1 = N[0] / 2 + 1, nf1h = nf[0] / 2 + 1, nt = 2;
    const i64 Nh = H1 * N[1] * N[2], nfh = nf1h * nf[1] * nf[2];
    std::mt19937_64 rng(9 + dim + 10 * N1 + modeord);
    std::normal_distribution<double> N01;
    std::vector<T> fac[3];
    for (int d = 0; d < 3; ++d) {
        fac[d].resize(N[d] / 2 + 1);
        for (auto &f : fac[d])
            f = (T)(1.0 + 0.5 * std::fabs(N01(rng)));
    }
    /* fac_tab (a plan of several widths, w_sel = 1): entry 1's factors are fac, entry 0's junk */
    std::vector<T> junk(64, (T)-7);
    u64 tab[6] = {(u64)junk.data(),   (u64)junk.data(),   (u64)junk.data(),
                  (u64)fac[0].data(), (u64)fac[1].data(), (u64)fac[2].data()};
    const int w_sel = 1;
    const T *f1 = use_tab ? junk.data() : fac[0].data(),
            *f2 = use_tab ? junk.data() : fac[1].data(),
            *f3 = use_tab ? junk.data() : fac[2].data();
    const char *p = prec == 32 ? "f32" : "f64";
    const std::string ds = std::to_string(dim) + "d_" + p;
    auto fac_of = [&](const i64(&kk)[3]) { /* the kernels' order: fac1, then fac2, then fac3 */
                                           T f = fac[0][kk[0]];
                                           if (dim >= 2)
                                               f *= fac[1][std::llabs(kk[1])];
                                           if (dim >= 3)
                                               f *= fac[2][std::llabs(kk[2])];
                                           return f;
    };
    auto fac_amp = [&](const i64(&kk)[3]) { /* amplify's: the row's (1 * fac2 * fac3) * fac1 */
                                            T fr = (T)1;
                                            if (dim >= 2)
                                                fr *= fac[1][std::llabs(kk[1])];
                                            if (dim >= 3)
                                                fr *= fac[2][std::llabs(kk[2])];
                                            return fr * fac[0][kk[0]];
    };
    /* every half mode k (k1 = 0..N1/2; k2, k3 over their N modes): its index and fine cell */
    auto each_mode = [&](auto visit) {
        for (i64 k3 = -(N[2] / 2); k3 <= (N[2] - 1) / 2; ++k3)
            for (i64 k2 = -(N[1] / 2); k2 <= (N[1] - 1) / 2; ++k2)
                for (i64 k1 = 0; k1 <= N[0] / 2; ++k1) {
                    const i64 kk[3] = {k1, k2, k3};
                    const i64 idx = k1 + H1 * (index_of_mode(k2, N[1], modeord) +
                                               N[1] * index_of_mode(k3, N[2], modeord));
                    const i64 l = k1 + nf1h * ((k2 >= 0 ? k2 : nf[1] + k2) +
                                               nf[1] * (k3 >= 0 ? k3 : nf[2] + k3));
                    visit(kk, idx, l);
                }
    };
    int nbad = 0;
    { /* deconvolve_half: fwh -> fk */
        std::vector<Cx> fwh(nfh * nt), fk(Nh * nt), want(Nh * nt);
        for (auto &v : fwh) {
            v.x = (T)N01(rng);
            v.y = (T)N01(rng);
        }
        for (auto &v : fk)
            v.x = v.y = (T)NAN;
        for (auto &v : want)
            v.x = v.y = (T)-1; /* every index is some mode's: none stays -1 */
        each_mode([&](const i64(&kk)[3], i64 idx, i64 l) {
            const T f = fac_of(kk);
            for (i64 t = 0; t < nt; ++t) {
                want[t * Nh + idx].x = fwh[t * nfh + l].x * f;
                want[t * Nh + idx].y = fwh[t * nfh + l].y * f;
            }
        });
        void *fn = wf_emu_kernel("deconvolve_" + ds + "/deconvolve_half");
        wf_emu::launch(d3(3), d3(256), 0, [&] {
            ((typename Prep<T, Cx>::fn)fn)(dim, N[0], N[1], N[2], nf[0], nf[1], nf[2], nt, f1, f2,
                                           f3, modeord, fwh.data(), fk.data(),
                                           use_tab ? &w_sel : nullptr, use_tab ? tab : nullptr);
        });
        nbad += std::memcmp(fk.data(), want.data(), fk.size() * sizeof(Cx)) != 0;
    }
    { /* amplify_half: fk -> every element of fwh */
        std::vector<Cx> fk(Nh * nt), fwh(nfh * nt), want(nfh * nt);
        for (auto &v : fk) {
            v.x = (T)N01(rng);
            v.y = (T)N01(rng);
        }
        for (auto &v : fwh)
            v.x = v.y = (T)NAN;
        for (auto &v : want)
            v.x = v.y = (T)0;
        each_mode([&](const i64(&kk)[3], i64 idx, i64 l) {
            const T f = fac_amp(kk);
            for (i64 t = 0; t < nt; ++t) {
                want[t * nfh + l].x = fk[t * Nh + idx].x * f;
                want[t * nfh + l].y = fk[t * Nh + idx].y * f;
            }
        });
        void *fn = wf_emu_kernel("amplify_" + ds + "/amplify_half");
        wf_emu::launch(d3(2), d3(64), 0, [&] {
            ((typename Prep<T, Cx>::fn)fn)(dim, N[0], N[1], N[2], nf[0], nf[1], nf[2], nt, f1, f2,
                                           f3, modeord, fk.data(), fwh.data(),
                                           use_tab ? &w_sel : nullptr, use_tab ? tab : nullptr);
        });
        nbad += 2 * (std::memcmp(fwh.data(), want.data(), fwh.size() * sizeof(Cx)) != 0);
    }
    if (nbad)
        ++g_fail;
    std::printf("%s half deconvolve/amplify %dd %s N=%lldx%lldx%lld nf=%lldx%lldx%lld modeord=%d "
                "fac_tab=%d nt=2: deconvolve %s, amplify %s\n",
                nbad ? "FAIL" : "ok  ", dim, p, N[0], N[1], N[2], nf[0], nf[1], nf[2], modeord,
                (int)use_tab, nbad & 1 ? "DIFFERS" : "same bits",
                nbad & 2 ? "DIFFERS" : "same bits");
}

int main(int argc, char **argv) {
    const bool quick = wf_emu_quick(argc, argv);
    /* dim prec W method dir nf bs M ntransf maxsub gridx gridy cluster [var nr px nbw] */
    std::vector<Case> cases = {
        /* GM spreading: team (1D f64, 3D f32), thread per point (2D f32 variant) */
        {1, 64, 5, GM, SPREAD, {200}, {32}, 300, 2, 0, 3, 1, false},
        {3, 32, 5, GM, SPREAD, {16, 14, 12}, {8, 8, 8}, 200, 2, 0, 2, 1, true},
        {2, 32, 6, GM, SPREAD, {32, 24}, {8, 8}, 250, 2, 0, 2, 1, false, "thr"},
        /* SM spreading: 1D f32 fixed point (thread), 1D f64 float atomics, 2D f32 fixed point
         * (team), 2D f64 several points per step, 2D f64 w12 tile in registers, 3D f32
         * output-driven, 3D f64 w10 tile in registers, 3D f64 w13 output-driven, the 3D f32
         * fixed-point team, the 3D f32 register tile in patches */
        {1, 32, 4, SM, SPREAD, {256}, {64}, 400, 2, 64, 5, 1, true},
        {1, 64, 5, SM, SPREAD, {200}, {32}, 300, 2, 16, 4, 2, false},
        {2, 32, 6, SM, SPREAD, {32, 24}, {8, 8}, 300, 2, 32, 7, 1, false},
        {2, 64, 7, SM, SPREAD, {28, 30}, {8, 8}, 250, 2, 40, 6, 2, true},
        {2, 64, 12, SM, SPREAD, {240, 30}, {116, 2}, 300, 2, 64, 7, 1, false},
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 200, 2, 32, 9, 1, false},
        {3, 64, 10, SM, SPREAD, {24, 22, 20}, {8, 8, 4}, 150, 2, 30, 6, 1, true},
        {3, 64, 13, SM, SPREAD, {20, 18, 26}, {8, 8, 4}, 90, 2, 40, 4, 2, false},
        {3, 32, 7, SM, SPREAD, {32, 20, 18}, {16, 8, 4}, 160, 2, 64, 9, 1, false, "fix3"},
        {3, 32, 5, SM, SPREAD, {16, 14, 12}, {8, 8, 4}, 150, 2, 40, 7, 1, true, "smr", 10, 8},
        /* OD spreading (tl, pitch pad, warps below) */
        {1, 32, 7, OD, SPREAD, {1000}, {32}, 2000, 2, 0, 2, 2, false},
        {2, 64, 11, OD, SPREAD, {40, 33}, {8, 4}, 800, 2, 0, 4, 2, true},
        {3, 32, 7, OD, SPREAD, {24, 20, 17}, {4, 4, 2}, 600, 2, 0, 5, 1, false},
        {3, 64, 5, OD, SPREAD, {10, 10, 10}, {3, 5, 10}, 300, 2, 0, 3, 1, true},
        /* interpolation: SM thread (1D f64, 2D f64, 3D f32), SM team (3D f64 w8), GM thread (2D
         * f32, 3D f64), GM team (2D f32 variant) */
        {1, 64, 5, SM, INTERP, {200}, {32}, 300, 2, 16, 4, 1, false},
        {2, 64, 7, SM, INTERP, {28, 30}, {8, 8}, 250, 2, 40, 6, 2, true},
        {3, 32, 5, SM, INTERP, {16, 14, 12}, {8, 8, 4}, 200, 2, 32, 9, 1, false},
        {3, 64, 8, SM, INTERP, {20, 18, 16}, {8, 8, 4}, 150, 2, 25, 5, 1, false},
        {2, 32, 6, GM, INTERP, {32, 24}, {8, 8}, 250, 2, 0, 2, 1, true},
        {3, 64, 8, GM, INTERP, {20, 18, 16}, {8, 8, 8}, 150, 2, 0, 1, 1, false},
        {2, 32, 6, GM, INTERP, {32, 24}, {8, 8}, 250, 2, 0, 2, 1, false, "team"},
    };
    /* OD warp tiles: (tl, pitch pad, warps) per OD case, in order */
    const int od_tl[4][5] = {
        {128, 1, 1, 0, 2}, {16, 8, 1, 7, 2}, {8, 8, 4, 7, 2}, {16, 8, 4, 0, 2}};
    int od = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        Case &k = cases[i];
        if (k.method == OD) {
            for (int d = 0; d < 3; ++d)
                k.tl[d] = od_tl[od][d];
            k.pitch_pad = od_tl[od][3];
            k.nwarps = od_tl[od][4];
            ++od;
        }
        if (quick && i % 2 != 0)
            continue;
        wf_emu_by_prec(k.prec, [&]<class T, class Cx>() { run_si<T, Cx>(k); });
    }
    /* half deconvolve / amplify: dim prec N1 N2 N3 nf1 nf2 nf3 modeord fac_tab */
    struct P {
        int dim, prec;
        i64 N1, N2, N3, nf1, nf2, nf3;
        int modeord;
        bool tab;
    } preps[] = {
        {1, 64, 10, 1, 1, 24, 1, 1, 0, false}, {1, 64, 11, 1, 1, 25, 1, 1, 1, true},
        {2, 32, 8, 7, 1, 20, 16, 1, 0, false}, {2, 32, 9, 6, 1, 19, 15, 1, 1, false},
        {2, 32, 9, 6, 1, 600, 15, 1, 0, true}, {3, 64, 6, 5, 4, 16, 12, 10, 1, false},
        {3, 64, 7, 4, 5, 15, 11, 12, 0, true}, {3, 64, 2, 3, 2, 8, 8, 8, 1, false},
    };
    for (const P &q : preps)
        wf_emu_by_prec(q.prec, [&]<class T, class Cx>() {
            run_prep<T, Cx>(q.dim, q.prec, q.N1, q.N2, q.N3, q.nf1, q.nf2, q.nf3, q.modeord, q.tab);
        });
    return wf_emu_summary("emu real tests");
}
