"""muster_jax.jaxmg.v0 / .v1 imported under the name jaxmg and called as
jaxmg 0.0.x's and 1.4.x's docs call it; results checked by residuals."""
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from jaxtest_util import check_potri, check_potrs, hermitian, hpd, rhs

N, T_A = 8, 2


def _inputs(rng, mesh, spec):
    a, h, b = hpd(rng, N, np.float64), hermitian(rng, N, np.float64), rhs(rng, N, 1, np.float64)
    put = lambda m: jax.device_put(m, NamedSharding(mesh, spec))  # noqa: E731
    return a, h, b, put(a), put(h)


def _check_eig(h, w, v):
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h), atol=1e-12 * N * np.abs(h).max())
    np.testing.assert_allclose(h @ np.asarray(v), np.asarray(v) * np.asarray(w)[None, :],
                               atol=1e-12 * N * np.abs(h).max())


def test_jaxmg_0_0_x(mesh4, rng):
    jaxmg = importlib.import_module("muster_jax.jaxmg.v0")
    a, h, b, A, H = _inputs(rng, mesh4, P("x", None))
    x = jaxmg.potrs(A, b, T_A, mesh4, (P("x", None), P(None, None)))
    assert check_potrs(a, b, x) < 10
    x, status = jaxmg.potrs(A, b, T_A=T_A, mesh=mesh4, in_specs=(P("x", None), P(None, None)),
                            return_status=True, pad=True)
    assert check_potrs(a, b, x) < 10 and int(status) == 0
    inv = jaxmg.potri_symmetrize(np.asarray(jaxmg.potri(A, T_A, mesh4, (P("x", None),))))
    assert check_potri(a, inv) < 10
    w, v = jaxmg.syevd(H, T_A, mesh4, (P("x", None),))
    _check_eig(h, w, v)
    w_only, status = jaxmg.syevd(H, T_A, mesh4, (P("x", None),), return_eigenvectors=False, return_status=True)
    np.testing.assert_allclose(np.asarray(w_only), np.asarray(w), atol=1e-12 * N * np.abs(h).max())
    assert jaxmg.calculate_all_valid_T_A(N, 4) and jaxmg.calculate_padding(3, 2) == 1
    assert jaxmg.cyclic_1d_layout(A, T_A, mesh4).shape[0] == N

    def body(a_loc, b):
        x, status = jaxmg.potrs_shardmap_ctx(a_loc, b, T_A)
        inv, _ = jaxmg.potri_no_shardmap(a_loc, T_A)
        return x, inv, status

    with jax.set_mesh(mesh4):
        x, inv, status = jax.jit(jax.shard_map(body, mesh=mesh4, in_specs=(P("x", None), P(None, None)),
                                               out_specs=(P(None, None), P("x", None), P("x")),
                                               check_vma=False))(A, b)
    assert check_potrs(a, b, x) < 10 and check_potri(a, inv) < 10 and not np.any(np.asarray(status))


def test_jaxmg_1_4_x(mesh4, rng):
    jaxmg = importlib.import_module("muster_jax.jaxmg.v1")
    a, h, b, A, H = _inputs(rng, mesh4, P("x"))
    assert check_potrs(a, b[:, 0], jaxmg.potrs(A, b[:, 0], T_A)) < 10        # mesh and spec from A
    assert check_potrs(a, b, jaxmg.potrs(A, b, T_A, mesh4, P("x"))) < 10
    x, status = jaxmg.potrs(A, b, T_A, matrix_specs=P("x"), return_status=True, donate=False)
    assert check_potrs(a, b, x) < 10 and int(status) == 0
    x = jaxmg.potrs(A, b, T_A, mesh=mesh4, in_specs=(P("x"),))                  # the old keyword
    assert check_potrs(a, b, x) < 10
    with jax.set_mesh(mesh4):
        x = jax.jit(lambda a, b: jaxmg.potrs(a, b, T_A))(A, b)                 # spec from the traced type
    assert check_potrs(a, b, x) < 10
    assert check_potri(a, jaxmg.potri(A, T_A)) < 10
    w, v = jaxmg.syevd(H, T_A)
    _check_eig(h, w, v)
    cols = jax.device_put(a, NamedSharding(mesh4, P(None, "x")))
    assert check_potrs(a, b, jaxmg.potrs(cols, b, T_A)) < 10
    x, logdet, status = jaxmg.potrs(A, b, T_A, return_logdet=True, return_status=True)
    assert check_potrs(a, b, x) < 10 and int(status) == 0
    np.testing.assert_allclose(float(logdet), np.linalg.slogdet(a)[1], rtol=1e-12 * N)


def test_jaxmg_1_4_x_lu_solve_least_squares(mesh4, rng):
    """jaxmg 1.4.x's lu_solve / least_squares as its docs call them: A
    row-sharded P("x"), the mesh and spec read off A, b 1-D or 2-D."""
    jaxmg = importlib.import_module("muster_jax.jaxmg.v1")
    a = rng.standard_normal((N, N)) + N * np.eye(N)
    t = rng.standard_normal((12, N))
    b, c = rhs(rng, N, 2, np.float64), rhs(rng, 12, 1, np.float64)
    put = lambda m: jax.device_put(m, NamedSharding(mesh4, P("x")))  # noqa: E731
    A, T = put(a), put(t)
    x = jaxmg.lu_solve(A, b, T_A)
    assert np.abs(a @ np.asarray(x) - b).max() < 1e-12 * N * np.abs(b).max()
    x, status = jaxmg.lu_solve(A, b[:, 0], T_A, mesh4, P("x"), return_status=True, donate=False)
    assert x.shape == (N,) and int(status) == 0
    assert np.abs(a @ np.asarray(x) - b[:, 0]).max() < 1e-12 * N * np.abs(b).max()
    want = np.linalg.lstsq(t, c, rcond=None)[0]
    y = jaxmg.least_squares(T, c[:, 0], T_A)
    assert y.shape == (N,)
    np.testing.assert_allclose(np.asarray(y), want[:, 0], rtol=1e-10, atol=1e-12)
    y, status = jaxmg.least_squares(T, c, T_A, matrix_specs=P("x"), return_status=True)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-10, atol=1e-12)
    assert int(status) == 0


def test_jaxmg_1_4_x_two_axis_mesh(rng):
    """A 2 x 2 mesh, jaxmg 1.4.x's call forms with the mesh and spec read
    off A: A sharded P("x", "y") is solved (resharded to columns over both
    axes), and so is A sharded over one of the two axes (the other
    replicates the group); a spec naming one axis twice is refused with
    what to do."""
    jaxmg = importlib.import_module("muster_jax.jaxmg.v1")
    mesh = jax.make_mesh((2, 2), ("x", "y"), devices=jax.devices()[:4])
    a, h, b = hpd(rng, N, np.float64), hermitian(rng, N, np.float64), rhs(rng, N, 2, np.float64)
    g = rng.standard_normal((N, N)) + N * np.eye(N)
    t, c = rng.standard_normal((12, N)), rhs(rng, 12, 1, np.float64)
    for spec in (P("x", "y"), P("y", "x"), P("x"), P(None, "y")):
        put = lambda m: jax.device_put(m, NamedSharding(mesh, spec))  # noqa: E731
        assert check_potrs(a, b, jaxmg.potrs(put(a), b, T_A)) < 10, spec
        assert check_potri(a, jaxmg.potri(put(a), T_A)) < 10, spec
        w, v = jaxmg.syevd(put(h), T_A)
        _check_eig(h, w, v)
        x = jaxmg.lu_solve(put(g), b, T_A)
        assert np.abs(g @ np.asarray(x) - b).max() < 1e-12 * N * np.abs(b).max(), spec
        y = jaxmg.least_squares(put(t), c, T_A)
        np.testing.assert_allclose(np.asarray(y), np.linalg.lstsq(t, c, rcond=None)[0], rtol=1e-10, atol=1e-12)
    with jax.set_mesh(mesh):  # inside jit, the spec read off the traced type
        x = jax.jit(lambda a, b: jaxmg.lu_solve(a, b, T_A))(jax.device_put(g, NamedSharding(mesh, P("x", "y"))), b)
    assert np.abs(g @ np.asarray(x) - b).max() < 1e-12 * N * np.abs(b).max()
    with jax.set_mesh(mesh):  # and differentiated there (the derivative solves over both axes too)
        gr = jax.jit(jax.grad(lambda a: jnp.sum(jaxmg.potrs(a, b, T_A) ** 2)))(
            jax.device_put(a, NamedSharding(mesh, P("x", "y"))))
    want = jax.grad(lambda a: jnp.sum(jnp.linalg.solve((a + a.T) / 2, b) ** 2))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(gr), np.asarray(want), rtol=1e-9, atol=1e-10)
    with pytest.raises(ValueError, match="names a mesh axis for both dimensions"):
        jaxmg.potrs(jax.device_put(a, NamedSharding(mesh, P("x", "y"))), b, T_A, matrix_specs=P("x", "x"))
