"""Scale-out (issue 32): warpfft.jax.distributed and warpfft.torch.distributed, points sharded
over devices and processes.

Without a GPU: the sharding, collectives and gradient rules, with the transform replaced by
exact sums -- JAX on 4 CPU devices of one process and on 2 CPU processes under
jax.distributed (gloo), torch on 2 CPU processes under torchrun (gloo) -- and the launcher.
On GPUs: the real ops, one process per GPU (JAX: jax.distributed.initialize with
local_device_ids=[i], started by python/tools/launch_local.py; torch: torchrun, NCCL) on 2 and
4 GPUs, results and gradients against the one-GPU run of each process; they skip visibly with
fewer GPUs.

    WARPFFT_LIBRARY=target/release/libwarpfft.so PYTHONPATH=python \
        python -m pytest python/tests/test_scaleout.py -q -rs
"""

import ctypes
import functools
import os
import re
import sys

import pytest
from _support import PYDIR, run

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
LAUNCH = os.path.join(PYDIR, "tools", "launch_local.py")
JAX_CPU_CHECKS = ["type1_values", "type2_values", "type3_values", "type1_grads", "type2_grads",
                  "normal_operator_grads", "type3_grads", "unchecked_shard_map",
                  "from_local_shards", "argument_errors"]
WORKER_CHECKS = {"jax": ["type1", "type2", "type3", "gradients"],
                 "torch": ["type1", "type2", "type3", "gradients", "replicated_gradients"]}


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PYDIR] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("XLA_FLAGS", None)
    env.update(extra)
    return env


@functools.lru_cache(maxsize=None)
def gpu_count():
    """CUDA devices the driver reports (0 without a driver), without starting a framework."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0:
            return 0
        return n.value
    except OSError:
        return 0


def require_gpus(n):
    have = gpu_count()
    if have < n:
        pytest.skip(f"no GPU: this test needs {n} GPUs (one process each), the driver reports "
                    f"{have}")


def _passes(out, checks, nproc):
    """Every rank printed PASS for every check (output of launch_local or torchrun)."""
    for check in checks:
        ranks = set(re.findall(rf"PASS check_{check} \(rank (\d+)\)", out))
        assert ranks == {str(r) for r in range(nproc)}, \
            f"check_{check}: passed on ranks {sorted(ranks)} of {nproc}\n{out[-6000:]}"


# ---- without a GPU --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax_cpu_run():
    pytest.importorskip("jax", reason="JAX is not installed")
    return run([sys.executable, os.path.join(SCRIPTS, "scaleout_jax_cpu.py")], env=_env(),
               timeout=600)


@pytest.mark.parametrize("check", JAX_CPU_CHECKS)
def test_jax_sharded_over_four_cpu_devices(jax_cpu_run, check):
    out = jax_cpu_run.stdout + jax_cpu_run.stderr
    assert f"PASS check_{check}\n" in out, out[-6000:]


def test_jax_two_processes_on_cpu():
    """jax.distributed with 2 CPU processes (gloo collectives), launched as on GPUs."""
    pytest.importorskip("jax", reason="JAX is not installed")
    r = run([sys.executable, LAUNCH, "--nproc", "2", "--timeout", "400", "--",
             sys.executable, os.path.join(SCRIPTS, "scaleout_jax_worker.py"), "--platform",
             "cpu"], env=_env(), timeout=450)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    _passes(out, WORKER_CHECKS["jax"], 2)


def _torchrun(nproc, device, timeout):
    return run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node", str(nproc), os.path.join(SCRIPTS, "scaleout_torch_worker.py"),
                "--device", device], env=_env(OMP_NUM_THREADS="1"), timeout=timeout)


def test_torch_two_processes_on_cpu():
    """torch.distributed with 2 CPU processes (gloo) under torchrun, the ops replaced by exact
    sums: the all_reduce / gather steps and their backward rules."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    r = _torchrun(2, "cpu", 400)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    _passes(out, WORKER_CHECKS["torch"], 2)


def test_torch_without_process_group_raises():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    from warpfft.torch import distributed as wd
    if torch.distributed.is_initialized():
        pytest.skip("a process group is initialized in this process")
    p = torch.zeros((2, 4))
    v = torch.zeros(4, dtype=torch.complex64)
    for call in (lambda: wd.nufft1_sharded(p, v, (4, 4)),
                 lambda: wd.nufft2_sharded(p, torch.zeros((4, 4), dtype=torch.complex64)),
                 lambda: wd.sum_over_ranks(v), lambda: wd.replicated(v),
                 lambda: wd.gather_over_ranks(v),
                 lambda: wd.nufft3_sharded(p, v, p, by="targets")):
        with pytest.raises(RuntimeError, match="init_process_group"):
            call()


def test_torch_nufft3_arguments():
    pytest.importorskip("torch", reason="PyTorch is not installed")
    import warpfft.torch as wt
    wd = wt.distributed  # the lazy attribute
    for kw, match in ((dict(by="rows"), "one of sources, targets, both"),
                      (dict(by="both"), "needs targets_group"),
                      (dict(by="targets", targets_group=object()), "targets_group is for"),
                      (dict(by="sources", gather=True), "gather=True is for")):
        with pytest.raises(ValueError, match=match):
            wd.nufft3_sharded(None, None, None, **kw)


def test_launcher_stops_the_others_when_one_fails():
    code = ("import os, sys, time\n"
            "r = int(os.environ['RANK'])\n"
            "print('rank', r, 'of', os.environ['WORLD_SIZE'], os.environ['MASTER_PORT'],"
            " flush=True)\n"
            "sys.exit(3) if r == 1 else time.sleep(120)\n")
    r = run([sys.executable, LAUNCH, "--nproc", "3", "--", sys.executable, "-c", code],
            timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    for rank in range(3):
        assert f"[rank {rank}] rank {rank} of 3 " in r.stdout
    r = run([sys.executable, LAUNCH, "--nproc", "2", "--timeout", "1", "--", sys.executable,
             "-c", "import time; time.sleep(120)"], timeout=60)
    assert r.returncode == 124


def _bench():
    import importlib.util
    spec = importlib.util.spec_from_file_location("scaleout_bench",
                                                  os.path.join(PYDIR, "bench", "scaleout.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_retries_in_chunks_after_an_oom_on_one_gpu():
    bench = _bench()
    timer = bench.Timer(lambda: None, lambda r: None, lambda ts: [ts])
    freed = []

    def make(chunks):
        def fn():
            if chunks < 4:
                raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate")
            return chunks
        return fn

    rec = {}
    assert bench._with_chunks(rec, "t1", 1, make, timer, 2, lambda: freed.append(1)) == 4
    assert rec["t1"]["chunks"] == 4 and freed == [1, 1]
    with pytest.raises(RuntimeError, match="RESOURCE_EXHAUSTED"):  # several GPUs: no retry
        bench._with_chunks({}, "t1", 2, make, timer, 2, lambda: None)
    with pytest.raises(ValueError, match="other"):  # only an OOM is retried
        bench._with_chunks({}, "t1", 1, lambda c: (lambda: (_ for _ in ()).throw(
            ValueError("other"))), timer, 2, lambda: None)


@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_bench_dry_run_on_cpu(framework, tmp_path):
    """python/bench/scaleout.py end to end on 1 and 2 CPU processes (--cpu-smoke: exact sums,
    gloo): the blocks make the same global data on any process count, the runs compare with
    the 1-process run, the summary has the rows."""
    pytest.importorskip(framework)
    for g in (1, 2):
        r = run([sys.executable, LAUNCH, "--nproc", str(g), "--timeout", "300", "--",
                 sys.executable, os.path.join(PYDIR, "bench", "scaleout.py"), "run",
                 "--framework", framework, "--out", str(tmp_path), "--M", "2048", "--modes",
                 "6", "4", "5", "--reps", "1", "--cpu-smoke"], env=_env(), timeout=330)
        assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    table = _bench().summary(str(tmp_path))
    rows = [line for line in table.splitlines() if line.startswith(f"| {framework} |")]
    assert len(rows) == 4, table
    import json
    with open(tmp_path / f"scaleout_{framework}_G2.json") as fh:
        rec = json.load(fh)
    for t in ("t1", "t2"):
        assert rec[t]["diff_1gpu"] < 1e-5, rec
        assert rec[t]["chunks"] == 1 and rec[t]["total_ms"] > 0


# ---- on GPUs: one process per GPU -----------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("nproc", [2, 4])
def test_jax_processes_on_gpus(nproc):
    """jax.distributed, one process per GPU (local_device_ids=[i], CUDA_VISIBLE_DEVICES unset):
    sharded types 1/2/3 and the normal operator's gradients against each process's one-GPU
    run."""
    pytest.importorskip("jax", reason="JAX is not installed")
    require_gpus(nproc)
    env = _env(XLA_PYTHON_CLIENT_PREALLOCATE="false")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    r = run([sys.executable, LAUNCH, "--nproc", str(nproc), "--timeout", "500", "--",
             sys.executable, os.path.join(SCRIPTS, "scaleout_jax_worker.py"), "--platform",
             "gpu"], env=env, timeout=560)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    _passes(out, WORKER_CHECKS["jax"], nproc)


@pytest.mark.gpu
@pytest.mark.parametrize("nproc", [2, 4])
def test_torch_processes_on_gpus(nproc):
    """torchrun, NCCL, one process per GPU: sharded types 1/2/3 and gradients against each
    process's one-GPU run."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    require_gpus(nproc)
    r = _torchrun(nproc, "cuda", 560)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    _passes(out, WORKER_CHECKS["torch"], nproc)
