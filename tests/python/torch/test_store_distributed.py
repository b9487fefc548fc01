"""muster_torch.distributed: ranks of a torch.distributed job (gloo on the
CPU, started here) meet over the job's store through the runtime's store
bootstrap (include/muster/store.h): allgather and barrier; the engine
choice for GPU tensors says cusolvermp cannot run here and why; each rank's
own piece of a 1-D or 2-D grid reaches a collective engine where its dist
says (solve(grid=)); a rank SIGKILLed is named by the others within the
timeout.  store_worker.py is
one rank; tests/python/storecase.py has the cases and checks."""
import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402
import storefault  # noqa: E402


def test_store_sets_over_torch_distributed(tmp_path):
    """4 ranks: the basic case; the one-node case (no provider=, host
    tensors: lapack, faster by its cost table than the collective
    colllapack, runs through the set's one-node group, StoreSet.last
    names it); each rank's own piece through grid= (grids
    4 x 1, 1 x 4, 2 x 2, and 2 x 1, 1 x 2 on two sets of 2 ranks at once,
    a DeviceMesh's DTensor; f64, c128, f32, c64; potrs, getrs, syevd)
    into the collective test provider, whose answer is a weighted sum of
    the whole A (TESTPROV_SUM, gridcase.py); the hostile cases; gels,
    geqrf, gesvd, polar with residuals on 3 ranks and on pairs, on the
    LAPACKE test engine (routinecase.py), and their hostile cases; then the
    last rank SIGKILLed (one launch: each process costs seconds to start)."""
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    for routine in ("potrs", "getrs", "syevd"):  # colltwo beside the build's providers
        (tmp_path / routine).mkdir()
        (tmp_path / routine / "colltwo.so").symlink_to(build / "tests" / "providers" / "testprov_coll2.so")
    for routine in ("gels", "geqrf", "gesvd", "polar"):  # and the LAPACKE test engine (routinecase.py)
        (tmp_path / routine).mkdir()
        (tmp_path / routine / "colllapack.so").symlink_to(build / "tests" / "providers" / "testprov_colllapack.so")
    costs = tmp_path / "costs"
    costs.mkdir()
    storecase.one_node_tables(build, tmp_path, costs, 4)
    env = {"MUSTER_PROVIDER_PATH": f"{tmp_path}:{build / 'lib' / 'muster' / 'providers'}", "TESTPROV_SUM": "1",
           "MUSTER_COST_PATH": str(costs)}
    procs, outs = storecase.run_workers(HERE / "store_worker.py", 4, "cases", HERE.parents[2] / "adapters" / "torch",
                                        env)
    storecase.check_basic(procs, outs, "rank")
    for r, out in enumerate(outs[:-1]):
        for what in ("one-node ok", "sums ok columns", "sums ok 1 x 4", "sums ok 4 x 1", "sums ok 2 x 2", "sums ok 1 x 2",
                     "sums ok 2 x 1", "device mesh ok", "hostile ok"):
            assert f"rank {r}: {what}" in out, (what, out[-3000:])
    for r, out in enumerate(outs):  # gels, geqrf, gesvd, polar: on 3 ranks (not rank 3) and on pairs
        assert out.count(f"rank {r}: routines ok (26 run, 0 skipped)") == (2 if r < 3 else 1), out[-3000:]
        assert f"rank {r}: hostile routines ok" in out, out[-3000:]
    storecase.check_killed(procs, outs, "rank")


@pytest.mark.skipif(not os.environ.get("MUSTER_TEST_GPUS"), reason="GPU run only: MUSTER_TEST_GPUS=2 (or 4)")
def test_store_solves_on_gpus():
    """One rank per GPU (nccl), solves on CUDA tensors through the store
    bootstrap, residuals checked in every rank: column blocks (the default
    choice, which on one node may be a one-node engine through the set's
    group, StoreSet.last naming what engine() predicts; then cusolvermp
    forced), then each rank's block of a 2 x 2 grid (4 GPUs; else GPUs x 1)
    and of a 1 x GPUs one, f64 and c128 (cusolvermp: gridcase.gpu_grid_case)."""
    procs, outs = storecase.run_workers(HERE / "store_worker.py", int(os.environ["MUSTER_TEST_GPUS"]), "gpu",
                                        HERE.parents[2] / "adapters" / "torch", budget=600)
    for r, (p, out) in enumerate(zip(procs, outs)):  # every rank's end, shown when the test fails
        print(f"--- rank {r} (returncode {p.returncode}):\n{out[-1500:]}")
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out[-4000:]
        for what in ("default choice)", "cusolvermp)"):
            assert f"rank {r}: solves ok ({what}" in out, (what, out[-4000:])
        assert out.count(f"rank {r}: grid solves ok") == 2, out[-4000:]
        assert f"rank {r}: routines ok" in out, out[-4000:]  # gels, geqrf, gesvd, polar (routinecase.py)
        print("\n".join(l for l in out.splitlines() if "routines ok" in l or ": skipped " in l))  # run-store-gpu.sh shows it



@pytest.mark.parametrize("sig", ["kill", "stop"])
def test_engine_faults(tmp_path, sig):
    """3 processes inside the collective test engine; the last one SIGKILLed
    or SIGSTOPped there: every survivor raises an error naming it (dead, or
    stopped) within seconds (storefault.run_cpu)."""
    storefault.run_cpu(HERE / "store_worker.py", "torch", "rank", sig, tmp_path)


@pytest.mark.skipif(not os.environ.get("MUSTER_TEST_GPUS"), reason="GPU run only: MUSTER_TEST_GPUS=2 (or 4)")
@pytest.mark.parametrize("sig", ["kill", "stop"])
def test_engine_faults_on_gpus(sig):
    """One process per GPU inside cusolvermp's syevd; the last one SIGKILLed
    or SIGSTOPped there: every survivor's watchdog aborts NCCL and raises an
    error naming it (storefault.run_gpu)."""
    storefault.run_gpu(HERE / "store_worker.py", "torch", "rank", sig)
