"""jax.vmap over a leading batch axis of A and B (muster_jax's batching
rule, _call._batch_rule): one handler call per matrix, or one call with
the right-hand sides side by side when A is shared."""
import jax
import jax.numpy as jnp
import numpy as np

import muster_jax as mj
from jaxtest_util import check_potri, check_potrs, hermitian, hpd, rhs

N, K = 6, 3


def test_vmap_potrs_potri_syevd(mesh4, rng):
    dt = np.float64
    a = np.stack([hpd(rng, N, dt) for _ in range(K)])
    b = np.stack([rhs(rng, N, 2, dt) for _ in range(K)])
    h = np.stack([hermitian(rng, N, dt) for _ in range(K)])
    with jax.set_mesh(mesh4):
        x_ab = jax.vmap(lambda a, b: mj.potrs(a, b, mesh=mesh4))(a, b)
        x_b = jax.vmap(lambda b: mj.potrs(a[0], b, mesh=mesh4))(b)        # A shared: one call
        x_a = jax.vmap(lambda a: mj.potrs(a, b[0], mesh=mesh4))(a)
        inv = jax.jit(jax.vmap(lambda a: mj.potri(a, mesh=mesh4)))(a)
        w, v = jax.vmap(lambda a: mj.syevd(a, mesh=mesh4))(h)
        # nested vmap: every (i, j) its own group, none shared
        x_nested = jax.vmap(jax.vmap(lambda a, b: mj.potrs(a, b, mesh=mesh4)))(
            np.stack([a, a[::-1]]), np.stack([b, b]))
    for i in range(K):
        assert check_potrs(a[i], b[i], x_ab[i]) < 10
        assert check_potrs(a[0], b[i], x_b[i]) < 10
        assert check_potrs(a[i], b[0], x_a[i]) < 10
        assert check_potri(a[i], inv[i]) < 10
        np.testing.assert_allclose(w[i], np.linalg.eigvalsh(h[i]), atol=1e-12 * N * np.abs(h[i]).max())
        np.testing.assert_allclose(h[i] @ v[i], v[i] * w[i][None, :], atol=1e-12 * N * np.abs(h[i]).max())
        assert check_potrs(a[i], b[i], x_nested[0, i]) < 10
        assert check_potrs(a[K - 1 - i], b[i], x_nested[1, i]) < 10


def test_vmap_of_grad_and_grad_of_vmap(mesh4, rng):
    dt = np.float64
    a = np.stack([hpd(rng, N, dt) for _ in range(K)])
    b = np.stack([rhs(rng, N, 1, dt) for _ in range(K)])

    def loss(solve):
        return lambda a, b: jnp.sum(solve(a, b) ** 2)

    want = jax.vmap(jax.grad(loss(lambda a, b: jnp.linalg.solve((a + a.T) / 2, b)), argnums=(0, 1)))(a, b)
    with jax.set_mesh(mesh4):
        got = jax.jit(jax.vmap(jax.grad(loss(lambda a, b: mj.potrs(a, b, mesh=mesh4)), argnums=(0, 1))))(a, b)
        # and the other way round: grad of a vmapped loss
        batch_loss = jax.vmap(loss(lambda a, b: mj.potrs(a, b, mesh=mesh4)))
        got2 = jax.jit(jax.grad(lambda a, b: jnp.sum(batch_loss(a, b)), argnums=(0, 1)))(a, b)
    for g, w in list(zip(got, want)) + list(zip(got2, want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-9)
