"""Results typed as jnp's would be (issue 26, item 1), on Explicit meshes
(jax.make_mesh's default), Auto meshes, inside `jax.set_mesh` and outside
any mesh context: a matrix result of an unsharded input is unsharded, so
it can be sliced, symmetrized and differentiated as jnp.linalg's results
are; an eager jax.grad outside `jax.set_mesh` works; a sharded input keeps
the documented sharding (muster_jax/_mesh_types.py)."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from jax.test_util import check_grads

import muster_jax as mj
import muster_jax.linalg as ml
from jaxtest_util import DTYPES, eps, hpd, rhs

N = 8
KINDS = ["explicit", "auto"]
WHERE = ["outside", "set_mesh"]


@pytest.fixture(params=KINDS)
def mesh(request, cpu_mesh4):
    t = AxisType.Explicit if request.param == "explicit" else AxisType.Auto
    return jax.make_mesh((4,), ("x",), axis_types=(t,), devices=cpu_mesh4.devices.flat)


def context(mesh, where):
    return jax.set_mesh(mesh) if where == "set_mesh" else contextlib.nullcontext()


def unsharded(x):
    spec = jax.typeof(x).sharding.spec
    return all(p is None for p in spec)


def tol(dt, scale=200.0):
    return scale * N * eps(dt)


# every dtype where it failed (Explicit, outside set_mesh); float64 elsewhere (CI time)
CASES = [("outside", dt) for dt in DTYPES] + [("set_mesh", np.float64)]


@pytest.mark.parametrize("where,dt", CASES)
def test_matrix_results_are_sliceable(rng, mesh, where, dt):
    """potri's inverse and syevd's / eigh's eigenvectors of a numpy A:
    unsharded, sliced and symmetrized as jnp's are (ShardingTypeError on
    an Explicit mesh before)."""
    if mesh.axis_types[0] == AxisType.Auto and dt != np.float64:
        pytest.skip("Auto meshes: float64 (the typing rule is dtype-blind)")
    a = hpd(rng, N, dt)
    want = np.linalg.inv(a.astype(np.complex128))
    with context(mesh, where):
        inv = mj.potri(a, mesh=mesh)
        w, v = mj.syevd(a, mesh=mesh)
        vl = ml.eigh(a, mesh=mesh).eigenvectors
        invl = ml.inv(a, assume_a="pos", mesh=mesh)
        for r in (inv, v, vl, invl):
            assert unsharded(r), jax.typeof(r)
        col, row = inv[:, 0], inv[1]
        sym = (inv + inv.conj().T) / 2  # the "symmetrize your input" step (docs/jax.md)
        vcol = v[:, 0]
    assert np.abs(np.asarray(col) - want[:, 0]).max() < tol(dt) * np.abs(want).max()
    assert np.abs(np.asarray(row) - want[1]).max() < tol(dt) * np.abs(want).max()
    assert np.abs(np.asarray(sym) - want).max() < tol(dt) * np.abs(want).max()
    assert np.abs(np.asarray(invl)[:, 0] - want[:, 0]).max() < tol(dt) * np.abs(want).max()
    # an eigenvector: A v = w v
    r = a.astype(np.complex128) @ np.asarray(vcol) - np.asarray(w)[0] * np.asarray(vcol)
    assert np.linalg.norm(r) < tol(dt) * np.linalg.norm(a)


@pytest.mark.parametrize("where", WHERE)
def test_check_grads(rng, mesh, where):
    """check_grads of potri and of syevd's eigenvalues, forward and reverse
    (the finite differences and the rules meet sliced, added arrays)."""
    a = hpd(rng, N, np.float64)

    def inv(x):
        return mj.potri((x + x.T) / 2, mesh=mesh)

    def eigvals(x):
        return mj.syevd((x + x.T) / 2, mesh=mesh, return_eigenvectors=False)

    with context(mesh, where):
        check_grads(inv, (a,), 1, modes=("fwd", "rev"), eps=1e-6)
        check_grads(eigvals, (a,), 1, modes=("fwd", "rev"), eps=1e-6)


@pytest.mark.parametrize("where", WHERE)
def test_grad_through_a_slice(rng, mesh, where):
    """jax.grad through a column of the inverse and of an eigenvector
    matrix, as jnp's gradient; typed like A (unsharded).  Eager once
    (Explicit, outside set_mesh: where it failed), jitted everywhere."""
    dt = np.float64
    a = hpd(rng, N, dt)

    def f_mj(x):
        return jnp.sum(mj.potri(x, mesh=mesh)[:, 0] ** 2) + jnp.sum(mj.syevd(x, mesh=mesh)[1][:, -1] ** 2)

    def f_jnp(x):
        h = (x + x.T) / 2  # muster's rules take the Hermitian part of dA, as jnp's eigh
        return jnp.sum(jnp.linalg.inv(h)[:, 0] ** 2) + jnp.sum(jnp.linalg.eigh(h)[1][:, -1] ** 2)

    want = np.asarray(jax.grad(f_jnp)(a))
    with context(mesh, where):
        eager = mesh.axis_types[0] == AxisType.Explicit and where == "outside"
        for g in ([jax.grad(f_mj)(a)] if eager else []) + [jax.jit(jax.grad(f_mj))(a)]:
            assert unsharded(g), jax.typeof(g)
            assert np.abs(np.asarray(g) - want).max() < tol(dt, 2000) * np.abs(want).max()


def test_eager_grad_outside_set_mesh(rng, mesh):
    """An eager jax.grad of potrs / lu_solve / eigvalsh outside
    `jax.set_mesh` ("Length of device assignment 1 is not equal to the
    size of the mesh 4" on an Explicit mesh before): b^T A^-1 b has the
    gradient -x x^T (real A), x = A^-1 b."""
    dt = np.float64
    a, b = hpd(rng, N, dt), rhs(rng, N, 1, dt)[:, 0]
    x = np.linalg.solve(a.astype(np.float64), b)
    for fn in (mj.potrs, mj.lu_solve):
        g = jax.grad(lambda m: b @ fn(m, b, mesh=mesh))(a)
        assert unsharded(g)
        assert np.abs(np.asarray(g) + np.outer(x, x)).max() < tol(dt, 2000) * np.abs(x).max() ** 2
    g = jax.grad(lambda m: jnp.sum(ml.eigvalsh(m, mesh=mesh)))(a)  # d tr(A) = I
    assert np.abs(np.asarray(g) - np.eye(N)).max() < tol(dt, 2000)


@pytest.mark.parametrize("where", WHERE)
def test_vmap_results_are_sliceable(rng, mesh, where):
    a = np.stack([hpd(rng, N, np.float64) for _ in range(2)])
    with context(mesh, where):
        inv = jax.vmap(lambda m: mj.potri(m, mesh=mesh))(a)
        col = inv[:, :, 0]
    assert np.abs(np.asarray(col) - np.linalg.inv(a)[:, :, 0]).max() < 1e-10


def test_sharded_input_keeps_its_sharding(rng, cpu_mesh4):
    """A column-sharded A on an Explicit mesh gives a column-sharded inverse
    (jnp.linalg.inv refuses such an A; muster's point is to keep it spread)."""
    mesh = cpu_mesh4
    a = hpd(rng, N, np.float64)
    with jax.set_mesh(mesh):
        ac = jax.device_put(a, NamedSharding(mesh, P(None, "x")))
        inv = mj.potri(ac)
        assert jax.typeof(inv).sharding.spec == P(None, "x")
        g = jax.jit(jax.grad(lambda m: jnp.sum(mj.potri(m) ** 2)))(ac)
        assert jax.typeof(g).sharding.spec == P(None, "x")
    assert np.abs(np.asarray(inv) - np.linalg.inv(a)).max() < 1e-10


def test_result_of_set_mesh_call_used_outside(rng, cpu_mesh4):
    """A result made under `jax.set_mesh` (typed on the Explicit mesh),
    solved with again outside it."""
    mesh = cpu_mesh4
    a = hpd(rng, N, np.float64)
    with jax.set_mesh(mesh):
        inv = mj.potri(a)
    back = mj.potri(inv, mesh=mesh)
    assert np.abs(np.asarray(back[:, 0]) - a[:, 0]).max() < 1e-9 * np.abs(a).max()
