"""What the JAX and PyTorch store-bootstrap tests share
(tests/python/{jax,torch}/test_store_distributed.py and their
store_worker.py): starting the workers of one job, and the cases each
worker runs on its StoreSet (muster_jax/muster_torch.distributed)."""
import faulthandler
import json
import os
import signal
import socket
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_say(who: str, me: int):
    """For a worker of run_workers, first thing: every thread's Python
    stack printed on SIGUSR1 (run_workers' signal before it kills a late
    job: where each process waited), and its say(): "WHO ME: ..." lines
    ending with " [S s]", the seconds since this call (slow or hung: the
    log tells).  Checks match these lines by what they start with."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    t0 = time.monotonic()

    def say(*what):
        print(f"{who} {me}:", *what, f"[{time.monotonic() - t0:.1f} s]", flush=True)
    return say


def stacks(procs, wait: float = 3.0):
    """Every live process's Python stacks into its output (SIGUSR1: the
    worker's faulthandler; a worker without one ends by it), then `wait`
    s for them to arrive."""
    for q in procs:
        if q.poll() is None:
            try:
                q.send_signal(signal.SIGUSR1)
            except OSError:
                pass
    time.sleep(wait)


def run_workers(worker, nproc: int, case: str, adapter_dir, env_extra=None, budget: float = 120):
    """Start `worker` PROC NPROC PORT CASE for every process; (procs, outputs).
    Each process writes to a file of its own (unbuffered), so that a job
    still running after `budget` seconds is killed with what it printed
    kept: each live process is first sent SIGUSR1 (worker_say's handler
    prints its Python stacks), 3 s later killed; its output then ends
    with a line saying so, and its returncode is the kill's (SIGUSR1's
    for a worker without that handler).  MUSTER_TEST_BUDGET (seconds), when set, lowers the budget: a GPU
    script sets it under its own outer timeout."""
    import tempfile
    budget = min(budget, float(os.environ.get("MUSTER_TEST_BUDGET", budget)))
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(adapter_dir), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="muster-workers-") as logs:
        files = [open(os.path.join(logs, f"{i}.log"), "w+") for i in range(nproc)]
        procs = [subprocess.Popen([sys.executable, str(worker), str(i), str(nproc), str(port), case], env=env,
                                  stdout=f, stderr=subprocess.STDOUT, text=True) for i, f in enumerate(files)]
        t0, late = time.monotonic(), []
        try:
            for p in procs:
                try:
                    p.wait(timeout=max(1, budget - (time.monotonic() - t0)))
                except subprocess.TimeoutExpired:
                    late = [q.poll() is None for q in procs]
                    stacks(procs)
                    break
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        outs = []
        for i, (p, f) in enumerate(zip(procs, files)):
            f.seek(0)
            out = f.read()
            f.close()
            if late and late[i]:
                out += (f"\n[run_workers: still running after the {budget:.0f} s budget: its Python stacks above "
                        "(SIGUSR1), then killed]\n")
            outs.append(out)
    return procs, outs


def worker_results(procs, outs) -> list:
    """Each worker's last "result " + JSON line, parsed, in rank order;
    every worker must have exited 0 and printed one (else an assertion
    with the end of its output)."""
    res = []
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {r} (exit {p.returncode}):\n{out[-3000:]}"
        lines = [ln for ln in out.splitlines() if ln.startswith("result ")]
        assert lines, f"rank {r}: no result line:\n{out[-3000:]}"
        res.append(json.loads(lines[-1][len("result "):]))
    return res


def kill_case(s, me: int, nproc: int, say):
    """The last process SIGKILLs itself after a barrier; the others' next
    barrier must fail naming it, its code's name first (say() prints the
    outcome).  Process 0 hosts
    the framework's store: it waits for the others to report, then every
    survivor leaves without closing (the set is failed)."""
    s.barrier()
    if me == nproc - 1:
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.monotonic()
    try:
        s.barrier()
        say("barrier passed?")
    except ValueError as e:  # the adapter's CallError
        say(f"barrier failed after {time.monotonic() - t0:.2f} s: {e.name}: {e}")
    time.sleep(3 if me == 0 else 0)
    os._exit(0)


def check_killed(procs, outs, who: str):
    """Every survivor of kill_case named the dead one within 2 s (an error
    carrying MUSTER_EPEERDEAD) and exited 0."""
    import re
    last = len(procs) - 1
    assert procs[last].returncode == -9, outs[last][-2000:]
    for i in range(last):
        assert procs[i].returncode == 0, f"{who} {i}:\n{outs[i][-3000:]}"
        m = re.search(rf"{who} {i}: barrier failed after ([0-9.]+) s: (.*)", outs[i])
        assert m, outs[i][-3000:]
        assert f"rank {last} (pid" in m.group(2) and "died" in m.group(2), outs[i]
        assert m.group(2).startswith("MUSTER_EPEERDEAD: "), outs[i]
        assert float(m.group(1)) < 2.0, outs[i]  # same node: /proc tells at once (timeout 2 s)


def check_basic(procs, outs, who: str):
    """Every process of the basic case: its end reached; the engine forced
    to cusolvermp chose it or (no GPU here) said why; host pieces forced to
    it refused; its rank in a 1-D grid is its own."""
    import re
    for i, out in enumerate(outs):
        assert f"{who} {i}: basic done" in out, out[-3000:]
        forced = re.search(rf"{who} {i}: engine cusolvermp (chose|refused:)(.*)", out)
        assert forced, out
        if forced.group(1) == "refused:":
            assert "cusolvermp (" in forced.group(2) and "probe:" in forced.group(2), out
        host = re.search(rf"{who} {i}: host solve refused: (.*)", out)
        assert host and "cusolvermp (" in host.group(1), out
        assert f"{who} {i}: grid 1 {len(procs)} block rank {i}" in out, out


def basic_case(md, s, me: int, nproc: int, say, a_cols, b, n: int):
    """allgather, the engine choice for GPU arrays, a host solve forced to
    cusolvermp, the grid of a 1-D mesh; then close."""
    assert s.allgather(bytes([me]) * 5) == [bytes([r]) * 5 for r in range(nproc)]
    s.barrier()
    for want in (None, "cusolvermp"):
        try:
            say("engine", want, "chose", s.engine("potrs", 4096, provider=want))
        except ValueError as e:
            say("engine", want, "refused:", e)
    try:
        md.solve("potrs", a_cols, b, n=n, store=s, provider="cusolvermp")
        say("host solve ran?")
    except ValueError as e:
        say("host solve refused:", e)
    g = md.mesh_grid(("x",), (nproc,), list(range(nproc)), (None, "x"), n)
    say("grid", g["nprow"], g["npcol"], g["layout"], "rank", g["procs"][me]["rank"])
    s.close()
    say("basic done")


def grid_case(md, me: int, nproc: int, say, n: int = 11):
    """A mesh's block as a 2-D piece (muster_solve_comm_dist) on host
    arrays, rows over the processes (P("x", None): an nproc x 1 grid),
    forced to the collective test provider colltwo (MUSTER_PROVIDER_PATH),
    which checks the dist against its rank and writes 4 into B (potrs) and
    W (syevd).  Then processes in reverse mesh order: the set's rank is not
    the grid's (refused, naming the rank to take), and a set opened with
    the grid's rank runs.  say()s "grid ok"."""
    import numpy as np
    g = md.mesh_grid(("x",), (nproc,), list(range(nproc)), ("x", None), n)
    rows = g["procs"][me]["rows"][1]
    piece, b = np.zeros((rows, n)), np.zeros((n, 2))
    with md.store_set(timeout=20) as s:
        x = md.solve("potrs", piece, b, n=n, store=s, provider="colltwo", grid=g)
        w, v = md.solve("syevd", piece, n=n, store=s, provider="colltwo", grid=g)
        assert np.all(np.asarray(x) == 4.0) and np.all(np.asarray(w) == 4.0), (x, w)
        assert np.shape(v) == (rows, n)
        rev = md.mesh_grid(("x",), (nproc,), list(reversed(range(nproc))), ("x", None), n)
        mine = rev["procs"][me]["rank"]
        try:
            md.solve("potrs", np.zeros((rev["procs"][me]["rows"][1], n)), b, n=n, store=s, grid=rev)
            say("reversed grid ran?")
        except ValueError as e:
            assert mine == me or f"store_set(rank={mine})" in str(e), str(e)
    with md.store_set(timeout=20, rank=mine) as s:
        x = md.solve("potrs", np.zeros((rev["procs"][me]["rows"][1], n)), b, n=n, store=s, provider="colltwo",
                     grid=rev)
        assert np.all(np.asarray(x) == 4.0), x
    say("grid ok")


ONE_NODE_N = 13  # one_node_case's n: divided evenly by no process count


def _column_problem(seed: int, n: int, nrhs: int, me: int, nproc: int):
    """(spd, gen, b, c0, c1, tol): an SPD and a general n x n A and an
    n x nrhs B, the same on every process (seed), process me's columns
    c0:c1 of the block layout, and the residual tolerance 20 n eps."""
    import numpy as np
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    spd, gen, b = m @ m.T + n * np.eye(n), m + n * np.eye(n), rng.standard_normal((n, nrhs))
    k = -(-n // nproc)
    return spd, gen, b, k * me, min(n, k * me + k), 20 * n * np.finfo(np.float64).eps


def one_node_tables(build, provider_dir, cost_dir, nproc: int, n: int = ONE_NODE_N):
    """For one_node_case: the collective test provider colllapack beside
    the build's providers (provider_dir/<routine>/colllapack.so) and, in
    cost_dir (MUSTER_COST_PATH), cost tables that make lapack (a one-node
    engine) faster than colllapack for potrs, getrs and syevd in f64 on
    nproc processes at n."""
    for routine in ("potrs", "getrs", "syevd"):
        (provider_dir / routine).mkdir(exist_ok=True)
        (provider_dir / routine / "colllapack.so").symlink_to(build / "tests" / "providers" / "testprov_colllapack.so")
    for name, seconds in (("lapack", 0.001), ("colllapack", 0.002)):
        rows = [f"{r} f64 {nproc} {n} {0 if r == 'syevd' else 2} {seconds}" for r in ("potrs", "getrs", "syevd")]
        (cost_dir / f"{name}.cost").write_text("# routine dtype ndevices n nrhs seconds\n" + "\n".join(rows) + "\n")


def one_node_case(md, me: int, nproc: int, say, put, host, n: int = ONE_NODE_N):
    """Host arrays, no provider=: on one node rank 0 weighs the one-node
    engines too (runtime/solve/comm_local.c), and the tables of
    one_node_tables make lapack faster than the collective colllapack, so
    lapack runs through the set's one-node group: StoreSet.last names it,
    and engine() (host memory) names the same; residuals as solve_case's.
    Then colllapack forced runs as the collective engine.  Last a potrs of
    -I fails on every process with the adapter's CallError carrying the
    engine's code and info.  Every process checks its own results; say()s
    "one-node ok"."""
    import numpy as np
    spd, gen, b, c0, c1, tol = _column_problem(13, n, 2, me, nproc)
    with md.store_set(timeout=20) as s:
        for routine, a, want in (("potrs", spd, None), ("getrs", gen, None), ("potrs", spd, "colllapack")):
            x = host(md.solve(routine, put(a[:, c0:c1]), put(b), n=n, store=s, provider=want))
            r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
            assert r < tol, (routine, r, tol)
            assert s.last["provider"] == (want or "lapack"), (routine, want, s.last)
            if want is None:
                assert s.engine(routine, n, nrhs=2, mem=md._runtime.MEM_HOST)[0] == "lapack", s.last
        w, v = md.solve("syevd", put(spd[:, c0:c1]), n=n, store=s)
        w, v = host(w), host(v)
        assert s.last["provider"] == "lapack", s.last
        assert np.abs(w - np.linalg.eigvalsh(spd)).max() < tol * np.abs(w).max(), "eigenvalues"
        r = np.linalg.norm(spd @ v - v * w[c0:c1]) / np.linalg.norm(spd)
        assert r < tol, ("syevd vectors", r, tol)
        kept_choice_case(md, s, me, nproc, put, host)
        engine_query_case(md, s, me, nproc)
        try:
            md.solve("potrs", put(-np.eye(n)[:, c0:c1]), put(b), n=n, store=s)
            raise AssertionError("potrs of -I solved")
        except md.CallError as e:  # a ValueError; muster_torch's is a LinAlgError too
            assert (e.code, e.name, e.kind, e.info) == (-21, "MUSTER_ENOTPD", "numerical", 1), (e.name, e.info, e)
    say("one-node ok")


class _CountingKV:
    """A store set's KeyValue, counting the writes of allgather keys
    (muster/<set>/ag/<k>/<rank>: one per store round and rank)."""

    def __init__(self, kv):
        self.kv, self.rounds = kv, 0

    def set(self, key, value):
        self.rounds += "/ag/" in key
        self.kv.set(key, value)

    def __getattr__(self, name):
        return getattr(self.kv, name)


def kept_choice_case(md, s, me: int, nproc: int, put, host, n: int = ONE_NODE_N):
    """potrs three times on fresh inputs after a syevd: the first chooses
    again (3 store rounds: descriptors, rank 0's choice, meeting in the
    group), each repeat reuses the kept choice in 1 (runtime/solve/
    comm_plan.h); residuals as one_node_case's."""
    import numpy as np
    real, s._cb.kv = s._cb.kv, _CountingKV(s._cb.kv)
    try:
        rounds = []
        for k in range(3):
            spd, _, b, c0, c1, tol = _column_problem(20 + k, n, 2, me, nproc)
            before = s._cb.kv.rounds
            x = host(md.solve("potrs", put(spd[:, c0:c1]), put(b), n=n, store=s))
            rounds.append(s._cb.kv.rounds - before)
            r = np.linalg.norm(spd @ x - b) / (np.linalg.norm(spd) * np.linalg.norm(x))
            assert r < tol and s.last["provider"] == "lapack", (k, r, tol, s.last)
        assert rounds == [3, 1, 1], rounds
    finally:
        s._cb.kv = real


def engine_query_case(md, s, me: int, nproc: int):
    """StoreSet.engine() on GPU memory hands muster_provider_choose every
    rank's CUDA ordinal, in rank order, as a call's query does (the one-GPU
    engine refuses a query without them: a GPU run predicted cusolvermg
    where the call ran cusolverdn); host memory: -1 for every rank."""
    import ctypes

    class Recorder:  # the runtime library, remembering the query
        def __init__(self, lib):
            self.lib, self.q = lib, None

        def __getattr__(self, name):
            return getattr(self.lib, name)

        def muster_provider_choose(self, q, *rest):
            self.q = q._obj
            return self.lib.muster_provider_choose(q, *rest)

    real, s.lib = s.lib, Recorder(s.lib)
    try:
        for mem, device, want in ((md._runtime.MEM_CUDA, 7 + me, [7 + r for r in range(nproc)]),
                                  (md._runtime.MEM_HOST, None, [-1] * nproc)):
            try:
                s.engine("potrs", 64, nrhs=2, mem=mem, device=device)
            except ValueError:
                pass  # no GPU here: no engine for CUDA memory; the query was made all the same
            assert s.lib.q.devices, (mem, "the query names no devices")
            got = ctypes.cast(s.lib.q.devices, ctypes.POINTER(ctypes.c_int))[:nproc]
            assert got == want, (mem, got, want)
            assert (s.lib.q.nranks, s.lib.q.nnodes) == (nproc, 1), (s.lib.q.nranks, s.lib.q.nnodes)
    finally:
        s.lib = real


def solve_case(md, s, me: int, nproc: int, say, put, host, n: int = 1003, provider=None):
    """On GPUs (the device run; docs/multinode.md): potrs, getrs and syevd
    in f64 on this process's column block, arrays made by put(numpy array)
    and read back by host(array); n divisible by no process count.  Checks
    residuals scaled by n * eps * norms.  provider=None: the default
    choice, which on one node weighs the one-node engines too (cusolvermg,
    cusolverdn, tiled through the set's group, runtime/solve/comm_local.c:
    jax's device buffers staged into memory CUDA IPC opens); called eagerly
    (md the module), StoreSet.last must name the engine engine() predicts
    for the call.  provider="cusolvermp": the collective engine on column
    blocks.  say()s "solves ok" and the engines that ran."""
    import types
    import numpy as np
    spd, gen, b, c0, c1, tol = _column_problem(11, n, 3, me, nproc)
    eager, ran = isinstance(md, types.ModuleType), []

    def engine_ran(routine, nrhs):
        if not eager:  # a jitted solve leaves StoreSet.last as it was
            return
        ran.append(f"{routine} {s.last['provider']}")
        want = provider or s.engine(routine, n, nrhs=nrhs)[0]  # collective: every process asks
        assert s.last["provider"] == want, (routine, s.last, want)

    for routine, a in (("potrs", spd), ("getrs", gen)):
        x = host(md.solve(routine, put(a[:, c0:c1]), put(b), n=n, store=s, provider=provider))
        r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
        assert r < tol, (routine, provider, r, tol)
        engine_ran(routine, 3)
    w, v = md.solve("syevd", put(spd[:, c0:c1]), n=n, store=s, provider=provider)
    w, v = host(w), host(v)
    assert np.abs(w - np.linalg.eigvalsh(spd)).max() < tol * np.abs(w).max(), ("eigenvalues", provider)
    # this process's columns of V are eigenvectors of the eigenvalues with the same indices
    r = np.linalg.norm(spd @ v - v * w[c0:c1]) / np.linalg.norm(spd)
    assert r < tol, ("syevd vectors", provider, r, tol)
    engine_ran("syevd", 0)
    say(f"solves ok ({provider or 'default choice'}{'' if eager else ', jitted'}): ran {', '.join(ran) or 'unreported (jitted)'}; "
        f"engine {s.engine('potrs', n)}")


def solve_grid_case(md, s, me: int, nproc: int, say, put, host, n: int = 1003):
    """On GPUs: the blocks of a 2-D mesh (P("pr", "pc"): 2 x 2 on 4
    processes, else nproc x 1) passed as they are (solve(grid=...), no
    gather): potrs and getrs residuals as solve_case's, syevd's eigenvalues
    and this process's block of V against numpy's (each column's sign from
    the block itself); n divisible by no grid side.  say()s "grid solves ok"."""
    import numpy as np
    pr, pc = (2, 2) if nproc == 4 else (nproc, 1)
    g = md.mesh_grid(("pr", "pc"), (pr, pc), list(range(nproc)), ("pr", "pc"), n)
    (r0, nr), (c0, nc) = g["procs"][me]["rows"], g["procs"][me]["cols"]
    rng = np.random.default_rng(12)  # the same matrices on every process
    m = rng.standard_normal((n, n))
    spd, gen, b = m @ m.T + n * np.eye(n), m + n * np.eye(n), rng.standard_normal((n, 3))
    tol = 20 * n * np.finfo(np.float64).eps
    for routine, a in (("potrs", spd), ("getrs", gen)):
        x = host(md.solve(routine, put(a[r0:r0 + nr, c0:c0 + nc]), put(b), n=n, store=s, grid=g))
        r = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x))
        assert r < tol, (routine, r, tol)
    w, v = md.solve("syevd", put(spd[r0:r0 + nr, c0:c0 + nc]), n=n, store=s, grid=g)
    w, v = host(w), host(v)
    w_ref, v_ref = np.linalg.eigh(spd)
    assert np.abs(w - w_ref).max() < tol * np.abs(w).max(), "eigenvalues"
    ref = v_ref[r0:r0 + nr, c0:c0 + nc]
    sign = np.sign(np.sum(v * ref, axis=0))
    assert np.abs(v - ref * sign).max() < 1e-8, ("syevd vector block", np.abs(v - ref * sign).max())
    say(f"grid solves ok ({pr} x {pc} mesh)")

