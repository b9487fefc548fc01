"""muster_jax.distributed.solve inside jax.jit (the host form, an ordered
io_callback of the eager solve; docs/multinode.md): 2 and 3 processes of a
jax.distributed job on the CPU, every routine the CPU's store path offers
(potrs, syevd through the collective test provider) in f64 and c128, on
column blocks and on a mesh's blocks (grid=), jit against eager on fresh
random inputs, no retrace, a failing solve's message, a closed set; GPU
backends refused inside jit.  store_jit_case.py has the checks."""
import os
import pathlib
import random
import sys

import jax
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402

import muster_jax.distributed as md  # noqa: E402


@pytest.mark.parametrize("nproc", [2, 3])
def test_jit_matches_eager(tmp_path, nproc):
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    for routine in ("potrs", "syevd"):  # colltwo beside the build's providers
        (tmp_path / routine).mkdir()
        (tmp_path / routine / "colltwo.so").symlink_to(build / "tests" / "providers" / "testprov_coll2.so")
    seed = random.randrange(1 << 30)
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=1", "MUSTER_TEST_SEED": str(seed),
           "MUSTER_PROVIDER_PATH": f"{tmp_path}:{build / 'lib' / 'muster' / 'providers'}"}
    procs, outs = storecase.run_workers(HERE / "store_worker.py", nproc, "jit", HERE.parents[2] / "adapters" / "jax",
                                        env)
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"proc {i}: jit ok" in out, f"seed {seed}, proc {i}:\n{out[-4000:]}"
        assert f"proc {i}: failing solve: JaxRuntimeError" in out, out[-4000:]


def test_gpu_backend_refused_inside_jit(monkeypatch):
    """Inside jit on a GPU backend: a ValueError naming the eager form, at trace time."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    with pytest.raises(ValueError, match="inside jax.jit runs on host .CPU. arrays only.*eager form"):
        jax.jit(lambda a, b: md.solve("potrs", a, b, n=4, store=None))(np.eye(4), np.ones((4, 1)))
