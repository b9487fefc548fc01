"""pytest setup for the TensorFlow adapter (muster_tf).

The build is located by $MUSTER_BUILD (default <repo>/build): muster_tf loads
<build>/lib/libmuster_tf.so.  TensorFlow is split into 4 logical CPU devices
with enough inter-op threads (muster_tf.configure_cpu_devices) before its
runtime starts; strategies of 1, 2 and 4 replicas use the first devices.
Every test runs under a private MUSTER_JOB, and no segment of it may remain
in /dev/shm afterwards.
"""
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("MUSTER_BUILD", "build"))
BUILD = BUILD if BUILD.is_absolute() else REPO / BUILD
os.environ["MUSTER_BUILD"] = str(BUILD)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("MUSTER_TIMEOUT", "30")
sys.path.insert(0, str(REPO / "adapters" / "tensorflow"))

import tensorflow as tf  # noqa: E402
import muster_tf  # noqa: E402
from muster_tf import _lib, _runtime  # noqa: E402

NDEV = 4
DEVICES = muster_tf.configure_cpu_devices(NDEV)


def job_segments(job):
    """Segments of job, of any pid namespace, as the runtime's parser sees
    them (adapters/common/runtime.py job_segments)."""
    return _runtime.job_segments(_lib.runtime(), job)


@pytest.fixture(autouse=True)
def private_job(request, monkeypatch):
    """A job key of this test alone; fails the test if it leaves segments."""
    name = "".join(c if c.isalnum() else "_" for c in request.node.name)
    job = ("tfpy%d_%s" % (os.getpid(), name))[:64]  # MUSTER_JOB: no '.', '/', space
    monkeypatch.setenv("MUSTER_JOB", job)
    yield job
    left = job_segments(job)
    assert not left, "segments left in /dev/shm: %s" % left


_strategies = {}


@pytest.fixture
def strategy_of():
    """strategy_of(R): a MirroredStrategy over the first R logical CPUs."""
    def get(nrep):
        if nrep not in _strategies:
            _strategies[nrep] = tf.distribute.MirroredStrategy(DEVICES[:nrep])
        return _strategies[nrep]
    return get
