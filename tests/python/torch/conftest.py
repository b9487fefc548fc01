"""pytest setup for the PyTorch adapter (muster_torch), on the CPU.

MUSTER_BUILD: the build folder to test (default <repo>/build); muster_torch
loads <build>/lib/libmuster.so and its providers.  Every session gets its
own MUSTER_JOB, and after each test no segment of that job may be left in
/dev/shm.  Threads are pinned to 1 (torch, OpenBLAS): the tests run several
ranks at once on a 2-core machine.
"""
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
os.environ["MUSTER_BUILD"] = str(BUILD)
os.environ.setdefault("MUSTER_LIB_DIR", str(BUILD / "lib"))
os.environ.setdefault("MUSTER_TIMEOUT", "20")
os.environ.setdefault("MUSTER_JOB", "pytorch%d" % os.getpid())
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(REPO / "adapters" / "torch"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import pytest  # noqa: E402
import torch  # noqa: E402

import muster_torch  # noqa: E402,F401
from muster_torch import _lib, _runtime  # noqa: E402

torch.set_num_threads(1)


def job_segments():
    """Segments of this session's job, of any pid namespace, as the
    runtime's parser sees them (adapters/common/runtime.py job_segments;
    a glob without the <pidns> part matched no real name)."""
    return _runtime.job_segments(_lib.runtime(), os.environ["MUSTER_JOB"])


@pytest.fixture(autouse=True)
def no_segment_left():
    yield
    left = job_segments()
    assert not left, "segments left in /dev/shm: %s" % left


@pytest.fixture
def gen():
    """A torch generator with a fresh seed per test (printed on failure)."""
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    return torch.Generator().manual_seed(seed)
