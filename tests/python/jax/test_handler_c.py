"""The FFI handler driven by a fake XLA in C (tests/jax/handler_test.c, its harness handler_fake.c):
metadata, attribute decoding, collective solves from threads, an older XLA
api without RunId_Get/DeviceOrdinal_Get, return_status, concurrent launches,
a missing peer, the cuda path with a stand-in libcuda, and muster_jax.distributed's
store handler (store_handler_test.c).  The same binary is
built under san=address / san=thread:
set MUSTER_SAN_BUILDS to those build folders (':'-separated) to run them."""
import os
import subprocess

import pytest

BUILD = os.environ["MUSTER_BUILD"]


def builds():
    out = [BUILD]
    out += [b for b in os.environ.get("MUSTER_SAN_BUILDS", "").split(":") if b]
    return out


def lapack_only(build, tmp_path):
    """A provider folder with the lapack provider alone: no provider may load
    the real CUDA driver in this process, whose libcuda.so.1 would shadow the
    test's stand-in (and the test's solves are on the CPU anyway)."""
    src = os.path.join(build, "lib", "muster", "providers", "lapack.so")
    os.symlink(src, tmp_path / "lapack.so")
    for routine in ("potrs", "potri", "syevd", "getrs", "gels", "geqrf", "gesvd", "polar"):
        (tmp_path / routine).mkdir()
        os.symlink("../lapack.so", tmp_path / routine / "lapack.so")
    for routine in ("potrs", "syevd", "gesvd"):  # the store handler's engine (store_handler_test.c), forced there
        os.symlink(os.path.join(build, "tests", "providers", "testprov_colllapack.so"),
                   tmp_path / routine / "colllapack.so")
    return str(tmp_path)


@pytest.mark.parametrize("build", builds())
def test_handler_with_fake_xla(build, tmp_path):
    prog = os.path.join(build, "tests", "jax-handler-test")
    assert os.path.exists(prog), f"{prog} not built (scons builds it when jax is importable)"
    env = dict(os.environ)
    env.pop("MUSTER_TIMEOUT", None)
    env.pop("MUSTER_LIB_DIR", None)
    env["OPENBLAS_NUM_THREADS"] = "1"  # OpenBLAS's own threads are not TSan-instrumented
    env["MUSTER_PROVIDER_PATH"] = lapack_only(build, tmp_path)
    r = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert "all checks passed" in r.stdout
