"""pytest setup for the muster_jax tests (CPU: 4 host devices, lapack).

MUSTER_BUILD: the build folder to test (default <repo>/build); its lib/
holds libmuster.so, libmuster_jax.so and the providers.  Every session gets
its own MUSTER_JOB, and after each test no segment of that job may be left
in /dev/shm.
"""
import os
import time
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
os.environ["MUSTER_BUILD"] = str(BUILD)
os.environ.setdefault("MUSTER_LIB_DIR", str(BUILD / "lib"))
os.environ.setdefault("MUSTER_TIMEOUT", "20")
os.environ.setdefault("MUSTER_JOB", "pyjax%d" % os.getpid())
if "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_force_host_platform_device_count=4").strip()
sys.path.insert(0, str(REPO / "adapters" / "jax"))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import muster_jax  # noqa: E402,F401
from muster_jax import _lib, _runtime  # noqa: E402


def job_segments():
    """Segments of this session's job, of any pid namespace, as the
    runtime's parser sees them (adapters/common/runtime.py job_segments)."""
    return _runtime.job_segments(_lib.runtime(), os.environ["MUSTER_JOB"])


@pytest.fixture(autouse=True)
def no_segment_left():
    yield
    # JAX dispatches asynchronously: a test may end while a solve whose
    # result it never read still runs (its group then exists for a moment).
    # A leak stays; a running call's segment goes within its solve's time.
    deadline = time.monotonic() + 5.0
    left = job_segments()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = job_segments()
    assert not left, "segments left in /dev/shm: %s" % left


@pytest.fixture
def rng(request):
    # fresh random inputs per run; the seed is printed on failure
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return np.random.default_rng(seed)


from jaxtest_util import ND  # noqa: E402


@pytest.fixture
def mesh4():
    return jax.make_mesh((ND,), ("x",), devices=jax.devices()[:ND])


@pytest.fixture
def cpu_mesh4():
    """4 host devices, for checks made in Python before anything runs."""
    cpus = jax.devices("cpu")
    if len(cpus) < 4:
        pytest.skip("needs 4 host devices (XLA_FLAGS)")
    return jax.make_mesh((4,), ("x",), devices=cpus[:4])
