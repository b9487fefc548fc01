"""One worker process of test_tf_processes.py: rank RANK of NRANKS.

    python tf_worker.py RANK NRANKS SEED N OUT.npz {eager|function}

Builds the same random inputs as every other worker (from SEED), passes its
column block to potrs, potri, syevd, getrs and gels (rank=/nranks=
explicit: process mode, buffers in shared memory), and saves what it got
back.
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


def general_inputs(seed, n):
    """getrs's general g (n x n) and gels's tall t (2n+1 x n) with its c."""
    r = np.random.default_rng(seed + 1)
    g = 2 * np.eye(n) + r.standard_normal((n, n)) / (2 * n ** 0.5)
    t = np.eye(2 * n + 1, n) + r.standard_normal((2 * n + 1, n)) / (4 * n ** 0.5)
    return g, t, r.standard_normal((2 * n + 1, 3))


def main():
    rank, nranks, seed, n = (int(v) for v in sys.argv[1:5])
    out, mode = sys.argv[5], sys.argv[6]
    a, h, b = inputs(seed, n)
    g, t, c = general_inputs(seed, n)
    c0, k = muster_tf.block_columns(n, nranks, rank)
    blocks = [tf.constant(x[:, c0:c0 + k]) for x in (a, h, g, t)]
    who = dict(rank=rank, nranks=nranks)

    def step(a_blk, h_blk, g_blk, t_blk, b, c):
        x = muster_tf.potrs(a_blk, b, **who)
        inv = muster_tf.potri(a_blk, **who)
        w, v = muster_tf.syevd(h_blk, **who)
        return x, inv, w, v, muster_tf.getrs(g_blk, b, **who), muster_tf.gels(t_blk, c, **who)

    if mode == "function":
        step = tf.function(step)
    res = [r.numpy() for r in step(*blocks, tf.constant(b), tf.constant(c))]
    np.savez(out, x=res[0], inv=res[1], w=res[2], v=res[3], xg=res[4], xls=res[5])


if __name__ == "__main__":
    main()
