"""One process of a jax.distributed job meeting over jax's key-value store
(muster_jax.distributed; test_store_distributed.py starts it).

usage: store_worker.py PROC_ID NUM_PROCS PORT cases|gpu|gpu_bootstrap|jit|fault_kill|fault_stop|gpu_kill|gpu_stop
"cases": storecase's basic case, its one-node case, its grid case (2-D pieces), then its kill case on a second set
(the last process SIGKILLs itself).  "jit": store_jit_case.py's (solve inside jax.jit; MUSTER_TEST_SEED).  The cases are tests/python/storecase.py's ("gpu": one GPU per process,
solves with residuals; "gpu_bootstrap": only storecase.solve_case on cusolvermp, eagerly, then close: the store
bootstrap and NCCL working for a JAX program, run-mpi-gpu.sh's sockets case).  "fault_*", "gpu_*" but "gpu" and
"gpu_bootstrap": storefault.py's (the last process SIGKILLed or
SIGSTOPped inside the engine: the blocking test engine colltwo on the CPU, cusolvermp's syevd on GPUs).
Prints "proc I: ... [S s]" lines (S: seconds since the worker started), and every thread's Python stack on
SIGUSR1 (storecase.worker_say).
"""
import pathlib
import sys

proc_id, nproc, port, case = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/python

import storecase  # noqa: E402  (before jax: a hang in jax.distributed's start shows its stack too)

say = storecase.worker_say("proc", proc_id)

import jax  # noqa: E402

on_gpu = case.startswith("gpu")
jax.config.update("jax_platforms", "cuda" if on_gpu else "cpu")
jax.config.update("jax_enable_x64", True)
jax.distributed.initialize(f"localhost:{port}", nproc, proc_id,
                           local_device_ids=[proc_id] if on_gpu else None)

import numpy as np  # noqa: E402

import muster_jax.distributed as md  # noqa: E402

if case == "jit":  # store_jit_case.py: inside jax.jit against the eager form
    import os

    import store_jit_case
    store_jit_case.jit_case(md, proc_id, nproc, say, int(os.environ["MUSTER_TEST_SEED"]))
    sys.exit(0)
if case in ("fault_kill", "fault_stop", "gpu_kill", "gpu_stop"):
    import signal

    import storefault
    storefault.engine_fault_case(md, proc_id, nproc, say, lambda x: jax.device_put(x, jax.local_devices()[0]),
                                 signal.SIGKILL if case.endswith("kill") else signal.SIGSTOP,
                                 n=8192 if on_gpu else 40, provider="cusolvermp" if on_gpu else "colltwo",
                                 timeout=5 if on_gpu else 2, warm=on_gpu, delay=0.8 if on_gpu else 0.5)
s = md.store_set(timeout=20)
if case == "gpu_bootstrap":  # potrs, getrs, syevd on cusolvermp, residuals checked
    storecase.solve_case(md, s, proc_id, nproc, say, lambda x: jax.device_put(x, jax.local_devices()[0]),
                         np.asarray, provider="cusolvermp")
    s.close()
    say("bootstrap done")
    sys.exit(0)
if case == "gpu":
    import store_jit_case

    def put(x):
        return jax.device_put(x, jax.local_devices()[0])

    # eagerly, then every solve inside jax.jit (store_ffi.c on device buffers)
    for solver in (md, store_jit_case.Jitted(md)):
        for provider in (None, "cusolvermp"):  # the default (one node: maybe a one-node engine), then cusolvermp
            storecase.solve_case(solver, s, proc_id, nproc, say, put, np.asarray, provider=provider)
        storecase.solve_grid_case(solver, s, proc_id, nproc, say, put, np.asarray)
    say("jit solves ok")
    import routinecase  # gels, geqrf, gesvd, polar: eagerly, then inside jit (611 x 401 in f64: each form once)
    routinecase.gpu_routines(md, s, say, put, np.asarray, kw_of=lambda dtype: {"dtype": dtype})
    routinecase.gpu_routines(store_jit_case.Jitted(md), s, lambda *w: say("jitted:", *w), put, np.asarray,
                             kw_of=lambda dtype: {"dtype": dtype}, sizes=((611, 401),), dtypes=("f64",),
                             late=(jax.errors.JaxRuntimeError,))  # the engine's refusals, when it runs
    s.close()
    say("done")
    sys.exit(0)
n, k = 12, -(-12 // nproc)
rng = np.random.default_rng(7)
m = rng.standard_normal((n, n))
a, b = m @ m.T + n * np.eye(n), rng.standard_normal((n, 2))
storecase.basic_case(md, s, proc_id, nproc, say, a[:, k * proc_id:k * proc_id + k], b, n)
storecase.one_node_case(md, proc_id, nproc, say, np.asarray, np.asarray)
storecase.grid_case(md, proc_id, nproc, say)
storecase.kill_case(md.store_set(timeout=2), proc_id, nproc, say)  # does not return
