"""muster_jax.distributed: processes of a jax.distributed job (CPU, launched
here) meet over jax's key-value store through the runtime's store
bootstrap (include/muster/store.h): allgather and barrier; the engine choice
for GPU arrays says cusolvermp cannot run here and why; a process SIGKILLed
is named by the others within the timeout.  store_worker.py is one
process."""
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _run(nproc, case, budget=120):
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "..", "..", "adapters", "jax"),
                                         env.get("PYTHONPATH", "")])
    port = _port()
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "store_worker.py"), str(i), str(nproc),
                               str(port), case], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for i in range(nproc)]
    t0, outs = time.monotonic(), []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1, budget - (time.monotonic() - t0)))[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return procs, outs


def test_store_set_over_jax_distributed():
    procs, outs = _run(2, "basic")
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"process {i}:\n{out[-3000:]}"
        assert f"proc {i}: done" in out, out
        # a call on GPU arrays would go to cusolvermp; with no GPU here the
        # choice says it cannot run, and why (the provider's probe)
        forced = re.search(rf"proc {i}: engine cusolvermp (chose|refused:)(.*)", out)
        assert forced, out
        if forced.group(1) == "refused:":
            assert "cusolvermp (" in forced.group(2) and "probe:" in forced.group(2), out
        # host pieces forced to it: refused by rank 0's choice, on every process
        host = re.search(rf"proc {i}: host solve refused: (.*)", out)
        assert host and "cusolvermp (" in host.group(1), out
        assert f"proc {i}: grid 1 2 block rank {i}" in out, out


def test_store_set_names_a_killed_process():
    procs, outs = _run(3, "kill")
    assert procs[2].returncode == -9, outs[2][-2000:]
    for i in (0, 1):
        out = outs[i]
        m = re.search(rf"proc {i}: barrier failed after ([0-9.]+) s: (.*)", out)
        assert m, out[-3000:]
        assert "rank 2 (pid" in m.group(2) and "died" in m.group(2), out
        assert float(m.group(1)) < 2.0, out  # same node: /proc tells at once (the timeout is 2 s)
