"""Framework benchmark (issue 17): median ms per call of warpfft's JAX and PyTorch ops next to
warpfft's Plan and, where installed, nufftax, torchkbnufft and jax-finufft; relative error vs
exact sums (f64, on a sample of outputs, with the points each library saw) in brackets.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python python/bench/frameworks.py [E1 E2 E3 E4 tiny] [--reps 20] [--markdown]

Cases (f32, tol 1e-5): E1 2D radial 256^2, 402x512 samples; E2 = E1 with 16 coils; E3 3D 128^3,
M = 2e6 uniform; E4 1D N = 1e5, M = 1e6 uniform; tiny: 2D 32^2, M = 1000 (dispatch overhead:
the ops against Plan.execute, printed as a difference after each case's rows). Every op call gets the points as an argument, as framework code
does; the torch op skips re-sorting when the same points tensor comes back (documented), so
"torch op" is the iterative-reconstruction case and "torch op, new pts" passes a fresh tensor.
"""

import argparse
import os
import sys

import numpy as np

from _bench import timed

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
EPS = 1e-5


def _cases():
    rng = np.random.default_rng(0)
    out = {}
    nspk, nrd = 402, 512
    ang = np.arange(nspk) * np.pi / nspk
    r = np.linspace(-np.pi, np.pi, nrd, endpoint=False)
    kx = (np.cos(ang)[:, None] * r[None, :]).ravel().astype(np.float32)
    ky = (np.sin(ang)[:, None] * r[None, :]).ravel().astype(np.float32)
    out["E1"] = dict(modes=(256, 256), pts=[kx, ky], batch=1)
    out["E2"] = dict(modes=(256, 256), pts=[kx, ky], batch=16)
    M3 = 2_000_000
    out["E3"] = dict(modes=(128, 128, 128), batch=1,
                     pts=[rng.uniform(-np.pi, np.pi, M3).astype(np.float32) for _ in range(3)])
    out["E4"] = dict(modes=(100_000,), batch=1,
                     pts=[rng.uniform(-np.pi, np.pi, 1_000_000).astype(np.float32)])
    out["tiny"] = dict(modes=(32, 32), batch=1,
                       pts=[rng.uniform(-np.pi, np.pi, 1000).astype(np.float32) for _ in range(2)])
    return out


def _strengths(rng, batch, M):
    c = rng.standard_normal((batch, M)) + 1j * rng.standard_normal((batch, M))
    return c.astype(np.complex64)


def _exact1(c, pts, modes, idx, isign):
    """Type 1 exact sum at mode multi-indices idx (list of tuples), x along axis 0, CMCL order."""
    out = []
    p64 = [np.asarray(p, np.float64) for p in pts]
    for ix in idx:
        k = [i - n // 2 for i, n in zip(ix, modes)]
        ph = sum(kk * p for kk, p in zip(k, p64))
        out.append(np.sum(c.astype(np.complex128) * np.exp(1j * isign * ph)))
    return np.array(out)


def _exact2(f, pts, js, isign):
    modes = f.shape
    grids = np.meshgrid(*[np.arange(n) - n // 2 for n in modes], indexing="ij")
    out = []
    for j in js:
        ph = sum(g * float(p[j]) for g, p in zip(grids, pts))
        out.append(np.sum(f.astype(np.complex128) * np.exp(1j * isign * ph)))
    return np.array(out)


def _err(got, ref):
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def run_case(name, case, reps, results, only=None):
    rng = np.random.default_rng(1)
    modes, pts, batch = case["modes"], case["pts"], case["batch"]
    dim, M = len(modes), pts[0].shape[0]
    c = _strengths(rng, batch, M)
    fk = (rng.standard_normal((batch,) + modes)
          + 1j * rng.standard_normal((batch,) + modes)).astype(np.complex64)
    sample_k = [tuple(int(rng.integers(n)) for n in modes) for _ in range(16)]
    sample_j = [int(rng.integers(M)) for _ in range(16)]
    ref1 = _exact1(c[0], pts, modes, sample_k, -1)
    ref2 = _exact2(fk[0], pts, sample_j, -1)
    row = results.setdefault(name, {})

    def rec(lib, t, ms, err=None):
        row[(lib, t)] = (ms, err)
        e = f" ({err:.1e})" if err is not None else ""
        print(f"{name} type {t} {lib:26s} {ms:9.3f} ms{e}", flush=True)

    def e1(f):  # f: (batch, *modes) for the first transform
        return _err(np.array([f[0][ix] for ix in sample_k]), ref1)

    def e2(cc):
        return _err(cc[0][sample_j], ref2)

    have_torch = False
    if only != "jax":  # --only jax: a process without torch, as a JAX user runs
        try:
            import torch
            have_torch = torch.cuda.is_available()
        except ImportError:
            pass
    if have_torch:
        import warpfft
        import warpfft.torch as wt
        dev = "cuda"
        tp = torch.tensor(np.stack(pts), device=dev)
        tc = torch.tensor(c, device=dev)
        tf = torch.tensor(fk, device=dev)
        sync = torch.cuda.synchronize
        kw = dict(eps=EPS, isign=-1, modeord=0)
        out = wt.finufft_type1(tp, tc, modes, **kw)
        rec("warpfft torch op", 1, timed(lambda: wt.finufft_type1(tp, tc, modes, **kw), sync,
                                         reps), e1(out.cpu().numpy()))
        rec("warpfft torch op, new pts", 1,
            timed(lambda: wt.finufft_type1(tp.clone(), tc, modes, **kw), sync, reps))
        out2 = wt.finufft_type2(tp, tf, **kw)
        rec("warpfft torch op", 2, timed(lambda: wt.finufft_type2(tp, tf, **kw), sync, reps),
            e2(out2.cpu().numpy()))
        rec("warpfft torch op, new pts", 2,
            timed(lambda: wt.finufft_type2(tp.clone(), tf, **kw), sync, reps))
        for t, data in ((1, tc), (2, tf)):
            plan = warpfft.Plan(t, modes, n_trans=batch, eps=EPS, isign=-1, dtype="complex64")
            coords = [tp[d] for d in range(dim)]
            plan.setpts(*coords)
            src = data if batch > 1 else data[0]
            rec("warpfft Plan execute", t, timed(lambda: plan.execute(src), sync, reps))
            rec("warpfft Plan setpts+execute", t,
                timed(lambda: (plan.setpts(*coords), plan.execute(src)), sync, reps))
        try:
            import torchkbnufft as tkbn
            ktraj = tp  # radians, (d, M)
            adj = tkbn.KbNufftAdjoint(im_size=modes).to(dev)
            fwd = tkbn.KbNufft(im_size=modes).to(dev)
            data = tc.reshape(1, batch, M)
            rec("torchkbnufft", 1, timed(lambda: adj(data, ktraj), sync, reps))
            img = tf.reshape((1, batch) + modes)
            rec("torchkbnufft", 2, timed(lambda: fwd(img, ktraj), sync, reps))
        except ImportError:
            pass
    gpus = []
    if only != "torch":
        try:
            import jax
            import jax.numpy as jnp
            gpus = jax.devices("gpu")
        except Exception:
            pass
    if gpus:
        import warpfft.jax as wj
        jp = [jax.device_put(p, gpus[0]) for p in pts]
        jc = jax.device_put(c if batch > 1 else c[0], gpus[0])
        jf = jax.device_put(fk if batch > 1 else fk[0], gpus[0])
        f1 = jax.jit(lambda c, *p: wj.nufft1(modes, c, *p, eps=EPS, iflag=-1))
        f2 = jax.jit(lambda f, *p: wj.nufft2(f, *p, eps=EPS, iflag=-1))
        sync = lambda: None  # noqa: E731
        o1 = f1(jc, *jp)
        rec("warpfft jax op (jit)", 1,
            timed(lambda: f1(jc, *jp).block_until_ready(), sync, reps),
            e1(np.asarray(o1).reshape((batch,) + modes)))
        o2 = f2(jf, *jp)
        rec("warpfft jax op (jit)", 2,
            timed(lambda: f2(jf, *jp).block_until_ready(), sync, reps),
            e2(np.asarray(o2).reshape(batch, M)))
        try:
            import nufftax
            fn1 = getattr(nufftax, f"nufft{dim}d1")
            fn2 = getattr(nufftax, f"nufft{dim}d2")
            # nufftax: nufft{d}d1(x, [y, [z,]] c, n_modes, eps, isign), modes with x last
            # its 1D function takes the mode count as an int, 2D/3D a tuple
            nm = modes[0] if dim == 1 else modes

            def k1(c, *p):
                return fn1(*p, c, nm, eps=EPS, isign=-1)

            def k2(f, *p):
                return fn2(*p, f, eps=EPS, isign=-1)

            if batch > 1:
                k1 = jax.vmap(k1, in_axes=(0,) + (None,) * dim)
                k2 = jax.vmap(k2, in_axes=(0,) + (None,) * dim)
            g1, g2 = jax.jit(k1), jax.jit(k2)
            rec("nufftax (jit)", 1, timed(lambda: g1(jc, *jp).block_until_ready(), sync, reps))
            lead = tuple(range(jf.ndim - dim))
            jfr = jnp.transpose(jf, lead + tuple(range(jf.ndim - 1, jf.ndim - dim - 1, -1)))
            rec("nufftax (jit)", 2, timed(lambda: g2(jfr, *jp).block_until_ready(), sync, reps))
        except ImportError:
            pass
        except Exception as e:  # a peer's API drift must not hide our numbers
            print(f"{name}: nufftax failed: {type(e).__name__}: {e}")
    try:
        if only == "torch":
            raise ImportError("--only torch")
        import jax
        import jax_finufft
        cpu = jax.devices("cpu")[0]
        cp = [jax.device_put(p, cpu) for p in pts]
        cc = jax.device_put(c if batch > 1 else c[0], cpu)
        h1 = jax.jit(lambda c, *p: jax_finufft.nufft1(modes, c, *p, eps=EPS, iflag=-1))
        rec("jax-finufft (CPU)", 1,
            timed(lambda: h1(cc, *cp).block_until_ready(), lambda: None, max(3, reps // 5)))
    except ImportError:
        pass
    except Exception as e:
        print(f"{name}: jax-finufft failed: {type(e).__name__}: {e}")
    overhead(name, row)


def overhead(name, row):
    """Dispatch overhead (issue 17 target: <= 30 us on the tiny case): each op's time minus
    Plan's for the same work -- the torch op (same points: no set-points) against
    Plan.execute, the jax op (sets points every call) against Plan setpts+execute and, as the
    issue states the target, against Plan.execute."""
    for t in (1, 2):
        ex = row.get(("warpfft Plan execute", t))
        both = row.get(("warpfft Plan setpts+execute", t))
        parts = []
        for lib, base, what in (("warpfft torch op", ex, "execute"),
                                ("warpfft jax op (jit)", ex, "execute"),
                                ("warpfft jax op (jit)", both, "setpts+execute")):
            op = row.get((lib, t))
            if op is not None and base is not None:
                parts.append(f"{lib.split()[1]} op - Plan {what} = "
                             f"{(op[0] - base[0]) * 1e3:.0f} us")
        if parts:
            print(f"{name} type {t} dispatch overhead: " + "; ".join(parts), flush=True)


def multi_gpu(reps):
    """E2 (16 coils, 2D radial 256^2) on 1 GPU and sharded over 2: JAX with shard_map (coils
    split over a mesh, points replicated), PyTorch with one op per device (8 coils each)."""
    case = _cases()["E2"]
    modes, pts, batch = case["modes"], case["pts"], case["batch"]
    rng = np.random.default_rng(2)
    c = _strengths(rng, batch, pts[0].shape[0])
    try:
        import jax
        gpus = jax.devices("gpu")
    except Exception:
        gpus = []
    if len(gpus) >= 2:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        try:
            from jax import shard_map
        except ImportError:
            from jax.experimental.shard_map import shard_map
        import warpfft.jax as wj

        def op(c, x, y):
            return wj.nufft1(modes, c, x, y, eps=EPS, iflag=-1)

        one = jax.jit(op)
        a1 = [jax.device_put(a, gpus[0]) for a in (c, *pts)]
        t1 = timed(lambda: one(*a1).block_until_ready(), lambda: None, reps)
        mesh = Mesh(np.array(gpus[:2]), ("b",))
        kw = dict(mesh=mesh, in_specs=(P("b"), P(), P()), out_specs=P("b"))
        for flag in ("check_vma", "check_rep", None):
            try:
                two = jax.jit(shard_map(op, **kw, **({flag: False} if flag else {})))
                break
            except TypeError:
                continue
        a2 = [jax.device_put(c, NamedSharding(mesh, P("b")))]
        a2 += [jax.device_put(p, NamedSharding(mesh, P())) for p in pts]
        r1, r2 = np.asarray(one(*a1)), np.asarray(two(*a2))
        t2 = timed(lambda: two(*a2).block_until_ready(), lambda: None, reps)
        print(f"E2 type 1 jax: 1 GPU {t1:.3f} ms, 2 GPUs (shard_map) {t2:.3f} ms, "
              f"difference {_err(r2, r1):.1e}")
    try:
        import torch
        n = torch.cuda.device_count()
    except ImportError:
        n = 0
    if n >= 2:
        import warpfft.torch as wt
        kw = dict(eps=EPS, isign=-1, modeord=0)
        dev = [torch.device(f"cuda:{i}") for i in range(2)]
        tp = [torch.tensor(np.stack(pts), device=d) for d in dev]
        tc = torch.tensor(c, device=dev[0])
        halves = [tc[: batch // 2], tc[batch // 2:].to(dev[1])]

        def sync():
            for d in dev:
                torch.cuda.synchronize(d)

        t1 = timed(lambda: wt.finufft_type1(tp[0], tc, modes, **kw), sync, reps)
        t2 = timed(lambda: [wt.finufft_type1(tp[i], halves[i], modes, **kw) for i in range(2)],
                   sync, reps)
        r1 = wt.finufft_type1(tp[0], tc, modes, **kw).cpu().numpy()
        r2 = np.concatenate([wt.finufft_type1(tp[i], halves[i], modes, **kw).cpu().numpy()
                             for i in range(2)])
        print(f"E2 type 1 torch: 1 GPU {t1:.3f} ms, 2 GPUs (one op per device) {t2:.3f} ms, "
              f"difference {_err(r2, r1):.1e}")
    if len(gpus) < 2 and n < 2:
        print("multi-GPU: fewer than 2 GPUs visible; nothing measured")


def markdown(results):
    libs = []
    for row in results.values():
        for lib, _ in row:
            if lib not in libs:
                libs.append(lib)
    lines = ["| case | " + " | ".join(libs) + " |", "|---" * (len(libs) + 1) + "|"]
    for name, row in results.items():
        for t in (1, 2):
            cells = []
            for lib in libs:
                if (lib, t) in row:
                    ms, err = row[(lib, t)]
                    cells.append(f"{ms:.3f}" + (f" ({err:.1e})" if err is not None else ""))
                else:
                    cells.append("")
            lines.append(f"| {name} type {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", default=["tiny", "E1", "E2", "E3", "E4"])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--multi-gpu", action="store_true", help="E2 on 1 vs 2 GPUs only")
    ap.add_argument("--only", choices=("torch", "jax"),
                    help="one framework per process: torch loaded beside JAX slowed the JAX "
                         "op's batched calls by up to 0.2 ms (H100, E2)")
    args = ap.parse_args(argv)
    if args.multi_gpu:
        multi_gpu(args.reps)
        return
    all_cases = _cases()
    results = {}
    for name in args.cases:
        if name not in all_cases:
            sys.exit(f"unknown case {name}; known: {', '.join(all_cases)}")
        run_case(name, all_cases[name], args.reps, results, args.only)
    if args.markdown:
        print(markdown(results))


if __name__ == "__main__":
    main()
