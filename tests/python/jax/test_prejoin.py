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
import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402


def run(late, mode):
    """Both processes' result dicts (prejoin_worker.py), each checked to
    have exited 0 with its second call solved."""
    seed = int.from_bytes(os.urandom(3), "little")
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=1", "MUSTER_TIMEOUT": "30",
           "MUSTER_JAX_TEST_FAIL_STAGE": "1"}
    res = storecase.worker_results(*storecase.run_workers(HERE / "prejoin_worker.py", 2, f"{mode}-{late}-{seed}",
                                                          HERE.parents[2] / "adapters" / "jax", env, budget=150))
    for r in res:
        assert r["residual"] < 30, (seed, r)
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
