"""jax.grad of a loss through a solve called inside the caller's own
jax.shard_map (the *_shardmap_ctx forms, muster_jax's and jaxmg 0.0.x's),
forward and reverse, against the same loss through jnp.linalg on one
device; a loss summed inside the shard_map from each device's own rows of
X (each device then holds a different share of X's cotangent)."""
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
from jaxtest_util import hpd, rhs

N, M = 8, 12


def _cases(rng, dt):
    a = rng.standard_normal((N, N)) + N * np.eye(N)
    t = rng.standard_normal((M, N))
    if np.iscomplexobj(np.zeros(1, dt)):
        a, t = a + 1j * rng.standard_normal((N, N)), t + 1j * rng.standard_normal((M, N))
    h = hpd(rng, N, dt)
    return {
        "potrs": (lambda al, b, **k: mj.potrs_shardmap_ctx(al, b, **k),
                  lambda a, b: jnp.linalg.solve((a + jnp.conj(a).T) / 2, b), h, rhs(rng, N, 2, dt)),
        "lu_solve": (lambda al, b, **k: mj.lu_solve_shardmap_ctx(al, b, **k), jnp.linalg.solve,
                     a.astype(dt), rhs(rng, N, 2, dt)),
        "least_squares": (lambda al, b, **k: mj.least_squares_shardmap_ctx(al, b, n=N, **k),
                          lambda a, b: jnp.linalg.lstsq(a, b)[0], t.astype(dt), rhs(rng, M, 2, dt)),
    }


def _loss(x):
    return jnp.sum(jnp.abs(jnp.sin(x)) ** 2)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("routine", ["potrs", "lu_solve", "least_squares"])
def test_grad_inside_user_shard_map(mesh4, rng, routine, dt):
    solve, ref, a, b = _cases(rng, dt)[routine]

    def loss(a, b):
        x = jax.shard_map(lambda al, bl: solve(al, bl, axis_name="x", return_status=False), mesh=mesh4,
                          in_specs=(P(None, "x"), P(None, None)), out_specs=P(None, None), check_vma=False)(a, b)
        return _loss(x)

    want = jax.grad(lambda a, b: _loss(ref(a, b)), argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    a_sh = jax.device_put(a, NamedSharding(mesh4, P(None, "x")))
    with jax.set_mesh(mesh4):
        got = jax.jit(jax.grad(loss, argnums=(0, 1)))(a_sh, b)
        fwd = jax.jit(jax.jacfwd(loss))(a_sh, b) if dt == np.float64 else want[0]
    for g, w in zip(list(got) + [fwd], list(want) + [want[0]]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-10)


def test_loss_summed_inside_shard_map(mesh4, rng):
    """Each device adds up its own rows of X and the loss is psum'ed: the
    devices' cotangents of X differ (shares of the whole)."""
    solve, ref, a, b = _cases(rng, np.float64)["lu_solve"]

    def body(al, bl):
        x = solve(al, bl, axis_name="x", return_status=False)
        w = al.shape[1]
        mine = jax.lax.dynamic_slice_in_dim(x, jax.lax.axis_index("x") * w, w, axis=0)
        return jax.lax.psum(_loss(mine), "x")

    loss = jax.shard_map(body, mesh=mesh4, in_specs=(P(None, "x"), P(None, None)), out_specs=P(),
                         check_vma=False)
    want = jax.grad(lambda a, b: _loss(ref(a, b)), argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    with jax.set_mesh(mesh4):
        got = jax.jit(jax.grad(loss, argnums=(0, 1)))(jax.device_put(a, NamedSharding(mesh4, P(None, "x"))), b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-10)


def test_grad_through_jaxmg_0_0_x_shardmap_ctx(mesh4, rng):
    """jaxmg 0.0.x's potrs_shardmap_ctx (row blocks) under jax.grad."""
    jaxmg = importlib.import_module("muster_jax.jaxmg.v0")
    a, b = hpd(rng, N, np.float64), rhs(rng, N, 1, np.float64)

    def loss(a, b):
        x, status = jax.shard_map(lambda al, bl: jaxmg.potrs_shardmap_ctx(al, bl, 2), mesh=mesh4,
                                  in_specs=(P("x", None), P(None, None)), out_specs=(P(None, None), P("x")),
                                  check_vma=False)(a, b)
        return _loss(x)

    want = jax.grad(lambda a, b: _loss(jnp.linalg.solve((a + a.T) / 2, b)), argnums=(0, 1))(a, b)
    with jax.set_mesh(mesh4):
        got = jax.jit(jax.grad(loss, argnums=(0, 1)))(jax.device_put(a, NamedSharding(mesh4, P("x", None))), b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-10)
