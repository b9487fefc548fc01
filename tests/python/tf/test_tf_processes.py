"""muster_tf with worker processes: each process passes its shard (rank= and
nranks= explicit, buffers in shared memory the leader maps), eagerly and in
tf.function; and a worker that dies turns into an error for the others."""
import ctypes
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import muster_tf
import tf_helpers as H

HERE = pathlib.Path(__file__).resolve().parent


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_worker_processes(tmp_path, mode):
    """Six muster ops that do not depend on each other, in each worker.  In
    tf.function each worker runs them in program order, so one inter-op
    thread per worker is enough (in any other order two workers can each
    wait in a different group for the other)."""
    nranks, n = 2, 11
    seed = int.from_bytes(os.urandom(4), "little")
    env = dict(os.environ, TF_NUM_INTEROP_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(HERE / "tf_worker.py"), str(r), str(nranks),
                               str(seed), str(n), str(tmp_path / ("r%d.npz" % r)), mode],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
             for r in range(nranks)]
    outs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in procs]
    for p, o in zip(procs, outs):
        assert p.returncode == 0, o[-3000:]
    sys.path.insert(0, str(HERE))
    from tf_worker import general_inputs, inputs
    a, h, b = inputs(seed, n)
    g, t, c = general_inputs(seed, n)
    res = [np.load(tmp_path / ("r%d.npz" % r)) for r in range(nranks)]
    for r in res:
        H.check_potrs(a, b, r["x"], tf.float64)
        H.check_getrs(g, b, r["xg"], tf.float64)
        H.check_gels(t, c, r["xls"], tf.float64)
        np.testing.assert_array_equal(r["w"], res[0]["w"])
    H.check_potri(a, np.concatenate([r["inv"] for r in res], axis=1), tf.float64)
    H.check_syevd(h, res[0]["w"], np.concatenate([r["v"] for r in res], axis=1), tf.float64)


def test_dead_worker_is_an_error_for_the_others(tmp_path):
    """Rank 1 is a process that joins the group and is SIGKILLed; rank 0
    (here) gets an Aborted error naming it well before its timeout."""
    lib = str(pathlib.Path(muster_tf.lib_path()).parent / "libmuster.so")
    victim = subprocess.Popen([sys.executable, "-c", (
        "import ctypes, os, signal, sys, time\n"
        "m = ctypes.CDLL(%r)\n"
        "g = ctypes.c_void_p()\n"
        "rc = m.muster_group_join(b'potri.doomed', 1, 2, None, ctypes.byref(g))\n"
        "print('joined', rc, flush=True)\n"
        "time.sleep(1.5)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n") % lib], stdout=subprocess.PIPE)
    assert victim.stdout.readline().strip() == b"joined 0"
    t0 = time.monotonic()
    with pytest.raises(tf.errors.AbortedError) as ei:
        muster_tf.potri(np.eye(4, 2), rank=0, nranks=2, key="doomed", timeout=30.0)
    took = time.monotonic() - t0
    victim.wait(10)
    assert victim.returncode == -signal.SIGKILL
    assert took < 10, took
    assert "rank 1" in str(ei.value) and "died" in str(ei.value), str(ei.value)
