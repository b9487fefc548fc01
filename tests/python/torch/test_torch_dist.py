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
