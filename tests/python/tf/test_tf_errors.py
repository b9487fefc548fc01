"""muster_tf: op registration, shape functions, dtype constraints, and errors
(eager MirroredStrategy, non-SPD input, malformed shards, missing peers)
turned into TensorFlow errors with the runtime's message, fast."""
import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

import muster_tf
import tf_helpers as H

OPS = ["MusterPotrs", "MusterPotri", "MusterSyevd", "MusterGetrs", "MusterGels",
       "MusterPotrsLogdet"]
ONE = dict(rank=0, nranks=1)  # a participant alone: no peers to wait for


def raw():
    return muster_tf.ops()


# ---- registration ---------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
def test_op_registered_with_dtype_constraint(name):
    raw()
    od = op_def_registry.get(name)
    assert od is not None, "%s not registered" % name
    assert od.is_stateful
    t = {a.name: a for a in od.attr}["T"]
    allowed = {tf.dtypes.as_dtype(v).name for v in t.allowed_values.list.type}
    assert allowed == {"float32", "float64", "complex64", "complex128"}
    for attr in ("rank", "nranks", "key", "tile", "provider", "shared_memory", "timeout",
                 "same_step"):
        assert attr in {a.name for a in od.attr}


def test_lib_is_the_build_under_test():
    import os
    assert str(muster_tf.lib_path()).startswith(os.environ["MUSTER_BUILD"])


def test_raw_op_refuses_integer_dtype():
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError),
                       match="T"):
        raw().muster_potri(tf.ones([2, 2], tf.int32), key="k", **ONE)


@pytest.mark.parametrize("fn", ["potrs", "potri", "syevd", "getrs", "gels"])
def test_wrapper_refuses_integer_dtype(fn):
    a = tf.ones([2, 2], tf.int32)
    args = (a, a) if fn in ("potrs", "getrs", "gels") else (a,)
    with pytest.raises(TypeError, match="supported: float32, float64, complex64, complex128"):
        getattr(muster_tf, fn)(*args, **ONE)


# ---- shape functions ---------------------------------------------------------------

def trace(fn, *specs):
    return tf.function(fn).get_concrete_function(*specs)


def test_shape_functions_give_output_shapes():
    f = trace(lambda a, b: raw().muster_potrs(a, b, key="s", **ONE),
              tf.TensorSpec([7, 3], tf.float64), tf.TensorSpec([7, 2], tf.float64))
    assert f.outputs[0].shape.as_list() == [7, 2]
    f = trace(lambda a: raw().muster_potri(a, key="s", **ONE), tf.TensorSpec([7, 3], tf.complex64))
    assert f.outputs[0].shape.as_list() == [7, 3]
    f = trace(lambda a: raw().muster_syevd(a, Tw=tf.float32, key="s", **ONE),
              tf.TensorSpec([7, 3], tf.complex64))
    w, v = f.structured_outputs
    assert w.shape.as_list() == [7] and w.dtype == tf.float32
    assert v.shape.as_list() == [7, 3] and v.dtype == tf.complex64
    f = trace(lambda a: raw().muster_syevd(a, Tw=tf.float64, key="s", **ONE),
              tf.TensorSpec([None, 3], tf.float64))
    assert f.structured_outputs[0].shape.as_list() == [None]


def test_shape_function_refuses_non_matrix():
    with pytest.raises(ValueError, match="must be a matrix"):
        trace(lambda a: raw().muster_potri(a, key="s", **ONE), tf.TensorSpec([2, 2, 2], tf.float32))
    with pytest.raises(ValueError, match="must be a matrix"):
        muster_tf.potri(tf.ones([2, 2, 2]), **ONE)


def test_shape_function_refuses_row_mismatch():
    with pytest.raises(ValueError, match="both must have n rows"):
        trace(lambda a, b: raw().muster_potrs(a, b, key="s", **ONE),
              tf.TensorSpec([7, 3], tf.float32), tf.TensorSpec([6, 1], tf.float32))


def test_kernel_refuses_row_mismatch_with_dynamic_shapes():
    f = tf.function(lambda a, b: raw().muster_potrs(a, b, key="dyn", **ONE),
                    input_signature=[tf.TensorSpec([None, None], tf.float64)] * 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="b must be n x nrhs"):
        f(tf.eye(4, dtype=tf.float64), tf.ones([3, 1], tf.float64))


def test_kernel_refuses_wrong_block_width():
    """One participant must hold all 4 columns; 3 is not the block layout."""
    with pytest.raises(tf.errors.InvalidArgumentError, match="block layout"):
        raw().muster_potri(tf.eye(4, 3, dtype=tf.float64), key="w", **ONE)


def test_syevd_eigenvalue_type_must_match():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tw .* must be float for T=complex64"):
        raw().muster_syevd(tf.eye(2, dtype=tf.complex64), Tw=tf.float64, key="t", **ONE)


@pytest.mark.parametrize("rank,nranks,key,match", [
    (2, 2, "k", "need 0 <= rank < nranks"),
    (0, 1, "a/b", "no '/'"),
    (0, 1, "x" * 120, "120 bytes long; at most 96"),
])
def test_kernel_refuses_bad_attributes(rank, nranks, key, match):
    with pytest.raises(tf.errors.InvalidArgumentError, match=match):
        raw().muster_potri(tf.eye(2, dtype=tf.float32), rank=rank, nranks=nranks, key=key)


# ---- where and how it is called ---------------------------------------------------------

def test_alone_outside_any_strategy_runs_eagerly():
    r = H.rng()
    a, b = H.spd(r, 6, tf.float64), H.random(r, (6, 2), tf.float64)
    H.check_potrs(a, b, muster_tf.potrs(a, b).numpy(), tf.float64)


def test_eager_mirrored_strategy_is_refused_fast(strategy_of):
    st = strategy_of(2)
    ash = muster_tf.shard_columns(st, np.eye(4))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="called eagerly inside strategy.run with 2 replicas"
                                           ".*tf.function"):
        st.run(lambda a: muster_tf.potri(a), args=(ash,))
    assert time.monotonic() - t0 < 5


def test_cross_replica_context_is_refused(strategy_of):
    st = strategy_of(2)
    with st.scope():
        with pytest.raises(RuntimeError, match="cross-replica context"):
            muster_tf.potri(tf.eye(2, dtype=tf.float64))


def test_too_few_inter_op_threads_is_refused(strategy_of, monkeypatch):
    monkeypatch.setattr(muster_tf, "_inter_op_threads", lambda: 1)
    st = strategy_of(2)
    ash = muster_tf.shard_columns(st, np.eye(4))

    @tf.function
    def step(a):
        return st.run(lambda a: muster_tf.potri(a), args=(a,))
    with pytest.raises(RuntimeError, match="inter-op thread"):
        step(ash)


# ---- runtime errors ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["potrs", "potri"])
@pytest.mark.parametrize("dtype", [tf.float64, tf.complex64], ids=lambda d: d.name)
def test_not_positive_definite(strategy_of, fn, dtype):
    st = strategy_of(2)
    r = H.rng()
    n = 8
    a = H.spd(r, n, dtype)
    a[5, 5] = -50  # leading minor 6 is not positive definite
    ash = muster_tf.shard_columns(st, a)
    b = tf.constant(H.random(r, (n, 1), dtype))

    @tf.function
    def step(ash, b):
        return st.run(lambda x, b: muster_tf.potrs(x, b) if fn == "potrs" else muster_tf.potri(x),
                      args=(ash, b))
    t0 = time.monotonic()
    with pytest.raises(tf.errors.InvalidArgumentError, match="not positive definite"):
        step(ash, b)
    assert time.monotonic() - t0 < 10


def test_missing_peer_times_out_with_a_clear_message():
    t0 = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError) as ei:
        muster_tf.potri(tf.eye(2, 1, dtype=tf.float64), rank=0, nranks=2, key="lonely",
                        timeout=1.0, shared_memory=False)
    took = time.monotonic() - t0
    assert took < 10, took
    msg = str(ei.value)
    assert "MusterPotri (group potri.lonely, rank 0 of 2)" in msg
    assert "inter_op_parallelism_threads" in msg


def test_a_malformed_shard_fails_its_peers_at_once():
    """Two participants as threads of this process: rank 1's b has the wrong
    row count; rank 0, already waiting, must fail with rank 1's message at
    once, not wait out its timeout."""
    errors = {}
    a = np.eye(4)

    def part(rank, b):
        try:
            muster_tf.potrs(a[:, 2 * rank:2 * rank + 2], b, rank=rank, nranks=2, key="bad",
                            timeout=30.0, shared_memory=False)
        except tf.errors.OpError as e:
            errors[rank] = (time.monotonic(), str(e))

    t0 = time.monotonic()
    ts = [threading.Thread(target=part, args=(0, np.ones((4, 1)))),
          threading.Thread(target=part, args=(1, np.ones((3, 1))))]
    ts[0].start()
    time.sleep(1.0)  # rank 0 waits at the rendezvous when rank 1 finds its problem
    ts[1].start()
    for t in ts:
        t.join(60)
    assert set(errors) == {0, 1}
    assert "b must be n x nrhs" in errors[1][1]
    assert "rank 1" in errors[0][1] and "b must be n x nrhs" in errors[0][1], errors[0][1]
    assert errors[0][0] - t0 < 10


def test_each_replica_runs_its_ops_in_program_order(strategy_of):
    """Inside tf.function every muster op of a replica depends (control
    input) on that replica's previous muster op and on no other replica's:
    a replica never waits in two groups at once, replicas still meet."""
    st = strategy_of(2)
    ash = muster_tf.shard_columns(st, np.eye(4))

    @tf.function
    def step(a):
        return st.run(lambda a: [muster_tf.potri(a), muster_tf.potri(a), muster_tf.potri(a)],
                      args=(a,))
    graph = step.get_concrete_function(ash).graph
    ours = [op for op in graph.get_operations() if op.type == "MusterPotri"]
    assert len(ours) == 6
    by_rank = {}
    for op in ours:
        by_rank.setdefault(op.get_attr("rank"), []).append(op)
    assert sorted(by_rank) == [0, 1]
    for chain in by_rank.values():
        assert [len([c for c in op.control_inputs if c.type == "MusterPotri"])
                for op in chain] == [0, 1, 1]
        assert chain[0] in chain[1].control_inputs
        assert chain[1] in chain[2].control_inputs
        assert all(op.get_attr("_independent_side_effects") for op in chain)


def test_more_independent_ops_than_inter_op_threads_allow_at_once(strategy_of):
    """4 replicas x 4 muster ops that do not depend on each other: with
    all of them in flight at once they would need 13 inter-op threads
    (conftest gives 10) and could wait on each other until the timeout;
    in program order each replica waits in one group at a time."""
    assert muster_tf._inter_op_threads() < 13
    st, n, dtype = strategy_of(4), 21, tf.float64
    r = H.rng()
    a, b = H.spd(r, n, dtype), H.random(r, (n, 2), dtype)
    ash = muster_tf.shard_columns(st, a)

    @tf.function
    def step(ash, b):
        return st.run(lambda a, b: [muster_tf.potrs(a, b + k) for k in range(4)], args=(ash, b))

    for _ in range(3):
        xs = step(ash, tf.constant(b))
        for k, x in enumerate(xs):
            for xi in st.experimental_local_results(x):
                H.check_potrs(a, b + k, xi.numpy(), dtype)
