"""muster_torch.distributed.solve over a 2-rank store set whose rank 1 fails
its own copy of its piece before the call (a GPU short of memory there:
prejoin_worker.py makes the copy raise): rank 1 raises its own error, and
rank 0, alive and waiting in the call, fails within 3 s of its call
(MUSTER_TIMEOUT=30) naming rank 1 and its error (StoreSet.fail_call:
muster_solve_comm_fail), whether rank 1 came first or last; the set stays
usable, the next call solves on both; nothing is left in /dev/shm
(conftest).  Before fail_call the other rank waited for the live rank 1
however long.  The JAX adapter's test: tests/python/jax/test_prejoin.py."""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402

ENOMEM, EINVAL = "MUSTER_ENOMEM", "MUSTER_EINVAL"
# the peer's exception for each code: the local ops' class of its kind (docs/errors.md), a ValueError too
PEER = {ENOMEM: ("MusterStoreMemoryError", "MemoryError", "resource_exhausted"),
        EINVAL: ("MusterStoreValueError", "MusterValueError", "invalid_argument")}


def run(kind: str, late: int):
    """Both ranks' result dicts (prejoin_worker.py), each checked to have
    exited 0 with its second call solved."""
    res = storecase.worker_results(*storecase.run_workers(HERE / "prejoin_worker.py", 2, f"{kind}-{late}",
                                                          HERE.parents[2] / "adapters" / "torch",
                                                          {"MUSTER_TIMEOUT": "30"}))
    for r in res:
        assert r["residual"] < 1e-12, r
    return res


def check(peer: dict, failing: dict, type_name: str, text: str, code: str):
    """rank 1 raised its own error (type_name, text) and passed `code`;
    rank 0 failed within 3 s with the runtime's message naming rank 1 and
    that error, and an exception carrying the same code (.code, .name,
    .kind): the MusterError of its kind, a CallError and ValueError too."""
    assert failing["type"] == type_name and text in failing["error"], failing
    assert failing["code_name"] == code, failing
    cls, base, kind = PEER[code]
    assert peer["type"] == cls, peer
    assert {base, "MusterError", "CallError", "ValueError"} <= set(peer["bases"]), peer
    assert "rank 1 (pid" in peer["error"] and f"rank 1: {type_name}: {text}" in peer["error"], peer
    assert peer["code_name"] == code and peer["name"] == code and peer["kind"] == kind, peer
    assert peer["took"] < 3.0, peer


@pytest.mark.parametrize("late", [0, 1], ids=["failing-rank-first", "failing-rank-last"])
def test_rank_failing_copy_ends_peer(late):
    """torch.cuda.OutOfMemoryError (CUDA's words: "out of memory"): ENOMEM."""
    peer, failing = run("oom", late)
    check(peer, failing, "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB", ENOMEM)


@pytest.mark.parametrize("kind,type_name,text,code", [
    ("memory", "MemoryError", "test: rank 1's first copy found no memory", ENOMEM),
    ("other", "RuntimeError", "test: rank 1's first copy failed", EINVAL),
], ids=["MemoryError", "RuntimeError"])
def test_failure_code(kind, type_name, text, code):
    """A MemoryError passes ENOMEM, any other error EINVAL (rank 1 last)."""
    peer, failing = run(kind, 1)
    check(peer, failing, type_name, text, code)
