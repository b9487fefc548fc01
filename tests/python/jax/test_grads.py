"""Derivatives of potrs, potri and syevd (JVP rules; reverse mode by JAX's
transposition), on 4 host devices: jax.test_util.check_grads to second
order in both modes, and the gradients against jnp.linalg's on one device.

Inputs are symmetrized inside the checked functions: the routines read
one triangle of a Hermitian A, so (as for JAX's cholesky/eigh) their
derivative is the one along Hermitian directions, and finite differences
along a non-Hermitian direction would measure something else.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import muster_jax as mj
from jaxtest_util import check_grads_fd, eigen_conditioning, hermitian, hpd, rhs, solve_conditioning

N = 6  # not a multiple of 4: the padded path


def sym(a):
    return (a + jnp.conj(a).T) / 2


def _tol(dt):
    return 1e-4 if dt in (np.float32, np.complex64) else 1e-9


# potrs's second order compiles the nested solves of its rule several
# times (~25 s on the CI VM per dtype): order 2 in float64, order 1 in
# complex128 (the conjugations), to keep the CI time down
@pytest.mark.parametrize("dt,order", [(np.float64, 2), (np.complex128, 1)])
def test_potrs_check_grads(mesh4, rng, dt, order):
    a, b = hpd(rng, N, dt), rhs(rng, N, 2, dt)
    f = jax.jit(lambda a, b: mj.potrs(sym(a), b, mesh=mesh4))
    with jax.set_mesh(mesh4):
        check_grads_fd(f, (a, b), order, *solve_conditioning(a))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_potri_check_grads(mesh4, rng, dt):
    a = hpd(rng, N, dt)
    f = jax.jit(lambda a: mj.potri(sym(a), mesh=mesh4))
    with jax.set_mesh(mesh4):
        check_grads_fd(f, (a,), 2, *solve_conditioning(a))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_syevd_check_grads(mesh4, rng, dt):
    # distinct eigenvalues (random Hermitian); V only through a function of
    # it that does not depend on the eigenvectors' phases (tanh(A): its
    # poles at +-i pi/2 are farther than half a gap of a 6 x 6 here)
    def f(a):
        w, v = mj.syevd(sym(a), mesh=mesh4)
        return w, (v * jnp.tanh(w)) @ jnp.conj(v).T

    a = hermitian(rng, N, dt)
    with jax.set_mesh(mesh4):
        check_grads_fd(jax.jit(f), (a,), 2, *eigen_conditioning(a))


def _loss_pairs(mesh):
    """(muster's loss, jnp.linalg's loss) per routine: real scalars whose
    gradients must agree."""
    def solve(a, b, lin):
        return jnp.linalg.solve(sym(a), b) if lin else mj.potrs(a, b, mesh=mesh)

    def inv(a, lin):
        return jnp.linalg.inv(sym(a)) if lin else mj.potri(a, mesh=mesh)

    def eig(a, lin):
        return jnp.linalg.eigh(sym(a)) if lin else mj.syevd(a, mesh=mesh)

    return {
        "potrs": lambda lin: lambda a, b: jnp.sum(jnp.abs(solve(a, b, lin)) ** 2),
        "potri": lambda lin: lambda a, b: jnp.sum(jnp.abs(inv(a, lin) @ b) ** 2),
        "syevd": lambda lin: lambda a, b: jnp.sum(eig(a, lin)[0] ** 3)
        + jnp.sum(jnp.abs(jnp.conj(eig(a, lin)[1]).T @ b) ** 2),
    }


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("routine", ["potrs", "potri", "syevd"])
def test_grad_matches_jnp_linalg(mesh4, rng, routine, dt):
    """jax.grad with respect to A (sharded over the mesh) and b, against
    the same loss through jnp.linalg on one device."""
    a, b = hpd(rng, 8, dt), rhs(rng, 8, 2, dt)  # 8: A can be sharded over 4 devices
    pair = _loss_pairs(mesh4)[routine]
    want = jax.grad(pair(True), argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    a_sh = jax.device_put(a, NamedSharding(mesh4, P(None, "x")))
    with jax.set_mesh(mesh4):
        got = jax.jit(jax.grad(pair(False), argnums=(0, 1)))(a_sh, b)
    for g, w in zip(got, want):
        # muster's gradient in A is Hermitian (derivative along Hermitian
        # directions); jnp's, through sym(a), is too
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=_tol(dt) * 10, atol=_tol(dt) * 10)


def test_potrs_backward_reuses_the_factor(mesh4, rng):
    """grad through potrs factors A once: the program has one potrs handler
    call (keeping its factor) and no second one."""
    a, b = hpd(rng, N, np.float64), rhs(rng, N, 1, np.float64)
    with jax.set_mesh(mesh4):
        hlo = jax.jit(jax.grad(lambda a, b: jnp.sum(mj.potrs(a, b, mesh=mesh4)), argnums=(0, 1))) \
            .lower(a, b).as_text()
    calls = [line for line in hlo.splitlines() if "custom_call @muster_jax" in line]
    assert len(calls) == 1, calls
    assert "flags = 0 :" in calls[0], calls[0]  # the factor kept (no MUSTER_NO_FACTOR)


@pytest.mark.parametrize("dt,order", [(np.float64, 2), (np.complex128, 1)])
def test_logdet_value_and_grads(mesh4, rng, dt, order):
    """potrs(return_logdet=True): log det A from the factor, and its
    derivative tr(A^-1 dA) to second order."""
    a, b = hpd(rng, N, dt), rhs(rng, N, 1, dt)
    x, ld = mj.potrs(a, b, mesh=mesh4, return_logdet=True)
    np.testing.assert_allclose(float(ld), np.linalg.slogdet(a)[1], rtol=1e-12 * N)
    with jax.set_mesh(mesh4):
        f = jax.jit(lambda a: mj.potrs(sym(a), b, mesh=mesh4, return_logdet=True)[1])
        check_grads_fd(f, (a,), order, *solve_conditioning(a))
        g = jax.jit(jax.grad(lambda a: mj.potrs(a, b, mesh=mesh4, return_logdet=True)[1]))(a)
    want = jax.grad(lambda a: jnp.linalg.slogdet(sym(a))[1])(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-9, atol=1e-9)


def test_eager_grad(mesh4, rng):
    """jax.grad without jit: the rule's solve gets concrete (stop_gradient'ed)
    arrays inside a transformation, where jax.set_mesh is refused; the call
    must take the traced path (_sharding.is_traced)."""
    a, b = hpd(rng, N, np.float64), rhs(rng, N, 1, np.float64)
    with jax.set_mesh(mesh4):
        ga, gb = jax.grad(lambda a, b: jnp.sum(mj.potrs(a, b, mesh=mesh4)), argnums=(0, 1))(a, b)
    x = np.linalg.solve(a, b)
    y = np.linalg.solve(a, np.ones_like(b))
    np.testing.assert_allclose(np.asarray(gb), y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.asarray(ga), -(y @ x.T + x @ y.T) / 2, rtol=1e-9, atol=1e-9)
