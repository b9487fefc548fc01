"""One rank per process: 2 and 4 processes of a gloo process group
(torch.multiprocessing, forkserver), each passing its own column block.
Every op x dtype (getrs, gels and potrs's log det included), DTensor,
the derivatives over the group, two process
groups at once, and torch.func.vmap over the group, all checked inside the workers (torch_worker.py, scenario "solves")."""
import json
import os
import pathlib
import time

import pytest
import torch.multiprocessing as mp

import torch_util as tu
import torch_worker

HERE = pathlib.Path(__file__).resolve().parent
_ctx = None


def context():
    """A forkserver that has imported torch once: workers start in
    milliseconds instead of importing torch again (seconds each)."""
    global _ctx
    if _ctx is None:
        _ctx = mp.get_context("forkserver")
        _ctx.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo", "muster_torch",
                                     "torch_util", "torch_worker"])
    return _ctx


def start(nranks, tmp, scenario, env=None, seed=0):
    ctx = context()
    procs = [ctx.Process(target=torch_worker.main,
                         args=(r, nranks, str(tmp), scenario, seed, dict(env or {})))
             for r in range(nranks)]
    for p in procs:
        p.start()
    return procs


def kill_all(procs):
    """SIGKILL and reap the workers still running (a failed test leaves none)."""
    for p in procs:
        if p.is_alive():
            p.kill()
        p.join()


def results(procs, tmp, timeout=240):
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            kill_all(procs)
            raise AssertionError(f"worker {p.pid} still running after {timeout} s")
    out = {}
    for r in range(len(procs)):
        f = pathlib.Path(tmp, f"result.{r}.json")
        out[r] = json.loads(f.read_text()) if f.exists() else None
    return out


@pytest.fixture(scope="module", params=(2, 4), ids=lambda r: f"{r}procs")
def solved(request, tmp_path_factory):
    nranks = request.param
    tmp = tmp_path_factory.mktemp(f"solves{nranks}")
    seed = int.from_bytes(os.urandom(4), "little")
    res = results(start(nranks, tmp, "solves", seed=seed), tmp)
    return nranks, seed, res


CASES = [f"{op}.{str(d)[6:]}" for d in tu.DTYPES
         for op in ("potrs", "potri", "syevd", "logdet", "getrs", "gels")]


@pytest.mark.parametrize("case", CASES + ["dtensor", "grad", "two_groups", "vmap"])
def test_processes(solved, case):
    assert_case(*solved, case)


def assert_case(nranks, seed, res, case):
    """Every worker set up and passed `case` (the workers' results: results())."""
    for r in range(nranks):
        assert res[r] is not None, f"rank {r} wrote no result"
        assert "setup" not in res[r], res[r]["setup"]
    # every rank's failure: the first rank's is often only "rank k died"
    bad = [f"rank {r} of {nranks}:\n{res[r][case]}" for r in range(nranks) if res[r][case] != "ok"]
    assert not bad, f"seed {seed}, " + "\n".join(bad)


_FREED = """
import gc, sys, weakref
import torch, torch.distributed as dist
import muster_torch as mt
dist.init_process_group("gloo", init_method="file://" + sys.argv[1] + "/store", rank=0, world_size=1)
pg = dist.group.WORLD
x = mt.potrs(2 * torch.eye(3, dtype=torch.float64), torch.ones(3, 1, dtype=torch.float64), group=pg)
assert torch.allclose(x, torch.full((3, 1), 0.5, dtype=torch.float64)), x
alive = weakref.ref(pg)
del pg
dist.destroy_process_group()
gc.collect()
print("alive" if alive() is not None else "freed")
"""


def test_process_group_freed_at_destroy(tmp_path):
    """muster_torch keeps no process group alive past destroy_process_group:
    a group it held until the interpreter tore its module down ended the
    process with std::terminate from gloo's threads ("terminate called
    without an active exception", 3 runs in 70 of the docs' torchrun
    example under load, 2026-11-27)."""
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _FREED, str(tmp_path)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["freed"], out.stdout + out.stderr[-2000:]
