"""muster_torch.distributed: ranks of a torch.distributed job (gloo on the
CPU, started here) meet over the job's store through the runtime's store
bootstrap (include/muster/store.h): allgather and barrier; the engine
choice for GPU tensors says cusolvermp cannot run here and why; a rank
SIGKILLed is named by the others within the timeout.  store_worker.py is
one rank; tests/python/storecase.py has the cases and checks."""
import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402


def test_store_sets_over_torch_distributed():
    """3 ranks: the basic case, then the last one SIGKILLed (one launch:
    each process costs seconds to start)."""
    procs, outs = storecase.run_workers(HERE / "store_worker.py", 3, "cases", HERE.parents[2] / "adapters" / "torch")
    storecase.check_basic(procs, outs, "rank")
    storecase.check_killed(procs, outs, "rank")


@pytest.mark.skipif(not os.environ.get("MUSTER_TEST_GPUS"), reason="GPU run only: MUSTER_TEST_GPUS=2 (or 4)")
def test_store_solves_on_gpus():
    """One rank per GPU (nccl), solves on CUDA tensors through the store
    bootstrap (cusolvermp), residuals checked in every rank."""
    procs, outs = storecase.run_workers(HERE / "store_worker.py", int(os.environ["MUSTER_TEST_GPUS"]), "gpu",
                                        HERE.parents[2] / "adapters" / "torch", budget=600)
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"rank {r}: solves ok" in out, out[-4000:]
