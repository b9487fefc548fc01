"""muster_jax.distributed: processes of a jax.distributed job (CPU, launched
here) meet over jax's key-value store through the runtime's store
bootstrap (include/muster/store.h): allgather and barrier; the engine choice
for GPU arrays says cusolvermp cannot run here and why; a process SIGKILLed
is named by the others within the timeout.  store_worker.py is one
process; tests/python/storecase.py has the cases and checks."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402

ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=1"}


def test_store_set_over_jax_distributed():
    procs, outs = storecase.run_workers(HERE / "store_worker.py", 2, "basic", HERE.parents[2] / "adapters" / "jax",
                                        ENV)
    storecase.check_basic(procs, outs, "proc")


def test_store_set_names_a_killed_process():
    procs, outs = storecase.run_workers(HERE / "store_worker.py", 3, "kill", HERE.parents[2] / "adapters" / "jax",
                                        ENV)
    storecase.check_killed(procs, outs, "proc")
