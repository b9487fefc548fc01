"""A process SIGKILLed or SIGSTOPped while every process is inside the
engine's collective_solve (docs/multinode.md "Faults"): both adapters'
store_worker.py run engine_fault_case, their tests check_engine_fault.

On the CPU the engine is the collective test provider told to block until
cancelled (TESTPROV_BLOCK=1), so the survivors are inside the engine for
sure when the signal lands; on GPUs it is cusolvermp inside cuSOLVERMp's
syevd (its NCCL calls), after a first solve made the communicator.  Either
way the survivors' watchdog must see the dead or stopped process, cancel
the engine (ncclCommAbort on GPUs) and raise an error naming it."""
import os
import pathlib
import re
import signal
import threading
import time

SIGNALS = {"kill": signal.SIGKILL, "stop": signal.SIGSTOP}


def engine_fault_case(md, me: int, nproc: int, say, put, sig: int, n: int, provider: str, timeout: float,
                      warm: bool, delay: float):
    """The last process sends itself `sig` `delay` s into a syevd of order n
    on `provider` (after a first one when `warm`); the others say "solve
    failed after T s: <error>".  Process 0 hosts the framework's store: it
    SIGKILLs a stopped process once it reported, waits for the others,
    then every survivor leaves without closing (the set is failed)."""
    import numpy as np
    s = md.store_set(timeout=timeout)
    pids = [int(p) for p in s.allgather(f"{os.getpid():>10}".encode())]
    k = -(-n // nproc)
    c0, c1 = k * me, min(n, k * me + k)
    rng = np.random.default_rng(5)  # the same symmetric A on every process
    a = rng.standard_normal((n, n))
    a_cols = put(np.ascontiguousarray(a[:, c0:c1] + a[c0:c1, :].T))
    if warm:  # the communicator and the engine's handles exist before the fault
        md.solve("syevd", a_cols, n=n, store=s, provider=provider)
        say("warm solve done")
    victim = nproc - 1
    if me == victim:
        threading.Timer(delay, os.kill, (os.getpid(), sig)).start()
    t0 = time.monotonic()
    try:
        md.solve("syevd", a_cols, n=n, store=s, provider=provider)
        say("solve passed?")
    except ValueError as e:
        say(f"solve failed after {time.monotonic() - t0:.2f} s: {e}")
    if me == 0:
        if sig == signal.SIGSTOP:
            os.kill(pids[victim], signal.SIGKILL)
        time.sleep(3)
    os._exit(0)


def check_engine_fault(procs, outs, who: str, sig: int, limit: float):
    """Every survivor of engine_fault_case named the last process as dead
    (SIGKILL) or stopped (SIGSTOP) within `limit` s and exited 0; the last
    one ended by SIGKILL (its own, or process 0's after the stop).
    Returns the survivors' times."""
    last = len(procs) - 1
    assert procs[last].returncode == -signal.SIGKILL, outs[last][-2000:]
    word = "died" if sig == signal.SIGKILL else "stopped"
    times = []
    for i in range(last):
        assert procs[i].returncode == 0, f"{who} {i}:\n{outs[i][-3000:]}"
        m = re.search(rf"{who} {i}: solve failed after ([0-9.]+) s: (.*)", outs[i])
        assert m, outs[i][-3000:]
        assert f"rank {last} (pid" in m.group(2) and word in m.group(2), outs[i][-3000:]
        # named with the call it was in (2 s of silence is beats enough to
        # have read it; a kill may land before this survivor's next read)
        if sig == signal.SIGSTOP:
            assert "when last heard it was inside provider" in m.group(2), outs[i][-3000:]
        assert "(provider: cancelled" not in m.group(2), outs[i][-3000:]  # no echo of the same reason
        times.append(float(m.group(1)))
        assert times[-1] < limit, outs[i][-3000:]
    return times


def run_cpu(worker, adapter: str, who: str, sig: str, tmp_path, env=None):
    """An adapter's test_engine_faults: 3 processes of `worker` inside the
    collective test engine (colltwo, TESTPROV_BLOCK=1: it blocks until
    cancelled), the last one SIGKILLed or SIGSTOPped there (sig "kill" or
    "stop"); the set's timeout is 2 s."""
    import storecase
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    (tmp_path / "syevd").mkdir()
    (tmp_path / "syevd" / "colltwo.so").symlink_to(build / "tests" / "providers" / "testprov_coll2.so")
    env = dict(env or {}, MUSTER_PROVIDER_PATH=f"{tmp_path}:{build / 'lib' / 'muster' / 'providers'}",
               TESTPROV_BLOCK="1")
    procs, outs = storecase.run_workers(worker, 3, "fault_" + sig, pathlib.Path(worker).parents[3] / "adapters" / adapter,
                                        env)
    times = check_engine_fault(procs, outs, who, SIGNALS[sig], 6.0 if sig == "kill" else 8.0)
    print(sig, "survivors' times:", times)


def run_gpu(worker, adapter: str, who: str, sig: str, env=None):
    """An adapter's test_engine_faults_on_gpus: one process per GPU
    (MUSTER_TEST_GPUS) inside cusolvermp's syevd (n = 8192, after a first
    one made the NCCL communicator), the last one signalled 0.8 s in; the
    survivors within 15 s (dead) or the set's 5 s timeout + 15 s (stopped)."""
    import storecase
    procs, outs = storecase.run_workers(worker, int(os.environ["MUSTER_TEST_GPUS"]), "gpu_" + sig,
                                        pathlib.Path(worker).parents[3] / "adapters" / adapter, env, budget=300)
    times = check_engine_fault(procs, outs, who, SIGNALS[sig], 15.0 if sig == "kill" else 20.0)
    print(sig, "survivors' times:", times)
