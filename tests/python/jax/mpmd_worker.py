"""One process of an MPMD run (jax.distributed, one device per process).

usage: mpmd_worker.py PROC_ID NUM_PROCS PORT SEED
Solves potrs, potri and syevd on a mesh spanning every process and checks
the residuals of its own copy; exits 0 when all are right.
"""
import os
import sys
import time

proc_id, nproc, port, seed = (int(v) for v in sys.argv[1:5])
T0 = time.monotonic()


def stamp(what):
    """Phase timings on stderr: where a slow run spends its time."""
    print(f"[{time.monotonic() - T0:6.1f} s] proc {proc_id}: {what}", file=sys.stderr, flush=True)


# Both processes check their results on the host at the same time: with
# OpenBLAS's default of one thread per core each, eigvalsh(4096) took 32 s
# instead of 1 s on a 32-core GPU node (2026-11-21).  Before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "4")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

import jax  # noqa: E402

jax.config.update("jax_platforms", os.environ.get("MUSTER_JAX_PLATFORM", "cpu"))
jax.config.update("jax_enable_x64", True)
local = None
if os.environ.get("MUSTER_JAX_PLATFORM") == "cuda":
    local = [proc_id]
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id, local_device_ids=local)
stamp("jax.distributed initialized")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import muster_jax as mj  # noqa: E402
from jaxtest_util import check_potri, check_potrs, check_syevd, hermitian, hpd, rhs  # noqa: E402

n = int(os.environ.get("MPMD_N", "24"))
rng = np.random.default_rng(seed)  # same seed: every process builds the same A
a, b, h = hpd(rng, n, np.float64), rhs(rng, n, 2, np.float64), hermitian(rng, n, np.float64)
ndev = len(jax.devices())  # every process's devices: one each, or several (mixed)
mesh = jax.make_mesh((ndev,), ("x",))


def put(x, spec):
    return jax.make_array_from_callback(x.shape, NamedSharding(mesh, spec), lambda idx: x[idx])


def local_copy(x):
    return np.asarray(x.addressable_data(0))


stamp("inputs built")
specs = (P(None, "x"), P(None, None))
x = mj.potrs(put(a, P(None, "x")), put(b, P(None, None)), mesh=mesh, in_specs=specs)
x_loc = local_copy(x)
stamp("potrs solved")
r1 = check_potrs(a, b, x_loc)
inv = mj.potri(put(a, P(None, "x")), mesh=mesh, in_specs=P(None, "x"))
inv.block_until_ready()
stamp("potri solved")
# column-sharded results: check every column block this process holds
eps = np.finfo(np.float64).eps
lam = np.linalg.eigvalsh(a)  # a is SPD: cond = largest / smallest eigenvalue
cond = lam[-1] / lam[0]
stamp("condition number")
r2 = 0.0
for sh in inv.addressable_shards:
    cols = sh.index[1]
    r2 = max(r2, np.abs(a @ np.asarray(sh.data) - np.eye(n)[:, cols]).max() / (n * eps * cond))
stamp("potri checked")
w, v = mj.syevd(put(h, P(None, "x")), mesh=mesh, in_specs=P(None, "x"))
w_loc = local_copy(w)
stamp(f"syevd solved (last solve on this process's rank 0, if here: {mj.last_solve()})")
r3 = 0.0
for sh in v.addressable_shards:
    v_loc = np.asarray(sh.data)
    r3 = max(r3, np.abs(h @ v_loc - v_loc * w_loc[sh.index[1]][None, :]).max() / (np.abs(h).max() * n * eps))
print(f"proc {proc_id}: potrs {r1:.2f} potri {r2:.2f} syevd {r3:.2f}", flush=True)
ok = r1 < 30 and r2 < 30 and r3 < 30
stamp("checked; shutting down")
jax.distributed.shutdown()
stamp("jax.distributed.shutdown returned")
sys.exit(0 if ok else 1)
