"""One process of a jax.distributed job meeting over jax's key-value store
(muster_jax.distributed; test_store_distributed.py starts it).

usage: store_worker.py PROC_ID NUM_PROCS PORT CASE
CASE "basic": allgather, barrier, the engine choice for GPU arrays (on a
machine without a GPU: cusolvermp unavailable, with the reason), a solve on
host pieces forced to cusolvermp (refused: host memory), the mesh's grid.
CASE "kill": the last process SIGKILLs itself after the first barrier; the
others' second barrier must fail naming it.  Prints "proc I: ..." lines.
"""
import os
import signal
import sys
import time

proc_id, nproc, port, case = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id)

import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import muster_jax.distributed as md  # noqa: E402


def say(*what):
    print(f"proc {proc_id}:", *what, flush=True)


s = md.store_set(timeout=2 if case == "kill" else 20)
got = s.allgather(bytes([proc_id]) * 5)
assert got == [bytes([r]) * 5 for r in range(nproc)], got
s.barrier()
if case == "kill":
    if proc_id == nproc - 1:
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.monotonic()
    try:
        s.barrier()
        say("barrier passed?")
    except ValueError as e:
        say(f"barrier failed after {time.monotonic() - t0:.2f} s: {e}")
    # process 0 hosts jax's coordination service: the others end when it
    # does, so it waits for them to report first
    time.sleep(3 if proc_id == 0 else 0)
    os._exit(0)  # the failed set is left to the process's end

for want in (None, "cusolvermp"):
    try:
        say("engine", want, "chose", s.engine("potrs", 4096, provider=want))
    except ValueError as e:
        say("engine", want, "refused:", e)
n = 12
rng = np.random.default_rng(7)
m = rng.standard_normal((n, n))
a, b = m @ m.T + n * np.eye(n), rng.standard_normal((n, 2))
c0, k = (n + nproc - 1) // nproc * proc_id, (n + nproc - 1) // nproc
try:
    md.solve("potrs", a[:, c0:c0 + k], b, n=n, store=s, provider="cusolvermp")
    say("host solve ran?")
except ValueError as e:
    say("host solve refused:", e)
mesh = jax.make_mesh((nproc,), ("x",))
g = md.mesh_grid(mesh.axis_names, mesh.devices.shape, [d.process_index for d in mesh.devices.flat],
                 P(None, "x"), n)
say("grid", g["nprow"], g["npcol"], g["layout"], "rank", g["procs"][proc_id]["rank"])
s.close()
say("done")
