"""muster_tf's getrs (general square A), gels (least squares, tall A) and
potrs(..., return_logdet=True):
each x dtype with 1, 2 and 4 replicas of a MirroredStrategy, residuals on
fresh random inputs; shapes of the outputs; singular and rank-deficient
inputs as InvalidArgumentError, as potrs's not-positive-definite."""
import numpy as np
import pytest
import tensorflow as tf

import muster_tf
import tf_helpers as H

DTYPES = [tf.float32, tf.float64, tf.complex64, tf.complex128]
REPLICAS = [1, 2, 4]
N = 29  # not a multiple of 2 or 4: the last block is shorter
ONE = dict(rank=0, nranks=1)


def run_both(st, g, b, t, c):
    """getrs(g, b) and gels(t, c) in one tf.function: two groups in flight."""
    gsh, tsh = muster_tf.shard_columns(st, g), muster_tf.shard_columns(st, t)

    @tf.function
    def step(gsh, tsh, b, c):
        return st.run(lambda g, t, b, c: (muster_tf.getrs(g, b), muster_tf.gels(t, c)),
                      args=(gsh, tsh, b, c))

    x, y = step(gsh, tsh, tf.constant(b), tf.constant(c))
    return ([v.numpy() for v in st.experimental_local_results(x)],
            [v.numpy() for v in st.experimental_local_results(y)],
            [v.numpy() for v in st.experimental_local_results(tsh)])


@pytest.mark.parametrize("nrep", REPLICAS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_getrs_and_gels(strategy_of, dtype, nrep):
    r = H.rng()
    m = 2 * N + 5
    g, b = H.general(r, N, dtype), H.random(r, (N, 3), dtype)
    t, c = H.tall(r, m, N, dtype), H.random(r, (m, 2), dtype)
    t_before = t.copy()
    xs, ys, tsh = run_both(strategy_of(nrep), g, b, t, c)
    assert len(xs) == len(ys) == nrep
    for x in xs:
        assert x.dtype == H.NP[dtype] and x.shape == (N, 3)
        H.check_getrs(g, b, x, dtype)
    for y in ys:
        assert y.dtype == H.NP[dtype] and y.shape == (N, 2)
        H.check_gels(t, c, y, dtype)
    np.testing.assert_array_equal(t, t_before)
    np.testing.assert_array_equal(np.concatenate(tsh, axis=1), t)


def test_vectors_eagerly_alone():
    r = H.rng()
    g, t = H.general(r, 6, tf.float64), H.tall(r, 15, 6, tf.float64)
    b, c = H.random(r, (6,), tf.float64), H.random(r, (15,), tf.float64)
    x = muster_tf.getrs(g, b, **ONE).numpy()
    assert x.shape == (6,)
    H.check_getrs(g, b, x, tf.float64)
    y = muster_tf.gels(t, c, **ONE).numpy()
    assert y.shape == (6,)
    H.check_gels(t, c, y, tf.float64)


def test_shape_functions():
    ops = muster_tf.ops()
    f = tf.function(lambda a, b: ops.muster_getrs(a, b, key="s", **ONE)).get_concrete_function(
        tf.TensorSpec([7, 3], tf.float64), tf.TensorSpec([7, 2], tf.float64))
    assert f.outputs[0].shape.as_list() == [7, 2]
    # gels: X has A's n rows, learnt at the rendezvous: unknown when traced
    f = tf.function(lambda a, b: ops.muster_gels(a, b, key="s", **ONE)).get_concrete_function(
        tf.TensorSpec([9, 3], tf.complex64), tf.TensorSpec([9, 2], tf.complex64))
    assert f.outputs[0].shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="both must have A's m rows"):
        tf.function(lambda a, b: ops.muster_gels(a, b, key="s", **ONE)).get_concrete_function(
            tf.TensorSpec([9, 3], tf.float32), tf.TensorSpec([3, 1], tf.float32))


def test_kernel_refuses_bad_shapes():
    with pytest.raises(tf.errors.InvalidArgumentError, match="b must be m x nrhs with m=9"):
        muster_tf.gels(tf.ones([9, 3], tf.float64), tf.ones([3, 1], tf.float64), **ONE)
    # a wide A (m < n): the runtime's layout rule refuses it
    with pytest.raises(tf.errors.InvalidArgumentError, match="gels"):
        muster_tf.gels(tf.ones([2, 3], tf.float64), tf.ones([2, 1], tf.float64), **ONE)


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex64], ids=lambda d: d.name)
def test_singular_and_rank_deficient(strategy_of, dtype):
    """A singular A (getrs) and a rank-deficient one (gels) fail every
    replica with InvalidArgumentError, the error of potrs's not positive
    definite (numerical kind), naming the pivot."""
    st = strategy_of(2)
    r = H.rng()
    g = H.general(r, 8, dtype)
    g[:, 5] = 0  # exactly singular whatever the rounding: U(6,6) = 0
    t = H.tall(r, 17, 8, dtype)
    t[:, 7] = t[:, 0] + t[:, 1]
    b, c = H.random(r, (8, 1), dtype), H.random(r, (17, 1), dtype)
    gsh, tsh = muster_tf.shard_columns(st, g), muster_tf.shard_columns(st, t)

    @tf.function
    def solve(gsh, b):
        return st.run(lambda a, b: muster_tf.getrs(a, b), args=(gsh, b))

    @tf.function
    def fit(tsh, c):
        return st.run(lambda a, c: muster_tf.gels(a, c), args=(tsh, c))

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"U\(6,6\) .* exactly zero"):
        solve(gsh, tf.constant(b))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank deficient: R\(8,8\) of the QR .*\|R\(8,8\)\| = "):
        fit(tsh, tf.constant(c))


@pytest.mark.parametrize("nrep", REPLICAS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_potrs_logdet(strategy_of, dtype, nrep):
    """potrs(..., return_logdet=True) (op MusterPotrsLogdet): X and log det A
    on every replica."""
    st = strategy_of(nrep)
    r = H.rng()
    a, b = H.spd(r, N, dtype), H.random(r, (N, 2), dtype)

    @tf.function
    def step(ash, b):
        return st.run(lambda a, b: muster_tf.potrs(a, b, return_logdet=True), args=(ash, b))

    x, ld = step(muster_tf.shard_columns(st, a), tf.constant(b))
    for xi, li in zip(st.experimental_local_results(x), st.experimental_local_results(ld)):
        H.check_potrs(a, b, xi.numpy(), dtype)
        H.check_logdet(a, li.numpy(), dtype)


def test_potrs_logdet_op_shapes_and_types():
    ops = muster_tf.ops()
    f = tf.function(lambda a, b: ops.muster_potrs_logdet(a, b, Tw=tf.float32, key="s", **ONE)
                    ).get_concrete_function(tf.TensorSpec([7, 7], tf.complex64),
                                            tf.TensorSpec([7, 2], tf.complex64))
    x, ld = f.structured_outputs
    assert x.shape.as_list() == [7, 2] and ld.shape.as_list() == [] and ld.dtype == tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tw .* must be double for T=double"):
        ops.muster_potrs_logdet(tf.eye(2, dtype=tf.float64), tf.ones([2, 1], tf.float64),
                                Tw=tf.float32, key="t", **ONE)
    a = np.eye(4)
    a[2, 2] = -1
    with pytest.raises(tf.errors.InvalidArgumentError, match="not positive definite"):
        muster_tf.potrs(a, np.ones((4, 1)), return_logdet=True, **ONE)
