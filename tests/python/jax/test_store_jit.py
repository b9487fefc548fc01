"""muster_jax.distributed.solve inside jax.jit (one FFI custom call,
adapters/jax/store_ffi.c; docs/multinode.md): 2, 3 and 4 processes of a
jax.distributed job on the CPU, potrs, getrs and syevd through a test
engine that solves with LAPACKE (no real collective engine runs on the
CPU's store path) in f64 and c128, on column blocks and on a mesh's blocks
(grid=; a 2 x 2 mesh on 4), residuals and jit against eager on fresh
random inputs, no retrace, a failing solve's message, a closed set; on 2
and 3 processes gels, geqrf, gesvd and polar jitted too (routinecase.py's
checks, against eager where the answer is unique) and refused inside jit.
store_jit_case.py has the checks; the GPU half (cusolvermp, residuals) is
test_store_distributed.py's GPU test."""
import os
import pathlib
import random
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/python
import storecase  # noqa: E402


@pytest.mark.parametrize("nproc", [2, 3, 4])
def test_jit_matches_eager(tmp_path, nproc):
    build = pathlib.Path(os.environ["MUSTER_BUILD"])
    for routine in ("potrs", "getrs", "syevd", "gels", "geqrf", "gesvd", "polar"):  # the LAPACKE test engine
        (tmp_path / routine).mkdir()
        (tmp_path / routine / "colllapack.so").symlink_to(build / "tests" / "providers" / "testprov_colllapack.so")
    seed = random.randrange(1 << 30)
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=1", "MUSTER_TEST_SEED": str(seed),
           "MUSTER_PROVIDER_PATH": f"{tmp_path}:{build / 'lib' / 'muster' / 'providers'}"}
    procs, outs = storecase.run_workers(HERE / "store_worker.py", nproc, "jit", HERE.parents[2] / "adapters" / "jax",
                                        env)
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"proc {i}: jit ok" in out, f"seed {seed}, proc {i}:\n{out[-4000:]}"
        assert f"proc {i}: failing solve: JaxRuntimeError" in out, out[-4000:]
        assert f"proc {i}: routines ok (26 run, 0 skipped)" in out and f"proc {i}: hostile routines ok" in out, \
            out[-4000:]
        assert f"proc {i}: routines ok (14 run, 0 skipped)" in out, out[-4000:]  # by the default choice
        # gels, geqrf, gesvd, polar inside jit too, against eager
        assert f"proc {i}: jitted: routines ok (26 run, 0 skipped)" in out, out[-4000:]
        assert f"proc {i}: jitted: hostile routines ok" in out, out[-4000:]
