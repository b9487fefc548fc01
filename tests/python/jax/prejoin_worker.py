"""One process of test_prejoin.py's runs (jax.distributed, one host device
per process): a potrs whose rank 1 fails before it joins the others, then
the same potrs again, which must solve.  MODE "mesh": muster_jax.potrs on a
mesh over both processes, rank 1's first staging failing
(MUSTER_JAX_TEST_FAIL_STAGE=1); "store": muster_jax.distributed.solve
eagerly over a store set, rank 1's piece failing its copy (an element
that is no number).

usage: prejoin_worker.py PROC_ID NUM_PROCS PORT MODE-LATE_PROC-SEED
(storecase.run_workers' form).  LATE_PROC sleeps 1 s before its first
call (0: the failing rank comes first, 1: last).  Prints one line, "result " + JSON: the first call's
seconds and error (its text, type, and a CallError's code, name and
kind), the second call's residual.
"""
import json
import os
import sys
import time

proc_id, nproc, port = (int(v) for v in sys.argv[1:4])
mode, late, seed = sys.argv[4].split("-")
late, seed = int(late), int(seed)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402

on_gpu = os.environ.get("MUSTER_JAX_PLATFORM") == "cuda"  # one GPU per process (gpu-testing.md)
jax.config.update("jax_platforms", "cuda" if on_gpu else "cpu")
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id, local_device_ids=[proc_id] if on_gpu else None)

import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import muster_jax as mj  # noqa: E402
from jaxtest_util import check_potrs, hpd, rhs  # noqa: E402

n = 16
rng = np.random.default_rng(seed)  # the same A and B in every process
a, b = hpd(rng, n, np.float64), rhs(rng, n, 2, np.float64)
mesh = jax.make_mesh((len(jax.devices()),), ("x",))


def put(x, spec):
    return jax.make_array_from_callback(x.shape, NamedSharding(mesh, spec), lambda idx: x[idx])


def potrs():
    x = mj.potrs(put(a, P(None, "x")), put(b, P(None, None)), mesh=mesh, in_specs=(P(None, "x"), P(None, None)))
    return np.asarray(x.addressable_data(0))


def store_potrs(spoil=False):
    cols = slice(proc_id * n // nproc, (proc_id + 1) * n // nproc)
    piece = a[:, cols].astype(object)
    if spoil:
        piece[0, 0] = "no number"  # its copy into the solve's buffer fails
    return np.asarray(md.solve("potrs", piece, b, n=n, store=store))


if mode == "store":
    import muster_jax.distributed as md
    store = md.store_set()
out = {"proc": proc_id}
if proc_id == late:
    time.sleep(1.0)
t0 = time.monotonic()
try:
    potrs() if mode == "mesh" else store_potrs(spoil=proc_id == 1)
    out["error"] = None
except Exception as e:  # noqa: BLE001 - jax's runtime error
    out["error"], out["type"], out["value_error"] = str(e), type(e).__name__, isinstance(e, ValueError)
    out.update({k: getattr(e, k, None) for k in ("code", "name", "kind")})  # a CallError's (store mode)
out["took"] = time.monotonic() - t0
out["residual"] = float(check_potrs(a, b, potrs() if mode == "mesh" else store_potrs()))
print("result " + json.dumps(out), flush=True)
if mode == "store":
    store.close()
jax.distributed.shutdown()
