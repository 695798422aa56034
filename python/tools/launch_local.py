"""Starts N copies of a command on this host, one per GPU, with torchrun's environment
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and waits for them.
For JAX's multi-process runtime on one host (each copy calls
``jax.distributed.initialize(f"{MASTER_ADDR}:{MASTER_PORT}", WORLD_SIZE, RANK,
local_device_ids=[LOCAL_RANK])``) where torchrun is not wanted: the tests and the scale-out
benchmark use it. Not a scheduler: across hosts, use the cluster's launcher (SLURM, mpirun,
...; ``jax.distributed.initialize()`` detects those itself).

    python python/tools/launch_local.py --nproc 4 [--timeout 300] -- python my_script.py ARGS

Each copy's output lines are prefixed with ``[rank i]``. If a copy fails (or the timeout
passes), the others are terminated (a collective would wait for the failed one for ever).
Exit status: the first failure's (124 on the timeout), else 0.
"""

import argparse
import os
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pump(rank, stream, out, lock):
    for line in iter(stream.readline, ""):
        with lock:
            out.write(f"[rank {rank}] {line}")
            out.flush()
    stream.close()


def launch(nproc, cmd, timeout=None, env=None, out=sys.stdout):
    """Runs `cmd` (a list) `nproc` times with torchrun's variables; returns the exit status."""
    base = dict(os.environ if env is None else env)
    base.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(nproc),
                LOCAL_WORLD_SIZE=str(nproc))
    procs, pumps, lock = [], [], threading.Lock()
    for rank in range(nproc):
        e = dict(base, RANK=str(rank), LOCAL_RANK=str(rank))
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        procs.append(p)
        t = threading.Thread(target=_pump, args=(rank, p.stdout, out, lock), daemon=True)
        t.start()
        pumps.append(t)
    deadline = None if timeout is None else time.monotonic() + timeout
    status = 0
    while [p.poll() for p in procs].count(None):  # polls every copy (any() would stop early)
        failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
        late = deadline is not None and time.monotonic() > deadline
        if failed or late:
            status = 124 if late and not failed else failed[0]
            _stop(procs)
            break
        time.sleep(0.1)
    for t in pumps:
        t.join(timeout=5)
    if status == 0:
        status = next((p.returncode for p in procs if p.returncode != 0), 0)
    return status


def _stop(procs):
    """Terminates the copies still running (SIGTERM, then SIGKILL after 10 s), by their ids."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    end = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, required=True, help="copies (one per GPU)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before all are stopped")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command and its arguments")
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd or a.nproc < 1:
        ap.error("usage: launch_local.py --nproc N -- command [args]")
    return launch(a.nproc, cmd, a.timeout)


if __name__ == "__main__":
    sys.exit(main())
