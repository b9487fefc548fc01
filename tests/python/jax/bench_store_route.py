"""The store route's fixed cost per call (issue 24): muster_jax.distributed
.solve over a store set on one node, tiny solves on the CPU, so that what
is timed is the route, not the engine.

usage: bench_store_route.py [--procs 2] [--n 64] [--calls 200] [--warm 20] [--json OUT] [--gpu]

Starts PROCS processes of a jax.distributed job on host devices (as
test_store_distributed.py does), with the collective test provider
colllapack beside the build's providers and cost tables that make lapack
(a one-node engine) the default choice (storecase.one_node_tables).  Each
process wraps jax's key-value client in a counter (every set, get and
delete, its key's kind and its time, on the calling thread or the
heartbeat's) and runs, per mode, WARM calls then CALLS timed ones back to
back on a potrs of n x n with 2 right-hand sides:

  eager default     solve(..., store=s): lapack through the one-node route
  eager lapack      provider="lapack" forced: the same route
  eager colllapack  provider="colllapack": the collective route
  jit default       the same call inside jax.jit (store_ffi.c)
  jit lapack

--gpu: one GPU per process (jax with CUDA), GPU arrays, the build's
providers as they are: "eager default", "eager cusolvermp", "jit default",
"jit cusolvermp" (the default there is a one-node engine).

Process 0 prints, per mode: the median and mean seconds per call, the
store's allgathers per call (keys ag/<k>/<rank> written), the key-value
operations per call on the solving thread (set, get, delete) and their
time, the heartbeat thread's operations per call, the engine's own seconds
(StoreSet.last; eager only), and the phases of its median call (from the
key-value log: what happened between the rounds).  MUSTER_BUILD: the
build folder (default <repo>/build).
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
MODES = ("eager default", "eager lapack", "eager colllapack", "jit default", "jit lapack")
GPU_MODES = ("eager default", "eager cusolvermp", "jit default", "jit cusolvermp")


class CountingKV:
    """A KeyValue that logs (thread is the solver's, op, key kind, round, t0, t1) of every operation."""

    def __init__(self, inner):
        self.inner, self.log, self.solver = inner, [], threading.get_ident()
        self.lock = threading.Lock()

    def _note(self, op, key, t0):
        t1 = time.perf_counter()
        parts = key.split("/")  # muster/<set>/ag/<k>/<rank>, muster/<set>/beat/<r>, muster/<set>/abort
        kind = parts[2] if len(parts) > 2 else key
        k = int(parts[3]) if kind == "ag" else -1
        with self.lock:
            self.log.append((threading.get_ident() == self.solver, op, kind, k, t0, t1))

    def set(self, key, value):
        t0 = time.perf_counter()
        self.inner.set(key, value)
        self._note("set", key, t0)

    def get(self, key, timeout_s):
        t0 = time.perf_counter()
        v = self.inner.get(key, timeout_s)
        self._note("get", key, t0)
        return v

    def delete(self, key):
        t0 = time.perf_counter()
        self.inner.delete(key)
        self._note("delete", key, t0)


def phases(log, t0, t1):
    """The median call's timeline: each allgather round (from its set to its
    last get) and the gaps between (local work), in microseconds."""
    mine = [e for e in log if e[0] and t0 <= e[4] <= t1 and e[2] == "ag" and e[1] != "delete"]
    out, last = [], t0
    for k in sorted({e[3] for e in mine}):
        ops = [e for e in mine if e[3] == k]
        start, end = min(e[4] for e in ops), max(e[5] for e in ops)
        out.append(("local", round((start - last) * 1e6)))
        out.append((f"ag {k}: {len(ops)} ops", round((end - start) * 1e6)))
        last = end
    out.append(("local", round((t1 - last) * 1e6)))
    return out


def worker(proc, nproc, port, n, calls, warm, gpu):
    import jax
    jax.config.update("jax_platforms", "cuda" if gpu else "cpu")
    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize(f"localhost:{port}", nproc, proc, local_device_ids=[proc] if gpu else None)
    import numpy as np
    import muster_jax.distributed as md
    from muster_jax import _lib, _store

    kv = CountingKV(md.JaxKeyValue())
    s = _store.StoreSet(_lib.runtime(), kv, _store.next_name("bench"), proc, nproc, timeout_s=20)
    rng = np.random.default_rng(5)
    m = rng.standard_normal((n, n))
    a, b = m @ m.T + n * np.eye(n), rng.standard_normal((n, 2))
    k = -(-n // nproc)
    piece = a[:, k * proc:min(n, k * proc + k)]
    if gpu:
        piece, b_in = (jax.device_put(x, jax.local_devices()[0]) for x in (piece, b))
    else:
        b_in = b
    jitted = {}
    report = {}
    for mode in GPU_MODES if gpu else MODES:
        form, engine = mode.split()
        provider = None if engine == "default" else engine
        if form == "jit":
            f = jitted.setdefault(provider, jax.jit(lambda p, b, pv=provider: md.solve("potrs", p, b, n=n, store=s,
                                                                                         provider=pv)))
            call = lambda: jax.block_until_ready(f(piece, b_in))  # noqa: E731
        else:
            call = lambda: jax.block_until_ready(md.solve("potrs", piece, b_in, n=n, store=s,  # noqa: E731
                                                          provider=provider))
        try:
            x = np.asarray(call())
        except Exception as e:  # noqa: BLE001 - an engine that refuses the call: every process alike
            if form == "jit":
                md.clear_failure()
            report[mode] = dict(refused=str(e)[:300])
            continue
        for _ in range(warm):
            x = np.asarray(call())
        assert np.linalg.norm(a @ x - b) < 1e-8 * np.linalg.norm(a) * np.linalg.norm(x), mode
        s.barrier()
        kv.log.clear()
        times, spans, engine_s = [], [], []
        for _ in range(calls):
            t0 = time.perf_counter()
            call()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            spans.append((t0, t1))
            if form == "eager":
                engine_s.append(s.last["seconds"])
        log = list(kv.log)
        mine = [e for e in log if e[0]]
        med = sorted(range(calls), key=lambda i: times[i])[calls // 2]
        report[mode] = dict(
            median_s=statistics.median(times), mean_s=statistics.fmean(times),
            allgathers=sum(1 for e in mine if e[1] == "set" and e[2] == "ag") / calls,
            ops={op: sum(1 for e in mine if e[1] == op) / calls for op in ("set", "get", "delete")},
            kv_s=sum(e[5] - e[4] for e in mine) / calls,
            beat_ops=sum(1 for e in log if not e[0]) / calls,
            engine_s=statistics.median(engine_s) if engine_s else None,
            provider=s.last["provider"] if form == "eager" else None,
            phases=phases(log, *spans[med]))
    # one bare round for scale: an allgather of 8 bytes, and a lone set + get
    s.barrier()
    t = []
    for _ in range(calls):
        t0 = time.perf_counter()
        s.allgather(b"12345678")
        t.append(time.perf_counter() - t0)
    report["bare allgather"] = dict(median_s=statistics.median(t))
    t = []
    for i in range(calls):
        t0 = time.perf_counter()
        kv.inner.set(f"benchkv/{proc}/{i}", b"x" * 64)
        kv.inner.get(f"benchkv/{proc}/{i}", 1.0)
        t.append(time.perf_counter() - t0)
    report["bare set+get"] = dict(median_s=statistics.median(t))
    s.close()
    if proc == 0:
        print("REPORT " + json.dumps(report), flush=True)


def show(report, nproc, n, gpu):
    print(f"{nproc} processes, potrs n={n}, nrhs 2, {'one GPU each' if gpu else 'host devices'}")
    print(f"{'mode':18} {'median ms':>9} {'mean ms':>8} {'rounds':>6} {'set':>4} {'get':>4} {'del':>4} "
          f"{'kv ms':>6} {'beat':>5} {'engine ms':>9}  provider")
    modes = GPU_MODES if gpu else MODES
    for mode in modes:
        r = report[mode]
        if "refused" in r:
            print(f"{mode:18} refused: {r['refused']}")
            continue
        eng = f"{r['engine_s'] * 1e3:9.3f}" if r["engine_s"] is not None else f"{'':9}"
        print(f"{mode:18} {r['median_s'] * 1e3:9.3f} {r['mean_s'] * 1e3:8.3f} {r['allgathers']:6.1f} "
              f"{r['ops']['set']:4.1f} {r['ops']['get']:4.1f} {r['ops']['delete']:4.1f} {r['kv_s'] * 1e3:6.3f} "
              f"{r['beat_ops']:5.2f} {eng}  {r['provider'] or ''}")
    for k in ("bare allgather", "bare set+get"):
        print(f"{k:18} {report[k]['median_s'] * 1e3:9.3f}")
    for mode in (m for m in modes if "phases" in report[m]):
        print(f"  {mode} median call (us): " + ", ".join(f"{w} {us}" for w, us in report[mode]["phases"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--json", help="write the report here too")
    ap.add_argument("--gpu", action="store_true", help="one GPU per process, GPU arrays")
    o = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))  # tests/python
    import storecase
    build = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build")).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        costs = tmp / "costs"
        costs.mkdir()
        env = {"MUSTER_LIB_DIR": str(build / "lib"), "OPENBLAS_NUM_THREADS": "1",
               "MUSTER_JOB": os.environ.get("MUSTER_JOB", f"benchroute{os.getpid()}")}
        if o.gpu:  # the build's own providers (gpu-env.sh names one build's)
            env.update({"XLA_FLAGS": "", "MUSTER_PROVIDER_PATH": str(build / "lib" / "muster" / "providers")})
        else:
            storecase.one_node_tables(build, tmp, costs, o.procs, o.n)
            env.update({"XLA_FLAGS": "--xla_force_host_platform_device_count=1", "MUSTER_COST_PATH": str(costs),
                        "MUSTER_PROVIDER_PATH": f"{tmp}:{build / 'lib' / 'muster' / 'providers'}"})
        procs, outs = storecase.run_workers(pathlib.Path(__file__), o.procs,
                                            f"worker:{o.n}:{o.calls}:{o.warm}:{int(o.gpu)}",
                                            REPO / "adapters" / "jax", env, budget=540)
    line = next((l for l in outs[0].splitlines() if l.startswith("REPORT ")), None)
    if line is None or any(p.returncode for p in procs):
        for i, out in enumerate(outs):
            print(f"--- process {i} (exit {procs[i].returncode}):\n{out[-3000:]}")
        sys.exit(1)
    report = json.loads(line[len("REPORT "):])
    show(report, o.procs, o.n, o.gpu)
    if o.json:
        pathlib.Path(o.json).write_text(json.dumps(dict(procs=o.procs, n=o.n, gpu=o.gpu, report=report), indent=1))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[4].startswith("worker:"):
        _, n_, calls_, warm_, gpu_ = sys.argv[4].split(":")
        worker(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(n_), int(calls_), int(warm_), gpu_ == "1")
    else:
        main()
