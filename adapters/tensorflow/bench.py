"""Time one call of a traced muster_tf.potrs against tf.linalg on one device.

    PYTHONPATH=adapters/tensorflow OPENBLAS_NUM_THREADS=1 python3 adapters/tensorflow/bench.py [n ...]

Logical CPU devices, float64, one right-hand side, median of 7 calls after a
warm-up (the trace is not timed).  Numbers for docs/tensorflow.md.
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import muster_tf as mtf  # noqa: E402


def median_s(fn, k=7):
    fn()
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[k // 2]


def main(sizes):
    devices = mtf.configure_cpu_devices(4)
    print("tensorflow", tf.__version__)
    for n in sizes:
        r = np.random.default_rng(0)
        m = r.standard_normal((n, n))
        a, b = tf.constant(m @ m.T / n + np.eye(n)), tf.constant(r.standard_normal((n, 1)))
        ref = tf.function(lambda a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b))
        print("n=%d tf.linalg cholesky+cholesky_solve, 1 device: %.2f ms"
              % (n, 1e3 * median_s(lambda: ref(a, b).numpy())))
        for nrep in (1, 2, 4):
            st = tf.distribute.MirroredStrategy(devices[:nrep])
            ash = mtf.shard_columns(st, a)
            f = tf.function(lambda s, b, st=st: st.run(lambda x, y: mtf.potrs(x, y), args=(s, b)))
            t = median_s(lambda: st.experimental_local_results(f(ash, b))[0].numpy())
            print("n=%d muster_tf.potrs, %d replicas: %.2f ms" % (n, nrep, 1e3 * t))


if __name__ == "__main__":
    main([int(v) for v in sys.argv[1:]] or [64, 1024])
