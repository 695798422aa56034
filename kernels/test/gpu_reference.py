"""Exact direct sums (modules direct_f32/f64) and the accuracy check of the GPU harness
(python3 kernels/test/gpu_test.py): random points and strengths, and a plan's relative l2 error
on sampled outputs against the direct sums."""
import numpy as np
import cupy as cp

from gpu_pipeline import I32, I64, NULL, Plan, cdt, fn, psuf, rdt


def modes_of_index(i, N, modeord):
    if modeord == 0:
        return i - N // 2
    return np.where(i < (N + 1) // 2, i, i - N)


def direct_t1(plan, coords, cvec, idx_list):
    """exact f at the given linear mode indices (transform 0)"""
    N = plan.N
    i1 = idx_list % N[0]
    i2 = (idx_list // N[0]) % N[1]
    i3 = idx_list // (N[0] * N[1])
    ks = np.stack([modes_of_index(i1, N[0], plan.modeord),
                   modes_of_index(i2, N[1], plan.modeord) if plan.dim >= 2 else 0 * i1,
                   modes_of_index(i3, N[2], plan.modeord) if plan.dim >= 3 else 0 * i1], 1)
    k_list = cp.asarray(ks.astype(np.int64).ravel())
    out = cp.empty(len(idx_list), dtype=cp.complex128)
    p = psuf(plan.prec)
    M = coords[0].size
    fn(f"direct_{p}", f"wf_direct_t1_{p}")(
        (min(len(idx_list), 65535 * 4),), (256,),
        (I32(plan.dim), I64(M), coords[0], coords[1] if plan.dim >= 2 else NULL,
         coords[2] if plan.dim >= 3 else NULL, cvec, I64(len(idx_list)), k_list,
         I32(plan.iflag), out))
    return out


def direct_t2(plan, coords, fk, j_list):
    p = psuf(plan.prec)
    out = cp.empty(len(j_list), dtype=cp.complex128)
    N = plan.N
    fn(f"direct_{p}", f"wf_direct_t2_{p}")(
        (min(len(j_list), 65535 * 4),), (256,),
        (I32(plan.dim), I64(len(j_list)), cp.asarray(j_list.astype(np.int64)), coords[0],
         coords[1] if plan.dim >= 2 else NULL, coords[2] if plan.dim >= 3 else NULL, fk,
         I64(N[0]), I64(N[1]), I64(N[2]), I32(plan.modeord), I32(plan.iflag), out))
    return out


def rel_l2(a, b):
    a = cp.asarray(a, dtype=cp.complex128)
    b = cp.asarray(b, dtype=cp.complex128)
    return float(cp.linalg.norm(a - b) / cp.linalg.norm(b))


def rand_points(dim, M, prec, rng, edge=False, dist="uniform", nf=None, tile=None, w=None):
    """M random points in [-pi, pi)^dim. dist "cluster": all in the fine-grid cells [1, 2) of
    every dimension (one bin); "boundary": on and around tile boundaries of the fine grid nf
    (tile shape `tile`), offsets 0, +-1/2, +-1 and +-w/2 cells. edge: the first 8 points at
    +-pi, 0, -1e-300, 3pi, -7.5pi, 20, pi-."""
    coords = []
    for d in range(dim):
        x = rng.uniform(-np.pi, np.pi, M)
        if dist == "cluster":
            x = 2 * np.pi * (1.0 + 0.999 * rng.random(M)) / nf[d]
        elif dist == "boundary":
            t = tile[d] if d < len(tile) else 1
            k = rng.integers(0, -(-nf[d] // t) + 1, M) * t
            offs = np.array([0.0, 0.5, -0.5, 1.0, -1.0, w / 2.0, -w / 2.0])
            u = np.mod(k + offs[rng.integers(0, len(offs), M)], nf[d])
            x = 2 * np.pi * u / nf[d]
            x = np.where(x >= np.pi, x - 2 * np.pi, x)
        if edge and M >= 16:
            x[:8] = [-np.pi, np.pi, 0.0, -1e-300, 3 * np.pi, -7.5 * np.pi, 20.0, np.nextafter(np.pi, 0)]
        coords.append(cp.asarray(x.astype(rdt(prec))))
    return coords


def rand_c(n, prec, rng):
    v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    return cp.asarray(v.astype(cdt(prec)))


def random_io(plan, M, rng):
    """(c, fk) for plan.ntransf transforms over M points: the plan's input (c for type 1, fk
    for type 2) random, its output zero."""
    Nprod = plan.N[0] * plan.N[1] * plan.N[2]
    if plan.typ == 1:
        c = rand_c(M * plan.ntransf, plan.prec, rng)
        return c, cp.zeros(Nprod * plan.ntransf, dtype=cdt(plan.prec))
    fk = rand_c(Nprod * plan.ntransf, plan.prec, rng)
    return cp.zeros(M * plan.ntransf, dtype=cdt(plan.prec)), fk


def sample_error(plan, coords, c, fk, t, nsamp, rng):
    """Relative l2 error of transform t of an executed plan at nsamp random outputs (modes for
    type 1, points for type 2) against the direct sums."""
    M = coords[0].size
    Nprod = plan.N[0] * plan.N[1] * plan.N[2]
    ct, ft = c[t * M:(t + 1) * M], fk[t * Nprod:(t + 1) * Nprod]
    if plan.typ == 1:
        idx = rng.choice(Nprod, size=min(nsamp, Nprod), replace=False)
        ref = direct_t1(plan, coords, ct, idx)
        return rel_l2(ft[cp.asarray(idx)], ref)
    js = rng.choice(M, size=min(nsamp, M), replace=False)
    ref = direct_t2(plan, coords, ft, js)
    return rel_l2(ct[cp.asarray(js)], ref)


def run_case(typ, dim, N, M, tol, prec, method, ntransf=1, iflag=1, modeord=0, nsamp=500,
             seed=0, bs=None, edge=True, maxsub=1024, nf=None, w_extra=1, dist="uniform",
             tile=None, nwarps=None, pad="auto", stable=False):
    rng = np.random.default_rng(seed)
    plan = Plan(typ, dim, N, tol, prec, method, ntransf, iflag, modeord, bs=bs, maxsub=maxsub,
                nf=nf, w_extra=w_extra, tile=tile, nwarps=nwarps, pad=pad, stable=stable)
    plan.poison_fw = method == "od"  # every cell of fw must be written (NaN otherwise)
    coords = rand_points(dim, M, prec, rng, edge=edge, dist=dist, nf=plan.nf,
                         tile=plan.od["tile"] if plan.od else plan.bs, w=plan.w)
    plan.setpts(coords)
    assert plan.P.bad() == 0
    c, fk = random_io(plan, M, rng)
    plan.execute(c, fk)
    errs = [sample_error(plan, coords, c, fk, t, nsamp, rng) for t in range(ntransf)]
    return max(errs), plan
