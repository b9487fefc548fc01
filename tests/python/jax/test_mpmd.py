"""MPMD: jax.distributed with one process per device (here: CPU, one host
device per process; on the GPU machine run-gpu.sh runs it on 2 GPUs)."""
import os
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("nproc,per_proc", [(2, 1), (2, 2)], ids=["2x1", "2x2-mixed"])
def test_mpmd_processes(nproc, per_proc):
    """2 processes of 1 device (MPMD), and 2 processes of 2 devices: a group
    of 4 ranks that are partly threads, partly processes."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=%d" % per_proc
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "..", "..", "adapters", "jax"),
                                         env.get("PYTHONPATH", "")])
    port, seed = free_port(), int.from_bytes(os.urandom(3), "little")
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "mpmd_worker.py"), str(i), str(nproc),
                               str(port), str(seed)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i in range(nproc)]
    t0, outs = time.monotonic(), []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1, 240 - (time.monotonic() - t0)))[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"process {i} (seed {seed}) failed:\n{out[-3000:]}"
        assert f"proc {i}: potrs" in out
