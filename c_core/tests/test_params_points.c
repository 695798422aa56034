/*
 * test_params_points.c — point sets and the first-order error computed directly from every point,
 * shared by test_params_offsets.c and offsets_report.c (declarations in test_params.h): uniform,
 * normal, radial, clustered, on-node, half-node, near-lattice and dependent-offset sets, and
 * max over modes of mean_j |sum_d E_d(k_d, delta_jd)|^2 with E from the test's own footprint sums.
 */
#include "test_params.h"

/* ------------------------------------------------------------------ point sets */

static uint64_t rng = 0x5eed;
double pts_urand(void) { /* splitmix64, uniform in [0, 1) */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}
double pts_grand(void) { /* standard normal, Box-Muller */
    return sqrt(-2.0 * log(1.0 - pts_urand())) * cos(2 * PI * pts_urand());
}

const char *const pts_set_name[N_SETS] = {"uniform", "normal",  "radial", "clustered", "nodes",
                                          "half",    "lattice", "same",   "one-offset"};

/* M points of a kind, radians, for modes N on the fine grid nf. */
static void make_set(int kind, int dim, const int64_t N[3], const int64_t nf[3], int M,
                     double *x[3]) {
    int spokes = (int)sqrt((double)M) > 4 ? (int)sqrt((double)M) : 4, samples = M / spokes + 1;
    double ctr[16][3];
    for (int c = 0; c < 16; c++)
        for (int d = 0; d < 3; d++)
            ctr[c][d] = -PI + 2 * PI * pts_urand();
    double off = pts_urand(), turn = pts_urand(); /* turn: each call's spokes differ */
    for (int j = 0; j < M; j++) {
        for (int d = 0; d < dim; d++) {
            double cell = 2 * PI / (double)nf[d], node = floor(pts_urand() * (double)nf[d]);
            double v;
            switch (kind) {
            case SET_UNIFORM:
                v = -PI + 2 * PI * pts_urand();
                break;
            case SET_NORMAL:
                v = pts_grand();
                break;
            case SET_RADIAL: { /* spoke i, sample s: r u_d, r = -pi + 2 pi s / samples */
                int i = j / samples, s = j % samples;
                double r = -PI + 2 * PI * s / samples, t = PI * (i + turn) / spokes,
                       z = (i + turn) / spokes;
                double dir[3] = {cos(t), sin(t), 0.0};
                if (dim == 3) { /* golden-angle spiral over the half sphere */
                    double rr = sqrt(1 - z * z), ph = (i + turn) * PI * (3 - sqrt(5.0));
                    dir[0] = rr * cos(ph);
                    dir[1] = rr * sin(ph);
                    dir[2] = z;
                }
                v = dim == 1 ? r : r * dir[d];
                break;
            }
            case SET_CLUSTERED:
                v = j < M * 9 / 10 ? ctr[j % 16][d] + 2 * PI * 2.0 / (double)N[d] * pts_grand()
                                   : -PI + 2 * PI * pts_urand();
                break;
            case SET_NODES:
                v = node * cell;
                break;
            case SET_HALF:
                v = (node + 0.5) * cell;
                break;
            case SET_LATTICE:
                v = (node + 1e-3 * (2 * pts_urand() - 1)) * cell;
                break;
            case SET_SAME:
                if (d == 0)
                    off = pts_urand();
                v = (node + off) * cell;
                break;
            default:
                v = (node + 0.3) * cell;
            }
            x[d][j] = v;
        }
    }
}

/* The fine-grid coordinates the device computes, u = wf_fold(x, nf). */
static void fold_set(int dim, const int64_t nf[3], int M, double *const x[3], double *u[3]) {
    for (int d = 0; d < 3; d++)
        for (int j = 0; j < M; j++)
            u[d][j] = d < dim ? wf_fold(x[d][j], nf[d]) : 0.0;
}

pts pts_new(int kind, int dim, const int64_t N[3], const int64_t nf[3], int M) {
    pts p = {M, {0}, {0}};
    for (int d = 0; d < 3; d++) {
        p.x[d] = calloc((size_t)M, sizeof *p.x[d]);
        p.u[d] = calloc((size_t)M, sizeof *p.u[d]);
    }
    make_set(kind, dim, N, nf, M, p.x);
    fold_set(dim, nf, M, p.x, p.u);
    return p;
}

void pts_free(pts *p) {
    for (int d = 0; d < 3; d++) {
        free(p->x[d]);
        free(p->u[d]);
    }
}

/* ------------------------------------------------------------------ the error, directly */

/* E(k, u) for one point and mode from the test's own footprint sum (phi_dev, phihat ph). */
static void factor(double u, double k, int64_t nf, int w, double beta, double ph, double *re,
                   double *im) {
    double i0 = ceil(u - 0.5 * w), pr = 0.0, pi = 0.0;
    for (int t = 0; t < w; t++) {
        double z = i0 + t - u, v = phi_dev(z, w, beta), a = 2 * PI * k / (double)nf * z;
        pr += v * cos(a);
        pi -= v * sin(a);
    }
    *re = pr / ph - 1.0;
    *im = pi / ph;
}

/* max over the mode tuples of mean_j |sum_d E_d(k_d, u_jd)|^2 (the first-order error^2 of
 * mode data all in one mode), modes per dim ks[d][0..nk[d]-1]; the maximising tuple in kbest. */
double pts_direct_max(int dim, const int64_t nf[3], int w, double beta, const pts *p,
                      double *const ks[3], const int nk[3], double kbest[3]) {
    double *er[3], *ei[3];
    for (int d = 0; d < dim; d++) {
        er[d] = malloc((size_t)p->M * nk[d] * sizeof *er[d]);
        ei[d] = malloc((size_t)p->M * nk[d] * sizeof *ei[d]);
        for (int i = 0; i < nk[d]; i++) {
            double ph = phihat_ref(ks[d][i], nf[d], w, beta);
            for (int j = 0; j < p->M; j++)
                factor(p->u[d][j], ks[d][i], nf[d], w, beta, ph, &er[d][(size_t)j * nk[d] + i],
                       &ei[d][(size_t)j * nk[d] + i]);
        }
    }
    int n1 = nk[0], n2 = dim >= 2 ? nk[1] : 1, n3 = dim >= 3 ? nk[2] : 1;
    double best = -1.0;
    for (int i3 = 0; i3 < n3; i3++)
        for (int i2 = 0; i2 < n2; i2++)
            for (int i1 = 0; i1 < n1; i1++) {
                int ii[3] = {i1, i2, i3};
                double s = 0.0;
                for (int j = 0; j < p->M; j++) {
                    double sr = 0.0, si = 0.0;
                    for (int d = 0; d < dim; d++) {
                        sr += er[d][(size_t)j * nk[d] + ii[d]];
                        si += ei[d][(size_t)j * nk[d] + ii[d]];
                    }
                    s += sr * sr + si * si;
                }
                s /= p->M;
                if (s > best) {
                    best = s;
                    for (int d = 0; d < dim; d++)
                        kbest[d] = ks[d][ii[d]];
                }
            }
    for (int d = 0; d < dim; d++) {
        free(er[d]);
        free(ei[d]);
    }
    return best;
}

/* Every mode of each dim. */
void pts_all_modes(int dim, const int64_t N[3], double *ks[3], int nk[3]) {
    for (int d = 0; d < 3; d++) {
        nk[d] = d < dim ? (int)N[d] : 1;
        ks[d] = malloc((size_t)nk[d] * sizeof *ks[d]);
        for (int i = 0; i < nk[d]; i++)
            ks[d][i] = d < dim ? (double)(i - N[d] / 2) : 0.0;
    }
}

/* A sample of each dim's modes: the 3 outermost at each edge and 2 random ones. */
void pts_some_modes(int dim, const int64_t N[3], double *ks[3], int nk[3]) {
    for (int d = 0; d < 3; d++) {
        nk[d] = d < dim ? 8 : 1;
        ks[d] = malloc((size_t)nk[d] * sizeof *ks[d]);
        if (d >= dim) {
            ks[d][0] = 0.0;
            continue;
        }
        int64_t lo = -(N[d] / 2), hi = (N[d] - 1) / 2;
        for (int i = 0; i < 3; i++) {
            ks[d][i] = (double)(lo + i);
            ks[d][3 + i] = (double)(hi - i);
        }
        for (int i = 6; i < 8; i++)
            ks[d][i] = (double)(lo + (int64_t)(pts_urand() * (double)N[d]));
    }
}

void pts_free_modes(double *ks[3]) {
    for (int d = 0; d < 3; d++)
        free(ks[d]);
}
