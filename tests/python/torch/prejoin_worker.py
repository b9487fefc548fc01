"""One rank of test_torch_prejoin.py's runs: a 2-rank store set over a
torch TCPStore (rank 0 hosts it), a potrs through
muster_torch.distributed.solve whose rank 1 fails its first copy of its
piece (muster_torch.distributed._piece replaced here, in this worker only:
the test's stand-in for a GPU short of memory), then the same potrs again,
which must solve.

usage: prejoin_worker.py RANK WORLD PORT KIND-LATE
KIND: what rank 1's first copy raises: "oom" (torch.cuda.OutOfMemoryError
with CUDA's words), "memory" (MemoryError), "other" (RuntimeError).  LATE:
the rank that sleeps 1 s before its first call (0: the failing rank comes
first, 1: last).  Prints one line, "result " + JSON: the first call's
error, its type and bases, seconds, and the runtime's code (the failing
rank's StoreSet.fail_call return; the peer's from its exception: .code,
.name, .kind), then the second call's residual and engine.
"""
import datetime
import json
import sys
import time

rank, world, port = (int(v) for v in sys.argv[1:4])
kind, late = sys.argv[4].split("-")
late = int(late)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import muster_torch.distributed as md  # noqa: E402
from muster_torch import _lib, _runtime  # noqa: E402

FAILURES = {
    "oom": lambda: torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (test: rank 1's "
                                               "first copy)"),
    "memory": lambda: MemoryError("test: rank 1's first copy found no memory"),
    "other": lambda: RuntimeError("test: rank 1's first copy failed"),
}
seen = {"code": None}  # the failing rank's fail_call return


def fail_first_copy(real):
    """md._piece that raises FAILURES[kind] on its first call, then copies."""
    calls = [0]

    def piece(x, dtype):
        calls[0] += 1
        if calls[0] == 1:
            raise FAILURES[kind]()
        return real(x, dtype)
    return piece


store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=datetime.timedelta(seconds=60))
s = md.store_set(store, rank, world)
if rank == 1:
    md._piece = fail_first_copy(md._piece)
    real_fail = s.fail_call

    def fail_call(exc):
        seen["code"] = real_fail(exc)
        return seen["code"]
    s.fail_call = fail_call

n = 16
g = torch.Generator().manual_seed(11)  # the same A and B on every rank
m = torch.randn(n, n, generator=g, dtype=torch.float64)
a, b = m @ m.T / n + torch.eye(n, dtype=torch.float64), torch.randn(n, 2, generator=g, dtype=torch.float64)
k = -(-n // world)  # the block layout's columns per rank


def potrs():
    return md.solve("potrs", a[:, k * rank:k * rank + k], b, n=n, store=s)


out = {"rank": rank}
if rank == late:
    time.sleep(1.0)
t0 = time.monotonic()
try:
    potrs()
    out["error"] = out["type"] = None
except Exception as e:  # noqa: BLE001 - the failing rank's own error, the peer's MusterError
    out["error"], out["type"] = str(e), type(e).__name__
    out["bases"] = [c.__name__ for c in type(e).__mro__]
    if isinstance(e, _runtime.CallError):  # the peer: the code its failed solve carries
        seen["code"] = e.code
        out["name"], out["kind"] = e.name, e.kind
out["took"] = time.monotonic() - t0
out["code"] = seen["code"]
out["code_name"] = None if seen["code"] is None else _runtime.err_name(_lib.runtime(), seen["code"])
x = potrs()
out["residual"] = float(torch.linalg.norm(a @ x - b) / (torch.linalg.norm(a) * torch.linalg.norm(x)))
out["provider"] = s.last["provider"]
print("result " + json.dumps(out), flush=True)
s.close()
# rank 0 hosts the TCPStore: it stays until every rank has closed its set
store.set(f"closed/{rank}", b"1")
if rank == 0:
    store.wait([f"closed/{r}" for r in range(world)])
