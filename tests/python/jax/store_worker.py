"""One process of a jax.distributed job meeting over jax's key-value store
(muster_jax.distributed; test_store_distributed.py starts it).

usage: store_worker.py PROC_ID NUM_PROCS PORT basic|kill
The cases are tests/python/storecase.py's.  Prints "proc I: ..." lines.
"""
import pathlib
import sys

proc_id, nproc, port, case = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id)

import numpy as np  # noqa: E402

import muster_jax.distributed as md  # noqa: E402
import storecase  # noqa: E402


def say(*what):
    print(f"proc {proc_id}:", *what, flush=True)


s = md.store_set(timeout=2 if case == "kill" else 20)
if case == "kill":
    storecase.kill_case(s, proc_id, nproc, say)
n, k = 12, -(-12 // nproc)
rng = np.random.default_rng(7)
m = rng.standard_normal((n, n))
a, b = m @ m.T + n * np.eye(n), rng.standard_normal((n, 2))
storecase.basic_case(md, s, proc_id, nproc, say, a[:, k * proc_id:k * proc_id + k], b, n)
say("done")
