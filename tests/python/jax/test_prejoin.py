"""A process of a jax.distributed run (one host device per process) whose
rank fails before it meets the other: the other process must fail within 3
s of its call (MUSTER_TIMEOUT=30) with an error naming rank 1 and its
reason, whether rank 1 came first or last; the next call solves in both;
nothing is left in /dev/shm (conftest).
  - a mesh over both processes (muster_jax.potrs): rank 1's staging buffer
    cannot be had (the test-only MUSTER_JAX_TEST_FAIL_STAGE=1, which fails
    its first staging).  On 2 x H200 the same failure (a GPU short of
    memory at n = 65536) left the other process waiting the whole
    MUSTER_TIMEOUT;
  - muster_jax.distributed.solve, eagerly over a store set: rank 1's copy
    of its piece fails (a live peer is waited for however long there: the
    other process used to wait for good).  The other raises CallError (a
    ValueError) with the code rank 1 passed: MUSTER_EINVAL, its error
    being no memory shortage (StoreSet.fail_call)."""
import json
import os
import subprocess
import sys
import time

import pytest

from test_mpmd import HERE, free_port


def run(late, mode):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=1", MUSTER_TIMEOUT="30",
               MUSTER_JAX_TEST_FAIL_STAGE="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "..", "..", "..", "adapters", "jax"),
                                         env.get("PYTHONPATH", "")])
    port, seed = free_port(), int.from_bytes(os.urandom(3), "little")
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "prejoin_worker.py"), str(i), "2", str(port),
                               str(seed), str(late), mode], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for i in range(2)]
    t0, outs = time.monotonic(), []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=max(1, 150 - (time.monotonic() - t0)))[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    res = []
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"process {i} (seed {seed}) failed:\n{out[-3000:]}"
        lines = [ln for ln in out.splitlines() if ln.startswith("result ")]
        assert lines, out[-3000:]
        res.append(json.loads(lines[-1][len("result "):]))
    for r in res:
        assert r["residual"] < 30, r
    return res


@pytest.mark.parametrize("late", [0, 1], ids=["failing-rank-first", "failing-rank-last"])
def test_rank_failing_before_join_ends_peer(late):
    peer, failing = run(late, "mesh")
    hook = "MUSTER_JAX_TEST_FAIL_STAGE=1"
    assert failing["error"] and "staging buffer" in failing["error"] and hook in failing["error"], failing
    assert peer["error"] and "rank 1 (pid" in peer["error"] and hook in peer["error"], peer
    assert peer["took"] < 3.0, peer


@pytest.mark.parametrize("late", [0, 1], ids=["failing-rank-first", "failing-rank-last"])
def test_store_rank_failing_before_call_ends_peer(late):
    peer, failing = run(late, "store")
    assert failing["error"] and "no number" in failing["error"], failing
    assert peer["error"] and "rank 1 (pid" in peer["error"] and "ValueError" in peer["error"], peer
    assert peer["took"] < 3.0, peer
    assert peer["type"] == "CallError" and peer["value_error"], peer
    assert (peer["code"], peer["name"], peer["kind"]) == (-1, "MUSTER_EINVAL", "invalid_argument"), peer
