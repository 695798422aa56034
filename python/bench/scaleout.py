"""Scale-out benchmark (issue 32): strong scaling of a 3D type 1 and type 2 (128^3 modes, f32,
tol 1e-5, M = 1e9 points in all) over 1, 2, 4 GPUs, one process per GPU, through
warpfft.jax.distributed (jax.distributed) and warpfft.torch.distributed (torch.distributed,
NCCL). One run is one framework on G GPUs; python/tools/gpu_scaleout.sh launches them all.

    python python/tools/launch_local.py --nproc G -- \
        python python/bench/scaleout.py run --framework jax|torch --out DIR [--M 1e9]
    python python/bench/scaleout.py summary DIR        # markdown table + summary.json

Data: the M points and strengths are B blocks (default 4), block b drawn on the GPU from its
own seed, so a run on any G (dividing B) has the same global points; each process draws its
own blocks on its own GPU, never gathered anywhere. Modes for type 2: one seed, replicated.

Timed (median over --reps, each the slowest process's time after a barrier; every call sets
its points, as JAX's op always does -- torch's op is given a bumped version counter to make it
re-sort, and is also timed without that, "exec"):
  total      the sharded call (type 1: local transforms + all-reduce of the modes)
  local      one process's local transform alone (sort + spread/interp + FFT + deconvolve;
             on 1 GPU the total, whose reduction is empty)
  fft        the FFT step alone (warpfft_bench_fft on the plan's fine grid, one GPU)
  reduction  the all-reduce of a 128^3 complex64 array (16 MiB) alone
spread (sort + spread/interp + deconvolve) = local - fft.
Checks: the 1-GPU run against exact sums (warpfft.direct_sample, f64 on the GPU) at sampled
modes / points; every G > 1 run against the 1-GPU run of the same framework (type 1: the whole
mode array; type 2: samples of every block), saved under DIR/ref.

If the 1-GPU run cannot hold M points at once (device out of memory), it is retried with the
points in 2, then 4 chunks transformed one after the other and summed (type 1) / concatenated
(type 2), and the run records "chunks".
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

MODES = (128, 128, 128)  # default --modes
SAMPLE = 2048          # type 2 samples per block (compared with the 1-GPU run)
EXACT = 64             # outputs checked against the exact sum on 1 GPU


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--framework", choices=("jax", "torch"), required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--M", type=float, default=1e9)
    r.add_argument("--blocks", type=int, default=4)
    r.add_argument("--eps", type=float, default=1e-5)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--types", default="1,2")
    r.add_argument("--seed", type=int, default=2026)
    r.add_argument("--modes", type=int, nargs=3, default=list(MODES))
    r.add_argument("--cpu-smoke", action="store_true",
                   help="CPU processes (gloo), the transforms replaced by exact sums (the test "
                   "aids of python/tests): the script's logic without a GPU, small --M/--modes")
    s = sub.add_parser("summary")
    s.add_argument("dir")
    return ap.parse_args(argv)


def _env():
    rank, G = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    return rank, G, int(os.environ.get("LOCAL_RANK", rank))


def _relerr(a, b):
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _fft_ms(a, nufft_type, device):
    """The FFT step's time on the plan's fine grid (warpfft_bench_fft), ms."""
    import ctypes

    import warpfft
    from warpfft import _lib
    if a.cpu_smoke:
        return None
    nf = warpfft.plan_params(nufft_type, a.modes, eps=a.eps, dtype="complex64")["n_fine"]
    ms = ctypes.c_double(0)
    c_order = (ctypes.c_int64 * 3)(*nf[::-1])
    st = _lib.lib.warpfft_bench_fft(3, c_order, 1, 1, int(device), 20, ctypes.byref(ms))
    return ms.value if st == 0 else None


def _is_oom(e):
    s = f"{type(e).__name__}: {e}".lower()
    return any(k in s for k in ("out of memory", "resource_exhausted", "outofmemory",
                                "out_of_memory"))


class Timer:
    """Median over reps of the slowest process's time; `barrier`, `sync` and `gather` (a list
    of floats of every process) come from the framework."""

    def __init__(self, barrier, sync, gather):
        self.barrier, self.sync, self.gather = barrier, sync, gather

    def __call__(self, fn, reps, keep=False):
        ts, r = [], None
        for _ in range(reps):
            r = None  # an 8 GB type-2 output must not live through the next call
            self.barrier()
            t0 = time.perf_counter()
            r = fn()
            self.sync(r)
            ts.append((time.perf_counter() - t0) * 1e3)
        worst = np.max(np.asarray(self.gather(ts)).reshape(-1, reps), axis=0)
        return float(statistics.median(worst)), (r if keep else None)


def _blocks(rank, G, B):
    if B % G:
        raise SystemExit(f"--blocks {B} must be a multiple of the GPU count {G}")
    return list(range(rank * B // G, (rank + 1) * B // G))


def _sample_offsets(per):
    return np.linspace(0, per - 1, SAMPLE).astype(np.int64)


def _exact_idx(n, seed):
    return np.random.default_rng(seed).integers(0, n, EXACT)


# ---- JAX ------------------------------------------------------------------------------------


def run_jax(a, rank, G, local_rank, rec):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    # XLA's pool would keep the data generation's temporaries; the plans allocate outside it
    os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
    if a.cpu_smoke:
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    address = (f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:"
               f"{os.environ.get('MASTER_PORT', '29500')}")
    if a.cpu_smoke:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(address, num_processes=G, process_id=rank)
        import _exact_jax
        _exact_jax.install()
        jax.config.update("jax_enable_x64", False)
    else:
        jax.distributed.initialize(address, num_processes=G, process_id=rank,
                                   local_device_ids=[local_rank])
    import jax.numpy as jnp
    from jax.experimental import multihost_utils as mh
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    import warpfft
    import warpfft.jax as wj
    from warpfft.jax import distributed as wd

    mesh, dev = Mesh(np.array(jax.devices()), ("p",)), jax.local_devices()[0]
    modes, M, B = tuple(a.modes), int(a.M), a.blocks
    per, mine = M // B, _blocks(rank, G, B)
    ordinal = getattr(dev, "local_hardware_id", local_rank)
    key = jax.device_put(jax.random.key(a.seed), dev)
    timer = Timer(lambda: mh.sync_global_devices("rep"), jax.block_until_ready,
                  lambda ts: mh.process_allgather(np.asarray(ts, np.float64)))

    @jax.jit
    def coord(key, d):
        return jnp.concatenate([jax.random.uniform(jax.random.fold_in(key, 8 * b + d), (per,),
                                                   jnp.float32, -np.pi, np.pi) for b in mine])

    def cnormal(key, shape, k1, k2):
        return jax.lax.complex(jax.random.normal(jax.random.fold_in(key, k1), shape, jnp.float32),
                               jax.random.normal(jax.random.fold_in(key, k2), shape, jnp.float32))

    strengths = jax.jit(lambda key: jnp.concatenate([cnormal(key, (per,), 8 * b + 3, 8 * b + 4)
                                                     for b in mine]))
    x = [jax.block_until_ready(coord(key, d)) for d in range(3)]
    xg = [wd.from_local_shards(p, mesh, "p") for p in x]
    red = jax.make_array_from_single_device_arrays(
        (G,) + modes, NamedSharding(mesh, P("p")),
        [jax.device_put(jnp.ones((1,) + modes, jnp.complex64), dev)])
    psum = jax.jit(jax.shard_map(lambda t: jax.lax.psum(t, "p"), mesh=mesh, in_specs=P("p"),
                                 out_specs=P()))
    rec["reduction_ms"] = timer(lambda: psum(red), a.reps + 2)[0] if G > 1 else 0.0
    del red
    types = [int(t) for t in a.types.split(",")]
    if 1 in types:
        c = jax.block_until_ready(strengths(key))
        cg = wd.from_local_shards(c, mesh, "p")

        def make1(chunks):
            if chunks == 1:
                return lambda: wd.nufft1(modes, cg, *xg, mesh=mesh, axis="p", eps=a.eps)
            m = c.shape[0] // chunks
            f = jax.jit(lambda c, *x: sum(wj.nufft1(modes, c[i * m:(i + 1) * m],
                                                    *[p[i * m:(i + 1) * m] for p in x],
                                                    eps=a.eps) for i in range(chunks)))
            return lambda: f(c, *x)

        f = _with_chunks(rec, "t1", G, make1, timer, a.reps, wj.clear_plan_cache)
        if G == 1:  # the psum over one device is nothing (and no second plan at M = 1e9)
            rec["t1"]["local_ms"] = rec["t1"]["total_ms"]
        else:
            local1 = jax.jit(lambda c, *x: wj.nufft1(modes, c, *x, eps=a.eps))
            rec["t1"]["local_ms"] = timer(lambda: local1(c, *x), a.reps)[0]
        f = np.asarray(f.addressable_shards[0].data)
        if G == 1 and not a.cpu_smoke:
            idx = _exact_idx(f.size, 1)
            ex = warpfft.direct_sample(1, modes, *x, c=c, sample=idx, isign=1, modeord=0,
                                       device=ordinal)
            rec["t1"]["err_exact"] = _relerr(f.ravel()[idx], ex)
        _check_t1(a, rec, rank, G, f)
        del c, cg, f
        wj.clear_plan_cache()
    if 2 in types:
        fm = jax.block_until_ready(jax.jit(lambda k: cnormal(k, modes, 1001, 1002))(key))

        def make2(chunks):
            if chunks == 1:
                return lambda: wd.nufft2(fm, *xg, mesh=mesh, axis="p", eps=a.eps)
            m = x[0].shape[0] // chunks
            f = jax.jit(lambda fm, *x: jnp.concatenate([wj.nufft2(
                fm, *[p[i * m:(i + 1) * m] for p in x], eps=a.eps) for i in range(chunks)]))
            return lambda: f(fm, *x)

        out = _with_chunks(rec, "t2", G, make2, timer, a.reps, wj.clear_plan_cache)
        rec["t2"]["local_ms"] = rec["t2"]["total_ms"]  # no communication
        out = out.addressable_shards[0].data
        offs = _sample_offsets(per)
        samples = {b: np.asarray(out[i * per + offs]) for i, b in enumerate(mine)}
        if G == 1 and not a.cpu_smoke:
            idx = _exact_idx(M, 2)
            ex = warpfft.direct_sample(2, modes, *x, fk=fm, sample=idx, isign=-1, modeord=0,
                                       device=ordinal)
            rec["t2"]["err_exact"] = _relerr(np.asarray(out[jnp.asarray(idx)]), ex)
        del out
        _check_t2(a, rec, rank, G, samples, lambda: mh.sync_global_devices("t2 saved"))
    rec["fft_ms"] = {t: _fft_ms(a, t, ordinal) for t in types}


# ---- PyTorch --------------------------------------------------------------------------------


def run_torch(a, rank, G, local_rank, rec):
    import torch
    import torch.distributed as dist

    import warpfft
    import warpfft.torch as wt
    from warpfft.torch import distributed as wd

    if a.cpu_smoke:
        import _exact_torch
        _exact_torch.install()
        dev = torch.device("cpu")
        dist.init_process_group("gloo")
        sync = lambda r: None  # noqa: E731
    else:
        dev = torch.device("cuda", local_rank)
        torch.cuda.set_device(dev)
        dist.init_process_group("nccl", device_id=dev)
        sync = lambda r: torch.cuda.synchronize(dev)  # noqa: E731
    modes, M, B = tuple(a.modes), int(a.M), a.blocks
    per, mine = M // B, _blocks(rank, G, B)

    def gather(ts):
        out = [None] * G
        dist.all_gather_object(out, list(ts))
        return out

    timer = Timer(dist.barrier, sync, gather)

    def fill(t, d, draw):
        """Block b of `t` (its last axis) drawn from its own seed (the same on any G)."""
        for i, b in enumerate(mine):
            g = torch.Generator(device=dev)
            g.manual_seed(a.seed * 1000 + 8 * b + d)
            draw(t[..., i * per:(i + 1) * per], g)
        return t

    n = len(mine) * per
    x = torch.empty((3, n), dtype=torch.float32, device=dev)
    for d in range(3):
        fill(x[d], d, lambda t, g: t.uniform_(-math.pi, math.pi, generator=g))
    red = torch.ones(modes, dtype=torch.complex64, device=dev)
    rec["reduction_ms"] = timer(lambda: dist.all_reduce(red), a.reps + 2)[0] if G > 1 else 0.0
    del red
    kw = dict(eps=a.eps, modeord=0)
    cnormal = lambda t, g: torch.view_as_real(t).normal_(generator=g, std=0.5 ** 0.5)  # noqa
    bump = torch.autograd.graph.increment_version  # a new point set for the op: re-sort
    types = [int(t) for t in a.types.split(",")]
    if 1 in types:
        c = fill(torch.empty(n, dtype=torch.complex64, device=dev), 3, cnormal)

        def make1(chunks):
            def call():
                bump(x)
                if chunks == 1:
                    return wd.nufft1_sharded(x, c, modes, isign=1, **kw)
                m = n // chunks
                return sum(wt.finufft_type1(x[:, i * m:(i + 1) * m].contiguous(),
                                            c[i * m:(i + 1) * m], modes, isign=1, **kw)
                           for i in range(chunks))
            return call

        f = _with_chunks(rec, "t1", G, make1, timer, a.reps, _torch_free(wt, torch))
        if G == 1:  # the all_reduce over one rank is nothing
            rec["t1"]["local_ms"] = rec["t1"]["total_ms"]
        else:
            rec["t1"]["local_ms"] = timer(
                lambda: (bump(x), wt.finufft_type1(x, c, modes, isign=1, **kw)), a.reps)[0]
        if rec["t1"]["chunks"] == 1:
            rec["t1"]["exec_ms"] = timer(lambda: wd.nufft1_sharded(x, c, modes, isign=1, **kw),
                                         a.reps)[0]
        f = f.cpu().numpy()
        if G == 1 and not a.cpu_smoke:
            idx = _exact_idx(f.size, 1)
            ex = warpfft.direct_sample(1, modes, x[0], x[1], x[2], c=c, sample=idx, isign=1,
                                       modeord=0, device=local_rank)
            rec["t1"]["err_exact"] = _relerr(f.ravel()[idx], ex)
        _check_t1(a, rec, rank, G, f)
        del c
        _torch_free(wt, torch)()
    if 2 in types:
        fm = torch.empty(modes, dtype=torch.complex64, device=dev)
        g = torch.Generator(device=dev)
        g.manual_seed(a.seed * 1000 + 7)
        cnormal(fm, g)

        def make2(chunks):
            def call():
                bump(x)
                if chunks == 1:
                    return wd.nufft2_sharded(x, fm, isign=-1, **kw)
                m = n // chunks
                return torch.cat([wt.finufft_type2(x[:, i * m:(i + 1) * m].contiguous(), fm,
                                                   isign=-1, **kw) for i in range(chunks)])
            return call

        out = _with_chunks(rec, "t2", G, make2, timer, a.reps, _torch_free(wt, torch))
        rec["t2"]["local_ms"] = rec["t2"]["total_ms"]  # no communication
        if rec["t2"]["chunks"] == 1:
            out = None
            rec["t2"]["exec_ms"], out = timer(lambda: wd.nufft2_sharded(x, fm, isign=-1, **kw),
                                              a.reps, keep=True)
        offs = torch.as_tensor(_sample_offsets(per), device=dev)
        samples = {b: out[i * per + offs].cpu().numpy() for i, b in enumerate(mine)}
        if G == 1 and not a.cpu_smoke:
            idx = _exact_idx(M, 2)
            ex = warpfft.direct_sample(2, modes, x[0], x[1], x[2], fk=fm, sample=idx, isign=-1,
                                       modeord=0, device=local_rank)
            got = out[torch.as_tensor(idx, device=dev)].cpu().numpy()
            rec["t2"]["err_exact"] = _relerr(got, ex)
        del out
        _check_t2(a, rec, rank, G, samples, dist.barrier)
    rec["fft_ms"] = {t: _fft_ms(a, t, local_rank) for t in types}
    dist.destroy_process_group()


def _torch_free(wt, torch):
    def free():
        wt.clear_plan_cache()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return free


# ---- shared steps ---------------------------------------------------------------------------


def _with_chunks(rec, name, G, make, timer, reps, free):
    """Warm-up (compilation, plans) and timing of make(chunks)(); on one GPU a device OOM
    retries with 2, then 4 chunks. Returns the last result."""
    for chunks in (1, 2, 4) if G == 1 else (1,):
        fn = make(chunks)
        try:
            t0 = time.perf_counter()
            timer.sync(fn())
            warm = (time.perf_counter() - t0) * 1e3
            ms, r = timer(fn, reps, keep=True)
        except Exception as e:  # noqa: BLE001  (only a device OOM is retried)
            if not _is_oom(e) or chunks == 4 or G > 1:
                raise
            print(f"type {name[1]}: out of memory with {chunks} chunk(s), retrying: "
                  f"{str(e)[:200]}", flush=True)
            fn = None
            free()
            continue
        rec[name] = dict(total_ms=ms, warmup_ms=warm, chunks=chunks)
        return r
    raise AssertionError("unreachable")


def _check_t1(a, rec, rank, G, f):
    if rank != 0:
        return
    ref = os.path.join(a.out, "ref", f"{a.framework}_t1_G1.npy")
    if G == 1:
        np.save(ref, f)
    elif os.path.exists(ref):
        rec["t1"]["diff_1gpu"] = _relerr(f, np.load(ref))


def _check_t2(a, rec, rank, G, samples, barrier):
    for b, s in samples.items():
        np.save(os.path.join(a.out, "ref", f"{a.framework}_t2_G{G}_b{b}.npy"), s)
    barrier()
    if rank != 0 or G == 1:
        return
    got, ref = [], []
    for b in range(a.blocks):
        p1 = os.path.join(a.out, "ref", f"{a.framework}_t2_G1_b{b}.npy")
        if not os.path.exists(p1):
            return
        got.append(np.load(os.path.join(a.out, "ref", f"{a.framework}_t2_G{G}_b{b}.npy")))
        ref.append(np.load(p1))
    rec["t2"]["diff_1gpu"] = _relerr(np.concatenate(got), np.concatenate(ref))


def run(a):
    rank, G, local_rank = _env()
    os.makedirs(os.path.join(a.out, "ref"), exist_ok=True)
    if a.cpu_smoke:  # the exact sums of the test aids
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "tests"))
    rec = dict(framework=a.framework, gpus=G, M=int(a.M), modes=list(a.modes), eps=a.eps,
               reps=a.reps, blocks=a.blocks, cpu_smoke=a.cpu_smoke)
    t0 = time.perf_counter()
    (run_jax if a.framework == "jax" else run_torch)(a, rank, G, local_rank, rec)
    rec["wall_s"] = round(time.perf_counter() - t0, 1)
    if rank == 0:
        with open(os.path.join(a.out, f"scaleout_{a.framework}_G{G}.json"), "w") as fh:
            json.dump(rec, fh, indent=1)
        print("RESULT " + json.dumps(rec), flush=True)


# ---- summary --------------------------------------------------------------------------------


def _fmt(v, spec=".1f"):
    return "—" if v is None else format(v, spec)


def summary(d):
    """The markdown strong-scaling table of the runs' JSON files in `d` (also summary.json,
    summary.md). Columns: total (the sharded call, slowest process), throughput, speedup over
    the same framework's 1-GPU run, sort+spread (local transform - FFT), FFT, reduction,
    torch's exec (points already sorted: the op's set-points skip), chunks, relative
    difference to the 1-GPU run, relative error vs the exact sum (1 GPU)."""
    runs = []
    for name in sorted(os.listdir(d)):
        if name.startswith("scaleout_") and name.endswith(".json"):
            with open(os.path.join(d, name)) as fh:
                runs.append(json.load(fh))
    head = ("framework", "type", "GPUs", "total ms", "Gpts/s", "speedup", "sort+spread ms",
            "FFT ms", "reduction ms", "exec ms", "chunks", "vs 1 GPU", "vs exact")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for fw in ("jax", "torch"):
        for t in (1, 2):
            rows = sorted((r for r in runs if r["framework"] == fw and f"t{t}" in r),
                          key=lambda r: r["gpus"])
            base = next((r[f"t{t}"]["total_ms"] for r in rows if r["gpus"] == 1), None)
            for r in rows:
                x = r[f"t{t}"]
                fft = (r.get("fft_ms") or {}).get(str(t))
                spread = x["local_ms"] - fft if x.get("local_ms") and fft else None
                red = r.get("reduction_ms") if t == 1 else 0.0
                speed = base / x["total_ms"] if base else None
                cells = (fw, t, r["gpus"], _fmt(x["total_ms"]),
                         _fmt(r["M"] / x["total_ms"] / 1e6, ".2f"), _fmt(speed, ".2f") + "×",
                         _fmt(spread), _fmt(fft, ".2f"), _fmt(red, ".2f"),
                         _fmt(x.get("exec_ms")), x.get("chunks", 1),
                         _fmt(x.get("diff_1gpu"), ".1e"), _fmt(x.get("err_exact"), ".1e"))
                lines.append("| " + " | ".join(map(str, cells)) + " |")
    table = "\n".join(lines)
    with open(os.path.join(d, "summary.json"), "w") as fh:
        json.dump(runs, fh, indent=1)
    with open(os.path.join(d, "summary.md"), "w") as fh:
        fh.write(table + "\n")
    print(table)
    return table


def main(argv=None):
    a = _args(argv)
    if a.cmd == "summary":
        summary(a.dir)
    else:
        run(a)


if __name__ == "__main__":
    main(sys.argv[1:])
