"""lu_solve (getrs) and least_squares (gels) on 4 host devices: residuals
on fresh random inputs for every dtype, row- and column-sharded A, N not a
multiple of the devices; derivatives (check_grads to second order, both
modes, and the gradients against jnp.linalg.solve / lstsq on one device);
singular and rank-deficient A; jax.vmap."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
from jaxtest_util import DTYPES, check_grads_fd, eps, rhs, solve_conditioning

RuntimeErr = jax.errors.JaxRuntimeError
N, M = 6, 9  # N not a multiple of 4: the padded path; least squares M x N


def general(rng, m, n, dt):
    """m x n with singular values in about [0.5, 2]: well conditioned."""
    g = rng.standard_normal((m, n))
    if np.iscomplexobj(np.zeros(1, dt)):
        g = g + 1j * rng.standard_normal((m, n))
    q, _ = np.linalg.qr(g)
    h = rng.standard_normal((n, n))
    if np.iscomplexobj(np.zeros(1, dt)):
        h = h + 1j * rng.standard_normal((n, n))
    v, _ = np.linalg.qr(h)
    return (q * rng.uniform(0.5, 2, n)[None, :] @ v).astype(dt)


def lu_residual(a, b, x):
    """||A X - B|| / (||A|| ||X|| n eps): O(1) when right."""
    e = eps(np.asarray(x).dtype)
    a, b, x = (np.asarray(v, np.complex128) for v in (a, b, x))
    return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) * a.shape[0] * e)


def ls_residual(a, b, x, dt):
    """The normal equations' residual ||A^H (A X - B)|| / (||A||^2 ||X|| m eps)."""
    a, b, x = (np.asarray(v, np.complex128) for v in (a, b, x))
    r = a.conj().T @ (a @ x - b)
    return np.linalg.norm(r) / (np.linalg.norm(a) ** 2 * max(np.linalg.norm(x), 1) * a.shape[0] * eps(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_values(mesh4, rng, dt):
    a, b = general(rng, N, N, dt), rhs(rng, N, 3, dt)
    t, c = general(rng, M, N, dt), rhs(rng, M, 2, dt)
    a8, b8 = general(rng, 8, 8, dt), rhs(rng, 8, 3, dt)
    a_rows = jax.device_put(a8, NamedSharding(mesh4, P("x", None)))  # resharded to columns inside
    x = mj.lu_solve(a_rows, b8, mesh=mesh4, in_specs=(P("x", None), P(None, None)))
    x1 = mj.lu_solve(a, b[:, 0], mesh=mesh4)
    y = mj.least_squares(t, c, mesh=mesh4, in_specs=P(None, "x"))
    y1 = mj.least_squares(t, c[:, 0], mesh=mesh4)
    assert x.shape == (8, 3) and x1.shape == (N,) and y.shape == (N, 2) and y1.shape == (N,)
    assert lu_residual(a8, b8, x) < 10 and lu_residual(a, b[:, :1], x1[:, None]) < 10
    assert ls_residual(t, c, y, dt) < 10 and ls_residual(t, c[:, :1], y1[:, None], dt) < 10
    assert np.all(np.asarray(a_rows) == a8)  # the caller's arrays untouched


def _tol(dt):
    return 2e-3 if dt in (np.float32, np.complex64) else 1e-9


# each second-order check compiles the nested solves of the rule several
# times: order 2 in float64, order 1 in complex128 (the conjugations)
@pytest.mark.parametrize("dt,order", [(np.float64, 2), (np.complex128, 1)])
@pytest.mark.parametrize("routine", ["lu_solve", "least_squares"])
def test_check_grads(mesh4, rng, routine, dt, order):
    m = N if routine == "lu_solve" else M
    a, b = general(rng, m, N, dt), rhs(rng, m, 2, dt)
    f = jax.jit(lambda a, b: getattr(mj, routine)(a, b, mesh=mesh4))
    dist, amp = solve_conditioning(a, least_squares=routine == "least_squares")
    with jax.set_mesh(mesh4):
        check_grads_fd(f, (a, b), order, dist, amp)


@pytest.mark.parametrize("dt", DTYPES)
def test_grad_matches_jnp_linalg(mesh4, rng, dt):
    """jax.grad (A sharded over the mesh) against jnp.linalg.solve's and
    jnp.linalg.lstsq's on one device."""
    a, b = general(rng, 8, 8, dt), rhs(rng, 8, 2, dt)
    t, c = general(rng, 12, 8, dt), rhs(rng, 12, 2, dt)

    def loss(solve):
        return lambda a, b: jnp.sum(jnp.abs(solve(a, b)) ** 2)

    pairs = [(loss(lambda a, b: mj.lu_solve(a, b, mesh=mesh4)), loss(jnp.linalg.solve), a, b),
             (loss(lambda a, b: mj.least_squares(a, b, mesh=mesh4)),
              loss(lambda a, b: jnp.linalg.lstsq(a, b)[0]), t, c)]
    for mine, ref, x, y in pairs:
        want = jax.grad(ref, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(y))
        x_sh = jax.device_put(x, NamedSharding(mesh4, P(None, "x")))
        with jax.set_mesh(mesh4):
            got = jax.jit(jax.grad(mine, argnums=(0, 1)))(x_sh, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=_tol(dt), atol=_tol(dt))


def test_jacfwd_jacrev_agree(mesh4, rng):
    a, b = general(rng, N, N, np.float64), rhs(rng, N, 1, np.float64)
    with jax.set_mesh(mesh4):
        f = lambda a: mj.lu_solve(a, b, mesh=mesh4)  # noqa: E731
        jf, jr = jax.jit(jax.jacfwd(f))(a), jax.jit(jax.jacrev(f))(a)
    want = jax.jacfwd(lambda a: jnp.linalg.solve(a, b))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(jf), np.asarray(want), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(jr), np.asarray(want), rtol=1e-9, atol=1e-10)


def test_singular_and_rank_deficient(mesh4, rng):
    """An exactly singular A (a zero column) and a rank-deficient tall A
    (two equal columns): an exception naming the column, or with
    return_status the status k and NaNs; the same through jax.grad."""
    a, b = general(rng, N, N, np.float64), rhs(rng, N, 1, np.float64)
    a[:, 3] = 0
    t, c = general(rng, M, N, np.float64), rhs(rng, M, 1, np.float64)
    t[:, 4] = t[:, 2]
    with pytest.raises(RuntimeErr, match=r"getrs: singular: U\(4,4\) of the LU .*U\(4,4\) is exactly zero"):
        mj.lu_solve(a, b, mesh=mesh4).block_until_ready()
    with pytest.raises(RuntimeErr, match=r"gels.*rank deficient"):
        mj.least_squares(t, c, mesh=mesh4).block_until_ready()
    x, st = mj.lu_solve(a, b, mesh=mesh4, return_status=True)
    y, st2 = mj.least_squares(t, c, mesh=mesh4, return_status=True)
    assert int(st) == 4 and int(st2) == 5 and np.all(np.isnan(x)) and np.all(np.isnan(y))
    with jax.set_mesh(mesh4), pytest.raises(RuntimeErr, match="singular"):
        jax.grad(lambda a: jnp.sum(mj.lu_solve(a, b, mesh=mesh4)))(a).block_until_ready()


def test_shape_errors(cpu_mesh4):
    with pytest.raises(ValueError, match="square"):
        mj.lu_solve(jnp.ones((8, 4)), jnp.ones((8, 1)), mesh=cpu_mesh4)
    with pytest.raises(ValueError, match="M >= N"):
        mj.least_squares(jnp.ones((4, 8)), jnp.ones((4, 1)), mesh=cpu_mesh4)
    with pytest.raises(ValueError, match="b must be"):
        mj.least_squares(jnp.ones((12, 8)), jnp.ones((8, 1)), mesh=cpu_mesh4)
    with pytest.raises(TypeError, match="dtype"):
        mj.lu_solve(jnp.eye(8), jnp.ones((8, 1), jnp.float32), mesh=cpu_mesh4)


def test_vmap(mesh4, rng):
    """A and B batched (one call per matrix), A shared (one call, the
    B's side by side), and vmap of grad."""
    dt, K = np.float64, 3
    a = np.stack([general(rng, N, N, dt) for _ in range(K)])
    t = np.stack([general(rng, M, N, dt) for _ in range(K)])
    b, c = np.stack([rhs(rng, N, 2, dt) for _ in range(K)]), np.stack([rhs(rng, M, 2, dt) for _ in range(K)])
    with jax.set_mesh(mesh4):
        x = jax.jit(jax.vmap(lambda a, b: mj.lu_solve(a, b, mesh=mesh4)))(a, b)
        x0 = jax.vmap(lambda b: mj.lu_solve(a[0], b, mesh=mesh4))(b)
        y = jax.jit(jax.vmap(lambda t, c: mj.least_squares(t, c, mesh=mesh4)))(t, c)
        g = jax.jit(jax.vmap(jax.grad(lambda t, c: jnp.sum(mj.least_squares(t, c, mesh=mesh4) ** 2))))(t, c)
    want = jax.vmap(jax.grad(lambda t, c: jnp.sum(jnp.linalg.lstsq(t, c)[0] ** 2)))(t, c)
    for i in range(K):
        assert lu_residual(a[i], b[i], x[i]) < 10 and lu_residual(a[0], b[i], x0[i]) < 10
        assert ls_residual(t[i], c[i], y[i], dt) < 10
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-9, atol=1e-9)


def test_grad_costs(mesh4, rng):
    """What docs/jax-derivatives.md says a gradient costs: lu_solve two getrs (X, then
    one of A^T), least_squares one gels and one potrs (A^H A's factor,
    kept for every solve of the rule)."""
    a, b = general(rng, N, N, np.float64), rhs(rng, N, 1, np.float64)
    t, c = general(rng, M, N, np.float64), rhs(rng, M, 1, np.float64)
    routines = {}
    for name, x, y in [("lu_solve", a, b), ("least_squares", t, c)]:
        with jax.set_mesh(mesh4):
            hlo = jax.jit(jax.grad(lambda a, b: jnp.sum(getattr(mj, name)(a, b, mesh=mesh4)), argnums=(0, 1))) \
                .lower(x, y).as_text()
        calls = [line for line in hlo.splitlines() if "custom_call @muster_jax" in line]
        routines[name] = sorted(int(line.split("routine = ")[1].split(" ")[0]) for line in calls)
    getrs, gels, potrs = (mj._lib.routine_code(r) for r in ("getrs", "gels", "potrs"))
    assert routines == {"lu_solve": [getrs, getrs], "least_squares": sorted([gels, potrs])}, routines
