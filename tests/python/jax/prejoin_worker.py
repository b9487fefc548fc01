"""One process of test_prejoin.py's MPMD run (jax.distributed, one host
device per process): a potrs whose rank 1 fails before it joins its group
(MUSTER_JAX_TEST_FAIL_STAGE=1 fails that rank's first staging), then the
same potrs again, which must solve.

usage: prejoin_worker.py PROC_ID NUM_PROCS PORT SEED LATE_PROC
LATE_PROC sleeps 1 s before its first call (0: the failing rank comes
first, 1: last).  Prints one line, "result " + JSON: the first call's
seconds and error, the second call's residual.
"""
import json
import os
import sys
import time

proc_id, nproc, port, seed, late = (int(v) for v in sys.argv[1:6])
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id)

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


out = {"proc": proc_id}
if proc_id == late:
    time.sleep(1.0)
t0 = time.monotonic()
try:
    potrs()
    out["error"] = None
except Exception as e:  # noqa: BLE001 - jax's runtime error
    out["error"] = str(e)
out["took"] = time.monotonic() - t0
out["residual"] = float(check_potrs(a, b, potrs()))
print("result " + json.dumps(out), flush=True)
jax.distributed.shutdown()
