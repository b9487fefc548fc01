"""muster_tf end to end: every op x dtype with 1, 2 and 4 replicas of a
MirroredStrategy (logical CPU devices, lapack provider), residuals on fresh
random inputs; several ops in flight at once; inputs never modified."""
import threading

import numpy as np
import pytest
import tensorflow as tf

import muster_tf
import tf_helpers as H

DTYPES = [tf.float32, tf.float64, tf.complex64, tf.complex128]
REPLICAS = [1, 2, 4]
N = 37  # not a multiple of 2 or 4: the last block is shorter


def run_all_three(st, a, h, b):
    """potrs(a, b), potri(a), syevd(h) in one tf.function: three groups in
    flight at once on every replica."""
    ash, hsh = muster_tf.shard_columns(st, a), muster_tf.shard_columns(st, h)

    @tf.function
    def step(ash, hsh, b):
        def fn(a_blk, h_blk, b):
            return muster_tf.potrs(a_blk, b), muster_tf.potri(a_blk), muster_tf.syevd(h_blk)
        return st.run(fn, args=(ash, hsh, b))

    x, inv, (w, v) = step(ash, hsh, tf.constant(b))
    xs = [t.numpy() for t in st.experimental_local_results(x)]
    ws = [t.numpy() for t in st.experimental_local_results(w)]
    return dict(x=xs, inv=muster_tf.gather_columns(st, inv).numpy(), w=ws,
                v=muster_tf.gather_columns(st, v).numpy(),
                ash=[t.numpy() for t in st.experimental_local_results(ash)])


@pytest.mark.parametrize("nrep", REPLICAS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_every_op(strategy_of, dtype, nrep):
    r = H.rng()
    a, h, b = H.spd(r, N, dtype), H.hermitian(r, N, dtype), H.random(r, (N, 3), dtype)
    a_before = a.copy()
    st = strategy_of(nrep)
    out = run_all_three(st, a, h, b)
    # potrs: every replica gets the whole X
    assert len(out["x"]) == nrep
    for x in out["x"]:
        assert x.dtype == H.NP[dtype] and x.shape == (N, 3)
        H.check_potrs(a, b, x, dtype)
    assert out["inv"].shape == (N, N)
    H.check_potri(a, out["inv"], dtype)
    for w in out["w"]:
        assert w.dtype == np.dtype(H.NP[dtype](0).real.dtype)
        np.testing.assert_array_equal(w, out["w"][0])
    H.check_syevd(h, out["w"][0], out["v"], dtype)
    # the inputs (host array and the replicas' shards) are unchanged
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(np.concatenate(out["ash"], axis=1), a)


def test_repeated_calls_reuse_the_trace(strategy_of):
    """One traced function called again and again (groups advance a
    generation instead of being recreated), fresh data each time."""
    st = strategy_of(4)
    n, dtype = 24, tf.float64

    @tf.function
    def step(ash, b):
        return st.run(lambda a, b: muster_tf.potrs(a, b), args=(ash, b))

    r = H.rng()
    for _ in range(5):
        a, b = H.spd(r, n, dtype), H.random(r, (n, 2), dtype)
        x = step(muster_tf.shard_columns(st, a), tf.constant(b))
        for xi in st.experimental_local_results(x):
            H.check_potrs(a, b, xi.numpy(), dtype)
    assert len(step._list_all_concrete_functions()) == 1


def test_vector_rhs(strategy_of):
    st = strategy_of(2)
    r = H.rng()
    a, b = H.spd(r, 9, tf.float64), H.random(r, (9,), tf.float64)

    @tf.function
    def step(ash, b):
        return st.run(lambda a, b: muster_tf.potrs(a, b), args=(ash, b))

    x = st.experimental_local_results(step(muster_tf.shard_columns(st, a), tf.constant(b)))[0]
    assert x.shape == (9,)
    H.check_potrs(a, b[:, None], x.numpy()[:, None], tf.float64)


def test_rank_with_no_columns(strategy_of):
    """n=5 over 4 replicas: blocks of 2 columns, so the last replica holds none."""
    st = strategy_of(4)
    assert [muster_tf.block_columns(5, 4, q)[1] for q in range(4)] == [2, 2, 1, 0]
    r = H.rng()
    a, b = H.spd(r, 5, tf.float64), H.random(r, (5, 1), tf.float64)
    out = run_all_three(st, a, a, b)
    H.check_potrs(a, b, out["x"][3], tf.float64)
    H.check_potri(a, out["inv"], tf.float64)
    H.check_syevd(a, out["w"][0], out["v"], tf.float64)


def test_two_ops_of_one_routine_in_flight(strategy_of):
    """Two potrs in one replica function: distinct groups, never mixed."""
    st = strategy_of(4)
    r = H.rng()
    n, dtype = 20, tf.float64
    a1, a2 = H.spd(r, n, dtype), H.spd(r, n, dtype)
    b1, b2 = H.random(r, (n, 1), dtype), H.random(r, (n, 2), dtype)

    @tf.function
    def step(s1, s2, b1, b2):
        return st.run(lambda x1, x2, c1, c2: (muster_tf.potrs(x1, c1), muster_tf.potrs(x2, c2)),
                      args=(s1, s2, b1, b2))

    x1, x2 = step(muster_tf.shard_columns(st, a1), muster_tf.shard_columns(st, a2),
                  tf.constant(b1), tf.constant(b2))
    for t in st.experimental_local_results(x1):
        H.check_potrs(a1, b1, t.numpy(), dtype)
    for t in st.experimental_local_results(x2):
        H.check_potrs(a2, b2, t.numpy(), dtype)


def test_two_functions_from_two_threads(strategy_of):
    """Two traced functions run at the same time from two Python threads:
    2 x 2 replicas wait at once, in separate groups."""
    st = strategy_of(2)
    n, dtype = 16, tf.float64
    r = H.rng()
    data = [(H.spd(r, n, dtype), H.random(r, (n, 1), dtype)) for _ in range(2)]

    def make():
        @tf.function
        def step(ash, b):
            return st.run(lambda a, b: muster_tf.potrs(a, b), args=(ash, b))
        return step

    fns = [make(), make()]
    args = [(muster_tf.shard_columns(st, a), tf.constant(b)) for a, b in data]
    for f, (ash, b) in zip(fns, args):  # trace first, serially
        f.get_concrete_function(ash, b)
    results, errors = [None, None], []

    def worker(i):
        try:
            for _ in range(3):
                results[i] = fns[i](*args[i])
        except Exception as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors
    for (a, b), x in zip(data, results):
        for t in st.experimental_local_results(x):
            H.check_potrs(a, b, t.numpy(), dtype)


def test_one_trace_run_from_two_threads_never_mixes(strategy_of):
    """The same traced function run concurrently from two threads shares its
    groups.  Each run must give its own correct answer or fail with a clear
    error (already running / runs overlap / a timeout of the short
    deadline); never an answer computed from the other run's shards."""
    st = strategy_of(2)
    n, dtype = 12, tf.float64
    r = H.rng()
    data = [(H.spd(r, n, dtype), H.random(r, (n, 1), dtype)) for _ in range(2)]
    args = [(muster_tf.shard_columns(st, a), tf.constant(b)) for a, b in data]

    @tf.function
    def step(ash, b):
        return st.run(lambda a, b: muster_tf.potrs(a, b, timeout=2.0), args=(ash, b))

    step.get_concrete_function(*args[0])
    outcomes = []

    def worker(i):
        for _ in range(4):
            try:
                x = step(*args[i])
                outcomes.append((i, [t.numpy() for t in st.experimental_local_results(x)]))
            except tf.errors.OpError as e:
                outcomes.append((i, e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert len(outcomes) == 8
    expected = ("already running", "two calls that overlap met in group", "timed out",
                "aborted")
    for i, out in outcomes:
        if isinstance(out, Exception):
            assert any(s in str(out) for s in expected), str(out)
        else:
            for x in out:
                H.check_potrs(data[i][0], data[i][1], x, dtype)
