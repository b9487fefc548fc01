"""One worker process of test_tf_processes.py: rank RANK of NRANKS.

    python tf_worker.py RANK NRANKS SEED N OUT.npz {eager|function}

Builds the same random inputs as every other worker (from SEED), passes its
column block to potrs, potri and syevd (rank=/nranks= explicit: process mode,
buffers in shared memory), and saves what it got back.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "adapters", "tensorflow"))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import muster_tf  # noqa: E402


def inputs(seed, n):
    r = np.random.default_rng(seed)
    m = r.standard_normal((n, n))
    a = m @ m.T / n + np.eye(n)
    h = (m + m.T) / 2
    b = r.standard_normal((n, 2))
    return a, h, b


def main():
    rank, nranks, seed, n = (int(v) for v in sys.argv[1:5])
    out, mode = sys.argv[5], sys.argv[6]
    a, h, b = inputs(seed, n)
    c0, k = muster_tf.block_columns(n, nranks, rank)
    a_blk, h_blk = a[:, c0:c0 + k], h[:, c0:c0 + k]
    who = dict(rank=rank, nranks=nranks)

    def step(a_blk, h_blk, b):
        x = muster_tf.potrs(a_blk, b, **who)
        inv = muster_tf.potri(a_blk, **who)
        w, v = muster_tf.syevd(h_blk, **who)
        return x, inv, w, v

    if mode == "function":
        step = tf.function(step)
    res = [t.numpy() for t in step(tf.constant(a_blk), tf.constant(h_blk), tf.constant(b))]
    np.savez(out, x=res[0], inv=res[1], w=res[2], v=res[3])


if __name__ == "__main__":
    main()
