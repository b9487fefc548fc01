"""Per-call cost of muster_jax on the CPU (docs/performance/jax.md).

usage: XLA_FLAGS=--xla_force_host_platform_device_count=4 \
       python3 tests/python/jax/bench_cpu.py [--groups]

  per call    muster_jax.potrs at small N on 1, 2, 4 host devices (best of 5
              medians), next to a trivial jitted shard_map (JAX's own
              dispatch floor); run it with MUSTER_JAX_GROUP_POOL=0 and =1 to
              see what the pool of group names saves;
  --groups    the runtime alone, through ctypes from 2 and 4 threads:
              join + barrier + leave with the same name each time (cached
              segment) or a new name each time (a segment per call).
"""
import ctypes
import os
import sys
import threading
import time

import numpy as np


def per_call():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    import muster_jax as mj

    pool = os.environ.get("MUSTER_JAX_GROUP_POOL", "1")
    for ndev in (1, 2, 4):
        mesh = jax.make_mesh((ndev,), ("x",), devices=jax.devices()[:ndev])
        for n in (8, 256):
            a = jax.device_put(jnp.eye(n) * 2.0, NamedSharding(mesh, P(None, "x")))
            b = jax.device_put(jnp.ones((n, 1)), NamedSharding(mesh, P(None, None)))
            f = lambda: mj.potrs(a, b, mesh=mesh, in_specs=(P(None, "x"), P(None, None))).block_until_ready()  # noqa
            g = jax.jit(jax.shard_map(lambda a, b: (b * 0.5, jnp.zeros((1,), jnp.int32)), mesh=mesh,
                                      in_specs=(P(None, "x"), P(None, None)), out_specs=(P(None, None), P(None)),
                                      check_vma=False))
            h = lambda: g(a, b)[0].block_until_ready()  # noqa: E731
            res = []
            for fn in (f, h):
                for _ in range(30):
                    fn()
                meds = []
                for _ in range(5):
                    t = []
                    for _ in range(100):
                        t0 = time.perf_counter()
                        fn()
                        t.append(time.perf_counter() - t0)
                    meds.append(np.median(t))
                res.append(min(meds) * 1e6)
            print(f"pool={pool} devices={ndev} N={n}: muster_jax.potrs {res[0]:.0f} us, "
                  f"trivial shard_map {res[1]:.0f} us", flush=True)


def groups(libdir):
    lib = ctypes.CDLL(os.path.join(libdir, "libmuster.so"))
    lib.muster_group_join.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.POINTER(ctypes.c_void_p)]
    lib.muster_group_barrier.argtypes = [ctypes.c_void_p]
    lib.muster_group_leave.argtypes = [ctypes.c_void_p]
    lib.muster_last_error.restype = ctypes.c_char_p

    def run(R, fresh, iters=2000):
        start, times = threading.Barrier(R), []

        def worker(r):
            g = ctypes.c_void_p()
            start.wait()
            t0 = time.perf_counter()
            for i in range(iters):
                name = f"bench.{os.getpid()}.{i if fresh else 'same'}".encode()
                assert lib.muster_group_join(name, r, R, None, ctypes.byref(g)) == 0, lib.muster_last_error()
                assert lib.muster_group_barrier(g) == 0, lib.muster_last_error()
                assert lib.muster_group_leave(g) == 0, lib.muster_last_error()
            times.append(time.perf_counter() - t0)

        ts = [threading.Thread(target=worker, args=(r,)) for r in range(R)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return max(times) / iters * 1e6

    for R in (2, 4):
        same = min(run(R, False) for _ in range(3))
        fresh = min(run(R, True) for _ in range(3))
        print(f"{R} threads: join+barrier+leave {same:.1f} us with the same name, {fresh:.1f} us with a new "
              f"name per call (+{fresh - same:.1f} us)", flush=True)


if __name__ == "__main__":
    if "--groups" in sys.argv:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                        "adapters", "jax"))
        from muster_jax import _lib
        groups(str(_lib.lib_dir()))
    else:
        per_call()
